"""The engine author's docs say what the reference model does (issue 34 item 2).

docs/protocol.md's "Events, field by field" table lists every event kind, its fields and their
values; this test reads the table and plays the seed boards with the reference model (each
explored breadth first, bounded), and fails when the model emits a kind, a field or a value the
table does not list, or leaves out a field the table says is always there. The same for the
shape of ``open_windows.events`` (docs/observation.md), and the two other things an engine author
used to learn by probing ``bpcheck serve``: the rounds of passes after an attack declaration and
the names of duplicate cards in action labels (docs/protocol.md), checked on the model itself.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

import pytest

from bpcheck.model.board import load_board
from bpcheck.model.events import EVENT_KINDS
from bpcheck.model.observe import observe
from bpcheck.model.rulesets import ruleset_class

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "docs" / "protocol.md"
OBSERVATION = ROOT / "docs" / "observation.md"
SEED_BOARDS = sorted((ROOT / "boards").glob("*.toml")) + sorted((ROOT / "boards" / "rulesets").glob("*.toml"))
STATES_PER_BOARD = 1500  # breadth first: every seed board's first transitions, about 30 s in all

# -- reading the docs -----------------------------------------------------------------------------

TYPES = {
    "card": lambda v: isinstance(v, str) and v != "",
    "uid": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "player": lambda v: v in (0, 1) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "uids": lambda v: isinstance(v, list) and all(TYPES["uid"](x) for x in v),
    "string": lambda v: isinstance(v, str),
}
STEPS_ROW = re.compile(r"^\| `step` \| (.*) \|$", re.M)


def _steps() -> set[str]:
    """The observation's `step` values, as docs/observation.md lists them."""
    row = STEPS_ROW.search(OBSERVATION.read_text(encoding="utf-8"))
    assert row, "docs/observation.md: no `step` row"
    return set(re.findall(r"`([a-z0-9_]+)`", row.group(1)))


class Spec:
    """One field's values cell: literals, typed values (*card*, ...) and `absent`."""

    def __init__(self, cell: str, steps: set[str]) -> None:
        self.cell = cell
        self.optional = bool(re.search(r"(^|[ ,;])absent\b", cell))
        self.types = set(re.findall(r"\*([a-z]+)\*", cell))
        unknown = self.types - set(TYPES) - {"step"}
        assert not unknown, f"docs/protocol.md: unknown value type(s) {sorted(unknown)} in {cell!r}"
        self.literals: list = []
        self.patterns: list[re.Pattern] = []
        for lit in re.findall(r"`([^`]*)`", cell):
            if lit in ("null", "true", "false") or re.fullmatch(r"-?\d+", lit):
                self.literals.append({"null": None, "true": True, "false": False}.get(lit, int(lit) if lit[-1:].isdigit() else lit))
            elif "<" in lit:
                rx = re.escape(lit).replace(re.escape("<card>"), r".+").replace(re.escape("<n>"), r"\d+")
                self.patterns.append(re.compile(rx + r"\Z"))
            else:
                self.literals.append(lit)
        self.steps = steps if "step" in self.types else set()

    def accepts(self, v) -> bool:
        if any(v == lit and type(v) is type(lit) for lit in self.literals):
            return True
        if isinstance(v, str) and (v in self.steps or any(p.match(v) for p in self.patterns)):
            return True
        return any(TYPES[t](v) for t in self.types if t in TYPES)


def event_table(text: str | None = None) -> dict[str, dict[str, Spec]]:
    """kind -> field -> Spec, read from docs/protocol.md's "Events, field by field"."""
    text = PROTOCOL.read_text(encoding="utf-8") if text is None else text
    section = text.split("## Events, field by field", 1)
    assert len(section) == 2, "docs/protocol.md: no section 'Events, field by field'"
    body = section[1].split("\n## ", 1)[0]
    steps = _steps()
    table: dict[str, dict[str, Spec]] = {}
    kind = None
    for line in body.splitlines():
        if not line.startswith("| ") or line.startswith("| event ") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip()[1:-1].split("|")]
        assert len(cells) == 4, f"docs/protocol.md: an event row needs 4 cells: {line!r}"
        if cells[0]:
            kind = cells[0].strip("`")
            assert kind not in table, f"docs/protocol.md: event {kind!r} listed twice"
            table[kind] = {}
        assert kind is not None, line
        if cells[1] == "—":
            continue
        fields = re.findall(r"`([a-z_]+)`", cells[1])
        specs = [s.strip() for s in cells[2].split(";")] if ";" in cells[2] else [cells[2]] * len(fields)
        assert len(specs) == len(fields), f"docs/protocol.md: {kind}: {len(fields)} fields, {len(specs)} value lists in {line!r}"
        for f, s in zip(fields, specs):
            table[kind][f] = Spec(s, steps)
    return table


def problems(event: dict, table: dict[str, dict[str, Spec]]) -> list[str]:
    """What the table does not say about one emitted event."""
    kind = event.get("kind")
    if kind not in table:
        return [f"event kind {kind!r} is not in docs/protocol.md"]
    doc = table[kind]
    out = []
    for f, v in event.items():
        if f == "kind":
            continue
        if f not in doc:
            out.append(f"{kind}.{f} is not in docs/protocol.md")
        elif not doc[f].accepts(v):
            out.append(f"{kind}.{f} = {v!r} is not among the documented values ({doc[f].cell})")
    out += [f"{kind}.{f} is documented but missing" for f, s in doc.items() if f not in event and not s.optional]
    return out


# -- playing the seed boards ----------------------------------------------------------------------


def _explore(path: Path, limit: int):
    board = load_board(path, str(path.relative_to(ROOT)))
    rules = ruleset_class(board.ruleset)(board.pool)
    seen = {board.state}
    queue = deque([board.state])
    n = 0
    while queue and n < limit:
        s = queue.popleft()
        n += 1
        yield rules, s, None
        if rules.is_terminal(s):
            continue
        for a in rules.legal_actions(s):
            s2, events = rules.apply(s, a)
            yield rules, None, (a.label, [e.to_dict() for e in events])
            if s2 not in seen:
                seen.add(s2)
                queue.append(s2)


@pytest.fixture(scope="module")
def played():
    """Every event (board, action, event) and every ``open_windows.events`` item the reference
    model gives on the seed boards' first STATES_PER_BOARD states."""
    events, windows = [], []
    for path in SEED_BOARDS:
        for rules, s, step in _explore(path, STATES_PER_BOARD):
            if s is not None:
                windows += [(path.name, item) for item in observe(rules, s)["open_windows"]["events"]]
            else:
                events += [(path.name, step[0], e) for e in step[1]]
    return events, windows


def test_the_table_lists_every_event_kind_of_the_model():
    assert set(event_table()) == EVENT_KINDS


def test_every_emitted_event_is_documented_field_by_field(played):
    events, _ = played
    table = event_table()
    bad: dict[str, str] = {}
    for board, label, e in events:
        for p in problems(e, table):
            bad.setdefault(p, f"{board}, after {label!r}")
    assert not bad, "\n".join(f"{p} (first: {where})" for p, where in sorted(bad.items()))
    emitted = {e["kind"] for _b, _l, e in events}
    assert len(emitted) >= 28, sorted(EVENT_KINDS - emitted)  # the seed boards exercise nearly every kind


def test_the_check_fails_on_what_the_docs_do_not_say():
    table = event_table()
    ok = {"kind": "card_moved", "card": "Battle Ox", "card_uid": 1, "owner": 0, "from": "monster_zone", "to": "graveyard", "reason": "battle"}
    assert problems(ok, table) == []
    assert problems({**ok, "reason": "vanished"}, table) == ["card_moved.reason = 'vanished' is not among the documented values (" + table["card_moved"]["reason"].cell + ")"]
    assert problems({**ok, "zone": 3}, table) == ["card_moved.zone is not in docs/protocol.md"]
    assert problems({k: v for k, v in ok.items() if k != "owner"}, table) == ["card_moved.owner is documented but missing"]
    assert problems({"kind": "teleported"}, table) == ["event kind 'teleported' is not in docs/protocol.md"]
    assert problems({"kind": "passed", "player": 2}, table) != []
    assert problems({"kind": "phase_changed", "from": "main1", "to": "standby_phase"}, table) != []
    # a field documented as sometimes absent may be left out
    call_off = {"kind": "replay_choice", "attacker_uid": 1, "choice": "call_off", "target_uid": None}
    assert problems(call_off, table) == []
    assert problems({**call_off, "choice": "target", "target": "Mokey Mokey", "target_uid": 7}, table) == []
    assert problems({"kind": "effect_expired", "what": "modifiers of Battle Ox", "until": "damage_calculation"}, table) == []
    assert problems({"kind": "effect_expired", "what": "everything", "until": "damage_calculation"}, table) != []


def test_open_windows_events_have_the_documented_shape(played):
    _, windows = played
    row = next(line for line in OBSERVATION.read_text(encoding="utf-8").splitlines() if line.startswith("| `open_windows.events` |"))
    shapes = {m.group(1): len(m.group(2).split(",")) + 1 for m in re.finditer(r'`\["([a-z_]+)", ([a-z_, ]+)\]`', row)}
    assert set(shapes) == {"attack_declared", "summoned", "sent_to_gy_by_battle", "battle_negated", "damage_taken", "own_monster_destroyed"}, shapes
    seen = set()
    for board, item in windows:
        assert isinstance(item, list) and item and item[0] in shapes, (board, item)
        assert len(item) == shapes[item[0]], (board, item, shapes[item[0]])
        assert all(isinstance(x, int) for x in item[1:]), (board, item)
        seen.add(item[0])
    assert seen == set(shapes), seen  # the seed boards show each kind


# -- windows and passes, names: what docs/protocol.md says, on the model --------------------------

VANILLA = """
turn = 2
turn_player = 1
[p1]
lp = 8000
monsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]
graveyard = GY
[p2]
lp = 8000
monsters = [{ zone = 2, card = "Mokey Mokey", position = "attack" }]
hand = ["Kuriboh", "Kuriboh"]
"""


def _board(tmp_path, gy: str = "[]"):
    p = tmp_path / "b.toml"
    p.write_text(VANILLA.replace("GY", gy))
    b = load_board(p)
    return ruleset_class(b.ruleset)(b.pool), b.state


def _do(rules, s, label):
    acts = {a.label: a for a in rules.legal_actions(s)}
    assert label in acts, (label, sorted(acts))
    return rules.apply(s, acts[label])


def test_an_attack_takes_two_rounds_of_passes_before_the_damage_step(tmp_path):
    rules, s = _board(tmp_path)
    for label in ("enter Battle Phase", "pass", "pass"):
        s, _ = _do(rules, s, label)
    s, ev = _do(rules, s, "attack Battle Ox -> Mokey Mokey")
    assert [e.kind for e in ev] == ["attack_declared"]
    o = observe(rules, s)
    assert o["open_windows"] == {"attack_declaration": True, "summon": False, "events": [["attack_declared", 1]]}
    assert (o["priority"], o["passes"]) == (0, 0)
    s, ev = _do(rules, s, "pass")  # round 1: the turn player, then the opponent
    assert observe(rules, s)["priority"] == 1
    s, ev = _do(rules, s, "pass")
    o = observe(rules, s)
    assert [e.kind for e in ev] == ["passed"]  # the window closes: no phase change
    assert (o["step"], o["priority"], o["passes"], o["open_windows"]["attack_declaration"]) == ("battle_step", 0, 0, False)
    assert o["attack"]["target"] == 2
    s, ev = _do(rules, s, "pass")  # round 2
    s, ev = _do(rules, s, "pass")
    assert [e.kind for e in ev] == ["passed", "phase_changed"]
    assert observe(rules, s)["step"] == "damage_step_start"


def test_a_card_in_a_graveyard_makes_a_name_on_the_field_bracketed(tmp_path):
    rules, s = _board(tmp_path)
    s, _ = _do(rules, s, "enter Battle Phase")
    s, _ = _do(rules, s, "pass")
    s, _ = _do(rules, s, "pass")
    assert "attack Battle Ox -> Mokey Mokey" in {a.label for a in rules.legal_actions(s)}
    rules, s = _board(tmp_path, gy='["Battle Ox"]')
    for label in ("enter Battle Phase", "pass", "pass"):
        s, _ = _do(rules, s, label)
    labels = {a.label for a in rules.legal_actions(s)}
    assert "attack Battle Ox [P1 M1] -> Mokey Mokey" in labels, labels
    s, ev = _do(rules, s, "attack Battle Ox [P1 M1] -> Mokey Mokey")
    assert ev[0].to_dict()["attacker"] == "Battle Ox"  # events name cards plainly


def test_copies_in_one_pile_are_numbered_by_uid(tmp_path):
    rules, s = _board(tmp_path)
    assert rules.ref(s, 2 + 1) == "Kuriboh [P2 hand #1]"  # uids: Battle Ox 1, Mokey Mokey 2, Kuriboh 3 and 4
    assert rules.ref(s, 4) == "Kuriboh [P2 hand #2]"
    assert rules.ref(s, 2) == "Mokey Mokey"
