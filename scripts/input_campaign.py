#!/usr/bin/env python3
"""A fuzz campaign over every bpcheck reader (docs/bad-input.md, "Fuzz campaign").

Malformed boards (with card definitions), scenarios, traces, counterexample files and baseline
files are generated from valid seeds by a seeded generator: hostile values (integers of 2**64,
NaN, Infinity, 600 levels of nesting, dates, duplicate keys, control characters in names),
unknown fields, misspelt names, type swaps, deletions, text damage (truncation, a byte-order mark,
bytes that are not UTF-8, NUL) and hostile files (FIFOs, folders, /dev/zero, oversized files).

Each case is judged in-process (the bulk) and a sample through real ``bpcheck`` processes:
no traceback, no hang, an input that is invalid by construction is rejected (exit 2) with the
``file: field: problem`` message, and an input the readers accept runs without crashing (a board
that validates is checked; a scenario that loads runs; a trace conforms or diverges).

    nice python scripts/input_campaign.py --cases 400 --seed 1 --processes 60
    nice python scripts/input_campaign.py --cases 3000 --seed 13 --processes 400 --json out.json

The same generator drives tests/test_reader_fuzz.py (fixed seed, small budget).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime as dt
import io
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
READERS = ("board", "scenario", "trace", "counterexample", "baseline")

# -- writing TOML (inline; enough for generated documents, hostile values included) --------------

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _tkey(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON escapes are TOML basic-string escapes
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_tkey(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    if v is None:
        return '""'  # TOML has no null
    raise TypeError(type(v))


def toml_dumps(d: dict) -> str:
    return "".join(f"{_tkey(k)} = {toml_value(v)}\n" for k, v in d.items())


# -- seeds ----------------------------------------------------------------------------------------

SEED_BOARDS = [
    "boards/000-replay-1.toml",
    "boards/003-004-scapegoat-united-we-stand.toml",
    "boards/000-tokens.toml",
    "boards/rule-ds-macro-cosmos.toml",
    "boards/002-fiendish-chain-mst.toml",
]
SEED_SCENARIOS = [
    "scenarios/000-replay-1.toml",
    "scenarios/000-replay-2.toml",
    "scenarios/003-004-example-1.toml",
]


def _card_board(rng: random.Random) -> dict:
    """A board that defines cards of its own (copies of pool cards, renamed) and puts them where
    they can act: monsters on the field, Spells and Traps Set, a Field Spell in the Field Zone."""
    cards = []
    for f in ("monsters.toml", "spells.toml", "traps.toml"):
        cards += tomllib.loads((ROOT / "model" / "cards" / f).read_text())["card"]
    picked = [c for c in cards if c["kind"] != "token"]
    rng.shuffle(picked)
    defs = []
    sides: dict = {"p1": {"lp": 8000, "monsters": [], "spells": [], "hand": []}, "p2": {"lp": 8000, "monsters": [], "spells": [], "hand": []}}
    for i, c in enumerate(picked[:6]):
        c = copy.deepcopy(c)
        c["name"] = f"{c['name']} Copy"
        c["passcode"] = f"9{i:07d}"
        defs.append(c)
        side = sides["p1" if i % 2 == 0 else "p2"]
        if c["kind"] == "monster" and len(side["monsters"]) < 5:
            side["monsters"].append({"zone": len(side["monsters"]) + 1, "card": c["name"], "position": rng.choice(["attack", "attack", "defense"])})
        elif c.get("subtype") == "field" and "field_spell" not in side:
            side["field_spell"] = {"card": c["name"]}
        elif c["kind"] in ("spell", "trap") and len(side["spells"]) < 5:
            side["spells"].append({"zone": len(side["spells"]) + 1, "card": c["name"]})
        else:
            side["hand"].append(c["name"])
    for name, side in sides.items():
        if not side["monsters"]:
            side["monsters"].append({"zone": 1, "card": "Battle Ox" if name == "p1" else "Giant Soldier of Stone", "position": "attack"})
        side["deck"] = ["Kuriboh", "Shining Angel"]
    return {"name": "fuzz board with its own cards", "turn": 2, "turn_player": 1, **sides, "card": defs, "reachable": [{"id": "battle", "event": "attack_declared"}]}


def _vocabulary() -> list:
    from bpcheck.model import cards as C

    words = set(C.SELECTORS) | C.AMOUNT_NAMES | C.MOD_UNTIL | C.POSITIONS | C.RACES | C.ATTRIBUTES | C.WHENS | C.CONDITIONS
    words |= C.STATIC_KINDS | C.STATIC_TARGETS | C.TARGET_ZONES | C.SIDES | C.EFFECT_TYPES | {"you", "opponent", "deck", "own", "up", "Sheep Token", "Umi", "Battle Ox", "tributed_atk_or_def", "end_phase"}
    return sorted(words)


def _fitting(path: tuple) -> list:
    """Vocabulary words that fit the key being changed (so that more mutants validate)."""
    from bpcheck.model import cards as C

    key = path[-1] if isinstance(path[-1], str) else path[-2]
    table = {
        "what": sorted(C.SELECTORS),
        "amount": sorted(C.AMOUNT_NAMES | {"tributed_atk_or_def"}),
        "then_damage_both": sorted(C.AMOUNT_NAMES),
        "until": sorted(C.MOD_UNTIL | C.LINGERING_UNTIL | C.CONTROL_UNTIL),
        "to": sorted({"you", "opponent", "controller"} | C.STATIC_TARGETS),
        "position": sorted(C.POSITIONS),
        "when": sorted(C.WHENS),
        "conditions": sorted(C.CONDITIONS),
        "race": sorted(C.RACES),
        "attribute": sorted(C.ATTRIBUTES),
        "apply": sorted(C.STATIC_KINDS),
        "zone": sorted(C.TARGET_ZONES),
        "side": sorted(C.SIDES),
        "type": sorted(C.EFFECT_TYPES),
        "location": ["field", "hand", "graveyard"],
        "kind": ["monster", "spell", "trap", "token"],
        "token": ["Sheep Token", "Ojama Token", "Battle Ox"],
        "while_field_spell": ["Umi", "Battle Ox"],
        "op": sorted(__import__("bpcheck.model.ops", fromlist=["OPERATIONS"]).OPERATIONS),
        "from": ["deck"],
        "face": ["up"],
    }
    return table.get(key, [])


def vocab_mutation(doc: dict, rng: random.Random) -> tuple[str, bool] | None:
    """Inside the board's own card definitions: a value from the card vocabulary, another number,
    a flipped flag, or an extra parameter: mostly well-typed, often meaningless. Whatever
    `validate` accepts, `check` must then run without crashing."""
    from bpcheck.model.cards import OP_PARAMS

    nodes = [(p, n) for p, n in _nodes(doc) if p and p[0] == "card" and len(p) > 2]
    if not nodes:
        return None
    path, node = rng.choice(nodes)
    if isinstance(node, dict) and "op" in node and node["op"] in OP_PARAMS:
        params = list(OP_PARAMS[node["op"]][1])
        if params:
            k = rng.choice(params)
            node[k] = rng.choice((_fitting((k,)) or _vocabulary()) + [0, 1, 5, 500, -500, True])
            return _fmt(path), False
    if isinstance(node, bool):
        _set(doc, path, not node)
    elif isinstance(node, int):
        _set(doc, path, rng.choice([-1, 0, 1, 2, 3, 5, 6, 13, 14, 500, 1000000, 1000001]))
    elif isinstance(node, str):
        fit = _fitting(path)
        _set(doc, path, rng.choice(fit if fit and rng.random() < 0.8 else _vocabulary()))
    elif isinstance(node, list) and path[-1] in ("ops", "cost"):
        name = rng.choice(sorted(OP_PARAMS))
        op = {"op": name}
        for k in OP_PARAMS[name][0]:
            op[k] = rng.choice(_vocabulary() + [1, 3, 500])
        node.append(op)
    else:
        return None
    return _fmt(path), False


def seed_board(rng: random.Random) -> dict:
    if rng.random() < 0.6:
        return _card_board(rng)
    return tomllib.loads((ROOT / rng.choice(SEED_BOARDS)).read_text())


def seed_scenario(rng: random.Random) -> dict:
    path = ROOT / rng.choice(SEED_SCENARIOS)
    d = tomllib.loads(path.read_text())
    if isinstance(d.get("board"), str):
        bpath = (path.parent / d["board"]).resolve()
        d["board"] = tomllib.loads(bpath.read_text()) if rng.random() < 0.5 else str(bpath)
    return d


def _walk_rows(board_path: str, steps: int, rng: random.Random) -> tuple[dict, list[dict], list[str]]:
    from bpcheck.engines.reference import ReferenceEngine
    from bpcheck.model.board import load_board

    eng = ReferenceEngine()
    s = eng.start(load_board(ROOT / board_path, board_path))
    head = {"bpcheck_trace": 1, "board": str(ROOT / board_path), "engine": "reference", "observation": eng.observe(s)}
    rows, labels = [], []
    for _ in range(steps):
        acts = eng.legal_actions(s)
        if not acts or eng.is_terminal(s):
            break
        a = acts[rng.randrange(len(acts))]
        s, ev = eng.apply(s, a)
        rows.append({"action": a.label, "observation": eng.observe(s), "events": [e.to_dict() for e in ev]})
        labels.append(a.label)
    return head, rows, labels


_TRACE_CACHE: dict[int, tuple] = {}


def seed_trace(rng: random.Random) -> list[dict]:
    k = rng.randrange(3)
    if k not in _TRACE_CACHE:
        _TRACE_CACHE[k] = _walk_rows(SEED_BOARDS[k], 6, random.Random(k))
    head, rows, _ = copy.deepcopy(_TRACE_CACHE[k])
    return [head, *rows]


def seed_counterexample(rng: random.Random) -> dict:
    k = rng.randrange(3)
    if k not in _TRACE_CACHE:
        _TRACE_CACHE[k] = _walk_rows(SEED_BOARDS[k], 6, random.Random(k))
    _h, _r, labels = _TRACE_CACHE[k]
    cex = {
        "bpcheck_counterexample": 1,
        "board": str(ROOT / SEED_BOARDS[k]),
        "engine": "reference",
        "invariant": "replay.iff",
        "message": "fuzz seed",
        "kind": "transition",
        "length": len(labels),
        "trace": list(labels),
    }
    if rng.random() < 0.3:
        return {"bpcheck": "0", "boards": [{"board": cex["board"], "counterexamples": [cex]}]}
    return cex


def seed_baseline(rng: random.Random) -> dict:
    return {"known": [{"board": "boards/000-replay-5.toml", "invariant": "DIFF", "reason": "ocgcore resolves it otherwise"}]}


# -- mutations ------------------------------------------------------------------------------------

DEEP = 600
HOSTILE_INTS = [2**64, -(2**64), 2**63, 10**30, 2**53]
ENUM_KEYS = {"position", "op", "apply", "to", "subtype", "type", "when", "what", "side", "until", "attribute", "race", "location", "step", "phase", "winner", "to_act", "face"}
NAME_KEYS = {"card", "name", "id", "token"}


def _nodes(v: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    out = [(path, v)]
    stack = [(path, v)]
    while stack:
        p, x = stack.pop()
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        for k, y in items:
            out.append((p + (k,), y))
            stack.append((p + (k,), y))
    return out


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return doc


DEEP_MARK = "\x00DEEP\x00"  # written out as 600 nested arrays by serialize()


def _deep() -> Any:
    return DEEP_MARK


@dataclass
class Case:
    reader: str
    mutation: str
    invalid: bool  # invalid by construction: must be rejected (exit 2)
    data: bytes | None = None  # the file's bytes (None: a special file)
    special: str = ""  # fifo, dir, devzero, oversize, empty-dir
    where: str = ""  # the mutated path, for the report
    tree: bool = False  # a mutation at a path inside the document: the message must name a field
    note: str = ""


def _fmt(path: tuple) -> str:
    s = ""
    for k in path:
        s += f"[{k}]" if isinstance(k, int) else (f".{k}" if s else str(k))
    return s


def _closed(reader: str, path: tuple, node: Any) -> bool:
    """Dicts whose keys the reader checks (an unknown key there is invalid)."""
    if not isinstance(node, dict):
        return False
    if reader == "board":
        return "reachable" not in path or len(path) == 2
    if reader == "scenario":
        if not path:
            return True
        if path[0] == "board" and isinstance(node, dict):
            return "reachable" not in path
        return path[0] == "step" and (len(path) == 2 or (len(path) == 3 and path[2] == "expect"))
    if reader == "trace":
        return not path  # a header or a step row; observations are the engine's data
    if reader == "counterexample":
        return not path and "trace" in node
    return False


def mutate(reader: str, doc: Any, rng: random.Random) -> tuple[Any, str, bool, str]:
    """(mutated doc, mutation name, invalid by construction, path)."""
    nodes = _nodes(doc)
    path, node = rng.choice([n for n in nodes if n[0]] if reader in ("board", "scenario", "baseline") else nodes)
    kind = rng.choice(
        ["big_int", "nan", "deep", "date", "unknown_key", "control_name", "misspell", "type_swap", "delete", "int_edge", "dup_element", "rename_key"]
    )
    toml = reader in ("board", "scenario") or (reader == "baseline" and rng.random() < 0.5)
    if kind == "big_int":
        return _set(doc, path, rng.choice(HOSTILE_INTS)), kind, True, _fmt(path)
    if kind == "nan":
        return _set(doc, path, rng.choice([math.nan, math.inf, -math.inf])), kind, True, _fmt(path)
    if kind == "deep":
        return _set(doc, path, _deep()), kind, True, _fmt(path)
    if kind == "date" and toml:
        return _set(doc, path, rng.choice([dt.date(1979, 5, 27), dt.datetime(1979, 5, 27, 7, 32), dt.time(7, 32)])), kind, True, _fmt(path)
    if kind == "unknown_key":
        closed = [(p, n) for p, n in nodes if _closed(reader, p, n)]
        if closed:
            p, n = rng.choice(closed)
            n["zz_unknown"] = 1
            return doc, kind, True, _fmt(p + ("zz_unknown",))
    if kind == "control_name" and reader in ("board", "scenario"):
        names = [(p, n) for p, n in nodes if isinstance(n, str) and p and (p[-1] in NAME_KEYS or p[-1] in ("description", "source")) and "where" not in p
                 and not ("reachable" in p and p[-1] == "card")]
        if reader == "scenario":
            names = [(p, n) for p, n in names if p[0] == "board"]
        names = [(p, n) for p, n in names if not (len(p) >= 1 and p[-1] == "name" and len(p) <= 2 and reader == "scenario")]
        if names:
            p, n = rng.choice(names)
            return _set(doc, p, n + rng.choice(["\x1b[31m", "\x00", "\u202e", "\x07", "\r"])), kind, True, _fmt(p)
    if kind == "misspell":
        cands = [(p, n) for p, n in nodes if isinstance(n, str) and p and isinstance(p[-1], str) and p[-1] in ENUM_KEYS]
        if reader in ("board", "scenario"):  # a rule ID a board or a scenario cites (docs/rules.md)
            cands += [(p, n) for p, n in nodes if isinstance(n, str) and len(p) >= 2 and p[-2] == "rules"]
        if reader == "scenario":
            cands += [(p, n) for p, n in nodes if isinstance(n, str) and len(p) >= 2 and p[-2] in ("events", "no_events")]
        if reader == "counterexample":
            cands = [(p, n) for p, n in nodes if p and p[-1] == "invariant"]
        if reader == "trace":
            cands = []  # a trace's values are the engine's: a changed value is a divergence (exit 1)
        if cands:
            p, n = rng.choice(cands)
            return _set(doc, p, n + "x"), kind, True, _fmt(p)
    if kind == "rename_key" and reader == "scenario":
        tabs = [(p, n) for p, n in nodes if isinstance(n, dict) and p and p[-1] in ("where", "atk", "def", "attacks", "position") and n]
        if tabs:
            p, n = rng.choice(tabs)
            k = next(iter(n))
            n[k + " Nonexistent"] = n.pop(k)
            return doc, "where_unknown_card", True, _fmt(p)
    if kind == "delete" and path:
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        del parent[path[-1]]
        return doc, kind, False, _fmt(path)
    if kind == "int_edge" and isinstance(node, int) and not isinstance(node, bool):
        return _set(doc, path, rng.choice([-1, 0, 6, 99, 2**53 - 1, -(2**53 - 1)])), kind, False, _fmt(path)
    if kind == "dup_element" and isinstance(node, list) and node:
        node.append(copy.deepcopy(rng.choice(node)))
        return doc, kind, False, _fmt(path)
    # type swap: another type at the same place
    choices = ["s", 7, True, [], {}, 1.5, [1, "x"], {"a": 1}] + ([None] if not toml else [])
    v = rng.choice(choices)
    return _set(doc, path, copy.deepcopy(v)), "type_swap", False, _fmt(path)


def serialize(reader: str, doc: Any, toml: bool) -> bytes:
    if reader == "trace":
        text = "\n".join(json.dumps(r, ensure_ascii=False) for r in doc) + "\n"
    elif toml:
        text = toml_dumps(doc)
    else:
        text = json.dumps(doc, ensure_ascii=False)
    return text.replace(json.dumps(DEEP_MARK), "[" * DEEP + "0" + "]" * DEEP).encode()


def _seed(reader: str, rng: random.Random) -> Any:
    return {"board": seed_board, "scenario": seed_scenario, "trace": seed_trace, "counterexample": seed_counterexample, "baseline": seed_baseline}[reader](rng)


def text_damage(reader: str, raw: bytes, rng: random.Random) -> tuple[bytes, str, bool]:
    kind = rng.choice(["truncate", "bom", "not_utf8", "nul", "empty", "dup_key"])
    if kind == "truncate":
        return raw[: rng.randrange(max(1, len(raw)))], kind, False
    if kind == "bom":
        return b"\xef\xbb\xbf" + raw, kind, True
    if kind == "not_utf8":
        i = rng.randrange(len(raw) + 1)
        return raw[:i] + b"\xff\xfe" + raw[i:], kind, True
    if kind == "nul":
        i = rng.randrange(len(raw) + 1)
        return raw[:i] + b"\x00" + raw[i:], kind, True
    if kind == "empty":
        return b"", kind, reader != "baseline"  # an empty TOML baseline is an empty table
    # a duplicated key: JSON at the start of the first object; TOML at the top
    text = raw.decode()
    if reader in ("trace", "counterexample") or (reader == "baseline" and text.startswith("{")):
        i = text.index("{")
        j = text.index(",", i) if "," in text[i:] else None
        if j is not None:
            first = text[i + 1 : j]
            return (text[: i + 1] + first + "," + text[i + 1 :]).encode(), kind, True
        return raw + b"\x00", "nul", True
    line = text.split("\n", 1)[0]
    return (line + "\n" + text).encode(), kind, True


def key_damage(raw: bytes, rng: random.Random) -> tuple[bytes, str, bool, str]:
    """TOML dotted and inline keys (issue 26): what costs the parser the most for its size. Each
    adds a key the document's format does not have, or passes a limit (docs/bad-input.md), so
    each is invalid by construction: (bytes, kind, invalid, where)."""
    from bpcheck.model.reading import MAX_DOTTED_PARTS, MAX_KEY_PARTS, MAX_VALUES

    kind = rng.choice(["dotted_long", "dotted_many", "dotted_ok", "inline_dotted", "inline_deep", "values", "header_long", "dotted_quoted"])
    if kind == "dotted_long":  # one key of many parts (the 200 KB key that took 23.5 GB)
        n = rng.choice([MAX_KEY_PARTS + 1, 100, 5_000, 100_000])
        head = "zz" + ".p" * (n - 1) + " = 1\n"
    elif kind == "dotted_many":  # many keys of the most parts allowed
        n = MAX_DOTTED_PARTS // (MAX_KEY_PARTS - 1) + 2
        head = "".join(f"zz{i}" + ".p" * (MAX_KEY_PARTS - 1) + " = 1\n" for i in range(n))
    elif kind == "dotted_ok":  # within every limit: an unknown field all the same
        head = "zz" + ".p" * rng.randrange(1, MAX_KEY_PARTS) + " = 1\n"
    elif kind == "inline_dotted":  # dotted keys inside inline tables
        head = "zz = " + "{ a.b.c = " * rng.choice([2, 5, 20]) + "1" + " }" * 0 + "\n"
        depth = head.count("{")
        head = head.rstrip("\n") + " }" * depth + "\n"
    elif kind == "inline_deep":  # inline tables and dotted keys nesting past the depth limit together
        head = "zz = " + "{ a.b = " * 40 + "1" + " }" * 40 + "\n"
    elif kind == "values":
        head = "zz = [" + "0," * (MAX_VALUES + 1) + "]\n"
    elif kind == "header_long":
        head = "[" + ".".join(["zz"] * rng.choice([MAX_KEY_PARTS + 1, 500])) + "]\nk = 1\n"
        return raw + b"\n" + head.encode(), kind, True, "zz"
    else:  # quoted parts, whitespace around the dots
        head = 'zz . "q.r" . \'s\' ' + ' . "p"' * rng.randrange(1, 30) + " = 1\n"
    return head.encode() + raw, kind, True, "zz"


def cases(reader: str, seed: int, n: int) -> list[Case]:
    """`n` cases for one reader, the same for the same seed."""
    rng = random.Random(f"{reader}:{seed}")
    out: list[Case] = []
    specials = ["fifo", "dir", "devzero", "oversize", "empty-dir"] if reader in ("board", "scenario") else ["fifo", "dir", "devzero", "oversize"]
    for i in range(n):
        r = rng.random()
        if i < len(specials):
            out.append(Case(reader, specials[i], True, None, specials[i]))
            continue
        doc = _seed(reader, rng)
        toml = reader in ("board", "scenario") or (reader == "baseline" and rng.random() < 0.5)
        if reader in ("board", "scenario") and 0.2 <= r < 0.3:
            raw, kind, invalid, where = key_damage(serialize(reader, doc, True), rng)
            out.append(Case(reader, kind, invalid, raw, where=where, tree=True, note="toml"))
            continue
        if r < 0.2:
            raw, kind, invalid = text_damage(reader, serialize(reader, doc, toml), rng)
            out.append(Case(reader, kind, invalid, raw, note="toml" if toml else "json"))
            continue
        if reader == "board" and "card" in doc and rng.random() < 0.5:
            got = vocab_mutation(doc, rng)
            if got is not None:
                out.append(Case(reader, "vocab", False, serialize(reader, doc, True), where=got[0], tree=True, note="toml"))
                continue
        if reader == "trace":
            k = rng.randrange(len(doc))
            line, kind, invalid, where = mutate(reader, doc[k], rng)
            doc[k] = line
            where = f"line {k + 1}: {where}"
        else:
            doc, kind, invalid, where = mutate(reader, doc, rng)
        try:
            raw = serialize(reader, doc, toml)
        except (TypeError, ValueError):  # a value JSON cannot hold (a date): write it as TOML instead
            raw = toml_dumps(doc).encode() if isinstance(doc, dict) else b"\x00"
            raw = raw.replace(json.dumps(DEEP_MARK).encode(), b"[" * DEEP + b"0" + b"]" * DEEP)
        out.append(Case(reader, kind, invalid, raw, where=where, tree=bool(where) and not where.endswith(": "), note="toml" if toml else "json"))
    return out


# -- writing a case to disk -----------------------------------------------------------------------

SUFFIX = {"board": ".toml", "scenario": ".toml", "trace": ".jsonl", "counterexample": ".json", "baseline": ".json"}


def materialize(case: Case, folder: Path, k: int) -> str:
    from bpcheck.model.reading import MAX_BYTES

    suffix = SUFFIX[case.reader]
    if case.reader == "baseline" and case.note == "toml":
        suffix = ".toml"
    p = folder / f"case{k}{suffix}"
    if case.special == "fifo":
        os.mkfifo(p)
    elif case.special == "dir":
        p.mkdir()
        (p / "inner.txt").write_text("x")
    elif case.special == "empty-dir":
        p = folder / f"case{k}"
        p.mkdir()
    elif case.special == "devzero":
        os.symlink("/dev/zero", p)
    elif case.special == "oversize":
        with open(p, "wb") as f:
            f.truncate(MAX_BYTES[case.reader] + 1)  # sparse: no disk used
    else:
        assert case.data is not None
        p.write_bytes(case.data)
    return str(p)


# -- judging in-process ---------------------------------------------------------------------------


class Hang(Exception):
    pass


@dataclass
class Verdict:
    outcome: str  # rejected | accepted | traceback | hang | accepted_invalid | no_field | wrong_code
    detail: str = ""
    message: str = ""


def _alarm(_sig, _frm):
    raise Hang()


def run_reader(reader: str, path: str) -> tuple[str, str, int | None]:
    """("rejected", message, None) | ("accepted", "", exit code of the run); other exceptions propagate."""
    from bpcheck.errors import InputError

    if reader == "board":
        from bpcheck.engines.reference import ReferenceEngine
        from bpcheck.explorers.checking import parse_goals
        from bpcheck.explorers.core import Bounds
        from bpcheck.explorers.run import check_board
        from bpcheck.invariants import select
        from bpcheck.model.board import load_board

        try:
            b = load_board(path, path)
            parse_goals(b)
        except InputError as e:
            return "rejected", e.render(), None
        check_board(b, ReferenceEngine(), select(None), "bfs", Bounds(max_states=300, timeout=10))
        return "accepted", "", 0
    if reader == "scenario":
        from bpcheck.harness.scenarios import load_scenario, run_scenario

        try:
            sc = load_scenario(path, path)
        except InputError as e:
            return "rejected", e.render(), None
        res = run_scenario(sc)  # must not raise: validate accepts what scenario accepts
        return "accepted", "", 0 if res.passed else 1
    if reader == "trace":
        from bpcheck.invariants import select
        from bpcheck.harness.traces import conform_trace, load_trace

        try:
            t = load_trace(path)
            d, _n = conform_trace(t, select(None))
        except InputError as e:
            return "rejected", e.render(), None
        return "accepted", "", 0 if d is None else 1
    if reader == "counterexample":
        from bpcheck.harness.replay import load_counterexamples
        from bpcheck.cli.replay import replay_file

        try:
            load_counterexamples(path)
        except InputError as e:
            return "rejected", e.render(), None
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = replay_file(path, verbose=False)
        if code == 2:
            m = re.search(r"bpcheck: error: (.*)", err.getvalue())
            return "rejected", m.group(1) if m else out.getvalue().strip().splitlines()[-1], None
        return "accepted", "", code
    if reader == "baseline":
        from bpcheck.model.reading import read_baseline

        try:
            read_baseline(path, path)
        except InputError as e:
            return "rejected", e.render(), None
        return "accepted", "", 0
    raise ValueError(reader)


def judge(case: Case, path: str, seconds: int = 30) -> Verdict:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        status, message, _code = run_reader(case.reader, path)
    except Hang:
        return Verdict("hang", f"no answer in {seconds} s")
    except BaseException as e:  # noqa: BLE001 - the campaign counts every escape
        if isinstance(e, KeyboardInterrupt):
            raise
        return Verdict("traceback", "".join(traceback.format_exception(e))[-2000:])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if status == "rejected":
        if not message.startswith(path):
            return Verdict("no_field", f"the message does not start with the file: {message}", message)
        if case.tree and case.invalid and not _names_field(message, path):
            return Verdict("no_field", f"no field named: {message}", message)
        return Verdict("rejected", "", message)
    if case.invalid:
        return Verdict("accepted_invalid", f"{case.mutation} at {case.where} was accepted", "")
    return Verdict("accepted")


def _names_field(message: str, path: str) -> bool:
    rest = message[len(path) :]
    if re.match(r"^:\d+: ", rest):  # file:line of a trace
        rest = rest[rest.index(" ") :]
        return bool(re.match(r"^ [^ :][^:]*: ", rest)) or rest.startswith(" ")
    return bool(re.match(r"^: [^:]+: .", rest))


# -- judging through real processes ---------------------------------------------------------------

COMMANDS = {
    "board": [["validate"], ["check", "--max-states", "300"]],
    "scenario": [["scenario"], ["validate"]],
    "trace": [["conform", "-q"]],
    "counterexample": [["replay", "-q"]],
}


def run_process(case: Case, path: str, expected: str, seconds: int = 60) -> list[Verdict]:
    out = []
    for cmd in COMMANDS.get(case.reader, []):
        try:
            p = subprocess.run(
                [sys.executable, "-m", "bpcheck", *cmd, path], capture_output=True, text=True, timeout=seconds, cwd=ROOT, env={**os.environ, "CI": "1"}
            )
        except subprocess.TimeoutExpired:
            out.append(Verdict("hang", f"bpcheck {' '.join(cmd)}: no answer in {seconds} s"))
            continue
        both = p.stdout + p.stderr
        if "Traceback" in both:
            out.append(Verdict("traceback", f"bpcheck {' '.join(cmd)}: {both[-1500:]}"))
        elif p.returncode == 4:  # bpcheck's own bug: one line, the traceback in a file
            out.append(Verdict("exit4", f"bpcheck {' '.join(cmd)}: {both[-1500:]}"))
        elif expected == "rejected":
            if p.returncode != 2:
                out.append(Verdict("wrong_code" if p.returncode != 0 else "accepted_invalid", f"bpcheck {' '.join(cmd)}: exit {p.returncode}: {both[-500:]}"))
            elif f"{path}" not in p.stderr:
                out.append(Verdict("no_field", f"bpcheck {' '.join(cmd)}: the file is not named on stderr: {p.stderr[-500:]}"))
            else:
                out.append(Verdict("rejected", "", p.stderr))
        else:
            ok = {0, 1, 3} if cmd[0] in ("check", "scenario", "conform", "replay") else {0}
            if cmd[0] == "replay":
                ok = {0, 1, 2}  # a trace that no longer applies is exit 2 with a reason
            out.append(Verdict("accepted" if p.returncode in ok else "wrong_code", f"bpcheck {' '.join(cmd)}: exit {p.returncode}: {both[-300:]}"))
    return out


# -- what an engine says: a hostile cmd: engine (tests/engines/hostile_engine.py) --------------------

HOSTILE = ROOT / "tests" / "engines" / "hostile_engine.py"
ENGINE_CLASSES = ("github", "esc", "bel", "bidi", "controls", "markup", "long", "all")
ENGINE_BASES = (None, "mutant:replay-resets-count", "mutant:direct-attack-past-monsters")
_OURS = re.compile(r"^::(error|warning|notice) (file=[^,]*,)?title=bpcheck%3A ")


def _hazards(text: str, allowed: str = "\n\t") -> list[str]:
    from bpcheck.model.hazard import HAZARD

    return sorted({f"U+{ord(c):04X}" for c in HAZARD.findall(text) if c not in allowed})


def _terminal_problem(out: str) -> str | None:
    if _hazards(out):
        return f"raw {_hazards(out)} on the terminal"
    for ln in re.split(r"\r\n|\r|\n", out):
        if (ln.lstrip().startswith("::") or "##[" in ln) and not _OURS.match(ln):
            return f"a line GitHub reads as a workflow command: {ln[:160]!r}"
    return None


def engine_case(k: int, rng: random.Random, folder: Path) -> Verdict:
    """`bpcheck check` of a hostile engine (one class of hostile text, on a board it fails, one it
    refuses, one it faults on) with every output: no traceback, the terminal and every file safe."""
    import orjson
    import xml.etree.ElementTree as ET

    cls, base = rng.choice(ENGINE_CLASSES), rng.choice(ENGINE_BASES)
    seed = ROOT / rng.choice(SEED_BOARDS[:3])
    d = folder / f"engine{k}"
    d.mkdir()
    text = seed.read_text()
    paths = []
    for stem, name in (("main", None), ("skip", "hostile skip board"), ("fault", "hostile fault board")):
        if stem != "main" and rng.random() < 0.5:
            continue
        f = d / f"{stem}.toml"
        f.write_text(text if name is None else re.sub(r"^name = .*$", f'name = "{name}"', text, count=1, flags=re.M))
        paths.append(str(f))
    spec = f"cmd:{sys.executable} {HOSTILE} {cls}" + (f" {base}" if base else "")
    args = ["check", *paths, "--engine", spec, "--max-states", "400", "--json", str(d / "r.json"), "--cex-dir", str(d / "cex"), "--report", str(d / "rep"), "--github"]
    try:
        p = subprocess.run([sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, timeout=600, cwd=ROOT, errors="surrogateescape",
                           env={**os.environ, "CI": "1", "GITHUB_STEP_SUMMARY": str(d / "summary.md")})
    except subprocess.TimeoutExpired:
        return Verdict("hang", f"engine {cls}/{base}: no answer in 600 s")
    both = p.stdout + p.stderr
    if "Traceback" in both or p.returncode == 4:
        return Verdict("traceback", f"engine {cls}/{base}: exit {p.returncode}: {both[-1500:]}")
    if p.returncode not in (0, 1, 3):
        return Verdict("exit4" if p.returncode == 4 else "wrong_code", f"engine {cls}/{base}: exit {p.returncode}: {both[-800:]}")
    for where, out in (("stdout", p.stdout), ("stderr", p.stderr)):
        problem = _terminal_problem(out)
        if problem:
            return Verdict("unescaped", f"engine {cls}/{base}: {where}: {problem}")
    try:
        for f in [d / "r.json", d / "rep" / "results.sarif", *(d / "rep" / "counterexamples").glob("*.itf.json"), *(d / "cex").glob("*.json")]:
            if f.exists():
                data = f.read_bytes()
                if _hazards(data.decode("utf-8"), "\n"):
                    return Verdict("unescaped", f"engine {cls}/{base}: raw {_hazards(data.decode())} in {f.name}")
                orjson.loads(data)
        for f in [d / "rep" / "junit.xml", *(d / "rep" / "counterexamples").glob("*.svg")]:
            ET.fromstring(f.read_bytes())
        for f in [d / "rep" / "index.html", *(d / "rep" / "counterexamples").glob("*.html"), d / "rep" / "summary.md", d / "summary.md"]:
            t = f.read_text(encoding="utf-8")
            if f.suffix == ".md":  # an engine's text is shown in code spans there, as code
                t = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", t)
            if _hazards(t) or "<script>alert" in t or "<img src=x" in t:
                return Verdict("unescaped", f"engine {cls}/{base}: {f.name} holds the engine's text raw")
    except (ValueError, ET.ParseError, OSError) as e:
        return Verdict("unescaped", f"engine {cls}/{base}: an output does not parse: {type(e).__name__}: {e}")
    return Verdict("accepted")


# -- checkpoint timing: a resume from any moment gives the uninterrupted run's JSON ------------------

CHECKPOINT_RUNS = (
    ("boards/000-replay-2.toml", "reference", ()),
    ("boards/000-replay-2.toml", "mutant:replay-resets-count", ()),
    ("boards/000-replay-1.toml", "mutant:replay-resets-count", ("--strategy", "dfs")),
    ("boards/rule-ds-honest.toml", "lying_bookkeeping:unknown_card", ()),  # "not judged" notes
)
_WHOLE: dict[tuple, bytes] = {}


def checkpoint_case(k: int, rng: random.Random, folder: Path) -> Verdict:
    board, engine, extra = rng.choice(CHECKPOINT_RUNS)
    env = {**os.environ, "CI": "1", "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT / "tests" / "engines"), os.environ.get("PYTHONPATH", "")])}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bpcheck", "check", board, "--engine", engine, *extra, *args], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)

    key = (board, engine, extra)
    if key not in _WHOLE:
        w = folder / f"whole{len(_WHOLE)}.json"
        p = run("--no-reduce", "--json", str(w))
        if not w.exists():
            return Verdict("wrong_code", f"checkpoint {key}: the uninterrupted run wrote no result: exit {p.returncode}: {p.stderr[-800:]}")
        _WHOLE[key] = w.read_bytes()
    ck, out = folder / f"c{k}.ckpt", folder / f"c{k}.json"
    legs = sorted(rng.sample(range(1, 200), rng.choice([1, 2, 3])))
    for n in legs:
        p = run("--max-states", str(n), "--checkpoint", str(ck), *(["--resume"] if ck.exists() else []))
        if "Traceback" in p.stdout + p.stderr or p.returncode not in (1, 3, 0):
            return Verdict("traceback" if "Traceback" in p.stderr else "wrong_code", f"checkpoint {key} at {n}: exit {p.returncode}: {p.stderr[-800:]}")
    p = run(*(["--checkpoint", str(ck), "--resume"] if ck.exists() else []), "--json", str(out))
    if "Traceback" in p.stdout + p.stderr or p.returncode == 4:
        return Verdict("traceback", f"checkpoint {key} resumed: {p.stderr[-800:]}")
    if out.read_bytes() != _WHOLE[key]:
        return Verdict("resume_differs", f"checkpoint {key}, legs {legs}: the resumed JSON differs from the uninterrupted run's")
    return Verdict("accepted")


# -- issue 33's attacks: an engine that floods, one that is unstable, an edited checkpoint, a signal --

ATTACKS = ("oversized-engine", "unstable-engine", "edited-checkpoint", "signal-mutants", "signal-check-j2", "signal-check-boards", "signal-fuzz", "signal-sweep")
# the long commands a signal attack stops (ATTACKS "signal-*"): the command line, and what --json must say
NORMALS = ("Battle Ox", "Mokey Mokey", "Dark Magician", "Celtic Guardian", "Summoned Skull", "Gemini Elf")  # the reference plays them


def _cards_db() -> str | None:
    """The EDOPro kit's full card database (sweep's attack), where tests/test_sweep.py finds it."""
    from bpcheck.engines.ocgcore import default_paths

    full = os.path.join(os.path.dirname(default_paths(str(ROOT))[2]), "cards-full.cdb")
    return full if os.path.exists(full) else None


def signal_attack(attack: str, rng: random.Random, d: Path, env: dict) -> Verdict:
    """A long command stopped by SIGINT, SIGTERM or SIGHUP once it is under way (the slow engine
    of tests/lifecycle_engines.py says when), sometimes a second signal while it writes its
    outputs: the signal's status (the first's or the second's), no traceback, and a whole --json
    saying it was interrupted (issue 33: mutants wrote none; a second signal could cost it; sweep
    wrote nothing when stopped early; `-j 2` on one board waited for its chunk)."""
    sig = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
    second = rng.choice([None, signal.SIGINT, signal.SIGTERM])
    out, mark = d / "r.json", d / "started"
    env = {**env, "PYTHONUNBUFFERED": "1", "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), env["PYTHONPATH"]]), "LIFECYCLE_STARTED": str(mark)}
    slow = {"LIFECYCLE_SLOW": rng.choice(["0.05", "0.2"])}
    if attack == "signal-mutants":
        args, ready = ["mutants", "boards/", "-j", rng.choice(["1", "2"])], None
    elif attack == "signal-check-j2":  # one board: the parallel explorer, its workers in slow actions
        args, ready = ["check", "boards/000-replay-2.toml", "-j", "2", "--engine", "lifecycle_engines:slow_buggy"], mark.exists
        env.update(slow, LIFECYCLE_SLOW_WORKERS="1")
    elif attack == "signal-check-boards":
        args, ready = ["check", "boards/000-replay-1.toml", "boards/000-replay-2.toml", "boards/002-skip-battle-phase.toml", "-j", rng.choice(["1", "2"]),
                       "--engine", "lifecycle_engines:slow_buggy", "--report", str(d / "rep")], mark.exists
        env.update(slow)
    elif attack == "signal-fuzz":
        args, ready = ["fuzz", "--engine", "lifecycle_engines:slow", "--examples", "40", "--seed", str(rng.randrange(1000))], mark.exists
        env.update(slow)
    else:
        db = _cards_db()
        if db is None:
            return Verdict("unavailable", "signal-sweep: the EDOPro kit's cards-full.cdb is not there (OCG_CARDS)")
        args, ready = ["sweep", *NORMALS, "--engine", "lifecycle_engines:slow", "--cards-db", db, "--batch", "1", "--report", str(d / "rep")], mark.exists
        env.update(slow)
    proc = subprocess.Popen([sys.executable, "-m", "bpcheck", *args, "--json", str(out)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        t0 = time.monotonic()
        if ready is None:
            for line in proc.stdout:  # the header, then the first row
                if not line.startswith("mutant "):
                    break
        else:
            while not ready():
                if proc.poll() is not None or time.monotonic() - t0 > 300:
                    proc.kill()
                    rest, err = proc.communicate()
                    return Verdict("wrong_code", f"{attack}: never under way (exit {proc.returncode}): {err[-500:]}")
                time.sleep(0.05)
        time.sleep(rng.uniform(0, 1.5))
        proc.send_signal(sig)
        if second is not None:
            time.sleep(rng.uniform(0.2, 1.0))
            if proc.poll() is None:
                proc.send_signal(second)
        rest, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    what = f"{attack}: {signal.Signals(sig).name}{'+' + signal.Signals(second).name if second else ''}"
    if proc.returncode not in {128 + sig, *((128 + second,) if second else ())} or "Traceback" in rest + err:
        return Verdict("wrong_code", f"{what}: exit {proc.returncode}: {err[-500:]}")
    try:
        doc = json.loads(out.read_text())
    except (OSError, ValueError) as e:
        return Verdict("wrong_code", f"{what}: no whole --json ({e})")
    said = {
        "signal-mutants": lambda: doc.get("interrupted", {}).get("signal"),
        "signal-fuzz": lambda: (doc.get("stopped") or {}).get("reason", ""),
        "signal-sweep": lambda: "SIG" if doc.get("complete") is False else "",
    }.get(attack, lambda: (doc.get("interrupted") or {}).get("signal"))()
    if not said or "SIG" not in said:
        return Verdict("wrong_code", f"{what}: --json does not say it was interrupted")
    return Verdict("accepted")


def attack_case(k: int, rng: random.Random, folder: Path) -> Verdict:
    """One of :data:`ATTACKS` (the k-th in turn, its details drawn from `rng`), through real
    bpcheck processes: each must end with the documented refusal, never a traceback or a hang."""
    attack = ATTACKS[k % len(ATTACKS)]
    engines = ROOT / "tests" / "engines"
    env = {**os.environ, "CI": "1", "PYTHONPATH": os.pathsep.join([str(engines), os.environ.get("PYTHONPATH", "")])}
    d = folder / f"attack{k}"
    d.mkdir()

    def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)

    try:
        if attack in ("oversized-engine", "unstable-engine"):
            n = rng.choice([10_001, 100_000, 400_000])
            cmd = f"flood_engine.py {n} 0" if attack == "oversized-engine" else "unstable_observation_engine.py"
            # 400,000 actions make a reply of more than 16 MiB: the reply-size limit names itself first
            want = ("(the limit, MAX_ACTIONS)", "(the limit for one reply)") if attack == "oversized-engine" else ("nondeterministic: observed twice",)
            p = run("check", "boards/000-replay-1.toml", "--engine", f"cmd:{sys.executable} {engines / cmd}", "--json", str(d / "r.json"))
            if "Traceback" in p.stdout + p.stderr or p.returncode != 1:
                return Verdict("wrong_code", f"{attack}: exit {p.returncode}: {(p.stdout + p.stderr)[-800:]}")
            msgs = [c["message"] for c in json.loads((d / "r.json").read_text())["boards"][0]["counterexamples"] if c["invariant"] == "ENGINE-FAULT"]
            if not any(w in m for m in msgs for w in want):
                return Verdict("no_field", f"{attack}: no ENGINE-FAULT saying {want!r}: {msgs[:3]}")
            return Verdict("rejected")
        if attack == "edited-checkpoint":
            ck = d / "run.ckpt"
            run("check", "boards/000-replay-2.toml", "--max-states", str(rng.randint(20, 200)), "--checkpoint", str(ck))
            data = bytearray(ck.read_bytes())
            n = int.from_bytes(data[8:16], "little")
            header = bytes(data[16 : 16 + n])
            digits = [m.start() for m in re.finditer(rb"[0-9]", header)]
            i = 16 + rng.choice(digits) if digits and rng.random() < 0.7 else rng.randrange(16, len(data))
            data[i] = (data[i] ^ rng.choice([1, 2, 4])) if data[i:i + 1].isdigit() else data[i] ^ 0xFF
            ck.write_bytes(bytes(data))
            p = run("check", "boards/000-replay-2.toml", "--checkpoint", str(ck), "--resume")
            if "Traceback" in p.stdout + p.stderr or p.returncode != 2:
                return Verdict("wrong_code", f"{attack}: byte {i}: exit {p.returncode}: {(p.stdout + p.stderr)[-800:]}")
            if f"{ck}: " not in p.stderr:
                return Verdict("no_field", f"{attack}: byte {i}: {p.stderr[-300:]}")
            return Verdict("rejected")
        return signal_attack(attack, rng, d, env)
    except subprocess.TimeoutExpired:
        return Verdict("hang", f"{attack}: no answer in time")


# -- the campaign ---------------------------------------------------------------------------------


@dataclass
class Tally:
    cases: int = 0
    runs: int = 0
    counts: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    by_reader: dict = field(default_factory=dict)

    def add(self, reader: str, case: Case, v: Verdict, where: str) -> None:
        self.runs += 1
        self.counts[v.outcome] = self.counts.get(v.outcome, 0) + 1
        r = self.by_reader.setdefault(reader, {})
        r[v.outcome] = r.get(v.outcome, 0) + 1
        if v.outcome not in ("rejected", "accepted"):
            self.failures.append({"reader": reader, "mutation": case.mutation, "where": case.where, "how": where, "outcome": v.outcome, "detail": v.detail})


def campaign(n: int, seed: int, processes: int, readers=READERS, progress: bool = False, engine_runs: int = 0, checkpoint_runs: int = 0, attack_runs: int = 0) -> Tally:
    t = Tally()
    with tempfile.TemporaryDirectory(prefix="bpcheck-fuzz-") as tmp:
        folder = Path(tmp)
        for kind, count, fn in (("engine", engine_runs, engine_case), ("checkpoint", checkpoint_runs, checkpoint_case), ("attack", attack_runs, attack_case)):
            rng = random.Random(f"{kind}:{seed}")
            for j in range(count):
                v = fn(j, rng, folder)
                t.cases += 1
                t.add(kind, Case(kind, kind, False), v, "process")
                if progress:
                    sys.stderr.write(f"\r{kind}: {j + 1}/{count}   ")
        sample: list[tuple[Case, str, str]] = []
        k = 0
        for reader in readers:
            cs = cases(reader, seed, n)
            for i, c in enumerate(cs):
                k += 1
                path = materialize(c, folder, k)
                t.cases += 1
                v = judge(c, path)
                t.add(reader, c, v, "in-process")
                if progress and k % 50 == 0:
                    sys.stderr.write(f"\r{reader}: {i + 1}/{len(cs)}   ")
                sample.append((c, path, "rejected" if v.outcome == "rejected" else "accepted"))
        rng = random.Random(seed)
        per = {r: [s for s in sample if s[0].reader == r and s[0].reader in COMMANDS] for r in readers}
        chosen: list = []
        for r, items in per.items():
            inval = [s for s in items if s[2] == "rejected"]
            # the hostile files always, then a random sample
            chosen += [s for s in inval if s[0].special]
            rest = [s for s in items if not s[0].special]
            rng.shuffle(rest)
            chosen += rest[: max(0, processes // max(1, len([x for x in per.values() if x])) - len([s for s in inval if s[0].special]))]
        for j, (c, path, expected) in enumerate(chosen):
            for v in run_process(c, path, expected):
                t.add(c.reader, c, v, "process")
            if progress:
                sys.stderr.write(f"\rprocesses: {j + 1}/{len(chosen)}   ")
        if progress:
            sys.stderr.write("\n")
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=400, help="cases per reader (default 400)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--processes", type=int, default=60, help="cases run through real bpcheck processes (default 60)")
    ap.add_argument("--engine-runs", type=int, default=0, help="`check` runs of the hostile cmd: engine, every output checked (default 0)")
    ap.add_argument("--checkpoint-runs", type=int, default=0, help="checkpointed runs stopped at random moments and resumed (default 0)")
    ap.add_argument("--attack-runs", type=int, default=0, help="issue 33's attacks in turn: oversized and unstable engines, edited checkpoints, signals (sometimes two) on every long command: mutants, check -j 2 on one board, check of several boards, fuzz, sweep (default 0)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    start = time.monotonic()
    t = campaign(args.cases, args.seed, args.processes, progress=sys.stderr.isatty() and not os.environ.get("CI"), engine_runs=args.engine_runs, checkpoint_runs=args.checkpoint_runs, attack_runs=args.attack_runs)
    took = time.monotonic() - start
    print(f"cases: {t.cases}, runs: {t.runs} (in-process and through bpcheck processes), {took:.0f} s")
    for reader, c in t.by_reader.items():
        print(f"  {reader:15} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    bad = {k: t.counts.get(k, 0) for k in ("traceback", "exit4", "hang", "accepted_invalid", "wrong_code", "no_field", "unescaped", "resume_differs")}
    print(
        "tracebacks {traceback}, exit 4 {exit4}, hangs {hang}, exit 0 on invalid input {accepted_invalid}, wrong exit codes {wrong_code}, field not named {no_field}, "
        "engine text unescaped {unescaped}, resumes that differ {resume_differs}".format(**bad)
    )
    for f in t.failures[:20]:
        print(f"  FAIL {f['reader']} {f['mutation']} at {f['where']} ({f['how']}): {f['outcome']}: {f['detail'][:600]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"cases": t.cases, "runs": t.runs, "seconds": round(took), "counts": t.counts, "by_reader": t.by_reader, "failures": t.failures}, indent=1) + "\n")
    return 1 if any(bad.values()) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
