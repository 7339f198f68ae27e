"""Chains, priority and response windows."""

from __future__ import annotations

from bpcheck.model import arith  # numbers may be symbolic (bpcheck prove)
from bpcheck.invariants import facts
from bpcheck.invariants.base import invariant
from bpcheck.invariants.view import find_spell, in_pile

FAMILY = "chains and windows"


def _link(obs, uid):
    for link in obs["chain"]:
        if link["card_uid"] == uid:
            return link
    return None


@invariant(
    "chain.spell-speed",
    "Each chain link has the spell speed of its card category, at least the speed of the link it answers and at least 2 when it "
    "answers one; Spell Speed 1 starts chains only in its controller's Main Phase.",
    ["CH-SPEED", "CH-SPEED1", "WIN-COUNTER"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
)
def speed_order(t):
    added = t.of("chain_link_added")
    if not added:
        return None
    chain_before = list(t.before["chain"])
    triggered = {x["card_uid"] for x in t.before["pending_triggers"]}
    for e in added:
        link = _link(t.after, e["card_uid"])
        if link is None:
            return f"{e['card']} was added to the chain but is not on it"
        expect = facts.speed_of(link["kind"], link["subtype"], e["card"])
        if e["speed"] != expect:
            return f"{e['card']} has spell speed {e['speed']}, its category gives {expect}"
        if chain_before:
            top = chain_before[-1]["speed"]
            if e["speed"] < max(top, 2):
                return f"{e['card']} (speed {e['speed']}) was chained to a speed-{top} link"
        elif e["speed"] == 1 and e["card_uid"] not in triggered:  # triggers start chains anywhere
            if t.before["step"] not in ("main1", "main2") or e["player"] != t.before["turn_player"]:
                return f"{e['card']} (speed 1) was activated in {t.before['step']} by P{e['player'] + 1}"
        chain_before.append({"speed": e["speed"]})
    return True


@invariant(
    "window.attack-declaration",
    "\"When an attack is declared\" cards are activated only in the one chain answering the declaration, before both players pass.",
    ["WIN-ATTACK-DECL", "WIN-BEFORE-DS", "RPL-NEW-DECLARATION"],
    "transition",
    FAMILY,
)
def attack_window(t):
    b, a = t.before, t.after
    # The window opens with a declaration, closes when the chain answering it resolves or when
    # both players pass with an empty chain; otherwise it keeps its state.
    was_open = b["open_windows"]["attack_declaration"]
    now_open = a["open_windows"]["attack_declaration"]
    relevant = was_open or now_open or any(e["card"] in facts.ATTACK_RESPONSE_CARDS for e in t.of("chain_link_added"))
    if not relevant:
        return None
    if t.of("attack_declared"):
        if not now_open and not a["over"] and a["attack"] is not None:
            return "an attack was declared but the response window is not open"
        return True
    if was_open and now_open:
        if t.of("chain_resolved"):
            return "the attack-declaration window stayed open after the chain answering it resolved"
        if not b["chain"] and t.action["kind"] == "pass" and b["passes"] == 1:
            return "the attack-declaration window stayed open after both players passed"
    if not was_open and now_open:
        return "the attack-declaration window opened without an attack declaration"
    for e in t.of("chain_link_added"):
        if e["card"] in facts.ATTACK_RESPONSE_CARDS and not was_open:
            return f"{e['card']} was activated after the attack-declaration window closed"
    return True


@invariant(
    "chain.not-set-this-turn",
    "Quick-Play Spells and Traps are never activated in the turn they were Set.",
    ["CH-SET-TURN"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
)
def set_this_turn(t):
    added = t.of("chain_link_added")
    if not added:
        return None
    seen = False
    for e in added:
        c = find_spell(t.before, e["card_uid"])
        if c is None or c["face_up"]:
            continue
        seen = True
        if c["set_this_turn"] and (c["kind"] == "trap" or c["subtype"] == "quick-play"):
            return f"{e['card']} was activated the turn it was Set"
    return True if seen else None


@invariant(
    "chain.from-hand",
    "Traps are never activated from the hand; Quick-Play Spells from the hand only on their controller's turn.",
    ["CH-QP-HAND"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
)
def from_hand(t):
    seen = False
    for e in t.of("chain_link_added"):
        where = in_pile(t.before, e["card_uid"])
        link = _link(t.after, e["card_uid"])
        if where is None or where[1] != "hand" or link is None:
            continue
        seen = True
        if link["kind"] == "trap":
            return f"Trap {e['card']} was activated from the hand"
        if link["kind"] == "spell" and link["subtype"] == "quick-play" and e["player"] != t.before["turn_player"]:
            return f"Quick-Play Spell {e['card']} was activated from the hand on the opponent's turn"
    return True if seen else None


@invariant(
    "chain.lifo",
    "A chain resolves last in, first out.",
    ["CH-LIFO", "PRI-PASS-PASS"],
    "transition",
    FAMILY,
    events=["chain_link_resolved"],
)
def lifo(t):
    resolved = [e["card_uid"] for e in t.of("chain_link_resolved")]
    if not resolved:
        return None
    expect = [l["card_uid"] for l in reversed(t.before["chain"])]
    if t.before["choice"] is not None:
        return True  # resumed mid-chain after a choice: the order was checked when it started
    if resolved != expect[: len(resolved)]:
        return f"chain resolved in order {resolved}, expected {expect}"
    return True


@invariant(
    "priority.turn-player-first",
    "At every new step and after every chain resolves, the turn player acts first (unless a trigger, a replay or a choice is pending).",
    ["PRI-TP-FIRST", "PRI-PASS-PASS"],
    "transition",
    FAMILY,
    events=["phase_changed", "chain_resolved"],
)
def tp_first(t):
    a = t.after
    if not (t.of("phase_changed") or t.of("chain_resolved")) or a["over"] or a["to_act"] is None:
        return None
    if a["pending_triggers"] or a["choice"] is not None:
        return None
    if a["to_act"] != a["turn_player"]:
        return f"P{a['to_act'] + 1} acts first in {a['step']}"
    return True


@invariant(
    "chain.counter-trap-offered",
    "A Set Counter Trap that answers the card activation on top of the chain is offered to its controller when they hold "
    "priority and can pay its cost, in the Damage Step too.",
    ["WIN-COUNTER", "DS-LEGAL-COUNTER", "CH-SPEED"],
    "actions",
    FAMILY,
)
def counter_trap_offered(obs, actions):
    if not obs["chain"] or obs["over"] or obs["pending_triggers"] or obs["choice"] is not None:
        return None
    top = obs["chain"][-1]
    if not top["card_activation"] or top["negated"]:
        return None
    p = obs["to_act"]
    if p is None:
        return None
    me = obs["players"][p]
    due = []
    for c in me["spells"]:
        if c is None or c["face_up"] or c["set_this_turn"]:
            continue
        spec = facts.COUNTER_TRAPS.get(c["card"])
        if spec is None or spec["answers"] != top["kind"]:
            continue
        if spec.get("opponent_only") and top["controller"] == p:
            continue
        if spec.get("battle_phase") and obs["phase"] != "battle":
            continue
        if arith.lt(me["lp"], spec.get("lp", 0)) or len(me["hand"]) < spec.get("discard", 0):
            continue
        due.append(c["card"])
    if not due:
        return None
    labels = [a["label"] for a in actions]
    for name in due:
        if not any(l == f"activate {name}" or l.startswith(f"activate {name} ") for l in labels):
            return f"{name} answers {top['card']} but is not offered in {obs['step']}"
    return True
