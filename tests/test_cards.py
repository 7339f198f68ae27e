"""The card pool is data: every card the seeds use, valid passcodes, properties the rules read."""

from __future__ import annotations

import pytest

from bpcheck.errors import InputError
from bpcheck.model.cards import builtin_pool, parse_card_document

SEED_CARDS = """Battle Ox, Blue-Eyes White Dragon, Summoned Skull, Dark Magician, Gemini Elf, Magician of Faith,
Reflect Bounder, The Legendary Fisherman, Injection Fairy Lily, Asura Priest, Mokey Mokey, Chaos Sorcerer,
Goldd, Wu-Lord of Dark World, Dark Elf, Neo the Magic Swordsman, Giant Soldier of Stone, Man-Eater Bug,
Hane-Hane, Penguin Soldier, Mystic Tomato, Shining Angel, Kuriboh, Honest, Jinzo #7, Berserk Gorilla,
Sheep Token, Ojama Token, Call of the Haunted, Mystic Wok, Umi, Mystical Space Typhoon,
Shooting Star Bow - Ceal, Dust Tornado, United We Stand, Scapegoat, Gateway to Dark World, Reinforcements,
Mirror Wall, Ojama Trio, Gravity Bind, Book of Moon, Rush Recklessly, Castle Walls, Waboku, Mirror Force,
Magic Cylinder, Sakuretsu Armor, Trap Jammer, Magician's Circle, Seven Tools of the Bandit, Magic Jammer,
Enemy Controller, Ring of Destruction, Fiendish Chain, Torrential Tribute, Bottomless Trap Hole,
Spellbinding Circle, Shadow Spell, Macro Cosmos"""

# "Goldd, Wu-Lord of Dark World" holds a comma: split on ", " only where a capital follows a name end.
NAMES = [n.strip() for n in SEED_CARDS.replace("\n", " ").replace("Goldd, Wu-Lord", "Goldd@ Wu-Lord").split(",")]
NAMES = [n.replace("@", ",") for n in NAMES]


def test_pool_holds_every_seed_card():
    pool = builtin_pool()
    missing = [n for n in NAMES if n not in pool]
    assert not missing
    assert len(NAMES) == 59


def test_passcodes_are_eight_digits_and_unique():
    pool = builtin_pool()
    codes = [c.passcode for c in pool]
    assert all(len(c) == 8 and c.isdigit() for c in codes)
    assert len(set(codes)) == len(codes)


@pytest.mark.parametrize(
    "name,direct",
    [
        ("Reinforcements", True),
        ("Rush Recklessly", True),
        ("Castle Walls", True),
        ("Mirror Force", False),
        ("Waboku", False),
        ("Book of Moon", False),
        ("Scapegoat", False),
        ("Enemy Controller", False),
        ("Mystical Space Typhoon", False),
    ],
)
def test_direct_stat_change_is_derived_from_operations(name, direct):
    card = builtin_pool()[name]
    assert card.effects[0].changes_stats_directly is direct


def test_continuous_trap_stat_effects_are_derived_from_statics():
    pool = builtin_pool()
    assert pool["Shadow Spell"].static_changes_stats()
    assert not pool["Spellbinding Circle"].static_changes_stats()
    assert not pool["Gravity Bind"].static_changes_stats()


def test_damage_calculation_timing_is_read_from_the_text_fields():
    pool = builtin_pool()
    for name in ("Honest", "Kuriboh", "Injection Fairy Lily"):
        assert pool[name].effects[0].names_damage_step_timing
    assert not pool["Reinforcements"].effects[0].names_damage_step_timing


CARD = """
[[card]]
name = "Test Card"
passcode = "12345678"
kind = "trap"
subtype = "normal"
text = "x"
  [[card.effect]]
  type = "activate"
  ops = [{ op = "destroy", what = "target" }]
"""


@pytest.mark.parametrize(
    "change,message",
    [
        (('op = "destroy"', 'op = "obliterate"'), "card[0].effect[0].ops[0].op: unknown operation 'obliterate'"),
        (('passcode = "12345678"', 'passcode = "1234"'), "card[0].passcode: a passcode is the 8-digit number"),
        (('passcode = "12345678"', "passcode = 12345678"), "card[0].passcode: expected string"),
        (('subtype = "normal"', 'subtype = "field"'), "card[0].subtype: unknown trap subtype 'field'"),
        (('type = "activate"', 'type = "trigger"'), "card[0].effect[0].type: a trap card's effects are activated with type 'activate'"),
        (('what = "target"', 'what = "target", power = 3'), "card[0].effect[0].ops[0].power: unknown field"),
        (('text = "x"', 'text = "x"\natk = 100'), "card[0].atk: a trap card has no atk"),
    ],
)
def test_bad_card_definitions_are_named(change, message):
    with pytest.raises(InputError) as e:
        parse_card_document(CARD.replace(*change), "cards.toml")
    assert message in e.value.render()
    assert e.value.render().startswith("cards.toml: ")


def test_a_new_card_is_one_data_entry(tmp_path):
    """A rules engineer adds a card in data alone: a board may define it and the model plays it."""
    from bpcheck.model.board import load_board
    from bpcheck.model.engine import Rules

    board = tmp_path / "b.toml"
    board.write_text(
        """
turn = 2
turn_player = 1
[p1]
lp = 8000
monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]
[p2]
lp = 8000
spells = [{ zone = 1, card = "Negate Attack Lite" }]

[[card]]
name = "Negate Attack Lite"
passcode = "00000001"
kind = "trap"
subtype = "normal"
text = "When an opponent's monster declares an attack: negate the attack."
  [[card.effect]]
  type = "activate"
  when = "attack_declared"
  conditions = ["opponent_monster_attacking"]
  ops = [{ op = "negate_attack" }]
"""
    )
    b = load_board(board)
    r = Rules(b.pool)
    s = b.state
    for label in ["enter Battle Phase", "pass", "pass", "attack Battle Ox -> direct", "pass", "activate Negate Attack Lite", "pass", "pass"]:
        act = next(a for a in r.legal_actions(s) if a.label == label)
        s, events = r.apply(s, act)
    assert "attack_stopped" in [e.kind for e in events]
    assert s.attack is None
    assert not any(a.kind == "attack" for a in r.legal_actions(s))
