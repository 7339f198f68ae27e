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
# The rulesets an invariant can judge (model/rulesets.py RULESETS, restated: the invariants read
# observations, not the model); an invariant says which of them it judges (``rulesets=``).
RULESETS = ("tcg", "ocg", "goat")
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


# -- what an invariant does where an engine withholds a field it reads ------------------------


@dataclass(frozen=True)
class Without:
    """What an invariant does where the engine does not report an observation field it reads
    (protocol v2 ``unobserved``; engines/observation_paths.py ``WITHHOLDABLE_PATHS``).

    ``how``: ``history`` (it judges from the monitor's own history named in ``note``, and compares
    the engine's field with it where the engine reports it: a lie is a violation),
    ``card data`` (it reads the card data instead), ``board`` (it reads what the board places:
    the cards Set or Summoned this turn), ``actions`` (it reads the actions offered instead),
    ``visible state`` (it works it out from fields every engine reports), or
    ``not evaluated`` (``note`` names the one check that is not made without the
    field; the checker lists it per board, the invariant's other checks go on)."""

    how: str
    note: str

    def describe(self) -> str:
        if self.how == "not evaluated":
            return f"not evaluated: {self.note}"
        return f"{self.how} instead: {self.note}"


WITHOUT_HOW = ("history", "card data", "board", "actions", "visible state", "not evaluated")


def by_history(note: str) -> Without:
    """Without the field the invariant judges from the monitor's history (`note`: which, and how)."""
    return Without("history", note)


def by_card_data(note: str) -> Without:
    """Without the field the invariant reads the card data instead."""
    return Without("card data", note)


def by_board(note: str) -> Without:
    """Without the field the invariant reads what the board places (the card facts of the run)."""
    return Without("board", note)


def by_visible(note: str) -> Without:
    """Without the field the invariant works it out from the duel's visible state."""
    return Without("visible state", note)


def by_actions(note: str) -> Without:
    """Without the field the invariant reads the actions the state offers instead."""
    return Without("actions", note)


def part_not_evaluated(part: str) -> Without:
    """Without the field this one check (`part`) is not made; the others are."""
    return Without("not evaluated", part)


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
    facts of the run. ``offered``: the action records the state before offered (all of them,
    as dicts), where the runner knows them (the explorer does; a recorded trace does not: None)."""

    __slots__ = ("before", "action", "events", "after", "_by_kind", "mon", "mon_after", "cards", "offered")

    def __init__(
        self,
        before: dict,
        action: dict,
        events: Sequence[Any],
        after: dict,
        mon: Any = None,
        cards: Any = None,
        mon_after: Any = None,
        offered: Sequence[dict] | None = None,
    ) -> None:
        self.offered = offered
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
    # The observation paths it needs (docs/protocol.md, path syntax ``players[].monsters[].modifiers``).
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
    # The observation paths it reads but can do without, each with what it does then
    # (:class:`Without`), sorted by path. Every path the library's invariants read is in ``reads``
    # or here (tests/test_withheld_fields.py traces the reads); docs/invariants.md lists both.
    fields: tuple[tuple[str, Without], ...] = ()
    # The rulesets it judges (docs/rulesets.md): under any other the checker reports it "not
    # judged" on the board, never a verdict. An invariant whose rule differs between rulesets
    # either reads ``cards.ruleset`` and branches, or names only the rulesets it judges.
    rulesets: frozenset[str] = frozenset(RULESETS)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "statement": self.statement,
            "rules": list(self.rules),
            "kind": self.kind,
            "family": self.family,
            "rulesets": [r for r in RULESETS if r in self.rulesets],
        }


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
    fields: dict[str, Without] | None = None,
    rulesets: Sequence[str] = RULESETS,
):
    """Register a check. One function, one ID, one statement, the rules it enforces; ``reads``:
    the observation paths it needs, ``fields``: those it can do without, and how (:class:`Without`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown invariant kind {kind!r}")
    if steps is not None and (kind != "transition" or not set(steps) <= STEPS):
        raise ValueError(f"steps= is for transition invariants, with step names of STEPS: {sorted(set(steps) - STEPS)}")
    if step_events and steps is None:
        raise ValueError("step_events= goes with steps=")
    if not rulesets or not set(rulesets) <= set(RULESETS):
        raise ValueError(f"{id}: rulesets= names rulesets of {RULESETS}, at least one")
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")
    for p, w in (fields or {}).items():
        if not isinstance(w, Without) or w.how not in WITHOUT_HOW:
            raise ValueError(f"{id}: fields[{p!r}] must say what the invariant does without it (a Without)")
        if reads is not None and p in reads:
            raise ValueError(f"{id}: {p!r} is both needed (reads) and optional (fields)")

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
            tuple(sorted((fields or {}).items())),
            frozenset(rulesets),
        )
        return fn

    return deco
