"""The checker's pre-filters cannot hide a verdict.

A transition invariant's ``events`` and ``steps`` / ``step_events`` (invariants/base.py) let
:class:`~bpcheck.explorers.checking.EngineSystem` skip it where it has nothing to judge. A wrong
declaration would silently drop verdicts, so every invariant is run unfiltered too
(``prefilter=False``: every transition invariant on every transition) over boards and engines
that exercise the Damage Step, chains, replays and broken engines, and the complete results must
be the same: states, transitions, per-property checked and violation counts, every violation
with its message and trace, and the not-judged / not-evaluated reasons.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, ExploreOptions, explore
from bpcheck.invariants import REGISTRY, select
from bpcheck.invariants.base import STEPS, Transition
from bpcheck.invariants.monitor import Monitor
from bpcheck.model.board import load_board
from bpcheck.model.events import ev

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"
ENGINES = Path(__file__).resolve().parent / "engines"


def _engines():
    sys.path.insert(0, str(ENGINES))
    try:
        import lying_bookkeeping
        import lying_damage_step
        import v2_engines
    finally:
        sys.path.remove(str(ENGINES))
    return lying_bookkeeping, lying_damage_step, v2_engines


def _cases():
    lb, lds, v2 = _engines()
    ref = ReferenceEngine
    return [
        ("reference", ref, "000-facedown-flip-destroyed.toml"),
        ("reference", ref, "rule-ds-kuriboh.toml"),
        ("reference", ref, "rule-ds-end-triggers.toml"),
        ("reference", ref, "000-ds-spell-trap-list-not-ok.toml"),
        ("reference", ref, "003-004-example-3.toml"),
        ("reference", ref, "000-replay-2.toml"),
        ("mutant:flip-effect-before-calculation", lambda: ReferenceEngine(MUTANTS["flip-effect-before-calculation"].rules), "000-flip-man-eater-bug.toml"),
        ("mutant:mirror-force-in-damage-step", lambda: ReferenceEngine(MUTANTS["mirror-force-in-damage-step"].rules), "000-ds-spell-trap-list-not-ok.toml"),
        ("mutant:replay-resets-count", lambda: ReferenceEngine(MUTANTS["replay-resets-count"].rules), "000-replay-2.toml"),
        ("SendsAtCalculation", lambda: ReferenceEngine(lds.SendsAtCalculation), "000-facedown-flip-destroyed-by-bug.toml"),
        ("CalculatesOnEntering", lambda: ReferenceEngine(lds.CalculatesOnEntering), "000-facedown-flip-destroyed-by-bug.toml"),
        ("FlipTriggersAtCalculation", lambda: ReferenceEngine(lds.FlipTriggersAtCalculation), "000-flip-man-eater-bug.toml"),
        ("hides_damage_calculated", lb.hides_damage_calculated, "000-facedown-flip-destroyed.toml"),
        ("unknown_card", lb.unknown_card, "rule-ds-honest.toml"),
        ("v2 Partial", v2.Partial, "003-004-example-3.toml"),
        ("v2 Implicit", v2.Implicit, "000-replay-2.toml"),
    ]


def _result(make, board: str, prefilter: bool) -> dict:
    system = EngineSystem(make(), load_board(BOARDS / board), select(None), prefilter=prefilter)
    r = explore(system, ExploreOptions("bfs", bounds=Bounds(max_states=3000)))
    return {
        "states": r.states,
        "transitions": r.transitions,
        "bound": r.bound_hit,
        "props": {k: (v.checked, v.violations) for k, v in r.props.items()},
        "violations": [(v.prop, v.message, list(v.trace), v.initial, v.at) for v in r.violations],
        "not_judged": {k: sorted(v) for k, v in system.not_judged.items()},
        "not_evaluated": dict(system.not_evaluated),
    }


@pytest.mark.parametrize("label,make,board", _cases(), ids=lambda x: x if isinstance(x, str) else "")
def test_filtered_checking_gives_the_unfiltered_results(label, make, board):
    filtered = _result(make, board, True)
    unfiltered = _result(make, board, False)
    assert filtered == unfiltered
    assert sum(c for c, _v in filtered["props"].values()) > 0  # something was judged


def test_the_cases_meet_what_the_filters_skip():
    """The boards above reach every step-filtered invariant with a verdict (else the comparison
    would not test its declaration), and some find violations."""
    seen: dict[str, int] = {}
    found = 0
    for _label, make, board in _cases():
        r = _result(make, board, True)
        found += len(r["violations"])
        for k, (checked, _v) in r["props"].items():
            seen[k] = seen.get(k, 0) + checked
    filtered = [i.id for i in REGISTRY.values() if i.steps is not None]
    assert filtered, "no invariant declares steps"
    for inv_id in filtered:
        assert seen.get(inv_id, 0) > 0, f"{inv_id} never judged anything on the test boards"
    assert found > 0


def test_a_step_name_the_filter_does_not_know_never_filters():
    """An engine that reports a step outside the protocol's names is judged by every
    step-filtered invariant (here damage.substep-order finds the unannounced step change)."""
    es = EngineSystem(ReferenceEngine(), load_board(BOARDS / "000-replay-2.toml"), select(None))
    s = es.initial_states()[0]
    obs = s[1]
    odd = {**obs, "step": "damage_step_sideways"}
    a = es.actions(s)[0]
    t = Transition(obs, a.to_dict(), [ev("passed", player=0)], odd, s[2], es.cards)
    t.mon_after = s[2]
    es._last = ((None, odd, s[2]), t)
    out = dict(es.check_transition(s, a, t.events, es._last[0]))
    assert "damage_step_sideways" not in STEPS
    assert isinstance(out.get("damage.substep-order"), str) and "without a phase_changed event" in out["damage.substep-order"]


def test_steps_are_checked_at_registration():
    from bpcheck.invariants.base import invariant

    with pytest.raises(ValueError, match="step names"):
        invariant("t.bad-steps", "x", [], "transition", "accounting", steps=["damage_step"])
    with pytest.raises(ValueError, match="step names"):
        invariant("t.state-steps", "x", [], "state", "accounting", steps=["battle_step"])
    with pytest.raises(ValueError, match="goes with steps"):
        invariant("t.lonely", "x", [], "transition", "accounting", step_events=["passed"])
    assert Monitor.initial().canonical()  # (the registry is untouched: nothing was decorated)
