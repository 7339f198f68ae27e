"""The invariant API: a named check with a stable ID, a statement, rule citations and a kind.

An invariant reads observations (bpcheck's JSON snapshot), action records, events, the card
data of the run and the monitor (its own history, :mod:`bpcheck.invariants.monitor`) — never an
engine's internals — so it can judge any engine. It returns ``None`` when its situation did not
arise, ``True`` when it held, a message (a string) when it was violated, or
:class:`NotJudged` when the situation arose but the card data could not be classified.

Kinds:
- ``state``: ``check(obs, ctx)``: ``ctx.mon`` the monitor of that state, ``ctx.cards`` the card facts
- ``transition``: ``check(t)`` with ``t.before``, ``t.action``, ``t.events``, ``t.after``,
  ``t.mon`` (the monitor before), ``t.mon_after`` and ``t.cards``
- ``actions``: ``check(obs, actions, ctx)``: what a state offers (a list of action dicts)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

KINDS = ("state", "transition", "actions")
# The steps of the observation (docs/protocol.md, $defs/step), restated: a step filter
# (``steps=``) judges only these names; any other value (a buggy engine's) never filters.
STEPS = frozenset({
    "main1", "battle_start_step", "battle_step", "damage_step_start", "damage_step_flip", "damage_step_before_calculation",
    "damage_step_during_calculation", "damage_step_after_calculation_1", "damage_step_after_calculation_2", "damage_step_end",
    "battle_end_step", "main2", "end_phase",
})  # fmt: skip
FAMILIES = ("turn structure", "attack counts", "replay", "damage step", "chains and windows", "accounting")


class NotJudged:
    """A verdict: the situation arose but the invariant could not classify a card's data (an
    unknown card or a word its reading does not know). Reported as "not judged", never as a
    pass or a failure."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"NotJudged({self.reason!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotJudged) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash(self.reason)


class Unknown(Exception):
    """Raised inside a check by a card fact the card data does not give (see
    :func:`bpcheck.invariants.view.fact`); the check's verdict becomes :class:`NotJudged`."""

    def __init__(self, card: str, what: str) -> None:
        super().__init__(f"{card!r}: {what}")
        self.card = card
        self.what = what


def not_judged(u: Unknown) -> NotJudged:
    """The verdict of a check that raised `u`."""
    return NotJudged(f"{u.card}: {u.what} cannot be read from its card data")


class Context:
    """What a state or actions check sees besides the observation: the monitor of that state
    and the run's card facts."""

    __slots__ = ("mon", "cards")

    def __init__(self, mon: Any, cards: Any) -> None:
        self.mon = mon
        self.cards = cards


class Transition:
    """One transition as the invariants see it: observations before and after, the action
    record and the events, indexed by kind once; the monitor before and after it and the card
    facts of the run."""

    __slots__ = ("before", "action", "events", "after", "_by_kind", "mon", "mon_after", "cards")

    def __init__(
        self,
        before: dict,
        action: dict,
        events: Sequence[Any],
        after: dict,
        mon: Any = None,
        cards: Any = None,
        mon_after: Any = None,
    ) -> None:
        self.before = before
        self.action = action
        self.events = events
        self.after = after
        self.mon = mon
        self.cards = cards
        self.mon_after = mon_after
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
    # It judges transitions one pass at a time (priority, pass rounds, one step per transition).
    # An engine with implicit passes folds passes into its transitions: not evaluated there.
    explicit_passes: bool = False
    # Transition invariants only: the steps outside which the check has nothing to judge unless
    # one of the event kinds ``step_events`` happens (it returns None): it runs when the step
    # before or after the transition is one of them (or is not a step name of :data:`STEPS`), or
    # when one of ``step_events`` happens. None: no step filter. (Kept apart from ``events``,
    # which alone means "nothing to judge without one of these events", as bpcheck prove reads
    # it.) tests/test_checking_filters.py runs every invariant unfiltered too: same results.
    steps: frozenset[str] | None = None
    step_events: frozenset[str] = frozenset()
    # The decorated function itself (``check`` without its NotJudged wrapper), for the checker's
    # flat dispatch (:class:`~bpcheck.explorers.checking.EngineSystem`), which turns an
    # :class:`Unknown` it raises into the same NotJudged verdict. None for an Invariant built by
    # hand: then ``check`` is called as it is.
    fn: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    # What it reads, and what it does when an engine does not observe a field (docs/invariants.md).
    fields: str = ""

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
    explicit_passes: bool = False,
    steps: Sequence[str] | None = None,
    step_events: Sequence[str] = (),
    fields: str = "",
):
    """Register a check. One function, one ID, one statement, the rules it enforces."""
    if kind not in KINDS:
        raise ValueError(f"unknown invariant kind {kind!r}")
    if steps is not None and (kind != "transition" or not set(steps) <= STEPS):
        raise ValueError(f"steps= is for transition invariants, with step names of STEPS: {sorted(set(steps) - STEPS)}")
    if step_events and steps is None:
        raise ValueError("step_events= goes with steps=")
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")

    def deco(fn):
        if id in REGISTRY:
            raise ValueError(f"invariant {id} registered twice")

        @functools.wraps(fn)
        def check(*args):
            try:
                return fn(*args)
            except Unknown as u:
                return not_judged(u)

        REGISTRY[id] = Invariant(
            id,
            statement,
            tuple(rules),
            kind,
            family,
            check,
            None if events is None else frozenset(events),
            None if reads is None else frozenset(reads),
            explicit_passes,
            None if steps is None else frozenset(steps),
            frozenset(step_events),
            fn,
            fields,
        )
        return fn

    return deco
