"""bpcheck: a model checker and property-test harness for the Yu-Gi-Oh! TCG Battle Phase.

The library's public API is here, at the package root (as Hypothesis keeps its own): the
errors, the version, and the entry points of a user's own code and test suite. The reference
model lives in :mod:`bpcheck.model`, the engines (interface, reference, mutants, adapters) in
:mod:`bpcheck.engines`, the invariants in :mod:`bpcheck.invariants`, the generic explorer in
:mod:`bpcheck.explorers`, the report writers in :mod:`bpcheck.reports`, the runs built on them in
:mod:`bpcheck.harness`, and the command line, which nothing else imports, in :mod:`bpcheck.cli`.

The names below are imported on first use (PEP 562): ``import bpcheck.errors`` from the model
costs nothing of the library above it, and no import cycle runs through the root.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from bpcheck.errors import InputError

__version__ = "0.1.0"

# public name -> the module that defines it
_LAZY = {
    "engine_state_machine": "bpcheck.harness.testing",
    "run_engine_state_machine": "bpcheck.harness.testing",
    "assert_scenario": "bpcheck.harness.pytest_plugin",
    "assert_board": "bpcheck.harness.pytest_plugin",
    "write_board": "bpcheck.harness.board_writer",
    "board_toml": "bpcheck.harness.board_writer",
    "load_board": "bpcheck.model.board",
    "make_engine": "bpcheck.engines",
    "select_invariants": ("bpcheck.invariants", "select"),
}

__all__ = ["InputError", "__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'bpcheck' has no attribute {name!r}")
    module, attr = where if isinstance(where, tuple) else (where, name)
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
