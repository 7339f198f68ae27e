"""Card facts the invariants need, read by the invariants themselves from the card definitions.

The facts come from the raw card data of the run: the pool's TOML files (``model/cards/*.toml``,
read here with :mod:`tomllib`) and the ``[[card]]`` tables a board defines. Nothing here calls
the model's derived card properties or its rules code; the reading below is the invariants' own
restatement of docs/cards.md and docs/rules.md (CH-SPEED, DS-LEGAL-*, ATK-*). A board-defined
card is read exactly like a pool card.

Every question returns a fact or :data:`UNKNOWN` (``None``): the card is not defined for this
run, or its data uses a word this reader does not know. An invariant that meets UNKNOWN returns
:class:`~bpcheck.invariants.base.NotJudged` for that situation (reported as "not judged", never
a silent pass and never a false failure).
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from bpcheck.model.profile import CardProfile, profile as read_profile

UNKNOWN = None
PROTECTION_OPS = frozenset({"no_battle_damage", "battle_indestructible"})

# The vocabulary of docs/cards.md, restated. A word outside it makes a fact UNKNOWN.
EFFECT_TYPES = {"activate", "quick", "ignition", "trigger", "flip"}
WHEN_EVENT = {"attack_declared", "summoned", "trap_activated", "spell_activated", "opponent_graveyard_effect_activated", "own_monster_destroyed_to_gy"}
# Timings answering the activation on top of the chain directly (DS-LEGAL-NEGATE-EFFECT).
WHEN_RESPONSE = {"trap_activated", "spell_activated", "opponent_graveyard_effect_activated"}
WHEN_DAMAGE_STEP = {
    "damage_step",
    "start_of_damage_step",
    "damage_taken",
    "before_damage_calculation",
    "during_damage_calculation",
    "after_damage_calculation",
    "destroyed_by_battle_sent_to_gy",
    "destroys_by_battle",
    "destroys_by_battle_sent_to_gy",
    "destroyed_by_battle",
    "destroyed",
}
OPS = {
    "destroy", "banish", "negate_activation", "negate_effect", "modify_atk", "modify_def", "halve_atk", "set_position",
    "change_position", "special_summon", "tokens", "negate_attack", "forbid_attack", "no_battle_damage",
    "battle_indestructible", "return_to_hand", "add_to_hand", "gain_lp", "damage", "take_control", "equip", "attach",
    "choose_one", "end_battle_phase", "extra_attack", "send_deck_to_gy", "set_original_def", "destroy_lowest_atk",
}  # fmt: skip
# Operations whose own resolution changes ATK/DEF (rule: DS-LEGAL-STATS, "directly"); an original DEF
# that "becomes" a value is one.
STAT_OPS = {"modify_atk", "modify_def", "halve_atk", "set_original_def"}
# 002 "Cards that can be activated at Damage Step", the ATK/DEF item: ""Scrap Sheen", "Zero Force", and
# "Curse of Anubis" cannot be activated during the Damage Step." (rule: DS-REFUSED-BY-RULING)
DS_REFUSED_BY_RULING = frozenset({"Scrap Sheen", "Zero Force", "Curse of Anubis"})
# 002, the same list: "Cards that have no clear indication that they can be activated during the Damage
# Step, but have rulings stating that they are allowed to do so: "Chthonian Blast" and "Desrook
# Archfiend"." (rule: DS-ALLOWED-BY-RULING; "Muko", TCG only, is not in the pool)
DS_ALLOWED_BY_RULING = frozenset({"Chthonian Blast", "Desrook Archfiend"})
STATICS = {
    "destroy_self_instead_of_battle", "battle_indestructible_once_per_turn", "destroy_self_on_activation",
    "cannot_be_attacked", "unaffected_by_spells", "attack_each_monster", "attack_cost", "direct_attack", "must_attack",
    "destroy_if_face_up_defense", "modify_stats", "modify_atk", "cannot_attack", "negate_effects", "banish_instead_of_graveyard",
    "halve_attackers", "damage_step_atk", "halve_battler_at_calculation",
    "battle_damage_to_opponent", "banish_destroyed_by_battle", "banish_self_leaving_field",
    "negate_destroyed_by_own_fiends",
}  # fmt: skip
STAT_STATICS = {"modify_stats", "modify_atk", "halve_attackers"}
COSTS = {"pay_lp", "tribute", "discard", "discard_self", "send_self_to_gy"}
CONDITIONS = {
    "opponent_monster_attacking", "self_battling", "self_attacked_in_attack_position", "self_was_attacked",
    "self_not_declared_attack", "own_light_monster_battles_monster", "own_free_monster_zones_4",
    "opponent_free_monster_zones_3", "battle_phase", "responding_to_opponent", "attacker_race_spellcaster",
    "opponent_summoned_atk_1500", "self_face_up_to_resolve", "opponent_battle_phase",
    "self_attacks_face_down_defense", "self_attacks_face_up_defense", "self_attacking_destroys_by_battle",
    "opponent_summoned",
}  # fmt: skip
LOCATIONS = {"field", "hand", "graveyard"}
# A target's fields (docs/cards.md "Targets") and the value each has when the card does not give it.
TARGET_KEYS = ("zone", "side", "count", "min", "face", "kind", "race", "archetype", "attacker_only", "effect_monster", "can_flip_down")
TARGET_DEFAULTS = {"count": 1, "min": None, "face": None, "kind": None, "race": None, "archetype": None,
                   "attacker_only": False, "effect_monster": False, "can_flip_down": False}  # fmt: skip
SUMMON_FILTER_KEYS = {"attribute", "race", "max_atk"}


def _flat(ops: list[dict]) -> list[dict]:
    """The operations, with those of each ``choose_one`` option in its place."""
    out = []
    for o in ops:
        out.append(o)
        if o.get("op") == "choose_one":
            for opt in o.get("options") or []:
                out.extend(_flat(list(opt.get("ops") or [])))
    return out


def _changes_stats(o: dict) -> bool:
    if o.get("op") == "choose_one":
        opts = o.get("options") or []
        return bool(opts) and all(any(_changes_stats(x) for x in (opt.get("ops") or [])) for opt in opts)
    return o.get("op") in STAT_OPS


def _pool_tables() -> list[tuple[str, dict]]:
    out = []
    folder = resources.files("bpcheck.model") / "cards"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            out.extend((f"cards/{entry.name}", c) for c in data.get("card", []))
    return out


_POOL: list[tuple[str, dict]] | None = None


def _raw_from_parsed(card: Any) -> dict:
    """The definition of a board card the run got from somewhere other than a readable file (a
    scenario's embedded board, a protocol ``start``): its plain data fields, in the TOML shape.
    Only stored fields are read, no derived property."""
    d: dict[str, Any] = {"name": card.name, "kind": card.kind, "subtype": card.subtype}
    for key, attr in (("attribute", "attribute"), ("race", "race"), ("level", "level"), ("atk", "atk"), ("def", "def_")):
        v = getattr(card, attr)
        if v is not None:
            d[key] = v
    if card.archetypes:
        d["archetypes"] = list(card.archetypes)
    if not getattr(card, "effects_known", True):
        # a card of a card database (--cards-db): its data is known, its effects are not
        # modelled, so every fact about its effects is UNKNOWN (not judged), never "none"
        d["effects_known"] = False
        return d
    effects = []
    for e in card.effects:
        eff: dict[str, Any] = {"type": e.type, "mandatory": e.mandatory, "location": e.location, "conditions": list(e.conditions)}
        if e.when is not None:
            eff["when"] = e.when
        if e.label:
            eff["label"] = e.label
        for flag in ("once_per_turn", "once_per_battle"):
            if getattr(e, flag):
                eff[flag] = True
        eff["cost"] = [{"op": o.op, **dict(o.args)} for o in e.cost]
        eff["ops"] = [{"op": o.op, **{k: _thaw(v) for k, v in o.args}} for o in e.ops]
        # every field a target has, as the TOML writes it (a default is left out)
        eff["targets"] = [{k: getattr(t, k) for k in TARGET_KEYS if getattr(t, k) != TARGET_DEFAULTS.get(k)} for t in e.targets]
        effects.append(eff)
    d["effect"] = effects
    d["static"] = [{"apply": s.apply, "to": s.to, **{k: _thaw(v) for k, v in s.args}} for s in card.statics]
    return d


def _thaw(v: Any) -> Any:
    if hasattr(v, "op") and hasattr(v, "args"):  # an operation inside another (choose_one's options)
        return {"op": v.op, **{k: _thaw(x) for k, x in v.args}}
    if isinstance(v, tuple) and v and all(isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) for x in v):
        return {k: _thaw(x) for k, x in v}
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


def _memo(fn):
    """A fact of the run's card data (read-only once built), asked again with the same name (a
    ``str``) and effect index (an ``int`` or None): answered from a cache. Any other argument (odd
    engine data: a bool, a float, a list) is read as it is, every time, so a cached answer
    never stands for a different question. Only facts whose answer is immutable are cached."""
    cache_name = "_memo_" + fn.__name__

    @functools.wraps(fn)
    def cached(self, name, *rest):
        if type(name) is not str or (rest and not (rest[0] is None or type(rest[0]) is int)):
            return fn(self, name, *rest)
        memo = self.__dict__.get(cache_name)
        if memo is None:
            memo = self.__dict__[cache_name] = {}
        key = (name, *rest)
        try:
            return memo[key]
        except KeyError:
            v = memo[key] = fn(self, name, *rest)
            return v

    return cached


_FLAGS = ("set_this_turn", "summoned_this_turn")


FIRST_TOKEN_UID = 1000  # cards created during play are numbered from here (docs/protocol.md, "The board")


def board_flags(doc: dict) -> dict[int, frozenset[str]]:
    """uid -> the flags of ``_FLAGS`` the board document gives that card, the cards numbered as
    bpcheck numbers them (docs/protocol.md, "The board"): 1, 2, ... in file order, P1 then P2,
    each player's monsters, Spells/Traps, Field Spell, then hand, Graveyard, banished and Deck,
    each in list order."""
    out: dict[int, frozenset[str]] = {}
    uid = 0
    for key in ("p1", "p2"):
        side = doc.get(key) if isinstance(doc.get(key), dict) else {}
        entries: list = []
        for part in ("monsters", "spells"):
            entries += side.get(part) or [] if isinstance(side.get(part) or [], list) else []
        if side.get("field_spell") is not None:
            entries.append(side["field_spell"])
        for pile in ("hand", "graveyard", "banished", "deck"):
            entries += side.get(pile) or [] if isinstance(side.get(pile) or [], list) else []
        for e in entries:
            uid += 1
            if isinstance(e, dict):
                flags = frozenset(f for f in _FLAGS if e.get(f) is True)
                if flags:
                    out[uid] = flags
    return out


class CardFacts:
    """The card definitions of one run (pool + board), and the facts invariants ask of them.
    Built once per run and read-only after that: the facts with immutable answers are cached
    (:func:`_memo`)."""

    def __init__(self, tables: Iterable[tuple[str, dict]]) -> None:
        self.defs: dict[str, dict] = {}
        self.where: dict[str, str] = {}
        for where, c in tables:
            name = c.get("name")
            if isinstance(name, str):
                self.defs[name] = c
                self.where[name] = where

    @classmethod
    def pool(cls) -> "CardFacts":
        global _POOL
        if _POOL is None:
            _POOL = _pool_tables()
        return cls(_POOL)

    @classmethod
    def for_board(cls, board: Any) -> "CardFacts":
        """The pool's definitions plus the board's own ``[[card]]`` tables, read from the board
        file; a board card the file does not show (a board built from data) is taken from the
        board's card list."""
        global _POOL
        if _POOL is None:
            _POOL = _pool_tables()
        tables = list(_POOL)
        pool_names = {c.get("name") for _w, c in tables}
        own: dict[str, dict] = {}
        path = Path(str(getattr(board, "path", "")))
        if path.suffix == ".toml" and path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
                for c in data.get("card", []) if isinstance(data.get("card"), list) else []:
                    if isinstance(c, dict) and isinstance(c.get("name"), str):
                        own[c["name"]] = c
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                pass
        pool = getattr(board, "pool", None)
        rows: dict[str, Any] = {}
        if pool is not None:
            for card in pool:
                if card.name not in pool_names and card.name not in own:
                    own[card.name] = _raw_from_parsed(card)
                if getattr(card, "data", None) is not None and card.name not in pool_names:
                    rows[card.name] = card.data  # a card of a card database: its profile is read from this row
        tables.extend((str(path), c) for c in own.values())
        facts = cls(tables)
        facts.rows = rows
        doc = getattr(board, "document", None)
        if isinstance(doc, dict):
            facts.placed = board_flags(doc)
        facts.ruleset = getattr(board, "ruleset", None) or "tcg"
        return facts

    # -- the board: what it places Set or Summoned this turn -----------------------------------

    placed: dict[int, frozenset[str]] | None = None  # uid -> {"set_this_turn", "summoned_this_turn"}; None: no board
    # The ruleset the run is played under (the board's, docs/rulesets.md): what an invariant with
    # a branch per ruleset reads (invariants/base.py ``rulesets=``)
    ruleset: str = "tcg"

    def placed_this_turn(self, uid: int, flag: str) -> bool | None:
        """Whether the board places card `uid` with `flag` (``set_this_turn`` or
        ``summoned_this_turn``): what only the board says (no Set happens in the Battle Phase,
        and a Summon during play is an event). None when the run has no board document, and for
        a card the board does not place (a Token, uid from 1000: docs/protocol.md) that stands
        on the field from the first state: an engine that plays the turn's start before the
        board's Main Phase 1 may Summon it there (the EDOPro core: "During each of your Standby
        Phases: Special Summon 1 Slime Token", docs/ocgcore.md), and no event said so."""
        if self.placed is None or uid >= FIRST_TOKEN_UID:
            return UNKNOWN
        return flag in self.placed.get(uid, frozenset())

    # -- cards of a card database: their profiles (docs/profiles.md) ---------------------------

    rows: dict[str, Any] = {}  # name -> its database row (bpcheck.model.cdb.Card), cards of a --cards-db only

    def profile(self, name: Any) -> CardProfile | None:
        """The profile of a card of a card database (its effects read from its data row and text,
        :mod:`bpcheck.model.profile`), or None for a card of the pool or a board's ``[[card]]``
        table (whose effects the card data models: the other invariants judge those)."""
        row = self.rows.get(name) if type(name) is str else None
        if row is None:
            return None
        memo = self.__dict__.setdefault("_profiles", {})
        if name not in memo:
            memo[name] = read_profile(row)
        return memo[name]

    # -- plain data -------------------------------------------------------------------------

    def known(self, name: str | None) -> bool:
        return name in self.defs

    @_memo
    def kind(self, name: str) -> tuple[str, str] | None:
        c = self.defs.get(name)
        return None if c is None else (c.get("kind"), c.get("subtype"))

    def stat(self, name: str, key: str) -> Any:
        c = self.defs.get(name)
        return None if c is None else c.get(key)

    def effects(self, name: str) -> list[dict] | None:
        c = self.defs.get(name)
        if c is None or c.get("effects_known") is False:
            return None
        return list(c.get("effect", []))

    def effect(self, name: str, index: int | None) -> dict | None:
        effs = self.effects(name)
        if effs is None or not isinstance(index, int) or not 0 <= index < len(effs):
            return None
        return effs[index]

    def statics(self, name: str) -> list[dict] | None:
        c = self.defs.get(name)
        if c is None or c.get("effects_known") is False:
            return None
        sts = list(c.get("static", []))
        if any(s.get("apply") not in STATICS for s in sts):
            return None
        return sts

    def _static(self, name: str, apply: str, to: str | tuple[str, ...]) -> bool | None:
        sts = self.statics(name)
        if sts is None:
            return UNKNOWN
        tos = (to,) if isinstance(to, str) else to
        return any(s.get("apply") == apply and s.get("to") in tos for s in sts)

    # -- facts ------------------------------------------------------------------------------

    @_memo
    def is_token(self, name: str) -> bool | None:
        k = self.kind(name)
        return None if k is None else k[0] == "token"

    @_memo
    def speed(self, name: str, effect_index: int | None) -> int | None:
        """Spell speed (rule: CH-SPEED): Counter Traps 3, other Traps and Quick-Play Spells 2,
        other Spells 1; a monster's Quick Effect 2, its other effects 1."""
        k = self.kind(name)
        if k is None:
            return UNKNOWN
        kind, subtype = k
        if kind == "trap":
            return 3 if subtype == "counter" else 2
        if kind == "spell":
            return 2 if subtype == "quick-play" else 1
        e = self.effect(name, effect_index)
        if e is None or e.get("type") not in EFFECT_TYPES:
            return UNKNOWN
        return 2 if e.get("type") == "quick" else 1

    @_memo
    def can_attack_directly(self, name: str) -> bool | None:
        """The monster's own text lets it attack directly (rule: ATK-DIRECT)."""
        return self._static(name, "direct_attack", "self")

    @_memo
    def grants_direct_attack(self, name: str) -> bool | None:
        """An Equip Spell whose equipped monster may attack directly."""
        return self._static(name, "direct_attack", "equipped")

    @_memo
    def attacks_each_monster(self, name: str) -> bool | None:
        return self._static(name, "attack_each_monster", "self")

    @_memo
    def must_attack(self, name: str) -> bool | None:
        return self._static(name, "must_attack", "self")

    @_memo
    def destroys_itself_on_activation(self, name: str) -> bool | None:
        """A monster whose Continuous Effect destroys it when an Effect Monster's effect or a
        Spell/Trap Card is activated, even if already destroyed by battle (Scrap Shark,
        DS-SELF-DESTROY-SCRAP-SHARK)."""
        return self._static(name, "destroy_self_on_activation", "self")

    @_memo
    def optional_battle_protection(self, name: str) -> bool | None:
        """A protection from destruction by battle its controller chooses to apply or not at
        damage calculation (Gyroid: "Once per turn, this card cannot be destroyed by battle",
        DS-CALC-PROTECT-CHOICE)."""
        return self._static(name, "battle_indestructible_once_per_turn", "self")

    @_memo
    def destroyed_instead_of_equipped(self, name: str) -> bool | None:
        """An Equip Card destroyed instead of its monster being destroyed by battle (Mirror of
        Yata: "If it would be destroyed by battle, destroy this card instead", DS-INSTEAD)."""
        return self._static(name, "destroy_self_instead_of_battle", "equipped")

    @_memo
    def damage_step_atk(self, name: str, role: str) -> int | None:
        """The ATK the monster's own continuous effect adds "during the Damage Step only" when it
        attacks an opponent's monster (`role` "attacks") or is attacked by one ("attacked"):
        "Steamroid" (DS-START-CONT); 0 when it has none."""
        sts = self.statics(name)
        if sts is None:
            return UNKNOWN
        return sum(int(s.get("amount", 0)) for s in sts if s.get("apply") == "damage_step_atk" and s.get("if_self") == role)

    @_memo
    def halves_battler_at_calculation(self, name: str) -> bool | None:
        """The monster halves the ATK and DEF of the monster battling it, at damage calculation
        only ("Gaia Plate the Earth Giant", DS-CALC-CONT)."""
        return self._static(name, "halve_battler_at_calculation", "self")

    @_memo
    def gives_battle_damage_to_opponent(self, name: str) -> bool | None:
        """"Your opponent takes any battle damage you would have taken from battles involving
        this card instead" ("Amazoness Swords Woman", DS-DAMAGE-CONT)."""
        return self._static(name, "battle_damage_to_opponent", "self")

    @_memo
    def banishes_destroyed_by_battle(self, name: str) -> bool | None:
        """"If this card destroys an opponent's monster by battle, ...: Banish that opponent's
        monster" ("Dark Magician of Chaos", DS-BANISH-BATTLE)."""
        return self._static(name, "banish_destroyed_by_battle", "self")

    @_memo
    def banishes_itself_leaving_field(self, name: str) -> bool | None:
        """"If this face-up card would leave the field, banish it instead" (DS-BANISH-BATTLE)."""
        return self._static(name, "banish_self_leaving_field", "self")

    @_memo
    def negates_destroyed_by_own_fiends(self, name: str) -> bool | None:
        """"Negate the effects of monsters destroyed by battle with Fiend-Type monsters you
        control" ("Dark Ruler Ha Des", DS-NEGATE-BATTLE)."""
        return self._static(name, "negate_destroyed_by_own_fiends", "self")

    @_memo
    def attack_cost(self, name: str) -> int | None:
        sts = self.statics(name)
        if sts is None:
            return UNKNOWN
        return sum(int(s.get("amount", 0)) for s in sts if s.get("apply") == "attack_cost" and s.get("to") == "self")

    @_memo
    def unattackable_while(self, name: str) -> tuple[bool, str | None] | None:
        """(cannot be attacked at all, or only while this Field Spell is face-up)."""
        sts = self.statics(name)
        if sts is None:
            return UNKNOWN
        for s in sts:
            if s.get("apply") == "cannot_be_attacked" and s.get("to") == "self":
                return True, s.get("while_field_spell")
        return False, None

    @_memo
    def stops_attached_attacking(self, name: str) -> bool | None:
        """A card whose continuous effect forbids the monster it is attached to to attack."""
        sts = self.statics(name)
        if sts is None:
            return UNKNOWN
        return any(s.get("apply") == "cannot_attack" and s.get("to") == "attached" and not s.get("filter") for s in sts)

    @_memo
    def level_lock(self, name: str) -> int | None | bool:
        """The minimum Level a field-wide "cannot attack" effect stops, False when it has none."""
        sts = self.statics(name)
        if sts is None:
            return UNKNOWN
        for s in sts:
            if s.get("apply") == "cannot_attack" and s.get("to") == "all_monsters":
                f = s.get("filter") or {}
                if set(f) - {"min_level"}:
                    return UNKNOWN
                return int(f.get("min_level", 0))
        return False

    @_memo
    def negates_attached(self, name: str) -> bool | None:
        return self._static(name, "negate_effects", "attached")

    def ops(self, name: str, effect_index: int | None) -> list[dict] | None:
        e = self.effect(name, effect_index)
        if e is None:
            return None
        ops = list(e.get("ops", []))
        if any(o.get("op") not in OPS for o in ops):
            return None
        return ops

    def _any_op(self, name: str, pred) -> bool | None:
        """Whether any operation of any of the card's effects satisfies `pred` (unknown when an
        effect's operations cannot be read)."""
        effs = self.effects(name)
        if effs is None:
            return UNKNOWN
        for i in range(len(effs)):
            ops = self.ops(name, i)
            if ops is None:
                return UNKNOWN
            if any(pred(o) for o in ops):
                return True
        return False

    @_memo
    def answers_destroyed(self, name: str) -> bool:
        """One of the card's effects is activated "When a face-up monster you control is destroyed
        and sent to the Graveyard" ("Chthonian Blast"); False when its effects cannot be read."""
        return any(e.get("when") == "own_monster_destroyed_to_gy" for e in self.effects(name) or [])

    @_memo
    def answers_damage(self, name: str) -> bool:
        """One of the card's effects is activated "when you take damage" (DS-DAMAGE-RESPONSE);
        False when its effects cannot be read (a window is then not kept: never demanded)."""
        return any(e.get("when") == "damage_taken" for e in self.effects(name) or [])

    @_memo
    def ends_battle_phase(self, name: str) -> bool | None:
        """Any of the card's effects may end the Battle Phase when it resolves (an
        ``end_battle_phase`` operation, in a ``choose_one`` option too: "Half or Nothing")."""
        return self._any_op(name, lambda o: any(x.get("op") == "end_battle_phase" for x in _flat([o])))

    @_memo
    def negates_attack(self, name: str) -> bool | None:
        """Any of the card's effects negates the attack when it resolves (STOP-ATTACK)."""
        return self._any_op(name, lambda o: o.get("op") == "negate_attack")

    @_memo
    def forbids_own_attack(self, name: str, effect_index: int | None = None) -> bool | None:
        """The card's effect (any of its effects, with no index) forbids the card itself to attack
        when it resolves (Chaos Sorcerer: "This card cannot attack the turn you activate this
        effect")."""
        pred = lambda o: o.get("op") == "forbid_attack" and o.get("what") == "self"  # noqa: E731
        if effect_index is None:
            return self._any_op(name, pred)
        ops = self.ops(name, effect_index)
        return UNKNOWN if ops is None else any(pred(o) for o in ops)

    @_memo
    def extra_attacks(self, name: str, effect_index: int | None) -> int | None:
        """How many more attacks the card's effect lets the card itself declare this turn when it
        resolves (DS-EXTRA-ATTACK: "It can make a second attack in a row"); with no index (an
        engine that does not say which effect), the card's only answer: the same for every
        effect, else unknown."""
        effs = self.effects(name)
        if effs is None:
            return UNKNOWN
        seen = set()
        for i in range(len(effs)) if effect_index is None else [effect_index]:
            ops = self.ops(name, i)
            if ops is None:
                return UNKNOWN
            seen.add(sum(1 for o in ops if o.get("op") == "extra_attack" and o.get("what") == "self"))
        return seen.pop() if len(seen) == 1 else UNKNOWN

    @_memo
    def protections(self, name: str, effect_index: int | None) -> tuple | None:
        """What the effect gives when it resolves against battle (DS-CALC-*: "you take no battle
        damage", "cannot be destroyed by battle"): ((what, to, until), ...) from its
        ``no_battle_damage`` / ``battle_indestructible`` operations, ``to`` "you" or "opponent".
        With no index (an engine that does not say which effect), the card's only answer: the same
        for every effect, else unknown."""
        effs = self.effects(name)
        if effs is None:
            return UNKNOWN
        idx = range(len(effs)) if effect_index is None else [effect_index]
        seen = set()
        for i in idx:
            ops = self.ops(name, i)
            if ops is None:
                return UNKNOWN
            seen.add(tuple((o["op"], o.get("to", "you"), o.get("until", "end_of_turn")) for o in ops if o.get("op") in PROTECTION_OPS))
        if len(seen) > 1:
            return UNKNOWN
        return seen.pop() if seen else ()

    @_memo
    def links_summoned(self, name: str) -> bool | None:
        """The card stays bound to the monster it Special Summons when it resolves (``link`` on its
        ``special_summon``: Call of the Haunted, "When this card leaves the field, destroy that
        target. When that target is destroyed, destroy this card."; CARD-CONT-TARGET)."""
        return self._any_op(name, lambda o: o.get("op") == "special_summon" and o.get("link"))

    @_memo
    def answers_attack_declaration(self, name: str) -> bool | None:
        """The card has an effect activated "when an attack is declared" (WIN-ATTACK-DECL)."""
        effs = self.effects(name)
        if effs is None:
            return UNKNOWN
        return any(e.get("when") == "attack_declared" for e in effs)

    @_memo
    def answers_summon(self, name: str, effect_index: int | None) -> bool | None:
        """The effect (any of the card's, when no index is given) is activated "when a monster is
        Summoned" (WIN-EVENT)."""
        if effect_index is None:
            effs = self.effects(name)
            return UNKNOWN if effs is None else any(e.get("when") == "summoned" for e in effs)
        e = self.effect(name, effect_index)
        return UNKNOWN if e is None else e.get("when") == "summoned"

    @_memo
    def is_flip_effect(self, name: str, effect_index: int | None) -> bool | None:
        e = self.effect(name, effect_index)
        if e is None or e.get("type") not in EFFECT_TYPES:
            return UNKNOWN
        return e.get("type") == "flip"

    @_memo
    def has_flip_effect(self, name: str) -> bool | None:
        effs = self.effects(name)
        if effs is None or any(e.get("type") not in EFFECT_TYPES for e in effs):
            return UNKNOWN
        return any(e.get("type") == "flip" for e in effs)

    @_memo
    def durations(self, name: str, op: str) -> frozenset[str] | None:
        """How long the card's `op` operations last by its card data: the ``until`` of each of its
        effects' `op` operations (DS-LINGERING-END); empty when it has none."""
        effs = self.effects(name)
        if effs is None:
            return UNKNOWN
        out = set()
        for i in range(len(effs)):
            ops = self.ops(name, i)
            if ops is None:
                return UNKNOWN
            out.update(str(o.get("until")) for o in _flat(ops) if o.get("op") == op)
        return frozenset(out)

    def battle_gy_triggers(self, name: str) -> list[int] | None:
        """Indexes of the card's "destroyed by battle and sent to the Graveyard" triggers."""
        effs = self.effects(name)
        if effs is None:
            return UNKNOWN
        return [i for i, e in enumerate(effs) if e.get("type") == "trigger" and e.get("when") == "destroyed_by_battle_sent_to_gy"]

    def battle_destroyed_triggers(self, name: str) -> list[int] | None:
        """Indexes of the card's "If this card is destroyed by battle" triggers that name no
        Graveyard (DS-DESTROYED-BY-BATTLE) and of its "If this card is destroyed" triggers
        (destroyed in general, DS-DESTROYED-IN-GENERAL): both due when it left the field by battle."""
        effs = self.effects(name)
        if effs is None:
            return UNKNOWN
        return [i for i, e in enumerate(effs) if e.get("type") == "trigger" and e.get("when") in ("destroyed_by_battle", "destroyed")]

    @_memo
    def damage_step_window(self, name: str, effect_index: int | None) -> frozenset[str] | None:
        """The Damage-Step sub-steps in which this activation is legal (rules DS-LEGAL-COUNTER,
        DS-LEGAL-NEGATE, DS-LEGAL-NEGATE-EFFECT, OCG-DS-NEGATE-EFFECT, DS-LEGAL-STATS, DS-LEGAL-DAMAGE-TIMING, DS-LEGAL-MANDATORY, DS-LEGAL-OPTIONAL-TRIGGER,
        DS-ILLEGAL-OTHER, DS-FLIP-EFFECT-TIMING, DS-END-TRIGGERS, DS-EXTRA-ATTACK, DS-OPPONENT-SUMMON,
        DS-REFUSED-BY-RULING), or UNKNOWN."""
        k = self.kind(name)
        e = self.effect(name, effect_index)
        if k is None or e is None:
            return UNKNOWN
        kind, subtype = k
        typ, when = e.get("type"), e.get("when")
        if typ not in EFFECT_TYPES or (when is not None and when not in WHEN_EVENT | WHEN_DAMAGE_STEP):
            return UNKNOWN
        ops = self.ops(name, effect_index)
        sts = self.statics(name)
        if ops is None or sts is None:
            return UNKNOWN
        if kind == "trap" and subtype == "counter":
            return frozenset(DAMAGE_STEPS)
        if name in DS_REFUSED_BY_RULING and typ == "activate":  # by ruling, whatever its ATK/DEF change
            return frozenset()
        if name in DS_ALLOWED_BY_RULING and typ == "activate":  # by ruling, whenever its timing arises
            return frozenset(DAMAGE_STEPS)
        if typ == "flip":
            return frozenset({"damage_step_after_calculation_2"})
        if typ == "trigger":
            if when == "after_damage_calculation" and any(o.get("op") == "extra_attack" for o in ops):
                # an effect that gives the attacking monster more attacks: "after damage
                # calculation" (1) only, never later (DS-EXTRA-ATTACK)
                return frozenset({"damage_step_after_calculation_1"})
            return frozenset(TRIGGER_STEP.get(when, ())) if when in TRIGGER_STEP else frozenset()
        # A monster's Quick Effect that negates an activation: every sub-step, damage calculation
        # included (DS-LEGAL-NEGATE).
        if kind == "monster" and typ == "quick" and any(o.get("op") == "negate_activation" for o in ops):
            return frozenset(DAMAGE_STEPS)
        # TCG only: a monster's Quick Effect that must be activated directly in response to an
        # effect's activation to negate that effect only ("Skull Meister"), every sub-step
        # (DS-LEGAL-NEGATE-EFFECT); in the OCG not for this reason alone (OCG-DS-NEGATE-EFFECT).
        negates_effect = when in WHEN_RESPONSE and any(o.get("op") == "negate_effect" for o in ops)
        if kind == "monster" and typ == "quick" and negates_effect and self.ruleset != "ocg":
            return frozenset(DAMAGE_STEPS)
        # An effect whose text names a Damage-Step timing is legal at that timing only
        # (DS-LEGAL-DAMAGE-TIMING); "the Damage Step" (Honest, TCG) up to and including damage
        # calculation.
        if when == "during_damage_calculation":
            return frozenset({"damage_step_during_calculation"})
        if when == "damage_step":
            if self.ruleset == "ocg":  # OCG-DS-CALC-SAYS-SO: up to, not during, damage calculation
                return frozenset(STAT_CHANGE_STEPS)
            return frozenset(STAT_CHANGE_STEPS) | {"damage_step_during_calculation"}
        if when == "start_of_damage_step":
            return frozenset({"damage_step_start"})
        if when == "damage_taken":  # DS-DAMAGE-RESPONSE: whenever damage is taken, in any sub-step
            return frozenset(DAMAGE_STEPS)
        if when == "before_damage_calculation":
            return frozenset(STAT_CHANGE_STEPS)
        if when == "after_damage_calculation":
            return frozenset({"damage_step_after_calculation_1", "damage_step_after_calculation_2"})
        if when == "destroyed_by_battle_sent_to_gy":
            return frozenset({"damage_step_end"})
        # An optional effect whose trigger is a monster Summoned by the opponent or to the
        # opponent's side ("Naturia Horneedle"): never in the Damage Step, an ATK/DEF modifier
        # included (DS-OPPONENT-SUMMON).
        if when == "summoned" and not e.get("mandatory", False):
            return frozenset()
        # Otherwise only a Quick-Play Spell, a Normal or Continuous Trap or a Quick Effect whose
        # own resolution changes ATK/DEF, up to the start of damage calculation (DS-LEGAL-STATS);
        # a Continuous Trap also by its continuous effect. Anything else: DS-ILLEGAL-OTHER.
        # a choice counts only if every option changes ATK/DEF: one that might not alter them
        # at resolution does not ("Half or Nothing")
        changes = any(_changes_stats(o) for o in ops)
        if kind == "trap" and subtype == "continuous":
            changes = changes or any(s.get("apply") in STAT_STATICS for s in sts)
        fast = kind == "trap" or (kind == "spell" and subtype == "quick-play") or typ == "quick"
        out: set[str] = set(STAT_CHANGE_STEPS) if changes and fast else set()
        return frozenset(out)

    @_memo
    def activated_effects(self, name: str) -> tuple[int, ...] | None:
        """The indexes of the card's effects a player activates by choice (every type but
        ``trigger`` and ``flip``, which the trigger procedure activates); UNKNOWN when a type is
        outside the vocabulary or the card is not defined."""
        effs = self.effects(name)
        if effs is None or any(e.get("type") not in EFFECT_TYPES for e in effs):
            return UNKNOWN
        return tuple(i for i, e in enumerate(effs) if e.get("type") not in ("trigger", "flip"))

    @_memo
    def unaffected_by_spells(self, name: str) -> bool | None:
        """The monster is unaffected by Spells while face-up: a Spell Card cannot target it."""
        return self._static(name, "unaffected_by_spells", "self")

    @_memo
    def once_per(self, name: str, effect_index: int | None) -> str | None | bool:
        """``"turn"`` or ``"battle"`` when the effect may be activated once per turn or once per
        battle ("Injection Fairy Lily"), False when it has no such mark; UNKNOWN without the effect."""
        e = self.effect(name, effect_index)
        if e is None:
            return UNKNOWN
        return "battle" if e.get("once_per_battle") else "turn" if e.get("once_per_turn") else False

    @_memo
    def activation(self, name: str, effect_index: int | None) -> dict | None:
        """What deciding whether this effect may be activated needs (``chain.legal-offered``), or
        UNKNOWN when a word of it is outside the vocabulary: the card's ``kind`` and ``subtype``;
        of the effect its ``type``, ``when``, ``location``, ``mandatory``, ``once`` ("turn",
        "battle" or False), ``conditions``, ``cost`` and ``targets`` (each with every field of
        docs/cards.md, defaults filled in), its ``ops`` and its ``speed`` (CH-SPEED). Read-only."""
        k = self.kind(name)
        e = self.effect(name, effect_index)
        if k is None or e is None:
            return UNKNOWN
        typ, when, loc = e.get("type"), e.get("when"), e.get("location", "field")
        if typ not in EFFECT_TYPES or (when is not None and when not in WHEN_EVENT | WHEN_DAMAGE_STEP) or loc not in LOCATIONS:
            return UNKNOWN
        conds = tuple(e.get("conditions", []))
        cost = tuple(dict(c) for c in e.get("cost", []))
        if any(c not in CONDITIONS for c in conds) or any(c.get("op") not in COSTS for c in cost):
            return UNKNOWN
        targets = []
        for t in e.get("targets", []):
            if not isinstance(t, dict) or set(t) - set(TARGET_KEYS):
                return UNKNOWN
            if t.get("zone") not in ("monster", "spell_trap", "graveyard") or t.get("side") not in ("own", "opponent", "any"):
                return UNKNOWN
            targets.append({**TARGET_DEFAULTS, **t})
        ops = self.ops(name, effect_index)
        speed = self.speed(name, effect_index)
        if ops is None or speed is None:
            return UNKNOWN
        return {
            "kind": k[0], "subtype": k[1], "type": typ, "when": when, "location": loc,
            "mandatory": bool(e.get("mandatory", False)), "once": self.once_per(name, effect_index),
            "conditions": conds, "cost": cost, "targets": tuple(targets), "ops": tuple(ops), "speed": speed,
        }  # fmt: skip

    def counter_trap(self, name: str) -> dict | None | bool:
        """What a Counter Trap answers and needs: {answers: spell|trap, lp, discard,
        opponent_only, battle_phase}; False for any other card; UNKNOWN when unreadable."""
        k = self.kind(name)
        if k is None:
            return UNKNOWN
        if k != ("trap", "counter"):
            return False
        effs = self.effects(name) or []
        if len(effs) != 1:
            return UNKNOWN
        e = effs[0]
        answers = {"trap_activated": "trap", "spell_activated": "spell"}.get(e.get("when"))
        if answers is None:
            return UNKNOWN
        spec: dict[str, Any] = {"answers": answers, "lp": 0, "discard": 0}
        for c in e.get("cost", []):
            op = c.get("op")
            if op == "pay_lp":
                spec["lp"] += int(c.get("amount", 0))
            elif op == "discard":
                spec["discard"] += int(c.get("count", 1))
            else:
                return UNKNOWN
        conds = set(e.get("conditions", []))
        if conds - {"battle_phase", "responding_to_opponent"}:
            return UNKNOWN
        spec["opponent_only"] = "responding_to_opponent" in conds
        spec["battle_phase"] = "battle_phase" in conds
        return spec

    def deck_summon_filters(self, name: str, effect_index: int) -> list[dict] | None:
        """The filters of the effect's Special Summons from the Deck (UNKNOWN if unreadable)."""
        ops = self.ops(name, effect_index)
        if ops is None:
            return UNKNOWN
        out = []
        for o in ops:
            if o.get("op") == "special_summon" and o.get("from") == "deck":
                f = dict(o.get("filter") or {})
                if set(f) - SUMMON_FILTER_KEYS or o.get("each_player"):
                    return UNKNOWN
                out.append(f)
        return out

    def matches(self, name: str, filt: dict) -> bool | None:
        c = self.defs.get(name)
        if c is None:
            return UNKNOWN
        if c.get("kind") != "monster":
            return False
        if "attribute" in filt and c.get("attribute") != filt["attribute"]:
            return False
        if "race" in filt:
            races = filt["race"] if isinstance(filt["race"], list) else [filt["race"]]
            if c.get("race") not in races:
                return False
        if "max_atk" in filt and (c.get("atk") or 0) > filt["max_atk"]:
            return False
        return True


# Sub-steps of the TCG Damage Step, in order (DS-SUBSTEPS). The flip sub-step happens only for
# a face-down target.
DAMAGE_STEPS = (
    "damage_step_start",
    "damage_step_flip",
    "damage_step_before_calculation",
    "damage_step_during_calculation",
    "damage_step_after_calculation_1",
    "damage_step_after_calculation_2",
    "damage_step_end",
)
STAT_CHANGE_STEPS = ("damage_step_start", "damage_step_flip", "damage_step_before_calculation")
# Where a triggered effect with this `when` activates (DS-SUBSTEPS, DS-END-TRIGGERS).
TRIGGER_STEP = {
    "start_of_damage_step": ("damage_step_start",),
    "before_damage_calculation": ("damage_step_before_calculation",),
    "after_damage_calculation": ("damage_step_after_calculation_1", "damage_step_after_calculation_2"),
    "destroyed_by_battle_sent_to_gy": ("damage_step_end",),
    "destroys_by_battle": ("damage_step_end",),  # DS-DESTROYS-BY-BATTLE
    "destroys_by_battle_sent_to_gy": ("damage_step_end",),
    "destroyed_by_battle": ("damage_step_end",),  # DS-DESTROYED-BY-BATTLE
    # DS-DESTROYED-IN-GENERAL: by battle at the end of the Damage Step; by a card effect after the
    # Chain that destroyed it, in whichever sub-step ("Sasuke Samurai" destroys at its start)
    "destroyed": DAMAGE_STEPS,
    "summoned": (),
    "attack_declared": (),
}
