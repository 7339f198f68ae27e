"""Card database names with invisible characters (issue: card 23213239 "Danger! Disaster!" of
cards-full.cdb is written with a U+200E at its end, so no board could name it, not even by
passcode: the passcode resolved to that name, which the board's name check refuses). A card is
named in bpcheck by its visible name when that is unambiguous, and always by its passcode; a
board's own text is never changed (docs/boards.md, "Cards of a card database")."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from bpcheck.engines.ocgcore.engine import default_paths
from bpcheck.errors import InputError
from bpcheck.model.board import load_board
from bpcheck.model.cdb import CardDB

ROOT = Path(__file__).resolve().parent.parent
_, _, CARDS = default_paths()
FULL = os.environ.get("OCG_CARDS_FULL") or os.path.join(os.path.dirname(CARDS), "cards-full.cdb")
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"

SCHEMA = (
    "CREATE TABLE datas(id integer primary key,ot integer,alias integer,setcode integer,type integer,"
    "atk integer,def integer,level integer,race integer,attribute integer,category integer);"
    "CREATE TABLE texts(id integer primary key,name text,desc text);"
)
NAMES = {
    101: "Quiet Dragon\u200e",  # invisible mark: visible name unambiguous
    102: "Echo Knight\u200b",  # its visible form is card 103's own name
    103: "Echo Knight",
    104: "Twin Ghost\u200e",  # two cards whose visible forms meet, neither owns it
    105: "Twin Ghost\u2060",
    106: "Loud Lion\u00a0!!",  # a no-break space: visible, but not the space a board writes
    107: "Quiet Dragon\u200e",  # an alternate artwork of 101 (alias): the same card
}


@pytest.fixture
def db(tmp_path) -> Path:
    p = tmp_path / "names.cdb"
    con = sqlite3.connect(p)
    con.executescript(SCHEMA)
    for code, name in NAMES.items():
        con.execute("INSERT INTO datas VALUES(?,3,?,0,17,1000,1000,4,1,1,0)", (code, 101 if code == 107 else 0))
        con.execute("INSERT INTO texts VALUES(?,?,?)", (code, name, "A vanilla monster."))
    con.commit()
    con.close()
    return p


def _board(tmp_path: Path, ref: str) -> Path:
    b = tmp_path / "b.toml"
    b.write_text(
        'name = "names"\nturn = 2\nturn_player = 1\n[p1]\nlp = 8000\n'
        'monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]\n'
        f"[p2]\nlp = 8000\nhand = [{ref}]\n",
        encoding="utf-8",
    )
    return b


def _hand(board) -> list[str]:
    return [c.card for c in board.state.players[1].hand]


def test_the_database_names_cards_by_their_visible_names(db):
    d = CardDB(db)
    assert d.card(101).name == "Quiet Dragon" and d.card("Quiet Dragon").code == 101
    assert d.card(102).name == "Echo Knight (102)" and d.card("Echo Knight").code == 103  # its own name wins
    assert d.card(104).name == "Twin Ghost (104)" and d.card(105).name == "Twin Ghost (105)"
    with pytest.raises(InputError) as e:
        d.card("Twin Ghost")
    assert "ambiguous" in e.value.problem and "104, 105" in e.value.problem and "passcode" in e.value.problem
    assert d.card(106).name == "Loud Lion !!" and d.card("Loud Lion\u00a0!!").code == 106
    assert d.raw_name(101) == "Quiet Dragon\u200e" and d.raw_name(103) is None
    assert d.did_you_mean("quiet dragon") == ["Quiet Dragon"]
    names = [c.name for c in d]
    assert len(set(names) - {"Quiet Dragon"}) == len(names) - 2  # unique, but for the alias pair


@pytest.mark.parametrize("ref, want", [
    ("101", "Quiet Dragon"), ('"Quiet Dragon"', "Quiet Dragon"), ("107", "Quiet Dragon"),
    ("102", "Echo Knight (102)"), ('"Echo Knight"', "Echo Knight"),
    ("104", "Twin Ghost (104)"), ('"Twin Ghost (105)"', "Twin Ghost (105)"),
    ("106", "Loud Lion !!"), ('"Loud Lion !!"', "Loud Lion !!"),
])
def test_a_board_names_them_by_passcode_or_visible_name(db, tmp_path, ref, want):
    b = load_board(_board(tmp_path, ref), cards_db=str(db))
    assert _hand(b) == [want]
    assert want in b.pool


@pytest.mark.parametrize("ref, problem", [
    ('"Quiet Dragon\\u200e"', "invisible character U+200E"),  # a board's own text is never coerced
    ('"Twin Ghost"', "ambiguous"),
])
def test_invisible_or_ambiguous_names_on_a_board_are_refused(db, tmp_path, ref, problem):
    with pytest.raises(InputError) as e:
        load_board(_board(tmp_path, ref), cards_db=str(db))
    assert e.value.field == "p2.hand[0]" and problem in e.value.problem, e.value.render()


def test_danger_disaster_of_the_full_database(tmp_path, run_cli):
    if not os.path.exists(FULL):
        if REQUIRED:
            pytest.fail(f"required here (BPCHECK_REQUIRE_OCGCORE=1) but not found: {FULL}")
        pytest.skip(f"not available: {FULL} not found (set OCG_CARDS_FULL)")
    assert CardDB(FULL).raw_name(23213239) == "Danger! Disaster!\u200e"
    for ref in ("23213239", '"Danger! Disaster!"'):
        b = load_board(_board(tmp_path, ref), cards_db=FULL)
        assert _hand(b) == ["Danger! Disaster!"]
    code, out, err = run_cli("check", str(_board(tmp_path, "23213239")), "--cards-db", FULL, "-q")
    assert code == 3 and "Danger! Disaster!' (23213239)" in out and "U+200E" not in err, out + err  # the board reads; the reference model does not play the card
