"""`bpcheck sweep`: every card of a card database (or a query of it) placed on the boards its
profile makes relevant, each board explored to a bound on an engine and judged by every
registered invariant; a verdict per card (docs/sweep.md).

The pieces:

- :func:`select_cards`: the cards a sweep covers (every card of the database, or names,
  passcodes, ``--type``, files of passcodes), in passcode order;
- :func:`card_boards`: the board documents of one card (:data:`SHAPES`: in the hand, Set, face-up
  on either side, attacking and attacked, in the GY), chosen from its data and its profile
  (:mod:`bpcheck.model.profile`) and written with :mod:`bpcheck.harness.board_writer`, so that any
  finding is reproduced with ``bpcheck check BOARD --engine ENGINE --cards-db DB``;
- :class:`SweepRun`: the run. Cards go in batches; each batch's boards are one
  :class:`bpcheck.harness.check.CheckRun` (``-j N``: its worker processes, harness/jobs.py),
  every registered invariant on (the invariants added later are picked up by themselves); after
  each batch the result document is written (``--json``), which ``--resume`` reads back: cards
  already judged are not judged again.

Verdicts: ``finding`` (a board of the card failed, not listed by ``--baseline``), ``no playable
board`` (the engine refused every board, or none could be built), ``not judged`` (no finding, and
the card's profile is unknown where the invariants need it), ``clean``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import tempfile
import tomllib
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bpcheck import __version__
from bpcheck.errors import InputError
from bpcheck.explorers.cluster import active as cluster_active
from bpcheck.harness.board_writer import write_board
from bpcheck.harness.check import CheckOptions, CheckRun
from bpcheck.harness import lifecycle
from bpcheck.harness.feedback import run_progress
from bpcheck.harness.jobs import deadline_reason
from bpcheck.model import cdb as C
from bpcheck.model.board import board_from_dict
from bpcheck.model.cdb import Card, open_db
from bpcheck.model.profile import CardProfile, profile
from bpcheck.reports.outputs import atomic_write_text, prepare_file
from bpcheck.reports.sweep_html import sweep_html

SCHEMA = 1  # the --json document's version (docs/sweep.md, "The result document")
VERDICTS = ("finding", "no playable board", "not judged", "clean")
OVERLAY_ENV = "OCG_SCRIPTS_OVERLAY"  # engines/ocgcore/engine.py: script folders searched first

# Companion cards: Normal Monsters of the pool (no effects of their own), so that a card's board
# has an attacker and something to attack.
# every board's Decks: a card an effect can draw ("Dark Mimic LV3": "Draw 1 card"; with an empty
# Deck the duel would end without 0 LP, 004:10), never one a search could add by its kind
DECK_SIZE = 3
ATTACKER = "Battle Ox"  # 1700 ATK
TARGET = "Mokey Mokey"  # 300 ATK: battle damage when it is attacked

TYPES = {"monster": C.TYPE_MONSTER, "spell": C.TYPE_SPELL, "trap": C.TYPE_TRAP, "effect": C.TYPE_EFFECT, "normal": C.TYPE_NORMAL,
         "flip": C.TYPE_FLIP, "quick-play": C.TYPE_QUICKPLAY, "continuous": C.TYPE_CONTINUOUS, "counter": C.TYPE_COUNTER,
         "equip": C.TYPE_EQUIP, "field": C.TYPE_FIELD, "xyz": C.TYPE_XYZ, "link": C.TYPE_LINK, "synchro": C.TYPE_SYNCHRO,
         "fusion": C.TYPE_FUSION, "ritual": C.TYPE_RITUAL, "pendulum": C.TYPE_PENDULUM}


@dataclass
class SweepOptions:
    """What a sweep is given (the command line's options, by the same names)."""

    engine: str | None = "ocgcore"
    cards_db: str | None = None
    queries: list[str] = field(default_factory=list)
    type: str | None = None
    max_states: int = 2000
    timeout: float | None = None  # --timeout S: seconds per board (a board stopped there is inconclusive, not judged further)
    jobs: int | None = 1
    cluster: str | None = None  # --cluster ADDRESS: each batch's boards on Ray (docs/cluster.md)
    batch: int = 16  # cards per CheckRun (and per write of --json)
    invariants: str | None = None
    baseline: str | None = None
    json: str | None = None
    report: str | None = None
    boards: str | None = None
    resume: bool = False
    scripts_overlay: str | None = None
    quiet: bool = False

    @classmethod
    def from_namespace(cls, ns) -> "SweepOptions":
        return cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls) if hasattr(ns, f.name)})


# ---------------------------------------------------------------------------------------------
# which cards
# ---------------------------------------------------------------------------------------------


def select_cards(db_path: str, queries: list[str], type_: str | None = None) -> list[Card]:
    """The cards of a sweep, by passcode: every card of the database without a query; else the
    named ones (a name, a passcode, or ``@FILE`` / an existing ``.txt`` file of passcodes or names,
    one a line, ``#`` comments), all filtered by ``--type`` (one or more of :data:`TYPES`, joined
    by ``,``: a card has all of them)."""
    db = open_db(db_path)
    if queries:
        chosen: dict[int, Card] = {}
        for q in queries:
            for key, where in _query_keys(q):
                card = db.card(key, where)
                chosen[card.code] = card
        cards = list(chosen.values())
    else:
        cards = list(db)
    if type_:
        bits = 0
        for part in (p.strip().lower() for p in type_.split(",") if p.strip()):
            if part not in TYPES:
                raise InputError("--type", "", f"unknown type {part!r} (known: {', '.join(TYPES)})")
            bits |= TYPES[part]
        cards = [c for c in cards if c.type & bits == bits]
    return sorted(cards, key=lambda c: c.code)


def _query_keys(q: str) -> list[tuple[str, str]]:
    path = q[1:] if q.startswith("@") else q
    if q.startswith("@") or (path.endswith(".txt") and os.path.isfile(path)):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise InputError(path, "", f"cannot read the list of cards: {e.strerror or e}") from None
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if line:
                out.append((line, f"{path}: line {n}"))
        return out
    return [(q, "card")]


# ---------------------------------------------------------------------------------------------
# which boards
# ---------------------------------------------------------------------------------------------

# shape -> what it exercises. Every board: turn 2, player 1's turn (the Battle Phase is played by
# player 1), player 1's ATTACKER against player 2's TARGET unless the card takes their place.
SHAPES = {
    "attacker": "face-up Attack Position on the turn player's side: it attacks",
    "attacked": "face-up Attack Position on the opponent's side: it is attacked",
    "set-monster": "Set (face-down Defense Position) on the opponent's side: attacked and flipped",
    "hand-opponent": "in the opponent's hand: a hand effect during the turn player's attack",
    "hand-own": "in the turn player's hand during its own Battle Phase",
    "gy-opponent": "in the opponent's GY during a battle",
    "set-opponent": "Set in the opponent's Spell & Trap Zone: activated during the turn player's attack",
    "set-own": "Set in the turn player's Spell & Trap Zone during its Battle Phase",
    "face-up-opponent": "face-up on the opponent's side (a Continuous, Equip or Field card)",
    "face-up-own": "face-up on the turn player's side (a Continuous, Equip or Field card)",
    "with-companion": "attacking, beside the card its text names (a monster face-up, a Field Spell in the Field Zone)",
    "pendulum-own": "in the turn player's left Pendulum Zone during its Battle Phase",
    "pendulum-opponent": "in the opponent's left Pendulum Zone during the turn player's attack",
}
# On every shape that places it face-up on the field: an Xyz monster has 2 materials (Normal
# Monsters whose Level is its Rank, :func:`xyz_materials`); a Link monster stands in an Extra
# Monster Zone (its controller's left one), where a Link monster is Summoned from the Extra Deck.
XYZ_MATERIALS = 2

QUOTED_RX = re.compile(r'"([^"]+)"')


def companion(card: Card, db) -> Card | None:
    """The first card the text names in quotes ("while Umi is on the field", "if you control
    'Dark Blade'") that the database has (by exact name), other than the card itself: a monster
    that can stand in a Monster Zone (not a Token) or a Field Spell; None otherwise (an archetype
    name, a card of another kind)."""
    for name in QUOTED_RX.findall(card.text):
        if name == card.name:
            continue
        if not name.strip().isdigit() and not db.has_name(name):  # most quoted names are archetypes:
            continue  # no card, and no near names looked for (db.card's error offers them)
        try:
            other = db.card(name)
        except InputError:
            continue
        if other.code == card.code:
            continue
        if (other.kind == "monster" and not other.has(C.TYPE_TOKEN)) or (other.kind == "spell" and other.has(C.TYPE_FIELD)):
            return other
    return None


_NORMALS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # card database -> {Level: Normal Monsters' passcodes}


def xyz_materials(card: Card, db) -> list[int]:
    """The materials an Xyz monster's boards give it: the first :data:`XYZ_MATERIALS` Normal
    Monsters (type Monster + Normal and nothing else: no effect of their own), by passcode, whose
    Level is its Rank; none when the database has too few (then it stands without materials)."""
    if not card.has(C.TYPE_XYZ):
        return []
    by_level = _NORMALS.get(db)
    if by_level is None:
        by_level = {}
        for c in db:
            if c.type == C.TYPE_MONSTER | C.TYPE_NORMAL and not c.alias:
                by_level.setdefault(c.level, []).append(c.code)
        for codes in by_level.values():
            codes.sort()
        _NORMALS[db] = by_level
    codes = by_level.get(card.level, [])
    return codes[:XYZ_MATERIALS] if len(codes) >= XYZ_MATERIALS else []


def shapes_for(card: Card, prof: CardProfile | None, partner: Card | None = None) -> list[str]:
    """The situations a card is placed in, from its data and profile: a monster attacks and is
    attacked; Set, in a hand or in the GY only where an effect of it may be activated in a Battle
    Phase (or it is a Flip monster); a Spell/Trap is Set on either side, face-up where it stays."""
    if card.kind == "monster":
        if card.has(C.TYPE_TOKEN):
            return []
        out = ["attacker", "attacked"]
        relevant = prof is not None and prof.battle_relevant
        if card.has(C.TYPE_FLIP) or relevant:
            if not card.is_extra_deck:
                out.append("set-monster")
        if relevant and not card.is_extra_deck:
            out += ["hand-opponent", "hand-own"]
        if relevant and re.search(r"\b(GY|Graveyard)\b", card.text):
            out.append("gy-opponent")
        if partner is not None:
            out.append("with-companion")
        if card.has(C.TYPE_PENDULUM):
            out += ["pendulum-own", "pendulum-opponent"]
        return out
    if card.kind in ("spell", "trap"):
        if card.has(C.TYPE_FIELD):
            return ["face-up-opponent", "face-up-own"]
        out = ["set-opponent", "set-own"]
        if card.has(C.TYPE_CONTINUOUS) or card.has(C.TYPE_EQUIP):
            out += ["face-up-opponent", "face-up-own"]
        return out
    return []


def board_document(card: Card, shape: str, partner: Card | None = None, materials: list[int] | None = None) -> dict:
    """The board document of ``card`` in ``shape`` (:data:`SHAPES`); ``partner``: the
    ``with-companion`` shape's companion (:func:`companion`); ``materials``: an Xyz monster's
    (:func:`xyz_materials`), under it wherever it is face-up on the field."""
    me: object = card.code
    p1: dict = {"lp": 8000, "monsters": [{"zone": 1, "card": ATTACKER, "position": "attack"}], "deck": [ATTACKER] * DECK_SIZE}
    p2: dict = {"lp": 8000, "monsters": [{"zone": 1, "card": TARGET, "position": "attack"}], "deck": [TARGET] * DECK_SIZE}

    def place(side: dict, position: str, others: list | None = None) -> None:
        """The swept card face-up on `side`: a Link monster in its Extra Monster Zone 1, any other
        in Main Monster Zone 1 (an Xyz monster with its materials); `others` stay beside it."""
        entry: dict = {"zone": 1, "card": me, "position": position}
        if materials and position != "facedown":
            entry["materials"] = list(materials)
        beside = [{"zone": i + 2, **o} for i, o in enumerate(others or [])]
        if card.has(C.TYPE_LINK):
            side["extra_monsters"] = [entry]
            side.pop("monsters", None)
            if beside:
                side["monsters"] = beside
        else:
            side["monsters"] = [entry] + beside

    if shape == "attacker":  # a target in each position: piercing, and damage to either player
        place(p1, "attack")
        p2["monsters"].append({"zone": 2, "card": TARGET, "position": "defense"})
    elif shape == "with-companion" and partner is not None:
        if partner.kind == "monster":
            place(p1, "attack", [{"card": partner.code, "position": "attack"}])
        else:
            place(p1, "attack")
            p1["field_spell"] = {"card": partner.code}
    elif shape == "attacked":
        place(p2, "attack")
    elif shape == "set-monster":
        p2["monsters"] = [{"zone": 1, "card": me, "position": "facedown"}]
    elif shape in ("pendulum-own", "pendulum-opponent"):
        (p1 if shape == "pendulum-own" else p2)["pendulum"] = [{"zone": 1, "card": me}]
    elif shape == "hand-opponent":
        p2["hand"] = [me]
    elif shape == "hand-own":
        p1["hand"] = [me]
    elif shape == "gy-opponent":
        p2["graveyard"] = [me]
    elif shape in ("set-opponent", "set-own", "face-up-opponent", "face-up-own"):
        side = p2 if shape.endswith("opponent") else p1
        up = shape.startswith("face-up")
        if card.has(C.TYPE_FIELD):
            side["field_spell"] = {"card": me}
        else:
            entry: dict = {"zone": 1, "card": me}
            if up:
                entry["face_up"] = True
                if card.has(C.TYPE_EQUIP):
                    entry["equipped_to"] = "P2 M1" if side is p2 else "P1 M1"
            side["spells"] = [entry]
    else:
        raise ValueError(shape)
    return {
        "name": f"sweep {card.code} {card.name}: {shape}",
        "description": SHAPES[shape],
        "source": "generated by bpcheck sweep (docs/sweep.md)",
        "turn": 2,
        "turn_player": 1,
        "p1": p1,
        "p2": p2,
    }


def card_boards(card: Card, prof: CardProfile | None, folder: Path, cards_db: str) -> tuple[list[tuple[str, Path]], list[str]]:
    """Write the boards of a card into ``folder`` (``CODE-SHAPE.toml``): (shape, path) of each
    board written, and why a shape could not be (a board the format refuses)."""
    out, refused = [], []
    db = open_db(cards_db)
    partner = companion(card, db) if card.kind == "monster" else None
    materials = xyz_materials(card, db)
    for shape in shapes_for(card, prof, partner):
        doc = board_document(card, shape, partner, materials)
        path = folder / f"{card.code}-{shape}.toml"
        try:
            board_from_dict(doc, str(path), cards_db=cards_db)  # loads as `check` will load it
        except InputError as e:
            refused.append(f"{shape}: {e.problem}")
            continue
        write_board(doc, path, header=f"bpcheck sweep: {card.name} ({card.code}), {shape}\nbpcheck check {path.name} --engine ENGINE --cards-db DB")
        out.append((shape, path))
    return out, refused


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------


@dataclass
class Known:
    card: int
    finding: str  # "INVARIANT" or "INVARIANT [SIGNATURE]"
    reason: str

    def matches(self, code: int, f: dict) -> bool:
        if self.card != code:
            return False
        return self.finding in (f["invariant"], f"{f['invariant']} [{f['signature']}]")


def load_sweep_baseline(path: str) -> list[Known]:
    """``--baseline FILE``: known findings, ``[[known]]`` tables with ``card`` (a passcode),
    ``finding`` (``INVARIANT`` or ``INVARIANT [SIGNATURE]``, as the sweep prints it) and a
    non-empty ``reason``."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(path, "--baseline", f"cannot read: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(path, "", f"not valid TOML: {e}") from None
    rows = data.get("known", [])
    if not isinstance(rows, list):
        raise InputError(path, "known", "expected an array of tables [[known]]")
    out = []
    for i, row in enumerate(rows):
        where = f"known[{i}]"
        if not isinstance(row, dict):
            raise InputError(path, where, "expected a table")
        extra = set(row) - {"card", "finding", "reason"}
        if extra:
            raise InputError(path, f"{where}.{sorted(extra)[0]}", "unknown field (allowed: card, finding, reason)")
        if not isinstance(row.get("card"), int) or isinstance(row.get("card"), bool):
            raise InputError(path, f"{where}.card", "expected a passcode (an integer)")
        for k in ("finding", "reason"):
            if not isinstance(row.get(k), str) or not row[k].strip():
                raise InputError(path, f"{where}.{k}", "expected a non-empty string")
        out.append(Known(row["card"], row["finding"].strip(), row["reason"].strip()))
    return out


def card_verdict(entry: dict, killed: str | None = None) -> str:
    """The card's verdict (docs/sweep.md, "Verdicts"). ``killed``: the ``bound_hit`` of a board
    the ``--timeout`` deadline killed; such a board was played but nothing of it was judged, so
    its card is not judged unless another board has a finding."""
    if entry["findings"]:
        return "finding"
    if not entry["played"]:
        return "no playable board"
    if entry["profile_unknown"]:
        return "not judged"
    if killed is not None and any(b.get("bound_hit") == killed for b in entry["boards"]):
        return "not judged"
    return "clean"


def _profile_unknown(prof: CardProfile | None) -> list[str]:
    """Where the profile is unknown and an invariant would need it: each activated effect whose
    kind, Spell Speed, events or Damage Step decisions are unknown (``effect N: what``)."""
    if prof is None:
        return ["no profile"]
    out = []
    for e in prof.effects:
        if e.decided:
            continue
        what = [n for n, d in (("kind", e.kind), ("speed", e.speed), ("events", e.events)) if not d.decided]
        if e.damage_step and any(not d.decided for r in e.damage_step.values() for d in r.values()):
            what.append("damage_step")
        if e.optional is not None and not e.optional.decided:
            what.append("optional")
        out.append(f"effect {e.index}: {', '.join(what) or 'undecided'}")
    return out


@dataclass
class SweepOutcome:
    doc: dict
    new_findings: int
    errors: list[InputError] = field(default_factory=list)
    interrupted: str | None = None


class SweepRun:
    """One sweep: :meth:`prepare` refuses bad input, :meth:`run` judges the cards (``emit``: a line
    per card as its batch ends), writing ``--json`` after each batch and ``--report`` at the end."""

    def __init__(self, opts: SweepOptions, invariants, *, emit: Callable[[str], None] = print) -> None:
        self.opts = opts
        self.invariants = list(invariants)
        self.emit = emit
        self.cards: list[Card] = []
        self.known: list[Known] = []
        self.done: dict[int, dict] = {}
        self._tmp: tempfile.TemporaryDirectory | None = None
        self.sig = lifecycle.CURRENT  # the run's signal handlers (bpcheck.cli.main)
        self.exit_status: int | None = None  # 129 / 130 / 143 once a signal stopped the sweep

    def settings(self) -> dict:
        o = self.opts
        out = {"engine": o.engine or "reference", "cards_db": os.path.basename(o.cards_db or ""), "max_states": o.max_states,
               "invariants": sorted(i.id for i in self.invariants), "scripts_overlay": bool(o.scripts_overlay)}
        if o.timeout is not None:  # (only when given: a sweep without it resumes as before)
            out["timeout"] = o.timeout
        return out

    def prepare(self) -> None:
        o = self.opts
        # from now on the first SIGINT / SIGTERM / SIGHUP stops the sweep at the end of its batch
        # (the exploration in progress stops at its next state), never with nothing written:
        # --json and --report hold the cards judged before it (docs/sweep.md, "Interrupted")
        self.sig.polling = True
        if not o.cards_db:
            raise InputError("--cards-db", "", "a sweep needs the card database to sweep (--cards-db FILE)")
        if not os.path.isfile(o.cards_db):
            raise InputError(o.cards_db, "--cards-db", "no such file")
        if o.max_states is None or o.max_states < 1:
            raise InputError("--max-states", "", "a sweep explores each board to a bound: give a positive --max-states")
        if o.scripts_overlay:
            if not os.path.isdir(o.scripts_overlay):
                raise InputError(o.scripts_overlay, "--scripts-overlay", "not a folder")
            self._overlay_was = os.environ.get(OVERLAY_ENV)
            os.environ[OVERLAY_ENV] = os.path.abspath(o.scripts_overlay)  # the engines of this run and its workers; close() restores it
        self.cards = select_cards(o.cards_db, o.queries, o.type)
        if o.baseline:
            self.known = load_sweep_baseline(o.baseline)
        if o.resume:
            if not o.json:
                raise InputError("--resume", "", "needs --json FILE (the result of the sweep to go on with)")
            self.done = self._read_resume(o.json)
        elif o.json:
            prepare_file(o.json, "--json")
        if o.boards:
            try:
                Path(o.boards).mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise InputError(o.boards, "--boards", f"cannot create the folder: {e.strerror or e}") from None
        check = CheckRun(self._check_options(connect=True), self.invariants)
        check.prepare([])  # the engine, the card database, the cluster: refused now, not per batch
        c = cluster_active()
        if o.cluster and c is not None and not o.quiet:
            sys.stderr.write(f"bpcheck: {c.describe()} (connected in {c.started:.1f} s)\n")

    def _read_resume(self, path: str) -> dict[int, dict]:
        if not os.path.exists(path):
            return {}
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputError(path, "--resume", f"not a sweep result: {e}") from None
        if not isinstance(doc, dict) or doc.get("bpcheck_sweep") != SCHEMA or not isinstance(doc.get("cards"), list):
            raise InputError(path, "bpcheck_sweep", f"not a sweep result of schema {SCHEMA}")
        if doc.get("settings") != self.settings():
            raise InputError(path, "settings", f"the sweep was run with other settings ({doc.get('settings')}); --resume goes on with the same ones")
        keys = ("code", "name", "verdict", "boards", "findings", "known", "played", "profile_unknown")
        done = {}
        for i, c in enumerate(doc["cards"]):
            if not isinstance(c, dict) or not all(k in c for k in keys) or not isinstance(c["code"], int):
                raise InputError(path, f"cards[{i}]", f"not a card entry of a sweep result (needs {', '.join(keys)})")
            if not isinstance(c["findings"], list) or not isinstance(c["known"], list):
                raise InputError(path, f"cards[{i}].findings", "expected lists of findings and known findings")
            done[c["code"]] = self._rebaseline(c)
        return done

    def _rebaseline(self, entry: dict) -> dict:
        """A card judged by an earlier run, its findings split again by this run's ``--baseline``."""
        found = [{k: v for k, v in f.items() if k != "reason"} for f in entry["findings"] + entry["known"]]
        entry = dict(entry, findings=[], known=[])
        for f in found:
            k = next((k for k in self.known if k.matches(entry["code"], f)), None)
            if k is not None:
                entry["known"].append({**f, "reason": k.reason})
            else:
                entry["findings"].append(f)
        entry["findings"], entry["known"] = _dedupe(entry["findings"]), _dedupe(entry["known"])
        entry["verdict"] = self._verdict(entry)
        return entry

    def _verdict(self, entry: dict) -> str:
        return card_verdict(entry, deadline_reason(self.opts.timeout) if self.opts.timeout is not None else None)

    def _check_options(self, connect: bool = False) -> CheckOptions:
        """The options of a batch's check run; ``connect``: the one made in :meth:`prepare`, which
        connects to the ``--cluster`` (and checks that every node can build the engine) once; the
        batches then run on the cluster it made active (``-j``: its workers by default)."""
        o = self.opts
        # isolate: every board in a worker process, -j 1 included, so that a board stuck inside one
        # engine call is killed by --timeout's deadline or a signal (docs/sweep.md, "A slow board")
        return CheckOptions(engine=o.engine, cards_db=o.cards_db, max_states=o.max_states, timeout=o.timeout, jobs=o.jobs, quiet=True, command="sweep", isolate=True,
                            cluster=o.cluster if connect else None,
                            scripts_overlay=os.path.abspath(o.scripts_overlay) if o.scripts_overlay else None)

    def boards_dir(self) -> Path:
        if self.opts.boards:
            return Path(self.opts.boards)
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="bpcheck-sweep-")
        return Path(self._tmp.name)

    def run(self) -> SweepOutcome:
        o = self.opts
        todo = [c for c in self.cards if c.code not in self.done]
        progress = run_progress(o, "sweep", total=len(todo), unit="cards", work="cards")
        progress.plan([1.0] * len(todo))  # the ETA: every card costs one unit, the rate is cards per second
        entries: dict[int, dict] = dict(self.done)
        errors: list[InputError] = []
        interrupted = None
        try:
            for at in range(0, len(todo), max(1, o.batch)):
                if self.sig.signum is not None:  # a signal between batches (or while the cards were read)
                    interrupted, self.exit_status = self.sig.name, self.sig.exit_status
                    break
                batch = todo[at : at + max(1, o.batch)]
                tasks = {c.code: progress.start(f"{c.code} {c.name}", 1.0) for c in batch}
                check = CheckRun(self._check_options(), self.invariants, emit=lambda _s: None, error=errors.append)
                check.prepare([])
                results, internal = self._judge(batch, check)
                if check.sig.signum is not None:  # a batch cut short is not recorded: --resume judges it again
                    interrupted = check.sig.name
                    self.exit_status = check.sig.exit_status
                    break
                if internal is not None:  # bpcheck's own bug (a worker's): what is finished is written, then exit 4
                    raise internal
                for c in batch:
                    entries[c.code] = results[c.code]
                    tasks[c.code].update(1, force=True)
                    progress.finish(tasks[c.code], failed=results[c.code]["verdict"] == "finding")
                    self.emit(self.card_line(results[c.code]))
                with self.sig.held():  # a signal waits until the file is whole
                    self._write_json(entries, complete=False)
        except lifecycle.Interrupted as e:  # a second signal: the batch in progress is not recorded
            interrupted, self.exit_status = e.name, e.exit_status
        finally:
            progress.close()
            complete = interrupted is None and all(c.code in entries for c in self.cards)
            doc = self.document(entries, complete)
            try:
                with self.sig.held():
                    self._write_json(entries, complete)
            except lifecycle.Interrupted as e:  # (the file is whole)
                interrupted, self.exit_status = interrupted or e.name, self.exit_status or e.exit_status
        if o.report:
            try:
                with self.sig.held():
                    write_report(o.report, doc)
            except lifecycle.Interrupted as e:
                interrupted, self.exit_status = interrupted or e.name, self.exit_status or e.exit_status
        new = sum(len(e["findings"]) for e in doc["cards"])
        return SweepOutcome(doc, new, errors, interrupted)

    def _judge(self, batch: list[Card], check: CheckRun) -> tuple[dict[int, dict], Exception | None]:
        """The batch's entries (a card's boards written, checked in one CheckRun, judged), and
        bpcheck's own error if the run met one."""
        folder = self.boards_dir()
        files, owner = [], {}
        out: dict[int, dict] = {}
        for c in batch:
            try:
                prof = profile(c)
            except Exception as e:  # noqa: BLE001 - a reader bug for one card costs that card's profile only
                prof = None
                why = f"the profile reader failed: {type(e).__name__}: {e}"
            else:
                why = None
            boards, refused = card_boards(c, prof, folder, self.opts.cards_db or "")
            unknown = _profile_unknown(prof) if prof is not None else [why or "no profile"]
            out[c.code] = {"code": c.code, "name": c.name, "kind": c.kind, "subtype": c.subtype, "boards": [], "refused": refused,
                           "played": 0, "profile_unknown": unknown, "findings": [], "known": [], "not_judged_by": []}
            for shape, path in boards:
                owner[str(path)] = (c.code, shape)
                files.append((path, str(path)))
        if not files:
            for e in out.values():
                e["verdict"] = card_verdict(e)
            return out, None
        res = check.run(files)
        nj: dict[int, set] = {}
        for br in res.results:
            code, shape = owner[br.board.path]
            e = out[code]
            row = {"shape": shape, "file": Path(br.board.path).name, "verdict": br.verdict, "states": br.result.states,
                   "bound_hit": br.result.bound_hit}
            if br.verdict == "skipped":
                row["refused"] = br.skip_reason
            else:
                e["played"] += 1
            e["boards"].append(row)
            nj.setdefault(code, set()).update(br.not_judged)
            for cex in br.counterexamples:
                f = {"invariant": cex.invariant, "signature": cex.key if isinstance(cex.key, str) else None, "rules": list(cex.rules),
                     "message": " ".join(str(cex.message).split()), "board": Path(br.board.path).name, "trace": list(cex.labels)}
                k = next((k for k in self.known if k.matches(code, f)), None)
                if k is not None:
                    e["known"].append({**f, "reason": k.reason})
                else:
                    e["findings"].append(f)
        for err in res.errors:
            for code, e in out.items():
                if err.get("file") and Path(err["file"]).name.startswith(f"{code}-"):
                    e["refused"].append(f"{Path(err['file']).name}: {err['problem']}")
        for code, e in out.items():
            e["boards"].sort(key=lambda r: r["file"])
            e["not_judged_by"] = sorted(nj.get(code, ()))
            e["findings"] = _dedupe(e["findings"])
            e["known"] = _dedupe(e["known"])
            e["verdict"] = self._verdict(e)
        return out, res.internal

    def card_line(self, e: dict) -> str:
        n = len(e["boards"])
        head = f"{e['verdict'].upper():18} {e['code']:>9} {e['name']}: {e['played']} of {n} boards played"
        if e["findings"]:
            head += "; " + ", ".join(dict.fromkeys(_what(f) for f in e["findings"]))
        if e["known"]:
            head += f"; {len(e['known'])} known (baseline)"
        if self.opts.timeout is not None:
            killed = sum(1 for b in e["boards"] if b.get("bound_hit") == deadline_reason(self.opts.timeout))
            if killed:  # inconclusive, as any board cut by --timeout; said, as nothing of it was judged
                head += f"; {killed} killed at the --timeout deadline (inconclusive, nothing judged)"
        return head

    def document(self, entries: dict[int, dict], complete: bool) -> dict:
        cards = [entries[c.code] for c in self.cards if c.code in entries]
        groups: dict[tuple, dict] = {}
        for e in cards:
            for f in e["findings"]:
                key = (f["invariant"], f["signature"])
                g = groups.setdefault(key, {"invariant": f["invariant"], "signature": f["signature"], "rules": f["rules"], "cards": []})
                if e["code"] not in g["cards"]:
                    g["cards"].append(e["code"])
        counts = {v: sum(1 for e in cards if e["verdict"] == v) for v in VERDICTS}
        extra = {"baseline_gone": self.baseline_gone(entries)} if self.opts.baseline else {}
        return {
            "bpcheck_sweep": SCHEMA,
            "version": __version__,
            "settings": self.settings(),
            "boards_dir": self.opts.boards,
            "complete": complete,
            "selected": len(self.cards),
            "judged": len(cards),
            "verdicts": counts,
            "findings": [groups[k] for k in sorted(groups, key=lambda k: (k[0], k[1] or ""))],
            "cards": cards,
            **extra,
        }

    def baseline_gone(self, entries: dict[int, dict]) -> list[dict]:
        """The ``--baseline`` entries of judged cards that matched none of their findings (the
        baseline can be trimmed; they do not fail the sweep), in the baseline's order."""
        out = []
        for k in self.known:
            e = entries.get(k.card)
            if e is not None and not any(k.matches(k.card, f) for f in e["known"]):
                out.append({"card": k.card, "name": e["name"], "finding": k.finding, "reason": k.reason})
        return out

    def _write_json(self, entries: dict, complete: bool) -> None:
        if self.opts.json:
            try:
                atomic_write_text(self.opts.json, json.dumps(self.document(entries, complete), indent=1) + "\n")
            except OSError as e:
                raise InputError(self.opts.json, "--json", f"cannot write the result: {e.strerror or e}") from None

    def close(self) -> None:
        """The temporary boards folder removed, ``OCG_SCRIPTS_OVERLAY`` as it was before the run."""
        if self.opts.scripts_overlay and hasattr(self, "_overlay_was"):
            if self._overlay_was is None:
                os.environ.pop(OVERLAY_ENV, None)
            else:
                os.environ[OVERLAY_ENV] = self._overlay_was
            del self._overlay_was
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _what(f: dict) -> str:
    return f"{f['invariant']} [{f['signature']}]" if f["signature"] else f["invariant"]


def _dedupe(findings: list[dict]) -> list[dict]:
    """One finding per (invariant, signature, board): the first (shortest) trace."""
    seen, out = set(), []
    for f in sorted(findings, key=lambda f: (f["board"], f["invariant"], f["signature"] or "", len(f["trace"]))):
        k = (f["board"], f["invariant"], f["signature"])
        if k not in seen:
            seen.add(k)
            out.append(f)
    return out


def write_report(folder: str, doc: dict) -> None:
    """``--report DIR``: ``index.html``, a table with a row per card (reports/sweep_html.py)."""
    p = Path(folder)
    try:
        p.mkdir(parents=True, exist_ok=True)
        atomic_write_text(p / "index.html", sweep_html(doc))
    except OSError as e:
        raise InputError(folder, "--report", f"cannot write the report: {e.strerror or e}") from None
