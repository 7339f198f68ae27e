"""Completeness: the actions the rules allow are offered (omissions are rules bugs too).

The other invariants judge what an engine does and what it offers; these judge what it leaves
out: an attack a monster may declare (``attack.legal-offered``), entering, skipping or ending
the Battle Phase, passing and ending the turn (``turn.legal-offered``), an activation its card
data allows (``chain.legal-offered``). They decide from the monitor (the attacks, the chain, the
windows, the once-per marks the transitions made), the card facts and the observation only,
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

from itertools import combinations

from bpcheck.invariants.base import NotJudged, Unknown, by_actions, by_board, by_visible, invariant, not_judged
from bpcheck.invariants.cards import DAMAGE_STEPS, STAT_CHANGE_STEPS, SUMMON_FILTER_KEYS
from bpcheck.invariants.monitor import history, left_field
from bpcheck.invariants.view import (
    allowed_attacks,
    db_rules_unknown,
    MARKS,
    ON_CHAIN,
    activating,
    attackable,
    card_ref,
    fact,
    monster,
    monster_fields,
    monsters,
    negated,
    pile_fields,
    spell_fields,
    spells,
)
from bpcheck.model import arith  # numbers may be symbolic (bpcheck prove)

# what an open game state is when an engine does not report pending triggers and choices
_OPEN_BY_ACTIONS = {
    "pending_triggers": by_actions("a trigger is pending when the actions offered are to activate or decline it"),
    "choice": by_actions("a choice is pending when the actions offered are to choose"),
}
# what attack_options reads (attack.legal-offered, and turn.legal-offered where a monster must attack)
_ATTACK_READS = sorted({
    "step", "turn", "turn_player", "to_act", "over", "attack", "attack.attacker", "attack.target", "chain", "players[].lp",
    *monster_fields("uid", "card", "controller", "position"), *spell_fields("uid", "card", "face_up", "attached_to", "equipped_to"),
})  # fmt: skip

class Undecided(Exception):
    """A check that cannot be decided from what the engine observes: "not judged", with the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
    """The defender's monsters that can be chosen as attack targets (ATK-TARGET-IMMUNE), with the
    monitor's battle marks (never the engine's ``destroyed_by_battle``)."""
    return attackable(obs, defender, cards, mon)


def _may_attack_directly(obs: dict, mon, m: dict, cards) -> bool:
    """ATK-DIRECT: no opponent's monster can be attacked, or an effect lets `m` attack directly
    (:func:`~bpcheck.invariants.view.may_attack_directly`, with :func:`_attackable`)."""
    uid = m["uid"]
    if fact(cards.can_attack_directly(m["card"]), m["card"], "whether it can attack directly") and not negated(obs, uid, cards, mon):
        return True
    for c in spells(obs):
        if c["face_up"] and not activating(c, mon, cards) and c["equipped_to"] == uid:
            if fact(cards.grants_direct_attack(c["card"]), c["card"], "whether it grants a direct attack"):
                return True
    return not _attackable(obs, mon, 1 - m["controller"], cards)


def _cannot_attack(obs: dict, mon, m: dict, cards) -> bool:
    """ATK-CANNOT: a continuous effect forbids `m` to attack (:func:`~bpcheck.invariants.view.cannot_attack`,
    the Level from the card data)."""
    for c in spells(obs):
        if not c["face_up"] or activating(c, mon, cards):
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
    if _cannot_attack(obs, mon, m, cards):  # rule: ATK-CANNOT
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
    if rec.declared >= allowed_attacks(rec, name):  # rule: ATK-ONCE, DS-EXTRA-ATTACK
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
    "none or a card lets it; at a replay, every target the attack may continue against and a direct attack where legal. "
    "Not judged where a card of a card database may have changed the attack rules (its effect resolved this turn, or its text "
    "on the field: F28).",
    ["ATK-DECLARE", "ATK-SUMMON-TURN", "ATK-POSITION", "ATK-ONCE", "ATK-EACH-MONSTER", "ATK-DIRECT", "ATK-TARGET-IMMUNE",
     "ATK-CANNOT", "ATK-COST", "RPL-REWIND"],
    "actions",
    "attack counts",
    rulesets=("tcg", "ocg"),  # goat stores a called-off replay (GOAT-RPL-STORED): not judged there
    reads=_ATTACK_READS,
    fields={**_OPEN_BY_ACTIONS, **ON_CHAIN, **MARKS},
)  # fmt: skip
def attacks_offered(obs, actions, ctx):
    mon = ctx.mon
    lost = _owed_lost(obs, mon, "battle_step")
    if lost is not None:
        return f"the attacks of the Battle Step were never offered: P{lost[2] + 1} passed a response window there and the game went on to {obs['step']} of turn {obs['turn']}"
    if obs["over"] or obs["step"] != "battle_step" or not actions:
        return None
    if mon.chain.links or obs["chain"]:
        return None
    if mon["replay"] is not None:
        return _replay_offered(obs, actions, ctx, mon["replay"])
    if obs["attack"] is not None or obs["turn"] == 1:
        return None
    tp = obs["turn_player"]
    if holder(obs, actions, mon) != tp:
        return None
    if _response_window(obs, actions, mon) and not any(a["kind"] == "attack" for a in actions):
        return None  # owed to the state its pass leads to (history response_pass): judged there
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
                unknown_rules = db_rules_unknown(obs, mon, ctx.cards)
                if unknown_rules is not None:
                    return NotJudged(unknown_rules)
                why = "" if not mon.attack(m["uid"]).declared else " (it may attack each opponent's monster once)"
                if _responses_only(actions):  # (a distinct signature: an engine's response window, invariants/signatures.py)
                    return (
                        f"{card_ref(obs, m['uid'])} may attack {_target_name(obs, t)}{why}, but P{tp + 1} is asked only for a "
                        f"response here, without the attack (offered: {_labels(actions)})"
                    )
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
            unknown_rules = db_rules_unknown(obs, mon, cards, {pending})  # (F28: a card of a card database may have changed them)
            if unknown_rules is not None:
                return NotJudged(unknown_rules)
            return (
                f"a replay of {card_ref(obs, pending)}'s attack is pending and it may continue {'directly' if t is None else 'against ' + card_ref(obs, t)}, but "
                f"that choice is not offered (offered: {_labels(actions)})"
            )
    return True


def _labels(actions) -> str:
    return ", ".join(a["label"] for a in actions) or "nothing"


def _response_window(obs: dict, actions, mon) -> bool:
    """Whether the turn player, with no chain open, where the rules give them the turn's choices
    (Main Phase 1 or 2, the Battle Step with no attack in progress), is asked only whether to
    respond, with a plain "pass" among the answers: the EDOPro core's response window after a
    chain resolves or a step begins, which its idle command follows once the player passes
    (docs/ocgcore-findings.md, F25). The choices the rules give there are owed to the state that
    pass leads to (history ``response_pass``): judged there, and lost if the turn goes on
    without them."""
    if mon.chain.links or obs["chain"] or obs["to_act"] != obs["turn_player"]:
        return False
    if not (obs["step"] in ("main1", "main2") or (obs["step"] == "battle_step" and obs["attack"] is None)):
        return False
    return _responses_only(actions) and any(a["kind"] == "pass" and a.get("label") == "pass" for a in actions)


@history(
    "response_pass",
    "The turn, step and player of a plain pass the turn player just gave with no chain open in Main Phase 1 or 2 or the "
    "Battle Step with no attack (an engine's response window before its idle command, F25): the choices of that step are "
    "owed to the state it leads to (turn.legal-offered, attack.legal-offered); null after any other transition.",
    initial=None,
)
def _response_pass(prev, t):
    a, b = t.action, t.before
    if not isinstance(a, dict) or a.get("kind") != "pass" or a.get("label") != "pass" or b.get("over"):
        return None
    if t.mon.chain.links or b.get("chain") or a.get("player") != b.get("turn_player"):
        return None
    if b.get("step") in ("main1", "main2") or (b.get("step") == "battle_step" and b.get("attack") is None):
        return (b.get("turn"), b.get("step"), a.get("player"))
    return None


def _owed_lost(obs: dict, mon, step: str | None = None) -> tuple | None:
    """(turn, step, player) of a response window whose pass led the game on to another step (or
    turn) (in `step` only, when given): the choices the rules gave there were never offered."""
    owed = mon["response_pass"]
    if owed is None or obs["over"] or (obs["turn"], obs["step"]) == (owed[0], owed[1]) or (step is not None and owed[1] != step):
        return None
    return owed


def _responses_only(actions) -> bool:
    """Whether the player is asked only to respond: every action offered activates a card or
    declines (a plain "pass", not "end Battle Phase"). The EDOPro core asks so after a chain
    resolves or a phase begins, before its idle command (docs/ocgcore-findings.md, F25). Only the
    signature of an omission depends on it, never the verdict."""
    return bool(actions) and all(a["kind"] == "activate" or (a["kind"] == "pass" and a.get("label") == "pass") for a in actions)


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
    # (what attack.legal-offered reads, where a monster must attack)
    reads=sorted({*_ATTACK_READS, "players[].spells"}),
    fields={**_OPEN_BY_ACTIONS, **ON_CHAIN, **MARKS},
)  # fmt: skip
def turn_offered(obs, actions, ctx):
    mon = ctx.mon
    lost = _owed_lost(obs, mon)
    if lost is not None:
        return f"the turn's choice in {lost[1]} was never offered: P{lost[2] + 1} passed a response window there and the game went on to {obs['step']} of turn {obs['turn']}"
    p = holder(obs, actions, mon)
    if p is None:
        return None
    step, tp = obs["step"], obs["turn_player"]
    kinds = {a["kind"] for a in actions}
    want: list[tuple[str, str]] = []
    if mon.chain.links or obs["chain"]:
        want.append(("pass", "passing"))  # rule: PRI-PASS-PASS
    elif step in ("main1", "main2") and p != tp:
        want.append(("pass", "passing"))  # the opponent asked at the end of a Main Phase (an engine's window, PRI-PASS-PASS)
    elif step == "main1":
        if obs["turn"] > 1:  # rule: BP-FIRST-TURN, BP-OPTIONAL
            want.append(("enter_bp", "entering the Battle Phase"))
        if obs["turn"] == 1 or forced_attacker(obs, mon, ctx.cards) is None:  # rule: BP-MUST-ENTER
            want.append(("skip_bp", "skipping the Battle Phase"))
    elif step == "main2":
        want.append(("end_turn", "ending the turn"))  # rule: BP-MP2
    elif step in _BATTLE_STEPS:
        if step == "battle_step" and obs["attack"] is None and p == tp:
            if forced_attacker(obs, mon, ctx.cards) is None:  # rule: ATK-MUST
                want.append(("pass", "ending the Battle Phase"))  # rule: BP-STEPS, BP-END-STEP
        else:
            want.append(("pass", "passing"))  # rule: BP-START-STEP, DS-SUBSTEPS, PRI-PASS-PASS
    else:
        return None
    if any(kind not in kinds for kind, _w in want) and _response_window(obs, actions, mon):
        return None  # owed to the state its pass leads to (history response_pass): judged there
    for kind, what in want:
        if kind not in kinds:
            unknown_rules = db_rules_unknown(obs, mon, ctx.cards) if kind in ("enter_bp", "skip_bp", "pass") else None
            if unknown_rules is not None:
                return NotJudged(unknown_rules)
            if _responses_only(actions):  # (a distinct signature: an engine's response window)
                return f"{what} is not offered: P{p + 1} is asked only for a response in {step} (offered: {_labels(actions)})"
            return f"{what} is not offered to P{p + 1} in {step} (offered: {_labels(actions)})"
    return True if want else None


# -- activations --------------------------------------------------------------------------------


@history(
    "effects_used",
    "Once-per-turn and once-per-battle effects used this turn (by their card data): (monster, effect, per battle) for each "
    "chain link a monster on the field added with such an effect; once-per-battle ones forgotten when the Damage Step ends, "
    "all of a monster's when it leaves the field. Never the engine's once_per_turn_used.",
)
def _effects_used(prev, t):
    kinds = t.kind_set()
    if t.before.get("turn") != t.after.get("turn"):
        prev = ()
    elif not prev and "chain_link_added" not in kinds:
        return prev
    elif prev and "chain_link_added" not in kinds and "card_moved" not in kinds and "phase_changed" not in kinds:
        return prev
    used = set(prev)
    for e in t.events:
        k = e.kind
        if k == "chain_link_added":
            m = monster(t.before, e.get("card_uid"))
            if m is None or t.cards is None:
                continue
            idx = e.get("effect")
            once = t.cards.once_per(m["card"], idx)
            if idx is None:  # an engine that does not say which effect: the card's only marked effect
                marks = [i for i in range(len(t.cards.effects(m["card"]) or ())) if t.cards.once_per(m["card"], i)]
                idx, once = (marks[0], t.cards.once_per(m["card"], marks[0])) if len(marks) == 1 else (-1, once)
            if once:
                used.add((m["uid"], idx, once == "battle"))
        elif left_field(e):
            used = {u for u in used if u[0] != e.get("card_uid")}
        elif k == "phase_changed" and str(e.get("from", "")).startswith("damage_step") and not str(e.get("to", "")).startswith("damage_step"):
            used = {u for u in used if not u[2]}
    return tuple(sorted(used))


def _battlers(obs: dict):
    """(attacker, target) of the battle in progress, (None, None) when there is none or it ended
    early. Where the engine does not report ``attack.battle_ended``, a battle whose attacker or
    target is no longer on its side of the field counts as ended (an effect that needs a battle
    is then not demanded: the check may miss an omission there, never invent one)."""
    a = obs["attack"]
    if a is None:
        return None, None
    ended = a.get("battle_ended")
    if ended is None:
        tp = obs["turn_player"]
        att = monster(obs, a["attacker"])
        tgt = monster(obs, a["target"]) if a["target"] is not None else None
        ended = att is None or att["controller"] != tp or (a["target"] is not None and (tgt is None or tgt["controller"] == tp))
    return (None, None) if ended else (a["attacker"], a["target"])


def _card_fact(cards, name: str, key: str):
    v = cards.stat(name, key)
    if v is None and not cards.known(name):
        raise Unknown(name, f"its {key}")
    return v


def _condition(obs, mon, cards, p, uid, name, cond) -> bool:
    """One activation condition of docs/cards.md, restated (the conditions' words)."""
    a = obs["attack"]
    tp = obs["turn_player"]
    links = mon.chain.links
    if cond == "opponent_monster_attacking":
        return a is not None and tp != p and monster(obs, a["attacker"]) is not None
    if cond == "self_battling":
        att, tgt = _battlers(obs)
        return tgt is not None and uid in (att, tgt)
    if cond == "self_attacked_in_attack_position":
        _att, tgt = _battlers(obs)
        m = monster(obs, uid)
        return tgt == uid and m is not None and m["position"] == "attack"
    if cond == "self_was_attacked":
        return a is not None and a["target"] == uid
    if cond == "self_not_declared_attack":
        rec = mon.attack(uid)
        return not rec.declared and not rec.stopped
    if cond == "own_light_monster_battles_monster":
        att, tgt = _battlers(obs)
        if att is None or tgt is None:
            return False
        m = monster(obs, att if p == tp else tgt)
        return m is not None and m["controller"] == p and m["position"] != "facedown" and _card_fact(cards, m["card"], "attribute") == "LIGHT"
    if cond == "own_free_monster_zones_4":
        return sum(1 for z in obs["players"][p]["monsters"] if z is None) >= 4
    if cond == "opponent_free_monster_zones_3":
        return sum(1 for z in obs["players"][1 - p]["monsters"] if z is None) >= 3
    if cond == "battle_phase":
        return obs["phase"] == "battle"
    if cond == "responding_to_opponent":
        return bool(links) and links[-1][3] != p
    if cond == "attacker_race_spellcaster":
        m = monster(obs, a["attacker"]) if a is not None else None
        return m is not None and _card_fact(cards, m["card"], "race") == "Spellcaster"
    if cond == "opponent_summoned_atk_1500":  # a monster the opponent just Summoned, on their side, with 1500 ATK or more
        for u, by in mon["summons"][3]:
            m = monster(obs, u)
            if by != p and m is not None and m["controller"] != p:
                if m.get("atk") is None:
                    raise Undecided(f"{name}: whether a monster just Summoned has 1500 ATK (the engine does not observe its atk)")
                if arith.ge(m["atk"], 1500):
                    return True
        return False
    if cond == "opponent_summoned":  # "When your opponent Special Summons a monster": one they just Summoned, still on the field
        return any(by != p and monster(obs, u) is not None for u, by in mon["summons"][3])
    if cond == "opponent_battle_phase":  # "During your opponent's Battle Phase"
        return tp != p and obs["phase"] == "battle"
    if cond in ("self_attacks_face_down_defense", "self_attacks_face_up_defense"):
        if a is None or a["attacker"] != uid or a["target"] is None:
            return False
        m = monster(obs, a["target"])
        return m is not None and m["position"] == ("facedown" if cond == "self_attacks_face_down_defense" else "defense")
    if cond == "self_attacking_destroys_by_battle":  # "If this attacking card destroys an opponent's monster by battle" (DS-EXTRA-ATTACK)
        return a is not None and a["attacker"] == uid and a["target"] is not None and a["target"] in mon.battle.destroyed
    if cond == "self_face_up_to_resolve":  # "You must control this face-up card to activate and to resolve this effect."
        m = monster(obs, uid)
        return m is not None and m["controller"] == p and m["position"] != "facedown"
    raise Unknown(name, f"whether its condition {cond!r} holds")


def _timing(obs, mon, cards, spec, p: int | None = None) -> bool:
    """The card's own activation timing (``when``) allows it now (WIN-*, DS-LEGAL-DAMAGE-TIMING)."""
    when = spec["when"]
    step = obs["step"]
    if when is None:
        return True
    if when == "attack_declared":  # rule: WIN-ATTACK-DECL
        return obs["attack"] is not None and mon.window.attack_declaration
    if when == "summoned":  # rule: WIN-EVENT
        return bool(mon["summons"][0])
    if when in ("trap_activated", "spell_activated"):  # rule: WIN-COUNTER (a card activation on top of the chain)
        links = mon.chain.links
        if not links or links[-1][6]:
            return False
        top = fact(cards.kind(links[-1][1]), links[-1][1], "its card type")[0]
        return top == ("trap" if when == "trap_activated" else "spell")
    if when == "opponent_graveyard_effect_activated":  # "When a card effect is activated in your opponent's GY" (directly in response)
        links = mon.chain.links
        if not links or links[-1][6] or links[-1][0] in mon.chain.effect_negated:
            return False
        _uid, top, idx, player = links[-1][:4]
        if player is None or player == p or idx is None:
            return False
        eff = fact(cards.effect(top, idx), top, "its effect")
        return eff.get("location", "field") == "graveyard"
    if when == "own_monster_destroyed_to_gy":  # rule: WIN-EVENT (the monitor's destroyed_window)
        return p in mon["destroyed_window"][0]
    if when == "damage_taken":  # rule: DS-DAMAGE-RESPONSE (the monitor's damage_window)
        return p in mon["damage_window"][0]
    if when == "during_damage_calculation":
        return step == _CALC
    if when == "damage_step":  # rule: DS-LEGAL-DAMAGE-TIMING (TCG: up to and including damage calculation)
        if cards.ruleset == "ocg":  # rule: OCG-DS-CALC-SAYS-SO (up to, not during, damage calculation)
            return step in STAT_CHANGE_STEPS
        return step in STAT_CHANGE_STEPS or step == _CALC
    return False  # the timings of triggers: activated by the trigger procedure, not by a choice


def _target_pool(obs, mon, cards, p, uid, t, kind) -> list[int]:
    sides = {"own": (p,), "opponent": (1 - p,), "any": (0, 1)}[t["side"]]
    out: list[int] = []
    if t["zone"] == "monster":
        a = obs["attack"]
        for side in sides:
            for m in obs["players"][side]["monsters"]:
                if m is None or m["uid"] in mon.battle.destroyed:  # rule: DS-NO-TARGET-DESTROYED
                    continue
                face_up = m["position"] != "facedown"
                if t["face"] == "up" and not face_up:
                    continue
                if t["attacker_only"] and (a is None or a["attacker"] != m["uid"]):
                    continue
                if t["effect_monster"] and fact(cards.kind(m["card"]), m["card"], "its card type") not in (("monster", "effect"), ("monster", "flip")):
                    continue
                if t["can_flip_down"] and fact(cards.is_token(m["card"]), m["card"], "whether it is a Token"):  # rule: CARD-TOKEN
                    continue
                if (
                    kind == "spell" and face_up and not negated(obs, m["uid"], cards, mon)
                    and fact(cards.unaffected_by_spells(m["card"]), m["card"], "whether it is unaffected by Spells")
                ):  # fmt: skip
                    continue
                out.append(m["uid"])
    elif t["zone"] == "spell_trap":
        for side in sides:
            pl = obs["players"][side]
            for c in [*pl["spells"], pl["field_zone"]]:
                if c is not None and c["uid"] != uid:
                    out.append(c["uid"])
    else:
        for side in sides:
            for g in obs["players"][side]["graveyard"]:
                k = fact(cards.kind(g["card"]), g["card"], "its card type")
                if t["kind"] == "monster" and k[0] not in ("monster", "token"):
                    continue
                if t["kind"] == "spell" and k[0] != "spell":
                    continue
                if t["race"] is not None and cards.stat(g["card"], "race") != t["race"]:
                    continue
                if t["archetype"] is not None and t["archetype"] not in (cards.stat(g["card"], "archetypes") or ()):
                    continue
                out.append(g["uid"])
    return out


def activation_variants(obs, mon, cards, p: int, uid: int, name: str, idx: int, loc: str, card: dict | None) -> list:
    """The ways player `p` may activate effect `idx` of card `name` (uid `uid`, from `loc`:
    ``hand``, ``set`` or ``monster``; `card` its observation on the field) at this open game
    state, as (costs, targets) frozensets; [] when the rules do not allow it now. Raises Unknown
    when the card data cannot say."""
    spec = fact(cards.activation(name, idx), name, "how its effect is activated")
    kind, sub, typ = spec["kind"], spec["subtype"], spec["type"]
    if typ in ("trigger", "flip"):
        return []  # activated by the trigger procedure when its event happens, never by choice
    tp, step = obs["turn_player"], obs["step"]
    me = obs["players"][p]
    links = mon.chain.links
    if kind in ("spell", "trap"):
        if typ != "activate":
            return []
        if loc == "hand":
            if kind == "trap":  # rule: CH-QP-HAND (a Trap is Set first)
                return []
            if sub == "quick-play" and p != tp:  # rule: CH-QP-HAND
                return []
            if sub != "field" and all(z is not None for z in me["spells"]):
                return []
        elif card is not None and (kind == "trap" or sub == "quick-play"):
            # (what the board places Set this turn: no card is Set in the Battle Phase; the
            # engine's own flag only for a run without a board document)
            set_now = cards.placed_this_turn(card["uid"], "set_this_turn")
            if set_now is None:
                set_now = card.get("set_this_turn")
            if set_now is None:
                raise Undecided(f"{name}: whether it was Set this turn (the engine does not observe set_this_turn)")
            if set_now:  # rule: CH-SET-TURN
                return []
    elif loc == "hand":
        if spec["location"] != "hand":
            return []
    else:
        if spec["location"] != "field" or card is None or card["position"] == "facedown" or negated(obs, uid, cards, mon):
            return []
        if uid in mon.battle.destroyed and not spec["mandatory"]:  # rule: DS-DESTROYED-MARK
            return []
        if spec["once"] and any(u[0] == uid and u[1] in (idx, -1) for u in mon["effects_used"]):
            return []
    speed = spec["speed"]
    if speed == 1:  # rule: CH-SPEED1
        if not (p == tp and step in ("main1", "main2") and not links):
            return []
    elif links:  # rule: CH-SPEED
        top = links[-1]
        if speed < max(fact(cards.speed(top[1], top[2]), top[1], "its spell speed"), 2):
            return []
    if step in DAMAGE_STEPS:  # rule: DS-LEGAL-COUNTER, DS-LEGAL-NEGATE, DS-LEGAL-STATS, DS-LEGAL-DAMAGE-TIMING, DS-ILLEGAL-OTHER
        if step not in fact(cards.damage_step_window(name, idx), name, "when it may be activated in the Damage Step"):
            return []
        if step == _CALC and not links and mon.chain.chains_in_calc >= 1:  # rule: DS-DURING-CALC-ONE-CHAIN
            return []
    if cards.ruleset == "ocg" and step == "battle_start_step" and p != tp and speed == 2:  # rule: OCG-START-STEP-TP
        return []
    if cards.ruleset == "ocg" and step == "battle_step" and obs["attack"] is not None and not links and not mon.window.attack_declaration:
        # rule: OCG-BATTLE-ONE-CHAIN (once the declaration's window has closed, no new Chain is
        # demanded; after a replay the model allows one again: this check then demands nothing,
        # so it may miss an omission there, never invent one)
        return []
    if not _timing(obs, mon, cards, spec, p):
        return []
    for cond in spec["conditions"]:
        if not _condition(obs, mon, cards, p, uid, name, cond):
            return []
    # Costs (rule: CH-COST): what can be paid, and the ways to pay.
    costs: list[tuple] = [()]
    for c in spec["cost"]:
        op = c["op"]
        if op == "pay_lp":
            if arith.lt(me["lp"], c.get("amount", 0)):
                return []
        elif op == "tribute":
            own = [m["uid"] for m in me["monsters"] if m is not None and m["uid"] not in mon.battle.destroyed]
            # "Tribute 1 face-up "Naturia" monster you control, except this card"
            if c.get("except_self"):
                own = [u for u in own if u != uid]
            if c.get("face") == "up" or c.get("archetype") is not None:
                own = [u for u in own if monster(obs, u)["position"] != "facedown"]
            if c.get("archetype") is not None:
                own = [u for u in own if c["archetype"] in (cards.stat(monster(obs, u)["card"], "archetypes") or ())]
            costs = [cs + (u,) for cs in costs for u in own if u not in cs]
        elif op == "discard":
            hand = [h["uid"] for h in me["hand"] if h["uid"] != uid]
            costs = [cs + combo for cs in costs for combo in combinations([h for h in hand if h not in cs], c.get("count", 1))]
        if not costs:
            return []
    # What its resolution needs (a card that could do nothing is not activated).
    free = any(z is None for z in me["monsters"])
    for o in spec["ops"]:
        op = o["op"]
        if op == "special_summon" and o.get("from") == "deck":
            if not free:
                return []
            if not o.get("each_player"):
                flt = dict(o.get("filter") or {})
                if set(flt) - SUMMON_FILTER_KEYS:
                    raise Unknown(name, "which monsters it Special Summons from the Deck")
                if not any(fact(cards.matches(d["card"], flt), d["card"], "its card data") for d in me["deck"]):
                    return []
        elif op in ("special_summon", "take_control") and (op == "take_control" or o.get("what") == "target") and not free:
            return []
        elif op == "negate_activation" and not links:
            return []
        elif o.get("what") == "face_up_effect_monsters" or op == "destroy_lowest_atk":
            # "Change all Effect Monsters on the field ..." / "Destroy the 1 face-up monster on the field
            # that has the lowest ATK": a face-up one (an Effect Monster for the first), not destroyed by battle
            up = [m for m in monsters(obs) if m["position"] != "facedown" and m["uid"] not in mon.battle.destroyed]
            if op != "destroy_lowest_atk":
                up = [m for m in up if fact(cards.kind(m["card"]), m["card"], "its card type")[1] in ("effect", "flip")]
            if not up:
                return []
    # Targets (rule: CH-COST: chosen at activation).
    choices: list[tuple] = [()]
    for t in spec["targets"]:
        pool = _target_pool(obs, mon, cards, p, uid, t, kind)
        lo = max(t["count"] if t["min"] is None else t["min"], 1)
        choices = [
            prev + combo
            for prev in choices
            for k in range(lo, t["count"] + 1)
            for combo in combinations([u for u in pool if u not in prev], k)
        ]
        if not choices:
            return []
    return sorted(
        {(frozenset(cs), frozenset(ts)) for cs in costs for ts in choices if not set(cs) & set(ts)},
        key=lambda v: (sorted(v[0]), sorted(v[1])),
    )


def _candidates(obs: dict, cards, p: int):
    """(uid, card name, effect index, where, field observation, uids standing for it) of each effect
    player `p` might activate by choice: their face-up monsters' effects, their Set Spells and
    Traps, the cards in their hand (copies of one card in the hand offer the same choices: the
    lowest uid stands for them, any of them may be offered)."""
    me = obs["players"][p]
    for m in me["monsters"]:
        if m is not None:
            for i in fact(cards.activated_effects(m["card"]), m["card"], "its effects"):
                yield m["uid"], m["card"], i, "monster", m, (m["uid"],)
    for c in [*me["spells"], me["field_zone"]]:
        if c is not None and not c["face_up"]:
            for i in fact(cards.activated_effects(c["card"]), c["card"], "its effects"):
                yield c["uid"], c["card"], i, "set", c, (c["uid"],)
    copies: dict[str, list[int]] = {}
    for h in me["hand"]:
        copies.setdefault(h["card"], []).append(h["uid"])
    for name in sorted(copies):
        uids = tuple(sorted(copies[name]))
        for i in fact(cards.activated_effects(name), name, "its effects"):
            yield uids[0], name, i, "hand", None, uids


@invariant(
    "chain.legal-offered",
    "Every activation the card data allows is offered to the player who holds priority, in each of its ways (costs and "
    "targets): a Set Spell or Trap (a Quick-Play Spell or Trap not in the turn it was Set), a Spell in the hand (a Quick-Play "
    "Spell only on its controller's turn), a monster's effect on the field or in the hand (face-up, not negated, its "
    "once-per-turn or once-per-battle use not spent), when its Spell Speed answers the chain or starts one (Spell Speed 1 only "
    "by the turn player in a Main Phase with an empty chain), the Damage Step allows it, its own timing and conditions hold, "
    "its costs can be paid, it has targets and its resolution can do something.",
    ["CH-SPEED", "CH-SPEED1", "CH-QP-HAND", "CH-SET-TURN", "CH-COST", "WIN-ATTACK-DECL", "WIN-BEFORE-DS", "WIN-EVENT",
     "WIN-COUNTER", "DS-LEGAL-COUNTER", "DS-LEGAL-NEGATE", "DS-LEGAL-NEGATE-EFFECT", "OCG-DS-NEGATE-EFFECT", "DS-DAMAGE-RESPONSE", "DS-LEGAL-STATS", "DS-LEGAL-DAMAGE-TIMING", "DS-DURING-CALC-ONE-CHAIN",
     "DS-NO-TARGET-DESTROYED", "OCG-START-STEP-TP", "OCG-BATTLE-ONE-CHAIN", "OCG-DS-CALC-SAYS-SO", "DS-REFUSED-BY-RULING", "DS-ALLOWED-BY-RULING"],
    "actions",
    "chains and windows",
    reads=sorted({
        "step", "phase", "turn_player", "to_act", "over", "attack", "attack.attacker", "attack.target", "players[].lp", "chain",
        *monster_fields("uid", "card", "controller", "position", "atk"), *spell_fields("uid", "card", "face_up", "attached_to"),
        *pile_fields("uid", "card"),
    }),  # fmt: skip
    fields={
        **_OPEN_BY_ACTIONS, **ON_CHAIN, **MARKS,
        "attack.battle_ended": by_visible(
            "a battle whose attacker or target is no longer on its side of the field counts as ended (an effect that needs a "
            "battle is then not demanded: the check may miss an omission there, never invent one)"
        ),
        **{
            f"players[].{z}.set_this_turn": by_board("the cards it places Set this turn (no card is Set in the Battle Phase)")
            for z in ("spells[]", "field_zone")
        },
    },  # fmt: skip
)  # fmt: skip
def activations_offered(obs, actions, ctx):
    mon, cards = ctx.mon, ctx.cards
    p = holder(obs, actions, mon)
    if p is None:
        return None
    offered: dict[int, set] = {}
    for a in actions:
        if a["kind"] == "activate":
            offered.setdefault(a.get("card_uid"), set()).add((a.get("effect"), frozenset(a.get("cost") or ()), frozenset(a.get("targets") or ())))
    due = False
    undecided: str | None = None
    # the EDOPro core's response window before its idle command (F25): a Spell Speed 1 Spell or
    # Ignition effect starts a chain at the open game state its pass leads to, and is judged there
    # (Chaos Sorcerer after "change position" in Main Phase 2). rule: CH-SPEED1
    window = _response_window(obs, actions, mon)
    for uid, name, idx, loc, card, uids in list(_candidates(obs, cards, p)):
        if window and cards.speed(name, idx) == 1 and (cards.effect(name, idx) or {}).get("type") in ("activate", "ignition"):
            continue
        try:
            ways = activation_variants(obs, mon, cards, p, uid, name, idx, loc, card)
        except Unknown as u:
            undecided = undecided or not_judged(u).reason
            continue
        except Undecided as u:
            undecided = undecided or u.reason
            continue
        if not ways:
            continue
        due = True
        got = set()
        for u in uids:
            for eff, cs, ts in offered.get(u, ()):
                if eff is None or eff == idx:  # (an engine that does not say which effect: any of the card's)
                    got.add((cs, ts))
        for cs, ts in ways:
            if (cs, ts) not in got:
                what = f"{card_ref(obs, uid)}" + _effect_label(cards, name, idx)
                if cs:
                    what += " paying " + ", ".join(card_ref(obs, u) for u in sorted(cs))
                if ts:
                    what += " targeting " + ", ".join(card_ref(obs, u) for u in sorted(ts))
                return f"P{p + 1} may activate {what} in {obs['step']}, but that activation is not offered (offered: {_labels(actions)})"
    if undecided is not None:
        return NotJudged(undecided)
    return True if due else None


def _effect_label(cards, name: str, idx: int) -> str:
    e = cards.effect(name, idx) or {}
    return f" ({e['label']})" if e.get("label") and len(cards.activated_effects(name) or ()) > 1 else ""
