"""damage.destroyed-mark: a monster destroyed by battle stays on the field, untouched by effects,
until destroyed-by-battle monsters are sent to the Graveyard (DS-DESTROYED-MARK,
DS-NO-TARGET-DESTROYED; docs/ocgcore-findings.md F9).

Engines in tests/engines/lying_destroyed_mark.py destroy or banish a marked monster by an effect
before the end of the Damage Step; each is caught by a plain check, with a message naming the
card. The reference model passes, and the moves the rules allow while a monster is marked (its
Flip effect destroying or returning the attacker, Macro Cosmos banishing it when it is sent away by
battle) are judged and held, not flagged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.invariants import REGISTRY
from bpcheck.invariants.base import Transition
from bpcheck.model.board import load_board
from bpcheck.model.events import ev

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"
ENGINES = ROOT / "tests" / "engines"
INV = "damage.destroyed-mark"


@pytest.fixture
def engines_path(monkeypatch):
    monkeypatch.syspath_prepend(str(ENGINES))


def _check(run_cli, tmp_path, boards, *args):
    out = tmp_path / "r.json"
    code, stdout, _err = run_cli("check", *[str(BOARDS / b) for b in boards], *args, "--json", str(out))
    return code, stdout, json.loads(out.read_text())["boards"]


LIARS = [
    # (engine, board, the violation message names the card, where and how)
    (
        "DestroysMarkedByEffect",
        "000-facedown-flip-destroyed-by-bug.toml",
        "Man-Eater Bug [P2 M1], already destroyed by battle, was destroyed again by an effect in damage_step_during_calculation",
    ),
    (
        "BanishesMarkedByEffect",
        "000-facedown-flip-destroyed-by-bug.toml",
        "Man-Eater Bug [P2 M1], destroyed by battle, left the field in damage_step_during_calculation (reason banished, to the banished)",
    ),
    (
        "SelfDestroysAfterBattle",
        "rule-ds-reflect-bounder.toml",
        "Reflect Bounder [P2 M1], already destroyed by battle, was destroyed again by an effect in damage_step_after_calculation_1",
    ),
]


@pytest.mark.parametrize("engine,board,message", LIARS, ids=[x[0] for x in LIARS])
def test_a_marked_monster_leaving_by_an_effect_is_caught(run_cli, tmp_path, engines_path, engine, board, message):
    code, stdout, (b,) = _check(run_cli, tmp_path, [board], "--engine", f"lying_destroyed_mark:{engine}")
    assert code == 1, stdout
    msgs = [c["message"] for c in b["counterexamples"] if c["invariant"] == INV]  # one per signature
    assert msgs, [(c["invariant"], c["message"]) for c in b["counterexamples"]]
    assert any(message in m for m in msgs), msgs


def test_reflect_bounder_destroying_itself_is_reported_by_this_invariant_alone(run_cli, tmp_path, engines_path):
    """F9's shape (what the EDOPro core does): no other invariant sees it, so without this
    clause of damage.destroyed-mark the engine would pass."""
    code, stdout, (b,) = _check(run_cli, tmp_path, ["rule-ds-reflect-bounder.toml"], "--engine", "lying_destroyed_mark:SelfDestroysAfterBattle")
    assert code == 1, stdout
    assert {c["invariant"] for c in b["counterexamples"]} == {INV}
    cex = b["counterexamples"][0]
    assert cex["trace"][-1] == "pass" and "attack Summoned Skull -> Reflect Bounder" in cex["trace"]


# boards where damage calculation destroys monsters by battle, each with something the rules allow
# or forbid around the mark (Flip effects, Reflect Bounder, Macro Cosmos, Tokens, Shining Angel, ...)
REFERENCE_BOARDS = [
    "000-facedown-flip-destroyed-by-bug.toml",
    "000-flip-man-eater-bug.toml",
    "000-flip-hane-hane.toml",
    "004-penguin-soldier.toml",
    "002-self-destroy-by-battle.toml",
    "rule-ds-reflect-bounder.toml",
    "rule-ds-macro-cosmos.toml",
    "000-tokens-macro-cosmos.toml",
    "000-replay-2.toml",
]


def test_the_reference_model_passes_and_is_judged(run_cli, tmp_path):
    code, stdout, boards = _check(run_cli, tmp_path, REFERENCE_BOARDS, "--invariants", INV)
    assert code == 0, stdout
    for b in boards:
        (row,) = [r for r in b["invariants"] if r["id"] == INV]
        assert row["verdict"] == "held" and row["checked"] > 0, (b["board"], row)


def _transitions(board: str):
    """Every transition of the reference model on `board` (BFS, all of it) with the verdict of
    damage.destroyed-mark on it."""
    from bpcheck.engines.reference import ReferenceEngine
    from bpcheck.explorers.checking import EngineSystem
    from bpcheck.explorers.core import Bounds, ExploreOptions, explore
    from bpcheck.invariants import REGISTRY
    from bpcheck.model.board import load_board

    system = EngineSystem(ReferenceEngine(), load_board(BOARDS / board), [REGISTRY[INV]], prefilter=False)
    out = []
    step = system.step

    def rec_step(s, a):
        s2, events = step(s, a)
        verdicts = dict(system.check_transition(s, a, events, s2))  # a check that returned None is left out
        out.append((s, events, verdicts.get(INV)))
        return s2, events

    system.step = rec_step
    explore(system, ExploreOptions("bfs", bounds=Bounds()))
    return out


def _marked_before(s) -> set:
    return {m["uid"] for p in s[1]["players"] for m in p["monsters"] if m and m["destroyed_by_battle"]}


@pytest.mark.parametrize(
    "board,reason,to",
    [
        # 000 "Flip Effects" ¶2: Man-Eater Bug, destroyed by battle, destroys the attacking Summoned Skull
        ("000-flip-man-eater-bug.toml", "destroyed", "graveyard"),
        # 000 "Flip Effects" ¶3: Hane-Hane, destroyed by battle, returns Summoned Skull to the hand
        ("000-flip-hane-hane.toml", "returned", "hand"),
    ],
)
def test_a_marked_monster_s_effect_moving_another_monster_is_held(board, reason, to):
    """The seeds' own examples: the marked monster's Flip effect moves a monster that is not
    marked, in the transition that resolves it, while the marked one stays."""
    seen = 0
    for s, events, verdict in _transitions(board):
        marked = _marked_before(s)
        moves = [e for e in events if e.kind == "card_moved" and e.get("from") == "monster_zone" and e.get("reason") == reason and e.get("to") == to]
        if not marked or not moves:
            continue
        assert all(e["card_uid"] not in marked for e in moves)
        assert verdict is True, verdict
        seen += 1
    assert seen, f"no transition of {board} moves a monster by an effect while another is marked"


def test_macro_cosmos_banishing_marked_monsters_when_they_are_sent_away_is_held():
    """DS-SEND-OWNER-GY: destroyed-by-battle monsters are banished instead of being sent to the
    Graveyard (reason battle, in damage_step_end); that is their one way off the field."""
    seen = 0
    for s, events, verdict in _transitions("rule-ds-macro-cosmos.toml"):
        gone = [e for e in events if e.kind == "card_moved" and e.get("from") == "monster_zone" and e["card_uid"] in _marked_before(s)]
        if not gone:
            continue
        assert all(e["reason"] == "battle" and e["to"] == "banished" for e in gone), gone
        assert verdict is True, verdict
        seen += 1
    assert seen


def test_reflect_bounder_that_survives_the_battle_destroys_itself_unflagged():
    """Mokey Mokey (300) attacks Reflect Bounder (1700) and is destroyed by battle; Reflect
    Bounder, not destroyed by battle, destroys itself by its effect after damage calculation,
    which no rule forbids, while Mokey Mokey is still on the field, marked."""
    seen = 0
    for s, events, verdict in _transitions("rule-ds-reflect-bounder.toml"):
        own = [e for e in events if e.kind == "destroyed" and e["card"] == "Reflect Bounder" and e["by"] == "effect"]
        if not own:
            continue
        marked = _marked_before(s)
        assert marked and all(e["card_uid"] not in marked for e in own)
        assert verdict is True, verdict
        seen += 1
    assert seen


def _to_step(step: str):
    """The reference model on rule-ds-reflect-bounder: Summoned Skull attacks Reflect Bounder, passes
    until `step`; (the system, the state)."""
    es = EngineSystem(ReferenceEngine(), load_board(BOARDS / "rule-ds-reflect-bounder.toml"), [REGISTRY[INV]])
    s = es.initial_states()[0]
    for _ in range(60):
        if s[1]["step"] == step:
            return es, s
        acts = {a.label: a for a in es.actions(s)}
        attack = [x for x in acts if x.startswith("attack Summoned Skull") and x.endswith("-> Reflect Bounder")]
        pick = next(x for x in ("enter Battle Phase", *attack, "pass") if x in acts)
        s, _info = es.step(s, acts[pick])
    raise AssertionError(f"{step} not reached")


def test_a_mark_before_damage_calculation_is_caught_even_in_its_sub_step():
    """A mark in the calculation's sub-step after an action that is not the calculation (the core
    asks a destruction replacement there, F33) is judged from the monitor's history: with no
    damage_calculation seen for this battle it is not by damage calculation."""
    check = REGISTRY[INV].check
    _es, s = _to_step("damage_step_before_calculation")
    uid = next(m["uid"] for m in s[1]["players"][1]["monsters"] if m)
    mark = ev("destroyed_by_battle", card="Reflect Bounder", card_uid=uid, controller=1)
    for step in ("damage_step_before_calculation", "damage_step_during_calculation"):
        obs = {**s[1], "step": step}  # (the monitor has seen no damage calculation for this battle)
        assert not s[2].battle.calculated
        t = Transition(obs, {"kind": "choose", "label": "choose no: Fighting Spirit"}, [mark], obs, s[2])
        assert check(t) == f"Reflect Bounder [P2 M1] became destroyed by battle in {step}, not by damage calculation"
