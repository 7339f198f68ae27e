#!/usr/bin/env python3
"""Throughput of the ocgcore adapter (the real EDOPro core, --engine ocgcore).

Not a test: it measures. The figure goes into docs/performance.md. Run it niced on a quiet
machine:
    nice python benchmarks/ocgcore_bench.py [--board boards/000-replay-5.toml] [--repeat 3] [--cache N]
It explores the board over the core (BFS, the checker's default; no invariants, so the figure is
the adapter's and the core's cost: prompts, messages, queries, the live-duel cache and replays)
and reports distinct states/s and transitions/s, with the adapter's duel counters: duels created,
replays (a reset duel driven along a node's action path) and the steps they replayed, cache hits.
Needs the core: OCGCORE / OCG_SCRIPTS / OCG_CARDS or ../shared/ocgcore/.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from bpcheck import __version__
from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.ocgcore import OcgcoreEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import ExploreOptions, explore
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--board", default=str(ROOT / "boards" / "000-replay-5.toml"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", type=int, default=None, help="live duels kept (default: the adapter's)")
    ap.add_argument("--strategy", default="bfs", choices=("bfs", "dfs"))
    args = ap.parse_args()
    board = load_board(args.board)
    print(f"bpcheck {__version__}, Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}; board {args.board}; strategy {args.strategy}")
    runs = []
    for _ in range(args.repeat):
        eng = OcgcoreEngine() if args.cache is None else OcgcoreEngine(cache_size=args.cache)
        t0 = time.perf_counter()
        c0 = time.process_time()
        try:
            r = explore(EngineSystem(eng, board, []), ExploreOptions(args.strategy))
        except EngineRefusal as e:
            print(f"skipped: {e.reason}")
            return 3
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        eng.close()
        runs.append((r, wall, cpu, dict(eng.stats)))
    r, _w, _c, stats = runs[0]
    wall = min(x[1] for x in runs)
    cpu = min(x[2] for x in runs)
    print(f"{r.states} states, {r.transitions} transitions, depth {r.max_depth}, status {r.status}")
    # The machine may be shared: CPU seconds (this process alone) are the fairer figure.
    print(f"best of {args.repeat}: wall {wall:.3f} s: {r.states / wall:,.0f} states/s (wall); "
          f"CPU {cpu:.3f} s: {r.states / cpu:,.0f} states per CPU-second")
    print(f"duels: {stats}")
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
