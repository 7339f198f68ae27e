"""Perft-style regression: every seed board passes every invariant, exhaustively, and its state
space has exactly the pinned size. A rules change that alters a state space is noticed here and
must be explained: regenerate with `python scripts/update_perft.py` and say why in the commit."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path

import pytest

from bpcheck.explorers.checking import EngineSystem, parse_goals
from bpcheck.explorers.core import ExploreOptions, explore
from bpcheck.explorers.parallel import explore_parallel
from bpcheck.explorers.reduce import Reduced
from bpcheck.explorers.run import reduced_system, system_factory
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.engines.reference import ReferenceEngine

ROOT = Path(__file__).resolve().parent.parent
PINNED = json.loads((ROOT / "tests" / "perft.json").read_text())
BOARDS = sorted((ROOT / "boards").glob("*.toml"))
# Boards this large are explored by the sharded explorer on two worker processes (the CI
# machine's two cores; explorers/parallel.py gives the same result as explore() for any worker
# count, tests/test_parallel.py), and their reduced space is counted without invariants (the
# verdicts are those of the full run, every state of which is judged).
BIG = 100_000
# Boards above this are heavy (the exhaustive counts of the 11 largest: about 20 CPU-minutes of
# the suite's 70, the seven-card board 14 of them): `./scripts/test` leaves them out unless
# BPCHECK_HEAVY=1, as CI runs it (.ci/run); `./scripts/check` leaves the seven-card board out too
# (it says so; `./scripts/check --all` checks it), so CI's heavy run is where it is explored in full.
HEAVY = 10_000


def test_every_board_is_pinned():
    assert sorted(PINNED) == [b.name for b in BOARDS]


@pytest.mark.parametrize(
    "path",
    [pytest.param(b, marks=pytest.mark.heavy) if PINNED[b.name]["states"] > HEAVY else b for b in BOARDS],  # heavy: minutes
    ids=[b.stem for b in BOARDS],
)
def test_board_passes_with_pinned_state_space(path):
    board = load_board(path)
    goals = parse_goals(board)
    big = PINNED[path.name]["states"] > BIG
    if big:
        r = explore_parallel(system_factory(board, None, {}, [i.id for i in select(None)]), 2, ExploreOptions(goals=[g.id for g in goals]))
    else:
        r = explore(EngineSystem(ReferenceEngine(), board, select(None), goals), ExploreOptions("bfs", goals=[g.id for g in goals]))
    assert not r.violations, [(v.prop, v.message) for v in r.violations]
    assert r.status == "pass"
    got = {"states": r.states, "transitions": r.transitions, "max_depth": r.max_depth, "terminal_states": r.terminal_states}
    pinned = {k: v for k, v in PINNED[path.name].items() if k != "reduced"}
    assert got == pinned, f"state space of {path.name} changed: {pinned} -> {got}"
    want = PINNED[path.name].get("reduced")
    if want is None:
        print(f"{path.name}: no reduced counts pinned yet (scripts/update_perft.py writes them)")
        return
    # Reduction (bpcheck check's default): fewer states stored, the same verdicts and the same
    # property statistics, every micro-step judged (explorers/reduce.py).
    if big:  # sharded too (explorers/parallel.py folds the same chains in every worker)
        rr = explore_parallel(functools.partial(reduced_system, system_factory(board, None, {}, [])), 2, ExploreOptions(goals=[g.id for g in goals]))
        forced = rr.claimed
    else:
        rs = Reduced(EngineSystem(ReferenceEngine(), board, select(None), goals))
        rr = rs.finish(explore(rs, ExploreOptions("bfs", goals=[g.id for g in goals])))
        forced = len(rs.judged)
        assert rs.micro_transitions == r.transitions  # no forced step taken twice
    assert rr.status == "pass" and not rr.violations
    got_r = {"states": rr.states, "transitions": rr.transitions, "max_depth": rr.max_depth, "terminal_states": rr.terminal_states}
    assert got_r == want, f"reduced state space of {path.name} changed: {want} -> {got_r}"
    if not big:
        assert {k: (p.checked, p.violations) for k, p in rr.props.items()} == {k: (p.checked, p.violations) for k, p in r.props.items()}
    # every state is stored or folded, and every step is a decision or the forced step of a folded state
    assert rr.states + forced == r.states and rr.transitions + forced == r.transitions


def test_every_invariant_family_is_exercised_somewhere():
    """Each invariant's situation arises on at least one small board (vacuous nowhere overall)."""
    small = [b for b in BOARDS if PINNED[b.name]["states"] <= 5000]
    exercised: set[str] = set()
    for path in small:
        board = load_board(path)
        r = explore(EngineSystem(ReferenceEngine(), board, select(None)))
        exercised |= {k for k, st in r.props.items() if st.checked}
    # an invariant of a variant only (rulesets= without tcg, e.g. goat's replay.stored) is
    # exercised on the small boards played under its ruleset (docs/rulesets.md)
    for inv in select(None):
        if "tcg" in inv.rulesets:
            continue
        rs = sorted(inv.rulesets)[0]
        for path in small:
            r = explore(EngineSystem(ReferenceEngine(), replace(load_board(path), ruleset=rs), [inv]))
            st = r.props.get(inv.id)
            if st is not None and st.checked:
                exercised.add(inv.id)
                break
    # the profile invariants judge only cards of a card database, which the seed boards (pool cards,
    # played by the reference) never hold: tests/test_profiled.py exercises each of them, on planted
    # engines and on the real core with real cards
    by_profile = {i.id for i in select(None) if i.id.startswith("profile.")}
    assert by_profile, "the profile invariants are registered"
    missing = sorted({i.id for i in select(None)} - exercised - by_profile)
    assert not missing, f"never exercised on the small boards: {missing}"
