"""The rules of the TCG Battle Phase: legal actions and transitions.

``Rules(pool).legal_actions(state)`` lists every legal choice of the player to act, in a
deterministic order; ``Rules(pool).apply(state, action)`` returns the next state and the events
the transition produced. Rule variants (OCG, older rulings) subclass :class:`Rules` and override
the hooks marked *variant hook*.

Each decision cites the rule it implements as ``# rule: ID``; the IDs are in docs/rules.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from bpcheck.model import arith
from bpcheck.model.cards import Card, CardPool, Effect, Op, TargetSpec
from bpcheck.model.events import EVENT_KINDS, Event
from bpcheck.model.ops import run_op
from bpcheck.model.state import (
    Attack,
    CardRef,
    ChainLink,
    Choice,
    Lingering,
    Mod,
    Monster,
    Players,
    Pos,
    SpellTrap,
    State,
    Step,
    Trigger,
    replace,
)

PLAYER_NAMES = ("P1", "P2")
# The options of the choice at damage calculation whether to apply an optional protection from
# destruction by battle (rule: DS-CALC-PROTECT-CHOICE); the observation's choice names the monster.
PROTECTION_OPTIONS = ("apply protection", "do not apply protection")
_new = object.__new__
_setattr = object.__setattr__


@dataclass(frozen=True, slots=True)
class Action:
    """One legal choice. ``label`` is the readable name scenarios and traces use."""

    kind: str
    player: int
    label: str
    card_uid: int | None = None
    effect: int | None = None
    targets: tuple[int, ...] = ()
    cost: tuple[int, ...] = ()
    target: int | None = None
    option: str | None = None

    def to_dict(self) -> dict:
        d = {"kind": self.kind, "player": self.player, "label": self.label}
        for k in ("card_uid", "effect", "target", "option"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.targets:
            d["targets"] = list(self.targets)
        if self.cost:
            d["cost"] = list(self.cost)
        return d


class IllegalAction(Exception):
    """apply() was given an action that legal_actions() does not offer."""


class _W:
    """A mutable working copy used while one transition is computed."""

    __slots__ = ("s", "events")

    def __init__(self, s: State) -> None:
        self.s = s
        self.events: list[Event] = []

    def emit(self, kind: str, **data) -> None:
        # ev() without its second keyword packing (an Event is two assignments)
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
        e = _new(Event)
        _setattr(e, "kind", kind)
        _setattr(e, "data", tuple(data.items()))
        self.events.append(e)


# Damage-Step sub-steps in which cards that directly change ATK/DEF may be activated:
# up to the start of damage calculation (rule: DS-LEGAL-STATS).
STAT_CHANGE_STEPS = (Step.DS_START, Step.DS_FLIP, Step.DS_BEFORE_CALC)
# The cards 002 names as refused in the Damage Step by ruling, although they change ATK/DEF
# (rule: DS-REFUSED-BY-RULING): 002 "Cards that can be activated at Damage Step", the ATK/DEF item:
# ""Scrap Sheen", "Zero Force", and "Curse of Anubis" cannot be activated during the Damage Step."
DS_REFUSED_BY_RULING = frozenset({"Scrap Sheen", "Zero Force", "Curse of Anubis"})
# The cards 002 names as allowed in the Damage Step by ruling, although their text gives no sign of it
# (rule: DS-ALLOWED-BY-RULING): ""Chthonian Blast" and "Desrook Archfiend"" ("Muko": TCG only, not in
# the pool).
DS_ALLOWED_BY_RULING = frozenset({"Chthonian Blast", "Desrook Archfiend"})

# Which "when" triggers are gathered on entering a sub-step.
STEP_TRIGGERS = {
    Step.DS_START: "start_of_damage_step",
    Step.DS_BEFORE_CALC: "before_damage_calculation",
    Step.DS_AFTER_CALC_1: "after_damage_calculation",
    Step.DS_END: "destroyed_by_battle_sent_to_gy",
}


# Continuous effects that change ATK/DEF (Rules.stat_breakdown).
STAT_KINDS = frozenset({"modify_stats", "modify_atk"})

# The queries whose answers depend on the two players alone (the field, the piles, LP): while a
# rules class keeps all of them as they are here, their answers are memoised per players pair
# (``Rules._memo``). A variant that overrides one may read anything, so it gets no memo.
FIELD_PURE = (
    "card",
    "name_of",
    "where",
    "ref",
    "_all_cards",
    "_active_statics",
    "_negated_monsters",
    "_find_negated",
    "_field_spell_named",
    "_static_applies",
    "_matches",
    "has_static",
    "static_amount",
    "stat_breakdown",
)



def _applied(atk, dfn, mods: list[tuple[str, str, str, int]]) -> tuple:
    """ATK and DEF from the card data's `atk` and `dfn` with the modifiers `mods` (source, stat,
    kind, amount) applied: an original DEF that "becomes" a value first (the base the rest applies
    to), then every addition, then the halvings; never below 0."""
    for _src, stat, kind, amount in mods:
        if kind == "set_original" and stat == "def":
            dfn = amount
    for _src, stat, kind, amount in mods:
        if kind == "add":
            if stat == "atk":
                atk = arith.add(atk, amount)
            else:
                dfn = arith.add(dfn, amount)
    for _src, stat, kind, _amount in mods:
        if kind == "halve" and stat == "atk":
            atk = arith.halve(atk)
    return arith.clamp0(atk), arith.clamp0(dfn)

class Rules:
    """The TCG rules (the reference model). Subclass for variants."""

    name = "tcg"
    # Damage-Step sub-steps where cards that directly change ATK/DEF may be activated.
    stat_change_steps = STAT_CHANGE_STEPS
    # Variant hooks as class attributes (model/rulesets.py overrides them per ruleset):
    # Damage-Step sub-steps where an effect whose text names the Damage Step ("Honest") may be
    # activated (rule: DS-LEGAL-DAMAGE-TIMING; OCG: OCG-DS-CALC-SAYS-SO).
    damage_step_timing_steps = STAT_CHANGE_STEPS + (Step.DS_DURING_CALC,)
    # A face-down attack target is flipped in its own sub-step after the start-of-Damage-Step
    # window (rule: DS-FLIP); False: at the start of "before damage calculation" (OCG-DS-FLIP-BEFORE-CALC).
    flip_in_own_substep = True
    # Only one Chain answers an attack declaration (rule: OCG-BATTLE-ONE-CHAIN); TCG: several.
    one_chain_per_attack_declaration = False
    # Only the turn player may activate Spell Speed 2 in the Start Step (rule: OCG-START-STEP-TP).
    start_step_turn_player_only = False
    # A replay the player does not attack again after is stored: the declaration does not count
    # (rule: GOAT-RPL-STORED); TCG: it counts (RPL-COUNTS).
    replay_stores_attack = False
    # A monster's Quick Effect that must be activated directly in response to an effect's
    # activation to negate that effect only ("Skull Meister") may be activated in the Damage Step
    # (rule: DS-LEGAL-NEGATE-EFFECT, TCG only); OCG: not for this reason alone (OCG-DS-NEGATE-EFFECT).
    negate_effect_in_damage_step = True

    def __init__(self, pool: CardPool) -> None:
        self.pool = pool
        # One-entry caches keyed by state identity (states are immutable): the explorer asks
        # for the legal actions of a state and then applies each of them to the same object.
        self._statics_for: State | None = None
        self._statics_val: tuple = ((), frozenset())
        self._legal_for: State | None = None
        self._legal_val: list[Action] = []
        cls = type(self)
        self._pure = all(getattr(cls, n) is getattr(Rules, n) for n in FIELD_PURE)
        self._kinds_of: dict[str, frozenset[str]] = {}

    def _memo(self, s: State) -> dict | None:
        """This rules object's memo for the players of `s` (see :class:`Players`), or None (a
        variant that overrides a FIELD_PURE query, or a hand-built state with a plain tuple)."""
        ps = s.players
        if type(ps) is not Players or not self._pure:
            return None
        om = ps._m
        if om is not None and om[0] is self:
            return om[1]
        m: dict = {}
        ps._m = (self, m)  # type: ignore[attr-defined]
        return m

    # =========================================================================================
    # Queries
    # =========================================================================================

    def card(self, name: str) -> Card:
        return self.pool[name]

    def is_terminal(self, s: State) -> bool:
        return s.over or s.step is Step.END

    def to_act(self, s: State) -> int | None:
        """The player who chooses next, or None in a terminal state."""
        if self.is_terminal(s):
            return None
        if s.choice is not None:
            return s.choice.player
        if s.attack is not None and s.attack.replay_pending and not s.chain:  # rule: RPL-AFTER-CHAIN (before anything else)
            return s.turn_player
        if s.triggers:
            return s.triggers[0].player
        return s.priority

    # -- names --------------------------------------------------------------------------------

    def where(self, s: State, uid: int) -> str:
        """A readable location, e.g. "P2 M1", "P1 S3", "P1 FZ", "P1 hand"."""
        for side, i, m in s.monsters():
            if m.uid == uid:
                return f"{PLAYER_NAMES[side]} M{i + 1}"
        for side, i, c in s.spell_traps():
            if c.uid == uid:
                return f"{PLAYER_NAMES[side]} {'FZ' if i == 5 else f'S{i + 1}'}"
        for side in (0, 1):
            p = s.players[side]
            for zone in ("hand", "graveyard", "banished", "deck"):
                for c in getattr(p, zone):
                    if c.uid == uid:
                        return f"{PLAYER_NAMES[side]} {zone}"
        return "gone"

    def name_of(self, s: State, uid: int) -> str:
        memo = self._memo(s)
        if memo is not None:
            names = memo.get("names")
            if names is None:
                names = {}
                for obj in self._all_cards(s):
                    names.setdefault(obj.uid, obj.card)
                memo["names"] = names
            n = names.get(uid)
            return f"#{uid}" if n is None else n
        for obj in self._all_cards(s):
            if obj.uid == uid:
                return obj.card
        return f"#{uid}"

    def ref(self, s: State, uid: int) -> str:
        """The card's name, made unique with its location when the name is not unique."""
        memo = self._memo(s)
        if memo is None:
            return self._ref(s, uid)
        key = ("ref", uid)
        v = memo.get(key)
        if v is None:
            v = memo[key] = self._ref(s, uid)
        return v

    def _ref(self, s: State, uid: int) -> str:
        name = self.name_of(s, uid)
        same = [o.uid for o in self._all_cards(s) if o.card == name]
        if len(same) <= 1:
            return name
        loc = self.where(s, uid)
        clash = [u for u in same if self.where(s, u) == loc]
        if len(clash) > 1:  # copies in one hand / pile: number them in uid order
            return f"{name} [{loc} #{sorted(clash).index(uid) + 1}]"
        return f"{name} [{loc}]"

    def _all_cards(self, s: State):
        for side in (0, 1):
            p = s.players[side]
            for m in p.monsters:
                if m is not None:
                    yield m
            for c in p.spells:
                if c is not None:
                    yield c
            if p.field_zone is not None:
                yield p.field_zone
            yield from p.hand
            yield from p.graveyard
            yield from p.banished
            yield from p.deck

    # -- static (continuous) effects ----------------------------------------------------------

    def _active_statics(self, s: State) -> tuple:
        """(side, source uid, source object, static) for every continuous effect that applies."""
        memo = self._memo(s)
        if memo is not None:
            v = memo.get("statics")
            if v is None:
                v = memo["statics"] = self._compute_statics(s)
            return v[0]
        if self._statics_for is not s:
            self._statics_val = self._compute_statics(s)
            self._statics_for = s
        return self._statics_val[0]

    def _field_kinds(self, s: State, memo: dict) -> frozenset[str]:
        """The kinds (``apply``) of the continuous effects of the face-up cards on the field: a
        superset of those that apply (negation only removes some), so a kind not in it applies
        to nothing. Memoised with the players (`memo`)."""
        k = memo.get("kinds")
        if k is None:
            out: set[str] = set()
            kinds = self._kinds_of  # card name -> its kinds (most cards: none, an empty set)
            for p in s.players:
                for c in p.spells:
                    if c is not None and c.face_up and not c.activating:
                        out |= kinds[c.card] if c.card in kinds else self._card_kinds(c.card)
                c = p.field_zone
                if c is not None and c.face_up and not c.activating:
                    out |= kinds[c.card] if c.card in kinds else self._card_kinds(c.card)
                for m in p.monsters:
                    if m is not None and m.pos is not Pos.FACEDOWN:
                        out |= kinds[m.card] if m.card in kinds else self._card_kinds(m.card)
            k = memo["kinds"] = frozenset(out)
        return k

    def _card_kinds(self, name: str) -> frozenset[str]:
        k = self._kinds_of[name] = frozenset(st.apply for st in self.card(name).statics)
        return k

    def _compute_statics(self, s: State) -> tuple:
        negated = self._find_negated(s)
        out = []
        for side, _i, c in s.spell_traps():
            if c.face_up and not c.activating:
                for st in self.card(c.card).statics:
                    out.append((side, c.uid, c, st))
        for side, _i, m in s.monsters():
            if m.pos.face_up and m.uid not in negated and not m.destroyed_by_battle:
                for st in self.card(m.card).statics:
                    out.append((side, m.uid, m, st))
        return (tuple(out), negated)

    def _negated_monsters(self, s: State) -> frozenset[int]:
        memo = self._memo(s)
        if memo is not None:
            self._active_statics(s)
            return memo["statics"][1]
        self._active_statics(s)
        return self._statics_val[1]

    def _find_negated(self, s: State) -> frozenset[int]:
        # rule: DS-NEGATE-BATTLE (a monster Dark Ruler Ha Des's Fiend destroyed by battle)
        out = {m.uid for _side, _i, m in s.monsters() if m.battle_negated}
        for _side, _i, c in s.spell_traps():
            if c.face_up and not c.activating and c.attached_to is not None:
                if any(st.apply == "negate_effects" for st in self.card(c.card).statics):
                    out.add(c.attached_to)
        return frozenset(out)

    def _field_spell_named(self, s: State, name: str) -> bool:
        return any(
            p.field_zone is not None and p.field_zone.face_up and p.field_zone.card == name for p in s.players
        )

    def _static_applies(self, s: State, side: int, src, st, m: Monster) -> bool:
        fs = st.get("while_field_spell")
        if fs is not None and not self._field_spell_named(s, fs):
            return False
        to = st.to
        if to == "self":
            return src.uid == m.uid
        if to == "equipped":
            return isinstance(src, SpellTrap) and src.equipped_to == m.uid
        if to == "attached":
            return isinstance(src, SpellTrap) and src.attached_to == m.uid
        if to == "all_monsters":
            if not m.pos.face_up:
                return False
            return self._matches(self.card(m.card), st.get("filter", ()))
        return False

    def _matches(self, c: Card, flt) -> bool:
        f = dict(flt)
        if "race" in f:
            races = f["race"] if isinstance(f["race"], tuple) else (f["race"],)
            if c.race not in races:
                return False
        if "attribute" in f and c.attribute != f["attribute"]:
            return False
        if "min_level" in f and (c.level or 0) < f["min_level"]:
            return False
        if "max_atk" in f and (c.atk is None or arith.gt(c.atk, f["max_atk"])):
            return False
        return True

    def has_static(self, s: State, uid: int, name: str) -> bool:
        memo = self._memo(s)
        if memo is None:
            return self._has_static(s, uid, name)
        if name not in self._field_kinds(s, memo):
            return False  # no card on the field has such an effect
        key = ("has", uid, name)
        v = memo.get(key)
        if v is None:
            v = memo[key] = self._has_static(s, uid, name)
        return v

    def _has_static(self, s: State, uid: int, name: str) -> bool:
        found = s.find_monster(uid)
        if found is None:
            return False
        _side, _i, m = found
        for side, _u, src, st in self._active_statics(s):
            if st.apply == name and self._static_applies(s, side, src, st, m):
                return True
        return False

    def static_amount(self, s: State, uid: int, name: str) -> int:
        memo = self._memo(s)
        if memo is None:
            return self._static_amount(s, uid, name)
        if name not in self._field_kinds(s, memo):
            return 0
        key = ("amount", uid, name)
        v = memo.get(key)
        if v is None:
            v = memo[key] = self._static_amount(s, uid, name)
        return v

    def _static_amount(self, s: State, uid: int, name: str) -> int:
        found = s.find_monster(uid)
        if found is None:
            return 0
        total = 0
        for side, _u, src, st in self._active_statics(s):
            if st.apply == name and self._static_applies(s, side, src, st, found[2]):
                total += st.get("amount", 0)
        return total

    def stat_breakdown(self, s: State, uid: int) -> tuple[int, int, list[tuple[str, str, str, int]]]:
        """(ATK, DEF, modifiers): each modifier is (source card, stat, kind, amount)."""
        memo = self._memo(s)
        if memo is None:
            return self._stat_breakdown(s, uid)
        key = ("stats", uid)
        v = memo.get(key)
        if v is None:
            atk, dfn, mods = self._stat_breakdown(s, uid, not self._field_kinds(s, memo).isdisjoint(STAT_KINDS))
            v = memo[key] = (atk, dfn, tuple(mods))
        return v[0], v[1], list(v[2])

    def _stat_breakdown(self, s: State, uid: int, statics: bool = True) -> tuple[int, int, list[tuple[str, str, str, int]]]:
        found = s.find_monster(uid)
        assert found is not None, uid
        side, _i, m = found
        c = self.card(m.card)
        atk, dfn = (0 if c.atk is None else c.atk), (0 if c.def_ is None else c.def_)
        mods: list[tuple[str, str, str, int]] = []
        for sside, _u, src, st in self._active_statics(s) if statics else ():
            if st.apply not in ("modify_stats", "modify_atk") or not self._static_applies(s, sside, src, st, m):
                continue
            amount = st.get("amount", 0)
            per = st.get("per_face_up_monster_you_control")
            if per is not None:
                amount = per * sum(1 for x in s.players[sside].monsters if x is not None and x.pos.face_up)
            mods.append((src.card, "atk", "add", amount))
            if st.apply == "modify_stats":
                mods.append((src.card, "def", "add", amount))
        for md in m.mods:
            mods.append((md.source, md.stat, md.kind, md.amount))
        atk, dfn = _applied(atk, dfn, mods)
        return atk, dfn, mods

    def battle_stats(self, s: State, uid: int) -> tuple[int, int, list[tuple[str, str, str, int]]]:
        """:meth:`stat_breakdown` with the continuous effects that apply during the Damage Step
        only ("Steamroid"): those depend on the step and the attack, which the players' memo of
        stat_breakdown does not see, so they are added here, unmemoised (rule: DS-START-CONT)."""
        atk, dfn, mods = self.stat_breakdown(s, uid)
        extra = self._damage_step_mods(s, uid)
        if not extra:
            return atk, dfn, mods
        # (recomputed from the base with every modifier: additions first, then halvings)
        c = self.card(self.name_of(s, uid))
        atk, dfn = (0 if c.atk is None else c.atk), (0 if c.def_ is None else c.def_)
        mods = mods + extra
        atk, dfn = _applied(atk, dfn, mods)
        return atk, dfn, mods

    def _damage_step_mods(self, s: State, uid: int) -> list[tuple[str, str, str, int]]:
        """The ATK changes of monster `uid`'s own continuous effects that apply "during the
        Damage Step only": from the start of the Damage Step, before its "at the start of the
        Damage Step" chain, to its end (rule: DS-START-CONT). "If this card attacks an
        opponent's monster" / "is attacked by an opponent's monster": the attack has a target."""
        if self.damage_step_key(s) is None:
            return []
        a = s.attack
        assert a is not None
        if uid == a.attacker:
            role = "attacks"
        elif uid == a.target:
            role = "attacked"
        else:
            return []
        out = []
        for _side, src_uid, src, st in self._active_statics(s):
            if st.apply == "damage_step_atk" and src_uid == uid and st.get("if_self") == role:
                out.append((src.card, "atk", "add", st.get("amount", 0)))
        return out

    def damage_step_key(self, s: State) -> tuple[int, int] | None:
        """(attacker, target) when a continuous effect that applies during the Damage Step only
        may apply in `s` (rule: DS-START-CONT), else None: what the players' memo of an
        observation must be told apart by."""
        a = s.attack
        if a is None or a.target is None or not s.step.in_damage_step:
            return None
        memo = self._memo(s)
        if memo is not None and "damage_step_atk" not in self._field_kinds(s, memo):
            return None
        return (a.attacker, a.target)

    def atk(self, s: State, uid: int) -> int:
        return self.battle_stats(s, uid)[0]

    def defense(self, s: State, uid: int) -> int:
        return self.battle_stats(s, uid)[1]

    # -- attacks --------------------------------------------------------------------------------

    def attackable(self, s: State, defender: int) -> frozenset[int]:
        """Monsters of `defender` that can be chosen as attack targets (rule: ATK-TARGET-IMMUNE)."""
        return frozenset(
            m.uid
            for m in s.players[defender].monsters
            # rule: ATK-TARGET-IMMUNE (a monster that cannot be attacked is no potential target)
            if m is not None and not m.destroyed_by_battle and not self.has_static(s, m.uid, "cannot_be_attacked")
        )

    def can_attack_directly(self, s: State, uid: int, defender: int) -> bool:
        # rule: ATK-DIRECT
        if self.has_static(s, uid, "direct_attack"):
            return True
        return not self.attackable(s, defender)  # rule: ATK-TARGET-IMMUNE (an unattackable monster does not block)

    def _attack_forbidden(self, s: State, m: Monster) -> bool:
        # rule: ATK-POSITION, ATK-CANNOT, STOP-ATTACK
        if m.pos is not Pos.ATK or m.cannot_attack_this_turn or m.destroyed_by_battle:
            return True
        return self.has_static(s, m.uid, "cannot_attack")

    def attack_options(self, s: State, m: Monster) -> list[int | None]:
        """Targets `m` may declare an attack at now (None = direct), ignoring timing. Being
        Summoned this turn is no obstacle (rule: ATK-SUMMON-TURN)."""
        if self._attack_forbidden(s, m):
            return []
        defender = 1 - s.turn_player
        targets = sorted(self.attackable(s, defender), key=lambda u: self._zone_key(s, u))
        cost = self.static_amount(s, m.uid, "attack_cost")
        if cost and arith.lt(s.players[s.turn_player].lp, cost, "ATK-COST"):  # rule: ATK-COST
            return []
        out: list[int | None] = []
        if self.has_static(s, m.uid, "attack_each_monster"):  # rule: ATK-EACH-MONSTER
            out.extend(t for t in targets if t not in m.declared_at)
            if m.attacks_declared == 0 and self.can_attack_directly(s, m.uid, defender):
                out.append(None)
            return out
        if m.attacks_declared >= 1 + m.extra_attacks:  # rule: ATK-ONCE, DS-EXTRA-ATTACK
            return []
        out.extend(targets)
        if self.can_attack_directly(s, m.uid, defender):
            out.append(None)
        return out

    def _zone_key(self, s: State, uid: int) -> tuple:
        f = s.find_monster(uid)
        return (f[0], f[1]) if f else (9, uid)

    def _must_attack_pending(self, s: State) -> bool:
        # rule: ATK-MUST
        for m in s.players[s.turn_player].monsters:
            if m is not None and self.has_static(s, m.uid, "must_attack") and self.attack_options(s, m):
                return True
        return False

    # =========================================================================================
    # Legal actions
    # =========================================================================================

    def legal_actions(self, s: State) -> list[Action]:
        if self._legal_for is not s:
            self._legal_val = self._legal_actions(s)
            self._legal_for = s
        return list(self._legal_val)

    def _legal_actions(self, s: State) -> list[Action]:
        if self.is_terminal(s):
            return []
        if s.choice is not None:
            return [
                Action("choose", s.choice.player, f"choose {label}", option=str(value))
                for label, value in s.choice.options
            ]
        if s.attack is not None and s.attack.replay_pending and not s.chain:  # rule: RPL-AFTER-CHAIN (before anything else)
            return self._replay_actions(s)
        if s.triggers:
            return self._trigger_actions(s)
        p = s.priority
        acts: list[Action] = []
        if s.step is Step.MAIN1:
            if p == s.turn_player and not s.chain:
                if s.turn > 1:  # rule: BP-FIRST-TURN
                    acts.append(Action("enter_bp", p, "enter Battle Phase"))
                if not (s.turn > 1 and self._must_attack_pending(s)):  # rule: BP-MUST-ENTER
                    acts.append(Action("skip_bp", p, "skip Battle Phase"))
            if s.chain:
                acts.append(Action("pass", p, "pass"))
            acts.extend(self._activations(s, p))
            return acts
        if s.step is Step.MAIN2:
            if s.chain:
                acts.append(Action("pass", p, "pass"))
            elif p == s.turn_player:
                acts.append(Action("end_turn", p, "end turn"))
                acts.extend(self._position_changes(s))
            acts.extend(self._activations(s, p))
            return acts
        # Battle Phase: an open game state with priority (rule: PRI-TP-FIRST, PRI-PASS-PASS).
        pa = self._pass_action(s, p)
        if pa is not None:
            acts.append(pa)
        if (
            s.step is Step.BP_BATTLE
            and p == s.turn_player
            and not s.chain
            and s.attack is None
            and s.passes == 0
        ):
            acts.extend(self._attack_actions(s))
        acts.extend(self._activations(s, p))
        return acts

    def _pass_action(self, s: State, p: int) -> Action | None:
        if (
            s.step is Step.BP_BATTLE
            and s.attack is None
            and not s.chain
            and p == s.turn_player
        ):
            if self._must_attack_pending(s):  # rule: ATK-MUST
                return None
            return Action("pass", p, "end Battle Phase")
        return Action("pass", p, "pass")

    def _attack_actions(self, s: State) -> list[Action]:
        # rule: ATK-DECLARE
        out = []
        tp = s.turn_player
        for i, m in enumerate(s.players[tp].monsters):
            if m is None:
                continue
            for t in self.attack_options(s, m):
                tname = "direct" if t is None else self.ref(s, t)
                out.append(Action("attack", tp, f"attack {self.ref(s, m.uid)} -> {tname}", card_uid=m.uid, target=t))
        return out

    def _replay_actions(self, s: State) -> list[Action]:
        # rule: RPL-REWIND
        a = s.attack
        assert a is not None
        f = s.find_monster(a.attacker)
        tp = s.turn_player
        out = []
        if f is not None:
            m = f[2]
            defender = 1 - tp
            each = self.has_static(s, m.uid, "attack_each_monster")
            for t in sorted(self.attackable(s, defender), key=lambda u: self._zone_key(s, u)):
                if each and t in m.declared_at and t != a.target:
                    continue
                out.append(Action("replay", tp, f"replay: attack {self.ref(s, t)}", card_uid=m.uid, target=t))
            if self.can_attack_directly(s, m.uid, defender) and not (each and m.attacks_declared > 1):
                out.append(Action("replay", tp, "replay: attack direct", card_uid=m.uid, option="direct"))
        out.append(Action("replay", tp, "replay: call off", card_uid=a.attacker, option="call_off"))
        return out

    def _position_changes(self, s: State) -> list[Action]:
        # rule: MP2-POSITION
        out = []
        tp = s.turn_player
        for m in s.players[tp].monsters:
            if m is None or m.pos is Pos.FACEDOWN:
                continue
            if m.attacks_declared or m.summoned_this_turn or m.set_this_turn or m.position_changed:
                continue
            if self.has_static(s, m.uid, "cannot_attack") and self._locks_position(s, m.uid):
                continue
            out.append(Action("change_position", tp, f"change position {self.ref(s, m.uid)}", card_uid=m.uid))
        return out

    def _locks_position(self, s: State, uid: int) -> bool:
        # Spellbinding Circle and Shadow Spell also stop battle position changes (their text).
        for _side, _i, c in s.spell_traps():
            if c.face_up and c.attached_to == uid and c.card in ("Spellbinding Circle", "Shadow Spell"):
                return True
        return False

    # -- activations ------------------------------------------------------------------------------

    def _activations(self, s: State, p: int) -> list[Action]:
        out: list[Action] = []
        for uid, c, eff, loc in self._candidate_effects(s, p):
            if eff.type in ("trigger", "flip"):
                continue  # triggers are placed on chains by the trigger procedure
            if not self._can_activate(s, p, uid, c, eff, loc):
                continue
            out.extend(self._activation_variants(s, p, uid, c, eff))
        return out

    def _candidate_effects(self, s: State, p: int):
        me = s.players[p]
        for m in me.monsters:
            if m is not None:
                c = self.card(m.card)
                for e in c.effects:
                    if e.location == "field":
                        yield m.uid, c, e, "monster"
        for i, st in enumerate(me.spells):
            if st is not None and not st.face_up:
                c = self.card(st.card)
                for e in c.effects:
                    yield st.uid, c, e, "set"
        if me.field_zone is not None and not me.field_zone.face_up:
            c = self.card(me.field_zone.card)
            for e in c.effects:
                yield me.field_zone.uid, c, e, "set"
        seen: set[str] = set()
        for h in me.hand:
            if h.card in seen:
                continue  # copies in hand offer the same choices; the lowest uid stands for them
            seen.add(h.card)
            c = self.card(h.card)
            for e in c.effects:
                if c.is_spell_trap or e.location == "hand":
                    yield h.uid, c, e, "hand"

    def spell_speed(self, c: Card, eff: Effect) -> int:
        """Spell speed from the card's category (rule: CH-SPEED)."""
        if c.kind == "trap":
            return 3 if c.subtype == "counter" else 2
        if c.kind == "spell":
            return 2 if c.subtype == "quick-play" else 1
        return 2 if eff.type == "quick" else 1

    def damage_step_allows(self, s: State, c: Card, eff: Effect) -> bool:
        """Is this activation allowed in the current Damage-Step sub-step? Derived from card
        properties only (rules: DS-LEGAL-*, DS-ILLEGAL-OTHER). Variant hook."""
        if c.kind == "trap" and c.subtype == "counter":  # rule: DS-LEGAL-COUNTER
            return True
        if c.name in DS_REFUSED_BY_RULING and eff.type == "activate":
            # rule: DS-REFUSED-BY-RULING ("Scrap Sheen", "Zero Force", and "Curse of Anubis" cannot be
            # activated during the Damage Step, although they change ATK/DEF: before DS-LEGAL-STATS)
            return False
        if c.name in DS_ALLOWED_BY_RULING and eff.type == "activate":
            # rule: DS-ALLOWED-BY-RULING ("Chthonian Blast": no clear indication in its text, allowed by
            # ruling; its timing arises in the Damage Step at its end, when a monster destroyed by
            # battle is sent to the Graveyard)
            return True
        if eff.names_damage_step_timing:  # rule: DS-LEGAL-DAMAGE-TIMING
            return True
        if eff.when == "summoned" and not eff.mandatory:
            # rule: DS-OPPONENT-SUMMON (an optional effect whose trigger is a monster Summoned by the
            # opponent or to the opponent's side, "Naturia Horneedle", cannot be activated in the
            # Damage Step; an ATK/DEF modifier of that kind neither: checked before DS-LEGAL-STATS)
            return False
        if c.is_monster and eff.type == "quick" and eff.negates_activation:
            # rule: DS-LEGAL-NEGATE (a Quick Effect that negates an activation: every sub-step,
            # damage calculation included; "Horus the Black Flame Dragon LV8")
            return True
        if c.is_monster and eff.type == "quick" and eff.negates_effect_in_response and self.negate_effect_in_damage_step:
            # rule: DS-LEGAL-NEGATE-EFFECT (TCG only: a Quick Effect that must be activated directly
            # in response to an effect's activation to negate that effect only, "Skull Meister";
            # OCG-DS-NEGATE-EFFECT: not for this reason alone)
            return True
        if s.step in self.stat_change_steps:  # rule: DS-LEGAL-STATS
            if c.kind == "trap" and c.subtype == "continuous":
                return eff.changes_stats_directly or c.static_changes_stats()
            return eff.changes_stats_directly
        return False  # rule: DS-ILLEGAL-OTHER

    def _can_activate(self, s: State, p: int, uid: int, c: Card, eff: Effect, loc: str) -> bool:
        speed = self.spell_speed(c, eff)
        is_tp = p == s.turn_player
        # Where the effect is activated from.
        if c.is_spell_trap:
            if eff.type != "activate":
                return False
            if loc == "hand":
                if c.kind == "trap":  # rule: CH-QP-HAND (Traps are Set first)
                    return False
                if c.subtype == "quick-play" and not is_tp:  # rule: CH-QP-HAND
                    return False
                if c.subtype != "field" and all(x is not None for x in s.players[p].spells):
                    return False
            elif loc == "set":
                st = s.find_spell(uid)
                assert st is not None
                if st[2].set_this_turn and (c.kind == "trap" or c.subtype == "quick-play"):
                    return False  # rule: CH-SET-TURN
            else:
                return False
        else:
            if loc == "monster":
                f = s.find_monster(uid)
                assert f is not None
                m = f[2]
                if not m.pos.face_up or m.uid in self._negated_monsters(s):
                    return False
                if m.destroyed_by_battle and not eff.mandatory:
                    return False
                if (eff.once_per_turn or eff.once_per_battle) and eff.index in m.effects_used:
                    return False
            elif loc != "hand" or eff.location != "hand":
                return False
        # Spell speed and chains (rule: CH-SPEED, CH-SPEED1).
        if speed == 1:
            if not (is_tp and s.step in (Step.MAIN1, Step.MAIN2) and not s.chain):
                return False
        elif s.chain:
            top = s.chain[-1]
            if speed < top.speed or speed < 2:
                return False
        # Damage Step legality (rule: DS-LEGAL-*).
        if s.step.in_damage_step and not self.damage_step_allows(s, c, eff):
            return False
        # One chain during damage calculation (rule: DS-DURING-CALC-ONE-CHAIN).
        if s.step is Step.DS_DURING_CALC and not s.chain and s.chain_count_in_step >= 1:
            return False
        # OCG: one Chain in response to an attack declaration (rule: OCG-BATTLE-ONE-CHAIN).
        if (
            self.one_chain_per_attack_declaration
            and s.step is Step.BP_BATTLE
            and s.attack is not None
            and not s.chain
            and s.chain_count_in_step >= 1
        ):
            return False
        # OCG: only the turn player activates Spell Speed 2 in the Start Step (rule: OCG-START-STEP-TP).
        if self.start_step_turn_player_only and s.step is Step.BP_START and not is_tp and speed == 2:
            return False
        # Timing named in the text.
        if not self._timing_ok(s, p, c, eff):
            return False
        if not all(self._condition(s, p, uid, c, eff, cond) for cond in eff.conditions):
            return False
        if not self._costs_payable(s, p, uid, eff):
            return False
        if eff.targets and not self._target_choices(s, p, uid, eff):
            return False
        if not self._resolution_possible(s, p, uid, c, eff):
            return False
        return True

    def _timing_ok(self, s: State, p: int, c: Card, eff: Effect) -> bool:
        w = eff.when
        if w is None:
            return True
        if w == "attack_declared":  # rule: WIN-ATTACK-DECL
            return s.attack is not None and any(f[0] == "attack_declared" for f in s.fresh)
        if w == "summoned":  # rule: WIN-EVENT
            return any(f[0] == "summoned" for f in s.fresh)
        if w in ("trap_activated", "spell_activated"):  # rule: WIN-COUNTER
            if not s.chain:
                return False
            top = s.chain[-1]
            want = "trap" if w == "trap_activated" else "spell"
            return top.is_card_activation and top.card_kind == want and not top.negated
        if w == "opponent_graveyard_effect_activated":  # "When a card effect is activated in your opponent's GY"
            if not s.chain:
                return False
            top = s.chain[-1]
            activated_in_gy = self.card(top.card).effects[top.effect].location == "graveyard"
            return top.controller != p and activated_in_gy and not top.negated and not top.effect_negated
        if w == "own_monster_destroyed_to_gy":  # "When a face-up monster you control is destroyed and sent to the Graveyard" (rule: WIN-EVENT)
            return any(f[0] == "own_monster_destroyed" and f[2] == p for f in s.fresh)
        if w == "damage_taken":  # rule: DS-DAMAGE-RESPONSE ("when you take damage": right after it)
            return any(f[0] == "damage_taken" and f[1] == p for f in s.fresh)
        if w == "during_damage_calculation":
            return s.step is Step.DS_DURING_CALC
        if w == "damage_step":  # rule: DS-LEGAL-DAMAGE-TIMING (TCG: up to and including damage calculation; OCG-DS-CALC-SAYS-SO)
            return s.step in self.damage_step_timing_steps
        return False

    def _battlers(self, s: State) -> tuple[int | None, int | None]:
        a = s.attack
        if a is None or a.battle_ended:
            return None, None
        return a.attacker, a.target

    def _condition(self, s: State, p: int, uid: int, c: Card, eff: Effect, cond: str) -> bool:
        a = s.attack
        att, tgt = self._battlers(s)
        if cond == "opponent_monster_attacking":
            return a is not None and s.turn_player != p and s.find_monster(a.attacker) is not None
        if cond == "self_battling":
            return uid in (att, tgt) and tgt is not None
        if cond == "self_attacked_in_attack_position":
            f = s.find_monster(uid)
            return tgt == uid and f is not None and f[2].pos is Pos.ATK
        if cond == "self_was_attacked":
            return a is not None and a.target == uid
        if cond == "self_not_declared_attack":
            f = s.find_monster(uid)
            return f is not None and f[2].attacks_declared == 0 and not f[2].cannot_attack_this_turn
        if cond == "own_light_monster_battles_monster":
            if att is None or tgt is None:
                return False
            mine = att if p == s.turn_player else tgt
            f = s.find_monster(mine)
            return f is not None and f[0] == p and self.card(f[2].card).attribute == "LIGHT" and f[2].pos.face_up
        if cond == "own_free_monster_zones_4":
            return sum(1 for m in s.players[p].monsters if m is None) >= 4
        if cond == "opponent_free_monster_zones_3":
            return sum(1 for m in s.players[1 - p].monsters if m is None) >= 3
        if cond == "battle_phase":
            return s.step.phase == "battle"
        if cond == "responding_to_opponent":
            return bool(s.chain) and s.chain[-1].controller != p
        if cond == "attacker_race_spellcaster":
            if a is None:
                return False
            f = s.find_monster(a.attacker)
            return f is not None and self.card(f[2].card).race == "Spellcaster"
        if cond == "opponent_summoned_atk_1500":
            return bool(self._bottomless_targets(s, p))
        if cond == "opponent_summoned":  # "When your opponent Special Summons a monster" (rule: WIN-EVENT)
            return bool(self._summoned_by_opponent(s, p))
        if cond == "opponent_battle_phase":  # "During your opponent's Battle Phase"
            return s.turn_player != p and s.step.phase == "battle"
        if cond in ("self_attacks_face_down_defense", "self_attacks_face_up_defense"):
            # "if this card attacks a face-down / face-up Defense Position monster" (at the start of
            # the Damage Step the target is not flipped yet: rule DS-START-TRIGGERS)
            if a is None or a.attacker != uid or a.target is None:
                return False
            f = s.find_monster(a.target)
            want = Pos.FACEDOWN if cond == "self_attacks_face_down_defense" else Pos.DEF
            return f is not None and f[2].pos is want
        if cond == "self_attacking_destroys_by_battle":  # rule: DS-EXTRA-ATTACK
            if a is None or a.attacker != uid or a.target is None:
                return False
            f = s.find_monster(a.target)
            return f is not None and f[2].destroyed_by_battle
        if cond == "self_face_up_to_resolve":  # "You must control this face-up card to activate and to resolve this effect."
            return self._controls_face_up(s, p, uid)
        raise AssertionError(f"condition {cond!r} has no implementation")

    def _summoned_by_opponent(self, s: State, p: int) -> list[int]:
        """The monsters player `p`'s opponent has just Summoned (the open state right after the
        Summon, rule WIN-EVENT), still on the field."""
        return [f[1] for f in s.fresh if f[0] == "summoned" and f[2] != p and s.find_monster(f[1]) is not None]

    def _bottomless_targets(self, s: State, p: int) -> list[int]:
        out = []
        for f in s.fresh:
            if f[0] == "summoned" and f[2] != p:
                found = s.find_monster(f[1])
                if found is not None and found[0] != p and arith.ge(self.atk(s, f[1]), 1500):
                    out.append(f[1])
        return out

    def _costs_payable(self, s: State, p: int, uid: int, eff: Effect) -> bool:
        for o in eff.cost:
            if o.op == "pay_lp" and arith.lt(s.players[p].lp, o.get("amount"), "CH-COST"):
                return False
            if o.op == "tribute" and not self._tribute_options(s, p, uid, o):
                return False
            if o.op == "discard" and len([h for h in s.players[p].hand if h.uid != uid]) < o.get("count", 1):
                return False
        return True

    def _tribute_options(self, s: State, p: int, uid: int | None = None, o: Op | None = None) -> list[int]:
        """The monsters player `p` may Tribute for a cost `o` of card `uid`: their own, not destroyed
        by battle; with `archetype`, `face = "up"`, `except_self` those the text names ("Tribute 1
        face-up "Naturia" monster you control, except this card")."""
        out = []
        for m in s.players[p].monsters:
            if m is None or m.destroyed_by_battle:
                continue
            if o is not None:
                if o.get("except_self") and m.uid == uid:
                    continue
                if o.get("face") == "up" and not m.pos.face_up:
                    continue
                if o.get("archetype") is not None and (not m.pos.face_up or o.get("archetype") not in self.card(m.card).archetypes):
                    continue
            out.append(m.uid)
        return out

    def _resolution_possible(self, s: State, p: int, uid: int, c: Card, eff: Effect) -> bool:
        """Cards that cannot do anything may not be activated (e.g. no legal card in the Deck)."""
        for o in eff.ops:
            if o.op == "special_summon" and o.get("from") == "deck":
                if not o.get("each_player") and not self._deck_choices(s, p, o):
                    return False
                if all(m is not None for m in s.players[p].monsters):
                    return False
            if o.op == "special_summon" and o.get("what") == "target":
                if all(m is not None for m in s.players[p].monsters):
                    return False
            if o.op == "take_control" and all(m is not None for m in s.players[p].monsters):
                return False
            if o.op in ("negate_activation", "negate_effect") and not s.chain:
                return False
            # "Change all Effect Monsters on the field ..." ("Curse of Anubis") with none face-up, or
            # "Destroy the 1 face-up monster on the field that has the lowest ATK" with none face-up
            face_up = [m for _side, _i, m in s.monsters() if m.pos.face_up and not m.destroyed_by_battle]
            if o.get("what") == "face_up_effect_monsters" and not any(self.card(m.card).is_effect_monster for m in face_up):
                return False
            if o.op == "destroy_lowest_atk" and not face_up:
                return False
        return True

    def _deck_choices(self, s: State, p: int, o) -> list[CardRef]:
        flt = o.get("filter", ())
        return [d for d in s.players[p].deck if self.card(d.card).is_monster and self._matches(self.card(d.card), flt)]

    # -- targets ---------------------------------------------------------------------------------

    def _target_pool(self, s: State, p: int, uid: int, spec: TargetSpec, c: Card) -> list[int]:
        out: list[int] = []
        sides = {"own": (p,), "opponent": (1 - p,), "any": (0, 1)}[spec.side]
        if spec.zone == "monster":
            for side in sides:
                for m in s.players[side].monsters:
                    if m is None or m.destroyed_by_battle:  # rule: DS-NO-TARGET-DESTROYED
                        continue
                    if spec.face == "up" and not m.pos.face_up:
                        continue
                    if spec.attacker_only and (s.attack is None or s.attack.attacker != m.uid):
                        continue
                    mc = self.card(m.card)
                    if spec.effect_monster and not mc.is_effect_monster:
                        continue
                    if spec.can_flip_down and mc.is_token:
                        continue  # rule: CARD-TOKEN (a token cannot be turned face-down)
                    if c.kind == "spell" and self.has_static(s, m.uid, "unaffected_by_spells"):
                        continue
                    out.append(m.uid)
        elif spec.zone == "spell_trap":
            for side in sides:
                for i, st in enumerate(s.players[side].spells):
                    if st is not None and st.uid != uid:
                        out.append(st.uid)
                fz = s.players[side].field_zone
                if fz is not None and fz.uid != uid:
                    out.append(fz.uid)
        elif spec.zone == "graveyard":
            for side in sides:
                for g in s.players[side].graveyard:
                    gc = self.card(g.card)
                    if spec.kind == "monster" and not gc.is_monster:
                        continue
                    if spec.kind == "spell" and gc.kind != "spell":
                        continue
                    if spec.race is not None and gc.race != spec.race:
                        continue
                    if spec.archetype is not None and spec.archetype not in gc.archetypes:
                        continue
                    out.append(g.uid)
        return out

    def _target_choices(self, s: State, p: int, uid: int, eff: Effect, c: Card | None = None) -> list[tuple[int, ...]]:
        c = c or self.card(self.name_of(s, uid))
        choices: list[tuple[int, ...]] = [()]
        for spec in eff.targets:
            pool = self._target_pool(s, p, uid, spec, c)
            new: list[tuple[int, ...]] = []
            for prev in choices:
                avail = [u for u in pool if u not in prev]
                for k in range(max(spec.minimum, 1), spec.count + 1):
                    for combo in combinations(avail, k):
                        new.append(prev + combo)
            choices = new
        return choices

    def _activation_variants(self, s: State, p: int, uid: int, c: Card, eff: Effect) -> list[Action]:
        target_sets = self._target_choices(s, p, uid, eff, c) if eff.targets else [()]
        cost_sets: list[tuple[int, ...]] = [()]
        for o in eff.cost:
            if o.op == "tribute":
                cost_sets = [cs + (t,) for cs in cost_sets for t in self._tribute_options(s, p, uid, o)]
            elif o.op == "discard":
                hand = [h.uid for h in s.players[p].hand if h.uid != uid]
                cost_sets = [cs + (h,) for cs in cost_sets for h in hand]
        out = []
        base = f"activate {self.ref(s, uid)}"
        if len([e for e in c.effects if e.type == eff.type]) > 1 and eff.label:
            base += f" ({eff.label})"
        for cs in cost_sets:
            for ts in target_sets:
                if set(cs) & set(ts):
                    continue  # a tributed monster cannot also be the target
                label = base
                if cs:
                    label += " [" + ", ".join(self.ref(s, x) for x in cs) + "]"
                if ts:
                    label += " -> " + ", ".join(self.ref(s, x) for x in ts)
                out.append(Action("activate", p, label, card_uid=uid, effect=eff.index, targets=ts, cost=cs))
        return out

    # -- triggers ---------------------------------------------------------------------------------

    def _trigger_actions(self, s: State) -> list[Action]:
        t = s.triggers[0]
        c = self.card(t.card)
        eff = c.effects[t.effect]
        out: list[Action] = []
        if eff.targets:
            for ts in self._target_choices(s, t.player, t.card_uid, eff, c):
                out.append(
                    Action(
                        "trigger",
                        t.player,
                        f"activate {self.ref(s, t.card_uid)} -> " + ", ".join(self.ref(s, x) for x in ts),
                        card_uid=t.card_uid,
                        effect=t.effect,
                        targets=ts,
                    )
                )
        else:
            out.append(Action("trigger", t.player, f"activate {self.ref(s, t.card_uid)}", card_uid=t.card_uid, effect=t.effect))
        if not t.mandatory:
            out.append(Action("decline", t.player, f"decline {self.ref(s, t.card_uid)}", card_uid=t.card_uid, effect=t.effect))
        return out

    # =========================================================================================
    # Transitions
    # =========================================================================================

    def apply(self, s: State, action: Action) -> tuple[State, list[Event]]:
        legal = self.legal_actions(s)
        if action not in legal:
            raise IllegalAction(f"{action.label!r} is not a legal action here")
        w = _W(s)
        k = action.kind
        if k == "enter_bp":
            self._enter_bp(w)
        elif k == "skip_bp":
            self._change_step(w, Step.END)  # rule: BP-OPTIONAL
        elif k == "end_turn":
            self._change_step(w, Step.END)  # rule: BP-MP2
        elif k == "pass":
            self._pass(w, action.player)
        elif k == "attack":
            self._declare_attack(w, action)
        elif k == "replay":
            self._replay_choice(w, action)
        elif k in ("activate", "trigger"):
            self._activate(w, action)
        elif k == "decline":
            w.s = replace(w.s, triggers=w.s.triggers[1:])
            w.emit("trigger_declined", card=self.name_of(s, action.card_uid), card_uid=action.card_uid, player=action.player)
            self._after_triggers_placed(w)
        elif k == "choose":
            self._choose(w, action)
        elif k == "change_position":
            self._manual_position(w, action)
        else:  # pragma: no cover - legal_actions only makes the kinds above
            raise IllegalAction(k)
        return w.s, w.events

    # -- phases and steps -----------------------------------------------------------------------

    def _change_step(self, w: _W, to: Step) -> None:
        frm = w.s.step
        w.s = replace(w.s, step=to, priority=w.s.turn_player, passes=0, fresh=(), chain_count_in_step=0)  # rule: PRI-TP-FIRST, OCG-BATTLE-TP-FIRST
        w.emit("phase_changed", **{"from": frm.value, "to": to.value})
        if frm.phase == "battle" and to.phase != "battle":
            self._expire_mods(w, "end_of_battle_phase")  # "until the end of the Battle Phase"

    def end_battle_phase(self, w: _W) -> None:
        """An effect ended the Battle Phase ("Half or Nothing"), and its chain has resolved: from
        the Start Step or the Battle Step play goes to the End Step (rule: BP-END-STEP, where
        players still get priority); an attack in progress stops (its monster cannot attack
        again: the Battle Phase is over); in the End Step nothing is left to end. Variant hook."""
        kept = tuple(l for l in w.s.lingering if l.until != "end_of_chain")
        w.s = replace(w.s, lingering=kept)
        w.emit("effect_expired", what="lingering", until="end_of_chain")
        s = w.s
        if s.step not in (Step.BP_START, Step.BP_BATTLE):
            return
        a = s.attack
        if a is not None:
            f = s.find_monster(a.attacker)
            if f is not None:
                self._put_monster(w, f[0], f[1], replace(f[2], cannot_attack_this_turn=True))
            w.s = replace(w.s, attack=None)
            w.emit("attack_stopped", attacker_uid=a.attacker, reason="battle_phase_ended")
        self._change_step(w, Step.BP_END)

    def _enter_bp(self, w: _W) -> None:
        self._change_step(w, Step.BP_START)  # rule: BP-STEPS, BP-START-STEP

    def _pass(self, w: _W, p: int) -> None:
        s = w.s
        w.emit("passed", player=p)
        passes = s.passes + 1
        if passes < 2:
            w.s = replace(s, passes=passes, priority=1 - p)
            return
        # Two passes in succession (rule: PRI-PASS-PASS).
        if s.chain:
            self._resolve_chain(w)
            return
        self._advance(w)

    def _advance(self, w: _W) -> None:
        s = w.s
        st = s.step
        if st is Step.BP_START:
            self._change_step(w, Step.BP_BATTLE)
        elif st is Step.BP_BATTLE:
            a = s.attack
            if a is None:
                self._change_step(w, Step.BP_END)  # rule: BP-END-STEP
            elif any(f[0] == "attack_declared" for f in s.fresh):
                # Both passed after the declaration: the window closes, the Battle Step goes on
                # (rule: WIN-ATTACK-DECL, WIN-BEFORE-DS).
                w.s = replace(s, fresh=(), passes=0, priority=s.turn_player)
            else:
                self._enter_damage_step(w)
        # The Damage Step's sub-steps in order, each left when both players pass with an empty
        # chain (rule: DS-SUBSTEPS).
        elif st is Step.DS_START:
            if s.attack is not None and s.attack.target_was_facedown and not s.attack.battle_ended:
                if self.flip_in_own_substep:
                    self._change_step(w, Step.DS_FLIP)
                    self._flip_target(w)
                else:  # rule: OCG-DS-FLIP-BEFORE-CALC (flipped first thing in "before damage calculation")
                    self._change_step(w, Step.DS_BEFORE_CALC)
                    self._flip_target(w)
                    self._gather_triggers(w, "before_damage_calculation")
            else:
                self._change_step(w, Step.DS_BEFORE_CALC)
                self._gather_triggers(w, "before_damage_calculation")
        elif st is Step.DS_FLIP:
            self._change_step(w, Step.DS_BEFORE_CALC)
            self._gather_triggers(w, "before_damage_calculation")
        elif st is Step.DS_BEFORE_CALC:
            self._change_step(w, Step.DS_DURING_CALC)
        elif st is Step.DS_DURING_CALC:
            self._leave_during_calc(w)
        elif st is Step.DS_AFTER_CALC_1:
            self._change_step(w, Step.DS_AFTER_CALC_2)
            self._gather_flip_triggers(w)
        elif st is Step.DS_AFTER_CALC_2:
            self._change_step(w, Step.DS_END)
            sent_from = len(w.events)
            self._send_battle_destroyed(w)
            if not w.s.over:
                # rule: DS-END-TRIGGERS (at the end of the Damage Step, after the sending to the Graveyard)
                # rule: DS-DESTROYS-BY-BATTLE (and the triggers of the monster that destroyed one)
                self._gather_triggers(w, "destroyed_by_battle_sent_to_gy")
                moved = [e for e in w.events[sent_from:] if e.kind == "card_moved" and e["reason"] == "battle"]
                extra = self._destroyer_triggers(w.s, moved)
                # rule: DS-DESTROYED-BY-BATTLE ("If this card is destroyed by battle": wherever it went)
                extra += self._destroyed_by_battle_triggers(w.s, moved)
                # rule: DS-DESTROYED-IN-GENERAL ("If this card is destroyed", destroyed by battle)
                extra += self._destroyed_in_battle_triggers(w.s, moved)
                if extra:
                    self._queue_triggers(w, list(w.s.triggers) + extra)
        elif st is Step.DS_END:
            self._leave_damage_step(w)
        elif st is Step.BP_END:
            self._change_step(w, Step.MAIN2)  # rule: BP-MP2
        else:  # pragma: no cover
            raise AssertionError(f"no advance from {st}")

    # -- attacks ---------------------------------------------------------------------------------

    def _declare_attack(self, w: _W, action: Action) -> None:
        s = w.s
        tp = s.turn_player
        uid = action.card_uid
        assert uid is not None
        side, i, m = s.find_monster(uid)  # type: ignore[misc]
        cost = self.static_amount(s, uid, "attack_cost")
        defender = 1 - tp
        pot = self.attackable(s, defender)
        direct_legal = self.can_attack_directly(s, uid, defender)
        m2 = replace(
            m,
            attacks_declared=m.attacks_declared + 1,
            declared_at=m.declared_at | ({action.target} if action.target is not None else frozenset()),
            declared_direct=m.declared_direct or action.target is None,
        )
        self._put_monster(w, side, i, m2)
        tgt_fd = False
        if action.target is not None:
            tf = w.s.find_monster(action.target)
            tgt_fd = tf is not None and tf[2].pos is Pos.FACEDOWN
        w.s = replace(
            w.s,
            attack=Attack(uid, action.target, pot, direct_legal, target_was_facedown=tgt_fd),
            fresh=(("attack_declared", uid),),
            passes=0,
            priority=tp,
            chain_count_in_step=0,
        )
        w.emit(
            "attack_declared",
            attacker=m.card,
            attacker_uid=uid,
            target=None if action.target is None else self.name_of(s, action.target),
            target_uid=action.target,
            player=tp,
        )
        if cost:  # rule: ATK-COST
            self._pay_lp(w, tp, cost)
            w.emit("attack_cost_paid", attacker_uid=uid, player=tp, amount=cost)
            self._check_lp(w)  # rule: LP-ZERO (a cost that takes the LP to 0 ends the duel too)
            if w.s.over:
                return
        # "Each of your opponent's monsters that conducts an attack while this card is face-up"
        # (e.g. "Mirror Wall"): the attacker's ATK is halved as long as the card stays.
        for side, src_uid, src, st in self._active_statics(w.s):
            if st.apply == "halve_attackers" and side == defender:
                self.add_mod(w, uid, Mod("atk", "halve", 0, src.card, src_uid, "while_source_on_field"))

    def _replay_choice(self, w: _W, action: Action) -> None:
        s = w.s
        a = s.attack
        assert a is not None
        tp = s.turn_player
        if action.option == "call_off":
            # rule: RPL-REWIND, RPL-COUNTS (the declaration still counts)
            if self.replay_stores_attack:  # rule: GOAT-RPL-STORED (the attack is stored: not counted)
                side, i, m = s.find_monster(a.attacker)  # type: ignore[misc]
                self._put_monster(w, side, i, replace(m, attacks_declared=m.attacks_declared - 1))
                s = w.s
            w.s = replace(s, attack=None, fresh=(), passes=0, priority=tp)
            w.emit("replay_choice", attacker_uid=a.attacker, choice="call_off", target_uid=None)
            w.emit("attack_ended", attacker_uid=a.attacker, reason="called_off")
            return
        target = action.target if action.option != "direct" else None
        side, i, m = s.find_monster(a.attacker)  # type: ignore[misc]
        m2 = replace(
            m,
            declared_at=m.declared_at | ({target} if target is not None else frozenset()),
            declared_direct=m.declared_direct or target is None,
        )
        self._put_monster(w, side, i, m2)  # rule: RPL-NO-COST, RPL-COUNTS (no new count, no cost)
        defender = 1 - tp
        tgt_fd = False
        if target is not None:
            tf = w.s.find_monster(target)
            tgt_fd = tf is not None and tf[2].pos is Pos.FACEDOWN
        w.s = replace(
            w.s,
            attack=Attack(
                a.attacker,
                target,
                self.attackable(w.s, defender),
                self.can_attack_directly(w.s, a.attacker, defender),
                target_was_facedown=tgt_fd,
            ),
            # Continuing is not a new attack declaration: no "when an attack is declared"
            # window opens again (rule: RPL-NEW-DECLARATION).
            fresh=(),
            passes=0,
            priority=tp,
            chain_count_in_step=0,
        )
        w.emit(
            "replay_choice",
            attacker_uid=a.attacker,
            choice="target" if target is not None else "direct",
            target_uid=target,
            target=None if target is None else self.name_of(w.s, target),
        )

    def _check_attack_after_chain(self, w: _W) -> None:
        """After a whole chain resolved in the Battle Step: stop or replay? (rules:
        RPL-AFTER-CHAIN, STOP-AFTER-CHAIN, RPL-TRIGGER, RPL-NOT-STATS, RPL-OWN-SIDE)."""
        s = w.s
        a = s.attack
        if a is None or a.replay_pending:
            return
        tp = s.turn_player
        f = s.find_monster(a.attacker)
        if f is None or f[0] != tp:
            w.s = replace(s, attack=None, fresh=())
            w.emit("attack_stopped", attacker_uid=a.attacker, reason="attacker_left_field")
            return
        side, i, m = f
        # rule: STOP-AFTER-CHAIN (judged once, from the state after the whole chain; before the
        # replay check, so a stop wins over a replay)
        if m.cannot_attack_this_turn or m.pos is not Pos.ATK or self.has_static(s, m.uid, "cannot_attack"):
            # rule: STOP-ATTACK (not a replay; the monster cannot attack again this turn)
            self._put_monster(w, side, i, replace(m, cannot_attack_this_turn=True))
            w.s = replace(w.s, attack=None, fresh=())
            w.emit("attack_stopped", attacker_uid=a.attacker, reason="cannot_attack")
            return
        reason = self.replay_reason(s, a)
        if reason is not None:
            # rule: RPL-COMPLETED (only the current attack replays: same step, other attacks untouched)
            w.s = replace(w.s, attack=replace(a, replay_pending=True), fresh=())
            w.emit("replay", attacker_uid=a.attacker, reason=reason)

    def replay_reason(self, s: State, a: Attack) -> str | None:
        """Why a replay happens after a chain, or None (rule: RPL-TRIGGER). Variant hook."""
        defender = 1 - s.turn_player
        now = self.attackable(s, defender)  # rule: RPL-OWN-SIDE (only the attacked side's monsters)
        # rules: RPL-NOT-STATS, RPL-NOT-POSITION (which monsters are potential targets, not their
        # ATK/DEF or battle position)
        if now != a.potential_targets:
            return "targets_changed"
        if a.target is None and not self.can_attack_directly(s, a.attacker, defender):
            return "attack_illegal"
        if a.target is not None and a.target not in now:
            return "attack_illegal"
        return None

    def _enter_damage_step(self, w: _W) -> None:
        a = w.s.attack
        assert a is not None
        tf = w.s.find_monster(a.target) if a.target is not None else None
        fd = tf is not None and tf[2].pos is Pos.FACEDOWN  # rule: RPL-NOT-POSITION (flipped face-down: flipped up again)
        w.s = replace(w.s, attack=replace(a, target_was_facedown=fd))
        self._change_step(w, Step.DS_START)
        # rule: DS-START-TRIGGERS ("at the start of the Damage Step": one Chain, before the flip)
        self._gather_triggers(w, "start_of_damage_step")

    def _flip_target(self, w: _W) -> None:
        # rule: DS-FLIP (flipped face-up; not a Flip Summon)
        a = w.s.attack
        assert a is not None and a.target is not None
        f = w.s.find_monster(a.target)
        if f is None:
            return
        side, i, m = f
        self._put_monster(w, side, i, replace(m, pos=Pos.DEF, flipped_by_battle=True))
        w.emit("flipped", card=m.card, card_uid=m.uid, by="battle", face_up=True)

    def _battle_ended_early(self, w: _W) -> bool:
        """In the Damage Step, a battler that left the field (or changed sides) ends the battle
        with no damage calculation (rules: RPL-BATTLE-STEP-ONLY, DS-BATTLER-LEAVES)."""
        a = w.s.attack
        if a is None:
            return True
        if a.battle_ended:
            return True
        tp = w.s.turn_player
        fa = w.s.find_monster(a.attacker)
        bad = fa is None or fa[0] != tp
        if a.target is not None:
            ft = w.s.find_monster(a.target)
            # rule: ATK-TARGET-IMMUNE (a target that cannot be attacked once flipped in the Damage
            # Step, e.g. Command Knight, does not end the battle: only leaving or changing sides does)
            bad = bad or ft is None or ft[0] == tp
        if bad:
            w.s = replace(w.s, attack=replace(a, battle_ended=True))
            w.emit("battle_ended_early", attacker_uid=a.attacker, reason="battler_left_field")
        return bad

    def _lingering_for(self, s: State, what: str, player: int) -> bool:
        return any(l.what == what and l.player == player for l in s.lingering)

    def _leave_during_calc(self, w: _W) -> None:
        """Damage calculation, once the controller of each monster it would destroy that has an
        optional protection from destruction by battle chose to apply it or not (002:122: "you
        choose to apply it or not at this time": rule DS-CALC-PROTECT-CHOICE)."""
        ask = self._protection_to_choose(w.s)
        if ask is not None:
            side, uid = ask
            w.s = replace(
                w.s,
                choice=Choice(side, "battle_protection", ((PROTECTION_OPTIONS[0], 1), (PROTECTION_OPTIONS[1], 0)), None, uid),
            )
            return
        self._damage_calculation(w)
        if not w.s.over:
            self._change_step(w, Step.DS_AFTER_CALC_1)
            # rule: DS-DAMAGE-RESPONSE (responses to battle damage: after damage calculation (1))
            w.s = replace(w.s, fresh=tuple(self._damage_windows(w, [])))
            self._gather_triggers(w, "after_damage_calculation")

    def _protection_to_choose(self, s: State) -> tuple[int, int] | None:
        """(controller, uid) of the next monster damage calculation would destroy whose optional
        protection from destruction by battle ("Once per turn, this card cannot be destroyed by
        battle": Gyroid, not yet applied this turn) its controller has not yet chosen to apply or
        not in this battle, or None (rule: DS-CALC-PROTECT-CHOICE). Variant hook."""
        a = s.attack
        if a is None or a.battle_ended or a.target is None:
            return None
        tp = s.turn_player
        fa, ft = s.find_monster(a.attacker), s.find_monster(a.target)
        if fa is None or ft is None or fa[0] != tp or ft[0] == tp:
            return None
        t = ft[2]
        atk_a = self.atk(s, a.attacker)
        value = self.atk(s, t.uid) if t.pos is Pos.ATK else self.defense(s, t.uid)
        atk_a, value = self._calculation_continuous(s, a.attacker, t.uid, atk_a, value)
        destroy, _damage = self.battle_result(tp, a.attacker, atk_a, t.uid, t.pos, value)
        decided = {uid for uid, _applied in a.protections}
        for uid in destroy:
            f = s.find_monster(uid)
            if f is None or uid in decided or self._lingering_for(s, "battle_indestructible", f[0]):
                continue
            if self._optional_protection(s, f[2]):
                return f[0], uid
        return None

    def _optional_protection(self, s: State, m: Monster) -> bool:
        """Monster `m` is face-up with an optional protection from destruction by battle it has
        not applied this turn (rule: DS-CALC-PROTECT-CHOICE)."""
        return (
            m.pos is not Pos.FACEDOWN
            and not m.battle_protection_used
            and self.has_static(s, m.uid, "battle_indestructible_once_per_turn")
        )

    def _damage_calculation(self, w: _W) -> None:
        # rules: DS-CALC-ATK-ATK, DS-CALC-ATK-DEF, DS-CALC-DIRECT, DS-DESTROYED-MARK
        if self._battle_ended_early(w):
            return
        s = w.s
        a = s.attack
        assert a is not None
        tp = s.turn_player
        atk_a = self.atk(s, a.attacker)
        if a.target is None:
            w.emit("damage_calculation", attacker_uid=a.attacker, target_uid=None, attacker_atk=atk_a, target_value=None, target_position=None)
            destroy, damage = self.battle_result(tp, a.attacker, atk_a, None, None, None)
        else:
            _side, _i, t = s.find_monster(a.target)  # type: ignore[misc]
            value = self.atk(s, t.uid) if t.pos is Pos.ATK else self.defense(s, t.uid)
            atk_a, value = self._calculation_continuous(s, a.attacker, t.uid, atk_a, value)
            w.emit("damage_calculation", attacker_uid=a.attacker, target_uid=t.uid, attacker_atk=atk_a, target_value=value, target_position=t.pos.value)
            destroy, damage = self.battle_result(tp, a.attacker, atk_a, t.uid, t.pos, value)
        damage = self._damage_redirected(s, a.attacker, a.target, damage)
        for player, amount in damage:
            if arith.le(amount, 0) or self._lingering_for(w.s, "no_battle_damage", player):
                continue
            self._lose_lp(w, player, amount)
            w.emit("battle_damage", player=player, amount=amount, attacker_uid=a.attacker, target_uid=a.target)
        banishers = self._battle_banishers(s, a.attacker, a.target)
        for uid in destroy:
            f = w.s.find_monster(uid)
            if f is None:
                continue
            side, i, m = f
            if self._lingering_for(w.s, "battle_indestructible", side):
                continue
            if (uid, True) in a.protections:
                # rule: DS-CALC-PROTECT-CHOICE (its controller chose to apply it: used for this turn)
                self._put_monster(w, side, i, replace(m, battle_protection_used=True))
                continue
            # rule: DS-BANISH-BATTLE (whether it will be banished is decided now)
            banish = any(b != uid and bside != side for b, bside in banishers)
            # rule: DS-NEGATE-BATTLE (whether its effects are negated is decided now)
            other = a.target if uid == a.attacker else a.attacker
            neg = other is not None and self._negates_destroyed_by(s, other, side)
            self._put_monster(w, side, i, replace(m, destroyed_by_battle=True, banish_when_sent=banish, battle_negated=neg))
            w.emit("destroyed_by_battle", card=m.card, card_uid=uid, controller=side)
        w.s = replace(w.s, attack=replace(w.s.attack, calculated=True))  # type: ignore[arg-type]
        # Modifiers lasting "during damage calculation only" end now.
        self._expire_mods(w, "damage_calculation")
        # A monster flipped by the attack whose continuous effect destroys itself, and which
        # survived the battle, is destroyed by its effect now (rule: DS-SELF-DESTROY).
        self._cleanup(w)
        self._check_lp(w)

    def _calculation_continuous(self, s: State, attacker: int, target: int, atk_a: int, value: int) -> tuple[int, int]:
        """The attacker's ATK and the target's ATK or DEF with the continuous effects applied at
        damage calculation only, after its chain ("Gaia Plate the Earth Giant": "Halve the ATK
        and DEF of any monster that battles with this card"): (rule: DS-CALC-CONT)."""
        for _side, src_uid, _src, st in self._active_statics(s):
            if st.apply != "halve_battler_at_calculation":
                continue
            if src_uid == attacker:
                value = arith.halve(value)
            elif src_uid == target:
                atk_a = arith.halve(atk_a)
        return atk_a, value

    def _negates_destroyed_by(self, s: State, destroyer: int, victim_side: int) -> bool:
        """A monster of `victim_side` destroyed by battle with monster `destroyer` has its effects
        negated: `destroyer` is a Fiend controlled by the controller of a face-up "Dark Ruler Ha
        Des" ("Negate the effects of monsters destroyed by battle with Fiend-Type monsters you
        control"), as damage calculation finds them (rule: DS-NEGATE-BATTLE)."""
        f = s.find_monster(destroyer)
        if f is None or f[0] == victim_side or self.card(f[2].card).race != "Fiend":
            return False
        return any(st.apply == "negate_destroyed_by_own_fiends" and side == f[0] for side, _u, _src, st in self._active_statics(s))

    def _battle_banishers(self, s: State, attacker: int, target: int | None) -> list[tuple[int, int]]:
        """(uid, controller) of each battler whose effect banishes an opponent's monster it
        destroys by battle ("Dark Magician of Chaos"), as damage calculation finds them (rule:
        DS-BANISH-BATTLE)."""
        return [
            (src_uid, side)
            for side, src_uid, _src, st in self._active_statics(s)
            if st.apply == "banish_destroyed_by_battle" and src_uid in (attacker, target)
        ]

    def _damage_redirected(self, s: State, attacker: int, target: int | None, damage: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The battle damage [(player, amount)] with the continuous effects applied as it is
        inflicted: "Your opponent takes any battle damage you would have taken from battles
        involving this card instead" (Amazoness Swords Woman) gives its controller's battle
        damage to the opponent (rule: DS-DAMAGE-CONT)."""
        redirect = {
            side
            for side, src_uid, _src, st in self._active_statics(s)
            if st.apply == "battle_damage_to_opponent" and src_uid in (attacker, target)
        }
        if not redirect:
            return damage
        out: dict[int, int] = {}
        for player, amount in damage:
            to = 1 - player if player in redirect else player
            out[to] = arith.add(out.get(to, 0), amount)
        return sorted(out.items())

    def battle_result(
        self, tp: int, attacker: int, atk_a: int, target: int | None, pos: Pos | None, value: int | None
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Monsters destroyed by battle and battle damage [(player, amount)] for one damage
        calculation (rules: DS-CALC-ATK-ATK, DS-CALC-ATK-DEF, DS-CALC-DIRECT). Variant hook."""
        opp = 1 - tp
        if target is None:
            return [], [(opp, atk_a)]
        assert value is not None
        if pos is Pos.ATK:
            if arith.gt(atk_a, value, "DS-CALC-ATK-ATK"):
                return [target], [(opp, arith.sub(atk_a, value))]
            if arith.lt(atk_a, value, "DS-CALC-ATK-ATK"):
                return [attacker], [(tp, arith.sub(value, atk_a))]
            return ([attacker, target] if arith.gt(atk_a, 0, "DS-CALC-ATK-ATK") else []), []
        if arith.gt(atk_a, value, "DS-CALC-ATK-DEF"):
            return [target], []
        if arith.lt(atk_a, value, "DS-CALC-ATK-DEF"):
            return [], [(tp, arith.sub(value, atk_a))]
        return [], []

    def _send_battle_destroyed(self, w: _W) -> None:
        # rules: DS-DESTROYED-MARK, DS-SEND-OWNER-GY, CARD-TOKEN
        marked = [(side, i, m) for side, i, m in w.s.monsters() if m.destroyed_by_battle]
        for side, i, m in marked:
            instead = self._destroyed_instead(w.s, m.uid)
            if instead is not None:
                # rule: DS-INSTEAD (done now, when destroyed-by-battle monsters are sent to the
                # Graveyard: the monster stays, no longer destroyed by battle)
                self._put_monster(w, side, i, replace(m, destroyed_by_battle=False, banish_when_sent=False, battle_negated=False))
                self.destroy(w, instead, by="effect")
                continue
            # rule: DS-BANISH-BATTLE (decided at damage calculation; its own "banish it instead")
            dest = "banished" if m.banish_when_sent else "graveyard"
            self._move_from_field(w, m.uid, dest, reason="battle")
            if m.battle_negated:
                # rule: DS-NEGATE-BATTLE (negated in the Graveyard too: its "destroyed by battle" triggers)
                w.s = replace(w.s, fresh=w.s.fresh + (("battle_negated", m.uid),))
        self._cleanup(w)

    def _banishes_itself(self, s: State, m) -> bool:
        """"If this face-up card would leave the field, banish it instead": a continuous effect
        that changes where the card goes, so it applies to the monster destroyed by battle too
        (002: "except those ... that change where they go when they're destroyed"), unless its
        effects are negated (rule: DS-BANISH-BATTLE)."""
        if not m.pos.face_up or m.uid in self._find_negated(s):
            return False
        return any(st.apply == "banish_self_leaving_field" for st in self.card(m.card).statics)

    def _destroyed_instead(self, s: State, uid: int) -> int | None:
        """The face-up Equip Card equipped to monster `uid` that is destroyed instead of it being
        destroyed by battle ("If it would be destroyed by battle, destroy this card instead":
        rule DS-INSTEAD), or None."""
        for _side, _i, c in s.spell_traps():
            if c.face_up and c.equipped_to == uid and any(st.apply == "destroy_self_instead_of_battle" for st in self.card(c.card).statics):
                return c.uid
        return None

    def _leave_damage_step(self, w: _W) -> None:
        # rule: DS-LINGERING-END
        a = w.s.attack
        # A change "during damage calculation only" whose damage calculation never came (the
        # battle ended early) ends with the Damage Step at the latest.
        self._expire_mods(w, "damage_calculation")
        self._expire_mods(w, "end_of_damage_step")
        kept = tuple(l for l in w.s.lingering if l.until != "end_of_damage_step")
        if len(kept) != len(w.s.lingering):
            w.emit("effect_expired", what="lingering", until="end_of_damage_step")
        w.s = replace(w.s, lingering=kept, attack=None)
        for side, i, m in list(w.s.monsters()):
            if m.flipped_by_battle:
                m = replace(m, flipped_by_battle=False)
                self._put_monster(w, side, i, m)
            # "once per battle" ends with the battle (e.g. "Injection Fairy Lily").
            per_battle = {e.index for e in self.card(m.card).effects if e.once_per_battle}
            if per_battle & m.effects_used:
                self._put_monster(w, side, i, replace(m, effects_used=m.effects_used - per_battle))
        if a is not None:
            w.emit("attack_ended", attacker_uid=a.attacker, reason="damage_step_over")
        self._change_step(w, Step.BP_BATTLE)

    # -- triggers ---------------------------------------------------------------------------------

    def _destroyer_triggers(self, s: State, moved: list[Event]) -> list[Trigger]:
        """At the end of the Damage Step, the triggers of a battler that destroyed the other one by
        battle (rule: DS-DESTROYS-BY-BATTLE). `moved`: the card_moved events of the monsters
        destroyed by battle leaving the field. "If this card destroys an opponent's monster by
        battle": the other battler left the field by battle; this card may be anywhere (in the
        Graveyard too), its controller in the battle activates it. "... and sends it to the
        Graveyard": this card is still on the field (it survived) and the other battler is in the
        Graveyard as a monster (not a Token)."""
        a = s.attack
        if a is None or a.target is None or not moved:
            return []
        left = {e["card_uid"]: e["to"] for e in moved}
        found: list[Trigger] = []
        negated = self._negated_monsters(s)
        tp = s.turn_player
        for me, other, controller in ((a.attacker, a.target, tp), (a.target, a.attacker, 1 - tp)):
            if other not in left:
                continue
            f = s.find_monster(me)
            if f is not None:
                name, on_field = f[2].card, True
                if not f[2].pos.face_up or me in negated:
                    continue
            else:
                g = next((x for pl in s.players for x in pl.graveyard + pl.banished if x.uid == me), None)
                if g is None:
                    continue
                name, on_field = g.card, False
            for e in self.card(name).effects:
                if e.type != "trigger":
                    continue
                if e.when == "destroys_by_battle" or (e.when == "destroys_by_battle_sent_to_gy" and on_field and left[other] == "graveyard"):
                    found.append(Trigger(controller, me, name, e.index, e.mandatory))
        return found

    def _destroyed_in_battle_triggers(self, s: State, moved: list[Event]) -> list[Trigger]:
        """At the end of the Damage Step, the "If this card is destroyed" triggers (destroyed in
        general) of the monsters that left the field by battle (rule: DS-DESTROYED-IN-GENERAL)."""
        return self._destroyed_triggers(s, [e["card_uid"] for e in moved])

    def _destroyed_triggers(self, s: State, uids: list[int]) -> list[Trigger]:
        """The "If this card is destroyed" triggers (destroyed in general) of the monsters `uids`,
        destroyed and now in a Graveyard or banished (public): activated from there by the player
        whose pile holds the card (rule: DS-DESTROYED-IN-GENERAL)."""
        found: list[Trigger] = []
        for uid in uids:
            for player in (0, 1):
                pl = s.players[player]
                g = next((x for x in pl.graveyard + pl.banished if x.uid == uid), None)
                if g is None:
                    continue
                for eff in self.card(g.card).effects:
                    if eff.type == "trigger" and eff.when == "destroyed":
                        found.append(Trigger(player, uid, g.card, eff.index, eff.mandatory))
        return found

    def _destroyed_by_battle_triggers(self, s: State, moved: list[Event]) -> list[Trigger]:
        """At the end of the Damage Step, the "If this card is destroyed by battle" triggers (no
        Graveyard named) of the monsters that left the field by battle to a place of public
        knowledge (the Graveyard, or banished by "Macro Cosmos"; a Token goes nowhere): they activate
        wherever the monster went, for the player whose pile holds it (rule: DS-DESTROYED-BY-BATTLE)."""
        found: list[Trigger] = []
        for e in moved:
            if e["to"] not in ("graveyard", "banished"):
                continue
            uid = e["card_uid"]
            for pl, player in ((s.players[0], 0), (s.players[1], 1)):
                g = next((x for x in getattr(pl, e["to"]) if x.uid == uid), None)
                if g is None:
                    continue
                for eff in self.card(g.card).effects:
                    if eff.type == "trigger" and eff.when == "destroyed_by_battle":
                        found.append(Trigger(player, uid, g.card, eff.index, eff.mandatory))
        return found

    def _gather_triggers(self, w: _W, when: str) -> None:
        """Collect the triggered effects for `when`; turn player's first, mandatory before
        optional (rule: DS-LEGAL-MANDATORY, DS-LEGAL-OPTIONAL-TRIGGER)."""
        s = w.s
        found: list[Trigger] = []
        negated = self._negated_monsters(s)
        if when == "destroyed_by_battle_sent_to_gy":
            for f in s.fresh:
                # rule: DS-END-TRIGGERS (only monsters sent to the Graveyard by battle: one that left the
                # field by another effect first does not activate)
                if f[0] != "sent_to_gy_by_battle":
                    continue
                uid, owner = f[1], f[2]
                g = next((x for x in s.players[owner].graveyard if x.uid == uid), None)
                if g is None or ("battle_negated", uid) in s.fresh:  # rule: DS-NEGATE-BATTLE
                    continue
                # rule: CARD-FACEDOWN-DESTROYED (a non-Flip Graveyard trigger activates even if the
                # monster was face-down: no face-up check here)
                for e in self.card(g.card).effects:
                    if e.type == "trigger" and e.when == when:
                        if e.ops and not self._resolution_possible(s, owner, uid, self.card(g.card), e):
                            continue
                        found.append(Trigger(owner, uid, g.card, e.index, e.mandatory))
        else:
            for side, _i, m in s.monsters():
                if not m.pos.face_up or m.uid in negated:
                    continue
                for e in self.card(m.card).effects:
                    if e.type == "trigger" and e.when == when:
                        if (e.once_per_turn or e.once_per_battle) and e.index in m.effects_used:
                            continue  # its text's "once per turn" (as for an activation offered: _can_activate)
                        if all(self._condition(s, side, m.uid, self.card(m.card), e, c) for c in e.conditions):
                            found.append(Trigger(side, m.uid, m.card, e.index, e.mandatory))
        self._queue_triggers(w, found)

    def _gather_flip_triggers(self, w: _W) -> None:
        # rule: DS-FLIP-EFFECT-TIMING (flip effects of the monster flipped by the attack)
        s = w.s
        found = []
        for side, _i, m in s.monsters():
            # rule: CARD-FACEDOWN-DESTROYED (only a monster flipped face-up and still on the field: one
            # destroyed while face-down never activates its Flip effect)
            if m.flipped_by_battle:
                for e in self.card(m.card).effects:
                    if e.type == "flip":
                        if e.targets and not self._target_choices(s, side, m.uid, e):
                            continue  # no legal target: the flip effect does not activate
                        found.append(Trigger(side, m.uid, m.card, e.index, e.mandatory))
        self._queue_triggers(w, found)

    def _queue_triggers(self, w: _W, found: list[Trigger]) -> None:
        tp = w.s.turn_player
        found.sort(key=lambda t: (t.player != tp, not t.mandatory, t.card_uid, t.effect))
        w.s = replace(w.s, triggers=tuple(found))

    def _after_triggers_placed(self, w: _W) -> None:
        if w.s.triggers:
            return
        if w.s.chain:
            last = w.s.chain[-1].controller
            w.s = replace(w.s, priority=1 - last, passes=0)
        else:
            w.s = replace(w.s, priority=w.s.turn_player, passes=0)

    # -- activation ----------------------------------------------------------------------------

    def _activate(self, w: _W, action: Action) -> None:
        # rules: CH-COST (costs and targets at activation), PRI-PASS-PASS (opponent responds)
        s = w.s
        p = action.player
        uid = action.card_uid
        assert uid is not None and action.effect is not None
        name = self.name_of(s, uid)
        c = self.card(name)
        eff = c.effects[action.effect]
        cost_info: list[tuple[str, int]] = []
        # Costs.
        ci = 0
        tributed = False
        for o in eff.cost:
            if o.op == "pay_lp":
                self._pay_lp(w, p, o.get("amount"))
            elif o.op == "tribute":
                t = action.cost[ci]
                ci += 1
                tc = self.card(self.name_of(w.s, t))
                cost_info.append(("tributed_atk", 0 if tc.atk is None else tc.atk))
                cost_info.append(("tributed_def", 0 if tc.def_ is None else tc.def_))
                self._move_from_field(w, t, "graveyard", reason="tribute")
                tributed = True
            elif o.op == "discard":
                t = action.cost[ci]
                ci += 1
                self._move_from_hand(w, p, t, "graveyard", reason="discard")
            elif o.op in ("discard_self", "send_self_to_gy"):
                self._move_from_hand(w, p, uid, "graveyard", reason="cost")
        if tributed:
            self._cleanup(w)  # a Tributed monster's Equip Cards go at once (rule: CARD-CONT-TARGET)
        # The card itself.
        is_card = c.is_spell_trap
        if is_card:
            self._place_activated_card(w, p, uid, c)
        elif action.kind in ("activate", "trigger"):  # (a trigger's "once per turn" too: Black Luster Soldier)
            f = w.s.find_monster(uid)
            if f is not None and (eff.once_per_turn or eff.once_per_battle):
                self._put_monster(w, f[0], f[1], replace(f[2], effects_used=f[2].effects_used | {eff.index}))
        link = ChainLink(
            card_uid=uid,
            card=name,
            effect=eff.index,
            controller=p,
            speed=self.spell_speed(c, eff),
            targets=action.targets,
            is_card_activation=is_card,
            card_kind=c.kind,
            cost_info=tuple(cost_info),
        )
        w.s = replace(w.s, chain=w.s.chain + (link,), passes=0, priority=1 - p)
        w.emit(
            "chain_link_added",
            link=len(w.s.chain),
            card=name,
            card_uid=uid,
            effect=eff.index,
            player=p,
            speed=link.speed,
            targets=tuple(action.targets),
            damage_step=w.s.step.in_damage_step,
            step=w.s.step.value,
        )
        self._destroyed_on_activation(w, c)
        if action.kind == "trigger":
            w.s = replace(w.s, triggers=w.s.triggers[1:])
            self._after_triggers_placed(w)
        self._check_lp(w)

    def _destroyed_on_activation(self, w: _W, c: Card) -> None:
        """An Effect Monster's effect or a Spell/Trap Card (`c`) was activated: each face-up
        monster whose continuous effect destroys it then ("Scrap Shark": "When an Effect Monster's
        effect or a Spell/Trap Card is activated, destroy this face-up card on the field") is
        destroyed by its effect at once, even if it is already destroyed by battle
        (rule: DS-SELF-DESTROY-SCRAP-SHARK). Variant hook."""
        if not (c.is_spell_trap or c.kind == "monster"):
            return
        negated = self._negated_monsters(w.s)
        for _side, _i, m in list(w.s.monsters()):
            # (read from the card itself: the continuous effects of a monster destroyed by battle
            # are otherwise no longer applied, DS-SELF-DESTROY; this one is the exception)
            if m.pos is not Pos.FACEDOWN and m.uid not in negated and any(st.apply == "destroy_self_on_activation" for st in self.card(m.card).statics):
                self.destroy(w, m.uid, by="effect")
                # the cards that keep it go with it at once (Call of the Haunted: "When that
                # target is destroyed, destroy this card"; an Equip Card: rule: CARD-CONT-TARGET)
                self._cleanup(w)

    def _place_activated_card(self, w: _W, p: int, uid: int, c: Card) -> None:
        s = w.s
        me = s.players[p]
        st = s.find_spell(uid)
        if st is not None:
            side, i, card = st
            new = replace(card, face_up=True, activating=True, set_this_turn=False)
            if i == 5:
                w.s = s.with_player(side, replace(me, field_zone=new))
            else:
                sp = list(s.players[side].spells)
                sp[i] = new
                w.s = s.with_player(side, replace(s.players[side], spells=tuple(sp)))
            return
        # From the hand.
        h = next(x for x in me.hand if x.uid == uid)
        hand = tuple(x for x in me.hand if x.uid != uid)
        new = SpellTrap(uid, h.card, h.owner, face_up=True, activating=True)
        if c.subtype == "field":
            old = me.field_zone
            me2 = replace(me, hand=hand, field_zone=new)
            w.s = s.with_player(p, me2)
            if old is not None:
                self._move_card_object(w, p, old, "graveyard", reason="replaced")
        else:
            sp = list(me.spells)
            i = sp.index(None)
            sp[i] = new
            w.s = s.with_player(p, replace(me, hand=hand, spells=tuple(sp)))
        w.emit("card_moved", card=h.card, card_uid=uid, owner=h.owner, **{"from": "hand", "to": "spell_trap_zone"}, reason="activated")

    # -- chain resolution ---------------------------------------------------------------------

    def _resolve_chain(self, w: _W) -> None:
        # rule: CH-LIFO
        self._continue_resolution(w, None, 0)

    def _continue_resolution(self, w: _W, link: ChainLink | None, op_index: int, chosen: tuple[str, int] | None = None) -> None:
        resolved_events: list[tuple] = list(w.s.fresh) if link is not None else []
        while True:
            if link is None:
                if not w.s.chain:
                    break
                link = w.s.chain[-1]
                w.s = replace(w.s, chain=w.s.chain[:-1])
                op_index = 0
                chosen = None
            c = self.card(link.card)
            eff = c.effects[link.effect]
            # an effect negated ("negate that effect", DS-LEGAL-NEGATE-EFFECT) resolves doing nothing
            if not link.negated and not link.effect_negated and self._link_still_valid(w, link):
                while op_index < len(eff.ops):
                    req = run_op(self, w, link, eff.ops[op_index], op_index, chosen)
                    chosen = None
                    if req is not None:  # the effect asks a player to choose
                        # what has resolved so far is seen while the player chooses: cards
                        # that kept a monster which left go now (rule: CARD-CONT-TARGET)
                        self._cleanup(w)
                        w.s = replace(w.s, choice=req, fresh=tuple(resolved_events))
                        return
                    op_index += 1
                    self._check_lp(w)  # rule: LP-ZERO (at once, even in the middle of a chain)
                    if w.s.over:
                        break
            self._finish_link(w, link)
            w.emit("chain_link_resolved", card=link.card, card_uid=link.card_uid, negated=link.negated)
            resolved_events = self._collect_fresh(w, resolved_events)
            link = None
            if w.s.over:
                w.s = replace(w.s, chain=())
                return
        # The whole chain has resolved.
        fresh = tuple(f for f in self._collect_fresh(w, resolved_events) if f[0] != "attack_declared")
        w.s = replace(
            w.s,
            fresh=fresh,
            chain_count_in_step=w.s.chain_count_in_step + 1,
            passes=0,
            priority=w.s.turn_player,
            choice=None,
        )
        w.emit("chain_resolved")
        self._cleanup(w)
        dead = [f[1] for f in w.s.fresh if f[0] == "destroyed"]
        if dead:
            # rule: DS-DESTROYED-IN-GENERAL ("If this card is destroyed" by a card effect: once the
            # Chain has resolved, a new Chain)
            w.s = replace(w.s, fresh=tuple(f for f in w.s.fresh if f[0] != "destroyed"))
            if not w.s.over:
                self._queue_triggers(w, self._destroyed_triggers(w.s, dead))
        if any(l.what == "end_battle_phase" for l in w.s.lingering):
            self.end_battle_phase(w)
        if w.s.step is Step.BP_BATTLE:
            self._check_attack_after_chain(w)  # rules: RPL-AFTER-CHAIN, STOP-AFTER-CHAIN (once the whole chain resolved)
        elif w.s.step.in_damage_step and w.s.attack is not None and not w.s.attack.calculated:
            self._battle_ended_early(w)
        self._check_lp(w)

    def _collect_fresh(self, w: _W, acc: list[tuple]) -> list[tuple]:
        """Events that open a "When ..." response window after this chain (rule: WIN-EVENT)."""
        out = list(acc)
        # rule: WIN-EVENT (a face-up monster destroyed by a card effect and sent to the Graveyard
        # during this chain: answered once it has resolved)
        destroyed = {e["card_uid"] for e in w.events if e.kind == "destroyed"}
        for f in w.s.fresh:
            if f[0] == "own_monster_destroyed" and f[1] in destroyed and f not in out:
                out.append(f)
        for e in w.events:
            if e.kind == "summoned":
                key = ("summoned", e["card_uid"], e["player"])
                if key not in out:
                    out.append(key)
            elif e.kind == "destroyed" and self._has_destroyed_trigger(e["card"]):
                # rule: DS-DESTROYED-IN-GENERAL (its trigger waits for the end of the Chain)
                key = ("destroyed", e["card_uid"], 0)
                if key not in out:
                    out.append(key)
        return self._damage_windows(w, out)

    def _answers_destroyed(self, s: State, p: int) -> bool:
        pl = s.players[p]
        held = [c.card for c in pl.spells if c is not None and not c.face_up] + [h.card for h in pl.hand]
        return any(e.when == "own_monster_destroyed_to_gy" for name in held for e in self.card(name).effects)

    def _has_destroyed_trigger(self, name: str) -> bool:
        return any(e.type == "trigger" and e.when == "destroyed" for e in self.card(name).effects)

    def _damage_windows(self, w: _W, acc: list[tuple]) -> list[tuple]:
        """A player who took damage in this transition may answer it ("when you take damage":
        rule DS-DAMAGE-RESPONSE). The window is kept only for a player who holds a card that
        answers it (Set, or in the hand): for anyone else it could change nothing, and leaving it
        out keeps the states of boards without such cards as they were."""
        out = list(acc)
        for e in w.events:
            if e.kind in ("battle_damage", "effect_damage"):
                key = ("damage_taken", e["player"])
                if key not in out and self._answers_damage(w.s, e["player"]):
                    out.append(key)
        return out

    def _answers_damage(self, s: State, p: int) -> bool:
        pl = s.players[p]
        held = [c.card for c in pl.spells if c is not None and not c.face_up] + [h.card for h in pl.hand]
        return any(e.when == "damage_taken" for name in held for e in self.card(name).effects)

    def _link_still_valid(self, w: _W, link: ChainLink) -> bool:
        """A Continuous/Equip card destroyed before it resolves does nothing (CH-COST); an effect
        whose card must be controlled face-up "to resolve" does nothing without it (its text)."""
        c = self.card(link.card)
        if c.is_spell_trap and link.is_card_activation and c.subtype in ("continuous", "equip", "field"):
            return w.s.find_spell(link.card_uid) is not None
        if "self_face_up_to_resolve" in c.effects[link.effect].conditions:
            return self._controls_face_up(w.s, link.controller, link.card_uid)
        return True

    @staticmethod
    def _controls_face_up(s: State, p: int, uid: int) -> bool:
        f = s.find_monster(uid)
        return f is not None and f[0] == p and f[2].pos.face_up

    def _finish_link(self, w: _W, link: ChainLink) -> None:
        c = self.card(link.card)
        if not (c.is_spell_trap and link.is_card_activation):
            return
        f = w.s.find_spell(link.card_uid)
        if f is None:
            return
        side, i, card = f
        stays = c.subtype in ("continuous", "field") or (c.subtype == "equip" and card.equipped_to is not None)
        if c.subtype == "continuous" and link.targets and card.attached_to is None and card.linked_monster is None:
            # A continuous Trap whose target is gone when it resolves stays without effect
            # in the real game only for some cards; the ones in the pool are sent away.
            if any(o.op in ("attach", "special_summon") for o in c.effects[link.effect].ops):
                stays = False
        if link.negated:
            stays = False
        if stays:
            self._set_spell(w, side, i, replace(card, activating=False))
        else:
            self._move_card_object(w, side, card, "graveyard", reason="resolved")

    def _choose(self, w: _W, action: Action) -> None:
        ch = w.s.choice
        assert ch is not None
        if ch.link is None:  # rule: DS-CALC-PROTECT-CHOICE (at damage calculation)
            w.emit("choice_made", player=action.player, choice=ch.kind, option=action.option, card_uid=ch.op_index)
            a = w.s.attack
            assert a is not None
            w.s = replace(w.s, choice=None, attack=replace(a, protections=a.protections + ((ch.op_index, action.option == "1"),)))
            self._leave_during_calc(w)
            return
        w.emit("choice_made", player=action.player, choice=ch.kind, option=action.option, card_uid=ch.link.card_uid)
        w.s = replace(w.s, choice=None)
        link = ch.link
        self._continue_resolution(w, link, ch.op_index, (ch.kind, int(action.option)))  # type: ignore[arg-type]

    # -- manual position change (Main Phase 2) --------------------------------------------------

    def _manual_position(self, w: _W, action: Action) -> None:
        side, i, m = w.s.find_monster(action.card_uid)  # type: ignore[misc]
        new = Pos.DEF if m.pos is Pos.ATK else Pos.ATK
        self._put_monster(w, side, i, replace(m, pos=new, position_changed=True))  # rule: MP2-POSITION (once a turn)
        w.emit("position_changed", card=m.card, card_uid=m.uid, **{"from": m.pos.value, "to": new.value}, by="manual")
        self._cleanup(w)

    # =========================================================================================
    # Primitives used by operations (bpcheck.model.ops)
    # =========================================================================================

    def _put_monster(self, w: _W, side: int, i: int, m: Monster | None) -> None:
        p = w.s.players[side]
        ms = list(p.monsters)
        ms[i] = m
        w.s = w.s.with_player(side, replace(p, monsters=tuple(ms)))

    def _set_spell(self, w: _W, side: int, i: int, c: SpellTrap | None) -> None:
        p = w.s.players[side]
        if i == 5:
            w.s = w.s.with_player(side, replace(p, field_zone=c))
            return
        sp = list(p.spells)
        sp[i] = c
        w.s = w.s.with_player(side, replace(p, spells=tuple(sp)))

    def _pay_lp(self, w: _W, p: int, amount: int) -> None:
        self._lose_lp(w, p, amount)
        w.emit("lp_paid", player=p, amount=amount)

    def _lose_lp(self, w: _W, p: int, amount: int) -> None:
        pl = w.s.players[p]
        w.s = w.s.with_player(p, replace(pl, lp=arith.clamp0(arith.sub(pl.lp, amount))))

    def gain_lp(self, w: _W, p: int, amount: int) -> None:
        pl = w.s.players[p]
        w.s = w.s.with_player(p, replace(pl, lp=arith.add(pl.lp, amount)))
        w.emit("lp_gained", player=p, amount=amount)

    def effect_damage(self, w: _W, p: int, amount: int, source: str) -> None:
        if arith.le(amount, 0):
            return
        self._lose_lp(w, p, amount)
        w.emit("effect_damage", player=p, amount=amount, card=source)

    def _check_lp(self, w: _W) -> None:
        # rule: LP-ZERO (a player at 0 LP loses at once; both at once is a draw)
        # rule: DECK-OUT (the other way to lose: no effect of the pool draws and the model stops at
        # the End Phase, so no draw is ever required here and an empty Deck ends nothing)
        if w.s.over:
            return
        zero = [p for p in (0, 1) if arith.le(w.s.players[p].lp, 0, "LP-ZERO")]
        if not zero:
            return
        winner = None if len(zero) == 2 else 1 - zero[0]
        w.s = replace(w.s, over=True, winner=winner, triggers=(), choice=None)
        w.emit("duel_over", winner=winner, reason="lp_zero")

    def _banish_instead(self, s: State) -> bool:
        memo = self._memo(s)
        if memo is not None and "banish_instead_of_graveyard" not in self._field_kinds(s, memo):
            return False
        for _side, _u, _src, st in self._active_statics(s):
            if st.apply == "banish_instead_of_graveyard":
                return True
        return False

    def _dest_pile(self, w: _W, dest: str) -> str:
        if dest == "graveyard" and self._banish_instead(w.s):  # rule: DS-SEND-OWNER-GY (Macro Cosmos)
            return "banished"
        return dest

    def _add_to_pile(self, w: _W, owner: int, ref: CardRef, pile: str) -> None:
        p = w.s.players[owner]
        items = tuple(sorted(getattr(p, pile) + (ref,), key=lambda r: (r.card, r.uid)))
        w.s = w.s.with_player(owner, replace(p, **{pile: items}))

    def _move_from_field(self, w: _W, uid: int, dest: str, reason: str) -> None:
        """Move a monster or Spell/Trap from the field to its owner's pile (rule: CARD-OWNER).
        Tokens leave the field and go nowhere (rule: CARD-TOKEN)."""
        f = w.s.find_monster(uid)
        if f is not None:
            side, i, m = f
            if dest != "banished" and self._banishes_itself(w.s, m):
                dest = "banished"  # rule: DS-BANISH-BATTLE ("If this face-up card would leave the field, banish it instead")
            self._put_monster(w, side, i, None)
            c = self.card(m.card)
            if c.is_token:
                w.emit("card_moved", card=m.card, card_uid=uid, owner=m.owner, **{"from": "monster_zone", "to": "nowhere"}, reason=reason)
                return
            pile = self._dest_pile(w, dest) if dest == "graveyard" else dest
            self._add_to_pile(w, self.pile_of(m.owner, side), CardRef(uid, m.card, m.owner), pile)
            w.emit("card_moved", card=m.card, card_uid=uid, owner=m.owner, **{"from": "monster_zone", "to": pile}, reason=reason)
            if reason == "battle" and pile == "graveyard":
                w.s = replace(w.s, fresh=w.s.fresh + (("sent_to_gy_by_battle", uid, m.owner),))
            if reason in ("battle", "destroyed") and pile == "graveyard" and m.pos.face_up and self._answers_destroyed(w.s, side):
                # "When a face-up monster you control is destroyed and sent to the Graveyard" (rule:
                # WIN-EVENT), kept only for a controller who holds a card that answers it (as the
                # damage window: boards without one keep their states)
                w.s = replace(w.s, fresh=w.s.fresh + (("own_monster_destroyed", uid, side),))
            return
        g = w.s.find_spell(uid)
        if g is not None:
            side, _i, card = g
            self._move_card_object(w, side, card, dest, reason)

    def pile_of(self, owner: int, controller: int) -> int:
        """Whose hand / Graveyard / banished pile a card leaving the field goes to: its owner's
        (rule: CARD-OWNER, DS-SEND-OWNER-GY). Variant hook."""
        return owner

    def _move_card_object(self, w: _W, side: int, card: SpellTrap, dest: str, reason: str) -> None:
        f = w.s.find_spell(card.uid)
        if f is not None:
            card = f[2]
            self._set_spell(w, f[0], f[1], None)
        pile = self._dest_pile(w, dest) if dest == "graveyard" else dest
        self._add_to_pile(w, card.owner, CardRef(card.uid, card.card, card.owner), pile)
        w.emit("card_moved", card=card.card, card_uid=card.uid, owner=card.owner, **{"from": "spell_trap_zone", "to": pile}, reason=reason)
        if card.linked_monster is not None and w.s.find_monster(card.linked_monster) is not None:
            # Call of the Haunted left the field: destroy that monster (its text; CARD-CONT-TARGET).
            self.destroy(w, card.linked_monster, by="effect")

    def deck_to_graveyard(self, w: _W, p: int, ref: CardRef) -> None:
        """Send a card of player `p`'s Deck to the Graveyard (banished under "Macro Cosmos")."""
        me = w.s.players[p]
        w.s = w.s.with_player(p, replace(me, deck=tuple(x for x in me.deck if x.uid != ref.uid)))
        pile = self._dest_pile(w, "graveyard")
        self._add_to_pile(w, p, ref, pile)
        w.emit("card_moved", card=ref.card, card_uid=ref.uid, owner=ref.owner, **{"from": "deck", "to": pile}, reason="effect")

    def _move_from_hand(self, w: _W, p: int, uid: int, dest: str, reason: str) -> None:
        me = w.s.players[p]
        h = next(x for x in me.hand if x.uid == uid)
        w.s = w.s.with_player(p, replace(me, hand=tuple(x for x in me.hand if x.uid != uid)))
        pile = self._dest_pile(w, dest) if dest == "graveyard" else dest
        self._add_to_pile(w, h.owner, h, pile)
        w.emit("card_moved", card=h.card, card_uid=uid, owner=h.owner, **{"from": "hand", "to": pile}, reason=reason)

    def destroy(self, w: _W, uid: int, by: str, banish: bool = False) -> None:
        name = self.name_of(w.s, uid)
        if w.s.find_monster(uid) is None and w.s.find_spell(uid) is None:
            return
        w.emit("destroyed", card=name, card_uid=uid, by=by)
        self._move_from_field(w, uid, "banished" if banish else "graveyard", reason="destroyed")

    def summon(self, w: _W, ref: CardRef, from_pile: str | None, player: int, pos: Pos, how: str = "special") -> int | None:
        """Special Summon `ref` to `player`'s field. Returns the uid, or None with no free zone."""
        p = w.s.players[player]
        if None not in p.monsters:
            return None
        if from_pile is not None:
            src = w.s.players[ref.owner]
            w.s = w.s.with_player(ref.owner, replace(src, **{from_pile: tuple(x for x in getattr(src, from_pile) if x.uid != ref.uid)}))
            p = w.s.players[player]
        i = p.monsters.index(None)
        self._put_monster(w, player, i, Monster(ref.uid, ref.card, ref.owner, pos, summoned_this_turn=True))
        w.emit("summoned", card=ref.card, card_uid=ref.uid, player=player, position=pos.value, how=how, **{"from": from_pile or "token"})
        return ref.uid

    def new_uid(self, w: _W) -> int:
        u = w.s.next_uid
        w.s = replace(w.s, next_uid=u + 1)
        return u

    def add_mod(self, w: _W, uid: int, mod: Mod) -> None:
        f = w.s.find_monster(uid)
        if f is None:
            return
        side, i, m = f
        self._put_monster(w, side, i, replace(m, mods=m.mods + (mod,)))
        w.emit("stat_modified", card=m.card, card_uid=uid, stat=mod.stat, modifier=mod.kind, amount=mod.amount, source=mod.source, until=mod.until)

    def _expire_mods(self, w: _W, until: str) -> None:
        for side, i, m in list(w.s.monsters()):
            keep = tuple(md for md in m.mods if md.until != until)
            if len(keep) != len(m.mods):
                self._put_monster(w, side, i, replace(m, mods=keep))
                w.emit("effect_expired", what=f"modifiers of {m.card}", until=until)

    def add_lingering(self, w: _W, l: Lingering) -> None:
        w.s = replace(w.s, lingering=w.s.lingering + (l,))
        w.emit("lingering_effect", what=l.what, player=l.player, source=l.source, until=l.until)

    def set_position(self, w: _W, uid: int, pos: Pos, by: str) -> None:
        f = w.s.find_monster(uid)
        if f is None:
            return
        side, i, m = f
        if m.pos is pos:
            return
        self._put_monster(w, side, i, replace(m, pos=pos, flipped_by_battle=m.flipped_by_battle and pos.face_up))
        w.emit("position_changed", card=m.card, card_uid=uid, **{"from": m.pos.value, "to": pos.value}, by=by)

    def take_control(self, w: _W, uid: int, new_controller: int) -> None:
        f = w.s.find_monster(uid)
        if f is None or f[0] == new_controller:
            return
        side, i, m = f
        dest = w.s.players[new_controller]
        if None not in dest.monsters:
            return
        self._put_monster(w, side, i, None)
        j = w.s.players[new_controller].monsters.index(None)
        self._put_monster(w, new_controller, j, m)
        w.emit("control_changed", card=m.card, card_uid=uid, from_player=side, to_player=new_controller)

    @staticmethod
    def _destroyed_now(w: _W, uid: int) -> bool:
        """`uid` was destroyed (by an effect, a rule or battle) in this transition."""
        for e in w.events:
            if (e.kind == "destroyed" or (e.kind == "card_moved" and e.get("reason") == "battle")) and e.get("card_uid") == uid:
                return True
        return False

    def _cleanup(self, w: _W) -> None:
        """Rule-driven follow-ups after an action: cards that keep a target lose it
        (rule: CARD-CONT-TARGET); Berserk Gorilla in face-up Defense Position."""
        changed = True
        while changed:
            changed = False
            all_field = {m.uid for _s, _i, m in w.s.monsters()}
            for side, i, c in list(w.s.spell_traps()):
                if c.activating:
                    continue
                gone = (c.equipped_to is not None and c.equipped_to not in all_field) or (
                    c.attached_to is not None and c.attached_to not in all_field
                )
                if gone:
                    self.destroy(w, c.uid, by="rule")
                    changed = True
                    break
                if c.linked_monster is not None and c.linked_monster not in all_field:
                    # Call of the Haunted: "When that target is destroyed, destroy this card." A
                    # monster that left in another way (Tributed, banished, returned) leaves it on
                    # the field without a monster (rule: CARD-CONT-TARGET).
                    self._set_spell(w, side, i, replace(c, linked_monster=None))
                    if self._destroyed_now(w, c.linked_monster):
                        self.destroy(w, c.uid, by="rule")
                    changed = True
                    break
            if changed:
                continue
            a = w.s.attack
            for side, i, m in list(w.s.monsters()):
                if m.flipped_by_battle and a is not None and not a.calculated:
                    continue  # rule: DS-SELF-DESTROY (not before damage calculation)
                if m.pos is Pos.DEF and self.has_static(w.s, m.uid, "destroy_if_face_up_defense"):
                    self.destroy(w, m.uid, by="rule")
                    changed = True
                    break
