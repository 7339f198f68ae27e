"""Reduction (explorers/reduce.py): chains of forced passes folded into one transition, every
micro-step still judged, verdicts and property statistics as unreduced, traces cut at the
micro-step where a violation arose."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from bpcheck.engines import make_engine
from bpcheck.explorers.checking import EngineSystem, parse_goals
from bpcheck.explorers.core import CYCLE, DEADLOCK, ExploreOptions, explore
from bpcheck.explorers.reduce import Reduced, micro_trail
from bpcheck.explorers.run import check_board
from bpcheck.invariants import select
from bpcheck.model.board import load_board


# -- a tiny transition system -----------------------------------------------------------------


@dataclass(frozen=True)
class Act:
    label: str
    kind: str
    to: int


class Graph:
    """States are ints; `edges[s]` the actions of s; `bad_states` violate "good-state",
    `bad_edges` (labels) violate "good-step"; `terminal` states end."""

    def __init__(self, edges, terminal=(), bad_states=(), bad_edges=(), goals=None):
        self.edges = edges
        self.terminal = set(terminal)
        self.bad_states = set(bad_states)
        self.bad_edges = set(bad_edges)
        self.goals = goals or {}  # goal id -> state
        self.steps = 0

    def initial_states(self):
        return [0]

    def actions(self, s):
        return [Act(*e) for e in self.edges.get(s, [])]

    def step(self, s, a):
        self.steps += 1
        return a.to, [a.label]

    def is_terminal(self, s):
        return s in self.terminal

    def fingerprint(self, s):
        return s

    def action_kind(self, a):
        return a.kind

    def action_name(self, a):
        return a.label

    def check_state(self, s):
        return [("good-state", f"state {s} is bad" if s in self.bad_states else True)]

    def check_actions(self, s, acts):
        return [("few-actions", True if len(acts) <= 3 else "too many")]

    def check_transition(self, s, a, info, s2):
        return [("good-step", f"{a.label} is bad" if a.label in self.bad_edges else True)]

    def goals_reached(self, s, info):
        return [g for g, t in self.goals.items() if t == s]


def chain(n, start, to):
    """Forced passes start -> start+1 -> ... -> start+n-1 -> to."""
    e = {}
    for k in range(n):
        s = start + k
        e[s] = [(f"pass {s}", "pass", s + 1 if k < n - 1 else to)]
    return e


def stats(r):
    return {k: (p.checked, p.violations) for k, p in r.props.items()}


def both(make, **kw):
    raw = explore(make(), ExploreOptions("bfs", **kw))
    red_sys = Reduced(make())
    red = red_sys.finish(explore(red_sys, ExploreOptions("bfs", **kw)))
    return raw, red, red_sys


def diamond():
    # 0 has two decisions into the same forced chain 10..14 -> 20 (a decision), 20 ends both ways
    e = {0: [("left", "attack", 10), ("right", "attack", 10)], 20: [("a", "attack", 30), ("b", "attack", 31)]}
    e.update(chain(5, 10, 20))
    e.update(chain(3, 31, 40))
    return Graph(e, terminal={30, 40})


def test_reduced_stores_only_decisions_and_judges_every_micro_step():
    raw, red, rs = both(diamond)
    assert raw.status == red.status == "pass"
    assert raw.states == 12 and red.states == 4  # 0, 20 and the two ends
    assert stats(raw) == stats(red)  # every micro-step judged exactly once, as unreduced
    assert rs.micro_transitions == raw.transitions  # no forced step taken twice
    assert len(rs.judged) == raw.states - red.states


def test_violation_inside_a_chain_is_cut_at_its_micro_step():
    def make():
        g = diamond()
        g.bad_states = {12}  # an intermediate state of the forced chain
        g.bad_edges = {"pass 32"}  # a forced transition of the second chain
        return g

    raw, red, rs = both(make)
    key = lambda r: sorted((v.prop, v.key) for v in r.violations)
    assert key(raw) == key(red) and stats(raw) == stats(red)
    by = {v.prop: v for v in red.violations}
    trail, forced, at, _ = micro_trail(rs, by["good-state"])
    assert [a.label for _s, a, _i in trail[:-1]] == ["left", "pass 10", "pass 11"]
    assert trail[-1][0] == 12 and at == "state" and forced == [False, True, True]
    trail, forced, at, _ = micro_trail(rs, by["good-step"])
    labels = [a.label for _s, a, _i in trail[:-1]]
    assert labels[-1] == "pass 32" and at == "transition" and labels[-2] == "pass 31"


def test_forced_loop_is_found_as_a_cycle_and_does_not_hang():
    def make():
        e = {0: [("go", "attack", 1)]}
        e.update(chain(3, 1, 1))  # 1 -> 2 -> 3 -> 1, all forced
        return Graph(e)

    raw, red, rs = both(make)
    assert raw.status == red.status == "fail"
    assert {v.prop for v in raw.violations} == {v.prop for v in red.violations} == {CYCLE}
    trail, forced, at, start = micro_trail(rs, red.violations[0])
    assert at == "cycle" and start is not None


def test_long_forced_chain_is_capped_and_stored():
    def make():
        e = {0: [("go", "attack", 1)]}
        e.update(chain(50, 1, 100))
        return Graph(e, terminal={100})

    raw = explore(make())
    rs = Reduced(make(), max_chain=10)
    red = rs.finish(explore(rs))
    assert red.status == "pass" and stats(raw) == stats(red)
    assert 5 <= red.states <= 8  # a state stored every 10 micro-steps, plus the two ends


def test_terminal_and_deadlock_stop_a_chain():
    def make():
        e = {0: [("go", "attack", 1)]}
        e.update(chain(3, 1, 9))  # 9 is neither terminal nor offers an action: a deadlock
        return Graph(e)

    raw, red, _ = both(make)
    assert {v.prop for v in raw.violations} == {v.prop for v in red.violations} == {DEADLOCK}
    assert stats(raw) == stats(red)


def test_a_goal_met_inside_a_chain_is_reached():
    def make():
        g = diamond()
        g.goals = {"g12": 12}
        return g

    raw, red, rs = both(make, goals=["g12"])
    assert raw.goals["g12"] is not None and red.goals["g12"] is not None
    assert stats(raw) == stats(red)


def test_single_non_pass_action_is_not_collapsed_by_default():
    def make():
        return Graph({0: [("only", "attack", 1)], 1: [("p", "pass", 2)]}, terminal={2})

    raw, red, _ = both(make)
    assert raw.states == 3 and red.states == 2  # 0 is stored (a single attack is kept), 1 is folded


# -- the reference model and mutants: reduced and unreduced agree ---------------------------------

SAMPLE = [
    ("reference", "000-replay-1.toml"),
    ("reference", "003-004-example-1.toml"),
    ("reference", "003-004-example-3.toml"),
    ("reference", "000-tokens-macro-cosmos.toml"),
    ("reference", "002-fiendish-chain-mst.toml"),
    ("reference", "rule-ds-honest.toml"),
    ("mutant:replay-resets-count", "000-replay-1.toml"),
    ("mutant:declaration-window-stays-open", "003-004-example-3.toml"),
    ("mutant:flip-effect-before-calculation", "000-flip-man-eater-bug.toml"),
    ("mutant:targets-destroyed-by-battle", "000-flip-hane-hane.toml"),
    ("mutant:equal-atk-destroys-one", "000-not-replay-1.toml"),
    ("mutant:fifo-chain", "rule-ch-lifo-ring.toml"),
    ("mutant:battle-phase-on-first-turn", "002-first-turn.toml"),
]


@pytest.mark.parametrize("spec,name", SAMPLE, ids=[f"{s}-{n}" for s, n in SAMPLE])
def test_reduced_verdicts_and_statistics_equal_unreduced(spec, name):
    board = load_board(f"boards/{name}")
    goals = parse_goals(board)
    raw = explore(EngineSystem(make_engine(spec), board, select(None), goals), ExploreOptions("bfs", goals=[g.id for g in goals]))
    rs = Reduced(EngineSystem(make_engine(spec), board, select(None), goals))
    red = rs.finish(explore(rs, ExploreOptions("bfs", goals=[g.id for g in goals])))
    assert raw.status == red.status
    assert sorted((v.prop, str(v.key)) for v in raw.violations) == sorted((v.prop, str(v.key)) for v in red.violations)
    assert stats(raw) == stats(red)
    assert {g: t is not None for g, t in raw.goals.items()} == {g: t is not None for g, t in red.goals.items()}
    assert rs.micro_transitions == raw.transitions
    assert red.states + len(rs.judged) == raw.states


def test_counterexample_marks_forced_steps_and_replays(tmp_path):
    from bpcheck.cli.replay import replay_file

    board = load_board("boards/000-replay-1.toml")
    br = check_board(board, make_engine("mutant:replay-resets-count"), select(None), progress=False)
    assert br.reduction is not None and br.reduction["micro_transitions"] == 133
    cex = next(c for c in br.counterexamples if c.invariant == "attack.count")
    forced = [s.action["label"] for s in cex.steps if s.forced]
    assert forced and all(s.action["kind"] == "pass" for s in cex.steps if s.forced)
    d = cex.to_dict()
    assert d["trace"] == [s.action["label"] for s in cex.steps]  # the micro trace: every step
    assert any(s.get("forced") for s in d["steps"])
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"bpcheck_counterexample": 1, **d}))
    assert replay_file(str(f), verbose=False, engine="mutant:replay-resets-count") == 1
    assert replay_file(str(f), verbose=False) == 0  # the reference does not have the bug


def test_no_reduce_keeps_every_state():
    board = load_board("boards/000-replay-1.toml")
    br = check_board(board, make_engine(None), select(None), progress=False, reduce=False)
    assert br.reduction is None and br.result.states == 110  # tests/perft.json
    assert all(not s.forced for c in br.counterexamples for s in c.steps)


def test_an_engine_fault_in_a_forced_pass_is_met_by_the_explorer_as_unreduced():
    from bpcheck.engines.faults import SystemFault
    from bpcheck.explorers.core import FAULT

    class Faulty(Graph):
        def step(self, s, a):
            if a.label == "pass 12":
                raise SystemFault("crash", "the engine died")
            return super().step(s, a)

    def make():
        g = diamond()
        return Faulty(g.edges, g.terminal)

    raw, red, rs = both(make)
    assert [(v.prop, v.message) for v in raw.violations] == [(v.prop, v.message) for v in red.violations]
    assert red.violations[0].prop == FAULT and "(applying 'pass 12')" in red.violations[0].message
    assert stats(raw) == stats(red)
    trail, forced, at, _ = micro_trail(rs, red.violations[0])
    assert [a.label for _s, a, _i in trail[:-1]][-1] == "pass 12" and isinstance(trail[-2][2], SystemFault)
