#!/usr/bin/env python3
"""Speed-up of explore_parallel (worker processes on one board) over the in-process explore().

Not a test: it measures. Figures go into docs/performance.md.
    python benchmarks/parallel_bench.py [--board PATH] [--max-states N] [--workers 1,2] [--no-invariants]
For each run: wall time, CPU seconds of the parent and of each worker (time.process_time() in
each process; a worker's includes building its system), states per wall second, and a digest
of the whole result (every run must give the same one: the results do not depend on the worker
count). The machine's load average (os.getloadavg) is printed before and after: the CPU seconds
are what a shared machine disturbs least.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make(path: str, spec: str, invs: bool):
    from bpcheck.engines import make_engine
    from bpcheck.explorers.checking import EngineSystem
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    return EngineSystem(make_engine(spec), load_board(path), select(None) if invs else [])


def cpu(system) -> float:
    return time.process_time()


def peak(system) -> int | None:
    from bpcheck.explorers.core import peak_rss

    return peak_rss()


def digest(r) -> str:
    return hashlib.sha256(json.dumps(r.findings(), sort_keys=True, default=str).encode()).hexdigest()[:16]


def main() -> int:
    from bpcheck.explorers.core import Bounds, ExploreOptions, explore
    from bpcheck.explorers.parallel import explore_parallel

    ap = argparse.ArgumentParser()
    ap.add_argument("--board", default=str(ROOT / "boards" / "000-ds-counter-traps.toml"))
    ap.add_argument("--max-states", type=int, default=None)
    ap.add_argument("--workers", default="0,1,2", help="comma-separated worker counts; 0: explore() in-process")
    ap.add_argument("--no-invariants", action="store_true")
    ap.add_argument("--engine", default="reference")
    ap.add_argument("--equal-shares", action="store_true", help="balance chunks by state count only (parallel.BALANCE_BY_COST off)")
    ap.add_argument("--no-steal", action="store_true", help="no work stealing within a chunk (parallel.STEAL off)")
    ap.add_argument("--reduce", action="store_true", help="fold forced passes (explorers/reduce.py), as bpcheck check does by default")
    args = ap.parse_args()
    bounds = Bounds(max_states=args.max_states)
    if args.equal_shares:
        import bpcheck.explorers.parallel as par

        par.BALANCE_BY_COST = False
    if args.no_steal:
        import bpcheck.explorers.parallel as par

        par.STEAL = False
    make_system = functools.partial(make, args.board, args.engine, not args.no_invariants)
    if args.reduce:
        from bpcheck.explorers.run import reduced_system

        make_system = functools.partial(reduced_system, make_system)
    print(f"{Path(args.board).name}, max states {args.max_states or 'none'}, invariants {'off' if args.no_invariants else 'all'}, {'reduced' if args.reduce else 'every state'}; load average {os.getloadavg()}")
    print(f"{'workers':>7} {'states':>8} {'wall s':>7} {'parent CPU s':>13} {'worker CPU s':>20} {'states/s':>9}  digest")
    base = None
    for n in [int(x) for x in args.workers.split(",")]:
        t0, c0 = time.monotonic(), time.process_time()
        if n == 0:
            r = explore(make_system(), ExploreOptions("bfs", bounds))
            wcpu: list[float] = []
        else:
            r = explore_parallel(make_system, n, ExploreOptions(bounds=bounds), finish=cpu)
            wcpu = r.worker_info
        wall, pcpu = time.monotonic() - t0, time.process_time() - c0
        base = base or wall
        bal = f", balance {r.balance:.3f}, {r.stolen} states handed over" if r.balance is not None else ""
        if r.judged_again is not None:
            bal += f", {r.judged_again} of {r.claimed} forced states judged again"
        print(f"{n:>7} {r.states:>8} {wall:>7.1f} {pcpu:>13.1f} {' + '.join(f'{c:.1f}' for c in wcpu) or '-':>20} {r.states / wall:>9.0f}  {digest(r)}  (x{base / wall:.2f}{bal})")
        sys.stdout.flush()
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
