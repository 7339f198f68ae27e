"""Checking boards: explore each board with an engine and the invariants, and package the
results as plain data (the `bpcheck check --json` schema, docs/check-result.schema.json).

A :class:`Counterexample` is the one object every report format reads: the board, the
invariant with its statement and rules, and the trace as steps, each with the action and
the observations before and after it and the events it produced.
"""

from __future__ import annotations

import functools
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import orjson

from bpcheck import __version__
from bpcheck.engines import make_engine
from bpcheck.engines.faults import SystemFault
from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.reference import board_observation
from bpcheck.errors import InputError
from bpcheck.explorers import parallel as parallel_explorer
from bpcheck.explorers.checking import EngineSystem, Goal, parse_goals
from bpcheck.explorers.core import (
    CYCLE,
    DEADLOCK,
    FAULT,
    Bounds,
    Callbacks,
    ExploreOptions,
    ExploreResult,
    Progress,
    PropStats,
    Violation,
    explore,
    replay_trace,
)
from bpcheck.explorers.differential import DIFF_INVARIANT, describe_diff
from bpcheck.explorers.pool import in_worker, notify, stop_reason
from bpcheck.explorers.progress import RemoteTask
from bpcheck.explorers.reduce import Reduced, expand_witness, micro_trail
from bpcheck.invariants import REGISTRY
from bpcheck.invariants.base import Invariant
from bpcheck.model.board import Board
from bpcheck.model.rulesets import DEFAULT_RULESET

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
    forced: bool = False  # reduction (explorers/reduce.py): the only action offered, taken for the player


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
    # which distinct disagreement or failure it is, one counterexample per key: a DIFF's (kind,
    # first differing path), an invariant's signature (invariants/signatures.py)
    key: Any = None
    baselined: str | None = None  # --baseline: the reason this known disagreement is listed
    folded: bool = False  # labels are "#N" decisions, forced passes folded after each (reduction; replay re-folds them)
    engine_stderr: tuple[str, ...] = ()  # a crash: the engine's last stderr lines as the replay met it (bounded, engines/jsonl.py)

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
        forced = [s.index for s in self.steps if s.forced]
        if forced:  # reduction: the steps that were forced passes (explorers/reduce.py)
            d["forced"] = forced
            d["decisions"] = len(self.labels) - len(forced)
        if self.key is not None:
            if self.invariant == "DIFF":
                d["diff"] = {"kind": self.key[0], "path": self.key[1]}
            else:  # which distinct failure of the invariant (invariants/signatures.py)
                d["signature"] = str(self.key)
        if self.baselined is not None:
            d["baselined"] = self.baselined
        if self.folded:
            d["folded"] = True
        if self.engine_stderr:
            d["engine_stderr"] = list(self.engine_stderr)
        if full:
            d["steps"] = [
                {"index": s.index, "player": s.player, "action": s.action, "events": s.events, "after": s.after, **({"forced": True} if s.forced else {})}
                for s in self.steps
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
    # fingerprinted) and the invariants not evaluated (id -> why: an unobserved path, implicit passes).
    not_compared: list[str] = field(default_factory=list)
    # differential mode: the event and observation fields one side does not report at all, so
    # never compared (an adapter's gaps): {"path": "events.chain_link_added.speed", "side": "engine"}
    # (their paths are in not_compared too)
    not_reported: list[dict] = field(default_factory=list)
    not_evaluated: dict[str, str] = field(default_factory=dict)
    # invariant id -> its checks that are not made (the engine does not observe a field they need)
    not_evaluated_parts: dict[str, list[str]] = field(default_factory=dict)
    baseline: dict | None = None  # --baseline: {"known", "new", "gone"} (explorers/baseline.py)
    reduction: dict | None = None  # reduction on (explorers/reduce.py): {"forced_states", "micro_transitions"}

    skip_reason: str | None = None  # the engine refused the board (EngineRefusal): verdict "skipped"
    # invariant id -> why it could not judge some situations (card data it cannot classify)
    not_judged: dict[str, list[str]] = field(default_factory=dict)
    left_out: int = 0  # counterexamples a --max-counterexamples bound left out of the outputs (the verdict counts them)

    @property
    def verdict(self) -> str:
        return self.result.status

    def invariant_rows(self) -> list[dict]:
        if self.skip_reason is not None:  # nothing was explored: every property is skipped
            return [
                {**inv.to_dict(), "checked": 0, "violations": 0, "verdict": "skipped"} for inv in self.invariants
            ] + [
                {"id": pid, "statement": st, "rules": list(rules), "kind": "structural", "family": "structural", "checked": 0, "violations": 0, "verdict": "skipped"}
                for pid, (st, rules) in STRUCTURAL.items()
            ]
        rows = []
        for inv in self.invariants:
            st = self.result.props.get(inv.id)
            checked = st.checked if st else 0
            viol = st.violations if st else 0
            nj = self.not_judged.get(inv.id)
            row = {
                **inv.to_dict(),
                "checked": checked,
                "violations": viol,
                "verdict": "violated"
                if viol
                else ("not judged" if nj and checked == 0 else ("vacuous" if checked == 0 else ("held" if self.result.bound_hit is None else "held so far"))),
            }
            if nj:
                row["not_judged"] = list(nj)
            if inv.id in self.not_evaluated:
                # (also when it judged some situations: it could not read the others, so it did
                # not hold on the board; a violation it found stands)
                if not viol:
                    row["verdict"] = "not evaluated"
                row["reason"] = self.not_evaluated[inv.id]
            parts = self.not_evaluated_parts.get(inv.id)
            if parts:
                row["not_evaluated_parts"] = list(parts)
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
            "ruleset": self.board.ruleset or DEFAULT_RULESET,
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
        if self.left_out:
            d["counterexamples_left_out"] = self.left_out
        if self.not_compared:
            d["not_compared"] = list(self.not_compared)
        if self.not_reported:
            d["not_reported"] = [dict(x) for x in self.not_reported]
        if self.baseline is not None:
            d["baseline"] = self.baseline
        if self.reduction is not None:
            d["reduction"] = dict(self.reduction)
        if self.skip_reason is not None:
            d["skipped_reason"] = self.skip_reason
        else:
            d["fingerprint_collision"] = r.collision
        if timings:
            d["elapsed_s"] = round(r.elapsed, 3)
        return d


def _statement(pid: str, invariants: Sequence[Invariant]) -> tuple[str, tuple[str, ...]]:
    for inv in invariants:
        if inv.id == pid:
            return inv.statement, inv.rules
    return STRUCTURAL.get(pid, ("", ()))


def build_counterexample(system: EngineSystem, v: Violation, invariants: Sequence[Invariant], engine_name: str) -> Counterexample:
    return _keyed(_build_counterexample(system, v, invariants, engine_name), v)


def _keyed(cex: Counterexample, v: Violation) -> Counterexample:
    """Which distinct failure it is (a DIFF's kind and path, an invariant's signature), and for a
    DIFF a headline that says what differs rather than DIFF's statement."""
    cex.key = v.key
    if v.prop == "DIFF" and isinstance(v.key, tuple):
        cex.statement = describe_diff(*v.key)
    return cex


def _build_counterexample(system: EngineSystem, v: Violation, invariants: Sequence[Invariant], engine_name: str) -> Counterexample:
    forced: list[bool] = []
    at, cycle_start = v.at, v.cycle_start
    if getattr(system, "reduced", False):  # a macro trace: re-executed as its micro-steps (explorers/reduce.py)

        trail, forced, at, cycle_start = micro_trail(system, v)
    else:
        trail = replay_trace(system, v.initial, v.trace)
    steps: list[Step] = []
    labels: list[str] = []
    for k, (s, a, info) in enumerate(trail[:-1]):
        s_after = trail[k + 1][0]
        labels.append(a.label)
        events = [] if isinstance(info, SystemFault) else [e.to_dict() for e in info]
        steps.append(Step(k + 1, s[1].get("to_act"), a.to_dict(), events, s[1], s_after[1], bool(forced and forced[k])))
    statement, rules = _statement(v.prop, invariants)
    return Counterexample(
        board=system.board.path,
        engine=engine_name,
        invariant=v.prop,
        statement=statement,
        rules=tuple(rules),
        message=v.message,
        at=at,
        initial_observation=trail[0][0][1],
        steps=steps,
        labels=labels,
        cycle_start=cycle_start,
        engine_stderr=_stderr_of(trail[-2][2] if len(trail) > 1 else None),
    )


def _stderr_of(info) -> tuple[str, ...]:
    """The stderr tail a crash left (a replay's last step that failed again), else none."""
    return tuple(getattr(info, "stderr", ())) if isinstance(info, SystemFault) else ()


def _unreplayed(system, v: Violation, invariants: Sequence[Invariant], engine_name: str, f: SystemFault) -> Counterexample:
    """A counterexample whose trace the engine failed to replay (an engine fault on the way):
    the action indices stand in for the labels."""
    statement, rules = _statement(v.prop, invariants)
    try:
        initial = system.initial_states()[v.initial][1]
    except SystemFault:
        initial = board_observation(system.board)  # the engine gave none: the board as its file describes it
    return _keyed(Counterexample(
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
        folded=bool(getattr(system, "reduced", False)),  # the indices are decisions: replay folds the forced passes again
    ), v)


def _fault_at_start(board: Board, invariants, goals, engine_name: str, strategy: str, f: SystemFault) -> BoardResult:
    """The engine failed before giving the initial state: an ENGINE-FAULT with an empty trace."""
    res = ExploreResult(status="fail", strategy=strategy)
    res.props[FAULT] = PropStats(checked=1, violations=1)
    message = f"{f.kind}: {f.message} (starting the board)"
    res.violations.append(Violation(FAULT, message, [], 0, 0, "fault"))
    statement, rules = STRUCTURAL[FAULT]
    br = BoardResult(board, res, list(invariants), list(goals))
    initial = board_observation(board)  # the engine gave none: the board as its file describes it
    br.counterexamples.append(Counterexample(board.path, engine_name, FAULT, statement, tuple(rules), message, "fault", initial, [], [], engine_stderr=_stderr_of(f)))
    br.witnesses = {g.id: None for g in goals}
    return br


def _skipped(board: Board, invariants, goals, strategy: str, reason: str) -> BoardResult:
    """The engine refused the board (EngineRefusal): nothing explored, verdict ``skipped``."""
    res = ExploreResult(status="skipped", strategy=strategy)
    br = BoardResult(board, res, list(invariants), list(goals), skip_reason=reason)
    br.witnesses = {g.id: None for g in goals}
    return br


class _Packed:
    """An observation dict kept in the frontier as its JSON (orjson) bytes."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


PACK_CHECKS = 64  # the first states packed are unpacked at once and compared with the original


class FramePacker:
    """Measured, not used by default (docs/performance.md: the reference model's observations
    share their unchanged parts between states, and JSON bytes do not, so packing cost memory on
    every board measured; benchmarks/memory_bench.py compares the two). Shrinks a frontier state: each observation (a dict) in a state tuple is kept as its JSON
    bytes and decoded again when the state is expanded. A round trip that would not give an equal
    dict (tuples, non-string keys, ...) is detected on the first states and switches packing off
    for the board, so the explorer always sees the observation the engine gave."""

    def __init__(self) -> None:
        self.enabled = True
        self.checked = 0

    def pack(self, s: Any) -> Any:
        if not self.enabled or type(s) is not tuple:
            return s
        try:
            out = tuple(_Packed(orjson.dumps(x)) if type(x) is dict else x for x in s)
        except TypeError:
            self.enabled = False
            return s
        if self.checked < PACK_CHECKS:
            self.checked += 1
            if self.unpack(out) != s or any(type(a) is not type(b) for a, b in zip(self.unpack(out), s)):
                self.enabled = False
                return s
        return out

    @staticmethod
    def unpack(s: Any) -> Any:
        if type(s) is not tuple:
            return s
        return tuple(orjson.loads(x.data) if type(x) is _Packed else x for x in s)


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
    parallel: tuple | None = None,
    reduce: bool = True,
    found: Any = None,
    **controls: Any,
) -> BoardResult:
    """``system_cls`` builds the transition system from (engine, board, invariants, goals):
    EngineSystem, or e.g. explorers.differential.DifferentialSystem. ``controls`` are fields of
    the explorer's :class:`~bpcheck.explorers.core.ExploreOptions` (stop, memory_limit,
    checkpoint_every, resume, started, stop_on_violation, ...), and ``on_checkpoint(snapshot)``,
    which its visitor calls. ``parallel`` = (workers, make_system[, transport]): explore this one
    board with the sharded explorer (explorers/parallel.py) when it can (BFS, no state graph, no
    ``max_states``, no reduction); ``make_system`` is picklable (:func:`system_factory`) and each
    worker builds its own engine and system with it; ``transport``: the workers' pool class (None:
    worker processes; ``--cluster``: explorers/cluster.py's ``explorer_transport``). This
    process's ``system`` replays the traces.
    ``reduce``: fold chains of forced passes into one transition (explorers/reduce.py; same
    verdicts and property statistics, fewer states stored); not for differential mode or a
    checkpoint, which explore every state. A reduced board is sharded too: each worker folds the
    same chains (where a chain ends depends on the states alone) and the explorer counts the
    verdicts of each folded state once (``Reduced.claims``), so the result does not depend on the
    worker count.

    ``progress``: a task of the run's progress (:mod:`bpcheck.explorers.progress`: anything with
    the explorers' ``update``/``done``), or, for library calls, None (a line on a terminal only),
    True (also plain lines elsewhere) or False (nothing). ``found(violation, reduced)`` is called
    as soon as each distinct violation is found, while the exploration goes on (``reduced``: its
    trace is of the reduced system), e.g. to show the first counterexample at once."""
    goals = parse_goals(board)
    try:
        system = system_cls(engine, board, invariants, goals)
    except EngineRefusal as r:  # the engine cannot play this board: skipped, never failed
        return _skipped(board, invariants, goals, strategy, r.reason)
    except SystemFault as f:  # the engine failed before giving the board's initial state
        return _fault_at_start(board, invariants, goals, engine_name, strategy, f)
    reduced = None
    if reduce and system_cls is EngineSystem and not controls.get("on_checkpoint") and controls.get("resume") is None:
        system = reduced = Reduced(system)
    prog = progress if hasattr(progress, "update") else Progress(board.name, progress)
    on_violation = None if found is None else functools.partial(found, reduced=reduced is not None)
    on_checkpoint = controls.pop("on_checkpoint", None)
    visitor = Callbacks(prog, on_violation, on_checkpoint)
    # The frontier keeps whole states: packing observations as JSON bytes (FramePacker) was
    # measured to cost memory, not save it (docs/performance.md), so it is not used by default.
    explore_parallel = _parallel_explorer(parallel, strategy, graph_limit, controls, bounds)
    started = controls.pop("started", None) if explore_parallel is not None else None
    if started is not None and bounds.timeout is not None:  # the parallel explorer times itself: what is left

        bounds = Bounds(bounds.max_states, bounds.max_depth, max(1e-3, bounds.timeout - (time.monotonic() - started)))
    options = ExploreOptions(strategy, bounds, [g.id for g in goals], record_graph=graph_limit, checkpoint=on_checkpoint is not None, **controls)
    if explore_parallel is not None:
        workers, make_system, transport = (*parallel, None)[:3]  # type: ignore[misc]
        if reduced is not None:
            make_system = functools.partial(reduced_system, make_system)
        res = explore_parallel(make_system, workers, options, visitor, transport=transport, finish=_worker_info)
        for where in res.lost_workers or []:  # said, never silent; the result is the same
            print(f"bpcheck: {board.name}: worker lost ({where}); the exploration went back to the last committed chunk, which was expanded again by new workers", file=sys.stderr)
        merged: dict[str, set] = {}
        unreported: set = set()
        for part in getattr(res, "worker_info", None) or []:
            for k, v in ((part or {}).get("not_judged") or {}).items():
                merged.setdefault(k, set()).update(v)
            unreported.update((part or {}).get("not_compared") or ())
        system.not_judged = merged  # the workers', not this process's (which explored nothing)
        if hasattr(system, "not_compared_fields"):
            system.not_compared_fields.update(unreported)
    else:
        res = explore(system, options, visitor)
    if reduced is not None:
        reduced.finish(res)  # replays from now on re-execute every chain in full, judging nothing
    if res.graph is not None:  # graph_limit: keep the small state graph, states as observations
        res.graph = res.graph.map_states(lambda s: s[1])
    br = BoardResult(board, res, list(invariants), goals)
    if reduced is not None:
        # the forced states judged (each once, in whichever process), and every step judged: the
        # transitions the explorer took and the one forced step out of each forced state
        forced = res.claimed if res.claimed is not None else len(reduced.judged)
        br.reduction = {"forced_states": forced, "micro_transitions": res.transitions + forced}
    br.not_compared = list(getattr(system, "unobserved", ()))
    # differential mode: the fields one side does not report (an adapter's gaps), never compared
    unreported = sorted(getattr(system, "not_compared_fields", ()) or ())
    br.not_evaluated = dict(getattr(system, "not_evaluated", {}))
    br.not_evaluated_parts = {k: list(v) for k, v in getattr(system, "not_evaluated_parts", {}).items()}
    nj = getattr(system, "not_judged", None)
    if nj is None:  # a wrapping system (differential): its inner EngineSystem's
        nj = getattr(getattr(system, "inner", None), "not_judged", None) or {}
    br.not_judged = {k: sorted(v) for k, v in sorted(nj.items())}
    for v in sorted(res.violations, key=lambda v: (v.depth, v.prop, str(v.key))):
        try:
            cex = build_counterexample(system, v, invariants, engine_name)
        except SystemFault as f:  # an engine that does not replay its own trace
            cex = _unreplayed(system, v, invariants, engine_name, f)
        cex.shortest = strategy == "bfs"
        br.counterexamples.append(cex)
    unreported = sorted(set(unreported) | set(getattr(system, "not_compared_fields", ()) or ()))
    br.not_reported = [{"path": p, "side": side} for p, side in unreported]
    br.not_compared += [p for p in dict.fromkeys(p for p, _side in unreported) if p not in br.not_compared]
    for g in goals:
        tr = res.goals.get(g.id)
        if tr is None:
            br.witnesses[g.id] = None
        else:
            try:
                if reduced is not None:
                    br.witnesses[g.id] = [a.label for a in expand_witness(reduced, res.goal_initial.get(g.id, 0), tr)]
                    continue
                trail = replay_trace(system, res.goal_initial.get(g.id, 0), tr)
                br.witnesses[g.id] = [a.label for (_s, a, _i) in trail[:-1]]
            except SystemFault:  # the engine did not replay it: action indices stand in for labels
                br.witnesses[g.id] = [f"#{ai}" for ai in tr]
    return br


PARALLEL_UNSUPPORTED = ("pack", "unpack")


def can_shard(strategy: str, graph_limit, controls: dict, bounds: Bounds) -> bool:
    """Whether the sharded explorer can take a board explored with these settings: breadth first,
    no state graph, no ``max_states`` (the parallel explorer stops at a chunk boundary, past the
    bound, and the result would then depend on the worker count being 1 or more)."""
    if strategy != "bfs" or graph_limit is not None or bounds.max_states is not None:
        return False
    return not any(controls.get(k) is not None for k in PARALLEL_UNSUPPORTED)


def _parallel_explorer(parallel, strategy: str, graph_limit, controls: dict, bounds: Bounds):
    """explore_parallel, when this board can use it (:func:`can_shard`); else None (the
    sequential explorer)."""
    if not parallel or parallel[0] <= 1 or not can_shard(strategy, graph_limit, controls, bounds):
        return None
    return parallel_explorer.explore_parallel  # through the module: tests plant a failing one


def _not_judged_of(system) -> dict:
    nj = getattr(system, "not_judged", None)
    if nj is None:
        nj = getattr(getattr(system, "inner", None), "not_judged", None) or {}
    return {k: set(v) for k, v in nj.items()}


def _worker_info(system) -> dict:
    """What a worker of the parallel explorer hands back besides its states: the situations its
    invariants could not judge, and the fields one side did not report (differential mode)."""
    return {"not_judged": _not_judged_of(system), "not_compared": set(getattr(system, "not_compared_fields", ()) or ())}


def reduced_system(make_system) -> Any:
    """``make_system()`` with its chains of forced passes folded (a worker of the parallel
    explorer calls it through ``functools.partial``: explorers/reduce.py)."""
    return Reduced(make_system())


def build_system(board: Board, engine_spec: str | None, engine_kw: dict, inv_ids: Sequence[str], system_cls=EngineSystem):
    """A transition system for one board, built from plain data (a worker of the parallel
    explorer calls it through :func:`system_factory`)."""
    return system_cls(make_engine(engine_spec, **engine_kw), board, invariants_by_id(inv_ids), parse_goals(board))


def system_factory(board: Board, engine_spec: str | None, engine_kw: dict, inv_ids: Sequence[str], system_cls=EngineSystem):
    return functools.partial(build_system, board, engine_spec, engine_kw, list(inv_ids), system_cls)


def overall_verdict(verdicts: Sequence[str], errors: int = 0, strict: bool = False, interrupted: bool = False) -> str:
    """error > fail > inconclusive > pass. A skipped board does not change a pass unless
    `strict` (then it is inconclusive: that board was not checked); an interrupted run is never a
    pass."""
    if errors:
        return "error"
    if "fail" in verdicts:
        return "fail"
    if "inconclusive" in verdicts or interrupted or (strict and "skipped" in verdicts):
        return "inconclusive"
    return "pass"


def result_document(
    results: list[BoardResult],
    engine: str,
    strategy: str,
    bounds: Bounds,
    errors: list[dict],
    timings: bool = False,
    strict: bool = False,
    interrupted: dict | None = None,
    internal_error: str | None = None,
    fail_fast: dict | None = None,
    excluded: list[str] | None = None,
    ruleset: str | None = None,
) -> dict:
    """The `--json` document. ``ruleset``: ``--ruleset`` (the ruleset of boards that name none;
    each board says its own). ``interrupted`` ({signal, not_started}) when a signal stopped the
    run; ``internal_error`` (one line) when bpcheck itself failed after these boards."""
    verdicts = [r.verdict for r in results]
    overall = overall_verdict(verdicts, len(errors), strict, interrupted is not None or internal_error is not None)
    counts = {k: verdicts.count(k) for k in ("pass", "fail", "inconclusive", "skipped")}
    counts["bad_input"] = len(errors)
    extra: dict[str, Any] = {}
    if interrupted is not None:
        extra["interrupted"] = interrupted
    if internal_error is not None:
        extra["internal_error"] = internal_error
    if fail_fast is not None:  # --fail-fast: {"stopped_at": board or None, "not_run": [boards]}
        extra["fail_fast"] = fail_fast
    if excluded:  # --exclude: the board files left out (not checked)
        extra["excluded"] = list(excluded)
    return {
        "bpcheck": __version__,
        "schema": RESULT_SCHEMA_VERSION,
        "engine": engine,
        "ruleset": ruleset or DEFAULT_RULESET,
        "strategy": strategy,
        "bounds": {"max_states": bounds.max_states, "max_depth": bounds.max_depth, "timeout_s": bounds.timeout},
        "verdict": overall,
        "counts": counts,
        "strict": strict,
        "boards": [r.to_dict(timings=timings) for r in results],
        "errors": errors,
        **extra,
    }


# ------------------------------------------------------------------------------------------
# Per-board tasks for worker processes (`bpcheck check -j N`, explorers/pool.py). A worker is
# sent plain data (the loaded board, the engine spec, invariant IDs) and builds its own engine;
# the BoardResult comes back with its invariants as IDs (Invariant objects hold decorated
# functions, which do not pickle) and the parent puts its own Invariant objects back.


def invariants_by_id(ids: Sequence[str]) -> list[Invariant]:
    return [DIFF_INVARIANT if i == DIFF_INVARIANT.id else REGISTRY[i] for i in ids]


def check_board_task(board: Board, engine_spec: str | None, engine_kw: dict, inv_ids: Sequence[str], strategy: str, bounds: Bounds, engine_name: str, controls: dict) -> tuple:
    """Check one board in a worker process: ``("ok", BoardResult)`` with the invariants as IDs,
    or ``("input", file, field, problem)`` for bad input found only while checking (goals)."""
    invariants = invariants_by_id(inv_ids)
    controls = dict(controls)
    controls.setdefault("stop", stop_reason)  # in this process (-j 1), the caller's own signal poll
    progress = controls.pop("progress", False)  # a task of the caller's progress (in its process)
    if progress is False and in_worker():  # a worker draws nothing: its counts go to the parent

        progress = RemoteTask(notify)
        controls.setdefault("found", _found_note)
    try:
        br = check_board(board, make_engine(engine_spec, **engine_kw), invariants, strategy, bounds, engine_name, progress=progress, **controls)
    except InputError as e:
        return ("input", e.file, e.field, e.problem)
    br.invariants = [i.id for i in br.invariants]  # type: ignore[misc]
    return ("ok", br)


def _found_note(v: Violation, reduced: bool) -> None:
    """A violation found in a worker, sent to the parent at once (``("violation", v, reduced)``:
    the parent replays it on a system of its own to show it while the board goes on)."""
    notify(("violation", v, reduced))


def restore_invariants(br: BoardResult, invariants: Sequence[Invariant]) -> BoardResult:
    """The parent's side of :func:`check_board_task`."""
    by_id = {i.id: i for i in invariants}
    br.invariants = [by_id[i] if isinstance(i, str) else i for i in br.invariants]
    return br
