"""Canonical JSON and the observation fingerprint: what every fingerprint in bpcheck hashes.

One small module that the engines (a ``cmd:`` engine's states are keyed by their observation's
fingerprint, engines/jsonl.py), the invariants' monitor and the explorers all use, so none of
them imports another for it.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import xxhash


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes of a JSON value (sorted keys): what fingerprints hash. orjson's, and
    for text orjson refuses (a lone surrogate, which an in-process engine can put in a name) the
    standard library's with ASCII escapes: deterministic, and distinct values stay distinct."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


def fingerprint(obs: dict) -> int:
    """64-bit XXH3 of the observation's canonical JSON (sorted keys): stable across runs."""
    return xxhash.xxh3_64_intdigest(canonical_json(obs))


__all__ = ["canonical_json", "fingerprint"]
