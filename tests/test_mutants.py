"""Every shipped mutant is killed, by the invariant pinned here (a change of killer is a change
of the checker's behaviour and must be explained)."""

from __future__ import annotations

import json

from bpcheck.invariants import REGISTRY
from bpcheck.engines.mutants import MUTANTS

KILLERS = {
    # the monitor counts the declaration itself: the engine reporting attacks_declared = 0 after
    # calling the attack off is caught on the state itself, before bookkeeping-kept sees it go back
    "replay-resets-count": "attack.count",
    "replay-is-second-attack": "attack.count",
    "stat-change-replays": "replay.iff",
    "opponent-summon-no-replay": "replay.iff",
    "replay-charges-cost-again": "replay.no-second-cost",
    "mirror-force-in-damage-step": "damage.activation-legal",
    "stat-change-during-calculation": "damage.activation-legal",
    "counter-traps-refused-in-damage-step": "chain.counter-trap-offered",
    # an omission: Horus's negation is not offered in the Damage Step
    "negating-quick-effect-refused-in-damage-step": "chain.legal-offered",
    "might-not-alter-counts-as-atk-change": "damage.activation-legal",
    "start-triggers-after-the-flip": "damage.activation-legal",
    "damage-responses-refused-in-damage-step": "chain.legal-offered",
    "destroyer-triggers-after-calculation": "damage.activation-legal",
    "extra-attack-at-end-of-damage-step": "damage.activation-legal",
    # an omission: the second attack the resolved effect gave is not offered
    "extra-attack-ignored": "attack.legal-offered",
    "extra-attack-without-effect": "attack.offered-legal",
    "instead-ignored": "damage.destroyed-mark",
    # the monster was marked by damage calculation and the engine reports it unmarked at once
    "instead-at-damage-calculation": "damage.destroyed-mark",
    "opponent-summon-effects-in-damage-step": "damage.activation-legal",
    "destroyed-by-battle-triggers-need-graveyard": "damage.battle-gy-trigger",
    "destroyed-triggers-not-by-battle": "damage.battle-gy-trigger",
    # Steamroid's ATK does not change on entering the Damage Step
    "damage-step-boost-at-calculation-only": "acc.damage-step-continuous",
    "calculation-halving-ignored": "acc.battle-damage",
    # Blue-Eyes' ATK drops to 1500 on entering the Damage Step, which no card data of the board does
    "calculation-halving-from-damage-step-start": "acc.damage-step-continuous",
    "battle-damage-redirect-ignored": "acc.battle-damage",
    "battle-damage-redirect-every-battle": "acc.battle-damage",
    "battle-banish-ignored": "damage.banished-by-battle",
    "own-banish-ignored-by-battle": "damage.banished-by-battle",
    # Summoned Skull leaves the field at damage calculation, before the end of the Damage Step
    "battle-banish-at-calculation": "damage.destroyed-mark",
    "battle-negation-ignored": "damage.battle-gy-trigger",
    # the Battle Ox line: Mystic Tomato's trigger can resolve but is not pending
    "battle-negation-any-destroyer": "damage.battle-gy-trigger",
    # applied with no choice_made event: the calculation gives Gyroid destroyed
    "protection-without-choice": "acc.destroyed-by-battle",
    "protection-choice-ignored": "acc.destroyed-by-battle",
    # Scrap Shark, destroyed by battle, still on the field after Black Luster Soldier's activation
    "scrap-shark-spared-by-battle": "damage.destroyed-mark",
    "declaration-window-stays-open": "window.attack-declaration",
    "flip-effect-before-calculation": "damage.flip-after-calculation",
    "targets-destroyed-by-battle": "damage.no-destroyed-target",
    "equal-atk-destroys-one": "acc.destroyed-by-battle",
    "damage-to-wrong-player": "acc.battle-damage",
    "battle-phase-on-first-turn": "attack.no-battle-phase-turn-1",
    "set-card-activates-same-turn": "chain.not-set-this-turn",
    "controllers-graveyard": "acc.owner-piles",
    "fifo-chain": "chain.lifo",
    "direct-attack-past-monsters": "attack.direct-legal",
    # the engine's position_changed_this_turn disagrees with the change the action made, on the
    # state after the first change (before the second change is even offered)
    "position-changes-twice": "attack.position-change",
    "position-change-after-attack": "attack.position-change",
    # the End Step leads to the End Phase: both turn invariants see it; battle-steps sorts first
    "battle-phase-ends-the-turn": "turn.battle-steps",
    "skipped-battle-phase-has-main-phase-2": "turn.phase-order",
    "battle-phase-without-end-step": "turn.battle-steps",
    "end-step-without-priority": "priority.pass-pass",
    "ocg-start-step-under-tcg": "chain.legal-offered",
    # an omission: Skull Meister is not offered against Mystic Tomato's effect in the Damage Step
    "ocg-negate-effect-under-tcg": "chain.legal-offered",
    "equip-outlives-its-monster": "acc.continuous-target",
    "call-of-the-haunted-keeps-its-monster": "acc.linked-monster",
    # no bond recorded: the engine's linked_monster disagrees with the monitor's bond at once
    "call-of-the-haunted-forgets-its-monster": "acc.linked-monster",
    "damage-step-protection-lasts-the-turn": "damage.lingering-end",
    "calculation-boost-outlasts-calculation": "damage.lingering-end",
    # the Flip effect waits as a trigger for a monster the attack did not flip: both Flip
    # invariants see it; facedown-destroyed-flip sorts first
    "destroyed-face-down-flips": "damage.facedown-destroyed-flip",
    "destroyed-activation-is-negated": "chain.negate-vs-destroy",
    "negated-card-stays-on-the-field": "chain.negate-vs-destroy",
    "summon-window-stays-open": "window.summon",
    # omissions (issue 24): what the rules allow and the engine does not offer
    "summoned-monster-cannot-attack": "attack.legal-offered",
    "unattackable-monster-blocks-direct-attack": "attack.legal-offered",
    # the turn player's pass closes the declaration window: the opponent is never asked (the
    # engine's open_windows disagrees too, later in the same step: window.attack-declaration sorts after)
    "opponent-not-asked-after-declaration": "priority.pass-pass",
    "no-activation-after-declaration-window": "chain.legal-offered",
    "battle-phase-ends-only-when-no-attack-is-left": "turn.legal-offered",
    # Curse of Anubis activated in the Damage Step, where 002 refuses it by name
    "refused-by-ruling-in-damage-step": "damage.activation-legal",
    # Chthonian Blast, allowed in the Damage Step by ruling, not offered at its end: an omission
    "allowed-by-ruling-refused-in-damage-step": "chain.legal-offered",
    # the turn player's Chthonian Blast not offered after the opponent's destroyed Mokey Mokey: an omission
    "destroyed-window-only-by-battle": "chain.legal-offered",
}


def test_every_mutant_is_killed_by_its_pinned_invariant(tmp_path, run_cli):
    # the pins are the kills on each mutant's own seed board (the default order, cheapest board
    # first, may reach another killing board first: tests/test_jobs.py)
    out = tmp_path / "m.json"
    code, stdout, _ = run_cli("mutants", "--own-board-first", "--json", str(out))
    assert code == 0, stdout
    assert f"mutation score: {len(MUTANTS)}/{len(MUTANTS)} killed" in stdout
    rows = {r["mutant"]: r for r in json.loads(out.read_text())["mutants"]}
    assert set(rows) == set(KILLERS) == set(MUTANTS)
    for name, killer in KILLERS.items():
        assert rows[name]["status"] == "killed", name
        assert rows[name]["invariant"] == killer, (name, rows[name]["invariant"])
        assert rows[name]["length"] >= 1


def test_mutants_cover_every_invariant_family():
    assert len(MUTANTS) >= 15
    families = {REGISTRY[k].family for k in KILLERS.values()}
    assert families == {"turn structure", "attack counts", "replay", "damage step", "chains and windows", "accounting"}
    assert {m.family for m in MUTANTS.values()} == families


def test_each_mutant_board_is_a_seed_board_the_reference_passes(root):
    """The reference passes every seed board exhaustively (tests/test_perft.py), so each kill is
    the mutant's bug, not the board's."""
    pinned = json.loads((root / "tests" / "perft.json").read_text())
    for m in MUTANTS.values():
        assert m.board in pinned, m.name


def test_a_mutant_runs_as_an_engine(run_cli, root):
    code, stdout, _ = run_cli("check", str(root / "boards" / "000-replay-1.toml"), "--engine", "mutant:replay-resets-count")
    assert code == 1
    assert "replay.bookkeeping-kept" in stdout and "shortest trace (5 decisions, 9 steps)" in stdout
    code, _o, err = run_cli("check", str(root / "boards" / "000-replay-1.toml"), "--engine", "mutant:nope")
    assert code == 2 and "unknown mutant 'nope'" in err


def test_mutants_write_a_report(tmp_path, run_cli):
    out = tmp_path / "rep"
    code, stdout, _ = run_cli("mutants", "--only", "fifo-chain,replay-resets-count", "--report", str(out))
    assert code == 0, stdout
    index = (out / "index.html").read_text()
    assert "mutant:fifo-chain" in index and "mutant:replay-resets-count" in index
    junit = (out / "junit.xml").read_text()
    assert "chain.lifo" in junit and "replay.bookkeeping-kept" in junit
    svgs = sorted(p.name for p in (out / "counterexamples").glob("*.svg"))
    assert any("chain.lifo" in n for n in svgs)
