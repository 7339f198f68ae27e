"""Chains, priority and response windows.

The chain and the attack-declaration window are the monitor's (``chain`` and ``windows``
histories: built from chain_link_added / chain_link_resolved / passed / ... events); the engine's
``chain`` and ``open_windows`` are held to them.
"""

from __future__ import annotations

from bpcheck.model import arith  # numbers may be symbolic (bpcheck prove)
from bpcheck.invariants.base import invariant
from bpcheck.invariants.view import fact, find_spell, in_pile, spells

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
    chain_before = [{"speed": l[4]} for l in t.mon.chain.links]
    triggered = {x["card_uid"] for x in t.before["pending_triggers"]}
    for e in added:
        link = _link(t.after, e["card_uid"])
        if link is None and not (t.after["over"] or t.of("chain_link_resolved")):
            return f"{e['card']} was added to the chain but is not on it"
        expect = fact(t.cards.speed(e["card"], e.get("effect")), e["card"], "its spell speed")
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
    "\"When an attack is declared\" cards are activated only in the one chain answering the declaration, before both players pass; "
    "where the engine reports open_windows.attack_declaration, it says whether that window is open.",
    ["WIN-ATTACK-DECL", "WIN-BEFORE-DS", "RPL-NEW-DECLARATION"],
    "transition",
    FAMILY,
)
def attack_window(t):
    # The window (the monitor's): opens with a declaration, closes when the chain answering it
    # resolves, when both players pass with an empty chain, or when the attack stops or the step
    # changes.
    was_open = t.mon.window.attack_declaration
    now_open = t.mon_after.window.attack_declaration
    windows = t.after.get("open_windows")  # absent only for an engine that does not observe it
    says = windows["attack_declaration"] if windows is not None else now_open
    answering = []
    for e in t.of("chain_link_added"):
        if fact(t.cards.answers_attack_declaration(e["card"]), e["card"], "whether it answers an attack declaration"):
            answering.append(e)
    if not (was_open or now_open or says or answering):
        return None
    if not t.after["over"] and bool(says) != now_open:
        why = "it closed" if was_open else "no attack was declared"
        if now_open:
            why = "an attack was just declared" if t.of("attack_declared") else "it is still open"
        return (
            f"the engine reports open_windows.attack_declaration = {str(bool(says)).lower()}, but the window is "
            f"{'open' if now_open else 'closed'} ({why})"
        )
    for e in answering:
        if not was_open:
            return f"{e['card']} was activated although no attack-declaration window is open"
    return True


@invariant(
    "window.summon",
    "\"When a monster is Summoned\" cards are activated only in the chain built right after a Summon (after the chain it "
    "happened in has resolved), before both players pass; where the engine reports open_windows.summon, it says whether that "
    "window is open.",
    ["WIN-EVENT"],
    "transition",
    FAMILY,
)
def summon_window(t):
    was_open = t.mon["summons"][0]
    now_open = t.mon_after["summons"][0]
    windows = t.after.get("open_windows")  # absent only for an engine that does not observe it
    says = windows["summon"] if windows is not None else now_open
    answering = [e for e in t.of("chain_link_added") if fact(t.cards.answers_summon(e["card"], e.get("effect")), e["card"], "whether it answers a Summon")]
    if not (was_open or now_open or says or answering):
        return None
    # (while an effect waits for a choice in mid-resolution no window is open to anyone: the claim is not compared)
    if not t.after["over"] and t.after.get("choice") is None and bool(says) != now_open:
        why = "it closed" if was_open else "no monster was Summoned"
        if now_open:
            why = "it is still open" if was_open else "a monster was just Summoned"
        return (
            f"the engine reports open_windows.summon = {str(bool(says)).lower()}, but the window is "
            f"{'open' if now_open else 'closed'} ({why})"
        )
    for e in answering:
        if not was_open:
            return f"{e['card']} was activated although no monster was just Summoned"
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
    "A chain resolves last in, first out; the engine's chain lists the links as they were added and not yet resolved.",
    ["CH-LIFO", "PRI-PASS-PASS"],
    "transition",
    FAMILY,
)
def lifo(t):
    links = t.mon.chain.links
    resolved = [e["card_uid"] for e in t.of("chain_link_resolved")]
    after_links = t.mon_after.chain.links
    if not links and not after_links and not resolved and not t.after["chain"]:
        return None
    if resolved:
        expect = [l[0] for l in reversed(links)]
        # links added in this very transition resolve first, then those that were there before
        added = [e["card_uid"] for e in reversed(t.of("chain_link_added"))]
        expect = added + expect
        if resolved != expect[: len(resolved)]:
            return f"chain resolved in order {resolved}, expected {expect}"
    if not t.after["over"]:
        says = [l["card_uid"] for l in t.after["chain"]]
        ch = t.after.get("choice")
        if ch is not None and isinstance(ch.get("resolving"), dict):
            says = says + [ch["resolving"].get("card_uid")]  # the link being resolved waits for the choice
        mine = [l[0] for l in after_links]
        if says != mine:
            return f"the engine's chain is {says} (card uids), the links added and not yet resolved are {mine}"
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
def counter_trap_offered(obs, actions, ctx):
    if not obs["chain"] or obs["over"] or obs["pending_triggers"] or obs["choice"] is not None:
        return None
    top = obs["chain"][-1]
    if not top["card_activation"] or top["negated"]:
        return None
    p = obs["to_act"]
    if p is None:
        return None
    top_kind = fact(ctx.cards.kind(top["card"]), top["card"], "its card type")[0]
    me = obs["players"][p]
    due = []
    for c in me["spells"]:
        if c is None or c["face_up"] or c["set_this_turn"]:
            continue
        spec = fact(ctx.cards.counter_trap(c["card"]), c["card"], "what it answers as a Counter Trap")
        if spec is False or spec["answers"] != top_kind:
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


@invariant(
    "chain.negate-vs-destroy",
    "Destroying a card whose activation is on the chain does not negate it: a link resolves as negated exactly when an effect "
    "negated it, and a Spell or Trap Card whose activation was negated is sent from the field when its link resolves.",
    ["CH-NEGATE"],
    "transition",
    FAMILY,
    events=["chain_link_resolved"],
)
def negate_vs_destroy(t):
    negated = {l[0] for l in t.mon.chain.links if l[6]}
    activating = {c["uid"] for c in spells(t.before) if c["on_chain"]}  # Spell/Trap Cards whose activation is on the chain
    for e in t.of("chain_link_added"):  # activated in this transition: from the hand, or a Set card
        c = find_spell(t.before, e["card_uid"])
        if c is None or not c["face_up"]:
            activating.add(e["card_uid"])
    seen = False
    for e in t.events:
        if e.kind == "activation_negated":
            negated.add(e["card_uid"])
        elif e.kind == "chain_link_resolved":
            seen = True
            u = e["card_uid"]
            if u in negated:
                if not e["negated"]:
                    return f"the activation of {e['card']} was negated, but its link resolved as not negated"
                kind = fact(t.cards.kind(e["card"]), e["card"], "its card type")[0]
                if kind in ("spell", "trap") and u in activating and find_spell(t.after, u) is not None and not t.after["over"]:
                    return f"the activation of {e['card']} was negated, but the card stays on the field"
            elif e["negated"]:
                return f"{e['card']}'s link resolved as negated, but no effect negated it (destroying a card does not negate its activation)"
    return True if seen else None
