"""The reference model (or a mutant) saying as little as an engine may: every field the EDOPro
core leaves unobserved (``engines/ocgcore/engine.py`` ``UNOBSERVED``: priority and passes, open
windows, pending triggers, choices, the attack counters, the chain links' effect and speed, ...),
yet asking every player in every window (no implicit passes), as an in-house engine would. What
it withholds still tells its states apart: an opaque ``hidden`` key (protocol v2), a hash of the
whole observation it does not show.

For tests/test_offered.py: the completeness invariants and ``priority.pass-pass`` must judge such
an engine from the monitor, the card data and what it does observe. In process
(``Withholding(rules)``) and over ``cmd:`` (``bpcheck serve --engine withholding:NAME``, with
this folder on PYTHONPATH; NAME the factory of a mutant below, its dashes as underscores).
"""

from __future__ import annotations

import orjson
import xxhash

from bpcheck.engines.interface import Capabilities
from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.observation_paths import strip
from bpcheck.engines.ocgcore.engine import UNOBSERVED  # (a constant: the core is not loaded)
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.model.engine import Rules


class Withholding(ReferenceEngine):
    capabilities = Capabilities(unobserved=UNOBSERVED)

    def __init__(self, rules_cls: type[Rules] = Rules, name: str = "withholding") -> None:
        super().__init__(rules_cls, name=name)

    def observe(self, state) -> dict:
        full = super().observe(state)
        key = xxhash.xxh3_64_intdigest(orjson.dumps(full, option=orjson.OPT_SORT_KEYS))
        return {**strip(full, UNOBSERVED), "hidden": f"{key:016x}"}


def reference() -> Withholding:
    return Withholding()


def _factory(name: str):
    def make() -> Withholding:
        return Withholding(MUTANTS[name].rules, name=f"withholding {name}")

    make.__name__ = name.replace("-", "_")
    return make


# one factory per shipped mutant: summoned_monster_cannot_attack(), ...
for _name in MUTANTS:
    globals()[_name.replace("-", "_")] = _factory(_name)
