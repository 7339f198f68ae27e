"""Binding an engine under test and the invariant library into a transition system.

:class:`EngineSystem` adapts any engine that implements the engine interface
(:mod:`bpcheck.engines.interface`) to the generic explorer of :mod:`bpcheck.explorers.core`.
States are ``(engine state, observation, monitor)`` triples: each observation is computed once,
used for the fingerprint and handed to the invariants, which see observations, action records,
events, the run's card data (:class:`~bpcheck.invariants.cards.CardFacts`) and the monitor — the
history the invariants keep for themselves (:mod:`bpcheck.invariants.monitor`), advanced from
each transition's action record and events, never from the engine's counters. The fingerprint
(:func:`state_fingerprint`) is the 64-bit XXH3 hash of the canonical JSON of the observation and
of the monitor, so it is the same across processes, runs and machines, and two states with the
same observation but a different history stay apart (BFS stays exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import xxhash
from orjson import OPT_SORT_KEYS, dumps
from xxhash import xxh3_64_intdigest

from bpcheck.engines import observation_paths as paths
from bpcheck.engines.faults import SystemFault
from bpcheck.engines.guard import guard_engine
from bpcheck.engines.interface import capabilities_of
from bpcheck.errors import InputError
from bpcheck.invariants.base import STEPS, Context, Invariant, NotJudged, Transition, Unknown, not_judged
from bpcheck.invariants.cards import CardFacts
from bpcheck.invariants.monitor import Monitor
from bpcheck.invariants.signatures import Signed, signature_of
from bpcheck.model.board import Board
from bpcheck.model.canonical import canonical_json
from bpcheck.model.events import EVENT_KINDS

GOAL_KEYS = {"id", "event", "card", "step", "over", "description"}


@dataclass(frozen=True)
class Goal:
    """A "sometimes" property: a state or transition that must be reachable from the board."""

    id: str
    event: str | None = None
    card: str | None = None
    step: str | None = None
    over: bool | None = None
    description: str = ""

    def met(self, obs: dict, events: Sequence[Any] | None) -> bool:
        if self.step is not None and obs["step"] != self.step:
            return False
        if self.over is not None and obs["over"] != self.over:
            return False
        if self.event is not None:
            if not events:
                return False
            hits = [e for e in events if e.kind == self.event]
            if self.card is not None:
                hits = [e for e in hits if e.get("card") == self.card]
            return bool(hits)
        return True

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


def parse_goals(board: Board) -> list[Goal]:
    out: list[Goal] = []
    ids: set[str] = set()
    for i, g in enumerate(board.reachable):
        where = f"reachable[{i}]"
        for k in g:
            if k not in GOAL_KEYS:
                raise InputError(board.path, f"{where}.{k}", f"unknown field (allowed: {', '.join(sorted(GOAL_KEYS))})")
        gid = g.get("id")
        if not isinstance(gid, str) or not gid:
            raise InputError(board.path, f"{where}.id", "a goal needs a string id")
        if gid in ids:
            raise InputError(board.path, f"{where}.id", f"goal id {gid!r} is used twice")
        ids.add(gid)
        ev = g.get("event")
        if ev is not None and not isinstance(ev, str):  # (a list is not hashable: it must not reach the set)
            raise InputError(board.path, f"{where}.event", f"expected an event kind (a string), got {type(ev).__name__} {ev!r}")
        if ev is not None and ev not in EVENT_KINDS:
            raise InputError(board.path, f"{where}.event", f"unknown event kind {ev!r}")
        for key, typ in (("card", str), ("step", str), ("over", bool), ("description", str)):
            if key in g and not isinstance(g[key], typ):
                raise InputError(board.path, f"{where}.{key}", f"expected {typ.__name__}, got {type(g[key]).__name__} {g[key]!r}")
        if not any(k in g for k in ("event", "step", "over")):
            raise InputError(board.path, where, "a goal names an event, a step or over = true")
        out.append(Goal(gid, ev, g.get("card"), g.get("step"), g.get("over"), g.get("description", "")))
    return out


def state_fingerprint(obs: dict, mon: Monitor, seed: int = 0, extra: bytes = b"") -> int:
    """The fingerprint of an explored state: XXH3 of the observation's canonical JSON followed by
    the monitor's (:meth:`Monitor.canonical`) and, for an engine whose observation does not
    determine its state, the engine's own ``state_key`` (`extra`). The hook every transition
    system over engines uses."""
    h = xxhash.xxh3_64(seed=seed)
    h.update(canonical_json(obs))
    h.update(b"\x00")
    h.update(mon.canonical())
    if extra:
        h.update(b"\x00")
        h.update(extra)
    return h.intdigest()


def _guarded(inv: Invariant, *args: Any, unobserved: dict[str, str] | None = None, skipped: dict[str, str] | None = None) -> Any:
    """Run one check. An engine whose data passes its schema but does not hold together (an
    attacker that is not on the field, an event naming an unknown card) must not crash the
    checker: the invariant is reported violated, with the reason it could not be evaluated.
    An invariant that declares no ``reads`` and trips over a field the engine declared
    unobserved (``unobserved``: field name -> path) is not evaluated instead (noted in ``skipped``).
    (:class:`EngineSystem` runs the same rules in its flat loop, :meth:`EngineSystem._run`.)"""
    try:
        return inv.check(*args)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        return _unreadable(inv.id, e, unobserved, skipped)


def _unreadable(pid: str, e: Exception, unobserved: dict[str, str] | None, skipped: dict[str, str] | None) -> Any:
    """The verdict of a check that raised `e` on the engine's data (see :func:`_guarded`)."""
    if isinstance(e, KeyError) and unobserved and skipped is not None and e.args and e.args[0] in unobserved:
        skipped.setdefault(pid, f"the engine does not observe {unobserved[e.args[0]]}")
        return None
    return f"could not be evaluated on the engine's data ({type(e).__name__}: {e}): the observation or events are inconsistent"


def _signed(pid: str, v: Any) -> Any:
    """A violation with its signature (invariants/signatures.py) as its key: the explorer keeps
    one counterexample per (invariant, signature), and a baseline entry accepts one signature."""
    return v if getattr(v, "key", None) is not None else Signed(str(v), signature_of(pid, v))


# What one invariant is to the flat loop of EngineSystem._run: its id, the function to call, and
# whether that function is the decorated one (an Unknown it raises is NotJudged) or an
# Invariant's own ``check`` (built by hand: called as it is).
_Plan = tuple  # tuple[tuple[str, Callable, bool], ...]


def _step(obs: Any) -> str | None:
    """The observation's step when it is a step name (:data:`~bpcheck.invariants.base.STEPS`),
    else None (no step filter applies: the invariants judge what the engine gave)."""
    try:
        st = obs["step"]
    except Exception:
        return None
    return st if type(st) is str and st in STEPS else None


def _plan(invs: Sequence[Invariant]) -> _Plan:
    return tuple((i.id, i.fn if i.fn is not None else i.check, i.fn is not None) for i in invs)


class EngineSystem:
    """An engine on one board, with the invariants to check, as a transition system.

    States are ``(engine state, observation, monitor)``: the monitor is the invariants' own
    history (:mod:`bpcheck.invariants.monitor`), advanced from action records and events only, and
    hashed into the fingerprint with the observation."""

    def __init__(self, engine, board: Board, invariants: Sequence[Invariant], goals: Sequence[Goal] = (), *, prefilter: bool = True) -> None:
        # prefilter=False runs every transition invariant on every transition, whatever its
        # ``events`` and ``steps`` (tests/test_checking_filters.py: same results)
        self.prefilter = prefilter
        engine = self.engine = guard_engine(engine)  # an in-process engine that raises: ENGINE-FAULT (engines/guard.py)
        self.board = board
        self.goals = list(goals)
        self.cards = CardFacts.for_board(board)
        # invariant id -> the reasons it could not judge a situation (NotJudged verdicts)
        self.not_judged: dict[str, set[str]] = {}
        self._last: tuple[Any, Transition] | None = None  # the last step's successor and transition
        self._last_actions: tuple[Any, list[dict]] | None = None  # (engine state, the action records it offered)
        self._init = engine.start(board)
        # Protocol v2 capabilities (read after start: a cmd: engine declares them in its hello).
        # Unobserved paths are cut from every observation, so the fingerprint, the invariants
        # and the reports never see them; invariants that read them are not evaluated.
        self.capabilities = capabilities_of(engine)
        self.unobserved = tuple(sorted(self.capabilities.unobserved))
        self._unobserved_fields = {paths.split(p)[-1][0]: p for p in self.unobserved}
        self.not_evaluated: dict[str, str] = {}  # invariant id -> why it is not evaluated
        # invariant id -> the checks of it that are not made (a field it can do without but not
        # for that check, docs/invariants.md "Fields read"), each with the field
        self.not_evaluated_parts: dict[str, list[str]] = {}
        keep = []
        ruleset = self.cards.ruleset
        for inv in invariants:
            if ruleset not in getattr(inv, "rulesets", (ruleset,)):
                # an invariant of other rulesets, never a verdict here (invariants/base.py
                # rulesets=, docs/rulesets.md): a TCG rule that differs under this ruleset is
                # "not judged" on the board; a variant's own rule (not judged under tcg either,
                # e.g. goat's stored replays) cannot arise under another ruleset: left out
                if "tcg" in inv.rulesets:
                    self.not_judged.setdefault(inv.id, set()).add(f"it judges {', '.join(sorted(inv.rulesets))} only; this board is played under {ruleset}")
                continue
            missing = paths.first_missing(inv.reads, self.unobserved) if inv.reads and self.unobserved else None
            if missing is not None:
                self.not_evaluated[inv.id] = f"the engine does not observe {missing}"
            elif inv.explicit_passes and self.capabilities.implicit_passes:
                self.not_evaluated[inv.id] = "the engine passes for its players (implicit passes)"
            else:
                keep.append(inv)
                for p, w in getattr(inv, "fields", ()):
                    u = paths.first_missing((p,), self.unobserved) if w.how == "not evaluated" and self.unobserved else None
                    if u is not None:
                        self.not_evaluated_parts.setdefault(inv.id, []).append(f"{w.note} (the engine does not observe {u})")
        self.state_invs = [i for i in keep if i.kind == "state"]
        self.trans_invs = [i for i in keep if i.kind == "transition"]
        self.action_invs = [i for i in keep if i.kind == "actions"]
        self._g = {"unobserved": self._unobserved_fields, "skipped": self.not_evaluated} if self.unobserved else {}
        self._state_plan = _plan(self.state_invs)
        self._action_plan = _plan(self.action_invs)
        # the transition invariants to call, by the kinds of events a transition has (in the
        # order they first occur) and its steps before and after: an invariant that names its
        # events (and steps) has nothing to judge without one of them (it would return None),
        # so it is left out
        self._trans_plans: dict[tuple, _Plan] = {}
        # looked up once (through the guard's __getattr__, a miss costs an AttributeError)
        self._state_key = getattr(engine, "state_key", None)

    def _observe(self, st) -> dict:
        obs = self.engine.observe(st)
        return paths.strip(obs, self.unobserved) if self.unobserved else obs

    # -- the monitor -------------------------------------------------------------------------

    def transition(self, s, a, events, s2_obs: dict) -> Transition:
        """The transition from state `s` by action `a` as the invariants see it (the monitor after
        it not yet computed)."""
        return Transition(s[1], a.to_dict(), events, s2_obs, s[2], self.cards, offered=self._offered(s))

    def _offered(self, s) -> list[dict] | None:
        """The action records state `s` offers (for the histories that compare what was offered
        where: profile.withheld). Only on boards with cards of a card database (the only ones
        those histories read); the list :meth:`actions` last gave when it was for this state,
        else asked of the engine again (the same answer: engines are deterministic, so the
        monitor never depends on the order of calls)."""
        if not getattr(self.cards, "rows", None):
            return None
        last = self._last_actions
        if last is not None and last[0] is s[0]:
            return last[1]
        return [a.to_dict() for a in self.engine.legal_actions(s[0])]

    def _verdict(self, inv: Invariant, *args: Any) -> Any:
        v = _guarded(inv, *args, **self._g)
        if isinstance(v, NotJudged):
            self.not_judged.setdefault(inv.id, set()).add(v.reason)
            return None
        return v if v is None or v is True else _signed(inv.id, v)

    def _run(self, plan: _Plan, *args: Any) -> list[tuple[str, Any]]:
        """The verdicts of the invariants of `plan` on `args`, the same as :meth:`_verdict` gives
        one by one, in one flat loop; the invariants whose situation did not arise (``None``) are
        left out (the explorer counts only verdicts)."""
        out = []
        for pid, fn, raw in plan:
            try:
                v = fn(*args)
            except Unknown as u:
                if not raw:
                    raise
                v = not_judged(u)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
                v = _unreadable(pid, e, self._unobserved_fields, self.not_evaluated)
            if v is None:
                continue
            if v is not True:
                if isinstance(v, NotJudged):
                    self.not_judged.setdefault(pid, set()).add(v.reason)
                    continue
                v = _signed(pid, v)
            out.append((pid, v))
        return out

    def _trans_plan(self, key: tuple) -> _Plan:
        kinds, before, after = key
        ks = set(kinds)
        plan = []
        for i in self.trans_invs:
            if self.prefilter:
                if i.events is not None and ks.isdisjoint(i.events):
                    continue
                if i.steps is not None:
                    at = before is None or after is None or before in i.steps or after in i.steps
                    if not at and ks.isdisjoint(i.step_events):
                        continue
            plan.append(i)
        out = self._trans_plans[key] = _plan(plan)
        return out

    # -- TransitionSystem --------------------------------------------------------------------

    def initial_states(self):
        return [(self._init, self._observe(self._init), Monitor.initial())]

    def actions(self, s):
        acts = list(self.engine.legal_actions(s[0]))
        if getattr(self.cards, "rows", None):
            self._last_actions = (s[0], [a.to_dict() for a in acts])
        return acts

    def step(self, s, a):
        st2, events = self.engine.apply(s[0], a)
        events = list(events)
        obs2 = self._observe(st2)
        t = self.transition(s, a, events, obs2)
        try:
            mon2 = s[2].advance(t)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            # events the invariants' own history cannot read (an attack_declared without its
            # attacker_uid, ...): the engine's reply is malformed
            raise SystemFault("schema", f"the events of {a.label!r} cannot be read ({type(e).__name__}: {e})") from None
        t.mon_after = mon2
        s2 = (st2, obs2, mon2)
        self._last = (s2, t)
        return s2, events

    def is_terminal(self, s) -> bool:
        return self.engine.is_terminal(s[0])

    def checkpoint_state(self) -> dict:
        """What this system gathered while exploring that the states do not hold: the invariants'
        "not judged" notes (a checkpoint keeps them, so a resume reports them: explorers/core.py)."""
        return {"not_judged": {k: sorted(v) for k, v in sorted(self.not_judged.items())}}

    def restore_checkpoint_state(self, data: dict) -> None:
        for k, v in (data.get("not_judged") or {}).items():
            self.not_judged.setdefault(k, set()).update(v)

    def fingerprint(self, s) -> int:
        key = self._state_key  # an engine whose observation does not determine its state (ocgcore: docs/ocgcore.md)
        if key is not None:
            return state_fingerprint(s[1], s[2], extra=key(s[0]))
        # state_fingerprint without `extra`, in one call (XXH3 of the concatenation is the same
        # digest as the streamed one)
        try:
            obs = dumps(s[1], option=OPT_SORT_KEYS)
        except TypeError:  # text orjson refuses (a lone surrogate from an in-process engine)
            obs = canonical_json(s[1])
        return xxh3_64_intdigest(obs + b"\x00" + s[2].canonical())

    def action_kind(self, a) -> str:
        return a.kind

    def action_name(self, a) -> str:
        return a.label

    # The checks return the verdicts of the invariants whose situation arose, ``(id, verdict)``;
    # an invariant with nothing to judge (None) is not listed.

    def check_state(self, s):
        # the last call on a new state before it waits in the frontier: its monitor keeps its
        # values only (Monitor.forget; the readers are built again when the state is expanded)
        if not self._state_plan:
            s[2].forget()
            return []
        out = self._run(self._state_plan, s[1], Context(s[2], self.cards))
        s[2].forget()
        return out

    def check_actions(self, s, actions):
        if not self._action_plan:
            return []
        return self._run(self._action_plan, s[1], [a.to_dict() for a in actions], Context(s[2], self.cards))

    def check_transition(self, s, a, info, s2):
        if not self.trans_invs:
            return []
        last = self._last
        if last is not None and last[0] is s2:
            t = last[1]
        else:
            t = self.transition(s, a, info, s2[1])
            t.mon_after = s2[2]
        key = (tuple(t.kind_set()), _step(t.before), _step(t.after))
        plan = self._trans_plans.get(key)
        if plan is None:
            plan = self._trans_plan(key)
        return self._run(plan, t)

    def goals_reached(self, s, info) -> list[str]:
        return [g.id for g in self.goals if g.met(s[1], info)]
