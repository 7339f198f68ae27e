"""Boards that name any card of a card database (``--cards-db``, issue 30 item 1) and
``bpcheck cards --cards-db FILE NAME --profile``.

The database is the kit's full one, ``cards-full.cdb`` beside the EDOPro core's ``cards.cdb``
(``../shared/ocgcore/``, or where ``OCG_CARDS`` points). Tests that need it, or the core, skip and
say why when it is absent, except in CI (``BPCHECK_REQUIRE_OCGCORE=1``), where they fail.
Card facts are compared with the database rows read here with sqlite3, never written down.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from bpcheck.engines import make_engine
from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.ocgcore import default_paths
from bpcheck.errors import InputError
from bpcheck.model.board import board_from_dict, load_board
from bpcheck.model.cdb import CardDB
from bpcheck.model.profile import profile

ROOT = Path(__file__).resolve().parent.parent
LIB, SCRIPTS, CARDS = default_paths(str(ROOT))
FULL = os.path.join(os.path.dirname(CARDS), "cards-full.cdb")
BOARD = ROOT / "tests" / "data" / "cards-db-board.toml"
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"


def _need(*paths: str) -> None:
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        if REQUIRED:
            pytest.fail(f"required here (BPCHECK_REQUIRE_OCGCORE=1) but not found: {', '.join(missing)}")
        pytest.skip(f"not available: {', '.join(missing)} not found (set OCG_CARDS beside cards-full.cdb, OCGCORE, OCG_SCRIPTS)")


def _row(code: int) -> dict:
    """The datas/texts row of a passcode, read here with sqlite3 (not through bpcheck)."""
    con = sqlite3.connect(f"file:{FULL}?mode=ro", uri=True)
    try:
        r = con.execute("SELECT d.id, t.name, d.type, d.atk, d.def, d.level, d.race, d.attribute FROM datas d JOIN texts t ON t.id = d.id WHERE d.id = ?", (code,)).fetchone()
    finally:
        con.close()
    assert r is not None, code
    return dict(zip(("id", "name", "type", "atk", "def", "level", "race", "attribute"), r))


def _board_doc() -> dict:
    import tomllib

    return tomllib.loads(BOARD.read_text("utf-8"))


# -- the board format ----------------------------------------------------------------------------


def test_a_board_names_database_cards_by_name_and_passcode_with_their_facts_from_the_row():
    _need(FULL)
    board = load_board(BOARD, "cards-db-board.toml", cards_db=FULL)
    doc = _board_doc()
    by_name = doc["p1"]["monsters"][0]["card"]
    by_code = doc["p1"]["monsters"][1]["card"]
    assert isinstance(by_name, str) and isinstance(by_code, int)
    db = CardDB(FULL)
    for ref in (by_name, by_code):
        row = _row(db.card(ref).code)
        card = board.pool[row["name"]]
        assert card.from_database and card.passcode.lstrip("0") == str(row["id"])
        assert (card.atk, card.def_, card.level) == (row["atk"], row["def"], row["level"] & 0xFF)
        assert card.kind == "monster" and card.data.race == row["race"] and card.data.attribute == row["attribute"]
    # the board's state names the cards by their database names
    names = [m.card for m in board.state.players[0].monsters if m is not None]
    assert names == [_row(db.card(by_name).code)["name"], _row(by_code)["name"]]
    # a plain Normal Monster (type Monster|Normal) is one whose behaviour the row gives in full
    normal = board.pool[names[0]]
    assert _row(int(normal.passcode))["type"] == 0x11 and normal.effects_known
    assert not board.pool[names[1]].effects_known
    # the document an engine outside the model receives names the card, not the passcode
    assert board.document["p1"]["monsters"][1]["card"] == names[1]


def test_a_pool_card_named_by_passcode_is_the_pool_card():
    b = board_from_dict({"turn": 2, "turn_player": 1, "p1": {"lp": 8000, "monsters": [{"zone": 1, "card": 5053103, "position": "attack"}]}, "p2": {"lp": 8000}}, "b.toml")
    m = b.state.players[0].monsters[0]
    assert m.card == "Battle Ox" and not b.pool["Battle Ox"].from_database


@pytest.mark.parametrize(
    "entry, field, words",
    [
        ({"zone": 1, "card": "Gene-Warped Warwolff", "position": "attack"}, "p1.monsters[0].card", ["unknown card 'Gene-Warped Warwolff'", "did you mean 'Gene-Warped Warwolf'"]),
        ({"zone": 1, "card": 1234, "position": "attack"}, "p1.monsters[0].card", ["unknown card 1234", "not in the card pool nor in the card database"]),
    ],
)
def test_a_card_in_neither_pool_nor_database_is_an_error_naming_file_field_and_card(entry, field, words):
    _need(FULL)
    doc = {"turn": 2, "turn_player": 1, "p1": {"lp": 8000, "monsters": [entry]}, "p2": {"lp": 8000}}
    with pytest.raises(InputError) as e:
        board_from_dict(doc, "x.toml", cards_db=FULL)
    assert e.value.file == "x.toml" and e.value.field == field
    for w in words:
        assert w in e.value.problem, e.value.problem


def test_without_a_database_a_database_card_is_unknown_and_says_how(run_cli):
    code, out, err = run_cli("validate", str(BOARD))
    assert code == 2 and out == ""
    assert "cards-db-board.toml: p1.monsters[0].card: unknown card" in err and "--cards-db FILE" in err


def test_validate_and_a_bad_database(run_cli, tmp_path):
    _need(FULL)
    code, out, err = run_cli("validate", str(BOARD), "--cards-db", FULL)
    assert code == 0 and out.startswith("ok ") and err == ""
    bad = tmp_path / "x.cdb"
    bad.write_text("not sqlite")
    code, out, err = run_cli("validate", str(BOARD), "--cards-db", str(bad))
    assert code == 2 and "--cards-db" in err and "Traceback" not in err
    code, out, err = run_cli("validate", str(BOARD), "--cards-db", str(tmp_path / "none.cdb"))
    assert code == 2 and "no such file" in err


def _first(db: CardDB, bit: int) -> str:
    """The name of the first card (by passcode) of the database with a type bit, a plain one."""
    return next(c.name for c in db if c.type & bit and c.alias == 0)


@pytest.mark.parametrize(
    "side, field, words",
    [
        ({"spells": [{"zone": 1, "card": "Gene-Warped Warwolf"}]}, "p1.spells[0].card", ["monster card"]),
        ({"monsters": [{"zone": 1, "card": "LINK", "position": "defense"}]}, "p1.monsters[0].position", ["Link monster", "Attack Position"]),
        ({"hand": ["XYZ"]}, "p1.hand[0]", ["Xyz monster", "Extra Deck"]),
        ({"deck": ["XYZ"]}, "p1.deck[0]", ["Xyz monster", "Extra Deck"]),
    ],
)
def test_a_database_card_in_the_wrong_place_is_an_error(side, field, words):
    _need(FULL)
    db = CardDB(FULL)
    names = {"LINK": _first(db, 0x4000000), "XYZ": _first(db, 0x800000)}
    side = json.loads(json.dumps(side).replace('"LINK"', json.dumps(names["LINK"])).replace('"XYZ"', json.dumps(names["XYZ"])))
    doc = {"turn": 2, "turn_player": 1, "p1": {"lp": 8000, **side}, "p2": {"lp": 8000}}
    with pytest.raises(InputError) as e:
        board_from_dict(doc, "x.toml", cards_db=FULL)
    assert e.value.field == field
    for w in words:
        assert w in e.value.problem, e.value.problem


# -- engines ---------------------------------------------------------------------------------------


def test_the_reference_model_refuses_a_board_with_a_card_it_does_not_model(run_cli):
    _need(FULL)
    board = load_board(BOARD, "b", cards_db=FULL)
    effect = [c for c in board.pool if c.from_database and not c.effects_known]
    assert effect
    with pytest.raises(EngineRefusal) as r:
        make_engine("reference").start(board)
    for c in effect:
        assert repr(c.name) in r.value.reason and c.passcode in r.value.reason
    code, out, _err = run_cli("check", str(BOARD), "--cards-db", FULL, "-q")
    assert code == 3 and "SKIPPED" in out and effect[0].name in out and "1 skipped" in out  # skipped is not passed
    code, out, _err = run_cli("check", str(BOARD), "--cards-db", FULL, "-q", "--strict")
    assert code == 3
    code, out, _err = run_cli("check", str(BOARD), "--cards-db", FULL, "-q", "--allow-skips")
    assert code == 0 and "1 skipped" in out


def test_a_board_of_normal_monsters_from_the_database_plays_on_the_reference(run_cli, tmp_path):
    _need(FULL)
    b = tmp_path / "normal.toml"
    b.write_text('turn = 2\nturn_player = 1\n[p1]\nlp = 8000\nmonsters = [{ zone = 1, card = "Gene-Warped Warwolf", position = "attack" }]\n[p2]\nlp = 8000\nmonsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]\n')
    code, out, _err = run_cli("check", str(b), "--cards-db", FULL, "-q")
    assert code == 0 and out.startswith("PASS"), out


def test_the_core_plays_the_board_from_the_chosen_database_and_it_passes(run_cli):
    _need(LIB, SCRIPTS, FULL)
    engine = make_engine("ocgcore", cards_db=FULL)
    assert engine.cards_path == FULL
    board = load_board(BOARD, "b", cards_db=FULL)
    node = engine.start(board)
    codes = {int(c.passcode) for c in board.pool if c.from_database}
    placed = {code for (code, _con) in node.track.cards.values()}
    assert codes <= placed  # loaded by passcode from the database given
    engine.close()
    code, out, err = run_cli("check", str(BOARD), "--engine", "ocgcore", "--cards-db", FULL, "-q")
    assert code == 0 and out.startswith("PASS"), out + err
    # --differential: the reference side refuses, the board is skipped with the card named
    code, out, _err = run_cli("check", str(BOARD), "--engine", "ocgcore", "--cards-db", FULL, "--differential", "-q")
    assert code == 3 and "SKIPPED" in out and "reference model does not model" in out  # skipped is not passed


def test_ocgcore_defaults_to_its_own_database(run_cli):
    _need(LIB, SCRIPTS, CARDS, FULL)
    if len(CardDB(CARDS)) >= len(CardDB(FULL)):
        pytest.skip(f"{CARDS} is the full database: nothing to tell apart")
    code, out, err = run_cli("check", str(BOARD), "--engine", "ocgcore", "-q")
    assert code == 2 and "not in the card pool nor in the card database" in err and CARDS.split("/")[-1] in err


# -- bpcheck cards --cards-db FILE NAME [--profile] -------------------------------------------------


def test_cards_shows_a_database_card_and_its_profile(run_cli):
    _need(FULL)
    db = CardDB(FULL)
    card = db.card("Honest")
    code, out, err = run_cli("cards", "--cards-db", FULL, str(card.code), "--profile", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["card"]["code"] == card.code and got["card"]["name"] == card.name
    assert got["profile"] == json.loads(json.dumps(profile(card).to_dict()))
    code, text, err = run_cli("cards", "--cards-db", FULL, card.name, "--profile")
    assert code == 0, err
    p = profile(card)
    assert text.startswith(f"{card.name} ({card.code})")
    for e in p.effects:  # every effect with its kind, speed, windows and Damage Step rules, and their evidence
        assert f"effect {e.index + 1} " in text
        for d in (e.kind, e.speed, e.windows):
            assert d.rule in text
            for ev in d.evidence:
                if ev.quote:
                    assert repr(ev.quote) in text
        for sub in (e.damage_step or {}).values():
            for d in sub.values():
                assert d.rule in text
    code, text2, _ = run_cli("cards", "--cards-db", FULL, card.name, "--profile")
    assert text2 == text  # deterministic


def test_cards_unknown_database_card_is_exit_2(run_cli):
    _need(FULL)
    code, out, err = run_cli("cards", "--cards-db", FULL, "Honnest", "--profile")
    assert code == 2 and out == "" and "no card named 'Honnest'" in err and "did you mean 'Honest'" in err
    code, out, err = run_cli("cards", "Honest", "--profile")
    assert code == 2 and "--cards-db" in err


def test_has_name_answers_as_card_finds_a_name_without_looking_for_near_names():
    """CardDB.has_name (the sweep asks it for every quoted name of a text, most of them
    archetypes): true exactly where card() finds the name, never a near spelling."""
    _need(FULL)
    db = CardDB(FULL)
    assert db.has_name("Umi") and db.card("Umi").name == "Umi"
    assert not db.has_name("umi") and not db.has_name("Umii")  # card() refuses both, offering "Umi"
    with pytest.raises(InputError, match="did you mean 'Umi'"):
        db.card("umi")
    assert not db.has_name("Blue-Eyes")  # an archetype, no card of that name
