"""Which mutants the invariants still catch when the engine observes only what the EDOPro core
observes (docs/performance.md, "seventh round"; docs/ocgcore.md, "Capabilities").

Each mutant of ``bpcheck mutants`` runs on its own seed board behind the reference engine
interface with the ocgcore adapter's ``unobserved`` fields declared (the checker strips them from
every observation, as it does for the core): the engine says exactly as little as the real core
does, and its bugs are the mutant's. Printed per mutant: caught (by which invariants) or missed,
and which invariants were "not evaluated". Usage::

    python benchmarks/core_view_mutants.py [--full]   # --full: the reference's own view too
"""

from __future__ import annotations

import sys
from pathlib import Path

from bpcheck.engines.interface import Capabilities
from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.invariants import select
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent


def core_unobserved() -> frozenset[str]:
    from bpcheck.engines.ocgcore.engine import UNOBSERVED  # (a constant: the core is not loaded)

    return UNOBSERVED


class CoreView(ReferenceEngine):
    """The reference model (or a mutant) observing only what the EDOPro core observes."""

    # (the core also hides priority and passes, but it never stops at a lone pass: it passes for
    # its players. The reference does stop there, and without them two sides of a pass would look
    # like one state, a CYCLE that the core never shows; so they stay observed here.)
    capabilities = Capabilities(unobserved=core_unobserved() - {"priority", "passes"})


def run(name: str, core_view: bool = True):
    m = MUTANTS[name]
    cls = CoreView if core_view else ReferenceEngine
    es = EngineSystem(cls(m.rules, name=name), load_board(ROOT / "boards" / m.board), select(None))
    r = explore(es)
    return r, dict(es.not_evaluated)


def main(argv: list[str]) -> int:
    caught = 0
    for name in MUTANTS:
        r, blind = run(name)
        if r.status == "fail":
            caught += 1
            print(f"caught  {name:45s} {','.join(sorted({v.prop for v in r.violations}))}")
        else:
            print(f"MISSED  {name:45s} ({r.status}; {len(blind)} invariants not evaluated)")
    print(f"{caught} of {len(MUTANTS)} mutants caught with the EDOPro core's view")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
