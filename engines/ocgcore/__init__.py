"""``--engine ocgcore``: the real EDOPro core (edo9300/ygopro-core, C API v11) as an engine under
test, driven in process through ctypes (docs/ocgcore.md).

The library, the card scripts and the card database are found at run time: ``OCGCORE``,
``OCG_SCRIPTS`` and ``OCG_CARDS`` (defaults: ``../shared/ocgcore/`` beside the project root);
``--engine ocgcore:LIB`` names the library. Nothing of the core is part of bpcheck.
"""

from bpcheck.engines.ocgcore.engine import CAPABILITIES, UNOBSERVED, OcgAction, OcgcoreEngine, default_paths


def make_ocgcore_engine(spec: str = "ocgcore", **kwargs) -> OcgcoreEngine:
    """The engine for ``ocgcore`` or ``ocgcore:LIB``."""
    lib = spec.partition(":")[2] if spec.startswith("ocgcore:") else None
    return OcgcoreEngine(library=lib or None, **kwargs)


__all__ = ["CAPABILITIES", "UNOBSERVED", "OcgAction", "OcgcoreEngine", "default_paths", "make_ocgcore_engine"]
