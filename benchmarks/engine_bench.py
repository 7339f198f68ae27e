#!/usr/bin/env python3
"""The reference model's own cost per transition, split by engine call (issue 12).

Not a test: it measures. Figures go into docs/performance.md. It replays a fixed workload,
BFS over the first N states of each board with no invariants
(``EngineSystem(ReferenceEngine(), board, [])``, ``explore(..., bounds=Bounds(max_states=N))``),
with the engine's methods wrapped in CPU timers, and prints the CPU seconds spent in
``apply`` / ``observe`` / ``legal_actions`` / ``is_terminal`` and in the whole run:

    python benchmarks/engine_bench.py [--repeat N] [BOARD[:MAX_STATES] ...]

The default workload is the first 20,000 states of the seven-card board
(``boards/000-ds-spell-trap-list.toml``, or ``/work/wt/seven-card.toml`` before it lands) and
all of ``boards/000-ds-counter-traps.toml``.

``--dump FILE`` writes instead, for each board, the engine's behaviour in BFS order, one JSON
line per expanded state: the XXH3 of the observation's canonical JSON, whether it is terminal,
each legal action's record and, per action, the events and the successor's observation hash.
Two versions of the model behave the same on the workload iff their dumps are byte-identical
(the equivalence check for engine speed-ups: dump with the old code, dump with the new, ``cmp``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import deque
from pathlib import Path

import orjson
import xxhash

from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, ExploreOptions, explore
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
SEVEN = ROOT / "boards" / "000-ds-spell-trap-list.toml"
if not SEVEN.exists():
    SEVEN = Path("/work/wt/seven-card.toml")
DEFAULT = [f"{SEVEN}:20000", str(ROOT / "boards" / "000-ds-counter-traps.toml")]

PHASES = ("apply", "observe", "legal_actions", "is_terminal")


class TimedEngine:
    """The reference engine with a CPU timer around each interface call."""

    def __init__(self, inner: ReferenceEngine) -> None:
        self.inner = inner
        self.name = inner.name
        self.cpu = dict.fromkeys(PHASES, 0.0)
        self.calls = dict.fromkeys(PHASES, 0)

    def start(self, board):
        return self.inner.start(board)

    def _timed(self, phase, fn, *args):
        t = time.process_time()
        try:
            return fn(*args)
        finally:
            self.cpu[phase] += time.process_time() - t
            self.calls[phase] += 1

    def apply(self, state, action):
        return self._timed("apply", self.inner.apply, state, action)

    def observe(self, state):
        return self._timed("observe", self.inner.observe, state)

    def legal_actions(self, state):
        return self._timed("legal_actions", self.inner.legal_actions, state)

    def is_terminal(self, state):
        return self._timed("is_terminal", self.inner.is_terminal, state)


def parse_spec(spec: str) -> tuple[Path, int | None]:
    path, _, n = spec.rpartition(":") if spec.rpartition(":")[2].isdigit() else (spec, "", "")
    return Path(path), (int(n) if n else None)


def bench(specs) -> tuple[dict, float, int, int]:
    cpu = dict.fromkeys(PHASES, 0.0)
    total = 0.0
    states = transitions = 0
    for spec in specs:
        path, n = parse_spec(spec)
        board = load_board(path)
        eng = TimedEngine(ReferenceEngine())
        t0 = time.process_time()
        r = explore(EngineSystem(eng, board, []), ExploreOptions("bfs", bounds=Bounds(max_states=n)))
        total += time.process_time() - t0
        states += r.states
        transitions += r.transitions
        for k in PHASES:
            cpu[k] += eng.cpu[k]
    return cpu, total, states, transitions


def dump(specs, out) -> None:
    """The engine's behaviour in BFS order (see the module docstring)."""
    dumps = lambda o: orjson.dumps(o, option=orjson.OPT_SORT_KEYS)  # noqa: E731
    h = lambda obs: xxhash.xxh3_64_hexdigest(dumps(obs))  # noqa: E731
    for spec in specs:
        path, n = parse_spec(spec)
        board = load_board(path)
        eng = ReferenceEngine()
        s0 = eng.start(board)
        seen = {h(eng.observe(s0))}
        queue = deque([s0])
        out.write(dumps({"board": path.name, "max_states": n}) + b"\n")
        expanded = 0
        while queue and (n is None or expanded < n):
            s = queue.popleft()
            expanded += 1
            obs = eng.observe(s)
            rec: dict = {"obs": h(obs), "terminal": eng.is_terminal(s)}
            if not rec["terminal"]:
                steps = []
                for a in eng.legal_actions(s):
                    s2, events = eng.apply(s, a)
                    o2 = h(eng.observe(s2))
                    steps.append({"action": a.to_dict(), "events": [[e.kind, e.data] for e in events], "next": o2})
                    if o2 not in seen:
                        seen.add(o2)
                        queue.append(s2)
                rec["steps"] = steps
            out.write(dumps(rec) + b"\n")
        out.write(dumps({"expanded": expanded, "distinct": len(seen)}) + b"\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("boards", nargs="*", default=DEFAULT, help="BOARD.toml[:MAX_STATES] (default: the workload above)")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the best (least total CPU) is shown")
    ap.add_argument("--dump", metavar="FILE", help="write the behaviour dump instead of timing")
    args = ap.parse_args()
    if args.dump:
        with open(args.dump, "wb") as f:
            dump(args.boards, f)
        return 0
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.machine()}, {os.cpu_count()} CPUs")
    print("workload: " + ", ".join(Path(b).name for b in args.boards))
    best = None
    for _ in range(args.repeat):
        r = bench(args.boards)
        if best is None or r[1] < best[1]:
            best = r
    cpu, total, states, transitions = best
    engine = sum(cpu.values())
    print(f"{states:,} states, {transitions:,} transitions")
    for k in PHASES:
        print(f"  {k:14} {cpu[k]:7.2f} s CPU  {cpu[k] / total:6.1%}")
    print(f"  {'engine total':14} {engine:7.2f} s CPU  {engine / total:6.1%}")
    print(f"  {'run total':14} {total:7.2f} s CPU  ({transitions / total:,.0f} transitions/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
