"""Hypothesis strategies for Battle Phase boards (docs/fuzzing.md).

``board_documents()`` draws the plain data of a board file (docs/boards.md): monsters in every
legal position (face-up Attack, face-up Defense, face-down Defense; Tokens face-up only), with
summoned / Set this turn and taken control; Set Spells and Traps (Set this turn or not), face-up
Equip Spells with the monster they equip, face-up Continuous Traps with the monster they keep;
a Field Spell; hands, Graveyards, banished piles and Decks; LP, the turn and the turn player.
``boards()`` draws the :class:`~bpcheck.model.board.Board` itself.

Every board drawn is valid by construction: it is built by the board loader
(:func:`bpcheck.model.board.board_from_dict`, the code behind `bpcheck validate`), and the
strategy only ever draws what the loader accepts, so no example is rejected. The card pool is the
built-in one, a subset of it (``cards=``) and cards defined with the board (``extra_cards=``,
tables in the card format of docs/cards.md, written into the board's ``[[card]]``).

Boards shrink toward fewer cards (every list and optional zone shrinks to empty), fewer and lower
zones, simpler cards (Normal Monsters before Effect Monsters, and so on), round numbers (8000 LP,
turn 2) and the turn player's side (P1 is the turn player, Attack Position, cards face-down
without extra flags). Draws are biased toward what makes Battle Phase interactions: the turn
player has an attacker more often than not, and the other player has something to respond with.

A drawn document is written as a board file with :func:`bpcheck.harness.board_writer.write_board`.

**Cards of a card database** (``cards_db=FILE``, `bpcheck fuzz --cards-db`, docs/fuzzing.md): the
boards are drawn from every card of the database (or the ``cards`` named, by name or passcode),
named by passcode so that the board file reproduces with ``--cards-db FILE``. The database is
indexed once per process (:func:`db_index`: each card's facts and its profile,
:mod:`bpcheck.model.profile`), and draws are weighted by the profile (:func:`battle_tier`): each
card is drawn from one of four groups chosen evenly, the plain Normal Monsters (which the
reference model plays; one draw in six), the cards with a Battle Phase effect (three in six), the
cards with a fast effect or a trigger (one in six), and every card that may go there (one in six).
Such boards also get Master Rule 5's places (:func:`_extra_places`): Xyz materials, a monster in
an Extra Monster Zone (Link monsters among them) and cards in the Pendulum Zones.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

from hypothesis import strategies as st

from bpcheck.errors import InputError
from bpcheck.harness.board_writer import document_board
from bpcheck.model.board import Board
from bpcheck.model import cdb, fields
from bpcheck.model.cards import Card, CardPool, builtin_pool, card_from_db, parse_card, pool_with
from bpcheck.model.profile import CardProfile, profile

POSITIONS = ("attack", "defense", "facedown")
LP_ROUND = (4000, 2000, 1000, 500, 100)
# Operations that add monsters to the field or take them off it: what makes replays and battles
# that end early, so the other player's Set cards favour them.
FIELD_CHANGING_OPS = {"special_summon", "tokens", "tribute", "destroy", "return_to_hand", "take_control", "banish"}
TURNS = (2, 3, 1, 4, 5, 10)  # shrinks toward turn 2, the first turn with a Battle Phase


def _simplicity(c: Card) -> tuple:
    """Shrink order of cards: plain ones first, so a shrunk board names the simplest card that
    still shows the bug."""
    order = {
        ("monster", "normal"): 0,
        ("monster", "flip"): 1,
        ("monster", "effect"): 2,
        ("token", "token"): 3,
        ("trap", "normal"): 0,
        ("spell", "quick-play"): 1,
        ("trap", "counter"): 2,
        ("trap", "continuous"): 3,
        ("spell", "equip"): 4,
        ("spell", "normal"): 5,
        ("spell", "field"): 6,
    }
    return (order.get((c.kind, c.subtype), 9), c.name)


@dataclass(frozen=True, eq=False)  # hashed by identity: the strategies below are cached per choice
class CardChoice:
    """The cards a strategy may place, by where they can go (names in shrink order)."""

    pool: CardPool
    extra: tuple[dict, ...]  # board-defined card tables, written into the board's [[card]]
    monsters: tuple[str, ...]  # Monster Zones (Tokens included)
    spell_traps: tuple[str, ...]  # Spell & Trap Zones
    field_spells: tuple[str, ...]
    piles: tuple[str, ...]  # hand, Graveyard, banished, Deck (no Tokens)
    responders: tuple[str, ...] = ()  # Spells/Traps of spell speed 2 or more: Traps and Quick-Play Spells
    revivable: tuple[str, ...] = ()  # monsters that can be in a Graveyard (no Tokens)
    from_hand: tuple[str, ...] = ()  # cards with something to do from the hand
    fighters: tuple[str, ...] = ()  # monsters with a continuous effect (on attacking, being attacked, ...)
    field_changers: tuple[str, ...] = ()  # responders that add or remove monsters (replays, ended battles)
    # Cards of a card database (db_card_choice): keys are passcodes, looked up in `lookup`; each
    # place draws from its groups chosen evenly (plain Normal Monsters, Battle Phase effects, fast
    # effects, everything: see db_card_choice); empty for the pool, whose draws are as above.
    lookup: Mapping[Any, Card] | None = None
    groups: Mapping[str, tuple[tuple, ...]] | None = None

    def card(self, name: Any) -> Card:
        if self.lookup is not None:
            return self.lookup[name]
        return self.pool[name]

    @property
    def from_database(self) -> bool:
        return self.lookup is not None


def card_choice(cards: Sequence[str] | None = None, extra_cards: Sequence[dict] = ()) -> CardChoice:
    """The cards to draw from: ``cards`` (names; default: the whole pool) plus ``extra_cards``
    (card tables, always included). Unknown names and bad tables are :class:`InputError`."""
    extra = tuple(extra_cards)
    parsed = [parse_card(c, "<extra cards>", f"card[{i}]") for i, c in enumerate(extra)]
    pool = pool_with(parsed)
    if cards is None:
        names = [c.name for c in pool]
    else:
        names = []
        for i, n in enumerate(cards):
            if n not in pool:
                close = difflib.get_close_matches(str(n), pool.names(), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise InputError("--cards", f"[{i}]", f"unknown card {n!r}{hint}")
            if n not in names:
                names.append(n)
        names += [c.name for c in parsed if c.name not in names]
    chosen = sorted((pool[n] for n in names), key=_simplicity)
    return CardChoice(
        pool=pool,
        extra=extra,
        monsters=tuple(c.name for c in chosen if c.is_monster),
        spell_traps=tuple(c.name for c in chosen if c.is_spell_trap and c.subtype != "field"),
        field_spells=tuple(c.name for c in chosen if c.kind == "spell" and c.subtype == "field"),
        piles=tuple(c.name for c in chosen if not c.is_token),
        fighters=tuple(c.name for c in chosen if c.kind == "monster" and c.statics),
        field_changers=tuple(
            c.name
            for c in chosen
            if (c.kind == "trap" or c.subtype == "quick-play")
            and any(o.op in FIELD_CHANGING_OPS for e in c.effects for o in e.cost + e.ops)
        ),
        responders=tuple(c.name for c in chosen if c.kind == "trap" or (c.kind == "spell" and c.subtype == "quick-play")),
        revivable=tuple(c.name for c in chosen if c.is_monster and not c.is_token),
        from_hand=tuple(
            c.name for c in chosen if (c.kind == "spell" and c.subtype == "quick-play") or any(e.location == "hand" for e in c.effects)
        ),
    )


# -- cards of a card database --------------------------------------------------------------------

# What makes an effect a Battle Phase one, read from its profile (model/profile.py's vocabulary):
# the events of a battle, the windows of the Battle Phase.
BATTLE_EVENTS = frozenset({
    "destroyed_by_battle", "destroys_by_battle", "battle_damage", "attack_declared", "attacked", "attacks", "battles",
    "start_of_battle_phase", "end_of_battle_phase", "start_of_damage_step", "before_damage_calculation",
    "damage_calculation", "after_damage_calculation", "end_of_damage_step",
})
BATTLE_WINDOWS = frozenset({
    "battle_phase", "start_of_battle_phase", "end_of_battle_phase", "attack_declared_by_opponent", "attack_declared",
    "attacked", "damage_step", "start_of_damage_step", "before_damage_calculation", "damage_calculation",
    "after_damage_calculation", "end_of_damage_step",
})
# A continuous effect (not activated: no events, no windows) that speaks of battles: piercing,
# "cannot be destroyed by battle", ATK while attacking, damage calculation.
BATTLE_TEXT_RX = re.compile(r"\b(?:battle|attacks?|attacked|attacking|Damage Step|damage calculation)\b", re.IGNORECASE)

TIER_NAMES = ("none", "fast", "battle")


def battle_tier(prof: CardProfile) -> int:
    """How much a card's profile has to do with the Battle Phase, for weighting draws: 2, an
    effect of the Battle Phase (an activated effect whose events or windows are a battle's or the
    Battle Phase's, one that the Damage Step rules let be activated at damage calculation that is
    not a trigger, or a continuous effect that speaks of battles); 1, a fast effect or a trigger
    (Quick Effect, trigger, Flip, Spell Speed 2 or 3); 0, none. Read from the profile only: an
    "unknown" decision counts for nothing."""
    tier = 0
    for e in prof.effects:
        if not e.kind.decided:
            continue
        if not e.activated:
            if e.kind.value == "continuous" and BATTLE_TEXT_RX.search(e.text):
                return 2
            continue
        events = e.events.value if isinstance(e.events.value, list) else []
        windows = e.windows.value if isinstance(e.windows.value, list) else []
        if BATTLE_EVENTS.intersection(events) or BATTLE_WINDOWS.intersection(windows):
            return 2
        fast = e.kind.value in ("quick", "trigger", "flip") or e.speed.value in (2, 3)
        if fast and e.kind.value not in ("trigger", "flip") and e.damage_step:
            calc = e.damage_step.get("tcg", {}).get("during_calc")
            if calc is not None and calc.value is True:
                return 2
        if fast:
            tier = 1
    return tier


@dataclass(frozen=True)
class DbEntry:
    """One card of a database index: its passcode (the key boards name it by), the card as a run
    sees it (a pool card when the passcode is the pool's) and its Battle Phase tier."""

    code: int
    card: Card
    tier: int
    plain_normal: bool  # type Monster + Normal and nothing else: the reference model plays it


@dataclass(frozen=True, eq=False)
class DbIndex:
    path: str
    entries: tuple[DbEntry, ...]  # the cards a board may draw, by passcode
    by_code: Mapping[int, DbEntry]
    left_out: int  # rows no board draws unless named: alternate artworks, Tokens, pool names under another passcode


_DB_INDEXES: dict[tuple, DbIndex] = {}


def db_index(path: str) -> DbIndex:
    """The cards of the database ``path`` that boards are drawn from, with their profiles' tiers:
    read once per process (and again only when the file changed), never per example. Left out
    (unless named with ``cards``): alternate artworks (``alias``: the card itself is there),
    Tokens (a board holds one only on the field, and the real core places none); always: a row
    with a pool card's name under another passcode, or whose name a board refuses (a control or
    invisible character: 1 row of cards-full.cdb), since a board may not name it. Bad input (a missing or
    unreadable database) is the reader's :class:`InputError`."""
    db = cdb.open_db(path)
    try:
        st_ = os.stat(path)
        key = (os.path.abspath(path), st_.st_mtime_ns, st_.st_size)
    except OSError:
        key = None
    if key is not None and key in _DB_INDEXES:
        return _DB_INDEXES[key]
    rows = list(db)  # reads the file (InputError when it is not a card database)
    entries, by_code, left_out = [], {}, 0
    for row in rows:
        e = _db_entry(row)
        if e is None:
            left_out += 1
            continue
        entries.append(e)
        by_code[e.code] = e
    index = DbIndex(db.path, tuple(entries), by_code, left_out)
    if key is not None:
        _DB_INDEXES[key] = index
    return index


@lru_cache(maxsize=None)
def _pool_by_code() -> dict[int, Card]:
    out: dict[int, Card] = {}
    for c in builtin_pool():
        try:
            out.setdefault(int(c.passcode), c)
        except ValueError:
            pass
    return out


def _db_entry(row: "cdb.Card", named: bool = False) -> DbEntry | None:
    """The index entry of a database row, or None when a board cannot draw it (``named``: the
    user named it, so only what a board cannot hold at all is left out)."""
    pool = _pool_by_code()
    code = row.code
    if row.kind not in ("monster", "spell", "trap"):
        return None
    try:
        fields.check_name(row.name, "", "", "card name")  # what a board checks of every card it names
    except InputError:
        return None
    if row.alias and not named:
        return None
    if row.alias in pool:
        code = row.alias
    if code in pool:
        card = pool[code]
        plain = card.kind == "monster" and card.subtype == "normal"
    elif row.name in builtin_pool():  # a pool card's name under another passcode: a board refuses it
        return None
    else:
        card = card_from_db(row)
        plain = row.type == cdb.TYPE_MONSTER | cdb.TYPE_NORMAL
    if (card.is_token or row.has(cdb.TYPE_TOKEN)) and not named:
        return None
    return DbEntry(code, card, battle_tier(profile(row)), plain)


def db_card_choice(cards_db: str, cards: Sequence[Any] | None = None) -> CardChoice:
    """The cards to draw from a card database (every card of :func:`db_index`, or ``cards``:
    names or passcodes, each looked up in the database; an unknown one is an :class:`InputError`
    of ``--cards``). Boards name the cards by passcode. The same choice object for the same
    arguments in a process (its strategies are cached by it). With ``cards``, only those are
    profiled, not the whole database."""
    if cards is None:
        return _db_choice(db_index(cards_db), None)
    db = cdb.open_db(cards_db)
    len(db)  # InputError now when it is not a card database
    try:
        st_ = os.stat(cards_db)
        stamp: tuple = (os.path.abspath(cards_db), st_.st_mtime_ns, st_.st_size)
    except OSError:
        stamp = (os.path.abspath(cards_db),)
    return _db_choice(stamp, tuple(cards))


@lru_cache(maxsize=64)
def _db_choice(source: Any, cards: tuple | None) -> CardChoice:
    """The choice over a :class:`DbIndex` (``cards`` None), or over the ``cards`` named of the
    database ``source[0]`` (a path and its stamp, so a changed file is read again)."""
    if cards is None:
        entries = list(source.entries)
    else:
        db = cdb.open_db(source[0])
        entries, seen = [], set()
        for i, ref in enumerate(cards):
            key = int(ref) if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit()) else ref
            try:
                row = db.card(key, f"[{i}]")
            except InputError as e:
                if e.file != db.path:
                    raise
                raise InputError("--cards", f"[{i}]", f"{e.problem} in the card database {db.path}") from None
            if row.alias and db.get(row.alias) is not None:
                row = db.get(row.alias)
            e = _db_entry(row, named=True)
            if e is None:
                raise InputError("--cards", f"[{i}]", f"{row.name!r} ({row.code}) cannot be placed on a board (the pool has another card of that name, its name holds a character a board refuses, or it is neither a monster, a Spell nor a Trap)")
            if e.code not in seen:
                seen.add(e.code)
                entries.append(e)
    return _choice_of(entries)


def db_choice_summary(choice: CardChoice) -> dict:
    """How many cards a database choice draws from, and in each group: ``cards``, ``battle``
    (a Battle Phase effect), ``fast`` (a fast effect or a trigger), ``plain_normal`` (plain Normal
    Monsters, which the reference model plays), ``monsters``."""
    groups = choice.groups or {}
    union = [set().union(*(g[i] for g in groups.values())) for i in range(4)] if groups else [set()] * 4
    return {
        "cards": len(choice.lookup or {}),
        "plain_normal": len(union[0]),
        "battle": len(union[1]),
        "fast": len(union[2]),
        "monsters": len(choice.monsters),
    }


def _choice_of(entries: list[DbEntry]) -> CardChoice:
    """A CardChoice over database entries: per place, the groups it draws from, in shrink order:
    plain Normal Monsters, Battle Phase effects, fast effects, every card that may go there, drawn
    from by :data:`GROUP_WEIGHTS` (1, 3, 1, 1 in 6); an empty group is left out (a Spell & Trap
    Zone has no plain Normal Monsters: Battle Phase cards three draws in five)."""
    # By passcode, not by simplicity: Hypothesis draws the first elements of a long list more
    # often, and the plain Normal Monsters (the shrink target) have a group of their own.
    entries = sorted(entries, key=lambda e: e.code)
    lookup = {e.code: e.card for e in entries}

    def keys(pred) -> tuple[int, ...]:
        return tuple(e.code for e in entries if pred(e))

    def grouped(pred) -> tuple[tuple[int, ...], ...]:  # in the order of GROUP_WEIGHTS
        return (
            keys(lambda e: pred(e) and e.plain_normal),
            keys(lambda e: pred(e) and e.tier == 2),
            keys(lambda e: pred(e) and e.tier == 1),
            keys(pred),
        )

    def monster(e):
        return e.card.is_monster

    def on_field_spell(e):
        return e.card.is_spell_trap and e.card.subtype != "field"

    def field(e):
        return e.card.kind == "spell" and e.card.subtype == "field"

    def in_gy(e):  # a Graveyard or banished: no Tokens
        return not e.card.is_token

    def in_deck(e):  # a hand or a Deck: no Tokens, no Extra Deck monsters
        return not e.card.is_token and not e.card.is_extra_deck

    def extra_zone(e):  # an Extra Monster Zone: a monster Summoned from the Extra Deck (docs/boards.md)
        return monster(e) and not e.card.is_token and (e.card.is_extra_deck or e.card.has_type(cdb.TYPE_PENDULUM))

    def pendulum(e):  # a Pendulum Zone: a Pendulum monster card
        return monster(e) and e.card.has_type(cdb.TYPE_PENDULUM)

    groups = {
        "monsters": grouped(monster),
        "extra_monsters": grouped(extra_zone),
        "pendulum": grouped(pendulum),
        "spells": grouped(on_field_spell),
        "field_spells": grouped(field),
        "hand": grouped(in_deck),
        "graveyard": grouped(lambda e: monster(e) and in_gy(e)),
        "banished": grouped(in_gy),
        "deck": grouped(in_deck),
    }
    return CardChoice(
        pool=builtin_pool(),
        extra=(),
        monsters=keys(monster),
        spell_traps=keys(on_field_spell),
        field_spells=keys(field),
        piles=keys(in_gy),
        lookup=lookup,
        groups=groups,
    )


@lru_cache(maxsize=None)
def _rare(n: int = 6):
    """A boolean that is True about once in ``n`` draws and shrinks to False."""
    return st.integers(0, n - 1).map(lambda x: x == n - 1)


@lru_cache(maxsize=None)
def _likely(n: int = 4):
    """A boolean that is True about ``n - 1`` times in ``n`` and shrinks to False."""
    return st.integers(0, n - 1).map(lambda x: x != 0)


@lru_cache(maxsize=None)
def _sampled(names: tuple):
    return st.sampled_from(names)


@lru_cache(maxsize=None)
def _biased(*groups: Sequence[str]):
    """A card name from one of ``groups`` chosen evenly (the first ones: the cards that make
    Battle Phase interactions; the last: every card that may go there); empty groups are left
    out. Shrinks toward the simplest card of the first group."""
    parts = [_sampled(tuple(g)) for g in groups if g]
    return parts[0] if len(parts) == 1 else st.one_of(*parts)


@lru_cache(maxsize=None)
def _positions(token: bool, attacker: bool):
    """Face-up Attack, face-up Defense, face-down Defense (Tokens: face-up only); the turn
    player's monsters are in Attack Position more often."""
    pos = st.sampled_from(POSITIONS[:2] if token else POSITIONS)
    return st.one_of(st.just("attack"), pos) if attacker else pos


@lru_cache(maxsize=None)
def _zones(low: int, high: int):
    """Distinct zone numbers 1-5; shrinks toward fewer and lower zones."""
    return st.lists(st.integers(1, 5), unique=True, min_size=low, max_size=high)


@lru_cache(maxsize=None)
def _pile(favoured: tuple, everything: tuple, n: int):
    return st.lists(_biased(favoured, everything), min_size=1, max_size=n)


# How often each group of a database choice is drawn from: plain Normal Monsters, Battle Phase
# effects, fast effects or triggers, every card (CardChoice.groups, in this order).
GROUP_WEIGHTS = (1, 3, 1, 1)


@lru_cache(maxsize=None)
def _grouped(choice: CardChoice, place: str):
    """A database card for ``place`` (a key of ``choice.groups``): a group drawn by
    :data:`GROUP_WEIGHTS` (empty groups left out), then a card of it. Shrinks toward the first
    group (plain Normal Monsters) and its simplest card. (``st.one_of`` would not do: it draws
    each distinct strategy evenly, so a group given twice would not count twice.)"""
    groups = [g for g in choice.groups[place] if g]
    weights = [w for g, w in zip(choice.groups[place], GROUP_WEIGHTS) if g]
    picks = tuple(i for i, w in enumerate(weights) for _ in range(w))
    parts = [_sampled(tuple(g)) for g in groups]
    return st.sampled_from(picks).flatmap(lambda i: parts[i])


@lru_cache(maxsize=None)
def _db_pile(choice: CardChoice, place: str, n: int):
    return st.lists(_grouped(choice, place), min_size=1, max_size=n)


@lru_cache(maxsize=None)
def _lp():
    return st.one_of(st.just(8000), st.sampled_from(LP_ROUND), st.integers(1, 9999))


def _activation(c: Card):
    for e in c.effects:
        if e.type == "activate":
            return e
    return None


def _link_kind(c: Card) -> str | None:
    """How a face-up copy of this Spell/Trap is placed: "equipped_to" / "attached_to" (it needs
    a face-up monster), "free" (it needs nothing), or None (a face-up copy cannot be written as
    a board: a Normal Spell/Trap, or a card like Call of the Haunted whose link to its monster a
    board cannot express)."""
    if c.subtype == "equip":
        return "equipped_to"
    if c.kind == "trap" and c.subtype == "continuous":
        eff = _activation(c)
        if eff is None or not eff.targets:
            return "free"
        if any(o.op == "attach" for o in eff.ops) and all(t.zone == "monster" for t in eff.targets):
            return "attached_to"
    return None


def _link_targets(c: Card, side: int, monsters: list[list[dict]], choice: CardChoice) -> list[str]:
    """Face-up monsters this Equip / Continuous Trap controlled by ``side`` may be linked to,
    as "P2 M1" references: those its activation could target."""
    eff = _activation(c)
    spec = eff.targets[0] if eff is not None and eff.targets else None
    out = []
    for s in (0, 1):
        if spec is not None and spec.side == "own" and s != side:
            continue
        if spec is not None and spec.side == "opponent" and s == side:
            continue
        for m in monsters[s]:
            if m["position"] == "facedown":
                continue
            mc = choice.card(m["card"])
            if spec is not None and spec.effect_monster and not mc.is_effect_monster:
                continue
            if spec is not None and spec.race and mc.race != spec.race:
                continue
            out.append(f"P{s + 1} M{m['zone']}")
    return out


NEAR_ATK = 100  # a monster "near" another in ATK: at most this far (the pool has no two Normal Monsters this close)


@lru_cache(maxsize=4096)
def _near_atk(choice: CardChoice, atk: int, plain: bool):
    """The monsters of a database choice whose ATK is within :data:`NEAR_ATK` of ``atk`` (equal
    included), of the plain Normal Monsters when ``plain`` (two Normal Monsters that meet: the
    reference model plays both), or None when there are none."""
    among = choice.groups["monsters"][0] if plain else choice.monsters
    near = tuple(k for k in among if choice.card(k).atk is not None and abs(choice.card(k).atk - atk) <= NEAR_ATK)
    return _sampled(near) if near else None


@lru_cache(maxsize=None)
@st.composite
def _monsters(draw, choice: CardChoice, side: int, turn_player: int, max_monsters: int, near: tuple = ()) -> list[dict]:
    """``near``: (ATK, plain Normal Monster) of the other side's monsters (database choices
    only): one monster in three is then drawn within NEAR_ATK of one of them (a plain Normal
    Monster near a plain Normal Monster), so that close battles (equal ATK, 50 apart) are drawn,
    which the pool's Normal Monsters never give."""
    if not choice.monsters or max_monsters <= 0:
        return []
    # The turn player usually has a monster, most often in Attack Position: an attacker.
    low = 1 if side == turn_player and draw(_likely(4)) else 0
    zones = draw(_zones(low, max_monsters))
    out = []
    for z in sorted(zones):
        close = _near_atk(choice, *draw(_sampled(near))) if near and draw(_rare(3)) else None
        if close is not None:
            name = draw(close)
        elif choice.groups is not None:
            name = draw(_grouped(choice, "monsters"))
        else:
            name = draw(_biased(choice.fighters, choice.monsters) if side == turn_player else _sampled(choice.monsters))
        c = choice.card(name)
        if c.has_type(cdb.TYPE_LINK):  # a Link monster is always in face-up Attack Position
            pos = "attack"
        else:
            pos = draw(_positions(c.is_token, side == turn_player))
        m: dict[str, Any] = {"zone": z, "card": name, "position": pos}
        if pos == "facedown":
            if draw(_rare(6)):
                m["set_this_turn"] = True
        elif draw(_rare(6)):
            m["summoned_this_turn"] = True
        # Control was taken: the owner is the other player. Rarer from a card database (1 in 32
        # monsters, not 1 in 8), which is fuzzed on the real core: its adapter cannot place such
        # a monster yet (the core asks SELECT_PLACE) and refuses the board (docs/fuzzing.md).
        if draw(_rare(32 if choice.groups is not None else 8)):
            m["owner"] = 2 - side
        out.append(m)
    return out


@st.composite
def _spells(draw, choice: CardChoice, side: int, turn_player: int, monsters: list[list[dict]], max_spells: int) -> list[dict]:
    if not choice.spell_traps or max_spells <= 0:
        return []
    # The other player usually has a card Set to answer the attack with.
    low = 1 if side != turn_player and draw(_likely(4)) else 0
    zones = draw(_zones(low, max_spells))
    out = []
    for z in sorted(zones):
        if choice.groups is not None:
            name = draw(_grouped(choice, "spells"))
        elif side == turn_player:
            name = draw(_biased(choice.responders, choice.spell_traps))
        else:
            name = draw(_biased(choice.field_changers, choice.responders, choice.spell_traps))
        c = choice.card(name)
        sp: dict[str, Any] = {"zone": z, "card": name}
        link = _link_kind(c)
        if c.from_database and link == "free" and "target" in c.text:
            link = None  # a database Continuous Trap that targets: its link to its target cannot be written
        targets = _link_targets(c, side, monsters, choice) if link in ("equipped_to", "attached_to") else []
        can_face_up = link == "free" or (link is not None and bool(targets))
        if can_face_up and draw(_rare(3)):
            sp["face_up"] = True
            if link in ("equipped_to", "attached_to"):
                sp[link] = draw(st.sampled_from(targets))
        elif draw(_rare(5)):
            sp["set_this_turn"] = True
        if draw(_rare(10)):
            sp["owner"] = 2 - side
        out.append(sp)
    return out


@lru_cache(maxsize=None)
@st.composite
def _field_spell(draw, choice: CardChoice) -> dict | None:
    if not choice.field_spells or not draw(_rare(6)):
        return None
    fs: dict[str, Any] = {"card": draw(_grouped(choice, "field_spells") if choice.groups is not None else _sampled(choice.field_spells))}
    if draw(_rare(4)):
        fs["face_up"] = False
        if draw(_rare(3)):
            fs["set_this_turn"] = True
    return fs


def board_documents(
    cards: Sequence[str] | None = None,
    extra_cards: Sequence[dict] = (),
    *,
    max_monsters: int = 3,
    max_spells: int = 3,
    max_hand: int = 2,
    max_graveyard: int = 2,
    max_banished: int = 1,
    max_deck: int = 2,
    turns: Sequence[int] = TURNS,
    name: str = "drawn board",
    cards_db: str | None = None,
) -> st.SearchStrategy[dict]:
    """Board files' data (docs/boards.md), valid by construction. ``cards``: the card names
    to draw from (default: the whole pool); ``extra_cards``: card tables defined with the board.
    ``max_*``: per player. ``turns``: the turn numbers to draw from (shrinks to the first).
    ``cards_db``: draw from the cards of this card database instead (``cards``: names or
    passcodes of it; boards name them by passcode and load with ``cards_db``: :func:`db_card_choice`).
    Unknown card names are an :class:`InputError` here, when the strategy is made."""
    if not turns or any(not isinstance(t, int) or isinstance(t, bool) or t < 1 for t in turns):
        raise InputError("<strategy>", "turns", f"expected turn numbers of at least 1, got {list(turns)!r}")
    if cards_db is not None:
        if extra_cards:
            raise InputError("<strategy>", "extra_cards", "board-defined cards are not drawn with a card database")
        choice = db_card_choice(cards_db, cards)
    else:
        choice = card_choice(cards, extra_cards)
    return _documents(choice, max_monsters, max_spells, max_hand, max_graveyard, max_banished, max_deck, tuple(turns), name)


@st.composite
def _documents(draw, choice: CardChoice, max_monsters, max_spells, max_hand, max_graveyard, max_banished, max_deck, turns, name) -> dict:
    turn = draw(st.sampled_from(turns))
    tp = draw(st.sampled_from((1, 2)))
    if choice.groups is None:
        monsters = [draw(_monsters(choice, side, tp - 1, max_monsters)) for side in (0, 1)]
    else:  # a database: the turn player's monsters first, then the other side's, some near them in ATK
        monsters = [[], []]
        monsters[tp - 1] = draw(_monsters(choice, tp - 1, tp - 1, max_monsters))
        plain = set(choice.groups["monsters"][0])
        atks = tuple(sorted({(a, m["card"] in plain) for m in monsters[tp - 1] if (a := choice.card(m["card"]).atk) is not None}))
        monsters[2 - tp] = draw(_monsters(choice, 2 - tp, tp - 1, max_monsters, atks))
    doc: dict[str, Any] = {"name": name, "turn": turn, "turn_player": tp}
    for side in (0, 1):
        pd: dict[str, Any] = {"lp": draw(_lp())}
        if monsters[side]:
            pd["monsters"] = monsters[side]
        spells = draw(_spells(choice, side, tp - 1, monsters, max_spells))
        if spells:
            pd["spells"] = spells
        fs = draw(_field_spell(choice))
        if fs is not None:
            pd["field_spell"] = fs
        # Piles are mostly empty (each card in them is one more thing to explore); a hand holds
        # cards to play from it, a Graveyard monsters to bring back, more often than not.
        for pile, n, favoured, odds in (
            ("hand", max_hand, choice.from_hand, 2),
            ("graveyard", max_graveyard, choice.revivable, 2),
            ("banished", max_banished, (), 8),
            ("deck", max_deck, (), 4),
        ):
            if choice.piles and n > 0 and draw(_rare(odds)):
                if choice.groups is not None:
                    if any(choice.groups[pile]):
                        pd[pile] = draw(_db_pile(choice, pile, n))
                else:
                    pd[pile] = draw(_pile(favoured, choice.piles, n))
        doc[f"p{side + 1}"] = pd
    if choice.groups is not None:  # drawn after everything else: the draws above stay as they were
        _extra_places(draw, choice, doc, tp - 1)
    if choice.extra:
        doc["card"] = [dict(c) for c in choice.extra]
    return doc


# Pendulum Zone k is Spell & Trap Zone PENDULUM_ZONES[k - 1] (docs/boards.md)
PENDULUM_ZONES = (1, 5)


def _extra_places(draw, choice: CardChoice, doc: dict, turn_player: int) -> None:
    """The places of Master Rule 5 that boards of a card database have (docs/boards.md, "Xyz
    materials, Extra Monster Zones, Pendulum Zones"): materials under a face-up Xyz monster (most
    of them: an Xyz monster without materials cannot use its own effects), a monster Summoned from
    the Extra Deck (a Link monster among them) in an Extra Monster Zone for one side in three,
    and Pendulum monster cards in the Pendulum Zones left free by the Spell & Trap Zones, one side in
    four. Each shrinks away (no materials, no Extra Monster Zone, no Pendulum Zone)."""
    used_emz: set[int] = set()  # as P1 sees them: P1's zone z is P2's zone 3 - z
    for side in (0, 1):
        pd = doc[f"p{side + 1}"]
        if any(choice.groups["extra_monsters"]) and draw(_rare(3)):
            free = [z for z in (1, 2) if (z if side == 0 else 3 - z) not in used_emz]
            if free:
                z = draw(st.sampled_from(free))
                used_emz.add(z if side == 0 else 3 - z)
                name = draw(_grouped(choice, "extra_monsters"))
                c = choice.card(name)
                pos = "attack" if c.has_type(cdb.TYPE_LINK) else draw(_positions(False, side == turn_player))
                pd["extra_monsters"] = [{"zone": z, "card": name, "position": pos}]
        for entry in [*pd.get("monsters", ()), *pd.get("extra_monsters", ())]:
            c = choice.card(entry["card"])
            if c.has_type(cdb.TYPE_XYZ) and entry["position"] != "facedown" and any(choice.groups["graveyard"]) and draw(_likely(4)):
                entry["materials"] = draw(_db_pile(choice, "graveyard", 2))
        if any(choice.groups["pendulum"]) and draw(_rare(4)):
            taken = {sp["zone"] for sp in pd.get("spells", ())}
            free = [k for k, z in enumerate(PENDULUM_ZONES, 1) if z not in taken]
            zones = draw(st.lists(st.sampled_from(free), unique=True, min_size=1, max_size=len(free))) if free else []
            if zones:
                pd["pendulum"] = [{"zone": k, "card": draw(_grouped(choice, "pendulum"))} for k in sorted(zones)]


def boards(cards: Sequence[str] | None = None, extra_cards: Sequence[dict] = (), **kw: Any) -> st.SearchStrategy[Board]:
    """Drawn :class:`~bpcheck.model.board.Board` objects (see :func:`board_documents`)."""
    cards_db = kw.get("cards_db")
    return board_documents(cards, extra_cards, **kw).map(lambda d: document_board(d, cards_db=cards_db))


__all__ = ["CardChoice", "DbIndex", "battle_tier", "board_documents", "boards", "card_choice", "db_card_choice", "db_choice_summary", "db_index"]
