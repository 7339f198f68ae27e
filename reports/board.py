"""A board as a grid of cells, read from an observation (docs/model.md), for the graphical reports.

The DOT trace graph and the HTML step viewer draw the same grid: the opponent (P2) on top, then
the middle band (the attack in progress), then P1, then the chain and what else is pending. Each
cell knows whether it changed since the previous state (its part of the observation differs),
so both formats emphasise the same cells. Nothing here knows a rule: it lays out what the
observation says.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any

PN = ("P1", "P2")
COLS = 6  # five zones + the Field Zone / the pile column
POSITION = {"attack": "ATK", "defense": "DEF", "facedown": "SET"}


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
    """The card name of a uid anywhere in the observation (``direct`` for None)."""
    if uid is None:
        return "direct"
    for p in obs["players"]:
        for zone in ("monsters", "spells"):
            for c in p[zone]:
                if c and c["uid"] == uid:
                    return c["card"]
        if p["field_zone"] and p["field_zone"]["uid"] == uid:
            return p["field_zone"]["card"]
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in p[pile]:
                if c["uid"] == uid:
                    return c["card"]
    return f"#{uid}"


def wrap(text: str, width: int = 15, max_lines: int = 2) -> list[str]:
    lines = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=True) or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    return lines


def _get(obs: dict | None, path: tuple) -> Any:
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


def monster_cell(obs: dict, prev: dict | None, side: int, i: int) -> Cell:
    m = obs["players"][side]["monsters"][i]
    key = f"{PN[side]}.monsters.{i}"
    ch = _changed(obs, prev, ("players", side, "monsters", i))
    if m is None:
        return Cell(key, ("·",), "empty", ch, title=f"{PN[side]} Monster Zone {i + 1}: empty")
    pos = POSITION.get(m["position"], m["position"])
    star = "*" if (m["atk"], m["def"]) != (m["base_atk"], m["base_def"]) else ""
    lines = wrap(m["card"])
    strong = len(lines)
    lines.append(f"{pos} {m['atk']}/{m['def']}{star}")
    flags = []
    if m["attacks_declared"]:
        flags.append(f"attacked {m['attacks_declared']}")
    if m["cannot_attack_this_turn"]:
        flags.append("can't attack")
    if m["destroyed_by_battle"]:
        flags.append("destroyed")
    if m["owner"] != m["controller"]:
        flags.append(f"owner {PN[m['owner']]}")
    if flags:
        lines.extend(wrap(", ".join(flags), 18, 2))
    title = f"{PN[side]} Monster Zone {i + 1}: {m['card']} (uid {m['uid']}), {m['position']}, ATK {m['atk']} DEF {m['def']}"
    if star:
        title += f" (base {m['base_atk']}/{m['base_def']}; " + ", ".join(
            f"{md['source']} {md['stat']} {md['amount']:+}" if isinstance(md.get("amount"), int) else str(md.get("source"))
            for md in m["modifiers"]
        ) + ")"
    if flags:
        title += "; " + ", ".join(flags)
    kind = {"ATK": "atk", "DEF": "def", "SET": "set"}.get(pos, "atk")
    return Cell(key, tuple(lines), kind, ch, title=title, strong=strong)


def spell_cell(obs: dict, prev: dict | None, side: int, i: int | None) -> Cell:
    p = obs["players"][side]
    if i is None:
        c, key, zone, path = p["field_zone"], f"{PN[side]}.field", "Field Zone", ("players", side, "field_zone")
    else:
        c, key, zone, path = p["spells"][i], f"{PN[side]}.spells.{i}", f"Spell & Trap Zone {i + 1}", ("players", side, "spells", i)
    ch = _changed(obs, prev, path)
    if c is None:
        return Cell(key, ("field" if i is None else "·",), "empty", ch, title=f"{PN[side]} {zone}: empty")
    lines = wrap(c["card"])
    strong = len(lines)
    state = "face-up" if c["face_up"] else ("set this turn" if c["set_this_turn"] else "set")
    if c.get("on_chain"):
        state += ", on chain"
    lines.append(state)
    for k in ("equipped_to", "attached_to", "linked_monster"):
        if c.get(k) is not None:
            lines.extend(wrap("→ " + card_name(obs, c[k]), 17, 2))
    kind = (c.get("kind") or "spell") if c["face_up"] else "spell-set"
    title = f"{PN[side]} {zone}: {c['card']} (uid {c['uid']}), {state}"
    return Cell(key, tuple(lines), kind if kind in ("spell", "trap", "spell-set") else "spell", ch, title=title, strong=strong)


def info_cells(obs: dict, prev: dict | None, side: int) -> list[Cell]:
    p = obs["players"][side]
    out = [
        Cell(
            f"{PN[side]}.lp",
            (f"{PN[side]}  LP {p['lp']}",),
            "info-lp",
            _changed(obs, prev, ("players", side, "lp")),
            span=2,
            title=f"{PN[side]}: {p['lp']} Life Points",
        )
    ]
    for pile, short in (("hand", "hand"), ("graveyard", "GY"), ("banished", "banished"), ("deck", "deck")):
        cards = [c["card"] for c in p[pile]]
        lines = [f"{short} {len(cards)}"]
        if cards and pile != "deck":
            lines.extend(wrap(", ".join(cards), 16, 2))
        out.append(
            Cell(
                f"{PN[side]}.{pile}",
                tuple(lines),
                "info",
                _changed(obs, prev, ("players", side, pile)),
                title=f"{PN[side]} {pile}: " + (", ".join(cards) if cards else "empty"),
            )
        )
    return out


def header_cell(obs: dict, prev: dict | None, label: str) -> Cell:
    text = f"turn {obs['turn']} · {PN[obs['turn_player']]}'s turn · {obs['step']}"
    if obs["over"]:
        text += " · DUEL OVER: " + ("draw" if obs["winner"] is None else f"{PN[obs['winner']]} wins")
    elif obs.get("to_act") is not None:
        text += f" · {PN[obs['to_act']]} to act"
    line = f"{label} · {text}" if label else text
    ch = _changed(obs, prev, ("turn",), ("turn_player",), ("step",), ("over",), ("winner",), ("to_act",))
    return Cell("header", (line,), "header", ch, span=COLS, title=line)


def attack_cell(obs: dict, prev: dict | None) -> Cell:
    a = obs.get("attack")
    ch = _changed(obs, prev, ("attack",))
    if not a:
        return Cell("attack", ("no attack in progress",), "attack-none", ch, span=COLS, title="no attack in progress")
    flags = []
    if a.get("replay_pending"):
        flags.append("replay pending")
    if a.get("battle_ended"):
        flags.append("battle ended")
    if a.get("damage_calculated"):
        flags.append("damage calculated")
    text = f"attack: {card_name(obs, a['attacker'])} → {card_name(obs, a['target'])}"
    if flags:
        text += " (" + ", ".join(flags) + ")"
    return Cell("attack", (text,), "attack", ch, span=COLS, title=text)


def band_cells(obs: dict, prev: dict | None) -> list[Cell]:
    out = []
    chain = obs.get("chain") or []
    prev_chain = _get(prev, ("chain",))
    if chain or (prev is not None and prev_chain):
        if chain:
            links = [
                f"{k + 1}: {l['card']} ({PN[l['controller']]}" + (", negated" if l.get("negated") else "") + ")" for k, l in enumerate(chain)
            ]
            text = "chain " + ", ".join(links)
        else:
            text = "chain: resolved"
        out.append(Cell("chain", tuple(wrap(text, 90, 3)), "chain", _changed(obs, prev, ("chain",)), span=COLS, title=text))
    trig = obs.get("pending_triggers") or []
    if trig:
        text = "triggers waiting: " + ", ".join(f"{t['card']} ({PN[t['player']]}{'' if t.get('mandatory') else ', optional'})" for t in trig)
        out.append(Cell("triggers", tuple(wrap(text, 90, 2)), "note", _changed(obs, prev, ("pending_triggers",)), span=COLS, title=text))
    choice = obs.get("choice")
    if choice:
        opts = ", ".join(str(o[0]) for o in choice.get("options", []))
        text = f"{PN[choice['player']]} chooses ({choice.get('kind')}): {opts}"
        out.append(Cell("choice", tuple(wrap(text, 90, 2)), "note", _changed(obs, prev, ("choice",)), span=COLS, title=text))
    ling = obs.get("lingering") or []
    if ling:
        text = "lasting: " + ", ".join(f"{l['source']}: {l['what'].replace('_', ' ')} ({PN[l['player']]})" for l in ling)
        out.append(Cell("lingering", tuple(wrap(text, 90, 2)), "note", _changed(obs, prev, ("lingering",)), span=COLS, title=text))
    return out


def board_view(obs: dict, prev: dict | None = None, label: str = "") -> BoardView:
    """The grid for `obs`; with `prev` (the state before), the cells that differ are marked."""
    view = BoardView(header_cell(obs, prev, label))
    top, bottom = 1, 0
    view.rows.append(info_cells(obs, prev, top))
    view.rows.append([spell_cell(obs, prev, top, i) for i in range(5)] + [spell_cell(obs, prev, top, None)])
    view.rows.append([monster_cell(obs, prev, top, i) for i in range(5)] + [Cell(f"{PN[top]}.gap", ("",), "gap")])
    view.rows.append([attack_cell(obs, prev)])
    view.rows.append([monster_cell(obs, prev, bottom, i) for i in range(5)] + [Cell(f"{PN[bottom]}.gap", ("",), "gap")])
    view.rows.append([spell_cell(obs, prev, bottom, i) for i in range(5)] + [spell_cell(obs, prev, bottom, None)])
    view.rows.append(info_cells(obs, prev, bottom))
    view.bands = band_cells(obs, prev)
    return view


def step_caption(step) -> str:
    """`9. P1: replay: call off` for a counterexample step."""
    who = PN[step.player] if step.player is not None else "--"
    return f"{step.index}. {who}: {step.action.get('label', '?')}"


def event_summary(events: list[dict], limit: int = 6) -> str:
    kinds = [e.get("kind", "?") for e in events if e.get("kind") != "passed"]
    if len(kinds) > limit:
        kinds = kinds[:limit] + [f"+{len(kinds) - limit} more"]
    return ", ".join(k.replace("_", " ") for k in kinds)
