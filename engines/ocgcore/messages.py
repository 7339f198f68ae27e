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
MSG_SHUFFLE_HAND, MSG_SHUFFLE_SET_CARD, MSG_RANDOM_SELECTED = 33, 36, 81
# the messages that follow a draw from the core's random number generator (duel::get_next_integer:
# operations.cpp toss_coin / toss_dice, libduel.cpp ShuffleSetCard, libgroup.cpp RandomSelect) whose
# outcome the duel goes on with; and field.cpp shuffle, a hand of two or more shuffled (even with
# DUEL_PSEUDO_SHUFFLE), whose outcome is only the hand's order (the tracker goes by passcode; a
# replay's piles are checked: engine.py, _take). Duel.GetRandomNumber draws with no message.
RANDOM_MESSAGES = frozenset((MSG_TOSS_COIN, MSG_TOSS_DICE, MSG_SHUFFLE_SET_CARD, MSG_RANDOM_SELECTED))
DRAW_MESSAGES = RANDOM_MESSAGES | {MSG_SHUFFLE_HAND}
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
    elif kind in (MSG_ANNOUNCE_NUMBER, MSG_ANNOUNCE_CARD):
        # player u8, n u8, n x u64: the numbers (answered by index), or the filter's opcodes
        # (answered with a passcode: playerop.cpp, AnnounceCard)
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


# Duel.AnnounceCard's filter: a stack program (ocgapi_constants.h OPCODE_*, the core's
# playerop.cpp is_declarable), evaluated here on the card data the core reads from the same database
OPCODE_BASE = 0x4000000000000000
_BINARY = {0x00: lambda a, b: a + b, 0x01: lambda a, b: a - b, 0x02: lambda a, b: a * b,
           0x03: lambda a, b: int(a / b) if b else None, 0x04: lambda a, b: int(bool(a) and bool(b)),
           0x05: lambda a, b: int(bool(a) or bool(b)), 0x08: lambda a, b: a & b, 0x09: lambda a, b: a | b,
           0x11: lambda a, b: a ^ b, 0x12: lambda a, b: a << (b & 63), 0x13: lambda a, b: a >> (b & 63)}
_UNARY = {0x06: lambda a: -a, 0x07: lambda a: int(not a), 0x10: lambda a: ~a}
OPCODE_ALLOW_ALIASES, OPCODE_ALLOW_TOKENS = OPCODE_BASE | 0x14 << 32, OPCODE_BASE | 0x15 << 32
CARD_MARINE_DOLPHIN, CARD_TWINKLE_MOSS = 78734254, 13857930
TYPE_MONSTER, TYPE_TOKEN = 0x1, 0x4000


def _s64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def declarable(code: int, alias: int, setcodes: list[int], typ: int, race: int, attribute: int, opcodes: list[int]) -> bool:
    """Whether a card may be declared under an ANNOUNCE_CARD filter, as the core decides it
    (playerop.cpp is_declarable): the opcodes run on a stack, the card's facts pushed by the
    GET/IS opcodes; the card may be declared when one non-zero value is left, it is no alias
    (unless ALLOW_ALIASES) and no Token (unless ALLOW_TOKENS)."""
    stack: list[int] = []
    alias_ok = token_ok = False
    for op in opcodes:
        sub = (op >> 32) & 0x3FFFFFFF if op >> 62 == 1 and op & 0xFFFFFFFF == 0 else None
        if sub is None or sub > 0x109 or (0x15 < sub < 0x100):
            stack.append(_s64(op))  # a value
        elif sub in _BINARY:
            if len(stack) >= 2:
                b, a = stack.pop(), stack.pop()
                r = _BINARY[sub](a, b)
                if r is None:
                    return False  # division by zero: the core's behaviour is undefined
                stack.append(_s64(r))
        elif sub in _UNARY:
            if stack:
                stack.append(_s64(_UNARY[sub](stack.pop())))
        elif op == OPCODE_ALLOW_ALIASES:
            alias_ok = True
        elif op == OPCODE_ALLOW_TOKENS:
            token_ok = True
        elif sub in (0x100, 0x102, 0x103, 0x104):  # ISCODE, ISTYPE, ISRACE, ISATTRIBUTE
            if stack:
                v = stack.pop()
                fact = {0x100: code, 0x102: typ, 0x103: race, 0x104: attribute}[sub]
                stack.append(int(fact == v & 0xFFFFFFFF) if sub == 0x100 else _s64(fact & v))
        elif sub == 0x101:  # ISSETCARD
            if stack:
                sc = stack.pop() & 0xFFFFFFFF
                settype, subtype = sc & 0xFFF, sc & 0xF000
                stack.append(int(any((s & 0xFFF) == settype and (s & 0xF000 & subtype) == subtype for s in setcodes)))
        elif sub in (0x105, 0x107, 0x108, 0x109):  # GETCODE, GETTYPE, GETRACE, GETATTRIBUTE
            stack.append({0x105: code, 0x107: typ, 0x108: race, 0x109: attribute}[sub])
        else:  # GETSETCARD (0x106): not implemented by the core either (the value is pushed)
            stack.append(_s64(op))
    if len(stack) != 1 or stack[0] == 0:
        return False
    if code in (CARD_MARINE_DOLPHIN, CARD_TWINKLE_MOSS):
        return True
    return (alias_ok or not alias) and (token_ok or (typ & (TYPE_MONSTER | TYPE_TOKEN)) != (TYPE_MONSTER | TYPE_TOKEN))


def card_response(code: int) -> bytes:
    """ANNOUNCE_CARD: the passcode declared (i32)."""
    return struct.pack("<i", code)
