"""`bpcheck baseline RESULT.json`: baseline entries drafted from a check result, with empty
reasons that `--baseline` refuses until they are written (docs/checking.md, Baselines)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SMALL = "boards/000-replay-1.toml"
ENGINE = "diff_engines:DamageRefund"  # two distinct DIFFs on SMALL: players[1].lp, players[0].lp
P2 = '[[known]]\nboard = "boards/000-replay-1.toml"\nkind = "observation"\npath = "players[1].lp"\nreason = "planted"\n'


@pytest.fixture(autouse=True)
def setup(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    monkeypatch.chdir(ROOT)


def check(run_cli, tmp_path, *extra):
    code, out, err = run_cli("check", SMALL, "--engine", ENGINE, "--differential", "--invariants", "attack counts",
                             "--json", str(tmp_path / "r.json"), *extra)
    return code, out + err


def test_the_draft_lists_every_disagreement_and_is_refused_until_explained(run_cli, tmp_path):
    code, _ = check(run_cli, tmp_path)
    assert code == 1
    draft = tmp_path / "d.toml"
    code, out, err = run_cli("baseline", str(tmp_path / "r.json"), "--out", str(draft))
    assert code == 0 and "baseline: 2 entries drafted" in err
    doc = tomllib.loads(draft.read_text())
    assert [(k["kind"], k["path"], k["reason"]) for k in doc["known"]] == [("observation", "players[1].lp", ""), ("observation", "players[0].lp", "")]
    assert all(k["board"] == SMALL and "engine" in k for k in doc["known"])
    assert "# DIFF (" in draft.read_text()  # each entry says what it stands for
    code, again, _ = run_cli("baseline", str(tmp_path / "r.json"))
    assert again == draft.read_text()  # the same result, the same text, to a file or to standard output
    code, out = check(run_cli, tmp_path, "--baseline", str(draft))
    assert code == 2 and f"{draft}: known[0].reason: expected a non-empty string" in out and "Traceback" not in out
    draft.write_text(draft.read_text().replace('reason = ""', 'reason = "explained"'))
    code, out = check(run_cli, tmp_path, "--baseline", str(draft))
    assert code == 0, out
    # once all are listed, the result has nothing left to draft
    _c, rest, _e = run_cli("baseline", str(tmp_path / "r.json"))
    assert "[[known]]" not in rest and "0 entries" in rest


def test_what_a_baseline_lists_already_is_not_drafted_again(run_cli, tmp_path):
    bl = tmp_path / "b.toml"
    bl.write_text(P2)
    code, _ = check(run_cli, tmp_path, "--baseline", str(bl))
    assert code == 1  # players[0].lp is new
    code, out, _ = run_cli("baseline", str(tmp_path / "r.json"))
    doc = tomllib.loads(out)
    assert [k["path"] for k in doc["known"]] == ["players[0].lp"]


def test_invariant_violations_are_drafted_and_structural_ones_only_named(run_cli, tmp_path):
    result = {"boards": [{"board": "boards/x.toml", "counterexamples": [
        {"board": "boards/x.toml", "invariant": "attack.count", "engine": "mutant:m", "message": "two\nattacks", "trace": ["a"], "length": 1,
         "signature": "second-attack"},
        {"board": "boards/x.toml", "invariant": "attack.count", "engine": "mutant:m", "message": "again", "trace": ["a", "b"], "length": 2,
         "signature": "second-attack"},
        # a result written before signatures: the signature is read from the message
        {"board": "boards/x.toml", "invariant": "attack.count", "engine": "mutant:m", "trace": ["a"], "length": 1,
         "message": "Battle Ox (uid 1): the engine reports attacks_declared = 0, its declarations this turn number 1"},
        {"board": "boards/x.toml", "invariant": "attack.count", "message": "no phrase of the invariant", "trace": [], "length": 0},
        {"board": "boards/x.toml", "invariant": "DEADLOCK", "message": "no action", "trace": [], "length": 0},
        {"board": "boards/y\x1b.toml", "invariant": "attack.count", "message": "an engine's \x1b[2J and \x7f", "trace": [], "length": 0,
         "signature": "second-attack"},
    ]}]}
    f = tmp_path / "r.json"
    f.write_text(json.dumps(result))
    code, out, err = run_cli("baseline", str(f))
    assert code == 0
    doc = tomllib.loads(out)
    # one per (invariant, signature), never one per invariant
    assert doc["known"][0] == {"board": "boards/x.toml", "engine": "mutant:m", "invariant": "attack.count", "signature": "second-attack", "reason": ""}
    assert doc["known"][1] == {"board": "boards/x.toml", "engine": "mutant:m", "invariant": "attack.count", "signature": "engine-count-differs", "reason": ""}
    assert doc["known"][2] == {"board": "boards/y\x1b.toml", "invariant": "attack.count", "signature": "second-attack", "reason": ""}
    assert out.count("\n[[known]]\n") == 3  # a table of its own, never an inline one
    # control characters TOML allows in no comment are escaped there (the text still parses, above)
    assert "# attack.count [second-attack] (0 steps): an engine's \\x1b[2J and \\x7f" in out and "# -- boards/y\\x1b.toml --" in out
    assert "# attack.count [second-attack] (1 step): two attacks" in out and "# not listable (DEADLOCK, 0 steps): no action" in out
    assert "# not listable (no signature: its message names no distinct failure of the invariant, 0 steps): no phrase of the invariant" in out
    assert "2 counterexamples cannot be listed" in err


@pytest.mark.parametrize("text, message", [
    ('{"boards": 3}', "boards: expected an array, got integer"),
    ('{"boards": [{"counterexamples": [{"board": "b", "invariant": "nope", "trace": []}]}]}',
     "boards[0].counterexamples[0].invariant: unknown invariant \"nope\""),
    ("[1]", "expected a JSON object, got array"),
    ("{", ""),
])
def test_a_bad_result_file_is_bad_input(run_cli, tmp_path, text, message):
    f = tmp_path / "r.json"
    f.write_text(text)
    code, out, err = run_cli("baseline", str(f))
    assert code == 2 and f"bpcheck: error: {f}:" in err and message in err and "Traceback" not in err
    assert out == ""
