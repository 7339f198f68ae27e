"""`bpcheck check --differential`: the engine under test in lockstep with the reference model.

The engines in tests/diff_engines.py each disagree with the reference in one known way; several
of them break no invariant, so only the comparison can catch them.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from bpcheck.explorers.differential import ABSENT, actions_disagreement, json_diff, transition_disagreement

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "boards" / "000-replay-1.toml")
SCHEMA = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())


@pytest.fixture
def engines(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


def _diff_cex(run_cli, tmp_path, engine: str, *extra: str) -> tuple[int, str, dict]:
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli("check", SMALL, "--engine", engine, "--differential", "--json", str(out), *extra)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    diffs = [c for c in doc["boards"][0]["counterexamples"] if c["invariant"] == "DIFF"]
    return code, stdout, diffs[0] if diffs else None  # the shortest one (they come by length)


def test_reference_agrees_with_itself(tmp_path, run_cli):
    plain, diff = tmp_path / "p.json", tmp_path / "d.json"
    assert run_cli("check", SMALL, "--no-reduce", "--json", str(plain))[0] == 0  # differential explores every state
    code, stdout, _ = run_cli("check", SMALL, "--differential", "--json", str(diff))
    assert code == 0, stdout
    doc = json.loads(diff.read_text())
    jsonschema.validate(doc, SCHEMA)
    b, p = doc["boards"][0], json.loads(plain.read_text())["boards"][0]
    rows = {r["id"]: r for r in b["invariants"]}
    # Every state, action set and transition was compared, and all agreed.
    assert rows["DIFF"]["verdict"] == "held" and rows["DIFF"]["violations"] == 0
    assert rows["DIFF"]["checked"] >= b["states"] + b["transitions"]
    # Lockstep adds no state: the same graph as the plain check.
    assert (b["states"], b["transitions"], b["max_depth"]) == (p["states"], p["transitions"], p["max_depth"])


def test_observation_disagreement_names_the_paths(tmp_path, run_cli, engines):
    code, stdout, c = _diff_cex(run_cli, tmp_path, "buggy_engines:CallOffForgetsAttack")
    assert code == 1
    assert c["kind"] == "transition" and c["length"] == 9 and c["trace"][-1] == "replay: call off"
    assert c["message"].startswith("after 'replay: call off', the observations differ at 2 paths: ")
    assert "players[0].monsters[0].attacks_declared: engine 0, reference 1" in c["message"]
    assert "players[0].monsters[0].declared_direct: engine false, reference true" in c["message"]
    # the headline says what differs (its kind and path), not the pseudo-invariant's statement; the
    # message names the values, so no board is drawn (the observations are in --json)
    assert c["statement"] == "after the same action, the observations differ at players[0].monsters[].attacks_declared (observation players[0].monsters[].attacks_declared)"
    assert f"DIFF: {c['statement']}" in stdout and "The engine under test agrees" not in stdout
    block = stdout[stdout.index("DIFF: "):]
    block = block[: block.index("\n\n")]
    assert "board before the violating step:" not in block and block.rstrip().endswith("[replay_choice, attack_ended]")
    assert "  7-8. P1 and P2 pass   [summoned, chain_link_resolved, chain_resolved, replay]" in stdout  # a run of passes, one line
    assert "the observations before and after each step are in --json, --cex-dir and --report" in stdout


@pytest.mark.parametrize("kind, path, headline", [
    ("actions", "engine-only:attack", "the engine offers an attack the reference does not (actions engine-only:attack)"),
    ("actions", "reference-only:replay", "the reference offers a replay choice the engine does not (actions reference-only:replay)"),
    ("window", "engine-only:main1", "the engine asks a player to respond in main1 where the reference asks no one (window engine-only:main1)"),
    ("window", "reference-only:battle_step", "the reference asks a player to respond in battle_step where the engine asks no one (window reference-only:battle_step)"),
    ("window", "step:main1/battle_start_step", "the engine asks in main1 what the reference asks in battle_start_step (window step:main1/battle_start_step)"),
    ("events", "events.replay", "after the same action, the replay events differ (events events.replay)"),
    ("event-order", "events.card_moved", "after the same action, the same events come in another order (first at card_moved) (event-order events.card_moved)"),
    ("terminal", "engine", "the engine alone says the game is over here (terminal engine)"),
    ("initial", "players[0].lp", "the initial observations differ at players[0].lp (initial players[0].lp)"),
    ("identity", "players[1].spells[].passcode", "a passcode is not its card's at players[1].spells[].passcode (identity players[1].spells[].passcode)"),
])
def test_every_diff_kind_has_a_headline_that_says_what_differs(kind, path, headline):
    from bpcheck.explorers.differential import describe_diff

    assert describe_diff(kind, path) == headline


def test_lp_disagreement(tmp_path, run_cli, engines):
    code, _out, c = _diff_cex(run_cli, tmp_path, "diff_engines:DamageRefund")
    assert code == 1
    # Battle Ox (1700) attacks directly: P2 goes to 6300, the engine leaves it at 6400.
    assert c["message"] == "after 'pass', the observations differ at 1 path: players[1].lp: engine 6400, reference 6300"
    assert c["kind"] == "transition" and c["trace"][3] == "attack Battle Ox -> direct"


def test_action_the_reference_offers_and_the_engine_does_not(tmp_path, run_cli, engines):
    code, _out, c = _diff_cex(run_cli, tmp_path, "diff_engines:NoCallOff")
    assert code == 1
    assert c["kind"] == "actions"
    assert c["message"] == "reference offers 'replay: call off' which the engine does not"
    # The state is the one right after the replay: 8 steps (enter, pass, pass, attack, pass, CotH, pass, pass).
    assert c["length"] == 8


def test_action_the_engine_offers_alone_is_a_disagreement(tmp_path, run_cli, engines):
    # the invariants judge where it leads (the Battle Phase straight to the End Phase) ...
    code, stdout, _ = run_cli("check", SMALL, "--engine", "diff_engines:SkipFromBattleStep", "--invariants", "turn.phase-order")
    assert code == 1 and "the turn went from the Battle Phase to the End Phase" in stdout
    # ... and without them the differential still objects to the offer itself
    code, stdout, _ = run_cli("check", SMALL, "--engine", "diff_engines:SkipFromBattleStep", "--invariants", "attack counts,replay,damage step,chains and windows,accounting")
    assert code == 0, stdout
    code, _out, c = _diff_cex(run_cli, tmp_path, "diff_engines:SkipFromBattleStep")
    assert code == 1
    assert c["kind"] == "actions" and c["length"] == 3
    assert c["trace"] == ["enter Battle Phase", "pass", "pass"]
    assert c["message"] == "engine offers 'skip Battle Phase' which the reference does not"


def test_event_disagreements(tmp_path, run_cli, engines):
    # a step change without its event: the turn invariants see it, the others do not
    code, stdout, _ = run_cli("check", SMALL, "--engine", "diff_engines:SilentPhaseChanges")
    assert code == 1 and "the step changed main1 -> battle_start_step without a phase_changed event" in stdout
    code, stdout, _ = run_cli("check", SMALL, "--engine", "diff_engines:SilentPhaseChanges", "--invariants", "attack counts,replay,damage step,chains and windows,accounting")
    assert code == 0, stdout
    code, _out, c = _diff_cex(run_cli, tmp_path, "diff_engines:SilentPhaseChanges")
    assert code == 1 and c["kind"] == "transition" and c["trace"] == ["enter Battle Phase"]
    assert "the events differ: engine [], reference [phase_changed]" in c["message"]
    assert 'events[0]: engine absent, reference {"kind": "phase_changed", "from": "main1", "to": "battle_start_step"}' in c["message"]
    code, _out, c = _diff_cex(run_cli, tmp_path, "diff_engines:DamageEventWrongPlayer")
    assert code == 1 and c["kind"] == "transition"
    assert "events[2].player: engine 0, reference 1" in c["message"]
    assert "observations differ" not in c["message"]


def test_terminal_disagreement(tmp_path, run_cli, engines):
    code, stdout, _ = run_cli("check", SMALL, "--engine", "diff_engines:EndsAtMain2")
    assert code == 0, stdout
    code, _out, c = _diff_cex(run_cli, tmp_path, "diff_engines:EndsAtMain2")
    assert code == 1 and c["kind"] == "state"
    assert c["message"] == "engine says this state is terminal (nothing more to play), the reference does not"


def test_dfs_finds_it_too_and_output_is_deterministic(tmp_path, run_cli, engines):
    outs = []
    for k in range(2):
        f = tmp_path / f"r{k}.json"
        code, stdout, _ = run_cli(
            "check", SMALL, "--engine", "diff_engines:DamageRefund", "--differential", "--strategy", "dfs", "--json", str(f)
        )
        # DFS takes another line: Battle Ox attacks Blue-Eyes and P1 takes the 1300.
        assert code == 1 and "the observations differ at 1 path: players[0].lp: engine 6800, reference 6700" in stdout
        outs.append((stdout, f.read_bytes()))
    assert outs[0] == outs[1]


def test_a_diff_counterexample_replays(tmp_path, run_cli, engines):
    cex_dir = tmp_path / "cex"
    code, _o, _e = run_cli("check", SMALL, "--engine", "diff_engines:DamageRefund", "--differential", "--cex-dir", str(cex_dir))
    assert code == 1
    f = cex_dir / "000-replay-1.DIFF.json"
    code, stdout, _ = run_cli("replay", str(f), "--engine", "diff_engines:DamageRefund")
    assert code == 1
    assert "still disagree at step 14: after 'pass', the observations differ at 1 path: players[1].lp" in stdout
    # The file names the faulty engine, but replay uses the command line's (default: reference).
    code, stdout, _ = run_cli("replay", str(f))
    assert code == 0, stdout
    assert "DIFF is no longer violated" in stdout
    assert 'the file names engine "diff_engines:DamageRefund"; replaying on reference' in stdout


def test_json_diff():
    assert json_diff({"a": 1, "b": [1, 2]}, {"a": True, "b": [1], "c": None}) == [
        ("a", 1, True),
        ("b[1]", 2, ABSENT),
        ("c", ABSENT, None),
    ]
    assert json_diff({"x": (1, [2])}, {"x": [1, (2,)]}) == []  # tuples are arrays
    assert json_diff({"x": {"y": 1}}, {"x": [1]}) == [("x", {"y": 1}, [1])]
    assert json_diff(1, 1.0) == [] and json_diff(0, False) == [("(the whole value)", 0, False)]


def test_disagreement_messages():
    assert actions_disagreement(["pass", "b"], ["pass", "b"]) is None
    assert actions_disagreement(["pass", "x"], ["y", "pass"]) == (
        "engine offers 'x' which the reference does not; reference offers 'y' which the engine does not"
    )
    obs = {"players": [{"lp": 8000}, {"lp": 7000}]}
    ref = {"players": [{"lp": 8000}, {"lp": 8000}]}
    assert transition_disagreement("pass", obs, obs, [], []) is None
    assert transition_disagreement("pass", obs, ref, [], []) == (
        "after 'pass', the observations differ at 1 path: players[1].lp: engine 7000, reference 8000"
    )


# -- what one side does not report is not compared ------------------------------------------------


def test_an_event_field_one_side_does_not_report_is_not_compared_and_listed(tmp_path, run_cli, engines):
    """The EDOPro adapter's chain events have no effect, speed or damage_step (F7): no DIFF, the
    lockstep goes on past the activation (DIFF held on the whole board), and the fields are listed."""
    out = tmp_path / "r.json"
    code, stdout, _err = run_cli("check", "boards/000-replay-1.toml", "--engine", "diff_engines:ChainEventsWithoutSpeed", "--differential",
                                 "--invariants", "attack counts", "--json", str(out))
    assert code == 0, stdout
    b = json.loads(out.read_text())["boards"][0]
    jsonschema.validate(json.loads(out.read_text()), SCHEMA)
    assert {r["id"]: r for r in b["invariants"]}["DIFF"]["verdict"] == "held"
    fields = ["events.chain_link_added.damage_step", "events.chain_link_added.effect", "events.chain_link_added.speed"]
    assert b["not_reported"] == [{"path": p, "side": "engine"} for p in fields]
    assert b["not_compared"] == fields
    assert "not compared (the engine does not report them): " + ", ".join(fields) in stdout


def test_a_field_both_sides_report_is_still_compared(tmp_path, run_cli, engines):
    out = tmp_path / "r.json"
    code, stdout, _err = run_cli("check", "boards/000-replay-1.toml", "--engine", "diff_engines:ChainEventsWithoutSpeedWrongTargets",
                                 "--differential", "--invariants", "attack counts", "--json", str(out))
    assert code == 1, stdout
    (c,) = [c for c in json.loads(out.read_text())["boards"][0]["counterexamples"] if c["invariant"] == "DIFF"]
    assert c["diff"] == {"kind": "events", "path": "events.chain_link_added"}
    assert c["message"].endswith("the events differ: engine [chain_link_added], reference [chain_link_added]: events[0].targets[0]: engine absent, reference 3")


def test_common_fields_and_unreported_keep_missing_events_and_items_as_disagreements():
    from bpcheck.explorers.differential import common_fields, obs_diff, unreported

    eng = [{"kind": "chain_link_added", "card": "X"}, {"kind": "summoned", "card": "Y", "how": "special"}]
    ref = [{"kind": "chain_link_added", "card": "X", "speed": 2}, {"kind": "summoned", "card": "Y", "how": "special", "from": "graveyard"},
           {"kind": "replay", "attacker_uid": 1}]
    e2, r2, skipped = common_fields(eng, ref)
    assert skipped == [("events.chain_link_added.speed", "engine"), ("events.summoned.from", "engine")]
    assert e2 == eng and r2[:2] == eng and r2[2] == {"kind": "replay", "attacker_uid": 1}  # the missing event stays
    real, skipped = unreported(obs_diff({"a": {"x": 1}, "l": [1]}, {"a": {"x": 2, "y": 3}, "l": [1, 2]}))
    assert [p for p, _x, _y in real] == ["a.x", "l[1]"] and skipped == [("a.y", "engine")]
