"""Omissions (issue 24): the actions the rules allow are offered (attack.legal-offered,
turn.legal-offered, chain.legal-offered) and play moves on only after both players pass in
succession (priority.pass-pass).

Each engine here is the reference model with one omission; each must be caught by a plain check,
also when it observes as little as an engine may (tests/engines/withholding.py: every field the
EDOPro core leaves out, priority and passes included) and over the protocol, and the reference
must hold with the same view.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.model.engine import Rules
from bpcheck.model.state import Step

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"
ENGINES = ROOT / "tests" / "engines"
sys.path.insert(0, str(ENGINES))

from v2_engines import Implicit  # noqa: E402
from withholding import Withholding  # noqa: E402

MINE = ("attack.legal-offered", "turn.legal-offered", "chain.legal-offered", "priority.pass-pass")
# the omission mutants of engines/mutants.py and what catches each (tests/test_mutants.py pins the same)
OMISSIONS = {
    "summoned-monster-cannot-attack": "attack.legal-offered",
    "unattackable-monster-blocks-direct-attack": "attack.legal-offered",
    "opponent-not-asked-after-declaration": "priority.pass-pass",
    "no-activation-after-declaration-window": "chain.legal-offered",
    "battle-phase-ends-only-when-no-attack-is-left": "turn.legal-offered",
}


def _explore(engine, board: str, invariants=None):
    es = EngineSystem(engine, load_board(BOARDS / board), select(invariants))
    return es, explore(es)


def _messages(r, prop: str) -> list[str]:
    return [v.message for v in r.violations if v.prop == prop]


# -- the omission mutants, with the reference's view and with the least an engine may observe ------


@pytest.mark.parametrize("name", sorted(OMISSIONS))
@pytest.mark.parametrize("view", ["reference", "withholding"])
def test_each_omission_is_caught(name, view):
    m = MUTANTS[name]
    engine = ReferenceEngine(m.rules, name=name) if view == "reference" else Withholding(m.rules)
    es, r = _explore(engine, m.board)
    killer = OMISSIONS[name]
    assert killer not in es.not_evaluated, es.not_evaluated.get(killer)
    assert _messages(r, killer), (name, view, [(v.prop, v.message) for v in r.violations])


def test_the_messages_name_what_is_missing():
    _es, r = _explore(ReferenceEngine(MUTANTS["summoned-monster-cannot-attack"].rules), "rule-atk-summon-turn.toml")
    assert "Gemini Elf [P1 M1] may attack Mokey Mokey [P2 M1], but that attack is not offered to P1" in _messages(r, "attack.legal-offered")[0]
    _es, r = _explore(ReferenceEngine(MUTANTS["unattackable-monster-blocks-direct-attack"].rules), "000-replay-3.toml")
    assert _messages(r, "attack.legal-offered")[0].startswith("Battle Ox [P1 M1] may attack directly, but that attack is not offered")
    _es, r = _explore(ReferenceEngine(MUTANTS["opponent-not-asked-after-declaration"].rules), "003-004-example-1.toml")
    # (one counterexample per signature: the same omission also shows as the moves that follow it)
    assert "after P1 passed in battle_step, P1 was asked instead of P2" in _messages(r, "priority.pass-pass")
    _es, r = _explore(ReferenceEngine(MUTANTS["no-activation-after-declaration-window"].rules), "003-004-example-2.toml")
    assert _messages(r, "chain.legal-offered")[0].startswith(
        "P2 may activate Book of Moon [P2 S3] targeting Battle Ox [P1 M1] in battle_step, but that activation is not offered"
    )
    _es, r = _explore(ReferenceEngine(MUTANTS["battle-phase-ends-only-when-no-attack-is-left"].rules), "000-replay-1.toml")
    assert _messages(r, "turn.legal-offered") == ["ending the Battle Phase is not offered to P1 in battle_step (offered: attack Battle Ox -> direct)"]


@pytest.mark.parametrize("board", sorted({m.board for m in (MUTANTS[n] for n in OMISSIONS)} | {"rule-ds-lily.toml", "000-replay-6.toml", "003-004-shining-angel-torrential.toml"}))
def test_the_reference_holds_with_the_least_an_engine_may_observe(board):
    es, r = _explore(Withholding(), board)
    for inv in MINE:
        assert inv not in es.not_evaluated, (inv, es.not_evaluated.get(inv))
        assert inv not in es.not_judged, (inv, es.not_judged[inv])
        assert not _messages(r, inv), (inv, _messages(r, inv))
    assert r.props["turn.legal-offered"].checked and r.props["priority.pass-pass"].checked


# -- over the protocol (the withheld fields really absent from the JSON) ----------------------------


def _served(factory: str) -> str:
    return f"cmd:{shlex.quote(sys.executable)} -m bpcheck.engines.serve --engine withholding:{factory}"


@pytest.mark.parametrize(
    "factory, board, killer",
    [
        ("summoned_monster_cannot_attack", "rule-atk-summon-turn.toml", "attack.legal-offered"),
        ("opponent_not_asked_after_declaration", "003-004-example-1.toml", "priority.pass-pass"),
        ("reference", "rule-atk-summon-turn.toml", None),
    ],
)
def test_over_cmd_with_every_optional_field_unobserved(run_cli, monkeypatch, factory, board, killer):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ENGINES), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.chdir(ROOT)
    code, stdout, _err = run_cli("check", f"boards/{board}", "--engine", _served(factory), "--invariants", ",".join(MINE))
    if killer is None:
        assert code == 0, stdout
        assert "not evaluated" not in stdout and "not judged" not in stdout, stdout
    else:
        assert code == 1, stdout
        assert f"{killer}:" in stdout, stdout


# -- implicit passes ---------------------------------------------------------------------------


class _ImplicitMutant(Implicit):
    def __init__(self, rules_cls) -> None:
        ReferenceEngine.__init__(self, rules_cls, name="v2-implicit-mutant")


def test_implicit_passes_pass_pass_is_not_evaluated_the_offers_are_judged():
    es, r = _explore(Implicit(), "rule-atk-summon-turn.toml")
    assert es.not_evaluated["priority.pass-pass"] == "the engine passes for its players (implicit passes)"
    for inv in ("attack.legal-offered", "turn.legal-offered", "chain.legal-offered"):
        assert inv not in es.not_evaluated and r.props[inv].checked and not r.props[inv].violations, inv
    # the states it shows are judged by the same rules: the omission is still caught
    _es, r = _explore(_ImplicitMutant(MUTANTS["summoned-monster-cannot-attack"].rules), "rule-atk-summon-turn.toml")
    assert _messages(r, "attack.legal-offered")


# -- more omissions, one per branch of the invariants -----------------------------------------------


class _ReplayWithoutOriginalTarget(Rules):
    """At a replay, the original target is not offered again (only new targets and calling off)."""

    def _replay_actions(self, s):
        return [a for a in super()._replay_actions(s) if a.target is None or a.target != s.attack.target]


class _NoSkip(Rules):
    """The Battle Phase cannot be skipped."""

    def _legal_actions(self, s):
        return [a for a in super()._legal_actions(s) if a.kind != "skip_bp"]


class _BookOfMoonSparesTheAttacker(Rules):
    """Book of Moon (any face-up monster) is never offered on the attacking monster."""

    def _activation_variants(self, s, p, uid, c, eff):
        out = super()._activation_variants(s, p, uid, c, eff)
        if c.name == "Book of Moon" and s.attack is not None:
            out = [a for a in out if s.attack.attacker not in a.targets]
        return out


class _NoBottomless(Rules):
    """Bottomless Trap Hole is never offered."""

    def _can_activate(self, s, p, uid, c, eff, loc):
        return c.name != "Bottomless Trap Hole" and super()._can_activate(s, p, uid, c, eff, loc)


class _ActivatorKeepsPriority(Rules):
    """After an activation, its player acts again instead of the opponent."""

    def _activate(self, w, action):
        super()._activate(w, action)
        if action.kind == "activate" and not w.s.over:
            w.s = replace(w.s, priority=action.player)


class _ChainWaitsForAThirdPass(Rules):
    """Two passes in succession with a chain do not resolve it: the turn player is asked again, once."""

    def _pass(self, w, p):
        s = w.s
        if s.chain and s.passes == 1 and not any(f == ("asked_again",) for f in s.fresh):
            w.emit("passed", player=p)
            w.s = replace(s, passes=0, priority=s.turn_player, fresh=s.fresh + (("asked_again",),))
            return
        super()._pass(w, p)


class _StartStepEndsAtOnce(Rules):
    """The turn player's pass in the Start Step moves on to the Battle Step without asking the opponent."""

    def _pass(self, w, p):
        if w.s.step is Step.BP_START and not w.s.chain and w.s.passes == 0 and p == w.s.turn_player:
            w.emit("passed", player=p)
            self._advance(w)
            return
        super()._pass(w, p)


@pytest.mark.parametrize(
    "rules, board, killer, message",
    [
        (_ReplayWithoutOriginalTarget, "000-replay-2.toml", "attack.legal-offered", "a replay of Gemini Elf [P1 M1]'s attack is pending and it may continue against"),
        (_NoSkip, "000-replay-1.toml", "turn.legal-offered", "skipping the Battle Phase is not offered to P1 in main1"),
        (_BookOfMoonSparesTheAttacker, "003-004-book-of-moon.toml", "chain.legal-offered", "may activate Book of Moon [P2 S1] targeting"),
        (_NoBottomless, "003-004-shining-angel-torrential.toml", "chain.legal-offered", "P1 may activate Bottomless Trap Hole [P1 S2]"),
        (_ActivatorKeepsPriority, "003-004-example-1.toml", "priority.pass-pass", "after P2 activated Sakuretsu Armor [P2 S"),
        (_ChainWaitsForAThirdPass, "003-004-example-1.toml", "priority.pass-pass", "both players passed in succession, but the chain [Sakuretsu Armor"),
        (_StartStepEndsAtOnce, "000-replay-1.toml", "priority.pass-pass", "P1 passed once and play moved on (phase_changed) without asking P2"),
    ],
)
def test_an_omission_in_each_branch_is_caught(rules, board, killer, message):
    for engine in (ReferenceEngine(rules), Withholding(rules)):
        es, r = _explore(engine, board)
        got = _messages(r, killer)
        assert any(message in m for m in got), (type(engine).__name__, got, [(v.prop, v.message) for v in r.violations][:5])


# -- what the reading cannot decide is "not judged", never a pass ------------------------------------


def test_a_card_the_reading_cannot_classify_is_not_judged_never_passed():
    m = MUTANTS["no-activation-after-declaration-window"]
    es = EngineSystem(ReferenceEngine(m.rules), load_board(BOARDS / m.board), select("chain.legal-offered"))
    del es.cards.defs["Book of Moon"]  # (as if the engine played a card the run's card data does not define)
    r = explore(es)
    assert not r.violations  # the omission is Book of Moon's, which nothing here can judge ...
    assert any("Book of Moon" in reason for reason in es.not_judged["chain.legal-offered"])  # ... and it says so


# -- the monitor's histories -----------------------------------------------------------------------


def _play(engine, board: str, labels: list[str]):
    es = EngineSystem(engine, load_board(BOARDS / board), [])
    s = es.initial_states()[0]
    seen = [s]
    for want in labels:
        for _ in range(60):
            acts = {a.label: a for a in es.actions(s)}
            if want in acts:
                s, _ = es.step(s, acts[want])
                break
            s, _ = es.step(s, acts["pass"])
            seen.append(s)
        else:
            raise AssertionError(f"{want!r} never offered")
        seen.append(s)
    return es, s, seen


def test_once_per_battle_is_the_monitors_and_ends_with_the_damage_step():
    es, s, _ = _play(ReferenceEngine(), "rule-ds-lily.toml", ["enter Battle Phase", "attack Neo the Magic Swordsman -> Injection Fairy Lily", "activate Injection Fairy Lily"])
    lily = next(m for m in s[1]["players"][1]["monsters"] if m)
    assert s[2]["effects_used"] == ((lily["uid"], 0, True),) and lily["once_per_turn_used"] == [0]
    while s[1]["step"] != "battle_step":
        s, _ = es.step(s, next(a for a in es.actions(s) if a.kind == "pass"))
    assert s[2]["effects_used"] == ()


def test_the_pass_count_is_the_monitors_own():
    _es, _s, seen = _play(ReferenceEngine(), "000-replay-1.toml", ["enter Battle Phase", "attack Battle Ox -> direct", "end Battle Phase"])
    # on the reference it says what the observation's passes says, wherever a player may pass
    assert all(x[2]["priority"][0] == x[1]["passes"] for x in seen if x[1]["choice"] is None)
    assert {x[2]["priority"][0] for x in seen} == {0, 1}
