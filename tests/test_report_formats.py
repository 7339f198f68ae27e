"""Every report format for every observation an engine may send (issue 25 items 1, 3, 4, 6).

* A property test draws counterexamples whose observations lack any subset of the observation's
  fields (protocol 2 ``unobserved``: every path of the protocol schema), with implicit passes
  (no ``passed`` events, no player to act), a ``hidden`` key and fields bpcheck does not know, and
  renders them in every format: text, JSON, HTML, DOT, JUnit, SARIF, ITF, GitHub.
* Cards are named with their zone everywhere (``Sheep Token [P2 M2]``), a Token looked up in the
  states after as well as before; the HTML cell shows a zero attack count.
* Counterexamples are grouped by root cause; ``--max-counterexamples`` bounds the outputs.
* JUnit: a vacuous invariant is a passing case with a property, not a skip.
* A report writer that fails costs its own output only.
* The real EDOPro core with its baseline writes a complete report (``--engine ocgcore``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
RESULT_SCHEMA = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())
BUGGY = "buggy_engines:CallOffForgetsAttack"


def _every_path() -> list[str]:
    """Every observation path the protocol schema names (what an engine may declare unobserved),
    e.g. ``players[].monsters[].attacks_declared``: the walk that observation_paths.schema_problem
    accepts, every field at every depth."""
    from bpcheck.engines import observation_paths as op

    schema = json.loads((ROOT / "engines" / "schemas" / "protocol.schema.json").read_text())
    defs = schema["$defs"]
    out: list[str] = []

    def props_of(node):
        node = op._object_of(node, defs)
        return node.get("properties", {}) if isinstance(node, dict) else {}

    def walk(node, prefix: str) -> None:
        for name, sub in props_of(node).items():
            path = f"{prefix}.{name}" if prefix else name
            out.append(path)
            sub = op._resolve(sub, defs)
            items = op._array_of(sub, defs)
            if items is not None and props_of(items):
                walk(items, path + "[]")
            elif props_of(sub):
                walk(sub, path)

    walk(defs["observation"], "")
    assert all(op.schema_problem(p, schema) is None for p in out)
    return out


ALL_PATHS = _every_path()


def test_the_walk_finds_every_field_an_engine_may_leave_out():
    from bpcheck.engines.observation_paths import OPTIONAL_PATHS

    assert len(ALL_PATHS) > 100
    for p in ("players[].monsters[].attacks_declared", "attack.potential_targets", "open_windows", "chain[].targets", "players[].lp"):
        assert p in ALL_PATHS
    assert OPTIONAL_PATHS <= set(ALL_PATHS)


@functools.lru_cache(maxsize=None)
def _bases() -> tuple:
    """Real counterexamples to start from: a replay bug (attacks, replays), a replay bug on the
    Scapegoat board (Tokens appear mid-trace) and a chain bug (links with targets)."""
    sys.path.insert(0, str(TESTS))
    from bpcheck.engines import make_engine
    from bpcheck.explorers.run import check_board
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    out = []
    for engine, board in (
        (BUGGY, "000-replay-1.toml"),
        ("mutant:replay-is-second-attack", "000-replay-5.toml"),
        ("mutant:fifo-chain", "rule-ch-lifo-ring.toml"),
    ):
        br = check_board(load_board(str(ROOT / "boards" / board)), make_engine(engine), select(None), engine_name=engine, progress=False, graph_limit=200)
        assert br.counterexamples, (engine, board)
        out.append((engine, br))
    return tuple(out)


def _partial(cex, removed: frozenset, implicit: bool, hidden: bool, extra: bool):
    """`cex` as an engine that does not observe `removed` would have sent it."""
    from bpcheck.engines.observation_paths import strip

    def obs(o):
        o = strip(o, removed)
        if hidden:
            o = {**o, "hidden": "engine-state-7"}
        if extra:
            o = {**o, "engine_clock": {"ms": 12}}
        return o

    steps = []
    for s in cex.steps:
        events = [e for e in s.events if not (implicit and e.get("kind") == "passed")]
        if extra:
            events = events + [{"kind": "engine_note", "card_uid": 1000, "text": "more fields are allowed"}]
        before, after = obs(s.before), obs(s.after)
        player = before.get("to_act")
        steps.append(dataclasses.replace(s, before=before, after=after, events=events, player=player))
    return dataclasses.replace(cex, initial_observation=obs(cex.initial_observation), steps=steps)


class _Strict(HTMLParser):
    def error(self, message):  # pragma: no cover - HTMLParser of old Pythons
        raise AssertionError(message)


def _bare_uids(text: str, observations: list, card_names: set[str]) -> list[int]:
    """uids written as ``#N`` although an observation of the trace holds that card."""
    from bpcheck.invariants.view import card_place

    for name in sorted(card_names, key=len, reverse=True):
        text = text.replace(name, "")
    bad = []
    for m in re.finditer(r"#(\d+)\b", text):
        uid = int(m.group(1))
        if any(isinstance(o, dict) and card_place(o, uid) is not None for o in observations):
            bad.append(uid)
    return bad


def _names(observations) -> set[str]:
    out = set()

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "card" and isinstance(x, str):
                    out.add(x)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(observations)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_format_renders_any_partial_observation(data):
    from bpcheck.reports import github, graphviz, html, itf, junit, sarif
    from bpcheck.reports.board import board_view
    from bpcheck.reports.groups import group_runs
    from bpcheck.reports.runs import Run
    from bpcheck.reports.text import board_lines, counterexample_text, root_cause_lines

    engine, br0 = data.draw(st.sampled_from(_bases()), label="base")
    cex0 = data.draw(st.sampled_from(br0.counterexamples), label="counterexample")
    removed = data.draw(
        st.one_of(st.frozensets(st.sampled_from(ALL_PATHS)), st.just(frozenset(ALL_PATHS)), st.just(frozenset())), label="unobserved"
    )
    implicit, hidden, extra = (data.draw(st.booleans(), label=x) for x in ("implicit passes", "hidden", "extra fields"))
    cex = _partial(cex0, removed, implicit, hidden, extra)
    br = dataclasses.replace(br0, counterexamples=[cex], not_compared=sorted(removed))
    run = Run(engine, br)
    observations = [cex.initial_observation] + [s.after for s in cex.steps]
    names = _names(observations)

    # text
    text = counterexample_text(cex)
    assert cex.message in text and cex.invariant in text
    groups = group_runs([run])
    assert len(groups) == 1 and groups[0].count == 1
    assert counterexample_text(cex) in "\n".join(root_cause_lines(groups))
    for k, o in enumerate(observations):
        lines = board_lines(o)
        assert lines and not _bare_uids("\n".join(lines), observations[k : k + 1], names)
        view = board_view(o, observations[k - 1] if k else None)
        cells = "\n".join(x for c in view.all_cells() for x in (*c.lines, c.title))
        assert not _bare_uids(cells, observations[k : k + 1], names)
    # JSON (the result schema's board)
    doc = json.loads(json.dumps(br.to_dict()))
    jsonschema.Draft202012Validator({"$ref": "#/$defs/board", "$defs": RESULT_SCHEMA["$defs"]}).validate(doc)
    # ITF: the observations come back, whatever they lack or add
    trace = json.loads(itf.trace_json(cex))
    assert len(trace["states"]) == len(observations)
    for state, o in zip(trace["states"], observations):
        assert {k: itf.decode(state[k]) for k in o if not k.startswith("#")} == json.loads(json.dumps(o))
    # DOT
    dot = graphviz.trace_dot(cex)
    assert dot.startswith("digraph") and dot.count("[shape=plain, label=<<TABLE") == len(observations) + 1
    assert not _bare_uids(re.sub(r"<[^>]+>", " ", dot), observations, names)
    assert graphviz.state_graph_dot(cex, br.result.graph).startswith("digraph")
    # HTML
    page = html.cex_page(run, cex, "x", {}, group=groups[0])
    index = html.index_page([run], {(0, 0): "x"}, groups=groups)
    for doc_html in (page, index):
        _Strict().feed(doc_html)
    assert page.count('<section class="state"') == len(observations)
    last = observations[-1]
    if "players[].monsters[].attacks_declared" not in removed and "players[].monsters" not in removed and "players" not in removed:
        counts = [m["attacks_declared"] for p in last["players"] for m in p["monsters"] if m]
        if 0 in counts:
            assert "attacks 0" in page  # a zero count is shown, not hidden
    # JUnit
    root = ET.fromstring(junit.junit_xml([run]))
    assert int(root.get("failures")) >= 1
    # SARIF
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif.sarif_document([run]))
    # GitHub
    ann = github.annotations([run])
    assert any(a.startswith("::error file=") for a in ann)
    summary = github.markdown_summary([run])
    assert f"`{cex.invariant}`" in summary


# -- names ------------------------------------------------------------------------------------


def _token_trace():
    """A trace where an attack names Sheep Token 1000 in a state that no longer holds it (it was
    destroyed), and an event names it before it appears (the summon)."""
    def monster(uid, card, **kw):
        return {"uid": uid, "card": card, "owner": 1, "controller": 1, "position": "defense", "atk": 0, "def": 0, "base_atk": 0, "base_def": 0, **kw}

    empty = {"lp": 8000, "monsters": [None] * 5, "spells": [None] * 5, "field_zone": None, "hand": [], "graveyard": [], "banished": [], "deck": []}
    p1 = {**empty, "monsters": [{**monster(1, "Asura Priest"), "owner": 0, "controller": 0, "position": "attack", "attacks_declared": 1}] + [None] * 4}
    before = {"turn": 2, "turn_player": 0, "step": "battle_step", "players": [p1, {**empty, "monsters": [monster(2, "Mokey Mokey"), None, None, None, None]}], "attack": None}
    with_token = {**before, "players": [p1, {**empty, "monsters": [monster(2, "Mokey Mokey"), monster(1000, "Sheep Token"), None, None, None]}]}
    gone = {**before, "attack": {"attacker": 1, "target": 1000}}
    return [before, with_token, gone]


def test_a_token_is_named_from_the_states_after_and_before():
    from bpcheck.invariants.naming import TraceNames, event_text
    from bpcheck.reports.board import board_view
    from bpcheck.reports.text import board_lines

    trace = _token_trace()
    names = TraceNames(trace)
    assert names.ref(1000, 0) == "Sheep Token [P2 M2]"  # not there yet: found in the state after
    assert names.ref(1000, 2) == "Sheep Token [P2 M2]"  # gone: found in the state before
    assert names.ref(1, 2) == "Asura Priest [P1 M1]" and names.ref(None, 2) == "direct" and names.ref(4242, 1) == "#4242"
    summon = {"kind": "summoned", "card": "Sheep Token", "card_uid": 1000, "player": 1, "position": "defense", "how": "token"}
    assert event_text(summon, names, 0) == "summoned: Sheep Token [P2 M2], player P2, position defense, how token"
    attack = {"kind": "attack_declared", "attacker": "Asura Priest", "attacker_uid": 1, "target": "Sheep Token", "target_uid": 1000, "player": 0}
    assert event_text(attack, names, 1) == "attack declared: attacker Asura Priest [P1 M1], target Sheep Token [P2 M2], player P1"
    # the pictures and the text, given the trace's names
    lines = board_lines(trace[2], lambda uid: names.ref(uid, 2))
    assert "attack: Asura Priest [P1 M1] -> Sheep Token [P2 M2]" in lines
    assert "#1000" in "\n".join(board_lines(trace[2]))  # the state alone does not hold the Token: only the trace names it
    cell = next(c for c in board_view(trace[2], trace[1], names=lambda uid: names.ref(uid, 2)).all_cells() if c.key == "attack")
    assert cell.lines == ("attack: Asura Priest [P1 M1] → Sheep Token [P2 M2]",)


def test_the_html_cell_shows_a_zero_attack_count_and_what_is_not_observed():
    from bpcheck.reports.board import board_view

    trace = _token_trace()
    obs = json.loads(json.dumps(trace[1]))
    obs["players"][0]["monsters"][0]["attacks_declared"] = 0
    cell = next(c for c in board_view(obs).all_cells() if c.key == "P1.monsters.0")
    assert "attacks 0" in cell.lines
    token = next(c for c in board_view(obs).all_cells() if c.key == "P2.monsters.1")
    assert not any("attacks" in x for x in token.lines)  # not observed: nothing drawn
    assert "not observed: " in token.title and "attacks_declared" in token.title.split("not observed: ")[1]


def test_diff_messages_name_cards():
    from bpcheck.explorers.differential import transition_disagreement

    trace = _token_trace()
    eng = json.loads(json.dumps(trace[1]))
    eng["attack"] = {"attacker": 1, "target": 1000}
    ref = json.loads(json.dumps(eng))
    ref["attack"]["target"] = 2
    msg = transition_disagreement("replay: attack", eng, ref, [], [])
    assert msg == (
        "after 'replay: attack', the observations differ at 1 path: "
        "attack.target: engine Sheep Token [P2 M2] (uid 1000), reference Mokey Mokey [P2 M1] (uid 2)"
    )


def test_the_report_names_cards_in_events_and_pictures(tmp_path, run_cli):
    """The Scapegoat board: the step viewer's events and the trace picture name the Tokens."""
    out = tmp_path / "report"
    code, _stdout, err = run_cli("check", str(ROOT / "boards" / "000-replay-5.toml"), "--engine", "mutant:replay-is-second-attack", "--report", str(out))
    assert code == 1, err
    page = next((out / "counterexamples").glob("*.attack.count.html")).read_text()
    assert "summoned: Sheep Token [P2 M2], player P2" in page
    assert "#1000" not in page and "#1001" not in page
    dot = next((out / "counterexamples").glob("*.attack.count.dot")).read_text()
    assert "Sheep Token [P2 M2]" in dot and "#1000" not in dot


# -- root causes --------------------------------------------------------------------------------

BOARDS3 = [str(ROOT / "boards" / b) for b in ("002-enter-battle-phase.toml", "rule-calc-direct.toml", "rule-atk-position.toml")]
MUTANT = "mutant:battle-phase-ends-the-turn"


def test_one_bug_on_several_boards_is_one_root_cause(tmp_path, run_cli):
    out, res = tmp_path / "report", tmp_path / "r.json"
    code, stdout, err = run_cli("check", *BOARDS3, "--engine", MUTANT, "--report", str(out), "--json", str(res), "--github")
    assert code == 1, err
    doc = json.loads(res.read_text())
    jsonschema.Draft202012Validator(RESULT_SCHEMA).validate(doc)
    cexs = [c for b in doc["boards"] for c in b["counterexamples"]]
    assert len(cexs) == 6 and {c["invariant"] for c in cexs} == {"turn.battle-steps", "turn.phase-order"}
    assert [g["count"] for g in doc["groups"]] == [6] and doc["groups"][0]["boards"] == [b["board"] for b in doc["boards"]]
    assert all(c["group"] == 1 for c in cexs)
    assert doc["groups"][0]["where"] == "at 'pass' in battle_end_step -> end_phase" and doc["groups"][0]["family"] == "turn structure"
    # the text: each board in one line, the trace once, with the count and the boards
    assert len(re.findall(r"^shortest trace \(.*\) from ", stdout, flags=re.M)) == 1
    assert "root cause #1: 6 counterexamples on 3 boards (turn.battle-steps x3, turn.phase-order x3)" in stdout
    assert stdout.count("violated: turn.battle-steps [step-order], turn.phase-order [end-phase-after-battle-phase] (traces below, by root cause)") == 3
    # the report: one page per root cause, every board listed on it
    pages = sorted(p.name for p in (out / "counterexamples").glob("*.html"))
    assert len(pages) == 1
    page = (out / "counterexamples" / pages[0]).read_text()
    assert all(b["board"] in page for b in doc["boards"]) and page.count('<tr id="cex-') == 6
    index = (out / "index.html").read_text()
    assert index.count('class="cex-link"') == 1 and "6 counterexamples in 1 root cause" in index
    assert stdout.count("::error file=") == 1 and "+5 like it" in stdout
    summary = (out / "summary.md").read_text()
    assert summary.count("### #1 ") == 1 and "6 counterexamples" in summary
    # SARIF and JUnit keep one entry per counterexample, with its root cause
    sarif = json.loads((out / "results.sarif").read_text())
    assert [r["properties"]["rootCause"] for r in sarif["runs"][0]["results"]] == [1] * 6
    root = ET.parse(out / "junit.xml").getroot()
    assert int(root.get("failures")) == 6


def test_a_bug_that_also_ends_the_duel_is_one_root_cause(tmp_path, run_cli):
    """issue 34: the wrong player's battle damage, lethal on one board (the duel ends in damage
    calculation) and not on the other (play goes on to after damage calculation): one bug, one
    root cause, not two."""
    boards = ["boards/002-skip-battle-phase.toml", "boards/rule-lp-zero-effect.toml"]
    res = tmp_path / "r.json"
    code, stdout, err = run_cli("check", *boards, "--engine", "mutant:damage-to-wrong-player", "--json", str(res))
    assert code == 1, err
    doc = json.loads(res.read_text())
    jsonschema.Draft202012Validator(RESULT_SCHEMA).validate(doc)
    cexs = [c for b in doc["boards"] for c in b["counterexamples"]]
    assert [(c["invariant"], c["signature"]) for c in cexs] == [("acc.battle-damage", "damage-differs")] * 2
    ends = [c["steps"][-1]["after"]["over"] for c in cexs]
    assert ends == [False, True]  # the second board's violating step also ended the duel
    assert [c["steps"][-1]["after"]["step"] for c in cexs] == ["damage_step_after_calculation_1", "damage_step_during_calculation"]
    assert [(g["count"], g["boards"]) for g in doc["groups"]] == [(2, boards)], doc["groups"]
    assert doc["groups"][0]["where"] == "at 'pass' in damage_step_during_calculation -> damage_step_after_calculation_1"
    assert "counterexamples by root cause: 2 in 1 group" in stdout and "root cause #2" not in stdout


def test_a_step_that_ends_the_duel_joins_only_its_own_bug():
    """The join is narrow: a counterexample whose step ended the duel joins a group of the same
    family, action kind and step before only; another family, or another step before, stays apart."""
    from bpcheck.explorers.run import Counterexample, Step
    from bpcheck.reports.groups import group_runs

    class R:
        def __init__(self, board, cexs):
            self.board, self.engine, self.counterexamples, self.result = board, "e", cexs, None

    def cex(inv, before, after, over):
        st = Step(1, 0, {"kind": "pass", "label": "pass"}, [], {"step": before}, {"step": after, "over": over})
        return Counterexample("x.toml", "e", inv, "", (), "m", "transition", {"step": "main1"}, [st], [f"pass {inv} {before} {after}"])

    runs = [
        R("a.toml", [cex("acc.battle-damage", "dc", "after", False)]),
        R("b.toml", [cex("acc.battle-damage", "dc", "dc", True)]),  # joins a
        R("c.toml", [cex("acc.battle-damage", "battle_step", "battle_step", True)]),  # another step before
        R("d.toml", [cex("turn.phase-order", "dc", "dc", True)]),  # another family
    ]
    groups = group_runs(runs)
    assert [g.boards() for g in groups] == [["a.toml", "b.toml"], ["c.toml"], ["d.toml"]]


def test_a_shorter_trace_and_its_continuation_are_one_root_cause(monkeypatch):
    """One board, one bug: the counterexamples of one family whose traces run on from another's."""
    monkeypatch.syspath_prepend(str(TESTS))
    from bpcheck.reports.groups import group_runs
    from bpcheck.reports.runs import Run

    engine, br = _bases()[0]
    groups = group_runs([Run(engine, br)])
    assert [sorted(g.invariants()) for g in groups] == [
        ["attack.count", "attack.offered-legal", "attack.position-change"],
        ["replay.bookkeeping-kept", "replay.call-off-counts"],
    ]
    assert all(g.where == "at 'replay' in battle_step" for g in groups)


def test_max_counterexamples_bounds_every_output_and_keeps_the_verdicts(tmp_path, run_cli):
    res, out, cex_dir = tmp_path / "r.json", tmp_path / "report", tmp_path / "cex"
    args = ["check", *BOARDS3, str(ROOT / "boards" / "000-replay-1.toml"), "--engine", MUTANT]
    code_all, _o, _e = run_cli(*args, "--json", str(tmp_path / "all.json"))
    code, stdout, err = run_cli(*args, "--json", str(res), "--report", str(out), "--cex-dir", str(cex_dir), "--max-counterexamples", "3")
    assert code == code_all == 1, err
    full, doc = json.loads((tmp_path / "all.json").read_text()), json.loads(res.read_text())
    jsonschema.Draft202012Validator(RESULT_SCHEMA).validate(doc)
    assert [b["verdict"] for b in doc["boards"]] == [b["verdict"] for b in full["boards"]]
    assert [r["verdict"] for b in doc["boards"] for r in b["invariants"]] == [r["verdict"] for b in full["boards"] for r in b["invariants"]]
    n_all = sum(len(b["counterexamples"]) for b in full["boards"])
    kept = sum(len(b["counterexamples"]) for b in doc["boards"])
    assert kept == 3 and doc["max_counterexamples"] == {"limit": 3, "left_out": n_all - 3}
    assert sum(b.get("counterexamples_left_out", 0) for b in doc["boards"]) == n_all - 3
    # the first of each root cause is kept first: every root cause of the full run is still shown
    assert len(doc["groups"]) == len(full["groups"]) <= 3
    assert f"max-counterexamples: 3 counterexamples kept, {n_all - 3} left out of every output" in stdout
    assert len([p for p in cex_dir.glob("*.json") if not p.name.startswith(".")]) == 3
    index = (out / "index.html").read_text()
    assert f"{n_all - 3} counterexamples left out by --max-counterexamples" in index


def test_a_bound_below_the_root_causes_names_the_ones_left_out(tmp_path, run_cli, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    res = tmp_path / "r.json"
    code, stdout, err = run_cli("check", str(ROOT / "boards" / "000-replay-1.toml"), "--engine", BUGGY, "--json", str(res), "--max-counterexamples", "1")
    assert code == 1, err
    doc = json.loads(res.read_text())
    jsonschema.Draft202012Validator(RESULT_SCHEMA).validate(doc)
    assert doc["max_counterexamples"]["left_out"] == 4 and len(doc["groups"]) == 1
    (hidden,) = doc["max_counterexamples"]["root_causes_left_out"]
    assert hidden.startswith("2 counterexamples on 1 board (replay.bookkeeping-kept, replay.call-off-counts): replay, at 'replay' in battle_step")
    assert "max-counterexamples: 1 root cause left out entirely (a larger N shows them):" in stdout and f"  {hidden}" in stdout


def test_max_counterexamples_is_a_positive_number(run_cli):
    code, _out, err = run_cli("check", BOARDS3[0], "--max-counterexamples", "0")
    assert code == 2 and "--max-counterexamples" in err


# -- JUnit -----------------------------------------------------------------------------------


def test_junit_vacuous_invariants_pass_with_a_property(tmp_path, run_cli):
    out = tmp_path / "report"
    code, _stdout, err = run_cli("check", BOARDS3[0], "--report", str(out), "--json", str(tmp_path / "r.json"))
    assert code == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    vacuous = {r["id"] for r in doc["boards"][0]["invariants"] if r["verdict"] == "vacuous"}
    assert vacuous
    root = ET.parse(out / "junit.xml").getroot()
    assert root.get("skipped") == "0" and root.get("failures") == "0"
    for case in root.iter("testcase"):
        assert case.find("skipped") is None
        if case.get("name") in vacuous:
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            assert props == {"vacuous": "its situation never arose on this board"}


def test_junit_makes_a_refused_board_an_error_unless_skips_are_allowed(tmp_path, run_cli, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    out = tmp_path / "report"
    argv = ("check", str(ROOT / "boards" / "000-replay-1.toml"), "--engine", "lifecycle_engines:RefusesReplayBoards", "--report", str(out))
    code, _stdout, err = run_cli(*argv)
    assert code == 3, err  # skipped is not passed
    root = ET.parse(out / "junit.xml").getroot()
    assert not [c for c in root.iter("testcase") if c.find("skipped") is not None]
    errors = [c for c in root.iter("testcase") if c.find("error") is not None]
    assert [(c.get("name"), c.find("error").get("type")) for c in errors] == [("board", "refused")] and root.get("errors") == "1"
    assert errors[0].find("error").get("message").startswith("not checked: the engine refused this board: ")
    code, _stdout, err = run_cli(*argv, "--allow-skips")
    assert code == 0, err
    root = ET.parse(out / "junit.xml").getroot()
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["board"] and root.get("skipped") == "1" and root.get("errors") == "0"


# -- a writer that fails costs its own output --------------------------------------------------


def test_a_failing_writer_costs_its_output_only(tmp_path, run_cli, monkeypatch):
    from bpcheck.reports import junit

    monkeypatch.setenv("BPCHECK_CRASH_DIR", str(tmp_path))

    def broken(*_a, **_k):
        raise KeyError("attacks_declared")

    monkeypatch.setattr(junit, "junit_xml", broken)
    out, res = tmp_path / "report", tmp_path / "r.json"
    code, stdout, err = run_cli("check", *BOARDS3[:2], "--engine", MUTANT, "--report", str(out), "--json", str(res))
    assert code == 1  # the verdict's status, not 4
    assert "internal error (a bug in bpcheck) writing " in err and "junit.xml: KeyError: 'attacks_declared'" in err
    assert "the verdict, the exit status and the other outputs stand" in err and "Traceback" not in err
    assert list(tmp_path.glob("bpcheck-internal-error-*.txt"))  # the traceback is in a file
    for f in ("index.html", "results.sarif", "summary.md"):
        assert (out / f).stat().st_size > 300, f
    root = ET.parse(out / "junit.xml").getroot()  # CI's test view shows the failure
    err_case = root.find("testsuite/testcase/error")
    assert err_case is not None and "KeyError" in err_case.get("message") and "FAIL" in err_case.get("message")
    doc = json.loads(res.read_text())
    assert doc["verdict"] == "fail" and doc["report_errors"] == [{"output": f"{out / 'junit.xml'}", "error": "KeyError: 'attacks_declared'"}]
    assert "junit.xml was not written in full" in stdout


def test_a_failing_text_writer_keeps_the_verdict(tmp_path, run_cli, monkeypatch):
    from bpcheck.reports import text

    monkeypatch.setenv("BPCHECK_CRASH_DIR", str(tmp_path))
    monkeypatch.setattr(text, "root_cause_lines", lambda *_a, **_k: 1 / 0)
    code, stdout, err = run_cli("check", BOARDS3[0], "--engine", MUTANT, "--json", str(tmp_path / "r.json"))
    assert code == 1 and "writing the counterexamples as text: ZeroDivisionError" in err
    assert "check: 0 passed, 1 failed" in stdout
    assert json.loads((tmp_path / "r.json").read_text())["boards"][0]["counterexamples"]


# -- the real EDOPro core, with its baseline ---------------------------------------------------

REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"


def _core_missing() -> list[str]:
    from bpcheck.engines.ocgcore import default_paths

    return [p for p in default_paths() if not os.path.exists(p)]


@pytest.mark.parametrize("differential", [False, True], ids=["invariants", "differential"])
def test_the_real_core_with_its_baseline_writes_a_full_report(tmp_path, run_cli, differential):
    missing = _core_missing()
    if missing:
        if REQUIRED:
            pytest.fail(f"the EDOPro core is required here (BPCHECK_REQUIRE_OCGCORE=1) but {', '.join(missing)} not found")
        pytest.skip(f"the EDOPro core is not available: {', '.join(missing)} not found (set OCGCORE, OCG_SCRIPTS, OCG_CARDS)")
    board = str(ROOT / "boards" / "000-replay-5.toml")
    out, res = tmp_path / "report", tmp_path / "r.json"
    args = ["check", board, "--engine", "ocgcore", "--baseline", str(ROOT / "baselines" / "ocgcore.toml"), "--report", str(out), "--json", str(res), "--github"]
    code, stdout, err = run_cli(*args, *(["--differential"] if differential else []))
    assert code == 0, err
    assert "internal error" not in err and "not written in full" not in stdout
    doc = json.loads(res.read_text())
    assert "report_errors" not in doc and doc["verdict"] == "pass"
    known = doc["boards"][0]["counterexamples"]
    assert known and all("baselined" in c for c in known) and doc["boards"][0]["not_compared"]
    # every file, complete: the index lists the known disagreements and links a page for each root cause
    index = (out / "index.html").read_text()
    assert "<b>PASS</b>" in index and 'id="known"' in index and 'id="not-compared"' in index
    for g in doc["groups"]:
        assert g["known"]
    pages = list((out / "counterexamples").glob("*.html"))
    assert len(pages) == len(doc["groups"]) >= 1
    for p in pages:
        page = p.read_text()
        assert "Known disagreement (baseline)" in page and page.rstrip().endswith("</html>")
        assert p.with_suffix(".svg").stat().st_size > 1000 and p.with_suffix(".itf.json").is_file()
        assert not re.search(r"#10\d\d\b", page)  # the Sheep Tokens are named, never by uid alone
    root = ET.parse(out / "junit.xml").getroot()
    assert root.get("failures") == "0" and root.get("errors") == "0"
    known_cases = [c for c in root.iter("testcase") if any(p.get("name") == "known" for p in c.iter("property"))]
    assert known_cases
    sarif = json.loads((out / "results.sarif").read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert results and all(r["suppressions"][0]["kind"] == "external" for r in results)
    assert "::error" not in stdout and "PASS" in (out / "summary.md").read_text()
