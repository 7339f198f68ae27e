"""Scenarios against any engine: the runner, the step vocabulary, validation, the CLI contract
(docs/scenarios.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bpcheck.engines import make_engine
from bpcheck.engines.interface import Capabilities
from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.errors import InputError
from bpcheck.harness.scenarios import load_scenario, rule_catalogue, run_scenario, scenario_files

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"
SHIPPED = [load_scenario(p, d) for p, d in scenario_files([str(ROOT / "scenarios")])]


def write(tmp_path: Path, body: str, name: str = "sc.toml", board: str = "000-replay-1.toml", rules: str = '["RPL-TRIGGER"]') -> Path:
    p = tmp_path / name
    p.write_text(f'name = "t"\nsource = "test"\nrules = {rules}\nboard = "{(BOARDS / board).as_posix()}"\n' + textwrap.dedent(body))
    return p


def run(tmp_path: Path, body: str, engine=None, **kw):
    return run_scenario(load_scenario(write(tmp_path, body, **kw)), engine)


def bpcheck(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in a real process (exit status and output as a user sees them)."""
    e = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, env=e, timeout=120)


# --- every shipped mutant is caught by the shipped rulings; the reference passes them all ------


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_fails_some_shipped_scenario(name):
    for sc in SHIPPED:
        res = run_scenario(sc, make_engine(f"mutant:{name}"))
        assert res.status in ("pass", "fail"), res
        if res.status == "fail":
            assert res.failures and res.engine == f"mutant:{name}"
            return
    pytest.fail(f"no shipped scenario fails on mutant:{name}")


def test_the_reference_passes_every_shipped_scenario():
    bad = [(sc.path, run_scenario(sc, make_engine("reference")).failures) for sc in SHIPPED]
    assert [b for b in bad if b[1]] == []


def test_cli_engine_option_through_a_real_process():
    sc = str(ROOT / "scenarios" / "000-replay-1.toml")
    ok = bpcheck("scenario", sc, "--engine", "reference")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "1 passed, 0 failed (1 file, engine reference, ruleset tcg)" in ok.stdout
    bad = bpcheck("scenario", sc, "--engine", "mutant:replay-resets-count")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "expect.attacks.Battle Ox: expected 1, got 0" in bad.stdout
    assert "offered: replay: attack Blue-Eyes White Dragon, replay: call off" in bad.stdout
    assert "played: enter Battle Phase; pass x2; attack Battle Ox -> direct" in bad.stdout
    unknown = bpcheck("scenario", sc, "--engine", "mutant:nope")
    assert unknown.returncode == 2 and "unknown mutant 'nope'" in unknown.stderr and "Traceback" not in unknown.stderr


# --- engines that refuse, raise, or cannot keep states -------------------------------------------

ENGINES = '''
from bpcheck.engines.interface import Capabilities, EngineRefusal
from bpcheck.engines.reference import ReferenceEngine


class Refuser(ReferenceEngine):
    def start(self, board):
        raise EngineRefusal("no Call of the Haunted in this engine")


class Crasher(ReferenceEngine):
    def apply(self, state, action):
        if action.label.startswith("attack"):
            raise ZeroDivisionError("oops")
        return super().apply(state, action)


class NoCloning(ReferenceEngine):
    capabilities = Capabilities(cloning=False)
    starts = 0

    def start(self, board):
        NoCloning.starts += 1
        return super().start(board)


def refuser():
    return Refuser(name="refuser")


def crasher():
    return Crasher(name="crasher")
'''


@pytest.fixture
def engines_module(tmp_path, monkeypatch):
    (tmp_path / "sc_engines.py").write_text(ENGINES)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    sys.modules.pop("sc_engines", None)
    return importlib.import_module("sc_engines")


def test_a_refused_board_is_skipped_with_the_reason_and_is_not_a_pass(tmp_path, engines_module):
    """Skipped is not passed (issue 34): exit 3 by default, named; --strict: a failure (exit 1);
    --allow-skips: a pass (exit 0, today's behaviour)."""
    sc = str(ROOT / "scenarios" / "000-replay-1.toml")
    env = {"PYTHONPATH": str(tmp_path)}
    out_json = tmp_path / "r.json"
    r = bpcheck("scenario", sc, "--engine", "sc_engines:refuser", "--json", str(out_json), env=env)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "SKIP" in r.stdout and "no Call of the Haunted in this engine" in r.stdout
    assert "0 passed, 0 failed, 1 skipped" in r.stdout
    assert f"not checked: the engine refused 1 scenario (exit 3; --allow-skips accepts them): {sc}" in r.stdout
    doc = json.loads(out_json.read_text())
    assert doc["skipped"] == 1 and doc["scenarios"][0]["status"] == "skipped"
    assert doc["scenarios"][0]["reason"] == "no Call of the Haunted in this engine"
    strict = bpcheck("scenario", sc, "--engine", "sc_engines:refuser", "--strict", env=env)
    assert strict.returncode == 1 and "1 skipped" in strict.stdout and "(--strict: a failure, exit 1)" in strict.stdout
    allowed = bpcheck("scenario", sc, "--engine", "sc_engines:refuser", "--allow-skips", "--quiet", env=env)
    assert allowed.returncode == 0 and "1 skipped" in allowed.stdout and "not checked" not in allowed.stdout
    both = bpcheck("scenario", sc, "--engine", "sc_engines:refuser", "--allow-skips", "--strict", env=env)
    assert both.returncode == 2 and "Traceback" not in both.stderr


def test_an_engine_that_raises_is_an_engine_fault_failure_not_a_crash(tmp_path, engines_module):
    res = run_scenario(SHIPPED[[s.path for s in SHIPPED].index(str(ROOT / "scenarios" / "000-replay-1.toml"))], engines_module.crasher())
    assert res.status == "fail"
    assert any("ENGINE-FAULT in apply('attack Battle Ox -> direct'): the engine raised ZeroDivisionError: oops" in f for f in res.failures)
    r = bpcheck("scenario", str(ROOT / "scenarios" / "000-replay-1.toml"), "--engine", "sc_engines:crasher", env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 1 and "ENGINE-FAULT" in r.stdout and "Traceback" not in r.stderr


def test_lines_of_an_engine_without_cloning_are_replayed_from_the_start(tmp_path, engines_module):
    body = """
    [[step]]
    do = "enter Battle Phase"
    [line.a]
    [[line.a.step]]
    until = "battle_step"
    [line.b]
    [[line.b.step]]
    until = "battle_step"
    offered = ["attack Battle Ox -> direct", "end Battle Phase"]
    """
    engines_module.NoCloning.starts = 0
    res = run(tmp_path, body, engines_module.NoCloning())
    assert res.status == "pass", res.failures
    assert engines_module.NoCloning.starts == 2  # line b started the duel again
    starts_before = engines_module.NoCloning.starts
    res = run(tmp_path, body, ReferenceEngine())
    assert res.status == "pass" and engines_module.NoCloning.starts == starts_before


# --- the step vocabulary ------------------------------------------------------------------------


def test_until_passes_to_the_named_step(tmp_path):
    res = run(
        tmp_path,
        """
        [[step]]
        do = "enter Battle Phase"
        [[step]]
        until = "battle_step"
        events = [{ kind = "passed", player = "P1" }, { kind = "passed", player = "P2" }, { kind = "phase_changed", to = "battle_step" }]
        expect = { step = "battle_step", to_act = "P1" }
        """,
    )
    assert res.status == "pass", res.failures


def test_until_fails_clearly_when_a_real_decision_is_needed(tmp_path):
    res = run(tmp_path, '[[step]]\nuntil = "damage_step_start"\n')
    assert res.status == "fail"
    (f,) = res.failures
    assert "until 'damage_step_start': passing cannot reach it: after 0 passes the engine is in main1 (P1 to act)" in f
    assert "offers no 'pass' (a real decision is needed); offered: enter Battle Phase, skip Battle Phase" in f


def test_until_stops_where_the_duel_ends(tmp_path):
    res = run(
        tmp_path,
        """
        [[step]]
        do = "enter Battle Phase"
        [[step]]
        until = "battle_step"
        do = "attack Battle Ox -> direct"
        [[step]]
        until = "main2"
        """,
    )
    assert res.status == "fail"
    assert "passing cannot reach it" in res.failures[0] and "battle_step" in res.failures[0]


def test_offered_is_the_exact_set(tmp_path):
    ok = run(tmp_path, '[[step]]\noffered = ["skip Battle Phase", "enter Battle Phase"]\n')
    assert ok.status == "pass", ok.failures
    bad = run(tmp_path, '[[step]]\noffered = ["enter Battle Phase"]\n')
    assert bad.failures == ["step[0]: offered: expected exactly enter Battle Phase; also offered: skip Battle Phase"]


def test_event_tables_match_on_event_data_and_count(tmp_path):
    prefix = """
    [[step]]
    do = "enter Battle Phase"
    [[step]]
    until = "battle_step"
    do = "attack Battle Ox -> direct"
    [[step]]
    until = "damage_step_end"
    """
    ok = run(tmp_path, prefix + 'events = [{ kind = "battle_damage", player = "P2", amount = 1700, attacker = "Battle Ox", count = 1 }]\n')
    assert ok.status == "pass", ok.failures
    bad = run(tmp_path, prefix + 'events = [{ kind = "battle_damage", player = "P1", amount = 1700 }]\nno_events = [{ kind = "battle_damage", amount = 1700 }]\n')
    assert bad.status == "fail"
    assert "events: expected battle_damage(player=P1, amount=1700), 0 matched" in bad.failures[0]
    assert "no_events: expected no battle_damage(amount=1700); the engine gave: battle_damage(player=P2, amount=1700, attacker=Battle Ox, target=none)" in bad.failures[1]
    assert any("battle_damage(player=P2, amount=1700" in c for c in bad.context)


def test_expect_card_fields_paths_counts_and_turn(tmp_path):
    res = run(
        tmp_path,
        """
        [[step]]
        do = "enter Battle Phase"
        [[step]]
        until = "battle_step"
        do = "attack Battle Ox -> direct"
        expect = { turn = 2, turn_player = "P1", "open_windows.attack_declaration" = true, "players[1].lp" = 8000, card = { "Battle Ox" = { attacks_declared = 1, declared_direct = true, declared_at = [], controller = "P1", destroyed_by_battle = false }, "Call of the Haunted" = { face_up = false } }, count = { "P1 monsters" = 1, "P2 graveyard" = { "Blue-Eyes White Dragon" = 1 }, "P2 field" = 1 } }
        """,
    )
    assert res.status == "pass", res.failures
    bad = run(tmp_path, '[[step]]\nexpect = { turn = 3, "players[0].lp" = 7000, card = { "Battle Ox" = { position = "defense" } }, count = { "P1 hand" = 2 } }\n')
    assert bad.failures == [
        "step[0]: expect.turn: expected 3, got 2",
        "step[0]: expect.players[0].lp: expected 7000, got 8000",
        "step[0]: expect.card.Battle Ox.position: expected 'defense', got 'attack'",
        "step[0]: expect.count.P1 hand: expected 2, got 0",
    ]


def test_counts_of_tokens(tmp_path):
    res = run(
        tmp_path,
        """
        [[step]]
        do = "enter Battle Phase"
        [[step]]
        do = "pass"
        [[step]]
        do = "activate Scapegoat"
        [[step]]
        until = "battle_step"
        events = [{ kind = "summoned", card = "Sheep Token", player = "P2", count = 4 }]
        expect = { count = { "P2 monsters" = { "Sheep Token" = 4 }, "P2 graveyard" = { "Scapegoat" = 1 } } }
        """,
        board="000-tokens.toml",
        rules='["CARD-TOKEN"]',
    )
    assert res.status == "pass", res.failures


def test_never_is_checked_in_every_state_the_step_passes_through(tmp_path):
    prefix = """
    [[step]]
    do = "enter Battle Phase"
    [[step]]
    until = "battle_step"
    do = "attack Battle Ox -> direct"
    """
    ok = run(tmp_path, prefix + '[[step]]\nuntil = "damage_step_end"\nnever = ["activate Call of the Haunted"]\n')
    assert ok.status == "fail"  # it is legal in the Battle Step, right after the declaration
    assert "never 'activate Call of the Haunted': offered in battle_step (P2 to act)" in ok.failures[0]
    ds = run(tmp_path, prefix + '[[step]]\nuntil = "damage_step_start"\n[[step]]\nuntil = "damage_step_end"\nnever = ["activate Call of the Haunted"]\n')
    assert ds.status == "pass", ds.failures


def test_a_failing_line_is_named_and_the_other_line_still_runs(tmp_path):
    res = run(
        tmp_path,
        """
        [[step]]
        do = "enter Battle Phase"
        [line.wrong]
        [[line.wrong.step]]
        expect = { step = "main2" }
        [line.right]
        [[line.right.step]]
        until = "battle_step"
        [[line.right.step]]
        expect = { step = "main1" }
        """,
    )
    assert res.failures == [
        "line.wrong.step[0]: expect.step: expected 'main2', got 'battle_start_step'",
        "line.right.step[1]: expect.step: expected 'main1', got 'battle_step'",
    ]
    assert res.steps_run == 4  # every step played, the failing ones included


def test_unobserved_paths_are_reported_not_judged(tmp_path):
    class Blind(ReferenceEngine):
        capabilities = Capabilities(unobserved=frozenset({"open_windows", "players[].monsters[].declared_at"}))

    res = run(tmp_path, '[[step]]\nexpect = { "open_windows.summon" = true, card = { "Battle Ox" = { declared_at = ["Battle Ox"] } } }\n', Blind())
    assert res.status == "pass"
    assert res.not_judged == [
        "step[0]: expect.open_windows.summon: not judged, the engine does not observe open_windows",
        "step[0]: expect.card.Battle Ox.declared_at: not judged, the engine does not observe players[].monsters[].declared_at",
    ]


def test_the_runner_uses_only_the_engine_interface(tmp_path):
    """An engine that is not the reference model's class at all (only the five methods)."""

    class Wrapped:
        name = "wrapped"

        def __init__(self):
            self._e = ReferenceEngine()

        def start(self, board):
            return self._e.start(board)

        def legal_actions(self, s):
            return self._e.legal_actions(s)

        def apply(self, s, a):
            return self._e.apply(s, a)

        def observe(self, s):
            return self._e.observe(s)

        def is_terminal(self, s):
            return self._e.is_terminal(s)

    sc = load_scenario(ROOT / "scenarios" / "000-replay-1.toml")
    assert run_scenario(sc, Wrapped()).status == "pass"


# --- validation: a typo must not pass silently ---------------------------------------------------

BAD = [
    ('rules = ["RPL-TRIGGR"]', "rules[0]: unknown rule ID 'RPL-TRIGGR' (not in docs/rules.md); did you mean RPL-TRIGGER"),
    ('[[step]]\nlegal = ["activate Call of the Hauntd"]', "step[0].legal[0]: 'activate Call of the Hauntd': 'Call of the Hauntd' is not a card on the board; did you mean 'Call of the Haunted'?"),
    ('[[step]]\nnot_legal = ["activate Mirror Force"]', "step[0].not_legal[0]: 'activate Mirror Force': 'Mirror Force' is not a card on the board"),
    ('[[step]]\ndo = "attack Battle Oxx -> direct"', "step[0].do: 'attack Battle Oxx -> direct': 'Battle Oxx' is not a card on the board"),
    ('[[step]]\ndo = "atack Battle Ox"', "step[0].do: 'atack Battle Ox' is not an action label"),
    ('[[step]]\nexpect = { where = { "Blue Eyes White Dragon" = "P2 M1" } }', "step[0].expect.where.Blue Eyes White Dragon: 'Blue Eyes White Dragon' is not a card on the board"),
    ('[[step]]\nexpect = { where = { "Battle Ox" = "P3 M1" } }', "step[0].expect.where.Battle Ox: unknown place 'P3 M1'"),
    ('[[step]]\nevents = ["battle_dmg"]', "step[0].events[0]: unknown event kind 'battle_dmg'"),
    ('[[step]]\nevents = [{ kind = "battle_damage", amout = 1 }]', "step[0].events[0].amout: a 'battle_damage' event has no field 'amout'"),
    ('[[step]]\nevents = [{ kind = "battle_damage", amount = "1" }]', "step[0].events[0].amount: expected integer, got str '1'"),
    ('[[step]]\nevents = [{ kind = "battle_damage", player = 1 }]', "step[0].events[0].player: expected one of P1, P2, got 1"),
    ('[[step]]\nno_events = [{ kind = "replay", count = 1 }]', "step[0].no_events[0].count: `count` belongs in `events`"),
    ('[[step]]\nuntil = "damage_step"', "step[0].until: unknown step 'damage_step'"),
    ('[[step]]\nexpect = { "players[0].lpp" = 1 }', "step[0].expect.players[0].lpp: not a path into the observation"),
    ('[[step]]\nexpect = { "open_windows.summon" = 1 }', "step[0].expect.open_windows.summon: expected boolean, got int 1"),
    ('[[step]]\nexpect = { card = { "Battle Ox" = { atack = 1 } } }', "step[0].expect.card.Battle Ox.atack: not a field of a card on the field"),
    ('[[step]]\nexpect = { count = { "P1 feild" = 1 } }', "step[0].expect.count.P1 feild: unknown place 'P1 feild'"),
    ('[[step]]\nexpect = { count = { "P1 field" = { "Sheep Token" = 1 } } }', "step[0].expect.count.P1 field.Sheep Token: 'Sheep Token' is not a card on the board"),
    ('[line."a b"]', 'line.a b: a line name is letters, digits'),
    ('[[step]]\noffered = ["pass", "pass"]', "step[0].offered: a label is listed twice"),
    ('[[step]]\nexpect = { chain = ["Call of the Hauted"] }', "step[0].expect.chain[0]: 'Call of the Hauted' is not a card on the board"),
    ('[[step]]\nexpect = { lp = [8000] }', "step[0].expect.lp: expected [P1 LP, P2 LP], got 1 values"),
]


@pytest.mark.parametrize("body, message", BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_validation_names_file_field_and_problem(tmp_path, body, message):
    if body.startswith("rules ="):
        p = tmp_path / "sc.toml"
        p.write_text(f'name = "t"\nsource = "test"\n{body}\nboard = "{(BOARDS / "000-replay-1.toml").as_posix()}"\n')
    else:
        p = write(tmp_path, body + "\n")
    with pytest.raises(InputError) as e:
        load_scenario(p)
    assert e.value.render().startswith(f"{p}: "), e.value.render()
    assert message in e.value.render(), e.value.render()


def test_validate_rejects_a_typo_with_exit_2_through_a_real_process(tmp_path):
    p = write(tmp_path, '[[step]]\nnot_legal = ["replay: attack Blue-Eyes White Dragn"]\n')
    r = bpcheck("validate", str(p))
    assert r.returncode == 2
    assert f"{p}: step[0].not_legal[0]: 'replay: attack Blue-Eyes White Dragn': 'Blue-Eyes White Dragn' is not a card on the board" in r.stderr
    assert "Traceback" not in r.stderr
    ok = bpcheck("validate", str(ROOT / "scenarios"))
    assert ok.returncode == 0, ok.stderr


def test_labels_accepted_by_validation(tmp_path):
    """Shapes the model's labels take (docs/model.md): prefixes, places, effect labels, costs."""
    for label in [
        "pass",
        "end Battle Phase",
        "attack",
        "attack Battle Ox",
        "attack Battle Ox -> direct",
        "replay:",
        "replay: attack Blue-Eyes White Dragon",
        "replay: attack Blue-Eyes",  # a prefix ending in whole words of a name
        "replay: call off",
        "activate Call of the Haunted -> Blue-Eyes White Dragon",
        "choose ATK 300",
    ]:
        load_scenario(write(tmp_path, f'[[step]]\nnot_legal = ["{label}"]\n'))
    ec = 'legal = ["activate Enemy Controller (take control) [Battle Ox] -> Mystic Tomato", "activate Enemy Controller (change position)"]'
    load_scenario(write(tmp_path, f"[[step]]\n{ec}\n", board="000-control-owner-graveyard.toml", rules='["DS-SEND-OWNER-GY"]'))
    with pytest.raises(InputError, match="'Enemy Controller' has no effect labelled 'steal'"):
        load_scenario(write(tmp_path, '[[step]]\nlegal = ["activate Enemy Controller (steal)"]\n', board="000-control-owner-graveyard.toml", rules='["DS-SEND-OWNER-GY"]'))


def test_the_shipped_rule_catalogue_is_docs_rules_md():
    import re

    ids = set(re.findall(r"^### ([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\s*$", (ROOT / "docs" / "rules.md").read_text(encoding="utf-8"), flags=re.M))
    assert rule_catalogue() == ids and len(ids) > 50


def test_scenarios_against_an_engine_in_another_process():
    """`cmd:` engines (JSON lines, docs/protocol.md): here bpcheck's own server, once serving a mutant."""
    sc = str(ROOT / "scenarios" / "000-replay-1.toml")
    ok = bpcheck("scenario", sc, "--engine", f"cmd:{sys.executable} -m bpcheck serve")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = bpcheck("scenario", sc, "--engine", f"cmd:{sys.executable} -m bpcheck serve --engine mutant:replay-resets-count")
    assert bad.returncode == 1 and "expect.attacks.Battle Ox: expected 1, got 0" in bad.stdout


def test_an_observation_without_the_schema_fields_is_an_engine_fault(tmp_path):
    class Sloppy(ReferenceEngine):
        def observe(self, state):
            obs = super().observe(state)
            del obs["step"]
            return obs

    res = run(tmp_path, '[[step]]\nuntil = "battle_step"\n', Sloppy())
    assert res.status == "fail"
    assert res.failures == ["step[0]: ENGINE-FAULT (schema) in observe: the observation lacks step (docs/model.md)"]


def test_an_inline_board_plays_in_process_and_is_skipped_for_a_cmd_engine(tmp_path):
    p = tmp_path / "inline.toml"
    p.write_text(
        'name = "t"\nsource = "test"\nrules = ["BP-OPTIONAL"]\n[board]\nname = "b"\nsource = "test"\nrules = ["BP-OPTIONAL"]\nturn = 2\nturn_player = 1\n'
        '[board.p1]\nlp = 8000\nmonsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]\n[board.p2]\nlp = 8000\n'
        '[[step]]\noffered = ["enter Battle Phase", "skip Battle Phase"]\n'
    )
    assert run_scenario(load_scenario(p)).status == "pass"
    r = bpcheck("scenario", str(p), "--engine", f"cmd:{sys.executable} -m bpcheck serve")
    assert r.returncode == 3 and "SKIP" in r.stdout and "inline [board] table" in r.stdout, r.stdout + r.stderr  # not checked: not a pass
