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
from bpcheck.explorers.core import (
    CYCLE,
    DEADLOCK,
    FAULT,
    Bounds,
    ExploreResult,
    Progress,
    PropStats,
    SystemFault,
    Violation,
    explore,
    replay_trace,
)
from bpcheck.invariants.base import Invariant
from bpcheck.model.board import Board

RESULT_SCHEMA_VERSION = 1

STRUCTURAL = {
    DEADLOCK: ("Every non-terminal state offers at least one action: every path ends.", ("BP-STEPS",)),
    CYCLE: ("The state graph has no cycle: the Battle Phase always finishes or the duel ends.", ("BP-STEPS",)),
    FAULT: ("The engine answers every call: no crash, hang, malformed reply, refused offered action or non-determinism.", ()),
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
    shortest: bool = True  # BFS found it: no shorter trace violates the invariant
    key: Any = None  # DIFF: (kind, first differing path), one counterexample per key
    baselined: str | None = None  # --baseline: the reason this known disagreement is listed

    @property
    def trace_title(self) -> str:
        """How reports name the trace: only a BFS trace is known to be a shortest one."""
        return "shortest trace" if self.shortest else "trace (DFS: not necessarily the shortest)"

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
        if self.key is not None:
            d["diff"] = {"kind": self.key[0], "path": self.key[1]}
        if self.baselined is not None:
            d["baselined"] = self.baselined
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
    # Protocol v2: the observation paths the engine does not provide (never compared, never
    # fingerprinted) and the invariants not evaluated for want of one (id -> path).
    not_compared: list[str] = field(default_factory=list)
    not_evaluated: dict[str, str] = field(default_factory=dict)
    baseline: dict | None = None  # --baseline: {"known", "new", "gone"} (explorers/baseline.py)

    @property
    def verdict(self) -> str:
        return self.result.status

    def invariant_rows(self) -> list[dict]:
        rows = []
        for inv in self.invariants:
            st = self.result.props.get(inv.id)
            checked = st.checked if st else 0
            viol = st.violations if st else 0
            row = {
                **inv.to_dict(),
                "checked": checked,
                "violations": viol,
                "verdict": "violated" if viol else ("vacuous" if checked == 0 else ("held" if self.result.bound_hit is None else "held so far")),
            }
            if inv.id in self.not_evaluated:
                if not viol and checked == 0:
                    row["verdict"] = "not evaluated"
                row["reason"] = f"the engine does not observe {self.not_evaluated[inv.id]}"
            rows.append(row)
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
                    "verdict": "violated" if viol else ("held" if checked or pid == FAULT else "not checked"),
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
        if self.not_compared:
            d["not_compared"] = list(self.not_compared)
        if self.baseline is not None:
            d["baseline"] = self.baseline
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
        events = [] if isinstance(info, SystemFault) else [e.to_dict() for e in info]
        steps.append(Step(k + 1, s[1].get("to_act"), a.to_dict(), events, s[1], s_after[1]))
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


def _unreplayed(system, v: Violation, invariants: Sequence[Invariant], engine_name: str, f: SystemFault) -> Counterexample:
    """A counterexample whose trace the engine failed to replay (an engine fault on the way):
    the action indices stand in for the labels."""
    statement, rules = _statement(v.prop, invariants)
    try:
        initial = system.initial_states()[v.initial][1]
    except SystemFault:
        initial = _board_observation(system.board)
    return Counterexample(
        board=system.board.path,
        engine=engine_name,
        invariant=v.prop,
        statement=statement,
        rules=tuple(rules),
        message=f"{v.message} [the trace could not be replayed for this report: {f.kind}: {f.message}]",
        at=v.at,
        initial_observation=initial,
        steps=[],
        labels=[f"#{ai}" for ai in v.trace],
        cycle_start=v.cycle_start,
    )


def _board_observation(board: Board) -> dict:
    from bpcheck.model.engine import Rules
    from bpcheck.model.observe import observe

    return observe(Rules(board.pool), board.state)


def _fault_at_start(board: Board, invariants, goals, engine_name: str, strategy: str, f: SystemFault) -> BoardResult:
    """The engine failed before giving the initial state: an ENGINE-FAULT with an empty trace."""
    res = ExploreResult(status="fail", strategy=strategy)
    res.props[FAULT] = PropStats(checked=1, violations=1)
    message = f"{f.kind}: {f.message} (starting the board)"
    res.violations.append(Violation(FAULT, message, [], 0, 0, "fault"))
    statement, rules = STRUCTURAL[FAULT]
    br = BoardResult(board, res, list(invariants), list(goals))
    initial = _board_observation(board)  # the engine gave none: the board as its file describes it
    br.counterexamples.append(Counterexample(board.path, engine_name, FAULT, statement, tuple(rules), message, "fault", initial, [], []))
    br.witnesses = {g.id: None for g in goals}
    return br


def check_board(
    board: Board,
    engine,
    invariants: Sequence[Invariant],
    strategy: str = "bfs",
    bounds: Bounds = Bounds(),
    engine_name: str = "reference",
    progress: bool | None = None,
    system_cls=EngineSystem,
    graph_limit: int | None = None,
) -> BoardResult:
    """``system_cls`` builds the transition system from (engine, board, invariants, goals):
    EngineSystem, or e.g. explorers.differential.DifferentialSystem."""
    goals = parse_goals(board)
    try:
        system = system_cls(engine, board, invariants, goals)
    except SystemFault as f:  # the engine failed before giving the board's initial state
        return _fault_at_start(board, invariants, goals, engine_name, strategy, f)
    prog = Progress(board.name, progress)
    res = explore(system, strategy, bounds, goals=[g.id for g in goals], progress=prog, record_graph=graph_limit)
    if res.graph is not None:  # graph_limit: keep the small state graph, states as observations
        res.graph = res.graph.map_states(lambda s: s[1])
    br = BoardResult(board, res, list(invariants), goals)
    br.not_compared = list(getattr(system, "unobserved", ()))
    br.not_evaluated = dict(getattr(system, "not_evaluated", {}))
    for v in sorted(res.violations, key=lambda v: (v.depth, v.prop, str(v.key))):
        try:
            cex = build_counterexample(system, v, invariants, engine_name)
        except SystemFault as f:  # an engine that does not replay its own trace
            cex = _unreplayed(system, v, invariants, engine_name, f)
        cex.shortest = strategy == "bfs"
        cex.key = v.key
        br.counterexamples.append(cex)
    for g in goals:
        tr = res.goals.get(g.id)
        if tr is None:
            br.witnesses[g.id] = None
        else:
            try:
                trail = replay_trace(system, res.goal_initial.get(g.id, 0), tr)
                br.witnesses[g.id] = [a.label for (_s, a, _i) in trail[:-1]]
            except SystemFault:  # the engine did not replay it: action indices stand in for labels
                br.witnesses[g.id] = [f"#{ai}" for ai in tr]
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
