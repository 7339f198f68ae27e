"""Breadth-first exploration of one transition system by several workers: processes of this
machine over pipes (the default), or Ray actors (``transport=``; explorers/cluster.py,
``--cluster``): one algorithm, two transports.

API (the contract with the CLI; generic: nothing here knows Yu-Gi-Oh!)::

    explore_parallel(
        make_system,            # Callable[[], TransitionSystem], picklable: a top-level function
                                # or functools.partial(top_level_fn, plain-data args...)
        workers,                # int >= 1: worker processes (1 is allowed: useful to compare)
        options=ExploreOptions(),  # core.ExploreOptions, as explore() takes it: strategy "bfs"
                                # only (ValueError otherwise: DFS is sequential), bounds (see
                                # "Bounds" below), goals, stop_on_violation, measure_memory
                                # (res.visited_bytes: the visited sets of all workers together),
                                # stop (polled between chunks: SIGINT etc.), memory_limit (the
                                # parent and all workers together, RSS), checkpoint /
                                # checkpoint_every (between chunks, and when a bound stops the
                                # run), resume (a core.Snapshot of a BFS run, made by explore()
                                # or explore_parallel(), whatever the worker count)
        visitor=None,           # a core.ExploreVisitor, called in this (parent) process:
                                # on_progress after each chunk, on_violation as each distinct
                                # violation is settled (after its chunk), on_checkpoint,
                                # on_commit(states, pool) after each chunk is committed (tests),
                                # on_done
        *,
        transport=None,         # the workers' pool class: None, worker processes over pipes
                                # (_Pool); the caller passes e.g. Ray actors (explorers/
                                # cluster.py ActorPool, which ``--cluster`` selects)
        finish=None,            # Callable[[TransitionSystem], Any], picklable: each worker calls
                                # it on its system at the end; the answers are in
                                # res.worker_info (a list, by worker), e.g. to merge not_judged
        chunk=None,             # frontier states per round (default chunk_size(workers))
    ) -> ExploreResult          # the same ExploreResult as core.explore()

It runs a :class:`Coordinator`, whose methods are the rounds below and whose attributes are the
exploration's state between chunks.

Each worker process calls ``make_system()`` once and builds its own engine and system. The
parent builds none: traces come back as action indices (``Violation.trace``, ``res.goals``), so
the caller replays them on its own system (``core.replay_trace``), as after ``explore()``.
A worker that fails to build its system or crashes raises :class:`WorkerError` in the parent
(with the worker's traceback as text). States must be picklable and self-contained (they travel
between worker processes; pickles are only ever exchanged between our own processes).

Lost workers. Each chunk is a transaction: its results enter the exploration (the commit) only
once every worker has answered its last round. A worker that is gone (:class:`WorkerLost`: its
process killed, its node removed, its actor dead) costs the chunk in progress and nothing else:
the pool is closed, the exploration goes back to the last commit, and new workers restore it
from what this process keeps (each owner's committed records, as the owner sent them, one set
of arrays per chunk; the claimed states; the workers' ``finish`` answers so far), each loading
the virtual shards it owns, one of them re-creating the frontier from the initial states (as a
resumed checkpoint); the chunk is then expanded again, deterministically. So no state is
counted twice or skipped, and the result is the one an uninterrupted run gives
(``res.lost_workers`` says where each loss was). A loss before the first commit starts again
from the initial states; :data:`RECOVERIES` losses in a row at one chunk raise
:class:`WorkerError` naming the last one.

Systems that judge states inside a transition (``claims(info)``: explorers/reduce.py, whose
macro transitions judge the forced states they fold) give ``(fingerprint, start, end)`` slices of
the transition's verdicts per such state; each is counted once, at its first judging in the
sequential order (the owner of its fingerprint decides, as for new states), and ``res.claimed``
is how many there were. The claimed set is not part of a checkpoint: the CLI explores reduced
boards without checkpoints.

Not supported (ValueError): ``record_graph``, ``pack`` / ``unpack`` and ``strategy="dfs"``; the
caller runs ``core.explore`` for those. A checkpoint holds the same data as explore()'s (the file format does
not change: the owners' records assembled by index), so either explorer resumes the other's.

Results are byte-identical whatever the worker count, and on an exhaustive run identical to
``core.explore(system, "bfs", ...)`` (same states, transitions, stats, violations and traces).

How it works
------------
Breadth-first search in *chunks*: the frontier is a run of state indices in BFS order; each
chunk is its next :func:`chunk_size` states (:data:`CHUNK`, more with many workers). Expanding the
states of a chunk in order and appending the new ones at the end is exactly FIFO order, so a
chunked run numbers the states as the sequential BFS does. The visited set is cut into
:data:`SHARDS` virtual shards by fingerprint (``fp % SHARDS``), each owned by one worker
(:func:`shard_owners`); the owner of a state keeps its record: its index, parent, action and
depth, and the non-tree edges into it (as LTSmin's distributed backend does). Per chunk, four
rounds (the parent coordinates; what one worker sends another it routes as it is, reading
none of it, and with Ray actors only a reference passes through it):

1. *expand*: each worker expands the states of the chunk it holds (terminal?, actions, action
   checks, deadlock, then each action: step, transition checks, the child's fingerprint), keeps
   the children and sends (fingerprint, parent index, action index) of each to
   the owner of the fingerprint. A worker done while another is busy gets the later half of
   what that one has left (*work stealing*, :meth:`_Pool.expand`; the busy worker polls its pipe
   between states): the states such a worker expands may come before its own in the
   sequential order, so the child it keeps per fingerprint is its least (parent, action)
   discovery, not its first, and a system that remembers what it met is told
   (``in_order(False)``: explorers/reduce.py then judges afresh what was judged in this chunk,
   ``chunk_begins()`` marking where the chunk began);
2. *decide*: each owner says which of its fingerprints are new and which discovery of each wins:
   the minimum (parent index, action index), as in the sequential order; the others are
   non-tree edges into its states (the parents' depths come from the first index of each depth,
   which the parent sends). Each winner's key (parent, action, discoverer) goes to
   the *ranker* of its parent: the chunk's parents cut into n equal index ranges;
3. *rank*: each ranker numbers the winners of its range by (parent, action) from 0 and answers
   how many there are (by depth). The parent prefix-sums these counts (one per ranker: O(workers),
   whatever the chunk's size) into each range's first index, so a new state's index is
   ``offset[ranker] + its number``, the sequential one, whatever the worker count;
4. *finalize*: each owner records its new states under their indices; each discoverer checks the
   goals and the state properties of the children that won, and keeps them, but hands some over
   (pickled, between our own processes only) to workers that found fewer (:func:`_balance`, from
   the counts alone: who gives how many to whom), so that the work stays balanced while few
   states travel.

A trace (a counterexample, a goal's witness) is rebuilt from the owners' tree links, one round
of requests per depth walked for all the traces of a chunk together (``links``); the cycle
search runs on the assembled graph only when an owner saw a non-tree edge that goes no deeper
than its source (otherwise the graph is acyclic, as ``core._find_cycle`` decides). The parent
keeps counts, the first index of each depth, and each owner's committed arrays as the owner
sent them (handed back to a lost owner's replacement, assembled into a checkpoint): it never
reads or writes a record per state.

Every record (a property verdict, a goal, the first use of an action kind or of a property)
carries its place in the sequential order: (expanded state's index, phase, action index,
sub-phase, position in its list), with the phases: terminal / actions faults, action checks,
deadlock, then per action the step, its transition checks, the new child's goals and state
checks. The parent keeps the first violation per (property, Finding.key) and the first witness
per goal in that order, so results do not depend on the worker count or on timing.

Processes: the ``forkserver`` start method on POSIX (``spawn`` elsewhere): the workers start
from a clean interpreter, not from a copy of the parent, which may hold threads (engine pipes)
and a large heap; ``make_system`` is pickled to them. SIGINT is ignored by the workers: the
caller's ``stop`` decides, and the parent stops them at the end (a worker also exits when its
pipe closes).

A stop that is overdue (issue 33): the parent waits for its workers in slices of
:data:`WAIT_SLICE` seconds (``faults.check_stop`` between them). When a stop was asked for and
not acted on within ``faults.STOP_GRACE`` (a worker's state takes minutes: a hostile engine's
10,000 slow actions, a hung call), the chunk in progress is abandoned: its workers are killed and
the exploration ends at the last commit (:meth:`Coordinator._abandon`), with every violation
settled so far, ``bound_hit`` the stop's reason, not resumable. Workers lost while a stop is
asked for (a signal to the whole process group) end it the same way, never a recovery.

Bounds: ``max_states``, ``timeout``, ``stop`` and ``memory_limit`` are looked at between chunks,
so an exploration stops at a chunk boundary (it may pass ``max_states`` by the children of one
chunk), identically for every worker count (the timeout and signals aside, which are not
deterministic anyway). With ``stop_on_violation`` it stops after the chunk in which the first
violation was found; its violations are those the sequential run reports (the ones found while
expanding that same state), but the counts cover the whole chunk.

Engines whose answers depend on more than the state (an engine client that remembers states it
has met, to detect non-determinism) only see the states their worker handles.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import time
import traceback
from array import array
from collections import deque
from multiprocessing.reduction import ForkingPickler as _ForkingPickler
from typing import Any, Callable, Sequence

import numpy as np

from bpcheck.engines.faults import Abandoned, SystemFault, arm, check_stop
from bpcheck.explorers.core import (
    CYCLE,
    DEADLOCK,
    FAULT,
    GC_SETTLE_STATES,
    CheckpointClock,
    ExploreOptions,
    ExploreResult,
    ExploreVisitor,
    FingerprintIndex,
    MemoryWatch,
    PropStats,
    ResumeMismatch,
    Snapshot,
    TransitionSystem,
    Violation,
    _check_cycle,
    _rebuild_frontier,
    _restore_results,
    _results_data,
    _set_status,
    current_rss,
    gc_settle,
    stop_reason,
    tree_rss,
)

CHUNK = 2048  # frontier states expanded per round, up to CHUNK_WORKERS workers
# With more workers a chunk grows (CHUNK_PER_WORKER states per worker): each round costs the
# coordinator a request and a reply per worker, which a chunk of 2,048 states spread over 32
# workers (64 states each) would not pay back (docs/performance.md, issue 23). The chunk size
# never changes a result.
CHUNK_PER_WORKER = 512
CHUNK_WORKERS = CHUNK // CHUNK_PER_WORKER


def chunk_size(workers: int) -> int:
    """Frontier states per round for this many workers."""
    return max(CHUNK, CHUNK_PER_WORKER * workers)
MIN_STEAL = 8  # a worker hands over half of what it has left of a chunk when at least this many are left
STEAL = True  # an idle worker takes over states of a busy one within a chunk (False: benchmarks)
SLACK = 16  # a worker keeps the new states it found up to its share of them + 1/SLACK of them (_balance)
BALANCE_BY_COST = True  # shares of a chunk by each worker's recent CPU per state (False: equal shares; benchmarks)
# The visited set is cut into SHARDS virtual shards by fingerprint (fp mod SHARDS), and each
# shard is owned by one worker (shard s by worker s mod n). Which worker owns a shard never
# changes a result; a replacement worker takes over whole shards (explorers/cluster.py).
SHARDS = 256
WAIT_SLICE = 0.1  # seconds: the coordinator waits for its workers in slices, looking for an overdue stop between them
RECOVERIES = 3  # workers lost in a row at one chunk (no commit in between) before the run gives up (exit 4)


def shard_owners(n: int) -> np.ndarray:
    """The owner of each virtual shard, for n workers."""
    return (np.arange(SHARDS) % n).astype(np.int64)


def owners_of(fps: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """The worker owning each fingerprint (a uint64 array)."""
    return owners[(fps & np.uint64(SHARDS - 1)).astype(np.int64)]


class WorkerError(RuntimeError):
    """A worker process failed (building its system, or a bug): its traceback as text."""


class WorkerLost(WorkerError):
    """A worker is gone (its process killed, its node removed): not a bug of its task. The
    coordinator takes the exploration back to the last chunk committed and goes on with new
    workers (at most :data:`RECOVERIES` times in a row without a commit in between)."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where  # the worker's node or process, for the final error


def _context():
    if sys.platform != "win32" and "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["bpcheck.explorers.parallel"])  # numpy and the explorer, imported once
        return ctx
    return multiprocessing.get_context("spawn")  # pragma: no cover - not POSIX


# =============================================================================================
# The worker


class _Worker:
    def __init__(self, system: TransitionSystem, wid: int, n: int, goals: Sequence[str]) -> None:
        self.system = system
        self.wid = wid
        self.n = n
        self.owners = shard_owners(n).tolist()  # shard -> owning worker
        self.owner_map = shard_owners(n)
        self.goals = set(goals)
        self.index = FingerprintIndex()  # the fingerprints this worker owns -> state index
        self.held: deque = deque()  # (index, depth, state), index order: frontier states held here
        self.fresh: list = []  # states won in the last chunk, before the inbox is merged in
        self.pending: dict[tuple[int, int], tuple[Any, Any, int]] = {}  # (parent, action) -> child
        # The records of the states this worker owns (their fingerprints fall in its shards), in
        # index order: parent (or -1 - the initial state's number), action, depth; and the
        # non-tree edges into them (source, destination, action). Traces are rebuilt from them
        # (``links``), the cycle check reads them at the end; the coordinator keeps no record
        # per state (docs/checking.md, "Parallel checking").
        self.t_idx = array("q")
        self.t_par = array("q")
        self.t_via = array("I")
        self.t_dep = array("I")
        self.e_src = array("I")
        self.e_dst = array("I")
        self.e_act = array("I")
        self.back = False  # a non-tree edge into an owned state that goes no deeper: a cycle is possible
        self.p_win: tuple | None = None  # the owner's winners of the last decide: fps, parents, actions, depths
        self.p_sent: list = []  # their positions sent to each ranker (decide), by ranker
        self.r_keys: tuple | None = None  # as a ranker: the winners ranked (rank), for finalize
        self.p_edges: tuple | None = None  # its other discoveries: sources, destinations (coded), actions, source depths
        # Claims (a system with ``claims(info)``: explorers/reduce.py): states judged inside a
        # transition (not stored), whose verdicts count once, at their first judging in the
        # sequential order. The fingerprints claimed that this worker owns:
        self.claimed = FingerprintIndex()
        self.claims_of = getattr(system, "claims", None)
        # What a system learns that spares the others work (the reduction's memo of forced
        # states: a chain that meets one stops walking): ``share()`` what it learned since the
        # last call, ``learn(x)`` what another worker shared. It never changes a result.
        self.share = getattr(system, "share", None)
        self.learn = getattr(system, "learn", None)
        self.chunk_begins = getattr(system, "chunk_begins", None)
        # What of a transition's info the goals need (``slim_info(info)``): the children of a
        # chunk wait for the owners' decision with it (a reduced transition's info holds every
        # state it passed through).
        self.slim = getattr(system, "slim_info", None)
        self.claim_pending: dict[tuple[int, int, int], tuple[int, list]] = {}  # (state, action, claim no.) -> (start, verdicts)
        self.first: dict[int, tuple[int, int]] = {}
        self.conn: Any = None  # the pipe to the parent, polled while expanding (a request to hand over states)
        self.report_info = False  # finalize() also answers finish(system) (a transport that recovers lost workers)
        self.seen_viol: set = set()
        self.seen_prop: set = set()
        self.seen_kind: set = set()
        self.seen_goal: set = set()
        self._reset()

    def _reset(self) -> None:
        """Start a chunk. The first occurrences (of a violation per key, a property, an action
        kind, a goal) are kept per chunk as the minimum by order key, since a worker meets the
        records of one chunk in two rounds (expand, finalize), not in order; only keys reported
        in earlier chunks are left out."""
        self.out: dict[str, Any] = {"transitions": 0, "terminal": 0, "depth_hit": False, "kinds": {}, "props": {}}
        self.props = self.out["props"]
        self.c_viol: dict = {}  # (prop, fkey) -> (key, prop, fkey, message, at, state index, last action)
        self.c_prop: dict = {}  # prop -> key
        self.c_kind: dict = {}  # kind -> key
        self.c_goal: dict = {}  # goal -> (key, state index)

    def _take(self) -> dict:
        out = self.out
        out["violations"] = list(self.c_viol.values())
        out["first_props"] = [(k, p) for p, k in self.c_prop.items()]
        out["first_kinds"] = [(k, p) for p, k in self.c_kind.items()]
        out["goals"] = [(k, g, j) for g, (k, j) in self.c_goal.items()]
        self.seen_viol.update(self.c_viol)
        self.seen_prop.update(self.c_prop)
        self.seen_kind.update(self.c_kind)
        self.seen_goal.update(self.c_goal)
        out["rss"] = current_rss()
        self._reset()
        return out

    def record(self, prop: str, verdict: Any, i: int, ph: int, ai: int, sub: int, k: int, idx: int, at: str, last: int | None = None) -> None:
        """Count a verdict; (i, ph, ai, sub, k) is its place in the sequential order, made a
        tuple only when it is compared (a tuple per verdict made the cyclic GC run 3x as often)."""
        if verdict is None:
            return
        st = self.props.get(prop)
        if st is None:
            st = self.props[prop] = [0, 0]
        st[0] += 1
        if verdict is True and prop in self.seen_prop:
            return
        key = (i, ph, ai, sub, k)
        if prop not in self.seen_prop:
            kk = self.c_prop.get(prop)
            if kk is None or key < kk:
                self.c_prop[prop] = key
        if verdict is True:
            return
        st[1] += 1
        vk = (prop, getattr(verdict, "key", None))
        if vk in self.seen_viol:
            return
        old = self.c_viol.get(vk)
        if old is None or key < old[0]:
            self.c_viol[vk] = (key, prop, vk[1], str(verdict), at, idx, last)

    # -- round 1 ------------------------------------------------------------------------------

    def initial(self) -> dict:
        fps, ais = [], []
        try:
            initial = list(self.system.initial_states())
        except SystemFault as f:
            return {"initial_fault": f"{f.kind}: {f.message} (giving the initial state)"}
        for k, s0 in enumerate(initial):
            fps.append(self.system.fingerprint(s0))
            ais.append(k)
            self.pending[(-1, k)] = (s0, None, 0)
        return {"children": self._by_owner((np.array(fps, np.uint64), np.full(len(fps), -1, np.int64), np.array(ais, np.int64)))}

    def _by_owner(self, arrays: tuple) -> dict[int, tuple]:
        """Arrays whose first is fingerprints, split by the owner of each fingerprint."""
        fps = arrays[0]
        if not fps.size:
            return {}
        own = owners_of(fps, self.owner_map)
        out = {}
        for o in np.unique(own).tolist():
            m = own == o
            out[o] = tuple(a[m] for a in arrays)
        return out

    def expand(self, hi: int, max_depth: int | None, inbox: list[bytes], learned: list | None = None) -> dict:
        """Round 1 of a chunk: expand the held states below index `hi`."""
        if learned and self.learn is not None:
            for x in learned:
                self.learn(x)
        if self.chunk_begins is not None:
            self.chunk_begins()  # after learning: the reduction's memo of earlier chunks (Reduced.in_order)
        fresh = self.fresh
        for blob in inbox:
            fresh.extend(pickle.loads(blob))
        if fresh:
            fresh.sort(key=lambda t: t[0])
            self.held.extend(fresh)
            self.fresh = []
        gc_settle()  # what is held now lives long: out of the cyclic GC's scans (core.gc_settle)
        self.first = {}  # fingerprint -> (state, action) of the child kept for it in this chunk
        return self._expand(self.held, hi, max_depth)

    def expand_more(self, blob: bytes, max_depth: int | None) -> dict:
        """Still round 1: expand states another worker of the chunk handed over (stealing).
        They may come before states this worker has expanded in this chunk: a system that
        remembers what it met (``in_order``: the reduction's memo) is told so."""
        in_order = getattr(self.system, "in_order", None)
        if in_order is not None:
            in_order(False)
        try:
            return self._expand(deque(pickle.loads(blob)), None, max_depth)
        finally:
            if in_order is not None:
                in_order(True)

    def _give(self, source: deque, hi: int | None) -> None:
        """The parent asks for work for an idle worker: hand over the later half of the states
        left to expand in this chunk (none if fewer than :data:`MIN_STEAL` are left)."""
        msg = self.conn.recv()
        if msg[0] != "steal":  # pragma: no cover - a bug in the parent
            raise ValueError(f"request {msg[0]!r} while expanding")
        left = []
        while source and (hi is None or source[0][0] < hi):
            left.append(source.popleft())
        give = left[(len(left) + 1) // 2 :] if len(left) >= MIN_STEAL else []
        keep = left[: len(left) - len(give)]
        source.extendleft(reversed(keep))
        self.conn.send(("steal", pickle.dumps(give, protocol=pickle.HIGHEST_PROTOCOL) if give else None, len(give)))

    def _expand(self, source: deque, hi: int | None, max_depth: int | None) -> dict:
        """Expand the states of `source` (index order) below `hi` (None: all). Results never
        depend on which worker expands a state: every record carries its sequential place, and
        the child kept for a fingerprint is this worker's least (state, action) discovery."""
        cpu0 = time.process_time()
        expanded = 0
        system, record, out = self.system, self.record, self.out
        fps: list[int] = []
        parents: list[int] = []
        ais: list[int] = []
        c_fps: list[int] = []  # the claims: fingerprint, expanded state, action, claim number
        c_par: list[int] = []
        c_ai: list[int] = []
        c_no: list[int] = []
        claims_of = self.claims_of
        claim_pending = self.claim_pending
        slim = self.slim
        pending, index, owners, wid = self.pending, self.index, self.owners, self.wid
        n = self.n
        first = self.first
        handed = hi is None  # states handed over: not in index order after this worker's own
        poll = self.conn.poll if self.conn is not None and n > 1 else None
        kinds = out["kinds"]
        while source and (hi is None or source[0][0] < hi):
            if poll is not None and poll():
                self._give(source, hi)
                if not source or (hi is not None and source[0][0] >= hi):
                    break
            i, d, s = source.popleft()
            expanded += 1
            if not expanded % GC_SETTLE_STATES:
                gc_settle()
            try:
                terminal = system.is_terminal(s)
            except SystemFault as f:
                record(FAULT, f"{f.kind}: {f.message} (asking whether the state is terminal)", i, 0, 0, 0, 0, i, "fault")
                continue
            if terminal:
                out["terminal"] += 1
                continue
            try:
                acts = system.actions(s)
            except SystemFault as f:
                record(FAULT, f"{f.kind}: {f.message} (listing the legal actions)", i, 0, 1, 0, 0, i, "fault")
                continue
            for k, (prop, verdict) in enumerate(system.check_actions(s, acts)):
                record(prop, verdict, i, 1, 0, 0, k, i, "actions")
            record(DEADLOCK, True if acts else "a non-terminal state offers no action", i, 2, 0, 0, 0, i, "deadlock")
            if not acts:
                continue
            if max_depth is not None and d >= max_depth:
                out["depth_hit"] = True
                continue
            for ai, a in enumerate(acts):
                try:
                    s2, info = system.step(s, a)
                except SystemFault as f:
                    record(FAULT, f"{f.kind}: {f.message} (applying {system.action_name(a)!r})", i, 3, ai, 0, 0, i, "fault", ai)
                    continue
                out["transitions"] += 1
                kind = system.action_kind(a)
                kinds[kind] = kinds.get(kind, 0) + 1
                if kind not in self.seen_kind:
                    kk = self.c_kind.get(kind)
                    if kk is None or (handed and (i, 3, ai, 0, 0) < kk):  # handed-over states may come before
                        self.c_kind[kind] = (i, 3, ai, 0, 0)
                vs = system.check_transition(s, a, info, s2)
                parts = claims_of(info) if claims_of is not None else None
                if parts:
                    # the transition's own verdicts now; each claimed state's once its owner says
                    # this is its first judging (finalize)
                    for k in range(parts[0][1]):
                        prop, verdict = vs[k]
                        record(prop, verdict, i, 3, ai, 1, k, i, "transition", ai)
                    for no, (cfp, start, end) in enumerate(parts):
                        c_fps.append(cfp)
                        c_par.append(i)
                        c_ai.append(ai)
                        c_no.append(no)
                        claim_pending[(i, ai, no)] = (start, vs[start:end])
                else:
                    for k, (prop, verdict) in enumerate(vs):
                        record(prop, verdict, i, 3, ai, 1, k, i, "transition", ai)
                fp2 = system.fingerprint(s2)
                fps.append(fp2)
                parents.append(i)
                ais.append(ai)
                # Keep the child for finalize only if it can win: this worker's least (state,
                # action) discovery of its fingerprint in the chunk (states are expanded in
                # index order, except those handed over), and not a state this worker owns
                # already (most children are known states: holding them all for the chunk made
                # the cyclic GC run three times as often)
                kept = first.get(fp2)
                if kept is None:
                    if not (owners[fp2 & (SHARDS - 1)] == wid and index.get(fp2) is not None):
                        first[fp2] = (i, ai)
                        pending[(i, ai)] = (s2, info if slim is None else slim(info), d + 1)
                elif (i, ai) < kept:
                    del pending[kept]
                    first[fp2] = (i, ai)
                    pending[(i, ai)] = (s2, info if slim is None else slim(info), d + 1)
        return {
            "children": self._by_owner((np.array(fps, np.uint64), np.array(parents, np.int64), np.array(ais, np.int64))),
            "claims": self._by_owner((np.array(c_fps, np.uint64), np.array(c_par, np.int64), np.array(c_ai, np.int64), np.array(c_no, np.int64))),
            "n_claims": len(c_fps),
            "rss": current_rss(),
            "work": (expanded, time.process_time() - cpu0),  # for the balance only: results never depend on it
            "share": self.share() if self.share is not None and self.n > 1 else None,
        }

    def rebuild(self, snap: Snapshot) -> Any:
        """Resuming: re-create the frontier states of a checkpoint (core._rebuild_frontier); keep
        this worker's share (state index modulo the worker count) and ship the others."""
        try:
            states = _rebuild_frontier(self.system, snap)
        except ResumeMismatch as e:
            return ("mismatch", str(e))
        except SystemFault as f:
            return ("mismatch", f"the engine failed while re-creating the checkpointed states: {f.kind}: {f.message}")
        outbox: dict[int, list] = {}
        for i, s in states:
            dest = i % self.n
            item = (i, snap.depth_of[i], s)
            if dest == self.wid:
                self.fresh.append(item)
            else:
                outbox.setdefault(dest, []).append(item)
        return ("ok", {dest: pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL) for dest, items in outbox.items()})

    # -- round 2 (as the owner of fingerprints) -----------------------------------------------

    def decide(self, children: list, claims: list, lo: int, hi: int, levels: np.ndarray) -> dict:
        """Round 2, as the owner of fingerprints: the discoveries of its fingerprints by each
        discoverer (``children[d]``: fingerprints, parents, actions; a parent's depth from
        ``levels``, the first index of each depth) and the
        claims (``claims[d]``: fingerprints, states, actions, claim numbers). The winners (new
        states: the least (parent, action) discovery of each new fingerprint, as in the
        sequential order) wait here for their indices; every other discovery of a parent is a
        non-tree edge into a state this worker owns. Each winner's key (parent, action,
        discoverer, depth) goes to the *ranker* of its parent: the parents of the chunk [lo, hi)
        cut into n equal ranges, ranker r numbering the children of range r (``rank``). The
        first judgings of claimed states go back to their discoverers."""
        n = self.n
        disc = np.concatenate([np.full(c[0].size, d, np.int64) for d, c in enumerate(children) if c is not None] or [np.empty(0, np.int64)])
        cols = [np.concatenate([c[k] for c in children if c is not None] or [_EMPTY4[k]]) for k in range(3)]
        fps, parents, ais = cols
        pdeps = _depths(parents, levels)
        won_claims: dict[int, list] = {}
        new_claimed = None
        if any(c is not None for c in claims):
            c_disc = np.concatenate([np.full(c[0].size, d, np.int64) for d, c in enumerate(claims) if c is not None])
            c_fps, c_par, c_ai, c_no = (np.concatenate([c[k] for c in claims if c is not None]) for k in range(4))
            fresh = np.flatnonzero(self.claimed.get_many(c_fps) < 0)
            order, first = _first_of_each(fresh, c_fps, c_par, c_ai, c_no)
            won = order[first]
            add = self.claimed.add
            for fp in c_fps[won].tolist():
                add(fp, 0)
            new_claimed = c_fps[won]
            for d, p, a, no in zip(c_disc[won].tolist(), c_par[won].tolist(), c_ai[won].tolist(), c_no[won].tolist()):
                won_claims.setdefault(d, []).append((p, a, no))
        known = self.index.get_many(fps)
        dst = known.astype(np.int64)
        new = np.flatnonzero(known < 0)
        order, first = _first_of_each(new, fps, parents, ais)
        winners = order[first]
        if new.size:
            dst[order] = -1 - (np.cumsum(first) - 1)  # the winner number of each discovery, in fp order
            dst[winners] = -2**62  # the winners themselves: no edge
        edge = (dst != -(2**62)) & (parents >= 0)
        self.p_win = (fps[winners], parents[winners], ais[winners], pdeps[winners] + 1)
        self.p_edges = (parents[edge], dst[edge], ais[edge], pdeps[edge])
        wp = parents[winners]
        rk = ranker_of(wp, lo, hi, n)
        to_rankers = {}
        self.p_sent = [None] * n
        for r in np.unique(rk).tolist():
            pos = np.flatnonzero(rk == r)
            self.p_sent[r] = pos
            to_rankers[r] = (wp[pos], ais[winners][pos], disc[winners][pos])
        return {"to_rankers": to_rankers, "won_claims": won_claims, "claimed": new_claimed}

    def rank(self, parts: list, levels: np.ndarray) -> dict:
        """Round 3, as the ranker of a range of the chunk's parents: the winners whose parent
        falls in it, from every owner (``parts[o]``: parents, actions, discoverers),
        numbered here in the sequential order (parent, action) from 0. The coordinator turns
        the counts of the rankers into offsets (a prefix sum: ranker r's first index); this
        worker's local numbers go to each owner (for its records) and each discoverer (the
        winners it checks and holds)."""
        n = self.n
        p, a, d = (np.concatenate([x[k] for x in parts if x is not None] or [np.empty(0, np.int64)]) for k in range(3))
        dep = _depths(p, levels) + 1
        order = np.lexsort((a, p))
        local = np.empty(p.size, np.int64)
        local[order] = np.arange(p.size)
        # each owner's numbers, in the order it sent its keys
        to_owners = {}
        off = 0
        for o, x in enumerate(parts):
            if x is not None:
                to_owners[o] = local[off : off + x[0].size]
                off += x[0].size
        to_disc = {}
        ds = d[order]
        for dd in np.unique(ds).tolist():
            sel = order[ds == dd]  # in local order
            to_disc[dd] = (p[sel], a[sel], local[sel])
        dep_s = dep[order]
        depths = [(int(x), int(c)) for x, c in zip(*np.unique(dep_s, return_counts=True))]
        return {"count": int(p.size), "depths": depths, "roots": int(np.count_nonzero(p < 0)), "by_disc": np.bincount(d, minlength=n) if d.size else np.zeros(n, np.int64), "to_owners": to_owners, "to_disc": to_disc}

    def _commit_owned(self, owned_idx: np.ndarray) -> tuple:
        """The winners of the last decide get their indices: into the fingerprint index and the
        records (in index order), with the non-tree edges into them; returns what was added (the
        coordinator keeps it for a lost worker's replacement and for checkpoints)."""
        fw, pw, aw, dw = self.p_win
        self.p_win = None
        add = self.index.add
        for fp, j in zip(fw.tolist(), owned_idx.tolist()):
            add(fp, j)
        o = np.argsort(owned_idx, kind="stable")
        roots = pw < 0
        rec = (owned_idx[o].astype(np.int64), fw[o], np.where(roots, -1 - aw, pw)[o].astype(np.int64), np.where(roots, 0, aw)[o].astype(np.uint32), dw[o].astype(np.uint32))
        es, ed, ea, ep = self.p_edges
        self.p_edges = None
        if ed.size and owned_idx.size:
            ed = np.where(ed >= 0, ed, owned_idx[np.maximum(-1 - ed, 0)])
        edges = (es.astype(np.uint32), ed.astype(np.uint32), ea.astype(np.uint32))
        self._load(rec, edges)
        if ed.size and not self.back:
            # a non-tree edge that goes no deeper than its source: the cycle check must search
            tidx = np.frombuffer(self.t_idx, np.int64)
            dd = np.frombuffer(self.t_dep, np.uint32)[np.searchsorted(tidx, ed)]
            self.back = bool(np.any(dd.astype(np.int64) <= ep))
        return rec + edges

    def _load(self, rec: tuple, edges: tuple) -> None:
        """Append records (index order, after those held) and non-tree edges."""
        for arr, x in zip((self.t_idx, self.t_par, self.t_via, self.t_dep), (rec[0], rec[2], rec[3], rec[4])):
            _append(arr, x)
        for arr, x in zip((self.e_src, self.e_dst, self.e_act), edges):
            _append(arr, x)

    def links(self, idx: np.ndarray) -> tuple:
        """Tree links of the states among `idx` this worker owns: (index, parent, action)."""
        tidx = np.frombuffer(self.t_idx, np.int64) if len(self.t_idx) else np.empty(0, np.int64)
        pos = np.searchsorted(tidx, idx)
        pos = np.minimum(pos, max(tidx.size - 1, 0))
        mine = tidx.size > 0
        hit = (tidx[pos] == idx) if mine else np.zeros(idx.size, bool)
        p = pos[hit]
        return idx[hit], np.frombuffer(self.t_par, np.int64)[p], np.frombuffer(self.t_via, np.uint32)[p].astype(np.int64)

    # -- round 3 ------------------------------------------------------------------------------

    def finalize(self, offsets: list[int], owned: list, found: list, won_claims: list, plan: list[tuple[int, int]]) -> tuple[dict, dict[int, bytes]]:
        """Round 4: ``offsets[r]`` is ranker r's first index (the coordinator's prefix sum);
        ``owned[r]``: ranker r's numbers for the winners this worker sent it (as the owner: its
        records); ``found[r]``: ranker r's winners this worker discovered (parents, actions,
        numbers), which it checks (goals, state properties) and keeps, but for ``plan``:
        (worker, count) to hand over to workers with fewer (the balance; never a result)."""
        delta = None
        if self.p_win is not None:
            owned_idx = np.empty(self.p_win[0].size, np.int64)
            for r, pos in enumerate(self.p_sent):
                if pos is not None:
                    owned_idx[pos] = offsets[r] + owned[r]
            delta = self._commit_owned(owned_idx)
        self.p_sent = []
        won_claims = [x for part in won_claims if part for x in part]
        fp_, fa_, fj_ = [], [], []
        for r, x in enumerate(found):
            if x is not None:
                fp_.append(x[0])
                fa_.append(x[1])
                fj_.append(offsets[r] + x[2])
        if fp_:
            wp, wa, wj = np.concatenate(fp_), np.concatenate(fa_), np.concatenate(fj_)
        else:
            wp = wa = wj = np.empty(0, np.int64)
        dest = np.full(wj.size, self.wid, np.int64)
        give = sum(c for _w, c in plan)
        if give and wj.size:
            # hand over `give` of them, evenly spread over the index order, interleaved by receiver
            pick = (np.arange(give) * wj.size) // give
            recv = np.repeat(np.array([w for w, _c in plan], np.int64), [c for _w, c in plan])
            slot = np.concatenate([(np.arange(c) + 0.5) / c for _w, c in plan if c])
            dest[pick] = recv[np.lexsort((recv, slot))]
        won = (wp, wa, wj, dest)
        system, record = self.system, self.record
        claim_pending = self.claim_pending
        for p, ai, no in won_claims:
            start, vs = claim_pending[(p, ai, no)]
            for k, (prop, verdict) in enumerate(vs, start):
                record(prop, verdict, p, 3, ai, 1, k, p, "transition", ai)
        claim_pending.clear()
        outbox: dict[int, list] = {}
        pending = self.pending
        for p, ai, j, dest in zip(*(x.tolist() for x in won)):
            s2, info, d2 = pending[(p, ai)]
            for g in system.goals_reached(s2, info):
                if g in self.goals and g not in self.seen_goal:
                    key = (p, 3, ai, 2, 0)
                    old = self.c_goal.get(g)
                    if old is None or key < old[0]:
                        self.c_goal[g] = (key, j)
            for k, (prop, verdict) in enumerate(system.check_state(s2)):
                record(prop, verdict, p, 3, ai, 3, k, j, "state")
            if dest == self.wid:
                self.fresh.append((j, d2, s2))
            else:
                outbox.setdefault(dest, []).append((j, d2, s2))
        pending.clear()
        blobs = {dest: pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL) for dest, items in outbox.items()}
        out = self._take()
        out["delta"] = delta
        out["back"] = self.back
        return out, blobs


_EMPTY4 = (np.empty(0, np.uint64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64))


def _depths(parents: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The depth of each state index (-1 for an initial state's parent, -1) from the first
    index of each depth (states are numbered breadth first)."""
    return np.where(parents >= 0, np.searchsorted(levels, parents, "right") - 1, -1)


def ranker_of(parents: np.ndarray, lo: int, hi: int, n: int) -> np.ndarray:
    """The ranker of each parent: [lo, hi) cut into n equal ranges, in order (initial states,
    parent -1, to ranker 0)."""
    span = max(hi - lo, 1)
    return np.clip((np.maximum(parents, lo) - lo) * n // span, 0, n - 1)


def _balance(counts: np.ndarray, weights: np.ndarray) -> list[list[tuple[int, int]]]:
    """Who hands how many of a chunk's new states to whom (counts: what each worker
    discovered), so that each holds about its share (weights) give or take 1/SLACK of the
    total: O(workers), never a result."""
    n = counts.size
    total = int(counts.sum())
    plan: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    if n == 1 or not total:
        return plan
    share = (total * weights / weights.sum()).astype(np.int64)
    slack = max(1, total // SLACK // n)
    over = [[w, int(c - share[w])] for w, c in enumerate(counts.tolist()) if c - share[w] > slack]
    under = [[w, int(share[w] - c)] for w, c in enumerate(counts.tolist()) if share[w] - c > 0]
    i = j = 0
    while i < len(over) and j < len(under):
        k = min(over[i][1], under[j][1])
        if k:
            plan[over[i][0]].append((under[j][0], k))
        over[i][1] -= k
        under[j][1] -= k
        if not over[i][1]:
            i += 1
        if not under[j][1]:
            j += 1
    return plan


def _first_of_each(sel: np.ndarray, fps: np.ndarray, *keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions `sel` ordered by fingerprint, then by `keys` (the sequential order), and a
    mask of the first of each fingerprint in that order: the discovery (or claim) that wins."""
    if not sel.size:
        return sel, np.zeros(0, bool)
    order = sel[np.lexsort(tuple(k[sel] for k in reversed(keys)) + (fps[sel],))]
    f = fps[order]
    first = np.ones(order.size, bool)
    first[1:] = f[1:] != f[:-1]
    return order, first


def handle(w: _Worker, msg: tuple, finish) -> tuple[Any, bool]:
    """One request to a worker, whatever the transport (pipes here, Ray actors in
    explorers/cluster.py): (reply, last), ``last`` after "finish"."""
    op = msg[0]
    if op == "initial":
        return w.initial(), False
    if op == "expand":
        return w.expand(*msg[1:]), False
    if op == "expand_more":
        return w.expand_more(*msg[1:]), False
    if op == "decide":
        return w.decide(*msg[1:]), False
    if op == "rank":
        return w.rank(*msg[1:]), False
    if op == "finalize":
        out = w.finalize(*msg[1:])
        if w.report_info and finish is not None:
            out[0]["info"] = finish(w.system)  # what a lost worker knew, up to its last commit
        return out, False
    if op == "links":
        return w.links(msg[1]), False
    if op == "load":  # resuming (a checkpoint, or a lost worker's shards): the records of the states owned
        rec, edges, claimed, back = msg[1:]
        w.index = FingerprintIndex.from_pairs(rec[1], rec[0].astype(np.uint32))
        w._load(rec, edges)
        w.back = back
        if claimed is not None:
            w.claimed = FingerprintIndex.from_pairs(claimed, np.zeros(claimed.size, np.uint32))
        return None, False
    if op == "rebuild":
        return w.rebuild(msg[1]), False
    if op == "finish":
        info = finish(w.system) if finish is not None else None
        nb = w.index.nbytes() + sum(a.buffer_info()[1] * a.itemsize for a in (w.t_idx, w.t_par, w.t_via, w.t_dep, w.e_src, w.e_dst, w.e_act))
        return (info, nb, len(w.claimed) if w.claims_of is not None else None), True
    raise ValueError(f"unknown request {op!r}")  # pragma: no cover - a bug in the parent


def _worker_main(conn, wid: int, n: int, make_system: Callable[[], TransitionSystem], goals: Sequence[str], finish, report_info: bool = False) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        w = _Worker(make_system(), wid, n, goals)
        w.conn = conn
        w.report_info = report_info
        conn.send(("ok", None))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg[0] == "steal":  # it came after this worker had finished its part of the chunk
                conn.send(("steal", None, 0))
                continue
            reply, last = handle(w, msg, finish)
            conn.send(("ok", reply))
            if last:
                return
    except BaseException:  # noqa: BLE001 - everything goes back to the parent as text
        try:
            conn.send(("error", traceback.format_exc()))
        except (OSError, BrokenPipeError):
            pass


# =============================================================================================
# The parent


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"exit status {code}"


class _Pool:
    """The worker processes of one exploration, over pipes (the default transport; the Ray one is
    explorers/cluster.py's ``ActorPool``, with the same methods)."""

    recovers = True  # a lost worker is replaced (the exploration goes back to the last commit)
    kind = "worker processes"

    def __init__(self, n: int, make_system, goals: Sequence[str], finish, report_info: bool = False) -> None:
        ctx = _context()
        self.conns = []
        self.procs = []
        self.bytes_out = self.bytes_in = 0  # what went through the pipes (pickles)
        try:
            for w in range(n):
                a, b = ctx.Pipe()
                p = ctx.Process(target=_worker_main, args=(b, w, n, make_system, tuple(goals), finish, report_info), name=f"bpcheck-worker-{w}", daemon=True)
                p.start()
                b.close()
                self.conns.append(a)
                self.procs.append(p)
            self.gather()
        except BaseException:
            self.close()
            raise

    def _message(self, w: int) -> tuple:
        """Worker w's next message: ("ok", reply) or ("steal", states, count); a worker that
        exited or failed raises WorkerError."""
        try:
            while not self.conns[w].poll(WAIT_SLICE):
                check_stop()  # a stop not acted on within faults.STOP_GRACE: the coordinator abandons the chunk
            buf = self.conns[w].recv_bytes()
        except (EOFError, OSError):
            self.procs[w].join(timeout=5)
            raise WorkerLost(f"worker {w} exited ({_exit_text(self.procs[w].exitcode)})", f"worker process {w} (pid {self.procs[w].pid})") from None
        self.bytes_in += len(buf)
        msg = pickle.loads(buf)  # from a worker process this process started (never from outside)
        if msg[0] == "error":
            raise WorkerError(f"worker {w} failed:\n{msg[1]}")
        return msg

    def _recv(self, w: int) -> Any:
        return self._message(w)[1]

    def send(self, w: int, msg: tuple) -> None:
        try:
            buf = _ForkingPickler.dumps(msg)
            self.bytes_out += len(buf)
            self.conns[w].send_bytes(buf)
        except (BrokenPipeError, OSError):
            self.procs[w].join(timeout=5)
            raise WorkerLost(f"worker {w} exited ({_exit_text(self.procs[w].exitcode)})", f"worker process {w} (pid {self.procs[w].pid})") from None

    def gather(self) -> list:
        return [self._recv(w) for w in range(len(self.conns))]

    def call(self, msgs: list[tuple]) -> list:
        for w, m in enumerate(msgs):
            self.send(w, m)
        return self.gather()

    def expand(self, msgs: list[tuple], max_depth: int | None) -> tuple[list[dict], list, int]:
        """Round 1 of a chunk with work stealing: each worker expands its states of the chunk;
        one that is done while another is still busy gets the later half of that one's remaining
        states (:meth:`_Worker._give`), until fewer than :data:`MIN_STEAL` are left anywhere.
        Who expands a state never changes a result, only the time the round takes. Returns
        each worker's replies merged (children and claims concatenated, work summed), the
        shares of the reduction's memo (by worker), and how many states were handed over."""
        for w, m in enumerate(msgs):
            self.send(w, m)
        n = len(self.conns)
        got: list[list[dict]] = [[] for _ in range(n)]
        busy = set(range(n))
        idle: list[int] = []
        dry: set[int] = set()  # workers that had nothing to hand over this round
        asked: tuple[int, int] | None = None  # (victim, thief)
        stolen = 0
        steal = STEAL and n > 1
        by_conn = {id(c): w for w, c in enumerate(self.conns)}
        while busy or asked is not None:
            listen = [self.conns[w] for w in sorted(busy | ({asked[0]} if asked else set()))]
            ready = multiprocessing.connection.wait(listen, WAIT_SLICE)
            if not ready:
                check_stop()  # (as in _message)
            for c in ready:
                w = by_conn[id(c)]
                msg = self._message(w)
                if msg[0] == "steal":
                    victim, thief = asked  # type: ignore[misc]
                    asked = None
                    if msg[1] is None:
                        dry.add(victim)
                    else:
                        stolen += msg[2]
                        idle.remove(thief)
                        busy.add(thief)
                        self.send(thief, ("expand_more", msg[1], max_depth))
                else:
                    got[w].append(msg[1])
                    busy.discard(w)
                    idle.append(w)
            if steal and asked is None and idle:
                victims = [v for v in sorted(busy) if v not in dry]
                if victims:
                    asked = (victims[0], idle[0])
                    self.send(victims[0], ("steal",))
        merged = []
        shares = []
        for w, rs in enumerate(got):
            m = dict(rs[-1])
            m["children"] = _merge_parts([r["children"] for r in rs], 3)
            m["claims"] = _merge_parts([r["claims"] for r in rs], 4)
            m["work"] = (sum(r["work"][0] for r in rs), sum(r["work"][1] for r in rs))
            m["n_claims"] = sum(r["n_claims"] for r in rs)
            merged.append(m)
            shares.append([r["share"] for r in rs if r.get("share") is not None])
        return merged, shares, stolen

    def alive(self) -> int:
        return sum(1 for p in self.procs if p.is_alive())

    def close(self, kill: bool = False) -> None:
        if kill:
            for p in self.procs:
                if p.is_alive():
                    p.kill()
        for c in self.conns:
            c.close()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()


def _merge_parts(parts: list[dict], k: int) -> dict:
    """Replies split by owner (several rounds of one worker: stealing), merged per owner."""
    if len(parts) == 1:
        return parts[0]
    out: dict = {}
    for part in parts:
        for o, x in part.items():
            out.setdefault(o, []).append(x)
    return {o: tuple(np.concatenate([x[j] for x in xs]) for j in range(k)) for o, xs in out.items()}


def _progress_note(pool: Any, n: int, work: list[int], lost: list[str]) -> str:
    """The workers on the progress line: how many are alive, and each one's share of the last
    chunk's states (the balance; a few workers by name, many as the least and most)."""
    if n <= 1:
        return ""
    total = sum(work) or 1
    shares = [100 * k / total for k in work]
    if n <= 4:
        bal = "/".join(f"{x:.0f}" for x in shares) + " %"
    else:
        bal = f"{min(shares):.0f}-{max(shares):.0f} % each"
    alive = getattr(pool, "alive", lambda: n)()
    return f"{alive}/{n} {getattr(pool, 'kind', 'workers')} alive" + (f" ({len(lost)} lost, replaced)" if lost else "") + f", last chunk {bal}"


def _account(cost: dict, pool: Any) -> None:
    cost["bytes_out"] += getattr(pool, "bytes_out", 0)
    cost["bytes_in"] += getattr(pool, "bytes_in", 0)


def _append(arr: array, values: np.ndarray) -> None:
    arr.frombytes(np.ascontiguousarray(values, dtype=np.dtype({"q": "i8", "I": "u4", "Q": "u8"}[arr.typecode])).tobytes())


class _Ledger:
    """What the coordinator keeps of the visited set: the number of states and of initial ones,
    the first index of each depth (states are numbered breadth first: O(depth)), whether a
    non-tree edge goes no deeper than its source (a cycle is possible), and each owner's
    committed records as the owner sent them, one set of arrays per owner and chunk (handed back
    as they are to a lost owner's replacement, assembled by index only for a checkpoint, the
    final cycle search or a resume). It never reads or writes a record per state."""

    def __init__(self, n: int) -> None:
        self.states = 0
        self.roots = 0
        self.levels: list[int] = []
        self.back = False
        self.deltas: list[list[tuple]] = [[] for _ in range(n)]

    def depth_of(self, idx: np.ndarray) -> np.ndarray:
        return np.searchsorted(np.asarray(self.levels, np.int64), idx, "right") - 1

    def grow(self, depths: np.ndarray) -> None:
        """New states, in index order, at these (non-decreasing) depths."""
        if depths.size:
            top = len(self.levels) - 1
            for d in np.unique(depths[depths > top]).tolist():
                self.levels.append(self.states + int(np.searchsorted(depths, d, "left")))
        self.states += int(depths.size)

    def grow_counts(self, depths: list[tuple[int, int]]) -> None:
        """New states, in index order, as (depth, count) runs (non-decreasing depths)."""
        for d, c in depths:
            if d >= len(self.levels):
                self.levels.append(self.states)
            self.states += c

    def mark(self) -> tuple:
        return (self.states, self.roots, len(self.levels), self.back, [len(d) for d in self.deltas])

    def rollback(self, m: tuple) -> None:
        self.states, self.roots, nl, self.back, lens = m
        del self.levels[nl:]
        for d, k in zip(self.deltas, lens):
            del d[k:]

    def owner_delta(self, w: int) -> tuple:
        """Owner w's committed records and edges, concatenated (in index order)."""
        ds = self.deltas[w]
        if not ds:
            return _EMPTY_REC, _EMPTY_EDGES
        rec = tuple(np.concatenate([d[k] for d in ds]) for k in range(5))
        edges = tuple(np.concatenate([d[k] for d in ds]) for k in range(5, 8))
        return rec, edges

    def assemble(self) -> tuple[array, array, array, array, array, array, array]:
        """The whole visited set by index (fingerprints, parents, actions, depths) and the
        non-tree edges by (source, action), as core.explore keeps them."""
        ds = [d for w in self.deltas for d in w]
        if not ds:
            return array("Q"), array("q"), array("I"), array("I"), array("I"), array("I"), array("I")
        cols = [np.concatenate([d[k] for d in ds]) for k in range(8)]
        o = np.argsort(cols[0], kind="stable")
        if cols[0].size != self.states or not np.array_equal(cols[0][o], np.arange(self.states)):  # pragma: no cover - a bug
            raise WorkerError(f"the owners' records cover {cols[0].size} of {self.states} states")
        eo = np.lexsort((cols[7], cols[5]))
        out = (array("Q"), array("q"), array("I"), array("I"), array("I"), array("I"), array("I"))
        for arr, x in zip(out, (cols[1][o], cols[2][o], cols[3][o], cols[4][o], cols[5][eo], cols[6][eo], cols[7][eo])):
            _append(arr, x)
        return out


def _split(book: _Ledger, snap: Snapshot, shard_map: np.ndarray) -> None:
    """A checkpoint resumed: its records and edges split by owner (of a state's fingerprint, of
    an edge's destination's), as the owners would have sent them."""
    k = len(snap.parent)
    fps = np.frombuffer(snap.fps, np.uint64) if k else np.empty(0, np.uint64)
    par = np.frombuffer(snap.parent, np.int64) if k else np.empty(0, np.int64)
    via = np.frombuffer(snap.via, np.uint32) if k else np.empty(0, np.uint32)
    dep = np.frombuffer(snap.depth_of, np.uint32) if k else np.empty(0, np.uint32)
    ne = len(snap.extra_src)
    es, ed, ea = ((np.frombuffer(x, np.uint32) if ne else np.empty(0, np.uint32)) for x in (snap.extra_src, snap.extra_dst, snap.extra_act))
    owner = owners_of(fps, shard_map)
    e_owner = owner[ed.astype(np.int64)] if ne else np.empty(0, np.int64)
    idx = np.arange(k, dtype=np.int64)
    for w in range(len(book.deltas)):
        s_, e_ = owner == w, e_owner == w
        if s_.any() or e_.any():
            book.deltas[w].append((idx[s_], fps[s_].copy(), par[s_].copy(), via[s_].copy(), dep[s_].copy(), es[e_].copy(), ed[e_].copy(), ea[e_].copy()))
    book.states = k
    book.roots = int(np.count_nonzero(par < 0))
    top = int(dep[-1]) if k else -1
    book.levels = np.searchsorted(dep, np.arange(top + 1), "left").tolist() if k else []
    book.back = bool(ne) and bool(np.any(dep[ed] <= dep[es]))


_EMPTY_REC = (np.empty(0, np.int64), np.empty(0, np.uint64), np.empty(0, np.int64), np.empty(0, np.uint32), np.empty(0, np.uint32))
_EMPTY_EDGES = (np.empty(0, np.uint32), np.empty(0, np.uint32), np.empty(0, np.uint32))


def explore_parallel(
    make_system: Callable[[], TransitionSystem],
    workers: int,
    options: ExploreOptions = ExploreOptions(),
    visitor: ExploreVisitor | None = None,
    *,
    transport: Callable[..., Any] | None = None,
    finish: Callable[[TransitionSystem], Any] | None = None,
    chunk: int | None = None,
) -> ExploreResult:
    """Explore the system ``make_system()`` builds, breadth first, with `workers` processes (the
    module's docstring: API, order, bounds): a :class:`Coordinator`'s run."""
    return Coordinator(make_system, workers, options, visitor, transport=transport, finish=finish, chunk=chunk).run()


class Coordinator:
    """One parallel exploration, as the parent process runs it: the rounds of each chunk, the
    commits and the rollbacks after a lost worker, the result (the module's docstring). Its
    attributes are the exploration's state between chunks; the workers keep the records."""

    def __init__(
        self,
        make_system: Callable[[], TransitionSystem],
        workers: int,
        options: ExploreOptions = ExploreOptions(),
        visitor: ExploreVisitor | None = None,
        *,
        transport: Callable[..., Any] | None = None,
        finish: Callable[[TransitionSystem], Any] | None = None,
        chunk: int | None = None,
    ) -> None:
        if options.strategy != "bfs":
            raise ValueError(f"explore_parallel explores breadth first only, not {options.strategy!r}")
        for name in ("record_graph", "pack", "unpack"):
            if getattr(options, name) is not None:
                raise ValueError(f"explore_parallel does not take {name} (core.explore does)")
        if not isinstance(workers, int) or not 1 <= workers <= 4096:
            raise ValueError(f"workers must be a positive integer, not {workers!r}")
        if chunk is None:
            chunk = chunk_size(workers)
        if chunk < 1:
            raise ValueError("chunk must be positive")
        self.make_system, self.options, self.finish, self.chunk = make_system, options, finish, chunk
        self.visitor = visitor or ExploreVisitor()
        self.n = n = workers
        self.make_pool = transport or _Pool  # worker processes over pipes, or e.g. Ray actors (explorers/cluster.py)
        self.report_info = bool(getattr(self.make_pool, "recovers", False)) and finish is not None
        self.res = ExploreResult(status="pass", strategy=options.strategy)
        self.res.goals = {g: None for g in options.goals}
        self.t0 = time.monotonic()
        self.shard_map = shard_owners(n)
        self.book = _Ledger(n)  # the coordinator's share of the visited set: counts (the owners keep the records)
        self.claimed_fps: list = []  # (owner, fingerprints): the states judged inside transitions so far (claims won)
        self.seen_viol: set = set()  # (property, Finding key) of the violations kept
        self.latest_info: list = [None] * n  # each worker's finish(system) at its last finalize (report_info)
        self.kept_info: list = []  # those of workers lost
        self.cost: dict = {"start_s": 0.0, "chunks": 0, "round_s": 0.0, "coordinator_cpu_s": 0.0, "bytes_out": 0, "bytes_in": 0, "worker_cpu": {}, "trace_rounds": 0}
        self.depth_hit = False  # a state at max_depth had actions
        self.rss = [0] * n  # each worker's resident set size at its last answer
        self.state_cost = [0.0] * n  # each worker's CPU seconds per state, smoothed over chunks (_balance)
        self.stolen = 0  # states handed over to an idle worker within a chunk (Pool.expand)
        self.claims_sent = 0  # every claim the workers sent (res.judged_again)
        self.balance = [0.0, 0.0]  # CPU seconds of expanding: the mean and the busiest worker's, summed over chunks
        self.inbox: list[list[bytes]] = [[] for _ in range(n)]  # states handed to each worker, for its next chunk
        self.learned: list[list] = [[] for _ in range(n)]  # what each worker is to learn from the others' shares
        self.head = 0  # the frontier: states [head, book.states)
        self.committed: dict = {}  # the last commit: what a lost worker takes the exploration back to
        self.lost: list[str] = []  # the workers lost (where), in order
        self.last_work: list[int] = [0] * n  # states each worker expanded in the last chunk (progress)
        self.pool: Any = None
        self.fresh_start = True
        if options.resume is not None:
            resume = options.resume
            if resume.strategy != options.strategy:
                raise ResumeMismatch(f"the checkpoint was made with --strategy {resume.strategy}, not {options.strategy}")
            _split(self.book, resume, self.shard_map)
            self.depth_hit = _restore_results(self.res, resume.results)
            self.seen_viol.update((v.prop, v.key) for v in self.res.violations)
            self.head = resume.frontier[0] if len(resume.frontier) else self.book.states
            if list(resume.frontier) != list(range(self.head, self.book.states)):
                raise ResumeMismatch("the checkpoint's frontier is not the last states in order (not a breadth-first exploration)")
            self.fresh_start = False

    def run(self) -> ExploreResult:
        """The exploration: chunks until the frontier is empty or a bound stops it, new workers
        taking it up again from the last commit after a lost one; then the result."""
        opts, visitor, res, book, n = self.options, self.visitor, self.res, self.book, self.n
        deadline = opts.deadline(self.t0)
        memory = None if opts.memory_limit is None else MemoryWatch(opts.memory_limit, self._memory_in_use)
        clock = CheckpointClock.of(opts, self.t0)
        tries = 0  # losses since the last commit
        self._commit()  # the start (nothing, or the checkpoint resumed): a worker lost before the first chunk
        arm(True)  # an overdue stop raises Abandoned while this process waits for its workers (engines/faults.py)
        try:
            while True:
                try:
                    if self.pool is None:
                        s0 = time.perf_counter()
                        self.pool = self.make_pool(n, self.make_system, opts.goals, self.finish, self.report_info)
                        self.cost["start_s"] += time.perf_counter() - s0
                        if self.fresh_start:
                            self._initial()
                            self.fresh_start = False
                        else:
                            self._restore()
                        self._commit()
                    while self.head < book.states:
                        if opts.stop_on_violation and res.violations:
                            break
                        why = stop_reason(opts.bounds, book.states, deadline, opts.stop)
                        if why is None and memory is not None:
                            why = memory.exceeded()
                        if why is not None:
                            res.bound_hit = why
                            break
                        if clock is not None:
                            clock.tick(lambda: visitor.on_checkpoint(self._snapshot()))
                        self._one_chunk()
                        self._commit()
                        tries = 0
                        visitor.on_commit(book.states, self.pool)
                        visitor.on_progress(book.states, res.max_depth, book.states - self.head, note=_progress_note(self.pool, n, self.last_work, self.lost))
                    if res.bound_hit is None and self.depth_hit:
                        res.bound_hit = f"max depth ({opts.bounds.max_depth})"
                    res.resumable = self.head < book.states and res.bound_hit is not None and not (opts.stop_on_violation and res.violations)
                    if opts.checkpoint and res.resumable:
                        visitor.on_checkpoint(self._snapshot())
                    ends = self.pool.call([("finish",)] * n)
                    break
                except Abandoned:
                    ends = self._abandon()
                    break
                except WorkerLost as e:
                    if opts.stop is not None and opts.stop() is not None:
                        ends = self._abandon()  # a signal to the whole process group took the workers too: a stop, not a loss
                        break
                    if not getattr(self.make_pool, "recovers", False):
                        raise
                    self.lost.append(e.where or str(e))
                    tries += 1
                    if tries > RECOVERIES:
                        raise WorkerError(f"{e} ({tries} workers lost at the same chunk, the last: {e.where or 'unknown'}); giving up") from None
                    self._recover()
        finally:
            arm(False)
            if self.pool is not None:
                _account(self.cost, self.pool)
                self.pool.close()
        return self._result(ends)

    def _abandon(self) -> list:
        """A stop not acted on within faults.STOP_GRACE (a state a worker expands takes minutes:
        a hostile engine's 10,000 slow actions, a hung call), or workers gone with a signal: the
        chunk in progress is dropped with its workers (killed: what they were doing is not waited
        for) and the exploration ends at the last commit, as a stop between chunks would have
        ended it: every violation settled (and shown) so far is kept, the bound hit is the stop's
        reason. Not resumable (as a state abandoned by core.explore). The workers' answers to
        ``finish`` are those of their last finalize."""
        if self.pool is not None:
            _account(self.cost, self.pool)
            self.pool.close(kill=True)
            self.pool = None
        self._rollback()
        self.res.bound_hit = (self.options.stop() if self.options.stop is not None else None) or "interrupted"
        self.res.resumable = False
        claimed = sum(int(x.size) for _o, x in self.claimed_fps)  # the forced states judged, as committed
        return [(info, 0, None) for info in self.latest_info if info is not None] + [(None, 0, claimed)]

    def _memory_in_use(self) -> int:
        """Every process of the run (the forkserver too); where /proc is not: this one and what
        the workers said."""
        return tree_rss(os.getpid()) or ((current_rss() or 0) + sum(self.rss))

    def _absorb(self, outs: list[dict]) -> None:
        """The workers' results of one chunk (or of the initial states), in the sequential order:
        counts, the first use of each action kind and property, the first violation of each
        (property, Finding key) and the first witness of each goal, with their traces."""
        res = self.res
        for out in outs:
            res.transitions += out["transitions"]
            res.terminal_states += out["terminal"]
            self.depth_hit |= out["depth_hit"]
        for _k, kind in sorted(x for out in outs for x in out["first_kinds"]):
            res.action_counts.setdefault(kind, 0)
        for out in outs:
            for kind, c in out["kinds"].items():
                res.action_counts[kind] += c
        for _k, prop in sorted(x for out in outs for x in out["first_props"]):
            res.props.setdefault(prop, PropStats())
        for out in outs:
            for prop, (c, v) in out["props"].items():
                st = res.props[prop]
                st.checked += c
                st.violations += v
        cands = sorted((x for out in outs for x in out["violations"]), key=lambda x: x[0])
        first_p = None
        new_viol = []
        taken: set = set()
        for key, prop, fkey, message, at, idx, last in cands:
            if (prop, fkey) in self.seen_viol or (prop, fkey) in taken:
                continue
            if self.options.stop_on_violation:
                if first_p is None:
                    first_p = key[0] if not res.violations else None
                if first_p is None or key[0] != first_p:
                    continue  # the sequential run stops after expanding the first violating state
            taken.add((prop, fkey))
            new_viol.append((prop, fkey, message, at, idx, last))
        new_goals = []
        for _key, g, j in sorted(x for out in outs for x in out["goals"]):
            if g in res.goals and res.goals[g] is None and g not in {x[0] for x in new_goals}:
                new_goals.append((g, j))
        traces = self._fetch_traces([v[4] for v in new_viol] + [j for _g, j in new_goals])
        for prop, fkey, message, at, idx, last in new_viol:
            self.seen_viol.add((prop, fkey))
            trace, init = traces[idx]
            trace = list(trace)
            if last is not None:
                trace.append(last)
            res.violations.append(Violation(prop, message, trace, init, len(trace), at, key=fkey))
            self.visitor.on_violation(res.violations[-1])
        for g, j in new_goals:
            trace, init = traces[j]
            res.goals[g], res.goal_initial[g] = list(trace), init

    def _fetch_traces(self, wanted: list[int]) -> dict[int, tuple[list[int], int]]:
        """The shortest traces to these states, from their owners' tree links: one round of
        requests per depth walked, for all of them together (never a round per state)."""
        if not wanted:
            return {}
        links: dict[int, tuple[int, int]] = {}
        need = sorted(set(wanted))
        while need:
            q = np.array(need, np.int64)
            self.cost["trace_rounds"] += 1
            got = self.pool.call([("links", q)] * self.n)
            for idx, par, via_ in got:
                links.update(zip(idx.tolist(), zip(par.tolist(), via_.tolist())))
            if any(i not in links for i in need):  # pragma: no cover - a bug
                raise WorkerError(f"no owner has a record of state {min(i for i in need if i not in links)}")
            need = sorted({links[i][0] for i in need if links[i][0] >= 0} - links.keys())
        out = {}
        for j in wanted:
            trace = []
            i = j
            while links[i][0] >= 0:
                trace.append(links[i][1])
                i = links[i][0]
            trace.reverse()
            out[j] = (trace, -1 - links[i][0])
        return out

    def _settle(self, children: list[dict], claims: list[dict] | None, lo: int, hi: int) -> None:
        """Rounds 2 to 4 for the children of one chunk (parents [lo, hi)) or the initial states,
        and the claims of states judged inside its transitions: what each worker sends, split
        by owner, is routed as it is (this process reads none of it); the rankers' counts are
        prefix-summed into each range's first index; the new states' depths come as counts per
        depth. Nothing here is done per state."""
        n, book, pool = self.n, self.book, self.pool
        no_claims = [None] * n
        lv = np.asarray(book.levels, np.int64)  # the first index of each depth: the owners and rankers need the parents' depths
        decided = pool.call([("decide", [c.get(o) for c in children], [c.get(o) for c in claims] if claims else no_claims, lo, hi, lv) for o in range(n)])
        for w, dec in enumerate(decided):
            if dec["claimed"] is not None and dec["claimed"].size:
                self.claimed_fps.append((w, dec["claimed"]))  # a lost owner's claimed states are restored from these
        ranked = pool.call([("rank", [dec["to_rankers"].get(r) for dec in decided], lv) for r in range(n)])
        base = book.states
        offsets = np.concatenate([[0], np.cumsum([r["count"] for r in ranked])]) + base
        depths: list[tuple[int, int]] = [x for r in ranked for x in r["depths"]]
        by_disc = np.sum([r["by_disc"] for r in ranked], axis=0) if ranked else np.zeros(n, np.int64)
        cost_ = self.state_cost
        weights = np.array([1 / c for c in cost_] if BALANCE_BY_COST and all(c > 0 for c in cost_) else [1.0] * n)
        plan = _balance(np.asarray(by_disc, np.int64), weights)
        offs = offsets[:-1].tolist()
        replies = pool.call([
            ("finalize", offs, [r["to_owners"].get(w) for r in ranked], [r["to_disc"].get(w) for r in ranked], [dec["won_claims"].get(w) for dec in decided], plan[w])
            for w in range(n)
        ])
        book.grow_counts(depths)
        book.roots += sum(r["roots"] for r in ranked)
        outs = []
        for w, (out, blobs) in enumerate(replies):
            outs.append(out)
            delta = out.pop("delta")
            if delta is not None and delta[0].size + delta[5].size:
                book.deltas[w].append(delta)
            book.back |= out.pop("back")
            if "info" in out:
                self.latest_info[w] = out.pop("info")
            self.rss[w] = out["rss"] or 0
            for dw, blob in blobs.items():
                self.inbox[dw].append(blob)
        self._absorb(outs)

    def _snapshot(self, results: bool = True) -> Snapshot:
        """The exploration as a checkpoint: the owners' records assembled by index."""
        fps_, par_, via_, dep_, es_, ed_, ea_ = self.book.assemble()
        data = _results_data(self.res, self.depth_hit) if results else {}
        return Snapshot(self.options.strategy, fps_, par_, via_, dep_, es_, ed_, ea_, array("Q", range(self.head, self.book.states)), data)

    def _restore(self) -> None:
        """New workers take the exploration from what this process holds: each loads the records
        its shards had at the last commit (as their owner sent them), and the claimed states of
        those shards; the frontier states are re-executed from the initial states by one worker
        (core._rebuild_frontier)."""
        n, book, pool = self.n, self.book, self.pool
        csel = [[x for o, x in self.claimed_fps if o == w] for w in range(n)]
        pool.call([("load", *book.owner_delta(w), np.concatenate(csel[w]) if csel[w] else None, False) for w in range(n)])
        if self.head < book.states:
            pool.send(0, ("rebuild", self._snapshot(results=False)))
            tag, val = pool._recv(0)
            if tag == "mismatch":
                raise ResumeMismatch(val)
            for dw, blob in val.items():
                self.inbox[dw].append(blob)

    def _initial(self) -> None:
        """The initial states: worker 0 gives them, their owners decide which are new."""
        res, book = self.res, self.book
        first = self.pool.call([("initial",)] + [("expand", 0, None, [])] * (self.n - 1))
        if "initial_fault" in first[0]:
            # state 0, which the engine could not give: its record with the owner of fingerprint 0
            book.deltas[0].append((np.zeros(1, np.int64), np.zeros(1, np.uint64), np.full(1, -1, np.int64), np.zeros(1, np.uint32), np.zeros(1, np.uint32), *_EMPTY_EDGES))
            book.grow(np.zeros(1, np.int64))
            book.roots += 1
            st = res.props.setdefault(FAULT, PropStats())
            st.checked += 1
            st.violations += 1
            self.seen_viol.add((FAULT, None))
            res.violations.append(Violation(FAULT, first[0]["initial_fault"], [], 0, 0, "fault"))
            self.visitor.on_violation(res.violations[-1])
            self.head = 1
        else:
            self._settle([r["children"] for r in first], None, 0, 0)

    def _one_chunk(self) -> None:
        """Round 1 (expand, with work stealing) of the next chunk, then rounds 2 to 4 (settle)."""
        n, book, pool, res, cost = self.n, self.book, self.pool, self.res, self.cost
        max_depth = self.options.bounds.max_depth
        hi = min(self.head + self.chunk, book.states)
        lo_ = self.head
        res.max_depth = max(res.max_depth, int(book.depth_of(np.array([hi - 1]))[0]))
        c0 = time.perf_counter()
        p0 = time.process_time() - getattr(pool, "measure_s", 0.0)  # (a benchmark's byte counting is not the protocol's)
        replies, shares, k = pool.expand([("expand", hi, max_depth, self.inbox[w], self.learned[w]) for w in range(n)], max_depth)
        self.stolen += k
        self.inbox = [[] for _ in range(n)]
        self.learned = [[x for v, xs in enumerate(shares) if v != w for x in xs] for w in range(n)]
        self.head = hi
        self.last_work[:] = [r["work"][0] for r in replies]
        for w, r in enumerate(replies):
            self.rss[w] = r["rss"] or 0
            k, c = r["work"]
            if k >= 16:  # CPU seconds per state, smoothed over chunks
                self.state_cost[w] = c / k if self.state_cost[w] == 0 else 0.5 * self.state_cost[w] + 0.5 * c / k
            wk = cost["worker_cpu"]
            wk[w] = wk.get(w, 0.0) + c
        if n > 1:
            times = [r["work"][1] for r in replies]
            self.balance[0] += sum(times) / n
            self.balance[1] += max(times)
        self.claims_sent += sum(r["n_claims"] for r in replies)
        self._settle([r["children"] for r in replies], [r["claims"] for r in replies], lo_, hi)
        cost["chunks"] += 1
        cost["coordinator_cpu_s"] += time.process_time() - getattr(pool, "measure_s", 0.0) - p0
        cost["round_s"] += time.perf_counter() - c0

    # The last commit: what the exploration is taken back to when a worker is lost. A chunk is a
    # transaction: its results enter the commit only once every worker has answered it.

    def _commit(self) -> None:
        self.committed.update(
            book=self.book.mark(), claimed=len(self.claimed_fps), head=self.head, results=_results_data(self.res, self.depth_hit),
            stolen=self.stolen, claims_sent=self.claims_sent,
        )

    def _rollback(self) -> None:
        res, committed, n = self.res, self.committed, self.n
        self.book.rollback(committed["book"])
        del self.claimed_fps[committed["claimed"] :]
        self.head = committed["head"]
        res.bound_hit, res.resumable = None, False  # decided again after the chunks left
        self.stolen, self.claims_sent = committed["stolen"], committed["claims_sent"]
        res.action_counts, res.props, res.violations = {}, {}, []
        res.goals = {g: None for g in self.options.goals}
        res.goal_initial = {}
        self.depth_hit = _restore_results(res, committed["results"])
        self.seen_viol.clear()
        self.seen_viol.update((v.prop, v.key) for v in res.violations)
        self.inbox = [[] for _ in range(n)]
        self.learned = [[] for _ in range(n)]

    def _recover(self) -> None:
        """A worker was lost: every worker's part of the uncommitted chunk is dropped with it;
        new workers restore the last commit and the chunk is expanded again, as it was the first
        time."""
        if self.pool is not None:  # (None: the new workers could not start)
            _account(self.cost, self.pool)
            self.pool.close(kill=True)
            self.pool = None
        self.kept_info.extend(x for x in self.latest_info if x is not None)  # what the workers knew (finish)
        self.latest_info = [None] * self.n
        self._rollback()
        self.fresh_start = self.options.resume is None and self.committed["book"][0] == 0

    def _result(self, ends: list) -> ExploreResult:
        """The result, from the workers' last answers (`ends`: each one's finish info, visited
        bytes and claimed count): what the protocol cost, the cycle search, the status."""
        res, book, cost, n = self.res, self.book, self.cost, self.n
        if self.lost:
            res.lost_workers = self.lost
        res.worker_info = [info for info, _nb, _c in ends] + self.kept_info
        # what the protocol cost (run-only, never deterministic): this process's CPU over the chunk
        # rounds, the bytes it sent to and received from the workers, each worker's CPU expanding
        res.protocol = {
            "transport": getattr(self.make_pool, "kind", "worker processes"),
            "workers": n,
            "start_s": round(cost["start_s"], 6),  # starting the workers (each builds its system)
            "chunks": cost["chunks"],
            "round_s": round(cost["round_s"], 6),
            "coordinator_cpu_s": round(cost["coordinator_cpu_s"], 6),
            "bytes_out": cost["bytes_out"],
            "bytes_in": cost["bytes_in"],
            "worker_cpu_s": [round(cost["worker_cpu"].get(w, 0.0), 6) for w in range(n)],
            # what the coordinator keeps of the visited set: the first index of each depth, and the
            # owners' committed arrays (one set per owner and chunk, never read per state)
            "levels": len(book.levels),
            "owner_arrays": sum(len(d) for d in book.deltas),
            "trace_rounds": cost["trace_rounds"],  # requests for tree links (a round per depth walked)
        }
        if self.balance[1] > 0:
            res.balance = round(self.balance[0] / self.balance[1], 4)
        if n > 1:
            res.stolen = self.stolen
        if any(c is not None for _info, _nb, c in ends):
            res.claimed = sum(c or 0 for _info, _nb, c in ends)
            res.judged_again = self.claims_sent - res.claimed
        self.visitor.on_done(book.states, res.max_depth)
        res.states = book.states
        res.generated = res.transitions + book.roots
        if res.bound_hit is None:
            if book.back:  # a non-tree edge goes no deeper than its source: search the whole graph
                _check_cycle(res, *book.assemble()[1:])
            else:  # every non-tree edge goes one layer down: acyclic (as core._find_cycle decides)
                _check_cycle(res, array("q"), array("I"), None, array("I"), array("I"), array("I"))
        res.props.setdefault(DEADLOCK, PropStats())
        res.props.setdefault(CYCLE, PropStats())
        res.props.setdefault(FAULT, PropStats())
        res.elapsed = time.monotonic() - self.t0
        if self.options.measure_memory:
            res.visited_bytes = sum(nb for _info, nb, _c in ends)  # the owners' fingerprints and records
        _set_status(res)
        return res


__all__ = ["CHUNK", "Coordinator", "WorkerError", "WorkerLost", "chunk_size", "explore_parallel"]
