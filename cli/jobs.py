"""``-j N`` and the order of work: boards checked by worker processes, in an order chosen by
their expected cost (docs/checking.md, "Parallel checking and the order of boards").

- :func:`board_cost`: the expected cost of a board, estimated from the board alone (no cache of
  earlier runs: what is run, and so what `--fail-fast` and `bpcheck mutants` report, depends on
  the input only).
- :func:`cost_order`: board indices, most expensive first (throughput: the long boards start at
  once and the short ones fill the gaps) or cheapest first (the time to the first
  counterexample: `check --fail-fast`, `bpcheck mutants`).
- :func:`run_check_jobs`: `bpcheck check` with worker processes (explorers/pool.py), or
  in this process in cost order for `--fail-fast -j 1`. Results are gathered and printed in
  board order, never in completion order, so every output is the same whatever N.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from bpcheck.errors import InputError

# log(states) ~ a + b * monsters + c * spell/trap cards + d * hand cards + e * other pile cards:
# least squares on the 73 seed boards' exhaustive state counts (tests/perft.json, 2026-12-01);
# rank (Spearman) correlation with the measured counts 0.87. Each card on the field multiplies
# the state space by about e (a card that can act in every window adds every interleaving).
COST_WEIGHTS = {"base": 1.64, "monsters": 0.97, "spells_traps": 1.15, "hand": 0.81, "other": 0.31}
# A board expected to have this many states or more is explored by every worker at once
# (run_check_jobs, `shard`); the rest one board per worker. Only the seven-card board of the
# seed corpus is above it (expected 112,000; 742,799 states); the next is at 36,000.
SHARD_AT = 50_000


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


def jobs_type(text: str) -> int:
    """-j N: N >= 1 worker processes, or 0 for the number of CPUs this process may use."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of worker processes (0 = one per CPU), got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (one per CPU) or more, got {n}")
    return n


def add_jobs_argument(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "-j",
        "--jobs",
        type=jobs_type,
        default=1,
        metavar="N",
        help=f"{what} in N worker processes (default 1: in this process; 0: one per CPU); the output is the same whatever N",
    )


def resolve_jobs(n: int) -> int:
    from bpcheck.explorers.pool import cpu_count

    return cpu_count() if n == 0 else n


class BoardsProgress:
    """One line on stderr for a run of many tasks: on a terminal only, never in CI."""

    def __init__(self, label: str, total: int, enabled: bool | None = None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty() and not os.environ.get("CI")
        self.enabled = enabled
        self.label = label
        self.total = total
        self.last = 0.0
        self.shown = False

    def update(self, done: int, running: list[str], force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.5:
            return
        self.last = now
        names = ", ".join(running)
        if len(names) > 60:
            names = names[:57] + "..."
        sys.stderr.write(f"\r{self.label}: {done}/{self.total} done, running: {names}".ljust(100)[:100])
        sys.stderr.flush()
        self.shown = True

    def done(self) -> None:
        if self.enabled and self.shown:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


@dataclass
class Entry:
    """What one board of a run came to, in the order boards are printed."""

    kind: str  # "result", "error" (bad input), "crash" (the worker died), "internal" (a bpcheck bug)
    value: Any = None  # BoardResult, InputError, or the one-line message
    traceback: str | None = None


@dataclass
class JobsOutcome:
    results: list = field(default_factory=list)  # BoardResult, in board order
    errors: list[dict] = field(default_factory=list)
    not_started: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # --fail-fast: after the first failure, in the cost order
    stopped_at: str | None = None  # --fail-fast: the first failing board in the cost order
    crashed: list[str] = field(default_factory=list)  # "display: how the worker died"
    internal: str | None = None  # one line: the first bpcheck bug a worker hit
    internal_traceback: str | None = None


def run_check_jobs(
    files: list,
    jobs: int,
    fail_fast: bool,
    task: Callable,
    task_args: Callable[[Any], tuple],
    restore: Callable[[Any], Any],
    emit: Callable[[int, Entry], None],
    load: Callable[[Any, str], Any],
    cut_short: Callable[[Any], Any],
    sig,
    shard: Callable[[Any], tuple | None] | None = None,
) -> JobsOutcome:
    """Check ``files`` ((path, display) in board order) with ``jobs`` worker processes (or in this
    process when ``jobs`` is 1, in the cost order). ``load(path, display)`` loads a board (bad
    input raises InputError); ``task(*task_args(board))`` checks one and answers ("ok",
    BoardResult) or ("input", file, field, problem); ``restore`` fixes a BoardResult up in this
    process; ``emit(i, entry)`` prints board i, called in board order only; ``cut_short(board)``
    is the result of a board a second signal stopped where it was. ``sig`` is the run's
    :class:`bpcheck.lifecycle.Signals`: the first signal stops every worker's exploration at its
    next state (those boards are inconclusive, "interrupted (SIGNAL)") and nothing more starts.

    ``shard(board)``: the task arguments to explore one board over all the workers at once (the
    sharded explorer, explorers/parallel.py), or None. With several workers (not --fail-fast),
    the boards it accepts are checked first, one after the other, each on every worker; the
    others then one per worker. One board that alone costs more than all the others together
    would otherwise keep one worker busy long after the rest are done."""
    from bpcheck.explorers.pool import Outcome, Pool
    from bpcheck.lifecycle import Interrupted

    out = JobsOutcome()
    n = len(files)
    boards: list[Any] = [None] * n
    entries: dict[int, Entry] = {}
    for i, (path, display) in enumerate(files):  # bad input is found here, printed in its place
        try:
            boards[i] = load(path, display)
        except InputError as e:
            entries[i] = Entry("error", e)
    todo = [i for i in range(n) if boards[i] is not None]
    costs = [board_cost(b) if b is not None else 0.0 for b in boards]
    order = [i for i in cost_order(costs, cheapest_first=fail_fast) if boards[i] is not None]
    pos = {i: k for k, i in enumerate(order)}
    first_fail: int | None = None  # --fail-fast: the failing board earliest in the cost order
    cancelled: set[int] = set()
    printed = 0

    def final(i: int) -> bool:
        if i in cancelled:
            return True
        if i not in entries:
            return False
        if not fail_fast or boards[i] is None:
            return True
        # fail-fast: a result is final once no board before it in the cost order can still fail
        return all(j in entries for j in order[: pos[i]])

    def flush() -> None:
        nonlocal printed
        while printed < n and final(printed):
            if printed in entries and printed not in cancelled:
                emit(printed, entries[printed])
            printed += 1

    def record(o: Outcome) -> None:
        nonlocal first_fail
        i = o.index
        display = files[i][1]
        if o.crashed:
            entries[i] = Entry("crash", o.error)
            out.crashed.append(f"{display}: {o.error}")
        elif not o.ok:
            entries[i] = Entry("internal", o.error, o.traceback)
            if out.internal is None:
                out.internal, out.internal_traceback = f"{o.error} (checking {display})", o.traceback
        elif o.value[0] == "input":
            entries[i] = Entry("error", InputError(*o.value[1:]))
        else:
            br = restore(o.value[1])
            entries[i] = Entry("result", br)
            if fail_fast and br.verdict == "fail" and (first_fail is None or pos[i] < pos[first_fail]):
                first_fail = i
                later = [j for j in order[pos[i] + 1 :] if j not in cancelled]
                cancelled.update(later)
                for j in later:
                    entries.pop(j, None)
                if pool is not None:
                    pool.cancel(later)
        flush()

    def here(i: int, args: tuple) -> bool:
        """Check board i in this process; False after a bug in bpcheck (no new boards start)."""
        progress.update(len(entries), [files[i][1].rsplit("/", 1)[-1]], force=True)
        try:
            record(Outcome(i, True, task(*args)))
        except Interrupted:
            interrupted_now.append(i)
            raise
        except Exception as e:  # bpcheck's own bug: stop here, as the sequential run does
            import traceback

            record(Outcome(i, False, error=f"{type(e).__name__}: {e}".splitlines()[0], traceback="".join(traceback.format_exception(e))))
            return False
        return True

    progress = BoardsProgress("check", len(todo))
    pool = Pool(jobs) if jobs > 1 else None
    interrupted_now: list[int] = []  # boards cut short by a second signal
    try:
        if pool is None:  # -j 1 with --fail-fast: this process, in the cost order
            for i in order:
                if i in cancelled:
                    continue
                if sig.signum is not None or not here(i, task_args(boards[i])):
                    break
        else:
            signalled = False

            def tick() -> None:
                nonlocal signalled
                if sig.signum is not None and not signalled:
                    signalled = True
                    pool.stop_all(sig.signum)  # workers stop at their next state; results come back
                progress.update(len(entries), [files[j][1].rsplit("/", 1)[-1] for j in pool.running()])

            big = {}
            if shard is not None and not fail_fast:
                for i in order:
                    a = shard(boards[i])
                    if a is not None:
                        big[i] = a
            for i in order:
                if i in big and (sig.signum is not None or not here(i, big[i])):
                    break
            rest = [i for i in order if i not in big] if not (big and out.internal) and sig.signum is None else []
            tasks = [task_args(b) if b is not None else () for b in boards]
            for o in pool.run(task, tasks, rest, tick=tick):
                record(o)
                if not o.ok and not o.crashed:  # a bpcheck bug: no new boards (as the sequential run)
                    pool.cancel(pool.pending())
    except Interrupted:  # a second signal: stop the workers now, keep what came back
        if pool is not None:
            interrupted_now += pool.running()  # (a sharded board cut short is already listed)
            pool.close(kill=True)
        for i in interrupted_now:
            entries[i] = Entry("result", cut_short(boards[i]))
    finally:
        progress.done()
        if pool is not None:
            pool.close()
    for i in order:
        if i not in entries and i not in cancelled:
            out.not_started.append(files[i][1])
    if fail_fast and first_fail is not None:
        out.stopped_at = files[first_fail][1]
        out.not_run = [files[i][1] for i in range(n) if i in cancelled]
    where = {f[1]: k for k, f in enumerate(files)}
    out.not_started.sort(key=where.__getitem__)
    while printed < n:  # what is left (a signal, a bug): every board that has an entry, in order
        if printed in entries and printed not in cancelled:
            emit(printed, entries[printed])
        printed += 1
    for i in range(n):
        e = entries.get(i)
        if e is None or i in cancelled:
            continue
        if e.kind == "result":
            out.results.append(e.value)
        elif e.kind == "error":
            err = e.value
            out.errors.append({"file": err.file, "field": err.field, "problem": err.problem})
    return out


__all__ = [
    "COST_WEIGHTS",
    "SHARD_AT",
    "BoardsProgress",
    "Entry",
    "JobsOutcome",
    "add_jobs_argument",
    "board_cost",
    "board_features",
    "cost_order",
    "jobs_type",
    "resolve_jobs",
    "run_check_jobs",
]
