"""Plain-text reports: a board drawn from an observation, and counterexample traces.

Reports read the documented observation schema and the counterexample object only; they
know nothing of the rules.
"""

from __future__ import annotations

from typing import Any, Callable

from bpcheck.invariants.naming import TraceNames, event_text
from bpcheck.reports.board import _player, _pn, _slots, card_name, player_of
from bpcheck.reports.safe import line as _line

PN = ("P1", "P2")
POS = {"attack": "ATK", "defense": "DEF", "facedown": "SET"}


_name = card_name  # one lookup for every report (reports/board.py)


def plural(n: int, word: str, many: str | None = None, fmt: str = "") -> str:
    """``1 board``, ``2 boards``, ``0 boards`` (``many``: an irregular plural; ``fmt``: the
    number's format spec, e.g. ``","``): every count printed in words goes through here."""
    return f"{n:{fmt}} {word if n == 1 else (many or word + 's')}"


def monster_cell(m: dict | None) -> str:
    """One monster as text; a field the engine does not observe is left out (``?`` for a stat)."""
    if not isinstance(m, dict):
        return "--"
    marks = ""
    if m.get("destroyed_by_battle"):
        marks += " destroyed-by-battle"
    if m.get("attacks_declared"):
        marks += f" attacked x{m['attacks_declared']}"
    if m.get("cannot_attack_this_turn"):
        marks += " cannot-attack"
    own = "" if "owner" not in m or m.get("owner") == m.get("controller", m.get("owner")) else f" (owner {_pn(m['owner'])})"
    pos = m.get("position", "?")
    mats = m.get("materials")
    if isinstance(mats, list) and mats:  # Xyz materials (an optional field: docs/observation.md)
        marks += " [materials: " + ", ".join(str(x.get("card", "?")) if isinstance(x, dict) else "?" for x in mats) + "]"
    return f"{m.get('card', '?')} {POS.get(pos, pos)} {m.get('atk', '?')}/{m.get('def', '?')}{own}{marks}"


def spell_cell(c: dict | None, obs: dict, names: Callable[[Any], str] | None = None) -> str:
    if not isinstance(c, dict):
        return "--"
    name = names or (lambda uid: _name(obs, uid))
    if "face_up" not in c:
        state = "face-up or set not observed"
    else:
        state = "up" if c["face_up"] else ("set this turn" if c.get("set_this_turn") else "set")
    extra = ""
    for key in ("equipped_to", "attached_to", "linked_monster"):
        if c.get(key) is not None:
            extra += f" -> {name(c[key])}"
    return f"{c.get('card', '?')} ({state}){extra}"


def board_lines(obs: dict, names: Callable[[Any], str] | None = None) -> list[str]:
    """The board as text lines. `names` names a uid (default: from `obs`); cards are named with
    their zone, ``Sheep Token [P2 M2]``. Any field may be missing (protocol 2 ``unobserved``)."""
    obs = obs if isinstance(obs, dict) else {}
    name = names or (lambda uid: _name(obs, uid))
    lines = []
    head = f"turn {obs.get('turn', '?')}, {_pn(obs.get('turn_player'))}'s turn, {obs.get('step', '?')}"
    if obs.get("over"):
        winner = obs.get("winner")
        head += f", DUEL OVER (winner: {'draw' if winner is None else _pn(winner)})"
    elif obs.get("to_act") is not None:
        head += f", {_pn(obs['to_act'])} to act"
    lines.append(head)
    a = obs.get("attack")
    if isinstance(a, dict) and a:
        flags = " (replay pending)" if a.get("replay_pending") else ""  # (not every engine observes it)
        lines.append(f"attack: {name(a.get('attacker'))} -> {name(a.get('target'))}{flags}")
    chain = obs.get("chain")
    if isinstance(chain, list) and chain:
        links = []
        for i, l in enumerate(chain):
            l = l if isinstance(l, dict) else {}
            link = f"{i + 1}:{l.get('card', '?')}({_pn(l.get('controller'))}{', negated' if l.get('negated') else ''})"
            if isinstance(l.get("targets"), list) and l["targets"]:
                link += " -> " + ", ".join(name(u) for u in l["targets"])
            links.append(link)
        lines.append(f"chain: {', '.join(links)}")
    for side in (0, 1):
        p = _player(obs, side)
        lines.append(f"{PN[side]} LP {p.get('lp', '?')}")
        lines.append("   monsters: " + " | ".join(monster_cell(m) for m in _slots(p, "monsters")))
        emz = p.get("extra_monsters")  # the optional places of a card-database board (docs/observation.md)
        if isinstance(emz, list) and any(isinstance(m, dict) for m in emz):
            lines.append("   extra monster zones: " + " | ".join(monster_cell(m) for m in emz))
        st = " | ".join(spell_cell(c, obs, name) for c in _slots(p, "spells"))
        if isinstance(p.get("field_zone"), dict):
            st += f" || field: {spell_cell(p['field_zone'], obs, name)}"
        lines.append("   spells:   " + st)
        pend = p.get("pendulum")
        if isinstance(pend, list) and any(isinstance(c, dict) for c in pend):
            lines.append("   pendulum zones: " + " | ".join(str(c.get("card", "?")) if isinstance(c, dict) else "--" for c in pend))
        for pile in ("hand", "graveyard", "banished", "extra_deck"):
            cards = p.get(pile)
            if isinstance(cards, list) and cards:
                lines.append(f"   {pile}: " + ", ".join(str(c.get("card", "?")) if isinstance(c, dict) else "?" for c in cards))
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
        who = player_of(st.player)
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


def _kinds(events) -> str:
    return ", ".join(str(e.get("kind", "?")) for e in events if isinstance(e, dict) and e.get("kind") != "passed")


def step_events(step, names: TraceNames) -> list[str]:
    """The events of one step as lines, their cards named (passes left out)."""
    return [event_text(e, names, step.index) for e in step.events if not (isinstance(e, dict) and e.get("kind") == "passed")]


def _plain_pass(st) -> bool:
    a = st.action if isinstance(st.action, dict) else {}
    return a.get("kind") == "pass" and a.get("label") == "pass"


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
            evs = ", ".join(x for x in (_kinds(st.events) for st in run) if x)
            to = run[-1].after.get("step") if isinstance(run[-1].after, dict) else None
            frm = run[0].before.get("step") if isinstance(run[0].before, dict) else None
            line = f"{indent}{run[0].index:3}-{run[-1].index}. {names} pass" + (f" x{len(run)}" if len(run) > len(who) else "")
            line += (f" to {to}" if to is not None and to != frm else "") + (f"   [{evs}]" if evs else "")
            out.append(line)
            i = j
            continue
        st = steps[i]
        who = player_of(st.player)
        evs = _kinds(st.events)
        out.append(f"{indent}{st.index:3}. {who}: {st.action.get('label', '?')}" + (f"   [{evs}]" if evs else ""))
        i += 1
    return out


def counterexample_text(cex, indent: str = "  ") -> str:
    """A step-by-step trace with the board before and after the violating step, and what the
    violating step did (its events, cards named with their zones)."""
    names = TraceNames([cex.initial_observation] + [s.after for s in cex.steps])
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
            who = player_of(d.player)
            evs = _kinds(d.events)
            out.append(f"{indent}{d.index:3}. {who}: {d.action.get('label', '?')}" + (f"   [{evs}]" if evs else ""))
        if forced:
            evs = ", ".join(x for x in (_kinds(st.events) for st in forced) if x)
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
        k = len(cex.steps)
        before = lambda uid: names.ref(uid, k - 1)  # noqa: E731
        after = lambda uid: names.ref(uid, k)  # noqa: E731
        evs = step_events(last, names)
        if cex.at in ("transition",):
            out.append("board before the violating step:")
            out.extend(indent + l for l in board_lines(last.before, before))
            out.append(f"violating step: {last.action.get('label', '?')}")
            if evs:
                out.append("its events: " + "; ".join(evs))
            out.append("board after it:")
            out.extend(indent + l for l in board_lines(last.after, after))
        else:
            out.append("board before the last step:")
            out.extend(indent + l for l in board_lines(last.before, before))
            out.append(f"last step: {last.action.get('label', '?')}")
            if evs:
                out.append("its events: " + "; ".join(evs))
            out.append("violating board:")
            out.extend(indent + l for l in board_lines(last.after, after))
    else:
        out.append("violating board (the initial one):")
        out.extend(indent + l for l in board_lines(cex.initial_observation, lambda uid: names.ref(uid, 0)))
    tail = getattr(cex, "engine_stderr", ())
    if tail:  # a crash: the end of the engine's stderr, whole (its traceback), not only its last line
        out.append(f"the engine's stderr when it crashed (its last {plural(len(tail), 'line')}):")
        out.extend(f"{indent}| {l}" for l in tail)
    return "\n".join(_line(l) for l in out)  # a newline inside a line is an engine's: shown as \x0a


def root_cause_lines(groups, max_boards: int = 12, indent: str = "  ") -> list[str]:
    """The counterexamples of a run by root cause (reports/groups.py): each group once, with its
    count, the invariants and boards it hit, and the full text of the counterexample that shows
    it; the others of its board in one line each. Known disagreements (a baseline) are left to
    the board lines, which name each one."""
    shown = [g for g in groups if not g.known]
    if not shown:
        return []
    total = sum(g.count for g in shown)
    out = [
        "",
        f"counterexamples by root cause: {total} in {len(shown)} group{'s' if len(shown) != 1 else ''} "
        "(same invariant family, same violating step; docs/reports.md)",
    ]
    for g in shown:
        boards = g.boards()
        listed = ", ".join(boards[:max_boards]) + (f" and {len(boards) - max_boards} more (--json and --report list every one)" if len(boards) > max_boards else "")
        out += ["", _line(f"root cause #{g.number}: {g.title()}"), _line(f"{indent}boards: {listed}")]
        first = g.first
        out.append(counterexample_text(first.cex, indent))
        same = [m for m in g.members[1:] if m.board == first.board]
        for m in same:
            out.append(_line(f"{indent}also on this board: {m.cex.invariant}: {m.cex.message}"))
    return out
