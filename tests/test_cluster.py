"""`--cluster`: check, fuzz and mutants on a real two-node Ray cluster give the output of `-j 1`,
byte for byte, and survive a worker killed and a node removed in the middle of a board.

The cluster (tests/cluster_host.py: ``ray.cluster_utils.Cluster``, a head node and one more, one
worker CPU each) is started once per session inside a network namespace made for it (``unshare
-n``, then ``ip link set lo up``): Ray binds 127.0.0.1 and can reach no other address. Each
command runs in that namespace too (``nsenter -n``), as a real driver connecting to the cluster's
address. Where namespaces or Ray are not available the tests skip and say why, except where
BPCHECK_REQUIRE_CLUSTER=1 (CI: .ci/run), where they fail.

All of them run in one pytest-xdist worker (``xdist_group("cluster")`` with ``--dist
loadgroup``): they share the cluster. Without xdist they run as usual; where the group is not
honoured (pytest-xdist issue 1386: pytest 9.2 drops the group from the test ids) each worker that
gets some of them starts a cluster of its own, in its own namespace, and they still pass."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIRE = os.environ.get("BPCHECK_REQUIRE_CLUSTER") == "1"

pytestmark = pytest.mark.xdist_group("cluster")

SMALL = ["boards/000-replay-2.toml", "boards/004-penguin-soldier.toml", "boards/rule-ch-qp-hand.toml", "boards/000-face-down-monsters.toml", "boards/rule-atk-cannot.toml"]
ACTORS_BOARD = "boards/rule-atk-cannot.toml"  # 2,870 decisions: several chunks on the actors
LONG_BOARD = "boards/rule-ch-speed-counter.toml"  # 5,383 decisions, 16,661 states: long enough to be cut in the middle


def _unavailable(why: str) -> None:
    if REQUIRE:
        pytest.fail(f"the cluster tests cannot run (BPCHECK_REQUIRE_CLUSTER=1): {why}")
    pytest.skip(why)


def _env(**extra: str) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY", "RAY_ADDRESS")}
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), *([e["PYTHONPATH"]] if e.get("PYTHONPATH") else [])])
    e.update(extra)
    return e


class Host:
    """The cluster's host process (in its own network namespace) and how to run bpcheck there."""

    def __init__(self, proc: subprocess.Popen, address: str, tmp: str) -> None:
        self.proc, self.address, self.tmp = proc, address, tmp
        self.lock = threading.Lock()

    def ask(self, cmd: str, timeout: float = 120) -> str:
        with self.lock:
            self.proc.stdin.write(cmd + "\n")
            self.proc.stdin.flush()
            return _readline(self.proc, timeout)

    def popen(self, *args: str, env: dict | None = None) -> subprocess.Popen:
        """``python -m bpcheck ARGS`` inside the cluster's network namespace."""
        cmd = ["nsenter", "-t", str(self.proc.pid), "-n", "--", sys.executable, "-m", "bpcheck", *args]
        return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(RAY_TMPDIR=self.tmp, **(env or {})))

    def run(self, *args: str, timeout: float = 300, env: dict | None = None) -> tuple[int, str, str]:
        p = self.popen(*args, env=env)
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err


def _readline(p: subprocess.Popen, timeout: float) -> str:
    """The host's next answer (lines Ray prints there are passed over)."""
    end = time.monotonic() + timeout
    while True:
        ready, _, _ = select.select([p.stdout], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            raise TimeoutError("the cluster host did not answer")
        line = p.stdout.readline()
        if not line:
            return "(the cluster host exited)"
        if line.startswith("bpcheck-host: "):
            return line[len("bpcheck-host: ") :].strip()


@pytest.fixture(scope="session")
def cluster():
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        _unavailable("Ray is not installed (pip install 'bpcheck[cluster]')")
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is not installed: the cluster runs in a network namespace of its own")
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
    if probe.returncode != 0:
        _unavailable(f"network namespaces are not allowed here (unshare -n: {probe.stderr.strip() or probe.returncode})")
    tmp = tempfile.mkdtemp(prefix="bpray-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    log = open(os.path.join(tmp, "host.log"), "w+")
    proc = subprocess.Popen(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable, str(ROOT / "tests" / "cluster_host.py")],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=_env(RAY_TMPDIR=tmp),
    )
    try:
        try:
            line = _readline(proc, 300)
        except TimeoutError:
            line = "(no answer in 300 s)"
        if not line.startswith("address "):
            log.seek(0)
            _unavailable(f"the Ray cluster did not start: {line}; its log ends with:\n{log.read()[-2000:]}")
        host = Host(proc, line.split()[1], tmp)
        assert host.address.startswith("127.0.0.1:"), host.address  # loopback only
        yield host
    finally:
        try:
            proc.stdin.write("quit\n")
            proc.stdin.flush()
            proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - then it is stopped by force
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def local(*args: str, timeout: float = 600) -> tuple[int, str, str]:
    """``python -m bpcheck ARGS`` here, without Ray (the -j 1 reference)."""
    p = subprocess.run([sys.executable, "-m", "bpcheck", *args], cwd=ROOT, capture_output=True, text=True, env=_env(), timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def same_json(a: Path, b: Path) -> None:
    assert a.read_bytes() == b.read_bytes(), f"{a} and {b} differ"


def test_check_several_boards_gives_the_output_of_one_process(cluster, tmp_path):
    code1, out1, _ = local("check", *SMALL, "-j", "1", "--json", str(tmp_path / "a.json"))
    code2, out2, err2 = cluster.run("check", *SMALL, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    assert code1 == code2 == 0, err2
    same_json(tmp_path / "a.json", tmp_path / "b.json")
    assert out1 == out2


def test_a_failing_run_gives_the_same_counterexamples(cluster, tmp_path):
    args = ["check", "--engine", "mutant:replay-resets-count", "boards/000-replay-1.toml", "boards/000-replay-2.toml", "boards/000-replay-3.toml"]
    code1, out1, _ = local(*args, "--json", str(tmp_path / "a.json"), "--cex-dir", str(tmp_path / "ca"))
    code2, out2, err2 = cluster.run(*args, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"), "--cex-dir", str(tmp_path / "cb"))
    assert code1 == code2 == 1, err2
    same_json(tmp_path / "a.json", tmp_path / "b.json")
    assert out1 == out2
    files = sorted(p.name for p in (tmp_path / "ca").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "cb").iterdir()) and len(files) > 1
    for f in files:
        same_json(tmp_path / "ca" / f, tmp_path / "cb" / f)


def test_one_board_explored_by_actors_gives_the_output_of_one_process(cluster, tmp_path):
    code1, out1, _ = local("check", ACTORS_BOARD, "--json", str(tmp_path / "a.json"))
    code2, out2, err2 = cluster.run("check", ACTORS_BOARD, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    assert code1 == code2 == 0, err2
    same_json(tmp_path / "a.json", tmp_path / "b.json")
    assert out1 == out2


def test_a_checkpoint_made_on_the_cluster_resumes_to_the_uninterrupted_result(cluster, tmp_path):
    """--checkpoint / --resume with --cluster (every state stored: a checkpoint holds no reduction),
    compared with the one-process run of every state."""
    code1, _out1, err1 = local("check", ACTORS_BOARD, "--no-reduce", "--json", str(tmp_path / "a.json"))
    assert code1 == 0, err1
    ck = tmp_path / "board.ckpt"
    code2, out2, err2 = cluster.run("check", ACTORS_BOARD, "--cluster", cluster.address, "--checkpoint", str(ck), "--timeout", "1")
    assert code2 == 3 and ck.exists(), (out2, err2)  # stopped by the time limit, saved
    code3, out3, err3 = cluster.run("check", ACTORS_BOARD, "--cluster", cluster.address, "--checkpoint", str(ck), "--resume", "--json", str(tmp_path / "b.json"))
    assert code3 == 0, err3
    assert "checkpoint: resumed" in out3 and not ck.exists()
    same_json(tmp_path / "a.json", tmp_path / "b.json")


def _actor_pids(cluster: Host, what: str = "ray::_ShardWorker") -> list[int]:
    """The processes of bpcheck's actors (or, `what` "ray::_run_task", of its running tasks) in
    this test's cluster (its network namespace: another pytest-xdist worker may run a cluster of
    its own)."""
    ns = os.readlink(f"/proc/{cluster.proc.pid}/ns/net")
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    pids = []
    for line in out.splitlines():
        if what in line:
            pid = int(line.split(None, 1)[0])
            try:
                if os.readlink(f"/proc/{pid}/ns/net") == ns:
                    pids.append(pid)
            except OSError:  # gone meanwhile
                pass
    return pids


@pytest.fixture(scope="session")
def long_reference(tmp_path_factory) -> Path:
    """LONG_BOARD's --json by one process (made once for the tests that cut its exploration)."""
    ref = tmp_path_factory.mktemp("long") / "ref.json"
    code, out, err = local("check", LONG_BOARD, "--json", str(ref))
    assert code == 0, err
    ref.with_suffix(".out").write_text(out)  # its stdout
    return ref


def test_a_worker_killed_in_the_middle_of_a_board_changes_nothing(cluster, tmp_path, long_reference):
    ref = long_reference
    before = set(_actor_pids(cluster))
    p = cluster.popen("check", LONG_BOARD, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    killed = None
    t0 = time.monotonic()
    while p.poll() is None and time.monotonic() - t0 < 120:
        pids = [x for x in _actor_pids(cluster) if x not in before]
        if len(pids) >= 2:
            time.sleep(2.0)  # a few chunks in
            pids = [x for x in _actor_pids(cluster) if x not in before]
            if pids and p.poll() is None:
                killed = pids[-1]
                os.kill(killed, signal.SIGKILL)  # a process of our own test cluster
                break
        time.sleep(0.1)
    out, err = p.communicate(timeout=300)
    assert killed is not None, f"no actor to kill: the board ended first ({err})"
    assert p.returncode == 0, err
    assert "worker lost" in err and "expanded again" in err, err
    same_json(ref, tmp_path / "b.json")
    assert out == ref.with_suffix(".out").read_text(), out  # none of Ray's messages on stdout (issue 33)


def test_a_task_worker_killed_leaves_stdout_as_it_is_and_says_so(cluster, tmp_path):
    """Several boards, one Ray task each: the worker of a running task is killed (Ray runs the
    task again). Ray's driver used to print two lines of its own on stdout ("(raylet) A worker died
    ...", "Task _run_task failed. There are 3 retries remaining ...") and nothing on stderr (issue
    33): stdout is now byte for byte the run of one process, and stderr names the board."""
    boards = [LONG_BOARD, ACTORS_BOARD, "boards/000-replay-2.toml"]
    code1, out1, err1 = local("check", *boards, "-j", "1", "--json", str(tmp_path / "a.json"))
    assert code1 == 0, err1
    p = cluster.popen("check", *boards, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    killed = None
    t0 = time.monotonic()
    while p.poll() is None and time.monotonic() - t0 < 120:
        if _actor_pids(cluster, "ray::_run_task") and _actor_pids(cluster, "ray::_Flags"):
            time.sleep(2.0)  # the tasks are under way (each told the flags actor where it runs)
            pids = _actor_pids(cluster, "ray::_run_task")
            if pids and p.poll() is None:
                killed = pids[0]
                os.kill(killed, signal.SIGKILL)  # a process of our own test cluster
                break
        time.sleep(0.1)
    out, err = p.communicate(timeout=300)
    assert killed is not None, f"no task to kill: the boards ended first ({err})"
    assert p.returncode == 0, err
    assert out == out1, out[:3000]
    same_json(tmp_path / "a.json", tmp_path / "b.json")
    said = [line for line in err.splitlines() if f"worker lost (pid {killed} on node 127.0.0.1" in line]
    assert len(said) == 1 and any(said[0].startswith(f"bpcheck: {b}: ") for b in boards), err
    assert "Ray runs its task again" in said[0] and "Traceback" not in err


def test_a_node_removed_in_the_middle_of_a_board_changes_nothing(cluster, tmp_path, long_reference):
    ref = long_reference
    before = set(_actor_pids(cluster))
    p = cluster.popen("check", LONG_BOARD, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    removed = False
    try:
        t0 = time.monotonic()
        while p.poll() is None and time.monotonic() - t0 < 120:
            if len([x for x in _actor_pids(cluster) if x not in before]) >= 2:
                time.sleep(2.0)
                if p.poll() is None:
                    assert cluster.ask("remove-node").startswith("ok")
                    removed = True
                break
            time.sleep(0.1)
        out, err = p.communicate(timeout=300)
    finally:
        if removed:
            assert cluster.ask("add-node").startswith("ok added 2")  # for the tests after this one
    assert removed, "the board ended before the node could be removed"
    assert p.returncode == 0, err
    assert "worker lost" in err, err
    same_json(ref, tmp_path / "b.json")


def test_fuzz_gives_the_output_of_one_process(cluster, tmp_path):
    args = ["fuzz", "--engine", "mutant:direct-attack-past-monsters", "--seed", "0", "--examples", "20", "--max-states", "1500"]
    code1, out1, _ = local(*args, "--json", str(tmp_path / "a.json"))
    code2, out2, err2 = cluster.run(*args, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    assert code1 == code2 == 1, err2  # the mutant is found, and shrunk the same way
    same_json(tmp_path / "a.json", tmp_path / "b.json")
    assert out1 == out2


def test_mutants_gives_the_output_of_one_process(cluster, tmp_path):
    args = ["mutants", "--only", "fifo-chain,replay-resets-count,direct-attack-past-monsters", *SMALL[:3], "boards/000-replay-1.toml"]
    code1, out1, _ = local(*args, "--json", str(tmp_path / "a.json"))
    code2, out2, err2 = cluster.run(*args, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    assert code1 == code2, err2
    same_json(tmp_path / "a.json", tmp_path / "b.json")
    strip = lambda text: [line.rsplit("s  ", 1)[-1] for line in text.splitlines()]  # noqa: E731 - the time column differs
    assert strip(out1) == strip(out2)


def test_the_edopro_core_on_the_cluster_gives_the_output_of_one_process(cluster, tmp_path):
    """--engine ocgcore: each node finds the core kit as the driver does (here ../shared/ocgcore
    beside the checkout, the tasks running in the driver's working directory)."""
    from bpcheck.engines.ocgcore import default_paths

    missing = [p for p in default_paths(str(ROOT)) if not os.path.exists(p)]
    if missing:
        if os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1":
            pytest.fail(f"the EDOPro core is required here (BPCHECK_REQUIRE_OCGCORE=1) but {', '.join(missing)} not found")
        pytest.skip(f"the EDOPro core is not there ({', '.join(missing)}; set OCGCORE, OCG_SCRIPTS, OCG_CARDS)")
    args = ["check", "--engine", "ocgcore", "boards/000-replay-2.toml", "boards/004-penguin-soldier.toml", "boards/rule-ch-qp-hand.toml"]
    code1, out1, _ = local(*args, "--json", str(tmp_path / "a.json"))
    code2, out2, err2 = cluster.run(*args, "--cluster", cluster.address, "--json", str(tmp_path / "b.json"))
    assert code1 == code2 and code2 in (0, 1), err2
    same_json(tmp_path / "a.json", tmp_path / "b.json")

    def but_the_command(out: str) -> str:  # (the note that repeats the command line names --cluster and the --json path)
        return "\n".join(line for line in out.splitlines() if not line.strip().startswith("To fail only on what is not listed: "))

    assert but_the_command(out1) == but_the_command(out2)
    assert out1.count("To fail only on what is not listed: ") == out2.count("To fail only on what is not listed: ")


def test_a_task_that_keeps_dying_is_an_internal_error_naming_its_node(cluster):
    """The engine kills its own process whenever it starts the "flip" board: Ray runs that task
    again (3 times), then the board is CRASHED with the node it last ran on, the others pass, and
    the run exits 4, never 0."""
    boards = ["boards/000-replay-2.toml", "boards/000-flip-hane-hane.toml", "boards/004-penguin-soldier.toml"]
    code, out, err = cluster.run("check", *boards, "--engine", "jobs_engines:dies_on_board", "--cluster", cluster.address)
    assert code == 4, (out, err)
    line = next(x for x in out.splitlines() if x.startswith("CRASHED"))
    assert "boards/000-flip-hane-hane.toml: the Ray task failed 4 times" in line and "it last ran on node 127.0.0.1 (" in line, line
    assert out.count("PASS ") == 2 and "1 crashed" in out
    assert "internal error" in err and "Traceback" not in err


def test_an_engine_command_missing_on_the_nodes_is_bad_input_naming_a_node(cluster, tmp_path):
    """The command is on the driver's PATH only (a folder of this test's), not on the nodes'."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    engine = bin_dir / "only-here-engine"
    engine.write_text("#!/bin/sh\nexit 0\n")
    engine.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    code, out, err = cluster.run("check", "boards/000-replay-2.toml", "--engine", "cmd:only-here-engine --fast", "--cluster", cluster.address, env={"PATH": path})
    assert code == 2, (out, err)
    assert "node 127.0.0.1 (" in err and "cannot run engine cmd:only-here-engine --fast: command 'only-here-engine' not found" in err, err
    assert "Traceback" not in err and not out


def test_without_ray_cluster_is_bad_usage_with_the_install_line():
    """Ray's absence is simulated: ``sys.modules["ray"] = None`` makes ``import ray`` fail in the
    subprocess as it does where Ray is not installed. `-j N` needs no Ray at all."""
    code = "import sys; sys.modules['ray'] = None; from bpcheck.cli.main import main; raise SystemExit(main(sys.argv[1:]))"
    p = subprocess.run([sys.executable, "-c", code, "check", "boards/000-replay-2.toml", "--cluster", "local:2"], cwd=ROOT, capture_output=True, text=True, env=_env())
    assert p.returncode == 2, p.stderr
    assert "pip install 'bpcheck[cluster]'" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-c", code, "check", "boards/000-replay-2.toml", "boards/000-replay-1.toml", "-j", "2"], cwd=ROOT, capture_output=True, text=True, env=_env())
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("address, problem", [("auto", "RAY_ADDRESS"), ("local:0", "from 1 to 4096"), ("nowhere", "HOST:PORT")])
def test_a_bad_cluster_address_is_bad_usage(run_cli, address, problem):
    pytest.importorskip("ray")  # (nothing is started: the address is refused first)
    code, _out, err = run_cli("check", "boards/000-replay-2.toml", "--cluster", address)
    assert code == 2 and problem in err and "--cluster" in err


@pytest.mark.heavy
def test_sweep_on_a_local_ray_cluster_gives_the_json_bytes_of_one_process(tmp_path):
    """`bpcheck sweep --cluster local:2` (docs/sweep.md, docs/cluster.md): a small sweep of the
    real core over the full card database, in two batches, on a local two-worker Ray that the
    command starts inside a network namespace made for it (loopback only), writes the --json bytes
    and the stdout of `-j 1`; its stderr names the cluster (before, SweepOptions dropped
    --cluster and the sweep ran in one process)."""
    import importlib.util

    from bpcheck.engines.ocgcore import default_paths

    if importlib.util.find_spec("ray") is None:
        _unavailable("Ray is not installed (pip install 'bpcheck[cluster]'): sweep --cluster cannot be tried")
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is not installed: the local cluster runs in a network namespace of its own")
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
    if probe.returncode != 0:
        _unavailable(f"network namespaces are not allowed here (unshare -n: {probe.stderr.strip() or probe.returncode})")
    lib, scripts, cards = default_paths(str(ROOT))
    full = os.path.join(os.path.dirname(cards), "cards-full.cdb")
    missing = [p for p in (lib, scripts, cards, full) if not os.path.exists(p)]
    if missing:
        if os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1":
            pytest.fail(f"the EDOPro core is required here (BPCHECK_REQUIRE_OCGCORE=1) but {', '.join(missing)} not found")
        pytest.skip(f"the EDOPro core or the full card database is not there ({', '.join(missing)})")
    from bpcheck.model.cdb import open_db

    codes = [str(c) for c in sorted(open_db(full).codes())[:8]]
    boards = str(tmp_path / "boards")  # (the same folder for both: the JSON names the board files)
    args = ["sweep", *codes, "--engine", "ocgcore", "--cards-db", full, "--max-states", "300", "--batch", "4", "--boards", boards]
    code1, out1, err1 = local(*args, "-j", "1", "--json", str(tmp_path / "a.json"))
    assert code1 in (0, 1), err1
    ray_tmp = tempfile.mkdtemp(prefix="bpray-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    try:
        p = subprocess.run(
            ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable, "-m", "bpcheck",
             *args, "--cluster", "local:2", "--json", str(tmp_path / "b.json")],
            cwd=ROOT, capture_output=True, text=True, env=_env(RAY_TMPDIR=ray_tmp), timeout=900,
        )
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert p.returncode == code1, p.stderr[-3000:]
    assert "bpcheck: Ray cluster local:2: 1 node(s), 2 worker CPU(s)" in p.stderr, p.stderr[-3000:]
    same_json(tmp_path / "a.json", tmp_path / "b.json")
    assert p.stdout == out1
    doc = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert doc["complete"] and doc["judged"] == len(codes) and sum(c["played"] for c in doc["cards"]) > 0
