"""No noise on the bug-free core (issue 30 item 6): cards whose sweep findings on the unmodified
EDOPro scripts were bpcheck's own errors (docs/ocgcore-findings.md, F33) are swept again and must
come out clean. Each card stands for one class of error that was fixed:

- the profile reader: an older-worded Normal Trap read as a die roll plus a continuous effect
  ("Skull Dice", DS-ATK), responses to damage in the Damage Step ("Numinous Healer",
  "Interrupt Resistor", 002:63-64), a Pendulum Monster's activation as a Pendulum Scale read as its
  trigger ("Steel Cavalry of Dinon");
- the monitor: a battle ended by a battler leaving the field at the start of the Damage Step with
  no ``battle_ended_early`` event from the engine ("Ninja Grandmaster Sasuke", "SPYRAL GEAR -
  Drone");
- the sweep's boards: an empty Deck ended the duel when an effect drew ("Dark Mimic LV3"); and
  with a Deck, the adapter did not follow a draw (MSG_DRAW), so a drawn card moved again was an
  engine fault ("Allure of Darkness");
- the completeness and legality invariants: a card of a card database resolved an effect this turn
  (Misfortune: "You cannot conduct your Battle Phase"; Infected Mail: "it can attack your opponent
  directly"), or its text changes the attack rules ("Buster Gundil": a second and third attack),
  which bpcheck does not model: "not judged" (history db_resolved, view.ATTACK_RULE_TEXT; F28);
- the adapter: a position changed by an effect with no chain open (Photon Crusher at the end of the
  Damage Step, Level Limit - Area B's continuous effect) was reported as a manual change; only the
  change of the monster a "change position" action names is manual now;
- the adapter: the Damage-Step sub-steps read from the chain prompts' timing hints only ("before
  damage calculation" named the start of the Damage Step: Kabuki Dragon, Performapal Odd-Eyes
  Minitaurus); the core's HINT_EVENT names each window;
- the window invariant: an Ignition effect whose text names the Battle Phase ("Once per turn, during
  your Battle Phase (except during the Damage Step)": Performapal Turn Toad) judged by Spell Speed
  1's Main Phase alone;
- the adapter and damage.destroyed-mark: a destruction replacement ("If it would be destroyed by
  battle, you can destroy this card instead": Fighting Spirit, Power of the Guardians), a card
  script's SELECT_EFFECTYN, was offered as an activation, and the mark that follows its refusal,
  still in the calculation's sub-step, was judged "not by damage calculation";
- the adapter: LP set by an effect (the core's MSG_LPUPDATE, Duel.SetLP: Michion, the Timelord,
  Psychic Fervor) had no event; it is ``lp_lost`` (or ``lp_gained``) by the change the tracker
  computes from the LP messages before it;
- the chain invariants: a Spell Speed 1 activation demanded in the core's response window before its
  idle command (Chaos Sorcerer, F25), a trigger's new chain read as links of the chain that had just
  resolved (The Winged Dragon of Ra - Immortal Phoenix);
- the battle-damage texts the profile reader did not compute (acc.battle-damage read the core's
  right damage as wrong): "they gain that much LP, instead" (Muscle Medic, computed: BD-GAIN), "Once
  per turn, if you would take battle or effect damage, you take no damage" (Secure Gardna: not
  judged, whether it was used this turn), a piercing bullet granted by the card's own Summon
  procedure (Familiar-Possessed - Hiita: not judged, whether it was Summoned that way);
- the adapter: declarations the core asks for (ANNOUNCE_NUMBER, ANNOUNCE_RACE, ANNOUNCE_ATTRIB:
  "Vampire Fraulein", "The Regulation of Tribe", "Archnemesys Protos"; ANNOUNCE_CARD: "Cloak and
  Dagger") were engine faults;
- the adapter: a die or a coin (Fire Darts, Number 7: Lucky Straight, BIG Win!?, Gatling Dragon)
  drawn from the core's random number generator, which a reset duel does not reseed: a path
  replayed on a duel used before rolled other numbers than its first play, so the LP observed
  after it matched no event, and a recorded answer could be one the core refused (MSG_RETRY); a
  path on which the core drew a random number is replayed on a new duel only;
- the adapter: the core keeps a negative LP after lethal battle damage (Lunalight Leo Dancer,
  Phantasmal Lord Ultimitl Bishbaalkin; Armityle the Chaos Phantom below), which the observation
  showed; a player's LP stop at 0 (LP-ZERO), the damage event keeps the amount dealt;
- the adapter: a card script's own Lua state (Concentrating Current's attack counters, the
  ``global_check`` flag of aux.GlobalCheck, whose global effects were then not registered again)
  survived the reset of a reused duel, so a recorded answer could be one the core refused
  (MSG_RETRY); every card script is loaded afresh at each reset;
- the adapter: rock-paper-scissors (Transmission Gear, MSG_ROCK_PAPER_SCISSORS) was an engine
  fault; each player's hand is a choice of that player, a tie the core plays again left out;
- the adapter: a monster Special Summoned with others one at a time (Number 42: Galaxy Tomahawk's
  Tokens, Rescue Rabbit) was reported not Summoned this turn until the last was placed, and a
  Normal Summon an effect performs (Harpie Dancer, MSG_SUMMONING) had no ``summoned`` event;
- the adapter (issue 30's last refusals): a Standby Phase trigger or maintenance cost before the
  board's Main Phase 1 refused the board ("Lava Golem", "The Regulation of Tribe", "Jam Breeding
  Machine", whose Token the board does not place); a board monster under its non-owner's control
  was handed back by the core (SELECT_PLACE refused the board); Creature Swap's MSG_SWAP crashed
  the tracker, and a control change was a move between Monster Zones.

Without the core and the full database every test here skips and says which path was missing
(unless BPCHECK_REQUIRE_OCGCORE=1, where that fails), as tests/test_sweep.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bpcheck.cli.main import main
from bpcheck.engines.ocgcore import default_paths
from bpcheck.engines.ocgcore import messages as M
from bpcheck.engines.ocgcore.engine import OcgcoreEngine
from bpcheck.engines.registry import make_engine
from bpcheck.harness.board_writer import write_board
from bpcheck.harness.sweep import board_document, xyz_materials
from bpcheck.invariants.profiled import window_verdict
from bpcheck.model.board import load_board
from bpcheck.model.cdb import open_db
from bpcheck.model.profile import profile

LIB, SCRIPTS, CARDS = default_paths()
FULL = os.path.join(os.path.dirname(CARDS), "cards-full.cdb")
MISSING = [p for p in (LIB, SCRIPTS, CARDS, FULL) if not os.path.exists(p)]
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"
pytestmark = pytest.mark.skipif(
    bool(MISSING) and not REQUIRED,
    reason=f"the EDOPro core or the full card database is not available: {', '.join(MISSING)} not found (set OCGCORE, OCG_SCRIPTS, OCG_CARDS beside cards-full.cdb)",
)

# passcode: (name, what the sweep said before the fix)
FIXED = {
    126218: ("Skull Dice", "profile.damage-step-offered [not-allowed-in-sub-step]"),
    21900719: ("Twin Swords of Flashing Light - Tryce", "attack.count [second-attack], attack.offered-legal [no-attack-left] ('it can make a second attack': F28 did not reach the counts)"),
    19590644: ("Setuppercut", "profile.damage-step-offered [not-allowed-in-sub-step] (a Trap 'When a monster you control is destroyed by battle': 002:186)"),
    18271561: ("Chthonian Blast", "profile.damage-step-offered [not-allowed-in-sub-step] ('destroyed and sent to the Graveyard': 002:73, 190)"),
    11845050: ("Right-Hand Shark", "acc.destroyed-by-battle [destroyed-differs] ('Cannot be destroyed by battle' granted to an Xyz Monster read as its own)"),
    16259549: ("Number 49: Fortune Tune", "acc.destroyed-by-battle [destroyed-differs] ('would be destroyed, you can detach 1 Xyz Material ... instead' not read)"),
    21970285: ("Dragon Horn Hunter", "acc.battle-damage [damage-differs] (a Pendulum Effect's 'you take no battle damage' from the Pendulum Zone)"),
    10443957: ("Cyber Dragon Infinity", "chain.negate-vs-destroy [negated-resolves-as-not] (its Quick Effect negates its own first link: two links of one card told apart by the card only)"),
    37053871: ("Astral Barrier", "attack.when [chain-open] ('make the attack a direct attack instead': an attack an effect performs, not judged)"),
    19619755: ("Performapal Five-Rainbow Magician", "attack.legal-offered [attack-not-offered] (its Pendulum Effect 'cannot attack' from a Pendulum Zone)"),
    32391631: ("Savage Colosseum", "turn.legal-offered [choice-not-offered] ('must attack': skipping the Battle Phase)"),
    15305240: ("Creature Seizure", "ENGINE-FAULT (crash: UnboundLocalError in the tracker's MSG_SWAP, a control switch)"),
    2130625: ("Numinous Healer", "profile.damage-step-offered [not-allowed-in-sub-step]"),
    2414168: ("Interrupt Resistor", "profile.damage-step-offered [not-allowed-in-sub-step]"),
    3701074: ("Dark Cure", "profile.withheld [withheld-elsewhere-offered] (read as an ATK change: 'gain Life Points equal to half the ATK')"),
    2396042: ("Steel Cavalry of Dinon", "profile.trigger-event [trigger-without-event]"),
    4041838: ("Ninja Grandmaster Sasuke", "damage.substep-order [calculation-skipped]"),
    1102515: ("Dark Mimic LV3", "acc.duel-over [over-without-zero-lp]"),
    6039967: ("Vampire Fraulein", "ENGINE-FAULT (ANNOUNCE_NUMBER), chain.lifo [engine-chain-differs]"),
    1036974: ("Misfortune", "attack.legal-offered [attack-not-offered] (its resolved effect: no Battle Phase)"),
    12836042: ("Missing Force", "turn.legal-offered [choice-not-offered]"),
    6430659: ("Infected Mail", "attack.direct-legal [direct-past-monsters] (its resolved effect: a direct attack)"),
    4998619: ("Buster Gundil the Cubic Behemoth", "attack.target-once [declared-at-same-monster-again] (a second and third attack)"),
    1475311: ("Allure of Darkness", "ENGINE-FAULT (the adapter lost the drawn cards: MSG_DRAW was not followed)"),
    296499: ("The Regulation of Tribe", "ENGINE-FAULT (ANNOUNCE_RACE), chain.lifo [engine-chain-differs]"),
    6728559: ("Archnemesys Protos", "ENGINE-FAULT (ANNOUNCE_ATTRIB), chain.lifo [engine-chain-differs]"),
    1362589: ("Photon Crusher", "attack.position-change-applied [changed-by-other-action] (its own change at the end of the Damage Step)"),
    4239451: ("Performapal Turn Toad", "profile.window-offered [outside-window] (an Ignition effect 'during your Battle Phase')"),
    1118137: ("Power of the Guardians", "damage.destroyed-mark [marked-outside-calculation] (a destruction replacement declined)"),
    6178850: ("Fighting Spirit", "damage.destroyed-mark [marked-outside-calculation], profile.damage-step-offered (its replacement offered as an activation)"),
    7733560: ("Michion, the Timelord", "acc.lp-ledger [lp-unaccounted] (Duel.SetLP: 'Halve your opponent's LP')"),
    26773909: ("Psychic Fervor", "acc.lp-ledger [lp-unaccounted] (Duel.SetLP: 'you lose LP equal to its ATK')"),
    9596126: ("Chaos Sorcerer", "chain.legal-offered [activation-not-offered] (its Ignition effect in the core's response window)"),
    10000090: ("The Winged Dragon of Ra - Immortal Phoenix", "chain.lifo [resolution-order] (a new chain right after one resolved)"),
    7541475: ("Kabuki Dragon", "profile.damage-step-offered [not-allowed-in-sub-step] (before damage calculation named the start of the Damage Step)"),
    10731333: ("Performapal Odd-Eyes Minitaurus", "profile.damage-step-offered [not-allowed-in-sub-step] (during damage calculation named the start)"),
    2220237: ("Secure Gardna", "acc.battle-damage [damage-differs] ('Once per turn, if you would take battle or effect damage, you take no damage' not read)"),
    4376658: ("Familiar-Possessed - Hiita", "acc.battle-damage [damage-differs] (piercing granted 'If you do' read as always on)"),
    4848423: ("Muscle Medic", "acc.battle-damage [damage-differs] ('they gain that much LP, instead' not read)"),
    21770260: ("Jam Breeding Machine", "refused (SELECT_CHAIN before Main Phase 1); then attack.position-change [engine-summoned-flag-differs] (its Standby Phase Token)"),
    3136426: ("Level Limit - Area B", "attack.position-change-applied [change-not-recorded], [changed-by-other-action] (a continuous effect's change)"),
    43061293: ("Fire Darts", "acc.lp-ledger [lp-unaccounted] (dice: a replay on a reused duel rolled other numbers)"),
    82308875: ("Number 7: Lucky Straight", "acc.lp-ledger [lp-unaccounted] (dice, as Fire Darts)"),
    84677654: ("BIG Win!?", "acc.lp-ledger [lp-unaccounted] (dice, as Fire Darts)"),
    24550676: ("Lunalight Leo Dancer", "acc.lp-ledger [lp-unaccounted] (the core's LP below 0 after lethal battle damage, passed on)"),
    90884403: ("Phantasmal Lord Ultimitl Bishbaalkin", "acc.lp-ledger [lp-unaccounted] (LP below 0, as Lunalight Leo Dancer)"),
    20501450: ("Concentrating Current", "ENGINE-FAULT (MSG_RETRY: its script's attack counters, Lua globals, survived the reset of a reused duel)"),
    58297729: ("Transmission Gear", "ENGINE-FAULT (the core asks ROCK_PAPER_SCISSORS, which the adapter could not answer)"),
    10389142: ("Number 42: Galaxy Tomahawk", "attack.position-change [engine-summoned-flag-differs] (its first Token reported not Summoned while the second's position was asked)"),
    85138716: ("Rescue Rabbit", "attack.position-change [engine-summoned-flag-differs] (as Number 42: two monsters Special Summoned one at a time)"),
    68815132: ("Harpie Dancer", "attack.position-change [engine-summoned-flag-differs] (its effect's Normal Summon, MSG_SUMMONING, had no summoned event)"),
    87751584: ("Gatling Dragon", "acc.lp-ledger [lp-unaccounted], ENGINE-FAULT (MSG_RETRY: coins tossed again on a reused duel came out otherwise, the recorded answer no longer fit)"),
    60912752: ("D.D. Borderline", "turn.legal-offered [choice-not-offered] ('neither player can conduct their Battle Phase': the attack-rule words knew only 'cannot conduct')"),
    31833038: ("Borreload Dragon", "damage.substep-order [calculation-skipped] (it takes control of the attack target at the start of the Damage Step: the battle ends, DS-BATTLER-LEAVES)"),
    59170782: ("Mermail Abysstrite", "attack.count [second-attack], attack.target-once, attack.when [chain-open] ('that attack/effect now targets this card': the attack-rule words knew only 'change the attack target')"),
    29400787: ("Ghostrick Parade", "acc.battle-damage [damage-differs] ('Your opponent takes no damage.' was not read as a battle modification)"),
    39618799: ("Cyber Angel Dakini", "acc.battle-damage [damage-differs] ('If a Ritual Monster you control attacks': piercing computed for monsters of the Type 'Ritual')"),
    75524092: ("Vicious Claw", "acc.battle-damage [damage-without-calculation] (its destruction replacement's 600 effect damage, dealt in damage calculation after the battle damage, reported as battle damage)"),
    14258627: ("Gaia Plate the Earth Giant", "acc.battle-damage [attacker-atk-differs], acc.damage-step-continuous [atk-differs] (the core shows the calculation-only halving in the damage calculation sub-step's observation; the invariants halved the shown ATK again)"),
    15552258: ("Half or Nothing", "acc.damage-step-continuous [atk-differs] (its 'until the end of the Battle Phase' halving ended on leaving the Battle Phase, which the core does not announce)"),
    17874674: ("Seal of Wickedness", "acc.continuous-target [bound-to-card-off-field] (it keeps 'a face-up card on the field', itself: a card in a Spell & Trap Zone is on the field)"),
    12117532: ("Shattered Axe", "internal error, exit 4 (the monitor's battle_negated / battle_banish histories asked whether a card-database Equip Card negates its monster, which its data cannot say: now 'unknown' there, never a crash)"),
}


def test_the_fixed_classes_of_noise_stay_fixed(tmp_path: Path) -> None:
    out = tmp_path / "noise.json"
    rc = main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), "--max-states", "600",
               *map(str, FIXED)])
    doc = json.loads(out.read_text(encoding="utf-8"))
    by_code = {c["code"]: c for c in doc["cards"]}
    assert set(by_code) == set(FIXED)
    for code, (name, before) in FIXED.items():
        c = by_code[code]
        assert c["name"] == name
        assert c["played"] > 0, (name, c["refused"])
        assert c["findings"] == [], (name, before, [(f["invariant"], f["signature"], f["message"]) for f in c["findings"]])
    assert rc == 0


def test_a_declaration_is_an_action_named_by_what_is_declared(tmp_path: Path) -> None:
    """Vampire Fraulein's LP cost is declared in hundreds (ANNOUNCE_NUMBER): the adapter offers one
    activation per amount, each named by it, instead of an engine fault."""
    card = open_db(FULL).card(6039967)
    path = write_board(board_document(card, "attacked"), tmp_path / "fraulein.toml")
    eng = make_engine("ocgcore", cards_db=FULL)
    state = eng.start(load_board(str(path), cards_db=FULL))
    labels: list[str] = []
    for _ in range(40):  # enter the Battle Phase, attack Fraulein, pass until she is offered
        actions = {a.label: a for a in eng.legal_actions(state)}
        labels = list(actions)
        if any(x.startswith("activate Vampire Fraulein") for x in labels):
            break
        pick = next((x for x in ("enter Battle Phase", "attack Battle Ox [P1 M1] -> Vampire Fraulein", "pass") if x in actions), None)
        assert pick is not None, labels
        state = eng.apply(state, actions[pick])[0]
    declared = sorted(x for x in labels if x.startswith("activate Vampire Fraulein"))
    assert declared, sorted(labels)
    assert all(" (declare " in x for x in declared), declared
    assert len(declared) > 1  # one action per amount the core lists


def _steps_offered(tmp_path: Path, code: int, situation: str, attack: str, card: str) -> set[str]:
    """The steps in which the core offers `card`'s activation on the sweep's `situation` board, the
    attack `attack` declared and every other decision a pass (the activation declined)."""
    doc = board_document(open_db(FULL).card(code), situation)
    path = write_board(doc, tmp_path / f"{code}-{situation}.toml")
    eng = make_engine("ocgcore", cards_db=FULL)
    state = eng.start(load_board(str(path), cards_db=FULL))
    steps: set[str] = set()
    for _ in range(60):
        if eng.is_terminal(state):
            break
        obs = eng.observe(state)
        actions = {a.label: a for a in eng.legal_actions(state)}
        if any(x.startswith(f"activate {card}") for x in actions):
            steps.add(obs["step"])
        if obs["step"] == "main2":
            break
        pick = next((x for x in ("enter Battle Phase", attack, "pass", f"decline {card}", "end Battle Phase") if x in actions), None)
        assert pick is not None, sorted(actions)
        state = eng.apply(state, actions[pick])[0]
    return steps


def test_the_damage_step_sub_step_is_the_one_the_core_announces(tmp_path: Path) -> None:
    """The core names each Damage-Step window with a MSG_HINT (HINT_EVENT 40-44); the adapter read
    only the chain prompts' timing hints, so "before damage calculation" (Kabuki Dragon) was
    damage_step_start and "After damage calculation" (D.D. Warrior Lady's trigger, offered on its own)
    was damage_step_during_calculation (F33): each is offered in the sub-step its text names."""
    assert _steps_offered(tmp_path, 7541475, "attacker", "attack Kabuki Dragon -> Mokey Mokey [P2 M1]",
                          "Kabuki Dragon") == {"damage_step_before_calculation"}
    assert _steps_offered(tmp_path, 7572887, "attacked", "attack Battle Ox [P1 M1] -> D.D. Warrior Lady",
                          "D.D. Warrior Lady") == {"damage_step_after_calculation_1"}
    assert _steps_offered(tmp_path, 10731333, "attacker", "attack Performapal Odd-Eyes Minitaurus -> Mokey Mokey [P2 M1]",
                          "Performapal Odd-Eyes Minitaurus") == {"damage_step_during_calculation"}


def test_an_ignition_effect_that_names_the_battle_phase_is_allowed_there_only() -> None:
    """Performapal Turn Toad's monster effect: "Once per turn, during your Battle Phase (except during
    the Damage Step): You can target 1 monster you control; ..." (Spell Speed 1, CH-SPEED1 with the
    window its text names)."""
    prof = profile(open_db(FULL).card(4239451))
    scale, monster = prof.effects[:2]
    assert (scale.section, monster.section) == ("pendulum", "monster")
    assert monster.windows.value and "battle_phase" in monster.windows.value

    def verdict(e, step, player=0, chain_open=False):
        return window_verdict(e, {"turn_player": 0, "step": step, "attack": None}, player, chain_open)[0]

    assert verdict(monster, "battle_start_step") is True
    assert verdict(monster, "battle_step") is True
    assert verdict(monster, "battle_step", chain_open=True) is False  # Spell Speed 1: an empty chain
    assert verdict(monster, "battle_step", player=1) is False  # "your Battle Phase": the turn player's
    assert verdict(monster, "damage_step_start") is False  # "except during the Damage Step"
    assert verdict(monster, "main1") is False  # its text names the Battle Phase only
    assert verdict(scale, "main1") is True
    assert verdict(scale, "battle_step") is False  # the Pendulum Effect names no window: Main Phase only


def test_a_destruction_replacement_is_a_choice_not_an_activation(tmp_path: Path) -> None:
    """Fighting Spirit: "If it would be destroyed by battle, you can destroy this card instead." The
    core asks the script's question (SELECT_EFFECTYN, string 96) after damage calculation: a choice."""
    path = write_board(board_document(open_db(FULL).card(6178850), "face-up-opponent"), tmp_path / "spirit.toml")
    eng = make_engine("ocgcore", cards_db=FULL)
    state = eng.start(load_board(str(path), cards_db=FULL))
    offered: list[tuple[str, str, str]] = []
    for _ in range(60):
        if eng.is_terminal(state):
            break
        obs = eng.observe(state)
        actions = {a.label: a for a in eng.legal_actions(state)}
        offered += [(obs["step"], a.kind, x) for x, a in actions.items() if "Fighting Spirit" in x]
        if obs["step"] == "main2":
            break
        pick = next((x for x in ("enter Battle Phase", "attack Battle Ox [P1 M1] -> Mokey Mokey [P2 M1]", "pass", "choose no: Fighting Spirit",
                                 "end Battle Phase") if x in actions), None)
        assert pick is not None, sorted(actions)
        state = eng.apply(state, actions[pick])[0]
    assert sorted(offered) == [("damage_step_during_calculation", "choose", "choose no: Fighting Spirit"),
                               ("damage_step_during_calculation", "choose", "choose yes: Fighting Spirit")], offered


def test_lp_set_by_an_effect_is_an_lp_lost_event(tmp_path: Path) -> None:
    """Psychic Fervor: "you lose LP equal to its ATK" (Duel.SetLP): an ``lp_lost`` event of that
    amount, naming the card, and the LP the core then reports match it."""
    path = write_board(board_document(open_db(FULL).card(26773909), "set-own"), tmp_path / "fervor.toml")
    eng = make_engine("ocgcore", cards_db=FULL)
    state = eng.start(load_board(str(path), cards_db=FULL))
    lost = []
    for _ in range(60):
        if eng.is_terminal(state) or lost:
            break
        actions = {a.label: a for a in eng.legal_actions(state)}
        pick = next((x for x in sorted(actions) if x.startswith("activate Psychic Fervor")), None)
        pick = pick or next((x for x in ("enter Battle Phase", "pass") if x in actions), None)
        assert pick is not None, sorted(actions)
        before = eng.observe(state)
        state, events = eng.apply(state, actions[pick])[:2]
        lost = [e for e in events if e.kind == "lp_lost"]
    assert [(e["player"], e["card"]) for e in lost] == [(0, "Psychic Fervor")], lost
    after = eng.observe(state)
    assert after["players"][0]["lp"] == before["players"][0]["lp"] - lost[0]["amount"] and lost[0]["amount"] > 0


def _start(tmp_path: Path, code: int, situation: str):
    path = write_board(board_document(open_db(FULL).card(code), situation), tmp_path / f"{code}-{situation}.toml")
    eng = make_engine("ocgcore", cards_db=FULL)
    return eng, eng.start(load_board(str(path), cards_db=FULL))


def test_the_turn_start_is_played_through_in_a_fixed_way(tmp_path: Path) -> None:
    """Standby Phase triggers before the board's Main Phase 1 (issue 30: "the core asks SELECT_CHAIN
    before the board's Main Phase 1" refused the board). Lava Golem's mandatory "during your Standby
    Phase: Take 1000 damage" is activated (a forced SELECT_CHAIN); The Regulation of Tribe's
    maintenance ("Tribute 1 monster ... If you do not, this card is destroyed", SELECT_YESNO) is
    answered yes, the first monster Tributed, so the card stays where the board puts it. Both boards
    start in Main Phase 1, the same way every time."""
    eng, state = _start(tmp_path, 102380, "attacker")
    obs = eng.observe(state)
    assert obs["step"] == "main1"
    assert [p["lp"] for p in obs["players"]] == [7000, 8000]  # the trigger resolved: 1000 damage to P1
    assert obs["players"][0]["monsters"][0]["card"] == "Lava Golem"
    again = make_engine("ocgcore", cards_db=FULL).start(load_board(str(tmp_path / "102380-attacker.toml"), cards_db=FULL))
    assert again.path == state.path and len(state.path) > 2  # the answers are part of the path, and fixed

    eng, state = _start(tmp_path, 296499, "face-up-own")
    obs = eng.observe(state)
    assert obs["step"] == "main1"
    assert obs["players"][0]["spells"][0]["card"] == "The Regulation of Tribe"
    assert obs["players"][0]["monsters"] == [None] * 5
    assert [c["card"] for c in obs["players"][0]["graveyard"]] == ["Battle Ox"]  # Tributed for the maintenance


def test_a_declared_card_name_is_a_choice_among_the_duels_cards(tmp_path: Path) -> None:
    """Cloak and Dagger: "Declare 1 Monster Card name" (MSG_ANNOUNCE_CARD, filter TYPE_MONSTER
    OPCODE_ISTYPE) was an engine fault. It is a choice: every monster of the duel, then the first
    monster of the database outside it (Ten Thousand Dragon, passcode 10000), named by the card
    declared; the trap itself is not offered. The adapter's reading of the filter agrees with the
    core's own: every card it offers is accepted, and of a sample of the database, the core accepts
    exactly the cards the adapter's filter accepts (it answers any other with MSG_RETRY)."""
    eng, state = _start(tmp_path, 8323633, "set-own")
    for label in ("activate Cloak and Dagger", "pass", "pass"):
        state = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}[label])[0]
    labels = sorted(a.label for a in eng.legal_actions(state))
    assert labels == ["declare Battle Ox", "declare Mokey Mokey", "declare Ten Thousand Dragon"], labels
    after = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}["declare Mokey Mokey"])[0]
    assert eng.observe(after)["step"] == "main1" and not eng.is_terminal(after)

    opcodes = list(state.prompt.options)
    cards = eng._cards
    sample = sorted(cards.rows)[::400] + [8323633, 5053103]
    accepted, adapter = [], []
    for code in sample:
        alias, setcode, typ, _lv, attr, race = cards.rows[code][:6]
        sets = [(setcode >> (16 * i)) & 0xFFFF for i in range(4) if (setcode >> (16 * i)) & 0xFFFF]
        adapter.append(M.declarable(code, alias, sets, typ, race, attr, opcodes))
        duel = eng._take(state.path)
        duel.respond(M.card_response(code))
        duel.process()
        accepted.append(not any(kind == M.MSG_RETRY for kind, _p in duel.messages()))
        duel.close()
    assert accepted == adapter, [(c, a, b) for c, a, b in zip(sample, accepted, adapter) if a != b]
    assert 0 < sum(accepted) < len(sample)  # the sample holds both kinds


BORROWED = """name = "borrowed"
description = "P1 controls P2's Mokey Mokey"
turn = 2
turn_player = 1

[p1]
lp = 8000
monsters = [
  { zone = 1, card = "Battle Ox", position = "attack" },
  { zone = 3, card = "Mokey Mokey", position = "attack", owner = 2 },
]

[p2]
lp = 8000
monsters = [{ zone = 2, card = "Gene-Warped Warwolf", position = "attack" }]
"""


def test_a_monster_under_its_non_owners_control_stays_where_the_board_puts_it(tmp_path: Path) -> None:
    """A board monster controlled by its non-owner: the core gave it back to its owner before Main
    Phase 1 (no effect gave the control) and asked the owner for a zone (SELECT_PLACE), which
    refused the board. The puzzle now gives it the core's own permanent control effect: it starts
    in Main Phase 1 where the board puts it, with its owner, and no zone is asked."""
    path = tmp_path / "borrowed.toml"
    path.write_text(BORROWED, encoding="utf-8")
    eng = make_engine("ocgcore", cards_db=FULL)
    state = eng.start(load_board(str(path), cards_db=FULL))
    obs = eng.observe(state)
    assert obs["step"] == "main1" and state.path == ()
    mon = obs["players"][0]["monsters"][2]
    assert (mon["card"], mon["owner"]) == ("Mokey Mokey", 1)
    assert [m and m["card"] for m in obs["players"][1]["monsters"]] == [None, "Gene-Warped Warwolf", None, None, None]


def test_a_control_change_is_control_changed_not_a_move(tmp_path: Path) -> None:
    """Creature Swap ("Each player selects 1 monster they control and switches control of those
    monsters"): the core's MSG_SWAP crashed the tracker (a stray `del`), and a monster taken over
    was a card_moved from the Monster Zone to the Monster Zone, as if it left the field; each is
    now the model's control_changed, and the monsters stand on their new sides."""
    eng, state = _start(tmp_path, 31036355, "set-own")
    for label in ("activate Creature Swap", "pass", "pass", "choose Battle Ox [P1 M1]"):
        state = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}[label])[0]
    state, events = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}["choose Mokey Mokey [P2 M1]"])[:2]
    changed = [(e["card"], e["from_player"], e["to_player"]) for e in events if e.kind == "control_changed"]
    assert changed == [("Battle Ox", 0, 1), ("Mokey Mokey", 1, 0)], events
    assert not [e for e in events if e.kind == "card_moved" and e.get("from") == "monster_zone"]
    obs = eng.observe(state)
    assert (obs["players"][0]["monsters"][0]["card"], obs["players"][0]["monsters"][0]["owner"]) == ("Mokey Mokey", 1)
    assert (obs["players"][1]["monsters"][0]["card"], obs["players"][1]["monsters"][0]["owner"]) == ("Battle Ox", 0)


# F36 (docs/ocgcore-findings.md): acc.destroyed-by-battle [destroyed-differs] on protection texts the
# battle-modification reader did not read. passcode: (name, how it is judged now)
PROTECTION_TEXTS = {
    27618634: ("The Unhappy Girl", "read: 'While this card is in face-up Attack Position ..., this card is not destroyed as a result of battle'"),
    85684223: ("Reaper on the Nightmare", "read: 'This card is not destroyed as a result of battle'"),
    31053337: ("Blackwing - Abrolhos the Megaquake", "read: 'This card cannot destroy monsters by battle' (BD-CANNOT-DESTROY)"),
    64801562: ("Heart of Clear Water", "read: an Equip Card's 'The monster equipped with this card is not destroyed as a result of battle'"),
    34475451: ("Construction Train Signal Red", "not judged: 'cannot be destroyed by that battle', read as it arrives in the transition"),
    50185950: ("Relinkuriboh", "not judged: a replacement that acts from the GY"),
    43378048: ("Armityle the Chaos Phantom", "the battle damage ended the duel before the destruction (LP-ZERO)"),
    51788412: ("Chaos Ancient Gear Giant", "the battle damage ended the duel before the destruction (LP-ZERO)"),
}
NOT_JUDGED_HERE = {34475451, 50185950}
# acc.lp-ledger [lp-unaccounted] was left for these two (class A in F36: the core's negative LP passed on;
# adapterA30 floors the observation's LP at 0): at most that finding, none expected
LP_BELOW_ZERO = {43378048, 51788412}


def test_protection_texts_are_read_or_not_judged(tmp_path: Path) -> None:
    out = tmp_path / "protection.json"
    main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), "--max-states", "600",
          *map(str, PROTECTION_TEXTS)])
    doc = json.loads(out.read_text(encoding="utf-8"))
    by_code = {c["code"]: c for c in doc["cards"]}
    assert set(by_code) == set(PROTECTION_TEXTS)
    for code, (name, how) in PROTECTION_TEXTS.items():
        c = by_code[code]
        assert c["name"] == name and c["played"] > 0, (name, c["refused"])
        found = [(f["invariant"], f["signature"], f["message"]) for f in c["findings"]]
        assert not [f for f in found if f[0] == "acc.destroyed-by-battle"], (name, how, found)
        if code in LP_BELOW_ZERO:
            assert {f[0] for f in found} <= {"acc.lp-ledger"}, (name, found)
        else:
            assert found == [], (name, how, found)
        if code in NOT_JUDGED_HERE:  # (the two it cannot compute: not judged by it, never passed)
            assert "acc.destroyed-by-battle" in c["not_judged_by"], (name, c["not_judged_by"])


# F36: profile.withheld [withheld-elsewhere-offered] where the reader read an ATK/DEF change as a
# direct one (DS-ATK, DS-CONT-TRAP) though it is conditional, one effect to choose from, applied for
# the rest of the turn to a kind of monster, or an LP gain "by the ATK". passcode: (name, verdict now)
ATK_NOT_DIRECT = {
    10282757: ("Planckton", "not judged"),  # DS-ATK-LINGERING
    13955608: ("Stronghold the Moving Fortress", "not judged"),  # DS-ATK-CONDITIONAL ("While you control ...")
    43959432: ("Metamorphortress", "not judged"),  # DS-ATK-CONDITIONAL ("If Summoned this way, ...")
    71934924: ("Swift Samurai Storm!", "not judged"),  # DS-ATK-CONDITIONAL ("Each turn, after the first time ...")
    74640994: ("Subterror Final Battle", "not judged"),  # DS-ATK-MODAL ("Activate 1 of these effects")
    96355986: ("Enchanted Javelin", "clean"),  # "Increase your Life Points by the ATK ...": no ATK change (DS-NOT-LISTED)
}


def test_atk_changes_that_are_not_direct_are_not_read_as_direct(tmp_path: Path) -> None:
    out = tmp_path / "atk.json"
    main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), "--max-states", "600",
          *map(str, ATK_NOT_DIRECT)])
    by_code = {c["code"]: c for c in json.loads(out.read_text(encoding="utf-8"))["cards"]}
    assert set(by_code) == set(ATK_NOT_DIRECT)
    for code, (name, verdict) in ATK_NOT_DIRECT.items():
        c = by_code[code]
        assert c["name"] == name and c["played"] > 0, (name, c["refused"])
        assert c["findings"] == [], (name, [(f["invariant"], f["signature"], f["message"]) for f in c["findings"]])
        assert c["verdict"] == verdict, (name, c["verdict"], c["profile_unknown"])
        if verdict == "not judged":  # (the reason: its activation's Damage Step decision is unknown)
            assert c["profile_unknown"] == ["effect 0: damage_step"], (name, c["profile_unknown"])


# F36: acc.duel-over [over-without-zero-lp]: an effect made a player draw more than the sweep's
# 3-card Deck held, and the core ended the duel (DECK-OUT, 004 "Draw Phase"); the invariant knew
# only LP. Both players drawing their Decks empty at once (Morphing Jar, Fiber Jar): not judged.
# Mirage of Nightmare (run F) draws "until you have 4 cards" in the Standby Phase the board starts
# in: the core ended the duel before the board's first state, which the monitor never saw: not judged.
DECK_OUT = {
    41482598: ("Mirage of Nightmare", True),
    33508719: ("Morphing Jar", True),
    78706415: ("Fiber Jar", True),
    76862289: ("Yamata Dragon", False),
    77379481: ("Sasuke Samurai #3", False),
}


def test_a_duel_ended_by_drawing_from_an_empty_deck_is_no_finding(tmp_path: Path) -> None:
    out = tmp_path / "deck-out.json"
    main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), "--max-states", "600", *map(str, DECK_OUT)])
    by_code = {c["code"]: c for c in json.loads(out.read_text(encoding="utf-8"))["cards"]}
    assert set(by_code) == set(DECK_OUT)
    for code, (name, both) in DECK_OUT.items():
        c = by_code[code]
        assert c["name"] == name and c["played"] > 0, (name, c["refused"])
        assert c["findings"] == [], (name, [(f["invariant"], f["signature"], f["message"]) for f in c["findings"]])
        assert ("acc.duel-over" in c["not_judged_by"]) == both, (name, c["not_judged_by"])


def test_an_ignition_effect_choosing_one_of_these_effects_is_no_trigger(tmp_path: Path) -> None:
    """F36 profile.trigger-event [trigger-without-event]: Storm Shooter's "Once per turn, you can
    select and activate 1 of these effects" was read as a trigger on an activation; it is an
    Ignition effect, and the card sweeps clean."""
    out = tmp_path / "storm.json"
    main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), "--max-states", "600", "39188539"])
    (c,) = json.loads(out.read_text(encoding="utf-8"))["cards"]
    assert c["name"] == "Storm Shooter" and c["played"] > 0 and c["verdict"] == "clean", (c["verdict"], c["findings"], c["profile_unknown"])


def test_a_replay_after_a_card_made_attacks_direct_is_not_judged(tmp_path: Path) -> None:
    """F36 attack.legal-offered [replay-choice-not-offered], replay.choices [direct-not-legal]:
    Absolute End ("This turn, the attacks from your opponent's monsters become direct attacks")
    resolved, and the replay's choices (a direct attack only) were judged by the rules bpcheck
    models; F28's "not judged" (a card of a card database resolved this turn) now reaches the
    replay's choices too."""
    out = tmp_path / "absolute-end.json"
    main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), "--max-states", "600", "27744077"])
    (c,) = json.loads(out.read_text(encoding="utf-8"))["cards"]
    assert c["name"] == "Absolute End" and c["played"] > 0 and c["findings"] == [], c["findings"]
    assert {"attack.legal-offered", "replay.choices"} <= set(c["not_judged_by"]), c["not_judged_by"]


def test_a_crystal_beast_may_wait_for_its_controllers_choice_at_the_end_of_the_damage_step(tmp_path: Path) -> None:
    """F36 damage.destroyed-mark [marked-stays-after-damage-step]: Crystal Beast Amber Mammoth,
    destroyed by battle, stays on the field as the end of the Damage Step begins while the core asks
    its controller whether to place it in the Spell & Trap Zone instead (002:140's exception:
    "Crystal Beast" monsters change where they go when destroyed); judged as the Damage Step ends,
    every board passes (the card is "not judged" only for its undecided replacement text)."""
    out = tmp_path / "amber.json"
    main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), "--max-states", "600", "69937550"])
    (c,) = json.loads(out.read_text(encoding="utf-8"))["cards"]
    assert c["name"] == "Crystal Beast Amber Mammoth" and c["played"] > 0 and c["findings"] == [], c["findings"]
    assert {b["verdict"] for b in c["boards"]} == {"pass"}, c["boards"]
def test_a_replayed_die_rolls_what_its_first_play_rolled(tmp_path: Path) -> None:
    """Fire Darts ("Roll 3 six-sided dice. Inflict damage ... equal to the total x 100"): the core
    draws the dice from its random number generator, which a reset duel does not reseed. With
    the adapter's duel cache kept tiny, most states are replayed on reused duels; every LP change
    along a breadth-first exploration must still be the damage its events say (the ledger, kept
    here by the test itself), and the paths after a roll must have been replayed (on new duels)."""
    path = write_board(board_document(open_db(FULL).card(43061293), "set-opponent"), tmp_path / "darts.toml")
    eng = OcgcoreEngine(cards=FULL, cache_size=2, pool_size=1)
    queue = [eng.start(load_board(str(path), cards_db=FULL))]
    unaccounted, damage, explored = [], [], 0
    while queue and explored < 300:
        state = queue.pop(0)
        explored += 1
        for action in eng.legal_actions(state):
            child, events = eng.apply(state, action)[:2]
            before, after = (eng.observe(s)["players"][0]["lp"] for s in (state, child))
            dealt = sum(e["amount"] for e in events if e.kind == "effect_damage" and e["player"] == 0)
            damage += [dealt] if dealt else []
            if after != before - dealt:
                unaccounted.append((action.label, before, after, dealt))
            queue.append(child)
    assert damage and not unaccounted, unaccounted[:5]
    assert eng.stats["random_replays"] > 0


def test_lethal_damage_leaves_the_lp_at_0_and_the_event_keeps_the_amount(tmp_path: Path) -> None:
    """Armityle the Chaos Phantom (10000 ATK during your turn) attacks a 300 ATK monster: 9,700
    battle damage against 8,000 LP. The core keeps -1,700; the observation says 0 (LP-ZERO), the
    event says 9,700, and the duel is over, won by the attacker's player."""
    eng, state = _start(tmp_path, 43378048, "attacker")
    for _ in range(30):
        if eng.is_terminal(state):
            break
        actions = {a.label: a for a in eng.legal_actions(state)}
        pick = next(x for x in ("enter Battle Phase", "attack Armityle the Chaos Phantom -> Mokey Mokey [P2 M1]", "pass") if x in actions)
        state, events = eng.apply(state, actions[pick])[:2]
    assert eng.is_terminal(state)
    assert [(e["player"], e["amount"]) for e in events if e.kind == "battle_damage"] == [(1, 9700)], events
    obs = eng.observe(state)
    assert [p["lp"] for p in obs["players"]] == [8000, 0]
    assert (obs["over"], obs["winner"]) == (True, 0)


def test_a_reset_duel_loads_its_card_scripts_afresh(tmp_path: Path) -> None:
    """Concentrating Current counts each player's attack declarations in its script table
    (``s[0]``, ``s[1]``, set up once by aux.GlobalCheck). The core keeps that table across
    ReloadFieldBegin, so a reused duel started with the last game's counts (and no global effect
    to count with): its target check then refused the answer recorded on a new duel (MSG_RETRY).
    After the adapter's reset the table is the new duel's: the counters at 0, the global effects
    registered again (the next attack counted)."""
    eng, state = _start(tmp_path, 20501450, "set-own")
    for label in ("enter Battle Phase", "pass", "pass", "attack Battle Ox [P1 M1] -> Mokey Mokey [P2 M1]"):
        state = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}[label])[0]
    duel = eng._take(state.path)
    assert duel.load_source("assert(c20501450[0] + c20501450[1] == 1)", "counted.lua")
    eng._reset(duel)
    assert duel.load_source("assert(c20501450.global_check and c20501450[0] + c20501450[1] == 0)", "afresh.lua")
    eng._replay(duel, state.path)
    assert duel.load_source("assert(c20501450[0] + c20501450[1] == 1)", "counted-again.lua")
    duel.close()


def test_rock_paper_scissors_is_each_players_choice(tmp_path: Path) -> None:
    """Transmission Gear: "Each player plays Rock-Paper-Scissors; the loser banishes their
    battling monster, face-down" (Duel.RockPaperScissors, MSG_ROCK_PAPER_SCISSORS) was an engine
    fault. The core asks the turn player, then the opponent: each hand is that player's choice;
    the opponent's hand that ties (the core would ask both again) is left out. Rock against
    scissors banishes the opponent's monster, rock against paper the turn player's."""
    eng, state = _start(tmp_path, 58297729, "set-own")
    for label in ["enter Battle Phase", "pass", "attack Battle Ox [P1 M1] -> Mokey Mokey [P2 M1]", *["pass"] * 8,
                  "activate Transmission Gear", "pass", "pass"]:
        state = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}[label])[0]
    first = {a.label: a for a in eng.legal_actions(state)}
    assert sorted((x, a.player) for x, a in first.items()) == [("choose paper", 0), ("choose rock", 0), ("choose scissors", 0)]
    state = eng.apply(state, first["choose rock"])[0]
    second = {a.label: a for a in eng.legal_actions(state)}
    assert sorted((x, a.player) for x, a in second.items()) == [("choose paper", 1), ("choose scissors", 1)]
    banished = {}
    for label, action in second.items():
        events = eng.apply(state, action)[1]
        banished[label] = [e["card"] for e in events if e.kind == "card_moved" and e["to"] == "banished"]
    assert banished == {"choose scissors": ["Mokey Mokey"], "choose paper": ["Battle Ox"]}, banished


def test_monsters_summoned_one_at_a_time_are_summoned_from_the_first(tmp_path: Path) -> None:
    """Number 42: Galaxy Tomahawk Special Summons Battle Eagle Tokens, the core asking each one's
    position in turn: while the second's is asked, the first (its ``summoned`` event given) is
    Summoned this turn in the observation too, not only once the core completes the Summon."""
    db = open_db(FULL)
    card = db.card(10389142)
    path = write_board(board_document(card, "attacker", materials=xyz_materials(card, db)), tmp_path / "tomahawk.toml")
    eng = make_engine("ocgcore", cards_db=FULL)
    state = eng.start(load_board(str(path), cards_db=FULL))
    for label in ("enter Battle Phase", "pass", "end Battle Phase", "pass", "activate Number 42: Galaxy Tomahawk [Ryu-Ran, Slot Machine]",
                  "pass", "pass"):
        state = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}[label])[0]
    state, events = eng.apply(state, {a.label: a for a in eng.legal_actions(state)}["choose attack"])[:2]
    assert [(e["card"], e["how"]) for e in events if e.kind == "summoned"] == [("Battle Eagle Token", "token")]
    assert sorted(a.label for a in eng.legal_actions(state)) == ["choose attack", "choose defense"]  # the second Token's position
    tokens = [m for m in eng.observe(state)["players"][0]["monsters"] if m and m["card"] == "Battle Eagle Token"]
    assert [m["summoned_this_turn"] for m in tokens] == [True]
