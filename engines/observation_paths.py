"""Observation paths: the names of the parts of an observation an engine may leave out
(protocol v2's ``unobserved`` capability, docs/protocol.md) and an invariant may read
(``reads=`` in :mod:`bpcheck.invariants.base`).

A path is dot-separated field names from the observation's top level; ``[]`` after a name means
"every item of this array": ``players[].monsters[].modifiers``, ``lingering``,
``open_windows.events``, ``attack.potential_targets``. Null items (empty zones) are skipped.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Iterable

# Observation fields added to the protocol after its version 2: every engine may leave them out
# (the schema does not require them), and one that does is not compared on them (DIFF), as if it
# had declared them unobserved. The reference model always gives position_changed_this_turn
# (docs/protocol.md). The places of a board of card-database cards (Xyz materials, the Extra
# Monster Zones, the Pendulum Zones, the Extra Deck: docs/boards.md) are given only on a board
# that has any of them, by an engine that plays such boards (--engine ocgcore); the reference
# model refuses those boards, and draws them with the same fields (engines/reference.py
# board_observation), so on every board both give the same shape (docs/observation.md).
OPTIONAL_PATHS = frozenset(
    {
        "players[].monsters[].position_changed_this_turn",
        "players[].monsters[].materials",
        "players[].extra_monsters",
        "players[].pendulum",
        "players[].extra_deck",
    }
)

_MONSTER = "players[].monsters[]."
_CARD_ZONES = ("players[].spells[].", "players[].field_zone.")

# The observation fields an engine may withhold (declare unobserved, protocol v2) and still be
# judged: what the engine remembers or derives — counters and marks, windows, priority and passes,
# effects in force and ATK/DEF breakdowns, pending triggers and choices, the chain links'
# bookkeeping — as opposed to the duel's visible state (turn, phase and step, who acts, LP, the
# cards and where they are, their positions and ATK/DEF, what a card is equipped or attached to,
# the attack's battlers, the chain's cards, controllers and targets). Each invariant says what it
# does without each of them (docs/invariants.md, "Fields read"): it judges from the monitor's own
# history or the card data instead, or that one check is "not evaluated"; it never judges through
# a field the engine does not report. The EDOPro core withholds a subset of them
# (engines/ocgcore/engine.py ``UNOBSERVED``); tests/test_withheld_fields.py runs the invariant
# library with every one of them withheld.
WITHHOLDABLE_PATHS = frozenset(
    {
        "priority", "passes", "open_windows", "chains_in_step", "next_uid", "lingering", "pending_triggers", "choice",
        *(_MONSTER + f for f in (
            "modifiers", "lingering_modifiers", "summoned_this_turn", "set_this_turn", "position_changed_this_turn",
            "attacks_declared", "declared_at", "declared_direct", "cannot_attack_this_turn", "destroyed_by_battle",
            "flipped_by_battle", "once_per_turn_used", "equipped_with",
        )),
        *(z + f for z in _CARD_ZONES for f in ("set_this_turn", "linked_monster", "on_chain")),
        *("attack." + f for f in ("potential_targets", "direct_was_legal", "target_was_facedown", "replay_pending", "battle_ended", "damage_calculated")),
        *("chain[]." + f for f in ("effect", "speed", "negated", "card_activation", "kind", "subtype", "cost_info")),
    }
)  # fmt: skip


def split(path: str) -> tuple[tuple[str, bool], ...]:
    """``players[].lp`` -> ``(("players", True), ("lp", False))``; ValueError if malformed."""
    if not isinstance(path, str) or not path:
        raise ValueError("a path is a non-empty string")
    return _split(path)


@functools.lru_cache(maxsize=1024)  # paths are few and every observation is stripped by them
def _split(path: str) -> tuple[tuple[str, bool], ...]:
    if not path:
        raise ValueError("a path is a non-empty string")
    out = []
    for seg in path.split("."):
        many = seg.endswith("[]")
        name = seg[:-2] if many else seg
        if not name or not all(ch.isalnum() or ch == "_" for ch in name):
            raise ValueError(f"malformed segment {seg!r} (expected a field name, optionally followed by [])")
        out.append((name, many))
    return out


def names(path: str) -> tuple[str, ...]:
    """The field names of a path, without the array marks: what prefixes compare on."""
    if not isinstance(path, str) or not path:
        raise ValueError("a path is a non-empty string")
    return _names(path)


@functools.lru_cache(maxsize=1024)  # as _split: the paths are few, compared many times
def _names(path: str) -> tuple[str, ...]:
    return tuple(n for n, _ in _split(path))


def overlaps(a: str, b: str) -> bool:
    """True when one path is the other or lies inside it (``open_windows`` and
    ``open_windows.attack_declaration``)."""
    x, y = names(a), names(b)
    n = min(len(x), len(y))
    return x[:n] == y[:n]


def first_overlap(reads: Iterable[str], unobserved: Iterable[str]) -> str | None:
    """The first unobserved path (sorted) that a path in ``reads`` needs, or None."""
    un = sorted(unobserved)
    for r in sorted(reads):
        for u in un:
            if overlaps(r, u):
                return u
    return None


def within(path: str, container: str) -> bool:
    """True when `path` is `container` or lies inside it (``open_windows.summon`` within
    ``open_windows``; not the other way round)."""
    x, y = names(path), names(container)
    return x[: len(y)] == y


def first_missing(reads: Iterable[str], unobserved: Iterable[str]) -> str | None:
    """The first unobserved path (sorted) that takes away a path in ``reads``: the path itself or
    a part of the observation that holds it. (A read of a whole part, e.g. ``chain`` for "is a
    chain open", still stands when only fields inside it, ``chain[].speed``, are unobserved: the
    fields read inside it are declared as paths of their own.)"""
    return _first_missing(tuple(sorted(set(reads))), tuple(sorted(set(unobserved))))


# Asked for every invariant and every field it reads, on every board, with the same few sets of
# paths: the answer depends on them alone (a sweep spent 0.3 s a board here; docs/performance.md).
@functools.lru_cache(maxsize=4096)
def _first_missing(reads: tuple[str, ...], un: tuple[str, ...]) -> str | None:
    for r in reads:
        x = names(r)
        for u in un:
            y = names(u)
            if x[: len(y)] == y:
                return u
    return None


def strip(obs: Any, paths: Iterable[str]) -> Any:
    """``obs`` without the given paths. Copy on change: only the parts on the way to a removed
    field are copied; the rest is shared with ``obs``, which is left as it was, and ``obs`` itself
    comes back when it holds none of the paths. The paths are walked together, once."""
    return _strip_tree(obs, _tree(frozenset(paths)))


@functools.lru_cache(maxsize=64)  # an engine's unobserved paths are one set, used for every observation
def _tree(paths: frozenset) -> dict:
    """The paths as a tree: name -> [remove, subtree for each item (``[]``), subtree of the value]."""
    root: dict = {}
    for p in sorted(paths):
        node = root
        segs = split(p)
        for k, (name, many) in enumerate(segs):
            entry = node.setdefault(name, [False, None, None])
            if k == len(segs) - 1:
                entry[0] = True
                break
            slot = 1 if many else 2
            if entry[slot] is None:
                entry[slot] = {}
            node = entry[slot]
    return root


def _strip_tree(node: Any, tree: dict) -> Any:
    if not isinstance(node, dict):
        return node
    new = None
    for name, (remove, items, value) in tree.items():
        if name not in node:
            continue
        if remove:
            if new is None:
                new = dict(node)
            del new[name]
            continue
        child = node[name]
        out = child
        if items is not None and isinstance(child, (list, tuple)):
            mapped = [None if x is None else _strip_tree(x, items) for x in child]
            if any(a is not b for a, b in zip(mapped, child)):
                out = mapped
        if value is not None:
            out = _strip_tree(out, value)
        if out is not child:
            if new is None:
                new = dict(node)
            new[name] = out
    return node if new is None else new


def schema_problem(path: str, schema: dict) -> str | None:
    """None if ``path`` names a part of the observation in the protocol schema, else why not."""
    try:
        segs = split(path)
    except ValueError as e:
        return str(e)
    defs = schema["$defs"]
    node: Any = defs["observation"]
    walked = ""
    for name, many in segs:
        node = _object_of(node, defs)
        props = node.get("properties", {}) if isinstance(node, dict) else {}
        if name not in props:
            return f"the observation has no field {name!r}" + (f" under {walked!r}" if walked else "")
        walked = f"{walked}.{name}" if walked else name
        node = _resolve(props[name], defs)
        if many:
            arr = _array_of(node, defs)
            if arr is None:
                return f"{walked!r} is not an array (drop the [])"
            node = arr
            walked += "[]"
    return None


def _resolve(node: Any, defs: dict) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _object_of(node: Any, defs: dict) -> Any:
    node = _resolve(node, defs)
    if isinstance(node, dict) and "properties" not in node:
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                sub = _resolve(sub, defs)
                if isinstance(sub, dict) and "properties" in sub:
                    return sub
    return node


def _array_of(node: Any, defs: dict) -> Any:
    node = _resolve(node, defs)
    if not isinstance(node, dict):
        return None
    t = node.get("type")
    if t == "array" or (isinstance(t, list) and "array" in t):
        return _resolve(node.get("items", {}), defs)
    for key in ("anyOf", "oneOf"):
        for sub in node.get(key, []):
            a = _array_of(sub, defs)
            if a is not None:
                return a
    return None


def relax_schema(schema: dict, paths: Iterable[str]) -> dict:
    """A copy of the protocol schema in which the given observation paths are optional (no
    longer ``required``): an engine that declares them unobserved may leave them out."""
    out = copy.deepcopy(schema)
    defs = out["$defs"]
    for p in paths:
        node: Any = defs["observation"]
        segs = split(p)
        for k, (name, many) in enumerate(segs):
            node = _object_of(node, defs)
            if k == len(segs) - 1:
                req = node.get("required")
                if isinstance(req, list) and name in req:
                    req.remove(name)
                break
            node = _resolve(node["properties"][name], defs)
            if many:
                node = _array_of(node, defs)
    return out


__all__ = ["OPTIONAL_PATHS", "WITHHOLDABLE_PATHS", "first_missing", "first_overlap", "names", "overlaps", "relax_schema", "schema_problem", "split", "strip", "within"]
