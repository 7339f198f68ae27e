"""explore_parallel survives a lost worker: a worker process killed between chunks or in the
middle of one is replaced, the exploration goes back to the last chunk committed, and the result
is the sequential one, byte for byte (no state counted twice or skipped). A worker that keeps
dying at the same chunk ends the run with an error naming it.

Worker processes import this module to build their systems (the factories below)."""

from __future__ import annotations

import functools
import os
import signal
from pathlib import Path

import pytest

from bpcheck.explorers.core import Callbacks, ExploreOptions, explore
from bpcheck.explorers.parallel import WorkerError, explore_parallel
from bpcheck.explorers.reduce import Reduced
from bpcheck.explorers.run import reduced_system

from tests.test_parallel import GOALS, Toy, board_system, not_judged
from tests.test_parallel_reduce import GOALS as RGOALS
from tests.test_parallel_reduce import Forced


class DiesOnce(Toy):
    """A Toy whose worker process kills itself (SIGKILL) while stepping state `at`, the first
    time only (a marker file says it has happened): a worker lost in the middle of a chunk."""

    def __init__(self, marker: str, at: int = 80, always: bool = False, **kw) -> None:
        super().__init__(**kw)
        self.marker, self.at, self.always = marker, at, always

    def step(self, s, a):
        if s == self.at and (self.always or not os.path.exists(self.marker)):
            Path(self.marker).write_text("killed\n")
            os.kill(os.getpid(), signal.SIGKILL)
        return super().step(s, a)


class ForcedDiesOnce(Forced):
    def __init__(self, marker: str, at: int = 40, **kw) -> None:
        super().__init__(**kw)
        self.marker, self.at = marker, at

    def step(self, s, a):
        if s == self.at and not os.path.exists(self.marker):
            Path(self.marker).write_text("killed\n")
            os.kill(os.getpid(), signal.SIGKILL)
        return super().step(s, a)


def plain(r) -> dict:
    return r.findings()


def test_a_worker_killed_between_chunks_is_replaced_and_the_result_is_the_same():
    make = functools.partial(Toy, m=600)
    want = plain(explore(make(), ExploreOptions("bfs", goals=GOALS)))
    killed: list[int] = []

    def kill_one(states: int, pool) -> None:
        if not killed and states >= 100:
            killed.append(pool.procs[1].pid)
            os.kill(pool.procs[1].pid, signal.SIGKILL)

    got = explore_parallel(make, 2, ExploreOptions(goals=GOALS), Callbacks(on_commit=kill_one), chunk=8)
    assert killed and got.lost_workers and f"pid {killed[0]}" in got.lost_workers[0]
    assert plain(got) == want


@pytest.mark.parametrize("n, chunk", [(2, 8), (3, 32)])
def test_a_worker_killed_in_the_middle_of_a_chunk_is_replaced_and_the_result_is_the_same(tmp_path, n, chunk):
    marker = tmp_path / "killed"
    want = plain(explore(Toy(), ExploreOptions("bfs", goals=GOALS)))  # DiesOnce is a Toy (in this process it would kill pytest)
    got = explore_parallel(functools.partial(DiesOnce, str(marker)), n, ExploreOptions(goals=GOALS), chunk=chunk)
    assert marker.exists() and len(got.lost_workers) == 1, "no worker was killed: the test says nothing"
    assert plain(got) == want


def test_a_reduced_exploration_keeps_each_folded_state_counted_once_across_a_loss(tmp_path):
    """The claimed states (forced states judged inside transitions) of a lost owner are restored
    from the coordinator, so their verdicts are not counted again by the new workers."""
    marker = tmp_path / "killed"
    rs = Reduced(Forced())
    want = rs.finish(explore(rs, ExploreOptions("bfs", goals=RGOALS)))
    got = explore_parallel(functools.partial(reduced_system, functools.partial(ForcedDiesOnce, str(marker))), 2, ExploreOptions(goals=RGOALS), chunk=3)
    assert marker.exists() and got.lost_workers
    assert plain(got) == plain(want)
    assert got.claimed == len(rs.judged)


def test_a_board_with_not_judged_reasons_keeps_them_across_a_loss():
    board = "boards/000-replay-2.toml"
    seq = board_system(board, "reference", True)
    want = plain(explore(seq))
    killed: list[int] = []

    def kill_one(states: int, pool) -> None:
        if not killed and states >= 200:
            killed.append(pool.procs[0].pid)
            os.kill(pool.procs[0].pid, signal.SIGKILL)

    got = explore_parallel(functools.partial(board_system, board, "reference", True), 2, ExploreOptions(), Callbacks(on_commit=kill_one), chunk=64, finish=not_judged)
    assert killed and got.lost_workers
    assert plain(got) == want
    merged: dict = {}
    for info in got.worker_info:
        for k, v in info.items():
            merged.setdefault(k, set()).update(v)
    assert merged == seq.not_judged


def test_a_worker_that_keeps_dying_is_an_error_naming_it(tmp_path):
    marker = tmp_path / "killed"
    with pytest.raises(WorkerError, match=r"workers lost at the same chunk, the last: worker process \d \(pid \d+\)"):
        explore_parallel(functools.partial(DiesOnce, str(marker), always=True), 2, ExploreOptions(goals=GOALS), chunk=8)


def test_new_states_stay_with_their_discoverer_up_to_its_share_and_the_rest_spread():
    """parallel._balance: who hands how many of a chunk's new states to whom, from each
    worker's count alone (O(workers); never a result, only the balance)."""
    import numpy as np

    from bpcheck.explorers.parallel import _balance

    plan = _balance(np.array([90, 10, 0, 20]), np.ones(4))
    assert plan[1] == [] and plan[2] == [] and plan[3] == []  # at or under their share: they keep all
    given = dict(plan[0])
    assert 0 not in given and sum(given.values()) == 60 and given == {1: 20, 2: 30, 3: 10}  # to 30 each
    assert _balance(np.array([31, 29, 30, 30]), np.ones(4)) == [[], [], [], []]  # within the slack: nothing moves
    assert _balance(np.array([90, 10, 0, 20]), np.ones(4)) == plan  # deterministic
    # by cost: a worker twice as fast gets twice the share
    fast = _balance(np.array([0, 90]), np.array([2.0, 1.0]))
    assert fast == [[], [(0, 60)]]
