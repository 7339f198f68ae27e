"""Boards `bpcheck fuzz` found, shrunk and kept as regressions (tests/data/fuzz-found/).

Each was drawn when the pool grew by the cards of issue 31 and broke an invariant on the
*reference* model itself, through a mutant's search that reached it first:
- scrap-shark-call-of-the-haunted.toml (fuzz --seed 1): "Scrap Shark", Special Summoned by
  "Call of the Haunted", destroys itself when "Castle Walls" is activated; Call of the Haunted
  stayed on the field ("When that target is destroyed, destroy this card": the reference's
  self-destruction on activation did not run the rule's follow-ups, CARD-CONT-TARGET).
- steamroid-mirror-wall.toml (fuzz --seed 6): "Steamroid" attacking into "Mirror Wall" (its ATK
  halved) gains its Damage-Step-only 500 on entering the Damage Step; acc.damage-step-continuous
  added the 500 to the halved ATK, where the two effects compose otherwise: it now says "not
  judged" for a monster whose ATK other effects change too, instead of a false failure.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOUND = ROOT / "tests" / "data" / "fuzz-found"


def _run(run_cli, tmp_path, board: str, *extra: str) -> tuple[int, str, dict]:
    out_json = tmp_path / "r.json"
    code, out, err = run_cli("check", str(FOUND / board), "--json", str(out_json), *extra)
    return code, out + err, json.loads(out_json.read_text())


def _inv(doc: dict, inv_id: str) -> dict:
    return next(i for i in doc["boards"][0]["invariants"] if i["id"] == inv_id)


def test_call_of_the_haunted_goes_with_scrap_shark_destroyed_by_its_own_effect(run_cli, tmp_path):
    code, out, doc = _run(run_cli, tmp_path, "scrap-shark-call-of-the-haunted.toml")
    assert code == 0, out
    linked = _inv(doc, "acc.linked-monster")
    assert linked["verdict"] == "held" and linked["checked"] > 0, linked


def test_a_halved_steamroid_is_not_judged_by_its_damage_step_boost_alone(run_cli, tmp_path):
    code, out, doc = _run(run_cli, tmp_path, "steamroid-mirror-wall.toml")
    assert code == 0, out
    assert "not judged here: acc.damage-step-continuous: Steamroid: its ATK (900) is changed by other effects" in out, out
    assert _inv(doc, "acc.damage-step-continuous")["violations"] == 0
