"""In-process engines for the run-lifecycle tests (tests/test_exit_contract.py,
tests/test_lifecycle.py, tests/test_checkpoint.py): each is the reference model (or a mutant)
that misbehaves in one documented way. Loaded with ``--engine lifecycle_engines:NAME`` and
``tests/`` on PYTHONPATH.

Environment knobs (read when the engine is built, so one `--engine` spec serves several runs):
``LIFECYCLE_SLOW`` seconds to sleep per ``apply`` (default 0), only on boards whose path contains
``LIFECYCLE_SLOW_ON`` (default: every board); ``LIFECYCLE_STARTED``, a file that gets a line
when the slow board's exploration has begun; ``LIFECYCLE_SLOW_WHEN``, a file: the engine is slow
only once it exists (a test lets the run find its violations first); ``LIFECYCLE_SLOW_WORKERS``
set: slow in worker processes only (the parallel explorer's; the parent replays traces at speed).
"""

from __future__ import annotations

import multiprocessing
import os
import time

from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.mutants import ReplayResetsCount
from bpcheck.engines.reference import ReferenceEngine


class _Slowable(ReferenceEngine):
    def __init__(self, rules_cls=None, name="lifecycle") -> None:
        super().__init__(*([rules_cls] if rules_cls else []), name=name)
        self.delay = float(os.environ.get("LIFECYCLE_SLOW", "0") or 0)
        self.only = os.environ.get("LIFECYCLE_SLOW_ON", "")
        self._slow = False

    def start(self, board):
        self._slow = self.delay > 0 and self.only in board.path
        self._announce = self._slow and os.environ.get("LIFECYCLE_STARTED")
        return super().start(board)

    def apply(self, state, action):
        when = os.environ.get("LIFECYCLE_SLOW_WHEN")
        here = not os.environ.get("LIFECYCLE_SLOW_WORKERS") or multiprocessing.parent_process() is not None
        before = float(os.environ.get("LIFECYCLE_SLOW_BEFORE", "0") or 0)
        if self._slow and here and before and when and not os.path.exists(when):
            time.sleep(before)  # a little slow until then: the run outlasts progress.FIRST_AFTER on any machine
        if self._slow and here and (not when or os.path.exists(when)):
            if self._announce:  # the test waits for this file: the slow board is being explored
                with open(self._announce, "a") as f:
                    f.write("exploring\n")
                self._announce = None
            time.sleep(self.delay)
        return super().apply(state, action)



def slow():
    """The reference model, slowed down by LIFECYCLE_SLOW (for signal and pipe tests)."""
    return _Slowable(name="slow")


def slow_buggy():
    """The replay-resets-count mutant, slowed down by LIFECYCLE_SLOW."""
    return _Slowable(ReplayResetsCount, name="slow-buggy")


class RaisesOnAttack(ReferenceEngine):
    """An in-process engine with a bug: applying an attack declaration raises."""

    def __init__(self) -> None:
        super().__init__(name="raises-on-attack")

    def apply(self, state, action):
        if action.label.startswith("attack "):
            raise RuntimeError("attack resolution is not implemented")
        return super().apply(state, action)


class RefusesReplayBoards(ReferenceEngine):
    """Refuses every board whose file name contains "replay" (a mechanic it lacks)."""

    def __init__(self) -> None:
        super().__init__(name="refuses-replay")

    def start(self, board):
        if "replay" in os.path.basename(board.path):
            raise EngineRefusal("replays are not implemented in this engine")
        return super().start(board)


class ExitsOnAttack(ReferenceEngine):
    """An engine that calls sys.exit() from apply: still an engine fault, never the checker's exit."""

    def __init__(self) -> None:
        super().__init__(name="exits-on-attack")

    def apply(self, state, action):
        if action.label.startswith("attack "):
            raise SystemExit(0)
        return super().apply(state, action)


class ObserveRaises(ReferenceEngine):
    """An engine whose observe() raises on every state, the initial one included."""

    def __init__(self) -> None:
        super().__init__(name="observe-raises")

    def observe(self, state):
        raise KeyError("players")
