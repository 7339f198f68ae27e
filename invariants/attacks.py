"""Attack counts: who may declare attacks, how many, at what.

The counts are the monitor's (``attacks`` history: the declarations the transitions made), never
the engine's ``attacks_declared``; where the engine reports the count, a different number is a
violation naming both.
"""

from __future__ import annotations

from bpcheck.invariants.base import NotJudged, by_board, by_history, invariant
from bpcheck.invariants.monitor import COUNT_CAP, history, left_field
from bpcheck.invariants.view import (
    allowed_attacks,
    db_attack_effect,
    db_rules_unknown,
    ATTACKABLE,
    CANNOT_ATTACK,
    CANNOT_ATTACK_AGAIN,
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

FAMILY = "attack counts"


def _each(cards, m) -> bool:
    return fact(cards.attacks_each_monster(m["card"]), m["card"], "whether it may attack each monster")


@invariant(
    "attack.count",
    "No monster declares more attacks in a turn than it is allowed (one, unless it may attack each opponent's monster once, "
    "and one more for each resolved effect of its own that gave it one), counting the declarations themselves; the "
    "engine's attacks_declared equals that count.",
    ["ATK-ONCE", "ATK-EACH-MONSTER", "RPL-COUNTS", "DS-EXTRA-ATTACK"],
    "state",
    FAMILY,
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    reads=monster_fields("uid", "card"),
    fields={"players[].monsters[].attacks_declared": by_history("the attacks history (the declarations the transitions made)")},
)
def attack_count(obs, ctx):
    seen = False
    for m in monsters(obs):
        rec = ctx.mon.attack(m["uid"])
        n = rec.declared
        says = m.get("attacks_declared")  # (absent: an engine that does not report it)
        if says is not None and min(says, COUNT_CAP) != n:
            return f"{card_ref(obs, m['uid'])}: the engine reports attacks_declared = {says}, its declarations this turn number {n}"
        if n == 0:
            continue
        seen = True
        if _each(ctx.cards, m):
            allowed = max(1, len(rec.declared_at) + (1 if rec.declared_direct else 0))
            if n > allowed:
                return f"{card_ref(obs, m['uid'])} declared {n} attacks but was declared at only {allowed} targets"
        elif n > allowed_attacks(rec, m["card"]):  # rule: ATK-ONCE, DS-EXTRA-ATTACK (a resolved effect of its own gave it more)
            unknown_rules = db_rules_unknown(obs, ctx.mon, ctx.cards, {m["uid"]})
            if unknown_rules is not None:  # a card of a card database may have given it more (F28)
                return NotJudged(unknown_rules)
            return f"{card_ref(obs, m['uid'])} declared {n} attacks this turn; it may declare {allowed_attacks(rec, m['card'])}"
    return True if seen else None


@invariant(
    "attack.target-once",
    "A monster never declares a new attack at an opponent's monster it was already declared at this turn (unless a resolved "
    "effect of its own gave it an extra attack), nor redirects a replay to one it attacked before if it attacks each monster once.",
    ["ATK-EACH-MONSTER", "RPL-COUNTS", "RPL-REWIND", "DS-EXTRA-ATTACK"],
    "transition",
    FAMILY,
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    events=["attack_declared", "replay_choice"],
    reads=["attack.target", *monster_fields("uid", "card")],
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
            unknown_rules = db_rules_unknown(t.before, t.mon, t.cards, {uid})
            if unknown_rules is not None:
                return NotJudged(unknown_rules)
            rec = t.mon.attack(uid)
            if not redirect and not _each(t.cards, m) and rec.declared < allowed_attacks(rec, m["card"]):
                # rule: DS-EXTRA-ATTACK (an extra attack a resolved effect of its own gave it may go at
                # any monster that can be attacked; only a monster that attacks each monster once is
                # held to new targets)
                continue
            if not redirect:
                return f"{card_ref(t.before, uid)} declared a new attack at {card_ref(t.before, e['target_uid'], t.after)}, which it was already declared at"
            # A replay may go back to any target for a one-attack monster; a monster that
            # attacks each opponent's monster once may keep the current target only.
            current = t.before["attack"]["target"] if t.before["attack"] else None
            if _each(t.cards, m) and e["target_uid"] != current:
                return f"{card_ref(t.before, uid)} redirected its attack to {card_ref(t.before, e['target_uid'], t.after)}, which it already attacked this turn"
    return True


@invariant(
    "attack.when",
    "Attacks are declared only in the Battle Step, never on the first turn, by the turn player's face-up Attack Position monster, with an empty chain.",
    ["ATK-DECLARE", "ATK-POSITION", "BP-FIRST-TURN"],
    "transition",
    FAMILY,
    events=["attack_declared"],
    reads=["turn", "step", "chain", "turn_player", *monster_fields("uid", "controller", "position")],
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
            unknown = db_attack_effect(t)
            if unknown is not None:  # (an effect that attacks: Mutant Mindmaster, Construction Train Signal Red)
                return NotJudged(unknown)
            return "an attack was declared while a chain was open"
        m = monster(b, e["attacker_uid"])
        if m is None:
            return f"the attacker {card_ref(b, e['attacker_uid'], t.after)} ({e['attacker']}) was not on the field"
        if m["controller"] != b["turn_player"]:
            return f"{card_ref(b, m['uid'])} attacked but is not the turn player's monster"
        if m["position"] != "attack":
            return f"{card_ref(b, m['uid'])} attacked from {m['position']} position"
    return True


@invariant(
    "attack.no-battle-phase-turn-1",
    "The Battle Phase is never entered on the first turn of the duel.",
    ["BP-FIRST-TURN"],
    "transition",
    FAMILY,
    events=["phase_changed"],
    reads=["turn"],
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
    "An attack that stops is spent: no attack is in progress afterwards and that monster cannot attack again this turn; "
    "where the engine reports cannot_attack_this_turn, it says whether the monster may still attack (its attack stopped, or "
    "its own resolved effect forbade it).",
    ["STOP-ATTACK", "STOP-AFTER-CHAIN"],
    "transition",
    FAMILY,
    events=["attack_declared", "attack_stopped", "chain_link_resolved"],
    reads=["attack", "over", "turn_player", *monster_fields("uid")],
    fields=CANNOT_ATTACK_AGAIN,
)
def stopped_spent(t):
    stops = t.of("attack_stopped")
    if not (stops or t.of("attack_declared") or t.of("chain_link_resolved")):
        return None  # (what its events= filter says: nothing to judge here)
    seen = False
    for e in t.of("attack_declared"):
        seen = True
        m = monster(t.before, e["attacker_uid"])
        if m is not None and t.mon.attack(m["uid"]).stopped:
            return f"{card_ref(t.before, m['uid'])} declared an attack although it may not attack again this turn (its attack stopped, or its effect forbade it)"
    a = t.after["attack"]
    for e in stops:
        seen = True
        if a is not None and a["attacker"] == e["attacker_uid"]:
            return f"the attack of {card_ref(t.after, e['attacker_uid'], t.before)} is still in progress after it stopped"
    # (the turn player's monsters: one whose attack stopped because its control changed has no
    # attack to make this turn, and an engine need not flag it)
    for obs, mon in ((t.before, t.mon), (t.after, t.mon_after)):
        if obs["over"]:
            continue  # (an attack negated by a link that ended the duel never stopped)
        for m in monsters(obs, obs["turn_player"]):
            says = m.get("cannot_attack_this_turn")  # (absent: the engine does not report it)
            if says is None:
                continue
            mine = mon.attack(m["uid"]).stopped
            if bool(says) != mine:
                return (
                    f"{card_ref(obs, m['uid'])}: the engine reports cannot_attack_this_turn = {str(bool(says)).lower()}, but "
                    + ("its attack stopped or its effect forbade it this turn" if mine else "no attack of it stopped and no effect forbade it this turn")
                )
            seen = seen or mine
    return True if seen else None


@invariant(
    "attack.direct-legal",
    "A direct attack is declared only when the opponent controls no monster that can be attacked, or the attacker may attack directly.",
    ["ATK-DIRECT", "ATK-TARGET-IMMUNE"],
    "transition",
    FAMILY,
    events=["attack_declared"],
    reads=MAY_ATTACK_DIRECTLY,
    fields={
        **MARKS,
        **ON_CHAIN,
    },
)
def direct_legal(t):
    decls = [e for e in t.of("attack_declared") if e["target_uid"] is None]
    if not decls:
        return None
    for e in decls:
        if not may_attack_directly(t.before, e["attacker_uid"], t.cards, t.mon):
            unknown_rules = db_rules_unknown(t.before, t.mon, t.cards, {e["attacker_uid"]})
            if unknown_rules is not None:
                return NotJudged(unknown_rules)
            m = monster(t.before, e["attacker_uid"])
            can = attackable(t.before, 1 - m["controller"], t.cards, t.mon) if m is not None else set()
            return f"{card_ref(t.before, e['attacker_uid'], t.after)} attacked directly while the opponent controls monsters that can be attacked {card_refs(t.before, sorted(can))}"
    return True


@invariant(
    "attack.offered-legal",
    "Every attack offered is by a face-up Attack Position monster of the turn player that has an attack left this turn "
    "(by the declarations it made and the extra attacks its own resolved effects gave it), at a monster that can be attacked.",
    ["ATK-POSITION", "ATK-TARGET-IMMUNE", "ATK-CANNOT", "ATK-ONCE", "ATK-EACH-MONSTER", "DS-EXTRA-ATTACK"],
    "actions",
    FAMILY,
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    reads=sorted({*ATTACKABLE, "turn_player", *monster_fields("controller")}),
    fields={
        **CANNOT_ATTACK_AGAIN,
        **MARKS,
        **ON_CHAIN,
    },
)
def targets_offered(obs, actions, ctx):
    attacks = [a for a in actions if a["kind"] == "attack"]
    if not attacks:
        return None
    opp = 1 - obs["turn_player"]
    can = attackable(obs, opp, ctx.cards, ctx.mon)
    for a in attacks:
        m = monster(obs, a.get("card_uid"))
        if m is None or m["controller"] != obs["turn_player"] or m["position"] != "attack":
            return f"{a['label']} is offered but the attacker is not a face-up Attack Position monster of the turn player"
        rec = ctx.mon.attack(m["uid"])
        if rec.stopped:
            return f"{a['label']} is offered for a monster that may not attack again this turn (its attack stopped, or its effect forbade it)"
        t = a.get("target")
        if t is not None and t not in can:
            return f"{a['label']} is offered but that monster cannot be attacked"
        if _each(ctx.cards, m):
            if t is not None and t in rec.declared_at:
                return f"{a['label']} is offered but {card_ref(obs, m['uid'])} was already declared at that monster this turn"
            if t is None and rec.declared:
                return f"{a['label']} is offered but {card_ref(obs, m['uid'])} already attacked this turn"
        elif rec.declared >= allowed_attacks(rec, m["card"]):  # rule: ATK-ONCE, DS-EXTRA-ATTACK
            unknown_rules = db_rules_unknown(obs, ctx.mon, ctx.cards, {m["uid"]})
            if unknown_rules is not None:  # a card of a card database may have given it more (F28)
                return NotJudged(unknown_rules)
            return f"{a['label']} is offered but {card_ref(obs, m['uid'])} already declared {rec.declared} attack(s) this turn"
    return True


@invariant(
    "attack.must-attack",
    "While a monster that must attack can attack, the turn player may neither skip nor end the Battle Phase.",
    ["ATK-MUST", "BP-MUST-ENTER"],
    "actions",
    FAMILY,
    reads=sorted({"turn_player", "step", "turn", *monster_fields("uid", "card", "position"), *CANNOT_ATTACK}),
    fields={
        **CANNOT_ATTACK_AGAIN,
        **ON_CHAIN,
    },
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
            return f"the Battle Phase may end while a monster that must attack can still attack ({', '.join(card_ref(obs, u) for u in sorted(uids))})"
        return True
    if obs["step"] == "main1" and obs["turn"] > 1:
        spent = any(ctx.mon.attack(m["uid"]).stopped for m in forced)
        if any(a["kind"] == "skip_bp" for a in actions) and not spent:
            if not all(cannot_attack(obs, u, ctx.cards, ctx.mon) for u in uids):
                return f"the Battle Phase may be skipped while a monster that must attack is in Attack Position ({', '.join(card_ref(obs, u) for u in sorted(uids))})"
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


def _placed(cards, m, flag) -> bool:
    """The board places monster `m` with `flag` (``summoned_this_turn``, ``set_this_turn``): the
    run's card facts, or the engine's own flag for a run without a board document."""
    placed = cards.placed_this_turn(m["uid"], flag) if cards is not None else None
    return bool(m.get(flag)) if placed is None else placed


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
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    reads=["step", "chain", "turn_player", *monster_fields("uid", "controller", "position")],
    fields={
        "players[].monsters[].position_changed_this_turn": by_history("the positions history (the change_position actions made)"),
        "players[].monsters[].summoned_this_turn": by_history(
            "the positions history (the Summons made during play) and the board (the monsters it places Summoned this turn)"
        ),
        "players[].monsters[].set_this_turn": by_board("the monsters it places Set this turn (no monster is Set in the Battle Phase)"),
    },
)
def position_change(obs, actions, ctx):
    seen = False
    # The engine's flag is checked where a change can have been made (Main Phase 2 and after, or
    # wherever the history holds one); a flag wrongly set earlier in the turn stays set into Main Phase 2.
    checked = obs["step"] in ("main2", "end_phase") or any(r[2] for r in ctx.mon["positions"])
    for m in monsters(obs) if checked else ():
        says = m.get("summoned_this_turn")  # (absent: the engine does not report it)
        if says is not None:
            mine = _position_record(ctx.mon, m["uid"])[0] or _placed(ctx.cards, m, "summoned_this_turn")
            if bool(says) != mine:
                return (
                    f"{card_ref(obs, m['uid'])}: the engine reports summoned_this_turn = {str(bool(says)).lower()}, but it was "
                    f"{'' if mine else 'not '}Summoned this turn (by the board and the Summons during play)"
                )
        reported = m.get("position_changed_this_turn")  # optional in the protocol
        if reported is None:
            continue
        changed = _position_record(ctx.mon, m["uid"])[1]
        if reported != changed:
            return (
                f"{card_ref(obs, m['uid'])}: the engine reports position_changed_this_turn = {str(reported).lower()}, "
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
        who = lazy_ref(obs, m["uid"])
        if rec.declared:
            return f"{label!r} is offered but {who} declared {rec.declared} attack(s) this turn"
        summoned, changed = _position_record(ctx.mon, m["uid"])
        # (a board may place a monster Summoned or Set this turn: the card facts of the run say so;
        # one that left the field since came back Summoned)
        if summoned or _placed(ctx.cards, m, "summoned_this_turn"):
            return f"{label!r} is offered but {who} was Summoned this turn"
        if _placed(ctx.cards, m, "set_this_turn"):
            return f"{label!r} is offered but {who} was Set this turn"
        if changed:
            return f"{label!r} is offered but {who} already changed its battle position manually this turn"
    return True if seen else None


@invariant(
    "attack.position-change-applied",
    "A manual battle position change turns that one monster from face-up Attack to face-up Defense Position or back, and a "
    "monster's position changes manually only by that action (an effect that changes it again at once is seen as its own, later "
    "position_changed event).",
    ["MP2-POSITION"],
    "transition",
    FAMILY,
    # a change_position action outside Main Phase 2 with no event is attack.position-change's (an offer there)
    steps=["main2"],
    step_events=["position_changed"],
    reads=monster_fields("uid", "position"),
)
def position_change_applied(t):
    manual = [e for e in t.of("position_changed") if e.get("by") == "manual"]
    a = t.action
    if a.get("kind") != "change_position":
        if manual:
            return f"{card_ref(t.after, manual[0].get('card_uid'), t.before)}'s battle position was changed manually by {a.get('label')!r}, which is not a position change"
        return None
    uid = a.get("card_uid")
    m = monster(t.before, uid)
    if m is None:
        return f"{a['label']!r} is for a monster that is not on the field"
    want = {"attack": "defense", "defense": "attack"}.get(m["position"])
    who = lazy_ref(t.before, uid)
    if [(e.get("card_uid"), e.get("from"), e.get("to")) for e in manual] != [(uid, m["position"], want)]:
        got = ", ".join(f"{card_ref(t.after, e.get('card_uid'), t.before)} {e.get('from')} -> {e.get('to')}" for e in manual) or "none"
        return f"{a['label']!r} did not record one manual change of {who} from {m['position']} to {want} (recorded: {got})"
    m2 = monster(t.after, uid)
    if m2 is None:
        # a card that may not stay in its new position leaves the field by its own effect
        # (Berserk Gorilla in Defense Position): it must be seen to go
        if not any(left_field(e) and e.get("card_uid") == uid for e in t.events):
            return f"{who} is not on the field after {a['label']!r}, and no event moved it"
        return True
    if m2["position"] != want:
        # an effect may change it again at once (Level Limit - Area B: "Change all face-up Level 4
        # or higher monsters to Defense Position"): only if that change is seen, after the manual one
        changes = [e for e in t.of("position_changed") if e.get("card_uid") == uid]
        later = changes[changes.index(manual[0]) + 1 :]
        if not (later and all(e.get("by") != "manual" for e in later) and later[-1].get("to") == m2["position"]):
            return f"{a['label']!r} left {card_ref(t.after, uid)} in {m2['position']} position (it was in {m['position']})"
    return True
