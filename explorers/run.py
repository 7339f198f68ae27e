"""Checking boards: explore each board with an engine and the invariants, and package the
results as plain data (the `bpcheck check --json` schema, docs/check-result.schema.json).

A :class:`Counterexample` is the one object every report format reads: the board, the
invariant with its statement and rules, and the trace as steps, each with the action and
the observations before and after it and the events it produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from bpcheck import __version__
from bpcheck.explorers.checking import EngineSystem, Goal, parse_goals
from bpcheck.explorers.core import CYCLE, DEADLOCK, Bounds, ExploreResult, Progress, Violation, explore, replay_trace
from bpcheck.invariants.base import Invariant
from bpcheck.model.board import Board

RESULT_SCHEMA_VERSION = 1

STRUCTURAL = {
    DEADLOCK: ("Every non-terminal state offers at least one action: every path ends.", ("BP-STEPS",)),
    CYCLE: ("The state graph has no cycle: the Battle Phase always finishes or the duel ends.", ("BP-STEPS",)),
}


@dataclass
class Step:
    index: int  # 1-based
    player: int | None
    action: dict
    events: list[dict]
    before: dict
    after: dict


@dataclass
class Counterexample:
    board: str
    engine: str
    invariant: str
    statement: str
    rules: tuple[str, ...]
    message: str
    at: str  # state / transition / actions / deadlock / cycle
    initial_observation: dict
    steps: list[Step]
    labels: list[str]
    cycle_start: int | None = None

    def to_dict(self, full: bool = True) -> dict:
        d: dict[str, Any] = {
            "board": self.board,
            "engine": self.engine,
            "invariant": self.invariant,
            "statement": self.statement,
            "rules": list(self.rules),
            "message": self.message,
            "kind": self.at,
            "length": len(self.labels),
            "trace": list(self.labels),
        }
        if self.cycle_start is not None:
            d["cycle_start"] = self.cycle_start
        if full:
            d["steps"] = [
                {"index": s.index, "player": s.player, "action": s.action, "events": s.events, "after": s.after} for s in self.steps
            ]
            d["initial_observation"] = self.initial_observation
        return d


@dataclass
class BoardResult:
    board: Board
    result: ExploreResult
    invariants: list[Invariant]
    goals: list[Goal]
    counterexamples: list[Counterexample] = field(default_factory=list)
    witnesses: dict[str, list[str] | None] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return self.result.status

    def invariant_rows(self) -> list[dict]:
        rows = []
        for inv in self.invariants:
            st = self.result.props.get(inv.id)
            checked = st.checked if st else 0
            viol = st.violations if st else 0
            rows.append(
                {
                    **inv.to_dict(),
                    "checked": checked,
                    "violations": viol,
                    "verdict": "violated" if viol else ("vacuous" if checked == 0 else ("held" if self.result.bound_hit is None else "held so far")),
                }
            )
        for pid, (statement, rules) in STRUCTURAL.items():
            st = self.result.props.get(pid)
            checked = st.checked if st else 0
            viol = st.violations if st else 0
            rows.append(
                {
                    "id": pid,
                    "statement": statement,
                    "rules": list(rules),
                    "kind": "structural",
                    "family": "structural",
                    "checked": checked,
                    "violations": viol,
                    "verdict": "violated" if viol else ("held" if checked else "not checked"),
                }
            )
        return rows

    def to_dict(self, full_traces: bool = True, timings: bool = False) -> dict:
        r = self.result
        d: dict[str, Any] = {
            "board": self.board.path,
            "name": self.board.name,
            "verdict": r.status,
            "states": r.states,
            "transitions": r.transitions,
            "max_depth": r.max_depth,
            "terminal_states": r.terminal_states,
            "bound_hit": r.bound_hit,
            "action_counts": dict(sorted(r.action_counts.items())),
            "invariants": self.invariant_rows(),
            "goals": [
                {**g.to_dict(), "reached": self.witnesses.get(g.id) is not None, "witness": self.witnesses.get(g.id)} for g in self.goals
            ],
            "counterexamples": [c.to_dict(full_traces) for c in self.counterexamples],
        }
        if timings:
            d["elapsed_s"] = round(r.elapsed, 3)
        return d


def _statement(pid: str, invariants: Sequence[Invariant]) -> tuple[str, tuple[str, ...]]:
    for inv in invariants:
        if inv.id == pid:
            return inv.statement, inv.rules
    return STRUCTURAL.get(pid, ("", ()))


def build_counterexample(system: EngineSystem, v: Violation, invariants: Sequence[Invariant], engine_name: str) -> Counterexample:
    trail = replay_trace(system, v.initial, v.trace)
    steps: list[Step] = []
    labels: list[str] = []
    for k, (s, a, info) in enumerate(trail[:-1]):
        s_after = trail[k + 1][0]
        labels.append(a.label)
        steps.append(Step(k + 1, s[1].get("to_act"), a.to_dict(), [e.to_dict() for e in info], s[1], s_after[1]))
    statement, rules = _statement(v.prop, invariants)
    return Counterexample(
        board=system.board.path,
        engine=engine_name,
        invariant=v.prop,
        statement=statement,
        rules=tuple(rules),
        message=v.message,
        at=v.at,
        initial_observation=trail[0][0][1],
        steps=steps,
        labels=labels,
        cycle_start=v.cycle_start,
    )


def check_board(
    board: Board,
    engine,
    invariants: Sequence[Invariant],
    strategy: str = "bfs",
    bounds: Bounds = Bounds(),
    engine_name: str = "reference",
    progress: bool | None = None,
) -> BoardResult:
    goals = parse_goals(board)
    system = EngineSystem(engine, board, invariants, goals)
    prog = Progress(board.name, progress)
    res = explore(system, strategy, bounds, goals=[g.id for g in goals], progress=prog)
    br = BoardResult(board, res, list(invariants), goals)
    for v in sorted(res.violations, key=lambda v: (v.depth, v.prop)):
        br.counterexamples.append(build_counterexample(system, v, invariants, engine_name))
    for g in goals:
        tr = res.goals.get(g.id)
        if tr is None:
            br.witnesses[g.id] = None
        else:
            trail = replay_trace(system, res.goal_initial.get(g.id, 0), tr)
            br.witnesses[g.id] = [a.label for (_s, a, _i) in trail[:-1]]
    return br


def result_document(results: list[BoardResult], engine: str, strategy: str, bounds: Bounds, errors: list[dict], timings: bool = False) -> dict:
    verdicts = [r.verdict for r in results]
    if errors:
        overall = "error"
    elif "fail" in verdicts:
        overall = "fail"
    elif "inconclusive" in verdicts:
        overall = "inconclusive"
    else:
        overall = "pass"
    return {
        "bpcheck": __version__,
        "schema": RESULT_SCHEMA_VERSION,
        "engine": engine,
        "strategy": strategy,
        "bounds": {"max_states": bounds.max_states, "max_depth": bounds.max_depth, "timeout_s": bounds.timeout},
        "verdict": overall,
        "boards": [r.to_dict(timings=timings) for r in results],
        "errors": errors,
    }
