#!/usr/bin/env python3
"""Regenerate docs/example-counterexample.svg (and .dot), the counterexample the README shows.

    python scripts/render_example.py            # or .venv/bin/python scripts/render_example.py
    python scripts/render_example.py OUTDIR     # write them into OUTDIR instead (the tests do)

It checks boards/000-replay-1.toml with the shipped mutant `replay-resets-count` ("calling an
attack off after a replay erases the monster's attack bookkeeping"), takes the shortest counterexample to `replay.call-off-counts`, and draws it the way
`bpcheck check --report` does, kept small for the README: the steps before the last two are listed
in one node and the boards are stacked top to bottom. Output is byte-for-byte reproducible.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOARD = "boards/000-replay-1.toml"
ENGINE = "mutant:replay-resets-count"
INVARIANT = "replay.call-off-counts"


def main() -> int:
    from bpcheck.engines import make_engine
    from bpcheck.explorers.run import check_board
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board
    from bpcheck.reports.graphviz import trace_dot, write_dot_and_svg

    board = load_board(ROOT / BOARD, BOARD)
    result = check_board(board, make_engine(ENGINE), select(INVARIANT), engine_name=ENGINE, progress=False)
    cex = next(c for c in result.counterexamples if c.invariant == INVARIANT)
    docs = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"
    outcome = write_dot_and_svg(trace_dot(cex, last=2, rankdir="TB"), docs / "example-counterexample.dot", docs / "example-counterexample.svg")
    if not outcome.ok:
        print(f"render_example: the SVG was not rendered: {outcome.message} ({docs / 'example-counterexample.dot'} is written)", file=sys.stderr)
        return 1
    print(f"wrote {docs / 'example-counterexample.svg'} and .dot ({len(cex.steps)}-step counterexample to {INVARIANT}, {outcome.message})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
