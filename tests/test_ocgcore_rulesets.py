"""The real EDOPro core under each ruleset (issue 31 item 3; docs/ocgcore.md, "Rulesets and the
core's duel flags"): the adapter gives the core the duel flags of the board's ruleset, seen
through what the core then does, never by reading the adapter's variables.

Like tests/test_ocgcore.py, every test here skips and says why when the core is not at
../shared/ocgcore/ (or OCGCORE, OCG_SCRIPTS, OCG_CARDS), except in CI (BPCHECK_REQUIRE_OCGCORE=1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpcheck.engines.ocgcore import OcgcoreEngine, default_paths
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
LIB, SCRIPTS, CARDS = default_paths()
MISSING = [p for p in (LIB, SCRIPTS, CARDS) if not os.path.exists(p)]
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"
pytestmark = pytest.mark.skipif(
    bool(MISSING) and not REQUIRED,
    reason=f"the EDOPro core is not available: {', '.join(MISSING)} not found (set OCGCORE, OCG_SCRIPTS, OCG_CARDS)",
)

# 000 replay example 1: Battle Ox attacks directly, Call of the Haunted brings Blue-Eyes back, and
# after the chain (one more round of passes in the core: findings F19) the replay is due.
REPLAY1 = "boards/000-replay-1.toml"
TO_REPLAY = ["enter Battle Phase", "pass", "pass", "attack Battle Ox -> direct", "pass",
             "activate Call of the Haunted -> Blue-Eyes White Dragon", "pass", "pass", "pass", "pass"]


def _play(ruleset: str | None, labels: list[str], path: str = REPLAY1):
    """The core on the board (000-replay-1) under `ruleset` (None: the board's own, tcg) after
    `labels`: the last step's events (kinds) and the actions then offered."""
    b = load_board(str(ROOT / path), path, ruleset=ruleset)
    e = OcgcoreEngine()
    try:
        s = e.start(b)
        evs = []
        for label in labels:
            acts = {a.label: a for a in e.legal_actions(s)}
            assert label in acts, (ruleset, label, sorted(acts))
            s, evs = e.apply(s, acts[label])
        return [x.kind for x in evs], {a.label: a for a in e.legal_actions(s)}, e.ruleset
    finally:
        e.close()


def test_the_core_is_there():
    assert not MISSING, f"the EDOPro core is required here (BPCHECK_REQUIRE_OCGCORE=1) but {', '.join(MISSING)} not found"


def test_tcg_and_ocg_the_core_asks_its_replay_question_and_the_declaration_counts():
    """No duel flag of the core selects 002's OCG Battle Phase, so ocg plays as tcg: the core asks
    whether to attack again; calling the attack off leaves Battle Ox no attack (RPL-COUNTS)."""
    for ruleset in (None, "tcg", "ocg"):
        kinds, acts, played = _play(ruleset, TO_REPLAY)
        assert played == (ruleset or "tcg")
        assert kinds[-1] == "replay"
        assert sorted(acts) == ["replay: attack Blue-Eyes White Dragon", "replay: call off"], ruleset
    kinds, acts, _ = _play("tcg", TO_REPLAY + ["replay: call off"])
    assert kinds == ["replay_choice", "attack_ended"]
    assert sorted(acts) == ["end Battle Phase"]  # the declaration counted: no second attack


def test_goat_the_core_stores_the_attack():
    """Under goat the core gets DUEL_STORE_ATTACK_REPLAYS: it does not ask (its battle processor
    answers "no" itself) and does not count the declaration, so Battle Ox may attack Blue-Eyes
    later in the same Battle Phase (GOAT-RPL-STORED). The adapter says it as the model's goat
    replay: a replay, called off, the attack ended."""
    kinds, acts, played = _play("goat", TO_REPLAY)
    assert played == "goat"
    assert kinds[-3:] == ["replay", "replay_choice", "attack_ended"] and "attack_stopped" not in kinds
    assert not any(a.kind == "replay" for a in acts.values())
    assert sorted(acts) == ["attack Battle Ox -> Blue-Eyes White Dragon", "end Battle Phase"]


# 000 replay example 3: Mystical Space Typhoon destroys Umi during Battle Ox's direct attack, so
# The Legendary Fisherman, on the field all along, may now be attacked: no monster changed.
REPLAY3 = "boards/000-replay-3.toml"
TO_REPLAY3 = ["enter Battle Phase", "pass", "pass", "attack Battle Ox -> direct", "pass",
              "activate Mystical Space Typhoon -> Umi", "pass", "pass", "pass", "pass"]


def test_goat_a_stored_replay_is_told_from_a_stop_by_the_core_not_by_the_monsters():
    """The adapter tells the core's silent drop of a stored replay from a stop by the attacker's
    STATUS_ATTACK_CANCELED, not by a change of the opponent's monsters: here none changed (Umi
    left), and the core, which asks under tcg, stores the attack under goat."""
    kinds, acts, _ = _play("tcg", TO_REPLAY3, REPLAY3)
    assert kinds[-1] == "replay" and "replay: call off" in acts
    kinds, acts, _ = _play("goat", TO_REPLAY3, REPLAY3)
    assert kinds[-3:] == ["replay", "replay_choice", "attack_ended"] and "attack_stopped" not in kinds
    assert "attack Battle Ox -> The Legendary Fisherman" in acts  # the stored attack, declared again


def _bpcheck(*args):
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_check_under_goat_passes_with_the_baseline_and_says_its_ruleset(tmp_path):
    """`check --engine ocgcore --ruleset goat` plays the board with the flag and judges it with
    the goat invariants (the TCG count invariants are not judged there) and passes with the
    baseline; the ruleset is in the text and the JSON."""
    out = tmp_path / "r.json"
    r = _bpcheck("check", REPLAY1, "--engine", "ocgcore", "--ruleset", "goat", "--baseline", "baselines/ocgcore.toml",
                 "--max-states", "5000", "--json", str(out), "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"PASS         {REPLAY1} (ruleset goat)" in r.stdout
    assert "not judged here: attack.count: it judges ocg, tcg only; this board is played under goat" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["ruleset"] == "goat" and doc["boards"][0]["ruleset"] == "goat"
    # the core answers its own replay question, so no state has a replay pending: replay.stored
    # (which judges the actions offered then) never applies on the core (findings F30)
    vacuous = next((line for line in r.stdout.splitlines() if line.startswith("vacuous on every board")), "")
    assert "replay.stored" in vacuous


def test_export_puzzle_names_the_rulesets_flags(tmp_path):
    """The puzzle the adapter gives the core (export-puzzle writes the same) sets the flags."""
    goat = tmp_path / "goat.toml"
    goat.write_text('ruleset = "goat"\n' + (ROOT / REPLAY1).read_text())  # top-level keys come before the tables
    r = _bpcheck("export-puzzle", str(goat), "--out", str(tmp_path / "g.lua"))
    assert r.returncode == 0, r.stderr
    lua = (tmp_path / "g.lua").read_text()
    assert "Debug.ReloadFieldBegin(DUEL_ATTACK_FIRST_TURN | DUEL_STORE_ATTACK_REPLAYS, 5)" in lua
    r = _bpcheck("export-puzzle", REPLAY1, "--out", str(tmp_path / "t.lua"))
    assert r.returncode == 0, r.stderr
    assert "Debug.ReloadFieldBegin(DUEL_ATTACK_FIRST_TURN, 5)" in (tmp_path / "t.lua").read_text()
