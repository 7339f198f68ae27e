#!/usr/bin/env python3
"""Time to the first counterexample per shipped mutant, for four orders of the seed boards.

Not a test: it measures. Figures go into docs/performance.md (section "`bpcheck mutants` and
`check --fail-fast`: the order of boards"). Every figure is CPU time of this one process
(`time.process_time()`), which a shared machine disturbs less than wall time:
    nice python benchmarks/mutants_order_bench.py [--only NAMES] [--orders own,name,cost,rounds] [--out FILE.json]

Orders (all BFS, all invariants, stop at the first violation):
- own:    the mutant's own seed board first (`bpcheck mutants --own-board-first`);
- name:   the boards in name order, no hint (as `bpcheck mutants` before issue 12 with the
          mutant's board hint removed: a bug no board was written for), each explored to the end;
- cost:   cheapest first by cli/jobs.py's estimate, each board explored to the end;
- rounds: cheapest first in rounds of growing state budgets (the default of `bpcheck mutants`).
The `name` order takes minutes per mutant (about 530 CPU s for all 18).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, ExploreOptions, explore
from bpcheck.invariants import select
from bpcheck.harness.boards import board_files as _board_files
from bpcheck.model.board import load_board
from bpcheck.harness.mutants import mutant_order, run_mutant


def in_order(m, boards, invariants) -> dict:
    """Each board explored to the end, in the order given, up to the first violation."""
    c0 = time.process_time()
    for path, display in boards:
        system = EngineSystem(ReferenceEngine(m.rules, f"mutant:{m.name}"), load_board(path, display), invariants)
        r = explore(system, ExploreOptions("bfs", Bounds(), stop_on_violation=True))
        if r.violations:
            v = min(r.violations, key=lambda v: (v.depth, v.prop))
            return {"cpu_s": round(time.process_time() - c0, 3), "board": display, "invariant": v.prop, "length": v.depth}
    return {"cpu_s": round(time.process_time() - c0, 3), "board": None, "invariant": None, "length": None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated mutant names")
    ap.add_argument("--orders", default="own,name,cost,rounds")
    ap.add_argument("--out", help="write the figures as JSON")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(MUTANTS)
    orders = args.orders.split(",")
    boards = _board_files(["boards/"])
    invariants = select(None)
    rows: dict[str, dict] = {}
    for name in names:
        m = MUTANTS[name]
        rows[name] = {}
        for order in orders:
            if order == "name":
                got = in_order(m, sorted(boards, key=lambda b: b[0].name), invariants)
            elif order == "cost":
                got = in_order(m, mutant_order(m, boards), invariants)
            elif order in ("own", "rounds"):
                c0 = time.process_time()
                r = run_mutant(m, boards, invariants, Bounds(), own_board_first=order == "own")
                got = {"cpu_s": round(time.process_time() - c0, 3), "board": r["board"], "invariant": r["invariant"], "length": r["length"]}
            else:
                ap.error(f"unknown order {order!r}")
            rows[name][order] = got
            print(f"{name:40} {order:7} {got['cpu_s']:8.2f} s  {got['invariant']} ({got['length']} steps) on {got['board']}", flush=True)
    for order in orders:
        c = [rows[n][order]["cpu_s"] for n in names]
        print(f"{order:7} median {statistics.median(c):.2f} s, max {max(c):.1f} s, total {sum(c):.1f} s")
    if args.out:
        doc = {"python": sys.version.split()[0], "machine": platform.machine(), "mutants": rows}
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
