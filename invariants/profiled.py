"""Cards of a card database judged through their profiles (issue 30, item 3).

A board may name any card of a card database (``--cards-db``); bpcheck does not model its
effects, but :mod:`bpcheck.model.profile` reads from its data row and its text what the
invariants need: per effect its kind, Spell Speed, the events a trigger needs, the windows its
text names and, per Damage-Step sub-step, whether the seeds' Damage Step rules allow activating it
(each decision with its rule and evidence; ``unknown`` where the reader cannot decide). These
invariants judge what an engine *offers* for such a card against that profile. They judge only
cards of a card database (:meth:`~bpcheck.invariants.cards.CardFacts.profile`): the pool's cards
and a board's ``[[card]]`` tables are judged by the other invariants from their modelled effects.

**Which effect an offer is.** An offered action names its card (``card_uid``) and, where the
engine says so, an effect index (``effect``). The EDOPro core's adapter names no effect (the
core's chain list gives a description string, ``aux.Stringid(code, n)``, whose ``n`` is a string
of the card, not the n-th effect of its text), and an engine's effect index need not count
effects as the profile cuts the text. So no check maps an index onto the profile's effects: a
card's offer is judged wrong only when *every* activated effect of its profile forbids it (each
decided), and "not judged" when none allows it and some is unknown. That misses a card with one
allowed and one forbidden effect offered for the forbidden one; it never blames an engine for an
effect the profile cannot place.

**Rulesets.** The profile decides the Damage Step per ruleset (``tcg``/``ocg``; 002 states both).
An offer is wrong only where both rulesets forbid it: an engine may follow either.
"""

from __future__ import annotations

import re

from xxhash import xxh3_64_intdigest

from bpcheck.invariants.base import NotJudged, by_actions, by_visible, invariant
from bpcheck.invariants.cards import DAMAGE_STEPS
from bpcheck.invariants.monitor import history
from bpcheck.invariants.offered import _response_window
from bpcheck.invariants.view import CARD_PLACES, card_name, card_ref
from bpcheck.model.canonical import canonical_json
from bpcheck.model.profile import RULES

FAMILY_DS = "damage step"
FAMILY_WIN = "chains and windows"

# An observation's Damage-Step sub-step -> the profile's (docs/profiles.md). The flip sub-step
# (bpcheck's, when a face-down monster is attacked) is not one of the profile's: not judged there.
SUB_STEP = {
    "damage_step_start": "start",
    "damage_step_before_calculation": "before_calc",
    "damage_step_during_calculation": "during_calc",
    "damage_step_after_calculation_1": "after_calc",
    "damage_step_after_calculation_2": "after_calc",
    "damage_step_end": "end",
}
_RULESETS = ("tcg", "ocg")
_ACTIVATIONS = frozenset({"activate", "trigger"})
_BATTLE = frozenset({"battle_start_step", "battle_step", "battle_end_step", *DAMAGE_STEPS})
# what these actions checks read besides the actions (the card an offer names, the step, the turn)
_READS = sorted({"over", "step", "turn_player", "to_act", *CARD_PLACES})


def _offers(obs: dict, actions: list, cards):
    """(action, card uid, card name, profile) of each activation offered for a card of a card
    database, in the order offered, each card once."""
    seen: set = set()
    for a in actions:
        if a.get("kind") not in _ACTIVATIONS:
            continue
        uid = a.get("card_uid")
        if uid in seen or not isinstance(uid, int):
            continue
        seen.add(uid)
        name = card_name(obs, uid)
        prof = cards.profile(name)
        if prof is not None:
            yield a, uid, name, prof


def _activated(prof) -> list:
    """The effects of a profile that are activated (kind decided and not continuous/materials, or
    unknown: it may be)."""
    return [e for e in prof.effects if not e.kind.decided or e.activated]


def _cite(rule: str) -> str:
    r = RULES.get(rule)
    return f"{rule}: {r.cite}" if r is not None else rule


def _effect_name(e) -> str:
    return f"effect {e.index + 1}" + (f" \"{e.text[:60]}{'…' if len(e.text) > 60 else ''}\"" if e.text else " (the card's activation)")


# -- 1. Damage-Step sub-steps ---------------------------------------------------------------------


@invariant(
    "profile.damage-step-offered",
    "A card of a card database is offered for activation in a Damage-Step sub-step only if its profile lets at least one of "
    "its activated effects be activated there by the seeds' Damage Step rules (a Counter Trap; a card or effect that directly "
    "changes ATK/DEF, up to damage calculation; an effect naming that timing; a mandatory, Flip or most optional trigger; a "
    "Quick Effect that negates an activation), in the TCG or the OCG; not judged where the profile leaves it unknown.",
    ["DS-LEGAL-COUNTER", "DS-LEGAL-STATS", "DS-LEGAL-DAMAGE-TIMING", "DS-LEGAL-MANDATORY", "DS-LEGAL-OPTIONAL-TRIGGER",
     "DS-ILLEGAL-OTHER"],
    "actions",
    FAMILY_DS,
    reads=_READS,
)  # fmt: skip
def damage_step_offered(obs, actions, ctx):
    cards = ctx.cards
    if not getattr(cards, "rows", None) or obs["over"]:
        return None
    sub = SUB_STEP.get(obs["step"])
    if sub is None:
        return None
    judged = False
    undecided: str | None = None
    for a, uid, name, prof in _offers(obs, actions, cards):
        effects = _activated(prof)
        if not effects:
            undecided = undecided or f"{name}: its profile reads no activated effect, yet it is offered"
            continue
        verdicts = []  # per effect: True (allowed in a ruleset), False (forbidden in both), None (unknown)
        for e in effects:
            ds = e.damage_step
            if ds is None:
                verdicts.append(None)
                continue
            vals = [ds[r][sub].value for r in _RULESETS]
            verdicts.append(True if True in vals else False if all(v is False for v in vals) else None)
        if True in verdicts:
            judged = True
            continue
        if None in verdicts:
            undecided = undecided or f"{name}: whether an effect of it may be activated in {obs['step']} (its profile says unknown)"
            continue
        why = "; ".join(f"{_effect_name(e)}: {_cite(e.damage_step['tcg'][sub].rule)}" for e in effects)
        return (
            f"{card_ref(obs, uid)} is offered for activation ({a.get('label')}) in {obs['step']}, where its profile allows none "
            f"of its effects by the Damage Step rules ({why})"
        )
    if undecided is not None:
        return NotJudged(undecided)
    return True if judged else None


# -- 2. The windows its text allows ---------------------------------------------------------------

_TURN_WINDOWS = {"your_turn", "opponent_turn", "either_turn"}
_NOT_WINDOWS = {"not_damage_step", "not_end_phase", "not_turn_sent_to_gy"}
_BP_WINDOWS = {"battle_phase", "start_of_battle_phase", "end_of_battle_phase"}


def _time_ok(w: str, obs: dict, p: int) -> bool | None:
    """Whether window `w` of the time of the turn (a phase, a step, a timing, an attack) holds now
    for an activation by player `p`; None for a window this check does not read."""
    step, attack = obs["step"], obs.get("attack")
    if w == "main_phase":
        return step in ("main1", "main2")
    if w == "battle_phase":
        return step in _BATTLE
    if w == "end_phase":
        return step == "end_phase"
    if w == "standby_phase":
        return False  # (the explored turn begins in Main Phase 1)
    if w == "start_of_battle_phase":
        return step == "battle_start_step"
    if w == "end_of_battle_phase":
        return step == "battle_end_step"
    if w == "damage_step":
        return step in DAMAGE_STEPS
    if w == "start_of_damage_step":
        return step == "damage_step_start"
    if w == "before_damage_calculation":
        return step in ("damage_step_before_calculation", "damage_step_flip")
    if w == "damage_calculation":
        return step == "damage_step_during_calculation"
    if w == "after_damage_calculation":
        return step in ("damage_step_after_calculation_1", "damage_step_after_calculation_2")
    if w == "end_of_damage_step":
        return step == "damage_step_end"
    if w in ("attack_declared", "attacked"):
        return attack is not None
    if w == "attack_declared_by_opponent":
        return attack is not None and obs["turn_player"] != p
    return None


def window_verdict(e, obs: dict, p: int, chain_open: bool) -> tuple[bool | None, str]:
    """Whether effect `e` (not a trigger) may be offered to player `p` now by its Spell Speed and
    the windows its text names: (True, ""), (False, why) or (None, what is unknown). Windows of one
    kind (the turn; the time of the turn) are alternatives ("during the Main Phase or Battle
    Phase"), windows of different kinds all hold ("during your opponent's Battle Phase")."""
    if not e.speed.decided or not e.windows.decided:
        return None, "its Spell Speed or windows"
    tp, step = obs["turn_player"], obs["step"]
    # An Ignition effect whose text names the Battle Phase ("Once per turn, during your Battle Phase
    # (except during the Damage Step): You can ...", Performapal Turn Toad) is one of the effects
    # 000:160's "Most Effect Monsters" leaves out: its text's window, still the turn player's with
    # an empty chain. rule: CH-SPEED1, WIN-TEXT
    bp_text = e.speed.rule == "SS1-IGNITION" and step in _BATTLE and bool(_BP_WINDOWS & set(e.windows.value))
    if e.speed.value == 1 and not (p == tp and (step in ("main1", "main2") or bp_text) and not chain_open):  # rule: CH-SPEED1
        return False, f"Spell Speed 1 ({_cite(e.speed.rule)}): only its controller's Main Phase with an empty chain"
    ws = list(e.windows.value)
    turn = [w for w in ws if w in _TURN_WINDOWS]
    if turn and not any(w == "either_turn" or (w == "your_turn") == (p == tp) for w in turn):
        return False, f"its text allows {' or '.join(turn)}"
    if "not_damage_step" in ws and step in DAMAGE_STEPS:
        return False, "its text says not during the Damage Step"
    if "not_end_phase" in ws and step == "end_phase":
        return False, "its text says not in the End Phase"
    times = [w for w in ws if w not in _TURN_WINDOWS and w not in _NOT_WINDOWS]
    if times:
        oks = [_time_ok(w, obs, p) for w in times]
        if True in oks:
            return True, ""
        if None in oks:
            return None, f"the window {times[oks.index(None)]!r}"
        return False, f"its text allows {' or '.join(times)} ({_cite(e.windows.rule)})"
    return True, ""


@invariant(
    "profile.window-offered",
    "A card of a card database is offered for activation (not as a trigger) only where its profile lets one of its effects be "
    "activated: a Spell Speed 1 card or effect only by the turn player in their Main Phase with an empty chain (an Ignition "
    "effect whose text names the Battle Phase also there), and each "
    "effect only in the windows its text names (\"during your opponent's turn\", \"during the Battle Phase\", \"when an "
    "opponent's monster declares an attack\", \"except during the Damage Step\", ...); a card with a trigger or Flip effect "
    "is left to profile.trigger-event; not judged where the profile leaves a kind, speed or window unknown.",
    ["CH-SPEED", "CH-SPEED1", "WIN-ATTACK-DECL", "WIN-BEFORE-DS", "DS-ILLEGAL-OTHER"],
    "actions",
    FAMILY_WIN,
    reads=sorted({*_READS, "attack"}),
)  # fmt: skip
def window_offered(obs, actions, ctx):
    cards, mon = ctx.cards, ctx.mon
    if not getattr(cards, "rows", None) or obs["over"]:
        return None
    chain_open = bool(mon.chain.links)  # (the chain history, never the engine's)
    judged = False
    undecided: str | None = None
    for a, uid, name, prof in _offers(obs, actions, cards):
        if a.get("kind") != "activate":
            continue
        effects = _activated(prof)
        if not effects:
            undecided = undecided or f"{name}: its profile reads no activated effect, yet it is offered"
            continue
        if any(e.kind.value in ("trigger", "flip") for e in effects):
            continue  # (profile.trigger-event)
        p = a.get("player")
        if p not in (0, 1):
            p = obs["to_act"]
        verdicts = []
        for e in effects:
            if not e.kind.decided:
                verdicts.append((None, "its kind"))
            else:
                verdicts.append(window_verdict(e, obs, p, chain_open))
        if any(v is True for v, _ in verdicts):
            judged = True
            continue
        unknown = [w for v, w in verdicts if v is None]
        if unknown:
            undecided = undecided or f"{name}: {unknown[0]} (its profile says unknown)"
            continue
        why = "; ".join(f"{_effect_name(e)}: {w}" for e, (_v, w) in zip(effects, verdicts))
        return (
            f"{card_ref(obs, uid)} is offered for activation ({a.get('label')}) to P{p + 1} in {obs['step']} of "
            f"P{obs['turn_player'] + 1}'s turn, outside every window its profile allows ({why})"
        )
    if undecided is not None:
        return NotJudged(undecided)
    return True if judged else None


# -- 3. Triggers and the events they need ---------------------------------------------------------


def _seen(t) -> set[str]:
    """The profile's event names (docs/profiles.md, vocabulary) that transition `t`'s events are."""
    out: set[str] = set()
    for e in t.events:
        k = e.kind
        if k == "destroyed_by_battle":
            out |= {"destroyed_by_battle", "destroys_by_battle", "destroyed"}
        elif k == "destroyed":
            out.add("destroyed")
        elif k == "card_moved":
            to, frm = e["to"], e["from"]
            if to == "graveyard":
                out.add("sent_to_gy")
            if to == "banished":
                out.add("banished")
            if to == "hand":
                out.add("to_hand")
            if frm in ("monster_zone", "spell_trap_zone", "field_zone") and to != frm:
                out.add("leaves_field")
        elif k == "flipped":
            out.add("flipped")
        elif k == "battle_damage":
            out |= {"battle_damage", "damage"}
        elif k == "effect_damage":
            out.add("damage")
        elif k == "attack_declared":
            out |= {"attack_declared", "attacked", "attacks", "battles"}
        elif k == "summoned":
            out |= {"summoned", "opponent_summons"}
        elif k == "chain_link_added":
            out.add("activation")
            if e.get("targets"):
                out.add("targeted")
        elif k == "damage_calculation":
            out.add("damage_calculation")
        elif k == "phase_changed":
            out |= _STEP_EVENTS.get(e["to"], set())
    return out


_STEP_EVENTS = {
    "battle_start_step": {"start_of_battle_phase"},
    "battle_end_step": {"end_of_battle_phase"},
    "end_phase": {"end_phase"},
    "damage_step_start": {"start_of_damage_step"},
    "damage_step_before_calculation": {"before_damage_calculation"},
    "damage_step_after_calculation_1": {"after_damage_calculation"},
    "damage_step_end": {"end_of_damage_step"},
}
# the events _seen can see: a trigger needing only others ("discarded", "used as material") is not judged
SEEABLE = frozenset({
    "destroyed_by_battle", "destroys_by_battle", "destroyed", "sent_to_gy", "banished", "to_hand", "leaves_field",
    "flipped", "battle_damage", "damage", "attack_declared", "attacked", "attacks", "battles", "summoned",
    "opponent_summons", "activation", "targeted", "damage_calculation", *(x for v in _STEP_EVENTS.values() for x in v),
})  # fmt: skip


@history(
    "profile_events",
    "The events of this turn, in the words of card profiles (docs/profiles.md: destroyed_by_battle, sent_to_gy, flipped, "
    "summoned, ...), as the transitions' events said them (never the engine's counters): a sorted tuple, kept only on a run "
    "with cards of a card database (empty otherwise); forgotten when the turn changes.",
)
def _profile_events(prev, t):
    if not getattr(t.cards, "rows", None):
        return prev
    if t.before.get("turn") != t.after.get("turn"):
        prev = ()
    new = _seen(t) - set(prev)
    return tuple(sorted({*prev, *new})) if new else prev


@invariant(
    "profile.trigger-event",
    "A card of a card database whose activated effects are all Trigger or Flip effects is offered for activation only after "
    "an event one of them needs has happened this turn (by the transitions' events, in the monitor's history): a \"destroyed "
    "by battle\" trigger after a destruction by battle, a Flip effect after a flip, ...; not judged where an event is unknown "
    "or one bpcheck's events do not report.",
    ["WIN-EVENT", "DS-END-TRIGGERS", "DS-LEGAL-OPTIONAL-TRIGGER", "DS-LEGAL-MANDATORY"],
    "actions",
    FAMILY_WIN,
    reads=_READS,
)  # fmt: skip
def trigger_event(obs, actions, ctx):
    cards, mon = ctx.cards, ctx.mon
    if not getattr(cards, "rows", None) or obs["over"]:
        return None
    seen = set(mon["profile_events"])
    judged = False
    undecided: str | None = None
    for a, uid, name, prof in _offers(obs, actions, cards):
        effects = [e for e in prof.effects if not e.kind.decided or e.kind.value != "materials"]
        if not effects or not all(e.kind.value in ("trigger", "flip") for e in effects):
            continue  # (a card with another effect may be offered for it: profile.window-offered)
        needs = []
        for e in effects:
            if not e.events.decided or not e.events.value:
                needs = None
                break
            needs.append(e)
        if needs is None:
            undecided = undecided or f"{name}: the event its trigger needs (its profile says unknown)"
            continue
        if any(ev in seen for e in needs for ev in e.events.value):
            judged = True
            continue
        if any(ev not in SEEABLE for e in needs for ev in e.events.value):
            undecided = undecided or f"{name}: whether the event its trigger needs happened (no event reports it)"
            continue
        why = "; ".join(f"{_effect_name(e)} needs {' or '.join(e.events.value)} ({_cite(e.events.rule)})" for e in needs)
        return (
            f"{card_ref(obs, uid)} is offered for activation ({a.get('label')}) in {obs['step']}, but no event its triggers "
            f"need happened this turn ({why}; seen: {', '.join(sorted(seen)) or 'none'})"
        )
    if undecided is not None:
        return NotJudged(undecided)
    return True if judged else None


# -- 4. The converse: an activation withheld where its text allows it (metamorphic) ----------------

# Events that only move time on (a pass, a new step or sub-step, an attack declaration): between
# two windows joined by these alone, nothing resolved, moved, changed or was used. Any other event
# (a chain link, a Summon, damage, a card moved, an ATK change, ...) starts the comparison afresh.
_TIME_EVENTS = frozenset({"phase_changed", "passed", "attack_declared"})
# windows that are an instant, not a span of time: an effect that needs one is offered right after
# its event only (WIN-ATTACK-DECL, WIN-EVENT): never compared across windows
_INSTANTS = frozenset({
    "attack_declared", "attacked", "attack_declared_by_opponent", "start_of_battle_phase", "end_of_battle_phase",
    "start_of_damage_step", "before_damage_calculation", "damage_calculation", "after_damage_calculation",
    "end_of_damage_step", "standby_phase", "end_phase",
})  # fmt: skip
# what a condition (text before ':') may hold besides the windows its profile read, for the effect
# to be compared: nothing but these
_COND_SKIP = re.compile(r"\(Quick Effect\)|\bOnce per (?:turn|Chain)\b|\bYou can\b|\b(?:during|the|or|and|in|of)\b", re.I)
_CARD_AREAS = ("monsters", "spells", "hand", "graveyard", "banished")


def _player_cards(obs: dict, p: int):
    """(uid, name) of every card player `p` holds: field, Field Zone, hand, GY, banished."""
    side = obs["players"][p]
    for area in _CARD_AREAS:
        for c in side.get(area) or ():
            if c is not None and isinstance(c, dict):
                yield c["uid"], c["card"]
    fz = side.get("field_zone")
    if isinstance(fz, dict):
        yield fz["uid"], fz["card"]


def _board_key(obs: dict) -> int:
    """A hash of everything an observation says about the cards and players (every zone, pile,
    position, ATK/DEF, counter, LP, lingering effect), but not the time (turn, step, the attack in
    progress, who acts): two windows with the same key offer the same costs and targets as far as
    the observation tells."""
    return xxh3_64_intdigest(canonical_json([obs["players"], obs.get("lingering"), obs.get("pending_triggers")]))


def _attack_key(obs: dict):
    a = obs.get("attack")
    return None if a is None else (a.get("attacker"), a.get("target"))


def _open_window(obs: dict, actions, chain_links) -> bool:
    """An open game state of the Battle Phase with an empty chain, no choice and no trigger to
    declare: a window where a player may activate fast effects (BP-START-STEP, WIN-BEFORE-DS,
    BP-END-STEP, DS-SUBSTEPS)."""
    if obs["over"] or obs["step"] not in _BATTLE or obs.get("chain") or chain_links or obs.get("choice"):
        return False
    if obs.get("pending_triggers"):
        return False
    return not any(a.get("kind") in ("trigger", "choose", "replay") for a in actions)


@history(
    "profile_offers",
    "The windows of this Battle Phase (open game states with an empty chain) joined by nothing but passes, new steps and "
    "attack declarations, and for each card of a card database held by the player to act there: (card, board key, step, "
    "attack, player, offered or not), from the actions each window offered (never the engine's counters); forgotten at any "
    "other event, outside the Battle Phase and when the turn changes. Kept only on a run with cards of a card database.",
)
def _profile_offers(prev, t):
    if not getattr(t.cards, "rows", None):
        return prev
    b, a = t.before, t.after
    if a.get("over") or a.get("step") not in _BATTLE or b.get("turn") != a.get("turn") or not t.kind_set() <= _TIME_EVENTS:
        return () if prev else prev
    offered = t.offered
    if offered is None or not _open_window(b, offered, t.mon.chain.links) or _response_window(b, offered, t.mon):
        return prev  # (an engine's response window offers only what answers the last event: F25)
    p = b["to_act"]
    if p not in (0, 1):
        return prev
    on = {x.get("card_uid") for x in offered if x.get("kind") == "activate"}
    key, step, att = _board_key(b), b["step"], _attack_key(b)
    new = set(prev)
    for uid, name in _player_cards(b, p):
        if t.cards.profile(name) is not None:
            new.add((uid, key, step, att, p, uid in on))
    out = tuple(sorted(new, key=repr))
    return prev if out == prev else out


def _cond_unread(e) -> str | None:
    """The words of effect `e`'s activation condition (the text before its first ':') that its
    profile's windows did not read, or None when there are none."""
    if not e.text:
        return None
    i = e.text.find(":")
    if i < 0:
        return None
    cond = e.text[:i]
    for ev in e.windows.evidence:
        if ev.quote:
            cond = cond.replace(ev.quote, " ")
    cond = _COND_SKIP.sub(" ", cond)
    rest = re.sub(r"[\s,.;:()]+", " ", cond).strip()
    return rest or None


def withheld_verdict(e, step: str, attack, tp: int, p: int) -> tuple[bool | None, str]:
    """Whether effect `e` must be offerable to player `p` at an open game state of `step` (the
    attack `attack`, turn player `tp`) with an empty chain, by its profile: (True, ""), (False,
    why not) or (None, what is unknown or not comparable)."""
    if not e.kind.decided:
        return None, "its kind"
    if e.kind.value in ("trigger", "flip"):
        return None, "a trigger (offered when its event happens)"
    if not e.events.decided or e.events.value:
        return None, "an effect that answers an event"
    if not e.windows.decided or not e.speed.decided:
        return None, "its Spell Speed or windows"
    inst = sorted(set(e.windows.value) & _INSTANTS)
    if inst:
        return None, f"a window that is an instant ({inst[0]})"
    unread = _cond_unread(e)
    if unread is not None:
        return None, f"a condition its profile does not read ({unread[:50]!r})"
    obs = {"step": step, "attack": None if attack is None else {"attacker": attack[0], "target": attack[1]}, "turn_player": tp}
    v, why = window_verdict(e, obs, p, False)
    if v is not True:
        return v, why
    if step in DAMAGE_STEPS:
        sub = SUB_STEP.get(step)
        if sub is None or e.damage_step is None:
            return None, f"the Damage Step sub-step {step}"
        vals = [e.damage_step[r][sub].value for r in _RULESETS]
        if all(x is True for x in vals):
            return True, ""
        if all(x is False for x in vals):
            return False, f"the Damage Step rules forbid it in {step} ({_cite(e.damage_step['tcg'][sub].rule)})"
        return None, f"whether it may be activated in {step} (the rulesets differ or its profile says unknown)"
    return True, ""


@invariant(
    "profile.withheld",
    "Metamorphic: a card of a card database that the engine offers for activation at one open game state of a Battle Phase "
    "(empty chain; not an engine's response window, F25) is offered at every other one of the same Battle Phase where its profile lets the effects it may have "
    "been offered for be activated too (a fast effect in the Start Step, the Battle Step, the End Step or, by the Damage "
    "Step rules, a Damage-Step sub-step), to the same player, when nothing but passes, new steps and attack declarations "
    "happened between them and the board is the same (every card, position, ATK/DEF and LP: the same costs and targets as "
    "far as the observation tells), with the same attack in progress (or none in both). No model of the effect: the "
    "engine's own offer is the witness. Not judged where the profile leaves a kind, speed, window or Damage Step decision "
    "unknown, names an instant (\"when an attack is declared\") or a condition it does not read.",
    ["BP-START-STEP", "WIN-BEFORE-DS", "BP-END-STEP", "PRI-TP-FIRST", "CH-SPEED", "DS-LEGAL-STATS", "DS-LEGAL-COUNTER"],
    "actions",
    FAMILY_WIN,
    reads=sorted({*_READS, "attack", "chain", "players"}),
    fields={
        "choice": by_actions("an open game state is one whose actions ask no choice, trigger or replay"),
        "pending_triggers": by_actions("an open game state is one whose actions ask no trigger to be declared"),
        "lingering": by_visible("the windows compared are joined by passes, new steps and attack declarations only: no "
                                "effect began or ended between them"),
    },
)  # fmt: skip
def withheld(obs, actions, ctx):
    cards, mon = ctx.cards, ctx.mon
    if not getattr(cards, "rows", None) or not _open_window(obs, actions, mon.chain.links) or _response_window(obs, actions, mon):
        return None  # (not an open window, or an engine's response window: docs/ocgcore-findings.md F25)
    past = mon["profile_offers"]
    if not past:
        return None
    p, tp = obs["to_act"], obs["turn_player"]
    key, step, att = _board_key(obs), obs["step"], _attack_key(obs)
    on = {x.get("card_uid") for x in actions if x.get("kind") == "activate"}
    judged = False
    undecided: str | None = None
    for uid, name in _player_cards(obs, p):
        prof = cards.profile(name)
        if prof is None:
            continue
        now = uid in on
        for (u, k, s2, a2, p2, off) in past:
            if u != uid or k != key or p2 != p or off == now or s2 == step or a2 != att:
                continue  # (windows of the same attack only: an attack declaration may change what no field shows)
            # the window where it was offered, and the one where it was not
            w_on, w_off = ((step, att), (s2, a2)) if now else ((s2, a2), (step, att))
            effects = _activated(prof)
            at_on = [(e, withheld_verdict(e, w_on[0], w_on[1], tp, p)) for e in effects]
            if any(v is None for _e, (v, _w) in at_on):
                why = next(w for _e, (v, w) in at_on if v is None)
                undecided = undecided or f"{name}: whether it is withheld ({why})"
                continue
            cands = [e for e, (v, _w) in at_on if v is True]
            if not cands:
                continue  # (offered where its profile allows none: profile.window-offered's, not this one's)
            at_off = [withheld_verdict(e, w_off[0], w_off[1], tp, p) for e in cands]
            if any(v is False for v, _w in at_off):
                continue  # (the effect it was offered for may be one the other window does not allow)
            if any(v is None for v, _w in at_off):
                undecided = undecided or f"{name}: whether it is withheld ({next(w for v, w in at_off if v is None)})"
                continue
            judged = True
            where_on = w_on[0] + ("" if w_on[1] is None else " (an attack in progress)")
            where_off = w_off[0] + ("" if w_off[1] is None else " (an attack in progress)")
            which = "; ".join(f"{_effect_name(e)}: {_cite(e.windows.rule)}, {_cite(e.speed.rule)}" for e in cands)
            return (
                f"{card_ref(obs, uid)} is withheld from P{p + 1} in {where_off} of P{tp + 1}'s Battle Phase, while the engine "
                f"offers it in {where_on} with the same board and nothing resolved between; its profile allows the effects it "
                f"may be offered for in both ({which})"
            )
        if now:
            judged = judged or any(u == uid and k == key for (u, k, *_r) in past)
    if undecided is not None:
        return NotJudged(undecided)
    return True if judged else None
