"""`--ruleset` on replay, record, conform and mutants (issue 31; docs/rulesets.md), each seen
through what the command does on a board where the rulesets differ: boards/rulesets/start-step.toml,
where the TCG lets the opponent activate Waboku in the Start Step once the turn player passes and
the OCG does not (OCG-START-STEP-TP)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOARD = str(ROOT / "boards" / "rulesets" / "start-step.toml")
WABOKU = ["enter Battle Phase", "pass", "activate Waboku"]
MUTANT = "ocg-start-step-under-tcg"  # the OCG's Start Step played under the TCG (engines/mutants.py)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_record_plays_the_ruleset_and_writes_it_in_the_header(tmp_path, run_cli):
    tcg = tmp_path / "tcg.jsonl"
    code, out, err = run_cli("record", BOARD, "--actions", *WABOKU, "--out", str(tcg))
    assert code == 0, err
    assert _lines(tcg)[0]["ruleset"] == "tcg" and len(_lines(tcg)) == 4
    code, out, err = run_cli("record", BOARD, "--ruleset", "ocg", "--actions", *WABOKU, "--out", str(tmp_path / "ocg.jsonl"))
    assert code == 2  # under ocg the opponent is not offered Waboku there
    assert "'activate Waboku' is not offered by the engine at step 3; it offers: pass" in err
    ocg = tmp_path / "ocg2.jsonl"
    code, out, err = run_cli("record", BOARD, "--ruleset", "ocg", "--actions", *WABOKU[:2], "--out", str(ocg))
    assert code == 0, err
    assert "(ruleset ocg)" in out and _lines(ocg)[0]["ruleset"] == "ocg"


def test_conform_judges_a_trace_under_its_header_then_the_option(tmp_path, run_cli):
    tcg = tmp_path / "tcg.jsonl"
    assert run_cli("record", BOARD, "--actions", *WABOKU, "--out", str(tcg))[0] == 0
    # the header's ruleset wins over --ruleset: a TCG trace conforms whatever the option says
    code, out, _ = run_cli("conform", str(tcg), "--ruleset", "ocg", "--json", str(tmp_path / "c.json"))
    assert code == 0, out
    assert json.loads((tmp_path / "c.json").read_text())["traces"][0]["ruleset"] == "tcg"
    # a trace whose header names none (an older trace) is judged under --ruleset
    rows = _lines(tcg)
    del rows[0]["ruleset"]
    bare = tmp_path / "bare.jsonl"
    bare.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert run_cli("conform", str(bare))[0] == 0
    code, out, _ = run_cli("conform", str(bare), "--ruleset", "ocg", "--json", str(tmp_path / "o.json"))
    assert code == 1, out
    assert ", ruleset ocg, 3 steps" in out
    doc = json.loads((tmp_path / "o.json").read_text())["traces"][0]
    assert doc["ruleset"] == "ocg" and doc["verdict"] == "diverges" and doc["divergence"]["step"] == 3
    # a header naming an unknown ruleset is bad input naming the file, the line and the field
    rows[0]["ruleset"] = "speed"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, _out, err = run_cli("conform", str(bad))
    assert code == 2 and f'{bad}:1: ruleset: unknown ruleset "speed" (known: tcg, ocg, goat)' in err


def test_replay_plays_a_counterexample_under_its_ruleset(tmp_path, run_cli):
    cex_dir = tmp_path / "cex"
    code, _out, _err = run_cli("check", BOARD, "--engine", f"mutant:{MUTANT}", "--cex-dir", str(cex_dir), "-q")
    assert code == 1
    (f,) = sorted(cex_dir.glob("*.chain.legal-offered.json"))
    assert json.loads(f.read_text())["ruleset"] == "tcg"  # the file says the ruleset it was found under
    code, out, _ = run_cli("replay", str(f), "--engine", f"mutant:{MUTANT}")
    assert code == 1 and "violated at step 2: chain.legal-offered" in out
    # the file's own ruleset wins over --ruleset, and replay says so
    code, out, _ = run_cli("replay", str(f), "--engine", f"mutant:{MUTANT}", "--ruleset", "ocg")
    assert code == 1 and "note: the counterexample was found under ruleset tcg; replaying under it" in out
    # a file naming none is replayed under --ruleset: under ocg the mutant's rule is the rule
    doc = json.loads(f.read_text())
    del doc["ruleset"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc))
    assert run_cli("replay", str(bare), "--engine", f"mutant:{MUTANT}")[0] == 1
    code, out, _ = run_cli("replay", str(bare), "--engine", f"mutant:{MUTANT}", "--ruleset", "ocg")
    assert code == 0, out
    assert "(ruleset ocg)" in out and "no longer violated" in out


def test_replay_of_a_result_file_uses_the_boards_ruleset(tmp_path, run_cli):
    res = tmp_path / "r.json"
    code, _out, _err = run_cli("check", BOARD, "--engine", f"mutant:{MUTANT}", "--json", str(res), "-q")
    assert code == 1 and json.loads(res.read_text())["boards"][0]["ruleset"] == "tcg"
    code, out, _ = run_cli("replay", str(res), "--engine", f"mutant:{MUTANT}", "--ruleset", "ocg")
    assert code == 1 and "replaying under it" in out


def test_mutants_play_under_the_ruleset(tmp_path, run_cli):
    code, out, _ = run_cli("mutants", BOARD, "--only", MUTANT, "-q")
    assert code == 0 and "killed    chain.legal-offered" in out
    out_json = tmp_path / "m.json"
    code, out, _ = run_cli("mutants", BOARD, "--only", MUTANT, "--ruleset", "ocg", "--json", str(out_json), "-q")
    assert code == 1, out  # under ocg the planted rule is the ruleset's own: nothing to kill
    assert out.splitlines()[0] == "ruleset ocg (boards that name none)"
    doc = json.loads(out_json.read_text())
    assert doc["ruleset"] == "ocg" and doc["mutants"][0]["status"] == "survived"


def test_an_unknown_ruleset_is_a_usage_error(run_cli):
    for cmd in (["replay", "x.json"], ["record", BOARD, "--random", "1", "--out", "x.jsonl"], ["conform", "x.jsonl"], ["mutants"]):
        code, _out, err = run_cli(*cmd, "--ruleset", "speed")
        assert code == 2 and "--ruleset: invalid choice: 'speed'" in err, cmd


def test_the_core_tests_skip_and_say_why_without_the_core(tmp_path):
    """Without the core (and outside CI) every test of the core under the rulesets skips with the
    path that is missing and the variable to set; none fails."""
    env = {k: v for k, v in os.environ.items() if k != "BPCHECK_REQUIRE_OCGCORE"}
    env["OCGCORE"] = str(tmp_path / "no-such-libocgcore.so")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", "-rs", "-p", "no:cacheprovider", "tests/test_ocgcore_rulesets.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6 skipped" in r.stdout and "passed" not in r.stdout and "failed" not in r.stdout
    assert f"the EDOPro core is not available: {tmp_path / 'no-such-libocgcore.so'} not found (set OCGCORE, OCG_SCRIPTS, OCG_CARDS)" in r.stdout
