"""Protocol v2 (docs/protocol.md): each capability used by a small engine served through the
real protocol (tests/engines/v2_*.py behind `python -m bpcheck.engines.serve --engine ...` or
their own server), and checked with `bpcheck check --engine cmd:...`."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import jsonschema
import orjson
import pytest

from bpcheck.engines.interface import Capabilities
from bpcheck.engines.jsonl import parse_capabilities, protocol_schema
from bpcheck.engines.observation_paths import first_overlap, overlaps, relax_schema, schema_problem, strip
from bpcheck.engines.serve import Server, capabilities_record
from bpcheck.explorers.run import check_board
from bpcheck.invariants.base import Invariant
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "tests" / "engines"
RESULT_SCHEMA = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())
PY = shlex.quote(sys.executable)
SMALL = "boards/000-replay-1.toml"
SECOND = "boards/rule-lp-zero-battle.toml"


def served(name: str) -> str:
    return f"cmd:{PY} -m bpcheck.engines.serve --engine v2_engines:{name}"


@pytest.fixture(autouse=True)
def v2_path(monkeypatch):
    monkeypatch.syspath_prepend(str(ENGINES))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ENGINES), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.chdir(ROOT)


def check(run_cli, tmp_path, *args: str, name: str = "r.json") -> tuple[int, str, dict]:
    out = tmp_path / name
    code, stdout, stderr = run_cli("check", *args, "--json", str(out))
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, RESULT_SCHEMA)
    return code, stdout + stderr, doc


def rows(doc: dict, board: int = 0) -> dict[str, dict]:
    return {r["id"]: r for r in doc["boards"][board]["invariants"]}


def diffs(doc: dict, board: int = 0) -> list[dict]:
    return [c for c in doc["boards"][board]["counterexamples"] if c["invariant"] == "DIFF"]


def comparable(doc: dict) -> dict:
    """The result without the engine's name."""
    doc = json.loads(json.dumps(doc))
    doc.pop("engine")
    for b in doc["boards"]:
        for c in b["counterexamples"]:
            c.pop("engine")
    for g in doc.get("groups", []):  # root causes (docs/reports.md) name their engine too
        g.pop("engine")
    return doc


# =============================================================================================
# The handshake
# =============================================================================================


def test_hello_capabilities_are_schema_checked():
    schema = protocol_schema()
    reply = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/hello_reply"})
    ok = {"id": 1, "protocol": 2, "engine": "x", "capabilities": {"unobserved": ["lingering"], "cloning": False}}
    reply.validate(ok)
    assert parse_capabilities(ok) == Capabilities(unobserved=frozenset({"lingering"}), cloning=False)
    assert parse_capabilities({"id": 1, "protocol": 1, "engine": "x"}) == Capabilities()  # a v1 engine
    for bad in ({"clone": False}, {"cloning": "no"}, {"unobserved": "lingering"}, {"unobserved": ["a", "a"]}):
        assert not reply.is_valid({**ok, "capabilities": bad}), bad
    with pytest.raises(ValueError, match=r"capabilities\.unobserved\[1\]: 'players\[\]\.aura': the observation has no field 'aura' under 'players\[\]'"):
        parse_capabilities({"protocol": 2, "capabilities": {"unobserved": ["lingering", "players[].aura"]}})
    with pytest.raises(ValueError, match="only a protocol 2 reply"):
        parse_capabilities({"protocol": 1, "capabilities": {}})
    assert capabilities_record(Capabilities()) == {}


def test_observation_paths():
    schema = protocol_schema()
    for p in ("players[].monsters[].modifiers", "lingering", "open_windows.events", "attack.potential_targets", "chain[].cost_info"):
        assert schema_problem(p, schema) is None, p
    assert "not an array" in schema_problem("lingering.x", schema) or "no field" in schema_problem("lingering.x", schema)
    assert "not an array" in schema_problem("turn[]", schema)
    assert "malformed segment" in schema_problem("players[0].lp", schema)
    assert overlaps("open_windows", "open_windows.attack_declaration") and not overlaps("lingering", "lp")
    assert first_overlap({"players[].lp", "open_windows.summon"}, {"open_windows"}) == "open_windows"
    obs = {"a": 1, "players": [{"monsters": [None, {"x": 1, "modifiers": []}]}]}
    assert strip(obs, {"players[].monsters[].modifiers", "a"}) == {"players": [{"monsters": [None, {"x": 1}]}]}
    assert obs["a"] == 1 and "modifiers" in obs["players"][0]["monsters"][1]  # not changed in place
    # copy on change: what holds none of the paths comes back as it is, untouched parts are shared
    bare = {"players": [{"monsters": [None, {"x": 1}]}], "attack": {"attacker": 1}}
    assert strip(bare, {"players[].monsters[].modifiers", "attack.potential_targets", "lingering"}) is bare
    out = strip({**bare, "lingering": []}, {"lingering", "players[].monsters[].modifiers"})
    assert out == bare and out["players"] is bare["players"]
    assert strip({"players": ({"lp": 1, "passes": 0},)}, {"players[].passes", "players"}) == {}
    relaxed = relax_schema(schema, {"players[].monsters[].modifiers", "lingering"})
    assert "modifiers" not in relaxed["$defs"]["monster"]["required"] and "lingering" not in relaxed["$defs"]["observation"]["required"]
    assert "modifiers" in schema["$defs"]["monster"]["required"]


def test_v1_and_v2_handshakes_with_bpcheck_serve():
    srv = Server()
    v1 = orjson.loads(srv.reply_line(b'{"id":1,"op":"hello","protocol":1}'))
    assert v1["protocol"] == 1 and "capabilities" not in v1  # v1 clients see a v1 engine
    v2 = orjson.loads(Server().reply_line(b'{"id":1,"op":"hello","protocol":1,"versions":[1,2]}'))
    assert v2["protocol"] == 2 and v2["capabilities"] == {}
    from v2_engines import Partial

    srv = Server(Partial, "partial")
    refused = orjson.loads(srv.reply_line(b'{"id":1,"op":"hello","protocol":1}'))
    assert "needs protocol 2" in refused["error"]
    got = orjson.loads(Server(Partial, "partial").reply_line(b'{"id":1,"op":"hello","protocol":1,"versions":[1,2]}'))
    assert got["capabilities"]["unobserved"] == sorted(Partial.capabilities.unobserved)


def test_a_capability_naming_no_observation_part_is_an_engine_fault(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("BadPath"))
    assert code == 1
    (cex,) = doc["boards"][0]["counterexamples"]
    assert cex["invariant"] == "ENGINE-FAULT" and cex["length"] == 0
    assert "schema: the reply to 'hello': capabilities.unobserved[0]: 'players[].monsters[].aura': the observation has no field 'aura'" in cex["message"]


# =============================================================================================
# Partial observations
# =============================================================================================


def test_partial_observations_are_not_compared_and_their_invariants_not_evaluated(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("Partial"), "--differential")
    assert code == 0, out
    b = doc["boards"][0]
    assert b["not_compared"] == sorted(["players[].monsters[].modifiers", "players[].monsters[].lingering_modifiers", "lingering",
                                        "pending_triggers", "open_windows", "chains_in_step", "next_uid"])
    r = rows(doc)
    assert r["DIFF"]["verdict"] == "held" and r["DIFF"]["checked"] > b["states"]  # no false DIFF
    # An invariant that needs an unobserved field is not evaluated, with the reason ...
    assert r["priority.turn-player-first"] == {**r["priority.turn-player-first"], "verdict": "not evaluated", "checked": 0,
                                               "reason": "the engine does not observe pending_triggers"}
    assert {k for k, v in r.items() if v["verdict"] == "not evaluated"} == {"priority.turn-player-first"}
    assert "not evaluated (the engine does not observe pending_triggers): priority.turn-player-first" in out
    # ... one that can do without it but not for one of its checks is evaluated, and that check
    # is listed as not made ...
    assert r["chain.spell-speed"]["verdict"] == "held" and r["chain.spell-speed"]["checked"] > 0
    assert r["chain.spell-speed"]["not_evaluated_parts"] == [
        "whether a Spell Speed 1 triggered effect that starts a chain outside its controller's Main Phase was waiting as a "
        "trigger (by the card data it is a triggered or flip effect) (the engine does not observe pending_triggers)"
    ]
    assert "not evaluated in part: chain.spell-speed: whether a Spell Speed 1 triggered effect" in out
    # ... and one that compares the engine's claim with the monitor's own history (the
    # attack-declaration window, the damage a battle may do, the effects in force) judges the
    # actions and events.
    for judged in ("window.attack-declaration", "acc.battle-damage", "replay.iff"):
        assert r[judged]["verdict"] == "held" and r[judged]["checked"] > 0, r[judged]
    assert "reason" not in r["damage.lingering-end"]  # (the effects history: nothing ends in this Damage Step here)
    assert all(r[k]["violations"] == 0 for k in r)  # no false failure
    assert "not compared (the engine does not observe them): chains_in_step, lingering, next_uid, open_windows" in out
    # The same state graph as the reference: the engine's "hidden" key tells its states apart.
    ref_code, _o, ref = check(run_cli, tmp_path, SMALL, "--no-reduce", name="ref.json")  # differential explores every state
    assert (b["states"], b["transitions"]) == (ref["boards"][0]["states"], ref["boards"][0]["transitions"])


def test_a_real_disagreement_is_still_found_with_partial_observations(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("PartialLpBug"), "--differential")
    assert code == 1
    d = diffs(doc)
    assert d[0]["diff"] == {"kind": "observation", "path": "players[1].lp"}
    assert d[0]["message"] == "after 'pass', the observations differ at 1 path: players[1].lp: engine 6400, reference 6300"


def test_an_invariant_that_declares_what_it_reads_is_not_evaluated_without_it():
    from v2_engines import Partial

    def must_not_run(*_a):
        raise AssertionError("an invariant whose reads are unobserved must not be called")

    reads = Invariant("t.reads-lingering", "test", (), "state", "accounting", must_not_run, reads=frozenset({"lingering"}))
    fine = Invariant("t.reads-lp", "test", (), "state", "accounting", lambda obs, ctx: obs["players"][0]["lp"] > 0, reads=frozenset({"players[].lp"}))
    br = check_board(load_board(ROOT / SMALL), Partial(), [reads, fine], reduce=False)  # checked once per stored state
    r = {row["id"]: row for row in br.invariant_rows()}
    assert r["t.reads-lingering"]["verdict"] == "not evaluated" and r["t.reads-lingering"]["reason"] == "the engine does not observe lingering"
    assert r["t.reads-lp"]["verdict"] == "held" and r["t.reads-lp"]["checked"] == br.result.states


def test_an_invariant_that_needs_explicit_passes_is_not_evaluated_on_an_implicit_engine():
    from v2_engines import Implicit

    def must_not_run(*_a):
        raise AssertionError("an invariant that needs explicit passes must not judge an implicit-pass engine")

    inv = Invariant("t.passes", "test", (), "transition", "accounting", must_not_run, explicit_passes=True)
    br = check_board(load_board(ROOT / SMALL), Implicit(), [inv])
    row = br.invariant_rows()[0]
    assert row["verdict"] == "not evaluated" and row["reason"] == "the engine passes for its players (implicit passes)"
    from bpcheck.engines.reference import ReferenceEngine

    held = Invariant("t.passes", "test", (), "transition", "accounting", lambda t: True, explicit_passes=True)
    br = check_board(load_board(ROOT / SMALL), ReferenceEngine(), [held])
    assert br.invariant_rows()[0]["verdict"] == "held"  # an engine that asks every pass: evaluated


# =============================================================================================
# Implicit passes and windows
# =============================================================================================


def test_implicit_passes_are_aligned_with_the_reference(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("Implicit"), "--differential", "--invariants", "accounting")
    b = doc["boards"][0]
    assert diffs(doc) == [], out  # no false DIFF: the passes it makes for its players are folded
    assert rows(doc)["DIFF"]["verdict"] == "held" and rows(doc)["DIFF"]["checked"] >= b["states"]
    assert code == 0, out
    _c, _o, ref = check(run_cli, tmp_path, SMALL, "--no-reduce", name="ref.json")
    assert b["states"] < ref["boards"][0]["states"]  # it asks fewer questions


def test_a_window_one_side_lacks_is_its_own_structural_diff_reported_once(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("ImplicitFoldsWindow"), "--differential", "--invariants", "accounting")
    assert code == 1
    d = diffs(doc)
    kinds = [c["diff"]["kind"] for c in d]
    assert kinds.count("window") == 1, kinds  # once per kind, though it happens on every attack
    (w,) = [c for c in d if c["diff"]["kind"] == "window"]
    assert w["diff"]["path"] == "reference-only:battle_step"
    assert w["message"] == (
        "after 'attack Battle Ox -> direct', the reference opens a window for P2 in battle_step "
        "(offering 'activate Call of the Haunted -> Blue-Eyes White Dragon') that the engine lacks: it did not ask P2"
    )
    assert len({(c["diff"]["kind"], c["diff"]["path"]) for c in d}) == len(d)  # one per distinct disagreement


# =============================================================================================
# No cloning: re-execution by path
# =============================================================================================


def nocloning(live: int, mutant: str = "") -> str:
    return f"cmd:{PY} {shlex.quote(str(ENGINES / 'v2_nocloning.py'))} {live} {mutant}".rstrip()


def test_an_engine_that_cannot_clone_gives_the_same_result(run_cli, tmp_path, monkeypatch):
    stats = tmp_path / "stats.jsonl"
    monkeypatch.setenv("V2_STATS", str(stats))
    code, out, doc = check(run_cli, tmp_path, SMALL, SECOND, "--engine", nocloning(4))
    ref_code, _o, ref = check(run_cli, tmp_path, SMALL, SECOND, name="ref.json")
    assert code == ref_code == 0, out
    assert comparable(doc) == comparable(ref)
    runs = [json.loads(x) for x in stats.read_text().splitlines()]
    assert len(runs) == 2 and all(r["released"] > 0 and r["replays"] > 0 for r in runs)  # it re-executed, and was told what to drop


def test_no_cloning_finds_the_same_shortest_counterexamples(run_cli, tmp_path):
    board = "boards/000-replay-1.toml"
    code, out, doc = check(run_cli, tmp_path, board, "--engine", nocloning(2, "replay-resets-count"))
    ref_code, _o, ref = check(run_cli, tmp_path, board, "--engine", "mutant:replay-resets-count", name="ref.json")
    assert code == ref_code == 1
    assert comparable(doc) == comparable(ref)
    assert doc["boards"][0]["counterexamples"]


# =============================================================================================
# Identity: passcodes
# =============================================================================================


def test_passcodes_beside_card_names(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("Passcodes"), "--differential")
    assert code == 0, out
    assert rows(doc)["DIFF"]["violations"] == 0
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("WrongPasscode"), "--differential", name="w.json")
    assert code == 1
    idents = [c for c in diffs(doc) if c["diff"]["kind"] == "identity"]
    ident = idents[0]
    assert ident["length"] == 4 and ident["trace"][-1] == "attack Battle Ox -> direct"
    assert "players[0].monsters[0].passcode: engine \"00000001\" beside 'Battle Ox', whose passcode is 05053103" in ident["message"]


def test_declared_passcodes_must_be_there(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("MissingPasscodes"))
    assert code == 1
    (cex,) = doc["boards"][0]["counterexamples"]
    assert cex["invariant"] == "ENGINE-FAULT"
    assert "passcode: missing beside card" in cex["message"] and "(the engine declared passcodes)" in cex["message"]


# =============================================================================================
# Events as multisets; every distinct disagreement
# =============================================================================================


def test_events_compare_as_multisets_and_order_is_its_own_kind(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("EventsReordered"), "--differential", "--invariants", "attack counts")
    assert code == 1
    d = diffs(doc)
    assert d and all(c["diff"]["kind"] == "event-order" for c in d), [c["diff"] for c in d]
    assert d[0]["message"].startswith("after 'pass', the events agree as multisets but come in another order: engine [")
    stopped = rows(doc)["DIFF"]["checked"]
    code2, out2, doc2 = check(run_cli, tmp_path, SMALL, "--engine", served("EventsReordered"), "--differential", "--invariants", "attack counts",
                              "--diff-continue-order", name="c.json")
    assert code2 == 1
    assert rows(doc2)["DIFF"]["checked"] > stopped  # lockstep went on past the order differences
    assert all(c["diff"]["kind"] == "event-order" for c in diffs(doc2))
    assert len(diffs(doc2)) >= len(d)


def test_every_distinct_disagreement_gets_a_counterexample(run_cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", "diff_engines:DamageRefund", "--differential")
    assert code == 1
    got = [(c["diff"]["kind"], c["diff"]["path"], c["length"]) for c in diffs(doc)]
    assert got == [("observation", "players[1].lp", 14), ("observation", "players[0].lp", 17)]
    cex = tmp_path / "cex"
    run_cli("check", SMALL, "--engine", "diff_engines:DamageRefund", "--differential", "--cex-dir", str(cex))
    assert sorted(p.name for p in cex.iterdir() if "DIFF" in p.name) == ["000-replay-1.DIFF-2.json", "000-replay-1.DIFF.json"]


def test_a_window_the_engine_opens_and_the_reference_lacks(run_cli, tmp_path):
    code, out, doc = check(run_cli, tmp_path, SMALL, "--engine", served("ExtraWindow"), "--differential", "--invariants", "accounting")
    assert code == 1
    d = diffs(doc)
    assert [(c["diff"]["kind"], c["diff"]["path"]) for c in d] == [("window", "engine-only:main2")]  # once, and nothing else
    assert d[0]["kind"] == "actions" and d[0]["length"] == 3 and d[0]["trace"][-1] == "end Battle Phase"  # a shortest way to Main Phase 2
    assert d[0]["message"] == "the engine opens a window for P1 in main2 (offering 'pass') that the reference lacks"
    # Lockstep went on past it: the rest of the engine's graph was compared.
    assert rows(doc)["DIFF"]["checked"] > doc["boards"][0]["states"]


def test_first_missing_is_the_first_sorted_container_whatever_the_form_of_its_arguments():
    """first_missing (asked per invariant and field on every board, memoised): the first
    unobserved path, sorted, that is a read path or holds it; the same answer for a list, a
    generator, duplicates or another order of the same paths, and a bad path still refused."""
    from bpcheck.engines.observation_paths import first_missing

    un = ["players[].lp.x", "players", "chain[].speed"]
    assert first_missing(["players[].lp", "chain"], un) == "players"
    assert first_missing((p for p in ["chain", "players[].lp", "chain"]), reversed(un)) == "players"
    assert first_missing(["chain"], un) is None  # a field inside a part read whole does not take it away
    assert first_missing(["open_windows.summon"], ["open_windows"]) == "open_windows"
    assert first_missing(["open_windows"], ["open_windows.summon"]) is None
    assert first_missing(["a.b", "z"], ["z", "a"]) == "a"
    with pytest.raises(ValueError):
        first_missing(["players..lp"], ["players"])
