"""Choosing the engine under test: `--engine reference` (default) or `--engine package.module:factory`.

A factory is a callable returning an object that implements the engine interface
(:mod:`bpcheck.model.interface`), or a :class:`~bpcheck.model.engine.Rules` subclass (a rules
variant), which is wrapped in a :class:`~bpcheck.model.interface.ReferenceEngine`.
"""

from __future__ import annotations

import importlib

from bpcheck.errors import InputError
from bpcheck.model.engine import Rules
from bpcheck.model.interface import ReferenceEngine

REQUIRED = ("start", "legal_actions", "apply", "observe", "is_terminal")


def make_engine(spec: str | None):
    """A fresh engine for `spec` (one per board)."""
    if spec in (None, "", "reference"):
        return ReferenceEngine()
    if ":" not in spec:
        raise InputError("--engine", "", f"expected 'reference' or 'package.module:factory', got {spec!r}")
    mod_name, _, attr = spec.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise InputError("--engine", "", f"cannot import {mod_name!r}: {e}") from None
    factory = getattr(mod, attr, None)
    if factory is None:
        raise InputError("--engine", "", f"module {mod_name!r} has no {attr!r}")
    if isinstance(factory, type) and issubclass(factory, Rules):
        return ReferenceEngine(factory, name=spec)
    try:
        engine = factory()
    except Exception as e:  # a broken factory is bad input, not a crash
        raise InputError("--engine", "", f"{spec} failed to build an engine: {type(e).__name__}: {e}") from None
    if isinstance(engine, type) and issubclass(engine, Rules):
        return ReferenceEngine(engine, name=spec)
    missing = [m for m in REQUIRED if not callable(getattr(engine, m, None))]
    if missing:
        raise InputError("--engine", "", f"{spec} does not implement the engine interface (missing: {', '.join(missing)})")
    if not getattr(engine, "name", None):
        engine.name = spec
    return engine
