#!/usr/bin/env python3
"""Time to the first counterexample, per shipped mutant, for the three explorers.

Not a test: it measures. Figures go into docs/performance.md (section "Fuzzing"). Run it niced on
an idle machine (every figure is CPU time of one process; on a shared machine wall time is not):
    nice python benchmarks/fuzz_bench.py [--only NAMES] [--examples N] [--out FILE.json]

For each mutant of bpcheck.engines.mutants:
- exhaustive: BFS over the seed corpus (boards/*.toml), the mutant's own board first, as
  `bpcheck mutants` does (bpcheck.harness.mutants.run_mutant): CPU seconds until an invariant breaks and
  the counterexample's length;
- fuzz: `bpcheck fuzz --engine mutant:NAME --seed 0` with the default settings (random boards
  only): CPU seconds to the first failing board, boards drawn, CPU seconds of the shrink, and the
  shrunk board's size (cards) and counterexample length;
- stateful: the machine of bpcheck.harness.testing (differential, seed 0): CPU seconds to the first
  failing run, then the shrunk run's length (actions) and board size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

from hypothesis import Phase, Verbosity, seed
from hypothesis.stateful import run_state_machine_as_test

from bpcheck import __version__
from bpcheck.harness.board_writer import board_size
from bpcheck.engines import make_engine
from bpcheck.engines.mutants import MUTANTS
from bpcheck.explorers.core import Bounds
from bpcheck.harness.fuzz import DEFAULT_EXAMPLES, DEFAULT_MAX_STATES, fuzz
from bpcheck.invariants import select
from bpcheck.harness.mutants import run_mutant
from bpcheck.harness.testing import engine_state_machine, machine_settings

ROOT = Path(__file__).resolve().parent.parent


def exhaustive(name: str, invariants) -> dict:
    boards = [(p, p.name) for p in sorted((ROOT / "boards").glob("*.toml"))]
    c0 = time.process_time()
    row = run_mutant(MUTANTS[name], boards, invariants, Bounds())
    return {
        "killed": row["status"] == "killed",
        "cpu_s": round(time.process_time() - c0, 2),
        "invariant": row["invariant"],
        "length": row["length"],
        "board": row["board"],
        "states": row["states_explored"],
    }


def fuzzed(name: str, invariants, examples: int) -> dict:
    spec = f"mutant:{name}"
    c0 = time.process_time()
    first: list[float] = []
    out = fuzz(lambda: make_engine(spec), invariants, engine_name=spec, examples=examples, seed_value=0, progress=False)
    total = time.process_time() - c0
    st = out.stats
    return {
        "killed": out.invariant is not None,
        "cpu_s": round(total, 2),
        "first_failure_wall_s": None if st.first_failure_s is None else round(st.first_failure_s, 2),
        "boards_drawn": st.first_failure_example if out.invariant else st.search_examples,
        "search_wall_s": round(st.search_s, 2),
        "shrink_wall_s": round(st.shrink_s, 2),
        "invariant": out.invariant,
        "cards_before": board_size(out.found_doc) if out.found_doc else None,
        "cards": board_size(out.doc) if out.doc else None,
        "length": out.depth,
    }


def _machine_run(name: str, examples: int, phases):
    machine = engine_state_machine(f"mutant:{name}")
    c0 = time.process_time()
    try:
        run_state_machine_as_test(
            seed(0)(machine), settings=machine_settings(examples, database=None, print_blob=False, verbosity=Verbosity.quiet, phases=phases)
        )
    except AssertionError as e:
        return time.process_time() - c0, e, machine.last_board
    return time.process_time() - c0, None, None


def stateful(name: str, examples: int) -> dict:
    # The first run stops at the first failing run (no shrinking): the time to it. The second
    # run, same seed, also shrinks it: the shrunk run's length (actions) and board (cards).
    first_s, err, _ = _machine_run(name, examples, [Phase.generate])
    row: dict = {"killed": err is not None, "first_failure_cpu_s": round(first_s, 2)}
    if err is None:
        return row
    total_s, err, board = _machine_run(name, examples, [Phase.generate, Phase.shrink])
    msg = str(err)
    m = re.search(r"(?:step|after) (\d+)", msg)
    row.update(
        shrink_cpu_s=round(total_s, 2),
        kind=msg.split(":")[0],
        length=int(m.group(1)) if m else 0,
        cards=board_size(board) if board else None,
    )
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="comma-separated mutant names (default: all)")
    ap.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, help="fuzz examples (default: the command's default)")
    ap.add_argument("--machine-examples", type=int, default=200, help="stateful runs (default 200)")
    ap.add_argument("--skip", default="", help="comma-separated explorers to skip: exhaustive,fuzz,stateful")
    ap.add_argument("--out", help="write the rows as JSON")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(MUTANTS)
    skip = set(filter(None, args.skip.split(",")))
    invariants = select(None)
    print(f"bpcheck {__version__}, Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
          f"fuzz: {args.examples} examples, --max-states {DEFAULT_MAX_STATES}, seed 0", flush=True)
    rows = []
    for name in names:
        row: dict = {"mutant": name}
        if "exhaustive" not in skip:
            row["exhaustive"] = exhaustive(name, invariants)
        if "fuzz" not in skip:
            row["fuzz"] = fuzzed(name, invariants, args.examples)
        if "stateful" not in skip:
            row["stateful"] = stateful(name, args.machine_examples)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
