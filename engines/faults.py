"""Engine faults: the one exception an engine (or anything the explorer drives) raises when it
misbehaves, in the engines' own vocabulary of kinds (docs/protocol.md, docs/checking.md).

``crash``            the engine died, or an in-process engine raised (engines/guard.py)
``timeout``          no reply within the per-call timeout (``cmd:`` engines)
``malformed``        a reply that is not one JSON object, or that answers another request
``schema``           a reply that breaks the protocol's schema, or two actions with one label
``refused``          an error reply to a call the engine must answer
``nondeterministic`` the same state and action gave two results

The type lives with the engines, which raise it, and has no imports: the generic explorer
(:mod:`bpcheck.explorers.core`) catches it from any transition system and records an
``ENGINE-FAULT`` counterexample, and nothing under ``engines/`` imports the explorers.
"""

from __future__ import annotations


class SystemFault(Exception):
    """Raised by a transition system when the thing it wraps misbehaves (an engine crash, hang,
    malformed reply, ...). The explorer records it as an ENGINE-FAULT violation with the trace
    that led to it, keeps everything gathered so far, and goes on with the other branches."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


__all__ = ["SystemFault"]
