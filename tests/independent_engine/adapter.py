"""The thin adapter that runs the independent engine in process, behind bpcheck's engine interface
(docs/engines.md): the engine gets the board as the plain document of ``start_document(board)``
(the protocol's ``start`` parameters), its states stay opaque, and it declares what it withholds
as ``Capabilities``. This file is the only one of the engine that imports bpcheck.

    --engine adapter:make_engine            (this folder on PYTHONPATH)
    --engine adapter:BUG_NAME               (a variant with one planted bug, e.g. adapter:chain_first_in_first_out)
"""

from __future__ import annotations

import os
import sys

from bpcheck.engines.interface import Capabilities, EngineRefusal, start_document
from bpcheck.model.events import Event

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import BUGS, WITHHELD, Engine, Refusal  # noqa: E402


class Action:
    __slots__ = ("record", "label", "kind")

    def __init__(self, record: dict) -> None:
        self.record = record
        self.label = record["label"]
        self.kind = record["kind"]

    def to_dict(self) -> dict:
        return dict(self.record)


def _event(e: dict) -> Event:
    return Event(e["kind"], tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in e.items() if k != "kind"))


class IndependentEngine:
    capabilities = Capabilities(unobserved=frozenset(WITHHELD))

    def __init__(self, bug: str | None = None) -> None:
        self.engine = Engine(bug)
        self.name = "independent-engine" + (f" (bug: {bug})" if bug else "")

    def start(self, board):
        doc = start_document(board)
        try:
            return self.engine.start(doc["board"], doc["cards"], doc.get("ruleset"))
        except Refusal as e:
            raise EngineRefusal(f"this engine cannot play the board: {e}") from None

    def legal_actions(self, state):
        return [Action(a) for a in self.engine.legal_actions(state)]

    def apply(self, state, action):
        s2, events = self.engine.apply(state, action.label)
        return s2, [_event(e) for e in events]

    def observe(self, state) -> dict:
        return self.engine.observe(state)

    def is_terminal(self, state) -> bool:
        return Engine.terminal(state)


def make_engine(bug: str | None = None) -> IndependentEngine:
    return IndependentEngine(bug)


# one factory per planted bug, for --engine adapter:NAME (names with "_" for "-")
for _bug in BUGS:
    globals()[_bug.replace("-", "_")] = (lambda b: lambda: IndependentEngine(b))(_bug)
