"""explore_parallel: the same result, byte for byte, whatever the worker count, and the same as
the sequential BFS (explore) on an exhaustive run: states, transitions, statistics (and their
order), violations with their traces, goals, cycles, deadlocks and engine faults.

Worker processes import this module to build their systems (the factories below), so the
tests stay small: toy systems and boards of a few hundred states."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from bpcheck.engines.faults import SystemFault
from bpcheck.explorers.core import Bounds, Finding, explore
from bpcheck.explorers.core import Callbacks, ExploreOptions
from bpcheck.explorers import parallel as parallel_mod
from bpcheck.explorers.parallel import WorkerError, explore_parallel

MIX = 0x9E3779B97F4A7C15


class Toy:
    """A generic system with everything the explorer reports: several initial states (one twice),
    deadlocks, engine faults while listing actions and stepping, Findings with keys on states
    and transitions, an action-set property, goals; acyclic unless `cyclic`."""

    def __init__(self, m: int = 300, cyclic: bool = False, faults: bool = True) -> None:
        self.m, self.cyclic, self.faults = m, cyclic, faults

    def initial_states(self):
        return [1, 5, 1, 2]

    def actions(self, s):
        if self.faults and s % 37 == 36:
            raise SystemFault("crash", f"no actions at {s}")
        if s % 23 == 22:
            return []
        return [1, 2, 3] if s % 4 else [2, 5]

    def step(self, s, a):
        if self.faults and (s + a) % 29 == 0:
            raise SystemFault("refused", f"{s}+{a}")
        n = s + a * (1 + s % 3)
        return (n % self.m if self.cyclic else min(n, self.m)), (s, a)

    def is_terminal(self, s):
        return not self.cyclic and s >= self.m

    def fingerprint(self, s):
        return (s * MIX + 12345) & (2**64 - 1)

    def action_kind(self, a):
        return f"+{a}"

    def action_name(self, a):
        return f"add {a}"

    def check_state(self, s):
        return [("fives", Finding(f"{s} is a multiple of 5", key=s % 4) if s % 5 == 0 else True), ("silent", None)]

    def check_actions(self, s, acts):
        return [("few", True if len(acts) < 3 else f"{len(acts)} actions at {s}")]

    def check_transition(self, s, a, info, s2):
        return [("steps", Finding(f"{s} -> {s2}", key=a) if (s + a) % 11 == 0 else True)]

    def goals_reached(self, s, info):
        return [f"g{s % 7}"] if s > 50 else []


class SlowFirstWorker(Toy):
    """A wide Toy (a frontier of hundreds of states: s -> 3 s + a mod m), with every step slow in
    worker process 0 only: the other workers finish their part of each chunk first and take over
    states of worker 0 (work stealing, parallel._Pool.expand)."""

    def __init__(self, m: int = 1201) -> None:
        super().__init__(m=m, cyclic=True)

    def actions(self, s):
        acts = super().actions(s)
        return acts + [4 + s % 5] if acts and s % 7 == 3 else acts  # rarer action kinds

    def step(self, s, a):
        import multiprocessing
        import time

        if self.faults and (s + a) % 29 == 0:
            raise SystemFault("refused", f"{s}+{a}")
        if multiprocessing.current_process().name == "bpcheck-worker-0":
            time.sleep(0.0003)
        return (3 * s + a) % self.m, (s, a)


class Broken:
    def __init__(self) -> None:
        raise RuntimeError("this system cannot be built")


def board_system(board: str, engine: str, invariants: bool):
    from bpcheck.engines import make_engine
    from bpcheck.explorers.checking import EngineSystem, parse_goals
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    b = load_board(board)
    return EngineSystem(make_engine(engine), b, select(None) if invariants else [], parse_goals(b))


def not_judged(system) -> dict:
    return {k: sorted(v) for k, v in system.not_judged.items()}


def plain(r) -> dict:
    """Everything a result says (timing and the workers' bookkeeping aside), with the order of its dicts."""
    return r.findings()


GOALS = [f"g{i}" for i in range(7)] + ["never"]


@pytest.mark.parametrize("kw", [{}, {"cyclic": True}, {"faults": False, "m": 120}], ids=["faults", "cycle", "plain"])
def test_toy_systems_give_the_sequential_result_for_every_worker_count(kw):
    want = plain(explore(Toy(**kw), ExploreOptions("bfs", goals=GOALS)))
    assert want["violations"], "the toy must violate something, or the comparison says little"
    for n, chunk in ((1, 7), (2, 1), (2, 4096), (3, 7)):  # one state per round, a few, the whole frontier
        got = explore_parallel(functools.partial(Toy, **kw), n, ExploreOptions(goals=GOALS), chunk=chunk)
        assert plain(got) == want, (n, chunk)
    if kw.get("cyclic"):
        assert any(v["prop"] == "CYCLE" for v in want["violations"])


@pytest.mark.parametrize(
    "engine, violations",
    [("reference", 0), ("mutant:replay-resets-count", 7)],  # (one per invariant and signature)
)
def test_a_board_gives_the_sequential_result_for_every_worker_count(engine, violations):
    board = "boards/000-replay-2.toml"
    seq_system = board_system(board, engine, True)
    want = plain(explore(seq_system))
    assert len(want["violations"]) == violations and want["states"] > 400
    for n in (2, 3):  # (one worker: the toy systems)
        got = explore_parallel(functools.partial(board_system, board, engine, True), n, chunk=64, finish=not_judged)
        assert plain(got) == want, n
        merged: dict = {}
        for info in got.worker_info:
            for k, v in info.items():
                merged.setdefault(k, set()).update(v)
        assert merged == seq_system.not_judged


def test_bounds_give_the_same_result_for_every_worker_count():
    make = functools.partial(Toy, m=2000, faults=False)
    runs = [plain(explore_parallel(make, n, ExploreOptions(bounds=Bounds(max_states=300)), chunk=16)) for n in (1, 2, 3)]
    assert runs[0]["bound_hit"] == "max states (300)" and runs[0]["status"] == "fail"  # it violates "fives"
    assert 300 <= runs[0]["states"] < 300 + 16 * 3 and runs[0]["resumable"]
    assert runs[1] == runs[0] and runs[2] == runs[0]
    # a depth bound cuts where the sequential run does
    want = plain(explore(Toy(m=2000, faults=False), ExploreOptions("bfs", Bounds(max_depth=6))))
    for n in (1, 2):
        assert plain(explore_parallel(make, n, ExploreOptions(bounds=Bounds(max_depth=6)), chunk=16)) == want


def test_stop_on_violation_reports_the_sequential_violations():
    want = explore(Toy(), ExploreOptions("bfs", stop_on_violation=True))
    for n in (1, 3):
        got = explore_parallel(Toy, n, ExploreOptions(stop_on_violation=True), chunk=8)
        assert [dataclasses.asdict(v) for v in got.violations] == [dataclasses.asdict(v) for v in want.violations]
        assert got.status == "fail"


def test_a_stop_request_ends_the_run_between_chunks():
    got = explore_parallel(functools.partial(Toy, m=5000, faults=False), 2, ExploreOptions(stop=lambda: "interrupted (SIGINT)"), chunk=4)
    assert got.bound_hit == "interrupted (SIGINT)" and got.states == 3 and got.resumable  # the initial states only
    assert got.status == "fail"  # the initial state 5 violates "fives"


def test_a_worker_that_cannot_build_its_system_is_an_error():
    with pytest.raises(WorkerError, match="this system cannot be built"):
        explore_parallel(Broken, 2)


def test_only_breadth_first():
    with pytest.raises(ValueError, match="breadth first"):
        explore_parallel(Toy, 2, ExploreOptions(strategy="dfs"))
    with pytest.raises(ValueError, match="positive"):
        explore_parallel(Toy, 0)


def test_a_checkpoint_of_either_explorer_resumes_in_the_other():
    make = functools.partial(Toy, m=400)
    want = plain(explore(make(), ExploreOptions("bfs", goals=GOALS)))
    snaps: list = []
    explore(make(), ExploreOptions("bfs", Bounds(max_states=60), goals=GOALS, checkpoint=True), Callbacks(on_checkpoint=snaps.append))  # stops mid-layer
    got = explore_parallel(make, 2, ExploreOptions(goals=GOALS, resume=snaps[-1]), chunk=8)
    assert plain(got) == want
    snaps.clear()
    explore_parallel(make, 3, ExploreOptions(bounds=Bounds(max_states=80), goals=GOALS, checkpoint=True), Callbacks(on_checkpoint=snaps.append), chunk=8)
    assert plain(explore(make(), ExploreOptions("bfs", goals=GOALS, resume=snaps[-1]))) == want


@pytest.mark.parametrize("n, chunk", [(2, 64), (3, 40), (2, 4096)])
def test_states_handed_over_within_a_chunk_change_nothing(n, chunk):
    """Worker 0 is slow, so the others take over its states within each chunk; a handed-over
    state may come before this worker's own (the kept child of a fingerprint, the first use of
    an action kind): the result is still the sequential one."""
    want = plain(explore(SlowFirstWorker(), ExploreOptions("bfs", goals=GOALS)))
    got = explore_parallel(SlowFirstWorker, n, ExploreOptions(goals=GOALS), chunk=chunk)
    assert got.stolen and got.stolen > 0, "no state was handed over: the test would say nothing"
    assert plain(got) == want


class Two:
    """States 3 and 5 each offer one action of kind "x" to the same child 100."""

    def initial_states(self):
        return [3, 5]

    def actions(self, s):
        return ["x"] if s < 100 else []

    def step(self, s, a):
        return 100, (s, a)

    def is_terminal(self, s):
        return s >= 100

    def fingerprint(self, s):
        return s * 2 + 1  # odd: owned by worker 1 of 2

    def action_kind(self, a):
        return a

    def action_name(self, a):
        return a

    def check_state(self, s):
        return []

    def check_actions(self, s, acts):
        return []

    def check_transition(self, s, a, info, s2):
        return []

    def goals_reached(self, s, info):
        return []


def test_a_handed_over_state_before_the_workers_own_wins_its_place():
    """A worker expands its own state 5, then state 3 handed over by another worker: state 3's
    discovery of the shared child and its first use of kind "x" come first in the sequential
    order, so they replace state 5's (the results would depend on who expanded what)."""
    import pickle
    from collections import deque

    from bpcheck.explorers.parallel import _Worker

    w = _Worker(Two(), 0, 2, [])
    w.held = deque([(5, 1, 5)])
    w.expand(10, None, [], None)
    assert list(w.pending) == [(5, 0)] and w.c_kind["x"] == (5, 3, 0, 0, 0)
    w.expand_more(pickle.dumps([(3, 1, 3)]), None)
    assert list(w.pending) == [(3, 0)]  # the child kept for its fingerprint: the least discovery
    assert w.c_kind["x"] == (3, 3, 0, 0, 0)


def test_the_numbering_does_not_depend_on_the_worker_count():
    """The owners keep their states' parents, actions and depths; every state still gets its
    sequential index, whatever the worker count: 1, 2, 3 and 5 workers give the same findings
    (every trace, rebuilt from the owners' links, and the cycle found in the assembled graph)
    and, stopped at the same place, the same checkpoint (parents, actions, depths, non-tree
    edges by index), byte for byte."""
    make = functools.partial(Wide, 601)
    want = plain(explore(make(), ExploreOptions("bfs", goals=GOALS)))
    assert any(v["prop"] == "CYCLE" for v in want["violations"]) and any(t for t in want["goals"].values())
    snaps = {}
    for n in (1, 2, 3, 5):
        assert plain(explore_parallel(make, n, ExploreOptions(goals=GOALS), chunk=16)) == want, n
        got: list = []
        explore_parallel(make, n, ExploreOptions(bounds=Bounds(max_states=300), goals=GOALS, checkpoint=True), Callbacks(on_checkpoint=got.append), chunk=16)
        snaps[n] = [bytes(getattr(got[-1], f)) for f in ("fps", "parent", "via", "depth_of", "extra_src", "extra_dst", "extra_act", "frontier")]
        assert snaps[n] == snaps[1], n
    assert len(snaps[1][4]) > 0  # non-tree edges: the owners' edges, merged in the sequential order


class Wide(Toy):
    """A wide Toy (s -> 3 s + a mod m: layers of hundreds of states), cyclic."""

    def __init__(self, m: int = 1201) -> None:
        super().__init__(m=m, cyclic=True)

    def step(self, s, a):
        if self.faults and (s + a) % 29 == 0:
            raise SystemFault("refused", f"{s}+{a}")
        return (3 * s + a) % self.m, (s, a)


@pytest.mark.parametrize("m", [601, 6007])
def test_the_coordinator_keeps_no_record_per_state(m):
    """The coordinator keeps counts, the first index of each depth and, per chunk, each owner's
    committed arrays as the owner sent them (for a lost owner's replacement and checkpoints):
    objects by chunk, not by state; traces take a round of requests per depth walked."""
    n = 3
    got = explore_parallel(functools.partial(Wide, m), n, ExploreOptions(goals=GOALS), chunk=m // 10)
    p = got.protocol
    assert got.states > m // 2
    assert p["levels"] == got.max_depth + 1
    assert p["owner_arrays"] <= n * (p["chunks"] + 1)  # the initial states' settle, then one per chunk
    assert p["chunks"] <= 40 and p["owner_arrays"] < got.states / 4
    found = len(got.violations) + sum(1 for t in got.goals.values() if t is not None)
    assert 0 < p["trace_rounds"] <= (got.max_depth + 1) * p["chunks"] and p["trace_rounds"] < found * (got.max_depth + 1)


class _NamedPool(parallel_mod._Pool):
    """Worker processes under another name: which transport a run used shows in res.protocol."""

    kind = "the caller's pool"


def test_the_transport_is_the_one_the_caller_passes_never_a_global(monkeypatch):
    from bpcheck.explorers import cluster

    want = plain(explore(Toy(), ExploreOptions(goals=GOALS)))
    got = explore_parallel(Toy, 2, ExploreOptions(goals=GOALS), transport=_NamedPool, chunk=8)
    assert got.protocol["transport"] == "the caller's pool" and plain(got) == want
    monkeypatch.setattr(cluster, "ACTIVE", object())  # a --cluster run's connection: not the explorer's business
    got = explore_parallel(Toy, 2, ExploreOptions(goals=GOALS), chunk=8)
    assert got.protocol["transport"] == "worker processes" and plain(got) == want


def test_what_only_the_sequential_explorer_does_is_refused():
    for opts in (ExploreOptions(record_graph=10), ExploreOptions(pack=str, unpack=str)):
        with pytest.raises(ValueError, match="does not take"):
            explore_parallel(Toy, 2, opts)
