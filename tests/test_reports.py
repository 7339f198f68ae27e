"""Reports: `--report DIR` (HTML, DOT/SVG, JUnit, SARIF, ITF), `--github`, and the state graph."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "boards" / "000-replay-1.toml")
SMALL2 = str(ROOT / "boards" / "000-replay-2.toml")
BUGGY = "buggy_engines:CallOffForgetsAttack"
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture
def buggy(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


def _board_result(engine: str = BUGGY, board: str = SMALL, invariants=None, graph_limit: int | None = 200, reduce: bool = True):
    from bpcheck.engines import make_engine
    from bpcheck.explorers.run import check_board
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    return check_board(load_board(board), make_engine(engine), select(invariants), engine_name=engine, progress=False, graph_limit=graph_limit, reduce=reduce)


@pytest.fixture
def report(tmp_path, run_cli, buggy):
    out = tmp_path / "report"
    code, stdout, err = run_cli("check", SMALL, SMALL2, "--engine", BUGGY, "--report", str(out), "--json", str(tmp_path / "r.json"))
    assert code == 1, err
    return out, stdout, json.loads((tmp_path / "r.json").read_text())


def test_report_dir_has_every_format(report):
    out, stdout, doc = report
    for f in ("index.html", "junit.xml", "results.sarif", "summary.md"):
        assert (out / f).is_file(), f
    cexs = [(Path(b["board"]).stem, c["invariant"]) for b in doc["boards"] for c in b["counterexamples"]]
    # CallOffForgetsAttack also offers a position change in Main Phase 2 to the monster whose attack it
    # forgot (attack.position-change): one more counterexample per board; and one per distinct
    # failure (signature) of an invariant: replay.bookkeeping-kept fails in two ways on one board
    assert len(cexs) == 12
    # one page (and pictures, ITF trace) per root cause, named after its first counterexample
    groups = doc["groups"]
    # (on 000-replay-1 the bug shows at the call-off, in two families; on 000-replay-2 at the attack that follows it)
    assert sum(g["count"] for g in groups) == 12 and len(groups) == 3
    for g in groups:
        bi, ci = g["counterexamples"][0]
        base = out / "counterexamples" / f"{Path(doc['boards'][bi]['board']).stem}.{doc['boards'][bi]['counterexamples'][ci]['invariant']}"
        for suffix in (".html", ".dot", ".svg", ".itf.json", ".graph.dot", ".graph.svg"):
            assert Path(str(base) + suffix).is_file(), (base, suffix)
        svg = html.unescape(Path(str(base) + ".svg").read_text())
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert len(list((out / "counterexamples").glob("*.html"))) == 3
    assert f"report: {out / 'index.html'} (12 counterexamples in 3 root causes, one page each" in stdout
    assert "6 SVGs rendered with graphviz-pure" in stdout
    index = (out / "index.html").read_text()
    assert "http://" not in index.replace('xmlns="http://www.w3.org', "") and "https://" not in index
    assert 'href="counterexamples/000-replay-1.attack.count.html"' in index
    assert 'href="counterexamples/000-replay-1.replay.bookkeeping-kept.html#cex-0-' in index  # the matrix links each member


def test_report_is_byte_identical_across_runs(tmp_path, run_cli, buggy):
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        code, _o, _e = run_cli("check", SMALL, "--engine", BUGGY, "--report", str(out))
        assert code == 1
        outs.append(out)
    files_a = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) > 10
    for rel in files_a:
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel


def test_sarif_validates_against_the_official_schema(report):
    out, _stdout, doc = report
    sarif = json.loads((out / "results.sarif").read_text())
    assert SARIF_SCHEMA["id"].endswith("/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    run = sarif["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "replay.call-off-counts" in rule_ids and "DEADLOCK" in rule_ids
    results = run["results"]
    expected = [(b["board"], c) for b in doc["boards"] for c in b["counterexamples"]]
    assert len(results) == len(expected)
    for res, (board, c) in zip(results, expected):
        assert res["ruleId"] == c["invariant"] and rule_ids[res["ruleIndex"]] == c["invariant"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(Path(board).name)
        steps = res["codeFlows"][0]["threadFlows"][0]["locations"]
        assert [s["location"]["message"]["text"].split(": ", 1)[1] for s in steps] == c["trace"]
        assert steps[-1]["kinds"] == ["violation"]
    # the schema check can fail: a result without its message is refused
    broken = json.loads(json.dumps(sarif))
    del broken["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(broken)


def test_junit_has_one_case_per_board_and_invariant(report):
    out, _stdout, doc = report
    root = ET.parse(out / "junit.xml").getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [b["board"] for b in doc["boards"]]
    total_fail = 0
    for suite, b in zip(suites, doc["boards"]):
        cases = {c.get("name"): c for c in suite.findall("testcase")}
        assert set(cases) == {r["id"] for r in b["invariants"]} | {f"reachable: {g['id']}" for g in b["goals"]}
        for row in b["invariants"]:
            case = cases[row["id"]]
            if row["verdict"] == "violated":
                f = case.find("failure")
                cex = next(c for c in b["counterexamples"] if c["invariant"] == row["id"])
                more = sum(1 for c in b["counterexamples"] if c["invariant"] == row["id"]) - 1  # (its other signatures)
                assert f.get("message") == cex["message"] + (f" (and {more} more)" if more else "")
                assert "shortest trace (" in f.text and cex["trace"][-1] in f.text
                total_fail += 1
            elif row["verdict"] == "vacuous":  # a pass, marked: not a skip
                assert case.find("skipped") is None and case.find("properties/property").get("name") == "vacuous"
            else:
                assert case.find("failure") is None and case.find("skipped") is None
        assert int(suite.get("tests")) == len(cases)
    assert int(root.get("failures")) == total_fail == 11


def _walk(v, path=""):
    if isinstance(v, dict):
        for k, x in v.items():
            if k != "#meta":
                yield from _walk(x, f"{path}.{k}")
    elif isinstance(v, list):
        for x in v:
            yield from _walk(x, path + "[]")
    else:
        yield path, v


def test_itf_trace_follows_the_format_and_decodes_to_the_observations(buggy):
    from bpcheck.reports.itf import decode, trace_document

    br = _board_result()
    cex = next(c for c in br.counterexamples if c.invariant == "replay.call-off-counts")
    doc = json.loads(json.dumps(trace_document(cex)))
    assert doc["#meta"]["format"] == "ITF" and doc["#meta"]["source"] == cex.board
    assert doc["#meta"]["invariant"] == "replay.call-off-counts" and doc["#meta"]["rules"] == list(cex.rules)
    observations = [cex.initial_observation] + [s.after for s in cex.steps]
    assert len(doc["states"]) == len(observations) == 10
    for k, (state, obs) in enumerate(zip(doc["states"], observations)):
        assert state["#meta"]["index"] == k
        assert set(state) - {"#meta"} == set(doc["vars"])
        # no JSON null and no bare integer outside #meta: ITF writes them as Options and #bigint
        for path, v in _walk(state):
            assert v is not None, path
            assert not (isinstance(v, int) and not isinstance(v, bool)), path
        assert {k2: decode(state[k2]) for k2 in obs} == json.loads(json.dumps(obs))
        assert state["action"] == ("init" if k == 0 else cex.steps[k - 1].action["label"])
    # a nullable field is an Option whatever its value; a set of uids is a #set
    attacking = doc["states"][4]
    assert attacking["attack"]["tag"] == "Some" and attacking["attack"]["value"]["target"] == {"tag": "None", "value": {"#tup": []}}
    assert doc["states"][0]["attack"] == {"tag": "None", "value": {"#tup": []}}
    assert attacking["players"][0]["monsters"][0]["tag"] == "Some"
    assert attacking["players"][0]["monsters"][0]["value"]["declared_at"] == {"#set": []}
    assert doc["states"][-1]["#meta"]["violation"]["invariant"] == "replay.call-off-counts"
    assert "loop" not in doc


def test_a_cycle_is_a_lasso_whose_loop_is_real(buggy):
    """The ITF `loop` (and the text's "back to the state after step N") names the state the last
    one returns to: one legal action from the last state leads there."""
    from bpcheck.engines import make_engine
    from bpcheck.model.board import load_board
    from bpcheck.reports.itf import trace_document

    br = _board_result("buggy_engines:EndStepLoops", invariants="acc.zones")
    cex = next(c for c in br.counterexamples if c.invariant == "CYCLE")
    doc = trace_document(cex)
    loop = doc["loop"]
    assert loop == cex.cycle_start and 0 <= loop < len(cex.steps)
    observations = [cex.initial_observation] + [s.after for s in cex.steps]
    engine = make_engine("buggy_engines:EndStepLoops")
    st = engine.start(load_board(SMALL))
    for s in cex.steps:
        a = next(a for a in engine.legal_actions(st) if a.label == s.action["label"])
        st, _events = engine.apply(st, a)
    assert engine.observe(st) == observations[-1]
    nexts = [engine.observe(engine.apply(st, a)[0]) for a in engine.legal_actions(st)]
    assert observations[loop] in nexts


def test_the_trace_picture_marks_changes_and_the_violation(buggy):
    from bpcheck.reports.board import board_view
    from bpcheck.reports.graphviz import trace_dot

    br = _board_result()
    cex = next(c for c in br.counterexamples if c.invariant == "replay.call-off-counts")
    last = cex.steps[-1]
    changed = board_view(last.after, last.before).changed_keys()
    assert "P1.monsters.0" in changed and "attack" in changed  # Battle Ox's count reset, the attack over
    assert "P2.monsters.0" not in changed and "P1.lp" not in changed
    assert board_view(last.after).changed_keys() == []  # no previous state, nothing marked
    dot = trace_dot(cex)
    assert dot.count("[shape=plain, label=<<TABLE") == len(cex.steps) + 2  # one board per state + the note
    assert "VIOLATED: replay.call-off-counts" in dot and "RPL-REWIND, RPL-COUNTS" in dot
    assert cex.statement.split()[0] in dot
    bad_edge = next(line for line in dot.splitlines() if line.startswith(f"  s{len(cex.steps) - 1} -> s{len(cex.steps)} "))
    assert "VIOLATION" in bad_edge and "penwidth=3" in bad_edge and "replay: call off" in bad_edge
    assert dot.count('BORDER="3" COLOR="#e8590c"') >= 3  # changed cells are outlined
    small = trace_dot(cex, last=2, rankdir="TB")
    assert "rankdir=TB" in small and "steps 1–7 from the board" in small
    assert small.count("[shape=plain, label=<<TABLE") == 3 + 1 + 1  # 3 boards, the steps list, the note


def test_a_long_trace_wraps_into_rows_and_its_picture_stays_readable(buggy, tmp_path):
    """A long trace drawn on one row was an SVG 12,508 pt wide (issue 34): it wraps into rows of
    ROW_STATES states, so the picture's width stays that of one row however long the trace."""
    from bpcheck.reports.graphviz import ROW_STATES, trace_dot, write_dot_and_svg

    br = _board_result(reduce=False)
    cex = max(br.counterexamples, key=lambda c: len(c.steps))
    assert len(cex.steps) >= 3 * ROW_STATES  # long enough to need four rows

    def width(dot: str, name: str) -> float:
        out = write_dot_and_svg(dot, tmp_path / f"{name}.dot", tmp_path / f"{name}.svg")
        assert out.ok, out.message
        return float(re.search(r'<svg width="([\d.]+)pt"', (tmp_path / f"{name}.svg").read_text()).group(1))

    wrapped = trace_dot(cex)
    rows = re.findall(r"\{ rank=same; ([^}]*)\}", wrapped)
    assert len(rows) == -(-(len(cex.steps) + 1) // ROW_STATES)  # every state in a row, each row full but the last
    assert [len(r.split(";")) - 1 for r in rows][:-1] == [ROW_STATES] * (len(rows) - 1)
    assert rows[0].split(";")[0] == "s0" and "rankdir=TB" in wrapped
    one_row = trace_dot(cex, per_row=len(cex.steps) + 1)
    assert "rank=same" not in one_row and "rankdir=LR" in one_row
    w_wrapped, w_one_row = width(wrapped, "wrapped"), width(one_row, "one-row")
    assert w_wrapped <= 3200, w_wrapped  # about four boards and their arrows side by side
    assert w_one_row > 2.5 * w_wrapped, (w_one_row, w_wrapped)
    short = dataclasses.replace(cex, steps=cex.steps[: ROW_STATES - 1], labels=cex.labels[: ROW_STATES - 1])
    assert "rank=same" not in trace_dot(short)  # a short trace stays on one row, left to right
    tail = trace_dot(cex, last=ROW_STATES + 2)  # the steps before listed in one node, the rest wrapped
    assert "prelude [shape=plain" in tail and len(re.findall(r"\{ rank=same; ", tail)) == 2
    assert width(tail, "tail") <= 3200


def test_small_explorations_draw_the_whole_graph_larger_ones_a_summary(buggy):
    from bpcheck.reports.graphviz import state_graph_dot

    br = _board_result(reduce=False)  # every state (--no-reduce)
    g = br.result.graph
    assert g.complete and len(g.states) == br.result.states == 126 and len(g.edges) == br.result.transitions
    cex = next(c for c in br.counterexamples if c.invariant == "replay.call-off-counts")
    dot = state_graph_dot(cex, g)
    assert len(re.findall(r"^  n\d+ \[", dot, flags=re.M)) == 126  # one node per state
    assert dot.count('penwidth=2.5, arrowsize=0.8') == len(cex.steps)  # the path's edges
    assert "state graph of" in dot and "126 states" in dot

    small = _board_result(graph_limit=50, reduce=False)
    g2 = small.result.graph
    assert not g2.complete and g2.states == [] and g2.edges == []  # nothing kept past the limit
    assert g2.total_states == small.result.states and sum(g2.depth_counts) == small.result.states
    summary = state_graph_dot(cex, g2)
    assert "state graph not drawn: 126 states" in summary and "more than the limit of 50 states" in summary
    assert "the violation" in summary
    # recording the graph changes nothing else
    plain = _board_result(graph_limit=None, reduce=False)
    assert plain.result.graph is None
    assert (plain.result.states, plain.result.transitions) == (br.result.states, br.result.transitions)
    assert [c.to_dict() for c in plain.counterexamples] == [c.to_dict() for c in br.counterexamples]


def test_reduced_graph_draws_the_decisions_and_the_trace_folds_forced_passes(buggy):
    from bpcheck.reports.graphviz import state_graph_dot
    from bpcheck.reports.html import cex_page
    from bpcheck.reports.runs import runs_of

    br = _board_result()  # reduction on (the default)
    g = br.result.graph
    assert g.complete and len(g.states) == br.result.states < 126
    cex = next(c for c in br.counterexamples if c.invariant == "replay.call-off-counts")
    decisions = [s for s in cex.steps if not s.forced]
    assert len(decisions) < len(cex.steps)  # forced passes were folded
    dot = state_graph_dot(cex, g)
    assert dot.count("penwidth=2.5, arrowsize=0.8") == len(decisions)  # the path: one edge per decision
    assert f"({len(cex.steps)} steps, {len(decisions)} decisions)" in dot
    page = cex_page(runs_of([br], BUGGY)[0], cex, "x", {})
    assert page.count("<details>") >= 1 and "(forced)" in page
    # every step is still a state of the viewer (the micro-steps are shown, folded in the list)
    assert page.count('<section class="state"') == len(cex.steps) + 1


def test_a_failed_rendering_is_said_and_the_dot_is_kept(tmp_path, run_cli, buggy, monkeypatch):
    monkeypatch.setenv("BPCHECK_DOT", str(tmp_path / "no-such-renderer"))
    out = tmp_path / "report"
    code, stdout, _ = run_cli("check", SMALL, "--engine", BUGGY, "--invariants", "replay.call-off-counts", "--report", str(out))
    assert code == 1
    base = out / "counterexamples" / "000-replay-1.replay.call-off-counts"
    assert Path(f"{base}.dot").is_file() and not Path(f"{base}.svg").exists()
    assert "SVG not rendered for" in stdout and "cannot run" in stdout and "(the DOT file is written)" in stdout
    page = Path(f"{base}.html").read_text()
    assert "The SVG was not rendered: cannot run" in page and 'href="000-replay-1.replay.call-off-counts.dot"' in page
    assert (out / "index.html").is_file() and (out / "results.sarif").is_file()


def test_report_into_a_file_is_bad_input_before_the_run(tmp_path, run_cli, buggy):
    target = tmp_path / "taken"
    target.write_text("x")
    code, out, err = run_cli("check", SMALL, "--engine", BUGGY, "--json", str(tmp_path / "r.json"), "--report", str(target))
    assert code == 2 and "exists and is not a folder" in err and "Traceback" not in err
    assert "states" not in out and not (tmp_path / "r.json").exists()  # checked up front: nothing was run


def test_github_annotations_respect_the_per_step_limit(buggy):
    from bpcheck.reports.github import PER_STEP, annotations
    from bpcheck.reports.runs import Run

    br = _board_result()
    assert len(br.counterexamples) == 5
    lines = annotations([Run(BUGGY, br)])  # one annotation per root cause: two here
    assert len(lines) == 2 and all(l.startswith("::error file=") for l in lines)
    first = lines[0]
    assert f"file={br.board.path}," in first and "title=bpcheck%3A attack.count violated (+2 like it)::" in first
    assert "%0A" in first and "\n" not in first and "shortest trace (9 steps)" in first
    assert "root cause #1: 3 counterexamples (attack.count, attack.offered-legal, attack.position-change) on 1 board" in first
    runs = [Run(f"engine-{k}", br) for k in range(6)]  # 30 counterexamples, 12 root causes (one engine's are its own)
    lines = annotations(runs, where="the report")
    errors = [l for l in lines if l.startswith("::error")]
    assert len(errors) == PER_STEP == 10
    assert errors[-1].endswith("::3 more problems not annotated here (GitHub shows 10 error annotations per step): see the report")


def test_github_summary_goes_to_the_step_summary_file(tmp_path, run_cli, buggy, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, stdout, _ = run_cli("check", SMALL, "--engine", BUGGY, "--github")
    assert code == 1
    assert stdout.count("::error file=") == 2 and f"summary: appended to $GITHUB_STEP_SUMMARY ({summary})" in stdout
    text = summary.read_text()
    assert text.startswith("earlier step\n## ❌ bpcheck check: FAIL")
    assert "### #2 `replay.bookkeeping-kept` on" in text and "9. P1: `replay: call off`" in text
    assert "## Counterexamples by root cause (5 in 2 groups)" in text
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    code, stdout, _ = run_cli("check", SMALL, "--github")
    assert code == 0 and "## ✅ bpcheck check: PASS" in stdout and "::error" not in stdout


def test_the_readme_example_is_generated_by_the_documented_command(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "render_example.py"), str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    fresh = (tmp_path / "example-counterexample.dot").read_text()
    assert (ROOT / "docs" / "example-counterexample.dot").read_text() == fresh, "regenerate: python scripts/render_example.py"
    svg = html.unescape((ROOT / "docs" / "example-counterexample.svg").read_text())
    assert "<svg" in svg and "VIOLATED: replay.call-off-counts" in svg
    readme = (ROOT / "README.md").read_text()
    assert "docs/example-counterexample.svg" in readme and "scripts/render_example.py" in readme


def test_bad_input_is_in_every_format_and_the_rest_is_reported(tmp_path, run_cli, buggy):
    bad = tmp_path / "broken.toml"
    bad.write_text("turn = = 2\n")
    out = tmp_path / "report"
    code, stdout, err = run_cli("check", SMALL, str(bad), "--engine", BUGGY, "--report", str(out), "--github")
    assert code == 2 and "broken.toml" in err
    root = ET.parse(out / "junit.xml").getroot()
    assert root.get("errors") == "1" and int(root.get("failures")) == 5
    error_case = root.find(f"testsuite[@name='{bad}']/testcase/error")
    assert error_case is not None and error_case.get("type") == "InputError"
    sarif = json.loads((out / "results.sarif").read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert any("bad input" in n["message"]["text"] and "broken.toml" in n["message"]["text"] for n in notes)
    index = (out / "index.html").read_text()
    assert "<b>ERROR</b>" in index and "Bad input" in index and "broken.toml" in index
    assert f"::error file={bad},title=bpcheck%3A bad input::" in stdout
    assert len(list((out / "counterexamples").glob("*.html"))) == 2  # the good board's counterexamples: two root causes


def test_a_violation_in_the_initial_state_is_drawn_on_it(buggy):
    """A counterexample with no step (the board itself breaks the invariant) in every format."""
    from bpcheck.explorers.run import Counterexample
    from bpcheck.reports.graphviz import trace_dot
    from bpcheck.reports.html import cex_page
    from bpcheck.reports.itf import trace_document
    from bpcheck.reports.runs import Run

    br = _board_result()
    obs = br.counterexamples[0].initial_observation
    cex = Counterexample(SMALL, BUGGY, "acc.zones", "Every card is in one place.", ("ZONES",), "Battle Ox is twice on the field", "state", obs, [], [])
    dot = trace_dot(cex)
    assert "s0 [shape=plain" in dot and "s1 [" not in dot and 'COLOR="#c92a2a"' in dot.split("s0 [", 1)[1].split("];")[0]
    assert "in the initial state" in dot
    doc = trace_document(cex)
    assert len(doc["states"]) == 1 and doc["states"][0]["#meta"]["violation"]["invariant"] == "acc.zones"
    page = cex_page(Run(BUGGY, br), cex, "x", {})
    assert 'data-violation-step="0"' in page and '<li value="0" class="bad">initial state</li>' in page


def test_an_inconclusive_board_is_never_shown_as_a_pass(tmp_path, run_cli):
    out = tmp_path / "report"
    code, stdout, _ = run_cli("check", SMALL, "--max-states", "20", "--report", str(out), "--github")
    assert code == 3
    root = ET.parse(out / "junit.xml").getroot()
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert any("inconclusive: held on the 20 states explored before the bound (max states (20))" in c.find("skipped").get("message") for c in skipped)
    assert int(root.get("failures")) == 0 and int(root.get("skipped")) >= 1
    sarif = json.loads((out / "results.sarif").read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "warning" and "inconclusive, bound hit: max states (20)" in notes[0]["message"]["text"]
    assert "::warning file=" in stdout and "title=bpcheck%3A inconclusive::bound hit: max states (20)" in stdout
    assert "## ⚠️ bpcheck check: INCONCLUSIVE" in stdout
    index = (out / "index.html").read_text()
    assert "<b>INCONCLUSIVE</b>" in index and 'class="m-held-so-far"' in index
