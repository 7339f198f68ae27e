#!/usr/bin/env python3
"""Reduction (explorers/reduce.py) against exploring every state: states stored, transitions,
CPU seconds and peak RSS, all invariants on, as `bpcheck check` explores.

Not a test: it measures. Figures go into docs/performance.md. Each run is its own process (a
fresh peak RSS):
    python benchmarks/reduce_bench.py BOARD [BOARD ...] [--states N]
With --states N the run over every state stops at N states, and the reduced run once it has
taken as many steps (forced passes included) as that run's transitions: the same work, judged.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one(board_path: str, reduce: bool, states: int | None, steps: int | None = None) -> dict:
    from bpcheck.explorers.checking import EngineSystem, parse_goals
    from bpcheck.explorers.core import Bounds, ExploreOptions, explore, peak_rss
    from bpcheck.explorers.reduce import Reduced
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board
    from bpcheck.engines.reference import ReferenceEngine

    board = load_board(board_path)
    goals = parse_goals(board)
    system = EngineSystem(ReferenceEngine(), board, select(None), goals)
    rs = None
    stop = None
    bounds = Bounds()
    if reduce:
        system = rs = Reduced(system)
        if steps is not None:

            def stop():  # as many steps (forced ones included) as the other run took
                return f"{steps} steps" if rs.micro_transitions >= steps else None

        elif states is not None:
            expanded = [0]

            def stop():  # stored states expanded so far + forced states judged
                expanded[0] += 1
                return f"{states} states judged" if expanded[0] + len(rs.judged) >= states else None

    elif states is not None:
        bounds = Bounds(max_states=states)
    cpu = time.process_time()
    r = explore(system, ExploreOptions("bfs", bounds, goals=[g.id for g in goals], stop=stop))
    if rs is not None:
        rs.finish(r)
    cpu = time.process_time() - cpu
    return {
        "board": board_path,
        "mode": "reduced" if reduce else "every state",
        "status": r.status,
        "stored": r.states,
        "forced": len(rs.judged) if rs else 0,
        "transitions": r.transitions,
        "micro": rs.micro_transitions if rs else r.transitions,
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": round((peak_rss() or 0) / 2**20),
        "violated": sorted({f"{v.prop}" for v in r.violations}),
        "checked": sum(p.checked for p in r.props.values()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("boards", nargs="+")
    ap.add_argument("--states", type=int, default=None)
    ap.add_argument("--one", choices=("reduced", "every"), help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.boards[0], a.one == "reduced", a.states, a.steps)))
        return 0
    print("| board | mode | status | states stored | forced states | transitions | steps | CPU s | peak RSS MB | checks |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for b in a.boards:
        steps = None
        for mode in ("every", "reduced"):
            cmd = [sys.executable, __file__, b, "--one", mode] + (["--states", str(a.states)] if a.states else [])
            if steps is not None:  # a bounded run: reduced takes as many steps as the other took
                cmd += ["--steps", str(steps)]
            d = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            if a.states and mode == "every":
                steps = d["transitions"]
            print(
                f"| {Path(b).name} | {d['mode']} | {d['status']} | {d['stored']:,} | {d['forced']:,} | {d['transitions']:,} | {d['micro']:,} |"
                f" {d['cpu_s']} | {d['peak_rss_mb']} | {d['checked']:,} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
