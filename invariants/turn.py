"""Turn structure: the phases of the turn and the Battle Phase's steps, in their order.

Judged from the ``phase_changed`` events a transition makes, walked in order, and from the chain
the monitor built. The steps inside the Damage Step are ``damage.substep-order``'s.
"""

from __future__ import annotations

from bpcheck.invariants.base import STEPS, invariant

FAMILY = "turn structure"

_BATTLE = frozenset(s for s in STEPS if s.startswith(("battle", "damage_step")))
_OUTSIDE_DS = frozenset(s for s in STEPS if not s.startswith("damage_step"))


def phase_of(step: str) -> str:
    """main1 / battle / main2 / end (any other value is its own phase)."""
    if step in _BATTLE:
        return "battle"
    return "end" if step == "end_phase" else step


# rule: BP-OPTIONAL, BP-MP2 — the phase that may follow each phase
NEXT_PHASE = {"main1": ("battle", "end"), "battle": ("main2",), "main2": ("end",)}

# rule: BP-START-STEP, BP-STEPS, BP-END-STEP — where each step of the Battle Phase outside the
# Damage Step may lead (the Damage Step ends back in the Battle Step: DS-SUBSTEPS)
NEXT_STEP = {
    "battle_start_step": ("battle_step", "battle_end_step"),
    "battle_step": ("damage_step_start", "battle_end_step"),
    "battle_end_step": ("main2",),
}


_LAST: list = [None, None]  # (Transition, _changes of it): both invariants walk the same one


def _changes(t):
    """The transition's step changes in order, as (phase_changed event, whether a chain was open
    when it happened); None when the step neither changes nor has an event; a message when the
    events do not lead from the step before to the step after."""
    if not t.of("phase_changed") and t.before["step"] == t.after["step"]:
        return None
    if _LAST[0] is t:
        return _LAST[1]
    out = _walk(t)
    _LAST[0], _LAST[1] = t, out
    return out


def _walk(t):
    cursor = t.before["step"]
    chain = bool(t.before["chain"]) or bool(t.mon.chain.links)
    out = []
    for e in t.events:
        k = e.kind
        if k == "chain_link_added":
            chain = True
        elif k == "chain_resolved":
            chain = False
        elif k == "phase_changed":
            if e["from"] != cursor:
                return f"the step changed {e['from']} -> {e['to']}, but the step was {cursor}"
            cursor = e["to"]
            out.append((e, chain))
    if cursor != t.after["step"] and not t.after["over"]:
        if not out:
            return f"the step changed {t.before['step']} -> {t.after['step']} without a phase_changed event"
        return f"the last step change went to {cursor}, but the engine is in {t.after['step']}"
    return out


@invariant(
    "turn.phase-order",
    "The turn runs Main Phase 1, the Battle Phase, Main Phase 2, the End Phase; a turn whose Battle Phase is skipped goes from "
    "Main Phase 1 straight to the End Phase, with no Main Phase 2. A phase ends only with an empty chain, and the step never "
    "changes without a phase_changed event.",
    ["BP-OPTIONAL", "BP-MP2"],
    "transition",
    FAMILY,
    # a phase boundary has Main Phase 1, Main Phase 2 or the End Phase on one side
    steps=["main1", "main2", "end_phase"],
    step_events=["phase_changed"],
    reads=["step", "chain", "over"],
)
def phase_order(t):
    changes = _changes(t)
    if not isinstance(changes, list):
        return changes
    judged = False
    for e, chain in changes:
        frm, to = phase_of(e["from"]), phase_of(e["to"])
        if frm == to or frm not in NEXT_PHASE:
            continue
        judged = True
        if to not in NEXT_PHASE[frm]:
            if (frm, to) == ("main1", "main2"):
                return "the turn went from Main Phase 1 to Main Phase 2: a turn without a Battle Phase has no Main Phase 2"
            if (frm, to) == ("battle", "end"):
                return "the turn went from the Battle Phase to the End Phase: Main Phase 2 follows a Battle Phase"
            return f"the turn went from {frm} to {to}; after {frm} comes {' or '.join(NEXT_PHASE[frm])}"
        if chain:
            return f"the phase changed ({e['from']} -> {e['to']}) while a chain was open"
    return True if judged else None


@invariant(
    "turn.battle-steps",
    "The Battle Phase begins with the Start Step and runs Start Step, Battle Step (with a Damage Step for each attack that "
    "reaches it), End Step, then Main Phase 2; with no attack the Start Step or the Battle Step leads to the End Step. A step "
    "ends only with an empty chain, and the Damage Step begins only with an attack in progress.",
    ["BP-START-STEP", "BP-STEPS", "BP-END-STEP"],
    "transition",
    FAMILY,
    # an engine that passes for its players (the EDOPro core) need not show a step in which nobody
    # is asked, the End Step above all: the steps it shows cannot be judged one by one
    explicit_passes=True,
    steps=sorted(_OUTSIDE_DS),
    step_events=["phase_changed"],
    reads=["step", "chain", "over", "attack"],
)
def battle_steps(t):
    changes = _changes(t)
    if not isinstance(changes, list):
        return changes
    judged = False
    for e, chain in changes:
        frm, to = e["from"], e["to"]
        if frm == "main1" and phase_of(to) == "battle":
            judged = True
            if to != "battle_start_step":
                return f"the Battle Phase was entered at {to}; it begins with the Start Step"
            continue
        nxt = NEXT_STEP.get(frm)
        if nxt is None:
            continue
        judged = True
        if to not in nxt:
            return f"the step changed {frm} -> {to}; after {frm} comes {' or '.join(nxt)}"
        if chain:
            return f"the step changed {frm} -> {to} while a chain was open"
        if to == "damage_step_start" and t.before["attack"] is None and not t.of("attack_declared"):
            return "the Damage Step began with no attack in progress"
    return True if judged else None
