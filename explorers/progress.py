"""Feedback while long work runs: progress on stderr, and notes printed the moment something is
known (a board's verdict that stdout holds back for board order, the first counterexample).
Generic: nothing here knows Yu-Gi-Oh! or the explorer; the caller says what started, how far it
got and what ended (docs/checking.md, "Progress and early results").

One :class:`Progress` per command run::

    p = Progress("check", total=73, unit="boards", quiet=args.quiet)
    p.plan([expected states of each board])            # for an ETA (optional)
    t = p.start("000-replay-1.toml", expected=1200.0)  # a task: a board, a mutant, a search
    t.update(states)                  # the explorers' progress protocol (core.explore calls it)
    t.found()                         # a violation found in it
    p.finish(t, failed=True)          # its verdict is known (``counted=False``: a try cut short)
    p.note(["line", "  more"])        # printed at once (after the first FIRST_AFTER seconds)
    p.extra("cluster", "4 workers alive, balance 0.93")   # appended to every line (None: removed)
    p.close()                         # (close_all(): every run still open; bpcheck.cli.main calls it)

A task in another process is a :class:`RemoteTask` there, sending its counts with any
``send(payload)`` (explorers/pool.py ``notify`` for the pool's workers); the parent hands each
payload to its own task with :func:`apply_remote`. :func:`without_progress` removes the lines of
a run from captured stderr.

Where it goes (stderr only: stdout carries the results and never changes):

- ``live``: stderr is a terminal and ``CI`` is not set: one line redrawn in place every
  :data:`LIVE_EVERY` seconds, cut to the terminal's width, cleared before anything else is written
  to stdout or stderr;
- ``lines``: anywhere else (CI logs, files, pipes): a plain line every :data:`LINE_EVERY` seconds,
  no carriage return and no control character;
- ``off``: ``quiet``: nothing.

Nothing is written in the first :data:`FIRST_AFTER` seconds: a run that ends sooner prints its
results at once on stdout, and the notes it queued are dropped. A background thread writes the
lines, so they keep coming while the main thread waits on an engine, a solver or worker processes.

Numbers are written one way everywhere (:func:`count`, :func:`rate`, :func:`duration`): counts
with thousands separators (``12,345``), rates as a whole number from 10 up and with one decimal
below (``2,100/s``, ``0.4/s``), durations in whole seconds with at most two units (``8 s``,
``4 min 12 s``, ``1 h 3 min``).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
import weakref
from typing import Any, Callable, Sequence

FIRST_AFTER = 2.0  # seconds before the first line (and before any note)
LINE_EVERY = 10.0  # seconds between plain lines (not a terminal)
LIVE_EVERY = 0.5  # seconds between redraws of the terminal's line
RATE_WINDOW = 30.0  # seconds over which the rate (and so the ETA) is measured
SHOW_RUNNING = 3  # running tasks named on a line; the others are counted
_OPEN: "weakref.WeakSet[Progress]" = weakref.WeakSet()  # runs not closed yet (close_all)


# ------------------------------------------------------------------------------ number formats


def count(n: int | float) -> str:
    """``12,345``."""
    return f"{round(n):,}"


def rate(per_s: float) -> str:
    """``2,100`` from 10 up, ``0.4`` below (without the unit)."""
    return f"{per_s:,.0f}" if per_s >= 10 else f"{per_s:.1f}"


def duration(seconds: float) -> str:
    """``8 s``, ``4 min 12 s``, ``1 h 3 min``: whole seconds, at most two units."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        m, s = divmod(s, 60)
        return f"{m} min {s} s" if s else f"{m} min"
    h, rest = divmod(s, 3600)
    m = rest // 60
    return f"{h} h {m} min" if m else f"{h} h"


def mode_for(stream: Any, quiet: bool = False) -> str:
    """``off`` (quiet), ``live`` (a terminal, ``CI`` unset) or ``lines``."""
    if quiet:
        return "off"
    try:
        tty = bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        tty = False
    return "live" if tty and not os.environ.get("CI") else "lines"


# ------------------------------------------------------------------------------------ tasks


class Task:
    """One unit of work of a run (a board, a mutant, a search). ``update``/``done`` are the
    explorers' progress protocol (explorers/core.py: ``Callbacks(progress=task)`` makes the
    explorer's visitor call them); plain attribute writes, cheap enough for every state."""

    __slots__ = ("name", "expected", "states", "depth", "frontier", "violations", "t0", "base", "note")

    def __init__(self, name: str, expected: float | None, t0: float) -> None:
        self.name = name
        self.expected = expected  # the states it is expected to cost (None: unknown)
        self.states = 0  # explored so far, over every exploration of the task
        self.depth = 0
        self.frontier = 0
        self.violations = 0
        self.t0 = t0
        self.base = 0  # states of the task's earlier explorations (a mutant tries several boards)
        self.note = ""  # more of its state, shown beside it (a sharded board: workers alive, balance)

    def update(self, states: int, depth: int = 0, frontier: int = 0, force: bool = False, note: str | None = None) -> None:
        self.states = self.base + states
        self.depth = depth
        self.frontier = frontier
        if note is not None:
            self.note = note

    def done(self) -> None:
        """One exploration ended (the explorers call it): the next one of the same task adds to
        what this one counted. The task itself ends with :meth:`Progress.finish`."""
        self.base = self.states

    def found(self, n: int = 1) -> None:
        """``n`` more violations found in this task."""
        self.violations += n


class NullTask(Task):
    """What a quiet run hands out: takes every call, keeps nothing."""

    def __init__(self) -> None:
        super().__init__("", None, 0.0)

    def update(self, states: int, depth: int = 0, frontier: int = 0, force: bool = False, note: str | None = None) -> None:
        pass

    def done(self) -> None:
        pass

    def found(self, n: int = 1) -> None:
        pass


# ------------------------------------------------------------------------------------- run


class Progress:
    """The progress of one command run (the module's docstring). ``total``: how many tasks the
    run has (None: unknown); ``unit``: what they are (``boards``, ``mutants``, ``files``; None:
    no count of tasks on the line); ``work``: what a task's ``states`` count; ``failed``: the word
    for a failed task (``survived`` for mutants). ``mode`` overrides
    :func:`mode_for`; ``stream`` is stderr (by default ``sys.stderr`` when the run starts).
    ``background=False``: no thread; the caller calls :meth:`tick` (tests, with their ``clock``).
    ``t0``: when the run began (``clock()`` time; default now): elapsed times and the first line's
    delay count from it."""

    def __init__(
        self,
        command: str,
        *,
        total: int | None = None,
        unit: str | None = "boards",
        work: str = "states",
        failed: str = "failed",
        quiet: bool = False,
        mode: str | None = None,
        stream: Any = None,
        clock: Callable[[], float] = time.monotonic,
        first: float = FIRST_AFTER,
        every: float | None = None,
        background: bool = True,
        t0: float | None = None,
    ) -> None:
        self.command = command
        self.total = total
        self.unit = unit
        self.work = work
        self.failed_word = failed
        self.clock = clock
        self._stream = stream if stream is not None else sys.stderr
        self.mode = mode or mode_for(self._stream, quiet)
        self.first = first
        self.every = every if every is not None else (LIVE_EVERY if self.mode == "live" else LINE_EVERY)
        self.t0 = clock() if t0 is None else t0  # the run's start (the CLI's: when the command began)
        self.done = 0  # tasks finished (counted)
        self.failed = 0
        self.violations = 0  # in finished tasks (as the caller counts them) ...
        self.running: dict[int, Task] = {}  # ... plus those found in running tasks
        self._work_done = 0  # states of finished tasks, counted or not (budget rounds)
        self._scale: list[float] = [0.0, 0.0]  # finished tasks with an expected cost: states, expected
        self._secs: list[float] = [0.0, 0.0]  # finished tasks with an expected cost: seconds they took, expected
        self._pending_expected = 0.0  # expected cost of the tasks not started yet (plan())
        self._pending: list[float] = []  # ... each one (the longest bounds the ETA)
        self.workers: int | None = None  # tasks run at once (-j N); None: as many as are running
        self._samples: list[tuple[float, float]] = []  # (time, work) of recent lines: the rate
        self._extras: dict[str, str] = {}
        self._notes: list[list[str]] = []  # queued until FIRST_AFTER
        self._lock = threading.RLock()
        self._shown = 0  # the live line's width on screen (0: none)
        self._mid: dict[int, bool] = {}  # id(stream) -> a line written to it is not finished yet
        self._wrapped: list[tuple[str, Any, Any]] = []
        self._planned = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._due = self.t0 + first
        self.lines_written = 0
        if self.mode != "off":
            _OPEN.add(self)
            self._wrap_streams()
            if background:
                self._thread = threading.Thread(target=self._loop, name=f"bpcheck-progress-{command}", daemon=True)
                self._thread.start()

    # -- the caller's side
    @property
    def stream(self) -> Any:
        """Where the lines go (stderr as it was when the run began: never through a wrapper)."""
        return self._stream

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def configure(self, *, total: int | None = None, unit: str | None = None, work: str | None = None, failed: str | None = None) -> "Progress":
        """Say what the run is made of once it is known (a run begun before its input was read)."""
        self.total = total
        self.unit = unit
        if work is not None:
            self.work = work
        if failed is not None:
            self.failed_word = failed
        return self

    def plan(self, expected: Sequence[float | None], workers: int | None = None) -> None:
        """The expected cost of every task still to start (an ETA needs them all), and how many
        run at once (``workers``; None: as many as are running)."""
        self._pending_expected = float(sum(x for x in expected if x))
        self._pending = sorted(float(x) for x in expected if x)
        self._planned = all(x is not None for x in expected)
        if workers is not None:
            self.workers = workers

    def start(self, name: str, expected: float | None = None) -> Task:
        if self.mode == "off":
            return NullTask()
        t = Task(name, expected, self.clock())
        if expected:
            self._pending_expected = max(0.0, self._pending_expected - expected)
            if expected in self._pending:
                self._pending.remove(expected)
        self.running[id(t)] = t
        return t

    def finish(self, task: Task, *, failed: bool = False, violations: int | None = None, counted: bool = True) -> None:
        """``task`` ended. ``violations``: what it found, as the run reports it (default: what
        :meth:`Task.found` counted). ``counted=False``: it ended without a verdict (a budget
        round's try, to be run again): its work counts, the task does not."""
        if self.mode == "off" or self.running.pop(id(task), None) is None:
            return
        self._work_done += task.states
        if task.expected and task.states:
            self._scale[0] += task.states
            self._scale[1] += task.expected
        if task.expected:  # the time it took, for the ETA: seconds per unit of expected cost
            self._secs[0] += max(0.0, self.clock() - task.t0)
            self._secs[1] += task.expected
        if counted:
            self.done += 1
            self.failed += bool(failed)
            self.violations += task.violations if violations is None else violations
        elif task.expected:
            self._pending_expected += task.expected  # it comes back
            self._pending.append(task.expected)

    def extra(self, name: str, text: str | None) -> None:
        """A named piece of text appended to every line (e.g. the cluster's workers); None removes it."""
        if text is None:
            self._extras.pop(name, None)
        else:
            self._extras[name] = text

    def note(self, lines: Sequence[str]) -> None:
        """Lines printed at once, the first one headed like a progress line (after
        :data:`FIRST_AFTER` seconds: queued until then, dropped if the run ends first)."""
        if self.mode == "off" or not lines:
            return
        with self._lock:
            self._notes.append(list(lines))
            if self.clock() - self.t0 >= self.first:
                self._flush_stdout()
                self._write_notes()

    def _write_notes(self) -> None:
        notes, self._notes = self._notes, []
        for lines in notes:
            self._write_lines([f"{self._head()} {lines[0]}", *lines[1:]])

    def close(self) -> None:
        """The run is over: no more lines; the terminal's line is cleared; queued notes dropped."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(5)
            self._thread = None
        with self._lock:
            self._clear()
            self._unwrap_streams()
            self._notes.clear()
        self.mode = "off"
        _OPEN.discard(self)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what a line says
    def _head(self) -> str:
        return f"bpcheck {self.command} [{duration(self.clock() - self.t0)}]"

    def work_so_far(self) -> float:
        return self._work_done + sum(t.states for t in list(self.running.values()))

    def _rate(self, now: float, work: float) -> float | None:
        self._samples.append((now, work))
        while len(self._samples) > 2 and now - self._samples[1][0] >= RATE_WINDOW:
            self._samples.pop(0)
        t0, w0 = self._samples[0]
        if now - t0 < 1.0:
            t0, w0 = self.t0, 0.0
        if now - t0 < 1.0:
            return None
        return (work - w0) / (now - t0)

    def eta(self, per_s: float | None) -> float | None:
        """Seconds left; None where it is not known: a task without an expected cost, or one
        already past what was expected of it.

        Once a task with an expected cost has finished, the time the finished ones took per unit
        of expected cost (worker seconds) prices what is left: each running task's expected time
        less what it has run, each one not started yet, spread over the workers, and never less
        than the longest single one (the run's tail). That folds in both how wrong the estimates
        are and how fast this machine is now. Before that, the states left (the expected costs,
        scaled as the finished ones compared) at the rate of the last seconds."""
        if not getattr(self, "_planned", False):
            return None
        running = list(self.running.values())
        if any(not t.expected for t in running):
            return None
        scale = self._scale[0] / self._scale[1] if self._scale[1] > 0 else 1.0
        if self._secs[1] > 0 and self._secs[0] > 0:
            per_unit = self._secs[0] / self._secs[1]
            now = self.clock()
            rests = []
            for t in running:
                ran = now - t.t0
                if t.states > t.expected * scale:
                    return None  # larger than expected: how much larger is not known
                rest = t.expected * per_unit - ran
                if rest < 0:  # slower than the finished ones: its own states say how far it is
                    share = t.states / (t.expected * scale)
                    if not t.states or share >= 1:
                        return None  # past what was expected of it: how much longer is not known
                    rest = ran * (1 - share) / share
                rests.append(rest)
            pending = self._pending_expected * per_unit
            workers = self.workers or max(1, len(running))
            longest = max([*rests, max(self._pending, default=0.0) * per_unit])
            return max((sum(rests) + pending) / workers, longest)
        if not per_s or per_s <= 0:
            return None
        left = self._pending_expected * scale
        for t in running:
            rest = t.expected * scale - t.states
            if rest < 0:
                return None  # larger than expected: how much larger is not known
            left += rest
        return left / per_s

    def line(self) -> str:
        """The progress line now (without a newline)."""
        now = self.clock()
        parts = [self._head()]
        head = []
        if self.unit is not None:
            head.append(f"{count(self.done)}/{count(self.total)} {self.unit} done" if self.total is not None else f"{count(self.done)} {self.unit} done")
        if self.failed:
            head.append(f"{count(self.failed)} {self.failed_word}")
        found = self.violations + sum(t.violations for t in list(self.running.values()))
        if found:
            head.append(f"{count(found)} violation{'s' if found != 1 else ''} found")
        if head:
            parts.append(", ".join(head))
        running = [t for t in list(self.running.values()) if t.name]  # (a task without a name is not listed)
        if running:
            shown = [
                (f"{t.name} ({count(t.states)} {self.work}" + (f", {t.note}" if t.note else "") + ")") if t.states else t.name
                for t in running[:SHOW_RUNNING]
            ]
            more = f" and {len(running) - SHOW_RUNNING} more" if len(running) > SHOW_RUNNING else ""
            parts.append("running " + ", ".join(shown) + more)
        parts.extend(self._extras.values())
        work = self.work_so_far()
        per_s = self._rate(now, work)
        if per_s is not None and work:
            parts.append(f"{rate(per_s)} {self.work}/s")
        left = self.eta(per_s)
        if left is not None:
            parts.append(f"ETA ~{duration(left)}")
        return parts[0] + " " + ("; ".join(parts[1:]) or "setting up")

    # -- writing
    def _loop(self) -> None:
        while not self._stop.wait(max(0.05, self._due - self.clock())):
            self.tick()

    def tick(self) -> bool:
        """Write the queued notes and a line if one is due; whether a line was written."""
        if self.mode == "off":
            return False
        with self._lock:
            now = self.clock()
            if now < self._due:
                return False
            if any(self._mid.values()):
                self._due = now + 0.1  # someone is in the middle of a line: wait for its end
                return False
            self._flush_stdout()
            self._write_notes()
            text = self.line()
            if self.mode == "live":
                self._draw(text)
            else:
                self._write_lines([text])
            self._due = self.clock() + self.every
            return True

    def _flush_stdout(self) -> None:
        """What stdout holds goes out before a line of ours (one log for both: no line cut in two)."""
        for name, _wrapper, inner in self._wrapped:
            if name == "stdout":
                try:
                    inner.flush()
                except (OSError, ValueError):
                    pass

    def _raw(self) -> Any:
        return self._stream

    def _write_lines(self, lines: Sequence[str]) -> None:
        s = self._raw()
        self._clear()
        try:
            s.write("".join(f"{x}\n" for x in lines))
            s.flush()
        except (OSError, ValueError):
            pass
        self.lines_written += len(lines)

    def _draw(self, text: str) -> None:
        width = max(20, shutil.get_terminal_size((100, 24)).columns - 1)
        text = text[:width]
        s = self._raw()
        try:
            s.write("\r" + text.ljust(self._shown))
            s.flush()
        except (OSError, ValueError):
            return
        self._shown = len(text)
        self.lines_written += 1

    def _clear(self) -> None:
        if not self._shown:
            return
        s = self._raw()
        try:
            s.write("\r" + " " * self._shown + "\r")
            s.flush()
        except (OSError, ValueError):
            pass
        self._shown = 0

    def _wrap_streams(self) -> None:
        """stdout and stderr tell the run before anything is written to them: the terminal's line
        is cleared first, and no line of ours goes out in the middle of someone else's."""
        for name in ("stdout", "stderr"):
            inner = getattr(sys, name)
            if name == "stderr" and inner is not self._stream:
                continue  # the lines go elsewhere: stderr's writes cannot cut them
            wrapper = _Clearing(inner, self)
            setattr(sys, name, wrapper)
            self._wrapped.append((name, wrapper, inner))

    def _unwrap_streams(self) -> None:
        for name, wrapper, inner in reversed(self._wrapped):
            if getattr(sys, name) is wrapper:
                setattr(sys, name, inner)
        self._wrapped = []

    def _writing(self, stream: Any, text: str) -> None:
        """Another writer is about to write ``text`` to ``stream`` (a wrapped one)."""
        with self._lock:
            self._clear()
            if text:
                self._mid[id(stream)] = not text.endswith("\n")


class _Clearing:
    """stdout or stderr while a run shows progress: each write first clears the terminal's line
    and says whether a line is left unfinished (:meth:`Progress._writing`)."""

    def __init__(self, inner: Any, progress: Progress) -> None:
        self._inner = inner
        self._progress = progress

    def write(self, text: str) -> int:
        with self._progress._lock:
            self._progress._writing(self, text)
            return self._inner.write(text)

    def flush(self) -> None:
        with self._progress._lock:
            self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


REMOTE_EVERY = 1.0  # seconds between the counts a worker process sends


class RemoteTask(Task):
    """A task running in another process (a worker): its counts go to the parent through
    ``send(payload)`` at most every :data:`REMOTE_EVERY` seconds, as ``("progress", states, depth,
    frontier)``; the parent hands them to its own task with :func:`apply_remote`."""

    __slots__ = ("send", "_last")

    def __init__(self, send: Callable[[Any], None]) -> None:
        super().__init__("", None, time.monotonic())
        self.send = send
        self._last = self.t0

    def update(self, states: int, depth: int = 0, frontier: int = 0, force: bool = False, note: str | None = None) -> None:
        super().update(states, depth, frontier, note=note)
        now = time.monotonic()
        if force or now - self._last >= REMOTE_EVERY:
            self._last = now
            self.send(("progress", self.states, depth, frontier))

    def found(self, n: int = 1) -> None:
        self.send(("found", n))


def apply_remote(task: Task, payload: Any) -> bool:
    """A worker's ``payload`` (:class:`RemoteTask`) applied to the parent's ``task``; False when
    it is not a progress payload (the caller's own kind)."""
    if isinstance(payload, tuple) and payload and payload[0] == "progress":
        task.base = 0  # the worker's count is the task's whole count
        task.update(*payload[1:4])
        return True
    if isinstance(payload, tuple) and payload and payload[0] == "found":
        task.found(payload[1])
        return True
    return False


_HEAD = re.compile(r"bpcheck [\w-]+ \[[0-9hmins ]+\] ")


def without_progress(text: str) -> str:
    """``text`` (what a run wrote on stderr) without the lines of its progress: each line headed
    ``bpcheck COMMAND [ELAPSED] `` and the indented lines that continue a note. Errors and every
    other line stay, in order (tests compare stderr this way; so may a CI script)."""
    out = []
    inside = False
    for line in text.splitlines(keepends=True):
        if _HEAD.match(line):
            inside = True
            continue
        if inside and line.startswith("  "):
            continue
        inside = False
        out.append(line)
    return "".join(out)


def close_all() -> None:
    """Close every run still open, newest first (bpcheck.cli.main.main calls it on the way out, so
    that no line outlives its command, whatever stopped it)."""
    for p in sorted(_OPEN, key=lambda p: -p.t0):
        p.close()


def quiet_progress(command: str) -> Progress:
    """A run that shows nothing (library use, tests)."""
    return Progress(command, mode="off")


__all__ = [
    "FIRST_AFTER",
    "LINE_EVERY",
    "LIVE_EVERY",
    "NullTask",
    "Progress",
    "REMOTE_EVERY",
    "RemoteTask",
    "Task",
    "apply_remote",
    "close_all",
    "count",
    "duration",
    "mode_for",
    "quiet_progress",
    "rate",
    "without_progress",
]
