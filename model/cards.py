"""Cards are data: the card pool is loaded from TOML files in a small effect vocabulary.

A card is a name, a passcode, a kind and subtype, monster stats, its text, and two lists:
``effect`` (things that are *activated*: card activations, quick, ignition, trigger and flip
effects) and ``static`` (continuous effects that apply while the card is face-up).

Nothing here decides rules. The rules engine (:mod:`bpcheck.model.engine`) derives spell speed
and Damage-Step legality from these properties; the vocabulary is documented in docs/cards.md.
Each operation name must exist in :data:`bpcheck.model.ops.OPERATIONS` and each static name in
:data:`STATIC_KINDS`; unknown names are load errors, never ignored.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping

from bpcheck.errors import InputError

KINDS = {
    "monster": {"normal", "effect", "flip"},
    "token": {"token"},
    "spell": {"normal", "quick-play", "continuous", "equip", "field"},
    "trap": {"normal", "continuous", "counter"},
}
ATTRIBUTES = {"DARK", "LIGHT", "EARTH", "WATER", "FIRE", "WIND", "DIVINE"}
EFFECT_TYPES = {"activate", "quick", "ignition", "trigger", "flip"}

# "when" timings. Those naming a Damage-Step timing make an effect legal in the Damage Step
# by its own text (rule: DS-LEGAL-DAMAGE-TIMING).
WHEN_EVENT = {"attack_declared", "summoned", "trap_activated", "spell_activated"}
WHEN_DAMAGE_STEP = {
    "damage_step",  # the text names the Damage Step: up to and including damage calculation
    "before_damage_calculation",
    "during_damage_calculation",
    "after_damage_calculation",
    "destroyed_by_battle_sent_to_gy",
}
WHENS = WHEN_EVENT | WHEN_DAMAGE_STEP

CONDITIONS = {
    "self_attacked_in_attack_position",
    "self_was_attacked",
    "self_battling",
    "self_not_declared_attack",
    "opponent_monster_attacking",
    "own_light_monster_battles_monster",
    "own_free_monster_zones_4",
    "opponent_free_monster_zones_3",
    "battle_phase",
    "responding_to_opponent",
    "attacker_race_spellcaster",
    "opponent_summoned_atk_1500",
}

STATIC_KINDS = {
    "cannot_be_attacked",
    "unaffected_by_spells",
    "attack_each_monster",
    "attack_cost",
    "direct_attack",
    "must_attack",
    "destroy_if_face_up_defense",
    "modify_stats",
    "modify_atk",
    "cannot_attack",
    "negate_effects",
    "banish_instead_of_graveyard",
    "halve_attackers",
}
STATIC_TARGETS = {"self", "equipped", "attached", "all_monsters", "all_cards"}
# Statics that directly change ATK/DEF (rule: DS-LEGAL-STATS, Continuous Traps).
STAT_STATICS = {"modify_stats", "modify_atk", "halve_attackers"}

# Operations that directly change ATK/DEF when they resolve (rule: DS-LEGAL-STATS).
STAT_OPS = {"modify_atk", "modify_def", "halve_atk"}

TARGET_ZONES = {"monster", "spell_trap", "graveyard"}
SIDES = {"own", "opponent", "any"}


@dataclass(frozen=True, slots=True)
class TargetSpec:
    zone: str
    side: str
    count: int = 1
    min: int | None = None  # None: exactly `count`
    face: str | None = None  # "up" to require face-up
    kind: str | None = None  # graveyard: monster / spell
    race: str | None = None
    archetype: str | None = None  # graveyard: an archetype the card's name belongs to (e.g. "Dark World")
    attacker_only: bool = False
    effect_monster: bool = False
    can_flip_down: bool = False

    @property
    def minimum(self) -> int:
        return self.count if self.min is None else self.min


@dataclass(frozen=True, slots=True)
class Op:
    op: str
    args: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.args:
            if k == key:
                return v
        return default


@dataclass(frozen=True, slots=True)
class Effect:
    index: int
    type: str
    label: str
    when: str | None
    location: str  # field / hand / graveyard
    mandatory: bool
    once_per_turn: bool
    once_per_battle: bool
    conditions: tuple[str, ...]
    cost: tuple[Op, ...]
    targets: tuple[TargetSpec, ...]
    ops: tuple[Op, ...]

    @property
    def changes_stats_directly(self) -> bool:
        """True when resolving this effect directly changes ATK or DEF (rule: DS-LEGAL-STATS)."""
        return any(o.op in STAT_OPS for o in self.ops)

    @property
    def names_damage_step_timing(self) -> bool:
        """True when the effect's own text names a Damage-Step timing (DS-LEGAL-DAMAGE-TIMING)."""
        return self.when in WHEN_DAMAGE_STEP


@dataclass(frozen=True, slots=True)
class Static:
    apply: str
    to: str
    args: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.args:
            if k == key:
                return v
        return default


@dataclass(frozen=True, slots=True)
class Card:
    name: str
    passcode: str
    kind: str
    subtype: str
    text: str
    attribute: str | None = None
    race: str | None = None
    level: int | None = None
    atk: int | None = None
    def_: int | None = None
    effects: tuple[Effect, ...] = ()
    statics: tuple[Static, ...] = ()
    source: str = ""
    archetypes: tuple[str, ...] = ()  # archetypes named by the card (its name holds them, e.g. "Dark World")

    @property
    def is_monster(self) -> bool:
        return self.kind in ("monster", "token")

    @property
    def is_token(self) -> bool:
        return self.kind == "token"

    @property
    def is_effect_monster(self) -> bool:
        return self.kind == "monster" and self.subtype in ("effect", "flip")

    @property
    def is_spell_trap(self) -> bool:
        return self.kind in ("spell", "trap")

    def has_static(self, name: str) -> bool:
        return any(s.apply == name for s in self.statics)

    def static_changes_stats(self) -> bool:
        return any(s.apply in STAT_STATICS for s in self.statics)


class CardPool:
    """The cards known to a run, by exact name. Lookups of unknown names raise KeyError."""

    def __init__(self, cards: Iterable[Card]) -> None:
        self._cards: dict[str, Card] = {}
        for c in cards:
            self._cards[c.name] = c

    def __contains__(self, name: object) -> bool:
        return name in self._cards

    def __getitem__(self, name: str) -> Card:
        return self._cards[name]

    def __iter__(self):
        return iter(sorted(self._cards.values(), key=lambda c: c.name))

    def __len__(self) -> int:
        return len(self._cards)

    def names(self) -> list[str]:
        return sorted(self._cards)


# ---------------------------------------------------------------------------------------------
# Loading and validation


def _req(d: Mapping[str, Any], key: str, typ: type | tuple[type, ...], file: str, path: str) -> Any:
    if key not in d:
        raise InputError(file, f"{path}.{key}", "missing required field")
    v = d[key]
    if isinstance(v, bool) and typ is not bool and (typ is int or (isinstance(typ, tuple) and int in typ)):
        raise InputError(file, f"{path}.{key}", f"expected {_tname(typ)}, got boolean {v!r}")
    if not isinstance(v, typ):
        raise InputError(file, f"{path}.{key}", f"expected {_tname(typ)}, got {type(v).__name__} {v!r}")
    return v


def _opt(d: Mapping[str, Any], key: str, typ, default, file: str, path: str):
    if key not in d:
        return default
    return _req(d, key, typ, file, path)


def _tname(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(x.__name__ for x in t)
    return {"str": "string", "int": "integer", "bool": "boolean", "list": "array", "dict": "table"}.get(
        t.__name__, t.__name__
    )


def _check_keys(d: Mapping[str, Any], allowed: set[str], file: str, path: str) -> None:
    for k in d:
        if k not in allowed:
            raise InputError(file, f"{path}.{k}", f"unknown field (allowed: {', '.join(sorted(allowed))})")


def _freeze(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def _parse_op(d: Any, file: str, path: str) -> Op:
    from bpcheck.model.ops import OPERATIONS

    if not isinstance(d, dict):
        raise InputError(file, path, f"expected a table, got {type(d).__name__}")
    name = _req(d, "op", str, file, path)
    if name not in OPERATIONS:
        raise InputError(file, f"{path}.op", f"unknown operation {name!r} (known: {', '.join(sorted(OPERATIONS))})")
    spec = OPERATIONS[name]
    _check_keys(d, {"op"} | set(spec.params), file, path)
    return Op(name, tuple(sorted((k, _freeze(v)) for k, v in d.items() if k != "op")))


def _parse_target(d: Any, file: str, path: str) -> TargetSpec:
    if not isinstance(d, dict):
        raise InputError(file, path, f"expected a table, got {type(d).__name__}")
    _check_keys(
        d,
        {"zone", "side", "count", "min", "face", "kind", "race", "archetype", "attacker_only", "effect_monster", "can_flip_down"},
        file,
        path,
    )
    zone = _req(d, "zone", str, file, path)
    if zone not in TARGET_ZONES:
        raise InputError(file, f"{path}.zone", f"unknown zone {zone!r} (known: {', '.join(sorted(TARGET_ZONES))})")
    side = _req(d, "side", str, file, path)
    if side not in SIDES:
        raise InputError(file, f"{path}.side", f"unknown side {side!r} (known: {', '.join(sorted(SIDES))})")
    count = _opt(d, "count", int, 1, file, path)
    mn = _opt(d, "min", int, None, file, path)
    if count < 1 or (mn is not None and not 0 <= mn <= count):
        raise InputError(file, path, f"bad target count {count} / min {mn}")
    face = _opt(d, "face", str, None, file, path)
    if face not in (None, "up"):
        raise InputError(file, f"{path}.face", f"unknown face {face!r} (known: up)")
    return TargetSpec(
        zone=zone,
        side=side,
        count=count,
        min=mn,
        face=face,
        kind=_opt(d, "kind", str, None, file, path),
        race=_opt(d, "race", str, None, file, path),
        archetype=_opt(d, "archetype", str, None, file, path),
        attacker_only=_opt(d, "attacker_only", bool, False, file, path),
        effect_monster=_opt(d, "effect_monster", bool, False, file, path),
        can_flip_down=_opt(d, "can_flip_down", bool, False, file, path),
    )


def _parse_effect(d: Any, index: int, card_kind: str, file: str, path: str) -> Effect:
    if not isinstance(d, dict):
        raise InputError(file, path, f"expected a table, got {type(d).__name__}")
    _check_keys(
        d,
        {"type", "label", "when", "location", "mandatory", "once_per_turn", "once_per_battle", "conditions", "cost", "targets", "ops"},
        file,
        path,
    )
    typ = _req(d, "type", str, file, path)
    if typ not in EFFECT_TYPES:
        raise InputError(file, f"{path}.type", f"unknown effect type {typ!r} (known: {', '.join(sorted(EFFECT_TYPES))})")
    if typ == "activate" and card_kind not in ("spell", "trap"):
        raise InputError(file, f"{path}.type", "only Spell and Trap cards have a card activation ('activate')")
    if typ != "activate" and card_kind in ("spell", "trap"):
        raise InputError(file, f"{path}.type", f"a {card_kind} card's effects are activated with type 'activate'")
    when = _opt(d, "when", str, None, file, path)
    if when is not None and when not in WHENS:
        raise InputError(file, f"{path}.when", f"unknown timing {when!r} (known: {', '.join(sorted(WHENS))})")
    if typ == "trigger" and when is None:
        raise InputError(file, f"{path}.when", "a trigger effect needs a 'when'")
    location = _opt(d, "location", str, "field", file, path)
    if location not in ("field", "hand", "graveyard"):
        raise InputError(file, f"{path}.location", f"unknown location {location!r} (known: field, hand, graveyard)")
    conds = _opt(d, "conditions", list, [], file, path)
    for i, c in enumerate(conds):
        if c not in CONDITIONS:
            raise InputError(file, f"{path}.conditions[{i}]", f"unknown condition {c!r} (known: {', '.join(sorted(CONDITIONS))})")
    cost = tuple(_parse_op(o, file, f"{path}.cost[{i}]") for i, o in enumerate(_opt(d, "cost", list, [], file, path)))
    targets = tuple(
        _parse_target(t, file, f"{path}.targets[{i}]") for i, t in enumerate(_opt(d, "targets", list, [], file, path))
    )
    ops = tuple(_parse_op(o, file, f"{path}.ops[{i}]") for i, o in enumerate(_req(d, "ops", list, file, path)))
    return Effect(
        index=index,
        type=typ,
        label=_opt(d, "label", str, "", file, path),
        when=when,
        location=location,
        mandatory=_opt(d, "mandatory", bool, typ == "flip", file, path),
        once_per_turn=_opt(d, "once_per_turn", bool, False, file, path),
        once_per_battle=_opt(d, "once_per_battle", bool, False, file, path),
        conditions=tuple(conds),
        cost=cost,
        targets=targets,
        ops=ops,
    )


def _parse_static(d: Any, file: str, path: str) -> Static:
    if not isinstance(d, dict):
        raise InputError(file, path, f"expected a table, got {type(d).__name__}")
    name = _req(d, "apply", str, file, path)
    if name not in STATIC_KINDS:
        raise InputError(file, f"{path}.apply", f"unknown static effect {name!r} (known: {', '.join(sorted(STATIC_KINDS))})")
    to = _req(d, "to", str, file, path)
    if to not in STATIC_TARGETS:
        raise InputError(file, f"{path}.to", f"unknown static target {to!r} (known: {', '.join(sorted(STATIC_TARGETS))})")
    _check_keys(d, {"apply", "to", "filter", "amount", "per_face_up_monster_you_control", "while_field_spell"}, file, path)
    return Static(name, to, tuple(sorted((k, _freeze(v)) for k, v in d.items() if k not in ("apply", "to"))))


def parse_card(d: Any, file: str, path: str) -> Card:
    if not isinstance(d, dict):
        raise InputError(file, path, f"expected a table, got {type(d).__name__}")
    _check_keys(
        d,
        {"name", "passcode", "kind", "subtype", "text", "attribute", "race", "level", "atk", "def", "archetypes", "effect", "static"},
        file,
        path,
    )
    name = _req(d, "name", str, file, path)
    passcode = _req(d, "passcode", str, file, path)
    if len(passcode) != 8 or not passcode.isdigit():
        raise InputError(file, f"{path}.passcode", f"a passcode is the 8-digit number printed on the card, got {passcode!r}")
    kind = _req(d, "kind", str, file, path)
    if kind not in KINDS:
        raise InputError(file, f"{path}.kind", f"unknown kind {kind!r} (known: {', '.join(sorted(KINDS))})")
    subtype = _req(d, "subtype", str, file, path)
    if subtype not in KINDS[kind]:
        raise InputError(file, f"{path}.subtype", f"unknown {kind} subtype {subtype!r} (known: {', '.join(sorted(KINDS[kind]))})")
    text = _req(d, "text", str, file, path)
    attribute = race = None
    level = atk = def_ = None
    if kind in ("monster", "token"):
        attribute = _req(d, "attribute", str, file, path)
        if attribute not in ATTRIBUTES:
            raise InputError(file, f"{path}.attribute", f"unknown attribute {attribute!r}")
        race = _req(d, "race", str, file, path)
        level = _req(d, "level", int, file, path)
        atk = _req(d, "atk", int, file, path)
        def_ = _req(d, "def", int, file, path)
        for key, v in (("level", level), ("atk", atk), ("def", def_)):
            if v < 0:
                raise InputError(file, f"{path}.{key}", f"must not be negative, got {v}")
    else:
        for key in ("attribute", "race", "level", "atk", "def"):
            if key in d:
                raise InputError(file, f"{path}.{key}", f"a {kind} card has no {key}")
    effects = tuple(
        _parse_effect(e, i, kind, file, f"{path}.effect[{i}]") for i, e in enumerate(_opt(d, "effect", list, [], file, path))
    )
    statics = tuple(_parse_static(s, file, f"{path}.static[{i}]") for i, s in enumerate(_opt(d, "static", list, [], file, path)))
    if kind in ("spell", "trap") and not any(e.type == "activate" for e in effects):
        raise InputError(file, f"{path}.effect", f"a {kind} card needs an 'activate' effect (its card activation)")
    archetypes = _opt(d, "archetypes", list, [], file, path)
    for i, a in enumerate(archetypes):
        if not isinstance(a, str) or not a:
            raise InputError(file, f"{path}.archetypes[{i}]", f"expected an archetype name, got {a!r}")
    return Card(name, passcode, kind, subtype, text, attribute, race, level, atk, def_, effects, statics, file, tuple(archetypes))


def load_card_file(path: Path | str, display: str | None = None) -> list[Card]:
    display = display or str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(display, "", f"cannot read file: {e.strerror}") from None
    return parse_card_document(raw.decode("utf-8", errors="strict"), display)


def parse_card_document(text: str, display: str) -> list[Card]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(display, "", f"malformed TOML: {e}") from None
    _check_keys(data, {"card"}, display, "")
    cards = _req(data, "card", list, display, "")
    return [parse_card(c, display, f"card[{i}]") for i, c in enumerate(cards)]


_BUILTIN: CardPool | None = None


def builtin_pool() -> CardPool:
    """The pool shipped with bpcheck (model/cards/*.toml), loaded once and validated."""
    global _BUILTIN
    if _BUILTIN is None:
        cards: list[Card] = []
        seen: dict[str, str] = {}
        codes: dict[str, str] = {}
        folder = resources.files("bpcheck.model") / "cards"
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if not entry.name.endswith(".toml"):
                continue
            display = f"cards/{entry.name}"
            for c in parse_card_document(entry.read_text(encoding="utf-8"), display):
                if c.name in seen:
                    raise InputError(display, c.name, f"card defined twice (also in {seen[c.name]})")
                if c.passcode in codes:
                    raise InputError(display, c.name, f"passcode {c.passcode} already used by {codes[c.passcode]!r}")
                seen[c.name] = display
                codes[c.passcode] = c.name
                cards.append(c)
        _BUILTIN = CardPool(cards)
    return _BUILTIN


def pool_with(extra: Iterable[Card]) -> CardPool:
    base = list(builtin_pool())
    names = {c.name for c in base}
    out = base[:]
    for c in extra:
        if c.name in names:
            raise InputError(c.source, c.name, "card already defined in the built-in pool")
        out.append(c)
    return CardPool(out)


def card_summary(c: Card) -> dict[str, Any]:
    """A JSON-serialisable description, used by `bpcheck cards`."""
    d: dict[str, Any] = {"name": c.name, "passcode": c.passcode, "kind": c.kind, "subtype": c.subtype}
    if c.is_monster:
        d.update(attribute=c.attribute, race=c.race, level=c.level, atk=c.atk, def_=c.def_)
    d["text"] = c.text
    d["effects"] = [
        {
            "type": e.type,
            **({"label": e.label} if e.label else {}),
            **({"when": e.when} if e.when else {}),
            "location": e.location,
            "mandatory": e.mandatory,
            "ops": [o.op for o in e.ops],
        }
        for e in c.effects
    ]
    d["static"] = [s.apply for s in c.statics]
    return d


__all__ = ["Card", "CardPool", "Effect", "Op", "Static", "TargetSpec", "builtin_pool", "load_card_file", "pool_with"]
_ = field  # dataclasses.field kept for subclasses of the model
