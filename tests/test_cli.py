"""The CLI contract: commands, exit statuses, messages."""

from __future__ import annotations

import json


def test_cards_lists_the_pool(run_cli):
    code, out, _ = run_cli("cards")
    assert code == 0
    assert "44095762  trap    normal" in out and "Mirror Force" in out
    assert out.strip().endswith("82 cards")


def test_cards_shows_one_card_as_json(run_cli):
    code, out, _ = run_cli("cards", "Honest", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["passcode"] == "37742478"
    assert d["effects"][0]["when"] == "damage_step"


def test_cards_unknown_name_is_bad_input(run_cli):
    code, _out, err = run_cli("cards", "Mirror")
    assert code == 2
    assert "unknown card 'Mirror'" in err and "Mirror Force" in err


def test_usage_error_is_exit_2(run_cli):
    code, _out, err = run_cli("frobnicate")
    assert code == 2
    assert "invalid choice" in err


def test_scenario_pass_fail_and_json(tmp_path, run_cli, root):
    failing = tmp_path / "fail.toml"
    failing.write_text(
        f"""
name = "deliberately wrong"
source = "test"
rules = ["DS-CALC-DIRECT"]
board = "{(root / 'boards' / '000-replay-1.toml').as_posix()}"
[[step]]
do = "enter Battle Phase"
expect = {{ step = "main2" }}
"""
    )
    good = root / "scenarios" / "000-replay-1.toml"
    out_json = tmp_path / "r.json"
    code, out, _ = run_cli("scenario", str(good), str(failing), "--json", str(out_json))
    assert code == 1
    assert "PASS" in out and "FAIL" in out
    assert "step: expected 'main2', got 'battle_start_step'" in out
    assert "1 passed, 1 failed" in out
    data = json.loads(out_json.read_text())
    assert [s["status"] for s in data["scenarios"]] == ["pass", "fail"]


def test_scenario_with_an_illegal_action_fails_with_the_legal_list(tmp_path, run_cli, root):
    sc = tmp_path / "illegal.toml"
    sc.write_text(
        f"""
name = "illegal action"
source = "test"
rules = ["BP-FIRST-TURN"]
board = "{(root / 'boards' / '000-replay-1.toml').as_posix()}"
[[step]]
do = "attack Battle Ox -> direct"
"""
    )
    code, out, _ = run_cli("scenario", str(sc))
    assert code == 1
    assert "'attack Battle Ox -> direct' is not legal here; legal: enter Battle Phase, skip Battle Phase" in out


def test_malformed_scenario_is_bad_input_and_other_results_are_kept(tmp_path, run_cli, root):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nsource = "y"\nrules = []\nboard = "b.toml"\n')
    good = root / "scenarios" / "000-replay-1.toml"
    code, out, err = run_cli("scenario", str(good), str(bad))
    assert code == 2
    assert "PASS" in out
    assert "bad.toml: rules: a scenario cites at least one rule ID" in err
