"""Scenarios: a board, a scripted line of play, and expectations along the way.

The format is documented in docs/scenarios.md. Expectations read observations and events only
(:mod:`bpcheck.model.observe`), never rules internals. ``run_scenario`` returns a
:class:`ScenarioResult`; a malformed scenario file raises :class:`~bpcheck.errors.InputError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpcheck.errors import InputError
from bpcheck.model import inputs
from bpcheck.model.board import Board, board_from_dict, load_board, parse_toml, read_text
from bpcheck.model.engine import PLAYER_NAMES, Action, Rules
from bpcheck.model.events import Event
from bpcheck.model.observe import observe
from bpcheck.reports.board import card_name

TOP_KEYS = {"name", "source", "rules", "description", "board", "step", "note"}
STEP_KEYS = {"do", "legal", "not_legal", "events", "no_events", "expect", "note"}
EXPECT_KEYS = {
    "step",
    "phase",
    "lp",
    "replay_pending",
    "attack",
    "over",
    "winner",
    "to_act",
    "where",
    "attacks",
    "atk",
    "def",
    "position",
    "chain",
}


@dataclass
class ScenarioResult:
    path: str
    name: str
    passed: bool
    failures: list[str] = field(default_factory=list)
    steps_run: int = 0
    rules: tuple[str, ...] = ()


@dataclass
class Scenario:
    path: str
    name: str
    source: str
    rules: tuple[str, ...]
    board: Board
    steps: list[dict[str, Any]]


def _check_keys(d: dict, allowed: set[str], file: str, path: str) -> None:
    for k in d:
        if k not in allowed:
            raise InputError(file, f"{path}.{k}" if path else k, f"unknown field (allowed: {', '.join(sorted(allowed))})")


def _type(v: Any, typ, file: str, path: str, what: str) -> Any:
    if isinstance(v, bool) and typ in (int, (int,)):
        raise InputError(file, path, f"expected {what}, got boolean {v!r}")
    if not isinstance(v, typ):
        raise InputError(file, path, f"expected {what}, got {type(v).__name__} {v!r}")
    return v


def load_scenario(path: Path | str, display: str | None = None) -> Scenario:
    display = display or str(path)
    data = parse_toml(read_text(path, display), display)
    _check_keys(data, TOP_KEYS, display, "")
    for key in ("name", "source"):
        if key not in data:
            raise InputError(display, key, "missing required field")
        _type(data[key], str, display, key, "a string")
    rules = _type(data.get("rules", None), list, display, "rules", "a list of rule IDs")
    if not rules:
        raise InputError(display, "rules", "a scenario cites at least one rule ID from docs/rules.md")
    for i, r in enumerate(rules):
        _type(r, str, display, f"rules[{i}]", "a rule ID")
    if "board" not in data:
        raise InputError(display, "board", "missing required field (a path to a board file, or an inline [board] table)")
    b = data["board"]
    if isinstance(b, str):
        bpath = (Path(path).parent / b)
        try:
            board = load_board(bpath, str(Path(display).parent / b))
        except InputError as e:  # name the scenario too: the board may serve many
            raise InputError(display, "board", f"in board file {e.render()}") from None
    elif isinstance(b, dict):
        board = board_from_dict(b, display, "board")
    else:
        raise InputError(display, "board", f"expected a path or a table, got {type(b).__name__}")
    steps = _type(data.get("step", []), list, display, "step", "an array of [[step]] tables")
    for i, st in enumerate(steps):
        where = f"step[{i}]"
        _type(st, dict, display, where, "a table")
        _check_keys(st, STEP_KEYS, display, where)
        if "do" in st:
            _type(st["do"], str, display, f"{where}.do", "an action label")
        for key in ("legal", "not_legal", "events", "no_events"):
            if key in st:
                _type(st[key], list, display, f"{where}.{key}", "a list of strings")
                for j, x in enumerate(st[key]):
                    _type(x, str, display, f"{where}.{key}[{j}]", "a string")
                if key in ("events", "no_events"):
                    inputs.check_event_kinds(st[key], display, f"{where}.{key}")
        if "expect" in st:
            _type(st["expect"], dict, display, f"{where}.expect", "a table")
            _check_keys(st["expect"], EXPECT_KEYS, display, f"{where}.expect")
            inputs.check_expect(st["expect"], board.pool, display, f"{where}.expect")
    return Scenario(display, data["name"], data["source"], tuple(rules), board, steps)


# ---------------------------------------------------------------------------------------------


def _matches(label: str, pattern: str) -> bool:
    return label == pattern or label.startswith(pattern + " ")


def _find_action(actions: list[Action], pattern: str) -> tuple[Action | None, str]:
    exact = [a for a in actions if a.label == pattern]
    if exact:
        return exact[0], ""
    pref = [a for a in actions if _matches(a.label, pattern)]
    if len(pref) == 1:
        return pref[0], ""
    if len(pref) > 1:
        return None, f"{pattern!r} is ambiguous: {', '.join(a.label for a in pref)}"
    return None, f"{pattern!r} is not legal here; legal: {', '.join(a.label for a in actions) or '(none)'}"


def _player(v: Any) -> int | None:
    if v in ("P1", "P2"):
        return PLAYER_NAMES.index(v)
    if v == "draw" or v == "none":
        return None
    raise ValueError(v)


def _locations(obs: dict, name: str) -> list[str]:
    out = []
    for side, p in enumerate(obs["players"]):
        pn = PLAYER_NAMES[side]
        for i, m in enumerate(p["monsters"]):
            if m and m["card"] == name:
                out.append(f"{pn} M{i + 1}")
        for i, c in enumerate(p["spells"]):
            if c and c["card"] == name:
                out.append(f"{pn} S{i + 1}")
        if p["field_zone"] and p["field_zone"]["card"] == name:
            out.append(f"{pn} FZ")
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in p[pile]:
                if c["card"] == name:
                    out.append(f"{pn} {pile}")
    return sorted(out)


def _field_monsters(obs: dict, name: str) -> list[dict]:
    return [m for p in obs["players"] for m in p["monsters"] if m and m["card"] == name]


_name_of = card_name  # the reports' lookup of a card name by uid in an observation


def check_expect(obs: dict, exp: dict[str, Any]) -> list[str]:
    """Compare an observation with a scenario's `expect` table; return the mismatches."""
    bad: list[str] = []

    def cmp(what: str, expected: Any, actual: Any) -> None:
        if expected != actual:
            bad.append(f"{what}: expected {expected!r}, got {actual!r}")

    for key, want in exp.items():
        if key == "step":
            cmp("step", want, obs["step"])
        elif key == "phase":
            cmp("phase", want, obs["phase"])
        elif key == "lp":
            cmp("lp", want, [p["lp"] for p in obs["players"]])
        elif key == "replay_pending":
            cmp("replay_pending", want, bool(obs["attack"] and obs["attack"]["replay_pending"]))
        elif key == "attack":
            a = obs["attack"]
            actual = "none" if a is None else f"{_name_of(obs, a['attacker'])} -> {_name_of(obs, a['target'])}"
            cmp("attack", want, actual)
        elif key == "over":
            cmp("over", want, obs["over"])
        elif key == "winner":
            w = obs["winner"]
            cmp("winner", want, "draw" if w is None else PLAYER_NAMES[w])
        elif key == "to_act":
            t = obs["to_act"]
            cmp("to_act", want, "none" if t is None else PLAYER_NAMES[t])
        elif key == "where":
            for name, loc in want.items():
                locs = _locations(obs, name)
                if isinstance(loc, list):
                    cmp(f"where {name!r}", sorted(loc), locs)
                else:
                    cmp(f"where {name!r}", [loc] if loc != "gone" else [], locs)
        elif key in ("attacks", "atk", "def", "position"):
            field_name = {"attacks": "attacks_declared", "atk": "atk", "def": "def", "position": "position"}[key]
            for name, value in want.items():
                ms = _field_monsters(obs, name)
                if len(ms) != 1:
                    bad.append(f"{key} {name!r}: expected exactly one {name!r} on the field, found {len(ms)}")
                    continue
                cmp(f"{key} {name!r}", value, ms[0][field_name])
        elif key == "chain":
            cmp("chain", want, [l["card"] for l in obs["chain"]])
    return bad


def run_scenario(sc: Scenario, rules_cls: type[Rules] = Rules) -> ScenarioResult:
    rules = rules_cls(sc.board.pool)
    s = sc.board.state
    res = ScenarioResult(sc.path, sc.name, True, rules=sc.rules)
    for i, st in enumerate(sc.steps):
        where = f"step[{i}]" + (f" (do {st['do']!r})" if "do" in st else "")
        actions = rules.legal_actions(s)
        for pat in st.get("legal", []):
            if not any(_matches(a.label, pat) for a in actions):
                res.failures.append(f"{where}: expected {pat!r} to be legal; legal: {', '.join(a.label for a in actions) or '(none)'}")
        for pat in st.get("not_legal", []):
            hits = [a.label for a in actions if _matches(a.label, pat)]
            if hits:
                res.failures.append(f"{where}: expected {pat!r} not to be legal, but legal: {', '.join(hits)}")
        events: list[Event] = []
        if "do" in st:
            act, why = _find_action(actions, st["do"])
            if act is None:
                res.failures.append(f"{where}: {why}")
                break
            s, events = rules.apply(s, act)
        kinds = [e.kind for e in events]
        for k in st.get("events", []):
            if k not in kinds:
                res.failures.append(f"{where}: expected event {k!r}; got {kinds}")
        for k in st.get("no_events", []):
            if k in kinds:
                res.failures.append(f"{where}: expected no {k!r} event; got {kinds}")
        if "expect" in st:
            try:
                for m in check_expect(observe(rules, s), st["expect"]):
                    res.failures.append(f"{where}: {m}")
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                raise InputError(sc.path, f"step[{i}].expect", f"malformed expectation ({e})") from None
        res.steps_run = i + 1
        if res.failures:
            break
    res.passed = not res.failures
    return res


def scenario_files(paths: list[str]) -> list[tuple[Path, str]]:
    from bpcheck.model.inputs import input_files  # folders expanded; empty/unreadable folder: error

    return input_files(paths, ".toml", "scenario")
