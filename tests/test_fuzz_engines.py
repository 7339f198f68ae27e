"""`bpcheck fuzz` on any engine (issue 24, item 4): engines in another language over the
protocol (the shipped Node engine, a copy of it with a planted bug, `bpcheck serve`), an
in-process engine that reads only the board document, boards drawn from the cards the engine
plays, and `--baseline` (a known violation does not stop the search)."""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bpcheck.explorers.progress import without_progress
from bpcheck.model.cards import builtin_pool

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "tests" / "engines"
NODE_ENGINE = ROOT / "engines" / "examples" / "node" / "vanilla-engine.js"
PLANTED = ENGINES / "node" / "vanilla-engine-facedown-direct.js"
VANILLA = ["Battle Ox", "Blue-Eyes White Dragon", "Dark Magician", "Gemini Elf", "Giant Soldier of Stone", "Mokey Mokey",
           "Neo the Magic Swordsman", "Ojama Token", "Sheep Token", "Summoned Skull"]  # the pool's Normal Monsters and Tokens


def _node(script: Path) -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("BPCHECK_REQUIRE_NODE"):
            pytest.fail("node is not installed, and BPCHECK_REQUIRE_NODE says the Node.js engine must be tested (scripts/test)")
        pytest.skip("node is not installed: the Node.js engines cannot run here")
    return f"cmd:{shlex.quote(node)} {shlex.quote(str(script.relative_to(ROOT)))}"


def bpcheck(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
    env["PYTHONPATH"] = os.pathsep.join([str(ENGINES), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


# -- engines in another language ------------------------------------------------------------


def test_the_node_engine_fuzzes_green_on_boards_of_the_cards_it_plays(tmp_path):
    r = bpcheck("fuzz", "--engine", _node(NODE_ENGINE), "--examples", "12", "--json", str(tmp_path / "f.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    n = len(list(builtin_pool()))
    assert lines[0] == (
        f"cards: the engine refused {n - len(VANILLA)} of the pool's {n} cards offered alone on a board; boards are drawn from the "
        f"other {len(VANILLA)} (--cards NAMES to choose): " + ", ".join(VANILLA)
    ), lines[0]
    assert lines[1].startswith("fuzz: 12 boards drawn, ") and "refused" not in lines[1]
    assert "PASS  no invariant broken on the 12 boards explored" in r.stdout
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["verdict"] == "pass" and doc["cards"] == VANILLA
    assert doc["stats"]["skipped"] == 0 and doc["stats"]["explored"] == 12 and doc["stats"]["states"] > 12
    refused = doc["cards_refused"]  # card -> the engine's own words, from its error reply to `start`
    assert len(refused) == n - len(VANILLA) and not set(refused) & set(VANILLA)
    assert "this engine plays no Spell or Trap Cards" in refused["Mirror Force"], refused["Mirror Force"]
    assert "is not a vanilla monster" in refused["Dark Elf"], refused["Dark Elf"]


def test_fuzz_finds_the_bug_planted_in_a_copy_of_the_node_engine(tmp_path):
    cex = tmp_path / "cex"
    buggy = _node(PLANTED)
    r = bpcheck("fuzz", "--engine", buggy, "--cards", "Battle Ox,Mokey Mokey", "--examples", "60", "--cex-dir", str(cex), "--json", str(tmp_path / "f.json"))
    assert r.returncode == 1, r.stdout + r.stderr
    fail = json.loads((tmp_path / "f.json").read_text())["failure"]
    assert fail["invariant"] == "attack.direct-legal" and fail["shrunk"] is True
    assert "attacked directly while the opponent controls monsters that can be attacked" in fail["message"]
    board = fail["board"]
    tp, other = f"p{board['turn_player']}", f"p{3 - board['turn_player']}"
    assert [m["position"] for m in board[other]["monsters"]] == ["facedown"] * len(board[other]["monsters"])  # what the bug needs
    assert fail["cards"] <= 4 and board[tp]["monsters"], board
    # The board file reproduces it with `bpcheck check` on the buggy copy; the original passes it.
    (found,) = cex.glob("fuzz-attack.direct-legal.toml")
    assert bpcheck("check", "--engine", buggy, str(found)).returncode == 1
    assert bpcheck("check", "--engine", _node(NODE_ENGINE), str(found)).returncode == 0


def test_the_planted_copy_differs_from_the_shipped_engine_only_in_its_bug():
    ours = NODE_ENGINE.read_text(encoding="utf-8").splitlines()
    theirs = PLANTED.read_text(encoding="utf-8").splitlines()
    added = [line[1:].strip() for line in difflib.unified_diff(ours, theirs, lineterm="", n=0) if line.startswith("+") and not line.startswith("+++")]
    removed = [line[1:].strip() for line in difflib.unified_diff(ours, theirs, lineterm="", n=0) if line.startswith("-") and not line.startswith("---")]
    code_added = [x for x in added if x and not x.startswith("//")]
    code_removed = [x for x in removed if x and not x.startswith("//")]
    assert code_removed == ["const ENGINE = 'vanilla-engine (node)';", "return targets.length ? targets : [null];"], code_removed
    assert code_added == [
        "const ENGINE = 'vanilla-engine (node), planted bug: face-down monsters do not block direct attacks';",
        "const faceUp = targets.filter((uid) => findMonster(s, uid)[2].pos !== 'facedown');",
        "return faceUp.length ? targets : [...targets, null];",
    ], code_added


def test_fuzz_runs_on_bpcheck_serve(tmp_path):
    r = bpcheck(
        "fuzz", "--engine", f"cmd:{shlex.quote(sys.executable)} -m bpcheck serve", "--cards", "Battle Ox,Mirror Force,Mokey Mokey",
        "--examples", "4", "--max-states", "400", "--json", str(tmp_path / "f.json"),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("fuzz: 4 boards drawn, ") and "PASS  no invariant broken on the 4 boards explored" in r.stdout
    st = json.loads((tmp_path / "f.json").read_text())["stats"]
    assert st["explored"] == 4 and st["skipped"] == 0 and st["states"] > 4


# -- in-process engines: the document, the cards offered ---------------------------------------


def test_an_in_process_engine_reading_only_the_document_is_fuzzed(run_cli, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(ENGINES))
    import document_only

    document_only.seen.clear()
    code, out, err = run_cli("fuzz", "--engine", "document_only:make", "--examples", "6", "--max-states", "300", "--json", str(tmp_path / "f.json"))
    assert code == 0, out + err
    assert out.startswith("fuzz: 6 boards drawn") and "PASS  no invariant broken on the 6 boards explored" in out
    drawn = [d for d in document_only.seen if d["path"] == "<drawn board>"]
    offered = [d for d in document_only.seen if d["path"].startswith("<card probe: ")]
    assert len(drawn) == 6 and len(offered) == len(list(builtin_pool()))  # every card offered alone, then the boards drawn
    for d in drawn:
        assert set(d) == {"board", "path", "cards", "ruleset"} and d["board"]["name"] == "drawn board" and d["ruleset"] == "tcg"
        names = {m["card"] for side in ("p1", "p2") for m in d["board"][side].get("monsters", [])}
        assert names <= set(d["cards"])  # every card it must play, defined by name


def test_boards_are_drawn_from_the_cards_the_engine_plays(run_cli, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(ENGINES))
    code, out, err = run_cli("fuzz", "--engine", "picky:no_traps", "--examples", "10", "--max-states", "300", "--json", str(tmp_path / "f.json"))
    assert code == 0, out + err
    traps = sorted(c.name for c in builtin_pool() if c.kind == "trap")
    n = len(list(builtin_pool()))
    assert out.startswith(f"cards: the engine refused {len(traps)} of the pool's {n} cards offered alone on a board; boards are drawn from the other {n - len(traps)}"), out
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["stats"]["skipped"] == 0  # no board drawn holds a Trap
    assert sorted(doc["cards_refused"]) == traps and all(why.endswith("this engine has no Trap Cards yet") for why in doc["cards_refused"].values())
    assert not set(traps) & set(doc["cards"])
    # --cards: drawn from those, none offered; the boards with a Trap are refused, counted and said
    code, out, _ = run_cli("fuzz", "--engine", "picky:no_traps", "--cards", "Battle Ox,Mirror Force,Sakuretsu Armor", "--examples", "10",
                           "--max-states", "300", "--json", str(tmp_path / "g.json"))
    st = json.loads((tmp_path / "g.json").read_text())["stats"]
    assert code == 0 and not out.startswith("cards:") and st["skipped"] > 0, out
    assert f", {st['skipped']} boards refused by the engine" in out
    assert f"{st['skipped']} more boards drawn were refused by the engine (the first because " in out and "this engine has no Trap Cards yet)" in out


def test_an_engine_that_plays_no_card_is_bad_input(monkeypatch):
    first = sorted(c.name for c in builtin_pool())[0]  # (the pool's cards are offered in name order)
    r = bpcheck("fuzz", "--engine", "picky:nothing", "--examples", "5")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    # on a loaded machine a progress line may come first (after 2 s): compared without it
    assert without_progress(r.stderr).strip() == (
        "bpcheck: error: --engine: picky:nothing refused every card of the pool offered alone on a board "
        f"(e.g. {first}: {first}: this engine plays no card at all yet): no board can be drawn for it"
    ), r.stderr


# -- --baseline -----------------------------------------------------------------------------------


def test_a_known_invariant_violation_does_not_stop_the_search(run_cli, tmp_path):
    base = tmp_path / "known.toml"
    base.write_text(
        '[[known]]\nboard = "drawn boards"\ninvariant = "attack.direct-legal"\nsignature = "direct-past-monsters"\n'
        'reason = "this engine lets monsters attack directly past the opponent\'s monsters (issue 99)"\n'
    )
    args = ["fuzz", "--engine", "mutant:direct-attack-past-monsters", "--invariants", "attack.direct-legal", "--seed", "0", "--examples", "15", "--max-states", "600"]
    code, out, _ = run_cli(*args)
    assert code == 1  # without the baseline the first board showing it stops the search
    code, out, _ = run_cli(*args, "--baseline", str(base), "--json", str(tmp_path / "f.json"))
    assert code == 0, out
    st = json.loads((tmp_path / "f.json").read_text())["stats"]
    assert st["search_examples"] == 15 and st["known"] >= 1  # every board drawn, the known violation on some
    assert out.startswith(f"fuzz: 15 boards drawn, {st['states']:,} states explored") and f", {st['known']} boards with known violations only (baseline {base})" in out


def test_a_known_disagreement_does_not_hide_a_new_one(run_cli, tmp_path):
    base = tmp_path / "known.toml"
    base.write_text(
        # (the same boards also show observation attack.direct_was_legal: the new disagreement)
        '[[known]]\nboard = "x"\nkind = "actions"\npath = "engine-only:attack"\nreason = "direct attacks past monsters (issue 99)"\n'
    )
    code, out, _ = run_cli(
        "fuzz", "--engine", "mutant:direct-attack-past-monsters", "--differential", "--invariants", "chain.lifo", "--seed", "0",
        "--examples", "20", "--max-states", "1500", "--baseline", str(base), "--json", str(tmp_path / "f.json"),
    )
    assert code == 1, out
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["failure"]["invariant"] == "DIFF" and doc["stats"]["known"] >= 1
    cexs = doc["check"]["boards"][0]["counterexamples"]
    new = [c for c in cexs if "baselined" not in c]
    assert new and all((c["diff"]["kind"], c["diff"]["path"]) != ("actions", "engine-only:attack") for c in new)
    assert doc["failure"]["message"] == new[0]["message"]  # the failure shrunk is a new one
    shown = out.split("minimal board:")[1]
    assert f"violation: {new[0]['message']}" in shown
    for c in cexs:
        if "baselined" in c:
            assert f"(known, baseline: DIFF {c['diff']['kind']} {c['diff']['path']}: {c['baselined']})" in shown


def test_a_bad_baseline_is_bad_input_before_the_search(run_cli, tmp_path):
    base = tmp_path / "b.toml"
    base.write_text('[[known]]\nboard = "x"\ninvariant = "attack.direct-legal"\nsignature = "direct-past-monsters"\nreason = ""\n')
    code, out, err = run_cli("fuzz", "--baseline", str(base), "--examples", "3")
    assert code == 2 and out == "" and f"{base}: known[0].reason: expected a non-empty string" in err
