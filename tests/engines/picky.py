"""In-process engines that refuse cards, for `bpcheck fuzz`'s offer of the cards
(tests/test_fuzz_engines.py, tests/test_fuzz_lifecycle.py; ``--engine picky:NAME`` with this
folder on PYTHONPATH). Each is the reference model behind a `start` that refuses some boards."""

from __future__ import annotations

import os
import time

from bpcheck.engines.interface import EngineRefusal, start_document
from bpcheck.engines.reference import ReferenceEngine


class _Picky(ReferenceEngine):
    def refuses(self, card: dict) -> str | None:
        return None

    def start(self, board):
        doc = start_document(board)
        for name in sorted({c for c in _card_names(doc["board"])}):
            why = self.refuses(doc["cards"][name])
            if why is not None:
                raise EngineRefusal(f"{name}: {why}")
        return super().start(board)


def _card_names(board: dict):
    for side in ("p1", "p2"):
        pd = board.get(side, {})
        for zone in ("monsters", "spells"):
            for c in pd.get(zone, ()):
                yield c["card"]
        if "field_spell" in pd:
            yield pd["field_spell"]["card"]
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in pd.get(pile, ()):
                yield c if isinstance(c, str) else c["card"]


class NoTraps(_Picky):
    def refuses(self, card: dict) -> str | None:
        return "this engine has no Trap Cards yet" if card["kind"] == "trap" else None


class Nothing(_Picky):
    def refuses(self, card: dict) -> str | None:
        return "this engine plays no card at all yet"


class SlowStart(ReferenceEngine):
    """Takes PICKY_START_DELAY seconds (default 0.5) to start a board: a run with a shorter
    --timeout ends while the cards are offered."""

    def start(self, board):
        time.sleep(float(os.environ.get("PICKY_START_DELAY", "0.5")))
        return super().start(board)


def no_traps():
    return NoTraps(name="no-traps")


def nothing():
    return Nothing(name="nothing")


def slow_start():
    return SlowStart(name="slow-start")
