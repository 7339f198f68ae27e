"""Binding an engine under test and the invariant library into a transition system.

:class:`EngineSystem` adapts any engine that implements the engine interface
(:mod:`bpcheck.engines.interface`) to the generic explorer of :mod:`bpcheck.explorers.core`.
States are ``(engine state, observation)`` pairs: each observation is computed once, used for
the fingerprint and handed to the invariants, which see observations, action records and events
only. The fingerprint is the 64-bit XXH3 hash of the canonical JSON of the observation, so it is
the same across processes, runs and machines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import orjson
import xxhash

from bpcheck.engines import observation_paths as paths
from bpcheck.engines.interface import capabilities_of
from bpcheck.errors import InputError
from bpcheck.invariants.base import Invariant, Transition
from bpcheck.model.board import Board
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
        if ev is not None and ev not in EVENT_KINDS:
            raise InputError(board.path, f"{where}.event", f"unknown event kind {ev!r}")
        for key, typ in (("card", str), ("step", str), ("over", bool), ("description", str)):
            if key in g and not isinstance(g[key], typ):
                raise InputError(board.path, f"{where}.{key}", f"expected {typ.__name__}, got {type(g[key]).__name__} {g[key]!r}")
        if not any(k in g for k in ("event", "step", "over")):
            raise InputError(board.path, where, "a goal names an event, a step or over = true")
        out.append(Goal(gid, ev, g.get("card"), g.get("step"), g.get("over"), g.get("description", "")))
    return out


def fingerprint(obs: dict) -> int:
    """64-bit XXH3 of the observation's canonical JSON (sorted keys): stable across runs."""
    return xxhash.xxh3_64_intdigest(orjson.dumps(obs, option=orjson.OPT_SORT_KEYS))


def _guarded(inv: Invariant, *args: Any, unobserved: dict[str, str] | None = None, skipped: dict[str, str] | None = None) -> Any:
    """Run one check. An engine whose data passes its schema but does not hold together (an
    attacker that is not on the field, an event naming an unknown card) must not crash the
    checker: the invariant is reported violated, with the reason it could not be evaluated.
    An invariant that declares no ``reads`` and trips over a field the engine declared
    unobserved (``unobserved``: field name -> path) is not evaluated instead (noted in ``skipped``)."""
    try:
        return inv.check(*args)
    except KeyError as e:
        if unobserved and skipped is not None and e.args and e.args[0] in unobserved:
            skipped.setdefault(inv.id, unobserved[e.args[0]])
            return None
        return f"could not be evaluated on the engine's data ({type(e).__name__}: {e}): the observation or events are inconsistent"
    except (IndexError, TypeError, ValueError, AttributeError) as e:
        return f"could not be evaluated on the engine's data ({type(e).__name__}: {e}): the observation or events are inconsistent"


class EngineSystem:
    """An engine on one board, with the invariants to check, as a transition system."""

    def __init__(self, engine, board: Board, invariants: Sequence[Invariant], goals: Sequence[Goal] = ()) -> None:
        self.engine = engine
        self.board = board
        self.goals = list(goals)
        self._init = engine.start(board)
        # Protocol v2 capabilities (read after start: a cmd: engine declares them in its hello).
        # Unobserved paths are cut from every observation, so the fingerprint, the invariants
        # and the reports never see them; invariants that read them are not evaluated.
        self.capabilities = capabilities_of(engine)
        self.unobserved = tuple(sorted(self.capabilities.unobserved))
        self._unobserved_fields = {paths.split(p)[-1][0]: p for p in self.unobserved}
        self.not_evaluated: dict[str, str] = {}  # invariant id -> the unobserved path it needs
        keep = []
        for inv in invariants:
            missing = paths.first_overlap(inv.reads, self.unobserved) if inv.reads and self.unobserved else None
            if missing is not None:
                self.not_evaluated[inv.id] = missing
            else:
                keep.append(inv)
        self.state_invs = [i for i in keep if i.kind == "state"]
        self.trans_invs = [i for i in keep if i.kind == "transition"]
        self.action_invs = [i for i in keep if i.kind == "actions"]
        self._g = {"unobserved": self._unobserved_fields, "skipped": self.not_evaluated} if self.unobserved else {}

    def _observe(self, st) -> dict:
        obs = self.engine.observe(st)
        return paths.strip(obs, self.unobserved) if self.unobserved else obs

    # -- TransitionSystem --------------------------------------------------------------------

    def initial_states(self):
        return [(self._init, self._observe(self._init))]

    def actions(self, s):
        return list(self.engine.legal_actions(s[0]))

    def step(self, s, a):
        st2, events = self.engine.apply(s[0], a)
        return (st2, self._observe(st2)), list(events)

    def is_terminal(self, s) -> bool:
        return self.engine.is_terminal(s[0])

    def fingerprint(self, s) -> int:
        key = getattr(self.engine, "state_key", None)
        if key is not None:  # an engine whose observation does not determine its state (ocgcore: docs/ocgcore.md)
            return xxhash.xxh3_64_intdigest(orjson.dumps(s[1], option=orjson.OPT_SORT_KEYS) + key(s[0]), seed=3)
        return fingerprint(s[1])

    def action_kind(self, a) -> str:
        return a.kind

    def action_name(self, a) -> str:
        return a.label

    def check_state(self, s):
        obs = s[1]
        return [(inv.id, _guarded(inv, obs, **self._g)) for inv in self.state_invs]

    def check_actions(self, s, actions):
        if not self.action_invs:
            return []
        recs = [a.to_dict() for a in actions]
        return [(inv.id, _guarded(inv, s[1], recs, **self._g)) for inv in self.action_invs]

    def check_transition(self, s, a, info, s2):
        if not self.trans_invs:
            return []
        t = Transition(s[1], a.to_dict(), info, s2[1])
        kinds = t.kind_set()
        # An invariant that names its events has nothing to judge without them (it would return None).
        return [
            (inv.id, None if inv.events is not None and kinds.isdisjoint(inv.events) else _guarded(inv, t, **self._g))
            for inv in self.trans_invs
        ]

    def goals_reached(self, s, info) -> list[str]:
        return [g.id for g in self.goals if g.met(s[1], info)]
