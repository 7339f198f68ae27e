#!/usr/bin/env python3
"""Explorer throughput and memory over the seed-board corpus (boards/*.toml).

Not a test: it measures. Figures go into docs/performance.md. Run it on an idle machine:
    python benchmarks/explore_bench.py [--repeat N] [--boards GLOB]
It reports, over the whole corpus, distinct states/s and transitions/s (a) as `bpcheck check`
runs (every invariant on every state and transition) and (b) exploring only (observation and
fingerprint, no invariants), plus the bytes the visited set holds per visited state.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from bpcheck import __version__
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import ExploreOptions, explore
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.engines.reference import ReferenceEngine

ROOT = Path(__file__).resolve().parent.parent


def run(boards, invariants, measure: bool):
    states = transitions = 0
    visited = 0
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    for path in boards:
        board = load_board(path)
        r = explore(EngineSystem(ReferenceEngine(), board, invariants), ExploreOptions("bfs", measure_memory=measure))
        states += r.states
        transitions += r.transitions
        visited += r.visited_bytes or 0
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    return states, transitions, wall, cpu, visited


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--boards", default="*.toml")
    args = ap.parse_args()
    boards = sorted((ROOT / "boards").glob(args.boards))
    print(f"bpcheck {__version__}, Python {platform.python_version()} ({platform.python_implementation()}), {platform.machine()}, "
          f"{os.cpu_count()} CPUs; {len(boards)} boards")
    for label, invs in (("check (all invariants)", select(None)), ("explore only (no invariants)", [])):
        best = None
        for _ in range(args.repeat):
            s, t, wall, cpu, _v = run(boards, invs, False)
            if best is None or cpu < best[3]:
                best = (s, t, wall, cpu)
        s, t, wall, cpu = best
        print(f"{label:30} {s} states, {t} transitions, {cpu:.1f} s CPU: {s / cpu:,.0f} states/s, {t / cpu:,.0f} transitions/s")
    s, _t, _w, _c, visited = run(boards, [], True)
    print(f"{'visited set':30} {visited:,} bytes for {s:,} states: {visited / s:.0f} bytes per visited state")
    return 0


if __name__ == "__main__":
    sys.exit(main())
