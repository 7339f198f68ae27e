#!/usr/bin/env python3
"""What checking costs per transition: the invariants, the monitor and the fingerprint.

Not a test: it measures. Figures go into docs/performance.md. Run it on an idle machine:
    python benchmarks/checking_bench.py [--repeat N] [--states N] [--big PATH]

The fixed workload: BFS over the first ``--states`` (20,000) states of the seven-card board
(``/work/wt/seven-card.toml``, or ``boards/000-ds-spell-trap-list.toml`` once it is in the
corpus) and all of ``boards/000-ds-counter-traps.toml``, every invariant, the reference engine.

Figures are CPU seconds (``time.process_time()``), the best of ``--repeat`` runs:

- ``total``: the whole exploration, all invariants, not instrumented;
- ``no invariants``: the same exploration with no invariant selected (engine, observation,
  monitor, fingerprint, explorer), not instrumented; ``invariants`` = total - no invariants;
- instrumented: a run that times every ``Monitor.advance``, ``EngineSystem.fingerprint``,
  ``check_transition``, ``check_state`` and ``check_actions`` call (the cost of the timer itself,
  calibrated, subtracted; on a loaded machine these per-call timings inflate);
- ``--gc``: only one run, with the cyclic garbage collector's passes timed (``gc.callbacks``):
  its share of the total, full collections and young ones apart;
- replayed: the transitions of the first ``--replay`` (5,000) states of the big board are recorded
  once, then each part is timed alone in a tight loop over them (no timer per call): the
  transition invariants, the state invariants (of each successor), the actions invariants,
  ``Monitor.advance`` and the fingerprint (monitors as the exploration left them).

The script uses only ``EngineSystem``, ``explore``, ``Bounds`` and ``Monitor.advance``, so the same
file measures an older checkout (run it with that checkout's interpreter).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers import checking
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, ExploreOptions, explore
from bpcheck.invariants import monitor as monitor_mod
from bpcheck.invariants import select
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "boards" / "000-ds-counter-traps.toml"


def _big_default() -> Path:
    here = ROOT / "boards" / "000-ds-spell-trap-list.toml"
    return here if here.exists() else Path("/work/wt/seven-card.toml")


def workload(big: Path, states: int):
    return [(load_board(big), Bounds(max_states=states)), (load_board(SMALL), Bounds())]


def run(work, invariants) -> tuple[float, int, int]:
    cpu0 = time.process_time()
    n = t = 0
    for board, bounds in work:
        r = explore(EngineSystem(ReferenceEngine(), board, invariants), ExploreOptions("bfs", bounds=bounds))
        n += r.states
        t += r.transitions
    return time.process_time() - cpu0, n, t


class Timers:
    """CPU seconds accumulated per named call, and the number of calls."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, fn):
        clock = time.process_time
        cpu, calls = self.cpu, self.calls
        cpu[name] = 0.0
        calls[name] = 0

        def timed(*args, **kw):
            t0 = clock()
            try:
                return fn(*args, **kw)
            finally:
                cpu[name] += clock() - t0
                calls[name] += 1

        return timed


def _timer_overhead() -> float:
    """CPU seconds one timed call adds by itself (two clock reads and the bookkeeping)."""
    t = Timers()
    f = t.wrap("x", lambda: None)
    n = 200_000
    c0 = time.process_time()
    for _ in range(n):
        f()
    total = time.process_time() - c0
    c0 = time.process_time()
    for _ in range(n):
        (lambda: None)()
    bare = time.process_time() - c0
    # what a call pays outside its own measured interval is not counted in it; about half the
    # wrapper's cost falls inside the interval
    return max(0.0, (total - bare) / n / 2)


def instrumented(work, invariants) -> Timers:
    t = Timers()
    saved = []

    def patch(owner, attr, name):
        orig = getattr(owner, attr)
        saved.append((owner, attr, orig))
        setattr(owner, attr, t.wrap(name, orig))

    patch(monitor_mod.Monitor, "advance", "monitor")
    patch(checking.EngineSystem, "fingerprint", "fingerprint")
    patch(checking.EngineSystem, "check_state", "state invariants")
    patch(checking.EngineSystem, "check_transition", "transition invariants")
    patch(checking.EngineSystem, "check_actions", "actions invariants")
    try:
        run(work, invariants)
    finally:
        for owner, attr, orig in reversed(saved):
            setattr(owner, attr, orig)
    return t


def replayed(big: Path, states: int, invariants, repeat: int) -> dict[str, float]:
    """Microseconds per transition of each part, timed alone over recorded transitions."""
    system = EngineSystem(ReferenceEngine(), load_board(big), invariants)
    rec: list = []
    acts_of: list = []
    step, actions = system.step, system.actions

    def rec_step(s, a):
        s2, events = step(s, a)
        rec.append((s, a, events, s2, system._last[1]))
        return s2, events

    def rec_actions(s):
        acts = actions(s)
        acts_of.append((s, acts))
        return acts

    system.step, system.actions = rec_step, rec_actions
    explore(system, ExploreOptions("bfs", bounds=Bounds(max_states=states)))

    def trans():
        for s, a, events, s2, t in rec:
            system._last = (s2, t)
            system.check_transition(s, a, events, s2)

    def state():
        for _s, _a, _e, s2, _t in rec:
            system.check_state(s2)

    def acts():
        for s, acts in acts_of:
            system.check_actions(s, acts)

    def mon():
        for s, _a, _e, _s2, t in rec:
            s[2].advance(t)

    def fp():
        for _s, _a, _e, s2, _t in rec:
            system.fingerprint(s2)

    out = {}
    for name, f in (("transition invariants", trans), ("state invariants", state), ("actions invariants", acts), ("monitor", mon), ("fingerprint", fp)):
        best = None
        for _ in range(repeat):
            c0 = time.process_time()
            f()
            c = time.process_time() - c0
            best = c if best is None else min(best, c)
        out[name] = best / len(rec) * 1e6
    out["_transitions"] = len(rec)
    return out


def gc_share(work, invariants) -> dict[str, float]:
    """The cyclic garbage collector's part of one run of `work` (CPU seconds, timed with
    ``gc.callbacks``): full collections and young ones, and the same run's total."""
    import gc

    spent = {0: 0.0, 1: 0.0, 2: 0.0}
    count = {0: 0, 1: 0, 2: 0}
    started = [0.0]

    def cb(phase, info):
        if phase == "start":
            started[0] = time.process_time()
        else:
            g = info["generation"]
            spent[g] += time.process_time() - started[0]
            count[g] += 1

    gc.callbacks.append(cb)
    try:
        cpu0 = time.process_time()
        for board, bounds in work:
            explore(EngineSystem(ReferenceEngine(), board, invariants), ExploreOptions("bfs", bounds=bounds))
        total = time.process_time() - cpu0
    finally:
        gc.callbacks.remove(cb)
    return {"total": total, "gc": sum(spent.values()), "full": spent[2], "full_n": count[2], "young_n": count[0] + count[1]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--states", type=int, default=20_000)
    ap.add_argument("--big", type=Path, default=None)
    ap.add_argument("--replay", type=int, default=5_000, help="states of the big board whose transitions are replayed")
    ap.add_argument("--gc", action="store_true", help="only measure the cyclic garbage collector's part of one run")
    args = ap.parse_args()
    big = args.big or _big_default()
    work = workload(big, args.states)
    import bpcheck

    print(f"bpcheck at {Path(bpcheck.__file__).resolve().parent}, Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs")
    print(f"workload: first {args.states:,} states of {big.name} (BFS) + all of {SMALL.name}; every invariant; best of {args.repeat}")
    invs = select(None)
    if args.gc:
        g = gc_share(work, invs)
        print(f"  total {g['total']:.2f} s CPU, of which the cyclic GC {g['gc']:.2f} s ({g['gc'] / g['total']:.0%}): "
              f"{g['full_n']} full collections {g['full']:.2f} s, {g['young_n']} young ones {g['gc'] - g['full']:.2f} s")
        return 0
    best_total = best_none = None
    for _ in range(args.repeat):
        cpu, n, tr = run(work, invs)
        best_total = cpu if best_total is None else min(best_total, cpu)
        cpu0, _n, _t = run(work, [])
        best_none = cpu0 if best_none is None else min(best_none, cpu0)
    print(f"  {n:,} states, {tr:,} transitions")
    over = _timer_overhead()
    best: dict[str, float] = {}
    calls: dict[str, int] = {}
    for _ in range(args.repeat):
        t = instrumented(work, invs)
        for k, v in t.cpu.items():
            v = max(0.0, v - over * t.calls[k])
            best[k] = v if k not in best else min(best[k], v)
        calls = t.calls
    print(f"{'total (all invariants)':28} {best_total:7.2f} s CPU")
    print(f"{'no invariants':28} {best_none:7.2f} s CPU")
    print(f"{'invariants (difference)':28} {best_total - best_none:7.2f} s CPU")
    print(f"instrumented (timer overhead {over * 1e6:.2f} us per call subtracted):")
    for k in ("transition invariants", "state invariants", "actions invariants", "monitor", "fingerprint"):
        print(f"  {k:26} {best[k]:7.2f} s CPU  {calls[k]:>9,} calls  {best[k] / max(calls[k], 1) * 1e6:6.1f} us/call")
    checking_cpu = sum(best[k] for k in ("transition invariants", "state invariants", "actions invariants", "monitor", "fingerprint"))
    print(f"{'  checking (sum)':28} {checking_cpu:7.2f} s CPU  ({checking_cpu / best_total:.0%} of the total)")
    r = replayed(big, args.replay, invs, max(args.repeat, 3))
    print(f"replayed over the {r.pop('_transitions'):,} transitions of the first {args.replay:,} states of {big.name} (us per transition):")
    for k, v in r.items():
        print(f"  {k:26} {v:7.1f} us")
    print(f"{'  checking (sum)':28} {sum(r.values()):7.1f} us per transition")
    return 0


if __name__ == "__main__":
    sys.exit(main())
