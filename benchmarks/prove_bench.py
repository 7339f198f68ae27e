#!/usr/bin/env python3
"""`bpcheck prove` cost per symbolic board (symbolic/*.toml): time, states, paths, numeric cases,
solver queries and time per query, on the reference model and on the value mutants.

Not a test: it measures. Figures go into docs/performance.md. Run it on an idle machine:
    python benchmarks/prove_bench.py [--repeat N] [--boards GLOB] [--engine E]
Each figure is the best of N runs (the least disturbed by other load).
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import z3

from bpcheck import __version__
from bpcheck.engines import make_engine
from bpcheck.explorers.symbolic import explore_symbolic
from bpcheck.invariants import select
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--boards", default="*.toml")
    ap.add_argument("--engine", default=None)
    args = ap.parse_args()
    boards = sorted((ROOT / "symbolic").glob(args.boards))
    invariants = select(None)
    print(
        f"bpcheck {__version__}, z3 {z3.get_version_string()}, Python {platform.python_version()}, {platform.machine()}; "
        f"engine {args.engine or 'reference'}, {len(invariants)} invariants, best of {args.repeat}"
    )
    print()
    print("| board | ranges | states | paths | numeric cases | verdict | time | solver queries | solver time | per query (mean / max) | cache hits | unsat cores |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    tot_t = tot_q = tot_qs = 0.0
    for path in boards:
        best = None
        for _ in range(args.repeat):
            board = load_board(path, str(path.relative_to(ROOT)), symbolic=True)
            t0 = time.perf_counter()
            r = explore_symbolic(make_engine(args.engine), board, invariants, timeout_s=60.0)
            dt = time.perf_counter() - t0
            if best is None or dt < best[0]:
                best = (dt, r)
        dt, r = best
        q = r.solver
        mean = q.seconds / q.queries * 1000 if q.queries else 0.0
        print(
            f"| {path.name} | {len(r.board.symbols)} | {r.states} | {r.paths} | {len(r.terminal_pcs)} | {r.status} | {dt:.2f} s | "
            f"{q.queries} | {q.seconds:.3f} s | {mean:.2f} / {q.slowest * 1000:.1f} ms | {q.cache_hits} | {q.cores} ({q.core_seconds:.2f} s) |"
        )
        tot_t += dt
        tot_q += q.queries
        tot_qs += q.seconds
    print()
    print(f"total: {tot_t:.2f} s over {len(boards)} boards, {int(tot_q)} solver queries taking {tot_qs:.2f} s")


if __name__ == "__main__":
    main()
