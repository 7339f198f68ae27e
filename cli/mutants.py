"""`bpcheck mutants`: its table and its exit status (running the mutants: :mod:`bpcheck.harness.mutants`)."""

from __future__ import annotations

import json

from bpcheck.cli.args import error as _err
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK
from bpcheck.engines.mutants import MUTANTS
from bpcheck.errors import InputError, did_you_mean
from bpcheck.explorers.core import Bounds
from bpcheck.harness.boards import board_files
from bpcheck.harness.feedback import run_progress
from bpcheck.harness import lifecycle
from bpcheck.harness.jobs import resolve_jobs, setup_cluster
from bpcheck.harness.mutants import _reports, mutant_rows
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.model.rulesets import DEFAULT_RULESET
from bpcheck.reports.outputs import atomic_write_text, prepare_dir, prepare_file


def _row_text(row: dict) -> str:
    inv = row["invariant"] or "-"
    length = "-" if row["length"] is None else str(row["length"])
    status = "survived" if row["status"] != "killed" else "killed"
    where = row["board"] or (f"(not exhaustive: {row['bound_hit']})" if row["bound_hit"] else "-")
    return f"{row['mutant']:40} {status + ('*' if row['bound_hit'] else ''):9} {inv:30} {length:>6} {row['seconds']:6.1f}s  {where}"


def list_mutants() -> int:
    """`bpcheck mutants --list`: each mutant's name and the rules bug it plants, one line each."""
    width = max(len(n) for n in MUTANTS)
    for name, m in MUTANTS.items():
        print(f"{name:{width}}  {m.description}")
    return EXIT_OK


def cmd_mutants(args) -> int:
    if getattr(args, "list", False):
        return list_mutants()
    names = args.only.split(",") if args.only else list(MUTANTS)
    unknown = [n for n in names if n not in MUTANTS]
    if unknown:
        hints = "".join(did_you_mean(n, MUTANTS) for n in unknown) if len(unknown) == 1 else ""
        _err(InputError("--only", "", f"unknown mutant(s): {', '.join(unknown)}{hints} (known: {', '.join(MUTANTS)})"))
        return EXIT_BAD_INPUT
    try:
        boards = board_files(args.paths or ["boards/"])
        for p, d in boards:
            load_board(p, d, ruleset=getattr(args, "ruleset", None))
        if args.json:  # output paths are checked before the run; stale results removed
            prepare_file(args.json, "--json", inputs=tuple(p for p, _d in boards))
        if getattr(args, "report", None):
            prepare_dir(args.report, "--report", "report")
        setup_cluster(args, "mutant:" + names[0])  # --cluster: Ray, and bpcheck on every node
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    invariants = select(None)
    bounds = Bounds(max_states=args.max_states)
    rows = []
    ruleset = getattr(args, "ruleset", None)
    if ruleset is not None and ruleset != DEFAULT_RULESET:  # the ruleset said, as check says it (docs/rulesets.md)
        print(f"ruleset {ruleset} (boards that name none)")
    print(f"{'mutant':40} {'verdict':9} {'killed by':30} {'length':>6} {'time':>7}  board")
    progress = run_progress(args, "mutants", total=len(names), unit="mutants", failed="survived")
    stopped: lifecycle.Interrupted | None = None
    try:
        for row in mutant_rows(names, boards, invariants, bounds, bool(args.own_board_first), resolve_jobs(args.jobs), progress, _row_text, ruleset):
            rows.append(row)
            print(_row_text(row))
    except lifecycle.Interrupted as e:  # SIGINT / SIGTERM / SIGHUP: the rows so far are written, as `check` does
        stopped = e
    finally:
        progress.close()
    killed = sum(1 for r in rows if r["status"] == "killed")
    not_run = [n for n in names if n not in {r["mutant"] for r in rows}]
    bounded = [r for r in rows if r["status"] != "killed" and r["bound_hit"]]
    try:
        print(f"mutation score: {killed}/{len(rows)} killed")
        if bounded:
            print(
                f"* survived within the bound only ({bounds.max_states and f'--max-states {bounds.max_states}'}): "
                f"{len(bounded)} mutant{'s' if len(bounded) != 1 else ''} not killed on the states explored; they may die past the bound"
            )
        if stopped is not None:
            print(f"interrupted by {stopped.name}: the rows above are of the mutants finished before it; {len(not_run)} not run: {', '.join(not_run)}")
        if getattr(args, "report", None) or getattr(args, "github", False):
            _reports(args, rows, boards, invariants, bounds)
    except lifecycle.Interrupted as e:  # a (second) signal while the summary or reports are written: --json still is
        stopped = stopped or e
    if args.json:
        doc = _json_doc(rows, killed, bool(args.stats))
        doc["ruleset"] = ruleset or DEFAULT_RULESET
        if stopped is not None:
            doc["interrupted"] = {"signal": stopped.name, "not_run": not_run}
        try:
            with lifecycle.CURRENT.held():  # a signal now waits until the file is whole (issue 33)
                atomic_write_text(args.json, json.dumps(doc, indent=1) + "\n")
        except lifecycle.Interrupted as e:
            stopped = stopped or e
    if stopped is not None:
        return stopped.exit_status
    if killed == len(rows):
        return EXIT_OK
    if len(bounded) == len(rows) - killed:  # only bounded survivors: not known
        return EXIT_INCONCLUSIVE
    return EXIT_FAIL


def _json_doc(rows: list[dict], killed: int, stats: bool) -> dict:
    """--json: the rows, with their times only with --stats (not byte-for-byte deterministic)."""
    out = []
    for r in rows:
        r = dict(r)
        if not stats:
            r.pop("seconds")
            r.pop("cpu_seconds")
        else:
            r["seconds"] = round(r["seconds"], 3)
            r["cpu_seconds"] = round(r["cpu_seconds"], 3)
        out.append(r)
    return {"mutants": out, "killed": killed, "total": len(rows)}
