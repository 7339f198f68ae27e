"""`bpcheck check --differential --baseline FILE`: known, explained disagreements pass; new ones
fail; listed ones that no longer occur are reported; bad baselines are bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
SMALL = "boards/000-replay-1.toml"
SCHEMA = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())
ENGINE = "diff_engines:DamageRefund"  # two distinct DIFFs on SMALL: players[1].lp (14 steps), players[0].lp (17)

P2 = """
[[known]]
board = "boards/000-replay-1.toml"
kind = "observation"
path = "players[1].lp"
reason = "the engine refunds 100 LP to P2 (planted)"
"""
P1 = """
[[known]]
board = "000-replay-1.toml"
kind = "observation"
path = "players[0].lp"
reason = "the engine refunds 100 LP to P1 (planted)"
"""


@pytest.fixture(autouse=True)
def setup(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    monkeypatch.chdir(ROOT)


def run(run_cli, tmp_path, baseline_text: str | None, engine: str = ENGINE, *extra: str):
    args = ["check", SMALL, "--engine", engine, "--differential", "--invariants", "attack counts", "--json", str(tmp_path / "r.json"), *extra]
    if baseline_text is not None:
        f = tmp_path / "baseline.toml"
        f.write_text(baseline_text)
        args += ["--baseline", str(f)]
    code, out, err = run_cli(*args)
    doc = json.loads((tmp_path / "r.json").read_text()) if (tmp_path / "r.json").exists() else None
    if doc is not None:
        jsonschema.validate(doc, SCHEMA)
    return code, out + err, doc


def test_every_known_disagreement_listed_passes(run_cli, tmp_path):
    code, out, doc = run(run_cli, tmp_path, P2 + P1)
    assert code == 0, out
    b = doc["boards"][0]
    assert b["verdict"] == "pass" and b["baseline"] == {"known": 2, "new": 0, "gone": []}
    assert [c["baselined"] for c in b["counterexamples"]] == ["the engine refunds 100 LP to P2 (planted)", "the engine refunds 100 LP to P1 (planted)"]
    assert "known disagreement (baseline): DIFF observation players[1].lp: the engine refunds 100 LP to P2 (planted)" in out
    assert "violation:" not in out  # known ones are listed, not drawn again


def test_a_baseline_may_be_json(run_cli, tmp_path):
    import tomllib

    f = tmp_path / "baseline.json"
    f.write_text(json.dumps(tomllib.loads(P2 + P1)))
    code, out, _ = run_cli("check", SMALL, "--engine", ENGINE, "--differential", "--invariants", "attack counts", "--baseline", str(f))
    assert code == 0 and out.count("known disagreement (baseline): DIFF observation") == 2, out


def test_a_new_disagreement_fails(run_cli, tmp_path):
    code, out, doc = run(run_cli, tmp_path, P2)
    assert code == 1
    b = doc["boards"][0]
    assert b["verdict"] == "fail" and b["baseline"] == {"known": 1, "new": 1, "gone": []}
    assert "violation: after 'pass', the observations differ at 1 path: players[0].lp: engine 6800, reference 6700" in out


def test_a_listed_disagreement_that_no_longer_occurs_is_reported(run_cli, tmp_path):
    code, out, doc = run(run_cli, tmp_path, P2 + P1, "reference")
    assert code == 0, out
    gone = doc["boards"][0]["baseline"]["gone"]
    assert [g["path"] for g in gone] == ["players[1].lp", "players[0].lp"]
    assert "baseline: no longer occurs: DIFF observation players[1].lp (the engine refunds 100 LP to P2 (planted))" in out


def test_other_boards_entries_are_ignored(run_cli, tmp_path):
    other = P2.replace("boards/000-replay-1.toml", "boards/000-replay-2.toml")
    code, out, doc = run(run_cli, tmp_path, other)
    assert code == 1 and doc["boards"][0]["baseline"] == {"known": 0, "new": 2, "gone": []}


@pytest.mark.parametrize(
    "text, where",
    [
        (P2.replace('reason = "the engine refunds 100 LP to P2 (planted)"\n', ""), "known[0].reason: missing: every known disagreement names why the disagreement is known"),
        (P2.replace('kind = "observation"', 'kind = "lp"'), "known[0].kind: unknown DIFF kind 'lp' (known: actions, observation, events"),
        (P2 + 'colour = "red"\n', "known[0].colour: unknown field (allowed: board, kind, path, reason, engine, invariant, signature)"),
        (P2.replace('path = "players[1].lp"', "path = 3"), "known[0].path: expected a non-empty string, got 3"),
        (P2 + P2, "known[1]: lists the same disagreement as known[0]"),
        ("version = 2\n" + P2, "version: unsupported baseline version 2"),
        ("known = 3\n", "known: expected an array of tables"),
        ("[[known]\n", "malformed TOML"),
        ("extra = 1\n", "extra: unknown field (allowed: version, known)"),
    ],
)
def test_bad_baselines_are_bad_input(run_cli, tmp_path, text, where):
    code, out, doc = run(run_cli, tmp_path, text)
    assert code == 2
    assert f"bpcheck: error: {tmp_path / 'baseline.toml'}: {where}" in out
    assert "Traceback" not in out


def test_baseline_needs_a_file(run_cli, tmp_path):
    for extra in ((), ("--differential",)):
        code, out, err = run_cli("check", SMALL, *extra, "--baseline", str(tmp_path / "none.toml"))
        assert code == 2 and f"{tmp_path / 'none.toml'}: no such file" in out + err and "Traceback" not in err


def test_without_differential_only_the_invariant_entries_apply(run_cli, tmp_path):
    """A check of the invariants alone (no lockstep with the model) can be baselined too: the
    known invariant violation passes, and the DIFF entries, which cannot occur, are not gone."""
    bl = tmp_path / "b.toml"
    bl.write_text(P2 + "[[known]]\nboard = \"boards/000-replay-1.toml\"\ninvariant = \"attack.count\"\nsignature = \"engine-count-differs\"\nreason = \"known: the engine forgets\"\n")
    args = ("check", SMALL, "--engine", "mutant:replay-resets-count", "--invariants", "attack.count", "--json", str(tmp_path / "r.json"))
    code, out, _ = run_cli(*args)
    assert code == 1 and "attack.count" in out  # the violation, without the baseline
    code, out, _ = run_cli(*args, "--baseline", str(bl))
    assert code == 0, out
    b = json.loads((tmp_path / "r.json").read_text())["boards"][0]
    assert b["verdict"] == "pass" and b["baseline"] == {"known": 1, "new": 0, "gone": []}
    assert "known disagreement (baseline): attack.count [engine-count-differs]: known: the engine forgets" in out
    # against the reference, which keeps the count, the entry is reported gone (by its invariant)
    code, out, _ = run_cli("check", SMALL, "--invariants", "attack.count", "--baseline", str(bl))
    assert code == 0 and "baseline: no longer occurs: attack.count [engine-count-differs] (known: the engine forgets)" in out
    assert "DIFF observation players[1].lp" not in out


def test_a_baseline_entry_may_name_a_known_invariant_violation(tmp_path, run_cli):
    """A known violation of an invariant (not a DIFF) is listed by its invariant ID and reason."""
    bl = tmp_path / "b.toml"
    bl.write_text(
        'version = 1\n[[known]]\nboard = "boards/000-replay-1.toml"\ninvariant = "attack.count"\nsignature = "engine-count-differs"\n'
        'reason = "known: the test engine forgets"\n'
    )
    code, out, _ = run_cli("check", "boards/000-replay-1.toml", "--engine", "mutant:replay-resets-count", "--differential", "--baseline", str(bl))
    assert code == 1  # its other violations are not listed: they still fail the board
    assert "known disagreement (baseline): attack.count [engine-count-differs]: known: the test engine forgets" in out
    bad = tmp_path / "bad.toml"
    bad.write_text('[[known]]\nboard = "x"\ninvariant = "attack.nope"\nsignature = "s"\nreason = "r"\n')
    code, _o, err = run_cli("check", "boards/000-replay-1.toml", "--differential", "--baseline", str(bad))
    assert code == 2 and "known[0].invariant: unknown invariant 'attack.nope'" in err


# -- signatures: an invariant entry accepts one distinct failure of its invariant -----------------

NO_REPLAY = "mutant:opponent-summon-no-replay"  # the reference, but a monster appearing on the opponent's side never replays
LATE = '[[known]]\nboard = "boards/000-replay-1.toml"\ninvariant = "replay.iff"\nsignature = "replay-late"\nreason = "the engine replays one round late (known)"\n'


def test_a_known_late_replay_does_not_hide_an_engine_that_never_replays(run_cli, tmp_path):
    """The issue's case: a baseline that knows an engine replays late (the core's findings F19)
    must not let an engine that does not replay at all pass: another signature, another finding."""
    bl = tmp_path / "b.toml"
    bl.write_text(LATE)
    out = tmp_path / "r.json"
    args = ("check", SMALL, "--engine", NO_REPLAY, "--invariants", "replay.iff", "--json", str(out))
    code, text, _ = run_cli(*args, "--baseline", str(bl))
    assert code == 1, text
    b = json.loads(out.read_text())["boards"][0]
    (cex,) = b["counterexamples"]
    assert cex["signature"] == "replay-missing" and "baselined" not in cex
    assert cex["message"].startswith("no replay came before the attack went on into damage_step_start: the chain that changed the potential targets")
    assert b["verdict"] == "fail" and b["baseline"]["new"] == 1 and b["baseline"]["known"] == 0
    assert "violation [replay-missing]: no replay came before" in text
    assert "baseline: no longer occurs: replay.iff [replay-late] (the engine replays one round late (known))" in text
    # listed by its own signature, the same violation is known
    bl.write_text(LATE.replace("replay-late", "replay-missing"))
    code, text, _ = run_cli(*args, "--baseline", str(bl))
    assert code == 0 and "known disagreement (baseline): replay.iff [replay-missing]: the engine replays one round late (known)" in text, text


def test_an_invariant_entry_without_a_signature_is_refused(run_cli, tmp_path):
    bl = tmp_path / "b.toml"
    bl.write_text(LATE.replace('signature = "replay-late"\n', ""))
    code, out, err = run_cli("check", SMALL, "--invariants", "replay.iff", "--baseline", str(bl))
    assert code == 2 and "Traceback" not in out + err
    assert f"bpcheck: error: {bl}: known[0].signature: missing: an invariant entry names the signature of the violation it accepts" in err
    assert "(replay.iff: replay-late, replay-missing, replay-missing-stopped, stop-late, stop-missing," in err
    assert "`bpcheck baseline RESULT.json` drafts entries with it" in err
    bl.write_text(LATE.replace("replay-late", "late"))
    code, _o, err = run_cli("check", SMALL, "--invariants", "replay.iff", "--baseline", str(bl))
    assert code == 2 and f"{bl}: known[0].signature: replay.iff has no signature 'late' (its signatures: replay-late," in err
    bl.write_text(P2.replace('path = "players[1].lp"\n', 'path = "players[1].lp"\nsignature = "replay-late"\n'))
    code, _o, err = run_cli("check", SMALL, "--differential", "--baseline", str(bl))
    assert code == 2 and "known[0].signature: a signature goes with an invariant" in err
    bl.write_text(LATE + LATE)
    code, _o, err = run_cli("check", SMALL, "--baseline", str(bl))
    assert code == 2 and "known[1]: lists the same violation as known[0]" in err
    bl.write_text(LATE + LATE.replace("replay-late", "replay-missing"))  # two signatures of one invariant: two entries
    code, out, _e = run_cli("check", SMALL, "--invariants", "replay.iff", "--baseline", str(bl))
    assert code == 0 and out.count("baseline: no longer occurs: replay.iff [") == 2, out


def test_an_entry_for_the_core_applies_to_any_build_of_it():
    from bpcheck.explorers.baseline import Known

    k = Known("b.toml", "window", "engine-only:main1", "F1", engine="ocgcore")
    assert k.matches_engine("ocgcore") and k.matches_engine("ocgcore:/tmp/build/libocgcore.so")
    assert not k.matches_engine("reference") and not k.matches_engine("cmd:ocgcore")
    lib = Known("b.toml", "window", "engine-only:main1", "F1", engine="ocgcore:/a/lib.so")
    assert lib.matches_engine("ocgcore:/a/lib.so") and not lib.matches_engine("ocgcore") and not lib.matches_engine("ocgcore:/b/lib.so")
    assert Known("b.toml", "window", "x", "r").matches_engine("anything")
