"""Seed boards: a documented TOML format (docs/boards.md), validated on load.

``load_board(path)`` returns a :class:`Board`: the initial :class:`State`, the card pool it uses
(the built-in pool plus any ``[[card]]`` defined in the file) and its metadata. Every problem is
an :class:`~bpcheck.errors.InputError` naming the file, the field path and the problem; nothing
is coerced (``"2500"`` is not ``2500``, ``2500.0`` is not ``2500``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from bpcheck.errors import InputError
from bpcheck.model import inputs
from bpcheck.model.cards import CardPool, parse_card, pool_with
from bpcheck.model.state import CardRef, Monster, Player, Pos, SpellTrap, State, Step

_SCHEMA: dict | None = None


def board_schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = json.loads((resources.files("bpcheck.model") / "schemas" / "board.schema.json").read_text("utf-8"))
    return _SCHEMA


@dataclass(frozen=True)
class Board:
    path: str
    name: str
    state: State
    pool: CardPool
    source: str = ""
    description: str = ""
    rules: tuple[str, ...] = ()
    reachable: tuple[dict, ...] = ()
    ids: dict[str, int] = field(default_factory=dict)  # board `id` labels -> uids


def _path_str(path) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def _reject_floats(v: Any, file: str, path: str) -> None:
    if isinstance(v, float):
        raise InputError(file, path, f"expected a whole number, got {v!r}")
    if isinstance(v, dict):
        for k, x in v.items():
            _reject_floats(x, file, f"{path}.{k}" if path else k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _reject_floats(x, file, f"{path}[{i}]")


def parse_toml(text: str, file: str) -> dict:
    """A TOML document through the input layer (model/inputs.py: depth, strict types)."""
    return inputs.parse_toml_text(text, file)


def read_text(path: Path | str, display: str | None = None, kind: str = "board") -> str:
    """A file's text through the input layer (regular files only, size limit, UTF-8)."""
    return inputs.read_text(path, display or str(path), kind)


def load_board(path: Path | str, display: str | None = None) -> Board:
    display = display or str(path)
    return board_from_dict(parse_toml(read_text(path, display), display), display)


def board_from_dict(data: dict, file: str, field_prefix: str = "") -> Board:
    def fp(p: str) -> str:
        return f"{field_prefix}.{p}" if field_prefix and p else (field_prefix or p)

    if not isinstance(data, dict):
        raise InputError(file, field_prefix, f"expected a table, got {inputs.type_name(data)}")
    inputs.check_tree(data, file, field_prefix)
    _reject_floats(data, file, field_prefix)
    # Clear messages for the commonest impossible boards before the generic schema check.
    for side in ("p1", "p2"):
        pl = data.get(side)
        if isinstance(pl, dict):
            for zone, n in (("monsters", 5), ("spells", 5)):
                z = pl.get(zone)
                if isinstance(z, list) and len(z) > n:
                    what = "Monster Zones" if zone == "monsters" else "Spell & Trap Zones"
                    raise InputError(file, fp(f"{side}.{zone}"), f"a player has {n} {what}; {len(z)} cards given")
    validator = jsonschema.Draft202012Validator(board_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        e = errors[0]
        best = jsonschema.exceptions.best_match(errors)
        if best is not None:
            e = best
        where = _path_str(e.absolute_path)
        if e.validator == "additionalProperties" and isinstance(e.instance, dict):  # name the unknown field itself
            known = set(e.schema.get("properties", {}))
            extra = sorted(k for k in e.instance if k not in known)
            if extra:
                raise InputError(file, fp(inputs.field_path(where, extra[0])), f"unknown field (allowed: {', '.join(sorted(known))})")
        if e.validator == "required" and isinstance(e.instance, dict):  # name the missing field itself
            missing = next((k for k in e.validator_value if k not in e.instance), None)
            if missing is not None:
                raise InputError(file, fp(inputs.field_path(where, missing)), "missing required field")
        raise InputError(file, fp(where), _schema_message(e))
    extra = [parse_card(c, file, fp(f"card[{i}]")) for i, c in enumerate(data.get("card", []))]
    pool = pool_with(extra, [fp(f"card[{i}]") for i in range(len(extra))])
    _check_names(data, file, fp)
    board = _build(data, file, pool, fp)
    _check_goal_references(board, fp)
    return board


def _check_names(data: dict, file: str, fp) -> None:
    """Names and ids people read in reports hold no control characters (docs/bad-input.md)."""
    if "name" in data:
        inputs.check_name(data["name"], file, fp("name"), "board name")
    for side in ("p1", "p2"):
        for zone in ("monsters", "spells", "hand", "graveyard", "banished", "deck"):
            for j, e in enumerate(data[side].get(zone, [])):
                where = f"{side}.{zone}[{j}]"
                if isinstance(e, str):
                    inputs.check_name(e, file, fp(where), "card name")
                    continue
                inputs.check_name(e["card"], file, fp(where + ".card"), "card name")
                if "id" in e:
                    inputs.check_name(e["id"], file, fp(where + ".id"), "id")
        fs = data[side].get("field_spell")
        if fs is not None:
            inputs.check_name(fs["card"], file, fp(f"{side}.field_spell.card"), "card name")
            if "id" in fs:
                inputs.check_name(fs["id"], file, fp(f"{side}.field_spell.id"), "id")


def _check_goal_references(board: Board, fp) -> None:
    """A reachability goal naming a card or a step that cannot exist would silently never be met.
    (The goal's own structure is checked by explorers.checking.parse_goals.)"""
    steps = {s.value for s in Step}
    for i, g in enumerate(board.reachable):
        card = g.get("card")
        if isinstance(card, str) and card not in board.pool:
            raise InputError(board.path, fp(f"reachable[{i}].card"), f"unknown card {card!r}")
        step = g.get("step")
        if isinstance(step, str) and step not in steps:
            raise InputError(board.path, fp(f"reachable[{i}].step"), f"unknown step {step!r} (known: {', '.join(sorted(steps))})")


def _schema_message(e: jsonschema.ValidationError) -> str:
    if e.validator == "additionalProperties":
        return e.message.replace("Additional properties are not allowed", "unknown field")
    if e.validator == "enum":
        return f"{e.instance!r} is not one of {', '.join(repr(x) for x in e.validator_value)}"
    if e.validator == "type":
        return f"expected {e.validator_value}, got {type(e.instance).__name__} {e.instance!r}"
    if e.validator == "oneOf":
        return f"expected a card name or a table with 'card', got {e.instance!r}"
    return e.message


def _build(data: dict, file: str, pool: CardPool, fp) -> Board:
    uid = 0
    ids: dict[str, int] = {}
    id_where: dict[str, str] = {}
    players: list[Player] = []
    pending_links: list[tuple[int, int, str, str, str]] = []  # (side, zone, kind, "P2 M1", field)

    def take_id(entry: Any, where: str) -> int:
        nonlocal uid
        uid += 1
        if isinstance(entry, dict) and "id" in entry:
            i = entry["id"]
            if i in ids:
                # One card in two places.
                raise InputError(file, fp(where + ".id"), f"card id {i!r} is used twice (also at {id_where[i]})")
            ids[i] = uid
            id_where[i] = fp(where)
        return uid

    def known(name: str, where: str):
        if name not in pool:
            close = [n for n in pool.names() if n.lower() == name.lower()]
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(file, fp(where + ".card"), f"unknown card {name!r}{hint}")
        return pool[name]

    for side_i, side in enumerate(("p1", "p2")):
        pd = data[side]
        monsters: list[Monster | None] = [None] * 5
        for j, m in enumerate(pd.get("monsters", [])):
            where = f"{side}.monsters[{j}]"
            c = known(m["card"], where)
            if not c.is_monster:
                raise InputError(file, fp(where + ".card"), f"{c.name!r} is a {c.kind} card, not a monster")
            z = m["zone"] - 1
            if monsters[z] is not None:
                raise InputError(file, fp(where + ".zone"), f"Monster Zone {z + 1} is already used by {monsters[z].card!r}")
            pos = Pos(m["position"])
            if c.is_token and pos is Pos.FACEDOWN:
                raise InputError(file, fp(where + ".position"), "a Token is always face-up (it cannot be face-down)")
            if m.get("set_this_turn") and pos is not Pos.FACEDOWN:
                raise InputError(file, fp(where + ".set_this_turn"), "a monster Set this turn is face-down")
            owner = m.get("owner", side_i + 1) - 1
            monsters[z] = Monster(
                take_id(m, where),
                c.name,
                owner,
                pos,
                summoned_this_turn=m.get("summoned_this_turn", False),
                set_this_turn=m.get("set_this_turn", False),
            )
        spells: list[SpellTrap | None] = [None] * 5
        for j, sp in enumerate(pd.get("spells", [])):
            where = f"{side}.spells[{j}]"
            c = known(sp["card"], where)
            if not c.is_spell_trap:
                raise InputError(file, fp(where + ".card"), f"{c.name!r} is a {c.kind} card; Spell & Trap Zones hold Spells and Traps")
            if c.subtype == "field":
                raise InputError(file, fp(where + ".card"), f"{c.name!r} is a Field Spell; put it in field_spell")
            z = sp["zone"] - 1
            if spells[z] is not None:
                raise InputError(file, fp(where + ".zone"), f"Spell & Trap Zone {z + 1} is already used by {spells[z].card!r}")
            face_up = sp.get("face_up", False)
            set_turn = sp.get("set_this_turn", False)
            if face_up and set_turn:
                raise InputError(file, fp(where), "a card cannot be both face-up and Set this turn")
            if face_up and not (c.subtype in ("continuous", "equip")):
                raise InputError(
                    file, fp(where + ".face_up"), f"a face-up {c.kind} must be Continuous or Equip; {c.name!r} is {c.subtype}"
                )
            if face_up and c.subtype == "equip" and "equipped_to" not in sp:
                raise InputError(file, fp(where + ".equipped_to"), f"face-up Equip Spell {c.name!r} needs equipped_to")
            for key in ("equipped_to", "attached_to"):
                if key in sp:
                    if not face_up:
                        raise InputError(file, fp(where + "." + key), f"only a face-up card can have {key}")
                    if key == "equipped_to" and c.subtype != "equip":
                        raise InputError(file, fp(where + "." + key), f"{c.name!r} is not an Equip Spell")
                    if key == "attached_to" and not (c.kind == "trap" and c.subtype == "continuous"):
                        raise InputError(file, fp(where + "." + key), f"{c.name!r} is not a Continuous Trap")
                    pending_links.append((side_i, z, key, sp[key], fp(where + "." + key)))
            owner = sp.get("owner", side_i + 1) - 1
            spells[z] = SpellTrap(take_id(sp, where), c.name, owner, face_up=face_up, set_this_turn=set_turn)
        field_zone = None
        if "field_spell" in pd:
            where = f"{side}.field_spell"
            fs = pd["field_spell"]
            c = known(fs["card"], where)
            if not (c.kind == "spell" and c.subtype == "field"):
                raise InputError(file, fp(where + ".card"), f"{c.name!r} is not a Field Spell")
            face_up = fs.get("face_up", True)
            if face_up and fs.get("set_this_turn", False):
                raise InputError(file, fp(where), "a card cannot be both face-up and Set this turn")
            field_zone = SpellTrap(
                take_id(fs, where), c.name, fs.get("owner", side_i + 1) - 1, face_up=face_up, set_this_turn=fs.get("set_this_turn", False)
            )
        piles: dict[str, tuple[CardRef, ...]] = {}
        for pile in ("hand", "graveyard", "banished", "deck"):
            refs = []
            for j, entry in enumerate(pd.get(pile, [])):
                where = f"{side}.{pile}[{j}]"
                name = entry if isinstance(entry, str) else entry["card"]
                if name not in pool:
                    close = [n for n in pool.names() if n.lower() == name.lower()]
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise InputError(file, fp(where), f"unknown card {name!r}{hint}")
                c = pool[name]
                if c.is_token:
                    raise InputError(file, fp(where), f"{name!r} is a Token; Tokens exist only on the field")
                owner = (entry.get("owner", side_i + 1) if isinstance(entry, dict) else side_i + 1) - 1
                if owner != side_i:
                    raise InputError(file, fp(where), f"a card in {side}'s {pile} belongs to {side} (its owner)")
                refs.append(CardRef(take_id(entry, where), name, owner))
            piles[pile] = tuple(sorted(refs, key=lambda r: (r.card, r.uid)))
        players.append(
            Player(
                lp=pd["lp"],
                monsters=tuple(monsters),
                spells=tuple(spells),
                field_zone=field_zone,
                **piles,
            )
        )
    # Resolve equip / attach references ("P2 M1").
    for side_i, z, key, ref, where in pending_links:
        tp = int(ref[1]) - 1
        tz = int(ref[4]) - 1
        target = players[tp].monsters[tz]
        if target is None:
            raise InputError(file, where, f"{ref} holds no monster")
        if not target.pos.face_up:
            raise InputError(file, where, f"{ref} is face-down; {key} needs a face-up monster")
        sp = list(players[side_i].spells)
        from dataclasses import replace

        sp[z] = replace(sp[z], **{key: target.uid})
        players[side_i] = replace(players[side_i], spells=tuple(sp))
    tp = data["turn_player"] - 1
    state = State(
        turn=data["turn"],
        turn_player=tp,
        step=Step(data.get("step", "main1")),
        players=(players[0], players[1]),
        priority=tp,
        next_uid=1000,
    )
    return Board(
        path=file,
        name=data.get("name", Path(file).stem),
        state=state,
        pool=pool,
        source=data.get("source", ""),
        description=data.get("description", ""),
        rules=tuple(data.get("rules", ())),
        reachable=tuple(data.get("reachable", ())),
        ids=ids,
    )
