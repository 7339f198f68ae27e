"""`bpcheck prove`: symbolic boards are proven on the reference for every value of their
ranges; value mutants are killed by prove and missed by check on the concrete seed boards; a
witness is a concrete board that `bpcheck check` reproduces; --concretize writes the numeric
cases; bad ranges and engines that cannot run symbolically are bad input; solver `unknown` is
inconclusive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpcheck.engines.mutants import MUTANTS, VALUE_MUTANTS

ROOT = Path(__file__).resolve().parent.parent
SYMBOLIC = ROOT / "symbolic"
NUMERIC = ("acc.battle-damage", "acc.destroyed-by-battle", "acc.duel-over", "acc.lp-ledger")

# mutant -> (its symbolic board, the invariant prove kills it with, the concrete seed boards the
# symbolic board comes from, on which check misses it)
VALUE_KILLERS = {
    "exact-lethal-goes-on": ("lp-zero-battle.toml", "acc.duel-over", ["rule-lp-zero-battle.toml", "rule-calc-direct.toml", "rule-lp-zero-effect.toml"]),
    "cost-needs-more-lp": ("counter-trap-lp-cost.toml", "chain.counter-trap-offered", ["000-ds-counter-traps.toml"]),
    "zero-atk-attacker-takes-no-damage": ("calc-atk-def.toml", "acc.battle-damage", ["rule-calc-atk-def.toml"]),
}


def test_value_mutants_are_separate_from_the_enumeration_mutants():
    assert set(VALUE_KILLERS) == set(VALUE_MUTANTS)
    assert not set(VALUE_MUTANTS) & set(MUTANTS)


def test_symbolic_boards_are_proven_on_the_reference(tmp_path, run_cli):
    out, rep = tmp_path / "p.json", tmp_path / "rep"
    code, stdout, stderr = run_cli("prove", str(SYMBOLIC), "--json", str(out), "--report", str(rep))
    assert code == 0, stdout + stderr
    doc = json.loads(out.read_text())
    boards = {Path(b["board"]).name: b for b in doc["boards"]}
    assert len(boards) == len(list(SYMBOLIC.glob("*.toml"))) >= 6
    proven_numeric = set()
    for name, b in boards.items():
        assert b["verdict"] == "proven", name
        assert b["ranges"], name
        assert len(b["numeric_cases"]) >= 2, name  # the numbers really split the paths
        rows = {r["id"]: r for r in b["invariants"]}
        assert all(r["verdict"] in ("proven", "vacuous") for r in rows.values()), name
        proven_numeric |= {i for i in NUMERIC if rows[i]["verdict"] == "proven"}
    assert proven_numeric == set(NUMERIC)  # each numeric invariant was really decided somewhere
    words = (rep / "prove.md").read_text()
    assert "for every ATK of Battle Ox in 0..3000 (step 100)" in words
    assert "acc.battle-damage holds" in words and "The proof rests on rules DS-CALC-ATK-DEF" in words


@pytest.mark.parametrize("mutant", sorted(VALUE_KILLERS))
def test_value_mutant_killed_by_prove_and_missed_by_check(mutant, tmp_path, run_cli):
    board, killer, seeds = VALUE_KILLERS[mutant]
    out, rep = tmp_path / "p.json", tmp_path / "rep"
    code, stdout, stderr = run_cli("prove", str(SYMBOLIC / board), "--engine", f"mutant:{mutant}", "--json", str(out), "--report", str(rep))
    assert code == 1, stdout + stderr
    rows = {r["id"]: r for r in json.loads(out.read_text())["boards"][0]["invariants"]}
    assert rows[killer]["verdict"] == "violated"
    w = rows[killer]["witness"]
    assert w["reproduced_by_check"] is True and w["counterexample"]["invariant"] == killer
    # The witness board is a concrete board: check (any engine) reproduces the violation.
    wb = Path(w["board"])
    code, stdout, _ = run_cli("check", str(wb), "--engine", f"mutant:{mutant}", "--invariants", killer)
    assert code == 1 and killer in stdout
    code, _, _ = run_cli("check", str(wb), "--invariants", killer)  # and the reference passes it
    assert code == 0
    # The concrete seed boards do not hit the values: enumeration misses the bug.
    code, stdout, stderr = run_cli("check", *[str(ROOT / "boards" / s) for s in seeds], "--engine", f"mutant:{mutant}", "--invariants", killer)
    assert code == 0, stdout + stderr


def test_witness_counterexample_replays(tmp_path, run_cli):
    rep = tmp_path / "rep"
    code, _, _ = run_cli("prove", str(SYMBOLIC / "lp-zero-battle.toml"), "--engine", "mutant:exact-lethal-goes-on", "--report", str(rep))
    assert code == 1
    witness = (rep / "lp-zero-battle.acc.duel-over.witness.toml").read_text()
    assert "lp = 100" in witness and "atk = 100" in witness  # damage exactly equal to the LP left
    cex = json.loads((rep / "lp-zero-battle.acc.duel-over.cex.json").read_text())
    assert cex["invariant"] == "acc.duel-over" and cex["trace"][-1] == "pass"
    code, stdout, _ = run_cli("replay", str(rep / "lp-zero-battle.acc.duel-over.cex.json"), "--engine", "mutant:exact-lethal-goes-on")
    assert code == 1 and "P2 has 0 LP but the duel goes on" in stdout


def test_concretize_writes_one_board_per_numeric_case(tmp_path, run_cli):
    out, dest = tmp_path / "p.json", tmp_path / "cases"
    code, stdout, stderr = run_cli("prove", str(SYMBOLIC / "calc-atk-def.toml"), "--concretize", str(dest), "--json", str(out))
    assert code == 0, stdout + stderr
    b = json.loads(out.read_text())["boards"][0]
    files = sorted(dest.glob("*.toml"))
    assert len(files) == len(b["numeric_cases"]) == len(b["concretized"]) >= 4
    texts = [f.read_text() for f in files]
    assert any("atk = 0" in t and "def = 0" in t for t in texts)  # boundary values first: 0 against 0
    code, stdout, stderr = run_cli("check", str(dest), "--invariants", "accounting")
    assert code == 0, stdout + stderr
    # Any engine: --concretize needs no symbolic engine (the command is never started here).
    code, stdout, stderr = run_cli("prove", str(SYMBOLIC / "calc-direct.toml"), "--engine", "cmd:true", "--concretize", str(tmp_path / "c2"))
    assert code == 0, stdout + stderr
    assert len(list((tmp_path / "c2").glob("*.toml"))) >= 3


def test_prove_refuses_engines_that_cannot_run_symbolically(run_cli):
    code, _, stderr = run_cli("prove", str(SYMBOLIC / "calc-direct.toml"), "--engine", "cmd:true")
    assert code == 2 and "--concretize" in stderr and "Traceback" not in stderr


def test_check_refuses_a_symbolic_board(run_cli):
    code, _, stderr = run_cli("check", str(SYMBOLIC / "calc-direct.toml"))
    assert code == 2
    assert "calc-direct.toml: p1.monsters[0].atk: a range makes this board symbolic" in stderr and "bpcheck prove" in stderr
    code, stdout, _ = run_cli("validate", str(SYMBOLIC / "calc-direct.toml"))
    assert code == 0 and "symbolic: ATK of Battle Ox in 0..5000 (step 100)" in stdout


BASE = """turn = 3
turn_player = 1
[p1]
lp = 8000
monsters = [{ zone = 1, card = "Battle Ox", position = "attack", atk = RANGE }]
[p2]
lp = 8000
"""


@pytest.mark.parametrize(
    "rng, problem",
    [
        ("{ min = 100, max = 0 }", "p1.monsters[0].atk.max: max 0 is less than min 100"),
        ("{ min = 0, max = 150, step = 100 }", "p1.monsters[0].atk.max: max 150 is not min 0 plus a multiple of step 100"),
        ("{ min = 0, max = 100, step = 0 }", "p1.monsters[0].atk.step: step must be at least 1, got 0"),
        ("{ min = -100, max = 100 }", "p1.monsters[0].atk.min: -100 is less than the minimum of 0"),
        ("{ min = 0, max = 100, by = 5 }", "p1.monsters[0].atk.by: unknown field in a range"),
        ("{ max = 100 }", "p1.monsters[0].atk: a range needs 'min'"),
        ('{ min = 0, max = "100" }', "p1.monsters[0].atk.max: expected integer, got str '100'"),
        ("{ min = 0, max = 100.0 }", "p1.monsters[0].atk.max: expected a whole number, got 100.0"),
        ('"1700"', "p1.monsters[0].atk: expected integer or a range { min, max, step }, got str '1700'"),
    ],
)
def test_bad_ranges_are_bad_input(rng, problem, tmp_path, run_cli):
    f = tmp_path / "b.toml"
    f.write_text(BASE.replace("RANGE", rng))
    code, _, stderr = run_cli("prove", str(f))
    assert code == 2 and f"{f}: {problem}" in stderr and "Traceback" not in stderr


def test_copies_of_a_card_share_one_range(tmp_path, run_cli):
    f = tmp_path / "b.toml"
    f.write_text(
        BASE.replace("RANGE", "{ min = 0, max = 100 }").replace(
            "}]\n[p2]", '}, { zone = 2, card = "Battle Ox", position = "attack", atk = 200 }]\n[p2]'
        )
    )
    code, _, stderr = run_cli("prove", str(f))
    assert code == 2 and "p1.monsters[1].atk: 'Battle Ox' already has atk { min = 0, max = 100, step = 1 }" in stderr


def test_solver_unknown_is_inconclusive(monkeypatch, run_cli):
    import z3

    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    code, stdout, _ = run_cli("prove", str(SYMBOLIC / "calc-direct.toml"))
    assert code == 3 and "INCONCLUSIVE" in stdout


def test_prove_is_deterministic(tmp_path, run_cli):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for f in (a, b):
        code, _, _ = run_cli("prove", str(SYMBOLIC / "calc-atk-atk.toml"), "--json", str(f))
        assert code == 0
    assert a.read_bytes() == b.read_bytes()
