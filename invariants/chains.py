"""Chains, priority and response windows.

The chain and the attack-declaration window are the monitor's (``chain`` and ``windows``
histories: built from chain_link_added / chain_link_resolved / passed / ... events); the engine's
``chain`` and ``open_windows`` are held to them.
"""

from __future__ import annotations

from bpcheck.invariants.base import by_actions, by_board, by_history, invariant, part_not_evaluated
from bpcheck.invariants.view import ON_CHAIN, activating, card_ref, card_refs, effect_words, fact, find_spell, in_pile, pile_fields, spell_fields, spells
from bpcheck.model import arith  # numbers may be symbolic (bpcheck prove)

FAMILY = "chains and windows"


def _link(obs, uid):
    for link in obs["chain"]:
        if link["card_uid"] == uid:
            return link
    return None


def _ref(t, uid):
    """A card named in a transition's message: where it is after the transition, else before."""
    return card_ref(t.after, uid, t.before)


def _triggered(cards, name, effect) -> bool:
    """The effect is a triggered or flip effect, by the card data (it starts a chain anywhere)."""
    eff = fact(cards.effect(name, effect), name, f"its {effect_words(effect)}")
    return eff.get("type") in ("trigger", "flip")


@invariant(
    "chain.spell-speed",
    "Each chain link has the spell speed of its card category, at least the speed of the link it answers and at least 2 when it "
    "answers one; Spell Speed 1 starts chains only in its controller's Main Phase.",
    ["CH-SPEED", "CH-SPEED1", "WIN-COUNTER"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
    reads=["chain[].card_uid", "over", "step", "turn_player"],
    fields={
        "pending_triggers": part_not_evaluated(
            "whether a Spell Speed 1 triggered effect that starts a chain outside its controller's Main Phase was waiting as a "
            "trigger (by the card data it is a triggered or flip effect)"
        ),
    },
)
def speed_order(t):
    added = t.of("chain_link_added")
    if not added:
        return None
    chain_before = [{"speed": l[4]} for l in t.mon.chain.links]
    pending = t.before.get("pending_triggers")  # (absent: the engine does not report it)
    triggered = None if pending is None else {x["card_uid"] for x in pending}
    for e in added:
        link = _link(t.after, e["card_uid"])
        if link is None and not (t.after["over"] or t.of("chain_link_resolved")):
            return f"{_ref(t, e['card_uid'])} was added to the chain but is not on it"
        expect = fact(t.cards.speed(e["card"], e.get("effect")), e["card"], "its spell speed")
        if e["speed"] != expect:
            return f"{_ref(t, e['card_uid'])} has spell speed {e['speed']}, its category gives {expect}"
        def was_trigger(e=e):
            return _triggered(t.cards, e["card"], e.get("effect")) and (triggered is None or e["card_uid"] in triggered)

        if chain_before:
            top = chain_before[-1]["speed"]
            # (triggers of one event form one Chain, whatever their speed: "This is only 1 Chain"
            # of DS-SUBSTEPS, DS-END-TRIGGERS; a pending trigger placed on it is not answering)
            if e["speed"] < max(top, 2) and not (e["speed"] == 1 and was_trigger()):
                return f"{_ref(t, e['card_uid'])} (speed {e['speed']}) was chained to a speed-{top} link"
        elif e["speed"] == 1 and not was_trigger():  # triggers start chains anywhere
            if t.before["step"] not in ("main1", "main2") or e["player"] != t.before["turn_player"]:
                return f"{_ref(t, e['card_uid'])} (speed 1) was activated in {t.before['step']} by P{e['player'] + 1}"
        chain_before.append({"speed": e["speed"]})
    return True


@invariant(
    "window.attack-declaration",
    "\"When an attack is declared\" cards are activated only in the one chain answering the declaration, before both players pass; "
    "where the engine reports open_windows.attack_declaration, it says whether that window is open.",
    ["WIN-ATTACK-DECL", "WIN-BEFORE-DS", "RPL-NEW-DECLARATION"],
    "transition",
    FAMILY,
    reads=["over"],
    fields={"open_windows.attack_declaration": by_history("the windows history (the attack-declaration window)")},
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
            return f"{_ref(t, e['card_uid'])} was activated although no attack-declaration window is open"
    return True


@invariant(
    "window.summon",
    "\"When a monster is Summoned\" cards are activated only in the chain built right after a Summon (after the chain it "
    "happened in has resolved), before both players pass; where the engine reports open_windows.summon, it says whether that "
    "window is open.",
    ["WIN-EVENT"],
    "transition",
    FAMILY,
    reads=["over"],
    fields={"open_windows.summon": by_history("the summons history (the \"when a monster is Summoned\" window)")},
)
def summon_window(t):
    was_open = t.mon["summons"][0]
    now_open = t.mon_after["summons"][0]
    windows = t.after.get("open_windows")  # absent only for an engine that does not observe it
    says = windows["summon"] if windows is not None else now_open
    answering = [e for e in t.of("chain_link_added") if fact(t.cards.answers_summon(e["card"], e.get("effect")), e["card"], "whether it answers a Summon")]
    if not (was_open or now_open or says or answering):
        return None
    # (while a chain resolves, an effect waiting for a choice in mid-resolution, no window is open
    # to anyone: the claim is not compared; the chain history says when a chain resolves)
    if not t.after["over"] and not t.mon_after.chain.resolving and bool(says) != now_open:
        why = "it closed" if was_open else "no monster was Summoned"
        if now_open:
            why = "it is still open" if was_open else "a monster was just Summoned"
        return (
            f"the engine reports open_windows.summon = {str(bool(says)).lower()}, but the window is "
            f"{'open' if now_open else 'closed'} ({why})"
        )
    for e in answering:
        if not was_open:
            return f"{_ref(t, e['card_uid'])} was activated although no monster was just Summoned"
    return True


@invariant(
    "chain.not-set-this-turn",
    "Quick-Play Spells and Traps are never activated in the turn they were Set; where the engine reports a Set card's "
    "set_this_turn, it says what the board placed.",
    ["CH-SET-TURN"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
    reads=spell_fields("uid", "face_up", "kind", "subtype"),
    fields={
        f"players[].{z}.set_this_turn": by_board("the cards it places Set this turn (no card is Set in the Battle Phase)")
        for z in ("spells[]", "field_zone")
    },
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
        placed = t.cards.placed_this_turn(c["uid"], "set_this_turn") if t.cards is not None else None
        says = c.get("set_this_turn")  # (absent: the engine does not report it)
        if placed is None:
            placed = bool(says)  # (a run without a board document: only the engine says)
        elif says is not None and bool(says) != placed:
            return (
                f"the engine reports {card_ref(t.before, c['uid'])}'s set_this_turn = {str(bool(says)).lower()}, but the board "
                f"{'places it Set this turn' if placed else 'does not place it Set this turn'}"
            )
        if placed and (c["kind"] == "trap" or c["subtype"] == "quick-play"):
            return f"{card_ref(t.before, e['card_uid'], t.after)} was activated the turn it was Set"
    return True if seen else None


@invariant(
    "chain.from-hand",
    "Traps are never activated from the hand; Quick-Play Spells from the hand only on their controller's turn.",
    ["CH-QP-HAND"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
    reads=["chain[].card_uid", "turn_player", *pile_fields("uid")],  # (the card's kind: its card data)
)
def from_hand(t):
    seen = False
    for e in t.of("chain_link_added"):
        where = in_pile(t.before, e["card_uid"])
        link = _link(t.after, e["card_uid"])
        if where is None or where[1] != "hand" or link is None:
            continue
        seen = True
        kind, subtype = fact(t.cards.kind(e["card"]), e["card"], "its card type")
        if kind == "trap":
            return f"Trap {card_ref(t.before, e['card_uid'])} was activated from the hand"
        if kind == "spell" and subtype == "quick-play" and e["player"] != t.before["turn_player"]:
            return f"Quick-Play Spell {card_ref(t.before, e['card_uid'])} was activated from the hand on the opponent's turn"
    return True if seen else None


@invariant(
    "chain.lifo",
    "A chain resolves last in, first out; the engine's chain lists the links as they were added and not yet resolved (and "
    "which of them were negated), and a Spell or Trap Card shows on_chain exactly while its activation is on the chain.",
    ["CH-LIFO", "PRI-PASS-PASS"],
    "transition",
    FAMILY,
    reads=["chain[].card_uid", "over", *spell_fields("uid", "card")],
    fields={
        "choice": by_history("the chain history (whether the chain began to resolve: the link resolving waits for a choice)"),
        "chain[].negated": by_history("the chain history (activation_negated events)"),
        **ON_CHAIN,
    },
)
def lifo(t):
    links = t.mon.chain.links
    resolved = [e["card_uid"] for e in t.of("chain_link_resolved")]
    after_links = t.mon_after.chain.links
    if not links and not after_links and not resolved and not t.after["chain"]:
        return None
    if resolved:
        # the events in order: links added in this very transition resolve first, then those that
        # were there before; a link added after the chain resolved (a trigger starting a new chain:
        # The Winged Dragon of Ra - Immortal Phoenix when Ra is sent to the GY) is another chain's
        stack = [l[0] for l in links]
        done: list = []
        for e in t.events:
            if e.kind == "chain_link_added":
                stack.append(e["card_uid"])
            elif e.kind == "chain_link_resolved":
                if not stack or stack[-1] != e["card_uid"]:
                    got = done + [x for x in resolved[len(done) :]]
                    return f"chain resolved in order {card_refs(t.before, got, t.after)}, expected {card_refs(t.before, done + stack[::-1], t.after)}"
                done.append(stack.pop())
            elif e.kind == "chain_resolved":
                stack = []
    if not t.after["over"]:
        chain = t.after["chain"]
        says = [l["card_uid"] for l in chain]
        mine = [l[0] for l in after_links]
        if "choice" in t.after:
            ch = t.after["choice"]
            if ch is not None and isinstance(ch.get("resolving"), dict):
                says = says + [ch["resolving"].get("card_uid")]  # the link being resolved waits for the choice
        elif t.mon_after.chain.resolving and says == mine[:-1]:
            says = mine  # (the engine does not report its choices: the link resolving may wait for one)
        if says != mine:
            return (
                f"the engine's chain is {card_refs(t.after, says, t.before)}, the links added and not yet resolved are "
                f"{card_refs(t.after, mine, t.before)}"
            )
        for link, mine_link in zip(chain, after_links):
            n = link.get("negated")  # (absent: the engine does not report it)
            if n is not None and bool(n) != mine_link[6]:
                return (
                    f"the engine reports chain link {card_ref(t.after, mine_link[0], t.before)} negated = {str(bool(n)).lower()}, "
                    f"but its activation was {'' if mine_link[6] else 'not '}negated"
                )
        for c in spells(t.after):
            on = c.get("on_chain")  # (absent: the engine does not report it)
            if on is not None and bool(on) != activating(c, t.mon_after, t.cards):
                return (
                    f"the engine reports {card_ref(t.after, c['uid'])} on_chain = {str(bool(on)).lower()}, but its activation "
                    f"{'is' if not on else 'is not'} on the chain"
                )
    return True


@invariant(
    "priority.turn-player-first",
    "At every new step and after every chain resolves, the turn player acts first (unless a trigger, a replay or a choice is pending).",
    ["PRI-TP-FIRST", "PRI-PASS-PASS", "OCG-BATTLE-TP-FIRST"],
    "transition",
    FAMILY,
    events=["phase_changed", "chain_resolved"],
    # (whether a trigger or a choice is pending when the new step begins: only the engine's fields say)
    reads=["over", "to_act", "turn_player", "step", "pending_triggers", "choice"],
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
    # the chain is the monitor's (its top link, whether it was negated, whether it is a card
    # activation by the card data); which Set cards were Set this turn only the engine's field says
    reads=["over", "to_act", "phase", "step", "players[].lp", "players[].hand", "players[].spells[].uid", "players[].spells[].card", "players[].spells[].face_up"],
    fields={
        "players[].spells[].set_this_turn": by_board("the cards it places Set this turn (no card is Set in the Battle Phase)"),
        "pending_triggers": by_actions("a trigger is pending when activating or declining one is offered"),
        "choice": by_actions("a choice is pending when choosing is offered"),
    },
)
def counter_trap_offered(obs, actions, ctx):
    chain = ctx.mon.chain
    if not chain.links or chain.resolving or obs["over"]:
        return None
    pending = obs.get("pending_triggers")  # (absent: the engine does not report it; its actions say)
    if pending if pending is not None else any(a["kind"] in ("trigger", "decline") for a in actions):
        return None
    if (obs["choice"] is not None) if "choice" in obs else any(a["kind"] == "choose" for a in actions):
        return None
    uid, name, effect, controller, _speed, _targets, negated = chain.links[-1]
    if negated:
        return None
    eff = fact(ctx.cards.effect(name, effect), name, f"whether its {effect_words(effect)} is the card's activation")
    if eff.get("type") != "activate":
        return None
    p = obs["to_act"]
    if p is None:
        return None
    top_kind = fact(ctx.cards.kind(name), name, "its card type")[0]
    me = obs["players"][p]
    due = []
    for c in me["spells"]:
        if c is None or c["face_up"]:
            continue
        placed = ctx.cards.placed_this_turn(c["uid"], "set_this_turn")
        if placed if placed is not None else c.get("set_this_turn"):
            continue
        spec = fact(ctx.cards.counter_trap(c["card"]), c["card"], "what it answers as a Counter Trap")
        if spec is False or spec["answers"] != top_kind:
            continue
        if spec.get("opponent_only") and controller == p:
            continue
        if spec.get("battle_phase") and obs["phase"] != "battle":
            continue
        if arith.lt(me["lp"], spec.get("lp", 0)) or len(me["hand"]) < spec.get("discard", 0):
            continue
        due.append(c)
    if not due:
        return None
    labels = [a["label"] for a in actions]
    for c in due:
        name_c = c["card"]
        if not any(l == f"activate {name_c}" or l.startswith(f"activate {name_c} ") for l in labels):
            return f"{card_ref(obs, c['uid'])} answers {card_ref(obs, uid)} but is not offered in {obs['step']}"
    return True


@invariant(
    "chain.negate-vs-destroy",
    "Destroying a card whose activation is on the chain does not negate it: a link resolves as negated exactly when an effect "
    "negated it, and a Spell or Trap Card whose activation was negated is sent from the field when its link resolves.",
    ["CH-NEGATE"],
    "transition",
    FAMILY,
    events=["chain_link_resolved", "chain_link_added", "activation_negated"],
    reads=["over", *spell_fields("uid", "card", "face_up")],
    fields={
        **ON_CHAIN,
    },
)
def negate_vs_destroy(t):
    negated = {l[0] for l in t.mon.chain.links if l[6]}
    # Spell/Trap Cards whose activation is on the chain (the monitor's chain and the card data)
    on_chain = {c["uid"] for c in spells(t.before) if activating(c, t.mon, t.cards)}
    for e in t.of("chain_link_added"):  # activated in this transition: from the hand, or a Set card
        c = find_spell(t.before, e["card_uid"])
        if c is None or not c["face_up"]:
            on_chain.add(e["card_uid"])
    seen = False
    # the chain by link number (the monitor's before this transition, then this transition's events):
    # a card with two links on one chain (Cyber Dragon Infinity negating its own first activation)
    # has one negated link and one that is not; the links resolve last in, first out
    stack = [[l[0], bool(l[6])] for l in t.mon.chain.links]
    for e in t.events:
        if e.kind == "chain_link_added":
            del stack[e["link"] - 1:]
            stack.extend([None] * (e["link"] - 1 - len(stack)))
            stack.append([e["card_uid"], False])
        elif e.kind == "activation_negated":
            negated.add(e["card_uid"])
            if 1 <= e["link"] <= len(stack) and stack[e["link"] - 1] is not None:
                stack[e["link"] - 1][1] = True
        elif e.kind == "chain_link_resolved":
            seen = True
            u = e["card_uid"]
            top = stack.pop() if stack else None
            if top is not None and top[0] == u:
                link_negated = top[1]
                if link_negated and not e["negated"]:
                    return f"the activation of {card_ref(t.before, u, t.after)} was negated, but its link resolved as not negated"
                if not link_negated:
                    if e["negated"]:
                        return f"{card_ref(t.before, u, t.after)}'s link resolved as negated, but no effect negated it (destroying a card does not negate its activation)"
                    continue
                kind = fact(t.cards.kind(e["card"]), e["card"], "its card type")[0]
                if kind in ("spell", "trap") and u in on_chain and find_spell(t.after, u) is not None and not t.after["over"]:
                    return f"the activation of {card_ref(t.after, u, t.before)} was negated, but the card stays on the field"
                continue
            if u in negated:
                if not e["negated"]:
                    return f"the activation of {card_ref(t.before, u, t.after)} was negated, but its link resolved as not negated"
                kind = fact(t.cards.kind(e["card"]), e["card"], "its card type")[0]
                if kind in ("spell", "trap") and u in on_chain and find_spell(t.after, u) is not None and not t.after["over"]:
                    return f"the activation of {card_ref(t.after, u, t.before)} was negated, but the card stays on the field"
            elif e["negated"]:
                return f"{card_ref(t.before, u, t.after)}'s link resolved as negated, but no effect negated it (destroying a card does not negate its activation)"
    return True if seen else None
