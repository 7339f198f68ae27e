"""The protocol's `start` carries the ruleset to play (docs/protocol.md, "The ruleset"): the
board's own, else `--ruleset`'s, else tcg. Before, `start` carried the board as written only, so
a `cmd:` engine played a board naming no ruleset under TCG whatever `--ruleset` said."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

from bpcheck.engines.interface import start_document
from bpcheck.engines.jsonl import protocol_schema
from bpcheck.engines.serve import Server
from bpcheck.model.board import load_board
from bpcheck.model.rulesets import RULESETS

ROOT = Path(__file__).resolve().parent.parent
START_STEP = ROOT / "boards" / "rulesets" / "start-step.toml"  # names no ruleset; TCG and OCG differ in the Start Step
SERVE = f"cmd:{sys.executable} -m bpcheck.engines.serve"


def test_start_document_carries_the_effective_ruleset(tmp_path):
    assert start_document(load_board(START_STEP))["ruleset"] == "tcg"
    assert start_document(load_board(START_STEP, ruleset="ocg"))["ruleset"] == "ocg"
    doc = start_document(load_board(START_STEP, ruleset="goat"))
    assert doc["ruleset"] == "goat" and "ruleset" not in doc["board"]  # the board stays as written
    named = tmp_path / "named.toml"
    named.write_text('ruleset = "ocg"\n' + START_STEP.read_text(encoding="utf-8"), encoding="utf-8")
    assert start_document(load_board(named, ruleset="goat"))["ruleset"] == "ocg"  # the file's own wins


def test_cmd_engine_plays_the_ruleset_option(run_cli, tmp_path):
    """In lockstep with the in-process reference under --ruleset ocg: the served reference must
    play OCG too (under TCG it offers Waboku in the Start Step: a DIFF)."""
    code, out, err = run_cli("check", str(START_STEP), "--ruleset", "ocg", "--engine", SERVE, "--differential", "-q", "--json", str(tmp_path / "r.json"))
    assert code == 0, out + err
    assert "DIFF" not in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["boards"][0]["ruleset"] == "ocg"
    # and the TCG game is another one (the test would say nothing if the rulesets agreed here)
    code_t, out_t, _ = run_cli("check", str(START_STEP), "--engine", SERVE, "-q", "--json", str(tmp_path / "t.json"))
    assert code_t == 0
    tcg = json.loads((tmp_path / "t.json").read_text())["boards"][0]
    assert (tcg["states"], tcg["transitions"]) != (doc["boards"][0]["states"], doc["boards"][0]["transitions"])


def _session(start: dict) -> dict:
    s = Server()
    assert "error" not in json.loads(s.reply_line(json.dumps({"id": 1, "op": "hello", "protocol": 1, "versions": [1, 2]}).encode()))
    return json.loads(s.reply_line(json.dumps({"id": 2, "op": "start", **start}).encode())), s


def test_serve_honours_and_checks_the_ruleset_field():
    doc = start_document(load_board(START_STEP))
    reply, s = _session({**doc, "ruleset": "ocg"})
    assert reply == {"id": 2, "state": 0} and s.engine.ruleset == "ocg"
    reply, s = _session({k: v for k, v in doc.items() if k != "ruleset"})  # a client that sends none (older bpcheck)
    assert reply == {"id": 2, "state": 0} and s.engine.ruleset == "tcg"
    reply, _ = _session({**doc, "ruleset": "speed"})
    assert "bad 'ruleset': 'speed'" in reply["error"]
    reply, _ = _session({**doc, "board": {**doc["board"], "ruleset": "tcg"}, "ruleset": "ocg"})
    assert "the board names the ruleset 'tcg'" in reply["error"]


def test_the_schema_names_every_ruleset_and_a_start_document_fits_it():
    schema = protocol_schema()
    assert schema["$defs"]["start_request"]["properties"]["ruleset"]["enum"] == list(RULESETS)
    v = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/start_request"})
    doc = {"id": 2, "op": "start", **start_document(load_board(START_STEP, ruleset="ocg"))}
    assert not list(v.iter_errors(doc))
    assert list(v.iter_errors({**doc, "ruleset": "speed"}))


NODE = f"cmd:node {ROOT / 'engines' / 'examples' / 'node' / 'vanilla-engine.js'}"
SKELETON = f"cmd:{sys.executable} {ROOT / 'engines' / 'examples' / 'python' / 'skeleton_engine.py'}"
INDEPENDENT = f"cmd:{sys.executable} {ROOT / 'tests' / 'independent_engine' / 'serve.py'}"


@pytest.mark.parametrize("engine", [NODE, SKELETON, INDEPENDENT], ids=["node", "skeleton", "independent"])
def test_tcg_only_engines_refuse_another_ruleset_from_the_option(run_cli, engine):
    if engine == NODE and shutil.which("node") is None:
        pytest.fail("node is not installed (./scripts/test installs nodejs)")
    board = str(ROOT / "boards" / "002-enter-battle-phase.toml")  # vanilla: every one of them plays it
    code, out, err = run_cli("check", board, "--engine", engine, "-q", "--invariants", "acc.lp-ledger")
    assert code == 0, out + err
    code, out, err = run_cli("check", board, "--ruleset", "ocg", "--engine", engine, "-q", "--invariants", "acc.lp-ledger")
    assert code == 3, out + err  # skipped: the engine's words name the ruleset
    assert "SKIP" in out and "TCG rules only" in out and "'ocg'" in out.replace('"', "'"), out
