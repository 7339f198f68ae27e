"""The board files a run is given, and reading each within the run's bounds: ``--exclude``
patterns, and ``--timeout`` / ``--memory-limit`` while a board is read (:class:`LoadBound`)."""

from __future__ import annotations

import os
import signal
from fnmatch import fnmatchcase
from pathlib import Path

from bpcheck.engines.registry import default_cards_db
from bpcheck.errors import InputError
from bpcheck.explorers.core import current_rss
from bpcheck.model.board import load_board
from bpcheck.model.cdb import open_db
from bpcheck.model.cmdline import input_files


def board_files(paths: list[str]) -> list[tuple[Path, str]]:
    return input_files(paths, ".toml", "board")


def exclude_boards(files: list[tuple[Path, str]], patterns: list[str] | None) -> tuple[list[tuple[Path, str]], list[str]]:
    """`files` less those an ``--exclude`` pattern matches (a shell pattern over the board's path
    as found, or over its file name), and the paths left out. A pattern that matches no board, or
    patterns that leave none, are errors: a typo never silently checks a board the user meant to
    leave out, and a run never checks "0 boards" and passes."""
    if not patterns:
        return files, []

    pats = [p[2:] if p.startswith("./") else p for p in patterns]
    used = [False] * len(pats)
    kept, out = [], []
    for path, shown in files:
        hit = False
        for i, pat in enumerate(pats):
            if fnmatchcase(path.as_posix(), pat) or fnmatchcase(path.name, pat):
                used[i] = hit = True
        if hit:
            out.append(path.as_posix())
        else:
            kept.append((path, shown))
    for pat, u in zip(patterns, used):
        if not u:
            raise InputError("--exclude", pat, f"matches none of the {len(files)} board files given (a shell pattern over a board's path or file name)")
    if not kept:
        raise InputError("--exclude", " ".join(patterns), f"leaves none of the {len(files)} board files given")
    return kept, out


def boards_cards_db(engine: str | None, cards_db: str | None) -> str | None:
    """The card database whose cards the boards of a run may name besides the pool's:
    ``--cards-db FILE``, else the engine's own (``--engine ocgcore``: ``OCG_CARDS``), else none
    (docs/boards.md, "Cards of a card database")."""
    return cards_db or default_cards_db(engine)


def check_cards_db(cards_db: str | None) -> None:
    """A ``--cards-db FILE`` given on the command line is read before any board (bad input, exit
    2, when it is not a card database); the engine's default database is read only when a board
    names a card the pool does not have."""
    if cards_db is not None:
        try:
            len(open_db(cards_db))
        except InputError as e:
            raise InputError("--cards-db", e.field, f"{e.file}: {e.problem}") from None


class LoadBound(Exception):
    """--timeout or --memory-limit was reached while a board was read (:func:`load_bounded`)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def load_bounded(path, display: str, timeout: float | None, memory_limit: int | None, cards_db: str | None = None, ruleset: str | None = None):
    """``load_board(path, display)`` within the board's bounds: ``--timeout`` counts from here,
    so a board that takes longer than that to read is stopped while it is read (an interval timer
    in this, the main, thread); ``--memory-limit``: a board whose reading could take the process
    past the limit (reading costs at most twice the file plus 16 MiB: docs/bad-input.md, "Bounded
    cost") is not read. Either is :class:`LoadBound`, the board inconclusive."""
    if memory_limit is not None:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0  # the reader says what is wrong with it
        rss = current_rss()
        need = 2 * size + 16 * 2**20
        if rss is not None and rss + need >= memory_limit * 0.9:
            mib = lambda n: f"{n / 2**20:,.0f} MiB"  # noqa: E731
            raise LoadBound(f"memory limit ({mib(memory_limit)}; {mib(rss)} in use, reading the board may need {mib(need)} more: not read)")
    use_timer = timeout is not None and hasattr(signal, "setitimer")
    if use_timer:
        try:
            old = signal.signal(signal.SIGALRM, _load_alarm)
        except ValueError:  # not the main thread: no timer
            use_timer = False
    if not use_timer:
        return load_board(path, display, cards_db=cards_db, ruleset=ruleset)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return load_board(path, display, cards_db=cards_db, ruleset=ruleset)
    except _LoadTimeout:
        raise LoadBound(f"time limit ({timeout:g} s) while reading the board") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class _LoadTimeout(BaseException):
    """(BaseException: nothing on the way catches it as an error of the file)"""


def _load_alarm(_signum, _frame) -> None:
    raise _LoadTimeout()
