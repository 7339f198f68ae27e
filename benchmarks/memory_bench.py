#!/usr/bin/env python3
"""Memory per explored state: the visited set alone and the whole process, one fresh process per
figure.

Not a test: it measures. Figures go into docs/performance.md. Run it on an idle machine:
    python benchmarks/memory_bench.py [--boards GLOB | --board PATH] [--max-states N] [--invariants]
                                      [--workers N] [--frontier]
For each board it explores by BFS, as `bpcheck check` does, in a child process and reports:
the states; ``visited B/state``, the bytes the visited set holds per state (fingerprint index,
parent / action / depth arrays, non-tree edges: ``ExploreOptions(measure_memory=True)``); the process's
peak resident set size (``peak MB``; with ``--workers`` the parent's plus every worker's) and
``grown B/state``, that peak minus the size before the exploration per state: what the frontier
and everything else cost on top of the visited set. ``--frontier`` adds the packed-frontier run
(FramePacker: observations kept as JSON bytes) beside the default whole-state frontier.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = f"BENCH = {str(ROOT / 'benchmarks')!r}\n" + r"""
import functools, json, sys
from bpcheck.explorers.core import Bounds, ExploreOptions, current_rss, explore, peak_rss
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.run import FramePacker
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.engines import make_engine

def make(path, spec, invs):
    return EngineSystem(make_engine(spec), load_board(path), select(None) if invs else [])

if __name__ == "__main__":
    path, packed, invs, spec, ms, workers = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1", sys.argv[4], sys.argv[5], int(sys.argv[6])
    bounds = Bounds(max_states=int(ms) if ms != "-" else None)
    before = current_rss()
    extra = 0
    if workers:  # the workers import the factory (a function of this -c script cannot be pickled)
        sys.path.insert(0, BENCH)
        from parallel_bench import make as pmake, peak
        from bpcheck.explorers.parallel import explore_parallel
        r = explore_parallel(functools.partial(pmake, path, spec, invs), workers, ExploreOptions(bounds=bounds, measure_memory=True), finish=peak)
        extra = sum(r.worker_info)
    else:
        p = FramePacker()
        kw = {"pack": p.pack, "unpack": p.unpack} if packed else {}
        r = explore(make(path, spec, invs), ExploreOptions("bfs", bounds, measure_memory=True, **kw))
    peak = peak_rss()
    print(json.dumps({"states": r.states, "transitions": r.transitions, "before": before, "peak": peak, "workers_peak": extra, "visited": r.visited_bytes}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", default="003-004-example-4.toml", help="a glob in boards/")
    ap.add_argument("--board", action="append", default=[], help="a board file (repeatable; instead of --boards)")
    ap.add_argument("--max-states", type=int, default=None, help="stop after about this many states (the first N states of a big board)")
    ap.add_argument("--invariants", action="store_true", help="check every invariant too (as bpcheck check does)")
    ap.add_argument("--engine", default="reference", help="an --engine spec, e.g. cmd:\"bpcheck serve\"")
    ap.add_argument("--workers", type=int, default=0, help="explore_parallel with N worker processes (0: explore, in-process)")
    ap.add_argument("--frontier", action="store_true", help="also measure the packed frontier (FramePacker)")
    args = ap.parse_args()
    paths = [Path(b) for b in args.board] or sorted((ROOT / "boards").glob(args.boards))
    print(f"engine {args.engine}, workers {args.workers or 'none (in-process)'}, max states {args.max_states or 'none'}")
    print(f"{'board':40} {'states':>9} {'frontier':>9} {'visited B/state':>16} {'peak MB':>8} {'grown B/state':>14}")
    for path in paths:
        for packed in (False, True) if args.frontier and not args.workers else (False,):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(path), "1" if packed else "0", "1" if args.invariants else "0", args.engine,
                 str(args.max_states) if args.max_states else "-", str(args.workers)],
                capture_output=True, text=True, check=True,
            ).stdout
            d = json.loads(out)
            peak = d["peak"] + d["workers_peak"]
            grown = d["peak"] - d["before"]
            print(
                f"{path.name:40} {d['states']:>9} {'packed' if packed else 'states':>9} {d['visited'] / d['states']:>16.1f}"
                f" {peak / 2**20:>8.1f} {grown / d['states']:>14.0f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
