"""An engine whose every string is hostile: for the escaping tests (tests/test_hostile_engine.py,
docs/reports.md "Text from engines") and the input campaign (scripts/input_campaign.py).

It is the reference model, or a mutant of it (so that invariants fail and their messages quote
what the engine said), with a hostile *payload* put into everything it says:

- names: every card name in observations, events and action records gets the payload appended
  (``Battle Ox`` -> ``Battle Ox<payload>``);
- labels: every action label too (the engine takes its own labels back in ``apply``);
- event data: every string field of an event (the card names; the other fields are enums the
  protocol schema checks);
- reasons: a board whose name holds ``skip`` is refused at ``start`` with the payload as the
  reason (a skipped board);
- messages: on a board whose name holds ``fault``, applying an attack fails with the payload as
  the message (an ENGINE-FAULT counterexample); the engine's name (``hello``) holds it too.

The payload is one of :data:`PAYLOADS` (a *class* of hostile text), or all of them at once
(``all``). In-process: ``hostile_engine:make`` reads ``HOSTILE_CLASS`` and ``HOSTILE_BASE``
(an engine spec such as ``mutant:replay-resets-count``) from the environment. Over the protocol:
``python tests/engines/hostile_engine.py CLASS [BASE]`` (lone surrogates cannot cross the JSON
transport: the ``surrogate`` class is sent as U+FFFD there, see :data:`PAYLOADS`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# One class of hostile text each. Every one is put into names, labels, messages, reasons and
# event data. (They start with a space: labels stay readable, "attack Battle Ox<payload> -> ...".)
PAYLOADS = {
    # a newline, then a line GitHub Actions reads as a workflow command (and its other spellings)
    "github": " \n::error file=pwned.toml,line=1,title=INJECTED::owned\n  ::warning::indented\r::notice::cr ##[error]legacy %0A::error::pre-encoded",
    "esc": " \x1b[2J\x1b[31mred\x1b]0;title\x07\x1b[0m",
    "bel": " \x07\x07bell",
    "bidi": " \u202eevil\u202c \u2066iso\u2069 \u200fmark \u061cmark",
    "controls": " \x00nul\x01\x08\x0b\x0c\x0e\x1f\x7f\x80\x85\x9b[31m\x9c",
    "surrogate": " \ud800lone\udfff",
    "markup": " <script>alert(1)</script><img src=x onerror=alert(1)>&amp;\"'|**bold**`tick`[a](javascript:alert(1))<!--]]>@everyone\\",
    "long": " " + "Lorem ipsum dolor sit amet " * 200,  # 5 KB in every name and label
}
PAYLOADS["all"] = "".join(v for k, v in PAYLOADS.items() if k != "long") + PAYLOADS["long"][:3000]
SURROGATE_CLASSES = ("surrogate", "all")


def payload(cls: str, transport: bool = False) -> str:
    p = PAYLOADS[cls]
    if transport:  # JSON lines cannot carry a lone surrogate: orjson (both ends) refuses it
        p = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in p)
    return p


class HAction:
    """An action of the base engine under a hostile label."""

    __slots__ = ("base", "label", "kind", "_p")

    def __init__(self, base, p: str) -> None:
        self.base = base
        self.label = base.label + p
        self.kind = base.kind
        self._p = p

    def to_dict(self) -> dict:
        return _rename(self.base.to_dict(), self._p)


NAME_KEYS = {"card", "attacker", "target", "source", "label", "name", "effect"}


def _rename(v, p: str, key: str | None = None):
    if isinstance(v, dict):
        return {k: _rename(x, p, k) for k, x in v.items()}
    if isinstance(v, list):
        return [_rename(x, p, key) for x in v]
    if isinstance(v, str) and key in NAME_KEYS:
        return v + p
    return v


class HostileEngine:
    """The base engine with the payload in every string it says (module doc)."""

    def __init__(self, cls: str = "all", base: str | None = None, transport: bool = False) -> None:
        from bpcheck.engines import make_engine

        self.base = make_engine(base)
        self.p = payload(cls, transport)
        self.name = "hostile" + self.p
        self.fault_board = False

    def start(self, board):
        from bpcheck.engines.interface import EngineRefusal

        if "skip" in board.name:
            raise EngineRefusal("this board is refused:" + self.p)
        self.fault_board = "fault" in board.name
        return self.base.start(board)

    def legal_actions(self, state):
        return [HAction(a, self.p) for a in self.base.legal_actions(state)]

    def apply(self, state, action):
        from bpcheck.model.events import Event

        base = action.base if isinstance(action, HAction) else action
        if self.fault_board and base.label.startswith("attack "):
            raise RuntimeError("the engine gives up:" + self.p)
        s2, events = self.base.apply(state, base)
        out = []
        for e in events:
            d = _rename(e.to_dict(), self.p)
            out.append(Event(d.pop("kind"), tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in d.items())))
        return s2, out

    def observe(self, state) -> dict:
        return _rename(self.base.observe(state), self.p)

    def is_terminal(self, state) -> bool:
        return self.base.is_terminal(state)


def make():
    """``--engine hostile_engine:make`` (tests/engines on PYTHONPATH): the class and the base
    engine from HOSTILE_CLASS and HOSTILE_BASE."""
    return HostileEngine(os.environ.get("HOSTILE_CLASS", "all"), os.environ.get("HOSTILE_BASE") or None)


def main(argv: list[str]) -> int:
    from bpcheck.engines.interface import EngineRefusal
    from bpcheck.engines.serve import RequestError, Server

    cls = argv[0] if argv else "all"
    base = argv[1] if len(argv) > 1 else None
    p = payload(cls, transport=True)

    class Hostile(Server):
        engine_name = "hostile" + p

        def op_start(self, req):
            try:
                return super().op_start(req)
            except EngineRefusal as e:  # an error reply: bpcheck skips the board with this reason
                raise RequestError(e.reason) from None

    # (an engine that raises in apply answers with an error reply: a `refused` ENGINE-FAULT)
    server = Hostile(lambda: HostileEngine(cls, base, transport=True))
    # the engine's own stderr, which bpcheck keeps for crash reports, says it too
    sys.stderr.write("hostile engine starting:" + p + "\n")
    sys.stderr.flush()
    return server.serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
