"""Plain-text reports: a board drawn from an observation, and counterexample traces.

Reports read the documented observation schema and the counterexample object only; they
know nothing of the rules.
"""

from __future__ import annotations

from bpcheck.reports.board import card_name

PN = ("P1", "P2")
POS = {"attack": "ATK", "defense": "DEF", "facedown": "SET"}


_name = card_name  # one lookup for every report (reports/board.py)


def monster_cell(m: dict | None) -> str:
    if m is None:
        return "--"
    marks = ""
    if m.get("destroyed_by_battle"):
        marks += " destroyed-by-battle"
    if m.get("attacks_declared"):
        marks += f" attacked x{m['attacks_declared']}"
    if m.get("cannot_attack_this_turn"):
        marks += " cannot-attack"
    own = "" if m.get("owner") == m.get("controller") else f" (owner {PN[m['owner']]})"
    pos = m.get("position", "?")
    return f"{m.get('card', '?')} {POS.get(pos, pos)} {m.get('atk', '?')}/{m.get('def', '?')}{own}{marks}"


def spell_cell(c: dict | None, obs: dict) -> str:
    if c is None:
        return "--"
    state = "up" if c["face_up"] else ("set this turn" if c["set_this_turn"] else "set")
    extra = ""
    for key in ("equipped_to", "attached_to", "linked_monster"):
        if c.get(key) is not None:
            extra += f" -> {_name(obs, c[key])}"
    return f"{c['card']} ({state}){extra}"


def board_lines(obs: dict) -> list[str]:
    lines = []
    head = f"turn {obs['turn']}, {PN[obs['turn_player']]}'s turn, {obs['step']}"
    if obs["over"]:
        head += f", DUEL OVER (winner: {'draw' if obs['winner'] is None else PN[obs['winner']]})"
    elif obs["to_act"] is not None:
        head += f", {PN[obs['to_act']]} to act"
    lines.append(head)
    a = obs["attack"]
    if a:
        flags = " (replay pending)" if a.get("replay_pending") else ""  # (not every engine observes it)
        lines.append(f"attack: {_name(obs, a['attacker'])} -> {_name(obs, a['target'])}{flags}")
    if obs["chain"]:
        chain = ", ".join(f"{i + 1}:{l['card']}({PN[l['controller']]}{', negated' if l['negated'] else ''})" for i, l in enumerate(obs["chain"]))
        lines.append(f"chain: {chain}")
    for side, p in enumerate(obs["players"]):
        lines.append(f"{PN[side]} LP {p['lp']}")
        lines.append("   monsters: " + " | ".join(monster_cell(m) for m in p["monsters"]))
        st = " | ".join(spell_cell(c, obs) for c in p["spells"])
        if p["field_zone"]:
            st += f" || field: {spell_cell(p['field_zone'], obs)}"
        lines.append("   spells:   " + st)
        for pile in ("hand", "graveyard", "banished"):
            if p[pile]:
                lines.append(f"   {pile}: " + ", ".join(c["card"] for c in p[pile]))
    return lines


def decision_groups(steps) -> list[tuple[object | None, list]]:
    """A trace as the decisions players made: ``[(decision step, [the forced steps after it])]``
    (a step is forced when reduction took the only action offered for the player: its
    ``forced`` flag). Forced steps before any decision come first, with ``None``."""
    out: list[tuple[object | None, list]] = []
    for st in steps:
        if getattr(st, "forced", False):
            if not out:
                out.append((None, []))
            out[-1][1].append(st)
        else:
            out.append((st, []))
    return out


def _players(steps) -> list[str]:
    seen: list[str] = []
    for st in steps:
        who = PN[st.player] if st.player is not None else "--"
        if who not in seen:
            seen.append(who)
    return seen


def forced_summary(forced, before: dict | None = None) -> str:
    """One line for a run of forced steps, from their action records and observations only:
    ``P2 and P1 pass (forced) to damage_step_before_calculation`` (the step named when it
    changed from `before`, the observation before the run)."""
    who = _players(forced)
    names = " and ".join(who) if len(who) <= 2 else ", ".join(who[:-1]) + " and " + who[-1]
    kinds = {st.action.get("kind") for st in forced}
    verb = ("pass" if len(who) > 1 else "passes") if kinds == {"pass"} else ("act" if len(who) > 1 else "acts")
    n = f" x{len(forced)}" if len(forced) > len(who) else ""
    line = f"{names} {verb}{n} (forced)"
    to = forced[-1].after.get("step") if isinstance(forced[-1].after, dict) else None
    frm = before.get("step") if isinstance(before, dict) else None
    if to is not None and to != frm:
        line += f" to {to}"
    return line


def _plain_pass(st) -> bool:
    return st.action.get("kind") == "pass" and st.action.get("label") == "pass"


def _diff_trace_lines(steps, indent: str) -> list[str]:
    """A lockstep trace's steps, two or more passes in a row on one line (``5-6. P1 and P2 pass``,
    with their events and the step they led to)."""
    out = []
    i = 0
    while i < len(steps):
        j = i
        while j < len(steps) and _plain_pass(steps[j]):
            j += 1
        if j - i >= 2:
            run = steps[i:j]
            who = _players(run)
            names = " and ".join(who) if len(who) <= 2 else ", ".join(who[:-1]) + " and " + who[-1]
            evs = ", ".join(e["kind"] for st in run for e in st.events if e["kind"] not in ("passed",))
            to = run[-1].after.get("step") if isinstance(run[-1].after, dict) else None
            frm = run[0].before.get("step") if isinstance(run[0].before, dict) else None
            line = f"{indent}{run[0].index:3}-{run[-1].index}. {names} pass" + (f" x{len(run)}" if len(run) > len(who) else "")
            line += (f" to {to}" if to is not None and to != frm else "") + (f"   [{evs}]" if evs else "")
            out.append(line)
            i = j
            continue
        st = steps[i]
        who = PN[st.player] if st.player is not None else "--"
        evs = ", ".join(e["kind"] for e in st.events if e["kind"] not in ("passed",))
        out.append(f"{indent}{st.index:3}. {who}: {st.action['label']}" + (f"   [{evs}]" if evs else ""))
        i += 1
    return out


def counterexample_text(cex, indent: str = "  ") -> str:
    """A step-by-step trace with the board before and after the violating step."""
    out = [f"{cex.invariant}: {cex.statement}"]
    if cex.rules:
        out.append(f"rules: {', '.join(cex.rules)} (docs/rules.md)")
    key = getattr(cex, "key", None)  # an invariant's signature: which distinct failure (a baseline entry names it)
    out.append(f"violation [{key}]: {cex.message}" if isinstance(key, str) else f"violation: {cex.message}")
    groups = decision_groups(cex.steps)
    decisions = sum(1 for d, _f in groups if d is not None)
    size = f"{decisions} decisions, {len(cex.labels)} steps" if decisions != len(cex.steps) else f"{len(cex.labels)} steps"
    out.append(f"{getattr(cex, 'trace_title', 'shortest trace')} ({size}) from {cex.board}:")
    if cex.invariant == "DIFF":  # a lockstep trace (every pass a step): runs of passes on one line
        out += _diff_trace_lines(cex.steps, indent)
        groups = []
    for d, forced in groups:
        if d is not None:
            who = PN[d.player] if d.player is not None else "--"
            evs = ", ".join(e["kind"] for e in d.events if e["kind"] not in ("passed",))
            out.append(f"{indent}{d.index:3}. {who}: {d.action['label']}" + (f"   [{evs}]" if evs else ""))
        if forced:
            evs = ", ".join(e["kind"] for st in forced for e in st.events if e["kind"] not in ("passed",))
            first = forced[0].index
            span = f"{first}" if len(forced) == 1 else f"{first}-{forced[-1].index}"
            then = "then " if d is not None else ""
            word = "step" if len(forced) == 1 else "steps"
            out.append(f"{indent}     {then}{forced_summary(forced, forced[0].before)}   ({word} {span})" + (f"   [{evs}]" if evs else ""))
    if cex.at == "cycle" and cex.cycle_start is not None:
        out.append(f"{indent}... and back to the state after step {cex.cycle_start}")
    if cex.invariant == "DIFF" and cex.steps:
        pass  # the message names what differs and both values: the boards are in --json and --report
    elif cex.steps:
        last = cex.steps[-1]
        if cex.at in ("transition",):
            out.append("board before the violating step:")
            out.extend(indent + l for l in board_lines(last.before))
            out.append(f"violating step: {last.action['label']}")
            out.append("board after it:")
            out.extend(indent + l for l in board_lines(last.after))
        else:
            out.append("board before the last step:")
            out.extend(indent + l for l in board_lines(last.before))
            out.append(f"last step: {last.action['label']}")
            out.append("violating board:")
            out.extend(indent + l for l in board_lines(last.after))
    else:
        out.append("violating board (the initial one):")
        out.extend(indent + l for l in board_lines(cex.initial_observation))
    return "\n".join(out)
