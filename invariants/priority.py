"""Priority: play moves on only after both players pass in succession (PRI-PASS-PASS).

Judged from the monitor's own count of the passes in succession and of who must answer an
activation (the ``priority`` history, from the actions the transitions made), never from the engine's ``priority`` or ``passes`` (an
engine may leave them unobserved: the EDOPro core does). An engine with implicit passes folds
the passes it makes for its players into its transitions, so a pass round cannot be followed
there: the invariant is not evaluated for it (``explicit_passes``).
"""

from __future__ import annotations

from bpcheck.invariants.base import by_actions, invariant
from bpcheck.invariants.monitor import history
from bpcheck.invariants.view import card_ref, card_refs


@history(
    "priority",
    "Who may act, by the actions made: the passes in succession at the current open game state (0 or 1: a pass action "
    "counts one; any other action, and a pass that ends something, sets it back to 0), and the player who must be asked "
    "next because the other one just activated a card or effect (until the next action). Never the engine's passes or "
    "priority.",
    initial=(0, None),
)
def _priority(prev, t):
    a = t.action
    kind = a.get("kind")
    added = t.of("chain_link_added")
    asked = None
    if added and kind in ("activate", "trigger"):
        p = added[-1].get("player")
        asked = 1 - p if isinstance(p, int) else None
    if kind != "pass" or prev[0]:
        n = 0  # another action, or the second pass in succession: the window, the step or the chain ends
    else:
        n = 1
        for e in t.events:
            if e.kind != "passed":
                n = 0  # play moved on at once (an engine that did not ask the other player)
                break
    out = (n, asked)
    return prev if out == prev else out


def _player(p) -> str:
    return f"P{p + 1}" if isinstance(p, int) else "nobody"


@invariant(
    "priority.pass-pass",
    "Play moves on only after both players pass in succession: after a pass the other player is asked and nothing else "
    "happens; after the second pass in succession the chain resolves, or with an empty chain the step (or Damage-Step "
    "sub-step) ends or, in the Battle Step, the attack-declaration window closes and the turn player acts; after a card or "
    "effect is activated the other player is asked whether to respond. Every step in which players get priority (the Start "
    "Step, the Battle Step, each Damage-Step sub-step, the End Step, the Main Phases) gives it: no step is entered and left "
    "in one move with no pass made there; after the second pass in damage_step_during_calculation, damage calculation may "
    "first ask whether to apply an optional protection from destruction by battle (a choice of kind battle_protection).",
    ["PRI-PASS-PASS", "BP-END-STEP", "DS-CALC-PROTECT-CHOICE"],
    "transition",
    "chains and windows",
    explicit_passes=True,
    # (who passed in succession, who must answer an activation, the chain and the attack-declaration
    # window are the monitor's, never the engine's priority, passes or open_windows)
    reads=["chain", "over", "step", "to_act", "turn_player"],
    fields={
        w: by_actions("who acts after an activation is judged by the next action: a trigger or a choice may come first, anything else is the other player's")
        for w in ("pending_triggers", "choice")
    },
)  # fmt: skip
def pass_pass(t):
    a = t.action
    kind = a.get("kind")
    p = a.get("player")
    # Every step where players get priority gives it: none entered and left in one move with no
    # pass made there (rule: PRI-PASS-PASS, BP-END-STEP: the End Step too); a duel that ends
    # leaves its step at once.
    entered: str | None = None
    passed = False
    for e in () if t.after.get("over") else t.events:
        if e.kind == "passed":
            passed = True
        elif e.kind == "phase_changed":
            if entered is not None and e.get("from") == entered and not passed:
                return f"{entered} was entered and left in one move ({a.get('label')}): neither player got priority there (both must pass in succession to end it)"
            entered, passed = e.get("to"), False
    asked = t.mon["priority"][1]
    if asked is not None and p != asked and kind not in ("trigger", "decline", "choose"):
        # (a trigger waiting or a choice asked comes first; anything else is the other player's turn to act)
        top = t.mon.chain.links[-1][0] if t.mon.chain.links else None
        return (
            f"after {_player(1 - asked)} activated {card_ref(t.before, top)}, {_player(p)} acted ({a.get('label')}) before "
            f"{_player(asked)} was asked whether to respond"
        )
    if kind not in ("pass", "activate") or t.after["over"]:
        return None
    other = 1 - p if isinstance(p, int) else None
    to_act = t.after["to_act"]
    if kind == "activate":
        if not t.of("chain_link_added"):
            return None
        waiting = t.after.get("pending_triggers")
        if waiting or t.after.get("choice") is not None:
            return None  # a trigger or a choice comes first
        if to_act == other:
            return True
        if waiting is None:
            return None  # (a trigger may wait: the next action tells, see above)
        added = t.of("chain_link_added")[-1]
        return f"after {_player(p)} activated {card_ref(t.after, added.get('card_uid'), t.before)}, {_player(to_act)} was asked rather than {_player(other)} (the other player may respond)"
    moved = sorted({e.kind for e in t.events if e.kind != "passed"})
    if not t.mon["priority"][0]:
        if moved:
            return (
                f"{_player(p)} passed once and play moved on ({', '.join(moved)}) without asking {_player(other)}: a window, a step "
                "or a chain ends only after both players pass in succession"
            )
        if to_act != other:
            return f"after {_player(p)} passed in {t.before['step']}, {_player(to_act)} was asked instead of {_player(other)}"
        return True
    # the second pass in succession
    links = t.mon.chain.links
    if links:
        after_chain = t.after["chain"]
        if t.of("chain_link_resolved") or t.after.get("choice") is not None or len(after_chain) < len(links):
            return True
        return f"both players passed in succession, but the chain {card_refs(t.before, [l[0] for l in links])} did not resolve"
    if t.of("phase_changed"):
        return True
    ch = t.after.get("choice")
    if t.before["step"] == "damage_step_during_calculation" and isinstance(ch, dict) and ch.get("kind") == "battle_protection":
        return True  # rule: DS-CALC-PROTECT-CHOICE (damage calculation asks first whether to apply a protection)
    if t.before["step"] == "battle_step" and t.mon.window.attack_declaration:
        if to_act != t.after["turn_player"]:
            return f"both players passed in the attack-declaration window, but {_player(to_act)} acts next, not the turn player"
        return True
    return f"both players passed in succession with an empty chain, but {t.before['step']} did not end"
