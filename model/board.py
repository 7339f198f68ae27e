"""Seed boards: a documented TOML format (docs/boards.md), validated on load.

``load_board(path)`` returns a :class:`Board`: the initial :class:`State`, the card pool it uses
(the built-in pool plus any ``[[card]]`` defined in the file) and its metadata. Every problem is
an :class:`~bpcheck.errors.InputError` naming the file, the field path and the problem; nothing
is coerced (``"2500"`` is not ``2500``, ``2500.0`` is not ``2500``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from bpcheck.errors import InputError
from bpcheck.model import arith, cdb, fields, reading
from bpcheck.model.cards import Card, CardPool, card_from_db, parse_card, pool_with
from bpcheck.model.rulesets import RULESETS
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
    # The ruleset the board names (model/rulesets.py, docs/rulesets.md); None: it names none, and
    # is played under --ruleset's, else tcg (the default). A file's own field wins over --ruleset.
    ruleset: str | None = None
    symbols: tuple["NumberRange", ...] = ()  # ranges (a symbolic board: docs/boards.md, docs/proving.md)
    # The board document as read (plain TOML/JSON data, before any check turned it into a State):
    # what an engine outside bpcheck's model receives (`bpcheck.engines.interface.start_document`,
    # the protocol's `start`), so no engine ever needs the internal `state` (docs/engines.md).
    document: dict | None = field(default=None, compare=False, repr=False)
    # What a board of card-database cards may hold beyond the reference model's State (Xyz
    # materials, the Extra Monster Zones, the Pendulum Zones, the Extra Deck): engines that play
    # such cards (``--engine ocgcore``) place them; the reference model refuses a board with any.
    extras: "BoardExtras" = field(default_factory=lambda: BoardExtras())


@dataclass(frozen=True)
class BoardExtras:
    """The parts of a board the reference model's :class:`State` has no place for (docs/boards.md,
    "Xyz materials, Extra Monster Zones, Pendulum Zones, the Extra Deck"). Per player (board
    players 0 and 1): ``extra_monsters[p]``: the monsters in the Extra Monster Zones as player p
    sees them, left then right (P1's left zone is P2's right one); ``pendulum[p]``: its left and
    right Pendulum Zones (Spell & Trap Zones 1 and 5); ``extra_deck[p]``: its Extra Deck.
    ``materials``: (uid of an Xyz monster, its materials in order) for each that has any."""

    materials: tuple[tuple[int, tuple[CardRef, ...]], ...] = ()
    extra_monsters: tuple[tuple[Monster | None, Monster | None], ...] = ((None, None), (None, None))
    pendulum: tuple[tuple[SpellTrap | None, SpellTrap | None], ...] = ((None, None), (None, None))
    extra_deck: tuple[tuple[CardRef, ...], ...] = ((), ())

    def is_empty(self) -> bool:
        return self == BoardExtras()

    def materials_of(self, uid: int) -> tuple[CardRef, ...]:
        return next((m for u, m in self.materials if u == uid), ())

    def describe(self, state: State | None = None) -> list[str]:
        """What the board holds here, in words, naming each card (the reference model's refusal);
        `state`: the board's, to name each Xyz monster that has materials."""
        names = {m.uid: m.card for p in (state.players if state else ()) for m in p.monsters if m is not None}
        names.update({m.uid: m.card for side in self.extra_monsters for m in side if m is not None})
        out = []
        for host, mats in self.materials:
            out.append(f"Xyz materials ({', '.join(repr(m.card) for m in mats)} under {names.get(host, f'uid {host}')!r})")
        for p in (0, 1):
            for k, m in enumerate(self.extra_monsters[p]):
                if m is not None:
                    out.append(f"the Extra Monster Zones ({m.card!r} in P{p + 1}'s {'left' if k == 0 else 'right'} one)")
            for k, st in enumerate(self.pendulum[p]):
                if st is not None:
                    out.append(f"the Pendulum Zones ({st.card!r} in P{p + 1}'s {'left' if k == 0 else 'right'} one)")
            if self.extra_deck[p]:
                out.append(f"the Extra Deck (P{p + 1}'s: {', '.join(repr(r.card) for r in self.extra_deck[p])})")
        return out


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
    """A TOML document through the input layer (model/reading.py: depth, strict types)."""
    return reading.parse_toml_text(text, file)


def read_text(path: Path | str, display: str | None = None, kind: str = "board") -> str:
    """A file's text through the input layer (regular files only, size limit, UTF-8)."""
    return reading.read_text(path, display or str(path), kind)


def load_board(path: Path | str, display: str | None = None, symbolic: bool = False, cards_db: Any = None, ruleset: str | None = None) -> Board:
    """`symbolic`: accept ranges (``bpcheck prove``); otherwise a board with a range is refused
    with a message pointing at ``bpcheck prove`` (nothing picks a value silently). `cards_db`: a
    card database (a path or a :class:`~bpcheck.model.cdb.CardDB`) whose cards the board may name
    besides the pool's (docs/boards.md, "Cards of a card database"). `ruleset`: the ruleset of a
    board that names none (``--ruleset``, docs/rulesets.md)."""
    display = display or str(path)
    board = board_from_dict(parse_toml(read_text(path, display), display), display, symbolic=symbolic, cards_db=cards_db)
    return with_default_ruleset(board, ruleset)


def with_default_ruleset(board: Board, ruleset: str | None) -> Board:
    """`board` played under `ruleset` (``--ruleset``) unless it names its own: a file's
    ``ruleset`` field wins (docs/rulesets.md). An unknown name is an InputError naming --ruleset."""
    if ruleset is None or board.ruleset is not None:
        return board
    if ruleset not in RULESETS:
        raise InputError("--ruleset", "", f"unknown ruleset {ruleset!r} (known: {', '.join(RULESETS)})")
    return replace(board, ruleset=ruleset)


def board_from_dict(data: dict, file: str, field_prefix: str = "", symbolic: bool = False, cards_db: Any = None) -> Board:
    def fp(p: str) -> str:
        return f"{field_prefix}.{p}" if field_prefix and p else (field_prefix or p)

    if not isinstance(data, dict):
        raise InputError(file, field_prefix, f"expected a table, got {fields.type_name(data)}")
    reading.check_tree(data, file, field_prefix)
    _reject_floats(data, file, field_prefix)
    own_cards = _own_cards(data, file, fp)
    data, db_cards = resolve_card_refs(data, file, fp, pool_with(own_cards), cards_db)
    document = data
    data, numbers = _board_numbers(data, file, fp, symbolic)
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
                raise InputError(file, fp(fields.field_path(where, extra[0])), f"unknown field (allowed: {', '.join(sorted(known))})")
        if e.validator == "required" and isinstance(e.instance, dict):  # name the missing field itself
            missing = next((k for k in e.validator_value if k not in e.instance), None)
            if missing is not None:
                raise InputError(file, fp(fields.field_path(where, missing)), "missing required field")
        raise InputError(file, fp(where), _schema_message(e))
    pool = pool_with(own_cards + db_cards, [fp(f"card[{i}]") for i in range(len(own_cards))] + [f"<card database: {c.name}>" for c in db_cards])
    _check_names(data, file, fp)
    if "ruleset" in data and data["ruleset"] not in RULESETS:  # model/rulesets.py
        raise InputError(file, fp("ruleset"), f"unknown ruleset {data['ruleset']!r} (known: {', '.join(RULESETS)})")
    if "rules" in data:  # a board cites rules as a scenario does: each must be in docs/rules.md
        fields.check_rule_ids(data["rules"], file, fp("rules"))
    board = _apply_numbers(_build(data, file, pool, fp), numbers, file)
    _check_goal_references(board, fp)
    return replace(board, document=document)


def _own_cards(data: dict, file: str, fp) -> list[Card]:
    """The board's own ``[[card]]`` tables (docs/cards.md)."""
    own = data.get("card", [])
    if not isinstance(own, list):
        raise InputError(file, fp("card"), f"expected array, got {fields.type_name(own)}")
    cards = [parse_card(c, file, fp(f"card[{i}]")) for i, c in enumerate(own)]
    pool_with(cards, [fp(f"card[{i}]") for i in range(len(cards))])  # names and passcodes unique, references known
    return cards


# Where a board names cards: (zone key, whether its entries may be plain card references).
CARD_PLACES = (("monsters", False), ("extra_monsters", False), ("spells", False), ("pendulum", False), ("hand", True), ("graveyard", True),
               ("banished", True), ("deck", True), ("extra_deck", True))
MONSTER_PLACES = ("monsters", "extra_monsters")  # entries that may hold `materials` (a list of pile entries)


def _is_passcode(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def resolve_card_refs(data: dict, file: str, fp, pool: CardPool, cards_db: Any) -> tuple[dict, list[Card]]:
    """Every card a board names, by name or by passcode, as its name in the run's pool: a pool
    card (or one of the board's own ``[[card]]`` tables) first, by name or passcode, then a card
    of the card database ``cards_db`` (its facts from its ``datas`` row: model/cards.py
    ``card_from_db``). Returns the board's data with each passcode replaced by the card's name
    (a copy when anything changed) and the database cards it names, in order of first mention.
    A card in neither is an InputError naming the field, with near names offered. Malformed
    entries are left as they are for the schema to report."""
    by_code: dict[int, str] = {}
    for c in pool:
        try:
            by_code.setdefault(int(c.passcode), c.name)
        except ValueError:
            pass
    db_cards: dict[str, Card] = {}
    state = {"db": None, "changed": False}

    def database() -> cdb.CardDB | None:
        if cards_db is None:
            return None
        if state["db"] is None:
            state["db"] = cards_db if isinstance(cards_db, cdb.CardDB) else cdb.open_db(cards_db)
        return state["db"]

    def unknown(ref: Any, where: str, why: str = "") -> InputError:
        shown = repr(ref) if isinstance(ref, str) else str(ref)
        near = [n for n in pool.names() if isinstance(ref, str) and n.lower() == ref.lower()]
        db = database()
        if db is None:
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            more = "" if near else " (a card of a card database: --cards-db FILE)"
            what = "no card of the pool has this passcode" if _is_passcode(ref) else ""
            return InputError(file, fp(where), f"unknown card {shown}{': ' + what if what else ''}{hint}{more}")
        if isinstance(ref, str):
            try:
                near += [n for n in db.did_you_mean(ref) if n not in near]
            except InputError:
                pass
        hint = f" (did you mean {', '.join(repr(n) for n in near[:3])}?)" if near else ""
        return InputError(file, fp(where), f"unknown card {shown}: not in the card pool nor in the card database {db.path}{why}{hint}")

    def resolve(ref: Any, where: str) -> Any:
        if isinstance(ref, str):
            fields.check_name(ref, file, fp(where), "card name")
            if ref in pool:
                return ref
        elif _is_passcode(ref):
            if ref in by_code:
                return by_code[ref]
        else:
            return ref  # not a card reference: the schema says what is wrong
        db = database()
        if db is None:
            raise unknown(ref, where)
        try:
            row = db.card(ref, where) if isinstance(ref, str) else db.get(ref)
        except InputError as e:
            if e.file != db.path or e.field != where:
                raise  # the database itself cannot be read: its own error
            row = None
        if row is None:
            raise unknown(ref, where)
        if row.alias and row.alias in by_code:  # an alternate artwork of a pool card
            return by_code[row.alias]
        if row.code in by_code:
            return by_code[row.code]
        if row.alias and db.get(row.alias) is not None:
            row = db.get(row.alias)
        if row.name in pool:  # a database card with a pool card's name and another passcode
            raise InputError(file, fp(where), f"card {ref!r} of {db.path} is {row.name!r} ({row.code}), whose name the pool gives another card (passcode {pool[row.name].passcode})")
        if row.name not in db_cards:
            try:
                db_cards[row.name] = card_from_db(row)
            except InputError as e:
                raise InputError(file, fp(where), e.problem) from None
        return row.name

    out = dict(data)
    for side in ("p1", "p2"):
        pd = data.get(side)
        if not isinstance(pd, dict):
            continue
        new_pd = dict(pd)
        for key, plain in CARD_PLACES:
            entries = pd.get(key)
            if not isinstance(entries, list):
                continue
            new = []
            for j, e in enumerate(entries):
                where = f"{side}.{key}[{j}]"
                if plain and (isinstance(e, str) or _is_passcode(e)):
                    r = resolve(e, where)
                    state["changed"] |= r != e
                    new.append(r)
                elif isinstance(e, dict) and "card" in e:
                    r = resolve(e["card"], where + ".card" if not plain else where)
                    state["changed"] |= r != e["card"]
                    e = {**e, "card": r}
                    if key in MONSTER_PLACES and isinstance(e.get("materials"), list):
                        mats = []
                        for k, x in enumerate(e["materials"]):
                            mw = f"{where}.materials[{k}]"
                            if isinstance(x, str) or _is_passcode(x):
                                r = resolve(x, mw)
                                state["changed"] |= r != x
                                mats.append(r)
                            elif isinstance(x, dict) and "card" in x:
                                r = resolve(x["card"], mw)
                                state["changed"] |= r != x["card"]
                                mats.append({**x, "card": r})
                            else:
                                mats.append(x)
                        e["materials"] = mats
                    new.append(e)
                else:
                    new.append(e)
            new_pd[key] = new
        fs = pd.get("field_spell")
        if isinstance(fs, dict) and "card" in fs:
            r = resolve(fs["card"], f"{side}.field_spell.card")
            state["changed"] |= r != fs["card"]
            new_pd["field_spell"] = {**fs, "card": r}
        out[side] = new_pd
    return (out if state["changed"] else data), list(db_cards.values())


def _check_names(data: dict, file: str, fp) -> None:
    """Names and ids people read in reports hold no control characters (docs/bad-input.md)."""
    if "name" in data:
        fields.check_name(data["name"], file, fp("name"), "board name")
    for key in ("source", "description"):  # prose shown in every report: no control characters either
        if isinstance(data.get(key), str):
            fields.check_text(data[key], file, fp(key), key)
    for i, g in enumerate(data.get("reachable", [])):
        if isinstance(g, dict) and isinstance(g.get("id"), str):
            fields.check_name(g["id"], file, fp(f"reachable[{i}].id"), "goal id")
        if isinstance(g, dict) and isinstance(g.get("description"), str):
            fields.check_text(g["description"], file, fp(f"reachable[{i}].description"), "description")
    def check_entry(e: Any, where: str) -> None:
        if isinstance(e, str):
            fields.check_name(e, file, fp(where), "card name")
            return
        fields.check_name(e["card"], file, fp(where + ".card"), "card name")
        if "id" in e:
            fields.check_name(e["id"], file, fp(where + ".id"), "id")

    for side in ("p1", "p2"):
        for zone, _plain in CARD_PLACES:
            for j, e in enumerate(data[side].get(zone, [])):
                where = f"{side}.{zone}[{j}]"
                check_entry(e, where)
                if zone in MONSTER_PLACES:
                    for k, x in enumerate(e.get("materials", [])):
                        check_entry(x, f"{where}.materials[{k}]")
        fs = data[side].get("field_spell")
        if fs is not None:
            fields.check_name(fs["card"], file, fp(f"{side}.field_spell.card"), "card name")
            if "id" in fs:
                fields.check_name(fs["id"], file, fp(f"{side}.field_spell.id"), "id")


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

    hosts: list[tuple[int, str, Any, int, dict]] = []  # (side, field, card, uid, entry) of monsters that list materials

    def monster(m: dict, where: str, side_i: int) -> tuple[Any, Monster]:
        c = known(m["card"], where)
        if not c.is_monster:
            raise InputError(file, fp(where + ".card"), f"{c.name!r} is a {c.kind} card, not a monster")
        pos = Pos(m["position"])
        if c.frame == "Link" and pos is not Pos.ATK:
            raise InputError(file, fp(where + ".position"), f"{c.name!r} is a Link monster: always in face-up Attack Position")
        if c.is_token and pos is Pos.FACEDOWN:
            raise InputError(file, fp(where + ".position"), "a Token is always face-up (it cannot be face-down)")
        if m.get("set_this_turn") and pos is not Pos.FACEDOWN:
            raise InputError(file, fp(where + ".set_this_turn"), "a monster Set this turn is face-down")
        if "materials" in m and not c.has_type(cdb.TYPE_XYZ):  # (not modelled: docs/boards.md, "Xyz materials")
            raise InputError(file, fp(where + ".materials"), f"{c.name!r} is not an Xyz monster: only an Xyz monster has materials")
        owner = m.get("owner", side_i + 1) - 1
        mon = Monster(
            take_id(m, where),
            c.name,
            owner,
            pos,
            summoned_this_turn=m.get("summoned_this_turn", False),
            set_this_turn=m.get("set_this_turn", False),
        )
        if m.get("materials"):
            hosts.append((side_i, where, c, mon.uid, m))
        return c, mon

    for side_i, side in enumerate(("p1", "p2")):
        pd = data[side]
        monsters: list[Monster | None] = [None] * 5
        for j, m in enumerate(pd.get("monsters", [])):
            where = f"{side}.monsters[{j}]"
            z = m["zone"] - 1
            if monsters[z] is not None:
                known(m["card"], where)
                raise InputError(file, fp(where + ".zone"), f"Monster Zone {z + 1} is already used by {monsters[z].card!r}")
            monsters[z] = monster(m, where, side_i)[1]
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
                if c.is_extra_deck and pile in ("hand", "deck"):
                    raise InputError(file, fp(where), f"{name!r} is {'an' if c.frame == 'Xyz' else 'a'} {c.frame} monster: it goes back to the Extra Deck, never to the {'hand' if pile == 'hand' else 'Main Deck'}")
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
    extras = _build_extras(data, file, fp, pool, players, hosts, monster, take_id)
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
        ruleset=data.get("ruleset"),
        extras=extras,
    )


def _build_extras(data: dict, file: str, fp, pool: CardPool, players: list[Player], hosts: list, monster, take_id) -> BoardExtras:
    """The Extra Monster Zones, the Pendulum Zones, the Extra Deck and the Xyz materials of a board
    (docs/boards.md), numbered after every other card of both players (so a board without them
    keeps its uids): for P1 then P2, the Extra Monster Zones (each monster, then its materials),
    the Pendulum Zones, the Extra Deck; then the materials of the Main Monster Zones' Xyz
    monsters, P1's then P2's. Every fact about a card is its database row's (``datas.type``)."""
    emz: list[list[Monster | None]] = [[None, None], [None, None]]
    emz_where: dict[tuple[int, int], str] = {}
    pend: list[list[SpellTrap | None]] = [[None, None], [None, None]]
    extra: list[tuple[CardRef, ...]] = [(), ()]
    materials: list[tuple[int, tuple[CardRef, ...]]] = []
    mmz_hosts = list(hosts)

    def take_materials(host: tuple) -> None:
        side_i, where, c, uid, m = host
        refs = []
        for k, x in enumerate(m["materials"]):
            mw = f"{where}.materials[{k}]"
            name = x if isinstance(x, str) else x["card"]
            mc = pool[name]
            if mc.is_token:  # (not modelled: docs/boards.md, "Xyz materials")
                raise InputError(file, fp(mw), f"{name!r} is a Token: a Token cannot be an Xyz material")
            owner = (x.get("owner", side_i + 1) if isinstance(x, dict) else side_i + 1) - 1
            refs.append(CardRef(take_id(x, mw), name, owner))
        materials.append((uid, tuple(refs)))

    for side_i, side in enumerate(("p1", "p2")):
        pd = data[side]
        for key, n, what in (("extra_monsters", 2, "Extra Monster Zones"), ("pendulum", 2, "Pendulum Zones")):
            if len(pd.get(key, [])) > n:
                raise InputError(file, fp(f"{side}.{key}"), f"there are {n} {what}; {len(pd[key])} cards given")
        for j, m in enumerate(pd.get("extra_monsters", [])):
            where = f"{side}.extra_monsters[{j}]"
            z = m["zone"] - 1
            # (not modelled, docs/boards.md:) the two Extra Monster Zones are shared: P1's left one is P2's right one
            same = emz_where.get((side_i, z)) or emz_where.get((1 - side_i, 1 - z))
            if same is not None:
                raise InputError(file, fp(where + ".zone"), f"this Extra Monster Zone is already used by the card at {same} (P1's left Extra Monster Zone is P2's right one)")
            c = pool[m["card"]]
            if c.is_monster and not (c.is_extra_deck or c.has_type(cdb.TYPE_PENDULUM)):  # (not modelled: docs/boards.md, "Extra Monster Zones")
                raise InputError(file, fp(where + ".card"), f"{c.name!r} is a Main Deck monster: an Extra Monster Zone holds a monster Summoned from the Extra Deck (Fusion, Synchro, Xyz, Link, or a Pendulum monster)")
            n_hosts = len(hosts)
            c, mon = monster(m, where, side_i)
            emz[side_i][z] = mon
            emz_where[(side_i, z)] = fp(where)
            if len(hosts) > n_hosts:
                take_materials(hosts[-1])
        for j, e in enumerate(pd.get("pendulum", [])):
            where = f"{side}.pendulum[{j}]"
            c = pool[e["card"]]
            if not c.has_type(cdb.TYPE_PENDULUM):  # (not modelled: docs/boards.md, "Pendulum Zones")
                raise InputError(file, fp(where + ".card"), f"{c.name!r} is not a Pendulum monster: a Pendulum Zone holds a Pendulum monster card")
            z = e["zone"] - 1
            if pend[side_i][z] is not None:
                raise InputError(file, fp(where + ".zone"), f"the {'left' if z == 0 else 'right'} Pendulum Zone is already used by {pend[side_i][z].card!r}")
            st_zone = 0 if z == 0 else 4  # (not modelled, docs/boards.md:) the Pendulum Zones are Spell & Trap Zones 1 and 5
            held = players[side_i].spells[st_zone]
            if held is not None:
                raise InputError(file, fp(where + ".zone"), f"the {'left' if z == 0 else 'right'} Pendulum Zone is Spell & Trap Zone {st_zone + 1}, already used by {held.card!r}")
            pend[side_i][z] = SpellTrap(take_id(e, where), c.name, e.get("owner", side_i + 1) - 1, face_up=True)
        refs = []
        for j, entry in enumerate(pd.get("extra_deck", [])):
            where = f"{side}.extra_deck[{j}]"
            name = entry if isinstance(entry, str) else entry["card"]
            c = pool[name]
            if not (c.is_extra_deck or c.has_type(cdb.TYPE_PENDULUM)):  # (not modelled: docs/boards.md, "Extra Deck")
                raise InputError(file, fp(where), f"{name!r} is a Main Deck card: the Extra Deck holds Fusion, Synchro, Xyz and Link monsters (and Pendulum monsters, face-up)")
            owner = (entry.get("owner", side_i + 1) if isinstance(entry, dict) else side_i + 1) - 1
            if owner != side_i:
                raise InputError(file, fp(where), f"a card in {side}'s extra_deck belongs to {side} (its owner)")
            refs.append(CardRef(take_id(entry, where), name, owner))
        extra[side_i] = tuple(sorted(refs, key=lambda r: (r.card, r.uid)))
    for h in mmz_hosts:
        take_materials(h)
    return BoardExtras(
        materials=tuple(materials),
        extra_monsters=tuple((a, b) for a, b in emz),
        pendulum=tuple((a, b) for a, b in pend),
        extra_deck=tuple(extra),
    )


# ---------------------------------------------------------------------------------------------
# Numbers in a board: a monster's `atk` / `def` and a player's `lp` may be a range (a symbolic
# board, docs/boards.md "Ranges"; `bpcheck prove`, docs/proving.md). A monster's `atk` / `def`
# (a whole number or a range) stands for its card's printed ATK/DEF on this board: every copy of
# the card shares it, and modifiers apply on top as usual.
# ---------------------------------------------------------------------------------------------

RANGE_KEYS = ("min", "max", "step")


@dataclass(frozen=True)
class NumberRange:
    """One symbolic number of a board: every multiple of `step` from `min` to `max`."""

    name: str  # the z3 symbol, e.g. "atk[Battle Ox]", "lp[P1]"
    label: str  # in words, e.g. "ATK of Battle Ox"
    field: str  # where the board gives it, e.g. "p1.monsters[0].atk"
    min: int
    max: int
    step: int

    def describe(self) -> str:
        return f"{self.label} in {self.min}..{self.max}" + (f" (step {self.step})" if self.step != 1 else "")


def _board_numbers(data: dict, file: str, fp, symbolic: bool) -> tuple[dict, dict]:
    """Validate and take out the ranges and the ATK/DEF overrides of a board's dict.

    Returns a copy of `data` in which each range is replaced by its minimum (so the schema and
    the board checks see an ordinary board) and what to apply after building it:
    ``{"cards": {card name: {"atk"|"def_": int | NumberRange}}, "lp": {side: NumberRange},
    "ranges": [NumberRange]}``."""
    out = {"cards": {}, "lp": {}, "ranges": []}
    sides = [data.get(side) for side in ("p1", "p2")]
    if not any(
        isinstance(pd, dict)
        and (isinstance(pd.get("lp"), dict) or any(isinstance(m, dict) and ("atk" in m or "def" in m) for m in (pd["monsters"] if isinstance(pd.get("monsters"), list) else ())))
        for pd in sides
    ):
        return data, out  # an ordinary board: nothing to take out
    data = copy.deepcopy(data)
    where_card: dict[tuple[str, str], tuple[str, Any]] = {}

    def parse_range(v: Any, where: str, lo_min: int) -> tuple[int, int, int] | None:
        if not isinstance(v, dict):
            return None
        for k in v:
            if k not in RANGE_KEYS:
                raise InputError(file, fp(f"{where}.{k}"), f"unknown field in a range (allowed: {', '.join(RANGE_KEYS)})")
        for k in ("min", "max"):
            if k not in v:
                raise InputError(file, fp(where), f"a range needs '{k}', e.g. {{ min = 0, max = 5000, step = 100 }}")
        for k in RANGE_KEYS:
            if k in v and (not isinstance(v[k], int) or isinstance(v[k], bool)):
                raise InputError(file, fp(f"{where}.{k}"), f"expected integer, got {type(v[k]).__name__} {v[k]!r}")
        lo, hi, step = v["min"], v["max"], v.get("step", 1)
        if lo < lo_min:
            raise InputError(file, fp(f"{where}.min"), f"{lo} is less than the minimum of {lo_min}")
        if hi < lo:
            raise InputError(file, fp(f"{where}.max"), f"max {hi} is less than min {lo}")
        if step < 1:
            raise InputError(file, fp(f"{where}.step"), f"step must be at least 1, got {step}")
        if (hi - lo) % step:
            raise InputError(file, fp(f"{where}.max"), f"max {hi} is not min {lo} plus a multiple of step {step}")
        return lo, hi, step

    def refuse(where: str) -> None:
        raise InputError(
            file,
            fp(where),
            "a range makes this board symbolic, and this command runs concrete boards only: prove it with "
            "`bpcheck prove FILE`, or write one concrete board per numeric case with `bpcheck prove --concretize DIR FILE`",
        )

    for side_i, side in enumerate(("p1", "p2")):
        pd = data.get(side)
        if not isinstance(pd, dict):
            continue
        r = parse_range(pd.get("lp"), f"{side}.lp", 1)
        if r is not None:
            if not symbolic:
                refuse(f"{side}.lp")
            nr = NumberRange(f"lp[P{side_i + 1}]", f"LP of P{side_i + 1}", fp(f"{side}.lp"), *r)
            out["lp"][side_i] = nr
            out["ranges"].append(nr)
            pd["lp"] = r[0]
        mons = pd.get("monsters")
        if not isinstance(mons, list):
            continue
        for j, m in enumerate(mons):
            if not isinstance(m, dict) or not isinstance(m.get("card"), str):
                continue
            for key, attr, word in (("atk", "atk", "ATK"), ("def", "def_", "DEF")):
                if key not in m:
                    continue
                where = f"{side}.monsters[{j}].{key}"
                v = m.pop(key)
                r = parse_range(v, where, 0)
                if r is None:
                    if not isinstance(v, int) or isinstance(v, bool):
                        raise InputError(file, fp(where), f"expected integer or a range {{ min, max, step }}, got {type(v).__name__} {v!r}")
                    if v < 0:
                        raise InputError(file, fp(where), f"{v} is less than the minimum of 0")
                    val: Any = v
                else:
                    if not symbolic:
                        refuse(where)
                    val = NumberRange(f"{key}[{m['card']}]", f"{word} of {m['card']}", fp(where), *r)
                prev = where_card.get((m["card"], attr))
                if prev is not None:
                    if prev[1] != val:
                        raise InputError(
                            file, fp(where), f"{m['card']!r} already has {key} {_show(prev[1])} at {prev[0]}; all copies of a card share its {word}"
                        )
                    continue
                where_card[(m["card"], attr)] = (fp(where), val)
                out["cards"].setdefault(m["card"], {})[attr] = val
                if isinstance(val, NumberRange):
                    out["ranges"].append(val)
    return data, out


def _show(v: Any) -> str:
    return f"{{ min = {v.min}, max = {v.max}, step = {v.step} }}" if isinstance(v, NumberRange) else str(v)


def _apply_numbers(board: Board, numbers: dict, file: str) -> Board:
    """Put the overrides into the board's own card pool and the LP ranges into its state."""
    if not numbers["cards"] and not numbers["lp"]:
        return board


    def value(v):
        return arith.symbol(v.name, v.min, v.max) if isinstance(v, NumberRange) else v

    cards = []
    for c in board.pool:
        over = numbers["cards"].get(c.name)
        if over:
            c = replace(c, **{attr: value(v) for attr, v in over.items()})
        cards.append(c)
    players = list(board.state.players)
    for side, nr in numbers["lp"].items():
        players[side] = replace(players[side], lp=value(nr))
    state = replace(board.state, players=(players[0], players[1]))
    return replace(board, pool=CardPool(cards), state=state, symbols=tuple(numbers["ranges"]))
