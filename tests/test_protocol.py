"""The JSON-lines engine protocol (docs/protocol.md): the schema, `bpcheck serve`, the
`--engine cmd:` adapter, the Node.js engine, and every engine-fault kind."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import orjson
import pytest

from bpcheck.engines.faults import SystemFault
from bpcheck.explorers.run import check_board
from bpcheck.invariants import select
from bpcheck.engines.jsonl import MAX_RESTARTS, STDERR_TAIL_BYTES, STDERR_TAIL_LINES, JsonlEngine, ReplyValidator, _Process, card_record, duplicate_key, protocol_schema
from bpcheck.model.board import load_board
from bpcheck.model.engine import Rules
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.model.observe import observe
from bpcheck.engines.serve import Server

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "tests" / "engines"
DATA = ROOT / "tests" / "data"
RESULT_SCHEMA = json.loads((ROOT / "docs" / "check-result.schema.json").read_text())
PY = shlex.quote(sys.executable)
SERVE = f"cmd:{PY} -m bpcheck.engines.serve"
NODE_ENGINE = ROOT / "engines" / "examples" / "node" / "vanilla-engine.js"
FAULTY_BOARD = "boards/000-replay-1.toml"  # an attack declaration after 3 steps: the faulty engines' trigger
GOOD_BOARD = "boards/002-enter-battle-phase.toml"  # no attack can be declared: explored normally
FAULT_KINDS = ("crash", "timeout", "malformed", "schema", "refused", "nondeterministic")
FAULT_ENGINES = {
    "crash": "crash_engine.py",
    "timeout": "hang_engine.py",
    "malformed": "malformed_engine.py",
    "schema": "schema_engine.py",
    "refused": "refusing_engine.py",
    "nondeterministic": "nondeterministic_engine.py",
}
# Vanilla boards (Normal Monsters and Tokens only) for the Node.js engine.
VANILLA_BOARDS = [
    "boards/002-enter-battle-phase.toml",
    "boards/002-skip-battle-phase.toml",
    "tests/data/protocol-vanilla-1.toml",
    "tests/data/protocol-vanilla-2.toml",
]


def node_command() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("BPCHECK_REQUIRE_NODE"):
            pytest.fail("node is not installed, and BPCHECK_REQUIRE_NODE says the Node.js engine must be tested (scripts/test)")
        pytest.skip("node is not installed: the Node.js engine (engines/node) cannot run here")
    return f"cmd:{shlex.quote(node)} {shlex.quote(str(NODE_ENGINE))}"


def bpcheck(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The CLI in a subprocess (engines are subprocesses of it), from the checkout."""
    return subprocess.run(
        [sys.executable, "-m", "bpcheck", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def own_output(text: str) -> str:
    """What bpcheck itself wrote, without the lines it quotes from a crashed engine's stderr
    (``  | ...`` after a counterexample: the engine's own traceback, shown on purpose)."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.lstrip().startswith("| "))


def check_json(tmp_path: Path, *args: str, name: str = "r.json") -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / name
    proc = bpcheck("check", *args, "--json", str(out))
    assert "Traceback" not in own_output(proc.stdout + proc.stderr), proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, RESULT_SCHEMA)
    return proc, doc


def without_engine(doc: dict) -> dict:
    return {**doc, "engine": None}


# =============================================================================================
# The schema
# =============================================================================================


def test_schema_is_valid_and_names_every_event_kind():
    from bpcheck.model.events import EVENT_KINDS

    schema = protocol_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    defs = schema["$defs"]
    assert set(defs["event"]["properties"]["kind"]["enum"]) == EVENT_KINDS
    assert {k[len("event_") :] for k in defs if k.startswith("event_")} == EVENT_KINDS
    for op in ("hello", "start", "legal_actions", "apply", "observe", "terminal"):
        assert f"{op}_request" in defs and f"{op}_reply" in defs


@pytest.mark.parametrize("board", ["boards/000-replay-5.toml", "boards/003-004-example-2.toml", "boards/rule-ds-kuriboh.toml"])
def test_reference_replies_match_the_schema(board):
    """Every observation, action and event of the reference model on these boards (chains,
    choices, modifiers, replays, lingering effects) passes the protocol schema, both with the
    adapter's fast validator and with plain jsonschema on the whole schema."""
    schema = protocol_schema()
    full = {name: jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{name}"}) for name in ("observation", "action", "event")}
    fast = ReplyValidator()
    b = load_board(ROOT / board)
    r = Rules(b.pool)
    seen, stack, n = {b.state}, [b.state], 0
    while stack and n < 150:
        s = stack.pop()
        n += 1
        obs = orjson.loads(orjson.dumps(observe(r, s)))
        full["observation"].validate(obs)
        assert fast.reply("observe", {"id": 1, "observation": obs}) is None
        actions = [a.to_dict() for a in r.legal_actions(s)]
        assert fast.reply("legal_actions", {"id": 1, "actions": actions}) is None
        for a in r.legal_actions(s):
            full["action"].validate(a.to_dict())
            s2, events = r.apply(s, a)
            evs = orjson.loads(orjson.dumps([e.to_dict() for e in events]))
            for e in evs:
                full["event"].validate(e)
            assert fast.reply("apply", {"id": 1, "state": 2, "events": evs}) is None
            if s2 not in seen:
                seen.add(s2)
                stack.append(s2)
    assert n == 150


def test_schema_violations_are_found_with_their_place():
    v = ReplyValidator()
    b = load_board(ROOT / "boards/000-replay-1.toml")
    obs = orjson.loads(orjson.dumps(observe(Rules(b.pool), b.state)))
    bad = json.loads(json.dumps(obs))
    bad["players"][0]["monsters"][0]["atk"] = "1700"
    assert v.reply("observe", {"id": 1, "observation": bad}) == "observation.players[0].monsters[0].atk: '1700' is not of type 'integer'"
    bad = json.loads(json.dumps(obs))
    del bad["to_act"]
    assert "'to_act' is a required property" in v.reply("observe", {"id": 1, "observation": bad})
    bad = json.loads(json.dumps(obs))
    bad["players"][1]["graveyard"][0]["owner"] = 2
    assert v.reply("observe", {"id": 1, "observation": bad}).startswith("observation.players[1].graveyard[0].owner:")
    # Events: an unknown kind, a missing field of a known kind.
    assert "events[0].kind" in v.reply("apply", {"id": 1, "state": 1, "events": [{"kind": "exploded"}]})
    problem = v.reply("apply", {"id": 1, "state": 1, "events": [{"kind": "battle_damage", "player": 1, "amount": 300}]})
    assert problem.startswith("events[0]") and "attacker_uid" in problem
    # Actions need a label; replies need their fields.
    assert "label" in v.reply("legal_actions", {"id": 1, "actions": [{"kind": "pass", "player": 0}]})
    assert "'state' is a required property" in v.reply("apply", {"id": 1, "events": []})
    # A valid piece is remembered, an invalid one is never: the same bad monster fails again.
    bad = json.loads(json.dumps(obs))
    bad["players"][0]["monsters"][0]["position"] = "sideways"
    for _ in range(2):
        assert v.reply("observe", {"id": 1, "observation": bad}).startswith("observation.players[0].monsters[0].position:")
    assert v.reply("observe", {"id": 1, "observation": obs}) is None


# =============================================================================================
# bpcheck serve: the server side over the reference model
# =============================================================================================


def _session(srv: Server, *reqs: dict) -> list[dict]:
    return [orjson.loads(srv.reply_line(orjson.dumps(r) if isinstance(r, dict) else r)) for r in reqs]


def test_serve_answers_every_bad_request_with_an_error():
    b = load_board(ROOT / GOOD_BOARD)
    board = tomllib.loads((ROOT / GOOD_BOARD).read_text())
    srv = Server()
    replies = _session(
        srv,
        {"id": 1, "op": "legal_actions", "state": 0},  # before hello
        {"id": 2, "op": "hello", "protocol": 9},
        {"id": 3, "op": "hello", "protocol": 1, "client": "test"},
        {"id": 4, "op": "observe", "state": 0},  # before start
        {"id": 5, "op": "start", "board": {"turn": 2}, "path": "x.toml", "cards": {}},
        {"id": 6, "op": "start", "board": board, "path": GOOD_BOARD, "cards": {}},
        {"id": 7, "op": "legal_actions", "state": 42},
        {"id": 8, "op": "apply", "state": 0, "action": "attack Mokey Mokey -> direct"},
        {"id": 9, "op": "frobnicate"},
        b"{not json",
        {"id": 10, "op": "apply", "state": 0, "action": {"label": "enter Battle Phase", "kind": "enter_bp", "player": 0}},
        {"id": 11, "op": "apply", "state": 0, "action": "enter Battle Phase"},
    )
    assert "send 'hello' first" in replies[0]["error"]
    assert "protocol 1 or 2, not 9" in replies[1]["error"]
    assert replies[2] == {"id": 3, "protocol": 1, "engine": "bpcheck-reference", "version": replies[2]["version"]}
    assert "no board started" in replies[3]["error"]
    assert replies[4]["error"].startswith("bad board: x.toml: ")
    assert replies[5] == {"id": 6, "state": 0}
    assert replies[6] == {"id": 7, "error": "unknown state handle 42"}
    assert "not a legal action" in replies[7]["error"]
    assert "unknown op 'frobnicate'" in replies[8]["error"]
    assert replies[9]["id"] is None and "malformed JSON" in replies[9]["error"]
    # An action record or its label: the same transition, the same (interned) state handle.
    assert replies[10]["state"] == replies[11]["state"] == 1
    assert replies[10]["events"] == [{"kind": "phase_changed", "from": "main1", "to": "battle_start_step"}]
    v = ReplyValidator()
    for op, r in zip(["apply", "apply"], replies[10:]):
        assert v.reply(op, r) is None
    assert load_board(ROOT / GOOD_BOARD).state == b.state  # the board file was not touched


def test_serve_through_the_cli_gives_the_reference_results_byte_for_byte(tmp_path):
    """`bpcheck check BOARD --engine cmd:"python -m bpcheck.engines.serve"`: the same counts, verdicts,
    invariant rows and output as the in-process reference (the engine name aside)."""
    boards = ["boards/000-replay-1.toml", "boards/rule-lp-zero-battle.toml"]
    ref, ref_doc = check_json(tmp_path, *boards, "--no-reduce", name="ref.json")  # every state: the perft counts
    srv, srv_doc = check_json(tmp_path, *boards, "--no-reduce", "--engine", SERVE, "--check-determinism", "--call-timeout", "30", name="srv.json")
    assert ref.returncode == srv.returncode == 0, srv.stdout + srv.stderr
    assert srv_doc["engine"] == SERVE
    assert without_engine(srv_doc) == without_engine(ref_doc)
    assert [b["states"] for b in srv_doc["boards"]] == [110, 95]
    assert srv.stdout == ref.stdout


def test_bpcheck_serve_subcommand_speaks_the_protocol():
    exe = Path(sys.executable).with_name("bpcheck")
    argv = [str(exe), "serve"] if exe.exists() else [sys.executable, "-m", "bpcheck", "serve"]
    board = tomllib.loads((ROOT / GOOD_BOARD).read_text())
    b = load_board(ROOT / GOOD_BOARD)
    lines = [
        {"id": 1, "op": "hello", "protocol": 1},
        {"id": 2, "op": "start", "board": board, "path": GOOD_BOARD, "cards": {c.name: card_record(c) for c in b.pool}},
        {"id": 3, "op": "legal_actions", "state": 0},
    ]
    out = subprocess.run(argv, input=b"".join(orjson.dumps(x) + b"\n" for x in lines), capture_output=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    replies = [orjson.loads(x) for x in out.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert [a["label"] for a in replies[2]["actions"]] == ["enter Battle Phase", "skip Battle Phase"]


def test_serve_serves_rules_variants(tmp_path):
    """`bpcheck serve --engine package.module:Rules` serves a variant: a planted bug is found
    through the protocol as in process."""
    engine = f"cmd:{PY} -m bpcheck.engines.serve --engine buggy_engines:CallOffForgetsAttack"
    env_path = str(ROOT / "tests")
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bpcheck", "check", "boards/000-replay-1.toml", "--engine", engine, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": env_path},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    cexs: dict = {}
    for c in json.loads(out.read_text())["boards"][0]["counterexamples"]:
        cexs.setdefault(c["invariant"], c)  # the shortest of each (one per signature, shortest first)
    assert cexs["replay.call-off-counts"]["length"] == 9


# =============================================================================================
# The adapter: restarts, rebuilt states, the determinism memo
# =============================================================================================


def _walk(engine, state, labels):
    for label in labels:
        action = next(a for a in engine.legal_actions(state) if a.label == label)
        state, _events = engine.apply(state, action)
        engine.observe(state)
    return state


def test_adapter_rebuilds_states_after_the_engine_process_dies():
    b = load_board(ROOT / "boards/000-replay-1.toml")
    eng = JsonlEngine(f"{PY} -m bpcheck.engines.serve", check_determinism=True)
    ref = ReferenceEngine()
    s, r = eng.start(b), ref.start(b)
    path = ["enter Battle Phase", "pass", "pass", "attack Battle Ox -> direct", "pass"]
    s, r = _walk(eng, s, path), _walk(ref, r, path)
    first_pid = eng._proc.p.pid
    eng._proc.kill()  # the engine dies behind the adapter's back
    with pytest.raises(SystemFault) as e:
        eng.legal_actions(s)
    assert e.value.kind == "crash"
    # The next call starts a new process and rebuilds the state by its path.
    labels = [a.label for a in eng.legal_actions(s)]
    assert eng._proc.p.pid != first_pid and eng.restarts == 1
    assert labels == [a.label for a in ref.legal_actions(r)]
    action = next(a for a in eng.legal_actions(s) if a.label.startswith("activate Call of the Haunted"))
    s2, events = eng.apply(s, action)
    r2, ref_events = ref.apply(r, next(a for a in ref.legal_actions(r) if a.label == action.label))
    assert [e.to_dict() for e in events] == [e.to_dict() for e in ref_events]
    assert eng.observe(s2) == orjson.loads(orjson.dumps(ref.observe(r2)))
    eng.close()
    assert eng._proc is None


def test_adapter_gives_up_after_max_restarts():
    b = load_board(ROOT / GOOD_BOARD)
    eng = JsonlEngine(f"{PY} -m bpcheck.engines.serve")
    s = eng.start(b)
    for k in range(MAX_RESTARTS):
        eng._proc.kill()
        with pytest.raises(SystemFault):
            eng.legal_actions(s)
        eng.legal_actions(s)  # restarted
        assert eng.restarts == k + 1
    eng._proc.kill()
    with pytest.raises(SystemFault):
        eng.legal_actions(s)
    with pytest.raises(SystemFault) as e:
        eng.legal_actions(s)
    assert e.value.kind == "crash" and f"restarted {MAX_RESTARTS} times" in e.value.message
    eng.close()


def test_adapter_remembers_results_and_calls_a_changed_answer_nondeterministic():
    """Without --check-determinism, a transition met again (as when a counterexample is
    replayed) is compared with the first answer."""
    b = load_board(ROOT / FAULTY_BOARD)
    eng = JsonlEngine(f"{PY} {shlex.quote(str(ENGINES / 'nondeterministic_engine.py'))}")
    s = _walk(eng, eng.start(b), ["enter Battle Phase", "pass", "pass"])
    attack = next(a for a in eng.legal_actions(s) if a.label.startswith("attack "))
    eng.apply(s, attack)
    with pytest.raises(SystemFault) as e:
        eng.apply(s, attack)
    assert e.value.kind == "nondeterministic" and "gave different events this time" in e.value.message
    eng.close()


def test_bad_commands_and_handshakes_are_bad_input(tmp_path):
    proc = bpcheck("check", GOOD_BOARD, "--engine", "cmd:no-such-engine-anywhere --flag")
    assert proc.returncode == 2 and "cannot run 'no-such-engine-anywhere'" in proc.stderr
    proc = bpcheck("check", GOOD_BOARD, "--engine", 'cmd:"unbalanced')
    assert proc.returncode == 2 and "cannot split the command" in proc.stderr
    proc = bpcheck("check", GOOD_BOARD, "--engine", "cmd:")
    assert proc.returncode == 2 and "cmd: needs a command" in proc.stderr
    # An engine speaking another protocol version.
    script = tmp_path / "v3.py"
    script.write_text(
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    print(json.dumps({'id': req['id'], 'protocol': 3, 'engine': 'future'}), flush=True)\n"
    )
    proc = bpcheck("check", GOOD_BOARD, "--engine", f"cmd:{PY} {shlex.quote(str(script))}")
    assert proc.returncode == 2 and "speaks protocol version 3; bpcheck speaks 1, 2" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_an_engine_that_dies_at_once_is_an_engine_fault_with_an_empty_trace(tmp_path):
    engine = f"cmd:{PY} -c 'import sys; sys.exit(5)'"
    proc, doc = check_json(tmp_path, GOOD_BOARD, FAULTY_BOARD, "--engine", engine, "--report", str(tmp_path / "report"))
    assert proc.returncode == 1
    assert [b["verdict"] for b in doc["boards"]] == ["fail", "fail"]
    for b in doc["boards"]:
        (cex,) = b["counterexamples"]
        assert cex["invariant"] == "ENGINE-FAULT" and cex["trace"] == [] and cex["kind"] == "fault"
        assert cex["message"] == "crash: the engine exited with status 5 before answering 'hello' (starting the board)"
        # The engine gave no observation: the board is shown as its file describes it.
        board = load_board(ROOT / b["board"])
        assert cex["initial_observation"] == orjson.loads(orjson.dumps(observe(Rules(board.pool), board.state)))
    assert "violating board (the initial one):" in proc.stdout
    assert (tmp_path / "report" / "index.html").exists()


@pytest.mark.parametrize("when", ["after-reading-the-request", "before-the-request-is-written"])
def test_an_engine_that_dies_at_once_is_one_fault_whatever_the_timing(monkeypatch, when):
    """Issue 34 (the test above failed under load only): an engine that exits at once may be gone
    before bpcheck writes its first request (the write fails: its input is closed) or not (its
    output closes while bpcheck waits for the reply). Which of the two happens depends on the
    machine's load, never on the engine: the fault is the same, said the same way. Each case is
    made certain here: the engine reads the request before it exits, or bpcheck writes the
    request only once the engine's process has ended."""
    code = "import sys; sys.exit(5)"
    if when == "after-reading-the-request":
        code = "import sys; sys.stdin.readline(); sys.exit(5)"
    else:
        write = _Process.send

        def late(self, data: bytes) -> bool:
            self.p.wait(timeout=60)
            return write(self, data)

        monkeypatch.setattr(_Process, "send", late)
    engine = JsonlEngine(f"{PY} -c {shlex.quote(code)}")
    with pytest.raises(SystemFault) as e:
        engine.start(load_board(ROOT / GOOD_BOARD))
    engine.close()
    assert e.value.kind == "crash" and e.value.message == "the engine exited with status 5 before answering 'hello'"


# =============================================================================================
# Engine faults: one deliberately faulty engine per kind
# =============================================================================================


class FaultOnAttack:
    """In process, the reference model with a fault where the faulty engines have theirs: the
    exploration they allow, to compare counts with (restarts and rebuilt states included)."""

    name = "oracle"

    def __init__(self) -> None:
        self.ref = ReferenceEngine()

    def start(self, board):
        return self.ref.start(board)

    def legal_actions(self, s):
        return self.ref.legal_actions(s)

    def apply(self, s, a):
        if a.label.startswith("attack "):
            raise SystemFault("oracle", "on purpose")
        return self.ref.apply(s, a)

    def observe(self, s):
        return self.ref.observe(s)

    def is_terminal(self, s):
        return self.ref.is_terminal(s)


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_engine_fault(kind, tmp_path):
    """Each fault kind: exit 1, an ENGINE-FAULT counterexample naming the kind with the trace to
    the faulty call, no traceback, the rest of that board explored (the same states as the
    in-process oracle), and the other board of the run checked as usual."""
    engine = f"cmd:{PY} {shlex.quote(str(ENGINES / FAULT_ENGINES[kind]))}"
    cex_dir = tmp_path / "cex"
    # 1 s for the engine that hangs (each hang costs that); the default bound for the others,
    # whose calls must not turn into timeouts on a loaded machine (issue 34)
    call_timeout = ("--call-timeout", "1") if kind == "timeout" else ()
    proc, doc = check_json(
        tmp_path, FAULTY_BOARD, GOOD_BOARD, "--no-reduce", "--engine", engine, *call_timeout, "--check-determinism", "--cex-dir", str(cex_dir)
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    faulty, good = doc["boards"]
    assert faulty["verdict"] == "fail"
    cexs = {c["invariant"]: c for c in faulty["counterexamples"]}
    assert list(cexs) == ["ENGINE-FAULT"], out
    cex = cexs["ENGINE-FAULT"]
    assert cex["kind"] == "fault"
    assert cex["message"].startswith(f"{kind}: ") and cex["message"].endswith("(applying 'attack Battle Ox -> direct')")
    assert cex["trace"] == ["enter Battle Phase", "pass", "pass", "attack Battle Ox -> direct"]
    assert cex["steps"][-1]["events"] == [] and cex["steps"][0]["events"][0]["kind"] == "phase_changed"
    assert f"violation: {kind}: " in proc.stdout and "shortest trace (4 steps)" in proc.stdout
    row = next(r for r in faulty["invariants"] if r["id"] == "ENGINE-FAULT")
    assert row["verdict"] == "violated" and row["violations"] >= 1
    # The rest of the board was explored: exactly what the oracle's exploration reaches.
    oracle = check_board(load_board(ROOT / FAULTY_BOARD), FaultOnAttack(), select(None), reduce=False)
    assert (faulty["states"], faulty["transitions"]) == (oracle.result.states, oracle.result.transitions)
    assert faulty["states"] > 20 and faulty["terminal_states"] >= 2
    # The good board: the reference model's counts, passed.
    assert good["verdict"] == "pass" and (good["states"], good["transitions"]) == (9, 9)
    assert not good["counterexamples"]
    assert "PASS         boards/002-enter-battle-phase.toml: 9 states, 9 transitions" in proc.stdout
    if kind == "timeout":
        return  # `bpcheck replay` waits the default 10 s per call: the replay is shown on the others
    # The saved counterexample replays: the fault again, exit 1, no traceback.
    replay = bpcheck("replay", str(cex_dir / "000-replay-1.ENGINE-FAULT.json"), "--engine", engine)
    assert replay.returncode == 1 and f"engine fault: {kind}: " in replay.stdout, replay.stdout + replay.stderr
    assert "Traceback" not in own_output(replay.stdout + replay.stderr)


def test_crash_message_names_the_exit_status_and_stderr(tmp_path):
    engine = f"cmd:{PY} {shlex.quote(str(ENGINES / 'crash_engine.py'))}"
    proc, doc = check_json(tmp_path, FAULTY_BOARD, "--engine", engine, "--report", str(tmp_path / "report"))
    assert (tmp_path / "report" / "index.html").exists()  # the reports draw a trace that ends in a fault
    cex = doc["boards"][0]["counterexamples"][0]
    assert cex["message"] == (
        "crash: the engine exited with status 3 before answering 'apply' (stderr: crash_engine: giving up on purpose)"
        " (applying 'attack Battle Ox -> direct')"
    )
    # the whole traceback the engine wrote, not only its last line (issue 34), in --json and in the text
    tail = cex["engine_stderr"]
    assert tail[0] == "Traceback (most recent call last):" and tail[-1] == "crash_engine: giving up on purpose", tail
    assert any(line.startswith("KeyError: ") for line in tail) and any("in resolve_attack" in line for line in tail), tail
    assert "the engine's stderr when it crashed (its last " in proc.stdout and "  | KeyError: " in proc.stdout, proc.stdout
    page = next((tmp_path / "report" / "counterexamples").glob("*ENGINE-FAULT*.html")).read_text()
    assert '<h2 id="engine-stderr">' in page and "KeyError: &quot;attacker_atk" in page and "in damage_of" in page
    jsonschema.validate(doc, RESULT_SCHEMA)


def test_a_crash_keeps_the_end_of_stderr_bounded(tmp_path):
    """The stderr tail of a crash is bounded: the last STDERR_TAIL_LINES lines, at most
    STDERR_TAIL_BYTES bytes, whatever the engine wrote (issue 34). Each process has ended before
    exit_note is asked, as when bpcheck asks it (its output closed): exit_note's own wait is
    bounded (2 s), and a loaded machine may take longer than that to start Python."""
    many = _Process([sys.executable, "-c", "import sys\nfor i in range(500): print(f'line {i:03}', file=sys.stderr)\nsys.exit(1)"])
    many.p.wait(timeout=60)
    note, err = many.exit_note()
    lines = many.stderr_lines()
    many.kill()
    assert note == "exited with status 1" and err == " (stderr: line 499)"
    assert lines == tuple(f"line {i:03}" for i in range(500 - STDERR_TAIL_LINES, 500)), lines
    wide = _Process([sys.executable, "-c", "import sys\nfor i in range(20): print(str(i) * 1000, file=sys.stderr)\nprint('x' * 9000, file=sys.stderr)\nsys.exit(2)"])
    wide.p.wait(timeout=60)
    wide.exit_note()
    lines = wide.stderr_lines()
    wide.kill()
    assert sum(len(x) + 1 for x in lines) <= STDERR_TAIL_BYTES + 4 and len(lines) == 1 and lines[0].startswith("...x"), [x[:20] for x in lines]
    mixed = _Process([sys.executable, "-c", "import sys\nfor i in range(10): print(chr(97 + i) * 1000, file=sys.stderr)\nsys.exit(2)"])
    mixed.p.wait(timeout=60)
    mixed.exit_note()
    lines = mixed.stderr_lines()
    mixed.kill()
    assert lines == tuple(c * 1000 for c in "ghij"), [x[:3] for x in lines]  # the last lines that fit whole


def test_the_engine_fault_output_is_deterministic(tmp_path):
    engine = f"cmd:{PY} {shlex.quote(str(ENGINES / 'malformed_engine.py'))}"
    a, doc_a = check_json(tmp_path, FAULTY_BOARD, "--engine", engine, name="a.json")
    b, doc_b = check_json(tmp_path, FAULTY_BOARD, "--engine", engine, name="b.json")
    assert a.stdout == b.stdout and (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_a_reply_with_a_duplicate_key_is_malformed_naming_the_key(tmp_path):
    """The reply to an attack holds "id" twice (another request's, then its own): refused as
    malformed, naming the key, at the call that sent it (issue 33)."""
    engine = f"cmd:{PY} {shlex.quote(str(ENGINES / 'duplicate_key_engine.py'))}"
    proc, doc = check_json(tmp_path, FAULTY_BOARD, "--engine", engine)
    assert proc.returncode == 1, proc.stdout[-2000:]
    faults = [c["message"] for c in doc["boards"][0]["counterexamples"] if c["invariant"] == "ENGINE-FAULT"]
    assert faults and all(m.startswith("malformed: the reply to 'apply' has the key \"id\" twice in one object (applying 'attack ") for m in faults), faults


@pytest.mark.parametrize(
    "text, key",
    [(b'{"a": 1, "a": 2}', "a"), (b'{"x": {"b": [1, {"c": 1, "c": 1}]}}', "c"), (b'{"a" : 1, "a" : 1}', "a"),
     (b'{"s": "quote\\": in a string", "t": 1}', None), (b'{"a": "\\\":", "b": {"a": 1}}', None)],
)
def test_duplicate_keys_are_found_at_any_depth_and_only_there(text, key):
    assert duplicate_key(text, orjson.loads(text)) == key


def test_an_engine_whose_observation_of_one_state_changes_is_an_engine_fault(tmp_path):
    """Each `observe` gives another LP: an ENGINE-FAULT (nondeterministic) at the initial state,
    without --check-determinism, not invariant violations on observations that never were
    (issue 33)."""
    engine = f"cmd:{PY} {shlex.quote(str(ENGINES / 'unstable_observation_engine.py'))}"
    proc, doc = check_json(tmp_path, FAULTY_BOARD, "--engine", engine)
    assert proc.returncode == 1, proc.stdout[-2000:]
    cexs = doc["boards"][0]["counterexamples"]
    assert [c["invariant"] for c in cexs] == ["ENGINE-FAULT"], [(c["invariant"], c["message"]) for c in cexs]
    assert cexs[0]["message"].startswith("nondeterministic: observed twice, the initial state gave different observations (observation.players[1].lp: ")


def test_repeated_crashes_stop_at_the_restart_limit(tmp_path):
    """An engine that crashes on every attack declaration of a board full of them: the run ends
    after MAX_RESTARTS restarts with every later call failing at once, and the board's result is
    kept."""
    engine = f"cmd:{PY} {shlex.quote(str(ENGINES / 'crash_engine.py'))}"
    proc, doc = check_json(tmp_path, "tests/data/protocol-vanilla-1.toml", GOOD_BOARD, "--engine", engine)
    assert proc.returncode == 1
    faulty, good = doc["boards"]
    row = next(r for r in faulty["invariants"] if r["id"] == "ENGINE-FAULT")
    assert row["violations"] > MAX_RESTARTS
    assert good["verdict"] == "pass"
    # Every attack was refused one way or another: the states before any attack only.
    oracle = check_board(load_board(ROOT / "tests/data/protocol-vanilla-1.toml"), FaultOnAttack(), select(None))
    assert faulty["states"] <= oracle.result.states


# =============================================================================================
# The Node.js engine: the protocol across a process and a language boundary
# =============================================================================================


def _lockstep(engine, board_path: str) -> int:
    """Walk every reachable state of the reference model and of `engine` together, comparing
    the action records, events, observations and terminal flags at every transition."""
    b = load_board(ROOT / board_path)
    ref = ReferenceEngine()
    r0, e0 = ref.start(b), engine.start(b)
    canon = lambda x: orjson.loads(orjson.dumps(x))  # noqa: E731
    assert engine.observe(e0) == canon(ref.observe(r0))
    seen = {r0}
    stack = [(r0, e0)]
    transitions = 0
    while stack:
        r, e = stack.pop()
        assert engine.is_terminal(e) == ref.is_terminal(r)
        if ref.is_terminal(r):
            continue
        ref_actions = ref.legal_actions(r)
        actions = engine.legal_actions(e)
        assert [a.to_dict() for a in actions] == [a.to_dict() for a in ref_actions]
        for ra, ea in zip(ref_actions, actions):
            r2, ref_events = ref.apply(r, ra)
            e2, events = engine.apply(e, ea)
            transitions += 1
            assert [x.to_dict() for x in events] == canon([x.to_dict() for x in ref_events]), ra.label
            assert engine.observe(e2) == canon(ref.observe(r2)), ra.label
            if r2 not in seen:
                seen.add(r2)
                stack.append((r2, e2))
    return transitions


@pytest.mark.parametrize("board", VANILLA_BOARDS)
def test_node_engine_matches_the_reference_field_by_field(board):
    cmd = node_command()[len("cmd:") :]
    engine = JsonlEngine(cmd, check_determinism=True)
    try:
        transitions = _lockstep(engine, board)
    finally:
        engine.close()
    assert transitions >= 9


def test_node_engine_passes_bpcheck_check_with_the_reference_counts(tmp_path):
    node = node_command()
    boards = VANILLA_BOARDS
    ref, ref_doc = check_json(tmp_path, *boards, "--no-reduce", name="ref.json")  # every state: the pinned counts
    out, doc = check_json(tmp_path, *boards, "--no-reduce", "--engine", node, "--check-determinism", name="node.json")
    assert ref.returncode == 0 and out.returncode == 0, out.stdout + out.stderr
    assert without_engine(doc) == without_engine(ref_doc)
    counts = {b["board"]: (b["states"], b["transitions"]) for b in doc["boards"]}
    assert counts["tests/data/protocol-vanilla-1.toml"] == (791, 816)
    assert counts["tests/data/protocol-vanilla-2.toml"] == (249, 251)
    assert out.stdout == ref.stdout


def test_vanilla_boards_exercise_the_battle_phase():
    """The Node engine's boards reach what it claims to implement (seen on the reference)."""
    kinds: set[str] = set()
    labels: set[str] = set()
    for board in VANILLA_BOARDS:
        b = load_board(ROOT / board)
        r = Rules(b.pool)
        seen, stack = {b.state}, [b.state]
        while stack:
            s = stack.pop()
            for a in r.legal_actions(s):
                labels.add(a.label)
                s2, events = r.apply(s, a)
                kinds.update(e.kind for e in events)
                kinds.update(f"{e.kind}:{e.get('to')}" for e in events if e.kind == "card_moved")
                kinds.add(f"step:{s2.step.value}")
                if s2 not in seen:
                    seen.add(s2)
                    stack.append(s2)
    for k in (
        "attack_declared",
        "flipped",
        "damage_calculation",
        "battle_damage",
        "destroyed_by_battle",
        "card_moved:graveyard",
        "card_moved:nowhere",
        "attack_ended",
        "position_changed",
        "duel_over",
        "step:damage_step_flip",
        "step:damage_step_end",
        "step:main2",
        "step:end_phase",
    ):
        assert k in kinds, k
    assert any(re.fullmatch(r"attack Battle Ox \[P1 M1\] -> .+", x) for x in labels)
    assert "skip Battle Phase" in labels and "end Battle Phase" in labels


def test_node_engine_refuses_boards_it_does_not_support(tmp_path):
    node = node_command()
    proc, doc = check_json(tmp_path, "boards/000-replay-1.toml", GOOD_BOARD, "--engine", node)
    assert proc.returncode == 3  # a refused board is skipped (EngineRefusal), not bad input, and not a pass
    assert "SKIPPED      boards/000-replay-1.toml: the engine refused this board: the engine 'vanilla-engine (node)' cannot start this board: p2.spells:" in proc.stdout
    assert doc["errors"] == [] and doc["counts"]["skipped"] == 1
    assert [b["verdict"] for b in doc["boards"]] == ["skipped", "pass"]
    proc = bpcheck("check", "boards/000-flip-man-eater-bug.toml", "--engine", node, "--strict")
    assert proc.returncode == 3 and "is not a vanilla monster" in proc.stdout


def test_the_session_in_the_docs_is_what_bpcheck_serve_answers():
    """docs/protocol.md's transcript: every request is valid, and every reply shown in full is
    exactly the reply of `bpcheck serve` (the observe reply is shown cut short)."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    pairs = re.findall(r"^→ (.+)\n← (.+)$", text, flags=re.M)
    assert len(pairs) == 7
    schema = protocol_schema()
    request = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/request"})
    srv = Server()
    compared = 0
    for req_text, reply_text in pairs:
        req = json.loads(req_text)
        request.validate(req)
        got = orjson.loads(srv.reply_line(req_text.encode()))
        try:
            shown = json.loads(reply_text)
        except json.JSONDecodeError:
            assert req["op"] == "observe" and reply_text.startswith(orjson.dumps(got).decode()[:120])
            continue
        assert got == shown
        compared += 1
    assert compared == 6
