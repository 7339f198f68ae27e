"""Parsers for the core's message records (formats from the core's playerop.cpp / processor.cpp,
API v11): prompts become :class:`Prompt` objects, everything else is read by the tracker."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

MSG_RETRY, MSG_HINT, MSG_WIN = 1, 2, 5
MSG_SELECT_BATTLECMD, MSG_SELECT_IDLECMD, MSG_SELECT_EFFECTYN, MSG_SELECT_YESNO = 10, 11, 12, 13
MSG_SELECT_OPTION, MSG_SELECT_CARD, MSG_SELECT_CHAIN, MSG_SELECT_PLACE = 14, 15, 16, 18
MSG_SELECT_POSITION, MSG_SELECT_TRIBUTE, MSG_SORT_CHAIN, MSG_SELECT_COUNTER = 19, 20, 21, 22
MSG_SELECT_SUM, MSG_SELECT_DISFIELD, MSG_SORT_CARD, MSG_SELECT_UNSELECT_CARD = 23, 24, 25, 26
MSG_ANNOUNCE_RACE, MSG_ANNOUNCE_ATTRIB, MSG_ANNOUNCE_CARD, MSG_ANNOUNCE_NUMBER = 140, 141, 142, 143
MSG_ROCK_PAPER_SCISSORS, MSG_TOSS_COIN, MSG_TOSS_DICE = 132, 130, 131
MSG_NEW_TURN, MSG_NEW_PHASE = 40, 41
MSG_DRAW = 90
MSG_MOVE, MSG_POS_CHANGE, MSG_SET, MSG_SWAP = 50, 53, 54, 55
MSG_SUMMONING, MSG_SPSUMMONING, MSG_FLIPSUMMONING = 60, 62, 64
MSG_CHAINING, MSG_CHAINED, MSG_CHAIN_SOLVING, MSG_CHAIN_SOLVED = 70, 71, 72, 73
MSG_CHAIN_END, MSG_CHAIN_NEGATED, MSG_CHAIN_DISABLED = 74, 75, 76
MSG_BECOME_TARGET = 83
MSG_DAMAGE, MSG_RECOVER, MSG_EQUIP, MSG_LPUPDATE, MSG_PAY_LPCOST = 91, 92, 93, 94, 100
MSG_ATTACK, MSG_BATTLE, MSG_ATTACK_DISABLED = 110, 111, 112
MSG_DAMAGE_STEP_START, MSG_DAMAGE_STEP_END = 113, 114

PROMPTS = {
    MSG_SELECT_BATTLECMD: "SELECT_BATTLECMD", MSG_SELECT_IDLECMD: "SELECT_IDLECMD",
    MSG_SELECT_EFFECTYN: "SELECT_EFFECTYN", MSG_SELECT_YESNO: "SELECT_YESNO", MSG_SELECT_OPTION: "SELECT_OPTION",
    MSG_SELECT_CARD: "SELECT_CARD", MSG_SELECT_CHAIN: "SELECT_CHAIN", MSG_SELECT_PLACE: "SELECT_PLACE",
    MSG_SELECT_POSITION: "SELECT_POSITION", MSG_SELECT_TRIBUTE: "SELECT_TRIBUTE", MSG_SORT_CHAIN: "SORT_CHAIN",
    MSG_SELECT_COUNTER: "SELECT_COUNTER", MSG_SELECT_SUM: "SELECT_SUM", MSG_SELECT_DISFIELD: "SELECT_DISFIELD",
    MSG_SORT_CARD: "SORT_CARD", MSG_SELECT_UNSELECT_CARD: "SELECT_UNSELECT_CARD",
    MSG_ANNOUNCE_RACE: "ANNOUNCE_RACE", MSG_ANNOUNCE_ATTRIB: "ANNOUNCE_ATTRIB", MSG_ANNOUNCE_CARD: "ANNOUNCE_CARD",
    MSG_ANNOUNCE_NUMBER: "ANNOUNCE_NUMBER", MSG_ROCK_PAPER_SCISSORS: "ROCK_PAPER_SCISSORS",
}

U32 = struct.Struct("<I")
LOC = struct.Struct("<BBII")  # controller, location, sequence, position (loc_info, 10 bytes)


def u32(p: bytes, i: int) -> int:
    return U32.unpack_from(p, i)[0]


def loc(p: bytes, i: int) -> tuple[int, int, int, int]:
    return LOC.unpack_from(p, i)


@dataclass
class Prompt:
    """A prompt: who must answer, what kind, and the options it lists."""

    kind: int
    player: int
    raw: bytes
    # activatable effects: (code, con, loc, seq, description, client mode)
    chains: list[tuple] = field(default_factory=list)
    attackers: list[tuple] = field(default_factory=list)  # (code, con, loc, seq, direct_attackable)
    repositionable: list[tuple] = field(default_factory=list)  # (code, con, loc, seq)
    to_bp: bool = False
    to_m2: bool = False
    to_ep: bool = False
    forced: bool = False
    hint_timing: int = 0
    cards: list[tuple] = field(default_factory=list)  # (code, con, loc, seq, pos) to select
    unselect: list[tuple] = field(default_factory=list)
    cancelable: bool = False
    finishable: bool = False
    minimum: int = 0
    maximum: int = 0
    options: list[int] = field(default_factory=list)  # descriptions (SELECT_OPTION)
    description: int = 0
    code: int = 0
    positions: int = 0
    place_flag: int = 0
    place_count: int = 0
    available: int = 0  # ANNOUNCE_RACE / ANNOUNCE_ATTRIB: the bits that may be declared
    count: int = 0  # ... and how many of them

    @property
    def name(self) -> str:
        return PROMPTS.get(self.kind, f"message {self.kind}")


def parse_prompt(kind: int, p: bytes) -> Prompt:
    pr = Prompt(kind, p[0], p)
    if kind == MSG_SELECT_BATTLECMD:
        i = 1
        n = u32(p, i)
        i += 4
        for _ in range(n):
            code, con, lc, seq, desc, mode = struct.unpack_from("<IBBIQB", p, i)
            pr.chains.append((code, con, lc, seq, desc, mode))
            i += 19
        n = u32(p, i)
        i += 4
        for _ in range(n):
            pr.attackers.append(struct.unpack_from("<IBBBB", p, i))
            i += 8
        pr.to_m2, pr.to_ep = bool(p[i]), bool(p[i + 1])
    elif kind == MSG_SELECT_IDLECMD:
        i = 1
        for k, width in enumerate((10, 10, 7, 10, 10)):  # summon, spsummon, reposition, mset, sset
            n = u32(p, i)
            i += 4
            if k == 2:
                for j in range(n):
                    pr.repositionable.append(struct.unpack_from("<IBBB", p, i + j * 7))
            i += n * width
        n = u32(p, i)
        i += 4
        for _ in range(n):
            pr.chains.append(struct.unpack_from("<IBBIQB", p, i))
            i += 19
        pr.to_bp, pr.to_ep = bool(p[i]), bool(p[i + 1])
    elif kind == MSG_SELECT_CHAIN:
        pr.forced = bool(p[2])
        pr.hint_timing = u32(p, 3)
        n = u32(p, 11)
        i = 15
        for _ in range(n):
            code = u32(p, i)
            con, lc, seq, _pos = loc(p, i + 4)
            desc, mode = struct.unpack_from("<QB", p, i + 14)
            pr.chains.append((code, con, lc, seq, desc, mode))
            i += 23
    elif kind == MSG_SELECT_EFFECTYN:
        pr.code = u32(p, 1)
        con, lc, seq, pos = loc(p, 5)
        pr.cards = [(pr.code, con, lc, seq, pos)]
        pr.description = struct.unpack_from("<Q", p, 15)[0]
    elif kind == MSG_SELECT_YESNO:
        pr.description = struct.unpack_from("<Q", p, 1)[0]
    elif kind == MSG_SELECT_OPTION:
        n = p[1]
        pr.options = [struct.unpack_from("<Q", p, 2 + 8 * k)[0] for k in range(n)]
    elif kind in (MSG_SELECT_CARD, MSG_SELECT_TRIBUTE):
        pr.cancelable = bool(p[1])
        pr.minimum, pr.maximum = u32(p, 2), u32(p, 6)
        n = u32(p, 10)
        i = 14
        for _ in range(n):
            code = u32(p, i)
            if kind == MSG_SELECT_CARD:
                con, lc, seq, pos = loc(p, i + 4)
                i += 14
            else:
                con, lc, seq = struct.unpack_from("<BBI", p, i + 4)
                pos = 0
                i += 11
            pr.cards.append((code, con, lc, seq, pos))
    elif kind == MSG_SELECT_UNSELECT_CARD:
        pr.finishable, pr.cancelable = bool(p[1]), bool(p[2])
        pr.minimum, pr.maximum = u32(p, 3), u32(p, 7)
        n = u32(p, 11)
        i = 15
        for _ in range(n):
            code = u32(p, i)
            con, lc, seq, pos = loc(p, i + 4)
            pr.cards.append((code, con, lc, seq, pos))
            i += 14
        n = u32(p, i)
        i += 4
        for _ in range(n):
            code = u32(p, i)
            con, lc, seq, pos = loc(p, i + 4)
            pr.unselect.append((code, con, lc, seq, pos))
            i += 14
    elif kind in (MSG_SELECT_PLACE, MSG_SELECT_DISFIELD):
        pr.place_count = p[1]
        pr.place_flag = u32(p, 2)
    elif kind == MSG_SELECT_POSITION:
        pr.code = u32(p, 1)
        pr.positions = p[5]
    elif kind == MSG_ANNOUNCE_RACE:  # player u8, count u8, available u64 (playerop.cpp, AnnounceRace)
        pr.count, pr.available = p[1], struct.unpack_from("<Q", p, 2)[0]
    elif kind == MSG_ANNOUNCE_ATTRIB:  # player u8, count u8, available u32
        pr.count, pr.available = p[1], u32(p, 2)
    elif kind == MSG_ANNOUNCE_NUMBER:  # player u8, n u8, n x u64 (the numbers); answered by index
        pr.options = [struct.unpack_from("<Q", p, 2 + 8 * k)[0] for k in range(p[1])]
    return pr


def race_response(mask: int) -> bytes:
    return struct.pack("<Q", mask)


def attribute_response(mask: int) -> bytes:
    return struct.pack("<I", mask)


def int_response(v: int) -> bytes:
    return struct.pack("<i", v)


def cards_response(indexes: list[int]) -> bytes:
    """SELECT_CARD / SELECT_TRIBUTE: type 0 (u32 indexes)."""
    return struct.pack("<ii", 0, len(indexes)) + b"".join(struct.pack("<I", k) for k in indexes)


def unselect_response(index: int | None) -> bytes:
    return struct.pack("<i", -1) if index is None else struct.pack("<ii", 1, index)


def place_response(places: list[tuple[int, int, int]]) -> bytes:
    return b"".join(bytes((p, l, s)) for p, l, s in places)


def free_places(pr: Prompt) -> list[tuple[int, int, int]]:
    """The zones a SELECT_PLACE allows, the prompting player's first, lowest zone first."""
    out = []
    flag = pr.place_flag
    for side, shift in ((pr.player, 0), (1 - pr.player, 16)):
        for s in range(7):
            if not flag & (1 << (s + shift)):
                out.append((side, 0x04, s))
        for s in range(8):
            if not flag & (1 << (s + 8 + shift)):
                out.append((side, 0x08, s))
    return out
