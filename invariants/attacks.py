"""Attack counts: who may declare attacks, how many, at what.

The counts are the monitor's (``attacks`` history: the declarations the transitions made), never
the engine's ``attacks_declared``; where the engine reports the count, a different number is a
violation naming both.
"""

from __future__ import annotations

from bpcheck.invariants.base import invariant
from bpcheck.invariants.monitor import COUNT_CAP, history, left_field
from bpcheck.invariants.view import attackable, cannot_attack, fact, may_attack_directly, monster, monsters

FAMILY = "attack counts"


def _each(cards, m) -> bool:
    return fact(cards.attacks_each_monster(m["card"]), m["card"], "whether it may attack each monster")


@invariant(
    "attack.count",
    "No monster declares more attacks in a turn than it is allowed (one, unless it may attack each opponent's monster once), "
    "counting the declarations themselves; the engine's attacks_declared equals that count.",
    ["ATK-ONCE", "ATK-EACH-MONSTER", "RPL-COUNTS"],
    "state",
    FAMILY,
)
def attack_count(obs, ctx):
    seen = False
    for m in monsters(obs):
        rec = ctx.mon.attack(m["uid"])
        n = rec.declared
        says = m.get("attacks_declared")  # (absent: an engine that does not report it)
        if says is not None and min(says, COUNT_CAP) != n:
            return f"{m['card']} (uid {m['uid']}): the engine reports attacks_declared = {says}, its declarations this turn number {n}"
        if n == 0:
            continue
        seen = True
        if _each(ctx.cards, m):
            allowed = max(1, len(rec.declared_at) + (1 if rec.declared_direct else 0))
            if n > allowed:
                return f"{m['card']} (uid {m['uid']}) declared {n} attacks but was declared at only {allowed} targets"
        elif n > 1:
            return f"{m['card']} (uid {m['uid']}) declared {n} attacks this turn; it may declare one"
    return True if seen else None


@invariant(
    "attack.target-once",
    "A monster never declares a new attack at an opponent's monster it was already declared at this turn, nor redirects a replay to one "
    "it attacked before if it attacks each monster once.",
    ["ATK-EACH-MONSTER", "RPL-COUNTS", "RPL-REWIND"],
    "transition",
    FAMILY,
    events=["attack_declared", "replay_choice"],
)
def target_once(t):
    decls = [(e, False) for e in t.of("attack_declared")] + [(e, True) for e in t.of("replay_choice") if e["choice"] == "target"]
    if not decls:
        return None
    for e, redirect in decls:
        uid = e["attacker_uid"]
        m = monster(t.before, uid)
        if m is None or e["target_uid"] is None:
            continue
        if e["target_uid"] in t.mon.attack(uid).declared_at:
            if not redirect:
                return f"{m['card']} declared a new attack at {e['target']}, which it was already declared at"
            # A replay may go back to any target for a one-attack monster; a monster that
            # attacks each opponent's monster once may keep the current target only.
            current = t.before["attack"]["target"] if t.before["attack"] else None
            if _each(t.cards, m) and e["target_uid"] != current:
                return f"{m['card']} redirected its attack to {e['target']}, which it already attacked this turn"
    return True


@invariant(
    "attack.when",
    "Attacks are declared only in the Battle Step, never on the first turn, by the turn player's face-up Attack Position monster, with an empty chain.",
    ["ATK-DECLARE", "ATK-POSITION", "BP-FIRST-TURN"],
    "transition",
    FAMILY,
    events=["attack_declared"],
)
def attack_when(t):
    decls = t.of("attack_declared")
    if not decls:
        return None
    b = t.before
    for e in decls:
        if b["turn"] == 1:
            return "an attack was declared on the first turn of the duel"
        if b["step"] != "battle_step":
            return f"an attack was declared in {b['step']}"
        if b["chain"] or t.mon.chain.links:
            return "an attack was declared while a chain was open"
        m = monster(b, e["attacker_uid"])
        if m is None:
            return f"the attacker {e['attacker']} was not on the field"
        if m["controller"] != b["turn_player"]:
            return f"{m['card']} attacked but is not the turn player's monster"
        if m["position"] != "attack":
            return f"{m['card']} attacked from {m['position']} position"
    return True


@invariant(
    "attack.no-battle-phase-turn-1",
    "The Battle Phase is never entered on the first turn of the duel.",
    ["BP-FIRST-TURN"],
    "transition",
    FAMILY,
    events=["phase_changed"],
)
def no_bp_first_turn(t):
    changes = t.of("phase_changed")
    if not changes or t.before["turn"] != 1:
        return None
    for e in changes:
        if e["to"] == "battle_start_step":
            return "the Battle Phase was entered on turn 1"
    return True


@invariant(
    "attack.stopped-is-spent",
    "An attack that stops is spent: no attack is in progress afterwards and that monster cannot attack again this turn "
    "(the engine's cannot_attack_this_turn says so too).",
    ["STOP-ATTACK", "STOP-AFTER-CHAIN"],
    "transition",
    FAMILY,
    events=["attack_declared", "attack_stopped"],
)
def stopped_spent(t):
    stops = t.of("attack_stopped")
    for e in t.of("attack_declared"):
        m = monster(t.before, e["attacker_uid"])
        if m is not None and t.mon.attack(m["uid"]).stopped:
            return f"{m['card']} declared an attack after its attack was stopped this turn"
        if m is not None and m.get("cannot_attack_this_turn"):
            return f"{m['card']} declared an attack although the engine says it cannot attack this turn"
    if not stops:
        return None
    a = t.after["attack"]
    for e in stops:
        if a is not None and a["attacker"] == e["attacker_uid"]:
            return "the attack is still in progress after it stopped"
        m = monster(t.after, e["attacker_uid"])
        if m is not None and m["controller"] == t.after["turn_player"] and m.get("cannot_attack_this_turn") is False:
            return f"{m['card']}'s attack stopped but the engine reports cannot_attack_this_turn = false"
    return True


@invariant(
    "attack.direct-legal",
    "A direct attack is declared only when the opponent controls no monster that can be attacked, or the attacker may attack directly.",
    ["ATK-DIRECT", "ATK-TARGET-IMMUNE"],
    "transition",
    FAMILY,
    events=["attack_declared"],
)
def direct_legal(t):
    decls = [e for e in t.of("attack_declared") if e["target_uid"] is None]
    if not decls:
        return None
    for e in decls:
        if not may_attack_directly(t.before, e["attacker_uid"], t.cards):
            return f"{e['attacker']} attacked directly while the opponent controls monsters that can be attacked"
    return True


@invariant(
    "attack.offered-legal",
    "Every attack offered is by a face-up Attack Position monster of the turn player that has an attack left this turn "
    "(by the declarations it made), at a monster that can be attacked.",
    ["ATK-POSITION", "ATK-TARGET-IMMUNE", "ATK-CANNOT", "ATK-ONCE", "ATK-EACH-MONSTER"],
    "actions",
    FAMILY,
)
def targets_offered(obs, actions, ctx):
    attacks = [a for a in actions if a["kind"] == "attack"]
    if not attacks:
        return None
    opp = 1 - obs["turn_player"]
    can = attackable(obs, opp, ctx.cards)
    for a in attacks:
        m = monster(obs, a.get("card_uid"))
        if m is None or m["controller"] != obs["turn_player"] or m["position"] != "attack":
            return f"{a['label']} is offered but the attacker is not a face-up Attack Position monster of the turn player"
        rec = ctx.mon.attack(m["uid"])
        if m.get("cannot_attack_this_turn") or rec.stopped:
            return f"{a['label']} is offered for a monster whose attack was stopped this turn"
        t = a.get("target")
        if t is not None and t not in can:
            return f"{a['label']} is offered but that monster cannot be attacked"
        if _each(ctx.cards, m):
            if t is not None and t in rec.declared_at:
                return f"{a['label']} is offered but {m['card']} was already declared at that monster this turn"
            if t is None and rec.declared:
                return f"{a['label']} is offered but {m['card']} already attacked this turn"
        elif rec.declared >= 1:
            return f"{a['label']} is offered but {m['card']} already declared {rec.declared} attack(s) this turn"
    return True


@invariant(
    "attack.must-attack",
    "While a monster that must attack can attack, the turn player may neither skip nor end the Battle Phase.",
    ["ATK-MUST", "BP-MUST-ENTER"],
    "actions",
    FAMILY,
)
def must_attack(obs, actions, ctx):
    tp = obs["turn_player"]
    forced = [
        m
        for m in monsters(obs, tp)
        if m["position"] == "attack" and fact(ctx.cards.must_attack(m["card"]), m["card"], "whether it must attack")
    ]
    if not forced:
        return None
    uids = {m["uid"] for m in forced}
    if obs["step"] == "battle_step":
        can_attack_now = any(a["kind"] == "attack" and a.get("card_uid") in uids for a in actions)
        if can_attack_now and any(a["label"] == "end Battle Phase" for a in actions):
            return "the Battle Phase may end while a monster that must attack can still attack"
        return True
    if obs["step"] == "main1" and obs["turn"] > 1:
        spent = any(m.get("cannot_attack_this_turn") or ctx.mon.attack(m["uid"]).stopped for m in forced)
        if any(a["kind"] == "skip_bp" for a in actions) and not spent:
            if not all(cannot_attack(obs, u, ctx.cards) for u in uids):
                return "the Battle Phase may be skipped while a monster that must attack is in Attack Position"
        return True
    return None


# -- Main Phase 2: manual battle position changes (MP2-POSITION) ----------------------------


@history(
    "positions",
    "Per monster this turn: whether it was Summoned (a summoned event) and whether its battle position was changed manually "
    "(a change_position action). A monster that leaves the field is forgotten (a new object if it returns).",
)
def _positions(prev, t):
    if t.before.get("turn") != t.after.get("turn"):
        prev = ()
    kinds = t.kind_set()
    manual = t.action.get("kind") == "change_position"
    if not manual and "summoned" not in kinds and not (prev and "card_moved" in kinds):
        return prev  # nothing recorded, and nothing recorded to forget
    recs = {r[0]: list(r) for r in prev}
    changed = False
    if manual and t.action.get("card_uid") is not None:
        r = recs.setdefault(t.action["card_uid"], [t.action["card_uid"], False, False])
        r[2] = changed = True
    for e in t.events:
        if e.kind == "summoned":
            r = recs.setdefault(e["card_uid"], [e["card_uid"], False, False])
            r[1] = changed = True
        elif left_field(e) and recs.pop(e.get("card_uid"), None) is not None:
            changed = True
    if not changed:
        return prev
    return tuple(tuple(recs[u]) for u in sorted(recs))


def _position_record(mon, uid) -> tuple[bool, bool]:
    """(Summoned this turn, position changed manually this turn) by the monitor's history."""
    for r in mon["positions"]:
        if r[0] == uid:
            return r[1], r[2]
    return False, False


@invariant(
    "attack.position-change",
    "A manual battle position change is offered only in Main Phase 2, to the turn player with an empty chain, for a face-up monster "
    "they control that did not declare an attack this turn (a stopped or called-off attack counts), was not Summoned or Set this turn "
    "and has not changed position manually this turn (by the declarations, summons and changes the transitions made); where the "
    "engine reports position_changed_this_turn, it says the same.",
    ["MP2-POSITION", "RPL-REWIND", "STOP-ATTACK"],
    "actions",
    FAMILY,
)
def position_change(obs, actions, ctx):
    seen = False
    # The engine's flag is checked where a change can have been made (Main Phase 2 and after, or
    # wherever the history holds one); a flag wrongly set earlier in the turn stays set into Main Phase 2.
    checked = obs["step"] in ("main2", "end_phase") or any(r[2] for r in ctx.mon["positions"])
    for m in monsters(obs) if checked else ():
        reported = m.get("position_changed_this_turn")  # optional in the protocol
        if reported is None:
            continue
        changed = _position_record(ctx.mon, m["uid"])[1]
        if reported != changed:
            return (
                f"{m['card']} (uid {m['uid']}): the engine reports position_changed_this_turn = {str(reported).lower()}, "
                f"but its position was {'' if changed else 'not '}changed manually this turn"
            )
        seen = seen or changed
    for a in actions:
        if a["kind"] != "change_position":
            continue
        seen = True
        label = a["label"]
        if obs["step"] != "main2":
            return f"{label!r} is offered in {obs['step']}; battle positions are changed manually in Main Phase 2"
        if obs["chain"] or ctx.mon.chain.links:
            return f"{label!r} is offered while a chain is open"
        if a["player"] != obs["turn_player"]:
            return f"{label!r} is offered to the player whose turn it is not"
        m = monster(obs, a.get("card_uid"))
        if m is None or m["controller"] != obs["turn_player"]:
            return f"{label!r} is offered but the turn player controls no such monster"
        if m["position"] == "facedown":
            return f"{label!r} is offered for a face-down monster (turning it face-up is a Flip Summon)"
        rec = ctx.mon.attack(m["uid"])
        if rec.declared:
            return f"{label!r} is offered but {m['card']} declared {rec.declared} attack(s) this turn"
        summoned, changed = _position_record(ctx.mon, m["uid"])
        if summoned or m["summoned_this_turn"]:
            return f"{label!r} is offered but {m['card']} was Summoned this turn"
        if m["set_this_turn"]:
            return f"{label!r} is offered but {m['card']} was Set this turn"
        if changed:
            return f"{label!r} is offered but {m['card']} already changed its battle position manually this turn"
    return True if seen else None


@invariant(
    "attack.position-change-applied",
    "A manual battle position change turns that one monster from face-up Attack to face-up Defense Position or back, and a "
    "monster's position changes manually only by that action.",
    ["MP2-POSITION"],
    "transition",
    FAMILY,
    # a change_position action outside Main Phase 2 with no event is attack.position-change's (an offer there)
    steps=["main2"],
    step_events=["position_changed"],
)
def position_change_applied(t):
    manual = [e for e in t.of("position_changed") if e.get("by") == "manual"]
    a = t.action
    if a.get("kind") != "change_position":
        if manual:
            return f"{manual[0]['card']}'s battle position was changed manually by {a.get('label')!r}, which is not a position change"
        return None
    uid = a.get("card_uid")
    m = monster(t.before, uid)
    if m is None:
        return f"{a['label']!r} is for a monster that is not on the field"
    want = {"attack": "defense", "defense": "attack"}.get(m["position"])
    if [(e.get("card_uid"), e.get("from"), e.get("to")) for e in manual] != [(uid, m["position"], want)]:
        got = ", ".join(f"{e.get('card')} {e.get('from')} -> {e.get('to')}" for e in manual) or "none"
        return f"{a['label']!r} did not record one manual change of {m['card']} from {m['position']} to {want} (recorded: {got})"
    m2 = monster(t.after, uid)
    if m2 is None:
        # a card that may not stay in its new position leaves the field by its own effect
        # (Berserk Gorilla in Defense Position): it must be seen to go
        if not any(left_field(e) and e.get("card_uid") == uid for e in t.events):
            return f"{m['card']} is not on the field after {a['label']!r}, and no event moved it"
        return True
    if m2["position"] != want:
        return f"{a['label']!r} left {m['card']} in {m2['position']} position (it was in {m['position']})"
    return True
