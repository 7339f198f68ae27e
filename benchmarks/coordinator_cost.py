#!/usr/bin/env python3
"""What the one-board protocol's coordinator costs per state and per chunk (issue 23; figures in
docs/performance.md). Not a test: it measures.

    python benchmarks/coordinator_cost.py                 # the table, under callgrind (minutes)
    python benchmarks/coordinator_cost.py --run M CHUNK   # one run (what callgrind traces)

A wide synthetic system ((d, v) -> (d + 1, 3 v + a mod M) up to depth D = 12: layers of up to M
states, three actions each, nearly free to expand, so the run is the coordinator's; acyclic, so no
cycle search at the end) is explored by explore_parallel on 2 worker processes, three times: M = 2003 with
chunks of 500 and of 125 states, M = 20011 with chunks of 5,002: the coordinator process alone
under `valgrind --tool=callgrind --trace-children=no` (instruction counts: the load of the
machine does not change them). From the three runs, instructions = start + a x chunks + b x
states: what one more chunk (a) and one more state (b) cost the coordinator; and the bytes
through it per state and per chunk (res.protocol). `--module` measures
another copy of the explorer (e.g. the one before a change, saved as explorers/parallel_old.py).
"""

from __future__ import annotations

import argparse
import glob
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ((2003, 500), (2003, 125), (20011, 5002))
DEPTH = 12


class Wide:
    def __init__(self, m: int) -> None:
        self.m = m

    def initial_states(self):
        return [(0, 1), (0, 2)]

    def actions(self, s):
        return [1, 2, 3]

    def step(self, s, a):
        return (s[0] + 1, (3 * s[1] + a) % self.m), None

    def is_terminal(self, s):
        return s[0] >= DEPTH

    def fingerprint(self, s):
        return ((s[0] * self.m + s[1]) * 0x9E3779B97F4A7C15 + 12345) & (2**64 - 1)

    def action_kind(self, a):
        return f"+{a}"

    def action_name(self, a):
        return f"add {a}"

    def check_state(self, s):
        return [("small", True)]

    def check_actions(self, s, acts):
        return []

    def check_transition(self, s, a, info, s2):
        return []

    def goals_reached(self, s, info):
        return []


def one_run(module: str, m: int, chunk: int) -> dict:
    import functools

    mod = importlib.import_module(module)
    r = mod.explore_parallel(functools.partial(Wide, m), 2, chunk=chunk)
    p = dict(r.protocol)
    p.update(states=r.states, transitions=r.transitions)
    return p


def traced(module: str, m: int, chunk: int, tmp: str) -> dict:
    out = os.path.join(tmp, f"cg.{m}.{chunk}")
    p = subprocess.run(
        ["valgrind", "--tool=callgrind", "--trace-children=no", f"--callgrind-out-file={out}.%p", sys.executable, __file__, "--run", str(m), str(chunk), "--module", module],
        cwd=ROOT, capture_output=True, text=True,
    )
    line = [x for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode != 0 or not line:
        sys.exit(f"coordinator_cost: run {m} failed:\n{p.stderr[-3000:]}")
    res = json.loads(line[-1])
    files = glob.glob(out + ".*")
    ann = subprocess.run(["callgrind_annotate", files[0]], capture_output=True, text=True).stdout
    res["instructions"] = int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", ann).group(1).replace(",", ""))
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", nargs=2, type=int, metavar=("M", "CHUNK"))
    ap.add_argument("--module", default="bpcheck.explorers.parallel")
    a = ap.parse_args()
    if a.run:
        print(json.dumps(one_run(a.module, *a.run)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        runs = [traced(a.module, m, c, tmp) for m, c in RUNS]
    import numpy as np

    A = np.array([[1.0, r["chunks"], r["states"]] for r in runs])
    _c0, per_chunk, per_state = np.linalg.solve(A, np.array([float(r["instructions"]) for r in runs]))
    for r in runs:
        c = r["chunks"]
        print(f"  {r['states']:>6} states, {c} chunks: {r['instructions'] / 1e6:,.1f} M instructions, "
              f"{(r['bytes_out'] + r['bytes_in']) / c / 1024:,.1f} KiB through the coordinator per chunk "
              f"({(r['bytes_out'] + r['bytes_in']) / r['states']:,.1f} bytes per state)")
    print(f"per state: {per_state:,.0f} instructions; per chunk: {per_chunk / 1e6:,.2f} M instructions (2 workers)")
    print(json.dumps({"module": a.module, "runs": runs, "per_state_instructions": per_state, "per_chunk_instructions": per_chunk}))


if __name__ == "__main__":
    main()
