"""Canonical JSON: the bytes fingerprints hash.

The input layer that lived here is split by concern: reading untrusted files with their limits
(:mod:`bpcheck.model.reading`), field validation (:mod:`bpcheck.model.fields`), the hazardous
characters and their visible escapes (:mod:`bpcheck.model.hazard`), what a command line names
(:mod:`bpcheck.model.cmdline`), and the terminal's escaping (:mod:`bpcheck.reports.terminal`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes of a JSON value (sorted keys): what fingerprints hash. orjson's, and
    for text orjson refuses (a lone surrogate, which an in-process engine can put in a name) the
    standard library's with ASCII escapes: deterministic, and distinct values stay distinct."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


__all__ = ["canonical_json"]
