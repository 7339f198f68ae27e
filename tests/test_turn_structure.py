"""The turn's phases and the Battle Phase's steps in order (turn.step-order: BP-OPTIONAL,
BP-START-STEP, BP-STEPS, BP-END-STEP, BP-MP2), judged from phase_changed events."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.invariants import REGISTRY, select
from bpcheck.invariants.base import Transition
from bpcheck.invariants.monitor import Monitor
from bpcheck.model.board import load_board
from bpcheck.model.events import ev

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"
phases = REGISTRY["turn.phase-order"].check
steps = REGISTRY["turn.battle-steps"].check


def _obs(step: str, chain=(), attack=None, over=False) -> dict:
    return {"turn": 3, "step": step, "chain": list(chain), "attack": attack, "over": over}


def _t(before: dict, after: dict, *events, action=None, mon=None) -> Transition:
    return Transition(before, action or {"kind": "pass", "label": "pass"}, list(events), after, mon or Monitor.initial())


def _step(frm: str, to: str):
    return ev("phase_changed", **{"from": frm, "to": to})


@pytest.mark.parametrize(
    "frm,to",
    [
        ("main1", "battle_start_step"),
        ("main1", "end_phase"),
        ("battle_start_step", "battle_step"),
        ("battle_start_step", "battle_end_step"),
        ("battle_step", "battle_end_step"),
        ("battle_end_step", "main2"),
        ("main2", "end_phase"),
    ],
)
def test_the_turn_order_holds(frm, to):
    t = _t(_obs(frm), _obs(to), ev("passed", player=1), _step(frm, to))
    assert phases(t) in (True, None) and steps(t) in (True, None)
    assert True in (phases(t), steps(t))  # each change is one invariant's situation at least


@pytest.mark.parametrize(
    "check,frm,to,message",
    [
        ("phases", "main1", "main2", "the turn went from Main Phase 1 to Main Phase 2: a turn without a Battle Phase has no Main Phase 2"),
        ("phases", "battle_end_step", "end_phase", "the turn went from the Battle Phase to the End Phase: Main Phase 2 follows a Battle Phase"),
        ("phases", "main2", "battle_start_step", "the turn went from main2 to battle; after main2 comes end"),
        ("steps", "battle_end_step", "end_phase", "the step changed battle_end_step -> end_phase; after battle_end_step comes main2"),
        ("steps", "main1", "battle_step", "the Battle Phase was entered at battle_step; it begins with the Start Step"),
        ("steps", "battle_start_step", "damage_step_start", "the step changed battle_start_step -> damage_step_start; after battle_start_step comes battle_step or battle_end_step"),
        ("steps", "battle_step", "main2", "the step changed battle_step -> main2; after battle_step comes damage_step_start or battle_end_step"),
    ],
)
def test_a_step_out_of_order_is_a_violation(check, frm, to, message):
    fn = phases if check == "phases" else steps
    assert fn(_t(_obs(frm), _obs(to), _step(frm, to))) == message


def test_the_engine_that_hides_its_end_step_is_judged_by_phases_only():
    # battle_step -> main2 is how the EDOPro core shows an End Step in which nobody is asked
    # (findings F3): a whole phase order, judged; the steps themselves need explicit passes
    t = _t(_obs("battle_step"), _obs("main2"), _step("battle_step", "main2"))
    assert phases(t) is True
    assert REGISTRY["turn.battle-steps"].explicit_passes and not REGISTRY["turn.phase-order"].explicit_passes


def test_a_step_ends_with_an_empty_chain_only():
    link = ev("chain_link_added", link=1, card="X", card_uid=9, effect=0, player=1, speed=2, targets=[])
    # a chain the engine still shows
    assert steps(_t(_obs("battle_start_step", chain=[{"card": "X"}]), _obs("battle_step"), _step("battle_start_step", "battle_step"))) == (
        "the step changed battle_start_step -> battle_step while a chain was open"
    )
    # a chain started in the same transition and never resolved
    assert phases(_t(_obs("main2"), _obs("end_phase"), link, _step("main2", "end_phase"))) == "the phase changed (main2 -> end_phase) while a chain was open"
    # resolved before the step changes: fine
    done = ev("chain_resolved", length=1)
    assert phases(_t(_obs("main2", chain=[{"card": "X"}]), _obs("end_phase"), done, _step("main2", "end_phase"))) is True


def test_the_damage_step_needs_an_attack_and_a_step_change_needs_its_event():
    assert steps(_t(_obs("battle_step"), _obs("damage_step_start"), _step("battle_step", "damage_step_start"))) == "the Damage Step began with no attack in progress"
    assert steps(_t(_obs("battle_step", attack={"attacker": 1}), _obs("damage_step_start"), _step("battle_step", "damage_step_start"))) is True
    for fn in (phases, steps):
        assert fn(_t(_obs("battle_end_step"), _obs("main2"))) == "the step changed battle_end_step -> main2 without a phase_changed event"
        assert fn(_t(_obs("main2"), _obs("main2"), ev("passed", player=0))) is None  # nothing to judge
        # the events must chain from the step before and end where the engine is
        assert fn(_t(_obs("main2"), _obs("end_phase"), _step("main1", "end_phase"))) == "the step changed main1 -> end_phase, but the step was main2"
        assert fn(_t(_obs("battle_end_step"), _obs("end_phase"), _step("battle_end_step", "main2"))) == (
            "the last step change went to main2, but the engine is in end_phase"
        )


def test_the_reference_keeps_the_order_on_seed_boards():
    for board in ("002-skip-battle-phase.toml", "000-replay-1.toml", "003-004-example-3.toml"):
        r = explore(EngineSystem(ReferenceEngine(), load_board(BOARDS / board), select(None)))
        assert r.status == "pass", (board, [(v.prop, v.message) for v in r.violations])
        for pid in ("turn.phase-order", "turn.battle-steps"):
            assert r.props[pid].checked > 0 and r.props[pid].violations == 0, (board, pid)


def test_the_damage_step_order_stays_with_its_own_invariant():
    # inside the Damage Step these follow the events only; damage.substep-order judges them
    t = _t(_obs("damage_step_start", attack={"attacker": 1}), _obs("damage_step_end"), _step("damage_step_start", "damage_step_end"))
    assert phases(copy.deepcopy(t)) is None and steps(copy.deepcopy(t)) is None
    assert REGISTRY["damage.substep-order"].check(t).startswith("Damage-Step sub-steps out of order")
