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


@dataclass(frozen=True)
class Transition:
    before: dict
    action: dict
    events: Sequence[Any]
    after: dict

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.kind == kind]


@dataclass(frozen=True)
class Invariant:
    id: str
    statement: str
    rules: tuple[str, ...]
    kind: str
    family: str
    check: Callable[..., Any]

    def to_dict(self) -> dict:
        return {"id": self.id, "statement": self.statement, "rules": list(self.rules), "kind": self.kind, "family": self.family}


REGISTRY: dict[str, Invariant] = {}


def invariant(id: str, statement: str, rules: Sequence[str], kind: str, family: str):
    """Register a check. One function, one ID, one statement, the rules it enforces."""
    if kind not in KINDS:
        raise ValueError(f"unknown invariant kind {kind!r}")
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")

    def deco(fn):
        if id in REGISTRY:
            raise ValueError(f"invariant {id} registered twice")
        REGISTRY[id] = Invariant(id, statement, tuple(rules), kind, family, fn)
        return fn

    return deco
