"""The generic explorer on toy transition systems: it knows nothing of Yu-Gi-Oh!."""

from __future__ import annotations

import dataclasses

import pytest

from bpcheck.explorers.core import Bounds, ExploreOptions, ExploreVisitor, MemoryWatch, explore, replay_trace


class Counter:
    """States 0..limit; actions +1 and +2; terminal at limit; optional wrap-around (a cycle)."""

    def __init__(self, limit=10, bad=None, wrap=False, dead=None):
        self.limit, self.bad, self.wrap, self.dead = limit, bad, wrap, dead

    def initial_states(self):
        return [0]

    def actions(self, s):
        if s == self.dead:
            return []
        return [1, 2]

    def step(self, s, a):
        n = s + a
        if self.wrap:
            n %= self.limit
        return min(n, self.limit), None

    def is_terminal(self, s):
        return not self.wrap and s >= self.limit

    def fingerprint(self, s):
        return s

    def action_kind(self, a):
        return f"+{a}"

    def check_state(self, s):
        if self.bad is None:
            return []
        return [("never-bad", f"reached {s}" if s == self.bad else True)]

    def check_actions(self, s, acts):
        return []

    def check_transition(self, s, a, info, s2):
        return [("small-steps", True if a <= 2 else "big step")]

    def goals_reached(self, s, info):
        return ["five"] if s == 5 else []


def test_bfs_finds_a_shortest_counterexample():
    sysm = Counter(bad=7)
    r = explore(sysm)
    assert r.status == "fail"
    v = next(v for v in r.violations if v.prop == "never-bad")
    assert len(v.trace) == 4  # 2+2+2+1
    final = replay_trace(sysm, v.initial, v.trace)[-1][0]
    assert final == 7


def test_dfs_finds_one_too():
    r = explore(Counter(bad=7), ExploreOptions("dfs"))
    assert r.status == "fail" and any(v.prop == "never-bad" for v in r.violations)


def test_pass_counts_and_goals():
    r = explore(Counter(), ExploreOptions("bfs", goals=["five", "never"]))
    assert r.states == 11 and r.terminal_states == 1
    assert r.action_counts == {"+1": 10, "+2": 10}
    assert r.goals["five"] is not None and len(r.goals["five"]) == 3
    assert r.goals["never"] is None and r.status == "fail"  # a goal that cannot be reached fails
    assert r.props["small-steps"].checked == 20


def test_cycle_and_deadlock():
    r = explore(Counter(limit=5, wrap=True))
    assert any(v.prop == "CYCLE" for v in r.violations)
    r = explore(Counter(dead=3))
    v = next(v for v in r.violations if v.prop == "DEADLOCK")
    assert len(v.trace) == 2


def test_bounds_are_inconclusive_never_pass():
    r = explore(Counter(limit=1000), ExploreOptions("bfs", Bounds(max_states=50)))
    assert r.status == "inconclusive" and r.bound_hit.startswith("max states")
    r = explore(Counter(limit=1000), ExploreOptions("bfs", Bounds(max_depth=3)))
    assert r.status == "inconclusive"


def test_the_fingerprint_index_finds_what_it_holds_across_merges(monkeypatch):
    import random
    from array import array

    import numpy as np

    import bpcheck.explorers.core as core

    monkeypatch.setattr(core, "MERGE_AT", 8)  # merge into the sorted arrays often
    rnd = random.Random(7)
    fps = list(dict.fromkeys(rnd.getrandbits(64) for _ in range(300))) + [0, 2**64 - 1]
    ix = core.FingerprintIndex()
    for i, fp in enumerate(fps):
        assert ix.get(fp) is None
        ix.add(fp, i)
    assert len(ix) == len(fps) and ix._fps.size > 0 and ix._recent  # both parts in use
    assert all(ix.get(fp) == i for i, fp in enumerate(fps)) and ix.get(12345) is None
    probe = np.array(fps[::7] + [1, 2**63], dtype=np.uint64)
    assert ix.get_many(probe).tolist() == list(range(0, len(fps), 7)) + [-1, -1]
    assert list(ix.by_index(len(fps))) == fps
    again = core.FingerprintIndex.from_fps(array("Q", fps))
    assert all(again[fp] == i for i, fp in enumerate(fps)) and 99 not in again


def test_the_fingerprint_map_keeps_64_bit_values_across_merges(monkeypatch):
    """FingerprintMap (the reduction's memo of forced states: fingerprint -> the fingerprint its
    chain ends in) stores full 64-bit values, where FingerprintIndex keeps 32-bit indices."""
    import random

    import bpcheck.explorers.core as core

    monkeypatch.setattr(core, "MERGE_AT", 8)
    rnd = random.Random(11)
    pairs = {rnd.getrandbits(64): rnd.getrandbits(64) for _ in range(200)}
    pairs[2**64 - 1] = 2**63 + 5
    m = core.FingerprintMap()
    for k, v in pairs.items():
        m.add(k, v)
    assert m._fps.size > 0 and m._recent and len(m) == len(pairs)
    assert all(m.get(k) == v for k, v in pairs.items()) and m.get(3) is None


def test_the_visited_set_takes_under_64_bytes_per_state(monkeypatch):
    # deterministic (it counts the bytes held, it times nothing). The dict of recent additions
    # (at most MERGE_AT entries, about 100 B each) is made small so that 20,000 states show the
    # per-state cost of a large run: fingerprint, index, parent, action, depth, non-tree edges.
    import bpcheck.explorers.core as core

    monkeypatch.setattr(core, "MERGE_AT", 1024)
    r = explore(Counter(limit=20_000), ExploreOptions("bfs", measure_memory=True))
    assert r.states == 20_001 and r.visited_bytes / r.states < 64


def test_has_many_says_which_fingerprints_are_present(monkeypatch):
    import numpy as np

    import bpcheck.explorers.core as core

    monkeypatch.setattr(core, "MERGE_AT", 4)
    m = core.FingerprintMap()
    keys = [2**64 - 1, 2**63, 5, 9, 2**63 + 7, 1]
    for k in keys:
        m.add(k, 2**64 - 2)  # values that do not fit an int64
    probe = np.array(keys + [6, 2**63 + 1], dtype=np.uint64)
    assert m.has_many(probe).tolist() == [True] * len(keys) + [False, False]


class _Heard(ExploreVisitor):
    """Every hook the explorer calls, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def on_progress(self, states, depth, frontier, note=None):
        self.calls.append(("progress", states, depth, frontier))

    def on_violation(self, violation):
        self.calls.append(("violation", violation.prop, tuple(violation.trace)))

    def on_checkpoint(self, snapshot):
        self.calls.append(("checkpoint", len(snapshot.fps), tuple(snapshot.frontier)))

    def on_done(self, states, depth):
        self.calls.append(("done", states, depth))


def test_the_visitor_hears_each_expansion_each_violation_as_found_and_the_end():
    heard = _Heard()
    r = explore(Counter(bad=7), ExploreOptions(), heard)
    kinds = [c[0] for c in heard.calls]
    assert kinds.count("progress") == r.states  # exhaustive: every state expanded once
    assert kinds.count("checkpoint") == 0  # no checkpoint asked for
    assert [c[1:] for c in heard.calls if c[0] == "violation"] == [(v.prop, tuple(v.trace)) for v in r.violations if v.prop != "CYCLE"]
    assert heard.calls[-1] == ("done", r.states, r.max_depth)
    # the violation is heard while the exploration goes on, not at its end
    at = kinds.index("violation")
    assert 0 < at < kinds.index("done") - 1 and "progress" in kinds[at:]


def test_a_checkpoint_goes_to_the_visitor_when_a_bound_stops_the_run():
    heard = _Heard()
    r = explore(Counter(limit=1000), ExploreOptions(bounds=Bounds(max_states=50), checkpoint=True), heard)
    snaps = [c for c in heard.calls if c[0] == "checkpoint"]
    assert r.resumable and len(snaps) == 1 and snaps[0][1] == r.states and snaps[0][2]
    # the same bound without checkpoint=True: none
    quiet = _Heard()
    explore(Counter(limit=1000), ExploreOptions(bounds=Bounds(max_states=50)), quiet)
    assert not [c for c in quiet.calls if c[0] == "checkpoint"]


def test_options_are_one_frozen_value_checked_when_built():
    with pytest.raises(ValueError, match="unknown strategy"):
        ExploreOptions("bfs-ish")
    o = ExploreOptions(goals=["five"])
    assert o.goals == ("five",)  # a list given is kept as a tuple: the value cannot change under a run
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.strategy = "dfs"  # type: ignore[misc]
    assert ExploreOptions(bounds=Bounds(timeout=5), started=100.0).deadline(102.0) == 105.0  # the bound began before
    assert ExploreOptions(bounds=Bounds(timeout=5)).deadline(102.0) == 107.0
    assert ExploreOptions().deadline(102.0) is None


@pytest.mark.parametrize("used, shown", [(0.90, "90 %"), (0.95, "95 %"), (0.99, "99 %")])
def test_the_memory_note_says_the_share_in_use_when_it_stopped(used, shown):
    """With -j N the memory is read between chunks: a run may stop past 90 % (issue 33)."""
    limit = 2048 * 2**20
    why = MemoryWatch(limit, lambda: int(limit * used)).exceeded()
    assert why is not None and why.endswith(f"in use, stopped at {shown})"), why
    assert MemoryWatch(limit, lambda: int(limit * 0.89)).exceeded() is None
