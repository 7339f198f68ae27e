"""Writing boards as board TOML files (docs/boards.md) that `bpcheck check` reads.

A board *document* is the plain data a board file holds (what :func:`tomllib.loads` gives for
it): the strategies of :mod:`bpcheck.harness.strategies` draw documents, `bpcheck fuzz` shrinks them and
writes the minimal one with :func:`write_board`. :func:`board_toml` is the inverse of
:func:`bpcheck.model.board.parse_toml`: ``parse_toml(board_toml(doc)) == doc`` for every valid
document, so the written file loads to the same board (same cards, same uids, same state).
"""

from __future__ import annotations

from pathlib import Path

import tomli_w

from bpcheck.errors import InputError
from bpcheck.model.board import Board, board_from_dict, parse_toml

# Top-level keys first in this order (then the players, then card definitions), so that files
# read like the hand-written seed boards.
_HEAD = ("name", "description", "source", "rules", "turn", "turn_player", "step")
_PLAYER = ("lp", "monsters", "extra_monsters", "spells", "pendulum", "field_spell", "hand", "graveyard", "banished", "deck", "extra_deck")


def _ordered(doc: dict) -> dict:
    out: dict = {k: doc[k] for k in _HEAD if k in doc}
    for side in ("p1", "p2"):
        pd = doc.get(side, {})
        out[side] = {k: pd[k] for k in _PLAYER if k in pd} | {k: v for k, v in pd.items() if k not in _PLAYER}
    for k, v in doc.items():
        if k not in out:
            out[k] = v
    return out


def board_toml(doc: dict, header: str = "") -> str:
    """The board document as TOML text; ``header`` (lines of text) goes first as comments."""
    body = tomli_w.dumps(_ordered(doc), multiline_strings=False)
    lines = [f"# {line}".rstrip() for line in header.splitlines()] if header else []
    return ("\n".join(lines) + "\n\n" if lines else "") + body


def write_board(doc: dict, path: Path | str, header: str = "") -> Path:
    """Write ``doc`` to ``path`` as a board file and check that it loads back to the same board."""
    path = Path(path)
    text = board_toml(doc, header)
    if parse_toml(text, str(path)) != doc:  # the writer's contract: never a file that means something else
        raise InputError(str(path), "", "internal error: the board written does not read back as the board drawn")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(str(path), "", f"cannot write the board: {e.strerror or e}") from None
    return path


def document_board(doc: dict, path: str = "<drawn board>", cards_db: str | None = None) -> Board:
    """The :class:`Board` a document describes (validated exactly as a board file is);
    ``cards_db``: the card database whose cards it may name (``--cards-db``)."""
    return board_from_dict(doc, path, cards_db=cards_db)


def board_size(doc: dict) -> int:
    """How many cards a board document places: monsters (and their Xyz materials), Spells/Traps,
    Pendulum Zone cards, Field Spells and piles (the Extra Deck's too)."""
    n = 0
    for side in ("p1", "p2"):
        pd = doc.get(side, {})
        mons = list(pd.get("monsters", ())) + list(pd.get("extra_monsters", ()))
        n += len(mons) + sum(len(m.get("materials", ())) for m in mons if isinstance(m, dict))
        n += len(pd.get("spells", ())) + len(pd.get("pendulum", ())) + (1 if "field_spell" in pd else 0)
        for pile in ("hand", "graveyard", "banished", "deck", "extra_deck"):
            n += len(pd.get(pile, ()))
    return n


__all__ = ["board_size", "board_toml", "document_board", "write_board"]
