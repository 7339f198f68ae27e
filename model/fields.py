"""Field helpers for the readers: the same ``file: field: problem`` message in every one.

A reader gets a checked tree from :mod:`bpcheck.model.reading` and validates its own fields with
these: :func:`need` / :func:`opt` (present, of a type; booleans are not integers),
:func:`check_keys` (no unknown field), :func:`check_name` (a name shown to people),
:func:`check_text` (prose), :func:`check_rule_ids` (against :func:`rule_catalogue`, docs/rules.md);
:func:`field_path` spells a field's path, :func:`type_name` and :func:`show` a value in a message.
"""

from __future__ import annotations

import difflib
import json
import re
from importlib import resources
from typing import Any, Iterable

from bpcheck.errors import InputError
from bpcheck.model.hazard import HAZARD_BUT_LINES, visible

# -- field paths (how a message names a field) ---------------------------------------------------

_SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_\-]+$")


def field_path(prefix: str, key: str | int) -> str:
    """``prefix.key`` / ``prefix[3]``; odd keys are quoted (``prefix["a b"]``)."""
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    if _SIMPLE_KEY.match(key):
        return f"{prefix}.{key}" if prefix else key
    return f"{prefix}[{_quoted(key)}]"


def _quoted(s: str) -> str:
    """A string in double quotes for a message: JSON's escapes for quotes and backslashes, every
    other character as itself (``"Dàrk Magician"``), hazardous ones as visible escapes."""
    return visible(json.dumps(s, ensure_ascii=False))


# -- field helpers (the same messages in every reader) -------------------------------------------


def type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "table"
    if isinstance(v, list):
        return "array"
    if v is None:
        return "null"
    return type(v).__name__


def _want(typ) -> str:
    names = {str: "a string", int: "an integer", bool: "a boolean", list: "an array", dict: "a table", float: "a number"}
    if isinstance(typ, tuple):
        return " or ".join(names.get(t, t.__name__) for t in typ)
    return names.get(typ, typ.__name__)


def show(v: Any, limit: int = 60) -> str:
    """A short, escaped rendering of a value for a message."""
    try:
        s = json.dumps(v, ensure_ascii=False, default=repr)  # a non-ASCII character as itself, not \u00e0
    except (ValueError, TypeError):
        s = repr(v)
    s = visible(s)  # (json.dumps left the invisible and bidirectional ones raw)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def is_type(v: Any, typ) -> bool:
    """isinstance with booleans never counted as integers."""
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(v, bool):
        return bool in types
    return isinstance(v, types)


def need(d: dict, key: str, typ, file: str, where: str) -> Any:
    """``d[key]``, which must exist and be of ``typ`` (booleans are not integers)."""
    f = field_path(where, key)
    if key not in d:
        raise InputError(file, f, "missing required field")
    v = d[key]
    if not is_type(v, typ):
        raise InputError(file, f, f"expected {_want(typ)}, got {type_name(v)} {show(v)}")
    return v


def opt(d: dict, key: str, typ, default: Any, file: str, where: str) -> Any:
    if key not in d:
        return default
    return need(d, key, typ, file, where)


def check_keys(d: dict, allowed: Iterable[str], file: str, where: str, what: str = "field") -> None:
    allowed = set(allowed)
    for k in d:
        if k not in allowed:
            raise InputError(file, field_path(where, k), f"unknown {what} (allowed: {', '.join(sorted(allowed))})")


# Control characters, zero-width and bidirectional formatting characters. (U+2028/U+2029, the
# line and paragraph separators, are text: they are allowed in names, kept on one line in traces
# and escaped on the terminal.)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


_NBSP = re.compile(r"[\u00a0\u2007\u202f]")  # no-break spaces: shown as a space


def visible_name(v: str) -> str:
    """A card database's name as people see it (model/cdb.py, docs/boards.md "Cards of a card
    database"): without control or invisible formatting characters (``_CONTROL``, e.g. the
    U+200E in "Danger! Disaster!" of cards-full.cdb), no-break spaces as spaces, no whitespace at
    either end. Only for names read from a card database: a board's own names are never changed
    (check_name refuses them)."""
    return _NBSP.sub(" ", _CONTROL.sub("", v)).strip()


def check_name(v: Any, file: str, where: str, what: str = "name") -> str:
    """A name shown to people (a card name, an id, a label): a non-empty string without control
    or invisible formatting characters."""
    if not isinstance(v, str):
        raise InputError(file, where, f"expected a string {what}, got {type_name(v)} {show(v)}")
    if not v.strip():
        raise InputError(file, where, f"empty {what}")
    m = _CONTROL.search(v)
    if m:
        raise InputError(file, where, f"{what} {show(v)} holds the control or invisible character U+{ord(m.group()):04X}")
    if v != v.strip():
        raise InputError(file, where, f"{what} {show(v)} starts or ends with whitespace")
    return v


# -- rule IDs (docs/rules.md) ---------------------------------------------------------------------

_RULE_ID = r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+"
_CATALOGUE: frozenset[str] | None = None


def rule_catalogue() -> frozenset[str]:
    """The rule IDs of docs/rules.md (shipped in the package as ``bpcheck/rules.md``)."""
    global _CATALOGUE
    if _CATALOGUE is None:
        text = (resources.files("bpcheck") / "rules.md").read_text(encoding="utf-8")
        _CATALOGUE = frozenset(re.findall(rf"^### ({_RULE_ID})\s*$", text, flags=re.M))
    return _CATALOGUE


def check_rule_ids(rules: Any, file: str, where: str = "rules") -> list[str]:
    """A list of rule IDs cited by a board or a scenario: each must be in docs/rules.md."""
    if not isinstance(rules, list):
        raise InputError(file, where, f"expected a list of rule IDs, got {type_name(rules)} {show(rules)}")
    catalogue = rule_catalogue()
    for i, r in enumerate(rules):
        if not isinstance(r, str):
            raise InputError(file, field_path(where, i), f"expected a rule ID, got {type_name(r)} {show(r)}")
        if r not in catalogue:
            close = difflib.get_close_matches(r, sorted(catalogue), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise InputError(file, field_path(where, i), f"unknown rule ID {r!r} (not in docs/rules.md){hint}")
    return rules


def check_text(v: Any, file: str, where: str, what: str = "text") -> str:
    """Prose a file gives (a description, a source): a string without control or invisible
    formatting characters (newline and tab are allowed: it is prose)."""
    if not isinstance(v, str):
        raise InputError(file, where, f"expected a string {what}, got {type_name(v)} {show(v)}")
    m = HAZARD_BUT_LINES.search(v)
    if m:
        raise InputError(file, where, f"{what} {show(v)} holds the control or invisible character U+{ord(m.group()):04X}")
    return v


__all__ = [
    "check_keys",
    "check_name",
    "visible_name",
    "check_rule_ids",
    "check_text",
    "field_path",
    "is_type",
    "need",
    "opt",
    "rule_catalogue",
    "show",
    "type_name",
]
