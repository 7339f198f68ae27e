"""Replay semantics (000 "WHAT IS A REPLAY?", 002 Battle Step).

What the chain did comes from the monitor's ``chain`` history (whether a link resolved since the
chain began negated the attack, also across a choice in the middle of it); attack bookkeeping from its ``attacks``
history, with the engine's ``declared_at`` / ``declared_direct`` held to it.
"""

from __future__ import annotations

from bpcheck.model import arith  # numbers may be symbolic (bpcheck prove)
from bpcheck.invariants.base import Unknown, by_history, invariant, part_not_evaluated
from bpcheck.invariants.cards import DAMAGE_STEPS
from bpcheck.invariants.monitor import history
from bpcheck.invariants.view import (
    ATTACKABLE,
    CANNOT_ATTACK,
    MARKS,
    MAY_ATTACK_DIRECTLY,
    ON_CHAIN,
    attackable,
    cannot_attack,
    card_ref,
    card_refs,
    fact,
    lazy_ref,
    may_attack_directly,
    monster,
    monster_fields,
    monsters,
)

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


@invariant(
    "replay.iff",
    "After a whole chain resolves during an attack in the Battle Step, a replay happens if and only if the opponent's potential "
    "targets changed or the attack became illegal, and the attack was not stopped.",
    ["RPL-TRIGGER", "RPL-AFTER-CHAIN", "RPL-NOT-STATS", "RPL-OWN-SIDE", "RPL-NOT-POSITION", "STOP-ATTACK", "STOP-AFTER-CHAIN"],
    "transition",
    FAMILY,
    events=["chain_resolved"],
    reads=sorted({"attack.attacker", "attack.target", "step", "over", "turn_player", *MAY_ATTACK_DIRECTLY, *CANNOT_ATTACK}),
    fields={**_MARKS, **_ON_CHAIN, "attack.replay_pending": by_history("the replay history (a replay not yet answered)")},
)
def replay_iff(t):
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
    stop_expected = (
        m is None
        or m["controller"] != after["turn_player"]
        or m["position"] != "attack"
        or cannot_attack(after, uid, t.cards, t.mon_after)
        or negates
    )
    stopped = bool(t.of("attack_stopped"))
    replayed = bool(t.of("replay"))
    if stop_expected:
        if replayed:
            return "a replay happened although the attack had to stop"
        if not stopped:
            return "the attacker can no longer attack, but the attack did not stop"
        return True
    if stopped:
        return "the attack stopped although the attacker can still attack"
    now = attackable(after, 1 - after["turn_player"], t.cards, t.mon_after)
    # the potential targets of the declaration are the monitor's own record, never the engine's
    recorded = t.mon["attack_targets"]
    if recorded is None or recorded is False:
        fact(None, f"the attacker {card_ref(t.before, uid, after)}", "which monsters could be attacked when the attack was declared")
    changed = now != set(recorded)
    illegal = (a["target"] is None and not may_attack_directly(after, uid, t.cards, t.mon_after)) or (a["target"] is not None and a["target"] not in now)
    if (changed or illegal) and not replayed:
        return (
            f"potential targets changed ({card_refs(after, recorded, t.before)} -> {card_refs(after, sorted(now), t.before)}) "
            "or the attack became illegal, but no replay happened"
        )
    if replayed and not (changed or illegal):
        return "a replay happened although no potential target appeared or disappeared and the attack stayed legal"
    return True


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
    "where the engine reports attack.replay_pending, it says whether a replay is pending.",
    ["RPL-REWIND", "ATK-DIRECT"],
    "actions",
    FAMILY,
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
        if x.get("target") is not None and x["target"] not in can:
            return f"{x['label']} is offered but that monster ({card_ref(obs, x['target'])}) cannot be attacked"
        if x.get("option") == "direct" and not may_attack_directly(obs, a["attacker"], ctx.cards, ctx.mon):
            return f"a direct attack by {card_ref(obs, a['attacker'])} is offered in the replay but is not legal (the opponent controls {card_refs(obs, sorted(can))})"
    return True
