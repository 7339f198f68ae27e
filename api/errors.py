"""Errors bpcheck reports to its user. Each names the file, the field path and the problem.

The exit statuses a command maps them to are the command line's (:mod:`bpcheck.cli.exits`):
the library raises and returns verdicts, the CLI decides how a process ends."""

from __future__ import annotations

import difflib
from typing import Iterable


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


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A mistyped name's likely meaning, to follow it in a message: `` (did you mean 'check'?)``
    (or two: ``'a' or 'b'``), or "" when nothing is close (difflib's ratio, at least 0.6)."""
    close = difflib.get_close_matches(word, list(choices), n=2, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
