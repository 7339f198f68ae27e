"""`bpcheck mutants`: its table and its exit status (running the mutants: :mod:`bpcheck.harness.mutants`)."""

from __future__ import annotations

from bpcheck.harness.mutants import _reports, run_mutant, run_mutant_task
import json
from bpcheck.errors import InputError
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK
from bpcheck.explorers.core import Bounds
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.engines.mutants import MUTANTS


def _row_text(row: dict) -> str:
    inv = row["invariant"] or "-"
    length = "-" if row["length"] is None else str(row["length"])
    status = "survived" if row["status"] != "killed" else "killed"
    where = row["board"] or (f"(not exhaustive: {row['bound_hit']})" if row["bound_hit"] else "-")
    return f"{row['mutant']:40} {status + ('*' if row['bound_hit'] else ''):9} {inv:30} {length:>6} {row['seconds']:6.1f}s  {where}"


def _rows(names: list[str], boards, invariants, bounds: Bounds, own_board_first: bool, jobs: int, progress=None):
    """Each mutant's row, in the order of ``names``, whatever the number of worker processes.
    ``progress``: the run's (bpcheck.explorers.progress); a row held back for that order is
    shown on stderr when it is known."""
    from bpcheck.explorers.progress import Progress, apply_remote

    if progress is None:
        progress = Progress("mutants", mode="off")
    if jobs <= 1 or len(names) <= 1:
        for name in names:
            task = progress.start(name)
            row = run_mutant(MUTANTS[name], boards, invariants, bounds, own_board_first, progress=task)
            progress.finish(task, failed=row["status"] != "killed")
            yield row
        return
    from bpcheck.explorers.pool import open_pool

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
        tasks_args = [(name, boards, bounds, own_board_first) for name in names]
        for o in pool.run(run_mutant_task, tasks_args, tick=tick):
            if not o.ok:  # a bug in bpcheck (or a dead worker): exit 4 after the rows so far
                raise RuntimeError(f"mutant {names[o.index]}: {o.error}" + (f"\n{o.traceback}" if o.traceback else ""))
            done[o.index] = o.value
            progress.finish(task_of(o.index), failed=o.value["status"] != "killed")
            if o.index != nxt:  # stdout holds it back for the mutants' order
                progress.note([" ".join(_row_text(o.value).split()) + " (on stdout in the mutants' order)"])
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1


def cmd_mutants(args) -> int:
    from bpcheck.cli.args import error as _err
    from bpcheck.harness.check import board_files as _board_files

    names = args.only.split(",") if args.only else list(MUTANTS)
    unknown = [n for n in names if n not in MUTANTS]
    if unknown:
        _err(InputError("--only", "", f"unknown mutant(s): {', '.join(unknown)} (known: {', '.join(MUTANTS)})"))
        return EXIT_BAD_INPUT
    try:
        boards = _board_files(args.paths or ["boards/"])
        for p, d in boards:
            load_board(p, d)
        from bpcheck.reports.outputs import prepare_dir, prepare_file

        if args.json:  # output paths are checked before the run; stale results removed
            prepare_file(args.json, "--json", inputs=tuple(p for p, _d in boards))
        if getattr(args, "report", None):
            prepare_dir(args.report, "--report", "report")
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    try:
        from bpcheck.harness.jobs import setup_cluster

        setup_cluster(args, "mutant:" + names[0])  # --cluster: Ray, and bpcheck on every node
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    invariants = select(None)
    bounds = Bounds(max_states=args.max_states)
    rows = []
    print(f"{'mutant':40} {'verdict':9} {'killed by':30} {'length':>6} {'time':>7}  board")
    from bpcheck.harness.feedback import run_progress
    from bpcheck.harness.jobs import resolve_jobs

    progress = run_progress(args, "mutants", total=len(names), unit="mutants", failed="survived")
    try:
        for row in _rows(names, boards, invariants, bounds, bool(args.own_board_first), resolve_jobs(args.jobs), progress):
            rows.append(row)
            print(_row_text(row))
    finally:
        progress.close()
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
                r.pop("cpu_seconds")
            else:
                r["seconds"] = round(r["seconds"], 3)
                r["cpu_seconds"] = round(r["cpu_seconds"], 3)
            out.append(r)
        doc = {"mutants": out, "killed": killed, "total": len(rows)}
        from bpcheck.reports.outputs import atomic_write_text

        atomic_write_text(args.json, json.dumps(doc, indent=1) + "\n")
    if killed == len(rows):
        return EXIT_OK
    if len(bounded) == len(rows) - killed:  # only bounded survivors: not known
        return EXIT_INCONCLUSIVE
    return EXIT_FAIL
