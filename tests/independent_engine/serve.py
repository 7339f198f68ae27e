"""The independent engine over bpcheck's JSON-lines protocol, version 2 (docs/protocol.md).

    python tests/independent_engine/serve.py [--bug NAME]

One JSON request per line on standard input, one reply per line on standard output. Its
``hello`` declares every field it withholds unobserved (engine.WITHHELD). Python's standard
library only: like engine.py, nothing here comes from bpcheck.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import BUGS, WITHHELD, Engine, Refusal  # noqa: E402


class Server:
    def __init__(self, bug: str | None) -> None:
        self.bug = bug
        self.engine: Engine | None = None
        self.states: list = []  # handle -> state
        self.handles: dict[str, int] = {}  # the state's key -> its handle (a state met again keeps its handle)

    def handle(self, s: dict) -> int:
        k = Engine.key(s)
        h = self.handles.get(k)
        if h is None:
            h = self.handles[k] = len(self.states)
            self.states.append(s)
        return h

    def state(self, req: dict) -> dict:
        h = req.get("state")
        if self.engine is None:
            raise LookupError("no board started")
        if not isinstance(h, int) or not 0 <= h < len(self.states):
            raise LookupError(f"unknown state handle {h!r}")
        return self.states[h]

    def reply(self, req: dict) -> dict:
        op = req.get("op")
        if op == "hello":
            name = "independent-engine" + (f" (bug: {self.bug})" if self.bug else "")
            if 2 not in (req.get("versions") or []):
                return {"protocol": 2, "engine": name}
            return {"protocol": 2, "engine": name, "capabilities": {"unobserved": sorted(WITHHELD)}}
        if op == "start":
            self.engine = Engine(self.bug)
            self.states, self.handles = [], {}
            try:
                s = self.engine.start(req.get("board") or {}, req.get("cards") or {}, req.get("ruleset"))
            except Refusal as e:
                self.engine = None
                return {"error": f"this engine cannot play the board: {e}"}
            return {"state": self.handle(s)}
        if op == "legal_actions":
            return {"actions": self.engine.legal_actions(self.state(req))} if self.engine else {"error": "no board started"}
        if op == "apply":
            s = self.state(req)
            action = req.get("action")
            label = action.get("label") if isinstance(action, dict) else action
            try:
                s2, events = self.engine.apply(s, label)
            except ValueError as e:
                return {"error": str(e)}
            return {"state": self.handle(s2), "events": events}
        if op == "observe":
            return {"observation": self.engine.observe(self.state(req))}
        if op == "terminal":
            return {"terminal": Engine.terminal(self.state(req))}
        if op == "release":
            return {}
        return {"error": f"unknown op {op!r}"}

    def serve(self, inp, out) -> int:
        for line in inp:
            try:
                req = json.loads(line)
            except ValueError:
                out.write(json.dumps({"id": None, "error": "not JSON"}) + "\n")
                out.flush()
                continue
            rid = req.get("id") if isinstance(req, dict) else None
            try:
                body = self.reply(req) if isinstance(req, dict) else {"error": "not an object"}
            except LookupError as e:
                body = {"error": str(e)}
            out.write(json.dumps({"id": rid, **body}, separators=(",", ":")) + "\n")
            out.flush()
        return 0


def main(argv: list[str]) -> int:
    bug = None
    if argv[:1] == ["--bug"] and len(argv) == 2:
        bug = argv[1]
    elif argv:
        print("usage: serve.py [--bug NAME]", file=sys.stderr)
        return 2
    if bug is not None and bug not in BUGS:
        print(f"unknown bug {bug!r}; known: {', '.join(sorted(BUGS))}", file=sys.stderr)
        return 2
    return Server(bug).serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
