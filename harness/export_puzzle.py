"""`bpcheck export-puzzle BOARD.toml|CEX.json`: an EDOPro puzzle script (Lua) that sets a board up,
so that a rules engineer can replay a counterexample by hand in EDOPro (docs/ocgcore.md).

The script is the one the ocgcore adapter gives the core (engines/ocgcore/puzzle.py): core player
0 is the board's turn player. For a counterexample the trace is written as comments, one numbered
line per action, with the disagreement it ends in. Exit 0 on success, 2 on bad input.
"""

from __future__ import annotations

import os

from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.ocgcore.core import CardDatabase, CoreError
from bpcheck.engines.ocgcore.engine import default_paths
from bpcheck.engines.ocgcore.puzzle import build_puzzle
from bpcheck.errors import InputError
from bpcheck.harness.replay import load_counterexamples, resolve_board
from bpcheck.model.board import load_board
from bpcheck.reports.safe import one_line


def _cards():
    path = default_paths()[2]
    if not os.path.isfile(path):
        raise InputError(path, "", "no card database (set OCG_CARDS to a cards.cdb): passcodes come from it")
    try:
        return CardDatabase(path)
    except CoreError as e:
        raise InputError(path, "", str(e)) from None


def _counterexample(path: str, index: int) -> dict:
    """The counterexample `index` of a counterexample or result file, read through the input
    layer like `replay` reads it (size and depth limits, strict JSON, every field checked)."""
    cexs = load_counterexamples(path)
    if not cexs:
        raise InputError(path, "boards", "the result holds no counterexample")
    if not 0 <= index < len(cexs):
        raise InputError(path, "--index", f"{index} is out of range (the file holds {len(cexs)} counterexamples)")
    return cexs[index]


def export_puzzle(path: str, index: int = 0) -> str:
    """The puzzle script for a board file or a counterexample file."""
    comment: list[str] = []
    if path.endswith(".json"):
        cex = _counterexample(path, index)
        board_path = cex["board"]
        # Lua comments end at a line break: what the file (an engine) said stays on its line
        comment.append(one_line(f"counterexample from {path}: {cex.get('invariant', '?')}"))
        if cex.get("message"):
            for line in str(cex["message"]).splitlines():
                comment.append(f"  {one_line(line)}")
        comment.append("trace (play these by hand; P1/P2 are the board's players):")
        for k, label in enumerate(cex["trace"], 1):
            comment.append(f"  {k}. {one_line(label)}")
        if not cex["trace"]:
            comment.append("  (none: the disagreement is in the initial position)")
    else:
        board_path = path
    board = load_board(resolve_board(path, board_path) if path.endswith(".json") else board_path, board_path)
    try:
        pz = build_puzzle(board, _cards(), comment=comment)
    except EngineRefusal as e:
        raise InputError(board_path, "", f"cannot be a puzzle: {e.reason}") from None
    return pz.lua + "-- Uncomment to play it as an EDOPro puzzle (you lose when the turn ends):\n-- aux.BeginPuzzle()\n"


