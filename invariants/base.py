"""The invariant API: a named check with a stable ID, a statement, rule citations and a kind.

An invariant reads observations (bpcheck's JSON snapshot), action records and events — never
an engine's internals — so it can judge any engine. It returns ``None`` when its situation did
not arise, ``True`` when it held, or a message (a string) when it was violated.

Kinds:
- ``state``: ``check(obs)``
- ``transition``: ``check(t)`` with ``t.before``, ``t.action``, ``t.events``, ``t.after``
- ``actions``: ``check(obs, actions)``: what a state offers (a list of action dicts)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

KINDS = ("state", "transition", "actions")
FAMILIES = ("attack counts", "replay", "damage step", "chains and windows", "accounting")


class Transition:
    """One transition as the invariants see it: observations before and after, the action
    record and the events, indexed by kind once."""

    __slots__ = ("before", "action", "events", "after", "_by_kind")

    def __init__(self, before: dict, action: dict, events: Sequence[Any], after: dict) -> None:
        self.before = before
        self.action = action
        self.events = events
        self.after = after
        by: dict[str, list[Any]] = {}
        for e in events:
            by.setdefault(e.kind, []).append(e)
        self._by_kind = by

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def kind_set(self):
        return self._by_kind.keys()

    def of(self, kind: str) -> list[Any]:
        return self._by_kind.get(kind, [])


@dataclass(frozen=True)
class Invariant:
    id: str
    statement: str
    rules: tuple[str, ...]
    kind: str
    family: str
    check: Callable[..., Any]
    # Transition invariants only: the event kinds without which the check has nothing to judge
    # (it returns None). The explorer skips it on transitions with none of them. None: always run.
    events: frozenset[str] | None = None
    # The observation paths it reads (docs/protocol.md, path syntax ``players[].monsters[].modifiers``).
    # An engine that does not observe one of them (protocol v2 ``unobserved``) gets the verdict
    # "not evaluated: the engine does not observe X" instead of a check. None: not declared.
    reads: frozenset[str] | None = None

    def to_dict(self) -> dict:
        return {"id": self.id, "statement": self.statement, "rules": list(self.rules), "kind": self.kind, "family": self.family}


REGISTRY: dict[str, Invariant] = {}


def invariant(
    id: str,
    statement: str,
    rules: Sequence[str],
    kind: str,
    family: str,
    events: Sequence[str] | None = None,
    reads: Sequence[str] | None = None,
):
    """Register a check. One function, one ID, one statement, the rules it enforces."""
    if kind not in KINDS:
        raise ValueError(f"unknown invariant kind {kind!r}")
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")

    def deco(fn):
        if id in REGISTRY:
            raise ValueError(f"invariant {id} registered twice")
        REGISTRY[id] = Invariant(
            id, statement, tuple(rules), kind, family, fn, None if events is None else frozenset(events), None if reads is None else frozenset(reads)
        )
        return fn

    return deco
