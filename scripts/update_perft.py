#!/usr/bin/env python3
"""Regenerate tests/perft.json: the number of distinct states and transitions per seed board.

Run it only when a rules change is meant to change a state space, and say why in the commit:
    python scripts/update_perft.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.model.board import load_board
from bpcheck.engines.reference import ReferenceEngine

ROOT = Path(__file__).resolve().parent.parent


def count(path: Path) -> dict:
    board = load_board(path, str(path.relative_to(ROOT)))
    r = explore(EngineSystem(ReferenceEngine(), board, []), "bfs")
    return {"states": r.states, "transitions": r.transitions, "max_depth": r.max_depth, "terminal_states": r.terminal_states}


def main() -> int:
    out = {}
    for p in sorted((ROOT / "boards").glob("*.toml")):
        out[p.name] = count(p)
        print(f"{p.name}: {out[p.name]}", file=sys.stderr)
    (ROOT / "tests" / "perft.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
