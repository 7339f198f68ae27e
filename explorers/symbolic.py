"""Symbolic numbers: explicit control, symbolic data (``bpcheck prove``, docs/proving.md).

A symbolic board gives ranges for some numbers (a card's ATK/DEF, a player's LP). The explorer
enumerates the board's states breadth-first as the concrete explorer does, but a node is a
state *and a path condition*: the conjunction of the outcomes of the symbolic comparisons the
rules made to get there. Every call into the engine (legal actions, a transition and its
observation) and every invariant check runs under a :class:`_Run`, the active
:class:`bpcheck.model.arith.Decider`: a comparison whose outcome the path condition already
fixes is decided by z3 at once; one with two feasible outcomes makes the explorer run the call
once per outcome (each *fork* joins the path condition). The rules are the model's own code,
evaluated over z3 terms through :mod:`bpcheck.model.arith`: there is no second copy of the rules
for z3.

An invariant is decided per path the same way: its comparisons fork too, and a branch of the
check that returns a violation under a satisfiable path condition is a violation *for the values
of that condition* — z3 gives a witness (the lexicographically least values, so boundaries come
first); when no branch can return one, the invariant is proven on that path for every value of
the ranges. A solver answer of ``unknown`` (or a timeout) is inconclusive, never a pass.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import orjson
import xxhash

from bpcheck.explorers.checking import _guarded
from bpcheck.invariants.base import Context, Invariant, NotJudged, Transition
from bpcheck.invariants.cards import CardFacts
from bpcheck.invariants.monitor import Monitor
from bpcheck.model import arith
from bpcheck.model.board import Board, NumberRange
from bpcheck.model.events import Event

PathCond = tuple  # ((z3 BoolRef, rule ID or None), ...)


class Inconclusive(Exception):
    """The solver could not decide a query (timeout / unknown), or a symbolic number reached code
    that cannot handle it: the board's result is inconclusive."""


@dataclass
class SolverStats:
    queries: int = 0
    seconds: float = 0.0
    cache_hits: int = 0
    slowest: float = 0.0
    cores: int = 0  # unsat-core queries (why an outcome is impossible: rule IDs for reports)
    core_seconds: float = 0.0


class PathSolver:
    """Feasibility of path conditions over a board's ranges, cached, with a per-query timeout."""

    def __init__(self, ranges: Sequence[NumberRange], timeout_s: float | None) -> None:
        z3 = arith.z3mod()
        self.z3 = z3
        self.ranges = list(ranges)
        self.vars = {r.name: z3.Int(r.name) for r in self.ranges}
        self.domain: list[tuple[Any, str]] = []
        for r in self.ranges:
            x = self.vars[r.name]
            c = z3.And(x >= r.min, x <= r.max)
            if r.step != 1:
                c = z3.And(c, (x - r.min) % r.step == 0)
            self.domain.append((c, f"the range of {r.label}"))
        self.timeout_ms = None if timeout_s is None else max(1, int(timeout_s * 1000))
        self.stats = SolverStats()
        self._cache: dict[tuple, tuple] = {}

    def _solver(self):
        s = self.z3.Solver()
        if self.timeout_ms is not None:
            s.set("timeout", self.timeout_ms)
        for c, _why in self.domain:
            s.add(c)
        return s

    def check(self, pc: PathCond, extra=None) -> str:
        """'sat' / 'unsat' for the ranges ∧ pc (∧ extra); raises Inconclusive on unknown."""
        key = (tuple(sorted(c.get_id() for c, _r in pc)), None if extra is None else extra.get_id())
        hit = self._cache.get(key)
        if hit is not None:
            self.stats.cache_hits += 1
            return hit[0]
        s = self._solver()
        for c, _r in pc:
            s.add(c)
        if extra is not None:
            s.add(extra)
        t0 = time.perf_counter()
        r = s.check()
        dt = time.perf_counter() - t0
        self.stats.queries += 1
        self.stats.seconds += dt
        self.stats.slowest = max(self.stats.slowest, dt)
        if r == self.z3.unknown:
            raise Inconclusive(f"the solver answered unknown ({s.reason_unknown()}) for {extra if extra is not None else 'a path condition'}")
        out = "sat" if r == self.z3.sat else "unsat"
        # The entry keeps its terms alive: z3 reuses the ids of freed terms.
        self._cache[key] = (out, pc, extra)
        return out

    def core(self, pc: PathCond, extra) -> list[str]:
        """Why ranges ∧ pc ∧ extra is unsat: the rule IDs and ranges of an unsat core."""
        key = ("core", tuple(sorted(c.get_id() for c, _r in pc)), extra.get_id())
        hit = self._cache.get(key)
        if hit is not None:
            return hit[0]
        t0 = time.perf_counter()
        out = self._core(pc, extra)
        self.stats.cores += 1
        self.stats.core_seconds += time.perf_counter() - t0
        self._cache[key] = (out, pc, extra)
        return out

    def _core(self, pc: PathCond, extra) -> list[str]:
        z3 = self.z3
        s = z3.Solver()
        if self.timeout_ms is not None:
            s.set("timeout", self.timeout_ms)
        s.set("core.minimize", True)
        why: dict[str, str] = {}
        for i, (c, w) in enumerate(self.domain):
            p = z3.Bool(f"__range{i}")
            s.add(z3.Implies(p, c))
            why[str(p)] = w
        for i, (c, rule) in enumerate(pc):
            p = z3.Bool(f"__pc{i}")
            s.add(z3.Implies(p, c))
            why[str(p)] = f"rule {rule}" if rule else f"the path condition {c}"
        s.add(extra)
        lits = [z3.Bool(k) for k in why]
        if s.check(*lits) != z3.unsat:
            return []
        return sorted({why[str(x)] for x in s.unsat_core()})

    def least_model(self, pc: PathCond) -> dict[str, int]:
        """Values for every range under pc: the lexicographically least (boundaries first)."""
        z3 = self.z3
        o = z3.Optimize()
        if self.timeout_ms is not None:
            o.set("timeout", self.timeout_ms)
        o.set(priority="lex")
        for c, _w in self.domain:
            o.add(c)
        for c, _r in pc:
            o.add(c)
        for r in self.ranges:
            o.minimize(self.vars[r.name])
        res = o.check()
        if res != z3.sat:
            raise Inconclusive(f"no values found for a feasible path ({res})")
        m = o.model()
        return {r.name: m.eval(self.vars[r.name], model_completion=True).as_long() for r in self.ranges}


class _Run:
    """One execution of a call under a decision script (the outcomes of earlier forks)."""

    def __init__(self, solver: PathSolver, pc: PathCond, script: list[bool], cores: set[str] | None) -> None:
        self.solver = solver
        self.pc = list(pc)
        self.script = script
        self.i = 0
        self.trail: list[bool] = []  # outcomes of the forks met, in order
        self.new_forks: list[int] = []  # fork positions first met in this run (True taken)
        self.cores = cores  # invariant runs: collect why an outcome is impossible

    def decide(self, cond, rule: str | None) -> bool:
        z3 = self.solver.z3
        pc = tuple(self.pc)
        t = self.solver.check(pc, cond) == "sat"
        f = self.solver.check(pc, z3.Not(cond)) == "sat"
        if not (t and f):
            if not (t or f):
                raise Inconclusive("an infeasible path was explored")
            if self.cores is not None:
                self.cores.update(self.solver.core(pc, z3.Not(cond) if t else cond))
            return t  # the path condition already decides it: no fork, nothing to record
        if self.i < len(self.script):  # a fork met before: the outcome this run follows
            b = self.script[self.i]
        else:
            self.new_forks.append(self.i)
            b = True
        self.trail.append(b)
        self.i += 1
        self.pc.append((cond if b else z3.Not(cond), rule))
        return b


def all_paths(solver: PathSolver, pc: PathCond, fn: Callable[[], Any], cores: set[str] | None = None) -> list[tuple[PathCond, Any]]:
    """Run `fn` once per feasible combination of outcomes of its symbolic comparisons:
    [(path condition, result)], in a fixed order (the True outcome first)."""
    out = []
    pending: deque[list[bool]] = deque([[]])
    while pending:
        script = pending.popleft()
        run = _Run(solver, pc, script, cores)
        with arith.deciding(run):
            result = fn()
        for pos in run.new_forks:
            pending.append(run.trail[:pos] + [False])
        out.append((tuple(run.pc), result))
    return out


def _readable(c):
    """Not(a > b) as a <= b, and so on: how a rules engineer writes a case."""
    z3 = arith.z3mod()
    if z3.is_not(c):
        x = c.arg(0)
        flip = {z3.Z3_OP_GT: lambda a, b: a <= b, z3.Z3_OP_LT: lambda a, b: a >= b, z3.Z3_OP_GE: lambda a, b: a < b,
                z3.Z3_OP_LE: lambda a, b: a > b, z3.Z3_OP_EQ: lambda a, b: a != b}
        k = x.decl().kind() if z3.is_app(x) else None
        if k in flip and x.num_args() == 2:
            return flip[k](x.arg(0), x.arg(1))
    return c


def pc_text(pc: PathCond) -> list[str]:
    return [" ".join(str(_readable(c)).split()) for c, _r in pc]


# =============================================================================================
# The explorer
# =============================================================================================


@dataclass
class Node:
    state: Any
    obs: dict
    pc: PathCond
    parent: int | None
    label: str | None  # the action that led here
    depth: int
    terminal: bool = False
    dup: bool = False  # a state already seen, kept only so the edge's trace can be named
    mon: Any = None  # the invariants' own history (bpcheck.invariants.monitor), part of the state


@dataclass
class Witness:
    invariant: str
    message: str  # as the symbolic check said it
    values: dict[str, int]
    node: int  # the node the violation is seen at (after the transition, for transitions)
    kind: str  # state / transition / actions
    labels: list[str]  # the actions from the initial state
    pc: list[str]


@dataclass
class InvResult:
    checks: int = 0  # branches on which its situation arose and it was decided
    violations: int = 0
    witness: Witness | None = None
    cores: set[str] = field(default_factory=set)
    inconclusive: str | None = None


@dataclass
class SymbolicResult:
    board: Board
    engine: str
    invariants: list[Invariant]
    nodes: list[Node] = field(default_factory=list)
    transitions: int = 0
    inv: dict[str, InvResult] = field(default_factory=dict)
    inconclusive: str | None = None
    elapsed: float = 0.0
    solver: SolverStats = field(default_factory=SolverStats)

    @property
    def terminal_pcs(self) -> list[PathCond]:
        """The numeric cases: the distinct path conditions of the paths' ends, in BFS order."""
        seen: set = set()
        out = []
        for n in self.nodes:
            if not n.terminal:
                continue
            key = frozenset(_pc_key(n.pc))
            if key not in seen:
                seen.add(key)
                out.append(n.pc)
        return out

    @property
    def states(self) -> int:
        return sum(1 for n in self.nodes if not n.dup)

    @property
    def paths(self) -> int:
        return sum(1 for n in self.nodes if n.terminal)

    @property
    def status(self) -> str:
        if any(r.violations for r in self.inv.values()):
            return "violated"
        if self.inconclusive or any(r.inconclusive for r in self.inv.values()):
            return "inconclusive"
        return "proven"

    def labels_to(self, i: int) -> list[str]:
        out = []
        while self.nodes[i].parent is not None:
            out.append(self.nodes[i].label)
            i = self.nodes[i].parent
        return list(reversed(out))


def _pc_key(pc: PathCond) -> list[str]:
    return sorted(c.sexpr() for c, _r in pc)  # z3's own text: much faster than its pretty printer


def _fingerprint(obs: dict, pc: PathCond, mon: Any = None) -> int:
    data = {"obs": arith.jsonable(obs, sexpr=True), "pc": _pc_key(pc), "mon": "" if mon is None else mon.canonical().hex()}
    return xxhash.xxh3_64_intdigest(orjson.dumps(data, option=orjson.OPT_SORT_KEYS))


def _concrete_message(inv: Invariant, args: tuple, values: dict[str, int]) -> str | None:
    """The invariant's message for the witness values: its check run again on the data made
    concrete (the symbolic message names terms, not numbers)."""
    def conc(x):
        return arith.substitute(x, values)

    def conc_events(evs):
        return [Event(e.kind, tuple((k, conc(v)) for k, v in e.data)) for e in evs]

    if args and isinstance(args[0], Transition):
        t = args[0]
        args = (Transition(conc(t.before), conc(t.action), conc_events(t.events), conc(t.after), t.mon, t.cards, t.mon_after),)
    else:
        args = tuple(a if isinstance(a, Context) else conc(a) for a in args)
    try:
        v = _guarded(inv, *args)
    except arith.SymbolicValueError:
        return None
    return v if isinstance(v, str) else None


def _reset_caches(engine) -> None:
    # The rules cache a state's legal actions by identity; under another path condition the
    # same state may offer other actions, so every call starts afresh.
    rules = getattr(engine, "_rules", None)
    if rules is not None and hasattr(rules, "_legal_for"):
        rules._legal_for = None


def explore_symbolic(
    engine,
    board: Board,
    invariants: Sequence[Invariant],
    engine_name: str = "reference",
    timeout_s: float | None = 10.0,
    max_states: int | None = None,
    progress=None,
) -> SymbolicResult:
    """Every path of `board` under `engine` (an engine built on the reference rules), every
    invariant decided per path for every value of the board's ranges."""
    solver = PathSolver(board.symbols, timeout_s)
    res = SymbolicResult(board, engine_name, list(invariants), solver=solver.stats)
    res.inv = {i.id: InvResult() for i in invariants}
    state_invs = [i for i in invariants if i.kind == "state"]
    trans_invs = [i for i in invariants if i.kind == "transition"]
    action_invs = [i for i in invariants if i.kind == "actions"]
    t0 = time.perf_counter()
    cards = CardFacts.for_board(board)
    visited: dict[int, int] = {}
    queue: deque[int] = deque()

    def judge(inv: Invariant, pc: PathCond, node: int, kind: str, args: tuple) -> None:
        r = res.inv[inv.id]
        if r.inconclusive:
            return
        try:
            branches = all_paths(solver, pc, lambda: _guarded(inv, *args), cores=r.cores)
        except (Inconclusive, arith.SymbolicValueError) as e:
            r.inconclusive = str(e)
            return
        for bpc, verdict in branches:
            if verdict is None or isinstance(verdict, NotJudged):  # not judged: never a pass or a failure
                continue
            r.checks += 1
            if verdict is True:
                continue
            r.violations += 1
            if r.witness is None:
                values = solver.least_model(bpc)
                msg = _concrete_message(inv, args, values) or str(verdict)
                r.witness = Witness(inv.id, msg, values, node, kind, res.labels_to(node), pc_text(bpc))

    def add_node(n: Node) -> int | None:
        fp = _fingerprint(n.obs, n.pc, n.mon)
        if fp in visited:
            return None
        visited[fp] = len(res.nodes)
        res.nodes.append(n)
        queue.append(len(res.nodes) - 1)
        return len(res.nodes) - 1

    try:
        s0 = engine.start(board)

        def first():
            _reset_caches(engine)
            return engine.observe(s0), engine.is_terminal(s0)

        for pc, (obs, term) in all_paths(solver, (), first):
            mon0 = Monitor.initial()
            i = add_node(Node(s0, obs, pc, None, None, 0, term, mon=mon0))
            if i is not None:
                for inv in state_invs:
                    judge(inv, pc, i, "state", (obs, Context(mon0, cards)))
        while queue:
            if max_states is not None and len(res.nodes) >= max_states:
                res.inconclusive = f"max states ({max_states}) reached"
                break
            ni = queue.popleft()
            node = res.nodes[ni]
            if progress is not None:  # a task of the run's progress (explorers/progress.py)
                progress.update(len(res.nodes), node.depth, len(queue))
            if node.terminal:
                continue

            def legal():
                _reset_caches(engine)
                return list(engine.legal_actions(node.state))

            for pc1, actions in all_paths(solver, node.pc, legal):
                if action_invs:
                    recs = [a.to_dict() for a in actions]
                    for inv in action_invs:
                        judge(inv, pc1, ni, "actions", (node.obs, recs, Context(node.mon, cards)))
                if not actions:
                    node.terminal = True  # a deadlock: the concrete checker reports those
                for a in actions:

                    def step(a=a):
                        _reset_caches(engine)
                        s2, events = engine.apply(node.state, a)
                        return s2, list(events), engine.observe(s2), engine.is_terminal(s2)

                    for pc2, (s2, events, obs2, term) in all_paths(solver, pc1, step):
                        res.transitions += 1
                        t = Transition(node.obs, a.to_dict(), events, obs2, node.mon, cards)
                        t.mon_after = mon2 = node.mon.advance(t)
                        child = Node(s2, obs2, pc2, ni, a.label, node.depth + 1, term, mon=mon2)
                        ci = add_node(child)
                        where = ci
                        if ci is None:  # a state seen before: the edge is judged all the same
                            child.dup, child.terminal = True, False
                            res.nodes.append(child)
                            where = len(res.nodes) - 1
                        kinds = t.kind_set()
                        for inv in trans_invs:
                            if inv.events is not None and kinds.isdisjoint(inv.events):
                                continue
                            judge(inv, pc2, where, "transition", (t,))
                        if ci is not None:
                            for inv in state_invs:
                                judge(inv, pc2, ci, "state", (obs2, Context(mon2, cards)))
    except (Inconclusive, arith.SymbolicValueError) as e:
        res.inconclusive = str(e)
    res.elapsed = time.perf_counter() - t0
    if progress is not None:
        progress.done()
    return res
