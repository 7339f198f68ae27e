"""Rulesets (issue 31, docs/rulesets.md): the registry, choosing one (board, scenario, --ruleset),
the OCG and Goat sentences under both rulesets, invariants that follow the chosen ruleset,
``bpcheck diff-rulesets``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bpcheck.engines import make_engine
from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.errors import InputError
from bpcheck.explorers.ruleset_diff import diff_rulesets
from bpcheck.explorers.run import check_board
from bpcheck.harness.scenarios import load_scenario, run_scenario
from bpcheck.invariants import REGISTRY, select
from bpcheck.model.board import board_from_dict, load_board
from bpcheck.model.engine import Rules
from bpcheck.model.rulesets import RULESETS, GoatRules, OcgRules, under_ruleset

ROOT = Path(__file__).resolve().parent.parent
# each OCG (or Goat) sentence: its scenario under each ruleset, the other ruleset it differs from
PAIRS = {
    "start-step": ("tcg", "ocg"),
    "battle-one-chain": ("tcg", "ocg"),
    "ds-flip": ("tcg", "ocg"),
    "honest-calc": ("tcg", "ocg"),
    "replay-stored": ("tcg", "goat"),
    "negate-effect": ("tcg", "ocg"),
}
BOARDS = {
    "start-step": "boards/rulesets/start-step.toml",
    "battle-one-chain": "boards/rulesets/battle-one-chain.toml",
    "ds-flip": "boards/rulesets/ds-flip.toml",
    "honest-calc": "boards/rule-ds-honest.toml",
    "replay-stored": "boards/000-replay-1.toml",
    "negate-effect": "boards/002-ds-negate-effect.toml",
}


def test_registry_is_one_class_per_ruleset_tcg_the_reference():
    assert RULESETS == {"tcg": Rules, "ocg": OcgRules, "goat": GoatRules}
    for name, cls in RULESETS.items():
        assert cls.name == name and issubclass(cls, Rules)


def test_a_mutant_plays_under_the_chosen_ruleset():
    mutant = MUTANTS["fifo-chain"].rules
    cls = under_ruleset(mutant, "ocg")
    assert cls.__mro__[1:3] == (mutant, OcgRules) and cls.name == "ocg"
    assert under_ruleset(mutant, "tcg") is mutant and under_ruleset(Rules, "ocg") is OcgRules


def test_the_board_field_chooses_the_ruleset_and_a_bad_name_is_named():
    doc = {"turn": 2, "turn_player": 1, "p1": {"lp": 8000}, "p2": {"lp": 8000}}
    assert board_from_dict(doc, "b.toml").ruleset is None
    b = board_from_dict({**doc, "ruleset": "ocg"}, "b.toml")
    eng = ReferenceEngine()
    eng.start(b)
    assert eng.ruleset == "ocg" and type(eng.rules) is OcgRules
    with pytest.raises(InputError) as e:
        board_from_dict({**doc, "ruleset": "rush"}, "b.toml")
    assert (e.value.file, e.value.field) == ("b.toml", "ruleset")
    assert "unknown ruleset 'rush' (known: tcg, ocg, goat)" in e.value.problem


@pytest.mark.parametrize("sentence", sorted(PAIRS))
def test_each_sentence_passes_under_its_ruleset_and_fails_under_the_other(sentence):
    for own, other in (PAIRS[sentence], PAIRS[sentence][::-1]):
        sc = load_scenario(ROOT / "scenarios" / f"ruleset-{sentence}-{own}.toml", f"scenarios/ruleset-{sentence}-{own}.toml")
        assert sc.board.ruleset == own
        res = run_scenario(sc, make_engine("reference"))
        assert res.status == "pass", res.failures
        sc.board = replace(sc.board, ruleset=other)
        res = run_scenario(sc, make_engine("reference"))
        assert res.status == "fail" and res.ruleset == other, f"{sentence}-{own} passes under {other} too"


@pytest.mark.parametrize("sentence", sorted(PAIRS))
def test_diff_rulesets_finds_each_difference(sentence):
    a, b = PAIRS[sentence]
    r = diff_rulesets(load_board(ROOT / BOARDS[sentence], BOARDS[sentence]), a, b)
    assert r.found and not r.bound_hit
    # the difference is the sentence's own: what the scenario's last legal/not_legal step shows
    assert any(x in " ".join(r.differences) for x in ("Waboku", "Ring of Destruction", "damage_step_flip", "Honest", "replay: attack", "Skull Meister")), r.differences
    same = diff_rulesets(load_board(ROOT / BOARDS[sentence], BOARDS[sentence]), a, a)
    assert not same.found and same.pairs > 1


def test_diff_rulesets_command(run_cli, tmp_path):
    code, out, err = run_cli("diff-rulesets", str(ROOT / "boards/rulesets/start-step.toml"), "--a", "tcg", "--b", "ocg", "--json", str(tmp_path / "d.json"))
    assert code == 1, err
    assert "they offer different actions after 2 actions" in out and "tcg offers 'activate Waboku', which ocg does not" in out
    doc = json.loads((tmp_path / "d.json").read_text())
    assert doc["difference"] and doc["line"] == ["enter Battle Phase", "pass"]
    code, out, _ = run_cli("diff-rulesets", str(ROOT / "boards/002-skip-battle-phase.toml"), "--a", "tcg", "--b", "goat")
    assert code == 0 and "no difference" in out


def test_ruleset_option_is_for_files_naming_none(run_cli, tmp_path):
    # the board names no ruleset: --ruleset ocg plays it under ocg, and --json says so
    code, out, err = run_cli("check", str(ROOT / "boards/rulesets/start-step.toml"), "--ruleset", "ocg", "-q", "--json", str(tmp_path / "r.json"))
    assert code == 0, out + err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["ruleset"] == "ocg" and doc["boards"][0]["ruleset"] == "ocg"
    assert "(ruleset ocg)" in out
    # a scenario naming its ruleset keeps it whatever --ruleset says
    code, out, err = run_cli("scenario", str(ROOT / "scenarios/ruleset-start-step-tcg.toml"), "--ruleset", "ocg")
    assert code == 0, out + err
    assert "ruleset tcg" in out


def test_every_invariant_states_its_rulesets_and_follows_the_board():
    assert all(inv.rulesets and inv.rulesets <= {"tcg", "ocg", "goat"} for inv in REGISTRY.values())
    assert REGISTRY["replay.stored"].rulesets == {"goat"}
    assert "goat" not in REGISTRY["replay.call-off-counts"].rulesets
    board = replace(load_board(ROOT / "boards/000-replay-1.toml", "boards/000-replay-1.toml"), ruleset="goat")
    br = check_board(board, make_engine("reference"), select(None), "bfs", engine_name="reference", progress=False)
    assert br.verdict == "pass"
    assert "replay.call-off-counts" in br.not_judged  # a TCG rule that differs under goat: not judged, never a verdict


def test_tcg_behaviour_under_ocg_is_caught():
    # the reference (TCG) engine on a board played under ocg: its invariants' OCG branches see it
    board = replace(load_board(ROOT / "boards/rulesets/ds-flip.toml", "boards/rulesets/ds-flip.toml"), ruleset="ocg")

    class TcgUnderOcg(ReferenceEngine):
        def start(self, b):
            return super().start(replace(b, ruleset="tcg"))

    br = check_board(board, TcgUnderOcg(), select(None), "bfs", engine_name="tcg-rules", progress=False)
    assert br.verdict == "fail"
    assert any(c.invariant == "damage.substep-order" for c in br.counterexamples)


def test_tcg_negate_effect_under_ocg_is_caught():
    # DS-LEGAL-NEGATE-EFFECT is TCG only: the reference (TCG) engine offers and plays Skull Meister
    # in the Damage Step of a board played under ocg, which damage.activation-legal's OCG branch
    # refuses (OCG-DS-NEGATE-EFFECT); under tcg the same board passes
    path = "boards/002-ds-negate-effect.toml"
    board = replace(load_board(ROOT / path, path), ruleset="ocg")

    class TcgUnderOcg(ReferenceEngine):
        def start(self, b):
            return super().start(replace(b, ruleset="tcg"))

    br = check_board(board, TcgUnderOcg(), select(None), "bfs", engine_name="tcg-rules", progress=False)
    assert br.verdict == "fail"
    bad = {c.invariant for c in br.counterexamples}
    assert "damage.activation-legal" in bad, bad
    cex = next(c for c in br.counterexamples if c.invariant == "damage.activation-legal")
    assert "Skull Meister" in cex.message
    ok = check_board(replace(board, ruleset="tcg"), make_engine("reference"), select(None), "bfs", engine_name="reference", progress=False)
    assert ok.verdict == "pass"


def test_end_step_without_priority_fails_a_plain_check():
    board = load_board(ROOT / "boards/002-skip-battle-phase.toml", "boards/002-skip-battle-phase.toml")
    br = check_board(board, make_engine("mutant:end-step-without-priority"), select(None), "bfs", engine_name="m", progress=False)
    assert br.verdict == "fail"
    assert any(c.invariant == "priority.pass-pass" and "battle_end_step was entered and left in one move" in c.message for c in br.counterexamples)
