"""Differential mode: explore an engine under test in lockstep with the reference model.

:class:`DifferentialSystem` is a transition system over *pairs* of states: the engine's (with its
observation) and the reference model's in the corresponding state. In every state it compares the
legal actions the two offer (by label); after every action it compares the next observations
(the whole JSON) and the events (kinds and fields). The first disagreement is reported as a
violation of the pseudo-invariant ``DIFF`` ("actions", "transition" or "state" kind) with a
message that says which side offered or did what, and a compact JSON diff: the paths that differ.

Once the two sides disagree on a transition there is no corresponding reference state any more:
the successor carries the engine's state alone and exploration goes on over the engine (every
invariant is still checked there), without further comparisons. Lockstep states are
fingerprinted by the engine's observation (in lockstep it equals the reference's, which
determines the reference state); states past a disagreement get a separate fingerprint space, so
the two kinds are never merged.

The engine side goes through an :class:`~bpcheck.explorers.checking.EngineSystem`, so the
invariants, goals and any engine-fault handling there apply unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import orjson
import xxhash

from bpcheck.explorers.checking import EngineSystem, Goal, state_fingerprint
from bpcheck.invariants.base import Invariant
from bpcheck.model.board import Board
from bpcheck.engines.reference import ReferenceEngine

DIFF = "DIFF"


def _not_called(*_args: Any) -> None:  # DIFF is checked by DifferentialSystem itself
    return None


DIFF_INVARIANT = Invariant(
    DIFF,
    "The engine under test agrees with the reference model: in every state it offers the same actions, "
    "and after every action it shows the same observation and produces the same events.",
    (),
    "structural",
    "differential",
    _not_called,
)


# -- a compact JSON diff --------------------------------------------------------------------


class _Absent:
    def __repr__(self) -> str:
        return "absent"


ABSENT: Any = _Absent()


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def json_diff(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """The paths at which two JSON values differ, as ``(path, a's value, b's value)`` in document
    order; a side that lacks the path has :data:`ABSENT`. Tuples count as arrays; ``true`` is not
    ``1``."""
    out: list[tuple[str, Any, Any]] = []
    _diff(a, b, path, out)
    return out


def _diff(a: Any, b: Any, path: str, out: list) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            sub = f"{path}.{k}" if path else str(k)
            if k in b:
                _diff(a[k], b[k], sub, out)
            else:
                out.append((sub, a[k], ABSENT))
        for k in b:
            if k not in a:
                out.append((f"{path}.{k}" if path else str(k), ABSENT, b[k]))
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(a):
                out.append((sub, ABSENT, b[i]))
            elif i >= len(b):
                out.append((sub, a[i], ABSENT))
            else:
                _diff(a[i], b[i], sub, out)
        return
    if isinstance(a, (dict, list, tuple)) or isinstance(b, (dict, list, tuple)) or not _same_scalar(a, b):
        out.append((path or "(the whole value)", a, b))


def show(v: Any, width: int = 70) -> str:
    """A value as compact JSON, shortened to ``width`` characters."""
    if v is ABSENT:
        return "absent"
    text = json.dumps(v, separators=(", ", ": "), ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def diff_lines(diff: Sequence[tuple[str, Any, Any]], left: str = "engine", right: str = "reference", limit: int = 8) -> list[str]:
    """``path: engine X, reference Y`` lines, at most ``limit`` of them (and a count of the rest)."""
    lines = [f"{p}: {left} {show(x)}, {right} {show(y)}" for p, x, y in diff[:limit]]
    if len(diff) > limit:
        lines.append(f"... and {len(diff) - limit} more paths")
    return lines


def diff_records(diff: Sequence[tuple[str, Any, Any]], left: str = "engine", right: str = "reference") -> list[dict]:
    """The diff as JSON records; a side that lacks the path is left out."""
    out = []
    for p, x, y in diff:
        d: dict[str, Any] = {"path": p}
        if x is not ABSENT:
            d[left] = x
        if y is not ABSENT:
            d[right] = y
        out.append(d)
    return out


def _kinds(events: Sequence[dict]) -> str:
    return "[" + ", ".join(str(e.get("kind")) if isinstance(e, dict) else "?" for e in events) + "]"


def _quote(labels: Sequence[str]) -> str:
    return ", ".join(repr(x) for x in labels)


def actions_disagreement(engine_labels: Sequence[str], reference_labels: Sequence[str]) -> str | None:
    """What one side offers and the other does not, or None when they offer the same labels."""
    ref = set(reference_labels)
    eng = set(engine_labels)
    extra = [x for x in engine_labels if x not in ref]
    missing = [x for x in reference_labels if x not in eng]
    parts = []
    if extra:
        parts.append(f"engine offers {_quote(extra)} which the reference does not")
    if missing:
        parts.append(f"reference offers {_quote(missing)} which the engine does not")
    return "; ".join(parts) or None


def transition_disagreement(label: str, eng_obs: dict, ref_obs: dict, eng_events: list[dict], ref_events: list[dict]) -> str | None:
    """How the engine's step differs from the reference's (observation and events), or None."""
    parts = []
    if eng_events != ref_events:
        ed = json_diff(eng_events, ref_events, "events")
        if ed:
            head = f"the events differ: engine {_kinds(eng_events)}, reference {_kinds(ref_events)}"
            parts.append(head + ": " + "; ".join(diff_lines(ed, limit=4)))
    if eng_obs != ref_obs:
        od = json_diff(eng_obs, ref_obs)
        if od:
            n = len(od)
            parts.append(f"the observations differ at {n} path{'s' if n != 1 else ''}: " + "; ".join(diff_lines(od, limit=6)))
    if not parts:
        return None
    return f"after {label!r}, " + "; ".join(parts)


# -- the lockstep transition system ---------------------------------------------------------


def _engine_half(s):
    """The inner EngineSystem's state (engine state, observation, monitor) of a lockstep state."""
    return (s[0], s[1], s[4])


class StepInfo(list):
    """The engine's events for one step (a list, as an EngineSystem step gives), plus whether the
    step was compared with the reference and what disagreed (None: nothing)."""

    compared: bool = False
    diff: str | None = None


class DifferentialSystem:
    """An engine under test and the reference model in lockstep, as one transition system.

    States are ``(engine state, engine observation, reference state, reference observation,
    monitor)``; the reference half is ``None`` once the two sides have disagreed on the way there.
    The engine half with the monitor, ``(s[0], s[1], s[4])``, is the inner EngineSystem's state.
    """

    def __init__(
        self,
        engine,
        board: Board,
        invariants: Sequence[Invariant],
        goals: Sequence[Goal] = (),
        reference=None,
    ) -> None:
        self.inner = EngineSystem(engine, board, [i for i in invariants if i.id != DIFF], goals)
        self.engine = engine
        self.board = board
        self.reference = reference if reference is not None else ReferenceEngine()
        self._ref_init = self.reference.start(board)
        self._ref_cache: tuple[Any, dict] | None = None
        self._roots: list = []

    def _ref_actions(self, ref_state) -> dict:
        c = self._ref_cache
        if c is None or c[0] is not ref_state:
            c = (ref_state, {a.label: a for a in self.reference.legal_actions(ref_state)})
            self._ref_cache = c
        return c[1]

    # -- TransitionSystem --------------------------------------------------------------------

    def initial_states(self):
        out = []
        for st, obs, mon in self.inner.initial_states():
            out.append((st, obs, self._ref_init, self.reference.observe(self._ref_init), mon))
        self._roots = out
        return out

    def actions(self, s):
        return self.inner.actions(_engine_half(s))

    def step(self, s, a):
        (st2, obs2, mon2), events = self.inner.step(_engine_half(s), a)
        info = StepInfo(events)
        ref_st = s[2]
        if ref_st is None:
            return (st2, obs2, None, None, mon2), info
        ra = self._ref_actions(ref_st).get(a.label)
        if ra is None:  # offered by the engine alone: reported by check_actions
            return (st2, obs2, None, None, mon2), info
        ref_st2, ref_events = self.reference.apply(ref_st, ra)
        ref_obs2 = self.reference.observe(ref_st2)
        info.compared = True
        if obs2 != ref_obs2 or list(events) != list(ref_events):
            info.diff = transition_disagreement(a.label, obs2, ref_obs2, [e.to_dict() for e in events], [e.to_dict() for e in ref_events])
        if info.diff is not None:
            return (st2, obs2, None, None, mon2), info
        return (st2, obs2, ref_st2, ref_obs2, mon2), info

    def is_terminal(self, s) -> bool:
        return self.inner.is_terminal(_engine_half(s))

    def fingerprint(self, s) -> int:
        return state_fingerprint(s[1], s[4], seed=0 if s[2] is not None else 1)

    def action_kind(self, a) -> str:
        return self.inner.action_kind(a)

    def action_name(self, a) -> str:
        return a.label

    def check_state(self, s):
        out = self.inner.check_state(_engine_half(s))
        if s[2] is not None:
            out.append((DIFF, self._state_disagreement(s) or True))
        return out

    def _state_disagreement(self, s) -> str | None:
        if any(s is r for r in self._roots) and s[1] != s[3]:  # steps compare the successors' observations
            od = json_diff(s[1], s[3])
            if od:
                return "the initial observations differ: " + "; ".join(diff_lines(od, limit=6))
        eng_t = bool(self.inner.is_terminal(_engine_half(s)))
        ref_t = bool(self.reference.is_terminal(s[2]))
        if eng_t != ref_t:
            if eng_t:
                return "engine says this state is terminal (nothing more to play), the reference does not"
            return "reference says this state is terminal (nothing more to play), the engine does not"
        return None

    def check_actions(self, s, actions):
        out = self.inner.check_actions(_engine_half(s), actions)
        if s[2] is not None:
            ref_labels = list(self._ref_actions(s[2]))
            out.append((DIFF, actions_disagreement([a.label for a in actions], ref_labels) or True))
        return out

    def check_transition(self, s, a, info, s2):
        out = self.inner.check_transition(_engine_half(s), a, info, _engine_half(s2))
        if getattr(info, "compared", False):
            out.append((DIFF, info.diff or True))
        return out

    def goals_reached(self, s, info) -> list[str]:
        return self.inner.goals_reached(_engine_half(s), info)


__all__ = [
    "ABSENT",
    "DIFF",
    "DIFF_INVARIANT",
    "DifferentialSystem",
    "StepInfo",
    "actions_disagreement",
    "diff_lines",
    "diff_records",
    "json_diff",
    "show",
    "transition_disagreement",
]
