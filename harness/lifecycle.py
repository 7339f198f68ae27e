"""The run's life: signals, a closed output pipe, and bpcheck's own failures (docs/checking.md,
"Exit statuses").

- :class:`Signals`: SIGINT, SIGTERM and SIGHUP stop a run cleanly. While `bpcheck check`
  explores (:attr:`Signals.polling`), the first signal asks the exploration to stop at the next
  state (the board is inconclusive, "interrupted (SIGINT)"), or, if that state takes longer than
  half a second (a hostile engine's 100,000 actions, a hung call), where it is
  (:func:`bpcheck.engines.faults.check_stop`); results of finished boards are then
  written as usual and the exit status is 128 + the signal's number. Outside an exploration, or at
  a second signal, :class:`Interrupted` is raised at once; the command catches it where it can
  still write what it has. Inside :meth:`Signals.held` (the writing of a result file: ``--json``)
  a signal is kept until the block ends, then raised: a second signal never leaves a result
  half written or not written (issue 33).
- :class:`GuardedStdout`: a closed pipe (``bpcheck check ... | head -1``) stops output to stdout
  and nothing else: the run goes on and exits with its real status, never 0 for a failure. It
  also writes control characters as ``\\xNN`` (a card name cannot drive the terminal) and
  characters the terminal's encoding cannot show as backslash escapes (a non-UTF-8 terminal
  never kills a run).
- :func:`internal_error`: an exception that is bpcheck's own bug is exit 4 with one line saying
  what failed and the file holding the full traceback (``$BPCHECK_CRASH_DIR``, else the system's
  temporary folder).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import tempfile
import time
import traceback
from typing import Iterator

from bpcheck import __version__
from bpcheck.engines import faults
from bpcheck.reports.terminal import escape_controls

SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP")) if s is not None)


class Interrupted(BaseException):
    """A signal stopped the run (not an Exception: nothing catches it by accident)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


class Signals:
    def __init__(self) -> None:
        self.signum: int | None = None
        self.polling = False
        self._old: dict = {}
        self._holding = 0  # inside held(): signals are kept, not raised
        self._kept: list[int] = []

    def install(self) -> None:
        faults.reset_stop()
        for s in SIGNALS:
            try:
                self._old[s] = signal.signal(s, self._handler)
            except (ValueError, OSError):  # not the main thread
                pass

    def restore(self) -> None:
        faults.reset_stop()  # the run is over: its stop request must not cut a later run in this process short
        for s, h in self._old.items():
            try:
                signal.signal(s, h)
            except (ValueError, OSError):
                pass
        self._old.clear()

    def ignore_rest(self) -> None:
        """The process is about to exit with its status decided (bpcheck.cli.main, the process's
        own command): SIGINT, SIGTERM and SIGHUP are ignored until it has (its pools joined, a
        cluster left), so a late signal cannot turn that status into a death by the signal."""
        faults.reset_stop()
        for s in SIGNALS:
            try:
                signal.signal(s, signal.SIG_IGN)
            except (ValueError, OSError):
                pass

    def _handler(self, signum, _frame) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
        if first and self.polling:
            # the exploration stops at its next state; a state that takes longer than
            # faults.STOP_GRACE is abandoned where it is (engines/faults.py)
            faults.request_stop()
            return
        if self._holding:  # a result file is being written: raised when it is whole (held)
            self._kept.append(self.signum if first else signum)
            return
        raise Interrupted(self.signum if first else signum)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A block no signal cuts short (writing a result file): a signal that arrives inside is
        raised as :class:`Interrupted` once the block is done (if it ends normally)."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        if not self._holding and self._kept:
            signum, self._kept = self._kept[0], []
            raise Interrupted(signum)

    def stop_reason(self) -> str | None:
        """Polled by the explorer: a reason to stop, once a signal arrived."""
        if self.signum is None:
            return None
        return f"interrupted ({signal.Signals(self.signum).name})"

    @property
    def name(self) -> str | None:
        return None if self.signum is None else signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int | None:
        return None if self.signum is None else 128 + self.signum


CURRENT = Signals()  # the process's one handler set (installed by bpcheck.cli.main.main)

def terminal_safe(text: str) -> str:
    """`text` with control characters (except tab and newline) and invisible or bidirectional
    formatting characters written as visible escapes (``\\x1b``, ``\\u202e``)."""
    return escape_controls(text)


class GuardedStdout(io.TextIOBase):
    """stdout that survives a closed pipe, control characters and a narrow encoding, written
    line by line: a line (a board's verdict) goes out when it is printed, in a CI log, a file or a
    pipe too, not when a block of 8 KiB is full or the run ends (``./scripts/check`` piped showed
    nothing for minutes, then every board at once: issue 34)."""

    def __init__(self, stream) -> None:
        self._s = stream
        self.pipe_closed = False
        try:
            stream.reconfigure(errors="backslashreplace", line_buffering=True)
        except (AttributeError, ValueError, io.UnsupportedOperation):
            pass

    def _closed(self) -> None:
        self.pipe_closed = True
        try:  # later writes (and the interpreter's last flush) go nowhere instead of failing
            fd = self._s.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass

    def write(self, text: str) -> int:
        if self.pipe_closed:
            return len(text)
        try:
            self._s.write(terminal_safe(text))
        except BrokenPipeError:
            self._closed()
        return len(text)

    def flush(self) -> None:
        if self.pipe_closed:
            return
        try:
            self._s.flush()
        except BrokenPipeError:
            self._closed()

    def isatty(self) -> bool:
        return self._s.isatty()

    def fileno(self) -> int:
        return self._s.fileno()

    @property
    def encoding(self):  # type: ignore[override]
        return self._s.encoding

    @property
    def buffer(self):
        return self._s.buffer

    def writable(self) -> bool:
        return True


def internal_error(e: BaseException, command: str) -> str:
    """Write the traceback of bpcheck's own failure to a file; the one line to print."""
    what, where, saved = _saved_traceback(e, command)
    return terminal_safe(f"bpcheck: internal error (a bug in bpcheck, exit 4) in `{command}`: {what}{where}; {saved}")


def writer_error(e: BaseException, command: str, output: str) -> str:
    """A report writer's own failure (a bug in bpcheck): it costs that output only, so the line
    says which output, why, and that the verdict, the exit status and the other outputs stand;
    the traceback goes to a file, as for :func:`internal_error`."""
    what, where, saved = _saved_traceback(e, f"{command}, writing {output}")
    return terminal_safe(
        f"bpcheck: internal error (a bug in bpcheck) writing {output}: {what}{where}; that output is not complete, "
        f"the verdict, the exit status and the other outputs stand; {saved}"
    )


def _saved_traceback(e: BaseException, command: str) -> tuple[str, str, str]:
    """(what, where, saved): the exception in one line, where it was raised, and where its
    traceback was written (in $BPCHECK_CRASH_DIR or the temporary folder)."""
    tb = e.__traceback__
    frames = traceback.extract_tb(tb)
    where = ""
    if frames:
        fr = frames[-1]
        where = f" at {os.path.basename(fr.filename)}:{fr.lineno} ({fr.name})"
    text = str(e)
    what = f"{type(e).__name__}: {text}" if text else type(e).__name__
    what = what.splitlines()[0] if what else what
    if len(what) > 300:
        what = what[:300] + "..."
    folder = os.environ.get("BPCHECK_CRASH_DIR") or tempfile.gettempdir()
    body = (
        f"bpcheck {__version__} internal error in `bpcheck {command}`\n"
        f"time: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n"
        f"python: {sys.version.split()[0]} on {sys.platform}\n"
        f"argv: {sys.argv!r}\n\n" + "".join(traceback.format_exception(type(e), e, tb))
    )
    try:
        fd, path = tempfile.mkstemp(prefix="bpcheck-internal-error-", suffix=".txt", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(body)
        saved = f"the full traceback is in {path}"
    except OSError as oe:
        saved = f"the traceback could not be written to {folder!r} ({oe.strerror or oe})"
    return what, where, saved


__all__ = ["CURRENT", "GuardedStdout", "Interrupted", "SIGNALS", "Signals", "internal_error", "terminal_safe", "writer_error"]
