"""`bpcheck record` and `bpcheck conform`: engine traces judged against the reference model and
the invariants (docs/traces.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpcheck.engines import make_engine
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "boards" / "000-replay-1.toml")
# A direct attack, Call of the Haunted answers it, the replay is called off, then on to the end.
CALL_OFF_LINE = [
    "enter Battle Phase",
    "pass",
    "pass",
    "attack Battle Ox -> direct",
    "pass",
    "activate Call of the Haunted -> Blue-Eyes White Dragon",
    "pass",
    "pass",
    "replay: call off",
    "end Battle Phase",
    "pass",
]


@pytest.fixture
def engines(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _record(run_cli, out: Path, *how: str, engine: str = "reference") -> Path:
    code, stdout, err = run_cli("record", SMALL, "--engine", engine, *how, "--out", str(out))
    assert code == 0, stdout + err
    return out


def _first_disagreement(engine_spec: str, labels: list[str]) -> int | None:
    """Independent oracle: step the engine and the reference side by side along `labels`; the
    first step whose observation or events differ (1-based), or None."""
    board = load_board(SMALL)
    eng, ref = make_engine(engine_spec), make_engine("reference")
    se, sr = eng.start(board), ref.start(board)
    for k, label in enumerate(labels, 1):
        ae = next(a for a in eng.legal_actions(se) if a.label == label)
        ar = next((a for a in ref.legal_actions(sr) if a.label == label), None)
        if ar is None:
            return k
        se, ev_e = eng.apply(se, ae)
        sr, ev_r = ref.apply(sr, ar)
        if eng.observe(se) != ref.observe(sr) or [e.to_dict() for e in ev_e] != [e.to_dict() for e in ev_r]:
            return k
    return None


def test_recorded_reference_traces_conform(tmp_path, run_cli):
    for seed in ("1", "2", "8"):
        t = _record(run_cli, tmp_path / f"r{seed}.jsonl", "--random", "60", "--seed", seed)
        rows = _lines(t)
        assert rows[0]["bpcheck_trace"] == 1 and rows[0]["board"] == SMALL and rows[0]["engine"] == "reference"
        assert len(rows) > 10  # these seeds enter the Battle Phase (seed 0 skips it: 1 step)
        code, stdout, err = run_cli("conform", str(t))
        assert code == 0, stdout + err
        assert f"CONFORMS  {t}: all {len(rows) - 1} steps are legal and match the reference model" in stdout
    t = _record(run_cli, tmp_path / "line.jsonl", "--actions", *CALL_OFF_LINE)
    assert [r["action"] for r in _lines(t)[1:]] == CALL_OFF_LINE
    assert run_cli("conform", str(t))[0] == 0


def test_random_walks_are_deterministic(tmp_path, run_cli):
    a = _record(run_cli, tmp_path / "a.jsonl", "--random", "40", "--seed", "3")
    b = _record(run_cli, tmp_path / "b.jsonl", "--random", "40", "--seed", "3")
    assert a.read_bytes() == b.read_bytes()
    walks = set()
    for s in range(6):
        rows = _lines(_record(run_cli, tmp_path / f"s{s}.jsonl", "--random", "40", "--seed", str(s)))
        walks.add(tuple(r["action"] for r in rows[1:]))
    assert len(walks) > 1  # the seed does steer the walk
    short = _record(run_cli, tmp_path / "short.jsonl", "--random", "3", "--seed", "3")
    assert len(_lines(short)) == 4


def test_buggy_engine_trace_fails_at_the_first_divergent_step(tmp_path, run_cli, engines):
    spec = "buggy_engines:CallOffForgetsAttack"
    t = _record(run_cli, tmp_path / "bug.jsonl", "--actions", *CALL_OFF_LINE, engine=spec)
    expected = _first_disagreement(spec, CALL_OFF_LINE)
    assert expected == 9  # the oracle agrees that the call-off is where the engine goes wrong
    out = tmp_path / "c.json"
    code, stdout, _ = run_cli("conform", str(t), "--json", str(out))
    assert code == 1
    assert f"DIVERGES at step {expected} (trace line {expected + 1}): P1 did 'replay: call off'" in stdout
    assert "players[0].monsters[0].attacks_declared: engine 0, reference 1" in stdout
    assert "replay.call-off-counts [RPL-REWIND, RPL-COUNTS]: Battle Ox [P1 M1] no longer counts as having attacked" in stdout
    assert "board before step 9 (recorded):" in stdout
    d = json.loads(out.read_text())["traces"][0]
    assert d["verdict"] == "diverges" and d["engine"] == spec
    div = d["divergence"]
    assert div["step"] == 9 and div["line"] == 10 and div["legal_in_reference"] is True
    assert {"path": "players[0].monsters[0].attacks_declared", "engine": 0, "reference": 1} in div["observation_diff"]
    assert {b["invariant"] for b in div["broken"]} >= {"replay.call-off-counts", "replay.bookkeeping-kept"}


def test_random_trace_of_a_buggy_engine(tmp_path, run_cli, engines):
    spec = "diff_engines:DamageRefund"
    found = 0
    for seed in range(4):
        t = _record(run_cli, tmp_path / f"w{seed}.jsonl", "--random", "60", "--seed", str(seed), engine=spec)
        labels = [r["action"] for r in _lines(t)[1:]]
        expected = _first_disagreement(spec, labels)
        code, stdout, _ = run_cli("conform", "-q", str(t))
        if expected is None:  # this walk dealt no battle damage
            assert code == 0, stdout
            continue
        found += 1
        assert code == 1
        assert f"DIVERGES at step {expected} (trace line {expected + 1})" in stdout
        assert "].lp: engine " in stdout and "acc.lp-ledger" in stdout
    assert found >= 1


def test_hand_edited_lp_fails_at_that_step(tmp_path, run_cli):
    t = _record(run_cli, tmp_path / "r.jsonl", "--actions", *CALL_OFF_LINE)
    rows = _lines(t)
    k = 7  # any step will do; LP 8000 there
    assert rows[k]["observation"]["players"][1]["lp"] == 8000
    rows[k]["observation"]["players"][1]["lp"] = 7000
    edited = _write(tmp_path / "edited.jsonl", rows)
    out = tmp_path / "c.json"
    code, stdout, _ = run_cli("conform", str(edited), "--json", str(out))
    assert code == 1
    assert f"DIVERGES at step {k} (trace line {k + 1})" in stdout
    assert "players[1].lp: engine 7000, reference 8000" in stdout
    assert "acc.lp-ledger" in stdout  # the recorded LP changed with no event to account for it
    div = json.loads(out.read_text())["traces"][0]["divergence"]
    assert div["observation_diff"] == [{"path": "players[1].lp", "engine": 7000, "reference": 8000}]
    assert div["events_diff"] == []


def test_edited_events_and_initial_observation(tmp_path, run_cli):
    t = _record(run_cli, tmp_path / "r.jsonl", "--actions", *CALL_OFF_LINE)
    rows = _lines(t)
    rows[1]["events"] = []  # 'enter Battle Phase' without its phase_changed event
    code, stdout, _ = run_cli("conform", str(_write(tmp_path / "e.jsonl", rows)))
    assert code == 1
    assert "DIVERGES at step 1 (trace line 2): P1 did 'enter Battle Phase'" in stdout
    assert "events: the engine's differ from the rules' (engine [], reference [phase_changed])" in stdout
    rows = _lines(t)
    rows[0]["observation"]["players"][0]["lp"] = 4000
    code, stdout, _ = run_cli("conform", str(_write(tmp_path / "i.jsonl", rows)))
    assert code == 1
    assert "DIVERGES at the start (trace line 1)" in stdout and "players[0].lp: engine 4000, reference 8000" in stdout
    # The header's observation is optional.
    rows = _lines(t)
    del rows[0]["observation"]
    assert run_cli("conform", str(_write(tmp_path / "n.jsonl", rows)))[0] == 0


def test_illegal_and_past_the_end_actions(tmp_path, run_cli, engines):
    t = _record(run_cli, tmp_path / "s.jsonl", "--actions", "enter Battle Phase", "pass", "pass", "skip Battle Phase", engine="diff_engines:SkipFromBattleStep")
    out = tmp_path / "c.json"
    code, stdout, _ = run_cli("conform", str(t), "--json", str(out))
    assert code == 1
    assert "DIVERGES at step 4 (trace line 5): P1 did 'skip Battle Phase'" in stdout
    assert "the rules do not allow 'skip Battle Phase' here; they allow: end Battle Phase; attack Battle Ox -> direct" in stdout
    div = json.loads(out.read_text())["traces"][0]["divergence"]
    assert div["legal_in_reference"] is False and div["reference_allows"] == ["end Battle Phase", "attack Battle Ox -> direct"]
    # A step after the end of the turn.
    full = _record(run_cli, tmp_path / "f.jsonl", "--random", "80", "--seed", "1")
    rows = _lines(full)
    n = len(rows) - 1
    rows.append(rows[-1])
    code, stdout, _ = run_cli("conform", "-q", str(_write(tmp_path / "past.jsonl", rows)))
    assert code == 1
    assert f"DIVERGES at step {n + 1} (trace line {n + 2})" in stdout
    assert "the rules allow no action here: the reference model's state is terminal" in stdout


def test_board_path_relative_to_the_trace(tmp_path, run_cli, monkeypatch):
    (tmp_path / "b.toml").write_text(Path(SMALL).read_text())
    t = _record(run_cli, tmp_path / "r.jsonl", "--random", "20", "--seed", "3")
    rows = _lines(t)
    rows[0]["board"] = "b.toml"
    _write(t, rows)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, stdout, err = run_cli("conform", str(t))
    assert code == 0, stdout + err


HEADER = {"bpcheck_trace": 1, "board": SMALL, "engine": "x"}
STEP = {"action": "enter Battle Phase", "observation": {}, "events": []}


@pytest.mark.parametrize(
    "rows, line, problem",
    [
        ([], 1, "empty trace"),
        (["{not json"], 1, "malformed JSON"),
        ([{"board": SMALL}], 1, "not a bpcheck trace"),
        ([{**HEADER, "bpcheck_trace": 2}], 1, "bpcheck_trace: unsupported trace version 2"),
        ([{k: v for k, v in HEADER.items() if k != "board"}], 1, "board: expected a non-empty string (missing)"),
        ([{**HEADER, "engine": 3}], 1, "engine: expected a non-empty string (got number 3)"),
        ([{**HEADER, "colour": "red"}], 1, "colour: unknown header field"),
        ([{**HEADER, "observation": []}], 1, "observation: expected a JSON object, got array"),
        ([HEADER, STEP, "[1, 2]"], 3, "expected a step object {action, observation, events}, got array"),
        ([HEADER, STEP, STEP, "{\"action\": "], 4, "malformed JSON"),
        ([HEADER, {k: v for k, v in STEP.items() if k != "observation"}], 2, "observation: missing"),
        ([HEADER, {**STEP, "action": 5}], 2, "action: expected a string (the action's label), got number"),
        ([HEADER, {**STEP, "events": {}}], 2, "events: expected a array, got object"),
        ([HEADER, {**STEP, "events": [{"player": 0}]}], 2, "events[0].kind: an event needs a string kind"),
        ([HEADER, {**STEP, "events": ["passed"]}], 2, "events[0]: expected an event object, got string"),
        ([HEADER, {**STEP, "obs": {}}], 2, "obs: unknown step field"),
        ([{**HEADER, "board": "no/such/board.toml"}], 1, "board: no such board file 'no/such/board.toml'"),
    ],
)
def test_malformed_traces_are_bad_input(tmp_path, run_cli, rows, line, problem):
    t = _write(tmp_path / "bad.jsonl", rows)
    code, stdout, err = run_cli("conform", str(t))
    assert code == 2, stdout + err
    assert f"bpcheck: error: {t}:{line}" in err and problem in err, err
    assert "Traceback" not in err


def test_malformed_trace_wins_over_a_divergence(tmp_path, run_cli):
    """The whole file is validated before it is replayed: a broken line 5 is bad input even
    though step 1 already diverges."""
    t = _record(run_cli, tmp_path / "r.jsonl", "--actions", *CALL_OFF_LINE)
    rows = _lines(t)
    rows[1]["observation"]["turn"] = 9
    rows[4] = "oops"
    code, _out, err = run_cli("conform", str(_write(tmp_path / "b.jsonl", rows)))
    assert code == 2 and f"{tmp_path / 'b.jsonl'}:5: malformed JSON" in err


def test_missing_trace_and_bad_record_input(tmp_path, run_cli):
    code, _o, err = run_cli("conform", str(tmp_path / "none.jsonl"))
    assert code == 2 and "none.jsonl: no such file" in err
    code, _o, err = run_cli("record", SMALL, "--actions", "enter Battle Phase", "attack Battle Ox -> direct", "--out", str(tmp_path / "x.jsonl"))
    assert code == 2
    assert "--actions: [1]: 'attack Battle Ox -> direct' is not offered by the engine at step 2; it offers: pass" in err
    assert not (tmp_path / "x.jsonl").exists()
    code, _o, err = run_cli("record", SMALL, "--actions", "pass", "--random", "3", "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and "not allowed with argument" in err
    code, _o, err = run_cli("record", str(tmp_path / "nope.toml"), "--random", "3", "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and "nope.toml: no such file" in err
    code, _o, err = run_cli("conform", str(tmp_path / "none.jsonl"), "--invariants", "nope")
    assert code == 2 and "unknown invariant or family 'nope'" in err


def test_trace_of_an_out_of_process_engine(tmp_path, run_cli):
    """A trace recorded across a process boundary (the JSON-lines protocol) is the same as the
    in-process one, and conforms."""
    pytest.importorskip("bpcheck.engines.serve", reason="the JSON-lines server (bpcheck.engines.serve) is not installed")
    import shlex
    import sys

    spec = f"cmd:{shlex.quote(sys.executable)} -m bpcheck.engines.serve"
    remote = _record(run_cli, tmp_path / "remote.jsonl", "--random", "60", "--seed", "1", engine=spec)
    local = _record(run_cli, tmp_path / "local.jsonl", "--random", "60", "--seed", "1")
    assert _lines(remote)[0]["engine"] == spec
    assert _lines(remote)[1:] == _lines(local)[1:] and len(_lines(local)) > 10
    code, stdout, err = run_cli("conform", "-q", str(remote))
    assert code == 0, stdout + err
