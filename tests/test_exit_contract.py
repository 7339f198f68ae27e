"""The CI contract through real processes (issue 8 section 4): bpcheck's own bug is exit 4 with
one line and a traceback file; an in-process engine that raises is an ENGINE-FAULT; a closed
output pipe never turns a failure into exit 0; a board an engine refuses is skipped everywhere,
exit 0 unless --strict."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parent.parent
SMALL = "boards/000-replay-1.toml"  # 110 states; the replay-resets-count mutant fails on it
OTHER = "boards/002-skip-battle-phase.toml"  # 33 states, no replay
SCHEMA = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())


def env(**extra: str) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
    e["PYTHONPATH"] = str(ROOT / "tests") + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra)
    return e


def bpcheck(*args: str, **kw) -> subprocess.CompletedProcess:
    extra = kw.pop("env", {})
    return subprocess.run(
        [sys.executable, "-m", "bpcheck", *args], cwd=ROOT, capture_output=True, text=True, env=env(**extra), timeout=120, **kw
    )


# -- a. internal errors ------------------------------------------------------------------------


def test_an_internal_error_is_exit_4_with_one_line_and_the_traceback_in_a_file(tmp_path):
    code = (
        "import sys, bpcheck.explorers.core as c\n"
        "def boom(*a): raise ZeroDivisionError('planted bug')\n"
        "c._find_cycle = boom\n"
        "from bpcheck.cli.main import main\n"
        f"sys.exit(main(['check', {SMALL!r}, {OTHER!r}, '--json', {str(tmp_path / 'r.json')!r}]))\n"
    )
    crash = tmp_path / "crash"
    crash.mkdir()
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env(BPCHECK_CRASH_DIR=str(crash)), timeout=120)
    assert p.returncode == 4, (p.stdout, p.stderr)
    from bpcheck.explorers.progress import without_progress

    lines = without_progress(p.stderr).strip().splitlines()  # (progress lines, if the run took seconds)
    assert len(lines) == 1, p.stderr
    assert "internal error" in lines[0] and "ZeroDivisionError: planted bug" in lines[0] and "core.py" not in lines[0].split(" at ")[0]
    assert "Traceback" not in p.stderr + p.stdout
    files = list(crash.iterdir())
    assert len(files) == 1 and str(files[0]) in lines[0]
    text = files[0].read_text()
    assert "Traceback (most recent call last)" in text and "planted bug" in text
    # the bug struck in the first board: nothing finished, but the result file says what happened
    doc = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["internal_error"] == "ZeroDivisionError: planted bug" and doc["verdict"] != "pass"


def test_an_in_process_engine_that_raises_is_an_engine_fault_not_a_crash(tmp_path):
    out = tmp_path / "r.json"
    p = bpcheck("check", SMALL, OTHER, "--engine", "lifecycle_engines:RaisesOnAttack", "--json", str(out))
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "Traceback" not in p.stdout + p.stderr
    assert "ENGINE-FAULT" in p.stdout
    assert "the engine raised RuntimeError: attack resolution is not implemented in apply() at lifecycle_engines.py:" in p.stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    b = {x["board"]: x for x in doc["boards"]}
    cex = [c for c in b[SMALL]["counterexamples"] if c["invariant"] == "ENGINE-FAULT"][0]
    assert cex["kind"] == "fault" and cex["trace"][-1].startswith("attack ")
    assert b[OTHER]["states"] > 1  # the other board is still checked


def test_an_engine_calling_sys_exit_is_an_engine_fault():
    p = bpcheck("check", SMALL, "--engine", "lifecycle_engines:ExitsOnAttack")
    assert p.returncode == 1 and "ENGINE-FAULT" in p.stdout and "the engine raised SystemExit: 0 in apply()" in p.stdout


# -- b. a closed output pipe -------------------------------------------------------------------


def test_a_closed_pipe_never_turns_a_failure_into_exit_0(tmp_path):
    # the first board fails at once; the second is slow, so its lines come after the reader left
    out = tmp_path / "r.json"
    p = subprocess.Popen(
        [sys.executable, "-m", "bpcheck", "check", SMALL, OTHER, "--engine", "lifecycle_engines:slow_buggy", "--json", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(LIFECYCLE_SLOW="0.01", LIFECYCLE_SLOW_ON="skip-battle", PYTHONUNBUFFERED="1"),
    )
    first = p.stdout.readline()
    assert first.startswith(b"FAIL"), first
    p.stdout.close()  # `| head -1`
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 1
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert json.loads(out.read_text())["verdict"] == "fail"  # the run went on to the end


def test_head_in_a_shell_pipeline_keeps_the_status():
    cmd = f"set -o pipefail; {sys.executable} -m bpcheck check {SMALL} --engine mutant:replay-resets-count | head -1"
    p = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True, env=env(), timeout=120)
    assert p.returncode == 1 and p.stdout.startswith("FAIL") and "Traceback" not in p.stderr
    cmd = f"set -o pipefail; {sys.executable} -m bpcheck cards | head -1"
    p = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True, env=env(), timeout=120)
    assert p.returncode == 0 and p.stderr == ""


# -- c. skipped boards -------------------------------------------------------------------------


def _check_skipped(tmp_path, engine: str, reason: str) -> None:
    """Skipped is not passed (issue 34): a refused board makes the run exit 3, named with the
    engine's reason, and every output says it was not checked; --allow-skips keeps the old pass."""
    out, rep = tmp_path / "r.json", tmp_path / "report"
    p = bpcheck("check", SMALL, OTHER, "--engine", engine, "--json", str(out), "--report", str(rep), "--github")
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert f"SKIPPED      {SMALL}: the engine refused this board: {reason}" in p.stdout
    assert "check: 1 passed, 0 failed, 0 inconclusive, 1 skipped" in p.stdout
    assert "not checked: the engine refused 1 board, so the run is inconclusive (exit 3; --allow-skips accepts them):" in p.stdout
    assert f"  {SMALL}: {reason}" in p.stdout.splitlines()
    assert "Traceback" not in p.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["verdict"] == "inconclusive" and doc["strict"] is True and doc["counts"]["skipped"] == 1 and doc["errors"] == []
    b = {x["board"]: x for x in doc["boards"]}
    assert b[SMALL]["verdict"] == "skipped" and b[SMALL]["skipped_reason"] == reason
    assert all(r["verdict"] == "skipped" for r in b[SMALL]["invariants"])
    junit = ET.parse(rep / "junit.xml").getroot()
    refused = [c for c in junit.iter("testcase") if c.find("error") is not None and c.find("error").get("type") == "refused"]
    assert len(refused) == 1 and reason in refused[0].find("error").get("message")
    assert "not checked" in refused[0].find("error").get("message") and junit.find("testsuite").get("errors") is not None
    assert not [c for c in junit.iter("testcase") if c.find("skipped") is not None and "refused" in c.find("skipped").get("message")]
    index = (rep / "index.html").read_text()
    assert "Skipped boards" in index and html.escape(reason) in index and "1 skipped" in index
    assert '<div class="banner v-inconclusive" id="overall"><b>INCONCLUSIVE</b>' in index
    sarif = json.loads((rep / "results.sarif").read_text())
    notes = [n["message"]["text"] for r in sarif["runs"] for inv in r["invocations"] for n in inv.get("toolExecutionNotifications", [])]
    assert any("skipped" in n and reason in n for n in notes)
    assert "::warning" in p.stdout and "bpcheck%3A skipped" in p.stdout  # --github
    summary = (rep / "summary.md").read_text()
    assert "1 skipped" in summary and summary.startswith("## ⚠️ bpcheck check: INCONCLUSIVE")
    # --allow-skips: today's behaviour, a refused board is a skip that keeps a pass
    allowed = bpcheck("check", SMALL, OTHER, "--engine", engine, "--allow-skips", "--json", str(out), "--report", str(rep))
    assert allowed.returncode == 0, (allowed.stdout, allowed.stderr)
    assert f"skipped (the engine refused them): {SMALL}" in allowed.stdout and "not checked" not in allowed.stdout
    assert json.loads(out.read_text())["verdict"] == "pass" and json.loads(out.read_text())["strict"] is False
    junit = ET.parse(rep / "junit.xml").getroot()
    skipped = [c for c in junit.iter("testcase") if c.find("skipped") is not None and "refused" in c.find("skipped").get("message")]
    assert len(skipped) == 1 and reason in skipped[0].find("skipped").get("message")
    assert (rep / "summary.md").read_text().startswith("## ✅ bpcheck check: PASS")
    # --strict (the default now) still works; with --allow-skips it is a usage error
    strict = bpcheck("check", SMALL, OTHER, "--engine", engine, "--strict", "--json", str(out))
    assert strict.returncode == 3, strict.stdout
    assert json.loads(out.read_text())["verdict"] == "inconclusive"
    both = bpcheck("check", SMALL, "--engine", engine, "--strict", "--allow-skips")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr and "Traceback" not in both.stderr


def test_a_board_an_in_process_engine_refuses_is_skipped_everywhere(tmp_path):
    _check_skipped(tmp_path, "lifecycle_engines:RefusesReplayBoards", "replays are not implemented in this engine")


def test_a_board_a_cmd_engine_refuses_to_start_is_skipped(tmp_path):
    engine = f"cmd:{sys.executable} tests/engines/refuse_start_engine.py"
    _check_skipped(tmp_path, engine, "the engine 'bpcheck-reference' cannot start this board: this engine has no replay rules")


def test_an_engine_that_raises_on_the_initial_state_is_an_engine_fault(tmp_path):
    out = tmp_path / "r.json"
    p = bpcheck("check", SMALL, "--engine", "lifecycle_engines:ObserveRaises", "--json", str(out))
    assert p.returncode == 1 and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    assert "the engine raised KeyError: 'players' in observe()" in p.stdout and "(giving the initial state)" in p.stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["boards"][0]["counterexamples"][0]["invariant"] == "ENGINE-FAULT" and doc["boards"][0]["counterexamples"][0]["length"] == 0
