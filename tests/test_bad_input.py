"""The catalogue of bad-input kinds (docs/bad-input.md), each row run through a real `bpcheck`
process: exit status 2, no traceback, and the `file: field: problem` message on stderr.

The rows of CATALOGUE are the catalogue: a test keeps docs/bad-input.md listing exactly these
IDs. Board rows run `check` (the command that used to crash) and `validate` (which must refuse
exactly what check refuses).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOARD = (ROOT / "boards" / "000-replay-1.toml").read_text()
SCENARIO = """name = "s"
source = "catalogue"
rules = ["RPL-TRIGGER"]
board = "BOARD"

[[step]]
do = "enter Battle Phase"
"""

CARD = """
[[card]]
name = "Test Card"
passcode = "90000001"
kind = "spell"
subtype = "quick-play"
text = "x"
  [[card.effect]]
  type = "activate"
  OPS
"""

MONSTER = """
[[card]]
name = "Test Monster"
passcode = "90000003"
kind = "monster"
subtype = "effect"
text = "x"
attribute = "DARK"
race = "Fiend"
level = 1
atk = 300
def = 200
  [[card.effect]]
  type = "quick"
  location = "LOCATION"
  cost = [{ op = "discard_self" }]
  ops = [{ op = "no_battle_damage", to = "you" }]
"""


def board_with_card(ops: str, extra: str = "") -> str:
    text = BOARD.replace('graveyard = ["Blue-Eyes White Dragon"]', 'graveyard = ["Blue-Eyes White Dragon"]\nhand = ["Test Card"]')
    return text + CARD.replace("OPS", ops) + extra


def bpcheck(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env={**os.environ, "CI": "1"}
    )


@dataclass
class Row:
    id: str
    reader: str  # board | scenario | trace | counterexample | option
    make: Callable[[Path], list[str]]  # writes the files, returns the command line
    expect: str  # a regular expression the stderr must match (after the file name)
    also_validate: bool = False


def _file(name: str, text: str | bytes):
    def make(tmp: Path) -> Path:
        p = tmp / name
        p.write_bytes(text.encode() if isinstance(text, str) else text)
        return p

    return make


def board(name: str, text: str | bytes, cmd: str = "check") -> Callable[[Path], list[str]]:
    return lambda tmp: [cmd, str(_file(name, text)(tmp))]


def special_board(kind: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        p = tmp / "b.toml"
        if kind == "fifo":
            os.mkfifo(p)
        elif kind == "devzero":
            os.symlink("/dev/zero", p)
        elif kind == "oversize":
            with open(p, "wb") as f:
                f.truncate(4 * 1024 * 1024 + 1)
        elif kind == "empty-dir":
            p = tmp / "empty"
            p.mkdir()
            (p / "README.txt").write_text("no boards here")
        elif kind == "symlink-loop":
            p = tmp / "loop"
            os.symlink(p, p)
        return ["check", str(p)]

    return make


def scenario(text: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        (tmp / "board.toml").write_text(BOARD)
        p = tmp / "s.toml"
        p.write_text(text.replace("BOARD", "board.toml"))
        return ["scenario", str(p)]

    return make


HEADER = '{"bpcheck_trace": 1, "board": "BOARD", "engine": "reference"}'


def trace(lines: str | bytes) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        b = tmp / "board.toml"
        b.write_text(BOARD)
        p = tmp / "t.jsonl"
        data = lines if isinstance(lines, bytes) else lines.replace("BOARD", str(b)).encode()
        p.write_bytes(data)
        return ["conform", str(p)]

    return make


def cex(text: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        b = tmp / "board.toml"
        b.write_text(BOARD)
        p = tmp / "c.json"
        p.write_text(text.replace("BOARD", str(b)))
        return ["replay", str(p)]

    return make


def option(*args: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        b = tmp / "board.toml"
        b.write_text(BOARD)
        return [a.replace("BOARD", str(b)) for a in args]

    return make


GOOD_CEX = '{"bpcheck_counterexample": 1, "board": "BOARD", "engine": "reference", "invariant": "replay.iff", "trace": ["enter Battle Phase"]}'

CATALOGUE: list[Row] = [
    # -- files (every reader goes through model/reading.py) ---------------------------------------
    Row("fifo", "board", special_board("fifo"), r"b\.toml: is a FIFO \(named pipe\), not a regular file"),
    Row("device", "board", special_board("devzero"), r"b\.toml: is a character device, not a regular file"),
    Row("oversize", "board", special_board("oversize"), r"b\.toml: too large: 4194305 bytes"),
    Row("empty-folder", "board", special_board("empty-dir"), r"empty: folder holds no \.toml files"),
    Row("unreadable-path", "board", special_board("symlink-loop"), r"loop: cannot read: Too many levels of symbolic links"),
    Row("not-utf8", "board", board("b.toml", b"name = \"\xff\"\n"), r"b\.toml: not UTF-8 text"),
    Row("byte-order-mark", "board", board("b.toml", b"\xef\xbb\xbf" + BOARD.encode()), r"b\.toml: starts with a UTF-8 byte-order mark"),
    Row("malformed-toml", "board", board("b.toml", "turn = = 2\n"), r"b\.toml: malformed TOML"),
    Row("dotted-key-parts", "board", board("b.toml", "x" + ".x" * 100_000 + " = 1\n" + BOARD), r"b\.toml: x\.x\.x.*: a dotted key of more than 16 parts \(line 1, column 33\)", True),
    Row("dotted-keys-in-all", "board", board("b.toml", "".join(f"k{i}.a.b.c.d.e.f.g.h.i.j = 1\n" for i in range(1001)) + BOARD), r"b\.toml: k1000\.a\.b.*: more than 10000 dotted-key parts in the document"),
    Row("inline-dotted-deep", "board", board("b.toml", "x = " + "{ a.b.c.d = " * 20 + "1" + " }" * 20 + "\n" + BOARD), r"b\.toml: x\.a\.b\.c\.d.*: nested too deeply \(more than 64 levels"),
    Row("too-many-values", "board", board("b.toml", "x = [" + "0," * 100_001 + "]\n" + BOARD), r"b\.toml: x: more than 100000 values \(keys, table headers and array items\)"),
    Row("board-unknown-rule-id", "board", board("b.toml", BOARD.replace('rules = ["', 'rules = ["RPL-TRIGGR", "', 1)), r"b\.toml: rules\[0\]: unknown rule ID 'RPL-TRIGGR' \(not in docs/rules\.md\); did you mean RPL-TRIGGER", True),
    Row("control-character-in-goal-id", "board", board("b.toml", BOARD + '\n[[reachable]]\nid = "won\\nreport"\nover = true\n'), r"b\.toml: reachable\[0\]\.id: goal id .* holds the control or invisible character U\+000A", True),
    Row("control-character-in-description", "board", board("b.toml", BOARD.replace('name = "', 'description = "\\u202eevil"\nname = "', 1)), r"b\.toml: description: description .* holds the control or invisible character U\+202E", True),
    Row("zone-not-a-list", "board", board("b.toml", BOARD.replace("[p2]\n", "[p2]\nmonsters = 7\n", 1)), r"b\.toml: p2\.monsters: expected array, got int 7", True),
    Row("goal-event-not-a-string", "board", board("b.toml", BOARD + '\n[[reachable]]\nid = "x"\nevent = ["a"]\n'), r"b\.toml: reachable\[0\]\.event: expected an event kind \(a string\), got list", True),
    Row("deep-nesting", "board", board("b.toml", "x = " + "[" * 600 + "]" * 600 + "\n" + BOARD), r"b\.toml: x: nested too deeply", True),
    # -- strict types -------------------------------------------------------------------------------
    Row("integer-2-64", "board", board("b.toml", BOARD.replace("turn = 2", "turn = 18446744073709551616")), r"b\.toml: turn: integer out of range", True),
    Row("nan", "board", board("b.toml", BOARD.replace("lp = 8000", "lp = nan", 1)), r"b\.toml: p1\.lp: nan is not a finite number"),
    Row("infinity", "board", board("b.toml", BOARD.replace("lp = 8000", "lp = -inf", 1)), r"b\.toml: p1\.lp: -inf is not a finite number"),
    Row("date", "board", board("b.toml", BOARD.replace("turn = 2", "turn = 1979-05-27")), r"b\.toml: turn: a date or time \(1979-05-27\)"),
    Row("float-for-integer", "board", board("b.toml", BOARD.replace("lp = 8000", "lp = 8000.0", 1)), r"b\.toml: p1\.lp: expected a whole number"),
    Row("string-for-integer", "board", board("b.toml", BOARD.replace("lp = 8000", 'lp = "8000"', 1)), r"b\.toml: p1\.lp: expected integer, got str"),
    Row("unknown-field", "board", board("b.toml", "colour = 1\n" + BOARD), r"b\.toml: colour: unknown field"),
    Row("missing-field", "board", board("b.toml", BOARD.replace("turn = 2\n", "")), r"b\.toml: turn: missing required field"),
    Row("control-character-in-name", "board", board("b.toml", board_with_card('ops = []').replace('name = "Test Card"', 'name = "Test\\u001b[31mCard"')), r"b\.toml: card\[0\]\.name: card name .* holds the control or invisible character U\+001B", True),
    # -- card definitions inside a board ----------------------------------------------------------------
    Row("op-parameter-value", "board", board("b.toml", board_with_card('ops = [{ op = "damage", to = "opponent", amount = "lots" }]')), r"b\.toml: card\[0\]\.effect\[0\]\.ops\[0\]\.amount: unknown amount 'lots'", True),
    Row("op-parameter-missing", "board", board("b.toml", board_with_card('ops = [{ op = "modify_atk", what = "self" }]')), r"card\[0\]\.effect\[0\]\.ops\[0\]\.amount: missing required parameter of 'modify_atk'"),
    Row("op-parameter-type", "board", board("b.toml", board_with_card('ops = [{ op = "tokens", token = "Sheep Token", count = "4", position = "defense", to = "you" }]')), r"card\[0\]\.effect\[0\]\.ops\[0\]\.count: expected an integer, got str"),
    Row("cost-in-ops", "board", board("b.toml", board_with_card('ops = [{ op = "pay_lp", amount = 1000 }]')), r"card\[0\]\.effect\[0\]\.ops\[0\]\.op: 'pay_lp' is a cost"),
    Row("op-in-cost", "board", board("b.toml", board_with_card('cost = [{ op = "destroy", what = "self" }]\n  ops = []')), r"card\[0\]\.effect\[0\]\.cost\[0\]\.op: 'destroy' is not a cost"),
    Row("self-cost-off-the-hand", "board", board("b.toml", BOARD.replace('monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]', 'monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }, { zone = 2, card = "Test Monster", position = "attack" }]', 1) + MONSTER.replace("LOCATION", "field")), r"card\[0\]\.effect\[0\]\.cost\[0\]\.op: 'discard_self' sends this card from the hand: it needs a monster effect with location = 'hand'", True),
    Row("token-not-a-token", "board", board("b.toml", board_with_card('ops = [{ op = "tokens", token = "Battle Ox", count = 1, position = "defense", to = "you" }]')), r"card\[0\]\.effect\[0\]\.ops\[0\]\.token: 'Battle Ox' is not a Token"),
    Row("target-without-targets", "board", board("b.toml", board_with_card('ops = [{ op = "destroy", what = "target" }]')), r"card\[0\]\.effect\[0\]\.ops\[0\]\.what: 'destroy' applies to 'target', but the effect has no targets"),
    Row("stat-out-of-range", "board", board("b.toml", board_with_card('ops = [{ op = "modify_atk", what = "self", amount = 1099511627776 }]')), r"ops\[0\]\.amount: must be from -1000000 to 1000000"),
    Row("unknown-race", "board", board("b.toml", board_with_card('ops = [{ op = "special_summon", from = "deck", filter = { race = "Spellcster" } }]')), r"ops\[0\]\.filter\.race: unknown Type \(race\) 'Spellcster'"),
    Row("static-wrong-target", "board", board("b.toml", board_with_card("ops = []\n  [[card.static]]\n  apply = \"negate_effects\"\n  to = \"self\"")), r"card\[0\]\.static\[0\]\.to: 'negate_effects' applies to attached, not 'self'"),
    Row("duplicate-card-name", "board", board("b.toml", board_with_card("ops = []") + CARD.replace("OPS", "ops = []").replace("90000001", "90000002")), r"b\.toml: card\[1\]\.name: card 'Test Card' is already defined in card\[0\]", True),
    Row("duplicate-passcode", "board", board("b.toml", board_with_card("ops = []").replace("90000001", "46986414")), r"b\.toml: card\[0\]\.passcode: passcode 46986414 is already used by 'Dark Magician' of the built-in pool"),
    Row("goal-unknown-card", "board", board("b.toml", BOARD + '\n[[reachable]]\nid = "g"\nevent = "replay"\ncard = "Nope"\n'), r"b\.toml: reachable\[0\]\.card: unknown card 'Nope'", True),
    Row("goal-unknown-field", "board", board("b.toml", BOARD + '\n[[reachable]]\nid = "g"\nevent = "replay"\ncolour = 1\n', cmd="validate"), r"b\.toml: reachable\[0\]\.colour: unknown field"),
    # -- scenarios ------------------------------------------------------------------------------------
    Row("scenario-event-kind-misspelt", "scenario", scenario(SCENARIO + 'no_events = ["replayy"]\n'), r"s\.toml: step\[0\]\.no_events\[0\]: unknown event kind 'replayy'"),
    Row("scenario-where-unknown-card", "scenario", scenario(SCENARIO + 'expect = { where = { "Blue-Eyes White Dragn" = "P2 graveyard" } }\n'), r"s\.toml: step\[0\]\.expect\.where\.Blue-Eyes White Dragn: 'Blue-Eyes White Dragn' is not a card on the board; did you mean 'Blue-Eyes White Dragon'\?"),
    Row("scenario-expect-type", "scenario", scenario(SCENARIO + 'expect = { lp = "8000" }\n'), r"s\.toml: step\[0\]\.expect\.lp: expected \[P1 LP, P2 LP\]"),
    Row("scenario-board-error", "scenario", lambda tmp: (tmp.joinpath("board.toml").write_text(BOARD.replace("lp = 8000", "lp = 0", 1)), tmp.joinpath("s.toml").write_text(SCENARIO.replace("BOARD", "board.toml")), ["scenario", str(tmp / "s.toml")])[-1], r"s\.toml: board: in board file .*board\.toml: p1\.lp: 0 is less than the minimum of 1"),
    Row("scenario-deep-nesting", "scenario", scenario(SCENARIO + "note = " + "[" * 600 + "]" * 600 + "\n"), r"s\.toml: step\.note: nested too deeply"),
    # -- traces (conform) -------------------------------------------------------------------------------
    Row("trace-nan", "trace", trace(HEADER + '\n{"action": "enter Battle Phase", "observation": {"lp": NaN}, "events": []}\n'), r"t\.jsonl:2: observation\.lp: NaN is not a number JSON allows"),
    Row("trace-duplicate-key", "trace", trace(HEADER + '\n{"action": "x", "action": "y", "observation": {}, "events": []}\n'), r"t\.jsonl:2: action: duplicate key"),
    Row("trace-integer-2-64", "trace", trace(HEADER + '\n{"action": "x", "observation": {"lp": 18446744073709551616}, "events": []}\n'), r"t\.jsonl:2: observation\.lp: integer out of range"),
    Row("trace-version-float", "trace", trace(HEADER.replace('"bpcheck_trace": 1', '"bpcheck_trace": 1.0') + "\n"), r"t\.jsonl:1: bpcheck_trace: unsupported trace version"),
    Row("trace-deep-nesting", "trace", trace(HEADER + '\n{"action": "x", "observation": ' + "[" * 600 + "]" * 600 + ', "events": []}\n'), r"t\.jsonl:2: observation\[0\]\[0\].*: nested too deeply"),
    Row("trace-board-is-device", "trace", trace(HEADER.replace("BOARD", "/dev/zero") + "\n"), r"t\.jsonl:1: board: in board file /dev/zero: is a character device"),
    Row("trace-unknown-ruleset", "trace", trace(HEADER.replace('"engine"', '"ruleset": "speed", "engine"') + "\n"), r't\.jsonl:1: ruleset: unknown ruleset "speed" \(known: tcg, ocg, goat\)'),
    # -- counterexample files (replay) ----------------------------------------------------------------
    Row("cex-malformed-json", "counterexample", cex('{"trace": ['), r"c\.json: malformed JSON"),
    Row("cex-trace-not-a-list", "counterexample", cex(GOOD_CEX.replace('["enter Battle Phase"]', '"enter Battle Phase"')), r"c\.json: trace: expected an array, got string"),
    Row("cex-label-not-a-string", "counterexample", cex(GOOD_CEX.replace('["enter Battle Phase"]', '["enter Battle Phase", 7]')), r"c\.json: trace\[1\]: expected an action label, got integer 7"),
    Row("cex-unknown-invariant", "counterexample", cex(GOOD_CEX.replace("replay.iff", "replay.iffy")), r"c\.json: invariant: unknown invariant"),
    Row("cex-duplicate-key", "counterexample", cex(GOOD_CEX.replace('"invariant"', '"board": "x", "invariant"')), r"c\.json: board: duplicate key"),
    Row("cex-missing-board", "counterexample", cex(GOOD_CEX.replace("BOARD", "no/such/board.toml")), r"c\.json: board: no such board file 'no/such/board\.toml'"),
    Row("cex-result-boards-not-a-list", "counterexample", cex('{"boards": {"x": 1}}'), r"c\.json: boards: expected an array, got table"),
    Row("cex-no-counterexample", "counterexample", cex('{"bpcheck": "0", "boards": [{"board": "BOARD", "counterexamples": []}]}'), r"c\.json: boards: the result holds no counterexample: there is nothing to replay"),
    Row("cex-unknown-ruleset", "counterexample", cex(GOOD_CEX.replace('"engine"', '"ruleset": 3, "engine"')), r"c\.json: ruleset: unknown ruleset 3 \(known: tcg, ocg, goat\)"),
    Row("cex-trace-no-longer-applies", "counterexample", cex(GOOD_CEX.replace('["enter Battle Phase"]', '["enter Battle Phase", "fly away"]')), r"c\.json: trace\[1\]: step 2: 'fly away' is not legal here"),
    # -- command-line numbers -------------------------------------------------------------------------
    Row("timeout-nan", "option", option("check", "BOARD", "--timeout", "nan"), r"argument --timeout: must be a finite number, got 'nan'"),
    Row("timeout-infinity", "option", option("check", "BOARD", "--timeout", "inf"), r"argument --timeout: must be a finite number, got 'inf'"),
    Row("timeout-negative", "option", option("check", "BOARD", "--timeout", "-1"), r"argument --timeout: must be positive, got '-1'"),
    Row("max-states-2-64", "option", option("check", "BOARD", "--max-states", "18446744073709551616"), r"argument --max-states: must be at most 9007199254740991"),
]


def test_catalogue_is_large_enough_and_ids_unique():
    ids = [r.id for r in CATALOGUE]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 30
    assert {r.reader for r in CATALOGUE} >= {"board", "scenario", "trace", "counterexample", "option"}


def test_docs_list_exactly_the_catalogue():
    doc = (ROOT / "docs" / "bad-input.md").read_text()
    listed = re.findall(r"^\| `([a-z0-9-]+)` \|", doc, flags=re.M)
    assert sorted(listed) == sorted(r.id for r in CATALOGUE)


@pytest.mark.parametrize("row", CATALOGUE, ids=[r.id for r in CATALOGUE])
def test_bad_input_kind(row: Row, tmp_path):
    argv = row.make(tmp_path)
    runs = [argv]
    if row.also_validate:
        runs.append(["validate", *argv[1:]])
    for args in runs:
        p = bpcheck(*args)
        both = p.stdout + p.stderr
        assert "Traceback" not in both, both
        assert p.returncode == 2, f"bpcheck {' '.join(args)}: exit {p.returncode}\n{both}"
        assert re.search(row.expect, p.stderr), f"bpcheck {' '.join(args)}: stderr does not match {row.expect!r}:\n{p.stderr}"
        if row.reader != "option":
            assert "bpcheck: error: " in p.stderr
