"""The terminal: everything printed to stdout and stderr escaped, and GitHub workflow commands.

:func:`output_escaping` (the CLI runs every command under it) wraps stdout and stderr in a writer
that shows hazardous characters (:mod:`bpcheck.model.hazard`) as visible escapes
(:func:`escape_controls`) and never lets a line start a GitHub Actions workflow command;
:func:`print_workflow_command` prints the one kind of line it lets through, bpcheck's own
``--github`` annotations. The other formats' escaping is :mod:`bpcheck.reports.safe`.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys

from bpcheck.model.hazard import HAZARD_BUT_LINES, escape_char, hazard_class


def _esc(m: re.Match) -> str:
    return escape_char(m.group())


_OUT_CONTROL = HAZARD_BUT_LINES
_ERR_CONTROL = hazard_class("\n\t\r")


def escape_controls(s: str, keep_cr: bool = False) -> str:
    """``s`` with control characters (except newline and tab, and carriage return with
    `keep_cr`) and invisible/bidirectional formatting characters written as ``\\xNN`` /
    ``\\uNNNN``."""
    return (_ERR_CONTROL if keep_cr else _OUT_CONTROL).sub(_esc, s)


# GitHub Actions reads a line of a step's output as a workflow command when, after leading
# white space, it starts with "::", and when it holds "##[" anywhere (the runner's older syntax):
# actions/runner, ActionCommand.TryParseV2 / TryParse. It splits lines at "\n", "\r" and "\r\n".
# The terminal writer never lets text start one: the first colon of such a line is written
# "\\x3a" and the bracket of "##[" "\\x5b". bpcheck's own annotations (--github) are the only
# commands it prints, through :func:`print_workflow_command`.
_BREAKS = "\r\n"
_BREAK_AT = re.compile("[\r\n]")


class _EscapingWriter(io.TextIOBase):
    """A text stream that escapes hazardous characters (:func:`escape_controls`) and never lets
    a line start a GitHub Actions workflow command (see above)."""

    def __init__(self, inner, keep_cr: bool) -> None:
        self._inner = inner
        self._keep_cr = keep_cr
        self._pending = ""  # the start of a line not yet known to be safe (white space, ":", "#", "##")
        self._at_head = True  # nothing but white space written since the last line break

    def _guard(self, text: str, final: bool = False) -> str:
        buf = self._pending + text
        self._pending = ""
        out: list[str] = []
        i, n = 0, len(buf)
        while i < n:
            if self._at_head:
                j = i
                while j < n and buf[j] not in _BREAKS and buf[j].isspace():
                    j += 1
                if j == n or (buf[j] == ":" and j + 1 == n):
                    if final:
                        out.append(buf[i:])
                    else:
                        self._pending = buf[i:]  # undecided: wait for the next character
                    i = n
                    break
                if buf[j] == ":" and buf[j + 1] == ":":
                    out.append(buf[i:j] + "\\x3a")
                    i = j + 1
                else:
                    out.append(buf[i:j])
                    i = j
                self._at_head = False
                continue
            m = _BREAK_AT.search(buf, i)
            k = n if m is None else m.start()
            if k == n:
                out.append(buf[i:])
                i = n
            else:
                out.append(buf[i : k + 1])
                i = k + 1
                self._at_head = True
        text = "".join(out).replace("##[", "##\\x5b")
        if not final and not self._pending:
            tail = len(text) - len(text.rstrip("#"))
            if tail:  # "#" or "##" at the end may begin "##[" with the next write
                tail = min(tail, 2)
                self._pending, text = text[-tail:], text[:-tail]
        return text

    def write(self, s: str) -> int:
        text = self._guard(escape_controls(s, self._keep_cr))
        if text:
            self._inner.write(text)
        return len(s)

    def trusted_line(self, line: str) -> None:
        """Write one line that bpcheck made (a workflow command) as it is, escaped only."""
        head = self._guard("", final=True)
        if not self._at_head:
            head += "\n"
        self._inner.write(head + escape_controls(line, False).replace("\n", "\\x0a") + "\n")
        self._at_head = True

    def flush(self) -> None:
        self._inner.flush()

    def close_pending(self) -> None:
        """Write what was held back (at the end of the run)."""
        text = self._guard("", final=True)
        if text:
            self._inner.write(text)

    def isatty(self) -> bool:
        return self._inner.isatty()

    def fileno(self) -> int:
        return self._inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self):  # type: ignore[override]
        return getattr(self._inner, "encoding", "utf-8")

    @property
    def errors(self):  # type: ignore[override]
        return getattr(self._inner, "errors", "strict")

    @property
    def buffer(self):
        return self._inner.buffer

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


def _escaping_writer(stream) -> "_EscapingWriter | None":
    seen = 0
    while stream is not None and seen < 8:
        if isinstance(stream, _EscapingWriter):
            return stream
        stream = getattr(stream, "_s", None) or getattr(stream, "_inner", None)
        seen += 1
    return None


def print_workflow_command(line: str) -> None:
    """Print one GitHub Actions workflow command that bpcheck made (``--github``): the one kind of
    line the terminal writer lets start with "::". Its parts must be escaped already
    (bpcheck.reports.github)."""
    out = sys.stdout
    if getattr(out, "pipe_closed", False):
        return
    w = _escaping_writer(out)
    if w is None:  # not under output_escaping (a library call): a plain print
        print(line)
        return
    try:
        w.trusted_line(line)
    except BrokenPipeError:
        closed = getattr(out, "_closed", None)
        if callable(closed):
            closed()


@contextlib.contextmanager
def output_escaping():
    """While active, hazardous characters in everything printed to stdout and stderr are escaped
    (a card name from a file or an engine holding ESC must not drive the terminal) and no line
    can start a GitHub Actions workflow command. Carriage returns stay on stderr, where progress
    lines use them. The previous streams come back after."""
    old = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, _EscapingWriter):
        sys.stdout = _EscapingWriter(sys.stdout, keep_cr=False)  # type: ignore[assignment]
    if not isinstance(sys.stderr, _EscapingWriter):
        sys.stderr = _EscapingWriter(sys.stderr, keep_cr=True)  # type: ignore[assignment]
    try:
        yield
    finally:
        for w in (sys.stdout, sys.stderr):
            try:
                if isinstance(w, _EscapingWriter):
                    w.close_pending()
                w.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = old


__all__ = ["escape_controls", "output_escaping", "print_workflow_command"]
