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

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping

from bpcheck.errors import InputError
from bpcheck.model import cdb
from bpcheck.model.fields import check_name
from bpcheck.model.ops import OPERATIONS
from bpcheck.model.reading import parse_toml_text, read_text

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
# "own_monster_destroyed_to_gy": "When a face-up monster you control is destroyed and sent to the
# Graveyard" ("Chthonian Blast"; right after it, or after the chain it happened in)
WHEN_EVENT = {"attack_declared", "summoned", "trap_activated", "spell_activated", "opponent_graveyard_effect_activated", "own_monster_destroyed_to_gy"}
# Timings that answer the activation on top of the chain directly ("when a Spell Card is
# activated", "When a card effect is activated in your opponent's GY"): an effect with one of them
# must be activated directly in response to what it answers (rule: DS-LEGAL-NEGATE-EFFECT).
WHEN_RESPONSE = {"trap_activated", "spell_activated", "opponent_graveyard_effect_activated"}
WHEN_DAMAGE_STEP = {
    "damage_step",  # the text names the Damage Step: up to and including damage calculation
    "start_of_damage_step",  # a trigger "at the start of the Damage Step" (rule: DS-START-TRIGGERS)
    # "when you take damage" (battle or effect damage): the open state right after it; legal in the
    # Damage Step as a timing the text names (rule: DS-DAMAGE-RESPONSE)
    "damage_taken",
    "before_damage_calculation",
    "during_damage_calculation",
    "after_damage_calculation",
    "destroyed_by_battle_sent_to_gy",
    # triggers of a monster that destroyed an opponent's monster by battle, at the end of the Damage
    # Step (rule: DS-DESTROYS-BY-BATTLE): "If this card destroys ... by battle" (the destroyed
    # monster left the field by battle) and "... and sends it to the Graveyard" (this card survived
    # and the destroyed monster is in the Graveyard as a monster)
    "destroys_by_battle",
    "destroys_by_battle_sent_to_gy",
    # "If this card is destroyed by battle" (no Graveyard named): at the end of the Damage Step, if
    # it left the field by battle to a place of public knowledge (the Graveyard, or banished by
    # "Macro Cosmos"), wherever it went (rule: DS-DESTROYED-BY-BATTLE)
    "destroyed_by_battle",
    # "If this card is destroyed" (in general): by battle, at the end of the Damage Step as
    # destroyed_by_battle; by a card effect, once the Chain that destroyed it has resolved
    # (rule: DS-DESTROYED-IN-GENERAL, "Warm Worm")
    "destroyed",
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
    "self_face_up_to_resolve",
    "opponent_battle_phase",
    "self_attacks_face_down_defense",
    "self_attacks_face_up_defense",
    # "If this attacking card destroys an opponent's monster by battle": this card is the attacker
    # and the attack target is marked destroyed by battle (after damage calculation (1): rule
    # DS-EXTRA-ATTACK)
    "self_attacking_destroys_by_battle",
    # "When your opponent Special Summons a monster": a monster the opponent just Summoned (every
    # Summon of the Battle Phase is a Special Summon) is still on the field ("Naturia Horneedle";
    # never in the Damage Step: rule DS-OPPONENT-SUMMON)
    "opponent_summoned",
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
    # "If it would be destroyed by battle, destroy this card instead." (an Equip Card: Mirror of
    # Yata), done when destroyed-by-battle monsters are sent to the Graveyard (rule: DS-INSTEAD)
    "destroy_self_instead_of_battle",
    # "Once per turn, this card cannot be destroyed by battle." (Gyroid): its controller chooses to
    # apply it or not at damage calculation (rule: DS-CALC-PROTECT-CHOICE)
    "battle_indestructible_once_per_turn",
    # "When an Effect Monster's effect or a Spell/Trap Card is activated, destroy this face-up card
    # on the field." (Scrap Shark): destroyed by its effect at once, even if already destroyed by
    # battle (rule: DS-SELF-DESTROY-SCRAP-SHARK)
    "destroy_self_on_activation",
    # "... gains/loses N ATK during the Damage Step only" when this card attacks / is attacked by
    # an opponent's monster (Steamroid): applied from the start of the Damage Step to its end
    # (rule: DS-START-CONT)
    "damage_step_atk",
    # "Halve the ATK and DEF of any monster that battles with this card" (Gaia Plate the Earth
    # Giant): applied at damage calculation only (rule: DS-CALC-CONT)
    "halve_battler_at_calculation",
    # "Your opponent takes any battle damage you would have taken from battles involving this
    # card instead." (Amazoness Swords Woman), applied as battle damage is inflicted (rule:
    # DS-DAMAGE-CONT)
    "battle_damage_to_opponent",
    # "If this card destroys an opponent's monster by battle, ...: Banish that opponent's monster"
    # (Dark Magician of Chaos): decided at damage calculation, done when destroyed-by-battle
    # monsters leave the field (rule: DS-BANISH-BATTLE)
    "banish_destroyed_by_battle",
    # "If this face-up card would leave the field, banish it instead." (Dark Magician of Chaos,
    # Exodius the Ultimate Forbidden Lord): it changes where the card goes, so it still applies
    # to the card destroyed by battle (rule: DS-BANISH-BATTLE)
    "banish_self_leaving_field",
    # "Negate the effects of monsters destroyed by battle with Fiend-Type monsters you control."
    # (Dark Ruler Ha Des): decided at damage calculation (rule: DS-NEGATE-BATTLE)
    "negate_destroyed_by_own_fiends",
}
STATIC_TARGETS = {"self", "equipped", "attached", "all_monsters", "all_cards"}
# Statics that directly change ATK/DEF (rule: DS-LEGAL-STATS, Continuous Traps).
STAT_STATICS = {"modify_stats", "modify_atk", "halve_attackers"}

# Operations that directly change ATK/DEF when they resolve (rule: DS-LEGAL-STATS); an original
# DEF that "becomes" a value ("Curse of Anubis") is one.
STAT_OPS = {"modify_atk", "modify_def", "halve_atk", "set_original_def"}

TARGET_ZONES = {"monster", "spell_trap", "graveyard"}
MAX_TARGETS = 5  # cards one target list may name (more would only blow up the choices)
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


def choice_options(op: Op) -> list[tuple[str, tuple[Op, ...]]]:
    """The (label, operations) of each option of a ``choose_one`` operation, in order."""
    return [(dict(o)["label"], dict(o)["ops"]) for o in op.get("options", ())]


def _op_changes_stats(o: Op) -> bool:
    if o.op == "choose_one":  # rule: DS-LEGAL-STATS (one that might not alter ATK/DEF does not count)
        return all(any(_op_changes_stats(x) for x in ops) for _label, ops in choice_options(o))
    return o.op in STAT_OPS


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
        """True when resolving this effect directly changes ATK or DEF (rule: DS-LEGAL-STATS).
        An effect that might not change them when it resolves does not: a ``choose_one`` counts
        only if every option changes ATK/DEF ("Half or Nothing" does not)."""
        return any(_op_changes_stats(o) for o in self.ops)

    @property
    def negates_activation(self) -> bool:
        """True when resolving this effect negates an activation (rule: DS-LEGAL-NEGATE)."""
        return any(o.op == "negate_activation" for o in self.ops)

    @property
    def negates_effect_in_response(self) -> bool:
        """True when resolving this effect negates the activated effect it answers directly, not
        its activation ("Skull Meister": "negate that effect"; rule: DS-LEGAL-NEGATE-EFFECT)."""
        return self.when in WHEN_RESPONSE and any(o.op == "negate_effect" for o in self.ops)

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
    # A card of a card database (``--cards-db``, docs/boards.md) that is not in the pool: its facts
    # are its ``datas`` row (``data``, a :class:`bpcheck.model.cdb.Card`), its effects are not
    # modelled. ``effects_known`` is True only where the row itself says the card has no effects
    # (a plain Normal Monster); the reference model refuses a board holding any other such card.
    effects_known: bool = True
    data: Any = None

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

    @property
    def from_database(self) -> bool:
        """A card of a card database, not of the pool (its row is ``data``)."""
        return self.data is not None

    @property
    def frame(self) -> str:
        """The monster frame: the database's ('Xyz', 'Link', 'Fusion', ...) or the pool subtype."""
        return self.data.subtype if self.data is not None else self.subtype

    @property
    def is_extra_deck(self) -> bool:
        """A Fusion, Synchro, Xyz or Link monster (it lives in the Extra Deck)."""
        return self.data is not None and self.data.is_extra_deck

    def has_type(self, bit: int) -> bool:
        """A database card's type bit (``bpcheck.model.cdb.TYPE_*``); False for a pool card."""
        return self.data is not None and bool(self.data.type & bit)

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


def _parse_op(d: Any, file: str, path: str, cost: bool = False) -> Op:
    if not isinstance(d, dict):
        raise InputError(file, path, f"expected a table, got {_tname(type(d))}")
    name = _req(d, "op", str, file, path)
    if name not in OPERATIONS:
        raise InputError(file, f"{path}.op", f"unknown operation {name!r} (known: {', '.join(sorted(OPERATIONS))})")
    spec = OPERATIONS[name]
    if cost and spec.run is not None:
        costs = sorted(n for n, o in OPERATIONS.items() if o.run is None)
        raise InputError(file, f"{path}.op", f"{name!r} is not a cost (costs: {', '.join(costs)})")
    if not cost and spec.run is None:
        raise InputError(file, f"{path}.op", f"{name!r} is a cost: list it under 'cost', not 'ops'")
    _check_keys(d, {"op"} | set(spec.params), file, path)
    args = _check_params(name, d, file, path)
    return Op(name, tuple(sorted((k, _freeze(v)) for k, v in args.items())))


# -- values of operation and static parameters (the one card-definition validator) ----------------
# Each parameter an operation or a static accepts has a checker here; a test keeps this table and
# model/ops.py's OPERATIONS in step. A checker returns the value or raises InputError naming it.

SELECTORS = {
    "target",
    "self",
    "attacker",
    "opponent_attacker",
    "own_battling_monster",
    "opponent_attack_position_monsters",
    "all_monsters",
    "summoned_opponent_monsters_atk_1500",
    "summoned_opponent_monsters",  # "the Special Summoned monster": those the opponent just Summoned, still on the field
    "destroyer",  # "the monster that destroyed it": the other monster of this card's battle, still on the field
    "opponent_face_up_monsters",
    "attack_target",
    "face_up_effect_monsters",  # "all Effect Monsters on the field" (face-up: a face-down one shows no kind)
}
AMOUNT_NAMES = {"attacker_atk", "target_atk", "opposing_battler_atk"}
MOD_UNTIL = {"end_of_turn", "end_of_battle_phase", "end_of_damage_step", "damage_calculation", "while_source_on_field"}
LINGERING_UNTIL = {"end_of_turn", "end_of_damage_step"}
CONTROL_UNTIL = {"end_phase", "end_of_turn"}
POSITIONS = {"attack", "defense", "facedown"}
# The official monster Types, RACE_WARRIOR .. RACE_ILLUSION of EDOPro's
# /work/shared/ocgcore/scripts/constant.lua, as printed on cards.
RACES = {
    "Warrior", "Spellcaster", "Fairy", "Fiend", "Zombie", "Machine", "Aqua", "Pyro", "Rock",
    "Winged Beast", "Plant", "Insect", "Thunder", "Dragon", "Beast", "Beast-Warrior", "Dinosaur",
    "Fish", "Sea Serpent", "Reptile", "Psychic", "Divine-Beast", "Creator God", "Wyrm", "Cyberse",
    "Illusion",
}  # fmt: skip
MAX_STAT = 1_000_000  # ATK, DEF, LP amounts: far above any printed value, far below overflow


def _enum(values: set[str], what: str):
    def check(v, file, where):
        if not isinstance(v, str):
            raise InputError(file, where, f"expected a string ({what}: {', '.join(sorted(values))}), got {_tname(type(v))} {v!r}")
        if v not in values:
            raise InputError(file, where, f"unknown {what} {v!r} (known: {', '.join(sorted(values))})")
        return v

    return check


def _int_range(lo: int, hi: int):
    def check(v, file, where):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InputError(file, where, f"expected an integer, got {_tname(type(v))} {v!r}")
        if not lo <= v <= hi:
            raise InputError(file, where, f"must be from {lo} to {hi}, got {v}")
        return v

    return check


def _flag(v, file, where):
    if not isinstance(v, bool):
        raise InputError(file, where, f"expected a boolean, got {_tname(type(v))} {v!r}")
    return v


def _archetype(v, file, where):
    if not isinstance(v, str) or not v:
        raise InputError(file, where, f"expected an archetype name (a non-empty string), got {_tname(type(v))} {v!r}")
    return v


def _amount_of(names: set[str], lo: int, hi: int):
    ints = _int_range(lo, hi)

    def check(v, file, where):
        if isinstance(v, str):
            if v not in names:
                raise InputError(file, where, f"unknown amount {v!r} (an integer or one of: {', '.join(sorted(names))})")
            return v
        if isinstance(v, bool) or not isinstance(v, int):
            raise InputError(file, where, f"expected an integer or one of {', '.join(sorted(names))}, got {_tname(type(v))} {v!r}")
        return ints(v, file, where)

    return check


def _card_name(v, file, where):
    return check_name(v, file, where, "card name")


def _race(v, file, where):
    if not isinstance(v, str):
        raise InputError(file, where, f"expected a Type (race) name, got {_tname(type(v))} {v!r}")
    if v not in RACES:
        raise InputError(file, where, f"unknown Type (race) {v!r} (known: {', '.join(sorted(RACES))})")
    return v


def _filter(v, file, where):
    if not isinstance(v, dict):
        raise InputError(file, where, f"expected a table (race, attribute, min_level, max_atk), got {_tname(type(v))} {v!r}")
    _check_keys(v, {"race", "attribute", "min_level", "max_atk"}, file, where)
    if not v:
        raise InputError(file, where, "an empty filter (name race, attribute, min_level or max_atk)")
    if "race" in v:
        r = v["race"]
        if isinstance(r, list):
            if not r:
                raise InputError(file, f"{where}.race", "an empty list of Types")
            for i, x in enumerate(r):
                _race(x, file, f"{where}.race[{i}]")
        else:
            _race(r, file, f"{where}.race")
    if "attribute" in v:
        _enum(ATTRIBUTES, "attribute")(v["attribute"], file, f"{where}.attribute")
    if "min_level" in v:
        _int_range(0, 13)(v["min_level"], file, f"{where}.min_level")
    if "max_atk" in v:
        _int_range(0, MAX_STAT)(v["max_atk"], file, f"{where}.max_atk")
    return v


# Operations an option of ``choose_one`` may hold: each resolves at once, asking no player
# anything more (a choice inside a choice is not in the vocabulary).
CHOICE_OPTION_OPS = {
    "destroy", "banish", "modify_atk", "modify_def", "halve_atk", "set_position", "change_position", "negate_attack",
    "forbid_attack", "no_battle_damage", "battle_indestructible", "return_to_hand", "damage", "end_battle_phase",
}  # fmt: skip


def _options(v, file, where):
    """``choose_one``'s options: 2 to 4 tables, each a ``label`` and its ``ops``, parsed here."""
    if not isinstance(v, list):
        raise InputError(file, where, f"expected an array of options ({{label, ops}}), got {_tname(type(v))} {v!r}")
    if not 2 <= len(v) <= 4:
        raise InputError(file, where, f"expected 2 to 4 options, got {len(v)}")
    out = []
    labels = set()
    for i, o in enumerate(v):
        at = f"{where}[{i}]"
        if not isinstance(o, dict):
            raise InputError(file, at, f"expected a table (label, ops), got {_tname(type(o))} {o!r}")
        _check_keys(o, {"label", "ops"}, file, at)
        label = check_name(_req(o, "label", str, file, at), file, f"{at}.label", "option label")
        if label in labels:
            raise InputError(file, f"{at}.label", f"two options are labelled {label!r}")
        labels.add(label)
        ops = _req(o, "ops", list, file, at)
        if not ops:
            raise InputError(file, f"{at}.ops", "an option with no operation")
        parsed = []
        for j, d in enumerate(ops):
            op = _parse_op(d, file, f"{at}.ops[{j}]")
            if op.op not in CHOICE_OPTION_OPS:
                raise InputError(file, f"{at}.ops[{j}].op", f"{op.op!r} cannot be an option of choose_one (allowed: {', '.join(sorted(CHOICE_OPTION_OPS))})")
            parsed.append(op)
        out.append({"label": label, "ops": tuple(parsed)})
    return out


_WHAT = _enum(SELECTORS, "selector")
_STAT_AMOUNT = _amount_of(AMOUNT_NAMES, -MAX_STAT, MAX_STAT)

# op -> (required parameters, {parameter: checker})
OP_PARAMS: dict[str, tuple[frozenset[str], dict]] = {
    # costs
    "pay_lp": (frozenset({"amount"}), {"amount": _int_range(1, MAX_STAT)}),
    # "Tribute 1 face-up "Naturia" monster you control, except this card" (archetype, face, except_self)
    "tribute": (
        frozenset({"side"}),
        {"side": _enum({"own"}, "side"), "archetype": _archetype, "face": _enum({"up"}, "face"), "except_self": _flag},
    ),
    "discard": (frozenset(), {"count": _int_range(1, 60)}),
    "discard_self": (frozenset(), {}),
    "send_self_to_gy": (frozenset(), {}),
    # resolution
    "destroy": (
        frozenset({"what"}),
        {"what": _WHAT, "banish": _flag, "then_damage_both": _amount_of(AMOUNT_NAMES, 0, MAX_STAT)},
    ),
    "banish": (frozenset({"what"}), {"what": _WHAT}),
    "negate_activation": (frozenset(), {"destroy": _flag}),
    "negate_effect": (frozenset(), {}),
    "modify_atk": (frozenset({"what", "amount"}), {"what": _WHAT, "amount": _STAT_AMOUNT, "until": _enum(MOD_UNTIL, "duration")}),
    "modify_def": (frozenset({"what", "amount"}), {"what": _WHAT, "amount": _STAT_AMOUNT, "until": _enum(MOD_UNTIL, "duration")}),
    "halve_atk": (frozenset({"what"}), {"what": _WHAT, "until": _enum(MOD_UNTIL, "duration")}),
    # "Destroy the 1 face-up monster on the field that has the lowest ATK (your choice, if tied), and
    # if you do, inflict damage to both players equal to half of that monster's ATK" ("Chthonian Blast")
    "destroy_lowest_atk": (frozenset(), {"then_half_damage_both": _flag}),
    # "the original DEF of those monsters becomes 0" ("Curse of Anubis")
    "set_original_def": (frozenset({"what", "amount"}), {"what": _WHAT, "amount": _int_range(0, MAX_STAT), "until": _enum(MOD_UNTIL, "duration")}),
    "set_position": (frozenset({"what", "position"}), {"what": _WHAT, "position": _enum(POSITIONS, "position")}),
    "change_position": (frozenset({"what"}), {"what": _WHAT}),
    "special_summon": (
        frozenset(),
        {
            "what": _enum({"target"}, "selector (special_summon summons 'target' or from = 'deck')"),
            "from": _enum({"deck"}, "source"),
            "filter": _filter,
            "position": _enum({"attack", "defense"}, "position"),
            "each_player": _flag,
            "link": _flag,
        },
    ),
    "tokens": (
        frozenset({"token", "count", "position", "to"}),
        {"token": _card_name, "count": _int_range(1, 5), "position": _enum({"attack", "defense"}, "position"), "to": _enum({"you", "opponent"}, "player")},
    ),
    "negate_attack": (frozenset(), {}),
    "forbid_attack": (frozenset({"what"}), {"what": _WHAT}),
    # "send the top N cards of your opponent's Deck to the Graveyard" (the Deck's order is not
    # modelled: the model keeps a Deck by name, the first N go)
    "send_deck_to_gy": (frozenset({"count", "player"}), {"count": _int_range(1, 60), "player": _enum({"opponent"}, "player")}),
    # "It can make a second attack in a row": one more attack declaration this turn (rule: DS-EXTRA-ATTACK)
    "extra_attack": (frozenset({"what"}), {"what": _WHAT}),
    "no_battle_damage": (frozenset({"to"}), {"to": _enum({"you", "opponent"}, "player"), "until": _enum(LINGERING_UNTIL, "duration")}),
    "battle_indestructible": (frozenset({"to"}), {"to": _enum({"you", "opponent"}, "player"), "until": _enum(LINGERING_UNTIL, "duration")}),
    "return_to_hand": (frozenset({"what"}), {"what": _WHAT}),
    "add_to_hand": (frozenset({"what"}), {"what": _WHAT}),
    "gain_lp": (frozenset({"amount"}), {"amount": _amount_of({"tributed_atk_or_def"}, 0, MAX_STAT), "per_copy_in_graveyard": _int_range(0, MAX_STAT)}),
    "damage": (
        frozenset({"to", "amount"}),
        {"to": _enum({"you", "opponent", "controller"}, "player"), "amount": _amount_of(AMOUNT_NAMES, 0, MAX_STAT), "per_copy_in_graveyard": _int_range(0, MAX_STAT)},
    ),
    "take_control": (frozenset({"what"}), {"what": _WHAT, "until": _enum(CONTROL_UNTIL, "duration")}),
    "equip": (frozenset({"what"}), {"what": _WHAT}),
    "attach": (frozenset({"what"}), {"what": _WHAT}),
    "choose_one": (frozenset({"by", "options"}), {"by": _enum({"controller", "opponent"}, "player"), "options": _options}),
    "end_battle_phase": (frozenset(), {}),
}


def _check_params(name: str, d: dict, file: str, path: str) -> dict:
    required, checkers = OP_PARAMS[name]
    args = {k: v for k, v in d.items() if k != "op"}
    for k in sorted(required):
        if k not in args:
            raise InputError(file, f"{path}.{k}", f"missing required parameter of {name!r}")
    for k, v in args.items():
        checked = checkers[k](v, file, f"{path}.{k}")
        if k == "options":
            args[k] = checked  # choose_one: its options' operations, parsed
    if name == "special_summon":
        if ("what" in args) == ("from" in args):
            raise InputError(file, path, "special_summon needs exactly one of what = 'target' and from = 'deck'")
        if "link" in args and "what" not in args:
            raise InputError(file, f"{path}.link", "link applies to what = 'target' only")
        if "filter" in args and "from" not in args:
            raise InputError(file, f"{path}.filter", "filter applies to from = 'deck' only")
        if "each_player" in args and "from" not in args:
            raise InputError(file, f"{path}.each_player", "each_player applies to from = 'deck' only")
    return args


# static -> (required, {parameter: checker}, allowed `to`)
_STAT_TO = {"self", "equipped", "attached", "all_monsters"}
STATIC_PARAMS: dict[str, tuple[frozenset[str], dict, set[str]]] = {
    "cannot_be_attacked": (frozenset(), {}, _STAT_TO),
    "unaffected_by_spells": (frozenset(), {}, _STAT_TO),
    "attack_each_monster": (frozenset(), {}, _STAT_TO),
    "attack_cost": (frozenset({"amount"}), {"amount": _int_range(0, MAX_STAT)}, _STAT_TO),
    "direct_attack": (frozenset(), {}, _STAT_TO),
    "must_attack": (frozenset(), {}, _STAT_TO),
    "destroy_if_face_up_defense": (frozenset(), {}, _STAT_TO),
    "modify_stats": (frozenset(), {"amount": _int_range(-MAX_STAT, MAX_STAT), "per_face_up_monster_you_control": _int_range(-MAX_STAT, MAX_STAT), "filter": _filter}, _STAT_TO),
    "modify_atk": (frozenset({"amount"}), {"amount": _int_range(-MAX_STAT, MAX_STAT), "filter": _filter}, _STAT_TO),
    "cannot_attack": (frozenset(), {"filter": _filter}, _STAT_TO),
    "negate_effects": (frozenset(), {}, {"attached"}),
    "banish_instead_of_graveyard": (frozenset(), {}, {"all_cards"}),
    "halve_attackers": (frozenset(), {}, {"all_monsters"}),
    "destroy_self_instead_of_battle": (frozenset(), {}, {"equipped"}),
    "battle_indestructible_once_per_turn": (frozenset(), {}, {"self"}),
    "destroy_self_on_activation": (frozenset(), {}, {"self"}),
    "damage_step_atk": (frozenset({"amount", "if_self"}), {"amount": _int_range(-MAX_STAT, MAX_STAT), "if_self": _enum({"attacks", "attacked"}, "battle role")}, {"self"}),
    "halve_battler_at_calculation": (frozenset(), {}, {"self"}),
    "battle_damage_to_opponent": (frozenset(), {}, {"self"}),
    "banish_destroyed_by_battle": (frozenset(), {}, {"self"}),
    "banish_self_leaving_field": (frozenset(), {}, {"self"}),
    "negate_destroyed_by_own_fiends": (frozenset(), {}, {"self"}),
}


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
    if not 1 <= count <= MAX_TARGETS:
        raise InputError(file, f"{path}.count", f"must be from 1 to {MAX_TARGETS}, got {count}")
    if mn is not None and not 0 <= mn <= count:
        raise InputError(file, f"{path}.min", f"must be from 0 to count ({count}), got {mn}")
    face = _opt(d, "face", str, None, file, path)
    if face not in (None, "up"):
        raise InputError(file, f"{path}.face", f"unknown face {face!r} (known: up)")
    kind = _opt(d, "kind", str, None, file, path)
    if kind is not None and kind not in ("monster", "spell"):
        raise InputError(file, f"{path}.kind", f"unknown Graveyard filter kind {kind!r} (known: monster, spell)")
    race = _opt(d, "race", str, None, file, path)
    if race is not None:
        _race(race, file, f"{path}.race")
    for key, zones in (("kind", {"graveyard"}), ("race", {"graveyard"}), ("archetype", {"graveyard"}), ("face", {"monster"}), ("attacker_only", {"monster"}), ("effect_monster", {"monster"}), ("can_flip_down", {"monster"})):
        if key in d and zone not in zones:
            raise InputError(file, f"{path}.{key}", f"{key} applies to zone = {', '.join(sorted(zones))} only, not {zone!r}")
    return TargetSpec(
        zone=zone,
        side=side,
        count=count,
        min=mn,
        face=face,
        kind=kind,
        race=race,
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
        if not isinstance(c, str) or c not in CONDITIONS:
            raise InputError(file, f"{path}.conditions[{i}]", f"unknown condition {c!r} (known: {', '.join(sorted(CONDITIONS))})")
    cost = tuple(_parse_op(o, file, f"{path}.cost[{i}]", cost=True) for i, o in enumerate(_opt(d, "cost", list, [], file, path)))
    targets = tuple(
        _parse_target(t, file, f"{path}.targets[{i}]") for i, t in enumerate(_opt(d, "targets", list, [], file, path))
    )
    ops = tuple(_parse_op(o, file, f"{path}.ops[{i}]") for i, o in enumerate(_req(d, "ops", list, file, path)))
    for i, o in enumerate(cost):
        # These costs move the card itself from the hand (Kuriboh, Honest): a monster's effect
        # activated from the hand.
        if o.op in ("discard_self", "send_self_to_gy") and (location != "hand" or typ == "activate"):
            raise InputError(file, f"{path}.cost[{i}].op", f"{o.op!r} sends this card from the hand: it needs a monster effect with location = 'hand'")
    for i, o in enumerate(ops):
        if o.get("what") == "target" and not targets:
            raise InputError(file, f"{path}.ops[{i}].what", f"{o.op!r} applies to 'target', but the effect has no targets")
    label = _opt(d, "label", str, "", file, path)
    if label:
        check_name(label, file, f"{path}.label", "label")
    return Effect(
        index=index,
        type=typ,
        label=label,
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
    required, checkers, tos = STATIC_PARAMS[name]
    if to not in tos:
        raise InputError(file, f"{path}.to", f"{name!r} applies to {', '.join(sorted(tos))}, not {to!r}")
    _check_keys(d, {"apply", "to", "while_field_spell"} | set(checkers), file, path)
    for k in sorted(required):
        if k not in d:
            raise InputError(file, f"{path}.{k}", f"missing required parameter of {name!r}")
    for k, v in d.items():
        if k in checkers:
            checkers[k](v, file, f"{path}.{k}")
    if "while_field_spell" in d:
        _card_name(d["while_field_spell"], file, f"{path}.while_field_spell")
    if name == "modify_stats" and ("amount" in d) == ("per_face_up_monster_you_control" in d):
        raise InputError(file, path, "modify_stats needs exactly one of amount and per_face_up_monster_you_control")
    if "filter" in d and to != "all_monsters":
        raise InputError(file, f"{path}.filter", "a filter applies to to = 'all_monsters' only")
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
    name = _card_name(_req(d, "name", str, file, path), file, f"{path}.name")
    passcode = _req(d, "passcode", str, file, path)
    if len(passcode) != 8 or not all(ch in "0123456789" for ch in passcode):
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
        race = _race(_req(d, "race", str, file, path), file, f"{path}.race")
        level = _req(d, "level", int, file, path)
        atk = _req(d, "atk", int, file, path)
        def_ = _req(d, "def", int, file, path)
        for key, v, hi in (("level", level, 13), ("atk", atk, MAX_STAT), ("def", def_, MAX_STAT)):
            if v < 0:
                raise InputError(file, f"{path}.{key}", f"must not be negative, got {v}")
            if v > hi:
                raise InputError(file, f"{path}.{key}", f"must be at most {hi}, got {v}")
    else:
        for key in ("attribute", "race", "level", "atk", "def"):
            if key in d:
                raise InputError(file, f"{path}.{key}", f"a {kind} card has no {key}")
    effects = tuple(
        _parse_effect(e, i, kind, file, f"{path}.effect[{i}]") for i, e in enumerate(_opt(d, "effect", list, [], file, path))
    )
    statics = tuple(_parse_static(s, file, f"{path}.static[{i}]") for i, s in enumerate(_opt(d, "static", list, [], file, path)))
    for i, st in enumerate(statics):
        if st.to == "self" and kind not in ("monster", "token"):
            raise InputError(file, f"{path}.static[{i}].to", f"to = 'self' applies to a monster; this is a {kind} card")
        if st.to == "equipped" and not (kind == "spell" and subtype == "equip"):
            raise InputError(file, f"{path}.static[{i}].to", "to = 'equipped' applies to an Equip Spell")
        if st.to == "attached" and not (kind == "trap" and subtype == "continuous"):
            raise InputError(file, f"{path}.static[{i}].to", "to = 'attached' applies to a Continuous Trap")
    if kind in ("spell", "trap") and not any(e.type == "activate" for e in effects):
        raise InputError(file, f"{path}.effect", f"a {kind} card needs an 'activate' effect (its card activation)")
    archetypes = _opt(d, "archetypes", list, [], file, path)
    for i, a in enumerate(archetypes):
        if not isinstance(a, str) or not a:
            raise InputError(file, f"{path}.archetypes[{i}]", f"expected an archetype name, got {a!r}")
    return Card(name, passcode, kind, subtype, text, attribute, race, level, atk, def_, effects, statics, file, tuple(archetypes))


def load_card_file(path: Path | str, display: str | None = None) -> list[Card]:
    display = display or str(path)
    return parse_card_document(read_text(path, display, "cards"), display)


def parse_card_document(text: str, display: str) -> list[Card]:
    data = parse_toml_text(text, display)
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
        pool = CardPool(cards)
        for c in cards:
            check_references(c, pool, c.source, c.name)
        _BUILTIN = pool
    return _BUILTIN


def pool_with(extra: Iterable[Card], fields: Iterable[str] | None = None) -> CardPool:
    """The built-in pool plus `extra` (a board's [[card]] definitions). `fields` names each extra
    card's field path (``card[0]``...) for messages. A name or passcode used twice, or a reference
    to a card that does not exist (or is of the wrong kind), is an InputError."""
    base = list(builtin_pool())
    extra = list(extra)
    where = list(fields) if fields is not None else [c.name for c in extra]
    names = {c.name: "the built-in pool" for c in base}
    codes = {c.passcode: f"{c.name!r} of the built-in pool" for c in base}
    out = base[:]
    for c, f in zip(extra, where):
        if c.name in names:
            raise InputError(c.source, f"{f}.name", f"card {c.name!r} is already defined in {names[c.name]}")
        if c.passcode in codes:
            raise InputError(c.source, f"{f}.passcode", f"passcode {c.passcode} is already used by {codes[c.passcode]}")
        names[c.name] = f
        codes[c.passcode] = f"{c.name!r} ({f})"
        out.append(c)
    pool = CardPool(out)
    for c, f in zip(extra, where):
        check_references(c, pool, c.source, f)
    return pool


def check_references(c: Card, pool: CardPool, file: str, path: str) -> None:
    """Names a card's data gives of other cards exist in `pool` and are of the right kind."""
    for i, e in enumerate(c.effects):
        for part, ops in (("cost", e.cost), ("ops", e.ops)):
            for j, o in enumerate(ops):
                if o.op == "tokens":
                    t = o.get("token")
                    if t not in pool:
                        raise InputError(file, f"{path}.effect[{i}].{part}[{j}].token", f"unknown card {t!r}")
                    if not pool[t].is_token:
                        raise InputError(file, f"{path}.effect[{i}].{part}[{j}].token", f"{t!r} is not a Token")
    for i, st in enumerate(c.statics):
        fs = st.get("while_field_spell")
        if fs is not None:
            if fs not in pool:
                raise InputError(file, f"{path}.static[{i}].while_field_spell", f"unknown card {fs!r}")
            if not (pool[fs].kind == "spell" and pool[fs].subtype == "field"):
                raise InputError(file, f"{path}.static[{i}].while_field_spell", f"{fs!r} is not a Field Spell")


# -- cards of a card database (--cards-db, docs/boards.md) -------------------------------------

_SPELL_SUBTYPES = {"Quick-Play": "quick-play", "Continuous": "continuous", "Equip": "equip", "Field": "field"}
_TRAP_SUBTYPES = {"Continuous": "continuous", "Counter": "counter"}


def card_from_db(row: "cdb.Card") -> Card:
    """A database row as a card of the run: every fact from the row (kind, subtype, Attribute,
    Type, Level, ATK/DEF, passcode, text), no effect modelled. ``effects_known`` only for a plain
    Normal Monster (type Monster + Normal and nothing else: its text is flavour, it has no
    effects, so the reference model plays it exactly); every other card's behaviour is unknown
    here, and the reference model refuses a board that holds it (engines/reference.py)."""
    t = row.type
    if row.kind == "monster":
        kind = "token" if t & cdb.TYPE_TOKEN else "monster"
        subtype = "token" if kind == "token" else "flip" if t & cdb.TYPE_FLIP else "effect" if t & cdb.TYPE_EFFECT else "normal"
    elif row.kind == "spell":
        kind, subtype = "spell", _SPELL_SUBTYPES.get(row.subtype, "normal")
    elif row.kind == "trap":
        kind, subtype = "trap", _TRAP_SUBTYPES.get(row.subtype, "normal")
    else:
        raise InputError("", "card", f"{row.name!r} ({row.code}) is neither a monster, a Spell nor a Trap (type {t:#x})")
    monster = kind in ("monster", "token")
    no_level = bool(t & (cdb.TYPE_XYZ | cdb.TYPE_LINK))  # a Rank or a Link Rating is not a Level
    return Card(
        name=row.name,
        passcode=str(row.code).zfill(8),
        kind=kind,
        subtype=subtype,
        text=row.text,
        attribute=(row.attributes or [None])[0] if monster else None,
        race=(row.races or [None])[0] if monster else None,
        level=(None if no_level else row.level) if monster else None,
        atk=row.atk if monster else None,
        def_=row.def_ if monster else None,
        source="",
        effects_known=t == cdb.TYPE_MONSTER | cdb.TYPE_NORMAL,
        data=row,
    )


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
