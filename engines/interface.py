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

from dataclasses import dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

from bpcheck.errors import InputError
from bpcheck.model.board import Board
from bpcheck.model.cards import Card, Op
from bpcheck.model.events import Event
from bpcheck.model.rulesets import DEFAULT_RULESET


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


class EngineRefusal(Exception):
    """Raised by :meth:`Engine.start` when an engine cannot play a board at all: a card or a
    mechanic it lacks, a position its set-up cannot express. The board gets a ``skipped``
    verdict with ``reason`` (never a pass, never a crash); other boards go on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Capabilities:
    """What an engine can and cannot say (protocol v2's ``hello`` capabilities; docs/protocol.md).

    Every field is optional and defaults to what a v1 engine does. An in-process engine declares
    them as a ``capabilities`` attribute; :func:`capabilities_of` reads it.

    - ``unobserved``: observation paths the engine does not provide, in the path syntax
      ``players[].monsters[].modifiers``, ``lingering``, ``open_windows``. The fingerprint, DIFF and
      the invariants skip them (an invariant that needs one reports "not evaluated").
    - ``implicit_passes``: the engine does not ask a player who has nothing to do but pass; it
      passes for them. The checker aligns windows with the reference itself.
    - ``cloning``: False when engine states cannot be kept or copied, only re-executed from the
      start by their action path (the checker then sends paths and releases handles).
    - ``passcodes``: cards carry their passcode beside their name in observations, events and
      action records.
    """

    unobserved: frozenset[str] = frozenset()
    implicit_passes: bool = False
    cloning: bool = True
    passcodes: bool = False


DEFAULT_CAPABILITIES = Capabilities()


def capabilities_of(engine: Any) -> Capabilities:
    """The capabilities an engine declares (a v1 or plain in-process engine: the defaults)."""
    caps = getattr(engine, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else DEFAULT_CAPABILITIES


# -- what an engine receives at start ---------------------------------------------------------


def start_document(board: Board) -> dict:
    """What an engine receives to start a board, as plain JSON data (docs/engines.md, "What
    `start` receives"): the protocol's ``start`` parameters ``{"board", "path", "cards", "ruleset"}``.

    ``board`` is the board document as written (TOML/JSON; a drawn board's document for
    ``bpcheck fuzz``), ``path`` where it was read from (a display name such as ``<drawn board>``
    for a board that has no file), ``cards`` every card of the board's pool by name, in the
    vocabulary of docs/cards.md, ``ruleset`` the ruleset to play: the board's own, else
    ``--ruleset``'s, else ``tcg`` (``board`` names one only when the file does). A `cmd:` engine gets exactly this over the protocol; an
    in-process engine may call this function from its ``start`` instead of reading bpcheck's
    internal ``board.state``."""
    if board.document is None:
        raise InputError(board.path, "", "this board was not read from a board document, so no engine outside the model can be given it")
    return {
        "board": jsonable(board.document),
        "path": board.path,
        "cards": {c.name: card_record(c) for c in sorted(board.pool, key=lambda c: c.name)},
        "ruleset": board.ruleset or DEFAULT_RULESET,
    }


def jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, frozenset, set)):
        items = [jsonable(x) for x in v]
        return sorted(items, key=repr) if isinstance(v, (set, frozenset)) else items
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, Op):  # (an operation inside another's arguments: choose_one's options)
        return {"op": v.op, **{k: jsonable(x) for k, x in v.args}}
    return str(v)


def card_record(c: Card) -> dict:
    """A card of the pool as JSON, in the vocabulary of docs/cards.md."""

    def op(o) -> dict:
        return {"op": o.op, **{k: jsonable(x) for k, x in o.args}}

    return {
        "name": c.name,
        "passcode": c.passcode,
        "kind": c.kind,
        "subtype": c.subtype,
        "attribute": c.attribute,
        "race": c.race,
        "level": c.level,
        "atk": c.atk,
        "def": c.def_,
        "text": c.text,
        "effects": [
            {
                "index": e.index,
                "type": e.type,
                "label": e.label,
                "when": e.when,
                "location": e.location,
                "mandatory": e.mandatory,
                "once_per_turn": e.once_per_turn,
                "conditions": list(e.conditions),
                "cost": [op(o) for o in e.cost],
                "targets": [
                    {k: jsonable(getattr(t, k)) for k in t.__dataclass_fields__} for t in e.targets  # type: ignore[attr-defined]
                ],
                "ops": [op(o) for o in e.ops],
            }
            for e in c.effects
        ],
        "statics": [{"apply": s.apply, "to": s.to, **{k: jsonable(x) for k, x in s.args}} for s in c.statics],
    }
