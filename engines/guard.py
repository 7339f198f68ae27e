"""In-process engines that raise: every exception becomes an engine fault, never a checker crash.

An engine under test is other people's code. When an in-process engine (``package.module:factory``,
a mutant, the reference model) raises from one of its calls, :class:`GuardedEngine` turns the
exception into a :class:`~bpcheck.engines.faults.SystemFault` of kind ``crash`` that names the
exception, the call and where it was raised, so the explorer records an ``ENGINE-FAULT``
counterexample with the trace to that call and goes on, exactly as it does for a ``cmd:`` engine
that crashes (docs/checking.md).

What is not the engine's fault passes through unchanged: :class:`EngineRefusal` from ``start``
(the board is skipped), bad input found by ``start`` (the board's fault, exit 2), a
:class:`SystemFault` the engine raised itself, ``MemoryError`` (the checker's memory) and
interruptions (``KeyboardInterrupt`` and the CLI's signal exceptions, which are not ``Exception``).
Two legal actions with one label are a ``schema`` fault, as over ``cmd:`` (engines/jsonl.py uses
the same check). Out-of-process engines (``cmd:``) are not wrapped: they report their faults
themselves.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

from bpcheck.engines.faults import SystemFault
from bpcheck.engines.interface import EngineRefusal
from bpcheck.errors import InputError


def duplicate_label(labels) -> str | None:
    """The first label given twice in one state's legal actions, or None. An action is named by
    its label in traces, counterexample files and replays, so two with one label are an
    ``ENGINE-FAULT`` of kind ``schema``, the same for in-process and ``cmd:`` engines
    (:func:`duplicate_label_fault`)."""
    seen: set = set()
    for x in labels:
        if x in seen:
            return x
        seen.add(x)
    return None


def duplicate_label_fault(label: str) -> SystemFault:
    return SystemFault("schema", f"two legal actions share the label {label!r}")


def _where(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    if not tb:
        return ""
    fr = tb[-1]
    return f" at {os.path.basename(fr.filename)}:{fr.lineno}"


def _fault(e: BaseException, call: str) -> SystemFault:
    text = str(e)
    what = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return SystemFault("crash", f"the engine raised {what} in {call}(){_where(e)}")


class GuardedEngine:
    """Wraps an in-process engine; attributes other than the five calls are the engine's own."""

    def __init__(self, engine: Any) -> None:
        self.__dict__["_engine"] = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_engine"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__dict__["_engine"], name, value)

    @property
    def wrapped(self) -> Any:
        return self.__dict__["_engine"]

    def start(self, board):
        try:
            return self._engine.start(board)
        except (SystemFault, EngineRefusal, InputError, MemoryError):
            raise
        except (Exception, SystemExit) as e:
            raise _fault(e, "start") from None

    def legal_actions(self, state):
        try:
            actions = self._engine.legal_actions(state)
            dup = duplicate_label(a.label for a in actions)
        except (SystemFault, MemoryError):
            raise
        except (Exception, SystemExit) as e:
            raise _fault(e, "legal_actions") from None
        if dup is not None:
            raise duplicate_label_fault(dup)
        return actions

    def apply(self, state, action):
        try:
            return self._engine.apply(state, action)
        except (SystemFault, MemoryError):
            raise
        except (Exception, SystemExit) as e:
            raise _fault(e, "apply") from None

    def observe(self, state):
        try:
            return self._engine.observe(state)
        except (SystemFault, MemoryError):
            raise
        except (Exception, SystemExit) as e:
            raise _fault(e, "observe") from None

    def is_terminal(self, state):
        try:
            return self._engine.is_terminal(state)
        except (SystemFault, MemoryError):
            raise
        except (Exception, SystemExit) as e:
            raise _fault(e, "is_terminal") from None


def guard_engine(engine: Any) -> Any:
    """`engine`, wrapped so that its exceptions are engine faults (``cmd:`` engines unchanged)."""
    if isinstance(engine, GuardedEngine) or type(engine).__module__ == "bpcheck.engines.jsonl":
        return engine
    return GuardedEngine(engine)


__all__ = ["GuardedEngine", "duplicate_label", "duplicate_label_fault", "guard_engine"]
