"""A bpcheck board as an EDOPro puzzle: the Lua that sets the position up in the core.

Core player 0 is always the board's turn player (the core starts a puzzle on its own turn 1 with
player 0 to move), so board player ``p`` is core player ``p ^ turn_player``. The board's turn
number is kept by the adapter: the core's turn 1 is the board's turn ``N``; on a board turn > 1
the duel gets ``DUEL_ATTACK_FIRST_TURN`` so the core allows the Battle Phase it would forbid on
its own first turn. The board's ruleset adds the core's flags that select it
(:func:`bpcheck.model.rulesets.core_duel_flags`: ``DUEL_STORE_ATTACK_REPLAYS`` for goat). The flags
go to ``Debug.ReloadFieldBegin``, which replaces the duel's options with them (and Master Rule 5's).

What a puzzle cannot express raises :class:`~bpcheck.engines.interface.EngineRefusal`.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

from bpcheck.engines.interface import EngineRefusal
from bpcheck.model import cdb as C
from bpcheck.model.board import Board
from bpcheck.model.rulesets import DEFAULT_RULESET, core_duel_flags
from bpcheck.model.state import Pos

from .core import (
    DUEL_FLAGS,
    LOCATION_DECK,
    LOCATION_EXTRA,
    LOCATION_GRAVE,
    LOCATION_HAND,
    LOCATION_MZONE,
    LOCATION_REMOVED,
    LOCATION_SZONE,
    CardDatabase,
)

POS_LUA = {Pos.ATK: "POS_FACEUP_ATTACK", Pos.DEF: "POS_FACEUP_DEFENSE", Pos.FACEDOWN: "POS_FACEDOWN_DEFENSE"}
PILES = (("hand", LOCATION_HAND, "LOCATION_HAND"), ("graveyard", LOCATION_GRAVE, "LOCATION_GRAVE"),
         ("banished", LOCATION_REMOVED, "LOCATION_REMOVED"), ("deck", LOCATION_DECK, "LOCATION_DECK"))


@dataclass
class Puzzle:
    """The Lua of a board and what the adapter needs to follow its cards."""

    lua: str
    flags: int
    lp: tuple[int, int]  # per core player
    turn_offset: int  # board turn = core turn + turn_offset
    swap: int  # board player = core player ^ swap
    # (core player, location, sequence) -> (uid, code, board card name) for field cards
    field: dict[tuple[int, int, int], tuple[int, int, str]] = dc_field(default_factory=dict)
    # (core player, location) -> [(uid, code, name)] in the core's order for piles
    piles: dict[tuple[int, int], list[tuple[int, int, str]]] = dc_field(default_factory=dict)
    names: dict[int, str] = dc_field(default_factory=dict)  # passcode -> pool name
    # uid of an Xyz monster -> [(uid, code, name, core owner)] of its materials, in the core's order
    overlays: dict[int, list[tuple[int, int, str, int]]] = dc_field(default_factory=dict)


# The summon type a monster of the Extra Deck on the board was Summoned by (the frame's own):
# Debug.PreSummon records it, so a script asking "if this card was Xyz Summoned" finds it so.
SUMMON_TYPES = ((C.TYPE_LINK, "SUMMON_TYPE_LINK"), (C.TYPE_XYZ, "SUMMON_TYPE_XYZ"), (C.TYPE_SYNCHRO, "SUMMON_TYPE_SYNCHRO"),
                (C.TYPE_FUSION, "SUMMON_TYPE_FUSION"))


def passcode_of(name: str, board: Board, cards: CardDatabase) -> int:
    """The core's passcode for a pool card: the pool's passcode when cards.cdb has it, else the
    cards.cdb row of the same name (card facts come from cards.cdb)."""
    card = board.pool[name]
    try:
        code = int(card.passcode)
    except (TypeError, ValueError):
        code = 0
    if code in cards.rows:
        return code
    codes = cards.codes_by_name.get(name)
    if codes:
        return codes[0]
    raise EngineRefusal(f"card {name!r} (passcode {card.passcode}) is not in the core's card database {cards.path}")


def puzzle_ruleset_flags(board: Board) -> tuple[str, ...]:
    """The core's duel flags of the board's ruleset (names; model/rulesets.py), each one the
    adapter knows (:data:`~.core.DUEL_FLAGS`); a flag it does not know refuses the board."""
    names = core_duel_flags(board.ruleset)
    unknown = [n for n in names if n not in DUEL_FLAGS]
    if unknown:
        raise EngineRefusal(f"ruleset {board.ruleset}: the adapter does not know the core's duel flag(s) {', '.join(unknown)}")
    return names


def build_puzzle(board: Board, cards: CardDatabase, *, comment: list[str] | None = None) -> Puzzle:
    s = board.state
    tp = s.turn_player
    if s.step.value != "main1":
        raise EngineRefusal(f"the board starts in {s.step.value}; a puzzle starts in Main Phase 1")
    if s.chain or s.attack is not None or s.triggers or s.choice is not None or s.lingering:
        raise EngineRefusal("the board starts mid-chain, mid-attack or with lingering effects; a puzzle starts from a quiet field")
    flag_names = (["DUEL_ATTACK_FIRST_TURN"] if s.turn > 1 else []) + list(puzzle_ruleset_flags(board))
    flags = 0
    for n in flag_names:
        flags |= DUEL_FLAGS[n]
    lines = [f"-- bpcheck board: {board.name}", f"-- from {board.path}"]
    if board.source:
        lines.append(f"-- seed passage: {board.source}")
    lines.append(f"-- board turn {s.turn}, P{tp + 1} to move; core player 0 is P{tp + 1}")
    for c in comment or []:
        lines.append(f"-- {c}")
    ruleset = board.ruleset or DEFAULT_RULESET
    lines.append(f"-- ruleset {ruleset}: duel flags {' | '.join(flag_names) or 'none'} with Master Rule 5")
    # ReloadFieldBegin replaces the duel's options with these flags and Master Rule 5's (the
    # core's libdebug.cpp ReloadFieldBegin): the ruleset's flags are set here, not at creation
    lines.append(f"Debug.ReloadFieldBegin({' | '.join(flag_names) or '0'}, 5)")
    lp = [0, 0]
    for bp in (0, 1):
        cp = bp ^ tp
        lp[cp] = s.players[bp].lp
    for cp in (0, 1):
        lines.append(f"Debug.SetPlayerInfo({cp}, {lp[cp]}, 0, 0)")
    pz = Puzzle("", flags, (lp[0], lp[1]), s.turn - 1, tp)
    var: dict[int, str] = {}
    post: list[str] = []

    def add(name: str, uid: int, owner_bp: int, cp: int, loc: str, seq: int, pos: str) -> str:
        code = passcode_of(name, board, cards)
        pz.names[code] = name
        v = f"c{uid}"
        var[uid] = v
        card = board.pool[name]
        proc = ", true" if loc in ("LOCATION_MZONE", "LOCATION_EMZONE") and card.is_extra_deck else ""  # Summoned properly
        lines.append(f"local {v} = Debug.AddCard({code}, {owner_bp ^ tp}, {cp}, {loc}, {seq}, {pos}{proc}) -- {name}")
        post.append(f"if not {v} then error({_lua_str('bpcheck: could not place ' + name)}) end")
        if proc:
            kind = next(lua for bit, lua in SUMMON_TYPES if card.has_type(bit))
            post.append(f"Debug.PreSummon({v}, {kind})")
        return v

    def keep_control(v: str, owner_bp: int, bp: int, cp: int) -> None:
        """A monster under its non-owner's control: Debug.AddCard puts it there, but with no
        effect that gives the control the core's adjustment (processor.cpp, control_adjust: a
        monster's controller is its owner unless an EFFECT_SET_CONTROL says otherwise) hands it
        back to its owner before Main Phase 1, asking its owner for a zone (SELECT_PLACE). The
        effect the core's own permanent control change registers (field.cpp set_control) keeps it
        on the board's side."""
        if owner_bp != bp:
            post.append(f"do local e = Effect.CreateEffect({v}) e:SetType(EFFECT_TYPE_SINGLE) e:SetCode(EFFECT_SET_CONTROL) "
                        f"e:SetProperty(EFFECT_FLAG_CANNOT_DISABLE) e:SetValue({cp}) "
                        f"e:SetReset(RESET_EVENT|RESET_TOGRAVE|RESET_REMOVE|RESET_TOHAND|RESET_TODECK|RESET_OVERLAY|RESET_MSCHANGE) "
                        f"{v}:RegisterEffect(e) end")

    def add_materials(host_uid: int, cp: int, seq: int) -> None:
        """Xyz materials: Debug.AddCard on the Monster Zone its Xyz monster stands in puts the
        card under it (the core's xyz_add), in the order given."""
        out = []
        for ref in board.extras.materials_of(host_uid):
            add(ref.card, ref.uid, ref.owner, cp, "LOCATION_MZONE", seq, "POS_FACEUP")
            out.append((ref.uid, passcode_of(ref.card, board, cards), ref.card, ref.owner ^ tp))
        if out:
            pz.overlays[host_uid] = out

    for bp in (0, 1):
        cp = bp ^ tp
        p = s.players[bp]
        for i, m in enumerate(p.monsters):
            if m is None:
                continue
            card = board.pool[m.card]
            if card.is_token:
                raise EngineRefusal(f"P{bp + 1} M{i + 1}: {m.card} is a token on the board; a puzzle can only place real cards (tokens come from their effect)")
            v = add(m.card, m.uid, m.owner, cp, "LOCATION_MZONE", i, POS_LUA[m.pos])
            keep_control(v, m.owner, bp, cp)
            pz.field[(cp, LOCATION_MZONE, i)] = (m.uid, passcode_of(m.card, board, cards), m.card)
            if m.set_this_turn:
                post.append(f"{v}:SetStatus(STATUS_SET_TURN, true)")
            if m.summoned_this_turn:
                post.append(f"{v}:SetStatus(STATUS_SUMMON_TURN, true)")
            if m.mods or m.attacks_declared or m.declared_at or m.cannot_attack_this_turn or m.destroyed_by_battle:
                raise EngineRefusal(f"P{bp + 1} M{i + 1}: {m.card} carries turn history (modifiers, attacks) a puzzle cannot express")
            add_materials(m.uid, cp, i)
        # The Extra Monster Zones: the core's Monster Zone sequences 5 (left, as the controller
        # sees it) and 6 (right); LOCATION_EMZONE k places at 5 + k.
        for k, m in enumerate(board.extras.extra_monsters[bp]):
            if m is None:
                continue
            v = add(m.card, m.uid, m.owner, cp, "LOCATION_EMZONE", k, POS_LUA[m.pos])
            keep_control(v, m.owner, bp, cp)
            pz.field[(cp, LOCATION_MZONE, 5 + k)] = (m.uid, passcode_of(m.card, board, cards), m.card)
            if m.summoned_this_turn:
                post.append(f"{v}:SetStatus(STATUS_SPSUMMON_TURN, true)")
            add_materials(m.uid, cp, 5 + k)
        # The Pendulum Zones: LOCATION_PZONE 0 and 1, Spell & Trap Zones 1 and 5 under Master Rule 5.
        for k, st in enumerate(board.extras.pendulum[bp]):
            if st is None:
                continue
            add(st.card, st.uid, st.owner, cp, "LOCATION_PZONE", k, "POS_FACEUP")
            pz.field[(cp, LOCATION_SZONE, 0 if k == 0 else 4)] = (st.uid, passcode_of(st.card, board, cards), st.card)
        zones = [(i, st) for i, st in enumerate(p.spells) if st is not None]
        if p.field_zone is not None:
            zones.append((5, p.field_zone))
        for i, st in zones:
            loc = "LOCATION_FZONE" if i == 5 else "LOCATION_SZONE"
            seq = 0 if i == 5 else i
            pos = "POS_FACEUP" if st.face_up else "POS_FACEDOWN"
            v = add(st.card, st.uid, st.owner, cp, loc, seq, pos)
            pz.field[(cp, LOCATION_SZONE, i)] = (st.uid, passcode_of(st.card, board, cards), st.card)
            if st.set_this_turn:
                post.append(f"{v}:SetStatus(STATUS_SET_TURN, true)")
        for key, loc, lua in PILES:
            pile = getattr(p, key)
            out = []
            for k, ref in enumerate(pile):
                add(ref.card, ref.uid, ref.owner, cp, lua, 0, "POS_FACEDOWN_DEFENSE" if key in ("deck",) else "POS_FACEUP")
                out.append((ref.uid, passcode_of(ref.card, board, cards), ref.card))
            pz.piles[(cp, loc)] = out
        out = []
        for ref in board.extras.extra_deck[bp]:  # a Pendulum monster face-up, any other face-down
            up = board.pool[ref.card].has_type(C.TYPE_PENDULUM)
            add(ref.card, ref.uid, ref.owner, cp, "LOCATION_EXTRA", 0, "POS_FACEUP_DEFENSE" if up else "POS_FACEDOWN_DEFENSE")
            out.append((ref.uid, passcode_of(ref.card, board, cards), ref.card))
        pz.piles[(cp, LOCATION_EXTRA)] = out
    # Equips and continuous targets, once every card is placed.
    for bp in (0, 1):
        p = s.players[bp]
        for st in [x for x in p.spells if x is not None] + ([p.field_zone] if p.field_zone else []):
            if st.equipped_to is not None:
                post.append(f"if not Debug.PreEquip({var[st.uid]}, {var[st.equipped_to]}) then error({_lua_str('bpcheck: could not equip ' + st.card)}) end")
            for t in (st.attached_to, st.linked_monster):
                if t is not None:
                    post.append(f"Debug.PreSetTarget({var[st.uid]}, {var[t]})")
    lines.extend(post)
    lines.append("Debug.ReloadFieldEnd()")
    pz.lua = "\n".join(lines) + "\n"
    return pz


def _lua_str(text: str) -> str:
    """A Lua string literal (card names have apostrophes: Magician's Circle)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", " ") + "'"
