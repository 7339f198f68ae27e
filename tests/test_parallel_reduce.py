"""A reduced system (explorers/reduce.py) explored by several worker processes
(explorers/parallel.py): the same result, byte for byte, as the sequential reduced exploration
whatever the worker count and chunk size, and the same verdicts and property statistics as the
unreduced exploration. Every process folds the same chains (where a chain ends depends on the
states alone) and each folded state's verdicts count once (``Reduced.claims``).

Worker processes import this module to build their systems (the factories below)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bpcheck.engines.faults import SystemFault
from bpcheck.explorers.core import CYCLE, DEADLOCK, FAULT, Finding, explore
from bpcheck.explorers.core import ExploreOptions
from bpcheck.explorers.parallel import explore_parallel
from bpcheck.explorers.reduce import Reduced
from bpcheck.explorers.run import reduced_system

ROOT = Path(__file__).resolve().parent.parent
MIX = 0x9E3779B97F4A7C15


class Act:
    __slots__ = ("label", "kind", "to")

    def __init__(self, label: str, kind: str, to: int) -> None:
        self.label, self.kind, self.to = label, kind, to


class Forced:
    """States are ints below `m`. A multiple of 4 is a decision (three actions); any other state
    offers one pass to ``(5 s + 3) % m``, so forced chains converge on shared tails and, for some
    `m`, run into forced loops (entered at different points). A state 1 mod 13 is bad, a forced
    step out of a state 2 mod 11 is bad (with Finding keys), state 0 mod 17 (not 0) deadlocks,
    a forced step out of a state 3 mod 19 is refused (an engine fault); the initial states
    include a forced one (1) and a decision (8); goals on forced states."""

    def __init__(self, m: int = 211, faults: bool = True) -> None:
        self.m, self.faults = m, faults

    def initial_states(self):
        return [1, 8]

    def actions(self, s):
        if s % 17 == 0 and s:
            return []
        if s % 4 == 0:
            return [Act(f"d{k} {s}", "attack", (s * 3 + k * 7 + 1) % self.m) for k in range(3)]
        return [Act(f"pass {s}", "pass", (5 * s + 3) % self.m)]

    def step(self, s, a):
        if self.faults and a.kind == "pass" and s % 19 == 3:
            raise SystemFault("refused", f"pass at {s}")
        return a.to, [a.label]

    def is_terminal(self, s):
        return s == self.m - 1

    def fingerprint(self, s):
        return (s * MIX + 777) & (2**64 - 1)

    def action_kind(self, a):
        return a.kind

    def action_name(self, a):
        return a.label

    def check_state(self, s):
        return [("state", Finding(f"state {s} is bad", key=s % 3) if s % 13 == 1 else True)]

    def check_actions(self, s, acts):
        return [("acts", True if len(acts) <= 3 else "too many")]

    def check_transition(self, s, a, info, s2):
        return [("step", Finding(f"{a.label} is bad", key=s % 2) if a.kind == "pass" and s % 11 == 2 else True), ("quiet", None)]

    def goals_reached(self, s, info):
        return [f"g{s % 5}"] if s > 150 and s % 4 else []


class SlowFirstWorker(Forced):
    """Forced, with every step slow in worker process 0 only, so the other workers take over its
    states within each chunk (work stealing): their folded chains' claims travel with them."""

    def step(self, s, a):
        import multiprocessing
        import time

        if multiprocessing.current_process().name == "bpcheck-worker-0":
            time.sleep(0.0003)
        return super().step(s, a)


GOALS = [f"g{i}" for i in range(5)] + ["never"]


def plain(r) -> dict:
    """Everything a result says (timing and the workers' bookkeeping aside), with the order of its dicts."""
    return r.findings()


def stats(r) -> dict:
    return {k: (p.checked, p.violations) for k, p in r.props.items()}


def sequential(make, **kw):
    rs = Reduced(make())
    return rs.finish(explore(rs, ExploreOptions("bfs", **kw))), rs


@pytest.mark.parametrize("kw", [{}, {"m": 97}, {"m": 360, "faults": False}], ids=["m211", "m97", "m360"])
def test_reduced_parallel_equals_reduced_sequential_and_counts_as_unreduced(kw):
    make = functools.partial(Forced, **kw)
    want, rs = sequential(make, goals=GOALS)
    raw = explore(make(), ExploreOptions("bfs", goals=GOALS))
    assert want.states < raw.states and len(rs.judged) > 0  # something was folded
    assert stats(want) == stats(raw)  # every micro-step judged once, as unreduced
    assert want.violations and sorted((v.prop, v.key) for v in want.violations) == sorted((v.prop, v.key) for v in raw.violations)
    for n, chunk in ((1, 5), (2, 1), (2, 3), (3, 7), (2, 4096)):
        got = explore_parallel(functools.partial(reduced_system, make), n, ExploreOptions(goals=GOALS), chunk=chunk)
        assert plain(got) == plain(want), (n, chunk)
        assert got.claimed == len(rs.judged), (n, chunk)  # each folded state counted once
        # judged more than once: never by one worker (its memo); by two, only what both met in a chunk
        assert got.judged_again == 0 if n == 1 else 0 <= got.judged_again < got.claimed, (n, chunk, got.judged_again)


def test_the_toy_has_what_the_comparison_needs():
    """The toy must exercise forced loops, faults in forced steps, deadlocks and violations inside
    chains, or the equality above says little."""
    want, _ = sequential(Forced, goals=GOALS)
    props = {v.prop for v in want.violations}
    assert {CYCLE, DEADLOCK, FAULT, "state", "step"} <= props
    assert any(g is not None for g in want.goals.values())


def test_a_forced_loop_ends_where_it_would_whatever_the_entry():
    """A chain entering a forced loop ends at the loop's state with the least fingerprint (at its
    first arrival there), wherever it entered: never at a state that depends on what was
    explored before."""
    # 0 decides into the loop 1 -> 2 -> 3 -> 1 at 1 or at 3
    edges = {0: [Act("in1", "attack", 1), Act("in3", "attack", 3)], 1: [Act("p1", "pass", 2)], 2: [Act("p2", "pass", 3)], 3: [Act("p3", "pass", 1)]}

    class Loop(Forced):
        def initial_states(self):
            return [0]

        def actions(self, s):
            return edges[s]

        def step(self, s, a):
            return a.to, [a.label]

        def is_terminal(self, s):
            return False

        def goals_reached(self, s, info):
            return []

    sys_ = Loop()
    low = min((1, 2, 3), key=sys_.fingerprint)
    for first in ("in1", "in3"):
        r = Reduced(Loop())
        a = next(x for x in edges[0] if x.label == first)
        if first == "in3":  # judge the other entry first: the memo must not change the end
            r.step(0, edges[0][0])
        s2, info = r.step(0, a)
        assert r.fingerprint(s2) == sys_.fingerprint(low)  # the end itself, or the memo's stand-in for it
        if first == "in1":
            assert s2 == low and info.micro[-1].after == low
    fresh = Reduced(Loop())
    assert fresh.step(0, edges[0][1])[0] == low  # entered at 3, walked in full: the same end


def board_system(board: str, engine: str):
    from bpcheck.engines import make_engine
    from bpcheck.explorers.checking import EngineSystem, parse_goals
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    b = load_board(board)
    return EngineSystem(make_engine(engine), b, select(None), parse_goals(b))


@pytest.mark.parametrize("engine, board", [("reference", "000-replay-2.toml"), ("mutant:replay-resets-count", "000-replay-2.toml"), ("reference", "000-tokens.toml")])
def test_a_reduced_board_gives_the_sequential_result_on_two_workers(engine, board):
    make = functools.partial(board_system, str(ROOT / "boards" / board), engine)
    want, rs = sequential(make)
    raw = explore(make())
    assert stats(want) == stats(raw) and want.states < raw.states
    got = explore_parallel(functools.partial(reduced_system, make), 2, chunk=64)
    assert plain(got) == plain(want)
    assert got.claimed == len(rs.judged) == raw.states - want.states


def test_check_one_board_json_is_the_same_on_one_and_two_workers(tmp_path):
    """`bpcheck check BOARD -j 2` shards a reduced board: the JSON result is byte-identical."""
    outs = []
    for j in (1, 2):
        out = tmp_path / f"r{j}.json"
        p = subprocess.run([sys.executable, "-m", "bpcheck", "check", str(ROOT / "boards" / "000-replay-2.toml"), "-j", str(j), "--engine", "mutant:replay-resets-count", "--json", str(out)], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 1, p.stderr  # the mutant is caught
        outs.append((out.read_bytes(), p.stdout))
    assert outs[0] == outs[1]
    doc = json.loads(outs[0][0])
    b = doc["boards"][0]
    assert b["reduction"]["forced_states"] > 0 and b["states"] + b["reduction"]["forced_states"] > b["states"]


def test_check_shards_the_expensive_boards_of_a_run_and_the_output_stays_the_same(tmp_path, run_cli, monkeypatch):
    """`check -j 2` over several boards explores those expected to cost SHARD_AT states or more
    on both workers at once, before the others (one per worker): the output is byte-identical to
    `-j 1`. (The threshold is lowered here so that small boards take that path.)"""
    import bpcheck.harness.jobs as jobs
    from bpcheck.explorers import parallel
    from bpcheck.model.board import load_board

    boards = [str(ROOT / "boards" / n) for n in ("000-replay-2.toml", "000-tokens.toml", "rule-ch-lifo-ring.toml")]
    costs = sorted(jobs.board_cost(load_board(b)) for b in boards)
    monkeypatch.setattr(jobs, "SHARD_AT", costs[1])  # the two larger boards are sharded
    calls: list[int] = []
    real = parallel.explore_parallel

    def spy(make_system, workers, *a, **kw):
        calls.append(workers)
        return real(make_system, workers, *a, **kw)

    monkeypatch.setattr(parallel, "explore_parallel", spy)
    from bpcheck.explorers.progress import without_progress

    outs = []
    for j in ("1", "2"):
        js = tmp_path / f"r{j}.json"
        code, stdout, err = run_cli("check", *boards, "-j", j, "--engine", "mutant:replay-resets-count", "--json", str(js))
        outs.append((code, stdout, without_progress(err), js.read_text()))  # (progress lines say when: they differ)
    assert outs[0] == outs[1]
    assert outs[0][0] == 1  # the mutant is caught
    assert calls == [2, 2]  # -j 2: the two larger boards on both workers; -j 1: never


@pytest.mark.parametrize("n, chunk", [(2, 32), (3, 4096)])
def test_reduced_states_handed_over_within_a_chunk_change_nothing(n, chunk):
    make = functools.partial(SlowFirstWorker, m=1997)
    want, rs = sequential(make, goals=GOALS)
    got = explore_parallel(functools.partial(reduced_system, make), n, ExploreOptions(goals=GOALS), chunk=chunk)
    assert got.stolen and got.stolen > 0, "no state was handed over: the test would say nothing"
    assert plain(got) == plain(want)
    assert got.claimed == len(rs.judged)


class Converging:
    """Decisions 10 and 20 (two actions each); 10 -> 1 -> 2 -> 50 and 20 -> 3 -> 2 -> 50 by forced
    passes (both chains pass state 2 and end in state 50); 50 and above are terminal."""

    NEXT = {1: 2, 3: 2, 2: 50}

    def initial_states(self):
        return [10, 20]

    def actions(self, s):
        if s in (10, 20):
            return [Act(f"go {s}", "attack", s // 10 * 2 - 1), Act(f"end {s}", "attack", 60 + s)]
        return [Act(f"pass {s}", "pass", self.NEXT[s])]

    def step(self, s, a):
        return a.to, [a.label]

    def is_terminal(self, s):
        return s >= 50

    def fingerprint(self, s):
        return s * 2 + 1

    def action_kind(self, a):
        return a.kind

    def action_name(self, a):
        return a.label

    def check_state(self, s):
        return [("state", True)]

    def check_actions(self, s, acts):
        return [("acts", True)]

    def check_transition(self, s, a, info, s2):
        return [("step", True)]

    def goals_reached(self, s, info):
        return []


def _claim_fps(reply: dict) -> list[int]:
    """The fingerprints of the claims in an expand reply (split by owner)."""
    return [fp for x in reply["claims"].values() for fp in x[0].tolist()]


def test_a_chain_of_a_handed_over_state_judges_afresh():
    """A worker walks 20 -> 3 -> 2 -> 50 for its own state 5, then gets state 3 (before it in
    the sequential order) handed over, whose chain 10 -> 1 -> 2 meets state 2 judged already.
    In order it would stand for the chain's end (a placeholder for state 50) and not judge state
    2 again; handed over, it must walk on to the real state 50 (the sequential run finds it
    there first) and claim state 2 (its first judging in the sequential order is here)."""
    import pickle
    from collections import deque

    from bpcheck.explorers.parallel import _Worker

    w = _Worker(Reduced(Converging()), 0, 2, [])
    w.held = deque([(5, 1, 20)])
    own = w.expand(10, None, [], None)
    assert sorted(_claim_fps(own)) == [5, 7]  # states 2 and 3 judged
    more = w.expand_more(pickle.dumps([(3, 1, 10)]), None)
    assert sorted(_claim_fps(more)) == [3, 5]  # states 1 and 2
    assert w.pending[(3, 0)][0] == 50  # the real state, kept as the least discovery of 50
    assert (5, 0) not in w.pending
    assert w.system.ordered  # back in order for the next chunk


def test_a_handed_over_chain_stands_for_an_end_judged_in_an_earlier_chunk():
    """As above, but state 2 was judged in the chunk before: every state of that chunk comes
    before every state of this one in the sequential order, so the handed-over chain
    10 -> 1 -> 2 stands for its end (state 50, stored by then) as it would in order, and claims
    state 1 alone; judging state 2 again would be the waste the chunk mark saves."""
    import pickle
    from collections import deque

    from bpcheck.explorers.parallel import _Worker
    from bpcheck.explorers.reduce import _Known

    w = _Worker(Reduced(Converging()), 0, 2, [])
    w.held = deque([(5, 1, 20)])
    own = w.expand(10, None, [], None)
    assert sorted(_claim_fps(own)) == [5, 7]  # chunk 1: states 2 and 3 judged
    w.expand(20, None, [], None)  # chunk 2 begins; nothing of this worker's own is left
    more = w.expand_more(pickle.dumps([(13, 1, 10)]), None)
    assert sorted(_claim_fps(more)) == [3]  # state 1 only
    kept = w.pending[(13, 0)][0]
    assert type(kept) is _Known and kept.fp == 101  # stands for state 50, judged no further
    assert w.system.ordered
