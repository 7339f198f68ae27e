"""Which observation fields each invariant and each monitor history actually reads.

The invariants' declarations (``reads=`` and ``fields=`` in invariants/base.py) say which
observation paths an invariant reads and what it does where an engine leaves one out; docs/
invariants.md is generated from them. This module checks the declarations against the code: it
explores boards with the reference engine and runs every check (and every history update) on
observations wrapped so that each field access is recorded under its path
(``players[].monsters[].atk``), attributed to the invariant or history that made it.

Used by tests/test_withheld_fields.py; ``python tests/field_reads.py BOARD...`` prints the table.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, ExploreOptions, explore
from bpcheck.invariants import select
from bpcheck.invariants.base import Context, Transition, Unknown
from bpcheck.invariants.monitor import HISTORIES, Monitor
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent


class Recorder:
    def __init__(self) -> None:
        self.reads: dict[str, set[str]] = defaultdict(set)
        self.who: str | None = None

    def hit(self, path: str) -> None:
        if self.who is not None:
            self.reads[self.who].add(path)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


class TracedDict(dict):
    """A dict that records every key read (present or not) under its observation path."""

    __slots__ = ("_p", "_r")

    def __init__(self, d: dict, prefix: str, rec: Recorder) -> None:
        super().__init__(d)
        self._p = prefix
        self._r = rec

    def _wrap(self, key, v):
        return traced(v, _join(self._p, key), self._r)

    def __getitem__(self, key):
        self._r.hit(_join(self._p, key))
        return self._wrap(key, dict.__getitem__(self, key))

    def get(self, key, default=None):
        self._r.hit(_join(self._p, key))
        if dict.__contains__(self, key):
            return self._wrap(key, dict.__getitem__(self, key))
        return default

    def __contains__(self, key):
        self._r.hit(_join(self._p, key))
        return dict.__contains__(self, key)

    def items(self):
        for k, v in dict.items(self):
            self._r.hit(_join(self._p, k))
            yield k, self._wrap(k, v)

    def values(self):
        for _k, v in self.items():
            yield v

    def keys(self):
        for k, _v in self.items():
            yield k

    def __iter__(self):
        return iter(list(self.keys()))


class TracedList(list):
    __slots__ = ("_p", "_r")

    def __init__(self, items, prefix: str, rec: Recorder) -> None:
        super().__init__(items)
        self._p = prefix + "[]"
        self._r = rec

    def __getitem__(self, i):
        v = list.__getitem__(self, i)
        if isinstance(i, slice):
            return TracedList(v, self._p[:-2], self._r)
        return traced(v, self._p, self._r)

    def __iter__(self):
        for v in list.__iter__(self):
            yield traced(v, self._p, self._r)


def traced(v: Any, prefix: str, rec: Recorder) -> Any:
    if isinstance(v, dict) and not isinstance(v, TracedDict):
        return TracedDict(v, prefix, rec)
    if isinstance(v, list) and not isinstance(v, TracedList):
        return TracedList(v, prefix, rec)
    return v


class TracingSystem(EngineSystem):
    """EngineSystem that runs every check and history update on traced observations (slowly)."""

    def __init__(self, engine, board, invariants, rec: Recorder) -> None:
        super().__init__(engine, board, invariants)
        self.rec = rec

    def _call(self, who: str, fn, *args):
        self.rec.who = who
        try:
            return fn(*args)
        except Unknown:
            return None
        finally:
            self.rec.who = None

    def _run(self, plan, *args):
        out = super()._run(plan, *args)  # the real verdicts, from plain observations
        for pid, fn, _raw in plan:
            if len(args) == 1:  # a transition
                t = args[0]
                tt = Transition(traced(t.before, "", self.rec), t.action, t.events, traced(t.after, "", self.rec), t.mon, t.cards, t.mon_after)
                self._call(pid, fn, tt)
            else:
                self._call(pid, fn, traced(args[0], "", self.rec), *args[1:])
        return out

    def step(self, s, a):
        s2, events = super().step(s, a)
        t = self._last[1]
        tt = Transition(traced(t.before, "", self.rec), t.action, t.events, traced(t.after, "", self.rec), s[2], t.cards)
        for name, h in HISTORIES.items():
            self._call(f"history:{name}", h.update, s[2][name], tt)
        return s2, events


def field_reads(boards, max_states: int = 3000) -> dict[str, set[str]]:
    """invariant id (or ``history:NAME``) -> the observation paths it read on these boards."""
    rec = Recorder()
    for b in boards:
        es = TracingSystem(ReferenceEngine(), load_board(b), select(None), rec)
        explore(es, ExploreOptions("bfs", Bounds(max_states=max_states)))
    return {k: {p for p in v if not any(q.startswith(p + ".") or q.startswith(p + "[]") for q in v)} for k, v in rec.reads.items()}


# Boards that between them reach every invariant's situation (the mutants' own boards, small ones).
BOARDS = [
    "000-replay-1.toml", "000-replay-2.toml", "000-replay-dark-elf.toml", "000-not-replay-1.toml", "000-flip-man-eater-bug.toml",
    "000-flip-hane-hane.toml", "000-facedown-flip-destroyed-by-bug.toml", "000-facedown-flip-destroyed.toml",
    "000-ds-spell-trap-list-not-ok.toml", "003-004-example-3.toml", "003-004-example-1.toml", "rule-ds-lily.toml",
    "rule-ds-reflect-bounder.toml", "002-fiendish-chain-mst.toml", "002-fiendish-chain-stops.toml", "rule-ch-lifo-call.toml",
    "rule-ch-set-turn.toml", "rule-atk-each-monster.toml", "002-berserk-gorilla.toml", "000-replay-6.toml",
    "003-004-shining-angel-torrential.toml", "rule-ds-kuriboh.toml", "rule-lp-zero-effect.toml", "000-control-owner-graveyard.toml",
    "rule-ds-end-triggers.toml", "002-skip-battle-phase.toml", "002-first-turn.toml", "000-replay-5.toml", "rule-ch-cost-discard.toml",
]  # fmt: skip


def main(argv: list[str]) -> int:
    boards = [Path(a) for a in argv] or [ROOT / "boards" / b for b in BOARDS]
    for who, ps in sorted(field_reads(boards).items()):
        print(who)
        for p in sorted(ps):
            print("   ", p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["BOARDS", "Context", "Monitor", "field_reads"]
