"""Damage-Step activation legality of the pool cards added for 002's "Cards that can be activated
at Damage Step" passages (issue 31 item 4, group A): the reference model's answer
(``Rules.damage_step_allows``, per ruleset and sub-step) equals the answer the profile reader
(model/profile.py) reads from the same card's row and text in cards-full.cdb. The two are written
independently: the model from the pool's effect vocabulary, the reader from the card's English text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bpcheck.model.board import load_board
from bpcheck.model.cards import builtin_pool
from bpcheck.model.cdb import CardDB
from bpcheck.model.profile import profile
from bpcheck.model.rulesets import RULESETS
from bpcheck.model.state import Step, replace

ROOT = Path(__file__).resolve().parent.parent
FULL = Path(os.environ.get("OCG_CARDS_FULL") or ROOT.parent / "shared" / "ocgcore" / "cards-full.cdb")
# the profile's sub-steps and the model's steps they stand for
SUBSTEPS = {
    "start": (Step.DS_START,),
    "before_calc": (Step.DS_BEFORE_CALC,),
    "during_calc": (Step.DS_DURING_CALC,),
    "after_calc": (Step.DS_AFTER_CALC_1, Step.DS_AFTER_CALC_2),
    "end": (Step.DS_END,),
}
# card -> (its effect index in the pool, the profile's effect index, what the seed says per ruleset:
# allowed in every sub-step or in none)
CARDS = {
    # 002: "Spell Speed 2 Monster Effects (Quick Effects) that negate an activation." (both rulesets)
    "Horus the Black Flame Dragon LV8": (0, 2, {"tcg": True, "ocg": True}),
    # 002: "In the TCG only, ... to negate that activated effect only ... In the OCG, they cannot be
    # activated for this reason alone." "You can activate the effects of ... "Skull Meister""
    "Skull Meister": (0, 0, {"tcg": True, "ocg": False}),
}


@pytest.fixture(scope="module")
def full() -> CardDB:
    if not FULL.is_file():
        msg = f"the full card database is absent ({FULL}; set OCG_CARDS_FULL): these tests read its rows"
        if os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return CardDB(FULL)


@pytest.fixture(scope="module")
def state():
    return load_board(ROOT / "boards/002-ds-negate-effect.toml", "boards/002-ds-negate-effect.toml").state


@pytest.mark.parametrize("name", sorted(CARDS))
@pytest.mark.parametrize("ruleset", ["tcg", "ocg"])
def test_the_model_agrees_with_the_profile_reader_and_the_seed(name, ruleset, full, state):
    pool_idx, prof_idx, seed = CARDS[name]
    card = builtin_pool()[name]
    rules = RULESETS[ruleset](builtin_pool())
    prof = profile(full.card(name)).effects[prof_idx].damage_step
    assert prof is not None, f"{name}: the reader decided no Damage Step legality"
    for sub, steps in SUBSTEPS.items():
        read = prof[ruleset][sub].value
        for step in steps:
            model = rules.damage_step_allows(replace(state, step=step), card, card.effects[pool_idx])
            assert model == read == seed[ruleset], f"{name} under {ruleset} at {step.value}: model {model}, profile {read}, seed {seed[ruleset]}"


# 002:53 and 002:74 name cards, not a wording: the profile reader applies the seed's rulings to
# their card activation by name (DS-NAMED-REFUSED, DS-NAMED-ALLOWED), whatever their text says
# (three of them change ATK/DEF, which alone would allow them before damage calculation: DS-ATK).
NAMED = {
    "Scrap Sheen": ("DS-NAMED-REFUSED", {"tcg": False, "ocg": False}),
    "Zero Force": ("DS-NAMED-REFUSED", {"tcg": False, "ocg": False}),
    "Curse of Anubis": ("DS-NAMED-REFUSED", {"tcg": False, "ocg": False}),
    "Chthonian Blast": ("DS-NAMED-ALLOWED", {"tcg": True, "ocg": True}),
    "Muko": ("DS-NAMED-ALLOWED", {"tcg": True, "ocg": False}),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_the_cards_002_names_are_read_by_their_ruling(name, full):
    rule, want = NAMED[name]
    prof = profile(full.card(name))
    acts = [e for e in prof.effects if e.kind.value == "activation"]
    assert len(acts) == 1, f"{name}: {[e.kind.value for e in prof.effects]}"
    ds = acts[0].damage_step
    for rs in ("tcg", "ocg"):
        for sub in SUBSTEPS:
            d = ds[rs][sub]
            assert (d.value, d.rule) == (want[rs], rule), f"{name} {rs} {sub}: {d.value} by {d.rule}"


def test_desrook_archfiend_s_ruling_is_its_optional_trigger(full):
    # 002:74 names it with Chthonian Blast: the reader allows its trigger (sent from the hand when
    # a "Terrorking Archfiend" is destroyed) as an optional trigger, in every sub-step, both rulesets
    prof = profile(full.card("Desrook Archfiend"))
    trig = [e for e in prof.effects if e.damage_step is not None and e.kind.value == "trigger"]
    assert trig and all(e.damage_step[rs][s].value is True for e in trig for rs in ("tcg", "ocg") for s in SUBSTEPS)
