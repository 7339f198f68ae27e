"""Summaries say what happened (issue 24, item 5): an invariant that found a violation on a
board is never "not evaluated" there; the run's "vacuous on every board" leaves out what was not
evaluated and lists it apart; two legal actions with one label are an ENGINE-FAULT whether the
engine runs in process or over `cmd:`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpcheck.engines.interface import Capabilities
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.core import Bounds
from bpcheck.explorers.run import check_board
from bpcheck.invariants.base import Invariant
from bpcheck.harness.check import board_lines as _board_lines
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "tests" / "engines"
BOARD = ROOT / "boards" / "000-replay-1.toml"


class NoLingering(ReferenceEngine):
    """The reference model, declaring (protocol 2) that it does not observe `lingering`."""

    capabilities = Capabilities(unobserved=frozenset({"lingering"}))

    def observe(self, state) -> dict:
        obs = dict(super().observe(state))
        del obs["lingering"]
        return obs


def _state_invariant(inv_id: str, check) -> Invariant:
    """A state invariant that reads `lingering` without declaring it (``reads``): where it reads
    it, the engine's missing field makes it "not evaluated" there (explorers/checking.py)."""
    return Invariant(inv_id, "a test invariant", ("ATK-DECLARE",), "state", "test", check)


def _lines(inv: Invariant) -> tuple[list[str], dict]:
    board = load_board(BOARD, "boards/000-replay-1.toml")
    br = check_board(board, NoLingering(), [inv], "bfs", Bounds(), "no-lingering")
    row = next(r for r in br.invariant_rows() if r["id"] == inv.id)
    return _board_lines(br, "boards/000-replay-1.toml", argparse.Namespace(stats=False, verbose=False)), row


def test_an_invariant_that_found_a_violation_is_not_called_not_evaluated_on_that_board():
    # During an attack it reads what the engine does not observe (not evaluated there); in the
    # Battle Step with no attack it finds a violation.
    def check(obs, ctx):
        if obs["attack"] is not None:
            return obs["lingering"] == []
        return "a violation in the Battle Step" if obs["step"] == "battle_step" else None

    lines, row = _lines(_state_invariant("test.violated-and-unreadable", check))
    assert row["verdict"] == "violated" and row["violations"] >= 1
    text = "\n".join(lines)
    # the board's lines name the violated invariant (its trace and message follow, by root cause)
    assert "violated: test.violated-and-unreadable" in text, text
    assert "not evaluated" not in text and "partly evaluated" not in text, text


def test_an_invariant_judged_on_part_of_a_board_is_partly_evaluated_not_not_evaluated():
    def check(obs, ctx):
        if obs["attack"] is not None:
            return obs["lingering"] == []
        return True if obs["step"] == "battle_step" else None

    lines, row = _lines(_state_invariant("test.held-and-unreadable", check))
    # it did not hold on the board (it could not read some states), so its verdict is not "held";
    # what it judged is said beside it
    assert row["verdict"] == "not evaluated" and row["checked"] > 0 and row["violations"] == 0
    assert "             partly evaluated: test.held-and-unreadable (held where judged; not evaluated where engine does not observe lingering)" in lines


def test_the_run_summary_lists_not_evaluated_apart_from_vacuous(run_cli, monkeypatch):
    monkeypatch.syspath_prepend(str(ENGINES))
    code, out, _err = run_cli("check", str(BOARD), "--engine", "v2_engines:Partial")
    assert code == 0, out
    vacuous = next(line for line in out.splitlines() if line.startswith("vacuous on every board"))
    unevaluated = next(line for line in out.splitlines() if line.startswith("not evaluated on any board"))
    assert unevaluated.startswith("not evaluated on any board (the engine does not observe what they read): ")
    # (damage.lingering-end reads the monitor's effects history, not lingering: judged, here vacuous)
    for inv_id, why in (("priority.turn-player-first", "pending_triggers"),):
        assert inv_id not in vacuous
        assert f"{inv_id} (the engine does not observe {why})" in unevaluated
    assert "attack.no-battle-phase-turn-1" in vacuous  # turn 2: that situation never arises


def _bpcheck(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ENGINES), os.environ.get("PYTHONPATH", "")]))
    env.pop("CI", None)
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


@pytest.mark.parametrize("route", ["in process", "cmd:"])
def test_two_actions_with_one_label_are_an_engine_fault_on_both_routes(tmp_path, route):
    spec = "duplicate_labels:make" if route == "in process" else f"cmd:{sys.executable} -m bpcheck serve --engine duplicate_labels:make"
    r = _bpcheck("check", "boards/rule-calc-atk-atk.toml", "--engine", spec, "--json", str(tmp_path / "r.json"))
    assert r.returncode == 1, r.stdout + r.stderr
    (cex,) = json.loads((tmp_path / "r.json").read_text())["boards"][0]["counterexamples"]
    assert cex["invariant"] == "ENGINE-FAULT"
    assert cex["message"] == "schema: two legal actions share the label 'attack Summoned Skull -> Battle Ox' (listing the legal actions)"
    assert "Traceback" not in r.stderr
