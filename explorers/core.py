"""A generic explicit-state explorer (it knows nothing of Yu-Gi-Oh!).

A :class:`TransitionSystem` gives initial states, actions, a step function, a 64-bit stable
fingerprint and property checks; :func:`explore` enumerates every reachable state by BFS
(shortest counterexamples) or DFS, deduplicating on fingerprints. The visited set holds
fingerprints and parent pointers only — never whole states — and traces are rebuilt by
re-executing the actions from an initial state, as Stateright and TLC do.

Properties: *always* properties are checked on every state, transition and action set; each
check returns ``None`` (its situation did not arise), ``True`` (held) or a message (violated).
*Sometimes* goals name states that must be reachable; the explorer reports a shortest witness.
Deadlocks (a non-terminal state with no action) and cycles are violations too.
"""

from __future__ import annotations

import os
import sys
import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, TypeVar

from bpcheck.explorers.graph import GraphRecord

S = TypeVar("S")
A = TypeVar("A")

DEADLOCK = "DEADLOCK"
CYCLE = "CYCLE"
FAULT = "ENGINE-FAULT"


class SystemFault(Exception):
    """Raised by a transition system when the thing it wraps misbehaves (an engine crash, hang,
    malformed reply, ...). The explorer records it as an ENGINE-FAULT violation with the trace
    that led to it, keeps everything gathered so far, and goes on with the other branches."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class Finding(str):
    """A violation message that names which distinct kind of violation it is (``key``). The
    explorer keeps one counterexample per property and key (a plain message: one per
    property); differential mode uses it for one DIFF per (kind, first differing path)."""

    key: Any = None

    def __new__(cls, message: str, key: Any) -> "Finding":
        f = super().__new__(cls, message)
        f.key = key
        return f


class TransitionSystem(Protocol[S, A]):
    def initial_states(self) -> Sequence[S]: ...

    def actions(self, s: S) -> Sequence[A]: ...

    def step(self, s: S, a: A) -> tuple[S, Any]: ...

    def is_terminal(self, s: S) -> bool: ...

    def fingerprint(self, s: S) -> int: ...

    def action_kind(self, a: A) -> str: ...

    def action_name(self, a: A) -> str: ...

    def check_state(self, s: S) -> list[tuple[str, Any]]: ...

    def check_actions(self, s: S, actions: Sequence[A]) -> list[tuple[str, Any]]: ...

    def check_transition(self, s: S, a: A, info: Any, s2: S) -> list[tuple[str, Any]]: ...

    def goals_reached(self, s: S, info: Any) -> list[str]: ...


@dataclass(frozen=True)
class Bounds:
    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None


@dataclass
class Violation:
    prop: str
    message: str
    trace: list[int]  # action indices from the initial state
    initial: int  # index of the initial state
    depth: int
    at: str  # "state", "transition", "actions", "deadlock", "cycle", "fault"
    cycle_start: int | None = None  # for cycles: the trace position the cycle returns to
    key: Any = None  # the Finding's key: which distinct kind of violation (None: the property's only one)


@dataclass
class PropStats:
    checked: int = 0  # how often its situation arose
    violations: int = 0


@dataclass
class ExploreResult:
    status: str  # "pass", "fail", "inconclusive"
    strategy: str
    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    terminal_states: int = 0
    elapsed: float = 0.0
    bound_hit: str | None = None
    action_counts: dict[str, int] = field(default_factory=dict)
    props: dict[str, PropStats] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    goals: dict[str, list[int] | None] = field(default_factory=dict)
    goal_initial: dict[str, int] = field(default_factory=dict)
    visited_bytes: int | None = None  # memory held for the visited set (measure_memory=True)
    graph: GraphRecord | None = None  # states and edges (record_graph=LIMIT; bpcheck.explorers.graph)


class Progress:
    """Progress on a terminal (stderr), silent in CI or when not a TTY."""

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty() and not os.environ.get("CI")
        self.enabled = enabled
        self.label = label
        self.t0 = time.monotonic()
        self.last = 0.0

    def update(self, states: int, depth: int, frontier: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.5:
            return
        self.last = now
        rate = states / max(now - self.t0, 1e-9)
        sys.stderr.write(f"\r{self.label}: {states} states, {rate:,.0f}/s, depth {depth}, frontier {frontier}   ")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def explore(
    system: TransitionSystem,
    strategy: str = "bfs",
    bounds: Bounds = Bounds(),
    goals: Sequence[str] = (),
    progress: Progress | None = None,
    stop_on_violation: bool = False,
    measure_memory: bool = False,
    record_graph: int | None = None,
) -> ExploreResult:
    if strategy not in ("bfs", "dfs"):
        raise ValueError(f"unknown strategy {strategy!r}")
    res = ExploreResult(status="pass", strategy=strategy)
    res.goals = {g: None for g in goals}
    graph = res.graph = None if record_graph is None else GraphRecord(record_graph)
    t0 = time.monotonic()
    deadline = None if bounds.timeout is None else t0 + bounds.timeout

    index: dict[int, int] = {}  # fingerprint -> state index
    parent = array("q")  # state index -> parent index (-1 - initial index for roots)
    via = array("I")  # state index -> action index taken from the parent
    depth_of = array("I")
    extra_src = array("I")  # non-tree edges, for cycle detection
    extra_dst = array("I")
    extra_act = array("I")  # the action index of each non-tree edge (to replay a cycle)
    seen_violation: set[tuple[str, Any]] = set()

    def record(prop: str, verdict: Any, idx: int, at: str, last_action: int | None = None) -> None:
        if verdict is None:
            return
        st = res.props.setdefault(prop, PropStats())
        st.checked += 1
        if verdict is True:
            return
        st.violations += 1
        key = (prop, getattr(verdict, "key", None))  # a Finding names its own distinct kind
        if key in seen_violation:
            return
        seen_violation.add(key)
        trace, init = _trace(parent, via, idx)
        if last_action is not None:
            trace.append(last_action)
        res.violations.append(Violation(prop, str(verdict), trace, init, len(trace), at, key=key[1]))

    def add(fp: int, p: int, a: int, d: int) -> int | None:
        if fp in index:
            return None
        i = len(parent)
        index[fp] = i
        parent.append(p)
        via.append(a)
        depth_of.append(d)
        return i

    frontier: Any = deque()
    for k, s0 in enumerate(system.initial_states()):
        i = add(system.fingerprint(s0), -1 - k, 0, 0)
        if i is not None:
            if graph is not None:
                graph.add_state(i, s0)
            frontier.append((s0, i, 0))
            for prop, verdict in system.check_state(s0):
                record(prop, verdict, i, "state")
            for g in system.goals_reached(s0, None):
                if g in res.goals and res.goals[g] is None:
                    res.goals[g] = []
                    res.goal_initial[g] = k

    pop = frontier.popleft if strategy == "bfs" else frontier.pop
    while frontier:
        if stop_on_violation and res.violations:
            break
        if bounds.max_states is not None and len(parent) >= bounds.max_states:
            res.bound_hit = f"max states ({bounds.max_states})"
            break
        if deadline is not None and time.monotonic() > deadline:
            res.bound_hit = f"time limit ({bounds.timeout:g} s)"
            break
        s, i, d = pop()
        if progress is not None:
            progress.update(len(parent), d, len(frontier))
        res.max_depth = max(res.max_depth, d)
        if system.is_terminal(s):
            res.terminal_states += 1
            continue
        try:
            acts = system.actions(s)
        except SystemFault as f:
            record(FAULT, f"{f.kind}: {f.message} (listing the legal actions)", i, "fault")
            continue
        for prop, verdict in system.check_actions(s, acts):
            record(prop, verdict, i, "actions")
        record(DEADLOCK, True if acts else "a non-terminal state offers no action", i, "deadlock")
        if not acts:
            continue
        if bounds.max_depth is not None and d >= bounds.max_depth:
            res.bound_hit = f"max depth ({bounds.max_depth})"
            continue
        for ai, a in enumerate(acts):
            try:
                s2, info = system.step(s, a)
            except SystemFault as f:
                record(FAULT, f"{f.kind}: {f.message} (applying {system.action_name(a)!r})", i, "fault", ai)
                continue
            res.transitions += 1
            kind = system.action_kind(a)
            res.action_counts[kind] = res.action_counts.get(kind, 0) + 1
            for prop, verdict in system.check_transition(s, a, info, s2):
                record(prop, verdict, i, "transition", ai)
            fp2 = system.fingerprint(s2)
            j = add(fp2, i, ai, d + 1)
            if graph is not None:
                if j is not None:
                    graph.add_state(j, s2)
                graph.add_edge(i, index[fp2], system.action_name(a))
            if j is None:
                extra_src.append(i)
                extra_dst.append(index[fp2])
                extra_act.append(ai)
                continue
            for g in system.goals_reached(s2, info):
                if g in res.goals and res.goals[g] is None:
                    res.goals[g], res.goal_initial[g] = _trace(parent, via, j)
            for prop, verdict in system.check_state(s2):
                record(prop, verdict, j, "state")
            frontier.append((s2, j, d + 1))
    if progress is not None:
        progress.update(len(parent), res.max_depth, len(frontier), force=True)
        progress.done()
    res.states = len(parent)
    if res.bound_hit is None:
        cyc = _find_cycle(parent, extra_src, extra_dst)
        res.props.setdefault(CYCLE, PropStats()).checked += 1 if cyc is None else 0
        if cyc is not None:
            # a shortest path to the cycle's first state, then round the cycle to its last one
            # (whose next action returns to the first)
            trace, init = _trace(parent, via, cyc[0])
            start = len(trace)
            trace += _loop_actions(parent, via, extra_src, extra_dst, extra_act, cyc)
            st = res.props.setdefault(CYCLE, PropStats())
            st.checked += 1
            st.violations += 1
            res.violations.append(
                Violation(CYCLE, "the state graph has a cycle: a path never ends", trace, init, len(trace), "cycle", start)
            )
    res.props.setdefault(DEADLOCK, PropStats())
    res.props.setdefault(CYCLE, PropStats())
    res.props.setdefault(FAULT, PropStats())
    if graph is not None:
        graph.finish(depth_of, not frontier)
    res.elapsed = time.monotonic() - t0
    if measure_memory:
        # Everything the visited set holds per state: the fingerprint index (table, keys,
        # values) and the parent / action / depth arrays and non-tree edges.
        total = sys.getsizeof(index)
        total += sum(sys.getsizeof(k) for k in index)
        total += sum(sys.getsizeof(v) for v in index.values() if v > 256)
        for arr in (parent, via, depth_of, extra_src, extra_dst, extra_act):
            total += arr.buffer_info()[1] * arr.itemsize + 64
        res.visited_bytes = total
    if res.violations:
        res.status = "fail"
    elif res.bound_hit is not None:
        res.status = "inconclusive"
    elif any(v is None for v in res.goals.values()):
        res.status = "fail"
    return res


def _trace(parent: array, via: array, i: int) -> tuple[list[int], int]:
    out: list[int] = []
    while parent[i] >= 0:
        out.append(via[i])
        i = parent[i]
    out.reverse()
    return out, -1 - parent[i]


def _loop_actions(parent: array, via: array, extra_src: array, extra_dst: array, extra_act: array, nodes: list[int]) -> list[int]:
    """The action indices along consecutive `nodes` (each an edge: a tree or a non-tree one)."""
    pairs = {(a, b) for a, b in zip(nodes, nodes[1:]) if parent[b] != a}
    act: dict[tuple[int, int], int] = {}
    for u, v, a in zip(extra_src, extra_dst, extra_act):
        if (u, v) in pairs and (u, v) not in act:
            act[(u, v)] = a
    return [via[b] if parent[b] == a else act[(a, b)] for a, b in zip(nodes, nodes[1:])]


def _find_cycle(parent: array, extra_src: array, extra_dst: array) -> list[int] | None:
    """Find a cycle: its states [v, ..., u] in order, each reached from the one before by an
    edge, and u -> v closing it (v is on the depth-first path to u)."""
    n = len(parent)
    if not extra_src:
        return None  # the tree edges alone cannot form a cycle
    children: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        p = parent[i]
        if p >= 0:
            children[p].append(i)
    for u, v in zip(extra_src, extra_dst):
        children[u].append(v)
    color = bytearray(n)  # 0 white, 1 grey, 2 black
    for root in range(n):
        if color[root] or parent[root] >= 0:
            continue
        stack = [(root, iter(children[root]))]
        color[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = 2
                stack.pop()
            elif color[nxt] == 1:
                path = [s for s, _it in stack]
                return path[path.index(nxt) :]
            elif color[nxt] == 0:
                color[nxt] = 1
                stack.append((nxt, iter(children[nxt])))
    return None


def replay_trace(system: TransitionSystem, initial: int, trace: Sequence[int]) -> list[tuple[Any, Any, Any]]:
    """Re-execute a trace: [(state, action, info)] with the state *before* each action, plus the
    final state as (state, None, None)."""
    s = system.initial_states()[initial]
    out = []
    for k, ai in enumerate(trace):
        acts = system.actions(s)
        a = acts[ai]
        try:
            s2, info = system.step(s, a)
        except SystemFault as f:
            if k != len(trace) - 1:
                raise
            out.append((s, a, f))  # the faulty call ends the trace; the state stays
            s2 = s
        else:
            out.append((s, a, info))
        s = s2
    out.append((s, None, None))
    return out


__all__ = ["Bounds", "ExploreResult", "Finding", "Progress", "SystemFault", "TransitionSystem", "Violation", "explore", "replay_trace"]
