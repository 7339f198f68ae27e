#!/usr/bin/env python3
"""Peak memory per explored state (not only the visited set), one fresh process per figure.

Not a test: it measures. Figures go into docs/performance.md. Run it on an idle machine:
    python benchmarks/memory_bench.py [--boards GLOB] [--invariants]
For each board it explores exhaustively by BFS, as `bpcheck check` does, in a child process and
reports the process's peak resident set size minus its size before the exploration, divided by
the number of distinct states: (a) with the frontier packed (each frontier state keeps its
observation as JSON bytes, bpcheck's default) and (b) unpacked (whole observation dicts).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys
from bpcheck.explorers.core import current_rss, explore, peak_rss
from bpcheck.explorers.checking import EngineSystem, parse_goals
from bpcheck.explorers.run import FramePacker
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.engines import make_engine
path, packed, invs, spec = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1", sys.argv[4]
board = load_board(path)
system = EngineSystem(make_engine(spec), board, select(None) if invs else [])
before = current_rss()
p = FramePacker()
kw = {"pack": p.pack, "unpack": p.unpack} if packed else {}
r = explore(system, "bfs", **kw)
peak = peak_rss()
print(json.dumps({"states": r.states, "transitions": r.transitions, "before": before, "peak": peak, "visited": None}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", default="003-004-example-4.toml")
    ap.add_argument("--invariants", action="store_true", help="check every invariant too (as bpcheck check does)")
    ap.add_argument("--engine", default="reference", help="an --engine spec, e.g. cmd:\"bpcheck serve\"")
    args = ap.parse_args()
    print(f"engine {args.engine}")
    print(f"{'board':40} {'states':>8} {'frontier':>9} {'peak MB':>8} {'B/state':>8}")
    for path in sorted((ROOT / "boards").glob(args.boards)):
        for packed in (False, True):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(path), "1" if packed else "0", "1" if args.invariants else "0", args.engine],
                capture_output=True, text=True, check=True,
            ).stdout
            d = json.loads(out)
            grown = d["peak"] - d["before"]
            print(f"{path.name:40} {d['states']:>8} {'packed' if packed else 'dicts':>9} {d['peak'] / 2**20:>8.1f} {grown / d['states']:>8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
