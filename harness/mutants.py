"""`bpcheck mutants`: run the checker on every mutant engine and measure how good a judge it is.

For each mutant (bpcheck.engines.mutants) the seed boards are explored cheapest first (by the
expected cost of cli/jobs.py), in rounds of growing state budgets (:func:`_schedule`: cli/jobs.py
`BudgetRounds`, shared with `check --fail-fast`), until an invariant kills it: the time to the first counterexample is then about that of the cheapest
way to it, whatever the estimate got wrong; ``--own-board-first`` starts on the seed
board written to show the mutant's bug (the order before issue 12). The table says which
invariant caught it, on which board, the counterexample's length and the time taken.
``-j N`` runs N mutants at once in worker processes; the rows are printed in the mutants' order.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from bpcheck.engines import make_engine
from bpcheck.engines.mutants import MUTANTS, Mutant
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, Callbacks, ExploreOptions, explore
from bpcheck.explorers.pool import notify, open_pool
from bpcheck.explorers.progress import Progress, RemoteTask, apply_remote
from bpcheck.explorers.run import check_board
from bpcheck.harness import jobs as schedule  # board_cost read through the module (a test sets it)
from bpcheck.harness.jobs import BudgetRounds
from bpcheck.harness.reporting import emit_reports, graph_limit
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.reports.runs import Run

_LOADED: dict[tuple[str, str], object] = {}  # boards loaded once per process (a worker runs several mutants)


def _load(path: Path, display: str, ruleset: str | None = None):
    """A board, played under `ruleset` (--ruleset) when it names none (docs/rulesets.md)."""
    key = (str(path), display, ruleset)
    if key not in _LOADED:
        _LOADED[key] = load_board(path, display, ruleset=ruleset)
    return _LOADED[key]


def mutant_order(m: Mutant, boards: list[tuple[Path, str]], own_board_first: bool = False) -> list[tuple[Path, str]]:
    """The boards to try on mutant ``m``: cheapest first (expected cost, cli/jobs.py; ties in the
    given order), or the mutant's own seed board first and then the others cheapest first."""
    costs = [schedule.board_cost(_load(p, d)) for p, d in boards]
    idx = sorted(range(len(boards)), key=lambda i: (own_board_first and boards[i][0].name != m.board, costs[i], i))
    return [boards[i] for i in idx]


class _Try:
    """One exploration of the schedule: its place in the rounds (``at``), its bounds, and
    ``again``, set by the caller when the round's budget alone cut it."""

    def __init__(self, at, bounds: Bounds) -> None:
        self.at = at  # bpcheck.harness.jobs.Try
        self.bounds = bounds
        self.final = at.final  # the user's own bounds: a bound hit now is a real one
        self.again = False


def _schedule(order, bounds: Bounds, own_board_first: bool):
    """(path, display, _Try) in the order to explore. ``--own-board-first``: each board once, in
    order, with the user's bounds (the order before issue 12). Otherwise the budget rounds of
    cli/jobs.py (:class:`~bpcheck.harness.jobs.BudgetRounds`, shared with `check --fail-fast`): 64, 256,
    1,024, ... states per board, never above ``--max-states``; every board still open is
    explored cheapest first within the round's budget, so a violation a few steps deep on a
    board the cost estimate ranks late is found in the first rounds, not after every cheaper
    board was exhausted; a board explored completely leaves the rounds. BFS within a budget
    finds the same shortest counterexample as without it. The caller sets ``again`` on a try
    cut by its budget only (:meth:`~bpcheck.harness.jobs.BudgetRounds.cut`)."""
    rounds = BudgetRounds(len(order), bounds.max_states, rounds=not own_board_first)
    while (t := rounds.take()) is not None:
        path, display = order[t.item]
        b = _Try(t, Bounds(t.cap, bounds.max_depth, bounds.timeout))
        yield path, display, b
        rounds.done(t, b.again)


def run_mutant(m: Mutant, boards: list[tuple[Path, str]], invariants, bounds: Bounds, own_board_first: bool = False, progress=None, ruleset: str | None = None) -> dict:
    """``progress``: the mutant's task of the run's progress (bpcheck.explorers.progress): every
    exploration's states add to it. ``ruleset``: --ruleset, the ruleset of boards that name none
    (the mutant plays under each board's: model/rulesets.py under_ruleset)."""
    order = mutant_order(m, boards, own_board_first)
    t0 = time.perf_counter()
    c0 = time.process_time()
    explored = 0
    bounded: list[str] = []  # boards whose exploration hit the bound before it was exhaustive
    tried: set[str] = set()  # boards explored (some several times, with growing budgets)
    runs = 0
    for path, display, b in _schedule(order, bounds, own_board_first):
        board = _load(path, display, ruleset)
        tried.add(display)
        runs += 1
        system = EngineSystem(ReferenceEngine(m.rules, f"mutant:{m.name}"), board, invariants)
        r = explore(system, ExploreOptions("bfs", b.bounds, stop_on_violation=True), Callbacks(progress))
        explored += r.states
        if r.bound_hit and not r.violations:
            if BudgetRounds.cut(b.at, r.bound_hit):
                b.again = True  # only this round's budget: the board comes back with a larger one
            else:
                bounded.append(f"{display}: {r.bound_hit}")  # the user's bound: not exhaustive
        if r.violations:
            v = sorted(r.violations, key=lambda v: (v.depth, v.prop))[0]
            return {
                "mutant": m.name,
                "description": m.description,
                "family": m.family,
                "status": "killed",
                "invariant": v.prop,
                "message": v.message,
                "board": display,
                "length": v.depth,
                "states_explored": explored,
                "bound_hit": None,
                "boards_tried": len(tried),
                "explorations": runs,
                "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0,
            }
    return {
        "mutant": m.name,
        "description": m.description,
        "family": m.family,
        "status": "survived" if not bounded else "survived within the bound",
        "invariant": None,
        "message": None,
        "board": None,
        "length": None,
        "states_explored": explored,
        # not exhaustive: the mutant may be killed past the bound (`--max-states`)
        "bound_hit": f"{bounded[0].split(': ', 1)[1]} on {len(bounded)} of {len(order)} boards" if bounded else None,
        "boards_tried": len(tried),
        "explorations": runs,
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
    }


def run_mutant_task(name: str, boards: list[tuple[Path, str]], bounds: Bounds, own_board_first: bool, ruleset: str | None = None) -> dict:
    """One mutant in a worker process (`bpcheck mutants -j N`): plain data in, a row out; its
    counts go to the parent as it runs (explorers/pool.py ``notify``)."""
    return run_mutant(MUTANTS[name], boards, select(None), bounds, own_board_first, progress=RemoteTask(notify), ruleset=ruleset)


def _reports(args, rows: list[dict], boards, invariants, bounds: Bounds) -> None:
    """--report / --github: each killed mutant is checked again, exhaustively, on the board that
    killed it, so the report has its counterexamples, exercise counts and (small) state graph."""
    paths = {display: path for path, display in boards}
    runs = []
    for row in rows:
        if row["status"] != "killed":
            continue
        name = f"mutant:{row['mutant']}"
        board = load_board(paths[row["board"]], row["board"], ruleset=getattr(args, "ruleset", None))
        br = check_board(board, make_engine(name), invariants, "bfs", bounds, name, progress=False, graph_limit=graph_limit(args))
        runs.append(Run(name, br))
    meta = {"mutants": len(rows), "killed": sum(1 for r in rows if r["status"] == "killed")}
    survived = [r["mutant"] for r in rows if r["status"] != "killed"]
    if survived:
        meta["survived"] = ", ".join(survived)
    emit_reports(args, runs, [], "bpcheck mutants", meta)


def mutant_rows(names: list[str], boards, invariants, bounds: Bounds, own_board_first: bool, jobs: int, progress=None, row_text: Callable[[dict], str] = str, ruleset: str | None = None):
    """Each mutant's row, in the order of ``names``, whatever the number of worker processes.
    ``progress``: the run's (bpcheck.explorers.progress); a row held back for that order is
    shown on stderr when it is known (as ``row_text`` writes it)."""
    if progress is None:
        progress = Progress("mutants", mode="off")
    if jobs <= 1 or len(names) <= 1:
        for name in names:
            task = progress.start(name)
            row = run_mutant(MUTANTS[name], boards, invariants, bounds, own_board_first, progress=task, ruleset=ruleset)
            progress.finish(task, failed=row["status"] != "killed")
            yield row
        return

    done: dict[int, dict] = {}
    tasks: dict[int, object] = {}
    nxt = 0

    def task_of(i: int):
        if i not in tasks:
            tasks[i] = progress.start(names[i])
        return tasks[i]

    def tick() -> None:
        for i in pool.running():
            task_of(i)

    with open_pool(jobs, on_note=lambda i, payload: apply_remote(task_of(i), payload)) as pool:  # worker processes, or Ray tasks with --cluster
        tasks_args = [(name, boards, bounds, own_board_first, ruleset) for name in names]
        for o in pool.run(run_mutant_task, tasks_args, tick=tick):
            if not o.ok:  # a bug in bpcheck (or a dead worker): exit 4 after the rows so far
                raise RuntimeError(f"mutant {names[o.index]}: {o.error}" + (f"\n{o.traceback}" if o.traceback else ""))
            done[o.index] = o.value
            progress.finish(task_of(o.index), failed=o.value["status"] != "killed")
            if o.index != nxt:  # stdout holds it back for the mutants' order
                progress.note([" ".join(row_text(o.value).split()) + " (on stdout in the mutants' order)"])
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1
