"""``-j N`` and the order of work: boards checked by worker processes, in an order chosen by
their expected cost (docs/checking.md, "Parallel checking and the order of boards").

- :func:`board_cost`: the expected cost of a board, estimated from the board alone (no cache of
  earlier runs: what is run, and so what `--fail-fast` and `bpcheck mutants` report, depends on
  the input only).
- :func:`cost_order`: board indices, most expensive first (throughput: the long boards start at
  once and the short ones fill the gaps) or cheapest first (the time to the first
  counterexample: `check --fail-fast`, `bpcheck mutants`).
- :func:`stream_order`: the order `check -j N` hands boards to its workers: board order, so
  that stdout (which prints in board order) streams from the start, except that a long board
  starts as soon as waiting longer would make the run longer (its latest start, from the
  expected costs, with a margin); the run lasts about as long as most expensive first.
- :class:`BudgetRounds`: the schedule of `bpcheck mutants` and `check --fail-fast`, cheapest
  first in rounds of growing state budgets, so the first counterexample comes after about the
  time of the cheapest board that shows it, even one the estimate ranks late.
- :func:`run_check_jobs`: `bpcheck check` with worker processes (explorers/pool.py), or
  in this process for `--fail-fast -j 1`. Results are gathered and printed in board order,
  never in completion order, so every output is the same whatever N; the run's progress, a
  verdict stdout holds back and the first counterexample go to stderr as they come
  (cli/feedback.py).

Two bounds reach a worker that is stuck inside one engine call (docs/sweep.md, "A slow board"):
with ``--timeout S`` a board still running :data:`DEADLINE_GRACE` seconds after S (counted from
the moment its worker began it: explorers/pool.py) has its worker killed and replaced, the board inconclusive
with a fixed reason (:func:`deadline_reason`); and once a signal arrived, workers that have not
come back :data:`STOP_KILL_AFTER` seconds later are killed (their boards "interrupted").
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from bpcheck.errors import InputError
from bpcheck.explorers import cluster
from bpcheck.explorers.cluster import active
from bpcheck.explorers.core import Bounds
from bpcheck.explorers.pool import Outcome, cpu_count, open_pool
from bpcheck.explorers.progress import NullTask
from bpcheck.harness.lifecycle import Interrupted

# log(states) ~ a + b * monsters + c * spell/trap cards + d * hand cards + e * other pile cards:
# least squares on the 73 seed boards' exhaustive state counts (tests/perft.json, 2026-12-01);
# rank (Spearman) correlation with the measured counts 0.87. Each card on the field multiplies
# the state space by about e (a card that can act in every window adds every interleaving).
COST_WEIGHTS = {"base": 1.64, "monsters": 0.97, "spells_traps": 1.15, "hand": 0.81, "other": 0.31}
# The share of the states a reduced exploration stores (explorers/reduce.py: decisions and terminal
# states), which board_cost, fitted on every state, does not know: 298,578 of 1,073,091 over the
# seed corpus (tests/perft.json). Only the progress's ETA uses it (cli/feedback.py).
REDUCED_SHARE = 0.28
# A board expected to have this many states or more is explored by every worker at once
# (run_check_jobs, `shard`); the rest one board per worker. Only the seven-card board of the
# seed corpus is above it (expected 112,000; 742,799 states); the next is at 36,000.
SHARD_AT = 50_000
# --timeout S is checked between states (explorers/core.py); a board whose worker is still busy S +
# DEADLINE_GRACE seconds after it began the board is inside one state (an engine call that does
# not return: SPYGAL Misty on the EDOPro core, 12 minutes) and is killed. The grace covers what a
# worker does before its exploration's clock starts (the engine's start; a fresh worker's imports
# come before it begins: pool.STARTUP_GRACE) and the state in progress at S.
DEADLINE_GRACE = 10.0
# After the first signal, a worker still running its board this many seconds later is inside one
# state (an engine call) and is killed: the run stops within about a second whatever the engine does.
STOP_KILL_AFTER = 1.0


def deadline_reason(timeout: float) -> str:
    """The bound_hit of a board whose worker the ``--timeout`` deadline killed: the same words
    whenever the kill came (nothing of the board's partial exploration is kept)."""
    return f"killed after {timeout:g} s (--timeout) + {DEADLINE_GRACE:g} s grace: one step did not return; the worker process was killed and replaced"


def board_features(board) -> dict[str, int]:
    s = board.state
    return {
        "monsters": sum(1 for _ in s.monsters()),
        "spells_traps": sum(1 for p in s.players for x in p.spells if x is not None) + sum(1 for p in s.players if p.field_zone is not None),
        "hand": sum(len(p.hand) for p in s.players),
        "other": sum(len(p.graveyard) + len(p.banished) + len(p.deck) for p in s.players),
    }


def board_cost(board) -> float:
    """The expected number of states of a board (an estimate: only its order matters)."""
    f = board_features(board)
    w = COST_WEIGHTS
    return math.exp(w["base"] + sum(w[k] * v for k, v in f.items()))


def cost_order(costs: list[float], cheapest_first: bool) -> list[int]:
    """Indices by cost; ties in the given (board) order."""
    return sorted(range(len(costs)), key=lambda i: (costs[i] if cheapest_first else -costs[i], i))


STREAM_MARGIN = 0.5  # a long board starts by half the expected run minus its own cost (the estimate is rough)
STREAM_LONG = 8  # a board is long when it costs at least 1/(8 N) of the whole run (N workers)


def stream_order(indices: list[int], costs: list[float], jobs: int) -> list[int]:
    """The order `check -j N` hands the boards ``indices`` (in board order) to ``jobs`` workers.

    Most expensive first gives the shortest run, but stdout prints in board order: the first
    board in order, a cheap one, came last, and stdout stayed empty until the end (issue 34:
    `./scripts/check` printed nothing for minutes, then everything). Here the workers take the
    boards in board order, and a long board (at least 1/(STREAM_LONG x jobs) of the expected
    total) is taken first, most expensive first among those due, once a worker frees at or
    after its latest start: ``(1 - STREAM_MARGIN) x M - cost``, where ``M`` is the expected
    run (the total over the workers, or the longest board). The schedule is simulated on the
    expected costs (each worker takes the next board when it frees); the order it dispatched in
    is the order returned. Deterministic: it depends on the costs only. On the seed boards'
    estimates the run lasts as long as most expensive first (2 and 4 workers) while the first
    line comes at once; with each board's real cost off by a random factor (lognormal, sigma
    0.8), 1.002x the median and 1.05x at the 90th percentile with 2 workers."""
    if jobs <= 1 or len(indices) <= 1:
        return list(indices)
    total = sum(costs[i] for i in indices)
    longest = max(costs[i] for i in indices)
    run = max(total / jobs, longest)
    long_at = total / (STREAM_LONG * jobs)
    left = list(indices)
    free = [0.0] * jobs  # when each worker frees, in the simulation
    order: list[int] = []
    while left:
        w = min(range(jobs), key=lambda k: (free[k], k))
        now = free[w]
        due = [i for i in left if costs[i] >= long_at and now >= (1 - STREAM_MARGIN) * run - costs[i]]
        i = max(due, key=lambda i: (costs[i], -i)) if due else left[0]
        left.remove(i)
        order.append(i)
        free[w] = now + costs[i]
    return order


def resolve_jobs(n: int | None) -> int:
    if n is None:
        c = active()
        return c.workers() if c is not None else 1
    if n == 0:
        c = active()
        return c.workers() if c is not None else cpu_count()
    return n


def setup_cluster(args: argparse.Namespace, engine: str | None = None, engine_kw: dict | None = None, check_engine: bool = True) -> None:
    """``--cluster ADDRESS``: connect (or start ``local:N``) and check that every node can build
    the engine. Bad usage (InputError, exit 2): no Ray (with the install line), a malformed or
    unreachable address, a node that lacks the engine. A note on stderr says where the run goes."""
    address = getattr(args, "cluster", None)
    if not address:
        return

    c = cluster.connect(address)
    if check_engine:
        c.check_engine(engine, dict(engine_kw or {}))
    if not getattr(args, "quiet", False):  # one line, in CI too: starting Ray takes seconds
        sys.stderr.write(f"bpcheck: {c.describe()} (connected in {c.started:.1f} s)\n")


def _cluster_note(feed) -> None:
    """With --cluster, every progress line says where the work runs."""
    c = active()
    prog = getattr(feed, "progress", None)
    if c is not None and prog is not None:
        prog.extra("cluster", f"Ray, {c.workers()} workers")


@dataclass
class Entry:
    """What one board of a run came to, in the order boards are printed."""

    kind: str  # "result", "error" (bad input), "crash" (the worker died), "internal" (a bpcheck bug)
    value: Any = None  # BoardResult, InputError, or the one-line message
    traceback: str | None = None


# States per board in the first budget round (`bpcheck mutants`, `check --fail-fast`); x4 per round.
FIRST_BUDGET = 64
BUDGET_GROWTH = 4


@dataclass(frozen=True)
class Try:
    """One exploration in a :class:`BudgetRounds` schedule: item ``item`` (its position in the
    order tried) in round ``round``, within ``cap`` states (None: no bound). ``final``: ``cap``
    is the user's own bound (or there is none), so a bound hit now is a real one."""

    round: int
    item: int
    cap: int | None
    final: bool

    @property
    def key(self) -> tuple[int, int]:
        """Its place in the sequential schedule: round first, then the order of the items."""
        return (self.round, self.item)


class BudgetRounds:
    """The schedule of `bpcheck mutants` and `check --fail-fast`: rounds of growing state budgets
    (FIRST_BUDGET, x BUDGET_GROWTH per round: 64, 256, 1,024, ... states, never above
    ``max_states``) over ``n`` items (boards) in a fixed order (cheapest first). Every item still
    open is explored in each round within the round's budget; one cut by the budget (:meth:`cut`)
    comes back in the next round, one explored to the end (or to the user's own bound) leaves. A
    violation a few steps deep on an item the cost estimate ranks late is then found in the first
    rounds, not after every cheaper item was exhausted, and BFS within a budget finds the same
    shortest counterexample as without it (a capped exploration is a prefix of the full one).

    The sequential order of tries is their :attr:`Try.key` (round, item). :meth:`take` hands out
    the earliest try that can start; several may run at once (``-j N``): what is reported is
    decided by the keys alone (:meth:`stop`, :meth:`settled`), so it is the same whatever the
    number of workers. ``rounds=False``: each item once, with ``max_states`` (final)."""

    def __init__(self, n: int, max_states: int | None, rounds: bool = True) -> None:
        self.max_states = max_states
        self.rounds = rounds
        self._next: dict[int, Try] = {k: self._try(0, k) for k in range(n)}  # item -> its next try, not started
        self._running: dict[int, Try] = {}
        self._ended: dict[int, tuple[int, int]] = {}  # item -> the key of the try that ended it
        self.stop_key: tuple[int, int] | None = None

    def _try(self, r: int, item: int) -> Try:
        if not self.rounds:
            return Try(r, item, self.max_states, True)
        budget = FIRST_BUDGET * BUDGET_GROWTH**r
        final = self.max_states is not None and budget >= self.max_states
        return Try(r, item, self.max_states if final else budget, final)

    def take(self) -> Try | None:
        """The earliest try of the schedule not started yet (None: none can start now).

        The last item left open (every other one ended before it in the schedule, nothing has
        failed) is explored to the end at once (``max_states``, final): with no other item to
        turn to, more rounds would only explore its first states again. Its result is the one
        the rounds would end with (a capped BFS is a prefix of the full one), and as every other
        item ended before it in the schedule, so is the report. With workers, while other tries
        run it is not known yet whether it is the last, and it gets the round's budget as usual:
        the report is the same either way (only the number of its explorations differs)."""
        if not self._next:
            return None
        item = min(self._next, key=lambda k: self._next[k].key)
        t = self._next[item]
        if self.rounds and not t.final and self.stop_key is None and len(self._next) == 1 and not self._running:
            if all(k < t.key for k in self._ended.values()):
                t = Try(t.round, item, self.max_states, True)
        del self._next[item]
        self._running[item] = t
        return t

    @staticmethod
    def cut(t: Try, bound_hit: str | None) -> bool:
        """Whether an exploration of ``t`` that stopped with ``bound_hit`` (and no violation) was
        cut by the round's budget only: the item comes back in the next round."""
        return not t.final and bound_hit == f"max states ({t.cap})"

    def done(self, t: Try, again: bool) -> None:
        """``t`` came back; ``again``: cut by the budget (:meth:`cut`), so the next round has it."""
        self._running.pop(t.item, None)
        if not again:
            self._ended[t.item] = t.key
        elif self.stop_key is None or (t.round + 1, t.item) < self.stop_key:
            self._next[t.item] = self._try(t.round + 1, t.item)

    def stop(self, t: Try) -> list[Try]:
        """``t`` ends the run (a failure): no try after it in the schedule is wanted. Returns the
        running tries after it (the caller cancels them); the pending ones are dropped."""
        if self.stop_key is None or t.key < self.stop_key:
            self.stop_key = t.key
        late = [u for u in self._running.values() if u.key > self.stop_key]
        for u in late:
            del self._running[u.item]
        for k in [k for k, u in self._next.items() if u.key > self.stop_key]:
            del self._next[k]
        return late

    def settled(self, key: tuple[int, int]) -> bool:
        """Every try before ``key`` in the schedule is done: a result at ``key`` is final (no
        earlier try can still stop the run before it)."""
        return all(u.key > key for u in (*self._next.values(), *self._running.values()))

    def has(self, item: int) -> bool:
        """Whether ``item`` still has a try to run (or running)."""
        return item in self._next or item in self._running


class _NoFeed:
    """The progress of a run that shows none (run_check_jobs called without a feed)."""

    enabled = False

    def plan(self, boards) -> None:
        pass

    def start(self, board, display: str):
        return NullTask()

    def found(self, board, task):
        return None

    def note(self, board, task, payload) -> None:
        pass

    def finish(self, task, br, counted: bool = True) -> None:
        pass

    def held(self, br, display: str, settled: bool = True) -> None:
        pass


def _with_progress(args: tuple, feed, board, task) -> tuple:
    """A board's task arguments with its progress (a task checked in this process): its last
    argument is its controls dict."""
    if not feed.enabled:
        return args
    return (*args[:-1], dict(args[-1], progress=task, found=feed.found(board, task)))


@dataclass
class JobsOutcome:
    results: list = field(default_factory=list)  # BoardResult, in board order
    errors: list[dict] = field(default_factory=list)
    not_started: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # --fail-fast: first try after the stop in the schedule
    not_finished: list[str] = field(default_factory=list)  # --fail-fast: explored within a budget only, no verdict
    stopped_at: str | None = None  # --fail-fast: the first failing board in the schedule
    crashed: list[str] = field(default_factory=list)  # "display: how the worker died"
    internal: str | None = None  # one line: the first bpcheck bug a worker hit
    internal_traceback: str | None = None


def run_check_jobs(
    files: list,
    jobs: int,
    fail_fast: bool,
    task: Callable,
    task_args: Callable[[Any, Any], tuple],
    restore: Callable[[Any], Any],
    emit: Callable[[int, Entry], None],
    load: Callable[[Any, str], Any],
    cut_short: Callable[[Any], Any],
    sig,
    shard: Callable[[Any], tuple | None] | None = None,
    *,
    bounds,
    rounds: bool = True,
    feed=None,
    killed: Callable[[Any, str], Any] | None = None,
) -> JobsOutcome:
    """Check ``files`` ((path, display) in board order) with ``jobs`` worker processes (or in this
    process when ``jobs`` is 1, for ``--fail-fast``). ``load(path, display)`` loads a board (bad
    input raises InputError); ``task(*task_args(board, bounds))`` checks one within ``bounds``
    and answers ("ok", BoardResult) or ("input", file, field, problem); ``restore`` fixes a
    (final) BoardResult up in this process; ``emit(i, entry)`` prints board i, called in board
    order only; ``cut_short(board)`` is the result of a board a second signal stopped where it
    was. ``sig`` is the run's :class:`bpcheck.harness.lifecycle.Signals`: the first signal stops every
    worker's exploration at its next state (those boards are inconclusive, "interrupted
    (SIGNAL)") and nothing more starts.

    ``fail_fast``: the boards in budget rounds, cheapest first (:func:`_fail_fast_jobs`);
    ``rounds`` False: each board once, within ``bounds``, cheapest first.

    ``shard(board)``: the task arguments to explore one board over all the workers at once (the
    sharded explorer, explorers/parallel.py), or None. With several workers (not --fail-fast),
    the boards it accepts are checked first, one after the other, each on every worker; the
    others then one per worker. One board that alone costs more than all the others together
    would otherwise keep one worker busy long after the rest are done.

    ``feed``: the run's progress on stderr (cli/feedback.py ``CheckFeed``): a task per board or
    try, the workers' counts and violations as they come, and each result stdout holds back
    for board order. A task's last argument is its controls dict (``check_board_task``): the
    progress of a board checked in this process is added there.

    ``killed(board, why)``: the result of a board whose worker the deadline killed (with
    ``bounds.timeout``: :data:`DEADLINE_GRACE`; ``why`` is :func:`deadline_reason`). Without it
    there is no deadline."""
    if feed is None:
        feed = _NoFeed()
    out = JobsOutcome()
    n = len(files)
    boards: list[Any] = [None] * n
    entries: dict[int, Entry] = {}
    for i, (path, display) in enumerate(files):  # bad input is found here, printed in its place
        try:
            boards[i] = load(path, display)
        except InputError as e:
            entries[i] = Entry("error", e)
        done = getattr(boards[i], "result_without_exploring", None)
        if done is not None:  # not read within its bounds (--timeout, --memory-limit): inconclusive as it is
            entries[i], boards[i] = Entry("result", done), None
    todo = [i for i in range(n) if boards[i] is not None]
    costs = [board_cost(b) if b is not None else 0.0 for b in boards]
    order = [i for i in cost_order(costs, cheapest_first=fail_fast) if boards[i] is not None]
    feed.plan(boards)
    if fail_fast:
        _fail_fast_jobs(files, boards, entries, order, jobs, task, task_args, restore, emit, cut_short, sig, bounds, out, rounds, feed)
    else:
        _all_jobs(files, boards, entries, order, todo, jobs, task, task_args, restore, emit, cut_short, sig, bounds, shard, out, feed, killed)
    for i in range(n):
        e = entries.get(i)
        if e is None:
            continue
        if e.kind == "result":
            out.results.append(e.value)
        elif e.kind == "error":
            err = e.value
            out.errors.append({"file": err.file, "field": err.field, "problem": err.problem})
    return out


def _all_jobs(files, boards, entries, order, todo, jobs, task, task_args, restore, emit, cut_short, sig, bounds, shard, out, feed, killed=None) -> None:
    """Every board on ``jobs`` workers (the boards ``shard`` accepts first, each on every worker;
    then :func:`stream_order`: board order, long boards in time); printed in board order as each
    one and every board before it is done. With ``killed`` and ``bounds.timeout``, a board whose
    worker is still busy :data:`DEADLINE_GRACE` seconds past the timeout is killed (``killed``
    gives its result)."""
    n = len(files)
    printed = 0

    def flush() -> None:
        nonlocal printed
        while printed < n and printed in entries:
            emit(printed, entries[printed])
            printed += 1

    running: dict[int, Any] = {}  # board index -> its progress task

    def task_of(i: int):
        if i not in running:
            running[i] = feed.start(boards[i], files[i][1])
        return running[i]

    def record(o: Outcome) -> None:
        i = o.index
        display = files[i][1]
        if o.deadline and killed is not None:  # inside one step past --timeout: inconclusive, as a bound
            entries[i] = Entry("result", killed(boards[i], deadline_reason(bounds.timeout)))
        elif o.crashed:
            entries[i] = Entry("crash", o.error)
            out.crashed.append(f"{display}: {o.error}")
        elif not o.ok:
            entries[i] = Entry("internal", o.error, o.traceback)
            if out.internal is None:
                out.internal, out.internal_traceback = f"{o.error} (checking {display})", o.traceback
        elif o.value[0] == "input":
            entries[i] = Entry("error", InputError(*o.value[1:]))
        else:
            entries[i] = Entry("result", restore(o.value[1]))
        e = entries[i]
        feed.finish(task_of(i), e.value if e.kind == "result" else None)
        running.pop(i, None)
        flush()
        if printed <= i and e.kind == "result":  # stdout holds it back for board order
            feed.held(e.value, display)

    def here(i: int, args: tuple) -> bool:
        """Check board i in this process; False after a bug in bpcheck (no new boards start)."""
        args = _with_progress(args, feed, boards[i], task_of(i))
        try:
            record(Outcome(i, True, task(*args)))
        except Interrupted:
            interrupted_now.append(i)
            raise
        except Exception as e:  # bpcheck's own bug: stop here, as the sequential run does
            record(Outcome(i, False, error=f"{type(e).__name__}: {e}".splitlines()[0], traceback="".join(traceback.format_exception(e))))
            return False
        return True

    _cluster_note(feed)
    deadline = bounds.timeout + DEADLINE_GRACE if killed is not None and bounds is not None and bounds.timeout is not None else None
    pool = open_pool(jobs, on_note=lambda i, payload: feed.note(boards[i], task_of(i), payload), name=lambda i: files[i][1], deadline=deadline)  # processes, or Ray tasks with --cluster
    interrupted_now: list[int] = []  # boards cut short by a second signal
    try:
        signalled: float | None = None  # when the first signal was acted on

        def tick() -> None:
            nonlocal signalled
            if sig.signum is not None and signalled is None:
                signalled = time.monotonic()
                pool.stop_all(sig.signum)  # workers stop at their next state; results come back
            elif signalled is not None and pool.running() and time.monotonic() - signalled >= STOP_KILL_AFTER:
                raise Interrupted(sig.signum)  # a worker inside one step (an engine call): killed below, as at a second signal
            for j in pool.running():
                task_of(j)

        big = {}
        if shard is not None:
            for i in order:
                a = shard(boards[i])
                if a is not None:
                    big[i] = a
        for i in order:
            if i in big and (sig.signum is not None or not here(i, big[i])):
                break
        rest = [i for i in order if i not in big] if not (big and out.internal) and sig.signum is None else []
        rest = stream_order(sorted(rest), [board_cost(b) if b is not None else 0.0 for b in boards], jobs)  # stdout streams from the start
        tasks = [task_args(b, bounds) if b is not None else () for b in boards]
        for o in pool.run(task, tasks, rest, tick=tick):
            record(o)
            if not o.ok and not o.crashed and not o.deadline:  # a bpcheck bug: no new boards (as the sequential run)
                pool.cancel(pool.pending())
    except Interrupted:  # a second signal: stop the workers now, keep what came back
        interrupted_now += pool.running()  # (a sharded board cut short is already listed)
        pool.close(kill=True)
        for i in interrupted_now:
            entries[i] = Entry("result", cut_short(boards[i]))
    finally:
        for i in list(running):
            feed.finish(running.pop(i), None)
        pool.close()
    for i in order:
        if i not in entries:
            out.not_started.append(files[i][1])
    where = {f[1]: k for k, f in enumerate(files)}
    out.not_started.sort(key=where.__getitem__)
    while printed < n:  # what is left (a signal, a bug): every board that has an entry, in order
        if printed in entries:
            emit(printed, entries[printed])
        printed += 1


def _fail_fast_jobs(files, boards, entries, order, jobs, task, task_args, restore, emit, cut_short, sig, bounds, out, with_rounds: bool = True, feed=None) -> None:
    """`check --fail-fast`: the boards in :class:`BudgetRounds` (cheapest first, rounds of
    growing state budgets), in this process (``jobs`` 1) or on ``jobs`` workers. The run stops
    at the first failing try of the schedule (round, then cost order); reported are the boards
    whose final try comes before it, and it. A board cut by a budget and not explored to the end
    before the stop is never reported (no verdict: ``not_finished``); a board whose first try
    comes after it is ``not_run``. Every try's result depends on its board and budget alone, and
    what is reported on the tries' keys alone, so the report is the same whatever ``jobs``."""
    n = len(files)
    rounds = BudgetRounds(len(order), bounds.max_states, rounds=with_rounds)
    final_try: dict[int, Try] = {}  # board index -> the try its entry came from
    cut_at: dict[int, tuple[int, int]] = {}  # board index -> the key of its first try cut by a budget
    pos = {i: k for k, i in enumerate(order)}
    stop: list[Try] = []  # the failing try earliest in the schedule
    halted = False  # a bug in bpcheck: no new try starts
    printed = 0
    feed = feed if feed is not None else _NoFeed()
    tries: dict[Try, Any] = {}  # a try running -> its progress task

    def task_of(t: Try):
        if t not in tries:
            i = order[t.item]
            tries[t] = feed.start(boards[i], files[i][1])
        return tries[t]

    def resolved(i: int) -> bool:
        if boards[i] is None:
            return True  # bad input, printed in its place
        t = final_try.get(i)
        if t is not None:
            return rounds.settled(t.key)
        return bool(stop) and not rounds.has(pos[i])  # no result and no try wanted any more

    def flush() -> None:
        nonlocal printed
        while printed < n and resolved(printed):
            if printed in entries:
                emit(printed, entries[printed])
            printed += 1

    def record(t: Try, o: Outcome) -> None:
        nonlocal halted
        i = order[t.item]
        display = files[i][1]
        if stop and t.key > stop[0].key:
            # A try after the stop in the schedule, whose outcome came back in the same batch as
            # the stop's (a loaded machine: both ended before the parent looked): the stop
            # cancelled it, and the sequential schedule never runs it. Never reported, or the
            # report would depend on when the parent collects (issue 34).
            feed.finish(tries.pop(t, None) or task_of(t), None, counted=False)
            return
        if o.crashed:
            entries[i] = Entry("crash", o.error)
        elif not o.ok:
            entries[i] = Entry("internal", o.error, o.traceback)
            if out.internal is None:
                out.internal, out.internal_traceback = f"{o.error} (checking {display})", o.traceback
            halted = True
        elif o.value[0] == "input":
            entries[i] = Entry("error", InputError(*o.value[1:]))
        else:
            raw = o.value[1]
            if not raw.result.violations and rounds.cut(t, raw.result.bound_hit):
                cut_at.setdefault(i, t.key)  # this budget only: no verdict, the next round explores it again
                rounds.done(t, True)
                feed.finish(tries.pop(t, None) or task_of(t), None, counted=False)
                flush()
                return
            entries[i] = Entry("result", restore(raw))  # only a final result: counted once
        final_try[i] = t
        rounds.done(t, False)
        e = entries[i]
        feed.finish(tries.pop(t, None) or task_of(t), e.value if e.kind == "result" else None)
        if e.kind == "result" and e.value.verdict == "fail" and (not stop or t.key < stop[0].key):
            stop[:] = [t]
            late = rounds.stop(t)
            for j, u in list(final_try.items()):  # finished after the stop in the schedule: not reported
                if u.key > t.key:
                    del final_try[j]
                    entries.pop(j, None)
            if pool is not None and late:
                pool.cancel([tid for tid, u in ids.items() if u in late])
        flush()
        if printed <= i and e.kind == "result" and i in entries:  # held back until the earlier tries settle
            feed.held(e.value, display, settled=False)

    def bounds_of(t: Try) -> Bounds:
        return Bounds(t.cap, bounds.max_depth, bounds.timeout)

    def here(t: Try) -> None:
        """One try in this process."""
        i = order[t.item]
        current.append(i)
        try:
            record(t, Outcome(i, True, task(*_with_progress(task_args(boards[i], bounds_of(t)), feed, boards[i], task_of(t)))))
        except Interrupted:
            raise
        except Exception as e:  # bpcheck's own bug: stop here, as the sequential run does
            record(t, Outcome(i, False, error=f"{type(e).__name__}: {e}".splitlines()[0], traceback="".join(traceback.format_exception(e))))
        current.remove(i)

    ids: dict[int, Try] = {}  # pool task id -> its try

    def on_note(tid: int, payload) -> None:
        t = ids.get(tid)
        if t is not None:
            feed.note(boards[order[t.item]], task_of(t), payload)

    _cluster_note(feed)
    pool = open_pool(jobs, on_note=on_note, name=lambda tid: files[order[ids[tid].item]][1] if tid in ids else f"task {tid}") if jobs > 1 else None  # processes, or Ray tasks with --cluster
    current: list[int] = []  # boards being explored in this process
    try:
        if pool is None:
            while not halted and sig.signum is None:
                t = rounds.take()
                if t is None:
                    break
                here(t)
        else:
            signalled: float | None = None  # when the first signal was acted on
            next_id = 0
            while True:
                while not halted and sig.signum is None and pool.in_flight() < jobs:
                    t = rounds.take()
                    if t is None:
                        break
                    ids[next_id] = t
                    pool.submit(next_id, task, task_args(boards[order[t.item]], bounds_of(t)))
                    next_id += 1
                if not pool.in_flight():
                    break
                if sig.signum is not None and signalled is None:
                    signalled = time.monotonic()
                    pool.stop_all(sig.signum)  # workers stop at their next state; results come back
                elif signalled is not None and pool.running() and time.monotonic() - signalled >= STOP_KILL_AFTER:
                    raise Interrupted(sig.signum)  # a worker inside one step (an engine call): killed below
                for j in pool.running():
                    if j in ids:
                        task_of(ids[j])
                for o in pool.collect(0.2):
                    t = ids.pop(o.index)
                    record(t, Outcome(order[t.item], o.ok, o.value, o.error, o.traceback, o.crashed))
    except Interrupted:  # a second signal: stop the workers now, keep what came back
        cut = list(current)
        if pool is not None:
            cut += [order[ids[j].item] for j in pool.running() if j in ids]
            pool.close(kill=True)
        for i in cut:
            entries[i] = Entry("result", cut_short(boards[i]))
            final_try.setdefault(i, Try(-1, -1, None, True))
    finally:
        for t in list(tries):
            feed.finish(tries.pop(t), None, counted=False)
        if pool is not None:
            pool.close()
    key = stop[0].key if stop else None
    for i in order:  # the boards with no result: explored within a budget only, or never
        if i in entries:
            continue
        c = cut_at.get(i)
        if c is not None and (key is None or c < key):
            out.not_finished.append(files[i][1])
        elif key is not None and not rounds.has(pos[i]):
            out.not_run.append(files[i][1])  # its first try comes after the stop
        else:
            out.not_started.append(files[i][1])  # a signal or a bug stopped the run first
    if stop:
        out.stopped_at = files[order[stop[0].item]][1]
    where = {f[1]: k for k, f in enumerate(files)}
    for lst in (out.not_started, out.not_run, out.not_finished):
        lst.sort(key=where.__getitem__)
    for i in sorted(final_try):
        if entries.get(i) is not None and entries[i].kind == "crash":
            out.crashed.append(f"{files[i][1]}: {entries[i].value}")
    while printed < n:  # what is left (a signal, a bug): every board that has an entry, in order
        if printed in entries:
            emit(printed, entries[printed])
        printed += 1


__all__ = [
    "BUDGET_GROWTH",
    "COST_WEIGHTS",
    "FIRST_BUDGET",
    "SHARD_AT",
    "BudgetRounds",
    "DEADLINE_GRACE",
    "Entry",
    "STOP_KILL_AFTER",
    "JobsOutcome",
    "board_cost",
    "board_features",
    "cost_order",
    "deadline_reason",
    "stream_order",
    "resolve_jobs",
    "run_check_jobs",
    "Try",
]
