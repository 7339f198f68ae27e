"""A JSON-lines engine that cannot clone a duel (protocol v2 ``cloning: false``), for
tests/test_protocol_v2.py: it keeps at most ``LIVE`` engine states (least recently used first
out) and rebuilds any other state by re-executing the request's ``path`` from the initial
state, as an engine over a real duel core must. Every request on a state must carry a ``path``
(an error reply otherwise) and the state it names is the one at the end of the path, whatever
the handle. At exit it writes its counts as JSON to $V2_STATS (if set).

Run: ``python tests/engines/v2_nocloning.py [LIVE [MUTANT]]`` (MUTANT: a shipped mutant's name).
"""

from __future__ import annotations

import json
import os
import sys
from collections import OrderedDict

from bpcheck.engines.interface import Capabilities
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.engines.serve import RequestError, Server
from bpcheck.model.engine import Rules


class NoCloningEngine(ReferenceEngine):
    capabilities = Capabilities(cloning=False)

    def __init__(self, mutant: str | None = None) -> None:
        from bpcheck.engines.mutants import MUTANTS

        super().__init__(MUTANTS[mutant].rules if mutant else Rules, name="v2-nocloning")


class NoCloningServer(Server):
    engine_name = "v2-nocloning"

    def __init__(self, live: int, mutant: str | None = None) -> None:
        super().__init__(lambda: NoCloningEngine(mutant))
        self.live_limit = live
        self.live: OrderedDict[tuple, object] = OrderedDict()  # path -> engine state
        self.root = None
        self.next_handle = 0
        self.stats = {"requests": 0, "replays": 0, "replayed_steps": 0, "released": 0, "releases": 0}

    def op_start(self, req: dict) -> dict:
        reply = super().op_start(req)
        self.root = self.states[0]
        self.live.clear()
        return reply

    def state_of(self, req: dict):
        if self.engine is None:
            raise RequestError("no board started: send 'start' first")
        path = req.get("path")
        if not isinstance(path, list) or not all(isinstance(x, str) for x in path):
            raise RequestError("this engine cannot clone: every request on a state carries its 'path'")
        key = tuple(path)
        self.stats["requests"] += 1
        s = self.live.get(key)
        if s is not None:
            self.live.move_to_end(key)
            return s
        # Re-execute from the longest live prefix (the initial state at worst).
        start, k = self.root, 0
        for n in range(len(key) - 1, 0, -1):
            if key[:n] in self.live:
                start, k = self.live[key[:n]], n
                break
        s = start
        self.stats["replays"] += 1
        for label in key[k:]:
            action = next((a for a in self.engine.legal_actions(s) if a.label == label), None)
            if action is None:
                raise RequestError(f"path: {label!r} is not a legal action there")
            s, _ = self.engine.apply(s, action)
            self.stats["replayed_steps"] += 1
        self.keep(key, s)
        return s

    def keep(self, key: tuple, s) -> None:
        self.live[key] = s
        self.live.move_to_end(key)
        while len(self.live) > self.live_limit:
            self.live.popitem(last=False)

    def op_apply(self, req: dict) -> dict:
        s = self.state_of(req)
        label = req.get("action")
        label = label.get("label") if isinstance(label, dict) else label
        action = next((a for a in self.engine.legal_actions(s) if a.label == label), None)
        if action is None:
            raise RequestError(f"{label!r} is not a legal action here")
        s2, events = self.engine.apply(s, action)
        self.keep((*req["path"], label), s2)
        self.next_handle += 1
        return {"state": self.next_handle, "events": [e.to_dict() for e in events]}

    def op_release(self, req: dict) -> dict:
        hs = req.get("states")
        if not isinstance(hs, list):
            raise RequestError("'release' needs 'states'")
        self.stats["released"] += len(hs)
        self.stats["releases"] += 1
        return {}


def main() -> int:
    live = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    srv = NoCloningServer(live, sys.argv[2] if len(sys.argv) > 2 else None)
    code = srv.serve(sys.stdin.buffer, sys.stdout.buffer)
    out = os.environ.get("V2_STATS")
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(srv.stats) + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
