"""Events: what a transition did, in a form invariants and reports can read.

An event is a kind plus a flat, JSON-serialisable mapping of facts (card names, uids, players as
0/1, amounts). The list of kinds, their fields and their values is the contract documented in
docs/protocol.md ("Events, field by field"; tests/test_engine_docs.py keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVENT_KINDS = {
    "phase_changed",  # from, to
    "passed",  # player
    "attack_declared",  # attacker, attacker_uid, target, target_uid (None: direct), player
    "attack_cost_paid",  # attacker_uid, player, amount
    "replay",  # attacker_uid, reason: targets_changed / attack_illegal
    "replay_choice",  # attacker_uid, choice: target / direct / call_off, target_uid, target (not with call_off)
    "attack_stopped",  # attacker_uid, reason
    "attack_ended",  # attacker_uid, reason: called_off / damage_step_over
    "battle_ended_early",  # attacker_uid, reason (a battler left the field in the Damage Step)
    "chain_link_added",  # link, card, card_uid, effect, player, speed, targets, damage_step, step
    "chain_link_resolved",  # card, card_uid, negated
    "activation_negated",  # link, card, card_uid, by
    "effect_negated",  # link, card, card_uid, by: the effect (not the activation) of that link is negated
    "chain_resolved",  # (no field)
    "trigger_declined",  # card, card_uid, player
    "card_moved",  # card, card_uid, owner, from, to, reason
    "summoned",  # card, card_uid, player, position, how (special / token), from
    "flipped",  # card, card_uid, by (battle / effect), face_up
    "position_changed",  # card, card_uid, from, to, by
    "control_changed",  # card, card_uid, from_player, to_player
    "lp_paid",  # player, amount
    "lp_gained",  # player, amount
    "lp_lost",  # player, amount, card (None: no chain link): LP lost by an effect that is not damage
    "effect_damage",  # player, amount, card
    "battle_damage",  # player, amount, attacker_uid, target_uid
    "damage_calculation",  # attacker_uid, target_uid, attacker_atk, target_value, target_position
    "destroyed_by_battle",  # card, card_uid, controller
    "destroyed",  # card, card_uid, by (effect / rule)
    "stat_modified",  # card, card_uid, stat, modifier (the modifier kind), amount, source, until
    "lingering_effect",  # what, player, source, until
    "effect_expired",  # what, until
    "choice_made",  # player, choice (the choice kind), option, card_uid
    "duel_over",  # winner (None: draw), reason
}


@dataclass(frozen=True, slots=True)
class Event:
    kind: str
    data: tuple[tuple[str, Any], ...]

    def __getitem__(self, key: str) -> Any:
        for k, v in self.data:
            if k == key:
                return v
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.data:
            if k == key:
                return v
        return default

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        for k, v in self.data:
            d[k] = list(v) if isinstance(v, tuple) else v
        return d


def ev(kind: str, **data: Any) -> Event:
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    return Event(kind, tuple(data.items()))
