"""bpcheck.harness.strategies and the board writer: every drawn board is valid, writes to a board file
that loads back to the same board, covers the board format, and shrinks toward small boards."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from bpcheck.harness.board_writer import board_size, board_toml, document_board, write_board
from bpcheck.errors import InputError
from bpcheck.model.board import load_board, parse_toml
from bpcheck.harness.strategies import board_documents, boards

FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
FIND = settings(max_examples=300, database=None, deadline=None, suppress_health_check=list(HealthCheck))

EXTRA = {
    "name": "Test Golem",
    "passcode": "99999901",
    "kind": "monster",
    "subtype": "normal",
    "text": "A board-defined card.",
    "attribute": "EARTH",
    "race": "Rock",
    "level": 4,
    "atk": 1234,
    "def": 1000,
}


@FAST
@given(doc=board_documents())
def test_every_drawn_board_round_trips_through_a_board_file(doc, tmp_path_factory):
    board = document_board(doc)  # the loader behind `bpcheck validate`: raises on anything invalid
    path = write_board(doc, tmp_path_factory.mktemp("b") / "drawn.toml")
    assert parse_toml(path.read_text(), str(path)) == doc
    loaded = load_board(path)
    assert loaded.state == board.state  # same cards, same zones, same uids
    assert loaded.pool.names() == board.pool.names()
    assert loaded.name == board.name


def test_drawn_boards_pass_bpcheck_validate(run_cli, tmp_path):
    docs = []

    @settings(max_examples=8, database=None, deadline=None)
    @given(doc=board_documents())
    def collect(doc):
        docs.append(doc)

    collect()
    files = [str(write_board(d, tmp_path / f"b{i}.toml")) for i, d in enumerate(docs)]
    code, out, err = run_cli("validate", *files)
    assert code == 0, err
    assert out.count("ok ") == len(files)


def _monsters(doc):
    return [m for side in ("p1", "p2") for m in doc[side].get("monsters", [])]


def _spells(doc):
    return [s for side in ("p1", "p2") for s in doc[side].get("spells", [])]


FEATURES = {
    "face-up attack": lambda d: any(m["position"] == "attack" for m in _monsters(d)),
    "face-up defense": lambda d: any(m["position"] == "defense" for m in _monsters(d)),
    "face-down Set this turn": lambda d: any(m["position"] == "facedown" and m.get("set_this_turn") for m in _monsters(d)),
    "summoned this turn": lambda d: any(m.get("summoned_this_turn") for m in _monsters(d)),
    "a Token": lambda d: any("Token" in m["card"] for m in _monsters(d)),
    "control taken": lambda d: any("owner" in m for m in _monsters(d)),
    "Spell/Trap Set this turn": lambda d: any(s.get("set_this_turn") for s in _spells(d)),
    "equip with its target": lambda d: any("equipped_to" in s for s in _spells(d)),
    "continuous Trap kept on a monster": lambda d: any("attached_to" in s for s in _spells(d)),
    "face-up continuous Trap": lambda d: any(s.get("face_up") and "attached_to" not in s and "equipped_to" not in s for s in _spells(d)),
    "Field Spell": lambda d: any("field_spell" in d[s] for s in ("p1", "p2")),
    "hand": lambda d: any(d[s].get("hand") for s in ("p1", "p2")),
    "Graveyard": lambda d: any(d[s].get("graveyard") for s in ("p1", "p2")),
    "banished": lambda d: any(d[s].get("banished") for s in ("p1", "p2")),
    "Deck": lambda d: any(d[s].get("deck") for s in ("p1", "p2")),
    "first turn": lambda d: d["turn"] == 1,
    "P2 is the turn player": lambda d: d["turn_player"] == 2,
    "odd LP": lambda d: any(d[s]["lp"] % 100 for s in ("p1", "p2")),
}


def test_the_strategy_draws_every_part_of_the_board_format():
    seen = {k: 0 for k in FEATURES}

    @settings(max_examples=300, database=None, deadline=None, derandomize=True, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(doc=board_documents())
    def sample(doc):
        for k, has in FEATURES.items():
            seen[k] += bool(has(doc))

    sample()
    assert [k for k, n in seen.items() if n == 0] == [], seen


def test_minimal_boards_are_small_round_and_on_the_turn_players_side():
    # The smallest board with an opponent's monster: that one monster, the simplest card, zone 1,
    # Attack Position, 8000 LP, turn 2, P1 the turn player, nothing else.
    doc = find(board_documents(), lambda d: bool(d["p2"].get("monsters")), settings=FIND)
    assert doc["turn"] == 2 and doc["turn_player"] == 1
    assert doc["p1"] == {"lp": 8000} and doc["p2"] == {"lp": 8000, "monsters": [{"zone": 1, "card": "Battle Ox", "position": "attack"}]}
    # The smallest board with a Set card: one card, Set, in zone 1, no flags.
    doc = find(board_documents(), lambda d: bool(_spells(d)), settings=FIND)
    assert board_size(doc) == 1 and _spells(doc)[0]["zone"] == 1 and set(_spells(doc)[0]) == {"zone", "card"}
    # Nothing asked for: the empty board.
    assert board_size(find(board_documents(), lambda d: True, settings=FIND)) == 0


def test_a_subset_of_cards_and_board_defined_cards(tmp_path):
    allowed = {"Battle Ox", "Mirror Force", "Kuriboh", EXTRA["name"]}

    @FAST
    @given(doc=board_documents(["Battle Ox", "Mirror Force", "Kuriboh"], [EXTRA]))
    def check(doc):
        names = {m["card"] for m in _monsters(doc)} | {s["card"] for s in _spells(doc)}
        for side in ("p1", "p2"):
            for pile in ("hand", "graveyard", "banished", "deck"):
                names |= set(doc[side].get(pile, []))
        assert names <= allowed
        assert doc["card"] == [EXTRA]

    check()
    doc = find(board_documents(["Mirror Force"], [EXTRA]), lambda d: any(m["card"] == EXTRA["name"] for m in _monsters(d)), settings=FIND)
    board = load_board(write_board(doc, tmp_path / "extra.toml"))
    assert EXTRA["name"] in board.pool and board.pool[EXTRA["name"]].atk == 1234
    assert "[[card]]" in board_toml(doc)


def test_unknown_cards_are_bad_input_when_the_strategy_is_made():
    with pytest.raises(InputError) as e:
        board_documents(["Battle Oxx"])
    assert e.value.render() == "--cards: [0]: unknown card 'Battle Oxx' (did you mean 'Battle Ox'?)"


@FAST
@given(board=boards(["Battle Ox", "Sakuretsu Armor"]))
def test_boards_draws_board_objects(board):
    assert {m.card for _s, _i, m in board.state.monsters()} <= {"Battle Ox"}
