"""Completeness: the actions the rules allow are offered (omissions are rules bugs too).

The other invariants judge what an engine does and what it offers; these judge what it leaves
out: an attack a monster may declare (``attack.legal-offered``), entering, skipping or ending
the Battle Phase, passing and ending the turn (``turn.legal-offered``). They decide from the
monitor (the attacks, the chain, the battle marks the transitions made), the card facts and the
observation only,
never by asking the reference model what is legal: this is the invariants' own restatement of
the rules, and the reference model is judged by it like any engine.

Only an *open game state* is judged: the player to act holds priority; no trigger waits, no
effect asks a choice in the middle of its resolution, no replay waits for the turn player's
answer (the offered actions' kinds say so where the engine does not report ``pending_triggers``
or ``choice``). An engine with implicit passes never shows a state where its player could only
pass; the states it does show are judged by the same rules. What the card reading cannot decide
(a word outside its vocabulary) makes the check *not judged* for that state, never a pass; a
violation found for another card of the same state is still reported.
"""

from __future__ import annotations

from bpcheck.model import arith  # numbers may be symbolic (bpcheck prove)
from bpcheck.invariants.base import Unknown, invariant
from bpcheck.invariants.cards import DAMAGE_STEPS
from bpcheck.invariants.view import card_ref, face_up_card, fact, monster, monsters, negated, spells

# Action kinds that answer something other than priority: a trigger waiting, a choice an effect
# asks while it resolves, a replay.
_NOT_OPEN = frozenset({"trigger", "decline", "choose", "replay"})
_BATTLE_STEPS = frozenset({"battle_start_step", "battle_step", "battle_end_step", *DAMAGE_STEPS})
_CALC = "damage_step_during_calculation"


def holder(obs: dict, actions: list, mon) -> int | None:
    """The player who holds priority at an open game state, or None: the duel is over, nobody is
    to act, a trigger waits, an effect asks a choice, or a replay waits for the turn player."""
    if obs["over"] or not actions:
        return None
    p = obs["to_act"]
    if p is None:
        return None
    for a in actions:
        if a["kind"] in _NOT_OPEN:
            return None
    if obs.get("pending_triggers") or obs.get("choice") is not None:  # (optional: the action kinds said it already)
        return None
    if mon["replay"] is not None and not mon.chain.links:
        return None
    return p


def _zone_order(obs: dict, uid) -> tuple:
    for side, pl in enumerate(obs["players"]):
        for i, m in enumerate(pl["monsters"]):
            if m is not None and m["uid"] == uid:
                return (side, i)
    return (9, uid)


def _attackable(obs: dict, mon, defender: int, cards) -> set[int]:
    """The defender's monsters that can be chosen as attack targets (ATK-TARGET-IMMUNE):
    :func:`~bpcheck.invariants.view.attackable` with the monitor's battle marks instead of the
    engine's ``destroyed_by_battle`` (an engine need not report it)."""
    out = set()
    for m in monsters(obs, defender):
        if m["uid"] in mon.battle.destroyed:
            continue
        if m["position"] != "facedown":
            immune, field = fact(cards.unattackable_while(m["card"]), m["card"], "whether it can be attacked")
            if immune and (field is None or face_up_card(obs, field)):
                continue
        out.add(m["uid"])
    return out


def _may_attack_directly(obs: dict, mon, m: dict, cards) -> bool:
    """ATK-DIRECT: no opponent's monster can be attacked, or an effect lets `m` attack directly
    (:func:`~bpcheck.invariants.view.may_attack_directly`, with :func:`_attackable`)."""
    uid = m["uid"]
    if fact(cards.can_attack_directly(m["card"]), m["card"], "whether it can attack directly") and not negated(obs, uid, cards):
        return True
    for c in spells(obs):
        if c["face_up"] and not c["on_chain"] and c["equipped_to"] == uid:
            if fact(cards.grants_direct_attack(c["card"]), c["card"], "whether it grants a direct attack"):
                return True
    return not _attackable(obs, mon, 1 - m["controller"], cards)


def _cannot_attack(obs: dict, m: dict, cards) -> bool:
    """ATK-CANNOT: a continuous effect forbids `m` to attack (:func:`~bpcheck.invariants.view.cannot_attack`,
    the Level from the card data)."""
    for c in spells(obs):
        if not c["face_up"] or c["on_chain"]:
            continue
        if c["attached_to"] == m["uid"] and fact(cards.stops_attached_attacking(c["card"]), c["card"], "whether it stops attacks"):
            return True
        lvl = fact(cards.level_lock(c["card"]), c["card"], "whether it stops attacks by Level")
        if lvl is not False and (cards.stat(m["card"], "level") or 0) >= lvl:
            return True
    return False


def attack_options(obs: dict, mon, cards, m: dict) -> list:
    """The targets monster `m` may declare an attack at now (None: directly), in zone order, by
    the rules alone: the monitor's record of its declarations and stops this turn, its position,
    the card data of the field and the LP. Whether it was Summoned this turn does not matter
    (ATK-SUMMON-TURN). Raises Unknown when a card's data cannot say."""
    tp = obs["turn_player"]
    uid = m["uid"]
    if m["controller"] != tp or m["position"] != "attack":  # rule: ATK-POSITION
        return []
    rec = mon.attack(uid)
    if rec.stopped or uid in mon.battle.destroyed:  # rule: STOP-ATTACK
        return []
    if _cannot_attack(obs, m, cards):  # rule: ATK-CANNOT
        return []
    name = m["card"]
    cost = fact(cards.attack_cost(name), name, "its attack cost")
    if cost and arith.lt(obs["players"][tp]["lp"], cost):  # rule: ATK-COST
        return []
    targets = sorted(_attackable(obs, mon, 1 - tp, cards), key=lambda u: _zone_order(obs, u))  # rule: ATK-TARGET-IMMUNE
    direct = _may_attack_directly(obs, mon, m, cards)  # rule: ATK-DIRECT
    if fact(cards.attacks_each_monster(name), name, "whether it may attack each monster"):  # rule: ATK-EACH-MONSTER
        out: list = [t for t in targets if t not in rec.declared_at]
        if not rec.declared and direct:
            out.append(None)
        return out
    if rec.declared:  # rule: ATK-ONCE
        return []
    return targets + ([None] if direct else [])


def forced_attacker(obs: dict, mon, cards) -> dict | None:
    """A face-up Attack Position monster of the turn player that must attack (its card data) and
    can attack now (ATK-MUST, BP-MUST-ENTER), or None."""
    for m in monsters(obs, obs["turn_player"]):
        if m["position"] == "attack" and fact(cards.must_attack(m["card"]), m["card"], "whether it must attack"):
            if attack_options(obs, mon, cards, m):
                return m
    return None


def _target_name(obs: dict, t) -> str:
    return "directly" if t is None else card_ref(obs, t)


@invariant(
    "attack.legal-offered",
    "Every attack the rules allow is offered: in the Battle Step, at an open game state with no attack in progress and an "
    "empty chain, the turn player is offered an attack by each face-up Attack Position monster they control that has an "
    "attack left this turn (by the declarations and stops the transitions made; a monster Summoned this turn too) and is "
    "not forbidden to attack, at each opponent's monster that can be attacked, and directly where the opponent controls "
    "none or a card lets it; at a replay, every target the attack may continue against and a direct attack where legal.",
    ["ATK-DECLARE", "ATK-SUMMON-TURN", "ATK-POSITION", "ATK-ONCE", "ATK-EACH-MONSTER", "ATK-DIRECT", "ATK-TARGET-IMMUNE",
     "ATK-CANNOT", "ATK-COST", "RPL-REWIND"],
    "actions",
    "attack counts",
    fields=(
        "Reads `step`, `turn`, `turn_player`, `to_act`, `over`, `attack`, `chain`, the monsters' `uid`, `card`, `controller` "
        "and `position`, the Spells/Traps' `card`, `face_up`, `on_chain`, `attached_to` and `equipped_to`, the LP; the attacks "
        "made and stopped, the chain, the battle marks and a pending replay are the monitor's, never the engine's "
        "`attacks_declared`, `declared_at`, `cannot_attack_this_turn`, `destroyed_by_battle` or `replay_pending`. "
        "`pending_triggers` and `choice` are optional: without them the offered actions' kinds tell an open game state. "
        "Another field unobserved: not evaluated."
    ),
)  # fmt: skip
def attacks_offered(obs, actions, ctx):
    if obs["over"] or obs["step"] != "battle_step" or not actions:
        return None
    mon = ctx.mon
    if mon.chain.links or obs["chain"]:
        return None
    if mon["replay"] is not None:
        return _replay_offered(obs, actions, ctx, mon["replay"])
    if obs["attack"] is not None or obs["turn"] == 1:
        return None
    tp = obs["turn_player"]
    if holder(obs, actions, mon) != tp:
        return None
    offered = {(a.get("card_uid"), a.get("target")) for a in actions if a["kind"] == "attack"}
    due = False
    unknown: Unknown | None = None
    for m in monsters(obs, tp):
        try:
            options = attack_options(obs, mon, ctx.cards, m)
        except Unknown as u:
            unknown = unknown or u
            continue
        for t in options:
            due = True
            if (m["uid"], t) not in offered:
                why = "" if not mon.attack(m["uid"]).declared else " (it may attack each opponent's monster once)"
                return (
                    f"{card_ref(obs, m['uid'])} may attack {_target_name(obs, t)}{why}, but that attack is not offered to "
                    f"P{tp + 1} (offered: {_labels(actions)})"
                )
    if unknown is not None:
        raise unknown
    return True if due else None


def _replay_offered(obs, actions, ctx, pending):
    a = obs["attack"]
    if obs["chain"] or a is None or a["attacker"] != pending or any(x["kind"] != "replay" for x in actions):
        return None  # (replay.choices judges those)
    m = monster(obs, pending)
    if m is None:
        return None
    mon, cards = ctx.mon, ctx.cards
    rec = mon.attack(pending)
    each = fact(cards.attacks_each_monster(m["card"]), m["card"], "whether it may attack each monster")
    due: list = [
        t for t in sorted(_attackable(obs, mon, 1 - obs["turn_player"], cards), key=lambda u: _zone_order(obs, u))
        if not (each and t in rec.declared_at and t != a["target"])  # rule: ATK-EACH-MONSTER, RPL-COUNTS
    ]
    if _may_attack_directly(obs, mon, m, cards) and not (each and rec.declared > 1):  # rule: ATK-DIRECT
        due.append(None)
    offered = {x.get("target") for x in actions if x.get("target") is not None} | ({None} if any(x.get("option") == "direct" for x in actions) else set())
    for t in due:
        if t not in offered:
            return (
                f"a replay of {card_ref(obs, pending)}'s attack is pending and it may continue {'directly' if t is None else 'against ' + card_ref(obs, t)}, but "
                f"that choice is not offered (offered: {_labels(actions)})"
            )
    return True


def _labels(actions) -> str:
    return ", ".join(a["label"] for a in actions) or "nothing"


@invariant(
    "turn.legal-offered",
    "Where the rules give the player to act a choice of how the turn goes on, it is offered at every open game state: in "
    "Main Phase 1 the turn player may enter the Battle Phase (not on the first turn) and skip it (unless a monster that must "
    "attack can attack); in the Battle Phase the player to act may pass, and the turn player's pass in the Battle Step with "
    "no attack in progress ends the Battle Phase (unless a monster that must attack can still attack); in Main Phase 2 the "
    "turn player may end the turn; with a chain open, the player to act may pass.",
    ["BP-OPTIONAL", "BP-FIRST-TURN", "BP-MUST-ENTER", "BP-START-STEP", "BP-STEPS", "BP-END-STEP", "BP-MP2", "ATK-MUST",
     "PRI-PASS-PASS", "DS-SUBSTEPS"],
    "actions",
    "turn structure",
    fields=(
        "Reads `step`, `turn`, `turn_player`, `to_act`, `over`, `attack`, `chain` and, where a monster must attack, what "
        "`attack.legal-offered` reads; the chain and a pending replay are the monitor's. `pending_triggers` and `choice` are "
        "optional (the offered actions' kinds tell an open game state). An engine with implicit passes is judged in the "
        "states it shows (it shows none where its player could only pass). Another field unobserved: not evaluated."
    ),
)  # fmt: skip
def turn_offered(obs, actions, ctx):
    mon = ctx.mon
    p = holder(obs, actions, mon)
    if p is None:
        return None
    step, tp = obs["step"], obs["turn_player"]
    kinds = {a["kind"] for a in actions}
    want: list[tuple[str, str]] = []
    if mon.chain.links or obs["chain"]:
        want.append(("pass", "passing"))  # rule: PRI-PASS-PASS
    elif step == "main1":
        if p == tp:
            if obs["turn"] > 1:  # rule: BP-FIRST-TURN, BP-OPTIONAL
                want.append(("enter_bp", "entering the Battle Phase"))
            if obs["turn"] == 1 or forced_attacker(obs, mon, ctx.cards) is None:  # rule: BP-MUST-ENTER
                want.append(("skip_bp", "skipping the Battle Phase"))
    elif step == "main2":
        if p == tp:
            want.append(("end_turn", "ending the turn"))  # rule: BP-MP2
    elif step in _BATTLE_STEPS:
        if step == "battle_step" and obs["attack"] is None and p == tp:
            if forced_attacker(obs, mon, ctx.cards) is None:  # rule: ATK-MUST
                want.append(("pass", "ending the Battle Phase"))  # rule: BP-STEPS, BP-END-STEP
        else:
            want.append(("pass", "passing"))  # rule: BP-START-STEP, DS-SUBSTEPS, PRI-PASS-PASS
    else:
        return None
    for kind, what in want:
        if kind not in kinds:
            return f"{what} is not offered to P{p + 1} in {step} (offered: {_labels(actions)})"
    return True if want else None
