"""A small pool of worker processes for independent tasks (one board, one mutant, one fuzz run),
used by ``-j N`` in `bpcheck check`, `bpcheck mutants` and `bpcheck fuzz` (docs/checking.md,
"Parallel checking"). Generic: nothing here knows Yu-Gi-Oh!.

Why not :class:`concurrent.futures.ProcessPoolExecutor`: when one of its workers dies (an engine
in the process that segfaults, the kernel's out-of-memory killer) *every* pending future fails
with ``BrokenProcessPool`` and the pool is unusable. Here each worker runs one task at a time
over its own pipe, so a dead worker is an outcome for exactly the task it held
(:attr:`Outcome.crashed`), a new worker takes its place and the other tasks go on.

- Tasks are dispatched in the order the caller gives (``order``: most expensive first for
  throughput, cheapest first for the time to the first failure); outcomes come back in
  completion order, and the caller puts them back in its own fixed order.
- :meth:`Pool.cancel` drops tasks not yet dispatched and asks running ones to stop (their
  outcome is then not reported).
- :meth:`Pool.stop_all` (a signal in the parent) sets a flag that every worker's task polls
  through :func:`stop_reason`: explorations stop at their next state, as inconclusive, and their
  results still come back.
- Workers ignore SIGINT, SIGTERM and SIGHUP (a terminal's Ctrl-C, or `timeout`, signals the
  whole process group): the parent alone decides, through the flag. A worker whose parent is
  gone stops its task and exits.
- ``deadline`` (seconds, optional): a task still running that long after it began in its worker
  (the worker says so once it has read the task; before that it has :data:`STARTUP_GRACE` more)
  has its worker process killed (SIGKILL) and replaced; its outcome is
  :attr:`Outcome.deadline` (a task that never returns, e.g. an engine stuck inside one call,
  which no flag can reach). The caller decides what such a task is worth (``-j N --timeout S``:
  the board is inconclusive, harness/jobs.py).
- A running task may send notes to the parent (:func:`notify`: progress counts, a first
  finding), handed to the pool's ``on_note(task index, payload)`` as they come; its outcome still
  comes back once, at its end.
- A task runs in the parent's environment (``os.environ``) as it is when the task is handed out:
  a worker started from the forkserver would otherwise have the environment the forkserver was
  started with, earlier in the process (a sweep's ``OCG_SCRIPTS_OVERLAY`` of an earlier run in
  the same process, which the next run's engines would still read).
- Task arguments and results are pickled, only ever between this process and the workers it
  started (never anything read from outside).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable, Iterator, Sequence

# ------------------------------------------------------------------------------- worker side

_STOP = None  # the pool's shared flag: 0, or the number of the signal that stops the run
_CANCEL = None  # this worker's own flag: 1 when the parent no longer wants the current task
_CONN = None  # this worker's pipe to the parent (only notes go up it during a task; nothing comes down)
_TASK = None  # the index of the task this worker runs
_last_parent_check = 0.0
_NOTE = "note"  # the tag of a note (an outcome starts with its task's index, an int)
_BEGUN = "begun"  # the tag of "the task's arguments are read, it starts now" (the deadline's clock)
# a worker that has not begun its task this long after it was handed it (a fresh worker's imports,
# the task's arguments unpickled) is killed as at the deadline: its clock starts when it begins
STARTUP_GRACE = 60.0


_REMOTE_NOTE = None  # in a Ray task (explorers/cluster.py): sends a note to the driver instead of _CONN


def notify(payload: Any) -> bool:
    """Send ``payload`` (picklable, small) to the parent now, while the task runs: the parent's
    ``Pool.on_note(index, payload)`` gets it. False outside a worker (nothing sent)."""
    if _REMOTE_NOTE is not None:
        return _REMOTE_NOTE(payload)
    if _CONN is None or _TASK is None:
        return False
    try:
        _CONN.send((_NOTE, _TASK, payload))
    except (BrokenPipeError, OSError):
        return False
    return True


def stop_reason() -> str | None:
    """Polled by a task running in a worker (the explorer's ``stop`` control): a reason to stop
    now, or None. Outside a worker (``-j 1``) it always answers None."""
    global _last_parent_check
    if _STOP is None:
        return None
    if _STOP.value:
        return f"interrupted ({signal.Signals(_STOP.value).name})"
    if _CANCEL is not None and _CANCEL.value:
        return "cancelled"
    now = time.monotonic()
    if now - _last_parent_check > 1.0:
        _last_parent_check = now
        try:  # the parent sends nothing while a task runs: readable now means closed
            gone = _CONN is not None and _CONN.poll()
        except (EOFError, OSError):
            gone = True
        if gone:
            return "interrupted (the parent process is gone)"
    return None


def in_worker() -> bool:
    return _STOP is not None


def _worker_main(conn, stop, cancel) -> None:
    global _STOP, _CANCEL, _CONN, _TASK
    for s in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, s):
            signal.signal(getattr(signal, s), signal.SIG_IGN)
    _STOP, _CANCEL, _CONN = stop, cancel, conn
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        index, fn, args, env = msg
        if env != os.environ:  # the parent's environment as it was when it handed the task out
            os.environ.clear()
            os.environ.update(env)
        _TASK = index
        try:
            conn.send((_BEGUN, index))
        except (BrokenPipeError, OSError):
            return
        try:
            value = fn(*args)
            reply = (index, True, value, None)
        except BaseException as e:  # noqa: BLE001 - everything goes back to the parent, as text
            what = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
            reply = (index, False, what, "".join(traceback.format_exception(type(e), e, e.__traceback__)))
        _TASK = None
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return
        except Exception as e:  # the result does not pickle: a bug of the task, said as such
            conn.send((index, False, f"the result could not be sent back: {type(e).__name__}: {e}", ""))


# ------------------------------------------------------------------------------- parent side


@dataclass
class Outcome:
    index: int  # the task's index in the caller's list
    ok: bool  # the task returned `value`
    value: Any = None
    error: str | None = None  # one line: the exception, or how the worker died
    traceback: str | None = None  # the worker's traceback, as text
    crashed: bool = False  # the worker process died while running the task
    deadline: bool = False  # the task outlived the pool's deadline: its worker was killed and replaced


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _context():
    # forkserver on POSIX: a worker starts from a clean interpreter, never from a copy of this
    # process, which may hold threads (a cmd: engine's stderr reader) and their locks; spawn
    # elsewhere. Task functions are top-level functions, imported again in the worker.
    methods = mp.get_all_start_methods()
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def _death(code: int | None) -> str:
    if code is None:
        return "the worker process stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (the out-of-memory killer?)" if -code == getattr(signal, "SIGKILL", 9) else ""
        return f"the worker process was killed by {name}{hint}"
    return f"the worker process exited with status {code}"


class _Worker:
    def __init__(self, ctx, stop) -> None:
        self.conn, child = ctx.Pipe()
        self.cancel = ctx.RawValue("b", 0)
        self.proc = ctx.Process(target=_worker_main, args=(child, stop, self.cancel), daemon=True)
        self.proc.start()
        child.close()
        self.task: int | None = None
        self.since = 0.0  # when the current task was handed to it, then when it began (time.monotonic)
        self.begun = False  # the worker said it began the current task


class Pool:
    """``with Pool(n) as pool: for out in pool.run(fn, tasks, order): ...``. ``on_note(index,
    payload)``: what a running task sends with :func:`notify` (called while outcomes are
    gathered; notes of a cancelled task are dropped). ``deadline``: seconds a task may run before
    its worker is killed and replaced (:attr:`Outcome.deadline`); None: no deadline."""

    def __init__(self, workers: int, on_note: Callable[[int, Any], None] | None = None, deadline: float | None = None) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if deadline is not None and not deadline > 0:
            raise ValueError("deadline must be positive")
        self.on_note = on_note
        self.deadline = deadline
        self.n = workers
        self.ctx = _context()
        self.stop = self.ctx.RawValue("i", 0)
        self.workers: list[_Worker] = []
        self._queue: list[int] = []
        self._cancelled: set[int] = set()
        self._stream: dict[int, tuple] = {}  # submit(): task index -> (fn, args), not dispatched yet

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(kill=exc_type is not None)  # a signal or an error: the workers are not waited for

    # -- control
    def stop_all(self, signum: int) -> None:
        """Every running task's :func:`stop_reason` answers "interrupted (SIGNAL)" from now on;
        nothing more is dispatched."""
        self.stop.value = int(signum)
        self._queue.clear()
        self._stream.clear()

    def cancel(self, indices) -> None:
        """Tasks not dispatched yet are dropped; running ones are asked to stop and their
        outcome is not reported."""
        drop = set(indices)
        self._cancelled |= drop
        self._queue = [i for i in self._queue if i not in drop]
        for i in drop:
            self._stream.pop(i, None)
        for w in self.workers:
            if w.task in drop:
                w.cancel.value = 1

    def pending(self) -> list[int]:
        """Tasks not dispatched yet, in dispatch order."""
        return list(self._queue)

    def running(self) -> list[int]:
        return [w.task for w in self.workers if w.task is not None]

    # -- streaming: submit tasks one by one, collect outcomes as they come
    def submit(self, index: int, fn: Callable, args: tuple) -> None:
        """Queue ``fn(*args)`` as task ``index`` (dispatched as soon as a worker is free)."""
        self._stream[index] = (fn, args)
        self._queue.append(index)
        self._dispatch_stream()

    def in_flight(self) -> int:
        return len(self._queue) + len(self.running())

    def collect(self, timeout: float = 0.0) -> list[Outcome]:
        """Outcomes that are ready (waiting at most ``timeout`` seconds for the first)."""
        self._dispatch_stream()
        got = list(self._gather(timeout))
        self._dispatch_stream()
        return got

    def _dispatch_stream(self) -> None:
        self._start_workers()
        for w in self.workers:
            if w.task is None and self._queue and w.proc.is_alive():
                i = self._queue.pop(0)
                fn, args = self._stream.pop(i)
                w.cancel.value = 0
                try:
                    w.conn.send((i, fn, args, dict(os.environ)))
                    w.task = i
                    w.since, w.begun = time.monotonic(), False
                except (BrokenPipeError, OSError):
                    self._queue.insert(0, i)
                    self._stream[i] = (fn, args)

    def _start_workers(self) -> None:
        self.workers = [w for w in self.workers if w.task is not None or w.proc.is_alive()]
        while self._queue and not any(w.task is None for w in self.workers) and len(self.workers) < self.n:
            self.workers.append(_Worker(self.ctx, self.stop))

    def _recv_past_notes(self, w: _Worker) -> tuple | None:
        """The worker's outcome, after handing on the notes before it; None when only notes
        were waiting (the task is still running)."""
        while True:
            msg = w.conn.recv()
            if msg[0] == _BEGUN:
                if msg[1] == w.task:
                    w.since, w.begun = time.monotonic(), True  # the deadline counts from now
            elif msg[0] != _NOTE:
                return msg
            elif self.on_note is not None and msg[1] == w.task and msg[1] not in self._cancelled:
                self.on_note(msg[1], msg[2])
            if not w.conn.poll():
                return None

    def _gather(self, timeout: float) -> Iterator[Outcome]:
        busy = [w for w in self.workers if w.task is not None]
        if not busy:
            return
        if self.deadline is not None:  # wake up in time for the first task due to be killed
            due = min(w.since + self._limit(w) for w in busy) - time.monotonic()
            timeout = max(0.0, min(timeout, due))
        ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=timeout)
        for w in busy:
            if w.conn in ready:
                try:
                    msg = self._recv_past_notes(w)
                except (EOFError, OSError):
                    msg = (None,)
                if msg is None:  # only notes were there: the task goes on
                    continue
                if msg[0] is not None:
                    index, ok, value, tb = msg
                    w.task = None
                    if index in self._cancelled:
                        continue
                    if ok:
                        yield Outcome(index, True, value)
                    else:
                        yield Outcome(index, False, error=value, traceback=tb)
                    continue
            if w.task is not None and (w.proc.sentinel in ready or w.conn in ready) and not w.proc.is_alive():
                w.proc.join(1)
                index, w.task = w.task, None
                self.workers.remove(w)
                w.conn.close()
                if index not in self._cancelled:
                    yield Outcome(index, False, error=_death(w.proc.exitcode), crashed=True)
        if self.deadline is not None:
            now = time.monotonic()
            for w in [w for w in busy if w.task is not None and now - w.since >= self._limit(w)]:
                index = w.task
                self._kill(w)
                if index not in self._cancelled:
                    yield Outcome(index, False, error=f"killed after {self.deadline:g} s", deadline=True)

    def _limit(self, w: _Worker) -> float:
        """Seconds the worker's current task may run from ``w.since``: the deadline once it has
        begun, STARTUP_GRACE more before (a fresh worker still importing)."""
        return self.deadline + (0.0 if w.begun else STARTUP_GRACE)

    def _kill(self, w: _Worker) -> None:
        """Kill a worker in the middle of its task and forget it (a new one takes its place when
        work is dispatched); whatever it had sent is dropped with its pipe."""
        w.task = None
        try:
            w.proc.kill()
        except (OSError, ValueError):
            pass
        w.proc.join(5)
        if w in self.workers:
            self.workers.remove(w)
        try:
            w.conn.close()
        except OSError:
            pass

    # -- the loop
    def run(self, fn: Callable, tasks: Sequence[tuple], order: Sequence[int] | None = None, tick: Callable[[], None] | None = None, poll: float = 0.2) -> Iterator[Outcome]:
        """Run ``fn(*tasks[i])`` for every task, dispatched in ``order``; yield each
        :class:`Outcome` as it completes. ``tick()`` is called at least every ``poll`` seconds
        (the caller forwards signals, draws progress)."""
        for i in range(len(tasks)) if order is None else order:
            self._stream[i] = (fn, tasks[i])
            self._queue.append(i)
        while self._queue or self.running():
            self._dispatch_stream()
            if tick is not None:
                tick()
            yield from self._gather(poll)
        if tick is not None:
            tick()

    def close(self, kill: bool = False) -> None:
        """Stop the workers: politely (end of input), or at once (``kill``)."""
        for w in self.workers:
            try:
                if kill:
                    w.proc.kill()
                else:
                    w.conn.send(None)
            except (BrokenPipeError, OSError, ValueError):
                pass
        for w in self.workers:
            w.proc.join(5 if not kill else 1)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(1)
            try:
                w.conn.close()
            except OSError:
                pass
        self.workers = []


def open_pool(workers: int, on_note: Callable[[int, Any], None] | None = None, name: Callable[[int], str] | None = None, deadline: float | None = None):
    """The pool of this run: worker processes, or Ray tasks with ``--cluster``
    (explorers/cluster.py: the same methods, notes included; ``name(task)``, e.g. its board,
    names a task whose Ray worker died in the note that says so). ``deadline``: see :class:`Pool`;
    Ray's task pool has none (a Ray task is not killed by a deadline: docs/sweep.md)."""
    # imported here: explorers/cluster.py builds its task pool on this module's Outcome (a cycle)
    from bpcheck.explorers.cluster import active

    c = active()
    return c.task_pool(workers, on_note=on_note, name=name) if c is not None else Pool(workers, on_note=on_note, deadline=deadline)


__all__ = ["Outcome", "Pool", "cpu_count", "in_worker", "notify", "open_pool", "stop_reason"]
