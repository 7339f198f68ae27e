"""Invariants that keep their own history and read card facts from card data (issue 8, §1, §2).

The engines here play the rules right or wrong in one way, and some lie about their own
bookkeeping; each must be caught by a plain check (no --differential), and the twin without the
bug must pass.
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
DATA = ROOT / "tests" / "data"
ENGINES = ROOT / "tests" / "engines"


@pytest.fixture
def engines_path(monkeypatch):
    monkeypatch.syspath_prepend(str(ENGINES))


def _check(run_cli, tmp_path, board, engine):
    out = tmp_path / "r.json"
    code, stdout, err = run_cli("check", str(board), "--engine", engine, "--json", str(out))
    doc = json.loads(out.read_text())
    return code, stdout, err, doc["boards"][0]


# -- the independent engine that forgets to count direct attacks -----------------------------------


def test_an_engine_that_forgets_to_count_direct_attacks_is_caught_by_a_plain_check(run_cli, tmp_path, engines_path):
    code, stdout, _err, b = _check(run_cli, tmp_path, DATA / "direct-attacker.toml", "lying_direct:ForgetsDirectAttacks")
    assert code == 1, stdout
    by_inv: dict = {}
    for c in b["counterexamples"]:  # the shortest of each invariant (one per signature: they come shortest first)
        by_inv.setdefault(c["invariant"], c)
    cex = by_inv["attack.count"]
    # the engine reports its own (wrong) count; the monitor counted the declaration
    assert "the engine reports attacks_declared = 0, its declarations this turn number 1" in cex["message"]
    assert cex["trace"][-1] == "attack Jinzo #7 -> direct" and cex["length"] == 4
    # and it offers the same monster a second direct attack: judged by the declarations it made
    assert "already declared 1 attack(s) this turn" in by_inv["attack.offered-legal"]["message"]
    rows = {r["id"]: r for r in b["invariants"]}
    assert rows["attack.count"]["verdict"] == "violated"


def test_its_twin_that_counts_passes(run_cli, tmp_path, engines_path):
    code, stdout, _err, b = _check(run_cli, tmp_path, DATA / "direct-attacker.toml", "lying_direct:CountsDirectAttacks")
    assert code == 0, stdout
    rows = {r["id"]: r for r in b["invariants"]}
    # the attack-count invariants judged the real declarations: not vacuous
    assert rows["attack.count"]["verdict"] == "held" and rows["attack.count"]["checked"] > 0
    assert rows["attack.direct-legal"]["verdict"] == "held"


# -- engines that lie about their own bookkeeping: one or more per family -----------------------------

LIES = [
    # (factory, board, invariant, the message names both values)
    ("attacks_zero", "000-replay-1.toml", "attack.count", "the engine reports attacks_declared = 0, its declarations this turn number 1"),
    ("stop_forgotten", "002-fiendish-chain-stops.toml", "attack.stopped-is-spent", "the engine reports cannot_attack_this_turn = false"),
    ("drops_declared_at", "000-replay-1.toml", "replay.bookkeeping-kept", "Battle Ox [P1 M1]: the engine reports declared_at = [], its declarations this turn were at [Blue-Eyes White Dragon [P2 M1]]"),
    ("direct_forgotten", "rule-calc-direct.toml", "replay.bookkeeping-kept", "the engine reports declared_direct = false, its declarations this turn say true"),
    ("hides_destroyed_mark", "000-facedown-flip-destroyed-by-bug.toml", "damage.destroyed-mark", "Man-Eater Bug [P2 M1]: the engine reports destroyed_by_battle = false, but damage calculation marked it"),
    ("hides_flip", "000-flip-man-eater-bug.toml", "damage.flip-after-calculation", "the engine reports flipped_by_battle = false, but a flip by the attack happened"),
    ("hides_damage_calculated", "000-facedown-flip-destroyed-by-bug.toml", "damage.calculation-once", "the engine reports damage_calculated = false, but damage calculation was performed"),
    ("hides_windows", "003-004-example-3.toml", "window.attack-declaration", "the engine reports open_windows.attack_declaration = false, but the window is open"),
    ("drops_chain_links", "rule-ch-lifo-ring.toml", "chain.lifo", "the engine's chain is [Reinforcements [P1 S1]], the links added and not yet resolved are [Reinforcements [P1 S1], Ring of Destruction [P2 S1]]"),
    ("lp_unchanged", "rule-calc-direct.toml", "acc.lp-ledger", "P2's LP went 8000 -> 8000, the events account for -1700"),
]


@pytest.mark.parametrize("factory,board,inv,message", LIES, ids=[x[0] for x in LIES])
def test_an_engine_lying_about_its_bookkeeping_is_caught(run_cli, tmp_path, engines_path, factory, board, inv, message):
    code, stdout, _err, b = _check(run_cli, tmp_path, BOARDS / board, f"lying_bookkeeping:{factory}")
    assert code == 1, stdout
    msgs = [c["message"] for c in b["counterexamples"] if c["invariant"] == inv]  # one per signature
    assert msgs, [c["invariant"] for c in b["counterexamples"]]
    assert any(message in m for m in msgs), msgs


def test_the_lies_cover_every_family():
    from bpcheck.invariants import REGISTRY

    assert {REGISTRY[inv].family for _f, _b, inv, _m in LIES} == {"attack counts", "replay", "damage step", "chains and windows", "accounting"}


# -- the Damage Step judged inside one transition -----------------------------------------------------

WITHIN = [
    # one bug per Damage-Step rule of docs/rules.md that must be judged from a transition's events
    ("SendsAtCalculation", "000-facedown-flip-destroyed-by-bug.toml", "damage.destroyed-mark", "was sent to the graveyard in damage_step_during_calculation"),
    ("CalculatesOnEntering", "000-facedown-flip-destroyed-by-bug.toml", "damage.substep-order", "damage calculation was performed on entering damage calculation"),
    ("NoBattleGraveyardTriggers", "003-004-shining-angel-torrential.toml", "damage.battle-gy-trigger", "Shining Angel [P2 GY] was sent to the Graveyard by battle but its trigger is not pending"),
    ("FlipTriggersAtCalculation", "000-flip-man-eater-bug.toml", "damage.flip-after-calculation", "flip effect became pending in damage_step_after_calculation_1"),
]


@pytest.mark.parametrize("engine,board,inv,message", WITHIN, ids=[x[0] for x in WITHIN])
def test_damage_step_rules_are_judged_from_the_events_of_one_transition(run_cli, tmp_path, engines_path, engine, board, inv, message):
    code, stdout, _err, b = _check(run_cli, tmp_path, BOARDS / board, f"lying_damage_step:{engine}")
    assert code == 1, stdout
    msgs = [c["message"] for c in b["counterexamples"] if c["invariant"] == inv]  # one per signature
    assert msgs, [(c["invariant"], c["message"]) for c in b["counterexamples"]]
    assert any(message in m for m in msgs), msgs


def test_a_monster_marked_and_moved_in_one_transition_is_seen_by_the_walk():
    """The mark and the move of SendsAtCalculation happen in one transition: neither the state
    before nor the one after shows a marked monster; only the events do."""
    from bpcheck.explorers.checking import EngineSystem
    from bpcheck.engines.reference import ReferenceEngine
    from bpcheck.invariants import REGISTRY
    from bpcheck.model.board import load_board
    import sys

    sys.path.insert(0, str(ENGINES))
    try:
        from lying_damage_step import SendsAtCalculation
    finally:
        sys.path.remove(str(ENGINES))
    es = EngineSystem(ReferenceEngine(SendsAtCalculation), load_board(BOARDS / "000-facedown-flip-destroyed-by-bug.toml"), [REGISTRY["damage.destroyed-mark"]])
    s = es.initial_states()[0]
    labels = ["enter Battle Phase", "pass", "pass", "attack "] + ["pass"] * 20
    for label in labels:
        a = next(a for a in es.actions(s) if a.label.startswith(label))
        s2, events = es.step(s, a)
        if any(e.kind == "damage_calculation" for e in events):
            assert not any(m and m["destroyed_by_battle"] for p in s[1]["players"] for m in p["monsters"])
            assert not any(m and m["destroyed_by_battle"] for p in s2[1]["players"] for m in p["monsters"])
            (_id, verdict), = es.check_transition(s, a, events, s2)
            assert isinstance(verdict, str) and "before the end of the Damage Step" in verdict
            return
        s = s2
    pytest.fail("no damage calculation on the way")


# -- the monitor in the explored state ---------------------------------------------------------------


def test_the_monitor_is_part_of_the_fingerprint_and_starts_empty():
    from bpcheck.explorers.checking import EngineSystem, state_fingerprint
    from bpcheck.model.canonical import fingerprint
    from bpcheck.engines.reference import ReferenceEngine
    from bpcheck.invariants.monitor import Monitor
    from bpcheck.model.board import load_board

    es = EngineSystem(ReferenceEngine(), load_board(BOARDS / "000-replay-1.toml"), [])
    s = es.initial_states()[0]
    assert s[2] == Monitor.initial()
    assert es.fingerprint(s) == state_fingerprint(s[1], s[2]) != fingerprint(s[1])
    # the same observation with a different history is a different state
    acts = {a.label: a for a in es.actions(s)}
    s1, _ = es.step(s, acts["enter Battle Phase"])
    other = Monitor({**s1[2].values, "attacks": ((1, 1, (), True, False, 0),)})
    assert state_fingerprint(s1[1], other) != es.fingerprint(s1)


def test_the_monitor_counts_from_events_not_from_the_engine():
    from bpcheck.invariants.base import Transition
    from bpcheck.invariants.monitor import Monitor
    from bpcheck.model.events import ev

    obs = {"turn": 2, "step": "battle_step"}
    m0 = Monitor.initial()
    t = Transition(obs, {"kind": "attack"}, [ev("attack_declared", attacker="X", attacker_uid=1, target=None, target_uid=None, player=0)], obs, m0)
    m1 = m0.advance(t)
    assert m1.attack(1).declared == 1 and m1.attack(1).declared_direct and m1.window.attack_declaration
    t2 = Transition(obs, {"kind": "pass"}, [ev("passed", player=0)], obs, m1)
    t3 = Transition(obs, {"kind": "pass"}, [ev("passed", player=1)], obs, m1.advance(t2))
    m3 = t3.mon.advance(t3)
    assert not m3.window.attack_declaration and m3.attack(1).declared == 1
    moved = Transition(obs, {"kind": "activate"}, [ev("card_moved", card="X", card_uid=1, owner=0, **{"from": "monster_zone", "to": "hand"}, reason="effect")], obs, m3)
    assert m3.advance(moved).attack(1).declared == 0  # a monster that left the field is a new object
    # a change of control that an engine reports as a move between Monster Zones (the ocgcore
    # adapter) leaves it on the field: it still declared its attack this turn
    taken = Transition(obs, {"kind": "activate"}, [ev("card_moved", card="X", card_uid=1, owner=0, **{"from": "monster_zone", "to": "monster_zone"}, reason="effect")], obs, m3)
    assert m3.advance(taken).attack(1).declared == 1


def test_reference_state_counts_are_unchanged_by_the_monitor():
    """The monitor says what the reference's observation says: no new states (tests/perft.json
    pins the counts; a few small boards here)."""
    from bpcheck.explorers.checking import EngineSystem
    from bpcheck.explorers.core import explore
    from bpcheck.engines.reference import ReferenceEngine
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    pinned = json.loads((ROOT / "tests" / "perft.json").read_text())
    for name in ("000-replay-1.toml", "000-flip-man-eater-bug.toml", "003-004-example-3.toml", "rule-ch-lifo-ring.toml"):
        r = explore(EngineSystem(ReferenceEngine(), load_board(BOARDS / name), select(None)))
        assert r.status == "pass", (name, [(v.prop, v.message) for v in r.violations])
        assert {"states": r.states, "transitions": r.transitions, "max_depth": r.max_depth, "terminal_states": r.terminal_states} == {
            k: v for k, v in pinned[name].items() if k != "reduced"
        }, name


# -- card facts from card data ------------------------------------------------------------------------


def test_a_board_defining_its_own_cards_passes_on_the_reference(run_cli, tmp_path):
    code, stdout, _err, b = _check(run_cli, tmp_path, DATA / "board-own-cards.toml", "reference")
    assert code == 0, stdout
    rows = {r["id"]: r for r in b["invariants"]}
    # Shrink, defined only in the board, was activated in the Damage Step and judged legal
    assert rows["damage.activation-legal"]["verdict"] == "held" and rows["damage.activation-legal"]["checked"] > 0
    assert b["goals"][0]["reached"] is True
    assert not any(r.get("not_judged") for r in b["invariants"])


def test_board_cards_are_read_from_the_board_file_like_pool_cards():
    from bpcheck.invariants.cards import STAT_CHANGE_STEPS, CardFacts
    from bpcheck.model.board import load_board

    cards = CardFacts.for_board(load_board(DATA / "board-own-cards.toml"))
    assert cards.where["Shrink"].endswith("board-own-cards.toml")
    assert cards.speed("Shrink", 0) == 2
    assert cards.damage_step_window("Shrink", 0) == frozenset(STAT_CHANGE_STEPS)
    # pool cards, read from model/cards/*.toml by the same reader
    assert cards.where["Rush Recklessly"] == "cards/spells.toml"
    assert cards.damage_step_window("Rush Recklessly", 0) == frozenset(STAT_CHANGE_STEPS)
    assert cards.damage_step_window("Kuriboh", 0) == {"damage_step_during_calculation"}
    assert cards.damage_step_window("Honest", 0) == set(STAT_CHANGE_STEPS) | {"damage_step_during_calculation"}
    assert cards.damage_step_window("Mirror Force", 0) == frozenset()
    assert cards.damage_step_window("Shadow Spell", 0) == frozenset(STAT_CHANGE_STEPS)
    assert cards.damage_step_window("Spellbinding Circle", 0) == frozenset()
    assert cards.damage_step_window("Seven Tools of the Bandit", 0) >= {"damage_step_during_calculation", "damage_step_end"}
    assert cards.can_attack_directly("Jinzo #7") and not cards.can_attack_directly("Battle Ox")
    assert cards.must_attack("Berserk Gorilla") and cards.attacks_each_monster("Asura Priest")
    assert cards.attack_cost("Dark Elf") == 1000
    assert cards.counter_trap("Trap Jammer") == {"answers": "trap", "lp": 0, "discard": 0, "opponent_only": True, "battle_phase": True}
    assert cards.counter_trap("Mirror Force") is False
    assert cards.speed("Nope", 0) is None  # not defined for this run: UNKNOWN


def test_a_card_the_data_cannot_classify_is_not_judged_never_passed_or_failed():
    from bpcheck.invariants import REGISTRY
    from bpcheck.invariants.base import NotJudged, Transition
    from bpcheck.invariants.cards import CardFacts
    from bpcheck.invariants.monitor import Monitor
    from bpcheck.model.events import ev

    raw = [("x.toml", {"name": "Odd Card", "kind": "trap", "subtype": "normal", "effect": [{"type": "activate", "when": "moon_rises", "ops": []}]})]
    cards = CardFacts(raw)
    obs = {"step": "damage_step_start", "chain": [], "pending_triggers": [], "players": []}
    e = ev("chain_link_added", link=1, card="Odd Card", card_uid=9, effect=0, player=1, speed=2, targets=())
    t = Transition(obs, {"kind": "activate"}, [e], obs, Monitor.initial(), cards)
    v = REGISTRY["damage.activation-legal"].check(t)
    assert isinstance(v, NotJudged) and "Odd Card" in v.reason
    e2 = ev("chain_link_added", link=1, card="Unheard Of", card_uid=9, effect=0, player=1, speed=2, targets=())
    v2 = REGISTRY["damage.activation-legal"].check(Transition(obs, {"kind": "activate"}, [e2], obs, Monitor.initial(), cards))
    assert isinstance(v2, NotJudged) and "Unheard Of" in v2.reason


def test_not_judged_is_reported_per_board(run_cli, tmp_path, engines_path):
    code, stdout, _err, b = _check(run_cli, tmp_path, BOARDS / "rule-ds-honest.toml", "lying_bookkeeping:unknown_card")
    row = next(r for r in b["invariants"] if r["id"] == "damage.activation-legal")
    why = "Honest Abe: when it may be activated in the Damage Step cannot be read from its card data"
    assert row["violations"] == 0 and row["verdict"] == "not judged"  # never "held", never "violated"
    assert row["not_judged"] == [why]
    assert f"not judged here: damage.activation-legal: {why}" in stdout
    never = next(l for l in stdout.splitlines() if l.startswith("vacuous on every board"))
    assert "damage.activation-legal" not in never  # not judged is not vacuous
    import jsonschema

    schema = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())
    jsonschema.validate(json.loads((tmp_path / "r.json").read_text()), schema)
    assert "damage.activation-legal" not in {c["invariant"] for c in b["counterexamples"]}


def test_docs_describe_the_monitor_api(root):
    text = (root / "docs" / "invariants.md").read_text()
    for word in ("@history(", "t.mon_after", "NotJudged", "state_fingerprint", "`attacks`", "`windows`", "`battle`", "`chain`"):
        assert word in text, word


def test_the_monitor_reads_which_effect_of_its_own_resolved():
    """Black Luster Soldier's second effect gives it one more attack and its first forbids its
    attacks (DS-EXTRA-ATTACK): the attacks history tells them apart by the resolving link's effect
    (the chain history), and says unknown when the engine does not name the effect."""
    from bpcheck.invariants.base import Transition, Unknown
    from bpcheck.invariants.cards import CardFacts
    from bpcheck.invariants.monitor import Monitor
    from bpcheck.invariants.view import allowed_attacks
    from bpcheck.model.events import ev

    bls = "Black Luster Soldier - Envoy of the Beginning"
    cards = CardFacts.pool()
    obs = {"turn": 3, "turn_player": 0, "step": "damage_step_after_calculation_1", "chain": [], "attack": None,
           "players": [{"monsters": [], "spells": [], "graveyard": []}, {"monsters": [], "spells": [], "graveyard": []}]}

    def resolve(effect):
        m = Monitor.initial()
        for e in (
            ev("attack_declared", attacker=bls, attacker_uid=1, target="Mokey Mokey", target_uid=2, player=0),
            ev("chain_link_added", link=1, card=bls, card_uid=1, effect=effect, player=0, targets=()),
            ev("chain_link_resolved", card=bls, card_uid=1, negated=False),
        ):
            m = m.advance(Transition(obs, {"kind": "pass"}, [e], obs, m, cards=cards))
        return m.attack(1)

    second = resolve(1)
    assert (second.extra, second.stopped) == (1, False) and allowed_attacks(second, bls) == 2
    banish = resolve(0)
    assert (banish.extra, banish.stopped) == (0, True) and allowed_attacks(banish, bls) == 1
    unnamed = resolve(None)
    assert unnamed.extra is None and not unnamed.stopped
    with pytest.raises(Unknown):
        allowed_attacks(unnamed, bls)
def test_a_chain_that_begins_after_one_resolved_is_another_chain():
    """chain.lifo reads the events in order: a link added after chain_resolved (a trigger starting a
    new chain at once: The Winged Dragon of Ra - Immortal Phoenix when Ra is sent to the GY, F33) is
    not a link of the chain that resolved; one added before it still resolves first."""
    es = EngineSystem(ReferenceEngine(), load_board(BOARDS / "rule-ch-lifo-ring.toml"), [REGISTRY["chain.lifo"]])
    s = es.initial_states()[0]
    for want in ("enter Battle Phase", "activate Reinforcements -> Battle Ox", "activate Ring of Destruction -> Battle Ox", "pass"):
        s, _info = es.step(s, {a.label: a for a in es.actions(s)}[want])
    assert [link["card_uid"] for link in s[1]["chain"]] == [2, 4]
    a = {a.label: a for a in es.actions(s)}["pass"]
    s2, info = es.step(s, a)  # the chain resolves: Ring of Destruction, then Reinforcements
    check = REGISTRY["chain.lifo"].check

    def lifo(events, after):
        t = Transition(s[1], a.to_dict(), events, after, s[2])
        return check(Transition(s[1], a.to_dict(), events, after, s[2], mon_after=s[2].advance(t)))

    assert lifo(info, s2[1]) is True
    new = ev("chain_link_added", link=1, card="Rush Recklessly", card_uid=3, player=0, targets=(), step="battle_start_step")
    after = {**s2[1], "chain": [{**s[1]["chain"][0], "card_uid": 3, "card": "Rush Recklessly", "link": 1}]}
    assert lifo([*info, new], after) is True
    # the same link added before the chain resolved would have had to resolve first
    early = [*info[:1], new, *info[1:]]
    assert lifo(early, after).startswith("chain resolved in order [Ring of Destruction [P2 S1], Reinforcements [P1 S1]], expected [Rush Recklessly")
    # and a chain resolved first in, first out is caught
    uids = [e["card_uid"] for e in info if e.kind == "chain_link_resolved"]
    fifo = [e for e in info if e.kind != "chain_link_resolved"] + [e for e in info if e.kind == "chain_link_resolved"][::-1]
    assert uids == [4, 2] and lifo(fifo, s2[1]).startswith("chain resolved in order [Reinforcements [P1 S1]")


def test_a_duel_ended_by_a_draw_from_an_empty_deck_is_judged_from_the_monitors_draws():
    """acc.duel-over (DECK-OUT, 004 "Draw Phase"): a duel over with no player at 0 LP is right only
    when the monitor saw the loser draw their Deck empty in the transition that ended it, never on
    the engine's word (its duel_over event); the winner is the other player."""
    import copy

    from bpcheck.invariants.base import Context, NotJudged
    from bpcheck.invariants.monitor import Monitor

    eng = ReferenceEngine()
    obs = eng.observe(eng.start(load_board(str(Path(__file__).resolve().parent.parent / "boards" / "rule-deck-out-empty-deck.toml"))))
    check = REGISTRY["acc.duel-over"].check

    def ended(drawers, empty, winner):
        before = copy.deepcopy(obs)
        for p in (0, 1):
            before["players"][p]["deck"] = [{"uid": 900 + 10 * p + k, "card": "Battle Ox", "owner": p} for k in range(3)]
        after = copy.deepcopy(before)
        after.update(over=True, winner=winner)
        for p in empty:
            after["players"][p]["deck"] = []
        draws = [ev("card_moved", card="Battle Ox", card_uid=900 + 10 * p, owner=p, **{"from": "deck", "to": "hand"}, reason="effect")
                 for p in drawers]
        m0 = Monitor.initial()
        m1 = m0.advance(Transition(before, {"kind": "pass"}, [*draws, ev("duel_over", winner=winner, reason="core_reason_2")], after, m0))
        return check(after, Context(m1, None))

    assert ended([1], [1], 0) is True  # P2 drew their Deck empty: P1 wins
    assert ended([1], [1], 1) == "winner 1, expected 0 (P2 drew their Deck empty)"
    assert ended([], [], 0) == "the duel is over but no player has 0 LP"  # the engine's word alone
    assert ended([1], [], 0) == "the duel is over but no player has 0 LP"  # a draw that left cards in the Deck
    assert ended([0], [1], 1) == "the duel is over but no player has 0 LP"  # an emptied Deck that was not drawn from
    assert isinstance(ended([0, 1], [0, 1], None), NotJudged)  # both at once: the seeds do not say
    # a board whose first state is already over (the engine's start-up ended it, the monitor saw
    # nothing of it: Mirage of Nightmare drew from a 3-card Deck in the Standby Phase): not judged
    first = copy.deepcopy(obs)
    first.update(over=True, winner=0)
    verdict = check(first, Context(Monitor.initial(), None))
    assert isinstance(verdict, NotJudged) and "first state" in verdict.reason


def test_a_battler_that_changes_control_in_the_damage_step_ends_the_battle():
    """DS-BATTLER-LEAVES (the rulebook; the seeds are silent): a battler whose control changes in
    the Damage Step before damage calculation ends the battle as one that leaves the field
    (Borreload Dragon takes the attack target at the start of the Damage Step; the core then skips
    damage calculation). The same change after damage calculation ends nothing."""
    from bpcheck.invariants.monitor import Monitor

    before = {"step": "damage_step_start", "attack": {"attacker": 1, "target": 2}, "players": []}

    def after(step, calculated, uid):
        m0 = Monitor.initial()
        events = [ev("damage_calculation", attacker_uid=1, target_uid=2, attacker_atk=1700, target_value=300, target_position="attack")] if calculated else []
        events.append(ev("control_changed", card="Mokey Mokey", card_uid=uid))
        return m0.advance(Transition({**before, "step": step}, {"kind": "pass"}, events, {**before, "step": step}, m0)).battle.ended

    assert after("damage_step_start", False, 2) is True
    assert after("damage_step_start", False, 9) is False  # not a battler
    assert after("damage_step_after_calculation", True, 2) is False  # damage calculation was performed
