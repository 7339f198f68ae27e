"""Engine faults: the one exception an engine (or anything the explorer drives) raises when it
misbehaves, in the engines' own vocabulary of kinds (docs/protocol.md, docs/checking.md).

``crash``            the engine died, or an in-process engine raised (engines/guard.py)
``timeout``          no reply within the per-call timeout (``cmd:`` engines)
``malformed``        a reply that is not one JSON object, or that answers another request
``schema``           a reply that breaks the protocol's schema, or two actions with one label
``refused``          an error reply to a call the engine must answer
``nondeterministic`` the same state and action gave two results

The type lives with the engines, which raise it, and has no imports of bpcheck: the generic
explorer (:mod:`bpcheck.explorers.core`) catches it from any transition system and records an
``ENGINE-FAULT`` counterexample, and nothing under ``engines/`` imports the explorers.

A stop that is overdue (issue 33): the explorer acts on a signal before it expands the next state
(harness/lifecycle.py), but one state of a hostile engine can take minutes (100,000 actions, each
an engine call). While the sequential explorer runs it arms :func:`check_stop`; once a stop was
asked for (:func:`request_stop`, by the signal handler) and not acted on within
:data:`STOP_GRACE` seconds, the engine client's read loop, the explorer's loop over a state's
actions and the reduction's pre-applying raise :class:`Abandoned`, which the explorer catches:
the state is left half expanded and the exploration stops as it does at a signal (inconclusive,
every violation found kept; not resumable, the half-expanded state's steps are counted).
"""

from __future__ import annotations

import time

STOP_GRACE = 0.5  # seconds: a stop not acted on by then abandons the state being expanded


class SystemFault(Exception):
    """Raised by a transition system when the thing it wraps misbehaves (an engine crash, hang,
    malformed reply, ...). The explorer records it as an ENGINE-FAULT violation with the trace
    that led to it, keeps everything gathered so far, and goes on with the other branches."""

    def __init__(self, kind: str, message: str, stderr: tuple[str, ...] = ()) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.stderr = tuple(stderr)  # a crashed engine's last stderr lines (bounded: engines/jsonl.py), for the report


class Abandoned(BaseException):
    """The state being expanded is abandoned: a stop was asked for and not acted on within
    :data:`STOP_GRACE` seconds (module doc). Not an Exception: nothing catches it by accident."""


_stop = {"asked": None, "armed": 0}  # when a stop was asked for (monotonic), and whether an explorer listens


def request_stop() -> None:
    """A stop was asked for (a signal): :func:`check_stop` raises once it is overdue."""
    if _stop["asked"] is None:
        _stop["asked"] = time.monotonic()


def reset_stop() -> None:
    """No stop asked for (a new run's signal handlers)."""
    _stop["asked"] = None


def arm(on: bool) -> None:
    """An exploration that catches :class:`Abandoned` begins (True) or ends (False)."""
    _stop["armed"] += 1 if on else -1


def check_stop() -> None:
    """Raise :class:`Abandoned` if a stop is overdue while an exploration listens."""
    asked = _stop["asked"]
    if asked is not None and _stop["armed"] > 0 and time.monotonic() - asked >= STOP_GRACE:
        raise Abandoned()


def stop_asked() -> bool:
    return _stop["asked"] is not None


__all__ = ["Abandoned", "STOP_GRACE", "SystemFault", "arm", "check_stop", "request_stop", "reset_stop", "stop_asked"]
