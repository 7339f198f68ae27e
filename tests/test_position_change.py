"""Manual battle position changes in Main Phase 2 (MP2-POSITION): the model's bookkeeping, what it
observes, and the invariants that judge any engine's offers from their own history."""

from __future__ import annotations

import copy
from pathlib import Path

from bpcheck.engines.mutants import PositionChangeAfterAttack, PositionChangesTwice
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.explorers.differential import obs_diff
from bpcheck.invariants import REGISTRY, select
from bpcheck.invariants.base import Context, Transition
from bpcheck.invariants.monitor import Monitor
from bpcheck.model.board import load_board
from bpcheck.model.events import ev

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"
POSITION = [REGISTRY["attack.position-change"], REGISTRY["attack.position-change-applied"]]


def _play(engine, board: str, labels: list[str], until: str | None = None):
    """The state after `labels` (passes fill in until each label is offered), then passes until the
    step `until`."""
    es = EngineSystem(engine, load_board(BOARDS / board), POSITION)
    s = es.initial_states()[0]
    for want in labels + ([] if until is None else [None]):
        if want is None:
            while s[1]["step"] != until:
                s, _info = es.step(s, {a.label: a for a in es.actions(s)}["pass"])
            break
        for _ in range(50):
            acts = {a.label: a for a in es.actions(s)}
            if want in acts:
                s, _info = es.step(s, acts[want])
                break
            s, _info = es.step(s, acts["pass"])
        else:
            raise AssertionError(f"{want!r} never offered")
    return es, s


def _monster(obs: dict, card: str) -> dict:
    return next(m for p in obs["players"] for m in p["monsters"] if m is not None and m["card"] == card)


def test_a_manual_change_is_not_a_set_and_allows_no_second_change():
    # findings F4: the model used to mark the changed monster "Set this turn"
    es, s = _play(ReferenceEngine(), "rule-atk-position.toml", ["enter Battle Phase", "end Battle Phase", "change position Gemini Elf"])
    elf = _monster(s[1], "Gemini Elf")
    assert (elf["position"], elf["set_this_turn"], elf["position_changed_this_turn"]) == ("defense", False, True)
    ox = _monster(s[1], "Battle Ox")
    assert ox["position_changed_this_turn"] is False
    labels = [a.label for a in es.actions(s)]
    assert "change position Gemini Elf" not in labels and "change position Battle Ox" in labels


def test_the_reference_passes_both_invariants_and_they_judge_something():
    for board in ("rule-atk-position.toml", "000-replay-5.toml"):
        r = explore(EngineSystem(ReferenceEngine(), load_board(BOARDS / board), select(None)))
        assert r.status == "pass", (board, [(v.prop, v.message) for v in r.violations])
        for inv in POSITION:
            assert r.props[inv.id].checked > 0 and r.props[inv.id].violations == 0, (board, inv.id)


class _Silent(ReferenceEngine):
    """An engine that does not report position_changed_this_turn (it is optional in the protocol)."""

    def observe(self, state):
        obs = copy.deepcopy(super().observe(state))
        for p in obs["players"]:
            for m in p["monsters"]:
                if m is not None:
                    del m["position_changed_this_turn"]
        return obs


def _violations(engine, board: str) -> dict[str, str]:
    r = explore(EngineSystem(engine, load_board(BOARDS / board), POSITION))
    return {v.prop: v.message for v in r.violations}


def test_a_second_change_is_caught_from_the_history_when_the_engine_reports_nothing():
    # the engine neither records the change nor reports the flag: the monitor's own history
    # (the change_position action) still knows the monster changed once
    got = _violations(_Silent(PositionChangesTwice), "000-replay-5.toml")
    assert got["attack.position-change"] == "'change position Asura Priest' is offered but Asura Priest [P1 M1] already changed its battle position manually this turn"
    # the same engine without the bug passes
    assert _violations(_Silent(), "000-replay-5.toml") == {}


def test_a_wrong_flag_and_a_change_after_an_attack_are_caught():
    got = _violations(ReferenceEngine(PositionChangesTwice), "000-replay-5.toml")
    assert "the engine reports position_changed_this_turn = false, but its position was changed manually this turn" in got["attack.position-change"]
    got = _violations(_Silent(PositionChangeAfterAttack), "rule-atk-position.toml")
    assert got["attack.position-change"].endswith("declared 1 attack(s) this turn")


def _offer(obs: dict, label: str, uid: int) -> list[dict]:
    return [{"kind": "change_position", "player": 0, "label": label, "card_uid": uid}]


def test_offers_outside_main_phase_2_or_for_a_face_down_or_summoned_monster_are_violations():
    es, s = _play(ReferenceEngine(), "rule-atk-position.toml", ["enter Battle Phase", "end Battle Phase"], until="battle_end_step")
    check = REGISTRY["attack.position-change"].check
    obs = copy.deepcopy(s[1])
    assert obs["step"] == "battle_end_step"
    ctx = Context(s[2], es.cards)
    bug = _monster(obs, "Man-Eater Bug")
    assert check(obs, _offer(obs, "change position X", _monster(obs, "Gemini Elf")["uid"]), ctx).endswith(
        "is offered in battle_end_step; battle positions are changed manually in Main Phase 2"
    )
    obs["step"] = "main2"
    assert check(obs, _offer(obs, "change position X", bug["uid"]), ctx).endswith("is offered for a face-down monster (turning it face-up is a Flip Summon)")
    elf = _monster(obs, "Gemini Elf")
    assert check(obs, _offer(obs, "change position X", elf["uid"]), ctx) is True
    summoned = ctx.mon.advance(Transition(obs, {"kind": "activate"}, [ev("summoned", card="Gemini Elf", card_uid=elf["uid"], player=0, position="attack", how="special")], obs))
    # the engine that does not say so is caught lying; one that says so offers a monster that may not change
    assert check(obs, [], Context(summoned, es.cards)).startswith("Gemini Elf [P1 M2]: the engine reports summoned_this_turn = false, but it was Summoned")
    elf["summoned_this_turn"] = True
    assert check(obs, _offer(obs, "change position X", elf["uid"]), Context(summoned, es.cards)).endswith("was Summoned this turn")
    elf["summoned_this_turn"] = False
    assert check(obs, [], ctx) is None  # nothing offered, nothing changed: not its situation


def test_the_history_forgets_a_monster_that_left_the_field_and_a_new_turn():
    obs = {"turn": 3}
    m1 = Monitor.initial().advance(Transition(obs, {"kind": "change_position", "card_uid": 7}, [], obs))
    assert m1["positions"] == ((7, False, True),)
    left = ev("card_moved", card="X", card_uid=7, owner=0, **{"from": "monster_zone", "to": "graveyard"}, reason="effect")
    assert m1.advance(Transition(obs, {"kind": "pass"}, [left], obs))["positions"] == ()
    assert m1.advance(Transition(obs, {"kind": "end_turn"}, [], {"turn": 4}))["positions"] == ()
    # a change of control moves it from one Monster Zone to another (the ocgcore adapter): still on the field
    taken = ev("card_moved", card="X", card_uid=7, owner=0, **{"from": "monster_zone", "to": "monster_zone"}, reason="effect")
    assert m1.advance(Transition(obs, {"kind": "pass"}, [taken], obs))["positions"] == ((7, False, True),)
    # a pass with no event it reads keeps the very value (the monitor is a new one: the priority
    # history counts the pass)
    assert m1.advance(Transition(obs, {"kind": "pass"}, [ev("passed", player=0)], obs))["positions"] is m1["positions"]


def test_the_change_itself_turns_that_one_monster():
    es, s = _play(ReferenceEngine(), "rule-atk-position.toml", ["enter Battle Phase", "end Battle Phase"], until="main2")
    acts = {a.label: a for a in es.actions(s)}
    a = acts["change position Gemini Elf"]
    s2, info = es.step(s, a)
    applied = REGISTRY["attack.position-change-applied"].check
    t = Transition(s[1], a.to_dict(), info, s2[1], s[2])
    assert applied(t) is True
    stuck = copy.deepcopy(s[1])
    t_stuck = Transition(s[1], a.to_dict(), info, stuck, s[2])
    assert applied(t_stuck) == "'change position Gemini Elf' left Gemini Elf [P1 M2] in attack position (it was in attack)"
    sneaky = Transition(s[1], {"kind": "pass", "label": "pass"}, info, s2[1], s[2])
    assert applied(sneaky) == "Gemini Elf [P1 M2]'s battle position was changed manually by 'pass', which is not a position change"
    unrecorded = Transition(s[1], a.to_dict(), [], s2[1], s[2])
    assert applied(unrecorded) == "'change position Gemini Elf' did not record one manual change of Gemini Elf [P1 M2] from attack to defense (recorded: none)"
    gone = copy.deepcopy(s2[1])
    gone["players"][0]["monsters"][1] = None
    assert applied(Transition(s[1], a.to_dict(), info, gone, s[2])) == "Gemini Elf [P1 M2] is not on the field after 'change position Gemini Elf', and no event moved it"


def test_an_effect_that_changes_the_position_back_at_once_is_its_own_event():
    # Level Limit - Area B ("Change all face-up Level 4 or higher monsters to Defense Position"): on
    # the core a manual change to Attack Position is followed, in the same action, by the effect's
    # change back (the sweep, F33)
    es, s = _play(ReferenceEngine(), "rule-atk-position.toml", ["enter Battle Phase", "end Battle Phase"], until="main2")
    a = {a.label: a for a in es.actions(s)}["change position Gemini Elf"]
    s2, info = es.step(s, a)
    applied = REGISTRY["attack.position-change-applied"].check
    manual = next(e for e in info if e.kind == "position_changed")
    uid = manual.get("card_uid")
    back = ev("position_changed", card="Gemini Elf", card_uid=uid, **{"from": "defense", "to": "attack"}, by="effect")
    unchanged = copy.deepcopy(s2[1])
    unchanged["players"][0]["monsters"][1]["position"] = "attack"
    assert applied(Transition(s[1], a.to_dict(), [*info, back], unchanged, s[2])) is True
    # the same position with no effect seen: the change did not happen
    assert applied(Transition(s[1], a.to_dict(), info, unchanged, s[2])) == (
        "'change position Gemini Elf' left Gemini Elf [P1 M2] in attack position (it was in attack)")
    # an effect's change to another position than the one the monster is in does not excuse it
    wrong = ev("position_changed", card="Gemini Elf", card_uid=uid, **{"from": "defense", "to": "facedown"}, by="effect")
    assert applied(Transition(s[1], a.to_dict(), [*info, wrong], unchanged, s[2])) is not True
    # a second manual change in the same action is not one manual change
    twice = ev("position_changed", card="Gemini Elf", card_uid=uid, **{"from": "defense", "to": "attack"}, by="manual")
    assert applied(Transition(s[1], a.to_dict(), [*info, twice], unchanged, s[2])) is not True


def test_a_monster_its_own_effect_destroys_in_defense_position_may_leave_by_the_change(tmp_path):
    # Berserk Gorilla: "If this card is in face-up Defense Position, destroy it." (found by bpcheck fuzz)
    board = tmp_path / "gorilla.toml"
    board.write_text(
        'name = "Berserk Gorilla changes to Defense Position"\nturn = 2\nturn_player = 1\n\n[p1]\nlp = 8000\n'
        'monsters = [{ zone = 1, card = "Berserk Gorilla", position = "attack" }]\n\n[p2]\nlp = 8000\n'
        'spells = [{ zone = 1, card = "Gravity Bind", face_up = true }]\n'
    )
    r = explore(EngineSystem(ReferenceEngine(), load_board(board), select(None)))
    assert r.status == "pass", [(v.prop, v.message) for v in r.violations]
    assert r.props["attack.position-change-applied"].checked > 0


def test_the_differential_does_not_compare_an_optional_field_the_engine_leaves_out():
    _es, s = _play(ReferenceEngine(), "rule-atk-position.toml", ["enter Battle Phase", "end Battle Phase", "change position Gemini Elf"])
    ref = s[1]
    quiet = _Silent()
    silent = quiet.observe(quiet.start(load_board(BOARDS / "rule-atk-position.toml")))
    assert all("position_changed_this_turn" not in m for p in silent["players"] for m in p["monsters"] if m)
    eng = copy.deepcopy(ref)
    for p in eng["players"]:
        for m in p["monsters"]:
            if m is not None:
                del m["position_changed_this_turn"]
    assert obs_diff(eng, ref) == []
    wrong = copy.deepcopy(ref)
    _monster(wrong, "Gemini Elf")["position_changed_this_turn"] = False
    assert [d[0] for d in obs_diff(wrong, ref)] == ["players[0].monsters[1].position_changed_this_turn"]
