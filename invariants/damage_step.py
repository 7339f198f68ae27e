"""Damage-Step legality (000 "Spell / Trap Cards", "Flip Effects"; 002; 003/004 lists)."""

from __future__ import annotations

from bpcheck.invariants import facts
from bpcheck.invariants.base import invariant
from bpcheck.invariants.view import monster, monsters

FAMILY = "damage step"


def _added_in_damage_step(t):
    step = t.before["step"]
    if not step.startswith("damage_step"):
        return []
    return t.of("chain_link_added")


def _link_kind(t, e):
    for link in t.after["chain"]:
        if link["card_uid"] == e["card_uid"]:
            return link["kind"], link["subtype"]
    return None, None


@invariant(
    "damage.activation-legal",
    "Every activation in a Damage-Step sub-step is allowed there: a Counter Trap; a card that directly changes ATK/DEF before damage "
    "calculation; an effect naming damage calculation; a triggered or flip effect.",
    ["DS-LEGAL-COUNTER", "DS-LEGAL-STATS", "DS-LEGAL-DAMAGE-TIMING", "DS-LEGAL-MANDATORY", "DS-LEGAL-OPTIONAL-TRIGGER", "DS-ILLEGAL-OTHER"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
)
def activation_legal(t):
    added = _added_in_damage_step(t)
    if not added:
        return None
    step = t.before["step"]
    for e in added:
        kind, subtype = _link_kind(t, e)
        card = e["card"]
        if kind == "trap" and subtype == "counter":
            continue
        if card in facts.DS_CALC_ONLY_CARDS and step == "damage_step_during_calculation":
            continue
        if card in facts.DS_UP_TO_CALC_CARDS and (step in facts.STAT_CHANGE_STEPS or step == "damage_step_during_calculation"):
            continue
        if card in facts.DS_TRIGGER_CARDS:
            continue
        if card in facts.DS_STAT_CARDS and step in facts.STAT_CHANGE_STEPS:
            continue
        return f"{card} was activated in {step}, where it may not be"
    return True


@invariant(
    "damage.during-calculation",
    "During damage calculation only Counter Traps and effects that name damage calculation are activated, in one chain.",
    ["DS-LEGAL-DAMAGE-TIMING", "DS-DURING-CALC-ONE-CHAIN", "DS-LEGAL-STATS"],
    "transition",
    FAMILY,
)
def during_calc(t):
    if t.before["step"] != "damage_step_during_calculation":
        return None
    added = t.of("chain_link_added")
    if not added:
        return True
    if not t.before["chain"] and t.before["chains_in_step"] >= 1:
        return "a second chain was started during damage calculation"
    for e in added:
        kind, subtype = _link_kind(t, e)
        if not ((kind == "trap" and subtype == "counter") or e["card"] in facts.DS_DAMAGE_CALC_CARDS):
            return f"{e['card']} was activated during damage calculation"
    return True


@invariant(
    "damage.no-destroyed-target",
    "A monster destroyed by battle is never targeted by a card or effect.",
    ["DS-NO-TARGET-DESTROYED"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
)
def no_destroyed_target(t):
    added = t.of("chain_link_added")
    marked = {m["uid"] for m in monsters(t.before) if m["destroyed_by_battle"]}
    if not added or not marked:
        return None
    for e in added:
        hit = marked & set(e["targets"])
        if hit:
            return f"{e['card']} targeted a monster already destroyed by battle (uid {sorted(hit)})"
    return True


@invariant(
    "damage.flip-after-calculation",
    "A flip effect of a monster flipped by the attack activates only after damage calculation.",
    ["DS-FLIP-EFFECT-TIMING", "DS-FLIP"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
)
def flip_after_calc(t):
    flips = [e for e in t.of("chain_link_added") if e["card"] in facts.FLIP_MONSTERS]
    if not flips:
        return None
    for e in flips:
        m = monster(t.before, e["card_uid"])
        if t.before["step"] != "damage_step_after_calculation_2":
            return f"{e['card']}'s flip effect activated in {t.before['step']}"
        if m is None or not m["flipped_by_battle"]:
            return f"{e['card']}'s flip effect activated but it was not flipped by the attack"
    return True


@invariant(
    "damage.destroyed-mark",
    "Monsters become destroyed by battle only at damage calculation, and leave the field for it only at the end of the Damage Step.",
    ["DS-DESTROYED-MARK", "DS-SUBSTEPS"],
    "transition",
    FAMILY,
)
def mark_at_calc(t):
    before = {m["uid"]: m for m in monsters(t.before)}
    after = {m["uid"]: m for m in monsters(t.after)}
    newly = [u for u, m in after.items() if m["destroyed_by_battle"] and not (u in before and before[u]["destroyed_by_battle"])]
    marked_before = [u for u, m in before.items() if m["destroyed_by_battle"]]
    if not newly and not marked_before:
        return None
    if newly and not t.of("damage_calculation"):
        return f"monster uid {newly[0]} became destroyed by battle outside damage calculation"
    for u in marked_before:
        if u not in after and t.after["step"] != "damage_step_end":
            return f"monster uid {u}, destroyed by battle, left the field before the end of the Damage Step"
    return True


@invariant(
    "damage.substep-order",
    "The Damage-Step sub-steps follow the TCG order, the flip sub-step only for a face-down target, and the Damage Step ends back in the Battle Step.",
    ["DS-SUBSTEPS", "BP-STEPS", "DS-FLIP"],
    "transition",
    FAMILY,
    events=["phase_changed"],
)
def order(t):
    changes = t.of("phase_changed")
    if not changes:
        return None
    for e in changes:
        frm, to = e["from"], e["to"]
        if to.startswith("damage_step") and not frm.startswith("damage_step"):
            if frm != "battle_step" or to != "damage_step_start":
                return f"the Damage Step was entered as {frm} -> {to}"
        if frm.startswith("damage_step"):
            if not to.startswith("damage_step"):
                if frm != "damage_step_end" or to != "battle_step":
                    return f"the Damage Step was left as {frm} -> {to}"
                continue
            i = facts.DAMAGE_STEPS.index(frm)
            nxt = facts.DAMAGE_STEPS[i + 1]
            if to != nxt and not (nxt == "damage_step_flip" and to == "damage_step_before_calculation"):
                return f"Damage-Step sub-steps out of order: {frm} -> {to}"
            if to == "damage_step_flip":
                a = t.before["attack"]
                tgt = monster(t.before, a["target"]) if a else None
                if tgt is None or tgt["position"] != "facedown":
                    return "the flip sub-step happened but the attack target is not face-down"
    return True


@invariant(
    "damage.calculation-once",
    "Damage calculation happens once per battle, when damage calculation is over, and only if both battlers are still on the field.",
    ["DS-SUBSTEPS", "DS-BATTLER-LEAVES", "RPL-BATTLE-STEP-ONLY"],
    "transition",
    FAMILY,
    events=["damage_calculation"],
)
def calc_once(t):
    calcs = t.of("damage_calculation")
    if not calcs:
        return None
    if t.before["step"] != "damage_step_during_calculation":
        return f"damage calculation happened in {t.before['step']}"
    a = t.before["attack"]
    if a is None or a["damage_calculated"]:
        return "damage calculation happened twice for one battle"
    if monster(t.before, a["attacker"]) is None:
        return "damage calculation happened although the attacker left the field"
    if a["target"] is not None and monster(t.before, a["target"]) is None:
        return "damage calculation happened although the attack target left the field"
    return True
