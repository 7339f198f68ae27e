"""Cards of a card database judged through their profiles (invariants/profiled.py, issue 30 item 3),
and the failing side of the response window (invariants/offered.py ``_response_window``, F25).

Planted engines (tests/profile_engines.py) are the reference model with one wrong offer each; a
board of real cards of the kit's ``cards-full.cdb`` that are not in the pool. Each planted offer
is caught with a counterexample naming the profile's rule and its seed passage; the same engine
offering the card where its profile allows it is not. The real EDOPro core on
tests/data/profile-board.toml holds the three invariants (judged, not vacuous).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bpcheck.engines.ocgcore import default_paths
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.invariants import select
from bpcheck.invariants.signatures import signature_of
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import profile_engines as PE  # noqa: E402

LIB, SCRIPTS, CARDS = default_paths(str(ROOT))
FULL = os.environ.get("OCG_CARDS_FULL") or os.path.join(os.path.dirname(CARDS), "cards-full.cdb")
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"
MINE = "profile.damage-step-offered,profile.window-offered,profile.trigger-event"

BOARD = """
name = "planted offers"
turn = 2
turn_player = 1
[p1]
lp = 8000
monsters = [{ zone = 1, card = "Gene-Warped Warwolf", position = "attack" }]
hand = ["Forbidden Lance", "Dian Keto the Cure Master"]
[p2]
lp = 8000
monsters = [{ zone = 1, card = "Giant Rat", position = "attack" }]
spells = [{ zone = 1, card = "Draining Shield" }, { zone = 2, card = "Echo Oscillation" }]
"""


def _need(*paths: str) -> None:
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        if REQUIRED:
            pytest.fail(f"required here (BPCHECK_REQUIRE_OCGCORE=1) but not found: {', '.join(missing)}")
        pytest.skip(f"not available: {', '.join(missing)} not found (set OCG_CARDS beside cards-full.cdb, or OCG_CARDS_FULL)")


@pytest.fixture
def board(tmp_path):
    _need(FULL)
    f = tmp_path / "planted.toml"
    f.write_text(BOARD, encoding="utf-8")
    return load_board(f, "planted.toml", cards_db=FULL)


def _run(engine, board, invariants=MINE):
    es = EngineSystem(engine, board, select(invariants))
    return es, explore(es)


def _violations(r, prop):
    return [v for v in r.violations if v.prop == prop]


PLANTED = [
    # (factory, invariant, signature, words of the message: the card, the step, the profile's rule and its seed)
    ("forbidden_lance_during_calculation", "profile.damage-step-offered", "not-allowed-in-sub-step",
     ["Forbidden Lance [P1 hand]", "damage_step_during_calculation", "DS-ATK: 002_137609e72fe0b129.txt:48-49"]),
    ("dian_keto_in_battle_step", "profile.window-offered", "outside-window",
     ["Dian Keto the Cure Master [P1 hand]", "battle_step", "Spell Speed 1 (SS1-SPELL: 004_d23456bb122fd088.txt:30"]),
    ("draining_shield_in_battle_start_step", "profile.window-offered", "outside-window",
     ["Draining Shield [P2 S1]", "battle_start_step", "attack_declared_by_opponent (WIN-TEXT: 002_137609e72fe0b129.txt:21-29"]),
    ("giant_rat_before_battle", "profile.trigger-event", "trigger-without-event",
     ["Giant Rat [P2 M1]", "destroyed_by_battle or sent_to_gy (EVT-TEXT: 002_137609e72fe0b129.txt:80-195"]),
]  # fmt: skip


@pytest.mark.parametrize("factory,inv,sig,words", PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_offer_is_caught_citing_the_profiles_rule(board, factory, inv, sig, words):
    _es, r = _run(getattr(PE, factory)(), board)
    found = _violations(r, inv)
    assert found, (factory, [(v.prop, v.message) for v in r.violations])
    msg = found[0].message
    assert signature_of(inv, msg) == sig, msg
    for w in words:
        assert w in msg, (w, msg)
    assert {v.prop for v in r.violations} == {inv}, [(v.prop, v.message) for v in r.violations]


ALLOWED = [
    # the same cards offered where their profiles allow them: judged, and held
    ("forbidden_lance_at_start_of_damage_step", "profile.damage-step-offered"),
    ("dian_keto_in_main_phase", "profile.window-offered"),
    ("giant_rat_at_end_of_damage_step", "profile.trigger-event"),
]


@pytest.mark.parametrize("factory,inv", ALLOWED, ids=[a[0] for a in ALLOWED])
def test_an_offer_the_profile_allows_is_judged_and_holds(board, factory, inv):
    es, r = _run(getattr(PE, factory)(), board)
    assert not r.violations, [(v.prop, v.message) for v in r.violations]
    assert r.props[inv].checked > 0, "the offer was not judged"


def test_where_the_profile_says_unknown_the_offer_is_not_judged_never_passed_or_failed(board):
    es, r = _run(PE.echo_oscillation_at_start_of_damage_step(), board)
    assert not r.violations, [(v.prop, v.message) for v in r.violations]
    reasons = es.not_judged.get("profile.damage-step-offered", set())
    assert any(x.startswith("Echo Oscillation: whether an effect of it may be activated in damage_step_start") for x in reasons), reasons


def test_the_reference_model_playing_the_database_cards_offers_none_of_them(board):
    # (the cards play without effects: nothing offered, nothing judged, nothing violated)
    _es, r = _run(PE.Offers("no such card", ()), board)
    assert not r.violations


def test_pool_boards_are_not_judged_and_the_history_stays_empty():
    # the seed boards name pool cards only: the profile invariants have nothing to judge there
    es, r = _run(ReferenceEngine(), load_board(ROOT / "boards" / "000-replay-1.toml"), MINE)
    assert not r.violations
    assert not es.cards.rows


# -- the real EDOPro core on real cards ------------------------------------------------------------


def test_the_real_core_holds_the_profile_invariants_on_real_cards(tmp_path, run_cli, monkeypatch):
    _need(LIB, SCRIPTS, CARDS, FULL)
    monkeypatch.chdir(ROOT)
    out = tmp_path / "r.json"
    code, stdout, stderr = run_cli(
        "check", "tests/data/profile-board.toml", "--engine", "ocgcore", "--cards-db", FULL, "--invariants", MINE + ",profile.withheld",
        "--json", str(out)
    )
    assert code == 0, stdout[-3000:] + stderr[-2000:]
    b = json.loads(out.read_text())["boards"][0]
    checked = {i["id"]: (i["checked"], i["verdict"]) for i in b["invariants"]}
    for inv in (MINE + ",profile.withheld").split(","):
        n, verdict = checked[inv]
        assert verdict == "held" and n > 0, (inv, checked[inv])


# -- the response window (F25): its failing side ---------------------------------------------------


def test_a_response_window_that_leaves_the_step_without_the_choices_is_caught():
    es, r = _run(PE.response_window_lost(), load_board(ROOT / "boards" / "002-enter-battle-phase.toml"), "turn.legal-offered,attack.legal-offered")
    turn = _violations(r, "turn.legal-offered")
    assert turn and signature_of("turn.legal-offered", turn[0].message) == "choice-lost-after-response-window", [v.message for v in r.violations]
    assert "the turn's choice in main1 was never offered: P1 passed a response window there and the game went on to battle_start_step" in turn[0].message


def test_a_response_window_in_the_battle_step_that_ends_it_without_the_attacks_is_caught():
    es, r = _run(PE.response_window_lost(), load_board(ROOT / "boards" / "000-replay-1.toml"), "attack.legal-offered")
    att = _violations(r, "attack.legal-offered")
    assert att and signature_of("attack.legal-offered", att[0].message) == "attack-lost-after-response-window", [v.message for v in r.violations]
    assert "the attacks of the Battle Step were never offered" in att[0].message


@pytest.mark.parametrize("board", ["002-enter-battle-phase.toml", "000-replay-1.toml"])
def test_a_response_window_followed_by_the_choices_is_not_caught(board):
    es, r = _run(PE.response_window_kept(), load_board(ROOT / "boards" / board), "turn.legal-offered,attack.legal-offered")
    assert not r.violations, [(v.prop, v.message) for v in r.violations]


# -- profile.withheld: an activation withheld in one window and offered in another ----------------

WITHHELD = MINE + ",profile.withheld"


def test_a_card_withheld_in_one_window_and_offered_in_another_is_caught(board):
    # Forbidden Lance (a Quick-Play Spell, no window in its text) offered in the Battle Step only:
    # withheld in the Start Step of the same Battle Phase, with the same board
    _es, r = _run(PE.forbidden_lance_battle_step_only(), board, WITHHELD)
    found = _violations(r, "profile.withheld")
    assert found, [(v.prop, v.message) for v in r.violations]
    msg = found[0].message
    assert signature_of("profile.withheld", msg) == "withheld-elsewhere-offered", msg
    for w in ("Forbidden Lance [P1 hand] is withheld from P1 in battle_start_step", "offers it in battle_step",
              "SS2-FAST-CARDS: 002_137609e72fe0b129.txt:11"):
        assert w in msg, (w, msg)
    assert {v.prop for v in r.violations} == {"profile.withheld"}, [(v.prop, v.message) for v in r.violations]


def test_a_card_offered_in_every_window_its_profile_allows_is_judged_and_holds(board):
    es, r = _run(PE.forbidden_lance_whole_battle_phase(), board, WITHHELD)
    assert not r.violations, [(v.prop, v.message) for v in r.violations]
    assert r.props["profile.withheld"].checked > 0, "nothing was judged"


def test_a_window_that_is_an_instant_is_not_judged_and_says_why(board):
    # Draining Shield needs "when an opponent's monster declares an attack": an instant, never
    # compared with another window (its offer in the Start Step is profile.window-offered's)
    es, r = _run(PE.draining_shield_in_battle_start_step(), board, "profile.withheld")
    assert not r.violations, [(v.prop, v.message) for v in r.violations]
    reasons = es.not_judged.get("profile.withheld", set())
    assert "Draining Shield: whether it is withheld (a window that is an instant (attack_declared_by_opponent))" in reasons, reasons


def test_the_withheld_history_keeps_windows_joined_by_passes_only(board):
    # the history of where each card was offered: kept across a pass in the Battle Phase, forgotten
    # at any other event (a chain link) and when the Battle Phase is left
    from bpcheck.invariants.base import Transition
    from bpcheck.invariants.monitor import Monitor
    from bpcheck.invariants.profiled import _profile_offers
    from bpcheck.model.events import ev

    eng = PE.forbidden_lance_whole_battle_phase()
    es = EngineSystem(eng, board, select("profile.withheld"))
    s = es.initial_states()[0]
    while s[1]["step"] != "battle_start_step":  # (Main Phase 1: enter the Battle Phase)
        a = next(x for x in es.actions(s) if x.kind in ("enter_bp", "pass"))
        s, _ = es.step(s, a)
    obs = s[1]
    offered = [a.to_dict() for a in es.actions(s)]
    assert any(a["kind"] == "activate" for a in offered), offered
    after = dict(obs, step="battle_step")
    mon = Monitor.initial()

    def t(events, to=after, off=offered):
        return Transition(obs, {"kind": "pass", "player": obs["to_act"], "label": "pass"}, events, to, mon, es.cards, offered=off)

    kept = _profile_offers((), t([ev("phase_changed", **{"from": "battle_start_step", "to": "battle_step"})]))
    lance = [x for x in kept if x[5]]
    assert lance and lance[0][2] == "battle_start_step", kept
    assert _profile_offers(kept, t([ev("chain_link_added", link=1, card="Forbidden Lance", card_uid=lance[0][0], effect=None,
                                       player=0, speed=2, targets=[])])) == ()
    assert _profile_offers(kept, t([], to=dict(obs, step="main2"))) == ()
    assert _profile_offers((), t([], off=None)) == ()  # (a runner that does not say what was offered: nothing kept)


def test_a_response_window_owes_spell_speed_1_activations_to_the_state_after_its_pass():
    # 000-replay-6: P1's Chaos Sorcerer ("Once per turn: You can target 1 face-up monster on the
    # field; banish it") may be activated in Main Phase 1; an engine that asks P1 only for a
    # response first (F25) offers it after that pass (F33: the core after "change position")
    board = load_board(ROOT / "boards" / "000-replay-6.toml")
    _es, kept = _run(PE.response_window_kept(), board, "chain.legal-offered")
    assert not kept.violations, [(v.prop, v.message) for v in kept.violations]
    assert kept.props["chain.legal-offered"].checked > 0
