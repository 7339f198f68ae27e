"""A generic explicit-state explorer (it knows nothing of Yu-Gi-Oh!).

A :class:`TransitionSystem` gives initial states, actions, a step function, a 64-bit stable
fingerprint and property checks; :func:`explore` enumerates every reachable state by BFS
(shortest counterexamples) or DFS, deduplicating on fingerprints. The visited set holds
fingerprints and parent pointers only — never whole states — and traces are rebuilt by
re-executing the actions from an initial state, as Stateright and TLC do.

The visited set is compact (:class:`FingerprintIndex`, about 28 bytes per state plus 12 per
non-tree edge, measured by benchmarks/memory_bench.py): the fingerprints in a sorted numpy
``uint64`` array with the state index of each beside it (``uint32``), the last few thousand
additions in a small dict until they are merged in; parent (``int64``), action index and depth
(``uint32``) in flat arrays by state index; the non-tree edges (needed for cycle detection) as
three ``uint32`` arrays. A BFS frontier keeps whole states, so the peak memory follows the
largest BFS layer, not the number of states.

Properties: *always* properties are checked on every state, transition and action set; each
check returns ``None`` (its situation did not arise), ``True`` (held) or a message (violated).
*Sometimes* goals name states that must be reachable; the explorer reports a shortest witness.
Deadlocks (a non-terminal state with no action) and cycles are violations too.

How an exploration runs is one value, :class:`ExploreOptions` (strategy, bounds, goals, the stop
poll, the memory limit, checkpoints, ...), built once and taken by :func:`explore` and by the
parallel explorer (explorers/parallel.py); what it tells the outside while it runs (progress,
each distinct violation as it is found, checkpoints to write) goes to an :class:`ExploreVisitor`
(Stateright's ``CheckerBuilder`` and ``CheckerVisitor``).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import sys
import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence, TypeVar

import numpy as np

# a transition system that misbehaves raises SystemFault; the engines, which raise it, own the
# type (engines/faults.py, a module without imports): explorers -> engines, never the reverse
from bpcheck.engines.faults import Abandoned, SystemFault, arm, check_stop
from bpcheck.explorers.graph import GraphRecord
from bpcheck.explorers.pool import in_worker
from bpcheck.explorers.progress import Progress as Run
from bpcheck.explorers.progress import mode_for

S = TypeVar("S")
A = TypeVar("A")

DEADLOCK = "DEADLOCK"
CYCLE = "CYCLE"
FAULT = "ENGINE-FAULT"


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
    generated: int = 0  # states generated (initial states + transitions), for the collision estimate
    resumable: bool = False  # stopped early with states left to expand (a checkpoint can go on)
    worker_info: list | None = None  # explore_parallel(finish=...): each worker's answer (explorers/parallel.py)
    claimed: int | None = None  # explore_parallel: the states judged inside transitions (a system's ``claims``)
    balance: float | None = None  # explore_parallel, 2+ workers: mean / busiest worker's expanding CPU (not deterministic)
    stolen: int | None = None  # explore_parallel, 2+ workers: states handed to an idle worker within a chunk (not deterministic)
    # explore_parallel, reduced: judgings of states already judged (claims beyond each state's
    # first: two workers meeting one forced state in a chunk, a handed-over chain); work, not
    # results (not deterministic)
    judged_again: int | None = None
    protocol: dict | None = None  # explore_parallel: what the chunk rounds cost (transport, CPU, bytes; not deterministic)
    lost_workers: list | None = None  # explore_parallel: the workers lost and replaced during the run (where)

    # what says how a run went rather than what it found: timing, memory, the workers' own
    # answers and bookkeeping (None in one process), the state graph (in one process only)
    RUN_ONLY = ("elapsed", "graph", "visited_bytes", "worker_info", "claimed", "balance", "stolen", "judged_again", "protocol", "lost_workers")

    @property
    def collision(self) -> dict:
        """The fingerprint-collision estimate (:func:`collision_probability`)."""
        return collision_probability(self.states, self.generated)

    def findings(self) -> dict:
        """Everything the exploration found, with the order of its dicts, without the
        :data:`RUN_ONLY` fields: the same whatever the explorer and the worker count on an
        exhaustive run (tests/test_parallel.py, benchmarks/parallel_bench.py compare it)."""
        d = dataclasses.asdict(self)
        for k in self.RUN_ONLY:
            del d[k]
        d["props_order"] = list(self.props)
        d["action_counts_order"] = list(self.action_counts)
        d["goals_order"] = list(self.goals)
        return d


class Progress:
    """One exploration's progress line of its own, for library calls (``check_board(progress=
    True)``): the run-level machinery is :mod:`bpcheck.explorers.progress`, whose tasks the CLI
    hands to the explorers instead. ``enabled``: None draws on a terminal only (not in CI),
    True also writes plain lines elsewhere, False nothing."""

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        mode = mode_for(sys.stderr)
        if enabled is None and mode != "live":
            mode = "off"
        self._run = Run(label, total=None, mode="off" if enabled is False else mode)
        self._task = self._run.start(label)

    def update(self, states: int, depth: int, frontier: int, force: bool = False, note: str | None = None) -> None:
        """``note``: more of the run's state (explore_parallel: workers alive, their balance)."""
        self._task.update(states, depth, frontier, note=note)

    def done(self) -> None:
        self._run.close()


@dataclass
class Snapshot:
    """Everything an exploration needs to go on where it stopped (explorers/checkpoint.py writes
    it to a file): the visited set (fingerprints, parents, actions, depths, non-tree edges), the
    frontier as state indices in order, and the results so far. Frontier *states* are not kept:
    they are rebuilt on resume by re-executing the tree paths to them."""

    strategy: str
    fps: array  # "Q": state index -> fingerprint
    parent: array  # "q"
    via: array  # "I"
    depth_of: array  # "I"
    extra_src: array  # "I"
    extra_dst: array  # "I"
    extra_act: array  # "I"
    frontier: array  # "Q": state indices, pop order preserved
    results: dict  # counts, props, violations, goals (plain JSON data)


class ResumeMismatch(Exception):
    """The engine does not re-create a checkpointed state (a different or non-deterministic engine)."""


def current_rss() -> int | None:
    """The resident set size of this process in bytes (Linux: /proc/self/statm), else None."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _PAGE = 4096


def tree_rss(root: int) -> int | None:
    """The resident set size of process `root` and every process under it, in bytes (Linux:
    /proc), else None: what a run of several processes uses in total (``--memory-limit`` with
    ``-j N`` is for all of them together)."""
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    children: dict[int, list[int]] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            pass
        todo.extend(children.get(pid, ()))
    return total


def run_root() -> int:
    """The pid of the bpcheck process that started this one: itself, or for a worker of the pool
    (started by the forkserver, itself started by bpcheck: explorers/pool.py) its grandparent."""
    if not in_worker():
        return os.getpid()
    try:
        with open(f"/proc/{os.getppid()}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return os.getppid()


def peak_rss() -> int | None:
    """The peak resident set size of this process in bytes (getrusage), else None."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024


def collision_probability(states: int, generated: int) -> dict:
    """The chance that two distinct states shared a 64-bit fingerprint (so one was never
    explored), estimated as TLC does: *optimistic* n·(g−n)/2^64 (n distinct states, g states
    generated: every generated state that was already seen could have been a new one that
    collided), and a *bound* n·g/2^64 (each of the g look-ups meets at most n fingerprints)."""
    n, g = states, max(generated, states)
    return {"optimistic": n * (g - n) / 2.0**64, "bound": n * g / 2.0**64}


MERGE_AT = 1 << 16  # additions kept in the dict before they are merged into the sorted arrays


_U64 = np.uint64


class FingerprintIndex:
    """A map fingerprint -> state index in about 12 bytes per entry: two parallel numpy arrays
    sorted by fingerprint (``uint64`` fingerprints, ``uint32`` indices) and a dict of the last
    additions (at most :data:`MERGE_AT`), merged in by a linear ``np.insert`` when it fills.
    Look-ups are a dict probe and a binary search (``get`` one at a time, ``get_many`` for a
    numpy batch)."""

    __slots__ = ("_recent", "_fps", "_idx")
    VALUE: Any = np.uint32  # the type of the values (state indices)

    def __init__(self) -> None:
        self._recent: dict[int, int] = {}
        self._fps = np.empty(0, np.uint64)
        self._idx = np.empty(0, self.VALUE)

    @classmethod
    def from_fps(cls, fps: Iterable[int]) -> "FingerprintIndex":
        """The index of states 0..n-1 with these fingerprints (a checkpoint's ``fps``)."""
        a = np.asarray(fps, dtype=np.uint64) if not isinstance(fps, array) else np.frombuffer(fps, dtype=np.uint64)
        if a.size >= 2**32:  # pragma: no cover - far beyond memory anyway
            raise OverflowError("more than 2**32 states")
        out = cls()
        order = np.argsort(a, kind="stable")
        out._fps = a[order]
        out._idx = order.astype(cls.VALUE)
        return out

    def __len__(self) -> int:
        return len(self._recent) + int(self._fps.size)

    def __contains__(self, fp: int) -> bool:
        return self.get(fp) is not None

    def get(self, fp: int) -> int | None:
        r = self._recent.get(fp)
        if r is not None:
            return r
        fps = self._fps
        if fps.size:
            # a numpy uint64, never the Python int: numpy (2.x) searches a uint64 array for an
            # int it cannot cast safely by converting the whole array first (measured: 440 us
            # against 3 us a look-up with 500,000 states; every transition looks one up)
            key = _U64(fp)
            pos = int(fps.searchsorted(key))
            if pos < fps.size and fps[pos] == key:
                return int(self._idx[pos])
        return None

    def __getitem__(self, fp: int) -> int:
        i = self.get(fp)
        if i is None:
            raise KeyError(fp)
        return i

    def get_many(self, fps: np.ndarray) -> np.ndarray:
        """The state index of each fingerprint (``uint64`` array), -1 where it is not present."""
        out = np.full(fps.size, -1, np.int64)
        if self._fps.size and fps.size:
            pos = np.searchsorted(self._fps, fps)
            pos[pos >= self._fps.size] = 0
            hit = self._fps[pos] == fps
            out[hit] = self._idx[pos[hit]]
        if self._recent:
            get = self._recent.get
            for k in np.flatnonzero(out < 0).tolist():
                r = get(int(fps[k]))
                if r is not None:
                    out[k] = r
        return out

    def has_many(self, fps: np.ndarray) -> np.ndarray:
        """Whether each fingerprint (``uint64`` array) is present (a bool array)."""
        out = np.zeros(fps.size, bool)
        if self._fps.size and fps.size:
            pos = np.searchsorted(self._fps, fps)
            pos[pos >= self._fps.size] = 0
            out = self._fps[pos] == fps
        if self._recent:
            rec = self._recent
            for k in np.flatnonzero(~out).tolist():
                if int(fps[k]) in rec:
                    out[k] = True
        return out

    def add(self, fp: int, i: int) -> None:
        """Add a fingerprint that is not present (the caller has looked it up)."""
        self._recent[fp] = i
        if len(self._recent) >= MERGE_AT:
            self.merge()

    def merge(self) -> None:
        rec = self._recent
        if not rec:
            return
        k = np.fromiter(rec.keys(), np.uint64, len(rec))
        v = np.fromiter(rec.values(), self.VALUE, len(rec))
        order = np.argsort(k, kind="stable")
        k, v = k[order], v[order]
        pos = np.searchsorted(self._fps, k)
        self._fps = np.insert(self._fps, pos, k)
        self._idx = np.insert(self._idx, pos, v)
        rec.clear()

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (fingerprint, index) held, as two arrays (unordered)."""
        rec = self._recent
        k = np.fromiter(rec.keys(), np.uint64, len(rec))
        v = np.fromiter(rec.values(), self.VALUE, len(rec))
        return np.concatenate([self._fps, k]), np.concatenate([self._idx, v])

    @classmethod
    def from_pairs(cls, fps: np.ndarray, idx: np.ndarray) -> "FingerprintIndex":
        out = cls()
        order = np.argsort(fps, kind="stable")
        out._fps = np.ascontiguousarray(fps[order], dtype=np.uint64)
        out._idx = np.ascontiguousarray(idx[order], dtype=cls.VALUE)
        return out

    def by_index(self, n: int) -> array:
        """The fingerprint of each state 0..n-1, as an ``array("Q")``."""
        out = np.zeros(n, np.uint64)
        out[self._idx] = self._fps
        for fp, i in self._recent.items():
            out[i] = fp
        return array("Q", out.tobytes())

    def nbytes(self) -> int:
        """The memory it holds: the arrays, the dict's table and its keys and values."""
        total = self._fps.nbytes + self._idx.nbytes + 2 * 112
        rec = self._recent
        total += sys.getsizeof(rec) + sum(sys.getsizeof(k) for k in rec) + sum(sys.getsizeof(v) for v in rec.values() if v > 256)
        return total


class FingerprintMap(FingerprintIndex):
    """A :class:`FingerprintIndex` whose values are 64-bit (fingerprints): about 16 bytes per
    entry where a dict of Python ints takes about 100 (explorers/reduce.py keeps one entry per
    forced state)."""

    __slots__ = ()
    VALUE = np.uint64


MEMORY_POLL_STATES = 1024  # the RSS is read every this many expanded states
GC_FREEZE = True  # freeze the cyclic GC's view of what is explored (see gc_settle); False: benchmarks
GC_SETTLE_STATES = 256  # both explorers call gc_settle every this many expanded states


def gc_settle() -> None:
    """Move every object alive now out of the cyclic GC's generations (``gc.freeze``).

    The explorer's states live long (the frontier, the caches of the model) and hold no
    reference cycles of their own; each full collection of the GC scans all of them, and there
    are more of them the longer a run goes (measured: a quarter of a run's time on the
    seven-card board, docs/performance.md). Both explorers call this every
    :data:`GC_SETTLE_STATES` expanded states (256: no full collection runs in between; 1,024
    let a worker, whose chunk's children wait for the owners' decision, run 25 full
    collections on the seven-card board's first 33,000 states), so that
    collections look at new objects only; :func:`gc_release` at the end puts them back, so a
    cycle among them is still collected then."""
    if GC_FREEZE:
        gc.freeze()


def gc_release() -> None:
    """The end of an exploration: frozen objects are the GC's again (:func:`gc_settle`)."""
    if GC_FREEZE:
        gc.unfreeze()


@dataclass(frozen=True)
class ExploreOptions:
    """How one exploration runs, as one value built once (Stateright's ``CheckerBuilder``):
    :func:`explore` and :func:`bpcheck.explorers.parallel.explore_parallel` both take it. What
    the exploration tells the outside while it runs goes to an :class:`ExploreVisitor`.

    - ``strategy``: "bfs" (shortest counterexamples) or "dfs" (sequential only);
    - ``bounds``: max_states / max_depth / timeout; ``started`` (a ``time.monotonic()``
      reading): when the time bound began, if before the exploration (``bpcheck check
      --timeout`` counts the reading of the board too);
    - ``goals``: the ids of the *sometimes* goals whose shortest witnesses are looked for;
    - ``stop_on_violation``: stop once the state being expanded gave a violation;
    - ``measure_memory``: fill ``res.visited_bytes``; ``record_graph`` (a limit): record the
      state graph in ``res.graph`` (bpcheck.explorers.graph; sequential only);
    - ``stop()`` is polled before each state is expanded (each chunk, in parallel); a string
      stops the exploration as inconclusive with that reason (``bpcheck check`` uses it for
      SIGINT / SIGTERM / SIGHUP);
    - ``memory_limit`` (bytes): the run's resident set size is read every
      :data:`MEMORY_POLL_STATES` states (each chunk, in parallel); at 90 % of the limit the
      exploration stops, inconclusive, keeping what it found (:class:`MemoryWatch`);
    - ``checkpoint``: the visitor's ``on_checkpoint(snapshot)`` is called every
      ``checkpoint_every`` seconds (if given) and when the exploration stops with states left
      to expand; ``resume`` continues from a snapshot (same verdict, same shortest
      counterexamples as an uninterrupted run);
    - ``pack`` / ``unpack`` shrink what the frontier keeps per state (and restore it on pop;
      sequential only).
    """

    strategy: str = "bfs"
    bounds: Bounds = Bounds()
    goals: Sequence[str] = ()
    stop_on_violation: bool = False
    measure_memory: bool = False
    record_graph: int | None = None
    stop: Callable[[], str | None] | None = None
    memory_limit: int | None = None
    started: float | None = None
    checkpoint: bool = False
    checkpoint_every: float | None = None
    resume: Snapshot | None = None
    pack: Callable[[Any], Any] | None = None
    unpack: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if self.strategy not in ("bfs", "dfs"):
            raise ValueError(f"unknown strategy {self.strategy!r}")
        object.__setattr__(self, "goals", tuple(self.goals))

    def deadline(self, t0: float) -> float | None:
        """When the time bound runs out for an exploration that began at `t0` (a
        ``time.monotonic()`` reading), or None."""
        if self.bounds.timeout is None:
            return None
        return (t0 if self.started is None else min(self.started, t0)) + self.bounds.timeout


class ExploreVisitor:
    """What an exploration tells the outside while it runs (Stateright's ``CheckerVisitor``):
    progress, each distinct violation as it is found, checkpoints to write. Every hook does
    nothing here; a subclass overrides those it needs (or :class:`Callbacks` takes them as
    parts). The explorers call them in their own process."""

    def on_progress(self, states: int, depth: int, frontier: int, note: str | None = None) -> None:
        """Before each state is expanded (sequential) or after each chunk (parallel; ``note``:
        the workers alive and their balance)."""

    def on_done(self, states: int, depth: int) -> None:
        """The exploration is over (called before the cycle search and the result)."""

    def on_violation(self, violation: Violation) -> None:
        """A distinct violation, as soon as it is found (its trace is the one the result will
        hold; in parallel, once the chunk that found it is settled): feedback while a long
        exploration goes on. (A CYCLE, decided on the whole graph at the end, is in the result
        only.)"""

    def on_checkpoint(self, snapshot: Snapshot) -> None:
        """A snapshot to keep (``ExploreOptions.checkpoint``; explorers/checkpoint.py writes
        it to a file)."""

    def on_commit(self, states: int, pool: Any) -> None:
        """Parallel: a chunk was committed (`states`: the states known; `pool`: the workers)."""


class Callbacks(ExploreVisitor):
    """An :class:`ExploreVisitor` made of parts: a progress line (anything with the explorers'
    ``update`` / ``done``: :class:`Progress`, a task of :mod:`bpcheck.explorers.progress`) and
    callables for violations, checkpoints and commits (None: nothing)."""

    def __init__(
        self,
        progress: Any = None,
        on_violation: Callable[[Violation], None] | None = None,
        on_checkpoint: Callable[[Snapshot], None] | None = None,
        on_commit: Callable[[int, Any], None] | None = None,
    ) -> None:
        self.progress = progress
        if progress is not None:
            self.on_progress = progress.update  # type: ignore[method-assign]  # once per state: called directly
        for name, fn in (("on_violation", on_violation), ("on_checkpoint", on_checkpoint), ("on_commit", on_commit)):
            if fn is not None:
                setattr(self, name, fn)

    def on_done(self, states: int, depth: int) -> None:
        if self.progress is not None:
            self.progress.update(states, depth, 0, force=True)
            self.progress.done()


_NOBODY = ExploreVisitor()


class MemoryWatch:
    """``memory_limit``: how much memory the run uses (``measure()``, bytes, or None when it
    cannot be read) against the limit; :meth:`exceeded` says why to stop at 90 % of it."""

    __slots__ = ("limit", "stop_at", "measure")

    def __init__(self, limit: int, measure: Callable[[], int | None]) -> None:
        self.limit = limit
        self.stop_at = int(limit * 0.9)
        self.measure = measure

    @classmethod
    def of_run(cls, limit: int | None) -> "MemoryWatch | None":
        """The whole run's memory: bpcheck, its workers (-j N), the engines they started
        (:func:`tree_rss` from :func:`run_root`; this process's alone where /proc is not)."""
        if limit is None:
            return None
        root = run_root()

        def measure() -> int | None:
            total = tree_rss(root)
            return current_rss() if total is None else total

        return cls(limit, measure)

    def exceeded(self) -> str | None:
        rss = self.measure()
        if rss is not None and rss >= self.stop_at:
            # the share measured, not the threshold: with -j N the watch reads between chunks,
            # so the run may be past 90 % when it stops (issue 33)
            return f"memory limit ({_mb(self.limit)}; {_mb(rss)} in use, stopped at {round(rss * 100 / self.limit)} %)"
        return None


class CheckpointClock:
    """``checkpoint_every``: a checkpoint is due that many seconds after the previous one was
    written (the first, after the start)."""

    __slots__ = ("every", "next")

    def __init__(self, every: float, t0: float) -> None:
        self.every = every
        self.next = t0 + every

    @classmethod
    def of(cls, options: ExploreOptions, t0: float) -> "CheckpointClock | None":
        return cls(options.checkpoint_every, t0) if options.checkpoint and options.checkpoint_every else None

    def tick(self, write: Callable[[], None]) -> None:
        """``write()`` the checkpoint if it is due."""
        if time.monotonic() >= self.next:
            write()
            self.next = time.monotonic() + self.every


class StatePoll:
    """The sequential explorer's chores between states: the GC settled every
    :data:`GC_SETTLE_STATES` expanded states (:func:`gc_settle`), and every
    :data:`MEMORY_POLL_STATES` the memory read (`memory`) and the checkpoint clock looked at
    (`clock`, which calls `checkpoint`). Called before each state is expanded; the first is
    polled too."""

    __slots__ = ("polled", "memory", "clock", "checkpoint")

    def __init__(self, memory: MemoryWatch | None, clock: CheckpointClock | None, checkpoint: Callable[[], None]) -> None:
        self.polled = MEMORY_POLL_STATES - 1
        self.memory = memory
        self.clock = clock
        self.checkpoint = checkpoint

    def __call__(self) -> str | None:
        """Why the exploration must stop now (the memory limit), or None."""
        self.polled += 1
        if not self.polled % GC_SETTLE_STATES:
            gc_settle()
        if self.polled < MEMORY_POLL_STATES:
            return None
        self.polled = 0
        if self.memory is not None:
            why = self.memory.exceeded()
            if why is not None:
                return why
        if self.clock is not None:
            self.clock.tick(self.checkpoint)
        return None


class Visited:
    """The visited set of one exploration: fingerprint -> state index (:class:`FingerprintIndex`),
    and by state index its parent (-1 - initial index for roots), the action index taken from
    it and its depth; the non-tree edges (source, destination, action index), for the cycle
    search. Flat arrays, never whole states."""

    __slots__ = ("index", "parent", "via", "depth_of", "extra_src", "extra_dst", "extra_act")

    def __init__(self) -> None:
        self.index = FingerprintIndex()
        self.parent = array("q")
        self.via = array("I")
        self.depth_of = array("I")
        self.extra_src = array("I")
        self.extra_dst = array("I")
        self.extra_act = array("I")

    @classmethod
    def of_snapshot(cls, snap: Snapshot) -> "Visited":
        """A checkpoint's visited set (its arrays, which the exploration goes on filling)."""
        out = cls.__new__(cls)
        out.index = FingerprintIndex.from_fps(snap.fps)
        out.parent, out.via, out.depth_of = snap.parent, snap.via, snap.depth_of
        out.extra_src, out.extra_dst, out.extra_act = snap.extra_src, snap.extra_dst, snap.extra_act
        return out

    def add(self, fp: int, p: int, a: int, d: int) -> int | None:
        """Store a state not seen before (its index), or None if it was."""
        if self.index.get(fp) is not None:
            return None
        i = len(self.parent)
        self.index.add(fp, i)
        self.parent.append(p)
        self.via.append(a)
        self.depth_of.append(d)
        return i

    def snapshot(self, strategy: str, frontier: array, results: dict) -> Snapshot:
        fps = self.index.by_index(len(self.parent))
        return Snapshot(strategy, fps, self.parent, self.via, self.depth_of, self.extra_src, self.extra_dst, self.extra_act, frontier, results)

    def nbytes(self) -> int:
        """Everything the visited set holds per state: the fingerprint index (table, keys,
        values) and the parent / action / depth arrays and non-tree edges."""
        total = self.index.nbytes()
        for arr in (self.parent, self.via, self.depth_of, self.extra_src, self.extra_dst, self.extra_act):
            total += arr.buffer_info()[1] * arr.itemsize + 64
        return total


def _same(s: Any) -> Any:
    return s


def explore(system: TransitionSystem, options: ExploreOptions = ExploreOptions(), visitor: ExploreVisitor | None = None) -> ExploreResult:
    """Explore `system` breadth or depth first as `options` say (:class:`ExploreOptions`),
    telling `visitor` (:class:`ExploreVisitor`; None: nobody) what happens on the way."""
    visitor = visitor or _NOBODY
    strategy, bounds = options.strategy, options.bounds
    res = ExploreResult(status="pass", strategy=strategy)
    res.goals = {g: None for g in options.goals}
    # (a resumed exploration records no graph: the states explored before the checkpoint are not in it)
    graph = res.graph = None if options.record_graph is None or options.resume is not None else GraphRecord(options.record_graph)
    t0 = time.monotonic()
    deadline = options.deadline(t0)
    pack = options.pack or _same
    unpack = options.unpack or _same
    frontier: Any = deque()  # (packed state, index, depth)
    if options.resume is None:
        visited, depth_bound_hit = Visited(), False
    else:
        visited, depth_bound_hit = _resume(system, options, res, frontier, pack)
    record = _recorder(res, visited, visitor)
    if options.resume is None:
        _start(system, visited, record, res, graph, frontier, pack)

    def snapshot() -> Snapshot:
        results = _results_data(res, depth_bound_hit)
        kept = getattr(system, "checkpoint_state", None)  # what the system gathered itself (plain JSON data)
        if callable(kept):
            results["system"] = kept()
        return visited.snapshot(strategy, array("Q", (i for _s, i, _d in frontier)), results)

    index, parent, via, depth_of = visited.index, visited.parent, visited.via, visited.depth_of
    extra_src, extra_dst, extra_act = visited.extra_src, visited.extra_dst, visited.extra_act
    pop = frontier.popleft if strategy == "bfs" else frontier.pop
    put_back = frontier.appendleft if strategy == "bfs" else frontier.append
    chores = StatePoll(MemoryWatch.of_run(options.memory_limit), CheckpointClock.of(options, t0), lambda: visitor.on_checkpoint(snapshot()))
    on_progress = visitor.on_progress
    stop_on_violation, stop = options.stop_on_violation, options.stop
    abandoned = False  # an overdue stop cut a state short (engines/faults.py): not resumable
    arm(True)
    try:
        while frontier:
            if stop_on_violation and res.violations:
                break
            why = stop_reason(bounds, len(parent), deadline, stop)
            if why is None:
                why = chores()
            if why is not None:
                res.bound_hit = why
                break
            s, i, d = pop()
            s = unpack(s)
            on_progress(len(parent), d, len(frontier))
            res.max_depth = max(res.max_depth, d)
            try:
                terminal = system.is_terminal(s)
            except SystemFault as f:
                record(FAULT, f"{f.kind}: {f.message} (asking whether the state is terminal)", i, "fault")
                continue
            if terminal:
                res.terminal_states += 1
                continue
            try:
                acts = system.actions(s)
            except SystemFault as f:
                record(FAULT, f"{f.kind}: {f.message} (listing the legal actions)", i, "fault")
                continue
            if bounds.max_states is not None and len(parent) + len(acts) > bounds.max_states and acts:
                # expanding it could store more states than --max-states allows: stop before it (it
                # goes back to the frontier unjudged, so a resume expands it as if never stopped)
                put_back((pack(s), i, d))
                res.bound_hit = f"max states ({bounds.max_states})"
                break
            for prop, verdict in system.check_actions(s, acts):
                record(prop, verdict, i, "actions")
            record(DEADLOCK, True if acts else "a non-terminal state offers no action", i, "deadlock")
            if not acts:
                continue
            if bounds.max_depth is not None and d >= bounds.max_depth:
                depth_bound_hit = True
                continue
            for ai, a in enumerate(acts):
                check_stop()  # an overdue stop leaves a state of many actions at once
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
                seen = index.get(fp2)
                if seen is None:
                    j = len(parent)
                    index.add(fp2, j)
                    parent.append(i)
                    via.append(ai)
                    depth_of.append(d + 1)
                else:
                    j = None
                if graph is not None:
                    if j is not None:
                        graph.add_state(j, s2)
                    graph.add_edge(i, j if seen is None else seen, system.action_name(a))
                if j is None:
                    extra_src.append(i)
                    extra_dst.append(seen)
                    extra_act.append(ai)
                    continue
                for g in system.goals_reached(s2, info):
                    if g in res.goals and res.goals[g] is None:
                        res.goals[g], res.goal_initial[g] = _trace(parent, via, j)
                for prop, verdict in system.check_state(s2):
                    record(prop, verdict, j, "state")
                frontier.append((pack(s2), j, d + 1))
    except Abandoned:
        abandoned = True
        res.bound_hit = (stop() if stop is not None else None) or "interrupted"
    finally:
        arm(False)
    if res.bound_hit is None and depth_bound_hit:
        res.bound_hit = f"max depth ({bounds.max_depth})"
    exhaustive = not frontier
    res.resumable = bool(frontier) and res.bound_hit is not None and not (stop_on_violation and res.violations) and not abandoned
    if options.checkpoint and res.resumable:
        visitor.on_checkpoint(snapshot())
    frontier.clear()  # free the frontier's states before counterexamples are rebuilt
    gc_release()
    visitor.on_done(len(parent), res.max_depth)
    res.states = len(parent)
    res.generated = res.transitions + _roots(parent)
    if res.bound_hit is None:
        _check_cycle(res, parent, via, depth_of if strategy == "bfs" else None, extra_src, extra_dst, extra_act)
    res.props.setdefault(DEADLOCK, PropStats())
    res.props.setdefault(CYCLE, PropStats())
    res.props.setdefault(FAULT, PropStats())
    if graph is not None:
        graph.finish(depth_of, exhaustive)
    res.elapsed = time.monotonic() - t0
    if options.measure_memory:
        res.visited_bytes = visited.nbytes()
    _set_status(res)
    return res


def _recorder(res: ExploreResult, visited: Visited, visitor: ExploreVisitor) -> Callable[..., None]:
    """``record(prop, verdict, idx, at, last_action=None)``: a property's verdict at state `idx`
    (None: its situation did not arise; True: held; else the violation's message) counted in
    ``res.props``; the first violation of each (property, Finding key) kept with its trace
    (plus `last_action` for a transition's) and told to the visitor."""
    seen_violation: set[tuple[str, Any]] = {(v.prop, v.key) for v in res.violations}
    parent, via = visited.parent, visited.via
    on_violation = visitor.on_violation

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
        on_violation(res.violations[-1])

    return record


def _start(system: TransitionSystem, visited: Visited, record: Callable[..., None], res: ExploreResult, graph: GraphRecord | None, frontier: deque, pack: Callable[[Any], Any]) -> None:
    """The initial states: stored, judged, checked for goals and put on the frontier (a system
    that cannot give them: an ENGINE-FAULT at a state 0 with no fingerprint)."""
    try:
        initial = list(system.initial_states())
    except SystemFault as f:
        initial = []
        visited.parent.append(-1)
        visited.via.append(0)
        visited.depth_of.append(0)
        record(FAULT, f"{f.kind}: {f.message} (giving the initial state)", 0, "fault")
    for k, s0 in enumerate(initial):
        i = visited.add(system.fingerprint(s0), -1 - k, 0, 0)
        if i is not None:
            if graph is not None:
                graph.add_state(i, s0)
            frontier.append((pack(s0), i, 0))
            for prop, verdict in system.check_state(s0):
                record(prop, verdict, i, "state")
            for g in system.goals_reached(s0, None):
                if g in res.goals and res.goals[g] is None:
                    res.goals[g] = []
                    res.goal_initial[g] = k


def _resume(system: TransitionSystem, options: ExploreOptions, res: ExploreResult, frontier: deque, pack: Callable[[Any], Any]) -> tuple[Visited, bool]:
    """A checkpoint taken up again: its visited set, its results restored into `res`, what the
    system kept itself, and its frontier's states re-created (the visited set, and whether the
    depth bound was hit before)."""
    snap = options.resume
    assert snap is not None
    if snap.strategy != options.strategy:
        raise ResumeMismatch(f"the checkpoint was made with --strategy {snap.strategy}, not {options.strategy}")
    visited = Visited.of_snapshot(snap)
    depth_bound_hit = _restore_results(res, snap.results)
    restore = getattr(system, "restore_checkpoint_state", None)
    if callable(restore) and "system" in snap.results:  # e.g. the notes of states judged before the checkpoint
        restore(snap.results["system"])
    try:
        rebuilt = _rebuild_frontier(system, snap)
    except SystemFault as f:
        raise ResumeMismatch(f"the engine failed while re-creating the checkpointed states: {f.kind}: {f.message}") from None
    for i, s in rebuilt:
        frontier.append((pack(s), i, visited.depth_of[i]))
    return visited, depth_bound_hit


def _check_cycle(res: ExploreResult, parent: array, via: array, bfs_depth: array | None, extra_src: array, extra_dst: array, extra_act: array) -> None:
    """The CYCLE property on a complete state graph (its counterexample: a shortest path to the
    cycle, then once round it)."""
    cyc = _find_cycle(parent, extra_src, extra_dst, bfs_depth)
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


def _set_status(res: ExploreResult) -> None:
    if res.violations:
        res.status = "fail"
    elif res.bound_hit is not None:
        res.status = "inconclusive"
    elif any(v is None for v in res.goals.values()):
        res.status = "fail"


def stop_reason(bounds: Bounds, states: int, deadline: float | None, stop: Callable[[], str | None] | None) -> str | None:
    """Why an exploration must stop before it expands more (a bound hit, a signal), or None:
    the checks every explorer makes before each expansion (sequential) or chunk (parallel)."""
    if bounds.max_states is not None and states >= bounds.max_states:
        return f"max states ({bounds.max_states})"
    if deadline is not None and time.monotonic() > deadline:
        return f"time limit ({bounds.timeout:g} s)"
    if stop is not None:
        return stop()
    return None


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _results_data(res: ExploreResult, depth_bound_hit: bool) -> dict:
    """The results gathered so far, as plain JSON data (a checkpoint's header)."""
    return {
        "transitions": res.transitions,
        "max_depth": res.max_depth,
        "terminal_states": res.terminal_states,
        "depth_bound_hit": depth_bound_hit,
        "action_counts": dict(res.action_counts),
        "props": {k: [v.checked, v.violations] for k, v in res.props.items()},
        "violations": [
            {"prop": v.prop, "message": v.message, "trace": list(v.trace), "initial": v.initial, "depth": v.depth, "at": v.at, "key": _key_json(v.key)}
            for v in res.violations
        ],
        "goals": {k: v for k, v in res.goals.items()},
        "goal_initial": dict(res.goal_initial),
    }


def _restore_results(res: ExploreResult, data: dict) -> bool:
    res.transitions = data["transitions"]
    res.max_depth = data["max_depth"]
    res.terminal_states = data["terminal_states"]
    res.action_counts = dict(data["action_counts"])
    res.props = {k: PropStats(c, v) for k, (c, v) in data["props"].items()}
    res.violations = [
        Violation(v["prop"], v["message"], list(v["trace"]), v["initial"], v["depth"], v["at"], key=_key_py(v.get("key")))
        for v in data["violations"]
    ]
    for g, tr in data["goals"].items():
        if g in res.goals:
            res.goals[g] = tr
    res.goal_initial = dict(data["goal_initial"])
    return bool(data["depth_bound_hit"])


def _rebuild_frontier(system: TransitionSystem, snap: Snapshot) -> list[tuple[int, Any]]:
    """The frontier's states, re-executed from the initial states along the tree paths to them
    (each tree edge on the way is applied once); each must give its recorded fingerprint."""
    parent, via = snap.parent, snap.via
    need: set[int] = set()
    for i in snap.frontier:
        while i not in need:
            need.add(i)
            if parent[i] < 0:
                break
            i = parent[i]
    children: dict[int, list[int]] = {}
    roots = []
    for j in sorted(need):
        if parent[j] < 0:
            roots.append(j)
        else:
            children.setdefault(parent[j], []).append(j)
    wanted = set(snap.frontier)
    states: dict[int, Any] = {}
    initial = system.initial_states() if roots else []
    for r in roots:
        stack = [(r, initial[-1 - parent[r]])]
        while stack:
            i, s = stack.pop()
            if system.fingerprint(s) != snap.fps[i]:
                raise ResumeMismatch(f"state {i} of the checkpoint does not come out the same when replayed (another engine, board or model version?)")
            if i in wanted:
                states[i] = s
            kids = children.get(i)
            if kids:
                acts = system.actions(s)
                for j in kids:
                    if via[j] >= len(acts):
                        raise ResumeMismatch(f"state {i} of the checkpoint offers fewer actions when replayed")
                    s2, _info = system.step(s, acts[via[j]])
                    stack.append((j, s2))
    return [(i, states[i]) for i in snap.frontier]


def _key_json(key: Any) -> Any:
    """A Finding's key for the checkpoint's JSON header (tuples become lists)."""
    return list(key) if isinstance(key, tuple) else key


def _key_py(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


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


def _roots(parent: array) -> int:
    """How many states are initial ones (a negative parent)."""
    if not parent:
        return 0
    return int(np.count_nonzero(np.frombuffer(parent, dtype=np.int64) < 0))


def _find_cycle(parent: array, extra_src: array, extra_dst: array, bfs_depth: array | None = None) -> list[int] | None:
    """Find a cycle: its states [v, ..., u] in order, each reached from the one before by an
    edge, and u -> v closing it (v is on the depth-first path to u).

    The successors of a state are its tree children in index order, then its non-tree edges in
    the order they were found; the depth-first search goes through the roots in index order.
    The successor lists are flat arrays (CSR), a few bytes per edge. With BFS depths
    (`bfs_depth`) a graph without a non-tree edge that goes no deeper is acyclic (every other
    edge goes one layer down), which is decided without the search."""
    n = len(parent)
    if not extra_src:
        return None  # the tree edges alone cannot form a cycle
    par = np.frombuffer(parent, dtype=np.int64)
    es = np.frombuffer(extra_src, dtype=np.uint32).astype(np.int64)
    ed = np.frombuffer(extra_dst, dtype=np.uint32).astype(np.int64)
    if bfs_depth is not None:
        dep = np.frombuffer(bfs_depth, dtype=np.uint32)
        if not np.any(dep[ed] <= dep[es]):
            return None
    tree = np.flatnonzero(par >= 0)
    src = np.concatenate([par[tree], es])
    dst = np.concatenate([tree, ed])
    order = np.argsort(src, kind="stable")  # tree children (by index) before non-tree edges (in order)
    targets = array("Q", dst[order].astype(np.uint64).tobytes())
    starts = array("Q", np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))]).astype(np.uint64).tobytes())
    del src, dst, order, tree
    color = bytearray(n)  # 0 white, 1 grey, 2 black
    for root in np.flatnonzero(par < 0).tolist():
        if color[root]:
            continue
        nodes = [root]
        pos = [starts[root]]
        color[root] = 1
        while nodes:
            node = nodes[-1]
            k = pos[-1]
            if k == starts[node + 1]:
                color[node] = 2
                nodes.pop()
                pos.pop()
                continue
            pos[-1] = k + 1
            nxt = targets[k]
            c = color[nxt]
            if c == 1:
                return nodes[nodes.index(nxt) :]
            if c == 0:
                color[nxt] = 1
                nodes.append(nxt)
                pos.append(starts[nxt])
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


__all__ = [
    "Bounds",
    "Callbacks",
    "ExploreOptions",
    "ExploreResult",
    "ExploreVisitor",
    "Finding",
    "FingerprintIndex",
    "MemoryWatch",
    "Progress",
    "ResumeMismatch",
    "Snapshot",
    "TransitionSystem",
    "Violation",
    "collision_probability",
    "current_rss",
    "explore",
    "tree_rss",
    "peak_rss",
    "replay_trace",
]
