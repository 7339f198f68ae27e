"""`bpcheck check`: verdicts, exit statuses, shortest counterexamples, JSON, replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "boards" / "000-replay-1.toml")
SCHEMA = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())


@pytest.fixture
def buggy(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


def test_reference_passes_and_json_validates(tmp_path, run_cli):
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli("check", SMALL, "--json", str(out))
    assert code == 0, stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    b = doc["boards"][0]
    assert b["verdict"] == "pass" and b["transitions"] >= b["states"] - 1
    # reduction (the default): decisions stored, forced passes judged and counted beside them
    assert b["states"] + b["reduction"]["forced_states"] == 110 and b["reduction"]["micro_transitions"] == 116  # tests/perft.json
    rows = {r["id"]: r for r in b["invariants"]}
    assert rows["replay.iff"]["verdict"] == "held" and rows["replay.iff"]["checked"] > 0
    assert rows["attack.must-attack"]["verdict"] == "vacuous"
    assert rows["DEADLOCK"]["verdict"] == "held" and rows["CYCLE"]["verdict"] == "held"


def test_output_is_byte_for_byte_deterministic(tmp_path, run_cli):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    c1, out1, _ = run_cli("check", SMALL, "--json", str(a))
    c2, out2, _ = run_cli("check", SMALL, "--json", str(b))
    assert c1 == c2 == 0
    assert out1 == out2
    assert a.read_bytes() == b.read_bytes()


def test_planted_violation_gives_exit_1_and_a_shortest_trace(tmp_path, run_cli, buggy):
    out = tmp_path / "r.json"
    cex_dir = tmp_path / "cex"
    code, stdout, _ = run_cli(
        "check", SMALL, "--engine", "buggy_engines:CallOffForgetsAttack", "--json", str(out), "--cex-dir", str(cex_dir)
    )
    assert code == 1
    assert "FAIL" in stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    cexs = {c["invariant"]: c for c in doc["boards"][0]["counterexamples"]}
    assert "replay.call-off-counts" in cexs
    c = cexs["replay.call-off-counts"]
    # enter, pass, pass, attack, pass, Call of the Haunted, pass, pass, call off: no shorter line exists.
    assert c["length"] == 9
    assert c["trace"][-1] == "replay: call off"
    assert "replay.call-off-counts: " in stdout and "shortest trace (5 decisions, 9 steps)" in stdout
    assert c["forced"] == [2, 5, 7, 8] and c["decisions"] == 5
    assert "board before the violating step:" in stdout and "RPL-COUNTS" in stdout
    # The saved counterexample replays and still fails ...
    f = cex_dir / "000-replay-1.replay.call-off-counts.json"
    code, stdout, _ = run_cli("replay", str(f), "--engine", "buggy_engines:CallOffForgetsAttack")
    assert code == 1
    assert "violated at step 9" in stdout
    # ... and passes on the reference engine, where the bug does not exist. The file names the
    # buggy engine, but a file never chooses the engine: replay says so and uses the default.
    code, stdout, _ = run_cli("replay", str(f))
    assert code == 0, stdout
    assert "no longer violated" in stdout
    assert "the file names engine \"buggy_engines:CallOffForgetsAttack\"; replaying on reference" in stdout


def test_dfs_also_finds_it(run_cli, buggy):
    code, stdout, _ = run_cli("check", SMALL, "--engine", "buggy_engines:CallOffForgetsAttack", "--strategy", "dfs")
    assert code == 1
    assert "replay.call-off-counts" in stdout


def test_deadlock_is_reported(run_cli, buggy):
    code, stdout, _ = run_cli("check", SMALL, "--engine", "buggy_engines:DeadEndStep")
    assert code == 1
    assert "DEADLOCK: " in stdout


def test_cycle_is_reported(run_cli, buggy):
    code, stdout, _ = run_cli("check", SMALL, "--engine", "buggy_engines:EndStepLoops", "--invariants", "acc.zones")
    assert code == 1
    assert "CYCLE: " in stdout and "and back to the state after step" in stdout


def test_a_bound_makes_it_inconclusive(run_cli):
    code, stdout, _ = run_cli("check", SMALL, "--max-states", "20")
    assert code == 3
    assert "INCONCLUSIVE" in stdout and "max states (20)" in stdout
    code, stdout, _ = run_cli("check", SMALL, "--max-depth", "5")
    assert code == 3 and "max depth (5)" in stdout


def test_unknown_invariant_and_bad_engine_are_bad_input(run_cli, buggy):
    code, _o, err = run_cli("check", SMALL, "--invariants", "nope")
    assert code == 2 and "unknown invariant or family 'nope'" in err
    code, _o, err = run_cli("check", SMALL, "--engine", "buggy_engines:broken_factory")
    assert code == 2 and "failed to build an engine: RuntimeError: cannot connect to the engine" in err
    code, _o, err = run_cli("check", SMALL, "--engine", "no_such_module:x")
    assert code == 2 and "cannot import 'no_such_module'" in err


def test_invariant_selection_by_family(run_cli):
    code, stdout, _ = run_cli("check", SMALL, "--invariants", "replay,acc.zones")
    assert code == 0
    assert "(1 board, 9 invariants)" in stdout  # the replay family holds goat's replay.stored too (docs/rulesets.md)


def test_goals(tmp_path, run_cli):
    board = Path(SMALL).read_text() + """
[[reachable]]
id = "replay"
event = "replay"
[[reachable]]
id = "cotH"
event = "chain_link_resolved"
card = "Call of the Haunted"
[[reachable]]
id = "ds"
step = "damage_step_start"
[[reachable]]
id = "impossible"
event = "chain_link_resolved"
card = "Mirror Force"
"""
    p = tmp_path / "goals.toml"
    p.write_text(board)
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli("check", str(p), "--json", str(out))
    assert code == 1
    assert "goal 'impossible' is not reachable" in stdout
    goals = {g["id"]: g for g in json.loads(out.read_text())["boards"][0]["goals"]}
    assert goals["replay"]["reached"] and goals["replay"]["witness"][-1] == "pass"
    assert len(goals["replay"]["witness"]) == 8
    assert goals["ds"]["reached"] and not goals["impossible"]["reached"]


def test_bad_goal_is_bad_input(tmp_path, run_cli):
    p = tmp_path / "g.toml"
    p.write_text(Path(SMALL).read_text() + '\n[[reachable]]\nid = "x"\nevent = "explosion"\n')
    code, _o, err = run_cli("check", str(p))
    assert code == 2 and "reachable[0].event: unknown event kind 'explosion'" in err


def test_fingerprints_are_stable_across_processes():
    code = (
        "from bpcheck.model.board import load_board;"
        "from bpcheck.engines.reference import ReferenceEngine;"
        "from bpcheck.model.canonical import fingerprint;"
        f"b = load_board({SMALL!r}); e = ReferenceEngine(); s = e.start(b);"
        "print(fingerprint(e.observe(s)))"
    )
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1 and outs.pop().strip().isdigit()


def test_invariants_doc_is_generated_from_the_code(run_cli):
    code, out, _ = run_cli("invariants", "--markdown")
    assert code == 0
    assert (ROOT / "docs" / "invariants.md").read_text() == out, "regenerate: bpcheck invariants --markdown > docs/invariants.md"


def test_every_invariant_cites_catalogued_rules():
    import re

    from bpcheck.invariants import REGISTRY

    ids = set(re.findall(r"^### (\S+)", (ROOT / "docs" / "rules.md").read_text(), flags=re.M))
    for inv in REGISTRY.values():
        assert inv.rules, inv.id
        assert set(inv.rules) <= ids, (inv.id, set(inv.rules) - ids)
    families = {inv.family for inv in REGISTRY.values()}
    assert families == {"turn structure", "attack counts", "replay", "damage step", "chains and windows", "accounting"}
    for fam in families - {"turn structure"}:
        assert sum(1 for i in REGISTRY.values() if i.family == fam) >= 5
    # the newest family: the phase order any engine shows, the Battle Phase's steps one by one, and
    # the choices of how the turn goes on that must be offered (issue 24)
    assert sorted(i.id for i in REGISTRY.values() if i.family == "turn structure") == ["turn.battle-steps", "turn.legal-offered", "turn.phase-order"]


def test_an_inconsistent_engine_is_reported_not_crashed(run_cli, buggy):
    code, stdout, err = run_cli("check", SMALL, "--engine", "buggy_engines:corrupt_observation")
    assert code == 1
    assert "could not be evaluated on the engine's data (KeyError: 'position')" in stdout
    assert "Traceback" not in stdout + err


@pytest.mark.parametrize("board", ["000-replay-5.toml", "003-004-example-2.toml", "002-fiendish-chain-stops.toml"])
def test_event_prefilter_changes_no_result(board):
    """Transition invariants that name their events are skipped on transitions without them;
    that must give exactly the counts and verdicts of running every check everywhere."""
    import dataclasses

    from bpcheck.explorers.checking import EngineSystem
    from bpcheck.explorers.core import explore
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board
    from bpcheck.engines.reference import ReferenceEngine

    b = load_board(ROOT / "boards" / board)
    invs = select(None)
    assert sum(1 for i in invs if i.events is not None) >= 15
    fast = explore(EngineSystem(ReferenceEngine(), b, invs))
    slow = explore(EngineSystem(ReferenceEngine(), b, [dataclasses.replace(i, events=None) for i in invs]))
    assert {k: (v.checked, v.violations) for k, v in fast.props.items()} == {
        k: (v.checked, v.violations) for k, v in slow.props.items()
    }


def test_exclude_leaves_boards_out_and_lists_them(tmp_path, run_cli):
    """--exclude PATTERN (scripts/check leaves the seven-card board out with it): a shell pattern
    over a board's path or its file name; what it leaves out is listed in the text and the JSON,
    never silently dropped."""
    other = str(ROOT / "boards" / "000-replay-2.toml")
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli("check", SMALL, other, "--exclude", "000-replay-2.*", "--json", str(out))
    assert code == 0, stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert [b["board"] for b in doc["boards"]] == [SMALL]
    assert doc["excluded"] == [Path(other).as_posix()]
    assert "(1 board," in stdout and f"excluded by --exclude (not checked): {Path(other).as_posix()}" in stdout
    # by path too (a leading ./ is the same path), and no "excluded" key when nothing is left out
    code, stdout, _ = run_cli("check", SMALL, other, "--exclude", Path(other).as_posix(), "--json", str(out))
    assert code == 0 and [b["board"] for b in json.loads(out.read_text())["boards"]] == [SMALL]
    code, stdout, _ = run_cli("check", SMALL, "--json", str(out))
    assert code == 0 and "excluded" not in json.loads(out.read_text()) and "excluded" not in stdout


def test_exclude_that_matches_nothing_or_everything_is_bad_input(run_cli):
    code, stdout, stderr = run_cli("check", SMALL, "--exclude", "no-such-board*")
    assert code == 2 and "--exclude: no-such-board*: matches none of the 1 board files given" in stderr, stderr
    assert "Traceback" not in stderr
    code, stdout, stderr = run_cli("check", SMALL, "--exclude", "000-replay-*")
    assert code == 2 and "leaves none of the 1 board files given" in stderr, stderr
