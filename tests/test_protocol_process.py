"""The engine process, through real processes (engines/jsonl.py): a chatty stderr does not slow
replies down, a reply has a size limit, and no process the engine started outlives it."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from bpcheck.engines.jsonl import MAX_REPLY_BYTES

ROOT = Path(__file__).resolve().parent.parent
PY = shlex.quote(sys.executable)
BOARD = "boards/002-enter-battle-phase.toml"

SERVER = """
import sys
from bpcheck.engines.serve import Server
{extra}
raise SystemExit({cls}().serve(sys.stdin.buffer, sys.stdout.buffer))
"""


def engine(tmp_path: Path, name: str, extra: str, cls: str = "Server") -> str:
    script = tmp_path / f"{name}.py"
    script.write_text(SERVER.format(extra=extra, cls=cls))
    return f"cmd:{PY} {shlex.quote(str(script))}"


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_an_engine_that_logs_megabytes_per_reply_is_not_timed_out(run_cli, tmp_path):
    """2 MB of stderr per reply (a correct, chatty engine): read in large chunks, the replies
    come in time (read one byte per system call, they did not)."""
    loud = engine(
        tmp_path,
        "loud",
        """
class Loud(Server):
    def reply_line(self, line):
        sys.stderr.buffer.write(b"debug " * ((2 << 20) // 6) + b"\\n")
        sys.stderr.buffer.flush()
        return super().reply_line(line)
""",
        "Loud",
    )
    out = tmp_path / "r.json"
    code, stdout, stderr = run_cli("check", BOARD, "--engine", loud, "--call-timeout", "3", "--no-reduce", "--json", str(out))
    assert code == 0, stdout + stderr
    doc = json.loads(out.read_text())
    assert doc["boards"][0]["counterexamples"] == [] and doc["boards"][0]["states"] > 3


def test_a_reply_longer_than_the_limit_is_an_engine_fault(run_cli, tmp_path):
    huge = engine(
        tmp_path,
        "huge",
        f"""
class Huge(Server):
    def op_observe(self, req):
        reply = super().op_observe(req)
        if req["state"] != 0:
            reply["observation"] = {{**reply["observation"], "junk": "x" * {MAX_REPLY_BYTES + 1024}}}
        return reply
""",
        "Huge",
    )
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli("check", BOARD, "--engine", huge, "--json", str(out))
    assert code == 1
    faults = [c for c in json.loads(out.read_text())["boards"][0]["counterexamples"] if c["invariant"] == "ENGINE-FAULT"]
    assert faults and faults[0]["message"].startswith(f"malformed: the reply to 'observe' is longer than {MAX_REPLY_BYTES:,} bytes")
    assert faults[0]["length"] == 1


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("State:")), "X")
    return state not in ("Z", "X")  # a zombie waits for its (new) parent to reap it: it is dead


def test_processes_the_engine_starts_do_not_outlive_it(run_cli, tmp_path):
    pids = tmp_path / "pids"
    parent = engine(
        tmp_path,
        "parent",
        f"""
import subprocess
child = subprocess.Popen(["sleep", "300"])
with open({str(pids)!r}, "a") as f:
    f.write(str(child.pid) + "\\n")
""",
    )
    code, stdout, stderr = run_cli("check", BOARD, "--engine", parent)
    assert code == 0, stdout + stderr
    started = [int(x) for x in pids.read_text().split()]
    assert started
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in started if _alive(p)], "the engine's child outlived the session"
    for p in started:  # clean up, in case
        try:
            os.kill(p, 9)
        except OSError:
            pass
