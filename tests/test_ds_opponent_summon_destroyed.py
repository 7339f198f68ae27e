"""Issue 31 item 4, group C: optional effects triggered by the opponent's Summon in the Damage Step
(DS-OPPONENT-SUMMON), "If this card is destroyed by battle" triggers naming no Graveyard
(DS-DESTROYED-BY-BATTLE) and triggers on being destroyed in general (DS-DESTROYED-IN-GENERAL).

The pool's Summons in the Damage Step come at its end, where DS-LEGAL-STATS refuses ATK/DEF
modifiers anyway; the ATK/DEF half of DS-OPPONENT-SUMMON ("Shining Elf", "Evil Blast") is checked
here on a board card of that kind in the sub-steps where DS-LEGAL-STATS would allow it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.errors import InputError
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.invariants import REGISTRY, select
from bpcheck.invariants.cards import STAT_CHANGE_STEPS, CardFacts
from bpcheck.model.board import load_board
from bpcheck.model.engine import Rules
from bpcheck.model.state import Step

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"

MODIFIERS = """
name = "two ATK modifiers, one answering the opponent's Summon"
turn = 3
turn_player = 1

[[card]]
name = "Summon Answer Boost"
passcode = "99000001"
kind = "trap"
subtype = "normal"
text = "When your opponent Special Summons a monster: target 1 monster you control; it gains 500 ATK."
  [[card.effect]]
  type = "activate"
  when = "summoned"
  conditions = ["opponent_summoned"]
  targets = [{ zone = "monster", side = "own", count = 1 }]
  ops = [{ op = "modify_atk", what = "target", amount = 500 }]

[[card]]
name = "Plain Boost"
passcode = "99000002"
kind = "trap"
subtype = "normal"
text = "Target 1 monster you control; it gains 500 ATK."
  [[card.effect]]
  type = "activate"
  targets = [{ zone = "monster", side = "own", count = 1 }]
  ops = [{ op = "modify_atk", what = "target", amount = 500 }]

[p1]
lp = 8000
monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]
spells = [{ zone = 1, card = "Summon Answer Boost" }, { zone = 2, card = "Plain Boost" }]

[p2]
lp = 8000
monsters = [{ zone = 1, card = "Mokey Mokey", position = "attack" }]
"""


@pytest.fixture(scope="module")
def modifiers(tmp_path_factory):
    path = tmp_path_factory.mktemp("b") / "modifiers.toml"
    path.write_text(MODIFIERS)
    return load_board(path)


@pytest.mark.parametrize("step", [Step.DS_START, Step.DS_FLIP, Step.DS_BEFORE_CALC])
def test_an_atk_modifier_answering_the_opponents_summon_is_refused_where_other_modifiers_are_allowed(modifiers, step):
    rules = Rules(modifiers.pool)
    s = replace(modifiers.state, step=step)
    answer, plain = modifiers.pool["Summon Answer Boost"], modifiers.pool["Plain Boost"]
    assert rules.damage_step_allows(s, plain, plain.effects[0])  # DS-LEGAL-STATS
    assert not rules.damage_step_allows(s, answer, answer.effects[0])  # DS-OPPONENT-SUMMON


def test_the_invariants_read_the_same_from_the_card_data(modifiers):
    facts = CardFacts.for_board(modifiers)
    assert facts.damage_step_window("Plain Boost", 0) == frozenset(STAT_CHANGE_STEPS)
    assert facts.damage_step_window("Summon Answer Boost", 0) == frozenset()
    assert facts.damage_step_window("Naturia Horneedle", 0) == frozenset()


@pytest.mark.parametrize(
    "board,inv_id,mutant",
    [
        ("002-ds-opponent-summon.toml", "damage.activation-legal", "opponent-summon-effects-in-damage-step"),
        ("002-ds-destroyed-by-battle.toml", "damage.battle-gy-trigger", "destroyed-by-battle-triggers-need-graveyard"),
        ("002-ds-destroyed-in-general.toml", "damage.battle-gy-trigger", "destroyed-triggers-not-by-battle"),
    ],
)
def test_the_reference_holds_judged_and_the_mutant_is_caught(board, inv_id, mutant):
    ref = explore(EngineSystem(ReferenceEngine(), load_board(BOARDS / board), select(None)))
    assert ref.status == "pass", [(v.prop, v.message) for v in ref.violations]
    assert ref.props[inv_id].checked > 0, f"{inv_id} had nothing to judge on {board}"
    m = MUTANTS[mutant]
    bad = explore(EngineSystem(ReferenceEngine(m.rules, name=mutant), load_board(BOARDS / board), [REGISTRY[inv_id]]))
    assert bad.status == "fail" and {v.prop for v in bad.violations} == {inv_id}


@pytest.mark.parametrize(
    "cost,field,problem",
    [
        ('{ op = "tribute", side = "own", archetype = 3 }', "cost[0].archetype", "archetype name"),
        ('{ op = "tribute", side = "own", face = "down" }', "cost[0].face", "unknown face"),
        ('{ op = "tribute", side = "own", except_self = "yes" }', "cost[0].except_self", "boolean"),
    ],
)
def test_a_bad_tribute_filter_is_refused_naming_the_field(tmp_path, cost, field, problem):
    path = tmp_path / "bad.toml"
    path.write_text(
        MODIFIERS.replace(
            'ops = [{ op = "modify_atk", what = "target", amount = 500 }]\n\n[[card]]\nname = "Plain Boost"',
            f'cost = [{cost}]\n  ops = [{{ op = "modify_atk", what = "target", amount = 500 }}]\n\n[[card]]\nname = "Plain Boost"',
            1,
        )
    )
    with pytest.raises(InputError) as e:
        load_board(path)
    assert field in str(e.value) and problem in str(e.value)
