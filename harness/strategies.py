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
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

from hypothesis import strategies as st

from bpcheck.errors import InputError
from bpcheck.harness.board_writer import document_board
from bpcheck.model.board import Board
from bpcheck.model.cards import Card, CardPool, parse_card, pool_with

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


    def card(self, name: str) -> Card:
        return self.pool[name]


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


@lru_cache(maxsize=None)
@st.composite
def _monsters(draw, choice: CardChoice, side: int, turn_player: int, max_monsters: int) -> list[dict]:
    if not choice.monsters or max_monsters <= 0:
        return []
    # The turn player usually has a monster, most often in Attack Position: an attacker.
    low = 1 if side == turn_player and draw(_likely(4)) else 0
    zones = draw(_zones(low, max_monsters))
    out = []
    for z in sorted(zones):
        name = draw(_biased(choice.fighters, choice.monsters) if side == turn_player else _sampled(choice.monsters))
        c = choice.card(name)
        pos = draw(_positions(c.is_token, side == turn_player))
        m: dict[str, Any] = {"zone": z, "card": name, "position": pos}
        if pos == "facedown":
            if draw(_rare(6)):
                m["set_this_turn"] = True
        elif draw(_rare(6)):
            m["summoned_this_turn"] = True
        if draw(_rare(8)):  # control was taken: the owner is the other player
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
        if side == turn_player:
            name = draw(_biased(choice.responders, choice.spell_traps))
        else:
            name = draw(_biased(choice.field_changers, choice.responders, choice.spell_traps))
        c = choice.card(name)
        sp: dict[str, Any] = {"zone": z, "card": name}
        link = _link_kind(c)
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
    fs: dict[str, Any] = {"card": draw(_sampled(choice.field_spells))}
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
) -> st.SearchStrategy[dict]:
    """Board files' data (docs/boards.md), valid by construction. ``cards``: the card names
    to draw from (default: the whole pool); ``extra_cards``: card tables defined with the board.
    ``max_*``: per player. ``turns``: the turn numbers to draw from (shrinks to the first).
    Unknown card names are an :class:`InputError` here, when the strategy is made."""
    if not turns or any(not isinstance(t, int) or isinstance(t, bool) or t < 1 for t in turns):
        raise InputError("<strategy>", "turns", f"expected turn numbers of at least 1, got {list(turns)!r}")
    choice = card_choice(cards, extra_cards)
    return _documents(choice, max_monsters, max_spells, max_hand, max_graveyard, max_banished, max_deck, tuple(turns), name)


@st.composite
def _documents(draw, choice: CardChoice, max_monsters, max_spells, max_hand, max_graveyard, max_banished, max_deck, turns, name) -> dict:
    turn = draw(st.sampled_from(turns))
    tp = draw(st.sampled_from((1, 2)))
    monsters = [draw(_monsters(choice, side, tp - 1, max_monsters)) for side in (0, 1)]
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
                pd[pile] = draw(_pile(favoured, choice.piles, n))
        doc[f"p{side + 1}"] = pd
    if choice.extra:
        doc["card"] = [dict(c) for c in choice.extra]
    return doc


def boards(cards: Sequence[str] | None = None, extra_cards: Sequence[dict] = (), **kw: Any) -> st.SearchStrategy[Board]:
    """Drawn :class:`~bpcheck.model.board.Board` objects (see :func:`board_documents`)."""
    return board_documents(cards, extra_cards, **kw).map(document_board)


__all__ = ["CardChoice", "board_documents", "boards", "card_choice"]
