"""What a run says on stderr while it goes on (docs/checking.md, "Progress and early results"):
the command's side of :mod:`bpcheck.explorers.progress`.

- :func:`begin_run` (bpcheck.cli.main, as a command starts) and :func:`run_progress` (the command,
  once it knows its size): the run's :class:`~bpcheck.explorers.progress.Progress`
  (``-q``/``--quiet`` silences it).
- :class:`CheckFeed`: `bpcheck check`'s progress, in this process or from worker processes
  (cli/main.py, cli/jobs.py).
- :class:`FirstCounterexample`: the first counterexample of a run, shown on stderr as soon as it
  is found: its invariant, its board and its shortest trace in a few lines, replayed on an engine
  and system of its own (the exploration's are busy, or in a worker process), never a known one
  (``--baseline``).
- :func:`verdict_note`: a board's verdict, for stderr the moment it is known when stdout holds the
  board back for board order (``-j N``, ``--fail-fast``).

stdout never changes: it prints every board in board order, then the summary, byte for byte the
same whatever ``-j`` and with or without this.
"""

from __future__ import annotations

import textwrap
import threading
import time
from typing import Any, Callable, Sequence

from bpcheck.engines.faults import SystemFault
from bpcheck.errors import InputError
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import ExploreResult
from bpcheck.explorers.progress import Progress, apply_remote, duration
from bpcheck.explorers.reduce import Reduced
from bpcheck.explorers.run import BoardResult, _unreplayed, build_counterexample, system_factory
from bpcheck.harness import jobs as schedule  # board_cost read through the module (a test sets it)
from bpcheck.harness.boards import LoadBound
from bpcheck.harness.jobs import REDUCED_SHARE
from bpcheck.model.board import load_board
from bpcheck.reports.text import PN, decision_groups

MESSAGE_CHARS = 300  # a violation's message is cut here in a note (the full one is on stdout)
TRACE_WIDTH = 100  # the trace of a note is wrapped at this width
MAX_TRIES = 20  # violations replayed for a note at most per run (with --baseline most may be known)


LONG_COMMANDS = ("check", "fuzz", "mutants", "prove", "scenario")  # the commands that show progress
_BEGUN: Progress | None = None  # the run main() began for the command (begin_run)


STARTED = time.monotonic()  # when the command began: the progress's clock (begin_run sets it)


def begin_run(args, started: float | None = None) -> None:
    """The command's progress, begun before anything else (bpcheck.cli.main.main, with the time
    the command began): its first line comes :data:`~bpcheck.explorers.progress.FIRST_AFTER`
    seconds after the command began, even while it is still setting up (imports, boards, the
    engine) on a loaded machine."""
    global _BEGUN, STARTED
    _BEGUN = None
    if started is not None:
        STARTED = started
    command = getattr(args, "command", None)
    if command in LONG_COMMANDS and not getattr(args, "list", False):  # `mutants --list` runs nothing
        _BEGUN = Progress(command, unit=None, quiet=bool(getattr(args, "quiet", False)), t0=STARTED)


def run_progress(args, command: str, total: int | None = None, unit: str | None = "boards", **kw: Any) -> Progress:
    """The run's progress on stderr: a line in place on a terminal, plain lines at a steady
    interval elsewhere (CI), nothing with ``--quiet``. The one :func:`begin_run` began, now
    that the run's size is known, or a new one (library calls)."""
    global _BEGUN
    p, _BEGUN = _BEGUN, None
    if p is not None and p.command == command and p.mode != "off":
        return p.configure(total=total, unit=unit, work=kw.get("work"), failed=kw.get("failed"))
    if p is not None:
        p.close()
    return Progress(command, total=total, unit=unit, quiet=bool(getattr(args, "quiet", False)), t0=kw.pop("t0", STARTED), **kw)


def trace_lines(cex) -> list[str]:
    """The decisions of a counterexample's trace, wrapped: ``P1: enter Battle Phase; P1: attack
    ... -> direct; P2: ...``, forced passes left out (counted in the heading)."""
    groups = decision_groups(cex.steps)
    moves = []
    for d, _forced in groups:
        if d is None:
            continue
        who = PN[d.player] if d.player is not None else "--"
        moves.append(f"{who}: {d.action['label']}")
    if not cex.steps:  # a trace the engine could not replay: its action indices
        moves = list(cex.labels)
    n = len(moves)
    if cex.at == "cycle" and cex.cycle_start is not None:
        moves.append(f"(back to the state after step {cex.cycle_start})")
    size = f"{n} decisions, {len(cex.labels)} steps" if cex.steps and n != len(cex.labels) else f"{len(cex.labels)} steps"
    text = f"trace ({size}): " + ("; ".join(moves) if moves else "the initial state")
    return textwrap.wrap(text, TRACE_WIDTH, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)


def counterexample_note(cex, found_after: float | None = None) -> list[str]:
    """A counterexample in a few lines: invariant, board, message, the decisions of its trace."""
    message = " ".join(str(cex.message).split())
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3] + "..."
    when = f", found after {duration(found_after)}" if found_after is not None else ""
    return [
        f"first counterexample{when}: {cex.invariant} on {cex.board} (the run goes on; the full report comes with the results)",
        f"  violation: {message}",
        *trace_lines(cex),
    ]


class FirstCounterexample:
    """Shows the run's first new counterexample on ``progress`` as soon as it is found. ``make``:
    ``(board, violation, reduced) -> Counterexample``, replaying it on a system of its own;
    ``known(board, cex)``: whether the baseline lists it (it is then not shown)."""

    def __init__(self, progress: Progress, make: Callable[[Any, Any, bool], Any], known: Callable[[Any, Any], bool] | None = None) -> None:
        self.progress = progress
        self.make = make
        self.known = known
        self.shown = False
        self.tries = 0
        self._lock = threading.Lock()

    def __call__(self, board, violation, reduced: bool) -> None:
        if self.shown or not self.progress.enabled or self.tries >= MAX_TRIES:
            return
        with self._lock:
            if self.shown:
                return
            self.tries += 1
            at = self.progress.clock() - self.progress.t0
            try:
                cex = self.make(board, violation, reduced)
            except Exception as e:  # noqa: BLE001 - a note must never cost the run; said as such
                self.shown = True
                self.progress.note(
                    [
                        f"first counterexample, found after {duration(at)}: {violation.prop} on {board.path} (the run goes on)",
                        f"  violation: {' '.join(str(violation.message).split())[:MESSAGE_CHARS]}",
                        f"  (its trace could not be replayed for this note: {type(e).__name__}: {e}; it comes with the results)",
                    ]
                )
                return
            if self.known is not None and self.known(board, cex):
                return
            self.shown = True
            self.progress.note(counterexample_note(cex, at))


def replayed_counterexample(spec: str | None, engine_kw: dict, invariants: Sequence, engine_name: str, system_cls=None) -> Callable[[Any, Any, bool], Any]:
    """``make`` for :class:`FirstCounterexample`: the violation replayed on a fresh engine of
    ``spec`` and a fresh system (reduced when the exploration was), as the board's result will
    replay it at its end."""
    inv_ids = [i.id for i in invariants]

    def make(board, v, reduced: bool):
        system = system_factory(board, spec, engine_kw, inv_ids, system_cls or EngineSystem)()
        if reduced:
            system = Reduced(system)
            system.finish(None)  # replaying: every chain in full, nothing judged
        try:
            return build_counterexample(system, v, invariants, engine_name)
        except SystemFault as f:
            return _unreplayed(system, v, invariants, engine_name, f)
        finally:
            close = getattr(getattr(system, "engine", None), "close", None)
            if callable(close):
                close()

    return make


def baseline_knows(baseline, engine_name: str, differential: bool) -> Callable[[Any, Any], bool]:
    """``known`` for :class:`FirstCounterexample`: the baseline's own matching, on a board
    result holding this one counterexample."""
    def known(board, cex) -> bool:
        br = BoardResult(board, ExploreResult(status="fail", strategy="bfs"), [], [])
        br.counterexamples = [cex]
        out = baseline.outcome(br, engine_name, differential)
        cex.baselined = None  # the note's copy only: the board's own result is judged at its end
        return bool(out.get("known"))

    return known


class CheckFeed:
    """`bpcheck check`'s side of the progress (cli/main.py and cli/jobs.py call it): the run's
    :class:`Progress`, each board's expected cost (the ETA; not with ``--fail-fast``, whose rounds
    stop at the first failure), the first counterexample, and the verdicts stdout holds back.
    ``board_line(br, display)`` is the board's first stdout line."""

    def __init__(self, args, files, invariants, engine_kw: dict, engine_name: str, system_kw: dict, baseline, board_line: Callable[[Any, str], str]) -> None:
        self.args = args
        self.files = files
        self.board_line = board_line
        self.progress = run_progress(args, "check", total=len(files))
        reduced = bool(system_kw.get("reduce")) and "system_cls" not in system_kw and not getattr(args, "checkpoint", None)
        self.share = REDUCED_SHARE if reduced else 1.0  # the cost estimate counts every state; a reduced run stores fewer
        self.max_states = getattr(args, "max_states", None)
        self.eta = not getattr(args, "fail_fast", False)
        self.first = FirstCounterexample(
            self.progress,
            replayed_counterexample(args.engine, engine_kw, invariants, engine_name, system_kw.get("system_cls")),
            baseline_knows(baseline, engine_name, bool(args.differential)) if baseline is not None else None,
        )
        self._loaded: dict[int, Any] | None = None
        self._current: Any = None
        self.workers: int | None = None  # boards checked at once (-j N; CheckRun sets it): the ETA spreads the work over them

    @property
    def enabled(self) -> bool:
        return self.progress.enabled

    def expected(self, board) -> float:
        x = schedule.board_cost(board) * self.share
        return min(x, float(self.max_states)) if self.max_states else x

    def plan(self, boards: Sequence[Any]) -> None:
        """The boards still to check (None: bad input), for the ETA."""
        if self.enabled and self.eta:
            self.progress.plan([self.expected(b) for b in boards if b is not None], workers=self.workers)

    def board(self, k: int, path, display: str, load: Callable[[Any, str], Any] | None = None):
        """Board ``k`` of a run in this process (``load(path, display)``, default ``load_board``),
        every board loaded at the first call (the ETA needs them all); bad input, or a bound hit
        while reading, is raised where the board comes, as without progress. With ``--timeout``
        or ``--memory-limit`` each board is read when it comes (their bounds count its reading),
        and the ETA goes without."""
        load = load or load_board
        bounded = getattr(self.args, "timeout", None) is not None or getattr(self.args, "memory_limit", None) is not None
        if not self.enabled or bounded:
            return load(path, display)
        if self._loaded is None:
            self._loaded = {}
            for i, (p, d) in enumerate(self.files):
                try:
                    self._loaded[i] = load(p, d)
                except (InputError, LoadBound) as e:
                    self._loaded[i] = e
            self.plan([b if not isinstance(b, (InputError, LoadBound)) else None for b in self._loaded.values()])
        b = self._loaded.pop(k)
        if isinstance(b, (InputError, LoadBound)):
            self._end_current()
            raise b
        return b

    def start(self, board, display: str):
        """A task for ``board`` (several may run at once: ``-j N``)."""
        name = display.rsplit("/", 1)[-1]
        return self.progress.start(name, self.expected(board) if self.enabled and self.eta else None)

    def begin(self, board, display: str):
        """A task for ``board``, the one board checked in this process now (``-j 1``)."""
        self._end_current()
        self._current = self.start(board, display)
        return self._current

    def _end_current(self) -> None:
        if self._current is not None:  # a board that ended in bad input or a bug: no verdict
            self.progress.finish(self._current)
            self._current = None

    def found(self, board, task) -> Callable[..., None]:
        """``check_board(found=...)`` for ``task``: counted, and the run's first shown at once."""

        def found(v, reduced: bool) -> None:
            task.found()
            self.first(board, v, reduced)

        return found

    def note(self, board, task, payload) -> None:
        """A worker's note about ``task`` (checking ``board``): its counts, or a violation."""
        if apply_remote(task, payload):
            return
        if isinstance(payload, tuple) and payload and payload[0] == "violation":
            task.found()
            self.first(board, payload[1], payload[2])

    def finish(self, task, br, counted: bool = True) -> None:
        """``task`` ended with ``br`` (after the baseline's outcome)."""
        if task is self._current:
            self._current = None
        if br is None:
            self.progress.finish(task, counted=counted)
            return
        new = sum(1 for c in br.counterexamples if getattr(c, "baselined", None) is None)
        self.progress.finish(task, failed=br.verdict == "fail", violations=new, counted=counted)

    def held(self, br, display: str, settled: bool = True) -> None:
        """``br`` is known, and stdout holds it back for board order: its verdict on stderr now.
        ``settled=False`` (``--fail-fast``): it is reported only if no try before it in the
        rounds fails."""
        self.progress.note(verdict_note(br, display, self.board_line(br, display), settled))

    def close(self) -> None:
        self.progress.close()


def verdict_note(br, display: str, board_line: str, settled: bool = True) -> list[str]:
    """A board's verdict for stderr, when stdout holds it back for board order: its stdout line
    (``FAIL boards/x.toml: 28 states, ...``) with the invariants it breaks."""
    line = " ".join(board_line.split())
    bad = sorted({c.invariant for c in br.counterexamples if getattr(c, "baselined", None) is None})
    if bad:
        line += f"; violated: {', '.join(bad)}"
    where = "on stdout in board order" if settled else "reported unless a board before it in the rounds fails"
    return [f"{line} ({where})"]


__all__ = [
    "LONG_COMMANDS",
    "CheckFeed",
    "begin_run",
    "FirstCounterexample",
    "baseline_knows",
    "counterexample_note",
    "replayed_counterexample",
    "run_progress",
    "trace_lines",
    "verdict_note",
]
