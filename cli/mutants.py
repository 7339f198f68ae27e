"""`bpcheck mutants`: run the checker on every mutant engine and measure how good a judge it is.

For each mutant (bpcheck.engines.mutants) the seed boards are explored — the mutant's own board
first, then the others in name order — until an invariant kills it. The table says which
invariant caught it, on which board, the counterexample's length and the time taken.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bpcheck.errors import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, InputError
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, explore
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.engines.mutants import MUTANTS, Mutant


def run_mutant(m: Mutant, boards: list[tuple[Path, str]], invariants, bounds: Bounds) -> dict:
    order = sorted(boards, key=lambda b: (b[0].name != m.board, b[0].name))
    t0 = time.perf_counter()
    explored = 0
    bounded: list[str] = []  # boards whose exploration hit the bound before it was exhaustive
    for path, display in order:
        board = load_board(path, display)
        system = EngineSystem(ReferenceEngine(m.rules, f"mutant:{m.name}"), board, invariants)
        r = explore(system, "bfs", bounds, stop_on_violation=True)
        explored += r.states
        if r.bound_hit and not r.violations:
            bounded.append(f"{display}: {r.bound_hit}")
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
                "seconds": time.perf_counter() - t0,
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
        "seconds": time.perf_counter() - t0,
    }


def _reports(args, rows: list[dict], boards, invariants, bounds: Bounds) -> None:
    """--report / --github: each killed mutant is checked again, exhaustively, on the board that
    killed it, so the report has its counterexamples, exercise counts and (small) state graph."""
    from bpcheck.engines import make_engine
    from bpcheck.explorers.run import check_board
    from bpcheck.reporting import emit_reports, graph_limit
    from bpcheck.reports.runs import Run

    paths = {display: path for path, display in boards}
    runs = []
    for row in rows:
        if row["status"] != "killed":
            continue
        name = f"mutant:{row['mutant']}"
        board = load_board(paths[row["board"]], row["board"])
        br = check_board(board, make_engine(name), invariants, "bfs", bounds, name, progress=None, graph_limit=graph_limit(args))
        runs.append(Run(name, br))
    meta = {"mutants": len(rows), "killed": sum(1 for r in rows if r["status"] == "killed")}
    survived = [r["mutant"] for r in rows if r["status"] != "killed"]
    if survived:
        meta["survived"] = ", ".join(survived)
    emit_reports(args, runs, [], "bpcheck mutants", meta)


def cmd_mutants(args) -> int:
    from bpcheck.main import _board_files, _err

    names = args.only.split(",") if args.only else list(MUTANTS)
    unknown = [n for n in names if n not in MUTANTS]
    if unknown:
        _err(InputError("--only", "", f"unknown mutant(s): {', '.join(unknown)} (known: {', '.join(MUTANTS)})"))
        return EXIT_BAD_INPUT
    try:
        boards = _board_files(args.paths or ["boards/"])
        for p, d in boards:
            load_board(p, d)
        from bpcheck.outputs import prepare_dir, prepare_file

        if args.json:  # output paths are checked before the run; stale results removed
            prepare_file(args.json, "--json", inputs=tuple(p for p, _d in boards))
        if getattr(args, "report", None):
            prepare_dir(args.report, "--report", "report")
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    invariants = select(None)
    bounds = Bounds(max_states=args.max_states)
    rows = []
    print(f"{'mutant':40} {'verdict':9} {'killed by':30} {'length':>6} {'time':>7}  board")
    for name in names:
        row = run_mutant(MUTANTS[name], boards, invariants, bounds)
        rows.append(row)
        inv = row["invariant"] or "-"
        length = "-" if row["length"] is None else str(row["length"])
        status = "survived" if row["status"] != "killed" else "killed"
        where = row["board"] or (f"(not exhaustive: {row['bound_hit']})" if row["bound_hit"] else "-")
        print(f"{name:40} {status + ('*' if row['bound_hit'] else ''):9} {inv:30} {length:>6} {row['seconds']:6.1f}s  {where}")
    killed = sum(1 for r in rows if r["status"] == "killed")
    bounded = [r for r in rows if r["status"] != "killed" and r["bound_hit"]]
    print(f"mutation score: {killed}/{len(rows)} killed")
    if bounded:
        print(
            f"* survived within the bound only ({bounds.max_states and f'--max-states {bounds.max_states}'}): "
            f"{len(bounded)} mutant{'s' if len(bounded) != 1 else ''} not killed on the states explored; they may die past the bound"
        )
    if getattr(args, "report", None) or getattr(args, "github", False):
        _reports(args, rows, boards, invariants, bounds)
    if args.json:
        out = []
        for r in rows:
            r = dict(r)
            if not args.stats:
                r.pop("seconds")
            else:
                r["seconds"] = round(r["seconds"], 3)
            out.append(r)
        doc = {"mutants": out, "killed": killed, "total": len(rows)}
        from bpcheck.outputs import atomic_write_text

        atomic_write_text(args.json, json.dumps(doc, indent=1) + "\n")
    if killed == len(rows):
        return EXIT_OK
    if len(bounded) == len(rows) - killed:  # only bounded survivors: not known
        return EXIT_INCONCLUSIVE
    return EXIT_FAIL
