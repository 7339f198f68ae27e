"""Damage-Step legality (000 "Spell / Trap Cards", "Flip Effects"; 002; 003/004 lists).

These invariants judge what happens *inside* a transition: one transition may mark a monster
destroyed by battle, change sub-steps and send it to the Graveyard, so they walk the transition's
events in order (:func:`walk`: each event with the sub-step it happened in), starting from the
monitor's ``battle`` history (marks, flips, damage calculated) of the state before. The engine's
``destroyed_by_battle``, ``flipped_by_battle`` and ``damage_calculated`` are held to that history.
"""

from __future__ import annotations

import re

from bpcheck.invariants.base import NotJudged, Unknown, by_history, invariant, part_not_evaluated
from bpcheck.invariants.cards import DAMAGE_STEPS, STAT_CHANGE_STEPS
from bpcheck.invariants.monitor import history, left_field
from bpcheck.invariants.view import (
    card_ref,
    card_refs,
    db_attack_effect,
    destroyed_instead,
    fact,
    find_spell,
    monster,
    monster_fields,
    monsters,
    negated,
    NEGATION_READS,
    spell_fields,
)

FAMILY = "damage step"

# the event kinds the walks of damage.flip-after-calculation and damage.destroyed-mark act on
_FLIP_KINDS = frozenset({"flipped", "damage_calculation", "chain_link_added"})
_MARK_KINDS = frozenset({"damage_calculation", "destroyed_by_battle", "card_moved", "destroyed", "phase_changed"})
_BY = {"effect": "by an effect", "rule": "by a rule"}
# a monster whose own text changes where it goes when destroyed (002:140: "Crystal Beast" monsters,
# "place it face-up in your Spell & Trap Zone ... instead of sending it to the GY"): its controller
# may be asked first, so it is judged when the Damage Step ends, not when its end begins
_GOES_ELSEWHERE = re.compile(r"\bplace (?:it|this card)\b[^.]*\binstead of sending it to the (?:GY|Graveyard)\b", re.I)


def _goes_elsewhere(cards, name) -> bool:
    row = (getattr(cards, "rows", None) or {}).get(name) if type(name) is str else None
    return row is not None and bool(_GOES_ELSEWHERE.search(row.text))


def walk(t):
    """(sub-step, event) for each event of the transition, in order: the step an event happened in
    is the step before the transition, moved on by each phase_changed event (the event itself is
    given with the step it leaves)."""
    step = t.before["step"]
    for e in t.events:
        yield step, e
        if e.kind == "phase_changed":
            step = e["to"]


def _walk_reads(t) -> None:
    """What :func:`walk` reads besides the events' kinds: the step before and where each
    phase_changed event goes. A check that skips the walk (none of the kinds it acts on) still
    reads them, so inconsistent data is reported the same way."""
    t.before["step"]
    for e in t.of("phase_changed"):
        e["to"]


def _in_ds(step) -> bool:
    return isinstance(step, str) and step.startswith("damage_step")


def _new_triggers(t):
    """The triggers pending after `t` that were not before; none when the engine does not report
    pending_triggers (the invariants that read them say what they then do not judge)."""
    if "pending_triggers" not in t.after or "pending_triggers" not in t.before:
        return []
    before = {(p["card_uid"], p["effect"]) for p in t.before["pending_triggers"]}
    return [p for p in t.after["pending_triggers"] if (p["card_uid"], p["effect"]) not in before]


def _ref(t, uid):
    """A card named in a transition's message: where it is after the transition, else before."""
    return card_ref(t.after, uid, t.before)


@invariant(
    "damage.activation-legal",
    "Every activation in a Damage-Step sub-step is allowed there by its card data: a Counter Trap; a monster's Quick Effect that "
    "negates an activation; under tcg and goat, a monster's Quick Effect that answers an effect's activation directly to negate "
    "that effect only; a Quick-Play Spell, Trap or Quick Effect that directly changes ATK/DEF, before damage calculation; an "
    "effect naming a Damage-Step timing, at that timing; a triggered or flip effect, in the sub-step of its event; never an "
    "optional effect triggered by the opponent's Summon, nor the cards 002 names as refused there by ruling (Curse of Anubis); the cards it allows there by ruling (Chthonian Blast) whenever their timing arises.",
    ["DS-LEGAL-COUNTER", "DS-LEGAL-NEGATE", "DS-LEGAL-NEGATE-EFFECT", "OCG-DS-NEGATE-EFFECT", "DS-START-TRIGGERS", "DS-DAMAGE-RESPONSE", "DS-DESTROYS-BY-BATTLE", "DS-EXTRA-ATTACK", "DS-OPPONENT-SUMMON", "DS-LEGAL-STATS", "DS-LEGAL-DAMAGE-TIMING", "DS-LEGAL-MANDATORY", "DS-LEGAL-OPTIONAL-TRIGGER", "DS-ILLEGAL-OTHER", "DS-REFUSED-BY-RULING", "DS-ALLOWED-BY-RULING"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
    reads=["step"],
)
def activation_legal(t):
    seen = False
    for step, e in walk(t):
        if e.kind != "chain_link_added" or not _in_ds(step):
            continue
        seen = True
        window = fact(t.cards.damage_step_window(e["card"], e.get("effect")), e["card"], "when it may be activated in the Damage Step")
        if step not in window:
            return f"{_ref(t, e['card_uid'])} was activated in {step}, where it may not be"
    return True if seen else None


@invariant(
    "damage.during-calculation",
    "During damage calculation only Counter Traps, Quick Effects that negate an activation and effects that name damage "
    "calculation are activated, in one chain.",
    ["DS-LEGAL-DAMAGE-TIMING", "DS-DURING-CALC-ONE-CHAIN", "DS-LEGAL-STATS"],
    "transition",
    FAMILY,
    steps=["damage_step_during_calculation"],
    step_events=["chain_link_added"],
    reads=["step"],
)
def during_calc(t):
    chain = list(t.mon.chain.links)
    calc_chains = t.mon.chain.chains_in_calc
    seen = False
    for step, e in walk(t) if "chain_link_added" in t.kind_set() else _walk_reads(t) or ():
        if e.kind == "chain_resolved":
            chain = []
        if e.kind != "chain_link_added":
            continue
        if step != "damage_step_during_calculation":
            chain.append(e)
            continue
        seen = True
        if not chain:
            if calc_chains >= 1:
                return f"a second chain was started during damage calculation (by {_ref(t, e['card_uid'])})"
            calc_chains += 1
        chain.append(e)
        window = fact(t.cards.damage_step_window(e["card"], e.get("effect")), e["card"], "when it may be activated in the Damage Step")
        if "damage_step_during_calculation" not in window:
            return f"{_ref(t, e['card_uid'])} was activated during damage calculation"
    if not seen:
        return True if t.before["step"] == "damage_step_during_calculation" else None
    return True


@invariant(
    "damage.no-destroyed-target",
    "A monster destroyed by battle is never targeted by a card or effect (marked before the transition or earlier in it).",
    ["DS-NO-TARGET-DESTROYED"],
    "transition",
    FAMILY,
    events=["chain_link_added"],
    reads=["step"],
)
def no_destroyed_target(t):
    marked = set(t.mon.battle.destroyed)
    seen = False
    for _step, e in walk(t):
        if e.kind == "destroyed_by_battle":
            marked.add(e["card_uid"])
        elif e.kind == "card_moved" and e.get("from") == "monster_zone":
            marked.discard(e["card_uid"])
        elif e.kind == "chain_link_added" and marked:
            seen = True
            hit = marked & set(e["targets"] or ())
            if hit:
                return f"{_ref(t, e['card_uid'])} targeted a monster already destroyed by battle: {card_refs(t.before, sorted(hit), t.after)}"
    return True if seen else None


@invariant(
    "damage.flip-after-calculation",
    "A flip effect of a monster flipped by the attack waits until after damage calculation (sub-step after_calculation_2) to "
    "become pending and to activate; the engine's flipped_by_battle says which monster the attack flipped.",
    ["DS-FLIP-EFFECT-TIMING", "DS-FLIP"],
    "transition",
    FAMILY,
    reads=["step", *monster_fields("uid")],
    fields={
        "players[].monsters[].flipped_by_battle": by_history("the battle history (the monsters the attack flipped)"),
        "pending_triggers": part_not_evaluated("when a flip effect becomes pending as a trigger (its activation is judged)"),
    },
)
def flip_after_calc(t):
    flipped = set(t.mon.battle.flipped)
    calculated = t.mon.battle.calculated
    seen = False
    for step, e in walk(t) if not _FLIP_KINDS.isdisjoint(t.kind_set()) else _walk_reads(t) or ():
        if e.kind == "flipped" and e.get("by") == "battle":
            flipped.add(e["card_uid"])
        elif e.kind == "damage_calculation":
            calculated = True
        elif e.kind == "chain_link_added":
            if not fact(t.cards.is_flip_effect(e["card"], e.get("effect")), e["card"], "whether the effect is a flip effect"):
                continue
            seen = True
            if step != "damage_step_after_calculation_2":
                return f"{_ref(t, e['card_uid'])}'s flip effect activated in {step}"
            if e["card_uid"] not in flipped:
                return f"{_ref(t, e['card_uid'])}'s flip effect activated but it was not flipped by the attack"
    for p in _new_triggers(t):
        if not fact(t.cards.is_flip_effect(p["card"], p["effect"]), p["card"], "whether the effect is a flip effect"):
            continue
        seen = True
        if t.after["step"] != "damage_step_after_calculation_2" or not calculated:
            return f"{_ref(t, p['card_uid'])}'s flip effect became pending in {t.after['step']}; it waits for after damage calculation (2)"
        if p["card_uid"] not in flipped:
            return f"{_ref(t, p['card_uid'])}'s flip effect became pending but it was not flipped by the attack"
    mine = set(t.mon_after.battle.flipped)
    for m in monsters(t.after):
        says = m.get("flipped_by_battle")  # (absent: the engine does not report it)
        if says is None:
            continue
        says = bool(says)
        if says != (m["uid"] in mine):
            return (
                f"{card_ref(t.after, m['uid'])}: the engine reports flipped_by_battle = {str(says).lower()}, "
                f"but {'a' if m['uid'] in mine else 'no'} flip by the attack happened in this Damage Step"
            )
        seen = seen or says
    return True if seen else None


@invariant(
    "damage.destroyed-mark",
    "Monsters are marked destroyed by battle only by damage calculation (in its sub-step, after it: a replacement may be declined "
    "first) and stay on the field until destroyed-by-battle monsters "
    "are sent to the Graveyard at the end of the Damage Step: until then none is destroyed again (by an effect, its own included, "
    "or a rule) or leaves the field in any other way (banished, sent to the Graveyard, returned to the hand or Deck); all of them "
    "go then, by battle, except one whose face-up Equip Card is destroyed instead, by its card data, and one whose own Continuous "
    "Effect destroys it when a card or effect is activated (Scrap Shark, by its card data: destroyed by that effect in the "
    "transition of an activation); one whose text changes where it goes when destroyed (a \"Crystal Beast\": \"place it ... "
    "instead of sending it to the GY\", 002:140) may wait for its controller's choice, but not past the Damage Step; "
    "the engine's destroyed_by_battle shows exactly the marked monsters.",
    ["DS-DESTROYED-MARK", "DS-NO-TARGET-DESTROYED", "DS-SELF-DESTROY", "DS-SUBSTEPS", "DS-SEND-OWNER-GY", "DS-INSTEAD", "DS-SELF-DESTROY-SCRAP-SHARK"],
    "transition",
    FAMILY,
    # (the spells: an Equip Card destroyed instead of its monster, DS-INSTEAD)
    # (a monster's card and position: Scrap Shark's own effect; the spells: negation, view.negated)
    reads=["step", "over", *monster_fields("uid", "card", "position"), *spell_fields("equipped_to"), *NEGATION_READS],
    fields={"players[].monsters[].destroyed_by_battle": by_history("the battle history (the monsters marked destroyed by battle)")},
)
def mark_at_calc(t):
    marked = set(t.mon.battle.destroyed)
    seen = bool(marked)
    # a monster that would be destroyed by this calculation may be marked only after a replacement
    # for it was declined ("you can destroy this card instead": Fighting Spirit), an action later,
    # still in the calculation's sub-step: the calculation is the monitor's history (its
    # damage_calculation event), not the engine's word. rule: DS-DESTROYED-MARK
    calc = bool(t.mon.battle.calculated) and t.before["step"] == "damage_step_during_calculation"
    entered_end = left_end = False
    activated = bool(t.of("chain_link_added"))  # (a card or effect activated in this transition)
    for step, e in walk(t) if not _MARK_KINDS.isdisjoint(t.kind_set()) else _walk_reads(t) or ():
        k = e.kind
        if k == "damage_calculation":
            calc = True
        elif k == "destroyed_by_battle":
            seen = True
            if not calc or step != "damage_step_during_calculation":
                return f"{_ref(t, e['card_uid'])} became destroyed by battle in {step}, not by damage calculation"
            marked.add(e["card_uid"])
        elif k == "card_moved" and e.get("from") == "monster_zone":
            uid = e["card_uid"]
            if e.get("reason") == "battle":
                seen = True
                if uid not in marked:
                    return f"{card_ref(t.before, uid, t.after)} left the field by battle but was never destroyed by battle"
                if step != "damage_step_end":
                    return f"{card_ref(t.before, uid, t.after)}, destroyed by battle, was sent to the {e.get('to')} in {step}, before the end of the Damage Step"
                instead = destroyed_instead(t.before, t.cards, uid)
                if instead is not None:  # rule: DS-INSTEAD
                    return (
                        f"{card_ref(t.before, uid, t.after)}, destroyed by battle, was sent to the {e.get('to')} although "
                        f"{card_ref(t.before, instead, t.after)} is destroyed instead of it"
                    )
            elif uid in marked:
                return (
                    f"{card_ref(t.before, uid, t.after)}, destroyed by battle, left the field in {step} (reason {e.get('reason')}, to the {e.get('to')}); "
                    "it stays on the field until destroyed-by-battle monsters are sent to the Graveyard"
                )
            marked.discard(uid)
        elif k == "phase_changed":
            if e["to"] == "damage_step_end":
                entered_end = True
            elif e["from"] == "damage_step_end":
                left_end = True
        elif k == "destroyed" and marked and step == "damage_step_end" and e["card_uid"] not in marked:
            # rule: DS-INSTEAD (an Equip Card destroyed instead of its monster: the monster stays)
            c = find_spell(t.before, e["card_uid"])
            if c is not None and c.get("equipped_to") in marked and destroyed_instead(t.before, t.cards, c["equipped_to"]) == c["uid"]:
                marked.discard(c["equipped_to"])
        elif k == "destroyed" and marked and e["card_uid"] in marked and e.get("by") == "effect" and activated and _scrap_shark(t, e["card_uid"]):
            # rule: DS-SELF-DESTROY-SCRAP-SHARK (by its card data: an activation destroys it, even
            # destroyed by battle; it leaves the field destroyed by its effect, not by battle)
            marked.discard(e["card_uid"])
        elif k == "destroyed" and marked and e["card_uid"] in marked and e.get("by") != "battle":
            return (
                f"{card_ref(t.before, e['card_uid'], t.after)}, already destroyed by battle, was destroyed again "
                f"{_BY.get(e.get('by'), 'by ' + str(e.get('by')))} in {step}; "
                "no effect or rule destroys a monster destroyed by battle before it is sent to the Graveyard"
            )
    if activated and not t.after["over"]:
        # rule: DS-SELF-DESTROY-SCRAP-SHARK (an activation destroys it at once, destroyed by battle or not)
        for m in monsters(t.after):
            if m["uid"] in marked and _scrap_shark(t, m["uid"]) and m.get("position") != "facedown" and not negated(t.before, m["uid"], t.cards, t.mon):
                return f"{card_ref(t.after, m['uid'])}, destroyed by battle, is still on the field after a card or effect was activated; its Continuous Effect destroys it even so"
    if (entered_end or left_end) and not t.after["over"]:
        # rule: DS-DESTROYED-MARK (002:140: a "Crystal Beast" monster, whose text changes where it
        # goes when destroyed, may wait for its controller's answer: judged as the Damage Step ends)
        left = [m for m in monsters(t.after) if m["uid"] in marked and (left_end or not _goes_elsewhere(t.cards, m["card"]))]
        if left:
            return f"{card_ref(t.after, left[0]['uid'])} was destroyed by battle but is still on the field at the end of the Damage Step"
    mine = set(t.mon_after.battle.destroyed)
    for m in monsters(t.after):
        says = m.get("destroyed_by_battle")  # (absent: the engine does not report it)
        if says is None:
            continue
        says = bool(says)
        if says != (m["uid"] in mine):
            return (
                f"{card_ref(t.after, m['uid'])}: the engine reports destroyed_by_battle = {str(says).lower()}, but damage "
                f"calculation {'marked' if m['uid'] in mine else 'did not mark'} it"
            )
        seen = seen or says
    return True if seen else None


def _scrap_shark(t, uid: int) -> bool:
    """Monster `uid` is face-up in the observation before with a Continuous Effect that destroys
    it when an Effect Monster's effect or a Spell/Trap Card is activated, by its card data
    (DS-SELF-DESTROY-SCRAP-SHARK). Raises Unknown when its data cannot say."""
    m = monster(t.before, uid)
    if m is None or m.get("position") == "facedown" or t.cards is None:
        return False
    return bool(fact(t.cards.destroys_itself_on_activation(m["card"]), m["card"], "whether an activation destroys it"))


def _trigger_resolvable(cards, after, e, i) -> bool | None:
    """Whether the "destroyed by battle" trigger `i` of the monster card_moved event `e` sent to
    the Graveyard can resolve in `after`: a free Monster Zone of its owner and a card in their
    Deck that it can Special Summon (by the card data); None when the card data cannot say."""
    filters = cards.deck_summon_filters(e["card"], i)
    if not filters:
        return None
    me = after["players"][e["owner"]]
    if all(m is not None for m in me["monsters"]):
        return False  # no zone to Special Summon into: the trigger cannot resolve
    for d in me["deck"]:
        ok = [cards.matches(d["card"], f) for f in filters]
        if any(x is None for x in ok):
            return None
        if all(ok):
            return True
    return False


def _sent_by_battle(t) -> list:
    return [e for e in t.of("card_moved") if e.get("reason") == "battle" and e.get("to") == "graveyard"]


def _left_by_battle_public(t) -> list:
    """The card_moved events of monsters that left the field by battle to a place of public
    knowledge: the Graveyard, or banished ("Macro Cosmos"); a Token goes nowhere (DS-DESTROYED-BY-BATTLE)."""
    return [e for e in t.of("card_moved") if e.get("reason") == "battle" and e.get("to") in ("graveyard", "banished")]


@history(
    "battle_negated",
    "The battlers of the current turn's battles whose effects are negated if damage calculation destroys them by battle: each "
    "whose opponent's monster in the battle was, in the observation before the damage_calculation event, a Fiend controlled by "
    "the controller of a face-up \"Dark Ruler Ha Des\" (by the card data: a card whose continuous effects say \"Negate the "
    "effects of monsters destroyed by battle with Fiend-Type monsters you control\"), its effects not negated (decided then, "
    "002 OCG): (uid, True); (uid, False) where a card's data cannot say (a card of a card database: whether it negates, or "
    "is negated). Forgotten when the turn ends. Never the engine's bookkeeping.",
)
def _battle_negated(prev, t):
    if prev and t.before.get("turn") != t.after.get("turn"):
        prev = ()
    if "damage_calculation" not in t.kind_set():
        return prev
    e = t.of("damage_calculation")[0]
    out = dict(prev)
    for uid, other in ((e["attacker_uid"], e["target_uid"]), (e["target_uid"], e["attacker_uid"])):
        me, them = monster(t.before, uid), monster(t.before, other)
        if me is None or them is None or me["controller"] == them["controller"] or t.cards.stat(them["card"], "race") != "Fiend":
            continue  # (its Type by its card data)
        for src in monsters(t.before):  # rule: DS-NEGATE-BATTLE (decided at damage calculation)
            if src["controller"] != them["controller"] or src["position"] == "facedown":
                continue
            try:
                if negated(t.before, src["uid"], t.cards, t.mon):
                    continue
                says = fact(t.cards.negates_destroyed_by_own_fiends(src["card"]), src["card"], "whether it negates monsters it destroys by battle")
            except Unknown:  # (the card data cannot say: unknown, never "not negated")
                out[uid] = out.get(uid) or False
                continue
            if says:
                out[uid] = True
    new = tuple(sorted(out.items()))
    return prev if new == prev else new


def _decided(pairs, uid) -> bool | None:
    """Monster `uid` in a history of (uid, sure) pairs decided at damage calculation
    (``battle_negated``, ``battle_banish``): True, False (absent), or None where a card's data
    cannot say."""
    for u, sure in pairs:
        if u == uid:
            return True if sure else None
    return False


def _negation(mon, uid) -> bool | None:
    """Whether monster `uid`'s effects are negated as it is destroyed by battle (the monitor's
    ``battle_negated`` history)."""
    return _decided(mon["battle_negated"], uid)


@history(
    "battle_triggers",
    "\"Destroyed by battle and sent to the Graveyard\" triggers due: (card, effect) for each monster sent to the Graveyard by "
    "battle whose trigger can resolve (by its card data, a free Monster Zone of its owner and a Deck card it can Special "
    "Summon), and for each monster that left the field by battle to the Graveyard or banished whose card has an \"If this card "
    "is destroyed by battle\" trigger naming no Graveyard or an \"If this card is destroyed\" trigger, from that transition until the trigger is activated (a chain link of "
    "the card) or declined (trigger_declined), the duel or the turn ends. Never the engine's pending_triggers.",
)
def _battle_triggers(prev, t):
    if not prev and "card_moved" not in t.kind_set():
        return prev  # none due, and nothing sent
    due = set(prev)
    if due:
        if t.before.get("turn") != t.after.get("turn") or t.after.get("over"):
            due = set()
        for e in t.events:
            if e.kind in ("chain_link_added", "trigger_declined"):
                due = {d for d in due if d[0] != e.get("card_uid")}
    if t.cards is not None and not t.after.get("over"):
        for e in _sent_by_battle(t):
            if _negation(t.mon, e["card_uid"]) is not False:
                continue  # rule: DS-NEGATE-BATTLE (its effects are negated, or may be: no trigger is due)
            for i in t.cards.battle_gy_triggers(e.get("card")) or ():
                if _trigger_resolvable(t.cards, t.after, e, i) is True:
                    due.add((e["card_uid"], i))
        # "If this card is destroyed by battle" (no Graveyard named): due wherever it went, if public
        # (DS-DESTROYED-BY-BATTLE)
        # (an engine that places a lone mandatory trigger itself does it in the same transition)
        placed = {e.get("card_uid") for e in t.events if e.kind in ("chain_link_added", "trigger_declined")}
        for e in _left_by_battle_public(t):
            if e["card_uid"] in placed:
                continue
            for i in t.cards.battle_destroyed_triggers(e.get("card")) or ():
                due.add((e["card_uid"], i))
    new = tuple(sorted(due))
    return prev if new == prev else new


@invariant(
    "damage.battle-gy-trigger",
    "\"Destroyed by battle and sent to the Graveyard\" triggers become pending only at the end of the Damage Step, for a monster "
    "sent to the Graveyard by battle in that transition, and each such monster's trigger does when it can resolve: it is "
    "activated or declined before anything else happens; an \"If this card is destroyed by battle\" trigger naming no "
    "Graveyard, or on being destroyed in general, for a monster that left the field by battle to the Graveyard or banished, "
    "wherever it went; none for a monster whose effects are negated by the card data of the side that destroyed it "
    "(\"Dark Ruler Ha Des\", decided at damage calculation).",
    ["DS-END-TRIGGERS", "DS-DESTROYED-BY-BATTLE", "DS-DESTROYED-IN-GENERAL", "DS-LEGAL-OPTIONAL-TRIGGER", "DS-SEND-OWNER-GY", "DS-NEGATE-BATTLE"],
    "transition",
    FAMILY,
    reads=["step", "over", "turn", "players[].monsters", "players[].deck[].card"],
    fields={
        "pending_triggers": part_not_evaluated(
            "when a trigger becomes pending (whether a due trigger is activated or declined is the battle_triggers history's)"
        ),
    },
)
def battle_gy_trigger(t):
    seen = False
    due = t.mon["battle_triggers"]
    if due and not t.after["over"] and t.before["turn"] == t.after["turn"]:
        seen = True
        handled = {e["card_uid"] for e in t.events if e.kind in ("chain_link_added", "trigger_declined")}
        if not handled & {d[0] for d in due}:
            return (
                f"{card_ref(t.before, due[0][0], t.after)} left the field by battle and its trigger can resolve, but "
                f"{t.action.get('label')!r} neither activates nor declines it"
            )
    # rule: DS-NEGATE-BATTLE (a negated monster's "destroyed by battle" trigger is never activated:
    # judged from the chain history and the card data, with or without pending_triggers)
    for e in t.of("chain_link_added"):
        if _negation(t.mon, e.get("card_uid")) is True and e.get("effect") is not None and t.cards is not None:
            effs = fact(t.cards.battle_gy_triggers(e.get("card")), e.get("card"), "its triggered effects")
            if e["effect"] in effs:
                return (
                    f"{_ref(t, e['card_uid'])}'s \"destroyed by battle\" trigger was activated, but its effects are negated (it was "
                    "destroyed by battle with a Fiend of the controller of a face-up card that negates them, by its card data)"
                )
    sent = {e["card_uid"]: e for e in _sent_by_battle(t)}
    left = {e["card_uid"]: e for e in _left_by_battle_public(t)}
    if not sent and not t.of("card_moved"):
        return True if seen else None
    observed = "pending_triggers" in t.after
    pending = {(p["card_uid"], p["effect"]): p for p in t.after["pending_triggers"]} if observed else {}
    for p in _new_triggers(t):
        if p["effect"] in fact(t.cards.battle_destroyed_triggers(p["card"]), p["card"], "its triggered effects"):
            seen = True
            eff = fact(t.cards.effect(p["card"], p["effect"]), p["card"], "its triggered effects")
            if eff.get("when") == "destroyed" and p["card_uid"] not in left:
                # destroyed in general: by a card effect, pending once that Chain has resolved
                # (DS-DESTROYED-IN-GENERAL); judged here only when destroyed by battle
                if not any(e.kind == "destroyed" and e.get("card_uid") == p["card_uid"] for e in t.events):
                    return f"{_ref(t, p['card_uid'])}'s \"destroyed\" trigger became pending, but it was not destroyed"
                continue
            if p["card_uid"] not in left:
                return f"{_ref(t, p['card_uid'])}'s \"destroyed by battle\" trigger became pending, but it did not leave the field by battle to a public place"
            if t.after["step"] != "damage_step_end":
                return f"{_ref(t, p['card_uid'])}'s \"destroyed by battle\" trigger became pending in {t.after['step']}"
            continue
        effs = fact(t.cards.battle_gy_triggers(p["card"]), p["card"], "its triggered effects")
        if p["effect"] not in effs:
            continue
        seen = True
        if p["card_uid"] not in sent:
            return f"{_ref(t, p['card_uid'])}'s \"destroyed by battle\" trigger became pending, but it was not sent to the Graveyard by battle"
        if t.after["step"] != "damage_step_end":
            return f"{_ref(t, p['card_uid'])}'s \"destroyed by battle\" trigger became pending in {t.after['step']}"
    if t.after["over"]:
        return True if seen else None
    for uid, e in sent.items():
        effs = fact(t.cards.battle_gy_triggers(e["card"]), e["card"], "its triggered effects")
        for i in effs:
            seen = True
            neg = _negation(t.mon, uid)
            if neg is None:
                return NotJudged(f"{e['card']}: whether its effects are negated as it is destroyed by battle cannot be read from the card data")
            if neg:  # rule: DS-NEGATE-BATTLE
                if (uid, i) in pending:
                    return f"{_ref(t, uid)}'s \"destroyed by battle\" trigger became pending, but its effects are negated (it was destroyed by battle with a Fiend of the controller of a face-up card that negates them, by its card data)"
                continue
            if (uid, i) in pending:
                continue
            can = _trigger_resolvable(t.cards, t.after, e, i)
            if can is None:
                return NotJudged(f"{e['card']}: whether its trigger can resolve cannot be read from its card data")
            if can and observed:
                return f"{_ref(t, uid)} was sent to the Graveyard by battle but its trigger is not pending (a card in the Deck can be Summoned)"
    for uid, e in left.items():
        for i in fact(t.cards.battle_destroyed_triggers(e["card"]), e["card"], "its triggered effects"):
            seen = True
            if observed and (uid, i) not in pending:
                return f"{_ref(t, uid)} left the field by battle ({e['to']}) but its \"destroyed by battle\" trigger is not pending"
    return True if seen else None


@invariant(
    "damage.substep-order",
    "The Damage-Step sub-steps follow the TCG order, one after the other within a transition too, the flip sub-step only for a "
    "face-down target, damage calculation performed when damage calculation is left, and the Damage Step ends back in the Battle Step.",
    ["DS-SUBSTEPS", "BP-STEPS", "DS-FLIP", "OCG-DS-FLIP-BEFORE-CALC"],
    "transition",
    FAMILY,
    steps=DAMAGE_STEPS,
    step_events=["phase_changed", "damage_calculation"],
    reads=["step", "over", "attack", "attack.target", *monster_fields("uid", "position")],
    fields={"attack.battle_ended": by_history("the battle history (a battle_ended_early event in this Damage Step)")},
)
def order(t):
    changes = t.of("phase_changed")
    if not changes:
        if (_in_ds(t.before["step"]) or _in_ds(t.after["step"])) and t.after["step"] != t.before["step"] and not t.after["over"]:
            return f"the step changed {t.before['step']} -> {t.after['step']} without a phase_changed event"
        for step, e in walk(t) if "damage_calculation" in t.kind_set() else _walk_reads(t) or ():
            if e.kind == "damage_calculation" and step != "damage_step_during_calculation":
                return f"damage calculation was performed in {step}"
        return None
    cursor = t.before["step"]
    calculating = False  # damage calculation was performed: the next step change leaves damage calculation
    # DS-BATTLER-LEAVES: a battle that ended early skips to the end of the Damage Step (the
    # monitor's battle history, or in this transition); the engine's battle_ended is held to it
    a0 = t.before["attack"]
    ended_before = t.mon.battle.ended
    says = a0.get("battle_ended") if a0 is not None else None  # (absent: the engine does not report it)
    if says is not None and _in_ds(t.before["step"]) and bool(says) != ended_before:
        return (
            f"the engine reports attack.battle_ended = {str(bool(says)).lower()}, but "
            + ("a battler left the field in this Damage Step" if ended_before else "no battler left the field in this Damage Step")
        )
    ended = ended_before or bool(t.of("battle_ended_early"))
    for step, e in walk(t):
        if e.kind == "damage_calculation":
            if step != "damage_step_during_calculation":
                return f"damage calculation was performed in {step}"
            calculating = True
        if e.kind != "phase_changed":
            continue
        calculating = False
        frm, to = e["from"], e["to"]
        if frm != cursor:
            return f"the step changed {frm} -> {to}, but the step was {cursor}"
        cursor = to
        if to.startswith("damage_step") and not frm.startswith("damage_step"):
            if frm != "battle_step" or to != "damage_step_start":
                return f"the Damage Step was entered as {frm} -> {to}"
        if frm.startswith("damage_step"):
            if not to.startswith("damage_step"):
                if frm != "damage_step_end" or to != "battle_step":
                    return f"the Damage Step was left as {frm} -> {to}"
                continue
            i = DAMAGE_STEPS.index(frm)
            if i + 1 >= len(DAMAGE_STEPS):
                return f"Damage-Step sub-steps out of order: {frm} -> {to}"
            nxt = DAMAGE_STEPS[i + 1]
            if to != nxt and not (nxt == "damage_step_flip" and to == "damage_step_before_calculation") and not (ended and to == "damage_step_end"):
                return f"Damage-Step sub-steps out of order: {frm} -> {to}"
            if to == "damage_step_flip" and t.cards.ruleset == "ocg":  # rule: OCG-DS-FLIP-BEFORE-CALC
                return "the flip sub-step happened, but the OCG flips a face-down target at Before Damage Calculation (no flip sub-step)"
            if to == "damage_step_flip":
                a = t.before["attack"]
                tgt = monster(t.before, a["target"]) if a else None
                if tgt is None or tgt["position"] != "facedown":
                    what = "there is no attack target" if tgt is None else f"the attack target {card_ref(t.before, tgt['uid'])} is {tgt['position']}"
                    return f"the flip sub-step happened but {what}, not face-down"
            if frm == "damage_step_during_calculation" and not (t.of("damage_calculation") or ended or t.mon.battle.calculated):
                return "damage calculation was left without damage calculation being performed"
    if calculating and not t.after["over"]:
        return "damage calculation was performed on entering damage calculation, before its window; it is performed when the sub-step is left"
    if cursor != t.after["step"] and not t.after["over"]:
        return f"the last step change went to {cursor}, but the engine is in {t.after['step']}"
    return True


@invariant(
    "damage.calculation-once",
    "Damage calculation happens once per battle, when damage calculation is over, and only if both battlers are still on the field; "
    "the engine's damage_calculated says whether it happened.",
    ["DS-SUBSTEPS", "DS-BATTLER-LEAVES", "RPL-BATTLE-STEP-ONLY"],
    "transition",
    FAMILY,
    steps=DAMAGE_STEPS,
    step_events=["damage_calculation"],
    reads=["step", "over", "attack", "attack.attacker", "attack.target", *monster_fields("uid")],
    fields={"attack.damage_calculated": by_history("the battle history (the damage_calculation events of this battle)")},
)
def calc_once(t):
    calcs = t.of("damage_calculation")
    a2 = t.after["attack"]
    if a2 is not None and _in_ds(t.after["step"]) and not t.after["over"]:
        mine = t.mon_after.battle.calculated
        says = a2.get("damage_calculated")  # (absent: the engine does not report it)
        if says is not None and bool(says) != mine:
            return f"the engine reports damage_calculated = {str(bool(says)).lower()}, but damage calculation {'was' if mine else 'was not'} performed for this battle"
    if not calcs:
        return None
    if len(calcs) > 1:
        return "damage calculation happened twice in one transition"
    if t.before["step"] != "damage_step_during_calculation":
        unknown = db_attack_effect(t)
        if unknown is not None:  # (Mutant Mindmaster: "attack with it instead", a calculation inside its resolution)
            return NotJudged(unknown)
        return f"damage calculation happened in {t.before['step']}"
    a = t.before["attack"]
    if a is None or t.mon.battle.calculated:
        return "damage calculation happened twice for one battle"
    if monster(t.before, a["attacker"]) is None:
        return f"damage calculation happened although the attacker {card_ref(t.before, a['attacker'], t.after)} left the field"
    if a["target"] is not None and monster(t.before, a["target"]) is None:
        return f"damage calculation happened although the attack target {card_ref(t.before, a['target'], t.after)} left the field"
    return True


# -- effects that end with the Damage Step (DS-LINGERING-END) ---------------------------------

_ENDS_WITH_DS = ("end_of_damage_step", "damage_calculation")
_MOD_OP = {("atk", "add"): "modify_atk", ("def", "add"): "modify_def", ("atk", "halve"): "halve_atk", ("def", "set_original"): "set_original_def"}
_AFTER_CALC = frozenset({"damage_step_after_calculation_1", "damage_step_after_calculation_2", "damage_step_end"})


def _ds_effects(obs, cards) -> list[tuple[tuple, str, str, int | None]]:
    """The effects applying in `obs` that last no longer than the Damage Step by their source
    card's data (never by the engine's ``until``): (key, duration, what, the monster holding
    it or None)."""
    out = []
    for l in obs["lingering"]:
        dur = _duration(cards, l["source"], l["what"], l.get("until"))
        if dur in _ENDS_WITH_DS:
            out.append((("L", l["what"], l["player"], l["source"]), dur, f"{l['source']}'s {l['what'].replace('_', ' ')}", None))
    for m in monsters(obs):
        for md in m["lingering_modifiers"]:
            op = _MOD_OP.get((md["stat"], md["kind"]))
            if op is None:
                continue
            dur = _duration(cards, md["source"], op, md.get("until"))
            if dur in _ENDS_WITH_DS:
                key = ("M", m["uid"], md["source_uid"], md["stat"], md["kind"])  # (not the amount: it may be symbolic)
                out.append((key, dur, (md["source"], md["source_uid"], md["stat"]), m["uid"]))
    return out


def _modifiers_observed(obs) -> bool:
    return all("lingering_modifiers" in m for m in monsters(obs))


def _what(obs, what, holder, other) -> str:
    """An effect of :func:`_ds_effects` as a message names it (its cards where `obs`, else
    `other`, holds them)."""
    if holder is None:
        return what
    source, source_uid, stat = what
    src = card_ref(obs, source_uid, other) if source_uid is not None else source
    return f"{src}'s {stat.upper()} change on {card_ref(obs, holder, other)}"


_EFFECT_KINDS = frozenset({"stat_modified", "lingering_effect", "effect_expired", "card_moved"})
_EXPIRED_MODS = "modifiers of "


@history(
    "effects",
    "Lingering effects in force as the events applied them: ATK/DEF changes (stat_modified: the monster, source, stat, kind, "
    "until) and player-wide effects (lingering_effect: what, player, source, until), until an effect_expired event ends "
    "those of its duration (the changes of the monster it names, or the player-wide ones) or the monster leaves the field; "
    "forgotten at the end of the turn. Never the engine's lingering or lingering_modifiers.",
)
def _effects(prev, t):
    kinds = t.kind_set()
    new_turn = t.before.get("turn") != t.after.get("turn")
    if not prev and "stat_modified" not in kinds and "lingering_effect" not in kinds:
        return prev  # none in force, and none applied
    if not new_turn and _EFFECT_KINDS.isdisjoint(kinds):
        return prev  # none of the events it reads
    out = set() if new_turn else set(prev)
    for e in t.events:
        k = e.kind
        if k == "stat_modified":
            out.add(("M", e.get("card_uid"), e.get("source"), e.get("stat"), e.get("modifier"), e.get("until")))
        elif k == "lingering_effect":
            out.add(("L", e.get("what"), e.get("player"), e.get("source"), e.get("until")))
        elif k == "effect_expired":
            until, what = e.get("until"), str(e.get("what"))
            if what == "lingering":
                out = {x for x in out if not (x[0] == "L" and x[4] == until)}
            else:
                name = what[len(_EXPIRED_MODS):] if what.startswith(_EXPIRED_MODS) else None
                out = {
                    x for x in out
                    if not (x[0] == "M" and x[5] == until and (name is None or (monster(t.before, x[1]) or {}).get("card", name) == name))
                }  # fmt: skip
        elif left_field(e):
            out = {x for x in out if not (x[0] == "M" and x[1] == e.get("card_uid"))}
    new = tuple(sorted(out, key=repr))
    return prev if new == prev else new


def _ds_effects_of_history(entries, cards) -> list[tuple[tuple, str, object, int | None]]:
    """:func:`_ds_effects` from the monitor's ``effects`` history instead of the observation."""
    out = []
    for x in entries:
        if x[0] == "L":
            _l, what, player, source, until = x
            dur = _duration(cards, source, what, until)
            if dur in _ENDS_WITH_DS:
                out.append((("L", what, player, source), dur, f"{source}'s {str(what).replace('_', ' ')}", None))
        else:
            _m, uid, source, stat, kind, until = x
            op = _MOD_OP.get((stat, kind))
            if op is None:
                continue
            dur = _duration(cards, source, op, until)
            if dur in _ENDS_WITH_DS:
                out.append((("M", uid, source, stat, kind), dur, (source, None, stat), uid))
    return out


def _duration(cards, source, op, says) -> str | None:
    """How long `source`'s `op` lasts by its card data; when its effects give it several
    durations, the one the engine names if it is one of them (else the card data cannot tell)."""
    d = fact(cards.durations(source, op), source, f"how long its {op} lasts")
    if len(d) == 1:
        return next(iter(d))
    if not d:
        return None  # no such operation in its data: not an effect of the Damage Step's kind
    return fact(says if says in d else None, source, f"which of its {op} durations applies")


@invariant(
    "damage.lingering-end",
    "Effects that last until the end of the Damage Step (by their card data) stop applying when the Damage Step ends, not "
    "before; effects that last during damage calculation only stop when damage calculation is over, not before.",
    ["DS-LINGERING-END"],
    "transition",
    FAMILY,
    reads=["over", "step", *monster_fields("uid")],
    fields={
        **{
            f"lingering[].{f}": by_history("the effects history (stat_modified, lingering_effect and effect_expired events)")
            for f in ("player", "source", "until", "what")
        },
        **{
            f"players[].monsters[].lingering_modifiers[].{f}": by_history("the effects history")
            for f in ("kind", "source", "source_uid", "stat", "until")
        },
    },
    steps=DAMAGE_STEPS,
)
def lingering_end(t):
    b, a = t.before, t.after
    if a["over"]:
        return None
    if "lingering" in b and "lingering" in a and _modifiers_observed(b) and _modifiers_observed(a):
        before = _ds_effects(b, t.cards)
        after = _ds_effects(a, t.cards)
    else:  # the engine does not report them: the effects its events applied and ended
        before = _ds_effects_of_history(t.mon["effects"], t.cards)
        after = _ds_effects_of_history(t.mon_after["effects"], t.cards)
    if not (before or after):
        return None
    left = not _in_ds(a["step"])
    calculated = bool(t.of("damage_calculation")) or a["step"] in _AFTER_CALC or left
    for _key, dur, what, holder in after:
        if left:
            return f"{_what(a, what, holder, b)} (until {dur.replace('_', ' ')}) still applies after the Damage Step ended"
        if dur == "damage_calculation" and calculated:
            return f"{_what(a, what, holder, b)} (during damage calculation only) still applies after damage calculation"
    if not left:
        now = {key for key, *_ in after}
        for key, dur, what, holder in before:
            if key in now or (holder is not None and monster(a, holder) is None):
                continue  # still applies, or its monster left the field (and the effect with it)
            if dur == "damage_calculation" and calculated:
                continue
            until = "damage calculation was over" if dur == "damage_calculation" else "the Damage Step ended"
            return f"{_what(b, what, holder, a)} stopped applying in {a['step']}, before {until}"
    return True


# -- Flip effects of monsters destroyed face-down (CARD-FACEDOWN-DESTROYED) -------------------


def _flip_link(cards, name, effect) -> bool:
    if effect is None:  # an engine that does not say which effect: the card's only one
        effs = fact(cards.effects(name), name, "its effects")
        return len(effs) == 1 and bool(fact(cards.has_flip_effect(name), name, "whether it has a Flip effect"))
    return bool(fact(cards.is_flip_effect(name, effect), name, f"whether its effect {effect} is a Flip effect"))


@invariant(
    "damage.facedown-destroyed-flip",
    "A face-down Flip monster that leaves the field without being flipped face-up does not activate its Flip effect: none of it "
    "is added to the chain or waits as a trigger in that transition.",
    ["CARD-FACEDOWN-DESTROYED", "DS-FLIP"],
    "transition",
    FAMILY,
    events=["card_moved"],
    reads=monster_fields("uid", "card", "position"),
    fields={"pending_triggers": part_not_evaluated("whether the Flip effect waits as a trigger (its activation is judged)")},
)
def facedown_destroyed_flip(t):
    gone = {}
    for m in monsters(t.before):
        if m["position"] == "facedown" and monster(t.after, m["uid"]) is None:
            gone[m["uid"]] = m["card"]
    if not gone:
        return None
    for e in t.events:
        if e.kind == "flipped" or (e.kind == "position_changed" and e.get("to") in ("attack", "defense")):
            gone.pop(e.get("card_uid"), None)
    gone = {u: c for u, c in gone.items() if fact(t.cards.has_flip_effect(c), c, "whether it has a Flip effect")}
    if not gone:
        return None
    for e in t.of("chain_link_added"):
        u = e["card_uid"]
        if u in gone and _flip_link(t.cards, gone[u], e.get("effect")):
            return f"{card_ref(t.before, u, t.after)} was destroyed face-down without being flipped, yet its Flip effect was activated"
    for p in t.after.get("pending_triggers", ()):  # (absent only from an engine that does not observe it)
        u = p["card_uid"]
        if u in gone and _flip_link(t.cards, gone[u], p.get("effect")):
            return f"{card_ref(t.before, u, t.after)} was destroyed face-down without being flipped, yet its Flip effect waits as a trigger"
    return True


__all__ = ["STAT_CHANGE_STEPS", "walk"]


# -- where a monster destroyed by battle goes (DS-BANISH-BATTLE) -------------------------------


def _banisher(t, obs, uid: int | None) -> bool | None:
    """Monster `uid` is face-up in `obs`, its effects not negated, and by its card data banishes
    an opponent's monster it destroys by battle ("Dark Magician of Chaos"); None where a card's
    data cannot say whether its effects are negated (an Equip Card of a card database on it). A
    card of a card database, whose effects are not data, is not one here (its profile does not
    read this)."""
    m = monster(obs, uid)
    if m is None or m["position"] == "facedown" or not t.cards.banishes_destroyed_by_battle(m["card"]):
        return False
    try:
        return not negated(obs, uid, t.cards, t.mon)
    except Unknown:
        return None


def _banished(mon, uid) -> bool | None:
    """Whether damage calculation decided to banish monster `uid` if destroyed by battle (the
    monitor's ``battle_banish`` history)."""
    return _decided(mon["battle_banish"], uid)


@history(
    "battle_banish",
    "The battlers of the current Damage Step that damage calculation would banish if it destroyed them by battle: each whose "
    "opponent's monster in the battle was, in the observation before the damage_calculation event, face-up, not negated, and by "
    "its card data banishes an opponent's monster it destroys by battle (decided then, 002 OCG): (uid, True); (uid, False) where "
    "a card's data cannot say whether that monster's effects are negated. Forgotten when the Damage Step ends. Never the engine's "
    "bookkeeping.",
)
def _battle_banish(prev, t):
    kinds = t.kind_set()
    if "damage_calculation" not in kinds:
        if prev and "phase_changed" in kinds and not str(t.after.get("step", "")).startswith("damage_step"):
            return ()
        return prev
    e = t.of("damage_calculation")[0]
    out = dict(prev)
    for uid, other in ((e["attacker_uid"], e["target_uid"]), (e["target_uid"], e["attacker_uid"])):
        me, them = monster(t.before, uid), monster(t.before, other)
        if me is None or them is None or me["controller"] == them["controller"]:
            continue
        b = _banisher(t, t.before, other)  # rule: DS-BANISH-BATTLE (decided at damage calculation)
        if b is not False:
            out[uid] = bool(b)
    new = tuple(sorted(out.items()))
    return prev if new == prev else new


@invariant(
    "damage.banished-by-battle",
    "A monster destroyed by battle is banished, not sent to the Graveyard, when it leaves the field by battle if the monster it "
    "battled banishes an opponent's monster it destroys by battle by its card data (\"Dark Magician of Chaos\"; decided at damage "
    "calculation: so even if that monster left the field since), or if its own card data says \"If this face-up card would "
    "leave the field, banish it instead\" (it was face-up and not negated). Other destinations are not judged here.",
    ["DS-BANISH-BATTLE", "DS-SEND-OWNER-GY"],
    "transition",
    FAMILY,
    events=["card_moved"],
    reads=[*monster_fields("uid", "card", "controller", "position"), *spell_fields("card", "face_up", "attached_to")],
)
def banished_by_battle(t):
    judged = False
    for e in t.of("card_moved"):
        if e.get("from") != "monster_zone" or e.get("reason") != "battle":
            continue
        uid = e["card_uid"]
        m = monster(t.before, uid)
        own = m is not None and m["position"] != "facedown" and not negated(t.before, uid, t.cards, t.mon)
        own = own and bool(t.cards.banishes_itself_leaving_field(m["card"]))
        by = _banished(t.mon, uid)
        if by is None:
            return NotJudged(f"{card_ref(t.before, uid, t.after)}: whether the monster that destroyed it banishes it cannot be read from the card data (whether its effects are negated)")
        if not (own or by):
            continue  # (where it goes is DS-SEND-OWNER-GY's, not judged here)
        judged = True
        if e.get("to") not in ("banished", "nowhere"):  # (a Token goes nowhere: CARD-TOKEN)
            why = "its own card data banishes it when it would leave the field" if own else "the monster that destroyed it banishes it, by its card data (decided at damage calculation)"
            return f"{card_ref(t.before, uid, t.after)}, destroyed by battle, went to the {e.get('to')}; {why}"
    return True if judged else None
