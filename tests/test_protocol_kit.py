"""The engine author's kit: the stdlib-only Python skeleton server passes `bpcheck check` (in
lockstep with the reference), docs/transcript.md is what a real run gives, and
docs/observation.md documents every field of the observation schema."""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bpcheck.engines.jsonl import protocol_schema

ROOT = Path(__file__).resolve().parent.parent
SKELETON = ROOT / "engines" / "examples" / "python" / "skeleton_engine.py"
BOARDS = ["boards/002-enter-battle-phase.toml", "boards/002-first-turn.toml"]


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_the_skeleton_uses_the_standard_library_only():
    tree = ast.parse(SKELETON.read_text())
    mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert mods and mods <= set(sys.stdlib_module_names), mods - set(sys.stdlib_module_names)


def test_the_skeleton_passes_bpcheck_check_in_lockstep_with_the_reference(tmp_path):
    engine = f"cmd:{shlex.quote(sys.executable)} -I {shlex.quote(str(SKELETON))}"  # -I: no site-packages, no bpcheck
    out, ref = tmp_path / "s.json", tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bpcheck", "check", *BOARDS, "--engine", engine, "--differential", "--check-determinism", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # differential explores every state: compared with the reference's --no-reduce graph
    subprocess.run([sys.executable, "-m", "bpcheck", "check", *BOARDS, "--no-reduce", "--json", str(ref)], cwd=ROOT, check=True, capture_output=True, timeout=120)
    got, want = json.loads(out.read_text()), json.loads(ref.read_text())
    for g, w in zip(got["boards"], want["boards"]):
        assert (g["states"], g["transitions"], g["verdict"]) == (w["states"], w["transitions"], "pass")
        assert g["not_compared"] == ["chains_in_step", "next_uid"]
        assert {r["id"]: r for r in g["invariants"]}["DIFF"]["violations"] == 0
    assert "not compared (the engine does not observe them): chains_in_step, next_uid" in proc.stdout
    # A board it cannot play is refused at start: skipped with its words, not a pass (exit 3); 0 with --allow-skips.
    argv = [sys.executable, "-m", "bpcheck", "check", "boards/002-skip-battle-phase.toml", "--engine", engine]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "SKIPPED" in proc.stdout and "the turn player controls a monster: attacks are beyond the skeleton" in proc.stdout
    allowed = subprocess.run([*argv, "--allow-skips"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert allowed.returncode == 0


def test_the_transcript_is_current():
    proc = subprocess.run([sys.executable, "scripts/transcript.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = (ROOT / "docs" / "transcript.md").read_text()
    assert text.count("### Step ") >= 10 and '"kind":"duel_over"' in text and '"capabilities":{}' in text
    # part 2: a whole battle with a replay and a Damage Step chain (issue 34 item 2)
    part2 = text.split("## Part 2:", 1)[1]
    assert '"kind":"replay","attacker_uid":1,"reason":"targets_changed"' in part2
    assert '"kind":"replay_choice"' in part2
    assert part2.count('"damage_step":true') == 2 and '"kind":"chain_resolved"' in part2  # a two-link chain in the Damage Step
    assert "the attack-declaration window closes. Only `passed` is emitted" in text.split("## Part 2:", 1)[0]  # part 1's two rounds
    assert "it closed the attack-declaration window" in part2  # part 2: a chain closes it
    assert '"kind":"damage_calculation"' in part2 and '"to":"end_phase"' in part2


def _fields(node, defs, prefix="", out=None):
    out = set() if out is None else out
    while isinstance(node, dict) and "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    if not isinstance(node, dict):
        return out
    for sub in node.get("anyOf", []):
        _fields(sub, defs, prefix, out)
    for k, v in node.get("properties", {}).items():
        out.add(k)
        _fields(v, defs, prefix, out)
    if "items" in node:
        _fields(node["items"], defs, prefix, out)
    return out


def test_observation_md_documents_every_field():
    schema = protocol_schema()
    fields = _fields(schema["$defs"]["observation"], schema["$defs"])
    text = (ROOT / "docs" / "observation.md").read_text()
    documented = {w for code in re.findall(r"`([^`]+)`", text) for w in re.findall(r"[a-z_0-9]+", code)}
    missing = sorted(f for f in fields if f not in documented)
    assert not missing, f"docs/observation.md does not document: {missing}"
