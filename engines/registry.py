"""Choosing the engine under test: `--engine reference` (default), `--engine mutant:NAME`,
`--engine cmd:COMMAND` (any language, JSON lines: docs/protocol.md), `--engine ocgcore[:LIB]`
(the real EDOPro core: docs/ocgcore.md), or
`--engine package.module:factory`. :data:`ENGINE_SPECS` lists them once for every help text and
error message.

A factory is a callable returning an object that implements the engine interface
(:mod:`bpcheck.engines.interface`), or a :class:`~bpcheck.model.engine.Rules` subclass (a rules
variant), which is wrapped in a :class:`~bpcheck.engines.interface.ReferenceEngine`.
"""

from __future__ import annotations

import importlib

from bpcheck.engines.jsonl import make_jsonl_engine
from bpcheck.engines.mutants import MUTANTS, VALUE_MUTANTS
from bpcheck.engines.ocgcore import make_ocgcore_engine
from bpcheck.engines.ocgcore.engine import default_paths
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.errors import InputError, did_you_mean
from bpcheck.model.engine import Rules

REQUIRED = ("start", "legal_actions", "apply", "observe", "is_terminal")

# Every form an engine spec takes, in one place: each parser's --engine help, the pytest plugin's
# --bp-engine and every error about a spec read these (docs/engines.md, "Engines available now").
ENGINE_SPECS: tuple[tuple[str, str], ...] = (
    ("reference", "the reference model (the default)"),
    ("mutant:NAME", "the reference model with one rules bug (`bpcheck mutants` lists them)"),
    ("ocgcore", "the real EDOPro core, in process (docs/ocgcore.md); ocgcore:LIB loads the core library LIB"),
    ("cmd:COMMAND", "an engine in any language over the JSON-lines protocol (docs/protocol.md)"),
    ("package.module:factory", "an in-process Python engine, or a subclass of bpcheck.model.engine.Rules (docs/engines.md)"),
)
# the forms as a user types them (ocgcore and ocgcore:LIB are one entry above)
SPEC_FORMS: tuple[str, ...] = ("reference", "mutant:NAME", "ocgcore", "ocgcore:LIB", "cmd:COMMAND", "package.module:factory")
IN_PROCESS_FORMS: tuple[str, ...] = tuple(f for f in SPEC_FORMS if not f.startswith("cmd:"))


def spec_forms(forms: tuple[str, ...] = SPEC_FORMS) -> str:
    """``reference, mutant:NAME, ..., or package.module:factory``: the forms, for a sentence."""
    return ", ".join(forms[:-1]) + " or " + forms[-1] if len(forms) > 1 else forms[0]


def engine_help(what: str = "the engine under test", forms: tuple[str, ...] = SPEC_FORMS) -> str:
    """The --engine help of a parser: what the engine is for, then every spec form it takes."""
    return f"{what}: {spec_forms(forms)} (default: reference; docs/engines.md)"


def _bad_spec(problem: str) -> InputError:
    return InputError("--engine", "", f"{problem}; an engine spec is {spec_forms()} (docs/engines.md)")


def is_ocgcore(spec: str | None) -> bool:
    return spec is not None and (spec == "ocgcore" or spec.startswith("ocgcore:"))


def default_cards_db(spec: str | None) -> str | None:
    """The card database whose cards a board may name when ``--cards-db`` is not given: the
    engine's own for ``--engine ocgcore`` (``OCG_CARDS``, docs/ocgcore.md), else none (the
    built-in pool only)."""
    if is_ocgcore(spec):
        return default_paths()[2]
    return None


def make_engine(spec: str | None, *, call_timeout: float | None = None, check_determinism: bool = False, cards_db: str | None = None, scripts_overlay: str | None = None, cwd: str | None = None):
    """A fresh engine for `spec` (one per board). `call_timeout` and `check_determinism` apply
    to out-of-process engines (`cmd:COMMAND`, docs/protocol.md) only, and so does `cwd`: the
    folder the command runs in, its relative paths taken from there (the pytest plugin's rootdir;
    default the current directory); `cards_db` (``--cards-db``) to ``ocgcore``: the card database
    it loads cards from by passcode (default ``OCG_CARDS``)."""
    if spec in (None, "", "reference"):
        return ReferenceEngine()
    if spec.startswith("cmd:"):  # an engine in any language, over the JSON-lines protocol

        return make_jsonl_engine(spec, call_timeout=call_timeout, check_determinism=check_determinism, cwd=cwd)
    if spec == "ocgcore" or spec.startswith("ocgcore:"):  # the real EDOPro core (docs/ocgcore.md)

        return make_ocgcore_engine(spec, cards=cards_db, scripts_overlay=scripts_overlay)
    if spec.startswith("mutant:"):
        name = spec[len("mutant:") :]
        known = {**MUTANTS, **VALUE_MUTANTS}  # value mutants: docs/proving.md
        if name not in known:
            raise InputError("--engine", "", f"unknown mutant {name!r}{did_you_mean(name, known)} (known: {', '.join(known)})")
        return ReferenceEngine(known[name].rules, name=spec)
    if ":" not in spec:
        raise _bad_spec(f"unknown engine spec {spec!r}{did_you_mean(spec, ('reference', 'ocgcore'))}")
    mod_name, _, attr = spec.partition(":")
    if not mod_name or not attr:
        raise _bad_spec(f"unknown engine spec {spec!r}")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        # a mistyped form (mutnat:NAME, ocgcor:LIB) reads as a module: name the form it is close to
        forms = {f"{form}:{attr}": form for form in ("mutant", "ocgcore", "cmd")}
        hint = did_you_mean(mod_name, forms.values())
        hint = did_you_mean(spec, [f for f, form in forms.items() if repr(form) in hint]) if hint else ""
        raise _bad_spec(f"cannot import {mod_name!r}{hint} ({e})") from None
    except Exception as e:  # a module that fails while importing: its author's bug, said as such
        raise InputError("--engine", "", f"importing {mod_name!r} failed: {type(e).__name__}: {e}") from None
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
    if is_ocgcore(spec):
        return {"engine": "The EDOPro core", "baseline": "baselines/ocgcore.toml", "findings": "docs/ocgcore-findings.md"}
    return None
