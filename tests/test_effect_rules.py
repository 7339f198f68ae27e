"""The rules of card effects that last and stop, judged on any engine: cards that keep a target
(CARD-CONT-TARGET), effects that end with the Damage Step (DS-LINGERING-END), destroying against
negating (CH-NEGATE), Flip effects of monsters destroyed face-down (CARD-FACEDOWN-DESTROYED), the
window after a Summon (WIN-EVENT).

Each invariant holds on the reference model where its situation arises, fails on a mutant with
the bug it is aimed at, and judges the observation it is given (a tampered one fails)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.invariants import REGISTRY, select
from bpcheck.invariants.base import Transition
from bpcheck.model.board import load_board
from bpcheck.model.events import ev

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"

# (invariant, the mutant it is aimed at, the board where both show)
CASES = [
    ("acc.continuous-target", "equip-outlives-its-monster", "rule-card-cont-target.toml"),
    ("acc.linked-monster", "call-of-the-haunted-keeps-its-monster", "rule-card-cont-target.toml"),
    ("acc.linked-monster", "call-of-the-haunted-forgets-its-monster", "rule-card-cont-target.toml"),
    ("damage.lingering-end", "damage-step-protection-lasts-the-turn", "rule-ds-kuriboh.toml"),
    ("damage.lingering-end", "calculation-boost-outlasts-calculation", "rule-ds-lily.toml"),
    ("damage.facedown-destroyed-flip", "destroyed-face-down-flips", "000-facedown-flip-destroyed-by-bug.toml"),
    ("chain.negate-vs-destroy", "destroyed-activation-is-negated", "002-fiendish-chain-mst.toml"),
    ("chain.negate-vs-destroy", "negated-card-stays-on-the-field", "000-ds-counter-traps.toml"),
    ("window.summon", "summon-window-stays-open", "003-004-shining-angel-torrential.toml"),
]


def _run(engine, board: str, invariants):
    return explore(EngineSystem(engine, load_board(BOARDS / board), invariants))


@pytest.mark.parametrize("inv_id,board", sorted({(c[0], c[2]) for c in CASES}))
def test_the_reference_holds_and_the_situation_arises(inv_id, board):
    r = _run(ReferenceEngine(), board, select(None))
    assert r.status == "pass", [(v.prop, v.message) for v in r.violations]
    assert r.props[inv_id].checked > 0, f"{inv_id} had nothing to judge on {board}"


@pytest.mark.parametrize("inv_id,mutant,board", CASES)
def test_the_mutant_is_caught_by_its_invariant(inv_id, mutant, board):
    m = MUTANTS[mutant]
    assert m.board == board and m.family == REGISTRY[inv_id].family
    r = _run(ReferenceEngine(m.rules, name=mutant), board, [REGISTRY[inv_id]])
    assert r.status == "fail" and {v.prop for v in r.violations} == {inv_id}, [(v.prop, v.message) for v in r.violations]


# -- tampered observations: a transition of the reference, changed the way a buggy engine would --


def _transitions(board, invariants, engine=None):
    """Every transition of the board (before, action, events, after, monitors), in BFS order."""
    es = EngineSystem(engine or ReferenceEngine(), load_board(board if isinstance(board, Path) else BOARDS / board), invariants)
    out = []
    seen = set()
    todo = list(es.initial_states())
    while todo:
        s = todo.pop(0)
        for a in es.actions(s):
            s2, info = es.step(s, a)
            out.append((s, a, info, s2))
            fp = es.fingerprint(s2)
            if fp not in seen and not es.is_terminal(s2):
                seen.add(fp)
                todo.append(s2)
    return es, out


def _transition(es, s, a, info, s2, after=None, events=None) -> Transition:
    t = es.transition(s, a, info if events is None else events, s2[1] if after is None else after)
    t.mon_after = s2[2]
    return t


def _check(inv_id, t):
    return REGISTRY[inv_id].check(t)


def test_an_equip_left_behind_is_a_violation():
    es, ts = _transitions("rule-card-cont-target.toml", [])
    for s, a, info, s2 in ts:  # its monster leaves the field, and it with it
        uws = [c for p in s[1]["players"] for c in p["spells"] if c and c["card"] == "United We Stand" and c["equipped_to"] is not None]
        left = {e["card_uid"] for e in info if e.kind == "card_moved" and e["from"] == "monster_zone"}
        if uws and uws[0]["equipped_to"] in left:
            break
    else:
        raise AssertionError("United We Stand's monster never left the field")
    t = _transition(es, s, a, info, s2)
    assert _check("acc.continuous-target", t) is True
    after = copy.deepcopy(s2[1])
    before_card = next(c for p in s[1]["players"] for c in p["spells"] if c and c["card"] == "United We Stand")
    side = before_card["controller"]
    zone = next(i for i, c in enumerate(s[1]["players"][side]["spells"]) if c and c["uid"] == before_card["uid"])
    after["players"][side]["spells"][zone] = copy.deepcopy(before_card)  # the engine kept it
    got = _check("acc.continuous-target", _transition(es, s, a, info, s2, after=after))
    assert isinstance(got, str) and "United We Stand" in got


def test_a_negated_link_reported_as_resolved_is_a_violation():
    es, ts = _transitions("000-ds-counter-traps.toml", [])
    for s, a, info, s2 in ts:
        if any(e.kind == "activation_negated" for e in info) and any(e.kind == "chain_link_resolved" for e in info):
            break
    else:
        raise AssertionError("no activation was negated")
    t = _transition(es, s, a, info, s2)
    assert _check("chain.negate-vs-destroy", t) is True
    negated = next(e["card_uid"] for e in info if e.kind == "activation_negated")
    events = [ev(e.kind, **{**dict(e.data), "negated": False}) if e.kind == "chain_link_resolved" and e["card_uid"] == negated else e for e in info]
    got = _check("chain.negate-vs-destroy", _transition(es, s, a, info, s2, events=events))
    assert isinstance(got, str) and "was negated" in got


# -- boards bpcheck fuzz found against the first versions of these rules in the model ----------

_MID_CHAIN = """
name = "an Equip Card's monster destroyed in a chain that then waits for a choice"
turn = 2
turn_player = 1
[p1]
lp = 8000
monsters = [{ zone = 1, card = "Asura Priest", position = "attack" }]
spells = [{ zone = 1, card = "Shooting Star Bow - Ceal" }]
[p2]
lp = 8000
monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]
spells = [{ zone = 1, card = "Ring of Destruction" }, { zone = 2, card = "Mystic Wok" }]
"""

_TRIBUTED = """
name = "Call of the Haunted's monster Tributed for a cost"
turn = 2
turn_player = 2
[p1]
lp = 8000
[p2]
lp = 8000
spells = [{ zone = 1, card = "Mystic Wok" }, { zone = 2, card = "Call of the Haunted" }]
graveyard = ["Battle Ox"]
"""


@pytest.mark.parametrize("text,inv_id", [(_MID_CHAIN, "acc.continuous-target"), (_TRIBUTED, "acc.linked-monster")])
def test_fuzzed_boards_hold(tmp_path, text, inv_id):
    path = tmp_path / "b.toml"
    path.write_text(text)
    r = explore(EngineSystem(ReferenceEngine(), load_board(path), select(None)))
    assert r.status == "pass", [(v.prop, v.message) for v in r.violations]
    assert r.props[inv_id].checked > 0


def test_call_of_the_haunted_stays_when_its_monster_is_tributed(tmp_path):
    # its text: "When that target is destroyed, destroy this card." A Tribute is not a destruction.
    path = tmp_path / "b.toml"
    path.write_text(_TRIBUTED)
    es = EngineSystem(ReferenceEngine(), load_board(path), [])
    s = es.initial_states()[0]
    for want in ("activate Call of the Haunted -> Battle Ox", "pass", "pass", "activate Mystic Wok [Battle Ox]"):
        s, _ = es.step(s, {a.label: a for a in es.actions(s)}[want])
    p2 = s[1]["players"][1]
    assert [m for m in p2["monsters"] if m] == [] and [c["card"] for c in p2["graveyard"]] == ["Battle Ox"]
    coth = next(c for c in p2["spells"] if c and c["card"] == "Call of the Haunted")
    assert coth["face_up"] and coth["linked_monster"] is None


# -- the bond of Call of the Haunted is the monitor's, never the engine's linked_monster ---------


def _unobserved(obs: dict) -> dict:
    """The observation of an engine that does not report linked_monster (the EDOPro core)."""
    out = copy.deepcopy(obs)
    for p in out["players"]:
        for c in p["spells"] + [p["field_zone"]]:
            if c is not None:
                c.pop("linked_monster", None)
    return out


def _coth_leaves(ts):
    for s, a, info, s2 in ts:  # (bound to its monster before: the monitor's history)
        if s[2]["links"][0] and any(e.kind == "card_moved" and e["card"] == "Call of the Haunted" and e["from"] == "spell_trap_zone" for e in info):
            return s, a, info, s2
    raise AssertionError("Call of the Haunted never left the field bound to a monster")


def test_a_forgotten_bond_is_caught_without_linked_monster():
    # the mutant never records the bond; an engine that does not report linked_monster at all
    # gives the invariant nothing to compare, and it still sees the monster stay behind
    m = MUTANTS["call-of-the-haunted-forgets-its-monster"]
    es, ts = _transitions("rule-card-cont-target.toml", [], ReferenceEngine(m.rules, name=m.name))
    s, a, info, s2 = _coth_leaves(ts)
    t = Transition(_unobserved(s[1]), a.to_dict(), info, _unobserved(s2[1]), s[2], es.cards)
    t.mon_after = s2[2]
    got = _check("acc.linked-monster", t)
    assert isinstance(got, str) and "Call of the Haunted [P2 S2] left the field" in got, got


def test_the_bond_comes_from_the_events_not_from_linked_monster():
    es, ts = _transitions("rule-card-cont-target.toml", [])
    for s, a, info, s2 in ts:  # the resolution that Summons the monster
        if any(e.kind == "chain_link_resolved" and e["card"] == "Call of the Haunted" for e in info):
            break
    else:
        raise AssertionError("Call of the Haunted never resolved")
    (card_uid, monster_uid), = s2[2]["links"][0]
    assert _check("acc.linked-monster", _transition(es, s, a, info, s2)) is True
    after = copy.deepcopy(s2[1])
    coth = next(c for p in after["players"] for c in p["spells"] if c and c["uid"] == card_uid)
    coth["linked_monster"] = monster_uid + 100  # the engine names another monster
    got = _check("acc.linked-monster", _transition(es, s, a, info, s2, after=after))
    assert isinstance(got, str) and f"linked_monster = #{monster_uid + 100}" in got and "Blue-Eyes White Dragon" in got, got


def test_a_bond_shown_as_a_card_target_follows_its_own_text(tmp_path):
    # the EDOPro core shows Call of the Haunted's monster as its card target (attached_to); a
    # Tributed monster leaves the card on the field, which acc.continuous-target must not call
    # a card left behind
    path = tmp_path / "b.toml"
    path.write_text(_TRIBUTED)
    es, ts = _transitions(path, [])
    for s, a, info, s2 in ts:
        if any(e.kind == "card_moved" and e["card"] == "Battle Ox" and e.get("reason") == "tribute" for e in info):
            break
    else:
        raise AssertionError("Battle Ox was never Tributed")
    before = _unobserved(s[1])
    coth = next(c for p in before["players"] for c in p["spells"] if c and c["card"] == "Call of the Haunted")
    coth["attached_to"] = next(m["uid"] for p in before["players"] for m in p["monsters"] if m and m["card"] == "Battle Ox")
    t = Transition(before, a.to_dict(), info, _unobserved(s2[1]), s[2], es.cards)
    t.mon_after = s2[2]
    assert _check("acc.continuous-target", t) in (True, None)
    assert _check("acc.linked-monster", t) is True
