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
import re
from typing import Any, Sequence

import orjson
import xxhash

from bpcheck.engines import observation_paths as paths
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem, Goal, state_fingerprint
from bpcheck.explorers.core import Finding
from bpcheck.invariants.base import Invariant
from bpcheck.invariants.naming import TraceNames, is_uid
from bpcheck.model.board import Board

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


# What each kind of action is, in the words of a DIFF's headline (docs/model.md, actions).
_ACTION_WORDS = {
    "enter_bp": "entering the Battle Phase",
    "skip_bp": "skipping the Battle Phase",
    "pass": "a pass (or moving on)",
    "attack": "an attack",
    "activate": "an activation",
    "trigger": "a trigger's activation",
    "decline": "declining a trigger",
    "replay": "a replay choice",
    "choose": "a choice",
    "change_position": "a position change",
    "end_turn": "ending the turn",
}


def describe_diff(kind: str, path: str) -> str:
    """What a DIFF of this (kind, first differing path) is, in one sentence that names both: the
    headline of its counterexample, in place of the pseudo-invariant's statement."""
    side, _sep, rest = path.partition(":")
    if kind == "actions" and side in ("engine-only", "reference-only"):
        what = _ACTION_WORDS.get(rest, f"an action of kind {rest!r}")
        who, other = ("engine", "reference") if side == "engine-only" else ("reference", "engine")
        text = f"the {who} offers {what} the {other} does not"
    elif kind == "window" and side in ("engine-only", "reference-only"):
        who, other = ("engine", "reference") if side == "engine-only" else ("reference", "engine")
        text = f"the {who} asks a player to respond in {rest} where the {other} asks no one"
    elif kind == "window" and side == "step":
        es, _s, rs = rest.partition("/")
        text = f"the engine asks in {es} what the reference asks in {rs}"
    elif kind == "observation":
        text = f"after the same action, the observations differ at {path}"
    elif kind == "events":
        text = f"after the same action, the {path.removeprefix('events.')} events differ"
    elif kind == "event-order":
        text = f"after the same action, the same events come in another order (first at {path.removeprefix('events.')})"
    elif kind == "terminal":
        text = f"the {path} alone says the game is over here"
    elif kind == "initial":
        text = f"the initial observations differ at {path}"
    elif kind == "identity":
        text = f"a passcode is not its card's at {path}"
    else:
        text = "the engine and the reference disagree"
    return f"{text} ({kind} {path})"


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


def obs_diff(eng: Any, ref: Any) -> list[tuple[str, Any, Any]]:
    """:func:`json_diff` of two observations, the engine's first, without the optional fields the
    engine leaves out (``OPTIONAL_PATHS``, engines/observation_paths.py)."""
    return [d for d in json_diff(eng, ref) if not (d[1] is ABSENT and _INDEX.sub("[]", d[0]) in paths.OPTIONAL_PATHS)]


def show(v: Any, width: int = 70) -> str:
    """A value as compact JSON, shortened to ``width`` characters."""
    if v is ABSENT:
        return "absent"
    text = json.dumps(v, separators=(", ", ": "), ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def card_namer(*observations: Any):
    """Names the uids of a differing value (``attack.target: engine Sheep Token [P2 M2] (uid
    1000)``) from the observations given, the first first: the cards are named, never by uid alone
    (invariants/naming.py)."""
    tn = TraceNames([o for o in observations if isinstance(o, dict)])

    def name(path: str, v: Any) -> str | None:
        key = _INDEX.sub("", path.rsplit(".", 1)[-1])
        shown = tn.value(key, v, 0)
        if shown is None:
            return None
        return f"{shown} (uid {v})" if is_uid(key, v) else f"{shown} (uids {show(v)})"

    return name


def diff_lines(diff: Sequence[tuple[str, Any, Any]], left: str = "engine", right: str = "reference", limit: int = 8, names=None) -> list[str]:
    """``path: engine X, reference Y`` lines, at most ``limit`` of them (and a count of the rest).
    `names` = (left namer, right namer) (:func:`card_namer`) names the cards of uid fields."""

    def val(p: str, v: Any, namer) -> str:
        named = namer(p, v) if namer is not None and v is not ABSENT else None
        return named if named is not None else show(v)

    ln, rn = names if names is not None else (None, None)
    lines = [f"{p}: {left} {val(p, x, ln)}, {right} {val(p, y, rn)}" for p, x, y in diff[:limit]]
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


def _engine_half(s):
    """The inner EngineSystem's state (engine state, observation, monitor) of a lockstep state."""
    return (s[0], s[1], s[5])


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


def transition_disagreement(
    label: str, eng_obs: dict, ref_obs: dict, eng_events: list[dict], ref_events: list[dict], od: list | None = None
) -> str | None:
    """How the engine's step differs from the reference's (observation and events), or None.
    `od`: the observation paths to report, when the caller has already left some out."""
    parts = []
    names = (card_namer(eng_obs), card_namer(ref_obs))  # cards by name and zone, each side from its own observation
    if eng_events != ref_events:
        ed = json_diff(eng_events, ref_events, "events")
        if ed:
            head = f"the events differ: engine {_kinds(eng_events)}, reference {_kinds(ref_events)}"
            parts.append(head + ": " + "; ".join(diff_lines(ed, limit=4, names=names)))
    if od is not None or eng_obs != ref_obs:
        if od is None:
            od = obs_diff(eng_obs, ref_obs)
        if od:
            n = len(od)
            parts.append(f"the observations differ at {n} path{'s' if n != 1 else ''}: " + "; ".join(diff_lines(od, limit=6, names=names)))
    if not parts:
        return None
    return f"after {label!r}, " + "; ".join(parts)


# -- comparing what the two sides said --------------------------------------------------------


_INDEX = re.compile(r"\[\d+\]")


def path_kind(path: str) -> str:
    """A differing path with its array indices folded (``players[1].monsters[2].atk`` ->
    ``players[1].monsters[].atk``; the player index is kept): distinct disagreements are told
    apart by it."""
    head, sep, rest = path.partition("].")
    if path.startswith("players[") and sep:
        return head + sep + _INDEX.sub("[]", rest)
    return _INDEX.sub("[]", path)


def _canon(e: Any) -> bytes:
    return orjson.dumps(e, option=orjson.OPT_SORT_KEYS)


def events_by_kind(events: Sequence[dict]) -> dict[str, list[bytes]]:
    """Events as a multiset per kind (canonical JSON, sorted)."""
    out: dict[str, list[bytes]] = {}
    for e in events:
        out.setdefault(str(e.get("kind")), []).append(_canon(e))
    for v in out.values():
        v.sort()
    return out


def first_event_kind_difference(eng: Sequence[dict], ref: Sequence[dict]) -> str | None:
    """The first kind (in the order the events came, the engine's first) whose multiset differs."""
    a, b = events_by_kind(eng), events_by_kind(ref)
    order = [str(e.get("kind")) for e in [*eng, *ref]]
    for k in dict.fromkeys(order):
        if a.get(k) != b.get(k):
            return k
    return None


def first_order_difference(eng: Sequence[dict], ref: Sequence[dict]) -> str:
    for x, y in zip(eng, ref):
        if x != y:
            return str(x.get("kind"))
    return "events"


def strip_passcodes(v: Any, pool, problems: list[str], path: str = "") -> Any:
    """`v` without its passcode fields; each passcode that is not the pool's passcode of the
    card named beside it is added to `problems`."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "passcode" or (isinstance(k, str) and k.endswith("_passcode")):
                name_key = "card" if k == "passcode" else k[: -len("_passcode")]
                name = v.get(name_key)
                want = pool[name].passcode if isinstance(name, str) and name in pool else None
                if want is not None and x != want:
                    where = f"{path}.{k}" if path else k
                    problems.append(f"{where}: engine {show(x)} beside {name!r}, whose passcode is {want}")
                continue
            out[k] = strip_passcodes(x, pool, problems, f"{path}.{k}" if path else str(k))
        return out
    if isinstance(v, (list, tuple)):
        return [strip_passcodes(x, pool, problems, f"{path}[{i}]") for i, x in enumerate(v)]
    return v


def unreported(diff: Sequence[tuple[str, Any, Any]]) -> tuple[list[tuple[str, Any, Any]], list[tuple[str, str]]]:
    """Split an observation diff: the paths of a field (an object's key, not an array's item)
    that one side does not report at all are not compared, never a disagreement. Returns
    (the paths that differ, [(path with indices folded, the side that lacks it)])."""
    real, skipped = [], []
    for p, x, y in diff:
        if (x is ABSENT or y is ABSENT) and not p.endswith("]"):
            skipped.append((_INDEX.sub("[]", p), "engine" if x is ABSENT else "reference"))
        else:
            real.append((p, x, y))
    return real, skipped


def common_fields(eng: list[dict], ref: list[dict]) -> tuple[list[dict], list[dict], list[tuple[str, str]]]:
    """Two sides' events with every field that only one side reports for that kind left out (an
    adapter that cannot observe a chain link's Spell Speed does not send ``speed``: compared on
    the fields both send). Returns both lists and [("events.KIND.FIELD", the side that lacks it)].
    A missing or extra *event* is still a disagreement."""
    fields: dict[str, tuple[set, set]] = {}
    for side, evs in ((0, eng), (1, ref)):
        for e in evs:
            if isinstance(e, dict):
                fields.setdefault(str(e.get("kind")), (set(), set()))[side].update(e)
    drop: dict[str, set] = {}
    skipped = []
    for kind, (a, b) in fields.items():
        if not a or not b:  # only one side has events of this kind: compared as they are
            continue
        for f in sorted(a ^ b):
            drop.setdefault(kind, set()).add(f)
            skipped.append((f"events.{kind}.{f}", "engine" if f in b else "reference"))
    if not drop:
        return eng, ref, []

    def cut(evs: list[dict]) -> list[dict]:
        out = []
        for e in evs:
            d = drop.get(str(e.get("kind"))) if isinstance(e, dict) else None
            out.append({k: v for k, v in e.items() if k not in d} if d else e)
        return out

    return cut(eng), cut(ref), skipped


class StepInfo(list):
    """The engine's events for one step (a list, as an EngineSystem step gives), plus whether the
    step was compared with the reference and what disagreed (None: nothing)."""

    compared: bool = False
    diff: str | None = None
    findings: list | None = None  # further Findings of the step (windows, identity)


# -- the lockstep transition system ---------------------------------------------------------

MAX_ALIGN = 64  # implicit passes: at most this many reference passes folded into one engine step


class DifferentialSystem:
    """An engine under test and the reference model in lockstep, as one transition system.

    States are ``(engine state, engine observation, reference state, reference observation,
    engine actions, monitor)``; the reference half is ``None`` once the two sides have disagreed on the
    way there. The engine's capabilities (protocol v2) shape the comparison: unobserved paths are
    cut from the reference's observations too; passcodes are checked against the pool and then
    left out; with implicit passes the reference is advanced through the passes the engine does
    not ask for, and a window one side opens and the other lacks is a structural DIFF of its own.
    Every distinct disagreement (kind, first differing path) gets its own counterexample.
    The engine half with the monitor, ``(s[0], s[1], s[5])``, is the inner EngineSystem's state; a
    seventh element holds the events of a comparison held back over a window only the engine opens.
    """

    def checkpoint_state(self) -> dict:
        return self.inner.checkpoint_state()

    def restore_checkpoint_state(self, data: dict) -> None:
        self.inner.restore_checkpoint_state(data)

    def __init__(
        self,
        engine,
        board: Board,
        invariants: Sequence[Invariant],
        goals: Sequence[Goal] = (),
        reference=None,
        continue_past_order: bool = False,
    ) -> None:
        self.inner = EngineSystem(engine, board, [i for i in invariants if i.id != DIFF], goals)
        self.engine = engine
        self.board = board
        self.caps = self.inner.capabilities
        self.unobserved = self.inner.unobserved
        self.not_evaluated = self.inner.not_evaluated
        self.not_evaluated_parts = self.inner.not_evaluated_parts
        self.implicit = self.caps.implicit_passes
        self.continue_past_order = continue_past_order
        self._combined_fp = bool(self.unobserved) or self.implicit
        self.reference = reference if reference is not None else ReferenceEngine()
        self._ref_init = self.reference.start(board)
        self._ref_cache: tuple[Any, dict] | None = None
        self._roots: list = []
        # (path, the side that does not report it): event fields and observation fields one side
        # leaves out, never compared (an adapter's gaps); listed in the board's not_compared
        self.not_compared_fields: set[tuple[str, str]] = set()

    def _obs_diff(self, eng: dict, ref: dict) -> list[tuple[str, Any, Any]]:
        """:func:`obs_diff` less the fields one side does not report (recorded as not compared)."""
        od, skipped = unreported(obs_diff(eng, ref))
        self.not_compared_fields.update(skipped)
        return od

    def _ref_actions(self, ref_state) -> dict:
        c = self._ref_cache
        if c is None or c[0] is not ref_state:
            c = (ref_state, {a.label: a for a in self.reference.legal_actions(ref_state)})
            self._ref_cache = c
        return c[1]

    def _ref_observe(self, ref_state) -> dict:
        obs = self.reference.observe(ref_state)
        return paths.strip(obs, self.unobserved) if self.unobserved else obs

    def _eng_view(self, obs: dict, problems: list[str]) -> dict:
        """The engine's observation as it is compared: without passcodes (checked against the
        pool into `problems`) and without its ``hidden`` state key."""
        if "hidden" in obs:
            obs = {k: v for k, v in obs.items() if k != "hidden"}
        return strip_passcodes(obs, self.board.pool, problems) if self.caps.passcodes else obs

    def _eng_events(self, events: Sequence[Any], problems: list[str]) -> list[dict]:
        out = [e.to_dict() for e in events]
        if self.caps.passcodes:
            out = strip_passcodes(out, self.board.pool, problems, "events")
        if self.implicit:  # an engine that passes for its players does not report every pass
            out = [e for e in out if e.get("kind") != "passed"]
        return out

    # -- implicit passes: aligning the reference with the windows the engine asks about -----

    def _align(self, ref_st, eng_actions: Sequence[Any], eng_terminal: bool, eng_view: dict):
        """Advance the reference through passes the engine does not ask for. The reference's
        passes form a chain (a state offers at most one pass); the state the engine is in is the
        first state on that chain with the engine's actions and observation; failing that, the
        first with its observation (the actions differ there), else the first one that offers
        the engine's actions or more than a pass (where a real disagreement then shows). Returns the reference state, the events of the folded passes
        and the windows with real choices that were folded, as (player, step, labels)."""
        want = {a.label for a in eng_actions}
        chain = []  # (state, events before it, windows before it)
        events: list[dict] = []
        windows: list[tuple[int, str, list[str]]] = []
        st = ref_st
        for _ in range(MAX_ALIGN):
            terminal = self.reference.is_terminal(st)
            acts = [] if terminal else list(self._ref_actions(st).values())
            labels = {a.label for a in acts}
            same_view = self._ref_observe(st) == eng_view
            chain.append((st, list(events), list(windows), labels, acts, same_view))
            if labels == want and same_view:
                return st, events, windows
            passes = [a for a in acts if a.kind == "pass"]
            if terminal or len(passes) != 1:
                break
            if len(acts) > 1:
                windows.append((passes[0].player, self.reference.observe(st)["step"], sorted(labels - {passes[0].label})))
            st, evs = self.reference.apply(st, passes[0])
            events += [e.to_dict() for e in evs if e.kind != "passed"]
        for st, evs, wins, _labels, _acts, same_view in chain:  # the same state, other actions: they differ there
            if same_view:
                return st, evs, wins
        for st, evs, wins, labels, acts, _same in chain:  # else where a real disagreement shows
            if labels == want or not (len(acts) == 1 and acts[0].kind == "pass"):
                return st, evs, wins
        st, evs, wins = chain[-1][:3]
        return st, evs, wins

    def _engine_window(self, s, eng_actions: Sequence[Any]) -> tuple[int, str] | None:
        """The engine asks a player to respond (it offers a pass) where the aligned reference does
        not: (player, step), else None."""
        if not self.implicit or s[2] is None:
            return None
        passes = [a for a in eng_actions if a.kind == "pass"]
        if not passes:
            return None
        ref_acts = self._ref_actions(s[2])
        if any(a.label == passes[0].label and a.player == passes[0].player for a in ref_acts.values()):
            return None
        return passes[0].player, s[1].get("step", "?")

    # -- TransitionSystem --------------------------------------------------------------------

    def initial_states(self):
        out = []
        for st, obs, mon in self.inner.initial_states():
            ref_st = self._ref_init
            acts = None
            if self.implicit:
                terminal = self.inner.is_terminal((st, obs, mon))
                acts = self.inner.actions((st, obs, mon)) if not terminal else []
                ref_st, _evs, _w = self._align(ref_st, acts, terminal, self._eng_view(obs, []))
            out.append((st, obs, ref_st, self._ref_observe(ref_st), acts, mon))
        self._roots = out
        return out

    def actions(self, s):
        if s[4] is not None:
            return list(s[4])
        return self.inner.actions(_engine_half(s))

    def step(self, s, a):
        (st2, obs2, mon2), events = self.inner.step(_engine_half(s), a)
        info = StepInfo(events)
        info.findings = []
        ref_st = s[2]
        if ref_st is None:
            return (st2, obs2, None, None, None, mon2), info
        ra = self._ref_actions(ref_st).get(a.label)
        if ra is not None and self.implicit and a.kind == "pass" and getattr(ra, "player", None) != getattr(a, "player", None):
            ra = None  # the engine's pass is another player's than the reference's: the engine's own window
        if ra is None:
            window = self._engine_window(s, self.actions(s))
            if window is None or a.kind != "pass":  # offered by the engine alone: reported by check_actions
                return (st2, obs2, None, None, None, mon2), info
            ref_st2, ref_events = ref_st, []  # the engine's own window closes: the reference stays
        else:
            ref_st2, evs = self.reference.apply(ref_st, ra)
            ref_events = [e.to_dict() for e in evs]
            if self.implicit:
                ref_events = [e for e in ref_events if e["kind"] != "passed"]
        acts2 = None
        if self.implicit:
            terminal2 = self.inner.is_terminal((st2, obs2, mon2))
            acts2 = [] if terminal2 else self.inner.actions((st2, obs2, mon2))
            ref_st2, more, windows = self._align(ref_st2, acts2, terminal2, self._eng_view(obs2, []))
            ref_events += more
            for player, step, labels in windows:
                info.findings.append(
                    Finding(
                        f"after {a.label!r}, the reference opens a window for P{player + 1} in {step} "
                        f"(offering {_quote(labels)}) that the engine lacks: it did not ask P{player + 1}",
                        ("window", f"reference-only:{step}"),
                    )
                )
        ref_obs2 = self._ref_observe(ref_st2)
        problems: list[str] = []
        eng_obs = self._eng_view(obs2, problems)
        eng_events = self._eng_events(events, problems)
        if problems:
            info.findings.append(
                Finding(f"after {a.label!r}, a passcode is not the card's: " + "; ".join(problems[:4]), ("identity", path_kind(problems[0].split(":")[0])))
            )
        pend = s[6] if len(s) > 6 else None
        if pend is not None:  # the comparison deferred over the engine's own window (below)
            eng_events = pend[0] + eng_events
            ref_events = pend[1] + ref_events
        if (
            self.implicit
            and acts2 is not None
            and any(x.kind == "pass" for x in acts2)
            and eng_obs != ref_obs2
            and self._engine_window((st2, obs2, ref_st2, ref_obs2, acts2, mon2), acts2) is not None
        ):
            # The engine opens a window the reference lacks (reported as a structural DIFF by
            # check_actions there): compare once it closes, against where the reference is.
            return (st2, obs2, ref_st2, ref_obs2, acts2, mon2, (eng_events, ref_events)), info
        if self.implicit and acts2 and eng_obs != ref_obs2 and {x.label for x in acts2} == set(self._ref_actions(ref_st2)):
            od = self._obs_diff(eng_obs, ref_obs2)
            if od and all(p in ("phase", "step") for p, _x, _y in od):
                # The same question to the same player, asked in another step: a structural window
                # difference (one DIFF of its own); the steps' events are compared once both leave it.
                es, rs = eng_obs.get("step"), ref_obs2.get("step")
                info.findings.append(
                    Finding(
                        f"after {a.label!r}, the engine asks P{acts2[0].player + 1} in {es} what the reference asks in {rs}",
                        ("window", f"step:{es}/{rs}"),
                    )
                )
                return (st2, obs2, ref_st2, ref_obs2, acts2, mon2, (eng_events, ref_events)), info
        info.compared = True
        # a field only one side reports (an adapter's gap: no Spell Speed in the core's chain
        # messages) is not compared, and listed as such (BoardResult.not_compared)
        eng_events, ref_events, skipped = common_fields(eng_events, ref_events)
        self.not_compared_fields.update(skipped)
        key = None
        od = None
        if eng_obs != ref_obs2:
            od = self._obs_diff(eng_obs, ref_obs2)
            if od:
                key = ("observation", path_kind(od[0][0]))
        order_only = False
        if key is None:
            k = first_event_kind_difference(eng_events, ref_events)
            if k is not None:
                key = ("events", f"events.{k}")
            elif eng_events != ref_events:
                order_only = True
                key = ("event-order", f"events.{first_order_difference(eng_events, ref_events)}")
        if key is not None:
            if order_only:
                msg = (
                    f"after {a.label!r}, the events agree as multisets but come in another order: "
                    f"engine {_kinds(eng_events)}, reference {_kinds(ref_events)}"
                )
            else:
                msg = transition_disagreement(a.label, eng_obs, ref_obs2, eng_events, ref_events, od=od or []) or f"after {a.label!r}, the steps differ"
            info.diff = Finding(msg, key)
            if not (order_only and self.continue_past_order):
                return (st2, obs2, None, None, None, mon2), info
        return (st2, obs2, ref_st2, ref_obs2, acts2, mon2), info

    def is_terminal(self, s) -> bool:
        return self.inner.is_terminal(_engine_half(s))

    def fingerprint(self, s) -> int:
        if s[2] is not None:
            if self._combined_fp:  # the engine's view may not determine the reference state
                h = xxhash.xxh3_64(seed=2)
                h.update(orjson.dumps(s[1], option=orjson.OPT_SORT_KEYS))
                h.update(orjson.dumps(self.reference.observe(s[2]), option=orjson.OPT_SORT_KEYS))
                h.update(s[5].canonical())
                h.update(self._engine_key(s))
                return h.intdigest()
            return state_fingerprint(s[1], s[5], extra=self._engine_key(s))
        return state_fingerprint(s[1], s[5], seed=1, extra=self._engine_key(s))

    def _engine_key(self, s) -> bytes:
        key = getattr(self.engine, "state_key", None)  # the engine's own state distinctions (ocgcore)
        return key(s[0]) if key is not None else b""

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
        if any(s is r for r in self._roots):  # steps compare the successors' observations
            problems: list[str] = []
            eng = self._eng_view(s[1], problems)
            if problems:
                return Finding("a passcode is not the card's: " + "; ".join(problems[:4]), ("identity", path_kind(problems[0].split(":")[0])))
            if eng != s[3]:
                od = self._obs_diff(eng, s[3])
                if od:
                    names = (card_namer(eng), card_namer(s[3]))
                    return Finding("the initial observations differ: " + "; ".join(diff_lines(od, limit=6, names=names)), ("initial", path_kind(od[0][0])))
        eng_t = bool(self.inner.is_terminal(_engine_half(s)))
        ref_t = bool(self.reference.is_terminal(s[2]))
        if eng_t != ref_t and len(s) <= 6:  # (a deferred comparison waits for the engine's window)
            if eng_t:
                return Finding("engine says this state is terminal (nothing more to play), the reference does not", ("terminal", "engine"))
            return Finding("reference says this state is terminal (nothing more to play), the engine does not", ("terminal", "reference"))
        return None

    def check_actions(self, s, actions):
        out = self.inner.check_actions(_engine_half(s), actions)
        if s[2] is not None:
            window = self._engine_window(s, actions)
            if window is not None:
                player, step = window
                labels = [a.label for a in actions]
                out.append(
                    (
                        DIFF,
                        Finding(
                            f"the engine opens a window for P{player + 1} in {step} (offering {_quote(labels)}) that the reference lacks",
                            ("window", f"engine-only:{step}"),
                        ),
                    )
                )
                return out
            ref_acts = self._ref_actions(s[2])
            msg = actions_disagreement([a.label for a in actions], list(ref_acts))
            if msg is None:
                out.append((DIFF, True))
            else:
                eng_only = [a for a in actions if a.label not in ref_acts]
                labels = {a.label for a in actions}
                ref_only = [a for a in ref_acts.values() if a.label not in labels]
                first = ("engine-only", eng_only[0].kind) if eng_only else ("reference-only", ref_only[0].kind)
                out.append((DIFF, Finding(msg, ("actions", f"{first[0]}:{first[1]}"))))
        return out

    def check_transition(self, s, a, info, s2):
        out = self.inner.check_transition(_engine_half(s), a, info, _engine_half(s2))
        if getattr(info, "compared", False):
            out.append((DIFF, info.diff or True))
        for f in getattr(info, "findings", None) or ():
            out.append((DIFF, f))
        return out

    def goals_reached(self, s, info) -> list[str]:
        return self.inner.goals_reached(_engine_half(s), info)


__all__ = [
    "ABSENT",
    "DIFF",
    "DIFF_INVARIANT",
    "DifferentialSystem",
    "events_by_kind",
    "path_kind",
    "StepInfo",
    "actions_disagreement",
    "card_namer",
    "common_fields",
    "describe_diff",
    "diff_lines",
    "diff_records",
    "json_diff",
    "obs_diff",
    "show",
    "transition_disagreement",
    "unreported",
]
