"""An in-process engine that starts from the board's plain document only, as an engine outside
bpcheck's model must (docs/engines.md, "What `start` receives"): it reads
``start_document(board)`` (the data a `cmd:` engine gets in the protocol's `start`) and never the
``Board`` it is handed, so it can be fuzzed like any engine (tests/test_fuzz_engines.py). Behind
its `start`, the reference model plays the board it rebuilt from that document. ``seen`` keeps
every start document, to compare with what the protocol sends."""

from __future__ import annotations

import json

from bpcheck.engines.interface import start_document
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.model.board import board_from_dict

seen: list[dict] = []


class DocumentOnly(ReferenceEngine):
    def __init__(self) -> None:
        super().__init__(name="document-only")

    def start(self, board):
        doc = json.loads(json.dumps(start_document(board)))  # plain JSON, as over a pipe
        seen.append(doc)
        rebuilt = board_from_dict(doc["board"], doc["path"])  # the engine's own reading of the document
        return super().start(rebuilt)


def make():
    return DocumentOnly()
