"""Choosing the engine under test: `--engine reference` (default), `--engine mutant:NAME`,
`--engine cmd:COMMAND` (any language, JSON lines: docs/protocol.md), `--engine ocgcore[:LIB]`
(the real EDOPro core: docs/ocgcore.md), or
`--engine package.module:factory`.

A factory is a callable returning an object that implements the engine interface
(:mod:`bpcheck.engines.interface`), or a :class:`~bpcheck.model.engine.Rules` subclass (a rules
variant), which is wrapped in a :class:`~bpcheck.engines.interface.ReferenceEngine`.
"""

from __future__ import annotations

import importlib

from bpcheck.errors import InputError
from bpcheck.model.engine import Rules
from bpcheck.engines.reference import ReferenceEngine

REQUIRED = ("start", "legal_actions", "apply", "observe", "is_terminal")


def make_engine(spec: str | None, *, call_timeout: float | None = None, check_determinism: bool = False):
    """A fresh engine for `spec` (one per board). `call_timeout` and `check_determinism` apply
    to out-of-process engines (`cmd:COMMAND`, docs/protocol.md) only."""
    if spec in (None, "", "reference"):
        return ReferenceEngine()
    if spec.startswith("cmd:"):  # an engine in any language, over the JSON-lines protocol
        from bpcheck.engines.jsonl import make_jsonl_engine

        return make_jsonl_engine(spec, call_timeout=call_timeout, check_determinism=check_determinism)
    if spec == "ocgcore" or spec.startswith("ocgcore:"):  # the real EDOPro core (docs/ocgcore.md)
        from bpcheck.engines.ocgcore import make_ocgcore_engine

        return make_ocgcore_engine(spec)
    if spec.startswith("mutant:"):
        from bpcheck.engines.mutants import MUTANTS, VALUE_MUTANTS

        name = spec[len("mutant:") :]
        known = {**MUTANTS, **VALUE_MUTANTS}  # value mutants: docs/proving.md
        if name not in known:
            raise InputError("--engine", "", f"unknown mutant {name!r} (known: {', '.join(known)})")
        return ReferenceEngine(known[name].rules, name=spec)
    if ":" not in spec:
        raise InputError("--engine", "", f"expected 'reference', 'cmd:COMMAND' or 'package.module:factory', got {spec!r}")
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


def known_disagreements(spec: str | None) -> dict | None:
    """Where bpcheck lists the known, explained disagreements of the engine `spec` names, paths
    relative to the project root (``baseline``: a ``--baseline`` file, ``findings``: the document
    that explains them), with the engine's name (``engine``); None for an engine without them. A
    failing run of such an engine without ``--baseline`` says where they are (cli/main.py)."""
    if spec is not None and (spec == "ocgcore" or spec.startswith("ocgcore:")):
        return {"engine": "The EDOPro core", "baseline": "baselines/ocgcore.toml", "findings": "docs/ocgcore-findings.md"}
    return None
