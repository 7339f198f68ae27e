"""Checkpoint and resume (`--checkpoint FILE`, `--resume`): a bounded or interrupted exploration
goes on where it stopped and gives the same result, byte for byte, as an uninterrupted run."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bpcheck.explorers.checkpoint import _digest, checkpoint_key

ROOT = Path(__file__).resolve().parent.parent
BOARD = "boards/000-replay-2.toml"  # 431 states
OTHER = "boards/000-replay-1.toml"


def env(**extra: str) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
    e["PYTHONPATH"] = str(ROOT / "tests") + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra)
    return e


def bpcheck(*args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], cwd=ROOT, capture_output=True, text=True, env=env(**extra), timeout=300)


@pytest.mark.parametrize(
    "engine, strategy, status",
    [("reference", "bfs", 0), ("mutant:replay-resets-count", "bfs", 1), ("mutant:replay-resets-count", "dfs", 1), ("reference", "dfs", 0)],
)
def test_a_bounded_run_resumed_gives_the_uninterrupted_result(tmp_path, engine, strategy, status):
    whole, resumed, ck = tmp_path / "whole.json", tmp_path / "resumed.json", tmp_path / "run.ckpt"
    common = ("--engine", engine, "--strategy", strategy)
    a = bpcheck("check", BOARD, *common, "--no-reduce", "--json", str(whole))  # a checkpointed run explores every state
    assert a.returncode == status, a.stdout
    # three legs: stop at 60 states, go on to 200, then to the end
    b = bpcheck("check", BOARD, *common, "--max-states", "60", "--checkpoint", str(ck))
    assert b.returncode in (1, 3) and f"checkpoint: written to {ck}" in b.stdout, b.stdout + b.stderr
    assert ck.read_bytes()[:6] == b"BPCKPT"
    c = bpcheck("check", BOARD, *common, "--max-states", "200", "--checkpoint", str(ck), "--resume")
    assert c.returncode in (1, 3) and "checkpoint: resumed" in c.stdout, c.stdout + c.stderr
    d = bpcheck("check", BOARD, *common, "--checkpoint", str(ck), "--resume", "--json", str(resumed))
    assert d.returncode == status, d.stdout + d.stderr
    assert resumed.read_bytes() == whole.read_bytes()
    assert f"checkpoint: {ck} removed (the exploration is complete)" in d.stdout and not ck.exists()
    text = lambda out: [l for l in out.splitlines() if not l.startswith("checkpoint:")]  # noqa: E731
    assert text(d.stdout) == text(a.stdout)  # the same shortest counterexamples, printed the same


def test_an_interrupted_run_resumed_gives_the_uninterrupted_result(tmp_path):
    whole, resumed, ck = tmp_path / "whole.json", tmp_path / "resumed.json", tmp_path / "run.ckpt"
    spec = "lifecycle_engines:slow_buggy"
    a = bpcheck("check", BOARD, "--engine", spec, "--no-reduce", "--json", str(whole))  # a checkpointed run explores every state
    assert a.returncode == 1
    marker = tmp_path / "started"
    p = subprocess.Popen(
        [sys.executable, "-m", "bpcheck", "check", BOARD, "--engine", spec, "--checkpoint", str(ck)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env(LIFECYCLE_SLOW="0.01", LIFECYCLE_STARTED=str(marker)),
    )
    t0 = time.monotonic()
    while not marker.exists():
        assert p.poll() is None and time.monotonic() - t0 < 60
        time.sleep(0.02)
    time.sleep(0.5)  # some states in
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "interrupted (SIGINT)" in out and "Traceback" not in err, (out, err)
    assert ck.exists()
    d = bpcheck("check", BOARD, "--engine", spec, "--checkpoint", str(ck), "--resume", "--json", str(resumed))
    assert d.returncode == 1, d.stdout + d.stderr
    assert resumed.read_bytes() == whole.read_bytes()


def test_a_checkpoint_is_only_resumed_for_what_it_was_of(tmp_path):
    ck = tmp_path / "run.ckpt"
    assert bpcheck("check", BOARD, "--max-states", "50", "--checkpoint", str(ck)).returncode == 3
    for args, field in (
        ((OTHER,), "key.board"),
        ((BOARD, "--engine", "mutant:replay-resets-count"), "key.engine"),
        ((BOARD, "--invariants", "replay"), "key.invariants"),
        ((BOARD, "--strategy", "dfs"), "key.strategy"),
    ):
        p = bpcheck("check", *args, "--checkpoint", str(ck), "--resume")
        assert p.returncode == 2 and f"{ck}: {field}: the checkpoint is of" in p.stderr, (args, p.stderr)
        assert "Traceback" not in p.stderr
    changed = tmp_path / "b.toml"
    changed.write_text((ROOT / BOARD).read_text())
    ck2 = tmp_path / "b.ckpt"
    assert bpcheck("check", str(changed), "--max-states", "50", "--checkpoint", str(ck2)).returncode == 3
    changed.write_text(changed.read_text().replace("lp = 8000", "lp = 7000", 1))
    p = bpcheck("check", str(changed), "--checkpoint", str(ck2), "--resume")
    assert p.returncode == 2 and "key.board_sha256: the board file has changed" in p.stderr
    data = bytearray(ck.read_bytes())
    data[-40] ^= 0xFF  # in the last array
    ck.write_bytes(bytes(data))
    p = bpcheck("check", BOARD, "--checkpoint", str(ck), "--resume")
    assert p.returncode == 2 and "digest: the checkpoint does not verify" in p.stderr
    ck.write_bytes(b"\x80\x04pickle?")
    p = bpcheck("check", BOARD, "--checkpoint", str(ck), "--resume")
    assert p.returncode == 2 and "not a bpcheck checkpoint" in p.stderr
    p = bpcheck("check", BOARD, "--checkpoint", str(tmp_path / "none.ckpt"), "--resume")
    assert p.returncode == 2 and "no checkpoint file here" in p.stderr
    p = bpcheck("check", BOARD, OTHER, "--checkpoint", str(ck))
    assert p.returncode == 2 and "give exactly one board file" in p.stderr
    p = bpcheck("check", BOARD, "--resume")
    assert p.returncode == 2 and "needs --checkpoint FILE" in p.stderr
    ck3 = tmp_path / "kept.ckpt"
    assert bpcheck("check", BOARD, "--max-states", "50", "--checkpoint", str(ck3)).returncode == 3
    p = bpcheck("check", BOARD, "--checkpoint", str(ck3))  # without --resume: refused, the file is kept
    assert p.returncode == 2 and "a checkpoint is already there: add --resume" in p.stderr and ck3.exists()


def test_the_checkpoint_header_is_documented_json(tmp_path):
    ck = tmp_path / "run.ckpt"
    assert bpcheck("check", BOARD, "--max-states", "50", "--checkpoint", str(ck)).returncode == 3
    data = ck.read_bytes()
    assert data[:8] == b"BPCKPT\x00\x02"
    n = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16 : 16 + n])
    assert header["format"] == 2 and header["key"]["board"] == BOARD
    assert [a["name"] for a in header["arrays"]] == ["fps", "parent", "via", "depth", "extra_src", "extra_dst", "extra_act", "frontier"]
    sizes = {"u8": 8, "i8": 8, "u4": 4}
    assert 16 + n + sum(a["count"] * sizes[a["type"]] for a in header["arrays"]) + 32 == len(data)  # + the digest
    assert header["arrays"][0]["count"] >= 50 and header["arrays"][-1]["count"] > 0


# -- checkpoints that cannot lie (issue 33) ------------------------------------------------------------


def _parts(ck: Path) -> tuple[dict, bytes]:
    data = ck.read_bytes()[:-32]
    n = int.from_bytes(data[8:16], "little")
    return json.loads(data[16 : 16 + n]), data[16 + n :]


def _rewrite(ck: Path, header: dict, payload: bytes, sign_for: dict | None = None) -> None:
    """The checkpoint with `header` (its digest recomputed for `sign_for`'s key, as a writer with a
    bug would; else the old digest kept, as an editor would)."""
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    body = ck.read_bytes()[:8] + len(h).to_bytes(8, "little") + h + payload
    if sign_for is None:
        digest = ck.read_bytes()[-32:]
    else:
        digest = _digest(sign_for, [body])  # the writer's own digest: a writer with a bug
    ck.write_bytes(body + digest)


def test_an_edited_checkpoint_is_never_resumed(tmp_path):
    ck = tmp_path / "run.ckpt"
    assert bpcheck("check", BOARD, "--max-states", "50", "--checkpoint", str(ck)).returncode == 3
    good = ck.read_bytes()
    header, payload = _parts(ck)
    edits = {
        "transitions": lambda h: h["results"].update(transitions=1_021_078),
        "max_depth": lambda h: h["results"].update(max_depth=99),
        "props": lambda h: h["results"]["props"].update({k: [0, 0] for k in h["results"]["props"]}),
    }
    for name, edit in edits.items():
        ck.write_bytes(good)
        h = json.loads(json.dumps(header))
        edit(h)
        _rewrite(ck, h, payload)
        p = bpcheck("check", BOARD, "--checkpoint", str(ck), "--resume")
        assert p.returncode == 2 and f"{ck}: digest: the checkpoint does not verify" in p.stderr, (name, p.stdout[-500:], p.stderr)
        assert "Traceback" not in p.stderr
    # a frontier entry duplicated (its hash recomputed, the digest kept)
    ck.write_bytes(good)
    front = header["arrays"][-1]["count"]
    h = json.loads(json.dumps(header))
    h["arrays"][-1]["count"] = front + 1
    payload2 = payload + payload[-8:]
    h["payload_sha256"] = hashlib.sha256(payload2).hexdigest()
    _rewrite(ck, h, payload2)
    p = bpcheck("check", BOARD, "--checkpoint", str(ck), "--resume")
    assert p.returncode == 2 and "digest: the checkpoint does not verify" in p.stderr, p.stderr


@pytest.mark.parametrize(
    "field, value",
    [("transitions", "7"), ("max_depth", -1), ("terminal_states", 1.5), ("depth_bound_hit", 0), ("action_counts", []), ("props", {"x": 1}),
     ("violations", {}), ("goals", [1]), ("goal_initial", "a")],
)
def test_a_header_field_of_the_wrong_type_is_exit_2_naming_it(tmp_path, monkeypatch, field, value):
    ck = tmp_path / "run.ckpt"
    assert bpcheck("check", BOARD, "--max-states", "50", "--checkpoint", str(ck)).returncode == 3
    header, payload = _parts(ck)
    header["results"][field] = value
    monkeypatch.chdir(ROOT)  # the run's key, as bpcheck forms it, names the board as given
    _rewrite(ck, header, payload, sign_for=checkpoint_key(BOARD, header["key"]["engine"], header["key"]["invariants"], "bfs", None, False))
    p = bpcheck("check", BOARD, "--checkpoint", str(ck), "--resume")
    assert p.returncode == 2 and f"{ck}: results.{field}: expected" in p.stderr, (p.returncode, p.stdout[-300:], p.stderr)
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr


def test_a_crashed_writers_temporary_file_is_removed_on_the_next_write(tmp_path):
    ck = tmp_path / "run.ckpt"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a process id no process has now (a writer killed with -9)
    stale = tmp_path / f".run.ckpt.tmp-{dead.pid}"
    stale.write_bytes(b"half a checkpoint")
    live = tmp_path / f".run.ckpt.tmp-{os.getpid()}"  # a live process's: left alone
    live.write_bytes(b"being written")
    assert bpcheck("check", BOARD, "--max-states", "50", "--checkpoint", str(ck)).returncode == 3
    assert ck.is_file() and not stale.exists() and live.exists()
