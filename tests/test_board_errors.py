"""Bad boards: exit status 2, a message naming the file, the field and the problem, no traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

GOOD = """
turn = 2
turn_player = 1
[p1]
lp = 8000
monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]
[p2]
lp = 8000
spells = [{ zone = 1, card = "Mirror Force" }]
"""


def write(tmp_path, text, name="board.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


CASES = [
    (
        "unknown card",
        GOOD.replace('"Battle Ox"', '"Battle Oxx"'),
        "p1.monsters[0].card: unknown card 'Battle Oxx'",
    ),
    (
        "unknown card with a case hint",
        GOOD.replace('"Battle Ox"', '"battle ox"'),
        "did you mean 'Battle Ox'",
    ),
    (
        "a sixth monster",
        GOOD.replace(
            'monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]',
            "monsters = ["
            + ", ".join(f'{{ zone = {i}, card = "Battle Ox", position = "attack" }}' for i in (1, 2, 3, 4, 5, 5))
            + "]",
        ),
        "p1.monsters: a player has 5 Monster Zones; 6 cards given",
    ),
    (
        "zone 6",
        GOOD.replace("zone = 1, card = \"Battle Ox\"", "zone = 6, card = \"Battle Ox\""),
        "p1.monsters[0].zone: 6 is greater than the maximum of 5",
    ),
    (
        "two monsters in one zone",
        GOOD.replace(
            'monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]',
            'monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }, { zone = 1, card = "Dark Elf", position = "attack" }]',
        ),
        "p1.monsters[1].zone: Monster Zone 1 is already used by 'Battle Ox'",
    ),
    (
        "one card in two places",
        GOOD.replace(
            'monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]',
            'monsters = [{ zone = 1, card = "Battle Ox", position = "attack", id = "ox" }]\nhand = [{ card = "Battle Ox", id = "ox" }]',
        ),
        "p1.hand[0].id: card id 'ox' is used twice (also at p1.monsters[0])",
    ),
    (
        "negative LP",
        GOOD.replace("lp = 8000", "lp = -100", 1),
        "p1.lp: -100 is less than the minimum of 1",
    ),
    (
        "negative ATK in a card defined by the board",
        GOOD
        + """
[[card]]
name = "Broken Monster"
passcode = "99999999"
kind = "monster"
subtype = "normal"
attribute = "DARK"
race = "Fiend"
level = 4
atk = -300
def = 100
text = "A monster with negative ATK."
""",
        "card[0].atk: must not be negative, got -300",
    ),
    (
        "a trap both face-up and set this turn",
        GOOD.replace('{ zone = 1, card = "Mirror Force" }', '{ zone = 1, card = "Gravity Bind", face_up = true, set_this_turn = true }'),
        "p2.spells[0]: a card cannot be both face-up and Set this turn",
    ),
    (
        "a face-up Normal Trap",
        GOOD.replace('{ zone = 1, card = "Mirror Force" }', '{ zone = 1, card = "Mirror Force", face_up = true }'),
        "p2.spells[0].face_up: a face-up trap must be Continuous or Equip",
    ),
    (
        "unknown position",
        GOOD.replace('position = "attack"', 'position = "sideways"'),
        "p1.monsters[0].position: 'sideways' is not one of 'attack', 'defense', 'facedown'",
    ),
    (
        "unknown zone name",
        GOOD.replace("monsters = [", "monster_zones = ["),
        "p1.monster_zones: unknown field (allowed: banished, deck, extra_deck, extra_monsters, field_spell, graveyard, hand, lp, monsters, pendulum, spells)",
    ),
    (
        "a string where a number belongs",
        GOOD.replace("lp = 8000", 'lp = "8000"', 1),
        "p1.lp: expected integer, got str '8000'",
    ),
    (
        "a float where a whole number belongs",
        GOOD.replace("lp = 8000", "lp = 8000.0", 1),
        "p1.lp: expected a whole number, got 8000.0",
    ),
    (
        "malformed TOML",
        "turn = 2\n[p1\nlp = 8000\n",
        "malformed TOML",
    ),
    (
        "a monster in a Spell & Trap Zone",
        GOOD.replace('{ zone = 1, card = "Mirror Force" }', '{ zone = 1, card = "Kuriboh" }'),
        "p2.spells[0].card: 'Kuriboh' is a monster card; Spell & Trap Zones hold Spells and Traps",
    ),
    (
        "a face-down token",
        GOOD.replace('card = "Battle Ox", position = "attack"', 'card = "Sheep Token", position = "facedown"'),
        "p1.monsters[0].position: a Token is always face-up",
    ),
    (
        "a token in the hand",
        GOOD.replace("[p2]", 'hand = ["Sheep Token"]\n[p2]'),
        "p1.hand[0]: 'Sheep Token' is a Token; Tokens exist only on the field",
    ),
    (
        "an equip pointing at an empty zone",
        GOOD.replace('{ zone = 1, card = "Mirror Force" }', '{ zone = 1, card = "United We Stand", face_up = true, equipped_to = "P1 M4" }'),
        "p2.spells[0].equipped_to: P1 M4 holds no monster",
    ),
    (
        "missing turn",
        GOOD.replace("turn = 2\n", ""),
        "turn: missing required field",
    ),
]


@pytest.mark.parametrize("label,text,message", CASES, ids=[c[0] for c in CASES])
def test_bad_board_is_reported(tmp_path, run_cli, label, text, message):
    p = write(tmp_path, text)
    code, out, err = run_cli("validate", str(p))
    assert code == 2, (out, err)
    assert str(p) in err
    assert message in err
    assert "Traceback" not in err


def test_good_board_validates(tmp_path, run_cli):
    p = write(tmp_path, GOOD)
    code, out, err = run_cli("validate", str(p))
    assert code == 0, err
    assert out.startswith("ok")


def test_missing_file(tmp_path, run_cli):
    code, _out, err = run_cli("validate", str(tmp_path / "nope.toml"))
    assert code == 2
    assert "nope.toml: no such file or directory" in err


def test_bad_input_through_a_real_process_has_no_traceback(tmp_path):
    p = write(tmp_path, GOOD.replace('"Battle Ox"', '"Nonexistent Card"'))
    proc = subprocess.run(
        [sys.executable, "-m", "bpcheck", "validate", str(p)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert "unknown card 'Nonexistent Card'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_results_before_a_bad_file_are_kept(tmp_path, run_cli, root):
    bad = write(tmp_path, "not = [valid", "bad.toml")
    good = root / "boards" / "000-replay-1.toml"
    code, out, err = run_cli("validate", str(good), str(bad))
    assert code == 2
    assert "ok    " in out and "000-replay-1" in out
    assert "bad.toml" in err
