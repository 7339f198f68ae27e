"""The engine interface: one contract for every engine under test (docs/engines.md).

Shaped like OpenSpiel's State API. An engine starts from a board, lists the legal actions of the
player to act, applies one (giving the next state and the events it produced) and gives an
observation in bpcheck's documented JSON snapshot schema (docs/model.md). Engine states are
opaque to the checker; actions carry a readable, unique ``label``, a ``kind`` and a
JSON-serialisable ``to_dict()``; events are :class:`~bpcheck.model.events.Event`.

The reference model is the first engine (:class:`bpcheck.engines.reference.ReferenceEngine`); mutants, in-process Python
engines and out-of-process engines (JSON lines) implement the same contract.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

from bpcheck.model.board import Board
from bpcheck.model.events import Event


@runtime_checkable
class EngineAction(Protocol):
    label: str
    kind: str

    def to_dict(self) -> dict: ...


class Engine(Protocol):
    name: str

    def start(self, board: Board) -> Any: ...

    def legal_actions(self, state: Any) -> Sequence[EngineAction]: ...

    def apply(self, state: Any, action: EngineAction) -> tuple[Any, Sequence[Event]]: ...

    def observe(self, state: Any) -> dict: ...

    def is_terminal(self, state: Any) -> bool: ...
