"""The Battle Phase state: immutable, hashable and canonical.

Every container is a tuple or frozenset of frozen dataclasses, so a State can be hashed, used as
a dict key and compared. Card instances carry a ``uid`` given by the board loader (and by the
engine for tokens) so that copies of one card stay distinguishable; a card that leaves the field
keeps its uid but loses all field bookkeeping (it is a new object to the rules).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from itertools import repeat
from operator import attrgetter
from types import MemberDescriptorType
from typing import Any, Iterator

_new = object.__new__
_set_slot = MemberDescriptorType.__set__  # (slot descriptor, object, value): sets one slot
# class -> (slot descriptors, a getter of all their values, setters by name) for the fast
# replace below
_LAYOUT: dict[type, tuple | None] = {}


def _layout(cls: type) -> tuple | None:
    """How :func:`replace` copies a frozen slotted dataclass directly: the slot descriptors of its
    fields in order, a getter of all their values, and each field's setter by name. Only for
    classes whose ``__init__`` does nothing but assign: no ``__post_init__``, every field set by
    ``__init__``."""
    fs = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or not all(f.init for f in fs) or "__slots__" not in cls.__dict__:
        return None
    names = tuple(f.name for f in fs)
    slots = tuple(cls.__dict__[n] for n in names)  # the member descriptors of the slots
    get = attrgetter(*names) if len(names) > 1 else (lambda o, _g=attrgetter(names[0]): (_g(o),))
    return slots, get, {n: d.__set__ for n, d in zip(names, slots)}


def replace(obj: Any, /, **changes: Any) -> Any:
    """``dataclasses.replace`` for the model's frozen slotted dataclasses, without its generic
    machinery (measured: 2-3x faster; it was ~10 % of the explorer's time, issue 12).

    Same result: a new object of the same class with the same field values but `changes`; the
    classes it copies directly have no ``__post_init__`` and no ``init=False`` field, so their
    ``__init__`` does nothing but assign. Anything else goes to ``dataclasses.replace``. The
    fields are copied slot by slot in one ``map`` over the slot descriptors (the iteration in C:
    17 % cheaper than a Python loop of ``object.__setattr__``, docs/performance.md)."""
    cls = obj.__class__
    try:
        slots, get, setters = _LAYOUT[cls]  # type: ignore[misc]
    except KeyError:
        _LAYOUT[cls] = _layout(cls)
        return replace(obj, **changes)
    except TypeError:  # None: not a class we copy directly
        return dataclasses.replace(obj, **changes)
    new = _new(cls)
    any(map(_set_slot, slots, repeat(new), get(obj)))  # each returns None: any() runs them all
    for k, v in changes.items():
        try:
            put = setters[k]
        except KeyError:
            raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - setters.keys())[0]!r}") from None
        put(new, v)
    return new


class Step(str, Enum):
    """Phase and step of the turn. Damage-Step members follow the TCG order of 002 (rule: DS-SUBSTEPS)."""

    MAIN1 = "main1"
    BP_START = "battle_start_step"
    BP_BATTLE = "battle_step"
    DS_START = "damage_step_start"
    DS_FLIP = "damage_step_flip"
    DS_BEFORE_CALC = "damage_step_before_calculation"
    DS_DURING_CALC = "damage_step_during_calculation"
    DS_AFTER_CALC_1 = "damage_step_after_calculation_1"
    DS_AFTER_CALC_2 = "damage_step_after_calculation_2"
    DS_END = "damage_step_end"
    BP_END = "battle_end_step"
    MAIN2 = "main2"
    END = "end_phase"

    @property
    def phase(self) -> str:
        if self is Step.MAIN1:
            return "main1"
        if self is Step.MAIN2:
            return "main2"
        if self is Step.END:
            return "end"
        return "battle"

    @property
    def in_damage_step(self) -> bool:
        return self.value.startswith("damage_step")


DAMAGE_STEPS = (
    Step.DS_START,
    Step.DS_FLIP,
    Step.DS_BEFORE_CALC,
    Step.DS_DURING_CALC,
    Step.DS_AFTER_CALC_1,
    Step.DS_AFTER_CALC_2,
    Step.DS_END,
)


class Pos(str, Enum):
    ATK = "attack"  # face-up Attack Position
    DEF = "defense"  # face-up Defense Position
    FACEDOWN = "facedown"  # face-down Defense Position

    @property
    def face_up(self) -> bool:
        return self is not Pos.FACEDOWN


@dataclass(frozen=True, slots=True)
class Mod:
    """A lingering ATK/DEF modifier with its source and expiry.

    ``kind`` is "add" (amount added), "halve" or "set_original" (the original value becomes
    ``amount``: "Curse of Anubis", DEF only). ``until`` is "end_of_turn",
    "end_of_damage_step", "damage_calculation" or "while_source_on_field".
    """

    stat: str
    kind: str
    amount: int
    source: str
    source_uid: int
    until: str


@dataclass(frozen=True, slots=True)
class CardRef:
    """A card outside the field (hand, Graveyard, banished, Deck)."""

    uid: int
    card: str
    owner: int


@dataclass(frozen=True, slots=True)
class Monster:
    """A monster in a Monster Zone, with the field bookkeeping the Battle Phase needs."""

    uid: int
    card: str
    owner: int
    pos: Pos
    summoned_this_turn: bool = False
    set_this_turn: bool = False
    mods: tuple[Mod, ...] = ()
    # Attack bookkeeping (ATK-ONCE, ATK-EACH-MONSTER, RPL-COUNTS).
    attacks_declared: int = 0
    declared_at: frozenset[int] = frozenset()
    declared_direct: bool = False
    cannot_attack_this_turn: bool = False  # a stopped attack, Chaos Sorcerer's effect, ...
    extra_attacks: int = 0  # attacks it may declare this turn beyond one, by a resolved effect (DS-EXTRA-ATTACK)
    position_changed: bool = False  # its battle position was changed manually this turn (MP2-POSITION)
    # Damage-Step bookkeeping (DS-DESTROYED-MARK, DS-FLIP-EFFECT-TIMING).
    destroyed_by_battle: bool = False
    flipped_by_battle: bool = False
    # Decided at damage calculation: banished, not sent to the Graveyard, when destroyed-by-battle
    # monsters leave the field ("Dark Magician of Chaos" destroyed it: DS-BANISH-BATTLE).
    banish_when_sent: bool = False
    # Decided at damage calculation: its effects are negated, on the field and in the Graveyard it
    # is sent to ("Dark Ruler Ha Des": destroyed by battle with its controller's Fiend, DS-NEGATE-BATTLE).
    battle_negated: bool = False
    effects_used: frozenset[int] = frozenset()  # once-per-turn effect indexes used this turn
    # Its "Once per turn, this card cannot be destroyed by battle" was applied this turn (Gyroid:
    # its controller chose to apply it at damage calculation, DS-CALC-PROTECT-CHOICE).
    battle_protection_used: bool = False


@dataclass(frozen=True, slots=True)
class SpellTrap:
    """A card in a Spell & Trap Zone or the Field Zone."""

    uid: int
    card: str
    owner: int
    face_up: bool
    set_this_turn: bool = False
    equipped_to: int | None = None  # Equip Spells (CARD-CONT-TARGET)
    attached_to: int | None = None  # continuous Traps that keep their target (Fiendish Chain, ...)
    linked_monster: int | None = None  # Call of the Haunted's summoned monster
    activating: bool = False  # face-up on a chain, not resolved yet


@dataclass(frozen=True, slots=True)
class Player:
    lp: int
    monsters: tuple[Monster | None, ...] = (None,) * 5
    spells: tuple[SpellTrap | None, ...] = (None,) * 5
    field_zone: SpellTrap | None = None
    hand: tuple[CardRef, ...] = ()
    graveyard: tuple[CardRef, ...] = ()
    banished: tuple[CardRef, ...] = ()
    deck: tuple[CardRef, ...] = ()


class Players(tuple):
    """The two players of a :class:`State`: to everyone a plain pair (``==``, ``hash``, indexing
    and iteration are the tuple's), with a memo of what the rules derive from the two players
    alone: the continuous effects that apply, current ATK/DEF, the players part of the
    observation (model/engine.py, ``Rules._memo``). A transition that leaves both players as they
    were (a pass, a step change: a third to a half of all transitions) keeps the same object, so
    the next state reuses that work. The memo is never compared, hashed, copied or pickled.
    """

    # No __slots__: an instance gets a __dict__ for the memo when it is first used.
    _m = None  # (rules object, memo dict)

    def __reduce__(self):
        return (Players, (tuple(self),))


@dataclass(frozen=True, slots=True)
class Attack:
    """The attack in progress (ATK-DECLARE, RPL-*)."""

    attacker: int
    target: int | None  # None: direct attack
    potential_targets: frozenset[int]  # attackable opponent monsters when declared (RPL-TRIGGER)
    direct_was_legal: bool  # a direct attack was legal when declared
    replay_pending: bool = False
    battle_ended: bool = False  # a battler left the field in the Damage Step (DS-BATTLER-LEAVES)
    target_was_facedown: bool = False
    calculated: bool = False  # damage calculation done
    # Optional protections from destruction by battle chosen at damage calculation, in this
    # battle: (monster uid, applied) (DS-CALC-PROTECT-CHOICE).
    protections: tuple[tuple[int, bool], ...] = ()


@dataclass(frozen=True, slots=True)
class ChainLink:
    card_uid: int
    card: str
    effect: int
    controller: int
    speed: int
    targets: tuple[int, ...] = ()
    negated: bool = False
    is_card_activation: bool = False  # a Spell/Trap Card activation (for Counter Traps)
    card_kind: str = ""
    cost_info: tuple[tuple[str, int], ...] = ()  # values fixed by costs (tributed ATK, ...)
    # its effect (not its activation) was negated: it resolves doing nothing ("Skull Meister",
    # rule: DS-LEGAL-NEGATE-EFFECT)
    effect_negated: bool = False


@dataclass(frozen=True, slots=True)
class Lingering:
    """A player-wide lingering effect (Waboku, Kuriboh): what, for whom, until when."""

    what: str  # "no_battle_damage" / "battle_indestructible" / "end_battle_phase" (until "end_of_chain")
    player: int
    source: str
    until: str


@dataclass(frozen=True, slots=True)
class Trigger:
    """A triggered effect waiting to be put on a chain (DS-LEGAL-MANDATORY)."""

    player: int
    card_uid: int
    card: str
    effect: int
    mandatory: bool


@dataclass(frozen=True, slots=True)
class Choice:
    """A choice an effect asks for during resolution, or (``link`` None, kind
    "battle_protection", ``op_index`` the monster's uid) whether to apply an optional protection
    from destruction by battle at damage calculation (DS-CALC-PROTECT-CHOICE)."""

    player: int
    kind: str
    options: tuple[tuple[str, int], ...]  # (label, value)
    link: ChainLink | None
    op_index: int


@dataclass(frozen=True, slots=True)
class State:
    turn: int
    turn_player: int
    step: Step
    players: tuple[Player, Player]
    priority: int = 0
    passes: int = 0
    chain: tuple[ChainLink, ...] = ()
    attack: Attack | None = None
    # "When X" events still open for responses (WIN-ATTACK-DECL, WIN-EVENT). Each is a tuple.
    fresh: tuple[tuple, ...] = ()
    lingering: tuple[Lingering, ...] = ()
    triggers: tuple[Trigger, ...] = ()
    choice: Choice | None = None
    # Cards whose one-chain timing is used up in this step (DS-DURING-CALC-ONE-CHAIN).
    chain_count_in_step: int = 0
    winner: int | None = None
    over: bool = False
    next_uid: int = 1000

    # -- helpers ---------------------------------------------------------------------------

    def player(self, i: int) -> Player:
        return self.players[i]

    def with_player(self, i: int, p: Player) -> "State":
        ps = self.players
        return replace(self, players=Players((p, ps[1]) if i == 0 else (ps[0], p)))

    def monsters(self) -> Iterator[tuple[int, int, Monster]]:
        """(zone-side player, zone index, monster) for every monster on the field."""
        for side in (0, 1):
            i = 0
            for m in self.players[side].monsters:
                if m is not None:
                    yield side, i, m
                i += 1

    def spell_traps(self) -> Iterator[tuple[int, int, SpellTrap]]:
        """(side, zone index, card); the Field Zone is index 5."""
        for side in (0, 1):
            p = self.players[side]
            i = 0
            for s in p.spells:
                if s is not None:
                    yield side, i, s
                i += 1
            if p.field_zone is not None:
                yield side, 5, p.field_zone

    def find_monster(self, uid: int) -> tuple[int, int, Monster] | None:
        for side in (0, 1):
            i = 0
            for m in self.players[side].monsters:
                if m is not None and m.uid == uid:
                    return side, i, m
                i += 1
        return None

    def find_spell(self, uid: int) -> tuple[int, int, SpellTrap] | None:
        for side in (0, 1):
            p = self.players[side]
            i = 0
            for s in p.spells:
                if s is not None and s.uid == uid:
                    return side, i, s
                i += 1
            s = p.field_zone
            if s is not None and s.uid == uid:
                return side, 5, s
        return None

    @property
    def opponent(self) -> int:
        return 1 - self.turn_player

