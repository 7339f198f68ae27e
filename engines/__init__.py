"""Engines: the one home of everything that plays a duel for the checker (docs/engines.md).

- :mod:`~bpcheck.engines.interface`: the engine interface every engine implements;
- :mod:`~bpcheck.engines.reference`: the reference model behind it;
- :mod:`~bpcheck.engines.mutants`: the reference with one realistic rules bug each;
- :mod:`~bpcheck.engines.jsonl`: the client for engines in any language (JSON lines, docs/protocol.md);
- :mod:`~bpcheck.engines.serve`: the server side of that protocol;
- :mod:`~bpcheck.engines.registry`: ``--engine SPEC`` -> an engine (:func:`make_engine`);
- ``examples/``: engines written outside Python (``node/vanilla-engine.js``).
"""

from bpcheck.engines.interface import Capabilities, Engine, EngineAction, EngineRefusal, capabilities_of
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.engines.registry import make_engine

__all__ = ["Capabilities", "Engine", "EngineAction", "EngineRefusal", "ReferenceEngine", "capabilities_of", "make_engine"]
