"""Deliberately faulty JSON-lines engines for the engine-fault tests (tests/test_protocol.py).

Each is the reference model served by :class:`bpcheck.engines.serve.Server` that misbehaves in one way
when it is asked to apply an attack declaration (an action whose label starts with "attack "),
so that the fault comes in the middle of an exploration, after a few normal steps, and boards
with no attack are explored normally. Run one as ``python tests/engines/<kind>_engine.py``.
"""

from __future__ import annotations

import sys

from bpcheck.engines.serve import RequestError, Server


def is_attack(req: dict) -> bool:
    action = req.get("action")
    label = action.get("label") if isinstance(action, dict) else action
    return req.get("op") == "apply" and isinstance(label, str) and label.startswith("attack ")


def serve(server: Server) -> None:
    raise SystemExit(server.serve(sys.stdin.buffer, sys.stdout.buffer))


__all__ = ["RequestError", "Server", "is_attack", "serve"]
