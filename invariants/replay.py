"""Replay semantics (000 "WHAT IS A REPLAY?", 002 Battle Step).

What the chain did comes from the monitor's ``chain`` history (whether a link resolved since the
chain began negated the attack, also across a choice in the middle of it); attack bookkeeping from its ``attacks``
history, with the engine's ``declared_at`` / ``declared_direct`` held to it.
"""

from __future__ import annotations

from bpcheck.invariants.base import NotJudged, Unknown, by_history, invariant, part_not_evaluated
from bpcheck.invariants.cards import DAMAGE_STEPS
from bpcheck.invariants.monitor import history
from bpcheck.invariants.signatures import signed
from bpcheck.invariants.view import (
    ATTACKABLE,
    CANNOT_ATTACK,
    CARD_PLACES,
    MARKS,
    MAY_ATTACK_DIRECTLY,
    ON_CHAIN,
    attackable,
    cannot_attack,
    card_ref,
    card_refs,
    db_rules_unknown,
    fact,
    lazy_ref,
    may_attack_directly,
    monster,
    monster_fields,
    monsters,
)
from bpcheck.model import arith  # numbers may be symbolic (bpcheck prove)

FAMILY = "replay"


def _attack_in_battle_step(obs, mon):
    # (no chain is built while a replay waits for the turn player's choice: replay.choices; the
    # replay pending is the monitor's, never the engine's attack.replay_pending)
    return obs["attack"] is not None and mon["replay"] is None and obs["step"] == "battle_step"


_ON_CHAIN, _MARKS = ON_CHAIN, MARKS


_DECLARE_KINDS = frozenset({"attack_declared", "replay_choice"})


@history(
    "attack_targets",
    "The opponent's monsters that could be attacked when the attack in progress was declared (or redeclared after a replay), "
    "by the card data and the observation then: a sorted tuple of uids; false when a card's data could not say; null with no "
    "attack in progress. Never the engine's potential_targets.",
    initial=None,
)
def _attack_targets(prev, t):
    if prev is None and _DECLARE_KINDS.isdisjoint(t.kind_set()):
        return prev  # no attack, and none declared
    if t.after.get("attack") is None:
        return None
    for e in t.events:
        if (e.kind == "attack_declared" and not e.get("replay")) or (e.kind == "replay_choice" and e.get("choice") in ("target", "direct")):
            try:
                now = tuple(sorted(attackable(t.before, 1 - t.before["turn_player"], t.cards, t.mon)))
            except (Unknown, KeyError):  # a card's data cannot say, or the observation lacks the field
                now = False
            return prev if now == prev else now
    return prev


def _chain_end(t):
    """What the rules ask of the engine as a whole chain resolves during an attack in the Battle
    Step, against what the transition did (RPL-AFTER-CHAIN, STOP-AFTER-CHAIN): None when that
    situation did not arise, True when the transition did what the rules ask, ``("now", SIG,
    message)`` for a violation the transition itself shows, or ``("owed", what, attacker uid,
    facts)`` when the stop or replay the rules ask for did not happen (yet): the monitor's
    ``replay_owed`` keeps it, and replay.iff judges how it is settled (:func:`_settled`). May
    raise Unknown (a card's data cannot say)."""
    if "chain_resolved" not in t.kinds() or not _attack_in_battle_step(t.before, t.mon):
        return None
    if t.after["over"]:
        return None
    a = t.before["attack"]
    after = t.after
    uid = a["attacker"]
    m = monster(after, uid)
    # Every link of this chain that resolved without being negated: the ones resolved before
    # this transition (the monitor) and those resolved in it.
    before = t.mon.chain.negated_attack
    negates = bool(fact(before, "a resolved chain link", "whether it negated the attack")) or any(
        not e.get("negated") and fact(t.cards.negates_attack(e["card"]), e["card"], "whether it negates an attack")
        for e in t.of("chain_link_resolved")
    )
    who = card_ref(after, uid, t.before)
    if m is None:
        why = f"{who} left the field"
    elif m["controller"] != after["turn_player"]:
        why = f"the turn player no longer controls {who}"
    elif m["position"] != "attack":
        why = f"{who} is no longer in Attack Position"
    elif cannot_attack(after, uid, t.cards, t.mon_after):
        why = f"{who} can no longer attack"
    elif negates:
        why = "a resolved chain link negated the attack"
    elif after["step"] == "battle_end_step" and any(
        not e.get("negated") and fact(t.cards.ends_battle_phase(e["card"]), e["card"], "whether it may end the Battle Phase")
        for e in t.of("chain_link_resolved")
    ):  # fmt: skip
        why = "a resolved chain link ended the Battle Phase"  # ("Half or Nothing": BP-END-STEP)
    else:
        why = None
    stopped = bool(t.of("attack_stopped"))
    replayed = bool(t.of("replay"))
    if why is not None:
        if replayed:
            return ("now", "replay-instead-of-stop", f"a replay happened although the attack had to stop ({why})")
        if not stopped:
            return ("owed", "stop", uid, why)
        return True
    if stopped:
        return ("now", "stop-unwarranted", f"the attack stopped although the attacker {who} can still attack")
    now = attackable(after, 1 - after["turn_player"], t.cards, t.mon_after)
    # the potential targets of the declaration are the monitor's own record, never the engine's
    recorded = t.mon["attack_targets"]
    if recorded is None or recorded is False:
        fact(None, who, "which monsters could be attacked when the attack was declared")
    changed = now != set(recorded)
    target = a["target"]
    illegal = (target is None and not may_attack_directly(after, uid, t.cards, t.mon_after)) or (target is not None and target not in now)
    if (changed or illegal) and not replayed:
        parts = []
        if changed:
            parts.append(f"changed the potential targets ({card_refs(t.before, recorded, after)} -> {card_refs(after, sorted(now), t.before)})")
        if illegal:
            what = "direct attack" if target is None else f"attack on {card_ref(after, target, t.before)}"
            parts.append(f"made the {what} illegal")
        return ("owed", "replay", uid, " and ".join(parts))
    if replayed and not (changed or illegal):
        return ("now", "replay-unwarranted", "a replay happened although no potential target appeared or disappeared and the attack stayed legal")
    return True


def _owed_now(t):
    """:func:`_chain_end`'s owed stop or replay of `t` as the monitor keeps it, else None."""
    try:
        r = _chain_end(t)
    except (Unknown, KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None  # replay.iff reports what it cannot read or decide itself
    return r[1:] if type(r) is tuple and r[0] == "owed" else None


@history(
    "replay_owed",
    "The stop or replay the rules asked for when the last chain resolved during the attack in progress (STOP-AFTER-CHAIN, "
    "RPL-AFTER-CHAIN) and the engine did not do then: (\"stop\" or \"replay\", the attacker's uid, why in words); null when nothing "
    "is owed. Kept until the engine stops or replays, the attack goes on or ends, or the step changes: replay.iff judges which "
    "(a late stop or replay is another finding than none at all).",
    initial=None,
    after=True,  # judges the state after the transition as replay.iff does (t.mon_after: links, battle marks, chain)
)
def _replay_owed(prev, t):
    if prev is None:
        if "chain_resolved" not in t.kind_set():
            return None  # nothing owed, and no chain ended
        return _owed_now(t)
    if _settled(prev, t) is None:
        return prev
    return _owed_now(t) if "chain_resolved" in t.kind_set() else None


def _settled(owed, t):
    """How the transition settles an owed stop or replay: None while it is still owed (the attack
    is still on, in the Battle Step, and neither happened), else ``(SIG, message)``; ``("", "")``
    when the duel ended (nothing to judge)."""
    what, uid, why = owed
    after = t.after
    if after.get("over"):
        return ("", "")
    a = after.get("attack")
    ended = a is None or a.get("attacker") != uid
    replays = t.of("replay")
    stops = t.of("attack_stopped")
    if t.of("attack_declared") and not replays:
        went_on = "a new attack was declared"
    elif stops or replays:
        went_on = None
    elif ended:
        went_on = "the attack ended"
    elif after.get("step") != "battle_step":
        went_on = f"the attack went on into {after.get('step')}"
    else:
        return None
    who = card_ref(after, uid, t.before)
    if what == "replay":
        cause = f"the chain that {why} resolved with no replay"
        if replays:
            return ("replay-late", f"a replay came later than the rules ask: {cause}, and the replay of {who}'s attack came only now "
                    "(the rules replay as that chain resolves, before anything else)")
        if stops:
            return ("replay-missing-stopped", f"the attack stopped before the replay the rules ask for came: {cause}, and {who}'s "
                    "attack stopped without it")
        return ("replay-missing", f"no replay came before {went_on}: {cause}, and {who}'s attack went on without one")
    cause = f"{why} as the chain resolved, and the attack did not stop then"
    if stops:
        return ("stop-late", f"the attack stopped later than the rules ask: {cause}; it stopped only now (the rules stop it as that "
                "chain resolves)")
    if replays:
        return ("replay-instead-of-stop", f"a replay happened although the attack had to stop ({why})")
    return ("stop-missing", f"the attack did not stop before {went_on}: {cause}")


@invariant(
    "replay.iff",
    "After a whole chain resolves during an attack in the Battle Step, a replay happens if and only if the opponent's potential "
    "targets changed or the attack became illegal, and the attack was not stopped.",
    ["RPL-TRIGGER", "RPL-AFTER-CHAIN", "RPL-NOT-STATS", "RPL-OWN-SIDE", "RPL-NOT-POSITION", "STOP-ATTACK", "STOP-AFTER-CHAIN"],
    "transition",
    FAMILY,
    # (CARD_PLACES: a monster that left the field is named where it went)
    reads=sorted({"attack.attacker", "attack.target", "step", "over", "turn_player", *MAY_ATTACK_DIRECTLY, *CANNOT_ATTACK, *CARD_PLACES}),
    fields={**_MARKS, **_ON_CHAIN, "attack.replay_pending": by_history("the replay history (a replay not yet answered)")},
)
def replay_iff(t):
    # A stop or replay owed since an earlier chain (the monitor's replay_owed) is judged when it is
    # settled: late (it came after more play) or missing (the attack went on, ended or stopped
    # without it). Each is a distinct signature (invariants/signatures.py), so a known late replay
    # never stands for an engine that does not replay at all.
    owed = t.mon["replay_owed"]
    if owed is None:
        if "chain_resolved" not in t.kind_set():
            return None
    else:
        how = _settled(owed, t)
        if how is not None:
            return signed(*how) if how[0] else None
    r = _chain_end(t)
    if type(r) is tuple:
        return signed(r[1], r[2]) if r[0] == "now" else None  # owed: judged when it is settled
    return r


@invariant(
    "replay.targets-recorded",
    "When an attack is declared (or redeclared after a replay), the recorded potential targets are exactly the opponent's monsters that can be attacked.",
    ["RPL-TRIGGER", "ATK-TARGET-IMMUNE"],
    "transition",
    FAMILY,
    events=["attack_declared", "replay_choice"],
    reads=["attack", "turn_player", *ATTACKABLE],
    fields={
        **_MARKS,
        **_ON_CHAIN,
        "attack.potential_targets": part_not_evaluated("whether the engine's potential targets are the monsters that could be attacked"),
    },
)
def targets_recorded(t):
    if not t.of("attack_declared") and not any(c["choice"] != "call_off" for c in t.of("replay_choice")):
        return None
    a = t.after["attack"]
    if a is None:
        return "an attack was declared but no attack is in progress"
    says = a.get("potential_targets")  # (absent: the engine does not report it)
    if says is None:
        return True
    expect = attackable(t.before, 1 - t.before["turn_player"], t.cards, t.mon)
    if set(says) != expect:
        return f"recorded potential targets {card_refs(t.before, sorted(says), t.after)}, expected {card_refs(t.before, sorted(expect))}"
    return True


@invariant(
    "replay.not-in-damage-step",
    "No replay happens in the Damage Step.",
    ["RPL-BATTLE-STEP-ONLY"],
    "transition",
    FAMILY,
    steps=DAMAGE_STEPS,
    reads=["step"],
)
def not_in_damage_step(t):
    if not t.before["step"].startswith("damage_step"):
        return None
    if t.of("replay"):
        return f"a replay happened in {t.before['step']}"
    return True


@invariant(
    "replay.no-second-cost",
    "Continuing an attack after a replay charges no attack cost, declares no new attack and opens no attack-declaration window.",
    ["RPL-NO-COST", "ATK-COST", "RPL-NEW-DECLARATION"],
    "transition",
    FAMILY,
    events=["replay_choice"],
    reads=["turn_player", "players[].lp"],
    fields={"open_windows.attack_declaration": by_history("the windows history (the attack-declaration window)")},
)
def no_second_cost(t):
    choices = t.of("replay_choice")
    if not choices:
        return None
    if t.of("attack_cost_paid") or t.of("lp_paid"):
        return "an attack cost was paid again after a replay"
    tp = t.before["turn_player"]
    if arith.ne(t.after["players"][tp]["lp"], t.before["players"][tp]["lp"]):
        return "the turn player's LP changed when the replay choice was made"
    if t.of("attack_declared"):
        return "the replay continuation counted as a new attack declaration"
    says = (t.after.get("open_windows") or {}).get("attack_declaration")  # (absent: not reported)
    if any(c["choice"] != "call_off" for c in choices) and (says or t.mon_after.window.attack_declaration):
        return "continuing after a replay reopened the attack-declaration window"
    for c in choices:
        rec = t.mon_after.attack(c["attacker_uid"])
        if rec.costs_paid > rec.declared:
            return f"{card_ref(t.after, c['attacker_uid'], t.before)}: {rec.costs_paid} attack costs paid for {rec.declared} attack declarations this turn"
    return True


@invariant(
    "replay.bookkeeping-kept",
    "Attack bookkeeping never goes backwards within a turn: the monsters a monster was declared at and its direct declarations "
    "stay, and the engine's declared_at and declared_direct equal what its declarations and replay choices add up to.",
    ["RPL-COUNTS", "RPL-COMPLETED"],
    "transition",
    FAMILY,
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    # it judges the engine's own bookkeeping: the monitor's history never goes backwards
    reads=["turn", *monster_fields("uid", "controller", "declared_at", "declared_direct")],
    fields={"players[].monsters[].attacks_declared": by_history("the attacks history (attack.count compares the count with it)")},
)
def bookkeeping(t):
    if t.before["turn"] != t.after["turn"]:
        return None
    seen = False
    before = {m["uid"]: m for m in monsters(t.before)}
    for m2 in monsters(t.after):
        uid = m2["uid"]
        rec = t.mon_after.attack(uid)
        n2 = m2.get("attacks_declared")  # (absent: the engine does not report it)
        if not (rec.declared or rec.declared_at or rec.declared_direct or n2 or m2["declared_at"] or m2["declared_direct"]):
            continue
        seen = True
        who = lazy_ref(t.after, uid)
        if sorted(m2["declared_at"]) != list(rec.declared_at):
            m = before.get(uid)
            if m is not None and not set(m["declared_at"]) <= set(m2["declared_at"]):
                return (
                    f"{who} forgot the monsters it was declared at: declared_at {card_refs(t.before, sorted(m['declared_at']), t.after)} "
                    f"-> {card_refs(t.after, sorted(m2['declared_at']), t.before)}"
                )
            return (
                f"{who}: the engine reports declared_at = {card_refs(t.after, sorted(m2['declared_at']), t.before)}, its declarations "
                f"this turn were at {card_refs(t.after, rec.declared_at, t.before)}"
            )
        if bool(m2["declared_direct"]) != rec.declared_direct:
            return f"{who}: the engine reports declared_direct = {str(bool(m2['declared_direct'])).lower()}, its declarations this turn say {str(rec.declared_direct).lower()}"
        m = before.get(uid)
        n = m.get("attacks_declared") if m is not None else None
        if n is not None and n2 is not None and m2["controller"] == m["controller"] and n2 < n:
            return f"{who}'s attack count went from {n} to {n2}"
    return True if seen else None


@invariant(
    "replay.call-off-counts",
    "Calling an attack off after a replay ends the attack and the monster still counts as having attacked.",
    ["RPL-REWIND", "RPL-COUNTS"],
    "transition",
    FAMILY,
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    events=["replay_choice"],
    reads=["attack", *monster_fields("uid")],
    fields={"players[].monsters[].attacks_declared": by_history("the attacks history (the declarations the transitions made)")},
)
def call_off(t):
    offs = [e for e in t.of("replay_choice") if e["choice"] == "call_off"]
    if not offs:
        return None
    if t.after["attack"] is not None:
        return f"the attack of {card_ref(t.after, offs[0]['attacker_uid'], t.before)} is still in progress after it was called off"
    for e in offs:
        m = monster(t.after, e["attacker_uid"])
        if m is not None and t.mon_after.attack(m["uid"]).declared < 1:
            return f"{card_ref(t.after, m['uid'])} called off an attack it never declared"
        if m is not None and m.get("attacks_declared", 1) < 1:  # (absent: not reported)
            return f"{card_ref(t.after, m['uid'])} no longer counts as having attacked after calling its attack off"
    return True


@invariant(
    "replay.choices",
    "When a replay is pending, the turn player alone chooses: a target that can be attacked, a direct attack where legal, or no attack; "
    "where the engine reports attack.replay_pending, it says whether a replay is pending. Which targets are legal is not judged "
    "where a card of a card database may have changed the attack rules (its effect resolved this turn, or its text on the field: F28).",
    ["RPL-REWIND", "ATK-DIRECT"],
    "actions",
    FAMILY,
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    reads=sorted({"attack.attacker", "chain", "over", "turn_player", *MAY_ATTACK_DIRECTLY}),
    fields={**_MARKS, **_ON_CHAIN, "attack.replay_pending": by_history("the replay history (a replay not yet answered)")},
)
def choices(obs, actions, ctx):
    # pending: the monitor's own record (a replay event, no replay choice yet), never the engine's
    pending = ctx.mon["replay"]
    a = obs["attack"]
    says = (a or {}).get("replay_pending")  # (absent: the engine does not report it)
    if obs["over"]:
        return None
    if says is not None and bool(says) != (pending is not None) and not obs["chain"]:
        return (f"the engine reports attack.replay_pending = {str(bool(says)).lower()}, but "
                + ("a replay of the attack is pending" if pending is not None else "no replay happened since the last replay choice"))
    if pending is None or obs["chain"]:
        return None
    if a is None or a["attacker"] != pending:
        return f"a replay of the attack of {card_ref(obs, pending)} is pending, but the observation shows no attack by it"
    if any(x["kind"] != "replay" for x in actions):
        return "other actions are offered while a replay is pending"
    if not any(x.get("option") == "call_off" for x in actions):
        return "calling the attack off is not offered in a replay"
    can = attackable(obs, 1 - obs["turn_player"], ctx.cards, ctx.mon)
    for x in actions:
        target_bad = x.get("target") is not None and x["target"] not in can
        direct_bad = not target_bad and x.get("option") == "direct" and not may_attack_directly(obs, a["attacker"], ctx.cards, ctx.mon)
        if target_bad or direct_bad:
            # (a card of a card database may have changed the attack rules: "the attacks ... become direct attacks", F28)
            unknown_rules = db_rules_unknown(obs, ctx.mon, ctx.cards, {a["attacker"]})
            if unknown_rules is not None:
                return NotJudged(unknown_rules)
        if target_bad:
            return f"{x['label']} is offered but that monster ({card_ref(obs, x['target'])}) cannot be attacked"
        if direct_bad:
            return f"a direct attack by {card_ref(obs, a['attacker'])} is offered in the replay but is not legal (the opponent controls {card_refs(obs, sorted(can))})"
    return True


@invariant(
    "replay.stored",
    "Goat format: when a replay is pending, the attack is stored: the turn player is offered no new target and no direct "
    "attack, only to leave the attack (the EDOPro core's DUEL_STORE_ATTACK_REPLAYS).",
    ["GOAT-RPL-STORED"],
    "actions",
    FAMILY,
    rulesets=("goat",),
    reads=["turn_player"],
)
def stored(obs, actions, ctx):
    if not ctx.mon["replay"]:
        return None
    go_on = [a.get("label") for a in actions if a.get("kind") == "replay" and a.get("option") != "call_off"]
    if go_on:
        return f"a replay is pending under goat, but the attack may go on: {', '.join(map(str, go_on))} (the attack is stored, GOAT-RPL-STORED)"
    return True
