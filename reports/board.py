"""A board as a grid of cells, read from an observation (docs/model.md), for the graphical reports.

The DOT trace graph and the HTML step viewer draw the same grid: the opponent (P2) on top, then
the middle band (the attack in progress), then P1, then the chain and what else is pending. Each
cell knows whether it changed since the previous state (its part of the observation differs),
so both formats emphasise the same cells. Nothing here knows a rule: it lays out what the
observation says.

Any field may be missing: a protocol-2 engine leaves out what it does not observe
(docs/protocol.md, ``unobserved``), and an optional field may be absent from any engine. A missing
field is never drawn as a value: a flag that is not observed is not shown (a tooltip lists what
the engine does not observe), a missing number is ``?``. Cards are named with their zone,
``Sheep Token [P2 M2]`` (:class:`bpcheck.invariants.naming.TraceNames`), never by uid alone.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

from bpcheck.invariants.naming import TraceNames

PN = ("P1", "P2")
COLS = 6  # five zones + the Field Zone / the pile column
POSITION = {"attack": "ATK", "defense": "DEF", "facedown": "SET"}
# The fields of a monster and a Spell/Trap the cells read (docs/observation.md): those missing
# from a card are listed in its tooltip as not observed.
MONSTER_FIELDS = (
    "position", "atk", "def", "base_atk", "base_def", "modifiers", "attacks_declared", "declared_at", "declared_direct",
    "cannot_attack_this_turn", "destroyed_by_battle", "flipped_by_battle", "owner", "controller",
)  # fmt: skip
SPELL_FIELDS = ("face_up", "set_this_turn", "equipped_to", "attached_to", "linked_monster", "on_chain", "kind")

Namer = Callable[[Any], str]


@dataclass(frozen=True)
class Cell:
    key: str  # stable within a board, e.g. "P1.monsters.2"
    lines: tuple[str, ...]  # what is drawn, line by line (the first is the main one)
    kind: str  # empty, atk, def, set, spell, trap, spell-set, info, header, attack, chain, note
    changed: bool = False
    span: int = 1
    title: str = ""  # the full text (tooltips)
    strong: int = 1  # how many leading lines are the main text (drawn bold)


@dataclass
class BoardView:
    header: Cell
    rows: list[list[Cell]] = field(default_factory=list)  # the grid, top to bottom, COLS wide
    bands: list[Cell] = field(default_factory=list)  # full-width lines below the grid (chain, ...)

    def all_cells(self) -> list[Cell]:
        return [self.header, *(c for r in self.rows for c in r), *self.bands]

    def changed_keys(self) -> list[str]:
        return [c.key for c in self.all_cells() if c.changed]


def card_name(obs: dict, uid: Any) -> str:
    """A card of the observation by name and zone, ``Sheep Token [P2 M2]`` (``direct`` for None,
    ``#uid`` when the observation does not hold it): reports name cards as invariant messages do."""
    return TraceNames([obs]).ref(uid)


def _namer(obs: dict, prev: dict | None, names: Namer | None) -> Namer:
    if names is not None:
        return names
    tn = TraceNames([obs] + ([prev] if prev is not None else []))
    return lambda uid: tn.ref(uid, 0)


def wrap(text: str, width: int = 15, max_lines: int = 2) -> list[str]:
    lines = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=True) or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    return lines


def _get(obs: Any, path: tuple) -> Any:
    cur: Any = obs
    for p in path:
        if cur is None:
            return None
        try:
            cur = cur[p]
        except (KeyError, IndexError, TypeError):
            return None
    return cur


def _changed(obs: dict, prev: dict | None, *paths: tuple) -> bool:
    if prev is None:
        return False
    return any(_get(obs, p) != _get(prev, p) for p in paths)


def _player(obs: dict, side: int) -> dict:
    players = obs.get("players")
    if isinstance(players, list) and side < len(players) and isinstance(players[side], dict):
        return players[side]
    return {}


def _slots(p: dict, zone: str) -> list:
    z = p.get(zone)
    return list(z) + [None] * (5 - len(z)) if isinstance(z, list) else [None] * 5


def _pn(v: Any) -> str:
    return PN[v] if isinstance(v, int) and not isinstance(v, bool) and v in (0, 1) else "?"


def player_of(player: Any) -> str:
    """The player who took a step: ``P1``, ``P2``, ``--`` when none is known."""
    return "--" if player is None else _pn(player)


def _num(v: Any) -> str:
    return "?" if v is None else str(v)


def _missing(card: dict, fields: tuple[str, ...]) -> list[str]:
    return [f for f in fields if f not in card]


def monster_cell(obs: dict, prev: dict | None, side: int, i: int, names: Namer | None = None) -> Cell:
    name = _namer(obs, prev, names)
    m = _slots(_player(obs, side), "monsters")[i]
    key = f"{PN[side]}.monsters.{i}"
    ch = _changed(obs, prev, ("players", side, "monsters", i))
    if not isinstance(m, dict):
        return Cell(key, ("·",), "empty", ch, title=f"{PN[side]} Monster Zone {i + 1}: empty")
    card = str(m.get("card", "?"))
    raw_pos = m.get("position")
    pos = POSITION.get(raw_pos, "?" if raw_pos is None else str(raw_pos))
    stats = (m.get("atk"), m.get("def"))
    base = (m.get("base_atk"), m.get("base_def"))
    star = "*" if None not in stats and None not in base and stats != base else ""
    lines = wrap(card)
    strong = len(lines)
    lines.append(f"{pos} {_num(stats[0])}/{_num(stats[1])}{star}")
    flags = []
    if "attacks_declared" in m:  # a zero count is shown too: it says the monster has not attacked
        flags.append(f"attacks {m['attacks_declared']}")
    if m.get("declared_direct"):
        flags.append("attacked directly")
    if m.get("cannot_attack_this_turn"):
        flags.append("can't attack")
    if m.get("destroyed_by_battle"):
        flags.append("destroyed")
    if "owner" in m and m.get("owner") != m.get("controller", side):
        flags.append(f"owner {_pn(m['owner'])}")
    if flags:
        lines.extend(wrap(", ".join(flags), 18, 2))
    title = f"{PN[side]} Monster Zone {i + 1}: {card} (uid {m.get('uid', '?')}), {raw_pos or 'position not observed'}, ATK {_num(stats[0])} DEF {_num(stats[1])}"
    if star:
        mods = m.get("modifiers")
        title += f" (base {base[0]}/{base[1]}" + (
            "; " + ", ".join(_modifier(md) for md in mods) if isinstance(mods, list) and mods else ""
        ) + ")"
    if flags:
        title += "; " + ", ".join(flags)
    declared = m.get("declared_at")
    if isinstance(declared, list) and declared:
        title += "; declared at " + ", ".join(name(u) for u in declared)
    if m.get("flipped_by_battle"):
        title += "; flipped by battle"
    gone = _missing(m, MONSTER_FIELDS)
    if gone:
        title += "; not observed: " + ", ".join(gone)
    kind = {"ATK": "atk", "DEF": "def", "SET": "set"}.get(pos, "atk")
    return Cell(key, tuple(lines), kind, ch, title=title, strong=strong)


def _modifier(md: Any) -> str:
    if not isinstance(md, dict):
        return str(md)
    amount = md.get("amount")
    if isinstance(amount, int) and not isinstance(amount, bool):
        return f"{md.get('source', '?')} {md.get('stat', '?')} {amount:+}"
    return f"{md.get('source', '?')} {md.get('stat', '')} {md.get('kind', '')}".strip()


def spell_cell(obs: dict, prev: dict | None, side: int, i: int | None, names: Namer | None = None) -> Cell:
    name = _namer(obs, prev, names)
    p = _player(obs, side)
    if i is None:
        fz = p.get("field_zone")
        c, key, zone, path = fz, f"{PN[side]}.field", "Field Zone", ("players", side, "field_zone")
    else:
        c, key, zone, path = _slots(p, "spells")[i], f"{PN[side]}.spells.{i}", f"Spell & Trap Zone {i + 1}", ("players", side, "spells", i)
    ch = _changed(obs, prev, path)
    if not isinstance(c, dict):
        shown = "field" if i is None else "·"
        if i is None and "field_zone" not in p and p:
            return Cell(key, ("field ?",), "empty", ch, title=f"{PN[side]} {zone}: not observed")
        return Cell(key, (shown,), "empty", ch, title=f"{PN[side]} {zone}: empty")
    card = str(c.get("card", "?"))
    lines = wrap(card)
    strong = len(lines)
    if "face_up" not in c:
        state = "face-up or set: not observed"
    else:
        state = "face-up" if c["face_up"] else ("set this turn" if c.get("set_this_turn") else "set")
    if c.get("on_chain"):
        state += ", on chain"
    lines.append(state)
    for k in ("equipped_to", "attached_to", "linked_monster"):
        if c.get(k) is not None:
            lines.extend(wrap("→ " + name(c[k]), 17, 2))
    kind = (c.get("kind") or "spell") if c.get("face_up", True) else "spell-set"
    title = f"{PN[side]} {zone}: {card} (uid {c.get('uid', '?')}), {state}"
    for k in ("equipped_to", "attached_to", "linked_monster"):
        if c.get(k) is not None:
            title += f"; {k.replace('_', ' ')} {name(c[k])}"
    gone = _missing(c, SPELL_FIELDS)
    if gone:
        title += "; not observed: " + ", ".join(gone)
    return Cell(key, tuple(lines), kind if kind in ("spell", "trap", "spell-set") else "spell", ch, title=title, strong=strong)


def _pile_names(pile: Any) -> list[str] | None:
    if not isinstance(pile, list):
        return None
    return [str(c.get("card", "?")) if isinstance(c, dict) else "?" for c in pile]


def info_cells(obs: dict, prev: dict | None, side: int) -> list[Cell]:
    p = _player(obs, side)
    lp = p.get("lp")
    out = [
        Cell(
            f"{PN[side]}.lp",
            (f"{PN[side]}  LP {_num(lp)}",),
            "info-lp",
            _changed(obs, prev, ("players", side, "lp")),
            span=2,
            title=f"{PN[side]}: " + (f"{lp} Life Points" if lp is not None else "Life Points not observed"),
        )
    ]
    for pile, short in (("hand", "hand"), ("graveyard", "GY"), ("banished", "banished"), ("deck", "deck")):
        cards = _pile_names(p.get(pile))
        if cards is None:
            lines, title = [f"{short} ?"], f"{PN[side]} {pile}: not observed"
        else:
            lines = [f"{short} {len(cards)}"]
            if cards and pile != "deck":
                lines.extend(wrap(", ".join(cards), 16, 2))
            title = f"{PN[side]} {pile}: " + (", ".join(cards) if cards else "empty")
        out.append(Cell(f"{PN[side]}.{pile}", tuple(lines), "info", _changed(obs, prev, ("players", side, pile)), title=title))
    return out


def header_cell(obs: dict, prev: dict | None, label: str) -> Cell:
    turn_player = obs.get("turn_player")
    text = f"turn {_num(obs.get('turn'))} · {_pn(turn_player)}'s turn · {obs.get('step', '?')}"
    if obs.get("over"):
        winner = obs.get("winner")
        text += " · DUEL OVER: " + ("draw" if winner is None else f"{_pn(winner)} wins")
    elif obs.get("to_act") is not None:
        text += f" · {_pn(obs['to_act'])} to act"
    line = f"{label} · {text}" if label else text
    ch = _changed(obs, prev, ("turn",), ("turn_player",), ("step",), ("over",), ("winner",), ("to_act",))
    return Cell("header", (line,), "header", ch, span=COLS, title=line)


def attack_cell(obs: dict, prev: dict | None, names: Namer | None = None) -> Cell:
    name = _namer(obs, prev, names)
    a = obs.get("attack")
    ch = _changed(obs, prev, ("attack",))
    if not isinstance(a, dict) or not a:
        return Cell("attack", ("no attack in progress",), "attack-none", ch, span=COLS, title="no attack in progress")
    flags = []
    if a.get("replay_pending"):
        flags.append("replay pending")
    if a.get("battle_ended"):
        flags.append("battle ended")
    if a.get("damage_calculated"):
        flags.append("damage calculated")
    text = f"attack: {name(a.get('attacker'))} → {name(a.get('target'))}"
    if flags:
        text += " (" + ", ".join(flags) + ")"
    title = text
    potential = a.get("potential_targets")
    if isinstance(potential, list):
        title += "; potential targets at declaration: " + (", ".join(name(u) for u in potential) or "none")
    return Cell("attack", (text,), "attack", ch, span=COLS, title=title)


def band_cells(obs: dict, prev: dict | None, names: Namer | None = None) -> list[Cell]:
    name = _namer(obs, prev, names)
    out = []
    chain = obs.get("chain") if isinstance(obs.get("chain"), list) else []
    prev_chain = _get(prev, ("chain",))
    if chain or (prev is not None and prev_chain):
        if chain:
            links = []
            for k, l in enumerate(chain):
                l = l if isinstance(l, dict) else {}
                text = f"{k + 1}: {l.get('card', '?')} ({_pn(l.get('controller'))}" + (", negated" if l.get("negated") else "") + ")"
                targets = l.get("targets")
                if isinstance(targets, list) and targets:
                    text += " → " + ", ".join(name(u) for u in targets)
                links.append(text)
            text = "chain " + ", ".join(links)
        else:
            text = "chain: resolved"
        out.append(Cell("chain", tuple(wrap(text, 90, 3)), "chain", _changed(obs, prev, ("chain",)), span=COLS, title=text))
    trig = obs.get("pending_triggers") if isinstance(obs.get("pending_triggers"), list) else []
    if trig:
        text = "triggers waiting: " + ", ".join(
            f"{t.get('card', '?')} ({_pn(t.get('player'))}{'' if t.get('mandatory') else ', optional'})" for t in trig if isinstance(t, dict)
        )
        out.append(Cell("triggers", tuple(wrap(text, 90, 2)), "note", _changed(obs, prev, ("pending_triggers",)), span=COLS, title=text))
    choice = obs.get("choice")
    if isinstance(choice, dict) and choice:
        options = choice.get("options") if isinstance(choice.get("options"), list) else []
        opts = ", ".join(str(o[0]) if isinstance(o, (list, tuple)) and o else str(o) for o in options)
        text = f"{_pn(choice.get('player'))} chooses ({choice.get('kind')}): {opts}"
        out.append(Cell("choice", tuple(wrap(text, 90, 2)), "note", _changed(obs, prev, ("choice",)), span=COLS, title=text))
    ling = obs.get("lingering") if isinstance(obs.get("lingering"), list) else []
    if ling:
        text = "lasting: " + ", ".join(
            f"{l.get('source', '?')}: {str(l.get('what', '?')).replace('_', ' ')} ({_pn(l.get('player'))})" for l in ling if isinstance(l, dict)
        )
        out.append(Cell("lingering", tuple(wrap(text, 90, 2)), "note", _changed(obs, prev, ("lingering",)), span=COLS, title=text))
    return out


def board_view(obs: dict, prev: dict | None = None, label: str = "", names: Namer | None = None) -> BoardView:
    """The grid for `obs`; with `prev` (the state before), the cells that differ are marked.
    `names` names a uid (default: from `obs`, then `prev`); a trace passes one that looks in
    every state of the trace (:class:`~bpcheck.invariants.naming.TraceNames`)."""
    obs = obs if isinstance(obs, dict) else {}
    name = _namer(obs, prev, names)
    view = BoardView(header_cell(obs, prev, label))
    top, bottom = 1, 0
    view.rows.append(info_cells(obs, prev, top))
    view.rows.append([spell_cell(obs, prev, top, i, name) for i in range(5)] + [spell_cell(obs, prev, top, None, name)])
    view.rows.append([monster_cell(obs, prev, top, i, name) for i in range(5)] + [Cell(f"{PN[top]}.gap", ("",), "gap")])
    view.rows.append([attack_cell(obs, prev, name)])
    view.rows.append([monster_cell(obs, prev, bottom, i, name) for i in range(5)] + [Cell(f"{PN[bottom]}.gap", ("",), "gap")])
    view.rows.append([spell_cell(obs, prev, bottom, i, name) for i in range(5)] + [spell_cell(obs, prev, bottom, None, name)])
    view.rows.append(info_cells(obs, prev, bottom))
    view.bands = band_cells(obs, prev, name)
    return view


def trace_names(cex) -> TraceNames:
    """The namer of a counterexample's trace: every observation of it, the initial one first."""
    return TraceNames([cex.initial_observation] + [s.after for s in cex.steps])


def step_caption(step) -> str:
    """`9. P1: replay: call off` for a counterexample step."""
    who = _pn(step.player) if step.player is not None else "--"
    return f"{step.index}. {who}: {step.action.get('label', '?')}"


def event_summary(events: list[dict], limit: int = 6) -> str:
    kinds = [str(e.get("kind", "?")) for e in events if isinstance(e, dict) and e.get("kind") != "passed"]
    if len(kinds) > limit:
        kinds = kinds[:limit] + [f"+{len(kinds) - limit} more"]
    return ", ".join(k.replace("_", " ") for k in kinds)
