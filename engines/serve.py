"""`bpcheck serve`: the engine side of the JSON-lines protocol (docs/protocol.md) over an
in-process engine — the reference model by default.

It lets any tool drive the reference model (or a rules variant, `--engine package.module:factory`)
as a JSON-lines engine over stdin/stdout, and it is the reference the out-of-process adapter
(:mod:`bpcheck.engines.jsonl`) is tested against::

    bpcheck check boards/000-replay-1.toml --engine cmd:"bpcheck serve"
    bpcheck check boards/000-replay-1.toml --engine cmd:"python -m bpcheck.engines.serve"

Engine states are kept in memory for the life of the process; a state is handed out once and
keeps its handle (an integer), so asking twice for the same state gives the same handle when
the engine's states are hashable (the reference model's are). Every problem with a request is an
``{"id": ..., "error": "..."}`` reply, never a crash; the server exits when its input ends.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, BinaryIO, Callable

import orjson

from bpcheck import __version__
from bpcheck.engines import make_engine
from bpcheck.engines.interface import DEFAULT_CAPABILITIES, Capabilities, capabilities_of
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.errors import InputError
from bpcheck.model.board import board_from_dict, load_board, with_default_ruleset
from bpcheck.model.rulesets import RULESETS

PROTOCOL_VERSION = 1  # the base version; a client that also speaks 2 gets 2 and the engine's capabilities
PROTOCOL_VERSIONS = (1, 2)


def capabilities_record(caps: Capabilities) -> dict:
    """The ``capabilities`` of a hello reply for `caps` (only what differs from a v1 engine)."""
    out: dict[str, Any] = {}
    if caps.unobserved:
        out["unobserved"] = sorted(caps.unobserved)
    if caps.implicit_passes:
        out["implicit_passes"] = True
    if not caps.cloning:
        out["cloning"] = False
    if caps.passcodes:
        out["passcodes"] = True
    return out


class RequestError(Exception):
    """A request the server cannot answer: becomes an error reply."""


class Server:
    """One protocol session over an engine that implements the engine interface.

    Subclasses (the faulty engines of the tests) override :meth:`handle` or the ``op_*``
    methods to misbehave on purpose."""

    engine_name = "bpcheck-reference"

    def __init__(self, make: Callable[[], Any] | None = None, engine_name: str | None = None) -> None:
        if make is None:
            make = ReferenceEngine
        self._make = make
        if engine_name:
            self.engine_name = engine_name
        self.engine: Any = None
        self.states: list[Any] = []
        self.handles: dict[Any, int] = {}
        self.hello_done = False
        self.protocol = PROTOCOL_VERSION
        self.released = 0  # protocol 2: handles the client released
        self.reexecuted = 0  # protocol 2: states rebuilt from a request's path
        self._capabilities = None

    def capabilities(self):
        """The served engine's capabilities (an in-process engine's ``capabilities`` attribute)."""
        if self._capabilities is None:
            self._capabilities = capabilities_of(self._make())
        return self._capabilities

    # -- handles --------------------------------------------------------------------------------

    def handle_of(self, state: Any) -> int:
        try:
            h = self.handles.get(state)
        except TypeError:  # an unhashable engine state: a new handle each time
            self.states.append(state)
            return len(self.states) - 1
        if h is None:
            h = len(self.states)
            self.states.append(state)
            self.handles[state] = h
        return h

    _RELEASED = object()

    def state_of(self, req: dict) -> Any:
        if self.engine is None:
            raise RequestError("no board started: send 'start' first")
        h = req.get("state")
        if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h < len(self.states):
            raise RequestError(f"unknown state handle {h!r}")
        s = self.states[h]
        if s is self._RELEASED:
            path = req.get("path")
            if not isinstance(path, list):
                raise RequestError(f"state handle {h} was released and the request carries no 'path'")
            return self.replay_path(path)
        return s

    def replay_path(self, path: list) -> Any:
        """The state at the end of `path` (action labels from the initial state), re-executed."""
        s = self.states[0]
        for k, label in enumerate(path):
            action = next((a for a in self.engine.legal_actions(s) if a.label == label), None)
            if action is None:
                raise RequestError(f"path[{k}]: {label!r} is not a legal action there")
            s, _events = self.engine.apply(s, action)
        self.reexecuted += 1
        return s

    # -- operations -----------------------------------------------------------------------------

    def op_hello(self, req: dict) -> dict:
        versions = req.get("versions")
        if req.get("protocol") != PROTOCOL_VERSION and not (isinstance(versions, list) and 2 in versions):
            raise RequestError(f"this engine speaks protocol 1 or 2, not {req.get('protocol')!r}")
        caps = self.capabilities()
        if isinstance(versions, list) and 2 in versions:
            self.protocol = 2
            self.hello_done = True
            return {"protocol": 2, "engine": self.engine_name, "version": __version__, "capabilities": capabilities_record(caps)}
        if caps != DEFAULT_CAPABILITIES:
            raise RequestError("this engine needs protocol 2 (it declares capabilities a version 1 client cannot use)")
        self.protocol = PROTOCOL_VERSION
        self.hello_done = True
        return {"protocol": PROTOCOL_VERSION, "engine": self.engine_name, "version": __version__}

    def op_release(self, req: dict) -> dict:
        if self.engine is None:
            raise RequestError("no board started: send 'start' first")
        hs = req.get("states")
        if not isinstance(hs, list):
            raise RequestError("'release' needs 'states': a list of handles")
        for h in hs:
            if not isinstance(h, int) or isinstance(h, bool) or not 0 < h < len(self.states):
                raise RequestError(f"unknown state handle {h!r} (the initial state is never released)")
        for h in hs:
            s = self.states[h]
            if s is not self._RELEASED:
                try:
                    if self.handles.get(s) == h:
                        del self.handles[s]
                except TypeError:
                    pass
                self.states[h] = self._RELEASED
                self.released += 1
        return {}

    def op_start(self, req: dict) -> dict:
        path = req.get("path")
        board = req.get("board")
        try:
            if isinstance(board, dict):
                b = board_from_dict(board, path if isinstance(path, str) else "<board>")
            elif isinstance(path, str):
                b = load_board(path)
            else:
                raise RequestError("'start' needs 'board' (an object) or 'path' (a string)")
        except InputError as e:
            raise RequestError(f"bad board: {e.render()}") from None
        # The ruleset to play (docs/protocol.md, "The ruleset"): optional, a client that sends
        # none means the board's own or tcg; bpcheck sends `--ruleset`'s for a board naming none.
        ruleset = req.get("ruleset")
        if ruleset is not None:
            if not isinstance(ruleset, str) or ruleset not in RULESETS:
                raise RequestError(f"bad 'ruleset': {ruleset!r} (known: {', '.join(RULESETS)})")
            if b.ruleset is not None and b.ruleset != ruleset:
                raise RequestError(f"'ruleset' is {ruleset!r} but the board names the ruleset {b.ruleset!r}")
            b = with_default_ruleset(b, ruleset)
        self.engine = self._make()
        self.states, self.handles = [], {}
        return {"state": self.handle_of(self.engine.start(b))}

    def op_legal_actions(self, req: dict) -> dict:
        s = self.state_of(req)
        return {"actions": [a.to_dict() for a in self.engine.legal_actions(s)]}

    def op_apply(self, req: dict) -> dict:
        s = self.state_of(req)
        want = req.get("action")
        label = want.get("label") if isinstance(want, dict) else want
        if not isinstance(label, str):
            raise RequestError("'apply' needs 'action': an action label or an action record with a 'label'")
        action = next((a for a in self.engine.legal_actions(s) if a.label == label), None)
        if action is None:
            raise RequestError(f"{label!r} is not a legal action in state {req['state']}")
        s2, events = self.engine.apply(s, action)
        return {"state": self.handle_of(s2), "events": [e.to_dict() for e in events]}

    def op_observe(self, req: dict) -> dict:
        s = self.state_of(req)
        return {"observation": self.engine.observe(s)}

    def op_terminal(self, req: dict) -> dict:
        s = self.state_of(req)
        return {"terminal": bool(self.engine.is_terminal(s))}

    OPS = ("hello", "start", "legal_actions", "apply", "observe", "terminal", "release")

    def handle(self, req: Any) -> dict:
        """The reply to one decoded request."""
        if not isinstance(req, dict):
            raise RequestError("a request is a JSON object")
        op = req.get("op")
        if op not in self.OPS:
            raise RequestError(f"unknown op {op!r} (known: {', '.join(self.OPS)})")
        if op != "hello" and not self.hello_done:
            raise RequestError("send 'hello' first")
        return getattr(self, f"op_{op}")(req)

    # -- the loop -------------------------------------------------------------------------------

    def reply_line(self, line: bytes) -> bytes:
        rid = None
        try:
            try:
                req = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise RequestError(f"malformed JSON: {e}") from None
            if isinstance(req, dict):
                rid = req.get("id")
            out = {"id": rid, **self.handle(req)}
        except RequestError as e:
            out = {"id": rid, "error": str(e)}
        except Exception as e:  # an engine bug: report it, keep serving
            out = {"id": rid, "error": f"internal error: {type(e).__name__}: {e}"}
        return orjson.dumps(out) + b"\n"

    def serve(self, inp: BinaryIO, out: BinaryIO) -> int:
        while True:
            line = inp.readline()
            if not line:
                return 0
            if not line.strip():
                continue
            out.write(self.reply_line(line))
            out.flush()


def engine_factory(spec: str | None) -> Callable[[], Any]:
    """A factory of fresh in-process engines for `spec` (not a cmd: engine: no loops)."""
    if spec and spec.startswith("cmd:"):
        raise InputError("--engine", "", "bpcheck serve serves an in-process engine, not a cmd: engine")

    make_engine(spec)  # bad specs are reported now, before any request
    return lambda: make_engine(spec)


def run(spec: str | None = None) -> int:
    make = engine_factory(spec)
    name = "bpcheck-reference" if spec in (None, "", "reference") else f"bpcheck:{spec}"
    return Server(make, name).serve(sys.stdin.buffer, sys.stdout.buffer)


def main(argv: list[str] | None = None) -> int:
    """``python -m bpcheck.engines.serve [--engine E]``: what `bpcheck serve` does, without the
    command line (which nothing in the library imports). A bad ``--engine`` is one line on
    stderr and status 2, as `bpcheck serve` says it (README, exit statuses)."""
    parser = argparse.ArgumentParser(prog="python -m bpcheck.engines.serve", description="serve an engine over the JSON-lines protocol")
    parser.add_argument("--engine", default=None, help="in-process engine spec (default: reference)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args.engine)
    except InputError as e:
        print(f"bpcheck: error: {e.render()}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
