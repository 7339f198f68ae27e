"""The monitor: history the invariants keep for themselves (TLA+'s history variables).

An engine reports counters of its own (``attacks_declared``, ``declared_at``, open windows,
``destroyed_by_battle``, ...). An invariant that believed them would pass an engine that forgets
to count. So the invariants keep their own history, updated from what a transition *did* — the
action record and the events — and never from the engine's counters; they judge against it, and
an engine field that disagrees with the history is itself a violation naming both values.

A history is one named value and one update function::

    @history("attacks", "per monster this turn: attacks declared, monsters declared at, ...")
    def _attacks(prev, t):          # prev: this history's value before the transition
        ...                         # t: the Transition (t.events, t.action, t.before, t.after, t.mon)
        return new_value            # an immutable value: tuples, ints, strings, bools, None

The initial value is ``initial`` (default: the empty tuple): boards start in Main Phase 1 with
nothing declared, marked or chained. The :class:`Monitor` of a state holds every history's value;
the explorer keeps it beside the observation and hashes both into the state's fingerprint
(:func:`bpcheck.explorers.checking.state_fingerprint`), so two states that differ only in their
history are different states: BFS stays exact and counterexamples stay shortest.

Histories are kept small and forget what no invariant needs any more (a monster's record when it
leaves the field, a chain when it has resolved, the battle marks when the Damage Step ends), so
that on a correct engine the monitor adds no states: it equals what the observation already says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import orjson

from bpcheck.model.canonical import canonical_json
from bpcheck.invariants.view import monster

# Counts saturate here: more than any monster may declare in a turn (5 targets, a direct attack
# and one more), so a verdict never depends on a higher count, and an engine that lets a monster
# attack for ever gives a finite state space (its repeated states then form a CYCLE).
COUNT_CAP = 7


@dataclass(frozen=True)
class History:
    name: str
    statement: str
    update: Callable[[Any, Any], Any]
    initial: Any = ()
    after: bool = False  # updated after the others, reading their new values as t.mon_after


HISTORIES: dict[str, History] = {}


def history(name: str, statement: str, initial: Any = (), after: bool = False):
    """Register a history: one value, updated by the decorated function from each transition.
    With ``after=True`` it is updated once every other history has been, and may read their
    values after the transition as ``t.mon_after`` (its own value there is still the old one):
    for a history that keeps what an invariant would conclude from the state after the
    transition (``replay_owed``)."""

    def deco(fn):
        if name in HISTORIES:
            raise ValueError(f"history {name} registered twice")
        HISTORIES[name] = History(name, statement, fn, initial, after)
        return fn

    return deco


class Monitor:
    """The values of every history in one state. Immutable; :meth:`advance` gives the next."""

    __slots__ = ("values", "_bytes", "_cache")

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self._bytes: bytes | None = None
        self._cache: dict[str, Any] = {}

    @classmethod
    def initial(cls) -> "Monitor":
        return cls({h.name: h.initial for h in HISTORIES.values()})

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def advance(self, t) -> "Monitor":
        """The monitor after transition `t` (``t.mon`` is set to this monitor first). When every
        history keeps its value (the update returns the very value it was given), that is this
        monitor itself: its canonical bytes and readers' caches are reused."""
        t.mon = self
        old = self.values
        new = {}
        same = True
        late = []
        for n, h in HISTORIES.items():
            if h.after:
                late.append(h)
                continue
            v = old[n]
            v2 = h.update(v, t)
            if v2 is not v:
                same = False
            new[n] = v2
        if late:
            t.mon_after = self if same and len(new) + len(late) == len(old) else Monitor({**new, **{h.name: old[h.name] for h in late}})
            for h in late:
                v = old[h.name]
                v2 = h.update(v, t)
                if v2 is not v:
                    same = False
                new[h.name] = v2
            new = {n: new[n] for n in HISTORIES}  # (registration order, as without late histories)
        return self if same and len(new) == len(old) else Monitor(new)

    def forget(self) -> None:
        """Drop the readers built for this monitor (attack records, window, battle, chain); they
        are built again from the values when next asked, the same. The explorer calls it when a
        state joins the frontier (explorers/checking.py), where it may wait for a long time: it
        then holds the values only, and the cyclic GC has fewer objects to scan
        (docs/performance.md)."""
        self._cache.clear()

    def canonical(self) -> bytes:
        """Canonical JSON of the values (sorted by history name): what the fingerprint hashes."""
        if self._bytes is None:
            self._bytes = canonical_json([[n, self.values[n]] for n in sorted(self.values)])
        return self._bytes

    def to_dict(self) -> dict:
        try:
            return orjson.loads(orjson.dumps(dict(sorted(self.values.items()))))
        except TypeError:  # a lone surrogate in a name an in-process engine gave
            return json.loads(canonical_json(dict(sorted(self.values.items()))))

    # -- readers of the built-in histories --------------------------------------------------

    def attack(self, uid: int | None) -> "AttackRecord":
        """This turn's attack history of monster `uid` (all zero when it has none)."""
        idx = self._cache.get("attacks")
        if idx is None:
            idx = self._cache["attacks"] = {r[0]: AttackRecord(*r) for r in self.values["attacks"]}
        r = idx.get(uid)
        if r is None:
            r = idx[uid] = AttackRecord(uid, 0, (), False, False, 0, 0)  # (kept: asked again for this monitor)
        return r

    def attackers(self) -> list["AttackRecord"]:
        return [AttackRecord(*r) for r in self.values["attacks"]]

    # (each built once per monitor: a monitor is immutable)

    @property
    def window(self) -> "Window":
        w = self._cache.get("windows")
        if w is None:
            w = self._cache["windows"] = Window(*self.values["windows"])
        return w

    @property
    def battle(self) -> "Battle":
        b = self._cache.get("battle")
        if b is None:
            b = self._cache["battle"] = Battle(*self.values["battle"])
        return b

    @property
    def chain(self) -> "ChainHistory":
        c = self._cache.get("chain")
        if c is None:
            c = self._cache["chain"] = ChainHistory(*self.values["chain"])
        return c

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Monitor) and self.values == other.values

    def __hash__(self) -> int:
        return hash(self.canonical())


class AttackRecord(NamedTuple):
    uid: int | None
    declared: int  # attack declarations this turn (a replay's continuation is not one)
    declared_at: tuple  # uids of the monsters it was declared at (declarations and replay redirects)
    declared_direct: bool
    # it may not attack again this turn: its attack stopped (STOP-ATTACK), or a resolved effect
    # of its own forbade it (by the card data: Chaos Sorcerer's "cannot attack the turn ...")
    stopped: bool
    costs_paid: int  # attack costs paid (attack_cost_paid events)
    # attacks it may declare this turn beyond one: resolved effects of its own that give it more
    # (by the card data: Black Luster Soldier's "second attack in a row", DS-EXTRA-ATTACK); None
    # when an effect of its own resolved and the card data cannot say which (an engine that does
    # not report the effect index, a card whose effects differ): its attacks are not judged
    extra: int | None


class Window(NamedTuple):
    attack_declaration: bool  # the "when an attack is declared" window is open
    attacker: int | None
    passes: int  # consecutive passes since it opened or since the last chain link


class Battle(NamedTuple):
    destroyed: tuple  # uids marked destroyed by battle in this Damage Step, still on the field
    flipped: tuple  # uids flipped face-up by the attack in this Damage Step
    calculated: bool  # damage calculation was performed for the current battle
    ended: bool  # the battle ended early (a battle_ended_early event: a battler left the field)


class ChainHistory(NamedTuple):
    links: tuple  # the chain as built: (card_uid, card, effect, player, speed, targets, negated)
    # a link of this chain already resolved, not negated, whose card data negates the attack
    # (STOP-ATTACK): True / False, None when a resolved card's data cannot be read
    negated_attack: bool | None
    chains_in_calc: int  # chains started in the damage-calculation sub-step (DS-DURING-CALC-ONE-CHAIN)
    # while links are on the chain: passes in succession since the last link was added (0, 1),
    # or 2 once the chain began to resolve (two passes in succession, or a link resolved): in
    # mid-resolution only a choice an effect asks can be pending (PRI-PASS-PASS, CH-LIFO)
    rounds: int
    # card uids of the links on the chain whose effect (not activation) an effect_negated event
    # negated: they resolve doing nothing (DS-LEGAL-NEGATE-EFFECT)
    effect_negated: tuple = ()

    @property
    def resolving(self) -> bool:
        return bool(self.links) and self.rounds >= 2


# -- the built-in histories ------------------------------------------------------------------


def left_field(e) -> bool:
    # a move from one Monster Zone to another (a change of control, as the ocgcore adapter reports
    # it) keeps the monster on the field, and its history with it
    return e.kind == "card_moved" and e.get("from") == "monster_zone" and e.get("to") != "monster_zone"


_ATTACKS_KINDS = frozenset({"attack_declared", "replay_choice", "attack_cost_paid", "attack_stopped", "card_moved", "chain_link_resolved"})


@history(
    "attacks",
    "Per monster this turn: attack declarations, the monsters it was declared at, direct declarations, whether it may not "
    "attack again (its attack stopped, or a resolved effect of its own forbade it by its card data), attack costs paid, "
    "extra attacks a resolved effect of its own gave it (by its card data). A monster that leaves the field is forgotten (a "
    "new object if it returns).",
)
def _attacks(prev, t):
    if t.before.get("turn") != t.after.get("turn"):
        prev = ()
    elif _ATTACKS_KINDS.isdisjoint(t.kind_set()):
        return prev  # none of the events it reads
    recs = {r[0]: list(r) for r in prev}
    changed = False
    links = list(t.mon.chain.links) if t.mon is not None else []  # the chain as built, to know which effect resolves
    for e in t.events:
        k = e.kind
        if k == "attack_declared" or (k == "replay_choice" and e.get("choice") in ("target", "direct")):
            uid = e["attacker_uid"]
            r = recs.setdefault(uid, [uid, 0, (), False, False, 0, 0])
            if k == "attack_declared" and not e.get("replay"):
                r[1] = min(r[1] + 1, COUNT_CAP)
            tgt = e.get("target_uid")
            if tgt is None:
                r[3] = True
            elif tgt not in r[2]:
                r[2] = tuple(sorted(r[2] + (tgt,)))
            changed = True
        elif k == "attack_cost_paid":
            uid = e["attacker_uid"]
            r = recs.setdefault(uid, [uid, 0, (), False, False, 0, 0])
            r[5] = min(r[5] + 1, COUNT_CAP)
            changed = True
        elif k == "attack_stopped":
            uid = e["attacker_uid"]
            if uid in recs:
                recs[uid][4] = True
                changed = True
        elif k == "chain_link_resolved":
            uid = e.get("card_uid")
            effect, negated = None, bool(e.get("negated")) or (t.mon is not None and uid in t.mon.chain.effect_negated)
            for i in range(len(links) - 1, -1, -1):  # the last link of that card resolves first (CH-LIFO)
                if links[i][0] == uid:
                    effect, negated = links[i][2], negated or links[i][6]
                    del links[i]
                    break
            if negated or t.cards is None:
                continue
            card = e.get("card")
            more = t.cards.extra_attacks(card, effect)
            if more is None and effect is None and t.cards.effects(card) is not None:
                # the engine did not say which effect resolved and the card's effects differ (Black
                # Luster Soldier: a banish that forbids its attacks, a second attack): unknown
                r = recs.setdefault(uid, [uid, 0, (), False, False, 0, 0])
                if r[6] is not None:
                    r[6], changed = None, True
                continue
            if t.cards.forbids_own_attack(card, effect):
                r = recs.setdefault(uid, [uid, 0, (), False, False, 0, 0])
                if not r[4]:
                    r[4] = changed = True
            if more:  # rule: DS-EXTRA-ATTACK
                r = recs.setdefault(uid, [uid, 0, (), False, False, 0, 0])
                if r[6] is not None:
                    r[6] = min(r[6] + more, COUNT_CAP)
                    changed = True
        elif left_field(e):
            if recs.pop(e.get("card_uid"), None) is not None:
                changed = True
    if not changed:
        return prev
    return tuple(tuple(recs[u]) for u in sorted(recs, key=lambda x: (x is None, x or 0)))


@history(
    "windows",
    "The \"when an attack is declared\" window: open from a declaration until both players pass in succession (with an empty "
    "chain, or to resolve the chain answering it), the chain resolves, the attack stops or replays, or the step changes.",
    initial=(False, None, 0),
)
def _windows(prev, t):
    open_, attacker, passes = prev
    if not open_ and "attack_declared" not in t.kind_set():
        return prev  # closed, and nothing opens it
    for e in t.events:
        k = e.kind
        if k == "attack_declared" and not e.get("replay"):
            open_, attacker, passes = True, e["attacker_uid"], 0
        elif not open_:
            continue
        elif k == "chain_link_added":
            passes = 0
        elif k == "passed":
            passes += 1
            if passes >= 2:
                open_, attacker, passes = False, None, 0
        elif k in ("chain_resolved", "phase_changed", "attack_stopped", "attack_ended", "replay", "replay_choice", "duel_over"):
            open_, attacker, passes = False, None, 0
    return (open_, attacker, passes)


_REPLAY_READS = frozenset({"replay", "replay_choice", "attack_stopped", "attack_ended", "attack_declared", "duel_over"})


@history(
    "replay",
    "The attacker whose replay is pending: from the replay event until the turn player's replay choice, the attack stops or "
    "ends, another attack is declared, the duel or the turn ends; null when none is pending. Never the engine's "
    "attack.replay_pending.",
    initial=None,
)
def _replay(prev, t):
    if prev is None and "replay" not in t.kind_set():
        return prev  # none pending, and none begins
    if t.before.get("turn") != t.after.get("turn"):
        prev = None
    for e in t.events:
        k = e.kind
        if k == "replay":
            prev = e["attacker_uid"]
        elif k in _REPLAY_READS:
            prev = None
    return prev


_SUMMON_CLOSE = frozenset({"phase_changed", "attack_declared", "attack_stopped", "attack_ended", "replay", "duel_over"})


@history(
    "summons",
    "The \"when a monster is Summoned\" window: open after a Summon (once the chain it happened in has resolved) until both "
    "players pass in succession, another chain resolves without a Summon, an attack is declared, stops, ends or replays (that is "
    "what happened last then) or the step changes; whether the chain resolving now has Summoned; the Summons (monster, the "
    "player it was Summoned for) that opened the window, and those of the chain resolving now.",
    initial=(False, 0, False, (), ()),
)
def _summons(prev, t):
    open_, passes, pending, opened_by, now = prev
    if not (open_ or pending) and "summoned" not in t.kind_set():
        return prev  # closed, and nothing opens it
    for e in t.events:
        k = e.kind
        if k == "summoned":
            pending = True
            now = now + ((e.get("card_uid"), e.get("player")),)
        elif k == "chain_resolved":
            open_, passes, pending, opened_by, now = pending, 0, False, now, ()
        elif k in _SUMMON_CLOSE:
            open_, passes, pending, opened_by, now = False, 0, False, (), ()
        elif not open_:
            continue
        elif k == "chain_link_added":
            passes = 0
        elif k == "passed":
            passes += 1
            if passes >= 2:  # (with a chain, its chain_resolved follows and decides)
                open_, passes, opened_by = False, 0, ()
    if pending and not t.mon.chain.links and not t.of("chain_link_added"):
        open_, passes, pending, opened_by, now = True, 0, False, now, ()  # a Summon outside any chain
    return (open_, passes, pending, opened_by, now)


def _held_cards(obs: dict, p: int) -> list[str]:
    """The names of the cards player `p` holds ready to answer an event: Set, or in the hand."""
    pl = obs["players"][p]
    return [c["card"] for c in [*pl["spells"], pl["field_zone"]] if c is not None and not c["face_up"]] + [h["card"] for h in pl["hand"]]


def _holds_destroyed_answer(obs: dict, p: int, cards) -> bool:
    """Player `p` holds a card activated "When a face-up monster you control is destroyed and sent
    to the Graveyard": Set, or in the hand."""
    return cards is not None and any(cards.answers_destroyed(n) for n in _held_cards(obs, p))


# what closes an answer window opened by an event (the destroyed and damage windows alike)
_WINDOW_CLOSE = frozenset({"phase_changed", "attack_declared", "attack_stopped", "attack_ended", "replay", "replay_choice", "duel_over"})


def _answer_window(prev, t, opener, holds):
    """One transition of an answer window (``_destroyed_window``, ``_damage_window``): (players it
    is open for, players whose event opens it when the chain resolves, passes in succession).
    ``opener(t, e)``: for an event that may open it, the player it opens for (-1: none), else None
    (any other event); ``holds(obs, player, cards)``: that player holds a card that answers it.
    Opened at once outside a chain, after the chain it happened in; closed when both players
    pass in succession, another chain resolves without one, or by a :data:`_WINDOW_CLOSE` event."""
    open_, pending, passes = prev
    for e in t.events:
        k = e.kind
        p = opener(t, e)
        if p is not None:
            if p in (0, 1) and p not in pending and holds(t.after, p, t.cards):
                pending = tuple(sorted(pending + (p,)))
        elif k == "chain_resolved":
            open_, pending, passes = pending, (), 0
        elif k in _WINDOW_CLOSE:
            open_, passes = (), 0
        elif k == "chain_link_added":
            passes = 0
        elif k == "passed" and open_:
            passes += 1
            if passes >= 2:
                open_, passes = (), 0
    if pending and not t.after.get("chain"):
        open_, pending, passes = tuple(sorted(set(open_) | set(pending))), (), 0
    return (open_, pending, passes)


def _destroyed_opener(t, e):
    if e.kind != "card_moved":
        return None
    if e.get("from") != "monster_zone" or e.get("to") != "graveyard" or e.get("reason") not in ("battle", "destroyed"):
        return -1
    m = monster(t.before, e.get("card_uid"))
    return -1 if m is None or m["position"] == "facedown" else m["controller"]


@history(
    "destroyed_window",
    "The \"When a face-up monster you control is destroyed and sent to the Graveyard\" window (WIN-EVENT), for the players "
    "who hold a card that answers it (Set or in the hand): (players it is open for, players whose monster opens it when the "
    "chain resolves). Opened by a face-up monster (before the event) moving from its controller's Monster Zone to the "
    "Graveyard, destroyed by battle or by a card effect: at once outside a chain, after the chain it happened in; closed "
    "when both players pass in succession, another chain resolves without one, an attack is declared, stops, ends or "
    "replays, or the step changes.",
    initial=((), (), 0),
)
def _destroyed_window(prev, t):
    open_, pending, _passes = prev
    if not (open_ or pending) and "card_moved" not in t.kind_set():
        return prev
    return _answer_window(prev, t, _destroyed_opener, _holds_destroyed_answer)


_DAMAGE_KINDS = frozenset({"battle_damage", "effect_damage"})


def _holds_damage_answer(obs: dict, p: int, cards) -> bool:
    """Player `p` holds a card activated "when you take damage": Set, or in the hand."""
    return cards is not None and any(cards.answers_damage(n) for n in _held_cards(obs, p))


def _damage_opener(t, e):
    if e.kind not in _DAMAGE_KINDS:
        return None
    p = e.get("player")
    return p if p in (0, 1) else -1


@history(
    "damage_window",
    "The \"when you take damage\" window (DS-DAMAGE-RESPONSE), for the players who hold a card that answers it (Set or in "
    "the hand): (players it is open for, players whose damage opens it when the chain resolves). Opened by battle or effect "
    "damage (after the chain it happened in); closed when both players pass in succession, another chain resolves without "
    "damage to them, an attack is declared, stops, ends or replays, or the step changes.",
    initial=((), (), 0),
)
def _damage_window(prev, t):
    open_, pending, _passes = prev
    if not (open_ or pending) and _DAMAGE_KINDS.isdisjoint(t.kind_set()):
        return prev
    return _answer_window(prev, t, _damage_opener, _holds_damage_answer)


_LINK_READS = frozenset({"summoned", "chain_link_resolved", "chain_resolved", "card_moved"})
_SPELL_ZONES = ("spell_trap_zone", "field_zone")


def left_spell_zone(e) -> bool:
    return e.kind == "card_moved" and e.get("from") in _SPELL_ZONES and e.get("to") not in _SPELL_ZONES


@history(
    "links",
    "Cards bound to the monster they Special Summoned (their card data says so: Call of the Haunted): (card, monster) from "
    "the resolution that Summoned it until either leaves the field; the monsters Summoned so far by the chain link now "
    "resolving. Never the engine's linked_monster.",
    initial=((), ()),
)
def _links(prev, t):
    links, pending = prev
    kinds = t.kind_set()
    if not (links or pending) and "summoned" not in kinds:
        return prev  # nothing bound, and nothing Summoned
    if _LINK_READS.isdisjoint(kinds):
        return prev  # none of the events it reads
    bound, now, gone = set(links), list(pending), set()
    for e in t.events:
        k = e.kind
        if k == "summoned":
            now.append(e["card_uid"])
        elif k == "chain_link_resolved":
            uid = e.get("card_uid")
            if now and uid not in gone and not e.get("negated") and t.cards is not None and t.cards.links_summoned(e.get("card")):
                bound.update((uid, u) for u in now)
            now = []
        elif k == "chain_resolved":
            now = []
        elif left_spell_zone(e):
            uid = e.get("card_uid")
            gone.add(uid)
            bound = {b for b in bound if b[0] != uid}
        elif left_field(e):
            uid = e.get("card_uid")
            bound = {b for b in bound if b[1] != uid}
            now = [u for u in now if u != uid]
    if now and not chain_open_after(t):
        now = []  # Summoned outside a chain, or by a link that has resolved: nothing binds them now
    return (tuple(sorted(bound)), tuple(now))


def chain_open_after(t) -> bool:
    """Links remain on the chain after transition `t` (still being built, or resolving: the link
    resolving waits for a choice), by the chain history before it and its events; never the
    engine's chain or choice."""
    n = len(t.mon.chain.links)
    for e in t.events:
        k = e.kind
        if k == "chain_link_added":
            n += 1
        elif k == "chain_link_resolved":
            n = max(0, n - 1)
        elif k == "chain_resolved":
            n = 0
    return n > 0


_BATTLE_KINDS = frozenset({"destroyed_by_battle", "flipped", "damage_calculation", "battle_ended_early"})
_BATTLE_READS = _BATTLE_KINDS | {"card_moved", "phase_changed", "control_changed"}


@history(
    "battle",
    "The current Damage Step: monsters marked destroyed by battle (until they leave the field, or an Equip Card is "
    "destroyed instead of one, by its card data), monsters flipped by the "
    "attack, whether damage calculation was performed for this battle, whether the battle ended early (a battler left the "
    "field: a battle_ended_early event, or the attacker or the attack target moved off the field, or changed control, in the Damage Step "
    "before damage calculation). "
    "Forgotten when the Damage Step ends. Never the engine's destroyed_by_battle, flipped_by_battle, "
    "attack.damage_calculated or attack.battle_ended.",
    initial=((), (), False, False),
)
def _battle(prev, t):
    destroyed, flipped, calculated, ended = prev
    kinds = t.kind_set()
    # DS-BATTLER-LEAVES, from the events themselves (not only an engine's battle_ended_early):
    # the attacker or the attack target moved off the field (or changed control: the rulebook, the
    # seeds are silent) in the Damage Step before damage calculation
    a = t.before.get("attack") or {}
    battlers = {a.get("attacker"), a.get("target")} - {None} if ("card_moved" in kinds or "control_changed" in kinds) else set()
    if not (destroyed or flipped or calculated or ended or battlers) and _BATTLE_KINDS.isdisjoint(kinds):
        return prev
    if _BATTLE_READS.isdisjoint(kinds):
        return prev  # none of the events it reads
    d, f = set(destroyed), set(flipped)
    step = str(t.before.get("step", ""))
    for e in t.events:
        k = e.kind
        if k == "phase_changed":
            step = str(e.get("to", ""))
        if k == "destroyed_by_battle":
            d.add(e["card_uid"])
        elif k == "flipped" and e.get("by") == "battle":
            f.add(e["card_uid"])
        elif k == "damage_calculation":
            calculated = True
        elif k == "battle_ended_early":
            ended = True
        elif k == "destroyed" and d and step == "damage_step_end" and t.cards is not None:
            # DS-INSTEAD: an Equip Card destroyed instead of its monster, by its card data (the
            # monster stays on the field, no longer destroyed by battle)
            uid = e.get("card_uid")
            for p in t.before.get("players") or ():
                for c in p.get("spells") or ():
                    if c is not None and c.get("uid") == uid and c.get("face_up") and c.get("equipped_to") in d:
                        if t.cards.destroyed_instead_of_equipped(c.get("card")):
                            d.discard(c.get("equipped_to"))
        elif left_field(e):
            d.discard(e.get("card_uid"))
            f.discard(e.get("card_uid"))
            if step.startswith("damage_step") and not calculated and e.get("card_uid") in battlers:
                ended = True
        elif k == "control_changed" and step.startswith("damage_step") and not calculated and e.get("card_uid") in battlers:
            ended = True  # DS-BATTLER-LEAVES: a battler that changes control ends the battle too (RB)
        elif k == "phase_changed" and str(e.get("from", "")).startswith("damage_step") and not str(e.get("to", "")).startswith("damage_step"):
            d, f, calculated, ended = set(), set(), False, False
    return (tuple(sorted(d)), tuple(sorted(f)), calculated, ended)


_CHAIN_READS = frozenset({"phase_changed", "chain_link_added", "activation_negated", "effect_negated", "chain_link_resolved", "chain_resolved", "passed"})


@history(
    "chain",
    "The chain as its links were added (card, effect, player, spell speed, targets, negated) until they resolve; whether "
    "a link already resolved negated the attack (what the resolved links did, kept only as that); chains started during "
    "damage calculation; whether the chain began to resolve (two passes in succession since its last link, or a link "
    "resolved); the links whose effect (not activation) was negated (effect_negated events). Never the engine's chain, "
    "chain[].negated, on_chain or choice.",
    initial=((), False, 0, 0, ()),
)
def _chain(prev, t):
    links, negated_attack, calc, rounds, eff_neg = prev
    kinds = t.kind_set()
    if not links and "chain_link_added" not in kinds and "phase_changed" not in kinds:
        return prev
    if _CHAIN_READS.isdisjoint(kinds):
        return prev  # none of the events it reads
    links = list(links)
    step = t.before.get("step")
    for e in t.events:
        k = e.kind
        if k == "phase_changed":
            step = e.get("to")
            calc = 0
        elif k == "passed":
            if links and rounds < 2:
                rounds += 1
        elif k == "chain_link_added":
            if not links and step == "damage_step_during_calculation":
                calc += 1
            rounds = 0
            links.append((e["card_uid"], e["card"], e.get("effect"), e.get("player"), e.get("speed"), tuple(e.get("targets") or ()), False))
        elif k == "activation_negated":
            uid = e.get("card_uid")
            for i in range(len(links) - 1, -1, -1):
                if links[i][0] == uid:
                    links[i] = links[i][:6] + (True,)
                    break
        elif k == "effect_negated":
            if e.get("card_uid") not in eff_neg:
                eff_neg = tuple(sorted((*eff_neg, e.get("card_uid"))))
        elif k == "chain_link_resolved":
            rounds = 2
            uid = e.get("card_uid")
            negated = bool(e.get("negated")) or uid in eff_neg
            eff_neg = tuple(u for u in eff_neg if u != uid)
            for i in range(len(links) - 1, -1, -1):
                if links[i][0] == uid:
                    negated = negated or links[i][6]
                    del links[i]
                    break
            if not negated and negated_attack is not True:
                f = t.cards.negates_attack(e.get("card")) if t.cards is not None else None
                negated_attack = None if f is None else (f or negated_attack)
        elif k == "chain_resolved":
            links, negated_attack, eff_neg = [], False, ()
    if not links:
        rounds, eff_neg = 0, ()
    return (tuple(links), negated_attack, calc, rounds, eff_neg)


@history(
    "db_resolved",
    "Cards of a card database (--cards-db) whose chain link resolved this turn, by the chain_link_resolved events: a "
    "sorted tuple of names, kept only on a run with such cards; forgotten when the turn changes. Their resolved effects "
    "are not modelled (a card profile says when an effect may be activated, not what it does), so the invariants that "
    "say what must be offered or what is legal say \"not judged\" after one (issue 30 item 6, docs/ocgcore-findings.md F28).",
)
def _db_resolved(prev, t):
    rows = getattr(t.cards, "rows", None)
    if not rows:
        return prev
    if t.before.get("turn") != t.after.get("turn"):
        prev = ()
    new = {e.get("card") for e in t.of("chain_link_resolved")} & set(rows) - set(prev)
    return tuple(sorted({*prev, *new})) if new else prev
