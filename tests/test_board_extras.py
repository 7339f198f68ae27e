"""What Battle Phase boards of a card database's cards need (issue 30 item 1, docs/boards.md
"Xyz materials, Extra Monster Zones, Pendulum Zones, the Extra Deck"): the board format's fields,
each error (file, field, problem; exit 2), and the reference model's refusal.

Card kinds come from the kit's full card database (``cards-full.cdb``), read here with sqlite3 to
pick the cards, never written down; the tests skip, saying why, when it is absent (and fail in CI,
``BPCHECK_REQUIRE_OCGCORE=1``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from bpcheck.engines import make_engine
from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.ocgcore import default_paths
from bpcheck.errors import InputError
from bpcheck.model import cdb as C
from bpcheck.model.board import board_from_dict

ROOT = Path(__file__).resolve().parent.parent
_LIB, _SCRIPTS, CARDS = default_paths(str(ROOT))
FULL = os.path.join(os.path.dirname(CARDS), "cards-full.cdb")
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"


@pytest.fixture(scope="module")
def cards() -> dict[str, str]:
    """One card of each kind the tests need, chosen from the database by its type bits: the
    first by passcode of each (name -> kind)."""
    if not os.path.exists(FULL):
        if REQUIRED:
            pytest.fail(f"required here (BPCHECK_REQUIRE_OCGCORE=1) but not found: {FULL}")
        pytest.skip(f"not available: {FULL} not found (set OCG_CARDS beside cards-full.cdb)")
    con = sqlite3.connect(Path(FULL).resolve().as_uri() + "?mode=ro", uri=True)

    def first(where: str) -> str:
        row = con.execute(f"SELECT t.name FROM datas d JOIN texts t ON t.id = d.id WHERE d.alias = 0 AND {where} ORDER BY d.id LIMIT 1").fetchone()
        assert row is not None, where
        return row[0]

    pend = C.TYPE_PENDULUM
    out = {
        "xyz": first(f"(d.type & {C.TYPE_XYZ}) AND NOT (d.type & {pend})"),
        "link": first(f"(d.type & {C.TYPE_LINK})"),
        "pendulum": first(f"(d.type & {pend}) AND NOT (d.type & {C.TYPE_XYZ | C.TYPE_FUSION | C.TYPE_SYNCHRO})"),
        "normal": first(f"d.type = {C.TYPE_MONSTER | C.TYPE_NORMAL} AND (d.level & 255) = 4"),
        "normal2": first(f"d.type = {C.TYPE_MONSTER | C.TYPE_NORMAL} AND (d.level & 255) = 3"),
        "effect": first(f"d.type = {C.TYPE_MONSTER | C.TYPE_EFFECT}"),
        "token": first(f"(d.type & {C.TYPE_TOKEN})"),
        "trap": first(f"d.type = {C.TYPE_TRAP}"),
    }
    con.close()
    return out


def doc(p1: dict | None = None, p2: dict | None = None) -> dict:
    return {"turn": 2, "turn_player": 1, "p1": {"lp": 8000, **(p1 or {})}, "p2": {"lp": 8000, **(p2 or {})}}


def load(d: dict):
    return board_from_dict(d, "b.toml", cards_db=FULL)


def error(d: dict) -> str:
    with pytest.raises(InputError) as e:
        load(d)
    return str(e.value)


def test_all_new_places_load_with_their_uids(cards):
    d = doc(
        p1={"monsters": [{"zone": 1, "card": cards["normal"], "position": "attack"}],
            "extra_monsters": [{"zone": 1, "card": cards["link"], "position": "attack"}],
            "pendulum": [{"zone": 2, "card": cards["pendulum"]}],
            "extra_deck": [cards["xyz"]]},
        p2={"monsters": [{"zone": 3, "card": cards["xyz"], "position": "defense", "materials": [cards["normal"], {"card": cards["normal2"], "id": "m2"}]}],
            "hand": [cards["normal"]]},
    )
    b = load(d)
    # the cards of the old places keep the numbering they had without the new ones
    plain = load(doc(p1={"monsters": d["p1"]["monsters"]}, p2={"monsters": [{k: v for k, v in d["p2"]["monsters"][0].items() if k != "materials"}], "hand": d["p2"]["hand"]}))
    assert [m.uid for p in b.state.players for m in p.monsters if m] == [m.uid for p in plain.state.players for m in p.monsters if m] == [1, 2]
    assert [r.uid for r in b.state.players[1].hand] == [r.uid for r in plain.state.players[1].hand] == [3]
    x = b.extras
    (link, none), (n2, n3) = x.extra_monsters
    assert (link.card, link.uid, none, n2, n3) == (cards["link"], 4, None, None, None)
    assert x.pendulum[0][0] is None and (x.pendulum[0][1].card, x.pendulum[0][1].uid, x.pendulum[0][1].face_up) == (cards["pendulum"], 5, True)
    assert [(r.card, r.uid) for r in x.extra_deck[0]] == [(cards["xyz"], 6)] and x.extra_deck[1] == ()
    assert [(h, [(m.card, m.uid, m.owner) for m in ms]) for h, ms in x.materials] == [(2, [(cards["normal"], 7, 1), (cards["normal2"], 8, 1)])]
    assert b.ids["m2"] == 8
    assert not x.is_empty() and plain.extras.is_empty()


def test_materials_by_passcode(cards):
    con = sqlite3.connect(Path(FULL).resolve().as_uri() + "?mode=ro", uri=True)
    code = con.execute("SELECT d.id FROM datas d JOIN texts t ON t.id = d.id WHERE t.name = ? AND d.alias = 0", (cards["normal"],)).fetchone()[0]
    con.close()
    b = load(doc(p1={"monsters": [{"zone": 1, "card": cards["xyz"], "position": "attack", "materials": [code]}]}))
    assert [m.card for m in b.extras.materials[0][1]] == [cards["normal"]]


@pytest.mark.parametrize(
    "case, board, expect",
    [
        ("materials on a non-Xyz", lambda c: doc(p1={"monsters": [{"zone": 1, "card": c["effect"], "position": "attack", "materials": [c["normal"]]}]}),
         "b.toml: p1.monsters[0].materials: {effect} is not an Xyz monster: only an Xyz monster has materials"),
        ("materials on a Link monster in an EMZ", lambda c: doc(p1={"extra_monsters": [{"zone": 1, "card": c["link"], "position": "attack", "materials": [c["normal"]]}]}),
         "b.toml: p1.extra_monsters[0].materials: {link} is not an Xyz monster: only an Xyz monster has materials"),
        ("a Token as a material", lambda c: doc(p1={"monsters": [{"zone": 1, "card": c["xyz"], "position": "attack", "materials": [c["token"]]}]}),
         "b.toml: p1.monsters[0].materials[0]: {token} is a Token: a Token cannot be an Xyz material"),
        ("an unknown material", lambda c: doc(p1={"monsters": [{"zone": 1, "card": c["xyz"], "position": "attack", "materials": ["No Such Card Anywhere"]}]}),
         "b.toml: p1.monsters[0].materials[0]: unknown card 'No Such Card Anywhere': not in the card pool nor in the card database"),
        ("a Link monster in Defense Position", lambda c: doc(p1={"extra_monsters": [{"zone": 2, "card": c["link"], "position": "defense"}]}),
         "b.toml: p1.extra_monsters[0].position: {link} is a Link monster: always in face-up Attack Position"),
        ("a Link monster face-down in a Main Monster Zone", lambda c: doc(p2={"monsters": [{"zone": 1, "card": c["link"], "position": "facedown"}]}),
         "b.toml: p2.monsters[0].position: {link} is a Link monster: always in face-up Attack Position"),
        ("a Main Deck monster in an EMZ", lambda c: doc(p1={"extra_monsters": [{"zone": 1, "card": c["normal"], "position": "attack"}]}),
         "b.toml: p1.extra_monsters[0].card: {normal} is a Main Deck monster: an Extra Monster Zone holds a monster Summoned from the Extra Deck"),
        ("a Trap in an EMZ", lambda c: doc(p1={"extra_monsters": [{"zone": 1, "card": c["trap"], "position": "attack"}]}),
         "b.toml: p1.extra_monsters[0].card: {trap} is a trap card, not a monster"),
        ("two cards in one EMZ (shared)", lambda c: doc(p1={"extra_monsters": [{"zone": 1, "card": c["link"], "position": "attack"}]},
                                                         p2={"extra_monsters": [{"zone": 2, "card": c["xyz"], "position": "attack"}]}),
         "b.toml: p2.extra_monsters[0].zone: this Extra Monster Zone is already used by the card at p1.extra_monsters[0] (P1's left Extra Monster Zone is P2's right one)"),
        ("two cards in one EMZ (same side)", lambda c: doc(p1={"extra_monsters": [{"zone": 2, "card": c["link"], "position": "attack"}, {"zone": 2, "card": c["xyz"], "position": "attack"}]}),
         "b.toml: p1.extra_monsters[1].zone: this Extra Monster Zone is already used by the card at p1.extra_monsters[0]"),
        ("three EMZ monsters", lambda c: doc(p1={"extra_monsters": [{"zone": 1, "card": c["link"], "position": "attack"}] * 3}),
         "b.toml: p1.extra_monsters: there are 2 Extra Monster Zones; 3 cards given"),
        ("an EMZ zone 3", lambda c: doc(p1={"extra_monsters": [{"zone": 3, "card": c["link"], "position": "attack"}]}),
         "b.toml: p1.extra_monsters[0].zone: 3 is greater than the maximum of 2"),
        ("a Pendulum Zone card that is not a Pendulum", lambda c: doc(p1={"pendulum": [{"zone": 1, "card": c["effect"]}]}),
         "b.toml: p1.pendulum[0].card: {effect} is not a Pendulum monster: a Pendulum Zone holds a Pendulum monster card"),
        ("a Pendulum Zone over a Spell & Trap Zone card", lambda c: doc(p2={"spells": [{"zone": 5, "card": c["trap"]}], "pendulum": [{"zone": 2, "card": c["pendulum"]}]}),
         "b.toml: p2.pendulum[0].zone: the right Pendulum Zone is Spell & Trap Zone 5, already used by {trap}"),
        ("two cards in one Pendulum Zone", lambda c: doc(p1={"pendulum": [{"zone": 1, "card": c["pendulum"]}, {"zone": 1, "card": c["pendulum"]}]}),
         "b.toml: p1.pendulum[1].zone: the left Pendulum Zone is already used by {pendulum}"),
        ("a Main Deck card in the Extra Deck", lambda c: doc(p1={"extra_deck": [c["normal"]]}),
         "b.toml: p1.extra_deck[0]: {normal} is a Main Deck card: the Extra Deck holds Fusion, Synchro, Xyz and Link monsters (and Pendulum monsters, face-up)"),
        ("an Extra Deck card in the hand", lambda c: doc(p1={"hand": [c["xyz"]]}),
         "b.toml: p1.hand[0]: {xyz} is an Xyz monster: it goes back to the Extra Deck, never to the hand"),
        ("an Extra Deck card of the other player", lambda c: doc(p1={"extra_deck": [{"card": c["link"], "owner": 2}]}),
         "b.toml: p1.extra_deck[0]: a card in p1's extra_deck belongs to p1 (its owner)"),
        ("an unknown field in a Pendulum Zone entry", lambda c: doc(p1={"pendulum": [{"zone": 1, "card": c["pendulum"], "face_up": False}]}),
         "b.toml: p1.pendulum[0].face_up: unknown field (allowed: card, id, owner, zone)"),
        ("an id used twice across the new places", lambda c: doc(p1={"monsters": [{"zone": 1, "card": c["xyz"], "position": "attack", "id": "x", "materials": [{"card": c["normal"], "id": "x"}]}]}),
         "b.toml: p1.monsters[0].materials[0].id: card id 'x' is used twice (also at p1.monsters[0])"),
    ],
)
def test_errors_name_file_field_and_problem(cards, case, board, expect):
    assert error(board(cards)).startswith(expect.format(**{k: repr(v) for k, v in cards.items()})), case


def test_cli_exit_status_2(cards, tmp_path, run_cli):
    f = tmp_path / "b.toml"
    f.write_text(f'turn = 2\nturn_player = 1\n[p1]\nlp = 8000\nextra_deck = ["{cards["normal"]}"]\n[p2]\nlp = 8000\n', encoding="utf-8")
    code, out, err = run_cli("validate", str(f), "--cards-db", FULL)
    assert code == 2 and f"b.toml: p1.extra_deck[0]: '{cards['normal']}' is a Main Deck card" in err and "Traceback" not in err + out


def test_reference_model_refuses_naming_each_card(cards):
    b = load(doc(p1={"monsters": [{"zone": 1, "card": cards["normal"], "position": "attack"}], "extra_deck": [cards["xyz"]]},
                 p2={"pendulum": [{"zone": 1, "card": cards["pendulum"]}]}))
    with pytest.raises(EngineRefusal) as e:
        make_engine("reference").start(b)
    msg = str(e.value)
    assert "the reference model does not model" in msg
    assert f"the Extra Deck (P1's: '{cards['xyz']}')" in msg and f"the Pendulum Zones ('{cards['pendulum']}' in P2's left one)" in msg
    # materials are named with the Xyz monster they are under
    b = load(doc(p1={"monsters": [{"zone": 2, "card": cards["xyz"], "position": "attack", "materials": [cards["normal"]]}]}))
    with pytest.raises(EngineRefusal) as e:
        make_engine("reference").start(b)
    assert f"Xyz materials ('{cards['normal']}' under '{cards['xyz']}')" in str(e.value)
    # a board of plain Normal Monsters and nothing new is played as before
    make_engine("reference").start(load(doc(p1={"monsters": [{"zone": 1, "card": cards["normal"], "position": "attack"}]})))


# -- the EDOPro core places them (--engine ocgcore) ----------------------------------------------

LIB, SCRIPTS = _LIB, _SCRIPTS


def _core_or_skip() -> None:
    missing = [p for p in (LIB, SCRIPTS, FULL) if not os.path.exists(p)]
    if missing:
        if REQUIRED:
            pytest.fail(f"required here (BPCHECK_REQUIRE_OCGCORE=1) but not found: {', '.join(missing)}")
        pytest.skip(f"the EDOPro core is not available: {', '.join(missing)} not found (set OCGCORE, OCG_SCRIPTS, OCG_CARDS)")


def _detaching_xyz() -> tuple[str, int]:
    """An Xyz monster whose text detaches a material to negate an attack (found by its text, the
    first by passcode), and its Rank."""
    con = sqlite3.connect(Path(FULL).resolve().as_uri() + "?mode=ro", uri=True)
    row = con.execute(
        "SELECT t.name, d.level & 255 FROM datas d JOIN texts t ON t.id = d.id WHERE d.alias = 0 AND (d.type & ?) "
        "AND t.desc LIKE '%declares an attack%detach 1 material from this card; negate the attack%' ORDER BY d.id LIMIT 1",
        (C.TYPE_XYZ,),
    ).fetchone()
    con.close()
    assert row is not None, "no Xyz monster of the database detaches a material to negate an attack"
    return row[0], row[1]


def _normals(level: int, n: int) -> list[str]:
    con = sqlite3.connect(Path(FULL).resolve().as_uri() + "?mode=ro", uri=True)
    rows = con.execute(
        "SELECT t.name FROM datas d JOIN texts t ON t.id = d.id WHERE d.alias = 0 AND d.type = ? AND (d.level & 255) = ? ORDER BY d.id LIMIT ?",
        (C.TYPE_MONSTER | C.TYPE_NORMAL, level, n),
    ).fetchall()
    con.close()
    return [r[0] for r in rows]


def _places(obs: dict, side: int) -> dict:
    p = obs["players"][side]
    cards = lambda xs: [None if x is None else (x["uid"], x["card"]) for x in xs]  # noqa: E731
    return {
        "monsters": [None if m is None else (m["uid"], m["card"], cards(m.get("materials", []))) for m in p["monsters"]],
        "extra_monsters": [None if m is None else (m["uid"], m["card"], cards(m.get("materials", []))) for m in p["extra_monsters"]],
        "spells": cards(p["spells"]),
        "pendulum": cards(p["pendulum"]),
        "extra_deck": sorted(cards(p["extra_deck"])),
    }


def test_ocgcore_places_and_observes_them_as_the_board_says(cards):
    _core_or_skip()
    from bpcheck.engines.ocgcore import OcgcoreEngine
    from bpcheck.engines.reference import board_observation

    xyz, rank = _detaching_xyz()
    mats = _normals(rank, 2)
    b = load(doc(
        p1={"monsters": [{"zone": 2, "card": cards["normal"], "position": "attack"}],
            "extra_monsters": [{"zone": 1, "card": cards["link"], "position": "attack"}],
            "pendulum": [{"zone": 1, "card": cards["pendulum"]}],
            "extra_deck": [cards["xyz"], cards["pendulum"]]},
        p2={"monsters": [{"zone": 1, "card": xyz, "position": "attack", "materials": mats}],
            "extra_monsters": [{"zone": 1, "card": cards["xyz"], "position": "defense", "materials": [mats[0]]}]},
    ))
    engine = OcgcoreEngine(cards=FULL)
    try:
        obs = engine.observe(engine.start(b))
    finally:
        engine.close()
    p1, p2 = _places(obs, 0), _places(obs, 1)
    # uids: the Main Monster Zones 1-2, then P1's Extra Monster Zone, Pendulum Zone and Extra Deck
    # 3-6, P2's Extra Monster Zone and its material 7-8, the Main Monster Zone's materials 9-10
    assert p1["extra_monsters"] == [(3, cards["link"], []), None]
    assert p1["pendulum"] == [(4, cards["pendulum"]), None] and p1["spells"] == [None] * 5  # Spell & Trap Zone 1 is the Pendulum Zone
    assert p1["extra_deck"] == sorted([(5, cards["xyz"]), (6, cards["pendulum"])])
    assert p2["monsters"][0] == (2, xyz, [(9, mats[0]), (10, mats[1])])
    assert p2["extra_monsters"] == [(7, cards["xyz"], [(8, mats[0])]), None]
    assert obs["players"][1]["extra_monsters"][0]["position"] == "defense"
    # a monster's Type is its row's, the newer Types too (Cyberse, Wyrm, ...: the observation said null)
    from bpcheck.model.cdb import open_db

    for m in (obs["players"][0]["extra_monsters"][0], obs["players"][1]["monsters"][0]):
        assert m["race"] == open_db(FULL).card(m["card"]).races[0]
    con = sqlite3.connect(Path(FULL).resolve().as_uri() + "?mode=ro", uri=True)
    cyberse = con.execute("SELECT t.name FROM datas d JOIN texts t ON t.id = d.id WHERE d.alias = 0 AND d.race = 16777216 AND (d.type & ?) ORDER BY d.id LIMIT 1", (C.TYPE_LINK,)).fetchone()[0]
    con.close()
    e = OcgcoreEngine(cards=FULL)
    try:
        o = e.observe(e.start(load(doc(p1={"extra_monsters": [{"zone": 1, "card": cyberse, "position": "attack"}]}))))
    finally:
        e.close()
    assert o["players"][0]["extra_monsters"][0]["race"] == "Cyberse"
    # the reference model draws the board in the same shape, with the same cards in each place
    ref = board_observation(b)
    assert [_places(ref, s) for s in (0, 1)] == [p1, p2]
    # a board with none of them is observed exactly as before: no new field
    plain = OcgcoreEngine(cards=FULL)
    try:
        o = plain.observe(plain.start(load(doc(p1={"monsters": [{"zone": 1, "card": cards["normal"], "position": "attack"}]}))))
    finally:
        plain.close()
    assert not {"extra_monsters", "pendulum", "extra_deck"} & set(o["players"][0]) and "materials" not in o["players"][0]["monsters"][0]


def test_ocgcore_offers_the_xyz_detach_when_attacked_and_follows_the_material(cards, tmp_path, run_cli):
    _core_or_skip()
    from bpcheck.engines.ocgcore import OcgcoreEngine

    xyz, rank = _detaching_xyz()
    mats = _normals(rank, 2)
    d = doc(p1={"monsters": [{"zone": 1, "card": cards["normal"], "position": "attack"}]},
            p2={"monsters": [{"zone": 1, "card": xyz, "position": "attack", "materials": mats}]})
    b = load(d)
    engine = OcgcoreEngine(cards=FULL)
    try:
        s = engine.start(b)
        path = []
        for kind in ("enter Battle Phase", "attack "):
            while True:
                acts = engine.legal_actions(s)
                a = next((a for a in acts if a.label.startswith(kind)), None)
                if a is not None:
                    break
                s = engine.apply(s, next(a for a in acts if a.label == "pass"))[0]
            s = engine.apply(s, a)[0]
            path.append(a.label)
        detach = [a for a in engine.legal_actions(s) if a.label.startswith(f"activate {xyz}")]
        assert detach, f"the detach of {xyz!r} is not offered after {path}: {[a.label for a in engine.legal_actions(s)]}"
        after = engine.observe(engine.apply(s, detach[0])[0])
    finally:
        engine.close()
    left = [(m["uid"], m["card"]) for m in after["players"][1]["monsters"][0]["materials"]]
    gy = [(c["uid"], c["card"]) for c in after["players"][1]["graveyard"]]
    assert len(left) == 1 and len(gy) == 1 and sorted(left + gy) == [(3, mats[0]), (4, mats[1])]
    # and the board passes every invariant on the unmodified scripts
    f = tmp_path / "xyz.toml"
    from bpcheck.harness.board_writer import write_board

    write_board(d, f)
    code, out, err = run_cli("check", str(f), "--engine", "ocgcore", "--cards-db", FULL, "--max-states", "3000")
    assert code == 0, out + err


def test_text_report_draws_the_new_places(cards):
    from bpcheck.engines.reference import board_observation
    from bpcheck.reports.text import board_lines

    b = load(doc(p1={"monsters": [{"zone": 1, "card": cards["xyz"], "position": "attack", "materials": [cards["normal"]]}],
                     "extra_monsters": [{"zone": 2, "card": cards["link"], "position": "attack"}],
                     "pendulum": [{"zone": 2, "card": cards["pendulum"]}], "extra_deck": [cards["xyz"]]}))
    lines = board_lines(board_observation(b))
    assert any(line.startswith("   monsters: " + cards["xyz"]) and f"[materials: {cards['normal']}]" in line for line in lines)
    assert any(line.startswith("   extra monster zones: -- | " + cards["link"]) for line in lines)
    assert f"   pendulum zones: -- | {cards['pendulum']}" in lines and f"   extra_deck: {cards['xyz']}" in lines
    plain = board_lines(board_observation(load(doc(p1={"monsters": [{"zone": 1, "card": cards["normal"], "position": "attack"}]}))))
    assert not any("extra monster zones" in x or "pendulum zones" in x or "extra_deck" in x for x in plain)
