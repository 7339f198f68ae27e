"""Read an EDOPro/YGOPro card database (``cards.cdb``): SQLite tables ``datas`` and ``texts``.

The columns are those of the kit's ``cards.sql`` and ``cards-full.cdb`` (docs/profiles.md):
``datas(id, ot, alias, setcode, type, atk, def, level, race, attribute, category)`` and
``texts(id, name, desc, str1 .. str16)``. The bit values below are EDOPro's (the card scripts'
``constant.lua``), restated here, not copied:

- ``type``: card kind and subtypes (``TYPE_*``);
- ``level``: the Level, Rank or Link Rating in its low byte; a Pendulum monster's scales in the
  upper bytes (left scale ``(level >> 24) & 0xff``, right scale ``(level >> 16) & 0xff``);
- ``def``: a Link monster's link markers (it has no DEF);
- ``atk``/``def``: -2 stands for "?";
- ``setcode``: up to four 16-bit archetype codes packed in one integer;
- ``race``/``attribute``: one bit each.

The database is opened read-only (a ``file:`` URI with ``mode=ro``) on first use, read once, and
closed. Every problem with the file is an :class:`~bpcheck.errors.InputError` naming the file, the
field and the problem.
"""

from __future__ import annotations

import difflib
import os
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path

from bpcheck.errors import InputError
from bpcheck.model.fields import visible_name

# -- type bits (constant.lua "Types of cards") ------------------------------------------------
TYPE_MONSTER = 0x1
TYPE_SPELL = 0x2
TYPE_TRAP = 0x4
TYPE_NORMAL = 0x10
TYPE_EFFECT = 0x20
TYPE_FUSION = 0x40
TYPE_RITUAL = 0x80
TYPE_TRAPMONSTER = 0x100
TYPE_SPIRIT = 0x200
TYPE_UNION = 0x400
TYPE_GEMINI = 0x800
TYPE_TUNER = 0x1000
TYPE_SYNCHRO = 0x2000
TYPE_TOKEN = 0x4000
TYPE_MAXIMUM = 0x8000
TYPE_QUICKPLAY = 0x10000
TYPE_CONTINUOUS = 0x20000
TYPE_EQUIP = 0x40000
TYPE_FIELD = 0x80000
TYPE_COUNTER = 0x100000
TYPE_FLIP = 0x200000
TYPE_TOON = 0x400000
TYPE_XYZ = 0x800000
TYPE_PENDULUM = 0x1000000
TYPE_SPSUMMON = 0x2000000
TYPE_LINK = 0x4000000
TYPE_SKILL = 0x8000000
TYPE_ACTION = 0x10000000

# bit -> name, in bit order (the order names are listed in)
TYPE_NAMES: tuple[tuple[int, str], ...] = (
    (TYPE_MONSTER, "Monster"), (TYPE_SPELL, "Spell"), (TYPE_TRAP, "Trap"),
    (TYPE_NORMAL, "Normal"), (TYPE_EFFECT, "Effect"), (TYPE_FUSION, "Fusion"),
    (TYPE_RITUAL, "Ritual"), (TYPE_TRAPMONSTER, "Trap Monster"), (TYPE_SPIRIT, "Spirit"),
    (TYPE_UNION, "Union"), (TYPE_GEMINI, "Gemini"), (TYPE_TUNER, "Tuner"),
    (TYPE_SYNCHRO, "Synchro"), (TYPE_TOKEN, "Token"), (TYPE_MAXIMUM, "Maximum"),
    (TYPE_QUICKPLAY, "Quick-Play"), (TYPE_CONTINUOUS, "Continuous"), (TYPE_EQUIP, "Equip"),
    (TYPE_FIELD, "Field"), (TYPE_COUNTER, "Counter"), (TYPE_FLIP, "Flip"), (TYPE_TOON, "Toon"),
    (TYPE_XYZ, "Xyz"), (TYPE_PENDULUM, "Pendulum"), (TYPE_SPSUMMON, "Special Summon"),
    (TYPE_LINK, "Link"), (TYPE_SKILL, "Skill"), (TYPE_ACTION, "Action"),
)

RACE_NAMES: tuple[tuple[int, str], ...] = (
    (0x1, "Warrior"), (0x2, "Spellcaster"), (0x4, "Fairy"), (0x8, "Fiend"), (0x10, "Zombie"),
    (0x20, "Machine"), (0x40, "Aqua"), (0x80, "Pyro"), (0x100, "Rock"), (0x200, "Winged Beast"),
    (0x400, "Plant"), (0x800, "Insect"), (0x1000, "Thunder"), (0x2000, "Dragon"), (0x4000, "Beast"),
    (0x8000, "Beast-Warrior"), (0x10000, "Dinosaur"), (0x20000, "Fish"), (0x40000, "Sea Serpent"),
    (0x80000, "Reptile"), (0x100000, "Psychic"), (0x200000, "Divine-Beast"), (0x400000, "Creator God"),
    (0x800000, "Wyrm"), (0x1000000, "Cyberse"), (0x2000000, "Illusion"),
)

ATTRIBUTE_NAMES: tuple[tuple[int, str], ...] = (
    (0x1, "EARTH"), (0x2, "WATER"), (0x4, "FIRE"), (0x8, "WIND"), (0x10, "LIGHT"), (0x20, "DARK"),
    (0x40, "DIVINE"),
)

LINK_MARKER_NAMES: tuple[tuple[int, str], ...] = (
    (0x1, "Bottom-Left"), (0x2, "Bottom"), (0x4, "Bottom-Right"), (0x8, "Left"), (0x20, "Right"),
    (0x40, "Top-Left"), (0x80, "Top"), (0x100, "Top-Right"),
)

QUESTION = -2  # atk/def of "?"

DATAS_COLUMNS = ("id", "ot", "alias", "setcode", "type", "atk", "def", "level", "race", "attribute", "category")
TEXTS_COLUMNS = ("id", "name", "desc")  # str1..str16 are the scripts' prompt strings: not read


def bit_names(value: int, table: tuple[tuple[int, str], ...]) -> list[str]:
    """The names of the bits of ``value`` that ``table`` knows, in bit order."""
    return [name for bit, name in table if value & bit]


@dataclass(frozen=True)
class Card:
    """One card: its ``datas`` row decoded, and its English name and text."""

    code: int
    name: str
    text: str
    alias: int
    ot: int
    type: int
    atk: int | None  # None: "?" (-2 in the database)
    def_: int | None  # None: "?" or a Link monster (no DEF)
    level: int  # Level, Rank or Link Rating (low byte of the level column)
    lscale: int | None
    rscale: int | None
    race: int
    attribute: int
    setcodes: tuple[int, ...]
    link_markers: int
    category: int

    # -- kind ----------------------------------------------------------------------------------
    def has(self, bit: int) -> bool:
        return bool(self.type & bit)

    @property
    def kind(self) -> str:
        """'monster', 'spell' or 'trap' (a Trap Monster is a trap card; a Token is a monster)."""
        if self.type & TYPE_MONSTER:
            return "monster"
        if self.type & TYPE_SPELL:
            return "spell"
        if self.type & TYPE_TRAP:
            return "trap"
        return "other"

    @property
    def type_names(self) -> list[str]:
        return bit_names(self.type, TYPE_NAMES)

    @property
    def subtype(self) -> str:
        """The Spell/Trap subtype: 'Normal', 'Quick-Play', 'Continuous', 'Equip', 'Field', 'Counter'
        or 'Ritual'; for a monster, its frame: 'Normal', 'Effect', 'Fusion', 'Ritual', 'Synchro',
        'Xyz', 'Link', 'Token' (a Pendulum monster answers its other frame)."""
        t = self.type
        if t & (TYPE_SPELL | TYPE_TRAP) and not t & TYPE_MONSTER:
            for bit, name in ((TYPE_QUICKPLAY, "Quick-Play"), (TYPE_CONTINUOUS, "Continuous"),
                              (TYPE_EQUIP, "Equip"), (TYPE_FIELD, "Field"), (TYPE_COUNTER, "Counter"),
                              (TYPE_RITUAL, "Ritual")):
                if t & bit:
                    return name
            return "Normal"
        for bit, name in ((TYPE_TOKEN, "Token"), (TYPE_LINK, "Link"), (TYPE_XYZ, "Xyz"),
                          (TYPE_SYNCHRO, "Synchro"), (TYPE_FUSION, "Fusion"), (TYPE_RITUAL, "Ritual"),
                          (TYPE_EFFECT, "Effect"), (TYPE_NORMAL, "Normal")):
            if t & bit:
                return name
        return "Normal"

    @property
    def is_extra_deck(self) -> bool:
        return bool(self.type & (TYPE_FUSION | TYPE_SYNCHRO | TYPE_XYZ | TYPE_LINK))

    @property
    def races(self) -> list[str]:
        return bit_names(self.race, RACE_NAMES)

    @property
    def attributes(self) -> list[str]:
        return bit_names(self.attribute, ATTRIBUTE_NAMES)

    @property
    def markers(self) -> list[str]:
        return bit_names(self.link_markers, LINK_MARKER_NAMES)

    def to_dict(self) -> dict:
        """A plain JSON-able dict, the same for the same row."""
        out: dict = {
            "code": self.code, "name": self.name, "alias": self.alias, "kind": self.kind,
            "subtype": self.subtype, "type": self.type, "type_names": self.type_names,
        }
        if self.kind == "monster":
            out["atk"] = self.atk
            out["def"] = self.def_
            out.update(races=self.races, attributes=self.attributes)
            key = "link_rating" if self.has(TYPE_LINK) else "rank" if self.has(TYPE_XYZ) else "level"
            out[key] = self.level
            if self.has(TYPE_PENDULUM):
                out.update(lscale=self.lscale, rscale=self.rscale)
            if self.has(TYPE_LINK):
                out["link_markers"] = self.markers
        out["setcodes"] = list(self.setcodes)
        return out


def decode_row(datas: tuple, name: str, text: str) -> Card:
    """A :class:`Card` from a ``datas`` row (in :data:`DATAS_COLUMNS` order) and its texts."""
    code, ot, alias, setcode, typ, atk, dfn, level, race, attribute, category = datas
    link = bool(typ & TYPE_LINK)
    pend = bool(typ & TYPE_PENDULUM)
    return Card(
        code=code, name=name, text=text, alias=alias, ot=ot, type=typ,
        atk=None if atk == QUESTION else atk,
        def_=None if (link or dfn == QUESTION) else dfn,
        level=level & 0xFF,
        lscale=(level >> 24) & 0xFF if pend else None,
        rscale=(level >> 16) & 0xFF if pend else None,
        race=race, attribute=attribute,
        setcodes=tuple(p for p in ((setcode >> (16 * i)) & 0xFFFF for i in range(4)) if p),
        link_markers=dfn if link else 0,
        category=category,
    )


class CardDB:
    """A cards.cdb, read on first use. ``CardDB(path).card(44095762)`` or ``.card("Mirror Force")``."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        self._cards: dict[int, Card] | None = None
        self._by_name: dict[str, list[int]] = {}
        # A name read with invisible characters whose visible form several such cards share
        # (none in cards-full.cdb): visible name -> their passcodes; named by passcode only.
        self._ambiguous: dict[str, list[int]] = {}
        self._raw_names: dict[int, str] = {}  # passcode -> the name as the database writes it, where it differs

    # -- reading -------------------------------------------------------------------------------
    def _load(self) -> dict[int, Card]:
        if self._cards is not None:
            return self._cards
        p = Path(self.path)
        if not p.exists():
            raise InputError(self.path, "", "no such file (a cards.cdb card database was expected)")
        if not p.is_file():
            raise InputError(self.path, "", "not a file (a cards.cdb card database was expected)")
        try:
            con = sqlite3.connect(p.resolve().as_uri() + "?mode=ro", uri=True)
        except sqlite3.Error as e:
            raise InputError(self.path, "", f"cannot open as SQLite: {e}") from None
        try:
            try:
                tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            except sqlite3.DatabaseError as e:
                raise InputError(self.path, "", f"not a SQLite database ({e})") from None
            for table, cols in (("datas", DATAS_COLUMNS), ("texts", TEXTS_COLUMNS)):
                if table not in tables:
                    raise InputError(self.path, table, "table missing (a cards.cdb has tables datas and texts)")
                have = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
                for c in cols:
                    if c not in have:
                        raise InputError(self.path, f"{table}.{c}", "column missing")
            rows = con.execute(f"SELECT {', '.join(DATAS_COLUMNS)} FROM datas ORDER BY id").fetchall()
            texts = {r[0]: (r[1], r[2]) for r in con.execute("SELECT id, name, desc FROM texts ORDER BY id")}
        except sqlite3.DatabaseError as e:
            raise InputError(self.path, "", f"cannot read: {e}") from None
        finally:
            con.close()
        cards: dict[int, Card] = {}
        for row in rows:
            code = row[0]
            for col, v in zip(DATAS_COLUMNS, row):
                if not isinstance(v, int) or isinstance(v, bool):
                    raise InputError(self.path, f"datas[id={code}].{col}", f"not an integer: {v!r}")
            if code not in texts:
                raise InputError(self.path, f"texts[id={code}]", "no texts row for this datas row")
            name, desc = texts[code]
            if not isinstance(name, str) or not name:
                raise InputError(self.path, f"texts[id={code}].name", f"not a name: {name!r}")
            if desc is not None and not isinstance(desc, str):
                raise InputError(self.path, f"texts[id={code}].desc", f"not a text: {desc!r}")
            cards[code] = decode_row(row, name, desc or "")
        self._by_name, self._ambiguous, self._raw_names = _names(cards)
        self._cards = cards
        return cards

    # -- lookup --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self):
        """Every card, by passcode."""
        return iter(list(self._load().values()))

    def raw_name(self, code: int) -> str | None:
        """The name as the database writes it, for a card whose bpcheck name differs (invisible
        characters or no-break spaces in it: ``_names``); None otherwise."""
        self._load()
        return self._raw_names.get(code)

    def codes(self) -> list[int]:
        return list(self._load())

    def get(self, code: int) -> Card | None:
        return self._load().get(code)

    def card(self, key: int | str, field: str = "card") -> Card:
        """The card of a passcode (an int or a string of digits) or of an exact name.

        A name shared by several rows (alternate artworks) answers the row without ``alias``,
        else the lowest passcode. An unknown card raises InputError, with near names offered."""
        cards = self._load()
        if isinstance(key, int) or (isinstance(key, str) and key.strip().isdigit()):
            code = int(key)
            if code in cards:
                return cards[code]
            raise InputError(self.path, field, f"no card with passcode {code}")
        if not isinstance(key, str):
            raise InputError(self.path, field, f"not a passcode or a card name: {key!r}")
        codes = self._by_name.get(key)
        if codes:
            return cards[min(codes, key=lambda c: (cards[c].alias != 0, c))]
        shared = self._ambiguous.get(key)
        if shared:
            raise InputError(self.path, field, f"the name {key!r} is ambiguous: the cards {', '.join(map(str, shared))} all read so once their invisible characters are left out; name one by its passcode")
        near = self.did_you_mean(key)
        hint = f" (did you mean {', '.join(repr(n) for n in near)}?)" if near else ""
        raise InputError(self.path, field, f"no card named {key!r}{hint}")

    def has_name(self, name: str) -> bool:
        """Whether a card has exactly this name (as :meth:`card` finds it by name), without the
        near names an unknown one makes :meth:`card` look for (difflib over every name: 60 ms)."""
        self._load()
        return bool(self._by_name.get(name))

    def did_you_mean(self, name: str, n: int = 3) -> list[str]:
        """Names close to ``name``: a case-insensitive exact match first, then near spellings."""
        self._load()
        lower: dict[str, str] = {}
        for k in sorted({c.name for c in self._load().values()}):  # the cards' own names (not a raw form)
            lower.setdefault(k.lower(), k)
        key = name.strip().lower()
        if key in lower:
            return [lower[key]]
        return [lower[m] for m in difflib.get_close_matches(key, sorted(lower), n=n, cutoff=0.75)]


def _names(cards: dict[int, Card]) -> tuple[dict[str, list[int]], dict[str, list[int]], dict[int, str]]:
    """Each card's name in bpcheck, and the names it answers to (docs/boards.md, "Cards of a card
    database"). A name as the database writes it that holds control or invisible characters, or
    no-break spaces (``fields.visible_name``), cannot be written on a board: the card is named by
    its visible form when that is unambiguous (no other card has it as its own name, and every
    card that reads so has the same name in the database: alternate artworks); otherwise it is
    ``"VISIBLE (PASSCODE)"``, a name of its own, and the visible form names none of them. A raw
    name a board may write (a no-break space is no invisible character) also answers. The cards'
    names stay unique, as a board's pool needs. Returns (name -> passcodes, ambiguous visible
    name -> passcodes, passcode -> raw name where it changed); renames the cards in place."""
    raw = {code: c.name for code, c in cards.items()}
    readings: dict[str, set[str]] = {}
    for name in raw.values():
        readings.setdefault(visible_name(name), set()).add(name)
    by_name: dict[str, list[int]] = {}
    ambiguous: dict[str, list[int]] = {}
    renamed: dict[int, str] = {}
    for code, name in raw.items():
        vis = visible_name(name)
        if vis != name:
            if readings[vis] == {name}:
                new = vis
            else:
                new = f"{vis} ({code})"
                if vis not in raw.values():
                    ambiguous.setdefault(vis, []).append(code)
            cards[code] = replace(cards[code], name=new)
            renamed[code] = name
            by_name.setdefault(name, []).append(code)  # the raw form (check_name refuses it on a board if invisible)
        by_name.setdefault(cards[code].name, []).append(code)
    return by_name, ambiguous, renamed


_OPEN: dict[tuple[str, int, int], CardDB] = {}


def open_db(path: str | os.PathLike) -> CardDB:
    """The :class:`CardDB` of ``path``, shared by every board of a run that names it (a database
    is read once per process; a file changed since is read again)."""
    p = os.path.abspath(str(path))
    try:
        st = os.stat(p)
        key = (p, st.st_mtime_ns, st.st_size)
    except OSError:
        return CardDB(path)  # the reader says what is wrong with it, on first use
    db = _OPEN.get(key)
    if db is None:
        db = _OPEN[key] = CardDB(path)
    return db
