"""Accounting: battle damage, LP, where every card is, the end of the duel."""

from __future__ import annotations

import re

from bpcheck.invariants.base import NotJudged, Unknown, by_history, invariant
from bpcheck.invariants.monitor import history
from bpcheck.invariants.view import (
    NEGATION_READS,
    ON_CHAIN,
    activating,
    card_ref,
    card_refs,
    extra_place_fields,
    fact,
    find_spell,
    monster,
    monsters,
    monster_fields,
    negated,
    pile_fields,
    spell_fields,
    spells,
    uid_count_ok,
    uid_places,
)

# Numbers may be symbolic under `bpcheck prove`: compare and add them with the neutral numeric
# domain (bpcheck.model.arith: plain operations on ints or z3 terms, no rules of the game).
from bpcheck.model import arith

_ON_CHAIN = ON_CHAIN

FAMILY = "accounting"
_LP_KINDS = frozenset({"battle_damage", "effect_damage", "lp_paid", "lp_gained", "lp_lost"})

# -- protections against battle (the monitor's own, from what resolved; never the engine's lingering)

_PROTECTION_READS = frozenset({"chain_link_added", "activation_negated", "chain_link_resolved", "phase_changed"})


@history(
    "protections",
    "Effects in force against battle (\"you take no battle damage\", \"cannot be destroyed by battle\"): (what, player, until) "
    "for each chain link that resolved without being negated and whose card data gives one, until its duration ends (the end "
    "of the Damage Step, the end of the turn); false when a resolved card's data could not say. Never the engine's lingering.",
)
def _protections(prev, t):
    kinds = t.kind_set()
    if _PROTECTION_READS.isdisjoint(kinds) and t.before.get("turn") == t.after.get("turn"):
        return prev  # nothing resolved, and no duration can have ended
    if "chain_link_resolved" not in kinds and not prev:
        return prev
    known = prev is not False
    out = list(prev) if known else []
    links = [list(x[:4]) + [x[6]] for x in t.mon.chain.links]  # (uid, card, effect, player, negated)
    for e in t.events:
        k = e.kind
        if k == "chain_link_added":
            links.append([e["card_uid"], e["card"], e.get("effect"), e.get("player"), False])
        elif k == "activation_negated":
            for x in reversed(links):
                if x[0] == e.get("card_uid"):
                    x[4] = True
                    break
        elif k == "chain_link_resolved":
            link = next((x for x in reversed(links) if x[0] == e.get("card_uid")), None)
            if link is not None:
                links.remove(link)
            if e.get("negated") or (link is not None and link[4]):
                continue
            gives = t.cards.protections(e.get("card"), link[2] if link is not None else None) if t.cards is not None else None
            if gives and (link is None or link[3] is None):
                known = False  # it gives one, but to whom is not known
            elif gives is None:
                known = False
            else:
                out += [(what, link[3] if to == "you" else 1 - link[3], until) for what, to, until in gives]
        elif k == "phase_changed" and str(e.get("from", "")).startswith("damage_step") and not str(e.get("to", "")).startswith("damage_step"):
            out = [x for x in out if x[2] != "end_of_damage_step"]
    if t.before.get("turn") != t.after.get("turn"):
        out, known = [], True
    if not known:
        return False
    new = tuple(sorted(out))
    return prev if new == prev else new


# -- what the text of a card of a card database does to damage calculation (its profile's
# battle_mods, model/profile.py; docs/profiles.md "Battle modifications"). Pool cards and a
# board's [[card]] tables have no profile: their continuous effects are the card data's.

_DAMAGE_KINDS = frozenset({"piercing", "no_damage", "double", "halve", "reflect", "gain", "other"})
_DESTROY_KINDS = frozenset({"indestructible", "cannot_destroy", "replacement", "other"})
# a card in a Graveyard whose text acts from there on a battle ("If your monster would be destroyed by
# battle, you can banish this card from your GY instead"; "... while this card is in your GY")
_FROM_GY = re.compile(r"\bthis card from (?:your|the) (?:GY|Graveyard)\b|\bwhile this card is in (?:your|the) (?:GY|Graveyard)\b", re.I)


def _member(cards, m: dict, arch: str, src: dict) -> bool | None:
    """Whether monster `m` is a \"`arch`\" monster: its name holds `arch`; else, a card of the
    database whose setcodes hold the one archetype code of the card `src` whose text names it (when
    `src`'s own name holds `arch` and it has exactly one); a card of the pool (no archetype in its
    data) is not; otherwise None."""
    if arch.lower() in str(m["card"]).lower():
        return True
    row = cards.rows.get(m["card"])
    if row is None:
        return False
    if not row.setcodes:
        return False
    own = cards.rows.get(src["card"])
    if own is not None and arch.lower() in own.name.lower() and len(own.setcodes) == 1:
        code = own.setcodes[0]
        return any((c & 0xFFF) == (code & 0xFFF) and (c & code) == code for c in row.setcodes)
    return None


def _mod_holds(cards, mod, src: dict, obs: dict, calc) -> tuple[bool | None, str]:
    """Whether battle modification `mod` of card `src` (a face-up monster on the field) applies to
    the battle of damage_calculation event `calc`: (True, ""), (False, "") or (None, why not known).
    Its conditions, then whether it needs a direct attack (its role is :func:`_affected`'s)."""
    me, tp = src["controller"], obs["turn_player"]
    tgt = calc["target_uid"]
    for c in mod.conditions:
        k = c[0]
        if k == "your_turn":
            ok = tp == me
        elif k == "opponent_turn":
            ok = tp != me
        elif k == "control_race":
            side = [m for m in monsters(obs, me) if not (c[2] and m["uid"] == src["uid"])]
            ok = any(m["position"] != "facedown" and m.get("race") == c[1] for m in side)
            if not ok and any(m["position"] == "facedown" for m in side):
                return None, "a face-down monster may be of the race its condition names"
        elif k == "control_token":
            ok = any(m.get("token") for m in monsters(obs, me))
        elif k == "archetype_face_up":
            side = [m for m in monsters(obs, me if c[2] == "you" else None) if m["uid"] != src["uid"] and m["position"] != "facedown"]
            hits = [_member(cards, m, c[1], src) for m in side]
            if None in hits and True not in hits:
                return None, f"whether a monster is a \"{c[1]}\" monster"
            ok = True in hits
        elif k == "equipped":
            eq = src.get("equipped_with")
            if eq is None or eq:
                return None, "what it is equipped with"
            ok = False
        elif k == "gemini":
            # a board cannot place a Gemini monster Normal Summoned a second time: only one Summoned
            # this turn may be
            if src.get("summoned_this_turn") is not False:
                return None, "whether it was Normal Summoned again (a Gemini monster)"
            ok = False
        elif k == "self_attack_position":
            ok = src["position"] == "attack"
        elif k == "direct_by_effect":
            if not any(True for _m in monsters(obs, 1 - me)):
                return None, "whether its direct attack uses its effect"
            ok = True
        else:
            return None, f"its condition {k}"
        if not ok:
            return False, ""
    if mod.direct is not None and mod.direct != (tgt is None):
        return False, ""
    return True, ""


def _affected(cards, mod, src: dict, obs: dict, calc) -> tuple[set | None, str]:
    """The battlers `mod` applies to (uids), or (None, why not known)."""
    me = src["controller"]
    att, tgt = calc["attacker_uid"], calc["target_uid"]
    battlers = [u for u in (att, tgt) if u is not None]
    if mod.scope[0] == "self":
        hit = {src["uid"]} & set(battlers)
    elif mod.scope[0] == "equipped":  # (an Equip Card's text: the monster it is equipped to)
        hit = {src.get("equipped_to")} & set(battlers)
    else:
        hit = set()
        for u in battlers:
            m = monster(obs, u)
            if m is None or m["controller"] != me:
                continue
            if mod.scope[0] == "race":
                ok = m.get("race") == mod.scope[1]
            elif mod.scope[0] == "archetype":
                if mod.scope[2] and u == src["uid"]:
                    continue
                ok = _member(cards, m, mod.scope[1], src)
                if ok is None:
                    return None, f"whether {m['card']} is a \"{mod.scope[1]}\" monster"
            else:
                ok = True
            if ok:
                hit.add(u)
    if mod.role == "attacker":
        hit &= {att}
    elif mod.role == "target":
        hit &= {tgt}
    elif mod.role == "defense":
        hit = {u for u in hit if u == tgt and calc["target_position"] != "attack"}
    return hit, ""


def text_mods(t, calc, kinds, unsure_no_damage: list | None = None, gy_players: set | None = None) -> list | NotJudged:
    """The battle modifications of kinds `kinds` that the texts of the face-up cards of a card
    database on the field apply to the battle of `calc`: [(mod, card, uids affected)], or
    NotJudged naming the card and the sentence where the profile is not sure (docs/profiles.md).
    ``unsure_no_damage``: a list that takes, instead of a NotJudged, the unsure "you take no
    damage" sentences whose player is known ((player, NotJudged)): they matter only if that player
    is to take battle damage, which the caller decides. ``gy_players``: the players whose Graveyard
    may hold a card whose text acts from there on this battle (default: the battlers' controllers)."""
    cards = t.cards
    if not getattr(cards, "rows", None):
        return []
    obs = t.before
    out = []
    battlers = {calc["attacker_uid"], calc["target_uid"]} - {None}
    # a battler that came to the field within this transition (Special Summoned by its effect, the
    # attack moved to it and damage calculation reached at once) is read as it is after it
    seen = {m["uid"] for m in monsters(obs)}
    arrived = [m for m in monsters(t.after) if m["uid"] in battlers and m["uid"] not in seen]
    for src in [*monsters(obs), *arrived]:
        if src["position"] == "facedown":
            continue
        prof = cards.profile(src["card"])
        if prof is None:
            continue
        for mod in prof.battle_mods:
            if mod.section == "pendulum":
                continue  # (a Pendulum Effect applies in the Pendulum Zone only)
            if not mod.sure:
                lo = (mod.evidence.quote or "").lower()
                touches = ("damage" in lo and bool(kinds & _DAMAGE_KINDS)) or ("destr" in lo and bool(kinds & _DESTROY_KINDS))
                if not touches or (mod.self_only and src["uid"] not in battlers):
                    continue
                if unsure_no_damage is not None and mod.kind == "no_damage" and mod.to in ("you", "opponent"):
                    player = src["controller"] if mod.to == "you" else 1 - src["controller"]
                    unsure_no_damage.append((player, NotJudged(f"{src['card']}: its text \"{mod.evidence.quote}\" ({mod.kind}, {mod.rule}): {mod.why}")))
                    continue
                return NotJudged(f"{src['card']}: its text \"{mod.evidence.quote}\" ({mod.kind}, {mod.rule}): {mod.why}")
            if mod.kind not in kinds:
                continue
            holds, why = _mod_holds(cards, mod, src, obs, calc)
            if holds is None:
                return NotJudged(f"{src['card']}: whether \"{mod.evidence.quote}\" applies ({why})")
            if not holds:
                continue
            hit, why = _affected(cards, mod, src, obs, calc)
            if hit is None:
                return NotJudged(f"{src['card']}: whom \"{mod.evidence.quote}\" applies to ({why})")
            if hit:
                out.append((mod, src, hit))
    for sp in spells(obs):
        prof = cards.profile(sp["card"]) if sp.get("face_up") else None
        rel = [m for m in prof.battle_mods if m.section != "monster" and (m.kind in kinds or m.kind == "other")] if prof else []
        for m in rel:
            if m.sure and m.scope == ("equipped",) and not m.conditions:
                # an Equip Card's sure text on the monster it is equipped to (docs/profiles.md)
                hit = {sp.get("equipped_to")} & battlers
                if hit:
                    out.append((m, sp, hit))
                continue
            return NotJudged(f"{sp['card']}: its text \"{m.evidence.quote}\" ({m.kind}) applies from a Spell & Trap Zone (not computed)")
    if gy_players is None:
        gy_players = {(monster(obs, u) or {}).get("controller") for u in battlers}
    for side, p in enumerate(obs["players"]):
        if side not in gy_players:
            continue
        for c in p.get("graveyard") or ():
            prof = cards.profile(c["card"]) if type(c.get("card")) is str else None
            m = next((m for m in prof.battle_mods if (m.kind in kinds or m.kind == "other") and _FROM_GY.search(m.evidence.quote or "")), None) if prof else None
            if m is not None:
                return NotJudged(f"{c['card']}: its text \"{m.evidence.quote}\" ({m.kind}) acts from the Graveyard (not computed)")
    for p in obs["players"]:
        for pc in p.get("pendulum") or ():
            prof = cards.profile(pc["card"]) if pc is not None and type(pc.get("card")) is str else None
            m = next((m for m in prof.battle_mods if m.section == "pendulum" and (m.kind in kinds or m.kind == "other")), None) if prof else None
            if m is not None:
                return NotJudged(f"{pc['card']}: its Pendulum Effect \"{m.evidence.quote}\" ({m.kind}) applies from a Pendulum Zone (not computed)")
    return out


_DAMAGE_TEXT = frozenset({"piercing", "no_damage", "double", "halve", "reflect", "gain"})
_DESTROY_TEXT = frozenset({"indestructible", "cannot_destroy", "replacement"})


def _with_text(expect: dict, mods: list, e, tp: int) -> dict | NotJudged:
    """The battle damage of damage calculation `e` with the battle modifications of card texts
    `mods` (text_mods): piercing first (the DEF difference to the defender's controller), then a
    doubling, halving or redirection (one at most: their order is not computed), then "no battle
    damage" and damage gained as LP instead (none taken)."""
    out = dict(expect)
    atk, val = e["attacker_atk"], e["target_value"]
    if any(m.kind == "piercing" for m, _s, _h in mods) and e["target_uid"] is not None and e["target_position"] != "attack":
        if arith.gt(atk, val):
            # (the text's piercing, the profile's rule of that name in model/profile.py)
            out[1 - tp] = arith.sub(atk, val)  # rule: DS-CALC-ATK-DEF
    scaled = [(m, s) for m, s, _h in mods if m.kind in ("double", "halve", "reflect")]
    if len(scaled) > 1:
        return NotJudged("several texts double, halve or redirect this battle's damage: in what order is not computed")
    for m, src in scaled:
        me = src["controller"]
        who = [me] if m.to == "you" else [1 - me] if m.to == "opponent" else [0, 1]
        if m.kind == "reflect":
            out[1 - me], out[me] = out[1 - me] + out[me], 0
            continue
        for p in who:
            if m.kind == "double":
                out[p] = out[p] * 2
            elif out[p] % 2:
                return NotJudged(f"{src['card']}: halving an odd amount ({out[p]}): the rounding is not in its text")
            else:
                out[p] = out[p] // 2
    for m, src, _h in mods:
        if m.kind == "no_damage":
            out[src["controller"] if m.to == "you" else 1 - src["controller"]] = 0
        elif m.kind == "gain":  # (the damage is gained as LP instead: no battle damage to anyone)
            me = src["controller"]
            for p in ([me] if m.to == "you" else [1 - me] if m.to == "opponent" else [0, 1]):
                out[p] = 0
    return out


def _protected(t, what, player):
    """``what`` protects ``player`` before transition ``t`` (the monitor's ``protections``)."""
    held = t.mon["protections"]
    if held is False:
        fact(None, "a resolved chain link", "what it protects against in battle")
    return any(x[0] == what and x[1] == player for x in held)


@invariant(
    "acc.battle-damage",
    "Battle damage equals the damage-calculation result: the ATK difference to the weaker side's controller, the DEF difference to "
    "the attacker's controller, the ATK for a direct attack; none where an effect prevents it. For a face-up card of a card "
    "database, what its text does to the damage (its profile's battle modifications: piercing, no, doubled, halved, gained as LP or "
    "redirected battle damage, each with its conditions) is computed where the profile is sure of the wording, else the "
    "battle is not judged. The values damage calculation uses are the battlers' ATK/DEF before it, halved where the card data "
    "of the face-up monster a battler battles halves it at damage calculation only (\"Gaia Plate the Earth Giant\"); the "
    "battle damage a face-up battler's controller would take goes to the opponent where that battler's card data says so "
    "(\"Amazoness Swords Woman\").",
    ["DS-CALC-ATK-ATK", "DS-CALC-ATK-DEF", "DS-CALC-DIRECT", "DS-LEGAL-DAMAGE-TIMING", "DS-CALC-CONT", "DS-DAMAGE-CONT"],
    "transition",
    FAMILY,
    events=["damage_calculation", "battle_damage"],
    # (protections: the monitor's, from what resolved; never the engine's lingering)
    # (the spells and the Field Zone: an effect negating a battler's, view.negated)
    reads=["turn_player", *monster_fields("uid", "atk", "def", "card", "controller", "position"), *NEGATION_READS],
)
def battle_damage(t):
    calcs = t.of("damage_calculation")
    if not calcs:
        if t.of("battle_damage"):
            return "battle damage without damage calculation"
        return None
    e = calcs[0]
    tp = t.before["turn_player"]
    atk = e["attacker_atk"]
    expect = {0: 0, 1: 0}
    if e["target_uid"] is None:
        expect[1 - tp] = atk
    elif e["target_position"] == "attack":
        val = e["target_value"]
        if arith.gt(atk, val):
            expect[1 - tp] = arith.sub(atk, val)
        elif arith.lt(atk, val):
            expect[tp] = arith.sub(val, atk)
    else:
        val = e["target_value"]
        if arith.lt(atk, val):
            expect[tp] = arith.sub(val, atk)
    # rule: DS-DAMAGE-CONT (by the card data of a face-up battler: its controller's battle damage
    # goes to the opponent; then "no battle damage" protects the player who would take it)
    for uid in (e["attacker_uid"], e["target_uid"]):
        b = monster(t.before, uid)
        if b is None or b["position"] == "facedown" or negated(t.before, uid, t.cards, t.mon):
            continue
        # (a card of a card database, whose effects are not data: its text's redirection is its
        # profile's, computed by text_mods below)
        if t.cards.gives_battle_damage_to_opponent(b["card"]):
            me = b["controller"]
            expect[1 - me], expect[me] = arith.add(expect[1 - me], expect[me]), 0
    for p in (0, 1):
        if _protected(t, "no_battle_damage", p):
            expect[p] = 0
    unsure: list = []
    mods = text_mods(t, e, _DAMAGE_TEXT, unsure)
    if isinstance(mods, NotJudged):
        return mods
    applied = ""
    if mods:
        expect = _with_text(expect, mods, e, tp)
        if isinstance(expect, NotJudged):
            return expect
        applied = " (with the text of " + ", ".join(f"{src['card']}: {m.kind}" for m, src, _h in mods) + ")"
    for player, why in unsure:  # an unsure "you take no damage": judged where that player takes none anyway
        if arith.ne(expect[player], 0):
            return why
    got = {0: 0, 1: 0}
    for d in t.of("battle_damage"):
        got[d["player"]] = arith.add(got[d["player"]], d["amount"])
    if arith.ne(got[0], expect[0]) or arith.ne(got[1], expect[1]):
        battle = f"{card_ref(t.before, e['attacker_uid'], t.after)} -> {card_ref(t.before, e['target_uid'], t.after)}"
        return f"battle damage P1 {got[0]}, P2 {got[1]}; the calculation ({battle}) gives P1 {expect[0]}, P2 {expect[1]}{applied}"
    # The values compared must be the battlers' current ATK/DEF, halved where the card data of
    # the face-up monster it battles applies that at damage calculation only (rule: DS-CALC-CONT).
    am = monster(t.before, e["attacker_uid"])
    tm = monster(t.before, e["target_uid"]) if e["target_uid"] is not None else None
    if am is not None:
        cur, by = _at_calculation(t, am["atk"], tm, am["uid"])
        if isinstance(cur, NotJudged):
            return cur
        if arith.ne(cur, atk):
            return f"damage calculation used ATK {atk} for {card_ref(t.before, am['uid'])}, whose ATK is {am['atk']}{by}"
    if tm is not None:
        cur, by = _at_calculation(t, tm["atk"] if e["target_position"] == "attack" else tm["def"], am, tm["uid"])
        if isinstance(cur, NotJudged):
            return cur
        if arith.ne(cur, e["target_value"]):
            return f"damage calculation used {e['target_value']} for {card_ref(t.before, tm['uid'])}, whose value is {cur}{by}"
    return True


def _halves(obs, other: dict | None, cards, mon) -> bool:
    """Whether `other`, a battler, halves the ATK and DEF of the monster battling it at damage
    calculation only by its card data ("Gaia Plate the Earth Giant", rule: DS-CALC-CONT): face-up,
    not destroyed by battle (the monitor's battle history, never the engine's mark), not negated."""
    if other is None or other["position"] == "facedown" or other["uid"] in mon.battle.destroyed or negated(obs, other["uid"], cards, mon):
        return False
    # (a card of a card database, whose effects are not data: unknown here, as before this rule)
    return bool(cards.halves_battler_at_calculation(other["card"]))


def _opponent_battler(obs, uid: int) -> dict | None:
    a = obs.get("attack") or {}
    if a.get("target") is None:
        return None
    other = a["target"] if uid == a.get("attacker") else a.get("attacker") if uid == a["target"] else None
    return monster(obs, other) if other is not None else None


@history(
    "calc_halved_shown",
    "The battlers whose ATK/DEF the engine's observation shows halved from the moment it enters damage calculation, by the "
    "card data of the monster they battle (\"Gaia Plate the Earth Giant\": DS-CALC-CONT applies during damage calculation, "
    "which an engine may show in that sub-step's observation or apply in the calculation only): from the step move into "
    "damage calculation, forgotten when it is left.",
)
def _calc_halved_shown(prev, t):
    moves = t.of("phase_changed")
    if not moves:
        return prev
    if prev and any(e.get("from") == "damage_step_during_calculation" for e in moves):
        prev = ()
    if t.after.get("step") != "damage_step_during_calculation" or not any(e.get("to") == "damage_step_during_calculation" for e in moves):
        return prev
    if t.cards is None:
        return prev
    shown = []
    a = t.before.get("attack") or {}
    for uid in (a.get("attacker"), a.get("target")):
        m0, m1 = (monster(t.before, uid), monster(t.after, uid)) if uid is not None else (None, None)
        try:
            halves = m0 is not None and m1 is not None and _halves(t.before, _opponent_battler(t.before, uid), t.cards, t.mon)
        except Unknown:  # (a history never raises: whether the halving applies is the invariants' to say, "not judged")
            continue
        if not halves:
            continue
        if any(isinstance(m0[k], int) and m0[k] != m1[k] and m1[k] == arith.halve(m0[k]) for k in ("atk", "def")):
            shown.append(uid)
    return tuple(shown) if shown else prev


def _at_calculation(t, value, other: dict | None, uid: int | None = None):
    """(`value`, the ATK or DEF of a battler before damage calculation, as damage calculation
    uses it, and words saying why it differs): halved when the face-up monster it battles,
    `other`, halves the ATK and DEF of the monster battling it at damage calculation only by its
    card data ("Gaia Plate the Earth Giant", rule: DS-CALC-CONT); as shown where the engine's
    observation already showed it halved on entering damage calculation (history
    ``calc_halved_shown``)."""
    if not _halves(t.before, other, t.cards, t.mon):
        return value, ""
    if uid is not None and uid in t.mon["calc_halved_shown"]:
        return value, ""
    if isinstance(value, int) and value % 2:
        return NotJudged(f"{other['card']}: halving an odd value ({value}) at damage calculation: the rounding is not in its text"), ""
    return arith.halve(value), f", halved at damage calculation by {card_ref(t.before, other['uid'])}'s card data"


_STEP_MOVE = frozenset({"passed", "phase_changed"})
_AFTER_BATTLE_PHASE = frozenset({"main2", "end_phase"})


def _damage_step_only(obs, uid: int, cards, mon) -> int:
    """The ATK monster `uid`'s own continuous effect adds in `obs` "during the Damage Step only"
    by its card data ("Steamroid": attacking, or attacked by, an opponent's monster; rule:
    DS-START-CONT); 0 outside the Damage Step, for a face-down monster, and for one destroyed by
    battle (its continuous effects no longer apply: DS-DESTROYED-MARK)."""
    a = obs.get("attack")
    if a is None or a.get("target") is None or not str(obs.get("step", "")).startswith("damage_step"):
        return 0
    role = "attacks" if uid == a.get("attacker") else "attacked" if uid == a.get("target") else None
    m = monster(obs, uid)
    # (destroyed by battle: the monitor's battle history, never the engine's mark)
    if role is None or m is None or m["position"] == "facedown" or uid in mon.battle.destroyed or negated(obs, uid, cards, mon):
        return 0
    return fact(cards.damage_step_atk(m["card"], role), m["card"], "what its own effect adds to its ATK during the Damage Step")


@invariant(
    "acc.damage-step-continuous",
    "A monster's continuous effect that applies during the Damage Step only (\"Steamroid\": +500 ATK attacking, -500 attacked) "
    "applies from the moment the Damage Step begins to its end: on a transition that only moves from one step to another "
    "(no event but passed and phase_changed), each monster's ATK changes by exactly what such effects of its own card data add or "
    "remove between the two states (by nothing for every other monster: no other continuous effect starts or stops on a step "
    "change), never by the engine's modifiers; not judged for a monster whose ATK other effects change too (Mirror Wall "
    "halving it: how they compose is not computed), nor on leaving the Battle Phase (lingering effects \"until the end of the "
    "Battle Phase\" end there, an effect_expired event or not).",
    ["DS-START-CONT", "DS-LINGERING-END"],
    "transition",
    FAMILY,
    events=["phase_changed"],
    reads=["step", "attack", *monster_fields("uid", "card", "atk", "position"), *NEGATION_READS],
)
def damage_step_continuous(t):
    if not t.kind_set() <= _STEP_MOVE or t.before["step"] == t.after["step"]:
        return None  # (other events may change ATK: only a plain move between steps is judged)
    if t.after["step"] in _AFTER_BATTLE_PHASE:
        # (leaving the Battle Phase ends the lingering effects "until the end of the Battle Phase",
        # Half or Nothing's halving: an engine may say so with effect_expired, or not)
        return None
    for obs in (t.before, t.after):
        faceup = [*(m for m in monsters(obs) if m["position"] != "facedown"), *(c for c in spells(obs) if c["face_up"])]
        for c in faceup:
            if t.cards.statics(c["card"]) is None:
                return NotJudged(f"{c['card']}: its continuous effects cannot be read from its card data")
    judged = False  # (a monster none of whose effects applies in either state: its ATK stays)
    composed = None  # (a monster whose Damage-Step-only change is composed with other changes)
    for m in monsters(t.before):
        m2 = monster(t.after, m["uid"])
        if m2 is None or m2["position"] != m["position"]:
            continue
        d0 = _damage_step_only(t.before, m["uid"], t.cards, t.mon)
        d1 = _damage_step_only(t.after, m["uid"], t.cards, t.mon_after)
        if d0 < 0 and isinstance(m["atk"], int) and m["atk"] == 0:
            continue  # (an ATK held at 0 by a loss: what it would be without it is not observed)
        if d0 != d1 and arith.ne(arith.sub(m["atk"], d0), t.cards.stat(m["card"], "atk")):
            # another effect changes its ATK too (Mirror Wall halving it): how the two compose is
            # not computed here, only a Damage-Step-only change on the card data's own ATK
            composed = m
            continue
        judged = True
        want = arith.clamp0(arith.add(arith.sub(m["atk"], d0), d1))
        # DS-CALC-CONT: the halving by the monster it battles ("Gaia Plate the Earth Giant") may
        # show in the observation from entering damage calculation to leaving it (history
        # calc_halved_shown), or apply in the calculation only
        if isinstance(want, int) and isinstance(m2["atk"], int):  # (a symbolic ATK: judged as shown only)
            if t.after["step"] == "damage_step_during_calculation" and m2["atk"] == arith.halve(want) \
                    and _halves(t.before, _opponent_battler(t.before, m["uid"]), t.cards, t.mon):
                continue
            if t.before["step"] == "damage_step_during_calculation" and m["uid"] in t.mon["calc_halved_shown"] \
                    and arith.halve(m2["atk"]) == want:
                continue
        if arith.ne(m2["atk"], want):
            if t.mon["db_resolved"]:
                # (a lingering change a card of a card database made may end on this step change:
                # Half or Nothing's "until the end of the Battle Phase"; its effects are not data)
                return NotJudged(f"an effect of {t.mon['db_resolved'][0]} (a card of a card database) resolved this turn and may "
                                 f"end on this step change: {m['card']}'s ATK {m['atk']} -> {m2['atk']} is not judged")
            return (
                f"{card_ref(t.before, m['uid'], t.after)}'s ATK went from {m['atk']} ({t.before['step']}) to {m2['atk']} "
                f"({t.after['step']}); by the Damage-Step-only effects of its card data it is {want}"
            )
    if composed is not None:  # (the others held: said as not judged, a monster was left out)
        return NotJudged(
            f"{composed['card']}: its ATK ({composed['atk']}) is changed by other effects besides its Damage-Step-only effect: how they compose is not computed"
        )
    return True if judged else None


@invariant(
    "acc.destroyed-by-battle",
    "Damage calculation destroys exactly the monsters it should: the lower ATK, both at equal non-zero ATK, neither at 0 ATK; a "
    "Defense Position monster when the ATK exceeds its DEF; none protected by an effect, nor by the text of a face-up card "
    "of a card database that its profile reads as \"cannot be destroyed by battle\" (with its conditions; an Equip Card's "
    "for the monster it is equipped to), nor a monster battling one whose text reads \"cannot destroy monsters by battle\"; "
    "not judged where such a text's wording is one the profile does not compute, or a card in the Graveyard of a battler's "
    "controller has such a text that acts from there; a monster with an optional protection (Gyroid, by its card data) "
    "is protected exactly when its controller chose to apply it in that transition (a choice_made event naming it). When "
    "that damage calculation ends the duel, no monster the calculation does not destroy is destroyed (the duel ends at once).",
    ["DS-CALC-ATK-ATK", "DS-CALC-ATK-DEF", "DS-DESTROYED-MARK", "DS-CALC-PROTECT-CHOICE", "LP-ZERO"],
    "transition",
    FAMILY,
    events=["damage_calculation"],
    reads=["turn_player", "over", *monster_fields("uid", "controller")],
)
def destroyed_by_battle(t):
    calcs = t.of("damage_calculation")
    if not calcs:
        return None
    e = calcs[0]
    tp = t.before["turn_player"]
    atk, val = e["attacker_atk"], e["target_value"]
    a, d = e["attacker_uid"], e["target_uid"]
    expect: set[int] = set()
    if d is not None:
        if e["target_position"] == "attack":
            if arith.gt(atk, val):
                expect.add(d)
            elif arith.lt(atk, val):
                expect.add(a)
            elif arith.gt(atk, 0):
                expect |= {a, d}
        elif arith.gt(atk, val):
            expect.add(d)
    # rule: DS-CALC-PROTECT-CHOICE (an optional protection, by the card data, applied only when its
    # controller chose so in this transition: the choice_made event naming the monster)
    applied = {c.get("card_uid") for c in t.of("choice_made") if c.get("choice") == "battle_protection" and c.get("option") == "1"}
    for uid in list(expect):
        m = monster(t.before, uid)
        side = m["controller"] if m else (tp if uid == a else 1 - tp)
        if _protected(t, "battle_indestructible", side):
            expect.discard(uid)
        elif uid in applied:
            if t.cards is None:
                return NotJudged("a protection from destruction by battle was chosen and no card data says which monsters have one")
            if m is None or m["position"] == "facedown" or not fact(t.cards.optional_battle_protection(m["card"]), m["card"], "whether it has an optional protection from destruction by battle"):
                return f"{card_ref(t.before, uid, t.after)}'s controller chose to apply a protection from destruction by battle it does not have"
            expect.discard(uid)
    # (a replacement from a Graveyard matters only for a player whose monster the calculation destroys)
    doomed = {(monster(t.before, u) or {}).get("controller", tp if u == a else 1 - tp) for u in expect}
    mods = text_mods(t, e, _DESTROY_TEXT, gy_players=doomed)
    if isinstance(mods, NotJudged):
        return mods
    for m, src, hit in mods:
        if m.kind == "indestructible":  # rule: DS-DESTROYED-MARK (002:122: a continuous effect that prevents it applies at damage calculation)
            expect -= hit
        elif m.kind == "cannot_destroy":  # rule: DS-DESTROYED-MARK (002:122: "cannot destroy monsters by battle": the monster it battles is not)
            expect -= {u for u in (a, d) if u is not None and u not in hit and src["uid"] in hit}
    got = {x["card_uid"] for x in t.of("destroyed_by_battle")}
    if t.after.get("over") and not t.before.get("over"):
        # rule: LP-ZERO (the battle damage ended the duel at once: nothing more happens in it, so a monster
        # the calculation destroys may not be; one it does not destroy still may not be)
        if not got <= expect:
            return f"destroyed by battle {card_refs(t.before, sorted(got), t.after)} as the duel ended, the calculation gives {card_refs(t.before, sorted(expect), t.after)}"
        return True
    if got != expect:
        return f"destroyed by battle {card_refs(t.before, sorted(got), t.after)}, the calculation gives {card_refs(t.before, sorted(expect), t.after)}"
    return True


@invariant(
    "acc.lp-ledger",
    "LP change only through battle damage, effect damage, LP costs, LP gains and LP lost by an effect (\"halve your opponent's "
    "LP\"), each with its event.",
    ["LP-ZERO", "CH-COST", "ATK-COST"],
    "transition",
    FAMILY,
    reads=["players[].lp"],
)
def lp_ledger(t):
    changed = False
    lp_events = [e for e in t.events if e.kind in _LP_KINDS]  # (the others are not read)
    for p in (0, 1):
        before, after = t.before["players"][p]["lp"], t.after["players"][p]["lp"]
        delta = 0
        for e in lp_events:
            if e.kind in ("battle_damage", "effect_damage", "lp_paid", "lp_lost") and e["player"] == p:
                delta = arith.sub(delta, e["amount"])
            elif e.kind == "lp_gained" and e["player"] == p:
                delta = arith.add(delta, e["amount"])
        if type(before) is int and type(after) is int and type(delta) is int:
            # plain ints: the operations arith takes for them, written out
            if delta != 0 or before != after:
                changed = True
            b = before + delta
            if after != (b if b > 0 else 0) and not (b <= 0 and after == 0):
                return f"P{p + 1}'s LP went {before} -> {after}, the events account for {delta:+d}"
            continue
        if arith.ne(delta, 0) or arith.ne(before, after):
            changed = True
        # LP never go below 0.
        if arith.ne(after, arith.clamp0(arith.add(before, delta))) and not (
            arith.le(arith.add(before, delta), 0) and arith.eq(after, 0)
        ):
            return f"P{p + 1}'s LP went {before} -> {after}, the events account for {delta:+d}"
    return True if changed else None


@invariant(
    "acc.one-place",
    "Every card is in exactly one place.",
    ["CARD-OWNER", "DS-SEND-OWNER-GY"],
    "state",
    FAMILY,
    reads=[*monster_fields("uid"), *spell_fields("uid"), *pile_fields("uid"), *extra_place_fields("uid")],
)
def one_place(obs, ctx):
    if uid_count_ok(obs):  # (the places are named only for a message)
        return True
    for uid, places in uid_places(obs).items():
        if len(places) != 1:
            return f"{card_ref(obs, uid)} (uid {uid}) is in {len(places)} places: {', '.join(places)}"
    return True


@invariant(
    "acc.tokens-on-field",
    "Tokens exist only on the field, always face-up.",
    ["CARD-TOKEN"],
    "state",
    FAMILY,
    reads=[*monster_fields("card", "token", "position"), *pile_fields("card")],
)
def tokens_on_field(obs, ctx):
    seen = False
    for p in obs["players"]:
        for m in p["monsters"]:
            if m and (m["token"] or fact(ctx.cards.is_token(m["card"]), m["card"], "whether it is a token")):
                seen = True
                if m["position"] == "facedown":
                    return f"{card_ref(obs, m['uid'])} is face-down"
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in p[pile]:
                if fact(ctx.cards.is_token(c["card"]), c["card"], "whether it is a token"):
                    return f"{card_ref(obs, c['uid'])} is in a {pile}"
    return True if seen else None


@invariant(
    "acc.owner-piles",
    "Cards off the field are in their owner's hand, Graveyard, banished pile or Deck.",
    ["CARD-OWNER", "DS-SEND-OWNER-GY"],
    "state",
    FAMILY,
    reads=[f"players[].{p}[].owner" for p in ("hand", "graveyard", "banished")],
)
def owner_piles(obs, ctx):
    seen = False
    for side, p in enumerate(obs["players"]):
        for pile in ("hand", "graveyard", "banished"):
            for c in p[pile]:
                seen = True
                if c["owner"] != side:
                    return f"{card_ref(obs, c['uid'])} (owner P{c['owner'] + 1}) is in P{side + 1}'s {pile}"
    return True if seen else None


@history(
    "deck_drawn_empty",
    "The players whose Deck the last transition emptied by drawing (card_moved events from their Deck to their hand, "
    "and no card left in it after): a player an effect made draw more than their Deck held (DECK-OUT). Only the last "
    "transition's: a Deck emptied earlier, or emptied otherwise, is not one.",
)
def _deck_drawn_empty(prev, t):
    drew = {e.get("owner") for e in t.of("card_moved") if e.get("from") == "deck" and e.get("to") == "hand"}
    return tuple(sorted(p for p in drew if p in (0, 1) and not t.after["players"][p].get("deck")))


@history(
    "over_seen",
    "Whether the monitor has seen a transition end the duel. A board whose first state is already over was ended by "
    "the engine's start-up (the phases it played before the board's phase), which the monitor did not see.",
    initial=False,
)
def _over_seen(prev, t):
    return True if not prev and t.after.get("over") else prev


@invariant(
    "acc.duel-over",
    "The duel is over exactly when a player has 0 LP, or when a player drew their Deck empty in the transition that "
    "ended it (the monitor's own record of the draws: a player who must draw from an empty Deck loses; the monitor cannot "
    "see how many cards were still to draw, so a Deck drawn empty counts); the winner is the other player, or nobody when "
    "both reach 0 (both Decks drawn empty at once: not judged; a duel already over in the board's first state, ended by "
    "the engine's start-up the monitor did not see: not judged).",
    ["LP-ZERO", "DECK-OUT"],
    "state",
    FAMILY,
    reads=["over", "winner", "players[].lp"],
)
def duel_over(obs, ctx):
    zero = [i for i, p in enumerate(obs["players"]) if arith.le(p["lp"], 0)]
    if not zero and not obs["over"]:
        return None
    if zero and not obs["over"]:
        return f"P{zero[0] + 1} has 0 LP but the duel goes on"
    if obs["over"] and not zero:
        # rule: DECK-OUT (004:10: a player required to draw from an empty Deck loses; from the monitor's draws)
        if ctx.mon is not None and not ctx.mon["over_seen"]:
            return NotJudged("the duel was already over in the board's first state: the engine ended it while playing "
                             "its start-up (the phases before the board's phase), which the monitor did not see")
        empty = ctx.mon["deck_drawn_empty"] if ctx.mon is not None else ()
        if not empty:
            return "the duel is over but no player has 0 LP"
        if len(empty) == 2:
            return NotJudged("both players drew their Decks empty in the transition that ended the duel: who wins is not in the seeds")
        if obs["winner"] != 1 - empty[0]:
            return f"winner {obs['winner']}, expected {1 - empty[0]} (P{empty[0] + 1} drew their Deck empty)"
        return True
    expect = None if len(zero) == 2 else 1 - zero[0]
    if obs["winner"] != expect:
        return f"winner {obs['winner']}, expected {expect}"
    return True


@invariant(
    "acc.zones",
    "Each player has 5 Monster Zones and 5 Spell & Trap Zones; monsters are in a known position.",
    ["ATK-POSITION"],
    "state",
    FAMILY,
    reads=["players[].spells", *monster_fields("position")],
)
def zones(obs, ctx):
    for p in obs["players"]:
        if len(p["monsters"]) != 5 or len(p["spells"]) != 5:
            return "a player does not have 5 + 5 zones"
        for m in p["monsters"]:
            if m and m["position"] not in ("attack", "defense", "facedown"):
                return f"{card_ref(obs, m['uid'])} is in unknown position {m['position']!r}"
    return True


# -- cards that keep a monster as their target (CARD-CONT-TARGET) -----------------------------

_KEEPS = (("equipped_to", "equipped to"), ("attached_to", "attached to"))


def _kept(obs, mon, cards) -> list[tuple[dict, int, str]]:
    """(card, the monster it keeps, how) for each resolved card on the field that keeps one (a
    card whose activation is on the chain, by the monitor's chain, keeps none yet)."""
    out = []
    for c in spells(obs):
        if activating(c, mon, cards):
            continue
        for key, how in _KEEPS:
            x = c[key]
            if x is not None:
                out.append((c, x, how))
    return out


@invariant(
    "acc.continuous-target",
    "A card that keeps a monster as its target (an Equip Card, a Trap attached to its target) never names a monster that is not "
    "on the field, leaves the field in the transition that monster leaves it, and, for a monster destroyed by battle, not "
    "before that monster is sent to the Graveyard.",
    ["CARD-CONT-TARGET", "DS-SEND-OWNER-GY"],
    "transition",
    FAMILY,
    # what a card keeps changes when a card resolves or something leaves the field
    events=["card_moved", "chain_link_resolved"],
    reads=["over", *spell_fields("uid", "card", "equipped_to", "attached_to"), *monster_fields("uid")],
    fields=_ON_CHAIN,
)
def continuous_target(t):
    if not (t.of("card_moved") or t.of("chain_link_resolved")):
        return None  # nothing left the field and nothing resolved: what cards keep cannot change
    before, after = _kept(t.before, t.mon, t.cards), _kept(t.after, t.mon_after, t.cards)
    if not (before or after) or t.after["over"]:
        return None
    if t.cards is not None:
        # a card bound to the monster it Summoned (an engine may show the bond as its card target)
        # follows its own text instead: acc.linked-monster
        before = [k for k in before if t.cards.links_summoned(k[0]["card"]) is not True]
        after = [k for k in after if t.cards.links_summoned(k[0]["card"]) is not True]
    for c, x, how in after:
        # (a card may keep a card in a Spell & Trap Zone, itself too: Seal of Wickedness's "select
        # 1 face-up card on the field")
        if monster(t.after, x) is None and find_spell(t.after, x) is None:
            return f"{card_ref(t.after, c['uid'])} is {how} {card_ref(t.after, x, t.before)} (uid {x}), which is not on the field"
    marked = set(t.mon.battle.destroyed) | {e["card_uid"] for e in t.of("destroyed_by_battle")}
    by_rule = {e["card_uid"] for e in t.of("destroyed") if e.get("by") == "rule"}
    for c, x, how in before:
        m = monster(t.before, x)
        if m is None:
            continue  # already wrong before (reported on the transition that made it)
        stays = find_spell(t.after, c["uid"]) is not None
        if monster(t.after, x) is None:
            if stays:
                return f"{card_ref(t.before, x, t.after)} left the field, but {card_ref(t.after, c['uid'])} ({how} it) stays on the field"
        elif not stays and x in marked and c["uid"] in by_rule:
            return f"{card_ref(t.before, c['uid'], t.after)} was destroyed while {card_ref(t.after, x)}, marked destroyed by battle, is still on the field"
    return True


@invariant(
    "acc.linked-monster",
    "A card bound to the monster it Special Summoned (Call of the Haunted, by its card data; the bond is the monitor's, from "
    "the resolution that Summoned the monster) and that monster: when the card leaves the field, the monster is destroyed in "
    "the same transition; when the monster is destroyed, so is the card. Where the engine reports linked_monster, it names "
    "that monster, and no other card has one.",
    ["CARD-CONT-TARGET"],
    "transition",
    FAMILY,
    # a bond is made when a link resolves, and broken when a card leaves the field
    events=["card_moved", "chain_link_resolved"],
    reads=["over", *spell_fields("uid", "card"), *monster_fields("uid")],
    fields={
        **_ON_CHAIN,
        **{
            f"players[].{z}.linked_monster": by_history("the links history (the bond made when the Summoning link resolved)")
            for z in ("spells[]", "field_zone")
        },
        "choice": by_history("the chain history (while a chain resolves the bond may not be made yet)"),
    },
)
def linked_monster(t):
    if not (t.of("card_moved") or t.of("chain_link_resolved")):
        return None  # nothing resolved and nothing left the field
    if t.after["over"]:
        return None
    links, now = t.mon["links"][0], t.mon_after["links"][0]
    claims = [c for c in spells(t.after) if c.get("linked_monster") is not None]  # (absent: not observed)
    if not (links or now or claims):
        return None
    destroyed = {e["card_uid"] for e in t.of("destroyed")} | {e["card_uid"] for e in t.of("card_moved") if e.get("reason") == "battle"}
    for cu, mu in links:
        c, m = find_spell(t.before, cu), monster(t.before, mu)
        if c is None or m is None:
            continue  # already apart before (reported on the transition that parted them)
        card_stays = find_spell(t.after, cu) is not None
        if not card_stays and monster(t.after, mu) is not None:
            return f"{card_ref(t.before, cu, t.after)} left the field, but {card_ref(t.after, mu)}, which it Special Summoned, stays on the field"
        if card_stays and mu in destroyed:
            return f"{card_ref(t.before, mu, t.after)} was destroyed, but {card_ref(t.after, cu)}, which Special Summoned it, stays on the field"
    if not t.mon_after.chain.resolving:  # (in mid-resolution the bond may not be made yet)
        bound = dict(now)
        for c in spells(t.after):
            if "linked_monster" not in c or activating(c, t.mon_after, t.cards):
                continue
            says, expect = c["linked_monster"], bound.get(c["uid"])
            if says != expect:
                what = f"{card_ref(t.after, expect)}, which it Special Summoned" if expect is not None else "no monster"
                said = "null" if says is None else card_ref(t.after, says, t.before)
                return f"the engine reports {card_ref(t.after, c['uid'])}'s linked_monster = {said}, but it is bound to {what}"
    return True
