from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def run_cli(capsys):
    """Run the CLI in-process; return (exit status, stdout, stderr)."""
    from bpcheck.main import main

    def run(*argv: str):
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse usage errors
            code = e.code
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def interrupt_cli(tmp_path):
    """Start ``python -m bpcheck ARGS`` with the test engines importable (tests/ on PYTHONPATH;
    ``env`` adds variables, e.g. LIFECYCLE_SLOW), wait until the engine has written the marker
    file LIFECYCLE_STARTED (the slow board is being checked), send SIGINT, and return
    (exit status, stdout)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def run(args, **env: str):
        marker = tmp_path / "started"
        e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
        e["PYTHONPATH"] = str(ROOT / "tests") + os.pathsep + e.get("PYTHONPATH", "")
        e.update(env, LIFECYCLE_STARTED=str(marker))
        p = subprocess.Popen([sys.executable, "-m", "bpcheck", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        t0 = time.monotonic()
        while not marker.exists():
            assert time.monotonic() - t0 < 60 and p.poll() is None, "the slow board never started"
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        stdout, _err = p.communicate(timeout=60)
        return p.returncode, stdout

    return run


def pytest_configure(config):
    # tests/test_cluster.py runs in one pytest-xdist worker (--dist loadgroup); without xdist the
    # marker is known all the same
    config.addinivalue_line("markers", "xdist_group(name): tests that share one resource run in one xdist worker")
