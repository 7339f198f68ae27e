"""Exit statuses, documented in the README: the command line's contract with CI.

Only :mod:`bpcheck.cli` speaks in exit statuses; the library (:mod:`bpcheck.harness` and below)
raises :class:`bpcheck.errors.InputError` and returns verdicts.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
EXIT_INTERNAL = 4  # bpcheck itself failed (a bug): one line on stderr, the traceback in a file
# Stopped by a signal: 128 + the signal's number, as shells report it (results of finished
# boards are written first): SIGHUP 129, SIGINT 130, SIGTERM 143.
EXIT_SIGHUP = 129
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


