#!/usr/bin/env python3
"""Time to the first counterexample of `bpcheck check BOARDS --fail-fast --engine mutant:NAME`,
with the schedule before and after the budget rounds (cli/jobs.py `BudgetRounds`).

Not a test: it measures. Figures go into docs/performance.md (section "`check --fail-fast` in
budget rounds"). Each figure is the CPU time of this one process (`time.process_time()`, a
shared machine disturbs it less than wall time) for one `run_check_jobs` call with -j 1: every
board loaded, explored (reduced, all invariants, BFS, stop at the first violation) in the
schedule's order until the first failing board:

    nice python benchmarks/fail_fast_bench.py --only NAMES [--old REF] [--repeat 2] [--upto N] [--out FILE.json]

NAMES are mutants (`mutant:NAME`), or `reference` for the price of the rounds when nothing
fails; ``--upto N``: only the boards of at most N stored states (tests/perft.json, reduced).

- old: cli/jobs.py as of git REF (default c0de763, main before the rounds): cheapest first,
  each board explored to the end before the next;
- new: this tree's cli/jobs.py: cheapest first in rounds of 64, 256, 1,024, ... states.
Runs alternate old/new (the machine is shared); the figure kept is the smallest of the repeats.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import types
from pathlib import Path

from bpcheck.explorers.core import Bounds
from bpcheck.explorers.run import check_board_task, restore_invariants
from bpcheck.invariants import select
from bpcheck.harness.lifecycle import Signals
from bpcheck.harness.boards import board_files as _board_files
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent


def old_jobs(ref: str) -> types.ModuleType:
    src = subprocess.run(["git", "show", f"{ref}:cli/jobs.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    mod = types.ModuleType("bpcheck_old_jobs")
    mod.__file__ = f"{ref}:cli/jobs.py"
    code = compile(src, mod.__file__, "exec")
    sys.modules[mod.__name__] = mod  # dataclasses look their module up
    exec(code, mod.__dict__)  # our own source at a commit of this repository, nothing from outside
    return mod


def run(jobs_mod, version: str, engine: str, files, invariants) -> dict:
    inv_ids = [i.id for i in invariants]
    controls = {"reduce": True, "stop_on_violation": True}
    tries = {"n": 0, "states": 0}

    def task(*a):
        r = check_board_task(*a)
        tries["n"] += 1
        if r[0] == "ok":
            tries["states"] += r[1].result.states
        return r

    def restore(br):
        return restore_invariants(br, invariants)

    kw = {}
    if version == "old":
        task_args = lambda b: (b, engine, {}, inv_ids, "bfs", Bounds(), engine, controls)  # noqa: E731
    else:
        task_args = lambda b, within: (b, engine, {}, inv_ids, "bfs", within, engine, controls)  # noqa: E731
        kw["bounds"] = Bounds()
    c0 = time.process_time()
    out = jobs_mod.run_check_jobs(files, 1, True, task, task_args, restore, lambda i, e: None, load_board, lambda b: None, Signals(), **kw)
    cpu = time.process_time() - c0
    fail = next((r for r in out.results if r.verdict == "fail"), None)
    cex = fail.counterexamples[0] if fail is not None and fail.counterexamples else None
    return {
        "cpu_s": round(cpu, 3),
        "stopped_at": out.stopped_at,
        "invariant": cex.invariant if cex else None,
        "length": len(cex.steps) if cex else None,
        "explorations": tries["n"],
        "states": tries["states"],
        "not_run": len(out.not_run),
        "not_finished": len(getattr(out, "not_finished", [])),
    }


def main() -> int:
    import bpcheck.harness.jobs as new_jobs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", required=True, help="comma-separated mutant names")
    ap.add_argument("--old", default="c0de763", help="the git ref of the old cli/jobs.py")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--boards", default="boards/")
    ap.add_argument("--upto", type=int, help="only boards of at most N stored states (tests/perft.json)")
    ap.add_argument("--out", help="write the figures as JSON")
    args = ap.parse_args()
    mods = {"old": old_jobs(args.old), "new": new_jobs}
    files = _board_files([args.boards])
    if args.upto is not None:
        perft = json.loads((ROOT / "tests" / "perft.json").read_text())
        files = [(p, d) for p, d in files if perft[Path(p).name]["reduced"]["states"] <= args.upto]
        print(f"{len(files)} boards of at most {args.upto} states", file=sys.stderr)
    invariants = select(None)
    rows = {}
    for name in args.only.split(","):
        engine = name if name == "reference" else f"mutant:{name}"
        best: dict[str, dict] = {}
        for _ in range(args.repeat):
            for version in ("old", "new"):  # alternate: the machine is shared
                r = run(mods[version], version, engine, files, invariants)
                if version not in best or r["cpu_s"] < best[version]["cpu_s"]:
                    best[version] = r
                print(f"{name:40} {version}: {r}", file=sys.stderr, flush=True)
        rows[name] = best
        o, n = best["old"], best["new"]
        print(f"{name:40} old {o['cpu_s']:8.2f} s ({o['stopped_at']}, {o['length']})  new {n['cpu_s']:8.2f} s ({n['stopped_at']}, {n['length']})")
    if args.out:
        doc = {"python": platform.python_version(), "old": args.old, "rows": rows}
        Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
