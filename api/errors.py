"""Errors bpcheck reports to its user. Each names the file, the field path and the problem.

The exit statuses a command maps them to are the command line's (:mod:`bpcheck.cli.exits`):
the library raises and returns verdicts, the CLI decides how a process ends."""

from __future__ import annotations


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
