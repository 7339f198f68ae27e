"""Errors bpcheck reports to its user. Each names the file, the field path and the problem."""

from __future__ import annotations

# Exit statuses, documented in the README. They are the CLI contract.
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


class InputError(Exception):
    """Bad input: a malformed file, an unknown card, an impossible board, a bad action name."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = str(file)
        self.field = field
        self.problem = problem
        super().__init__(self.render())

    def render(self) -> str:
        where = self.file
        if self.field:
            where += f": {self.field}"
        return f"{where}: {self.problem}"
