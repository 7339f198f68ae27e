"""Engine traces (docs/traces.md): `bpcheck record` writes one, `bpcheck conform` judges one.

A trace is JSON lines: a header ``{"bpcheck_trace": 1, "board": PATH, "engine": NAME}`` (plus,
optionally, the engine's initial ``observation``), then one line per step:
``{"action": LABEL, "observation": OBS AFTER THE STEP, "events": [EVENT, ...]}``.

`conform` replays the board in the reference model. At each step the recorded action must be
legal there, the recorded observation and events must equal the reference's, and every state and
transition invariant must hold on the *recorded* observations and events (they judge the engine).
The first step where anything fails is the divergence: exit 1. A trace that conforms: exit 0. A
malformed trace: exit 2, with the file, the line and the problem.

Also here: replaying a differential-mode counterexample (invariant ``DIFF``) for `bpcheck replay`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpcheck.errors import InputError
from bpcheck.explorers.differential import (
    card_namer,
    diff_lines,
    diff_records,
    json_diff,
    obs_diff,
    show,
)
from bpcheck.invariants.base import Context, Invariant, NotJudged, Transition
from bpcheck.invariants.cards import CardFacts
from bpcheck.invariants.monitor import Monitor
from bpcheck.model.board import load_board
from bpcheck.model.reading import load_jsonl
from bpcheck.model.rulesets import DEFAULT_RULESET, RULESETS

# Stands for the monitor when a recorded step's events cannot even update it.
_MONITOR = Invariant("monitor", "The invariants' history is updated from the recorded events.", (), "transition", "accounting", lambda t: None)
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.model.events import Event
from bpcheck.reports.safe import json_text  # what an engine or a trace said, on one line
from bpcheck.reports.text import board_lines

TRACE_VERSION = 1
HEADER_KEYS = {"bpcheck_trace", "board", "engine", "observation", "ruleset"}
STEP_KEYS = {"action", "observation", "events"}
PN = ("P1", "P2")


# -- the format ------------------------------------------------------------------------------


@dataclass
class TraceStep:
    index: int  # 1-based step number
    line: int  # 1-based line number in the file
    action: str
    observation: dict
    events: list[dict]


@dataclass
class Trace:
    path: str
    board: str
    engine: str
    initial_observation: dict | None
    steps: list[TraceStep] = field(default_factory=list)
    ruleset: str | None = None  # the header's `ruleset`: the one the engine played (record writes it)
    played: str = DEFAULT_RULESET  # the ruleset conform judged the trace under (conform_trace sets it)


def _dumps(obj: Any) -> str:
    """One trace line: text as it is (U+2028 included: docs/bad-input.md), but a lone surrogate
    (an in-process engine's) as its JSON escape, which a UTF-8 file can hold."""
    return json_text(obj, hazards=False, separators=(",", ":"))


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null", int: "number", float: "number"}.get(
        type(v), type(v).__name__
    )


def load_trace(path: str) -> Trace:
    """Read and validate a trace file; any problem is an InputError naming ``file:line``.

    Read through the input layer (model/reading.py): a regular file of at most
    ``MAX_BYTES["trace"]``, UTF-8, lines split at ``\n`` only (a name holding U+2028, which
    `record` writes as is, stays one line), strict JSON on every line (no NaN, no duplicate keys,
    integers within ±(2**53 - 1), nesting within the depth limit)."""
    rows: list[tuple[int, Any]] = load_jsonl(path, path, "trace")
    if not rows:
        raise InputError(f"{path}:1", "", 'empty trace: the first line must be the header {"bpcheck_trace": 1, "board": ..., "engine": ...}')
    n, head = rows[0]
    where = f"{path}:{n}"
    if not isinstance(head, dict) or "bpcheck_trace" not in head:
        raise InputError(where, "", 'not a bpcheck trace: the first line must be the header {"bpcheck_trace": 1, "board": ..., "engine": ...}')
    if type(head["bpcheck_trace"]) is not int or head["bpcheck_trace"] != TRACE_VERSION:
        raise InputError(where, "bpcheck_trace", f"unsupported trace version {show(head['bpcheck_trace'])} (this bpcheck reads version {TRACE_VERSION})")
    for k in head:
        if k not in HEADER_KEYS:
            raise InputError(where, k, f"unknown header field (allowed: {', '.join(sorted(HEADER_KEYS))})")
    for k in ("board", "engine"):
        if not isinstance(head.get(k), str) or not head[k]:
            got = "missing" if k not in head else f"got {_type_name(head[k])} {show(head[k], 40)}"
            raise InputError(where, k, f"expected a non-empty string ({got})")
    init = head.get("observation")
    if "observation" in head and not isinstance(init, dict):
        raise InputError(where, "observation", f"expected a JSON object, got {_type_name(init)}")
    rs = head.get("ruleset")
    if "ruleset" in head and not (isinstance(rs, str) and rs in RULESETS):
        raise InputError(where, "ruleset", f"unknown ruleset {show(rs, 40)} (known: {', '.join(RULESETS)})")
    trace = Trace(path, head["board"], head["engine"], init, ruleset=rs)
    for k, (n, row) in enumerate(rows[1:], 1):
        where = f"{path}:{n}"
        if not isinstance(row, dict):
            raise InputError(where, "", f"expected a step object {{action, observation, events}}, got {_type_name(row)}")
        for key in row:
            if key not in STEP_KEYS:
                raise InputError(where, key, f"unknown step field (allowed: {', '.join(sorted(STEP_KEYS))})")
        for key, typ, name in (("action", str, "string (the action's label)"), ("observation", dict, "JSON object"), ("events", list, "array")):
            if key not in row:
                raise InputError(where, key, "missing (a step needs action, observation and events)")
            if not isinstance(row[key], typ):
                raise InputError(where, key, f"expected a {name}, got {_type_name(row[key])}")
        if not row["action"]:
            raise InputError(where, "action", "empty action label")
        for i, e in enumerate(row["events"]):
            if not isinstance(e, dict):
                raise InputError(where, f"events[{i}]", f"expected an event object, got {_type_name(e)}")
            if not isinstance(e.get("kind"), str):
                raise InputError(where, f"events[{i}].kind", "an event needs a string kind")
        trace.steps.append(TraceStep(k, n, row["action"], row["observation"], row["events"]))
    return trace


def _close(engine) -> None:
    """End an out-of-process engine's session (engines without close() need nothing)."""
    close = getattr(engine, "close", None)
    if callable(close):
        close()


def event_from_dict(d: dict) -> Event:
    """A recorded event as an Event (JSON arrays become tuples, as the model's events hold them)."""

    def conv(v: Any) -> Any:
        return tuple(conv(x) for x in v) if isinstance(v, list) else v

    return Event(d["kind"], tuple((k, conv(v)) for k, v in d.items() if k != "kind"))


# -- bpcheck record --------------------------------------------------------------------------


# -- bpcheck conform -------------------------------------------------------------------------


@dataclass
class Divergence:
    step: int  # 0: the initial observation
    line: int
    action: str | None
    player: Any
    legal: list[str] | None = None  # set when the action is not legal in the reference
    terminal: bool = False  # the reference state was terminal (nothing is legal)
    observation_diff: list = field(default_factory=list)
    events_diff: list = field(default_factory=list)
    engine_events: list[dict] = field(default_factory=list)
    reference_events: list[dict] = field(default_factory=list)
    broken: list[tuple[Invariant, str]] = field(default_factory=list)
    unreadable: list[tuple[Invariant, str]] = field(default_factory=list)
    before: dict | None = None
    after: dict | None = None

    def found(self) -> bool:
        return bool(self.legal is not None or self.observation_diff or self.events_diff or self.broken or self.unreadable)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"step": self.step, "line": self.line, "action": self.action, "legal_in_reference": self.legal is None}
        if self.legal is not None:
            d["reference_allows"] = self.legal
            d["reference_terminal"] = self.terminal
        d["observation_diff"] = diff_records(self.observation_diff)
        d["events_diff"] = diff_records(self.events_diff)
        d["broken"] = [{"invariant": inv.id, "rules": list(inv.rules), "message": msg} for inv, msg in self.broken]
        d["unreadable"] = [{"invariant": inv.id, "error": msg} for inv, msg in self.unreadable]
        return d


def _check(inv: Invariant, *args) -> tuple[str, Any]:
    """("ok"|"broken"|"unreadable", message): an invariant on recorded data that may not follow
    the observation schema (an exception means the data lacks what the invariant reads)."""
    try:
        v = inv.check(*args)
    except Exception as e:  # recorded data of the wrong shape
        return "unreadable", f"{type(e).__name__}: {e}"
    if v is None or v is True or isinstance(v, NotJudged):
        return "ok", None
    return "broken", str(v)


def _note(d: Divergence, inv: Invariant, res: tuple[str, Any]) -> None:
    if res[0] == "broken":
        d.broken.append((inv, res[1]))
    elif res[0] == "unreadable":
        d.unreadable.append((inv, res[1]))


def resolve_board(trace: Trace) -> str:
    p = Path(trace.board)
    if p.exists() or p.is_absolute():
        return trace.board
    alt = Path(trace.path).parent / p
    return str(alt) if alt.exists() else trace.board


def conform_trace(trace: Trace, invariants: list[Invariant], ruleset: str | None = None) -> tuple[Divergence | None, int]:
    """Replay `trace` in the reference model: the first divergence (or None) and the steps checked.
    The ruleset: the board's own, else the trace header's (the one recorded), else `ruleset`
    (--ruleset), else tcg (docs/traces.md); the invariants of other rulesets are left out, as
    `check` leaves them out (docs/rulesets.md)."""
    board_file = resolve_board(trace)
    if not Path(board_file).exists():
        raise InputError(f"{trace.path}:1", "board", f"no such board file {trace.board!r}")
    try:
        board = load_board(board_file, trace.board, ruleset=trace.ruleset or ruleset)
    except InputError as e:  # name the trace too: the board may serve many
        raise InputError(f"{trace.path}:1", "board", f"in board file {e.render()}") from None
    trace.played = board.ruleset or DEFAULT_RULESET
    if trace.ruleset is not None and trace.ruleset != trace.played:
        raise InputError(f"{trace.path}:1", "ruleset", f"the trace was recorded under {trace.ruleset}, but its board {trace.board} names ruleset {trace.played}")
    invariants = [i for i in invariants if trace.played in getattr(i, "rulesets", (trace.played,))]
    state_invs = [i for i in invariants if i.kind == "state"]
    trans_invs = [i for i in invariants if i.kind == "transition"]
    ref = ReferenceEngine()
    s = ref.start(board)
    ref_obs = ref.observe(s)
    prev = ref_obs
    cards = CardFacts.for_board(board)
    mon = Monitor.initial()  # the invariants' own history of the recorded steps
    if trace.initial_observation is not None:
        prev = trace.initial_observation
        d = Divergence(0, 1, None, None, after=prev)
        d.observation_diff = obs_diff(prev, ref_obs) if prev != ref_obs else []
        for inv in state_invs:
            _note(d, inv, _check(inv, prev, Context(mon, cards)))
        if d.found():
            return d, 0
    for st in trace.steps:
        player = prev.get("to_act") if isinstance(prev, dict) else None
        d = Divergence(st.index, st.line, st.action, player, before=prev, after=st.observation, engine_events=st.events)
        legal = ref.legal_actions(s)
        ra = next((a for a in legal if a.label == st.action), None)
        if ra is None:
            d.legal = [a.label for a in legal]
            d.terminal = ref.is_terminal(s)
            action_rec = {"kind": "unknown", "player": player, "label": st.action}
            s2 = None
        else:
            s2, rev = ref.apply(s, ra)
            robs = ref.observe(s2)
            d.reference_events = [e.to_dict() for e in rev]
            if st.observation != robs:
                d.observation_diff = obs_diff(st.observation, robs)
            if st.events != d.reference_events:
                d.events_diff = json_diff(st.events, d.reference_events, "events")
            action_rec = ra.to_dict()
        t = Transition(prev, action_rec, [event_from_dict(e) for e in st.events], st.observation, mon, cards)
        try:
            t.mon_after = mon.advance(t)
        except Exception as e:  # recorded events of the wrong shape: nothing to judge them with
            d.unreadable.append((_MONITOR, f"{type(e).__name__}: {e}"))
            return d, st.index
        mon = t.mon_after
        for inv in trans_invs:
            _note(d, inv, _check(inv, t))
        for inv in state_invs:
            _note(d, inv, _check(inv, st.observation, Context(mon, cards)))
        if d.found():
            return d, st.index
        s, prev = s2, st.observation
    return None, len(trace.steps)


def divergence_text(trace: Trace, d: Divergence, verbose: bool = True) -> list[str]:
    out: list[str] = []
    if d.step == 0:
        out.append(f"DIVERGES at the start (trace line {d.line}): the engine's initial observation")
    else:
        who = PN[d.player] if d.player in (0, 1) else "the engine"
        out.append(f"DIVERGES at step {d.step} (trace line {d.line}): {who} did {d.action!r}")
    if d.legal is not None:
        if d.terminal or not d.legal:
            out.append("  the rules allow no action here: the reference model's state is terminal (nothing more to play)")
        else:
            out.append(f"  the rules do not allow {d.action!r} here; they allow: " + "; ".join(d.legal))
    namer = card_namer(d.after, d.before)  # the cards of uid fields by name and zone (a uid is the same card on both sides)
    names = (namer, namer)
    if d.events_diff:
        k_eng = ", ".join(str(e.get("kind")) for e in d.engine_events)
        k_ref = ", ".join(str(e.get("kind")) for e in d.reference_events)
        out.append(f"  events: the engine's differ from the rules' (engine [{k_eng}], reference [{k_ref}]):")
        out.extend("    " + x for x in diff_lines(d.events_diff, limit=10, names=names))
    if d.observation_diff:
        what = "initial observation" if d.step == 0 else "observation after the step"
        n = len(d.observation_diff)
        out.append(f"  {what}: the engine's differs from the rules' at {n} path{'s' if n != 1 else ''} (engine vs reference):")
        out.extend("    " + x for x in diff_lines(d.observation_diff, limit=12, names=names))
    if d.legal is None and d.step > 0 and not d.events_diff and not d.observation_diff:
        out.append("  the recorded observation and events equal the reference model's")
    if d.broken:
        out.append("  invariants the recorded data breaks:")
        for inv, msg in d.broken:
            rules = f" [{', '.join(inv.rules)}]" if inv.rules else ""
            out.append(f"    {inv.id}{rules}: {msg}")
    else:
        out.append("  no invariant flags the recorded data: the step departs from the reference model (docs/rules.md)")
    if d.unreadable:
        out.append("  invariants that could not read the recorded data (it does not follow docs/model.md):")
        out.extend(f"    {inv.id}: {msg}" for inv, msg in d.unreadable)
    if verbose:
        try:
            if d.step > 0 and d.before is not None:
                out.append(f"board before step {d.step} (recorded):")
                out.extend("    " + x for x in board_lines(d.before))
            if d.after is not None:
                out.append("board after it (recorded):" if d.step > 0 else "initial board (recorded):")
                out.extend("    " + x for x in board_lines(d.after))
        except (KeyError, TypeError, IndexError, AttributeError):
            out.append("  (the recorded observation cannot be drawn: it does not follow docs/model.md)")
    return out


# -- bpcheck replay of a differential counterexample ----------------------------------------


