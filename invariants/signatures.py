"""Signatures: which distinct failure of an invariant a violation is.

An invariant can fail in several ways, and they are different findings: ``replay.iff`` seeing a
replay that came one round late is not ``replay.iff`` seeing no replay at all. Every violation
therefore has a *signature*: a stable name, per invariant, for the distinct failure its message
reports (``replay-late``, ``replay-missing``, ...). The explorer keeps one counterexample per
(invariant, signature) — the shortest of each, as for a DIFF's (kind, path) — and a baseline entry
(explorers/baseline.py, docs/checking.md) names the signature it accepts, so a known quirk of an
engine never hides a different bug of the same invariant.

:data:`SIGNATURES` lists, per invariant, each signature and the phrase of its message that names
it: the fixed text of that message (never a card name or a number), matched in the message
(``^phrase``: at its start, ``phrase$``: at its end). A message has the signature whose phrase it
holds; an invariant may also name the signature of its verdict itself (:func:`signed`, as
``replay.iff`` does), which must be one of its signatures here. tests/test_signatures.py reads
every message an invariant can return (its source) and checks that each holds exactly one phrase
of its invariant; a message with none or several (an engine's card name can hold any text) is
:data:`UNCLASSIFIED`, which no baseline entry accepts: a violation is never matched by accident.
"""

from __future__ import annotations

from typing import Any

UNCLASSIFIED = "unclassified"

# Every invariant's check can also fail on data it cannot read (explorers/checking.py).
COMMON = {"unreadable-data": "^could not be evaluated on the engine's data"}

SIGNATURES: dict[str, dict[str, str]] = {
    # -- accounting ---------------------------------------------------------------------------
    "acc.battle-damage": {
        "damage-differs": "^battle damage P1 ",
        "attacker-atk-differs": "whose ATK is",
        "target-value-differs": "whose value is",
        "damage-without-calculation": "^battle damage without damage calculation",
    },
    "acc.destroyed-by-battle": {
        "destroyed-differs": ", the calculation gives",
        "protection-not-held": "chose to apply a protection from destruction by battle it does not have",
    },
    "acc.lp-ledger": {
        "lp-unaccounted": "the events account for",
    },
    "acc.one-place": {
        "card-in-several-places": " places: ",
    },
    "acc.tokens-on-field": {
        "token-face-down": " is face-down$",
        "token-in-pile": " is in a ",
    },
    "acc.owner-piles": {
        "card-in-opponents-pile": "(owner P",
    },
    "acc.duel-over": {
        "zero-lp-duel-goes-on": " has 0 LP but the duel goes on",
        "over-without-zero-lp": "^the duel is over but no player has 0 LP",
        "wrong-winner": "^winner ",
    },
    "acc.zones": {
        "zone-count": "^a player does not have 5 + 5 zones",
        "unknown-position": " is in unknown position ",
    },
    "acc.continuous-target": {
        "bound-to-card-off-field": ", which is not on the field",
        "stays-after-target-left": "it) stays on the field",
        "destroyed-while-marked-monster-stays": ", marked destroyed by battle, is still on the field",
    },
    "acc.linked-monster": {
        "monster-stays-after-card-left": ", which it Special Summoned, stays on the field",
        "card-stays-after-monster-destroyed": ", which Special Summoned it, stays on the field",
        "engine-linked-monster-differs": "'s linked_monster = ",
    },
    # -- attack counts ------------------------------------------------------------------------
    "attack.count": {
        "engine-count-differs": "the engine reports attacks_declared = ",
        "more-attacks-than-targets": " attacks but was declared at only ",
        "second-attack": " attacks this turn; it may declare ",
    },
    "attack.target-once": {
        "declared-at-same-monster-again": ", which it was already declared at",
        "redirected-to-attacked-monster": ", which it already attacked this turn",
    },
    "attack.when": {
        "first-turn": "^an attack was declared on the first turn of the duel",
        "outside-battle-step": "^an attack was declared in ",
        "chain-open": "^an attack was declared while a chain was open",
        "attacker-not-on-field": " was not on the field$",
        "not-turn-players-monster": " attacked but is not the turn player's monster",
        "wrong-position": " position$",
    },
    "attack.no-battle-phase-turn-1": {
        "battle-phase-on-turn-1": "^the Battle Phase was entered on turn 1",
    },
    "attack.stopped-is-spent": {
        "attacks-after-stop": " declared an attack although it may not attack again this turn",
        "attack-on-after-stop": " is still in progress after it stopped$",
        "engine-cannot-attack-false": ", but its attack stopped or its effect forbade it this turn$",
        "engine-cannot-attack-true": ", but no attack of it stopped and no effect forbade it this turn$",
    },
    "attack.direct-legal": {
        "direct-past-monsters": " attacked directly while the opponent controls monsters that can be attacked",
    },
    "attack.legal-offered": {
        "attack-not-offered": ", but that attack is not offered to P",
        # asked only to respond (activations and a plain pass): the EDOPro core's response windows (F25)
        "attack-not-offered-response-window": " is asked only for a response here, without the attack",
        # a response window passed and the Battle Step left without the idle command (offered._owed_lost)
        "attack-lost-after-response-window": " were never offered: P",
        "replay-choice-not-offered": ", but that choice is not offered (offered: ",  # (offered._replay_offered)
    },
    "attack.offered-legal": {
        "attacker-cannot-attack": " is offered but the attacker is not a face-up Attack Position monster of the turn player",
        "attacker-stopped": " is offered for a monster that may not attack again this turn",
        "target-cannot-be-attacked": " is offered but that monster cannot be attacked",
        "target-already-declared-at": " was already declared at that monster this turn",
        "already-attacked": " already attacked this turn",
        "no-attack-left": " attack(s) this turn",
    },
    "attack.must-attack": {
        "battle-phase-may-end": "^the Battle Phase may end while a monster that must attack can still attack",
        "battle-phase-may-be-skipped": "^the Battle Phase may be skipped while a monster that must attack is in Attack Position",
    },
    "attack.position-change": {
        "engine-flag-differs": "the engine reports position_changed_this_turn = ",
        "outside-main-phase-2": "; battle positions are changed manually in Main Phase 2",
        "chain-open": " is offered while a chain is open",
        "not-turn-player": " is offered to the player whose turn it is not",
        "no-such-monster": " is offered but the turn player controls no such monster",
        "face-down": " is offered for a face-down monster (turning it face-up is a Flip Summon)",
        "after-attack": " attack(s) this turn",
        "summoned-this-turn": " was Summoned this turn$",
        "set-this-turn": " was Set this turn",
        "second-change": " already changed its battle position manually this turn",
        "engine-summoned-flag-differs": "the engine reports summoned_this_turn = ",
    },
    "attack.position-change-applied": {
        "monster-not-on-field": " is for a monster that is not on the field",
        "change-not-recorded": " did not record one manual change of ",
        "position-wrong": " position (it was in ",
        "changed-by-other-action": ", which is not a position change",
        "monster-vanished": ", and no event moved it",
    },
    # -- chains and windows -------------------------------------------------------------------
    "chain.spell-speed": {
        "link-missing": " was added to the chain but is not on it",
        "speed-differs": ", its category gives ",
        "chained-to-higher-speed": " was chained to a speed-",
        "speed-1-out-of-place": " (speed 1) was activated in ",
    },
    "chain.legal-offered": {
        "activation-not-offered": ", but that activation is not offered (offered: ",
    },
    "window.attack-declaration": {
        "engine-window-differs": "the engine reports open_windows.attack_declaration = ",
        "no-window": " was activated although no attack-declaration window is open",
    },
    "window.summon": {
        "engine-window-differs": "the engine reports open_windows.summon = ",
        "no-window": " was activated although no monster was just Summoned",
    },
    "chain.not-set-this-turn": {
        "activated-turn-set": " was activated the turn it was Set",
        "engine-set-flag-differs": "'s set_this_turn = ",
    },
    "chain.from-hand": {
        "trap-from-hand": " was activated from the hand$",
        "quick-play-from-hand": " was activated from the hand on the opponent's turn",
    },
    "chain.lifo": {
        "resolution-order": "^chain resolved in order ",
        "engine-chain-differs": " the links added and not yet resolved are ",
        "engine-negated-differs": "^the engine reports chain link ",
        "engine-on-chain-differs": " on_chain = ",
    },
    "replay.stored": {
        "attack-not-stored": " but the attack may go on: ",
    },
    "priority.pass-pass": {
        "acted-before-response": " was asked whether to respond$",
        "wrong-player-after-activation": " (the other player may respond)$",
        "moved-on-after-one-pass": " ends only after both players pass in succession$",
        "wrong-player-after-pass": " was asked instead of ",
        "chain-not-resolved": "^both players passed in succession, but the chain ",
        "turn-player-not-next": "^both players passed in the attack-declaration window, but ",
        "step-not-ended": "^both players passed in succession with an empty chain, but ",
        "step-without-priority": " was entered and left in one move ",
    },
    "priority.turn-player-first": {
        "opponent-first": " acts first in ",
    },
    "chain.counter-trap-offered": {
        "counter-trap-not-offered": " but is not offered in ",
    },
    "chain.negate-vs-destroy": {
        "negated-resolves-as-not": " was negated, but its link resolved as not negated",
        "negated-card-stays": " was negated, but the card stays on the field",
        "destroyed-counted-as-negated": "'s link resolved as negated, but no effect negated it",
    },
    # -- damage step ----------------------------------------------------------------------------
    "damage.activation-legal": {
        "not-allowed-in-sub-step": ", where it may not be",
    },
    "damage.during-calculation": {
        "activated-during-calculation": " was activated during damage calculation",
        "second-chain": "^a second chain was started during damage calculation",
    },
    "damage.no-destroyed-target": {
        "targets-destroyed-monster": " targeted a monster already destroyed by battle",
    },
    "damage.flip-after-calculation": {
        "pending-too-early": "; it waits for after damage calculation (2)",
        "pending-not-flipped": "'s flip effect became pending but it was not flipped by the attack",
        "engine-flag-differs": " flip by the attack happened in this Damage Step",
        "activated-too-early": "'s flip effect activated in ",
        "activated-not-flipped": "'s flip effect activated but it was not flipped by the attack",
    },
    "damage.destroyed-mark": {
        "marked-stays-after-damage-step": " was destroyed by battle but is still on the field at the end of the Damage Step",
        "engine-mark-differs": "the engine reports destroyed_by_battle = ",
        "marked-outside-calculation": ", not by damage calculation",
        "left-by-battle-unmarked": " left the field by battle but was never destroyed by battle",
        "sent-before-damage-step-end": ", before the end of the Damage Step",
        "left-field-while-marked": "; it stays on the field until destroyed-by-battle monsters are sent to the Graveyard",
        "destroyed-again": "; no effect or rule destroys a monster destroyed by battle before it is sent to the Graveyard",
        "sent-although-replaced": " is destroyed instead of it",
        "not-destroyed-on-activation": " is still on the field after a card or effect was activated",
    },
    "damage.battle-gy-trigger": {
        "pending-not-sent-by-battle": " trigger became pending, but it was not sent to the Graveyard by battle",
        "pending-in-wrong-sub-step": " trigger became pending in ",
        "trigger-not-pending": " was sent to the Graveyard by battle but its trigger is not pending",
        "trigger-not-handled": " neither activates nor declines it$",
        "pending-not-left-by-battle": " trigger became pending, but it did not leave the field by battle to a public place",
        "pending-not-destroyed": " trigger became pending, but it was not destroyed$",
        "destroyed-trigger-not-pending": " trigger is not pending$",
        "pending-but-negated": " trigger became pending, but its effects are negated",
        "activated-but-negated": " trigger was activated, but its effects are negated",
    },
    "acc.damage-step-continuous": {
        "atk-differs": "by the Damage-Step-only effects of its card data it is ",
    },
    "damage.banished-by-battle": {
        "went-elsewhere": ", destroyed by battle, went to the ",
    },
    "damage.substep-order": {
        "ocg-flip-substep": " but the OCG flips a face-down target at Before Damage Calculation",
        "calculation-on-entering": "^damage calculation was performed on entering damage calculation, before its window",
        "engine-step-differs": "^the last step change went to ",
        "step-change-without-event": " without a phase_changed event",
        "step-change-from-elsewhere": ", but the step was ",
        "calculation-in-wrong-sub-step": "^damage calculation was performed in ",
        "entered-wrong": "^the Damage Step was entered as ",
        "sub-steps-out-of-order": "^Damage-Step sub-steps out of order: ",
        "calculation-skipped": "^damage calculation was left without damage calculation being performed",
        "left-wrong": "^the Damage Step was left as ",
        "flip-sub-step-not-face-down": "^the flip sub-step happened but ",
        "engine-battle-ended-differs": "^the engine reports attack.battle_ended = ",
    },
    "damage.calculation-once": {
        "twice-in-one-transition": "^damage calculation happened twice in one transition",
        "outside-calculation": "^damage calculation happened in ",
        "twice-for-one-battle": "^damage calculation happened twice for one battle",
        "attacker-left": "^damage calculation happened although the attacker ",
        "target-left": "^damage calculation happened although the attack target ",
        "engine-flag-differs": "^the engine reports damage_calculated = ",
    },
    "damage.lingering-end": {
        "outlasts-damage-step": " still applies after the Damage Step ended",
        "outlasts-calculation": " (during damage calculation only) still applies after damage calculation",
        "ends-too-early": " stopped applying in ",
    },
    "damage.facedown-destroyed-flip": {
        "flip-activated": " was destroyed face-down without being flipped, yet its Flip effect was activated",
        "flip-pending": " was destroyed face-down without being flipped, yet its Flip effect waits as a trigger",
    },
    # -- cards of a card database, through their profiles (invariants/profiled.py) ----------------
    "profile.damage-step-offered": {
        "not-allowed-in-sub-step": ", where its profile allows none of its effects by the Damage Step rules",
    },
    "profile.window-offered": {
        "outside-window": ", outside every window its profile allows",
    },
    "profile.trigger-event": {
        "trigger-without-event": ", but no event its triggers need happened this turn",
    },
    "profile.withheld": {
        "withheld-elsewhere-offered": " with the same board and nothing resolved between",
    },
    # -- replay ---------------------------------------------------------------------------------
    "replay.iff": {
        # a chain that asked for a replay (the potential targets changed, the attack became
        # illegal) resolved without one, and then:
        "replay-late": "^a replay came later than the rules ask",  # the replay came, after more play (findings F19)
        "replay-missing": "^no replay came before ",  # the attack went on (Damage Step, next attack, end of step) without one
        "replay-missing-stopped": "^the attack stopped before the replay the rules ask for came",  # the attack stopped first
        # a chain that had to stop the attack (the attacker left, changed position or control, or
        # cannot attack; a link negated the attack) resolved without the stop, and then:
        "stop-late": "^the attack stopped later than the rules ask",  # it stopped, after more play (findings F19)
        "stop-missing": "^the attack did not stop before ",  # the attack went on or ended without stopping
        "replay-instead-of-stop": "^a replay happened although the attack had to stop",
        # as the chain resolved:
        "replay-unwarranted": "^a replay happened although no potential target appeared or disappeared",
        "stop-unwarranted": "^the attack stopped although the attacker ",
    },
    "replay.targets-recorded": {
        "no-attack-in-progress": "^an attack was declared but no attack is in progress",
        "targets-differ": "^recorded potential targets ",
    },
    "replay.not-in-damage-step": {
        "replay-in-damage-step": "^a replay happened in ",
    },
    "replay.no-second-cost": {
        "cost-paid-again": "^an attack cost was paid again after a replay",
        "lp-changed": "^the turn player's LP changed when the replay choice was made",
        "counted-as-declaration": "^the replay continuation counted as a new attack declaration",
        "window-reopened": "^continuing after a replay reopened the attack-declaration window",
        "more-costs-than-declarations": " attack declarations this turn",
    },
    "replay.bookkeeping-kept": {
        "engine-declared-at-differs": "its declarations this turn were at ",
        "engine-declared-direct-differs": "the engine reports declared_direct = ",
        "count-went-back": "'s attack count went from ",
        "forgot-targets": " forgot the monsters it was declared at",
    },
    "replay.call-off-counts": {
        "attack-on-after-call-off": " is still in progress after it was called off$",
        "called-off-undeclared": " called off an attack it never declared",
        "count-lost": " no longer counts as having attacked after calling its attack off",
    },
    "replay.choices": {
        "engine-says-not-pending": ", but a replay of the attack is pending",
        "engine-says-pending": ", but no replay happened since the last replay choice",
        "no-attack": ", but the observation shows no attack by it$",
        "other-actions": "^other actions are offered while a replay is pending",
        "no-call-off": "^calling the attack off is not offered in a replay",
        "target-cannot-be-attacked": ") cannot be attacked$",
        "direct-not-legal": " is offered in the replay but is not legal (the opponent controls ",
    },
    # -- turn structure -------------------------------------------------------------------------
    "turn.legal-offered": {
        "choice-not-offered": " is not offered to P",
        # asked only to respond (activations and a plain pass): the EDOPro core's response windows (F25)
        "choice-not-offered-response-window": " is asked only for a response in ",
        # a response window passed and the step left without the idle command (offered._owed_lost)
        "choice-lost-after-response-window": " was never offered: P",
    },
    "turn.phase-order": {
        "phase-order": " comes ",
        "phase-change-chain-open": " while a chain was open",
        "main-phase-2-without-battle-phase": ": a turn without a Battle Phase has no Main Phase 2",
        "end-phase-after-battle-phase": ": Main Phase 2 follows a Battle Phase",
        # the step walk both turn invariants share (turn._walk)
        "engine-step-differs": "^the last step change went to ",
        "step-change-without-event": " without a phase_changed event",
        "step-change-from-elsewhere": ", but the step was ",
    },
    "turn.battle-steps": {
        "step-order": " comes ",
        "step-change-chain-open": " while a chain was open",
        "damage-step-without-attack": "^the Damage Step began with no attack in progress",
        "battle-phase-not-at-start-step": "; it begins with the Start Step",
        "engine-step-differs": "^the last step change went to ",
        "step-change-without-event": " without a phase_changed event",
        "step-change-from-elsewhere": ", but the step was ",
    },
}


def signatures_of(invariant: str) -> dict[str, str]:
    """An invariant's signatures, name -> phrase (the common ones included)."""
    return {**SIGNATURES.get(invariant, {}), **COMMON}


def _holds(message: str, phrase: str) -> bool:
    if phrase.startswith("^"):
        return message.startswith(phrase[1:])
    if phrase.endswith("$"):
        return message.endswith(phrase[:-1])
    return phrase in message


class Signed(str):
    """A violation message that names its signature itself (``.key``, as the explorer reads it)."""

    key: Any = None

    def __new__(cls, message: str, signature: str) -> "Signed":
        s = super().__new__(cls, message)
        s.key = signature
        return s

    def __reduce__(self):  # (worker processes send verdicts back: keep the signature)
        return (Signed, (str(self), self.key))


def signed(signature: str, message: str) -> Signed:
    return Signed(message, signature)


def signature_of(invariant: str, message: Any) -> str:
    """The signature of a violation of `invariant` with this message: the one it names itself
    (:func:`signed`), else the one whose phrase it holds; :data:`UNCLASSIFIED` when it holds none
    of its invariant's phrases, or more than one."""
    own = getattr(message, "key", None)
    if isinstance(own, str):
        return own
    text = str(message)
    hits = [name for name, phrase in signatures_of(invariant).items() if _holds(text, phrase)]
    return hits[0] if len(hits) == 1 else UNCLASSIFIED


__all__ = ["COMMON", "SIGNATURES", "Signed", "UNCLASSIFIED", "signature_of", "signatures_of", "signed"]
