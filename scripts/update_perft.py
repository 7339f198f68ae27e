#!/usr/bin/env python3
"""Regenerate tests/perft.json: the number of distinct states and transitions per seed board,
over every state (``bpcheck check --no-reduce``) and, under ``reduced``, with reduction on (the
default of ``bpcheck check``: chains of forced passes folded, explorers/reduce.py; the board's
goals are given, as check gives them, since a goal met inside a chain stores that state).

Run it only when a rules change is meant to change a state space, and say why in the commit:
    python scripts/update_perft.py                 # every board
    python scripts/update_perft.py boards/X.toml   # only these boards' entries
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bpcheck.explorers.checking import EngineSystem, parse_goals
from bpcheck.explorers.core import ExploreOptions, explore
from bpcheck.explorers.reduce import Reduced
from bpcheck.model.board import load_board
from bpcheck.engines.reference import ReferenceEngine

ROOT = Path(__file__).resolve().parent.parent
PERFT = ROOT / "tests" / "perft.json"


def _counts(r) -> dict:
    return {"states": r.states, "transitions": r.transitions, "max_depth": r.max_depth, "terminal_states": r.terminal_states}


def count(path: Path) -> dict:
    board = load_board(path, str(path.relative_to(ROOT)))
    out = _counts(explore(EngineSystem(ReferenceEngine(), board, [])))
    goals = parse_goals(board)
    rs = Reduced(EngineSystem(ReferenceEngine(), board, [], goals))
    out["reduced"] = _counts(rs.finish(explore(rs, ExploreOptions("bfs", goals=[g.id for g in goals]))))
    return out


def main(argv: list[str]) -> int:
    if argv:
        out = json.loads(PERFT.read_text())
        paths = [Path(a).resolve() for a in argv]
    else:
        out = {}
        paths = sorted((ROOT / "boards").glob("*.toml"))
    for p in paths:
        out[p.name] = count(p)
        print(f"{p.name}: {out[p.name]}", file=sys.stderr)
    PERFT.write_text(json.dumps(dict(sorted(out.items())), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
