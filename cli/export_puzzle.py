"""`bpcheck export-puzzle BOARD.toml|CEX.json`: an EDOPro puzzle script (Lua) that sets a board up,
so that a rules engineer can replay a counterexample by hand in EDOPro (docs/ocgcore.md).

The script is the one the ocgcore adapter gives the core (engines/ocgcore/puzzle.py): core player
0 is the board's turn player. For a counterexample the trace is written as comments, one numbered
line per action, with the disagreement it ends in. Exit 0 on success, 2 on bad input.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bpcheck.engines.interface import EngineRefusal
from bpcheck.errors import EXIT_BAD_INPUT, EXIT_OK, InputError
from bpcheck.model.board import load_board


def _cards():
    from bpcheck.engines.ocgcore.core import CardDatabase, CoreError
    from bpcheck.engines.ocgcore.engine import default_paths

    path = default_paths()[2]
    if not os.path.isfile(path):
        raise InputError(path, "", "no card database (set OCG_CARDS to a cards.cdb): passcodes come from it")
    try:
        return CardDatabase(path)
    except CoreError as e:
        raise InputError(path, "", str(e)) from None


def _counterexample(path: str, index: int) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "", "no such file") from None
    except json.JSONDecodeError as e:
        raise InputError(path, "", f"malformed JSON: {e}") from None
    if isinstance(data, dict) and "trace" in data:
        cexs = [data]
    elif isinstance(data, dict) and isinstance(data.get("boards"), list):
        cexs = [c for b in data["boards"] if isinstance(b, dict) for c in b.get("counterexamples", [])]
    else:
        raise InputError(path, "", "neither a counterexample (with 'trace') nor a check result (with 'boards')")
    if not cexs:
        raise InputError(path, "boards", "the result holds no counterexample")
    if not 0 <= index < len(cexs):
        raise InputError(path, "--index", f"{index} is out of range (the file holds {len(cexs)} counterexamples)")
    c = cexs[index]
    where = "" if len(cexs) == 1 else f"counterexamples[{index}]."
    if not isinstance(c.get("board"), str):
        raise InputError(path, f"{where}board", "missing or not a string")
    if not isinstance(c.get("trace"), list) or not all(isinstance(x, str) for x in c["trace"]):
        raise InputError(path, f"{where}trace", "missing or not a list of action labels")
    return c


def export_puzzle(path: str, index: int = 0) -> str:
    """The puzzle script for a board file or a counterexample file."""
    from bpcheck.engines.ocgcore.puzzle import build_puzzle

    comment: list[str] = []
    if path.endswith(".json"):
        cex = _counterexample(path, index)
        board_path = cex["board"]
        comment.append(f"counterexample from {path}: {cex.get('invariant', '?')}")
        if cex.get("message"):
            for line in str(cex["message"]).splitlines():
                comment.append(f"  {line}")
        comment.append("trace (play these by hand; P1/P2 are the board's players):")
        for k, label in enumerate(cex["trace"], 1):
            comment.append(f"  {k}. {label}")
        if not cex["trace"]:
            comment.append("  (none: the disagreement is in the initial position)")
    else:
        board_path = path
    board = load_board(board_path)
    try:
        pz = build_puzzle(board, _cards(), comment=comment)
    except EngineRefusal as e:
        raise InputError(board_path, "", f"cannot be a puzzle: {e.reason}") from None
    return pz.lua + "-- Uncomment to play it as an EDOPro puzzle (you lose when the turn ends):\n-- aux.BeginPuzzle()\n"


def cmd_export_puzzle(args) -> int:
    try:
        text = export_puzzle(args.file, args.index)
    except InputError as e:
        print(f"bpcheck: error: {e.render()}")
        return EXIT_BAD_INPUT
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return EXIT_OK
