"""Scenarios: a board, a scripted line of play, and expectations along the way (executable rulings).

The format is documented in docs/scenarios.md. A scenario runs against any engine through the
engine interface only (:mod:`bpcheck.engines.interface`: ``start``, ``legal_actions``, ``apply``,
``observe``, ``is_terminal``); expectations read the engine's observations (the JSON snapshot
schema, docs/model.md), its action labels and its events, never the reference model's internals.

- :func:`parse_scenario` turns the parsed TOML of one file into a :class:`Scenario`, checking every
  field (types, rule IDs against the catalogue in docs/rules.md, card names against the board,
  event kinds and fields and observation paths against engines/schemas/protocol.schema.json).
  It is the one place scenario input is judged; :func:`load_scenario` reads a file and calls it.
- :func:`run_scenario` plays a scenario on an engine and returns a :class:`ScenarioResult`
  (``pass``, ``fail`` with a counterexample, or ``skipped`` when the engine refuses the board).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

from bpcheck.engines import make_engine
from bpcheck.engines.faults import SystemFault
from bpcheck.engines.interface import EngineRefusal, capabilities_of
from bpcheck.engines.jsonl import JsonlEngine, protocol_schema
from bpcheck.engines.reference import ReferenceEngine, board_observation
from bpcheck.errors import InputError
from bpcheck.model import fields as checks
from bpcheck.model.board import Board, board_from_dict, load_board, parse_toml, read_text, with_default_ruleset
from bpcheck.model.cards import choice_options
from bpcheck.model.cmdline import input_files
from bpcheck.model.engine import PROTECTION_OPTIONS, Rules
from bpcheck.model.rulesets import DEFAULT_RULESET, RULESETS

PLAYERS = ("P1", "P2")
MAX_ADVANCE = 500  # passes one `until` may take before it gives up
CORE_OBSERVATION = ("turn", "step", "phase", "over", "winner", "to_act", "players", "attack", "chain")

TOP_KEYS = {"name", "source", "rules", "ruleset", "description", "board", "step", "line", "note"}
LINE_KEYS = {"note", "description", "step", "line"}
STEP_KEYS = {"do", "until", "legal", "not_legal", "offered", "never", "events", "no_events", "expect", "note"}
NAMED_EXPECT = {
    "step",
    "phase",
    "turn",
    "turn_player",
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
    "card",
    "count",
}
PILES = ("hand", "graveyard", "banished", "deck")
PLACES = ("monsters", "spells", "field", *PILES)
# observation fields holding card uids: `card` expectations and event tables name the cards
UID_FIELDS = {"declared_at", "equipped_with", "equipped_to", "attached_to", "linked_monster", "targets", "potential_targets"}
PLAYER_FIELDS = {"owner", "controller", "player", "from_player", "to_player"}
LINE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
PATH_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
SELECTOR = re.compile(r"^(.*) \[(P[12]) (M[1-5]|S[1-5]|FZ)\]$")
COUNT_PLACE = re.compile(r"^(P[12]) (" + "|".join(PLACES) + r")$")
ID = r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+"


# ---------------------------------------------------------------------------------------------
# The vocabularies a scenario is checked against


def rule_catalogue() -> frozenset[str]:
    """The rule IDs of docs/rules.md (one reading for boards and scenarios: bpcheck.model.fields)."""
    return checks.rule_catalogue()


@lru_cache(maxsize=1)
def _defs() -> dict:
    return protocol_schema()["$defs"]


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = _defs()[node["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in node:  # `X or null`: the X
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        if len(options) == 1:
            return _resolve(options[0])
    return node


def step_names() -> list[str]:
    return list(_defs()["step"]["enum"])


def event_kinds() -> list[str]:
    return sorted(k[len("event_") :] for k in _defs() if k.startswith("event_"))


def event_fields(kind: str) -> dict[str, dict]:
    props = dict(_defs()[f"event_{kind}"].get("properties", {}))
    props.pop("kind", None)
    return props


def _is_player(prop: dict) -> bool:
    return prop.get("$ref", "").endswith("/player") or prop.get("enum") in ([0, 1], [0, 1, None])


def observation_schema(path: list[str | int]) -> dict | None:
    """The schema node at a path into an observation, or None when the schema has no such path."""
    node = _resolve(_defs()["observation"])
    for tok in path:
        if isinstance(tok, int):
            if "items" not in node:
                return None
            node = _resolve(node["items"])
        else:
            props = node.get("properties")
            if props is None or tok not in props:
                return None
            node = _resolve(props[tok])
    return node


def parse_path(text: str) -> list[str | int] | None:
    out: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = PATH_TOKEN.match(text, pos)
        if not m or (pos == 0 and text.startswith(".")) or (pos > 0 and m.group(1) and text[pos] != "."):
            return None
        out.append(m.group(1) if m.group(1) else int(m.group(2)))
        pos = m.end()
    return out or None


def _generic(path: list[str | int]) -> str:
    """`players[1].monsters[0].modifiers` -> `players[].monsters[].modifiers` (the Capabilities syntax)."""
    s = ""
    for tok in path:
        s += "[]" if isinstance(tok, int) else (("." if s else "") + tok)
    return s


# ---------------------------------------------------------------------------------------------
# The parsed scenario


@dataclass
class Line:
    """A line of play: steps, then optional named continuations (forks) from where it ends."""

    steps: list[dict[str, Any]]
    lines: dict[str, "Line"] = field(default_factory=dict)
    note: str = ""


@dataclass
class Scenario:
    path: str
    name: str
    source: str
    rules: tuple[str, ...]
    board: Board
    root: Line
    board_file: bool = True  # False: an inline [board] table

    @property
    def steps(self) -> list[dict[str, Any]]:  # the common steps (compatibility)
        return self.root.steps

    def count_steps(self) -> int:
        def n(line: Line) -> int:
            return len(line.steps) + sum(n(sub) for sub in line.lines.values())

        return n(self.root)


@dataclass
class ScenarioResult:
    path: str
    name: str
    passed: bool
    failures: list[str] = field(default_factory=list)
    steps_run: int = 0
    rules: tuple[str, ...] = ()
    status: str = "pass"  # pass | fail | skipped
    reason: str = ""  # why the engine refused the board (skipped)
    engine: str = "reference"
    context: list[str] = field(default_factory=list)  # what the engine did where it failed
    not_judged: list[str] = field(default_factory=list)  # expectations on paths the engine does not observe
    ruleset: str = "tcg"  # the ruleset the scenario was played under (docs/rulesets.md)

    def _ruleset_note(self) -> str:
        """The ruleset, named when it is not the default (as check names it on a board line)."""
        return "" if self.ruleset == DEFAULT_RULESET else f" (ruleset {self.ruleset})"

    def counterexample(self) -> str:
        """The failure as text: what was expected, what the engine did, where."""
        if self.status == "skipped":
            return f"scenario {self.name!r} ({self.path}) skipped on {self.engine}{self._ruleset_note()}: {self.reason}"
        head = f"scenario {self.name!r} ({self.path}) failed on {self.engine}{self._ruleset_note()}:"
        return "\n".join([head, *(f"  {f}" for f in self.failures), *(f"    {c}" for c in self.context)])


# ---------------------------------------------------------------------------------------------
# Parsing and validation: every check of a scenario file's content is made here


class _Checker:
    """Field checks of one scenario file, naming `file: field: problem`."""

    def __init__(self, file: str, board: Board | None = None) -> None:
        self.file = file
        self.names: set[str] = set()
        self.effects: dict[str, set[str]] = {}
        self.options: set[str] = set()
        if board is not None:
            self.names = _board_names(board)
            for c in board.pool:
                self.effects[c.name] = {e.label for e in getattr(c, "effects", ()) if getattr(e, "label", "")}
                # the options a player may be asked to choose while an effect resolves ("choose_one")
                self.options.update(
                    label for e in getattr(c, "effects", ()) for o in e.ops if o.op == "choose_one" for label, _ops in choice_options(o)
                )
                # whether to apply an optional protection at damage calculation (DS-CALC-PROTECT-CHOICE)
                if any(st.apply == "battle_indestructible_once_per_turn" for st in getattr(c, "statics", ())):
                    self.options.update(PROTECTION_OPTIONS)

    def fail(self, where: str, problem: str) -> InputError:
        return InputError(self.file, where, problem)

    def keys(self, d: dict, allowed: Iterable[str], where: str) -> None:
        allowed = set(allowed)
        for k in d:
            if k not in allowed:
                raise self.fail(f"{where}.{k}" if where else k, f"unknown field (allowed: {', '.join(sorted(allowed))})")

    def type(self, v: Any, typ, where: str, what: str) -> Any:
        if isinstance(v, bool) and typ in (int, (int,)):
            raise self.fail(where, f"expected {what}, got boolean {v!r}")
        if not isinstance(v, typ):
            raise self.fail(where, f"expected {what}, got {type(v).__name__} {v!r}")
        return v

    def strings(self, v: Any, where: str, what: str = "a list of strings") -> list[str]:
        self.type(v, list, where, what)
        for j, x in enumerate(v):
            self.type(x, str, f"{where}[{j}]", "a string")
        return v

    def card(self, name: Any, where: str) -> None:
        self.type(name, str, where, "a card name")
        if name in self.names:
            return
        close = difflib.get_close_matches(name, sorted(self.names), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise self.fail(where, f"{name!r} is not a card on the board{hint}")

    def selector(self, sel: Any, where: str) -> None:
        self.type(sel, str, where, "a card name")
        m = SELECTOR.match(sel)
        self.card(m.group(1) if m else sel, where)

    def player(self, v: Any, where: str, extra: tuple[str, ...] = ()) -> None:
        if v not in (*PLAYERS, *extra):
            raise self.fail(where, f"expected one of {', '.join((*PLAYERS, *extra))}, got {v!r}")

    # -- action labels ----------------------------------------------------------------------

    def label(self, pattern: Any, where: str) -> None:
        """An action label or prefix must name cards on the board (a typo must not pass)."""
        self.type(pattern, str, where, "an action label")
        problem = _label_problem(pattern, self.names, self.effects, self.options)
        if problem:
            raise self.fail(where, problem)


def _board_names(board: Board) -> set[str]:
    """Every card name that can be met in this duel: cards on the board in any zone or pile, and
    the tokens of its card pool."""
    obs = board_observation(board)  # the board as drawn: cards the model does not play included
    names = set(_uid_names(obs).values())
    pool = {c.name: c for c in board.pool}
    for name in list(names):  # the tokens their effects create (`op = "tokens", token = NAME`)
        for eff in getattr(pool.get(name), "effects", ()):
            for op in eff.ops:
                token = op.get("token")
                if isinstance(token, str) and token in pool:
                    names.add(token)
    return names


FIXED_LABELS = ("pass", "end Battle Phase", "enter Battle Phase", "skip Battle Phase", "end turn", "replay: call off", "replay: attack direct")
VERBS = ("activate", "attack", "decline", "choose", "change position", "replay: attack")
_LOC = r"\[P[12] (?:M[1-5]|S[1-5]|FZ|hand|graveyard|banished|deck)(?: #\d+)?\]"


def _label_problem(pattern: str, names: set[str], effects: dict[str, set[str]], options: set[str] = frozenset()) -> str | None:
    if not pattern:
        return "an empty action label"
    if any(f == pattern or f.startswith(pattern + " ") for f in FIXED_LABELS) or pattern in VERBS or pattern == "replay:":
        return None
    verb = next((v for v in sorted(VERBS, key=len, reverse=True) if pattern.startswith(v + " ")), None)
    if verb is None:
        return f"{pattern!r} is not an action label (labels start with {', '.join(repr(v) for v in VERBS)} or are one of {', '.join(repr(f) for f in FIXED_LABELS)}; docs/model.md)"
    rest = pattern[len(verb) + 1 :]
    if verb == "choose" and (re.fullmatch(r"(ATK|DEF) \d+", rest) or rest in options):
        return None
    by_len = sorted(names, key=len, reverse=True)
    alt = "|".join(re.escape(n) for n in by_len)
    found: list[str] = []

    def sub(m: re.Match) -> str:
        found.append(m.group(0))
        return "\x00"

    skeleton = re.sub(rf"(?<![\w-])(?:{alt})(?![\w-])", sub, rest) if alt else rest
    skeleton = re.sub(rf"\x00 {_LOC}", "\x00", skeleton)
    # a label prefix may end in the first words of a name ("replay: attack Neo" matches
    # "replay: attack Neo the Magic Swordsman"): whole words only, at the very end
    words = {" ".join(n.split(" ")[:k]) for n in names for k in range(1, len(n.split(" ")))} - names
    tail = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    if tail:
        skeleton = re.sub(rf"(?<![\w-])(?:{tail})$", sub, skeleton)
    ref = "\x00"
    refs = rf"{ref}(?:, {ref})*"
    shapes = {
        "activate": rf"{ref}(?: \(([^()]*)\))?(?: \[{refs}\])?(?: -> {refs})?",
        "decline": ref,
        "attack": rf"{ref}(?: -> (?:{ref}|direct))?",
        "change position": ref,
        "choose": ref,
        "replay: attack": ref,
    }
    m = re.fullmatch(shapes[verb], skeleton)
    if m is None:
        leftover = [w for w in re.split(r" -> |, | \[| \(|\]|\)|\x00", skeleton) if w.strip() and w.strip() != "direct"]
        if leftover:
            bad = leftover[0].strip()
            close = difflib.get_close_matches(bad, sorted(names), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            return f"{pattern!r}: {bad!r} is not a card on the board{hint}"
        return f"{pattern!r} does not have the shape of a {verb!r} label (docs/model.md)"
    if verb == "activate" and m.group(1) is not None:
        card = found[0]
        if m.group(1) not in effects.get(card, set()):
            known = sorted(effects.get(card, set()))
            return f"{pattern!r}: {card!r} has no effect labelled {m.group(1)!r}" + (f" (its effects: {', '.join(known)})" if known else "")
    return None


def load_scenario(path: Path | str, display: str | None = None, cards_db: Any = None, ruleset: str | None = None) -> Scenario:
    """Read one scenario file and check it (:func:`parse_scenario`). `cards_db`: a card database
    whose cards its board may name (``--cards-db``, docs/boards.md). `ruleset`: the ruleset when
    neither the scenario nor its board names one (``--ruleset``, docs/rulesets.md)."""
    display = display or str(path)
    data = parse_toml(read_text(path, display, "scenario"), display)
    sc = parse_scenario(data, display, Path(path).parent, Path(display).parent, cards_db=cards_db)
    sc.board = with_default_ruleset(sc.board, ruleset)
    return sc


def parse_scenario(data: dict, display: str, base: Path, display_base: Path | None = None, cards_db: Any = None) -> Scenario:
    """Check the parsed content of one scenario file and build the :class:`Scenario`.

    `base` is the folder relative paths (``board = "..."``) are read from, `display_base` the same
    folder as messages name it. Raises :class:`InputError` (`file: field: problem`) on the first
    problem: unknown or mistyped fields, rule IDs not in docs/rules.md, card names not on the
    board, unknown event kinds or fields, observation paths the schema does not have."""
    display_base = display_base if display_base is not None else base
    ck = _Checker(display)
    ck.type(data, dict, "", "a table")
    ck.keys(data, TOP_KEYS, "")
    for key in ("name", "source"):
        if key not in data:
            raise ck.fail(key, "missing required field")
        ck.type(data[key], str, key, "a string")
    for key in ("description", "note"):
        if key in data:
            ck.type(data[key], str, key, "a string")
    for key in ("name", "source", "description", "note"):  # shown in every report: no control characters
        if key in data:
            (checks.check_name if key == "name" else checks.check_text)(data[key], display, key, "scenario name" if key == "name" else key)
    rules = ck.type(data.get("rules", None), list, "rules", "a list of rule IDs")
    if not rules:
        raise ck.fail("rules", "a scenario cites at least one rule ID from docs/rules.md")
    catalogue = rule_catalogue()
    for i, r in enumerate(rules):
        ck.type(r, str, f"rules[{i}]", "a rule ID")
        if r not in catalogue:
            close = difflib.get_close_matches(r, sorted(catalogue), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ck.fail(f"rules[{i}]", f"unknown rule ID {r!r} (not in docs/rules.md){hint}")
    if "board" not in data:
        raise ck.fail("board", "missing required field (a path to a board file, or an inline [board] table)")
    b = data["board"]
    if isinstance(b, str):
        try:
            board = load_board(base / b, str(display_base / b), cards_db=cards_db)
        except InputError as e:  # name the scenario too: the board may serve many
            raise InputError(display, "board", f"in board file {e.render()}") from None
    elif isinstance(b, dict):
        board = board_from_dict(b, display, "board", cards_db=cards_db)
    else:
        raise ck.fail("board", f"expected a path or a table, got {type(b).__name__}")
    if "ruleset" in data:  # the scenario's ruleset wins over its board's (docs/rulesets.md)
        rs = ck.type(data["ruleset"], str, "ruleset", "a ruleset name")
        if rs not in RULESETS:
            raise ck.fail("ruleset", f"unknown ruleset {rs!r} (known: {', '.join(RULESETS)})")
        board = replace(board, ruleset=rs)
    ck = _Checker(display, board)
    root = _parse_line(ck, data, "")
    return Scenario(display, data["name"], data["source"], tuple(rules), board, root, isinstance(b, str))


def _parse_line(ck: _Checker, d: dict, where: str) -> Line:
    steps = ck.type(d.get("step", []), list, f"{where}step", "an array of [[step]] tables")
    for i, st in enumerate(steps):
        _check_step(ck, st, f"{where}step[{i}]")
    lines: dict[str, Line] = {}
    if "line" in d:
        table = ck.type(d["line"], dict, f"{where}line", "a table of named lines ([line.NAME])")
        if len(table) < 1:
            raise ck.fail(f"{where}line", "no lines given")
        for name, sub in table.items():
            lw = f"{where}line.{name}"
            if not LINE_NAME.match(name):
                raise ck.fail(lw, "a line name is letters, digits, '-' and '_'")
            ck.type(sub, dict, lw, "a table")
            ck.keys(sub, LINE_KEYS, lw)
            for key in ("note", "description"):
                if key in sub:
                    ck.type(sub[key], str, f"{lw}.{key}", "a string")
            lines[name] = _parse_line(ck, sub, lw + ".")
    return Line(steps, lines, d.get("note", "") if where else "")


def _check_step(ck: _Checker, st: Any, where: str) -> None:
    ck.type(st, dict, where, "a table")
    ck.keys(st, STEP_KEYS, where)
    if "note" in st:
        ck.type(st["note"], str, f"{where}.note", "a string")
    if "do" in st:
        ck.label(st["do"], f"{where}.do")
    if "until" in st:
        ck.type(st["until"], str, f"{where}.until", "a step name")
        if st["until"] not in step_names():
            raise ck.fail(f"{where}.until", f"unknown step {st['until']!r} (steps: {', '.join(step_names())})")
    for key in ("legal", "not_legal", "offered", "never"):
        if key in st:
            ck.strings(st[key], f"{where}.{key}", "a list of action labels")
            for j, x in enumerate(st[key]):
                ck.label(x, f"{where}.{key}[{j}]")
    if "offered" in st and len(set(st["offered"])) != len(st["offered"]):
        raise ck.fail(f"{where}.offered", "a label is listed twice")
    for key in ("events", "no_events"):
        if key in st:
            ck.type(st[key], list, f"{where}.{key}", "a list of event kinds or event tables")
            for j, x in enumerate(st[key]):
                _check_event_pattern(ck, x, f"{where}.{key}[{j}]", allow_count=key == "events")
    if "expect" in st:
        _check_expect(ck, ck.type(st["expect"], dict, f"{where}.expect", "a table"), f"{where}.expect")


def _check_event_pattern(ck: _Checker, x: Any, where: str, allow_count: bool) -> None:
    kinds = event_kinds()
    if isinstance(x, str):
        kind = x
        if kind not in kinds:
            raise ck.fail(where, f"unknown event kind {kind!r} (docs/model.md)")
        return
    ck.type(x, dict, where, "an event kind or a table { kind = ..., field = value }")
    if "kind" not in x:
        raise ck.fail(f"{where}.kind", "missing required field")
    kind = ck.type(x["kind"], str, f"{where}.kind", "an event kind")
    if kind not in kinds:
        raise ck.fail(f"{where}.kind", f"unknown event kind {kind!r} (docs/model.md)")
    props = event_fields(kind)
    for k, v in x.items():
        fw = f"{where}.{k}"
        if k == "kind":
            continue
        if k == "count":
            if not allow_count:
                raise ck.fail(fw, "`count` belongs in `events` (in `no_events` every match is forbidden)")
            ck.type(v, int, fw, "a whole number")
            if v < 0:
                raise ck.fail(fw, f"must not be negative, got {v}")
            continue
        if k in props:
            prop = props[k]
            if k == "winner":
                ck.player(v, fw, ("draw",))
            elif _is_player(prop):
                ck.player(v, fw)
            elif k in UID_FIELDS or k == "targets":
                for j, n in enumerate(ck.strings(v, fw, "a list of card names")):
                    ck.card(n, f"{fw}[{j}]")
            elif k in ("card", "attacker", "target"):
                if not (k == "target" and v == "none"):
                    ck.card(v, fw)
            else:
                _check_json_value(ck, prop, v, fw)
        elif f"{k}_uid" in props:
            if v != "none":
                ck.card(v, fw)
        else:
            known = sorted(set(props) | {p[: -len("_uid")] for p in props if p.endswith("_uid")} | {"count"})
            raise ck.fail(fw, f"a {kind!r} event has no field {k!r} (fields: {', '.join(known)})")


def _check_json_value(ck: _Checker, prop: dict, v: Any, where: str) -> None:
    prop = _resolve(prop)
    if "enum" in prop:
        if not any(type(e) is type(v) and e == v for e in prop["enum"] if e is not None):  # 1 is not True
            raise ck.fail(where, f"expected one of {', '.join(repr(e) for e in prop['enum'] if e is not None)}, got {v!r}")
        return
    if "const" in prop:
        if v != prop["const"]:
            raise ck.fail(where, f"expected {prop['const']!r}, got {v!r}")
        return
    types = prop.get("type")
    types = [types] if isinstance(types, str) else (types or [])
    py = {"integer": int, "string": str, "boolean": bool, "array": list, "object": dict, "number": (int, float)}
    if types and not any(isinstance(v, py[t]) and not (t in ("integer", "number") and isinstance(v, bool)) for t in types if t in py):
        raise ck.fail(where, f"expected {' or '.join(t for t in types if t != 'null')}, got {type(v).__name__} {v!r}")


def _check_expect(ck: _Checker, exp: dict, where: str) -> None:
    for key, want in exp.items():
        kw = f"{where}.{key}"
        if key in ("step",):
            if want not in step_names():
                raise ck.fail(kw, f"unknown step {want!r} (steps: {', '.join(step_names())})")
        elif key == "phase":
            _check_json_value(ck, observation_schema(["phase"]), want, kw)
        elif key in ("turn",):
            ck.type(want, int, kw, "a turn number")
        elif key in ("turn_player",):
            ck.player(want, kw)
        elif key == "to_act":
            ck.player(want, kw, ("none",))
        elif key == "winner":
            ck.player(want, kw, ("draw", "none"))
        elif key in ("replay_pending", "over"):
            ck.type(want, bool, kw, "true or false")
        elif key == "lp":
            ck.type(want, list, kw, "[P1 LP, P2 LP]")
            if len(want) != 2:
                raise ck.fail(kw, f"expected [P1 LP, P2 LP], got {len(want)} values")
            for j, x in enumerate(want):
                ck.type(x, int, f"{kw}[{j}]", "a whole number")
        elif key == "attack":
            ck.type(want, str, kw, '"A -> B", "A -> direct" or "none"')
            if want != "none":
                a, sep, t = want.partition(" -> ")
                if not sep:
                    raise ck.fail(kw, f'expected "A -> B", "A -> direct" or "none", got {want!r}')
                ck.card(a, kw)
                if t != "direct":
                    ck.card(t, kw)
        elif key == "where":
            ck.type(want, dict, kw, "a table { card = place }")
            for name, loc in want.items():
                ck.card(name, f"{kw}.{name}")
                for j, one in enumerate(loc if isinstance(loc, list) else [loc]):
                    ck.type(one, str, f"{kw}.{name}" + (f"[{j}]" if isinstance(loc, list) else ""), "a place")
                    if one != "gone" and not re.fullmatch(r"P[12] (?:M[1-5]|S[1-5]|FZ|hand|graveyard|banished|deck)", one):
                        raise ck.fail(f"{kw}.{name}", f"unknown place {one!r} (e.g. 'P2 M1', 'P1 S2', 'P1 FZ', 'P1 graveyard', 'gone')")
        elif key in ("attacks", "atk", "def", "position"):
            ck.type(want, dict, kw, "a table { card = value }")
            for name, v in want.items():
                ck.selector(name, f"{kw}.{name}")
                if key == "position":
                    _check_json_value(ck, {"$ref": "#/$defs/position"}, v, f"{kw}.{name}")
                else:
                    ck.type(v, int, f"{kw}.{name}", "a whole number")
        elif key == "chain":
            for j, n in enumerate(ck.strings(want, kw, "a list of card names (bottom first)")):
                ck.card(n, f"{kw}[{j}]")
        elif key == "card":
            ck.type(want, dict, kw, "a table { card = { field = value } }")
            mon, spl = _resolve(_defs()["monster"])["properties"], _resolve(_defs()["spell"])["properties"]
            for sel, fields in want.items():
                sw = f"{kw}.{sel}"
                ck.selector(sel, sw)
                ck.type(fields, dict, sw, "a table { field = value }")
                for f, v in fields.items():
                    fw = f"{sw}.{f}"
                    prop = mon.get(f) or spl.get(f)
                    if prop is None or f in ("uid", "card"):
                        raise ck.fail(fw, f"not a field of a card on the field (fields: {', '.join(sorted((set(mon) | set(spl)) - {'uid', 'card'}))})")
                    if f in PLAYER_FIELDS:
                        ck.player(v, fw)
                    elif f in UID_FIELDS:
                        if isinstance(v, list):
                            for j, n in enumerate(ck.strings(v, fw, "a list of card names")):
                                ck.card(n, f"{fw}[{j}]")
                        elif v != "none":
                            ck.card(v, fw)
                    else:
                        _check_json_value(ck, prop, v, fw)
        elif key == "count":
            ck.type(want, dict, kw, 'a table { "P1 field" = N or { card = N } }')
            for place, v in want.items():
                pw = f"{kw}.{place}"
                if not COUNT_PLACE.match(place):
                    raise ck.fail(pw, f"unknown place {place!r} (P1 or P2, then one of: {', '.join(PLACES)})")
                if isinstance(v, dict):
                    for name, n in v.items():
                        ck.card(name, f"{pw}.{name}")
                        ck.type(n, int, f"{pw}.{name}", "a whole number")
                else:
                    ck.type(v, int, pw, "a whole number or a table { card = N }")
        else:
            path = parse_path(key)
            if path is None:
                raise ck.fail(kw, f"neither an expectation ({', '.join(sorted(NAMED_EXPECT))}) nor a path into the observation")
            node = observation_schema(path)
            if node is None:
                raise ck.fail(kw, "not a path into the observation (docs/model.md, engines/schemas/protocol.schema.json)")
            _check_json_value(ck, node, want, kw)


# ---------------------------------------------------------------------------------------------
# Reading observations (the documented JSON snapshot schema only)


def _uid_names(obs: dict) -> dict[int, str]:
    out: dict[int, str] = {}
    for p in obs.get("players", []):
        for zone in ("monsters", "spells"):
            for c in p.get(zone, []):
                if c:
                    out[c["uid"]] = c["card"]
        if p.get("field_zone"):
            out[p["field_zone"]["uid"]] = p["field_zone"]["card"]
        for pile in PILES:
            for c in p.get(pile, []):
                out[c["uid"]] = c["card"]
    for link in obs.get("chain", []):
        out.setdefault(link["card_uid"], link["card"])
    return out


def _on_field(obs: dict) -> list[tuple[str, dict]]:
    """(place, card) for every card on the field: `P1 M1`, `P2 S3`, `P1 FZ`."""
    out = []
    for side, p in enumerate(obs["players"]):
        pn = PLAYERS[side]
        for i, m in enumerate(p["monsters"]):
            if m:
                out.append((f"{pn} M{i + 1}", m))
        for i, c in enumerate(p["spells"]):
            if c:
                out.append((f"{pn} S{i + 1}", c))
        if p["field_zone"]:
            out.append((f"{pn} FZ", p["field_zone"]))
    return out


def _locations(obs: dict, name: str) -> list[str]:
    out = [place for place, c in _on_field(obs) if c["card"] == name]
    for side, p in enumerate(obs["players"]):
        for pile in PILES:
            out += [f"{PLAYERS[side]} {pile}" for c in p[pile] if c["card"] == name]
    return sorted(out)


def _select(obs: dict, sel: str, monsters_only: bool = False) -> tuple[dict | None, str]:
    m = SELECTOR.match(sel)
    name, place = (m.group(1), f"{m.group(2)} {m.group(3)}") if m else (sel, None)
    hits = [(pl, c) for pl, c in _on_field(obs) if c["card"] == name and (place is None or pl == place)]
    if monsters_only:
        hits = [(pl, c) for pl, c in hits if " M" in pl]
    if len(hits) == 1:
        return hits[0][1], ""
    if not hits:
        return None, f"{sel!r}: not on the field (it is: {', '.join(_locations(obs, name)) or 'nowhere'})"
    return None, f"{sel!r}: {len(hits)} on the field ({', '.join(pl for pl, _ in hits)}); name one as '{name} [P1 M1]'"


def _player_name(v: Any) -> str:
    return "none" if v is None else PLAYERS[v] if v in (0, 1) else repr(v)


class _Names:
    """uid -> card name over every observation of a run (uids are stable within a duel)."""

    def __init__(self) -> None:
        self.map: dict[int, str] = {}

    def add(self, obs: dict) -> None:
        self.map.update(_uid_names(obs))

    def __call__(self, uid: Any) -> str:
        if uid is None:
            return "none"
        return self.map.get(uid, f"#{uid}")


def check_expect(obs: dict, exp: dict[str, Any], names: _Names | None = None, unobserved: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """Compare an observation with a scenario's `expect` table: (mismatches, not judged)."""
    if names is None:
        names = _Names()
        names.add(obs)
    bad: list[str] = []
    skipped: list[str] = []
    unobserved = tuple(unobserved)

    def cmp(what: str, expected: Any, actual: Any) -> None:
        if expected != actual:
            bad.append(f"expect.{what}: expected {expected!r}, got {actual!r}")

    def hidden(path: str) -> bool:
        for u in unobserved:
            if path == u or path.startswith(u + ".") or path.startswith(u + "["):
                skipped.append(f"expect.{what_key}: not judged, the engine does not observe {u}")
                return True
        return False

    what_key = ""
    for key, want in exp.items():
        what_key = key
        if key in ("step", "phase", "over", "turn"):
            cmp(key, want, obs[key])
        elif key == "turn_player":
            cmp(key, want, _player_name(obs["turn_player"]))
        elif key == "lp":
            cmp("lp", want, [p["lp"] for p in obs["players"]])
        elif key == "replay_pending":
            cmp("replay_pending", want, bool(obs["attack"] and obs["attack"]["replay_pending"]))
        elif key == "attack":
            a = obs["attack"]
            actual = "none" if a is None else f"{names(a['attacker'])} -> {'direct' if a['target'] is None else names(a['target'])}"
            cmp("attack", want, actual)
        elif key == "winner":
            w = obs["winner"]
            cmp("winner", want, ("draw" if obs["over"] else "none") if w is None else PLAYERS[w])
        elif key == "to_act":
            cmp("to_act", want, _player_name(obs["to_act"]))
        elif key == "where":
            for name, loc in want.items():
                locs = _locations(obs, name)
                if isinstance(loc, list):
                    cmp(f"where.{name}", sorted(loc), locs)
                else:
                    cmp(f"where.{name}", [loc] if loc != "gone" else [], locs)
        elif key in ("attacks", "atk", "def", "position"):
            field_name = {"attacks": "attacks_declared"}.get(key, key)
            for sel, value in want.items():
                m, why = _select(obs, sel, monsters_only=True)
                if m is None:
                    bad.append(f"expect.{key}.{sel}: {why}")
                    continue
                what_key = f"{key}.{sel}"
                if not hidden(f"players[].monsters[].{field_name}"):
                    cmp(f"{key}.{sel}", value, m[field_name])
        elif key == "chain":
            cmp("chain", want, [link["card"] for link in obs["chain"]])
        elif key == "card":
            for sel, fields in want.items():
                c, why = _select(obs, sel)
                if c is None:
                    bad.append(f"expect.card.{sel}: {why}")
                    continue
                zone = "monsters" if "atk" in c or "position" in c else "spells"
                for f, value in fields.items():
                    what_key = f"card.{sel}.{f}"
                    if hidden(f"players[].{zone}[].{f}"):
                        continue
                    if f not in c:
                        bad.append(f"expect.card.{sel}.{f}: the engine's observation of {sel!r} has no field {f!r}")
                        continue
                    actual = c[f]
                    if f in PLAYER_FIELDS:
                        actual = _player_name(actual)
                    elif f in UID_FIELDS:
                        actual = [names(u) for u in actual] if isinstance(actual, list) else names(actual)
                        if isinstance(value, list) and isinstance(actual, list):
                            value, actual = sorted(value), sorted(actual)
                    cmp(f"card.{sel}.{f}", value, actual)
        elif key == "count":
            for place, v in want.items():
                side, what = place.split(" ")
                p = obs["players"][PLAYERS.index(side)]
                if what in ("monsters", "spells"):
                    cards = [c for c in p[what] if c]
                elif what == "field":
                    cards = [c for c in p["monsters"] + p["spells"] + [p["field_zone"]] if c]
                else:
                    cards = list(p[what])
                if isinstance(v, dict):
                    for name, n in v.items():
                        cmp(f"count.{place}.{name}", n, sum(1 for c in cards if c["card"] == name))
                else:
                    cmp(f"count.{place}", v, len(cards))
        else:  # a path into the observation, compared as raw JSON
            path = parse_path(key) or []
            if hidden(_generic(path)):
                continue
            node: Any = obs
            try:
                for tok in path:
                    node = node[tok]
            except (KeyError, IndexError, TypeError):
                bad.append(f"expect.{key}: not in the engine's observation")
                continue
            cmp(key, want, node)
    return bad, skipped


def _fmt_event(e: Any, names: _Names) -> str:
    parts = []
    for k, v in e.data:
        if k in PLAYER_FIELDS or k == "winner":
            v = _player_name(v)
        elif k.endswith("_uid"):
            k, v = k[: -len("_uid")], names(v)
            if any(k2 == k for k2, _ in e.data):
                continue
        elif k == "targets" and isinstance(v, (list, tuple)):
            v = [names(u) for u in v]
        parts.append(f"{k}={v}")
    return f"{e.kind}({', '.join(parts)})"


def _event_matches(e: Any, pat: Any, names: _Names) -> bool:
    if isinstance(pat, str):
        return e.kind == pat
    if e.kind != pat["kind"]:
        return False
    data = dict(e.data)
    for k, want in pat.items():
        if k in ("kind", "count"):
            continue
        if k in data:
            got = data[k]
            if k == "winner":
                got = "draw" if got is None else PLAYERS[got]
            elif k in PLAYER_FIELDS:
                got = _player_name(got)
            elif k in UID_FIELDS and isinstance(got, (list, tuple)):
                got, want = sorted(names(u) for u in got), sorted(want)
            elif got is None:
                got = "none"
            elif isinstance(got, tuple):
                got = list(got)
        elif f"{k}_uid" in data:
            got = names(data[f"{k}_uid"])
        else:
            return False
        if got != want:
            return False
    return True


def _fmt_pattern(pat: Any) -> str:
    if isinstance(pat, str):
        return pat
    fields = ", ".join(f"{k}={v}" for k, v in pat.items() if k not in ("kind", "count"))
    n = f" exactly {pat['count']} times" if "count" in pat else ""
    return f"{pat['kind']}({fields}){n}"


# ---------------------------------------------------------------------------------------------
# Running a scenario on an engine


def _matches(label: str, pattern: str) -> bool:
    return label == pattern or label.startswith(pattern + " ")


def _find_action(actions: list, pattern: str) -> tuple[Any, str]:
    exact = [a for a in actions if a.label == pattern]
    if exact:
        return exact[0], ""
    pref = [a for a in actions if _matches(a.label, pattern)]
    if len(pref) == 1:
        return pref[0], ""
    if len(pref) > 1:
        return None, f"do {pattern!r} is ambiguous: {', '.join(a.label for a in pref)}"
    return None, f"{pattern!r} is not legal here; legal: {_offered(actions)}"


def _offered(actions: list) -> str:
    return ", ".join(a.label for a in actions) or "(nothing)"


class _Fault(Exception):
    pass


def _played(path: list[str]) -> str:
    out: list[str] = []
    for label in path:
        if out and (out[-1] == label or out[-1].startswith(label + " x")) and label == "pass":
            n = int(out[-1].split(" x")[1]) + 1 if " x" in out[-1] else 2
            out[-1] = f"pass x{n}"
        else:
            out.append(label)
    return "; ".join(out) or "(nothing yet)"


class _Run:
    def __init__(self, sc: Scenario, engine: Any) -> None:
        self.sc = sc
        self.engine = engine
        self.caps = capabilities_of(engine)
        self.names = _Names()
        self.res = ScenarioResult(sc.path, sc.name, True, rules=sc.rules, engine=getattr(engine, "name", "engine"), ruleset=sc.board.ruleset or DEFAULT_RULESET)

    # -- engine calls: whatever an engine raises is its fault, recorded as ENGINE-FAULT -----

    def call(self, what: str, fn, *args):
        try:
            return fn(*args)
        except InputError:
            raise
        except SystemFault as e:
            raise _Fault(f"ENGINE-FAULT ({e.kind}) in {what}: {e.message}") from None
        except Exception as e:  # noqa: BLE001 - the engine under test misbehaved
            raise _Fault(f"ENGINE-FAULT in {what}: the engine raised {type(e).__name__}: {e}") from None

    def observe(self, state) -> dict:
        obs = self.call("observe", self.engine.observe, state)
        if not isinstance(obs, dict):
            raise _Fault(f"ENGINE-FAULT (schema) in observe: an observation is a JSON object, got {type(obs).__name__}")
        missing = [k for k in CORE_OBSERVATION if k not in obs]
        if missing:
            raise _Fault(f"ENGINE-FAULT (schema) in observe: the observation lacks {', '.join(missing)} (docs/model.md)")
        try:
            self.names.add(obs)
        except (KeyError, TypeError, AttributeError) as e:
            raise _Fault(f"ENGINE-FAULT (schema) in observe: the observation's cards do not follow the schema ({type(e).__name__}: {e})") from None
        return obs

    def actions(self, state) -> list:
        acts = list(self.call("legal_actions", self.engine.legal_actions, state))
        for a in acts:
            if not isinstance(getattr(a, "label", None), str):
                raise _Fault(f"ENGINE-FAULT (schema) in legal_actions: an action without a string label: {a!r}")
        return acts

    def apply(self, state, action) -> tuple[Any, list]:
        nxt, evs = self.call(f"apply({action.label!r})", self.engine.apply, state, action)
        return nxt, list(evs)

    def start(self):
        return self.call("start", self.engine.start, self.sc.board)

    # -- the run --------------------------------------------------------------------------------

    def run(self) -> ScenarioResult:
        res = self.res
        if not self.sc.board_file and _is_cmd_engine(self.engine):
            res.status, res.passed = "skipped", False
            res.reason = "a cmd: engine is sent the board file (docs/protocol.md) and this scenario's board is an inline [board] table"
            return res
        try:
            state = self.engine.start(self.sc.board)
        except EngineRefusal as e:
            res.status, res.passed, res.reason = "skipped", False, e.reason or "the engine refused the board"
            return res
        except InputError:
            raise
        except Exception as e:  # noqa: BLE001
            msg = f"ENGINE-FAULT ({e.kind}) in start: {e.message}" if isinstance(e, SystemFault) else f"ENGINE-FAULT in start: the engine raised {type(e).__name__}: {e}"
            res.failures.append(msg)
        else:
            self.line(self.sc.root, state, [], "")
        res.passed = not res.failures
        res.status = "pass" if res.passed else "fail"
        return res

    def line(self, line: Line, state, path: list[str], prefix: str) -> None:
        where = prefix.rstrip(".") or "start"
        try:
            if state is None:  # an engine that cannot keep states: play the line again from the start
                state = self.replay(path)
            for i, st in enumerate(line.steps):
                where = f"{prefix}step[{i}]"
                state = self.step(st, state, path, where)
                self.res.steps_run += 1
                if state is None:
                    return
        except _Fault as e:
            self.res.failures.append(f"{where}: {e}")
            self.res.context.append(f"played: {_played(path)}")
            return
        for k, (name, sub) in enumerate(line.lines.items()):
            keep = k == 0 or self.caps.cloning
            self.line(sub, state if keep else None, list(path), f"{prefix}line.{name}.")

    def replay(self, path: list[str]):
        state = self.start()
        for label in path:
            act = next((a for a in self.actions(state) if a.label == label), None)
            if act is None:
                raise _Fault(f"ENGINE-FAULT (nondeterministic): replaying the common steps from the start, the engine no longer offers {label!r}")
            state, _ = self.apply(state, act)
        return state

    def step(self, st: dict, state, path: list[str], where: str):
        """Play one step; return the next state, or None when the step failed (recorded)."""
        label = f" (do {st['do']!r})" if "do" in st else (f" (until {st['until']!r})" if "until" in st else "")
        where = where + label
        fails: list[str] = []
        events: list = []
        never = st.get("never", [])
        obs = self.observe(state)

        def check_never(acts: list, obs: dict) -> None:
            for pat in never:
                hits = [a.label for a in acts if _matches(a.label, pat)]
                if hits:
                    fails.append(f"never {pat!r}: offered in {obs['step']} ({_player_name(obs['to_act'])} to act): {', '.join(hits)}")

        acts: list | None = None
        if "until" in st:
            target, n = st["until"], 0
            while obs["step"] != target:
                acts = self.actions(state)
                check_never(acts, obs)
                if obs["over"] or self.call("is_terminal", self.engine.is_terminal, state):
                    fails.append(f"until {target!r}: the duel ended in {obs['step']} before {target!r} was reached (winner {_player_name(obs['winner'])})")
                    break
                p = next((a for a in acts if a.label == "pass"), None)
                if p is None:
                    fails.append(
                        f"until {target!r}: passing cannot reach it: after {n} passes the engine is in {obs['step']} "
                        f"({_player_name(obs['to_act'])} to act) and offers no 'pass' (a real decision is needed); offered: {_offered(acts)}"
                    )
                    break
                if n >= MAX_ADVANCE:
                    fails.append(f"until {target!r}: not reached after {MAX_ADVANCE} passes (still in {obs['step']})")
                    break
                state, evs = self.apply(state, p)
                events += evs
                path.append(p.label)
                n += 1
                obs = self.observe(state)
                acts = None
            if fails:
                return self.failed(where, fails, acts or self.actions(state), events, path, obs)
        if acts is None:
            acts = self.actions(state)
        if never:
            check_never(acts, obs)
        for pat in st.get("legal", []):
            if not any(_matches(a.label, pat) for a in acts):
                fails.append(f"legal {pat!r}: not offered")
        for pat in st.get("not_legal", []):
            hits = [a.label for a in acts if _matches(a.label, pat)]
            if hits:
                fails.append(f"not_legal {pat!r}: offered: {', '.join(hits)}")
        if "offered" in st:
            want, got = set(st["offered"]), {a.label for a in acts}
            if want != got:
                extra, missing = sorted(got - want), sorted(want - got)
                fails.append(
                    "offered: expected exactly "
                    + ", ".join(st["offered"])
                    + (f"; missing: {', '.join(missing)}" if missing else "")
                    + (f"; also offered: {', '.join(extra)}" if extra else "")
                )
        before_do, obs_before = acts, obs
        if "do" in st:
            act, why = _find_action(acts, st["do"])
            if act is None:
                fails.append(why)
                return self.failed(where, fails, acts, events, path, obs)
            state, evs = self.apply(state, act)
            events += evs
            path.append(act.label)
            obs = self.observe(state)
        for pat in st.get("events", []):
            hits = sum(1 for e in events if _event_matches(e, pat, self.names))
            want_n = pat.get("count") if isinstance(pat, dict) else None
            if (want_n is None and hits == 0) or (want_n is not None and hits != want_n):
                fails.append(f"events: expected {_fmt_pattern(pat)}, {hits} matched (the engine's events of the step are below)")
        for pat in st.get("no_events", []):
            hits = [e for e in events if _event_matches(e, pat, self.names)]
            if hits:
                fails.append(f"no_events: expected no {_fmt_pattern(pat)}; the engine gave: {', '.join(_fmt_event(e, self.names) for e in hits)}")
        if "expect" in st:
            try:
                bad, skipped = check_expect(obs, st["expect"], self.names, self.caps.unobserved)
            except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
                bad, skipped = [f"expect: the engine's observation does not follow the schema ({type(e).__name__}: {e})"], []
            fails += bad
            self.res.not_judged += [f"{where}: {s}" for s in skipped]
        if fails:
            return self.failed(where, fails, before_do, events, path, obs_before, obs if "do" in st else None)
        return state

    def failed(self, where: str, fails: list[str], acts: list, events: list, path: list[str], obs: dict, after: dict | None = None) -> None:
        """Record a failed step with what the engine did: the state before the step's action,
        what it offered there, the events of the step, the state after, the line played."""

        def state(o: dict) -> str:
            lp = "/".join(str(p["lp"]) for p in o.get("players", []))
            return f"{o.get('step')} (turn {o.get('turn')}, {_player_name(o.get('to_act'))} to act, LP {lp})"

        self.res.failures += [f"{where}: {f}" for f in fails]
        self.res.context += [
            f"at {where}: {'before the action ' if after is not None else ''}the engine is in {state(obs)}",
            f"offered: {_offered(acts)}",
            f"events of the step: {', '.join(_fmt_event(e, self.names) for e in events) or '(none)'}",
            *([f"after the action: {state(after)}"] if after is not None else []),
            f"played: {_played(path)}",
        ]
        return None


def _is_cmd_engine(engine: Any) -> bool:
    return isinstance(engine, JsonlEngine)


def run_scenario(sc: Scenario, engine: Any = None) -> ScenarioResult:
    """Play `sc` on `engine` (an object implementing the engine interface; default: the
    reference model). A :class:`~bpcheck.model.engine.Rules` subclass is accepted too and wrapped
    in a reference engine. The engine is used through the interface only."""
    if engine is None:
        engine = ReferenceEngine()
    elif isinstance(engine, type) and issubclass(engine, Rules):
        engine = ReferenceEngine(engine, name=engine.__name__)
    return _Run(sc, engine).run()


def scenario_files(paths: list[str]) -> list[tuple[Path, str]]:
    return input_files(paths, ".toml", "scenario")


def _close(engine: Any) -> None:
    close = getattr(engine, "close", None)
    if callable(close):
        close()


# ---------------------------------------------------------------------------------------------
# `bpcheck scenario` (cli/main.py parses the arguments and calls this)


def run_scenario_files(files, spec: str, spare: Any, progress, cards_db: str | None = None, boards_db: Any = None, ruleset: str | None = None) -> Iterator[tuple[str, "ScenarioResult | None", "InputError | None"]]:
    """Run each scenario file on a fresh engine of ``spec`` (``spare``: one already made, used
    first; ``cards_db``: the engine's card database, ``boards_db``: the cards a board may name
    besides the pool's, ``--cards-db``): ``(display, result, None)`` for each file run, ``(display, None, error)`` for each
    that is bad input. Each engine is closed, and the progress told, before its result is given."""
    spare_engines = [spare]
    try:
        for path, display in files:
            engine = None
            task = progress.start(display.rsplit("/", 1)[-1])
            try:
                sc = load_scenario(path, display, cards_db=boards_db, ruleset=ruleset)
                engine = spare_engines.pop() if spare_engines else make_engine(spec, cards_db=cards_db)
                res = run_scenario(sc, engine)
            except InputError as e:
                progress.finish(task, failed=True)
                yield display, None, e
                continue
            finally:
                if engine is not None:
                    _close(engine)
            progress.finish(task, failed=res.status == "fail")
            yield display, res, None
    finally:
        progress.close()
        for engine in spare_engines:
            _close(engine)
