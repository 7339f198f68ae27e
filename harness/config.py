"""``[tool.bpcheck]`` in pyproject.toml: the project's defaults, for the command line and the
pytest plugin alike (docs/configuration.md).

The command line reads the nearest pyproject.toml from the current directory up (as ruff and
black do); an option given on the command line wins over the file. A key this module does not
know, or a value of the wrong type, is bad input naming the file and the key (exit 2). Paths
(``cards_db``, ``baseline``, and the plugin's ``scenarios``/``boards``) are taken from the folder
of the pyproject.toml, never from the current directory.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from bpcheck.errors import InputError, did_you_mean


@dataclass(frozen=True)
class Key:
    kind: str  # what the value must be, as a message says it
    check: Callable[[Any], bool]
    dest: str | None = None  # the command line's option (argparse dest) it sets; None: the plugin's only
    path: bool = False  # a path, taken from the pyproject.toml's folder


def _text(v) -> bool:
    return isinstance(v, str) and v != ""


def _texts(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x for x in v)


def _whole(low: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low


def _seconds(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


KEYS: dict[str, Key] = {
    # the pytest plugin's (docs/scenarios.md, "pytest"); `engine`, `invariants` and `max_states` are the CLI's too
    "scenarios": Key("a list of paths", _texts),
    "boards": Key("a list of paths", _texts),
    "engine": Key("an engine spec (a string)", _text, "engine"),
    "invariants": Key("a list of invariant IDs or family names", _texts, "invariants"),
    "max_states": Key("a whole number of at least 1", _whole(1), "max_states"),
    # the command line's
    "max_depth": Key("a whole number of at least 1", _whole(1), "max_depth"),
    "timeout": Key("a number of seconds above 0", _seconds, "timeout"),
    "call_timeout": Key("a number of seconds above 0", _seconds, "call_timeout"),
    "strategy": Key('"bfs" or "dfs"', lambda v: v in ("bfs", "dfs"), "strategy"),
    "jobs": Key("a whole number of worker processes (0: one per CPU)", _whole(0), "jobs"),
    "cards_db": Key("a path to a card database (a string)", _text, "cards_db", path=True),
    "baseline": Key("a path to a baseline file (a string)", _text, "baseline", path=True),
    "allow_skips": Key("true or false", lambda v: isinstance(v, bool), "allow_skips"),
}
NOT_FOR = {"engine": ("serve",), "baseline": ("sweep",)}  # `serve` serves an in-process engine: never the project's;
# a sweep's baseline lists findings per card ([[known]], docs/sweep.md), not check's entries
ONLY = {"timeout": ("check", "sweep")}  # `fuzz --timeout` bounds the whole run, `prove --timeout` a solver query: not the same seconds


def find_pyproject(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml from `start` (the current directory) up, or None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        p = folder / "pyproject.toml"
        if p.is_file():
            return p
    return None


def read_table(path: Path) -> dict:
    """``[tool.bpcheck]`` of `path`, every key checked ({} when there is none)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(str(path), "", f"cannot read it: {e}") from None
    tool = data.get("tool", {})
    table = tool.get("bpcheck", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise InputError(str(path), "tool.bpcheck", "expected a table")
    for k, v in table.items():
        key = KEYS.get(k)
        if key is None:
            raise InputError(str(path), f"tool.bpcheck.{k}", f"unknown key{did_you_mean(k, KEYS)} (known: {', '.join(sorted(KEYS))})")
        if not key.check(v):
            raise InputError(str(path), f"tool.bpcheck.{k}", f"expected {key.kind}, got {v!r}")
    return table


def cli_defaults(command: str, dests: set[str], start: Path | None = None) -> tuple[dict, str | None]:
    """The defaults `command` takes from the nearest pyproject.toml: {argparse dest: value} for
    the options it has (`dests`), and the file's path (None without one)."""
    path = find_pyproject(start)
    if path is None:
        return {}, None
    table = read_table(path)
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = KEYS[k]
        if key.dest is None or key.dest not in dests or command in NOT_FOR.get(k, ()) or command not in ONLY.get(k, (command,)):
            continue
        if key.path:
            v = str(path.parent / v)
        elif k == "invariants":
            v = ",".join(v)  # --invariants IDS: comma-separated
        out[key.dest] = v
    return out, str(path)


__all__ = ["KEYS", "cli_defaults", "find_pyproject", "read_table"]
