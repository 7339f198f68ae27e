"""Card data and card profiles: bpcheck.model.cdb (the cards.cdb reader) and bpcheck.model.profile
(the facts the invariants need, read from a card's data row and its English text; docs/profiles.md).

The full database is the kit's ``../shared/ocgcore/cards-full.cdb`` (or $OCG_CARDS_FULL); without
it the tests that need it skip and say why, unless BPCHECK_REQUIRE_OCGCORE=1, where they fail.
The bad-input tests build their own small files and always run.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from bpcheck.errors import InputError
from bpcheck.model import cdb as cdbmod
from bpcheck.model.cdb import CardDB, decode_row

ROOT = Path(__file__).resolve().parents[1]
FULL = Path(os.environ.get("OCG_CARDS_FULL") or ROOT.parent / "shared" / "ocgcore" / "cards-full.cdb")


def _need_full() -> None:
    if not FULL.is_file():
        msg = f"the full card database is absent ({FULL}; set OCG_CARDS_FULL): these tests read its rows"
        if os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1":
            pytest.fail(msg)
        pytest.skip(msg)


_DB: CardDB | None = None


@pytest.fixture
def full() -> CardDB:
    global _DB
    _need_full()
    if _DB is None:
        _DB = CardDB(FULL)
    return _DB


# ---------------------------------------------------------------------------------------------
# cdb: decoding known rows of cards-full.cdb
# ---------------------------------------------------------------------------------------------

def test_cdb_normal_monster(full: CardDB) -> None:
    c = full.card(46986414)
    assert (c.name, c.kind, c.subtype, c.type_names) == ("Dark Magician", "monster", "Normal", ["Monster", "Normal"])
    assert (c.atk, c.def_, c.level, c.races, c.attributes) == (2500, 2100, 7, ["Spellcaster"], ["DARK"])
    assert c.lscale is None and c.link_markers == 0


def test_cdb_flip_and_effect_bits(full: CardDB) -> None:
    c = full.card("Hane-Hane")
    assert c.type == 0x200021 and c.type_names == ["Monster", "Effect", "Flip"]
    assert c.subtype == "Effect"


def test_cdb_spell_and_trap_subtypes(full: CardDB) -> None:
    expect = {
        "Book of Moon": ("spell", "Quick-Play"), "Magic Jammer": ("trap", "Counter"),
        "Mirror Force": ("trap", "Normal"), "Call of the Haunted": ("trap", "Continuous"),
        "Umi": ("spell", "Field"), "United We Stand": ("spell", "Equip"), "Dark Hole": ("spell", "Normal"),
        "Spellbinding Circle": ("trap", "Continuous"),
    }
    for name, (kind, sub) in expect.items():
        c = full.card(name)
        assert (c.kind, c.subtype) == (kind, sub), name


def test_cdb_pendulum_scales_from_level_upper_bytes(full: CardDB) -> None:
    c = full.card("D/D Savant Thomas")
    raw = 101056520  # 0x06060008 in the datas row
    assert c.level == raw & 0xFF == 8
    assert (c.lscale, c.rscale) == (6, 6)
    assert "Pendulum" in c.type_names


def test_cdb_link_markers_in_def(full: CardDB) -> None:
    c = full.card("Double Headed Anger Knuckle")
    assert c.subtype == "Link" and c.level == 2  # the Link Rating
    assert c.def_ is None and c.link_markers == 34 and c.markers == ["Bottom", "Right"]
    assert full.card("Decode Talker").markers == ["Bottom-Left", "Bottom-Right", "Top"]


def test_cdb_question_mark_atk() -> None:
    # Helios - The Primordial Sun's row in the kit's cards.sql: atk and def are -2 ("?")
    c = decode_row((54493213, 3, 0, 0, 33, -2, -2, 4, 128, 16, 8192), "Helios - The Primordial Sun", "")
    assert c.atk is None and c.def_ is None and c.to_dict()["atk"] is None


def test_cdb_setcodes_are_four_16_bit_parts() -> None:
    packed = 0x00AF | (0x006E << 16) | (0x1234 << 48)
    c = decode_row((1, 3, 0, packed, 17, 0, 0, 1, 1, 1, 0), "X", "")
    assert c.setcodes == (0xAF, 0x6E, 0x1234)


def test_cdb_xyz_rank_and_tuner(full: CardDB) -> None:
    x = full.card("Number 39: Utopia")
    assert x.subtype == "Xyz" and x.level == 4 and x.to_dict()["rank"] == 4
    t = full.card("Junk Synchron")
    assert "Tuner" in t.type_names


def test_cdb_alias_and_name_lookup(full: CardDB) -> None:
    # several rows share the name "Dark Magician" (alternate artworks): the row without alias wins
    c = full.card("Dark Magician")
    assert c.alias == 0 and c.code == 46986414
    alts = [k for k in full if k.name == "Dark Magician" and k.alias]
    assert alts and all(a.alias == 46986414 for a in alts)
    assert full.card(str(46986414)) is c


def test_cdb_unknown_card_did_you_mean(full: CardDB) -> None:
    with pytest.raises(InputError) as e:
        full.card("dark magician", field="board.card[0].name")
    assert e.value.file == str(FULL) and e.value.field == "board.card[0].name"
    assert "no card named 'dark magician'" in e.value.problem and "'Dark Magician'" in e.value.problem
    with pytest.raises(InputError) as e:
        full.card("Mirror Farce")
    assert "did you mean" in e.value.problem and "'Mirror Force'" in e.value.problem
    with pytest.raises(InputError) as e:
        full.card(12345)
    assert e.value.problem == "no card with passcode 12345"


def test_cdb_reads_lazily_and_deterministically(full: CardDB) -> None:
    a = CardDB(FULL)
    assert a._cards is None  # nothing read at construction
    b = CardDB(FULL)
    da = json.dumps([c.to_dict() for c in a], sort_keys=True)
    assert da == json.dumps([c.to_dict() for c in b], sort_keys=True)
    assert len(a) == 10628


# ---------------------------------------------------------------------------------------------
# cdb: bad files -> InputError(file, field, problem)
# ---------------------------------------------------------------------------------------------

def _make_db(path: Path, sql: str) -> Path:
    con = sqlite3.connect(path)
    con.executescript(sql)
    con.commit()
    con.close()
    return path


GOOD_SCHEMA = (
    "CREATE TABLE datas(id integer primary key,ot integer,alias integer,setcode integer,type integer,"
    "atk integer,def integer,level integer,race integer,attribute integer,category integer);"
    "CREATE TABLE texts(id integer primary key,name text,desc text);"
)


def test_cdb_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.cdb"
    with pytest.raises(InputError) as e:
        CardDB(p).card(1)
    assert (e.value.file, e.value.field) == (str(p), "") and "no such file" in e.value.problem


def test_cdb_not_sqlite(tmp_path: Path) -> None:
    p = tmp_path / "cards.cdb"
    p.write_bytes(b"this is not a database, it is a text file long enough to have a header" * 3)
    with pytest.raises(InputError) as e:
        len(CardDB(p))
    assert e.value.file == str(p) and "not a SQLite database" in e.value.problem


def test_cdb_missing_table(tmp_path: Path) -> None:
    p = _make_db(tmp_path / "c.cdb", "CREATE TABLE datas(id integer);")
    with pytest.raises(InputError) as e:
        len(CardDB(p))
    assert e.value.field == "datas.ot" and e.value.problem == "column missing"
    p2 = _make_db(tmp_path / "d.cdb", GOOD_SCHEMA.split(";")[0] + ";")
    with pytest.raises(InputError) as e:
        len(CardDB(p2))
    assert e.value.field == "texts" and "table missing" in e.value.problem


def test_cdb_bad_values(tmp_path: Path) -> None:
    p = _make_db(tmp_path / "c.cdb", GOOD_SCHEMA + "INSERT INTO datas VALUES(7,3,0,0,'x',0,0,1,1,1,0);"
                 "INSERT INTO texts VALUES(7,'Seven','');")
    with pytest.raises(InputError) as e:
        len(CardDB(p))
    assert e.value.field == "datas[id=7].type" and "not an integer" in e.value.problem
    p2 = _make_db(tmp_path / "d.cdb", GOOD_SCHEMA + "INSERT INTO datas VALUES(7,3,0,0,17,0,0,1,1,1,0);")
    with pytest.raises(InputError) as e:
        len(CardDB(p2))
    assert e.value.field == "texts[id=7]" and "no texts row" in e.value.problem


def test_cdb_small_file_roundtrip(tmp_path: Path) -> None:
    p = _make_db(tmp_path / "c.cdb", GOOD_SCHEMA + "INSERT INTO datas VALUES(44095762,3,0,0,4,0,0,0,0,0,2);"
                 "INSERT INTO texts VALUES(44095762,'Mirror Force','When an opponent''s monster declares an attack: "
                 "Destroy all your opponent''s Attack Position monsters.');")
    db = CardDB(p)
    c = db.card("Mirror Force")
    assert (c.code, c.kind, c.subtype) == (44095762, "trap", "Normal")
    assert db.card(44095762) is c
    assert cdbmod.bit_names(0x100004, cdbmod.TYPE_NAMES) == ["Trap", "Counter"]
