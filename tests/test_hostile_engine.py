"""Text an engine sends is untrusted input (issue 26, docs/reports.md "Text from files and
engines"): an engine that puts every class of hostile text (tests/engines/hostile_engine.py) into
card names, action labels, event data, fault messages, a refusal reason and its own name, run
through real `bpcheck` processes; every output format is checked for each class:

- terminal (stdout, stderr): no control, invisible or bidirectional character raw, and no line
  GitHub Actions would read as a workflow command except bpcheck's own annotations;
- HTML (the report's pages): no element or attribute the engine's text made, no raw hazard;
- XML (junit.xml, every SVG): well formed, no raw hazard; DOT: every picture renders;
- JSON (the result, the counterexample files, SARIF, ITF): strict JSON (a UTF-8 reader that
  refuses lone surrogates opens it), the engine's strings kept exactly, SARIF's messages shown
  without raw hazards;
- summary.md (Markdown): no raw hazard, no HTML the engine made, no table cell split.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "tests" / "engines"
sys.path.insert(0, str(ENGINES))

from hostile_engine import PAYLOADS, payload  # noqa: E402

from bpcheck.model.hazard import HAZARD  # noqa: E402

BASE = "mutant:replay-resets-count"  # invariants fail, and their messages quote the engine's names
CLASSES = [c for c in PAYLOADS if c != "all"]
OURS = re.compile(r"^::(error|warning|notice) (file=[^,]*,)?title=bpcheck%3A ")


def boards(tmp: Path) -> list[str]:
    """A board the mutant fails on, one the engine refuses (skipped), one it faults on."""
    text = (ROOT / "boards" / "000-replay-1.toml").read_text()
    out = []
    for stem, name in (("main", None), ("skip", "hostile skip board"), ("fault", "hostile fault board")):
        p = tmp / f"{stem}.toml"
        p.write_text(text if name is None else re.sub(r'^name = .*$', f'name = "{name}"', text, count=1, flags=re.M))
        out.append(str(p))
    return out


def engine_spec(cls: str, transport: str) -> tuple[str, dict]:
    env = {"PYTHONPATH": str(ENGINES) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if transport == "cmd":
        return f"cmd:{sys.executable} {ENGINES / 'hostile_engine.py'} {cls} {BASE}", env
    return "hostile_engine:make", {**env, "HOSTILE_CLASS": cls, "HOSTILE_BASE": BASE}


def bpcheck(*args: str, env: dict, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY",)}
    e.update(env, CI="1")
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], cwd=cwd, capture_output=True, text=True, env=e, timeout=600, errors="surrogateescape")


# -- what each format must hold ---------------------------------------------------------------------


def raw_hazards(text: str, allowed: str = "\n\t") -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in HAZARD.findall(text) if c not in allowed})


def check_terminal(out: str, where: str) -> None:
    assert not raw_hazards(out), f"{where}: raw {raw_hazards(out)}"
    for ln in re.split(r"\r\n|\r|\n", out):
        if ln.lstrip().startswith("::") or "##[" in ln:
            assert OURS.match(ln), f"{where}: a line GitHub reads as a workflow command: {ln[:200]!r}"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def check_html(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not raw_hazards(text), f"{path.name}: raw {raw_hazards(text)}"
    p = _Tags()
    p.feed(text)
    names = {t for t, _a in p.tags}
    assert not names & {"img", "iframe", "object", "embed"}, f"{path.name}: {names}"
    for tag, attrs in p.tags:
        assert not any(k.startswith("on") for k, _v in attrs), f"{path.name}: <{tag} {attrs}>"
    assert len([t for t, _a in p.tags if t == "script"]) <= 1
    assert all(s.lstrip().startswith("(function ()") for s in p.scripts), f"{path.name}: a script bpcheck did not write"


def check_xml(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not raw_hazards(text, "\n\t\r"), f"{path.name}: raw {raw_hazards(text)}"
    ET.fromstring(text.encode("utf-8"))  # well formed: every character XML 1.0 can hold


def strict_json(path: Path):
    data = path.read_bytes()
    assert not raw_hazards(data.decode("utf-8"), "\n"), f"{path.name}: raw hazards"
    return orjson.loads(data) if b"\\ud" not in data.lower() else json.loads(data)  # orjson: strict UTF-8


def strings(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, str):
        yield v


def _code_spans_removed(line: str) -> str:
    """The line with its code spans (CommonMark: a run of n backticks to the next run of n)
    blanked, and backslash escapes taken out."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            out.append("__")
            i += 2
            continue
        if line[i] == "`":
            n = len(line[i:]) - len(line[i:].lstrip("`"))
            m = re.compile(rf"(?<!`){'`' * n}(?!`)").search(line, i + n)
            if m is not None:
                out.append("_" * (m.end() - i))
                i = m.end()
                continue
            out.append("`" * n)
            i += n
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


def check_markdown(text: str, where: str) -> None:
    assert not raw_hazards(text), f"{where}: raw {raw_hazards(text)}"
    cols = None
    for ln in text.splitlines():
        bare = _code_spans_removed(ln)
        for tag in re.findall(r"<(/?[A-Za-z][A-Za-z0-9]*)", bare):
            assert tag.lstrip("/") in ("details", "summary"), f"{where}: HTML the engine made: <{tag} in {ln[:200]!r}"
        assert "](" not in bare and "javascript:" not in bare, f"{where}: a link: {ln[:200]!r}"
        if ln.startswith("|"):
            n = bare.count("|") - 1
            if ln.startswith("|---") or ln.startswith("| board"):
                cols = n
            assert n == cols, f"{where}: a table row of {n} cells, not {cols}: {ln[:200]!r}"
        else:
            cols = None


# -- the test --------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_every_output_escapes_what_a_hostile_engine_says(tmp_path, cls):
    transport = "inprocess" if cls == "surrogate" else "cmd"  # JSON lines cannot carry a lone surrogate
    spec, env = engine_spec(cls, transport)
    p_text = payload(cls, transport == "cmd")
    out = tmp_path / "out"
    out.mkdir()
    summary = tmp_path / "summary.md"
    p = bpcheck(
        "check", *boards(tmp_path), "--engine", spec, "--json", str(out / "r.json"), "--cex-dir", str(out / "cex"),
        "--report", str(out / "rep"), "--github", env={**env, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert p.returncode == 1, (p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    assert "Traceback" not in p.stdout + p.stderr and "internal error" not in p.stderr
    # terminal
    check_terminal(p.stdout, "stdout")
    check_terminal(p.stderr, "stderr")
    assert "SKIPPED" in p.stdout and "ENGINE-FAULT" in p.stdout
    assert sum(1 for ln in p.stdout.splitlines() if OURS.match(ln)) >= 3  # bpcheck's own annotations are printed
    if cls == "github":
        assert "\\x0a::error file=pwned.toml" in p.stdout  # the engine's text is shown, escaped
    # the result and the counterexample files: the engine's strings exactly
    doc = strict_json(out / "r.json")
    labels = [lab for b in doc["boards"] for c in b["counterexamples"] for lab in c["trace"]]
    assert any(lab.endswith(p_text) for lab in labels)
    b = {Path(x["board"]).stem: x for x in doc["boards"]}
    assert b["skip"]["verdict"] == "skipped" and b["skip"]["skipped_reason"].endswith(p_text)
    for f in (out / "cex").glob("*.json"):
        strict_json(f)
    rep = out / "rep"
    # HTML
    pages = [rep / "index.html", *sorted((rep / "counterexamples").glob("*.html"))]
    assert len(pages) >= 3
    for page in pages:
        check_html(page)
    # XML: JUnit and every SVG; DOT: every picture rendered
    check_xml(rep / "junit.xml")
    dots = sorted((rep / "counterexamples").glob("*.dot"))
    assert dots
    for d in dots:
        assert not raw_hazards(d.read_text(encoding="utf-8")), d.name
        svg = d.with_suffix(".svg")
        assert svg.is_file(), f"{d.name} was not rendered"
        check_xml(svg)
    # SARIF and ITF: strict JSON; SARIF's messages without raw hazards
    sarif = strict_json(rep / "results.sarif")
    texts = [s for s in strings(sarif)]
    assert any(p_text.strip()[:20] in s or (cls in ("esc", "bel", "bidi", "controls", "surrogate") and "\\" in s) for s in texts)
    for itf in (rep / "counterexamples").glob("*.itf.json"):
        data = strict_json(itf)
        if "main" in itf.name:
            names = [s for s in strings(data) if s.startswith("Battle Ox")]
            assert "Battle Ox" + p_text in names  # the engine's name, exactly
    # Markdown: summary.md and the job summary
    check_markdown((rep / "summary.md").read_text(encoding="utf-8"), "summary.md")
    check_markdown(summary.read_text(encoding="utf-8"), "$GITHUB_STEP_SUMMARY")


@pytest.mark.parametrize("transport", ["cmd", "inprocess"])
def test_every_command_shows_what_a_hostile_engine_says_escaped(tmp_path, transport):
    """replay, record and conform, scenario, fuzz: the terminal never takes the engine's text raw,
    and what they write (a trace, --json) is strict JSON holding the engine's strings exactly."""
    spec, env = engine_spec("all", transport)
    p_text = payload("all", transport == "cmd")
    main = boards(tmp_path)[0]
    runs = {}
    cex = tmp_path / "cex"
    runs["check"] = bpcheck("check", main, "--engine", spec, "--cex-dir", str(cex), env=env)
    assert runs["check"].returncode == 1
    one = next(f for f in sorted(cex.glob("*.json")) if not f.name.startswith("."))  # (.bpcheck-output.json: the manifest)
    runs["replay"] = bpcheck("replay", str(one), "--engine", spec, env=env)
    trace = tmp_path / "t.jsonl"
    runs["record"] = bpcheck("record", main, "--engine", spec, "--random", "12", "--out", str(trace), env=env)
    runs["conform"] = bpcheck("conform", str(trace), "--json", str(tmp_path / "c.json"), env=env)
    runs["scenario"] = bpcheck("scenario", "scenarios/000-replay-1.toml", "--engine", spec, "--json", str(tmp_path / "s.json"), env=env)
    runs["fuzz"] = bpcheck("fuzz", "--engine", spec, "--examples", "3", "--max-states", "40", "--seed", "1", "--json", str(tmp_path / "f.json"), env=env)
    expect = {"replay": 1, "record": 0, "conform": 1, "scenario": 1, "fuzz": 0}  # a partial search with nothing broken passes (exit 3 only with --strict)
    for name, p in runs.items():
        assert "Traceback" not in p.stdout + p.stderr and "internal error" not in p.stderr, (name, p.stderr[-2000:])
        assert p.returncode == expect.get(name, 1), (name, p.returncode, p.stdout[-2000:], p.stderr[-2000:])
        check_terminal(p.stdout, f"{name} stdout")
        check_terminal(p.stderr, f"{name} stderr")
    assert "\\x0a::error file=pwned.toml" in runs["replay"].stdout + runs["scenario"].stdout
    rows = [json.loads(x) for x in trace.read_text(encoding="utf-8").split("\n") if x.strip()]  # lines end at \n only
    assert rows[1]["action"].endswith(p_text)  # the engine's label, exactly
    for f in ("c.json", "s.json", "f.json"):
        strict_json(tmp_path / f)


def test_the_terminal_writer_never_lets_a_line_start_a_workflow_command():
    """However the text is cut into writes: '::' after white space at a line's start (a line ends at
    LF or CR, as the runner splits them; NBSP and the like are white space to it) and '##['
    anywhere are written escaped; bpcheck's own annotations pass through the one trusted path."""
    import io

    from bpcheck.reports.terminal import _EscapingWriter

    chunks = ["ok\n", "  ::error::x\n", ":", ":warning::y\n", "\u00a0::notice::z\r::error::cr\n", "a ##[error]b #", "#[x\n", "\u3000:", ":y\n", "tail :"]
    for cut in range(1, 4):
        b = io.StringIO()
        w = _EscapingWriter(b, keep_cr=True)
        text = "".join(chunks)
        for i in range(0, len(text), cut):
            w.write(text[i : i + cut])
        w.trusted_line("::error title=bpcheck%3A x::fine")
        w.close_pending()
        out = b.getvalue()
        lines = re.split(r"\r\n|\r|\n", out)
        bad = [ln for ln in lines if (ln.lstrip().startswith("::") or "##[" in ln) and not OURS.match(ln + " ") and ln != "::error title=bpcheck%3A x::fine"]
        assert not bad, (cut, bad)
        assert "\\x3a:error::x" in out and "##\\x5berror]" in out and "::error title=bpcheck%3A x::fine\n" in out
        assert out.endswith("tail :\n::error title=bpcheck%3A x::fine\n")  # a trusted line starts a line of its own


# -- an engine that offers too many actions (issue 33) ---------------------------------------------


def test_an_engine_offering_100000_actions_is_an_engine_fault_naming_the_limit(tmp_path):
    out = tmp_path / "r.json"
    env = {"PYTHONPATH": str(ENGINES) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = bpcheck("check", "boards/000-replay-1.toml", "--engine", f"cmd:{sys.executable} {ENGINES / 'flood_engine.py'} 100000 0", "--json", str(out), env=env)
    assert p.returncode == 1, (p.stdout[-2000:], p.stderr[-2000:])
    faults = [c for c in json.loads(out.read_text())["boards"][0]["counterexamples"] if c["invariant"] == "ENGINE-FAULT"]
    assert faults and all("more than the 10,000 one state may offer (the limit, MAX_ACTIONS)" in c["message"] for c in faults), faults
