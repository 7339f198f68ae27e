"""The input layer: every file bpcheck reads is read here first (docs/bad-input.md).

Boards and the card definitions inside them, scenarios, traces (`conform`), counterexample and
result files (`replay`) and baseline files all come through here. The layer guarantees, for every
reader, before any reader-specific validation runs:

- **regular files only**: a FIFO, a device (``/dev/zero``), a socket or a directory is refused
  without being read (the file is opened non-blocking, then ``fstat``-ed);
- **a size limit** per kind of file (:data:`MAX_BYTES`), enforced while reading, so a file that
  grows or lies about its size is never read past the limit;
- **UTF-8 text** (no byte-order mark);
- **a depth limit** (:data:`MAX_DEPTH` levels of tables/arrays): deeper input is an error, never
  a ``RecursionError`` anywhere downstream;
- **strict types**: integers in ``[INT_MIN, INT_MAX]`` (±(2**53 - 1), the integers every JSON
  implementation, JavaScript engines included, reads exactly), finite floats only (no NaN or
  Infinity, in TOML or JSON), no duplicate keys in JSON (TOML refuses them itself), no TOML dates
  or times (no bpcheck file uses one).

Every problem is an :class:`~bpcheck.errors.InputError` ``file: field: problem``; the CLI prints
it and exits 2. Nothing is coerced.

Readers for other modules: :func:`load_toml` / :func:`parse_toml_text` (boards, scenarios, card
files), :func:`load_json` (counterexamples, results), :func:`load_jsonl` (traces) and
:func:`read_baseline` (``--baseline FILE``); :func:`toml_cost` bounds a TOML document before the
parser runs. Each returns a checked tree; the reader then validates its own fields with
:mod:`bpcheck.model.fields` (the same messages everywhere).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from bpcheck.errors import InputError
from bpcheck.model.fields import field_path, type_name

# -- limits (documented in docs/bad-input.md) -------------------------------------------------

MiB = 1024 * 1024
MAX_BYTES = {
    "board": 4 * MiB,  # a board file (TOML), with its [[card]] definitions
    "scenario": 4 * MiB,  # a scenario file (TOML)
    "cards": 4 * MiB,  # a card-pool file (TOML)
    "counterexample": 64 * MiB,  # a counterexample (--cex-dir) or a result file (--json) read by replay
    "trace": 256 * MiB,  # a trace (JSON lines) read by conform
    "baseline": 16 * MiB,  # a --baseline file (TOML or JSON)
}
MAX_DEPTH = 64  # levels of nested tables/arrays
# TOML documents (boards, scenarios, card files, baselines): what the parser may be given. The
# largest file bpcheck ships holds 1,913 values; its dotted keys and headers have 2 parts at most.
MAX_VALUES = 100_000  # keys, table headers and array items in one document
MAX_KEY_PARTS = 16  # parts of one dotted key or table header (a.b.c: 3)
MAX_DOTTED_PARTS = 10_000  # parts after the first of each dotted key and table header, in one document
INT_MAX = 2**53 - 1
INT_MIN = -INT_MAX


# -- reading bytes ------------------------------------------------------------------------------


def _kind_of_mode(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: Path | str, display: str | None = None, kind: str = "board") -> bytes:
    """The bytes of a regular file, at most ``MAX_BYTES[kind]``; never blocks on a FIFO."""
    display = display if display is not None else str(path)
    limit = MAX_BYTES[kind]
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(display, "", "no such file") from None
    except PermissionError:
        raise InputError(display, "", "cannot read file: permission denied") from None
    except OSError as e:
        if isinstance(e, IsADirectoryError):
            raise InputError(display, "", f"is a directory, expected a {kind} file") from None
        raise InputError(display, "", f"cannot read file: {e.strerror or e}") from None
    except ValueError:  # an embedded NUL in the path
        raise InputError(display, "", "not a valid file name") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = _kind_of_mode(st.st_mode)
            if what == "a directory":
                raise InputError(display, "", f"is a directory, expected a {kind} file")
            raise InputError(display, "", f"is {what}, not a regular file: only regular files are read")
        if st.st_size > limit:
            raise InputError(display, "", f"too large: {st.st_size} bytes (a {kind} file may hold at most {limit} bytes)")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            try:
                b = os.read(fd, min(1 * MiB, limit + 1 - total))
            except BlockingIOError:  # pragma: no cover - regular files never block
                continue
            except OSError as e:
                raise InputError(display, "", f"cannot read file: {e.strerror or e}") from None
            if not b:
                break
            chunks.append(b)
            total += len(b)
        if total > limit:
            raise InputError(display, "", f"too large: more than {limit} bytes (the limit for a {kind} file)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode_text(raw: bytes, display: str) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raise InputError(display, "", "starts with a UTF-8 byte-order mark; save the file as UTF-8 without one")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(display, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_text(path: Path | str, display: str | None = None, kind: str = "board") -> str:
    display = display if display is not None else str(path)
    return decode_text(read_bytes(path, display, kind), display)


# -- strict values ------------------------------------------------------------------------------


class _Bad:
    """A value the JSON parser met that bpcheck refuses; reported with its path by check_tree."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _DupDict(dict):
    """A JSON object that named a key twice (the first duplicate is reported by check_tree)."""

    duplicate: str = ""


def check_tree(value: Any, file: str, prefix: str = "", max_depth: int = MAX_DEPTH) -> None:
    """Depth, integer range, finite floats, no dates, no duplicate keys: iteratively (no recursion)."""
    stack: list[tuple[Any, str, int]] = [(value, prefix, 0)]
    while stack:
        v, where, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth >= max_depth:
                raise InputError(file, where, f"nested too deeply (more than {max_depth} levels of tables and arrays)")
            if isinstance(v, _DupDict):
                raise InputError(file, field_path(where, v.duplicate), "duplicate key (a key may appear once in an object)")
            if isinstance(v, dict):
                for k, x in v.items():
                    if not isinstance(k, str):  # pragma: no cover - TOML and JSON keys are strings
                        raise InputError(file, where, f"non-string key {k!r}")
                    stack.append((x, field_path(where, k), depth + 1))
            else:
                for i, x in enumerate(v):
                    stack.append((x, field_path(where, i), depth + 1))
        elif isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        elif isinstance(v, int):
            if not INT_MIN <= v <= INT_MAX:
                raise InputError(file, where, f"integer out of range (bpcheck reads integers from {INT_MIN} to {INT_MAX})")
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise InputError(file, where, f"{v!r} is not a finite number (NaN and Infinity are not accepted)")
        elif isinstance(v, _Bad):
            raise InputError(file, where, v.problem)
        elif isinstance(v, (_dt.date, _dt.time)):  # datetime is a date
            raise InputError(file, where, f"a date or time ({v.isoformat()}) is not a value bpcheck reads")
        else:  # pragma: no cover - no other parser type exists
            raise InputError(file, where, f"unexpected value of type {type(v).__name__}")


# -- TOML ---------------------------------------------------------------------------------------


_TOML_TOKEN = re.compile(  # possessive everywhere: a 4 MiB string is one token, scanned without backtracking state
    r"""(?P<ws>[ \t]++)
    |(?P<nl>\r?\n)
    |(?P<comment>\#[^\n]*+)
    |(?P<str>\"\"\"(?:[^"\\]++|\\[\s\S]|"(?!""))*+\"\"\"(?:"{1,2})?
            |'''(?:[^']++|'(?!''))*+'''(?:'{1,2})?
            |"(?:[^"\\\n]++|\\.)*+"
            |'[^'\n]*+')
    |(?P<open>[\[{])
    |(?P<close>[\]}])
    |(?P<eq>=)
    |(?P<comma>,)
    |(?P<dot>\.)
    |(?P<bare>[^\s\[\]{}=,."'\#]++)
    |(?P<other>.)""",
    re.X,
)


class TomlCost:
    """What parsing a TOML text will cost, found by :func:`toml_cost` before the parser runs:
    `problem` (None when within every limit), the key it concerns, the line and column."""

    __slots__ = ("problem", "where", "line", "col", "values", "dotted_parts", "depth")

    def __init__(self) -> None:
        self.problem: str | None = None
        self.where = ""
        self.line = 0
        self.col = 0
        self.values = 0
        self.dotted_parts = 0
        self.depth = 0


def toml_cost(text: str, max_depth: int = MAX_DEPTH) -> TomlCost:
    """One linear scan of a TOML text (strings and comments skipped): the deepest table or array
    (table headers, dotted keys and nesting together, counted as :func:`check_tree` counts them),
    the parts of every dotted key and table header, the dotted-key parts in all, and the values
    (keys, headers, array items); it stops at the first limit passed. Why: tomllib keeps, for
    every part of a dotted key, a tuple of the whole path up to it, so a key of n parts costs
    memory quadratic in n (a 200 KB key of 100,000 parts took 23.5 GB). Malformed text is left
    to the parser, which says what is wrong."""
    cost = TomlCost()
    line, line_start = 1, 0
    stack: list[list] = []  # open containers: [kind "array" | "inline", depth, expecting a key, the key path holding it]
    base = 0  # the depth of the current [table] (0: the root)
    header = ""  # its name, for messages
    stmt = True  # at the start of a top-level statement
    key: list[str] = []  # the parts of the key (or header) being read
    in_key = in_header = header_array = False
    last_open = -2  # where the last top-level "[" was (to see "[[")
    value_depth = 0  # the depth of the value after the last "="

    def fail(problem: str, where: str, pos: int) -> TomlCost:
        cost.problem, cost.where, cost.line, cost.col = problem, where[:200], line, pos - line_start + 1
        return cost

    def name(parts: list[str]) -> str:
        return ".".join(x.strip("\"'") for x in parts)

    def counted(pos: int) -> bool:
        cost.values += 1
        return cost.values > MAX_VALUES

    too_many = f"more than {MAX_VALUES} values (keys, table headers and array items) in the document"
    too_deep = f"nested too deeply (more than {max_depth} levels of tables and arrays"
    for m in _TOML_TOKEN.finditer(text):
        kind = m.lastgroup
        pos = m.start()
        if kind == "ws" or kind == "comment":
            continue
        if kind == "nl":
            line += 1
            line_start = m.end()
            if not stack:
                stmt, in_key, key = True, False, []
            continue
        if kind == "str" and "\n" in m.group():
            line += m.group().count("\n")
            line_start = pos + m.group().rfind("\n") + 1
        ctx = stack[-1] if stack else None
        if in_header:
            if kind in ("bare", "str"):
                key.append(m.group())
                if len(key) > MAX_KEY_PARTS:
                    return fail(f"a table header of more than {MAX_KEY_PARTS} parts", name(key), pos)
            elif kind == "close" and key:
                in_header, stmt = False, False
                header = name(key)
                if len(key) > MAX_KEY_PARTS:
                    return fail(f"a table header of {len(key)} parts (at most {MAX_KEY_PARTS})", header, pos)
                base = len(key) + (1 if header_array else 0)
                cost.dotted_parts += len(key) - 1  # a header's parts cost the parser as a dotted key's do
                if cost.dotted_parts > MAX_DOTTED_PARTS:
                    return fail(f"more than {MAX_DOTTED_PARTS} dotted-key parts in the document (the parts after each key's or table header's first)", header, pos)
                cost.depth = max(cost.depth, base)
                if base >= max_depth:
                    return fail(too_deep, header, pos)
                if counted(pos):
                    return fail(too_many, header, pos)
                key = []
            continue
        if in_key or (ctx is None and stmt) or (ctx is not None and ctx[0] == "inline" and ctx[2]):
            if kind in ("bare", "str"):
                stmt = False if ctx is None else stmt
                in_key = True
                key.append(m.group())
                if len(key) > MAX_KEY_PARTS:  # said now: the key is never held whole
                    where = ".".join(x for x in ((header if ctx is None else ctx[3]), name(key)) if x)
                    return fail(f"a dotted key of more than {MAX_KEY_PARTS} parts", where, pos)
                continue
            if kind == "dot" and in_key:
                continue
            if kind == "eq" and in_key:
                parts = len(key)
                # inside an inline table: the path of the key holding it (ctx[3]), not of the
                # key read last, which may be its sibling (issue 33)
                where = ".".join(x for x in ((header if ctx is None else ctx[3]), name(key)) if x)
                if parts > MAX_KEY_PARTS:
                    return fail(f"a dotted key of {parts} parts (at most {MAX_KEY_PARTS})", where, pos)
                cost.dotted_parts += parts - 1
                if cost.dotted_parts > MAX_DOTTED_PARTS:
                    return fail(f"more than {MAX_DOTTED_PARTS} dotted-key parts in the document (the parts after each key's or table header's first)", where, pos)
                if counted(pos):
                    return fail(too_many, where, pos)
                value_depth = (base if ctx is None else ctx[1]) + parts
                cost.depth = max(cost.depth, value_depth - 1)
                if value_depth > max_depth:
                    return fail(too_deep, where, pos)
                if ctx is not None:
                    ctx[2] = False
                cost.where = where
                key, in_key = [], False
                continue
            if kind == "open" and ctx is None and stmt and m.group() == "[":
                if pos == last_open + 1:
                    header_array = True
                else:
                    header_array, last_open, in_header, key = False, pos, True, []
                continue
            in_key, key = False, []  # not a key after all: malformed, the parser says how
        if kind == "open":
            if ctx is not None and ctx[0] == "array":
                depth = ctx[1] + 1
                if counted(pos):
                    return fail(too_many, cost.where, pos)
            else:
                depth = value_depth
            cost.depth = max(cost.depth, depth)
            if depth >= max_depth:
                return fail(too_deep, cost.where, pos)
            path = cost.where if ctx is None or ctx[0] == "inline" else ctx[3]  # an array's items: the array's path
            stack.append(["inline" if m.group() == "{" else "array", depth, m.group() == "{", path])
        elif kind == "close":
            if stack:
                stack.pop()
        elif kind == "comma":
            if ctx is not None and ctx[0] == "inline":
                ctx[2] = True
        elif ctx is not None and ctx[0] == "array" and kind in ("bare", "str"):
            if counted(pos):
                return fail(too_many, cost.where, pos)
    return cost


def parse_toml_text(text: str, display: str) -> dict:
    """A TOML document, checked by :func:`check_tree`."""
    cost = toml_cost(text, MAX_DEPTH)  # bounded cost: what passes a limit is refused before the parser runs
    if cost.problem is not None:
        problem = cost.problem
        problem += f"; line {cost.line}, column {cost.col})" if problem.endswith("arrays") else f" (line {cost.line}, column {cost.col})"
        raise InputError(display, cost.where, problem)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(display, "", f"malformed TOML: {e}") from None
    except RecursionError:
        raise InputError(display, "", f"nested too deeply (more than {MAX_DEPTH} levels of tables and arrays)") from None
    except ValueError as e:  # e.g. an integer literal of thousands of digits
        raise InputError(display, "", f"malformed TOML: {e}") from None
    check_tree(data, display)
    return data


def load_toml(path: Path | str, display: str | None = None, kind: str = "board") -> dict:
    display = display if display is not None else str(path)
    return parse_toml_text(read_text(path, display, kind), display)


# -- JSON ---------------------------------------------------------------------------------------


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _v in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        out = _DupDict(d)
        out.duplicate = dup
        return out
    return d


def _int(s: str) -> Any:
    digits = len(s) - (1 if s.startswith("-") else 0)
    if digits > 17:
        return _Bad(f"integer out of range: {digits} digits (bpcheck reads integers from {INT_MIN} to {INT_MAX})")
    return int(s)


def _float(s: str) -> Any:
    v = float(s)
    if not math.isfinite(v):
        return _Bad(f"number {s} is out of range (not a finite number)")
    return v


def _constant(s: str) -> Any:
    return _Bad(f"{s} is not a number JSON allows (NaN and Infinity are not accepted)")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_constant)


def parse_json_text(text: str, display: str, prefix: str = "") -> Any:
    """A JSON value, checked by :func:`check_tree` (strict: no NaN, no duplicate keys)."""
    if text.startswith("\ufeff"):
        raise InputError(display, prefix, "starts with a byte-order mark")
    try:
        data = _DECODER.decode(text)
    except json.JSONDecodeError as e:
        raise InputError(display, prefix, f"malformed JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise InputError(display, prefix, f"nested too deeply (more than {MAX_DEPTH} levels of objects and arrays)") from None
    except ValueError as e:  # pragma: no cover - numbers are bounded by _int/_float
        raise InputError(display, prefix, f"malformed JSON: {e}") from None
    check_tree(data, display, prefix)
    return data


def load_json(path: Path | str, display: str | None = None, kind: str = "counterexample") -> Any:
    display = display if display is not None else str(path)
    return parse_json_text(read_text(path, display, kind), display)


def load_jsonl(path: Path | str, display: str | None = None, kind: str = "trace") -> list[tuple[int, Any]]:
    """JSON lines: ``[(line number, value)]``; blank lines are skipped. Lines end at ``\\n`` only
    (a ``\\r\\n`` ending is accepted): U+2028, form feeds and the like inside a string are text."""
    display = display if display is not None else str(path)
    text = read_text(path, display, kind)
    rows: list[tuple[int, Any]] = []
    for n, raw in enumerate(text.split("\n"), 1):
        if raw.endswith("\r"):
            raw = raw[:-1]
        if not raw.strip(" \t"):
            continue
        rows.append((n, parse_json_text(raw, f"{display}:{n}")))
    return rows


# -- baselines (--baseline FILE) ------------------------------------------------------------------


def read_baseline(path: Path | str, display: str | None = None) -> dict:
    """Read a ``--baseline FILE`` (``.toml``: TOML, anything else: JSON) through the input layer.

    Returns the top-level table, checked for size, regular file, UTF-8, depth and strict types.
    The caller validates its own fields with :func:`need`, :func:`opt` and :func:`check_keys`
    (same ``file: field: problem`` messages) and raises :class:`InputError` for anything else."""
    display = display if display is not None else str(path)
    if str(path).endswith(".toml"):
        data: Any = load_toml(path, display, "baseline")
    else:
        data = load_json(path, display, "baseline")
    if not isinstance(data, dict):
        raise InputError(display, "", f"expected a table/object at the top, got {type_name(data)}")
    return data


__all__ = [
    "INT_MAX",
    "INT_MIN",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_DOTTED_PARTS",
    "MAX_KEY_PARTS",
    "MAX_VALUES",
    "TomlCost",
    "check_tree",
    "decode_text",
    "load_json",
    "load_jsonl",
    "load_toml",
    "parse_json_text",
    "parse_toml_text",
    "read_baseline",
    "read_bytes",
    "read_text",
    "toml_cost",
]
