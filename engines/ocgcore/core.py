"""ctypes bindings to the EDOPro core's C API v11 (``ocgapi.h``), loaded at run time.

Only interface facts are declared here (struct layouts, function signatures, constants); the core
itself is an engine under test and is never copied into bpcheck. :class:`CoreLibrary` loads the
library once per path; :class:`CardDatabase` reads a ``cards.cdb``; :class:`Duel` is one live duel:
create, load scripts, process to the next prompt, answer it, query cards.
"""

from __future__ import annotations

import ctypes as C
import os
import sqlite3
import struct

API_MAJOR = 11

# -- interface constants (ocgapi_constants.h) -------------------------------------------------

LOCATION_DECK, LOCATION_HAND, LOCATION_MZONE, LOCATION_SZONE = 0x01, 0x02, 0x04, 0x08
LOCATION_GRAVE, LOCATION_REMOVED, LOCATION_EXTRA, LOCATION_OVERLAY = 0x10, 0x20, 0x40, 0x80
POS_FACEUP_ATTACK, POS_FACEDOWN_ATTACK, POS_FACEUP_DEFENSE, POS_FACEDOWN_DEFENSE = 0x1, 0x2, 0x4, 0x8
TYPE_MONSTER, TYPE_SPELL, TYPE_TRAP, TYPE_NORMAL, TYPE_EFFECT = 0x1, 0x2, 0x4, 0x10, 0x20
TYPE_PENDULUM = 0x1000000
TYPE_TOKEN, TYPE_QUICKPLAY, TYPE_CONTINUOUS, TYPE_EQUIP, TYPE_FIELD = 0x4000, 0x10000, 0x20000, 0x40000, 0x80000
TYPE_COUNTER, TYPE_FLIP, TYPE_LINK = 0x100000, 0x200000, 0x4000000

REASON_DESTROY, REASON_RELEASE, REASON_SUMMON, REASON_BATTLE = 0x1, 0x2, 0x10, 0x20
REASON_EFFECT, REASON_COST, REASON_RULE, REASON_SPSUMMON = 0x40, 0x80, 0x400, 0x800
REASON_DISCARD, REASON_RETURN = 0x4000, 0x20000

STATUS_DISABLED, STATUS_SET_TURN, STATUS_SUMMON_TURN = 0x1, 0x10, 0x800
STATUS_FORM_CHANGED = 0x100  # its battle position was changed this turn (scripts/constant.lua)
STATUS_BATTLE_DESTROYED, STATUS_CHAINING, STATUS_ATTACK_CANCELED = 0x4000, 0x10000, 0x200000
STATUS_FLIP_SUMMON_TURN, STATUS_SPSUMMON_TURN = 0x20000000, 0x40000000
# in the middle of its Summon: placed by a Special Summon whose other monsters are still being
# placed (Duel.SpecialSummonStep, until SpecialSummonComplete), or being Summoned
STATUS_SPSUMMON_STEP, STATUS_SUMMONING = 0x80, 0x200

QUERY_CODE, QUERY_POSITION, QUERY_TYPE, QUERY_LEVEL = 0x1, 0x2, 0x8, 0x10
QUERY_ATTRIBUTE, QUERY_RACE, QUERY_ATTACK, QUERY_DEFENSE = 0x40, 0x80, 0x100, 0x200
QUERY_BASE_ATTACK, QUERY_BASE_DEFENSE, QUERY_REASON = 0x400, 0x800, 0x1000
QUERY_EQUIP_CARD, QUERY_TARGET_CARD, QUERY_OWNER, QUERY_STATUS = 0x4000, 0x8000, 0x40000, 0x80000
QUERY_IS_PUBLIC, QUERY_END = 0x100000, 0x80000000
QUERY_OVERLAY_CARD = 0x10000  # an Xyz monster's materials: their passcodes, in the core's order

PHASE_DRAW, PHASE_STANDBY, PHASE_MAIN1, PHASE_BATTLE_START = 0x01, 0x02, 0x04, 0x08
PHASE_BATTLE_STEP, PHASE_DAMAGE, PHASE_DAMAGE_CAL, PHASE_BATTLE = 0x10, 0x20, 0x40, 0x80
PHASE_MAIN2, PHASE_END = 0x100, 0x200

DUEL_ATTACK_FIRST_TURN = 0x02
DUEL_PSEUDO_SHUFFLE = 0x10
DUEL_STORE_ATTACK_REPLAYS = 0x20000000
# The duel flags a ruleset may ask for (model/rulesets.py core_duel_flags), by the name the core's
# ocgapi_constants.h and the scripts' constant.lua give them (docs/ocgcore.md, "Rulesets and the
# core's duel flags").
DUEL_FLAGS = {"DUEL_ATTACK_FIRST_TURN": DUEL_ATTACK_FIRST_TURN, "DUEL_STORE_ATTACK_REPLAYS": DUEL_STORE_ATTACK_REPLAYS}



STATUS_END, STATUS_AWAITING, STATUS_CONTINUE = 0, 1, 2

ATTRIBUTES = {0x01: "EARTH", 0x02: "WATER", 0x04: "FIRE", 0x08: "WIND", 0x10: "LIGHT", 0x20: "DARK", 0x40: "DIVINE"}
RACES = {
    0x1: "Warrior", 0x2: "Spellcaster", 0x4: "Fairy", 0x8: "Fiend", 0x10: "Zombie", 0x20: "Machine",
    0x40: "Aqua", 0x80: "Pyro", 0x100: "Rock", 0x200: "Winged Beast", 0x400: "Plant", 0x800: "Insect",
    0x1000: "Thunder", 0x2000: "Dragon", 0x4000: "Beast", 0x8000: "Beast-Warrior", 0x10000: "Dinosaur",
    0x20000: "Fish", 0x40000: "Sea Serpent", 0x80000: "Reptile", 0x100000: "Psychic",
    # the newer Types (the scripts' constant.lua RACE_*; a Link monster is often a Cyberse): without
    # them the observation said `race: null` where the card's row says Cyberse
    0x200000: "Divine-Beast", 0x400000: "Creator God", 0x800000: "Wyrm", 0x1000000: "Cyberse", 0x2000000: "Illusion",
}


# -- struct layouts (ocgapi_types.h) ----------------------------------------------------------


class CardData(C.Structure):
    _fields_ = [
        ("code", C.c_uint32), ("alias", C.c_uint32), ("setcodes", C.POINTER(C.c_uint16)),
        ("type", C.c_uint32), ("level", C.c_uint32), ("attribute", C.c_uint32), ("race", C.c_uint64),
        ("attack", C.c_int32), ("defense", C.c_int32), ("lscale", C.c_uint32), ("rscale", C.c_uint32),
        ("link_marker", C.c_uint32),
    ]


class PlayerInfo(C.Structure):
    _fields_ = [("startingLP", C.c_uint32), ("startingDrawCount", C.c_uint32), ("drawCountPerTurn", C.c_uint32)]


DATA_READER = C.CFUNCTYPE(None, C.c_void_p, C.c_uint32, C.POINTER(CardData))
DATA_READER_DONE = C.CFUNCTYPE(None, C.c_void_p, C.POINTER(CardData))
SCRIPT_READER = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_char_p)
LOG_HANDLER = C.CFUNCTYPE(None, C.c_void_p, C.c_char_p, C.c_int)


class DuelOptions(C.Structure):
    _fields_ = [
        ("seed", C.c_uint64 * 4), ("flags", C.c_uint64), ("team1", PlayerInfo), ("team2", PlayerInfo),
        ("cardReader", DATA_READER), ("payload1", C.c_void_p), ("scriptReader", SCRIPT_READER),
        ("payload2", C.c_void_p), ("logHandler", LOG_HANDLER), ("payload3", C.c_void_p),
        ("cardReaderDone", DATA_READER_DONE), ("payload4", C.c_void_p), ("enableUnsafeLibraries", C.c_uint8),
    ]


class QueryInfo(C.Structure):
    _fields_ = [("flags", C.c_uint32), ("con", C.c_uint8), ("loc", C.c_uint32), ("seq", C.c_uint32), ("overlay_seq", C.c_uint32)]


class CoreError(Exception):
    """The core could not be loaded or misbehaved (a bad library, a failed duel creation)."""


_LIBS: dict[str, "CoreLibrary"] = {}


class CoreLibrary:
    """``libocgcore.so`` loaded with ctypes, with its functions typed."""

    def __init__(self, path: str) -> None:
        try:
            lib = C.CDLL(path)
        except OSError as e:
            raise CoreError(f"cannot load the core library {path}: {e}") from None
        try:
            lib.OCG_GetVersion.argtypes = [C.POINTER(C.c_int), C.POINTER(C.c_int)]
            lib.OCG_CreateDuel.argtypes = [C.POINTER(C.c_void_p), C.POINTER(DuelOptions)]
            lib.OCG_CreateDuel.restype = C.c_int
            lib.OCG_DestroyDuel.argtypes = [C.c_void_p]
            lib.OCG_StartDuel.argtypes = [C.c_void_p]
            lib.OCG_DuelProcess.argtypes = [C.c_void_p]
            lib.OCG_DuelProcess.restype = C.c_int
            lib.OCG_DuelGetMessage.argtypes = [C.c_void_p, C.POINTER(C.c_uint32)]
            lib.OCG_DuelGetMessage.restype = C.c_void_p
            lib.OCG_DuelSetResponse.argtypes = [C.c_void_p, C.c_char_p, C.c_uint32]
            lib.OCG_LoadScript.argtypes = [C.c_void_p, C.c_char_p, C.c_uint32, C.c_char_p]
            lib.OCG_LoadScript.restype = C.c_int
            lib.OCG_DuelQueryLocation.argtypes = [C.c_void_p, C.POINTER(C.c_uint32), C.POINTER(QueryInfo)]
            lib.OCG_DuelQueryLocation.restype = C.c_void_p
            lib.OCG_DuelQueryField.argtypes = [C.c_void_p, C.POINTER(C.c_uint32)]
            lib.OCG_DuelQueryField.restype = C.c_void_p
        except AttributeError as e:
            raise CoreError(f"{path} is not the EDOPro core (C API v{API_MAJOR}): {e}") from None
        major, minor = C.c_int(), C.c_int()
        lib.OCG_GetVersion(C.byref(major), C.byref(minor))
        if major.value != API_MAJOR:
            raise CoreError(f"{path} has C API {major.value}.{minor.value}, the adapter speaks {API_MAJOR}.x")
        self.path = path
        self.version = (major.value, minor.value)
        self.lib = lib

    @classmethod
    def load(cls, path: str) -> "CoreLibrary":
        path = os.path.abspath(path)
        if path not in _LIBS:
            _LIBS[path] = cls(path)
        return _LIBS[path]


class CardDatabase:
    """The ``datas`` and ``texts`` rows of a cards.cdb: code -> facts, name -> codes."""

    def __init__(self, path: str) -> None:
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                rows = db.execute("SELECT id, alias, setcode, type, level, attribute, race, atk, def FROM datas").fetchall()
                names = db.execute("SELECT id, name FROM texts").fetchall()
                try:  # a card's own strings (aux.Stringid(code, n) is the n-th): its options' words
                    strs = db.execute("SELECT id, " + ", ".join(f"str{i}" for i in range(1, 17)) + " FROM texts").fetchall()
                except sqlite3.Error:
                    strs = []
        except sqlite3.Error as e:
            raise CoreError(f"cannot read the card database {path}: {e}") from None
        self.path = path
        self.rows = {r[0]: r[1:] for r in rows}
        self.names = {code: name for code, name in names}
        self.strings = {r[0]: tuple(x or "" for x in r[1:]) for r in strs if any(r[1:])}
        self.codes_by_name: dict[str, list[int]] = {}
        for code, name in sorted(names):
            self.codes_by_name.setdefault(name, []).append(code)

    def string(self, desc: int) -> str | None:
        """The card string a description number names (``aux.Stringid(code, n)`` = code << 20 | n),
        or None (a system string, or none in the database)."""
        code, n = desc >> 20, desc & 0xFFFFF
        strs = self.strings.get(code, ())
        return strs[n] or None if n < len(strs) else None

    def type_of(self, code: int) -> int:
        row = self.rows.get(code)
        return row[2] if row else 0


CARD_DATABASES = 4  # card databases kept read in a process (one per path: a sweep, a check, a test or two)
_CDBS: dict[str, tuple[tuple[int, int], CardDatabase]] = {}  # absolute path -> ((mtime, size), its rows)


def card_database(path: str) -> CardDatabase:
    """The :class:`CardDatabase` of ``path``, read once per process and shared by every engine
    (an engine is made per board: reading the full database of 10,628 cards per board cost 0.1 s
    and its dictionaries, churned per board, grew a sweep's memory; docs/performance.md). Nothing
    writes to it. A file changed since (its mtime or size) is read again; at most
    :data:`CARD_DATABASES` paths are kept, the least recently used one dropped first."""
    p = os.path.abspath(path)
    try:
        st = os.stat(p)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        return CardDatabase(path)  # the reader says what is wrong with it
    hit = _CDBS.pop(p, None)
    if hit is None or hit[0] != stamp:
        hit = (stamp, CardDatabase(path))
    _CDBS[p] = hit  # (re)inserted last: the most recently used
    while len(_CDBS) > CARD_DATABASES:
        del _CDBS[next(iter(_CDBS))]
    return hit[1]


class Duel:
    """One live duel in the core. Messages come back as ``(type, payload bytes)`` pairs."""

    __slots__ = ("core", "lib", "ptr", "_cb", "_keep", "missing_cards", "log", "_scripts_dir", "_cards", "dirty", "drew", "pristine", "__weakref__")

    def __init__(self, core: CoreLibrary, cards: CardDatabase, scripts: str, flags: int, seed=(1, 2, 3, 4), lp=(8000, 8000), script_cache: dict | None = None, overlay: tuple[str, ...] = ()) -> None:
        self.core = core
        self.lib = core.lib
        self._cards = cards
        self._scripts_dir = scripts
        self._keep: dict[int, object] = {}
        self.missing_cards: list[int] = []
        self.log: list[str] = []
        self.dirty = False  # standing at a question a card script asks (engine.py: never reset then)
        # the core drew from its random number generator since this duel was created (a die, a
        # coin, a random pick, a hand shuffle); a reset does not reseed it, so after one the
        # generator is no longer where the seed puts it at the puzzle's start (`pristine`: it is)
        self.drew = False
        self.pristine = True
        cache = script_cache if script_cache is not None else {}
        rows = cards.rows

        def card_reader(_payload, code, out):
            d = out.contents
            d.code = code
            row = rows.get(code)
            if row is None:
                self.missing_cards.append(code)
                arr = (C.c_uint16 * 1)(0)
                self._keep[code] = arr
                d.setcodes = C.cast(arr, C.POINTER(C.c_uint16))
                return
            alias, setcode, typ, level, attr, race, atk, dfn = row
            parts = [(setcode >> (16 * i)) & 0xFFFF for i in range(4)]
            arr = (C.c_uint16 * 5)(*[p for p in parts if p], 0)
            self._keep[code] = arr
            d.setcodes = C.cast(arr, C.POINTER(C.c_uint16))
            d.alias, d.type, d.attribute, d.race, d.attack = alias, typ, attr, race, atk
            d.level, d.lscale, d.rscale = level & 0xFF, (level >> 24) & 0xFF, (level >> 16) & 0xFF
            if typ & TYPE_LINK:
                d.defense, d.link_marker = 0, dfn
            else:
                d.defense, d.link_marker = dfn, 0

        def script_reader(_payload, duel, name):
            base = os.path.basename(name.decode())
            src = cache.get(base)
            if src is None:
                src = b""
                # OCG_SCRIPTS_OVERLAY: folders searched first (os.pathsep between them), so a folder
                # holding a few card scripts shadows those cards only (docs/ocgcore.md, docs/sweep.md)
                # (the engine's own overlay when it was given one: a worker process of a pool started
                # before the run set the variable does not see it)
                folders = overlay or [f for f in os.environ.get("OCG_SCRIPTS_OVERLAY", "").split(os.pathsep) if f]
                for folder in (*folders, scripts, os.path.join(scripts, "official"), os.path.join(scripts, "unofficial")):
                    path = os.path.join(folder, base)
                    if os.path.isfile(path):
                        with open(path, "rb") as f:
                            src = f.read()
                        break
                cache[base] = src
            if not src:
                return 0
            return self.lib.OCG_LoadScript(duel, src, len(src), name)

        def log_handler(_payload, text, kind):
            self.log.append(f"[{kind}] {text.decode(errors='replace')}")

        self._cb = (DATA_READER(card_reader), SCRIPT_READER(script_reader), LOG_HANDLER(log_handler), DATA_READER_DONE(lambda _p, _d: None))
        opts = DuelOptions()
        opts.seed[:] = seed
        opts.flags = flags
        opts.team1.startingLP, opts.team1.startingDrawCount, opts.team1.drawCountPerTurn = lp[0], 0, 1
        opts.team2.startingLP, opts.team2.startingDrawCount, opts.team2.drawCountPerTurn = lp[1], 0, 1
        opts.cardReader, opts.scriptReader, opts.logHandler, opts.cardReaderDone = self._cb
        self.ptr = C.c_void_p()
        status = self.lib.OCG_CreateDuel(C.byref(self.ptr), C.byref(opts))
        if status != 0:
            raise CoreError(f"OCG_CreateDuel failed with status {status}")

    def load_script_file(self, name: str) -> bool:
        return bool(self._cb[1](None, self.ptr, name.encode()))

    def load_source(self, src: str, name: str) -> bool:
        data = src.encode()
        return bool(self.lib.OCG_LoadScript(self.ptr, data, len(data), name.encode()))

    def start(self) -> None:
        self.lib.OCG_StartDuel(self.ptr)

    def process(self) -> int:
        return self.lib.OCG_DuelProcess(self.ptr)

    def messages(self) -> list[tuple[int, bytes]]:
        n = C.c_uint32()
        p = self.lib.OCG_DuelGetMessage(self.ptr, C.byref(n))
        buf = C.string_at(p, n.value) if n.value else b""
        out, i = [], 0
        unpack = struct.unpack_from
        while i < len(buf):
            (length,) = unpack("<I", buf, i)
            out.append((buf[i + 4], buf[i + 5 : i + 4 + length]))
            i += 4 + length
        return out

    def respond(self, data: bytes) -> None:
        self.lib.OCG_DuelSetResponse(self.ptr, data, len(data))

    def query_location(self, con: int, loc: int, flags: int) -> list[dict | None]:
        """Every card of one location of one player, as ``{query flag: value}`` (None: an empty zone)."""
        return parse_location_query(self.query_location_raw(con, loc, flags))

    def query_location_raw(self, con: int, loc: int, flags: int) -> bytes:
        """The core's reply to a location query, unparsed (:func:`parse_location_query`)."""
        info = QueryInfo(flags, con, loc, 0, 0)
        n = C.c_uint32()
        p = self.lib.OCG_DuelQueryLocation(self.ptr, C.byref(n), C.byref(info))
        return C.string_at(p, n.value) if n.value else b""

    def query_field_raw(self) -> bytes:
        """The core's reply to a field query (LP, zones in use, chain), unparsed."""
        n = C.c_uint32()
        p = self.lib.OCG_DuelQueryField(self.ptr, C.byref(n))
        return C.string_at(p, n.value)

    def close(self) -> None:
        if self.ptr:
            self.lib.OCG_DestroyDuel(self.ptr)
            self.ptr = C.c_void_p()


def _loc(buf: bytes, i: int) -> tuple[int, int, int, int]:
    return struct.unpack_from("<BBII", buf, i)


def parse_location_query(buf: bytes) -> list[dict | None]:
    if len(buf) < 4:
        return []
    (total,) = struct.unpack_from("<I", buf, 0)
    i, end = 4, 4 + total
    out: list[dict | None] = []
    cur: dict | None = None
    while i < end:
        (size,) = struct.unpack_from("<H", buf, i)
        if size == 0:  # an empty zone
            out.append(None)
            i += 2
            continue
        (flag,) = struct.unpack_from("<I", buf, i + 2)
        body = i + 6
        if cur is None:
            cur = {}
        if flag == QUERY_END:
            out.append(cur)
            cur = None
        elif flag == QUERY_RACE:
            cur[flag] = struct.unpack_from("<Q", buf, body)[0]
        elif flag in (QUERY_OWNER, QUERY_IS_PUBLIC):
            cur[flag] = buf[body]
        elif flag == QUERY_EQUIP_CARD:
            c, l, s, _p = _loc(buf, body)
            cur[flag] = (c, l, s) if l else None
        elif flag == QUERY_OVERLAY_CARD:
            (n,) = struct.unpack_from("<I", buf, body)
            cur[flag] = list(struct.unpack_from(f"<{n}I", buf, body + 4))
        elif flag == QUERY_TARGET_CARD:
            (n,) = struct.unpack_from("<I", buf, body)
            cur[flag] = [_loc(buf, body + 4 + 10 * k)[:3] for k in range(n)]
        elif size >= 8:
            cur[flag] = struct.unpack_from("<I", buf, body)[0]
        i += 2 + size
    return out
