"""The invariant library: checks that read observations and events only (docs/invariants.md).

``REGISTRY`` maps each invariant ID to its :class:`~bpcheck.invariants.base.Invariant`. The
families live in one module each; importing this package registers them all.
"""

from bpcheck.invariants import accounting, attacks, chains, damage_step, offered, priority, profiled, replay, turn  # noqa: F401  (registration)
from bpcheck.invariants.base import REGISTRY, Invariant, Transition, invariant

# the families are public submodules too: importing this package registers them
__all__ = [
    "REGISTRY", "Invariant", "Transition", "invariant", "select",
    "accounting", "attacks", "chains", "damage_step", "offered", "priority", "profiled", "replay", "turn",
]


def select(ids: str | None) -> list[Invariant]:
    """Invariants by comma-separated IDs or family names; all when `ids` is empty."""
    if not ids:
        return [REGISTRY[k] for k in sorted(REGISTRY)]
    out: list[Invariant] = []
    for part in (x.strip() for x in ids.split(",")):
        if not part:
            continue
        if part in REGISTRY:
            out.append(REGISTRY[part])
            continue
        fam = [inv for inv in REGISTRY.values() if inv.family == part]
        if not fam:
            raise KeyError(part)
        out.extend(sorted(fam, key=lambda i: i.id))
    seen: set[str] = set()
    return [i for i in out if not (i.id in seen or seen.add(i.id))]
