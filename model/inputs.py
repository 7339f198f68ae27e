"""One input layer for every file bpcheck reads (docs/bad-input.md).

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
files), :func:`load_json` (counterexamples, results), :func:`load_jsonl` (traces),
:func:`read_baseline` (``--baseline FILE``), :func:`input_files` (the files named on a command
line, folders expanded), and small field helpers (:func:`need`, :func:`opt`, :func:`check_keys`)
that give the same messages everywhere. Also :func:`escape_controls` / :func:`output_escaping`:
control characters from a file or an engine never reach the terminal raw.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import math
import os
import re
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any, Iterable

import orjson

from bpcheck.errors import InputError

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
    stack: list[list] = []  # open containers: [kind "array" | "inline", depth, expecting a key]
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
                    where = ".".join(x for x in ((header if ctx is None else cost.where), name(key)) if x)
                    return fail(f"a dotted key of more than {MAX_KEY_PARTS} parts", where, pos)
                continue
            if kind == "dot" and in_key:
                continue
            if kind == "eq" and in_key:
                parts = len(key)
                where = ".".join(x for x in ((header if ctx is None else cost.where), name(key)) if x)
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
            stack.append(["inline" if m.group() == "{" else "array", depth, m.group() == "{"])
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


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes of a JSON value (sorted keys): what fingerprints hash. orjson's, and
    for text orjson refuses (a lone surrogate, which an in-process engine can put in a name) the
    standard library's with ASCII escapes: deterministic, and distinct values stay distinct."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


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
        from importlib import resources

        text = (resources.files("bpcheck") / "rules.md").read_text(encoding="utf-8")
        _CATALOGUE = frozenset(re.findall(rf"^### ({_RULE_ID})\s*$", text, flags=re.M))
    return _CATALOGUE


def check_rule_ids(rules: Any, file: str, where: str = "rules") -> list[str]:
    """A list of rule IDs cited by a board or a scenario: each must be in docs/rules.md."""
    import difflib

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


# -- files named on a command line ----------------------------------------------------------------


def input_files(paths: Iterable[str], suffix: str = ".toml", what: str = "board or scenario") -> list[tuple[Path, str]]:
    """The files named on a command line, each folder expanded to the ``*suffix`` files under it
    (sorted, symlinked folders followed once). A missing path, an unreadable folder or a folder
    holding no such file is an error: a run never checks "0 boards" and passes."""
    out: list[tuple[Path, str]] = []
    for p in paths:
        path = Path(p)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise InputError(p, "", "no such file or directory") from None
        except OSError as e:
            raise InputError(p, "", f"cannot read: {e.strerror or e}") from None
        except ValueError:
            raise InputError(p, "", "not a valid file name") from None
        if not stat.S_ISDIR(st.st_mode):
            out.append((path, p))
            continue
        found: list[Path] = []
        seen: set[tuple[int, int]] = {(st.st_dev, st.st_ino)}
        todo = [path]
        while todo:
            folder = todo.pop()
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:
                raise InputError(str(folder), "", f"cannot read folder: {e.strerror or e}") from None
            for e in entries:
                try:
                    is_dir = e.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    try:
                        s2 = e.stat()
                    except OSError as err:
                        raise InputError(e.path, "", f"cannot read folder: {err.strerror or err}") from None
                    if (s2.st_dev, s2.st_ino) not in seen:  # a symlink loop is followed once
                        seen.add((s2.st_dev, s2.st_ino))
                        todo.append(Path(e.path))
                elif e.name.endswith(suffix):
                    found.append(Path(e.path))
        if not found:
            raise InputError(p, "", f"folder holds no {suffix} files (no {what} to read)")
        out.extend((f, str(f)) for f in sorted(found))
    return out


# -- command-line numbers -------------------------------------------------------------------------


def positive_number(kind=float):
    """An argparse type: a positive, finite number (``nan``, ``inf``, ``0``, ``-1`` are refused)."""
    import argparse

    def parse(text: str):
        try:
            v = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if isinstance(v, float) and not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        if isinstance(v, int) and v > INT_MAX:
            raise argparse.ArgumentTypeError(f"must be at most {INT_MAX}, got {text!r}")
        return v

    return parse


# -- text that is shown: visible escapes and the terminal -----------------------------------------

# Characters that must never be shown raw, whatever the output (docs/reports.md, "Text from files
# and engines"): every control (C0, DEL, C1), every invisible formatting character (Unicode
# category Cf: zero-width, bidirectional embeddings, overrides and isolates, the Arabic letter
# mark, tag characters, ...), the line and paragraph separators, lone surrogates (text no UTF-8
# file can hold) and the noncharacters U+FFFE / U+FFFF. Written out as ranges (Unicode 14, the
# categories Cc, Cf, Cs, Zl, Zp) so the output never depends on the Python version's tables.
HAZARD_RANGES = (
    (0x00, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD),
    (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F),
    (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)


def _hazard_class(keep: str = "") -> "re.Pattern[str]":
    parts = []
    for lo, hi in HAZARD_RANGES:
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    cls = "".join(parts)
    if keep:  # characters of the class that this output keeps (newline and tab in multi-line text)
        return re.compile(f"(?![{re.escape(keep)}])[{cls}]")
    return re.compile(f"[{cls}]")


HAZARD = _hazard_class()  # everything: text shown on one line
HAZARD_BUT_LINES = _hazard_class("\n\t")  # multi-line text: newline and tab are layout


def escape_char(c: str) -> str:
    """One character as a visible escape: ``\\x1b``, ``\\u202e``, ``\\U000e0041``."""
    n = ord(c)
    if n < 0x100:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def _esc(m: re.Match) -> str:
    return escape_char(m.group())


def visible(s: str, lines: bool = False) -> str:
    """`s` with every hazardous character (:data:`HAZARD_RANGES`) written as a visible escape;
    with `lines`, newline and tab are kept (multi-line text)."""
    return (HAZARD_BUT_LINES if lines else HAZARD).sub(_esc, s)


def one_line(s: Any) -> str:
    """`s` as text for one line of output: every control, newline and carriage return included,
    and every invisible or bidirectional formatting character as a visible escape."""
    return HAZARD.sub(_esc, s if isinstance(s, str) else str(s))


_OUT_CONTROL = HAZARD_BUT_LINES
_ERR_CONTROL = _hazard_class("\n\t\r")


def escape_controls(s: str, keep_cr: bool = False) -> str:
    """``s`` with control characters (except newline and tab, and carriage return with
    `keep_cr`) and invisible/bidirectional formatting characters written as ``\\xNN`` /
    ``\\uNNNN``."""
    return (_ERR_CONTROL if keep_cr else _OUT_CONTROL).sub(_esc, s)


# GitHub Actions reads a line of a step's output as a workflow command when, after leading
# white space, it starts with "::", and when it holds "##[" anywhere (the runner's older syntax):
# actions/runner, ActionCommand.TryParseV2 / TryParse. It splits lines at "\n", "\r" and "\r\n".
# The terminal writer never lets text start one: the first colon of such a line is written
# "\\x3a" and the bracket of "##[" "\\x5b". bpcheck's own annotations (--github) are the only
# commands it prints, through :func:`print_workflow_command`.
_BREAKS = "\r\n"
_BREAK_AT = re.compile("[\r\n]")


class _EscapingWriter(io.TextIOBase):
    """A text stream that escapes hazardous characters (:func:`escape_controls`) and never lets
    a line start a GitHub Actions workflow command (see above)."""

    def __init__(self, inner, keep_cr: bool) -> None:
        self._inner = inner
        self._keep_cr = keep_cr
        self._pending = ""  # the start of a line not yet known to be safe (white space, ":", "#", "##")
        self._at_head = True  # nothing but white space written since the last line break

    def _guard(self, text: str, final: bool = False) -> str:
        buf = self._pending + text
        self._pending = ""
        out: list[str] = []
        i, n = 0, len(buf)
        while i < n:
            if self._at_head:
                j = i
                while j < n and buf[j] not in _BREAKS and buf[j].isspace():
                    j += 1
                if j == n or (buf[j] == ":" and j + 1 == n):
                    if final:
                        out.append(buf[i:])
                    else:
                        self._pending = buf[i:]  # undecided: wait for the next character
                    i = n
                    break
                if buf[j] == ":" and buf[j + 1] == ":":
                    out.append(buf[i:j] + "\\x3a")
                    i = j + 1
                else:
                    out.append(buf[i:j])
                    i = j
                self._at_head = False
                continue
            m = _BREAK_AT.search(buf, i)
            k = n if m is None else m.start()
            if k == n:
                out.append(buf[i:])
                i = n
            else:
                out.append(buf[i : k + 1])
                i = k + 1
                self._at_head = True
        text = "".join(out).replace("##[", "##\\x5b")
        if not final and not self._pending:
            tail = len(text) - len(text.rstrip("#"))
            if tail:  # "#" or "##" at the end may begin "##[" with the next write
                tail = min(tail, 2)
                self._pending, text = text[-tail:], text[:-tail]
        return text

    def write(self, s: str) -> int:
        text = self._guard(escape_controls(s, self._keep_cr))
        if text:
            self._inner.write(text)
        return len(s)

    def trusted_line(self, line: str) -> None:
        """Write one line that bpcheck made (a workflow command) as it is, escaped only."""
        head = self._guard("", final=True)
        if not self._at_head:
            head += "\n"
        self._inner.write(head + escape_controls(line, False).replace("\n", "\\x0a") + "\n")
        self._at_head = True

    def flush(self) -> None:
        self._inner.flush()

    def close_pending(self) -> None:
        """Write what was held back (at the end of the run)."""
        text = self._guard("", final=True)
        if text:
            self._inner.write(text)

    def isatty(self) -> bool:
        return self._inner.isatty()

    def fileno(self) -> int:
        return self._inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self):  # type: ignore[override]
        return getattr(self._inner, "encoding", "utf-8")

    @property
    def errors(self):  # type: ignore[override]
        return getattr(self._inner, "errors", "strict")

    @property
    def buffer(self):
        return self._inner.buffer

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


def _escaping_writer(stream) -> "_EscapingWriter | None":
    seen = 0
    while stream is not None and seen < 8:
        if isinstance(stream, _EscapingWriter):
            return stream
        stream = getattr(stream, "_s", None) or getattr(stream, "_inner", None)
        seen += 1
    return None


def print_workflow_command(line: str) -> None:
    """Print one GitHub Actions workflow command that bpcheck made (``--github``): the one kind of
    line the terminal writer lets start with "::". Its parts must be escaped already
    (bpcheck.reports.github)."""
    out = sys.stdout
    if getattr(out, "pipe_closed", False):
        return
    w = _escaping_writer(out)
    if w is None:  # not under output_escaping (a library call): a plain print
        print(line)
        return
    try:
        w.trusted_line(line)
    except BrokenPipeError:
        closed = getattr(out, "_closed", None)
        if callable(closed):
            closed()


@contextlib.contextmanager
def output_escaping():
    """While active, hazardous characters in everything printed to stdout and stderr are escaped
    (a card name from a file or an engine holding ESC must not drive the terminal) and no line
    can start a GitHub Actions workflow command. Carriage returns stay on stderr, where progress
    lines use them. The previous streams come back after."""
    old = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, _EscapingWriter):
        sys.stdout = _EscapingWriter(sys.stdout, keep_cr=False)  # type: ignore[assignment]
    if not isinstance(sys.stderr, _EscapingWriter):
        sys.stderr = _EscapingWriter(sys.stderr, keep_cr=True)  # type: ignore[assignment]
    try:
        yield
    finally:
        for w in (sys.stdout, sys.stderr):
            try:
                if isinstance(w, _EscapingWriter):
                    w.close_pending()
                w.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = old


__all__ = [
    "INT_MAX",
    "INT_MIN",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_DOTTED_PARTS",
    "MAX_KEY_PARTS",
    "MAX_VALUES",
    "check_keys",
    "check_name",
    "check_rule_ids",
    "check_text",
    "check_tree",
    "escape_controls",
    "field_path",
    "input_files",
    "one_line",
    "output_escaping",
    "print_workflow_command",
    "visible",
    "load_json",
    "load_jsonl",
    "load_toml",
    "toml_cost",
    "need",
    "opt",
    "parse_json_text",
    "parse_toml_text",
    "positive_number",
    "read_baseline",
    "read_bytes",
    "read_text",
]
