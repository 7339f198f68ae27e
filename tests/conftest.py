from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(config, items):
    """The tests of a live Ray cluster (tests/test_cluster.py's ``cluster`` fixture: a two-node
    cluster in a network namespace, minutes) are heavy: `./scripts/test` leaves them out unless
    BPCHECK_HEAVY=1 (CI). Then the longest tests first: those marked heavy, then the perft boards by their pinned state
    count (tests/test_perft.py: most of the suite's time), then the rest in their own order. With
    pytest-xdist (scripts/test), a long test that starts last keeps one worker busy after the
    others are done; started first, it runs while the other workers take the short ones. The
    order is the same in every worker (xdist compares their collections)."""
    import json

    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()) and item.get_closest_marker("heavy") is None:
            item.add_marker(pytest.mark.heavy)
    pinned = json.loads((ROOT / "tests" / "perft.json").read_text())

    def rank(k_item):
        k, item = k_item
        if item.get_closest_marker("heavy") is not None:
            return (0, 0, k)
        spec = getattr(item, "callspec", None)
        path = spec.params.get("path") if spec is not None and item.name.startswith("test_board_passes_with_pinned_state_space") else None
        if path is not None and Path(path).name in pinned:
            return (1, -pinned[Path(path).name]["states"], k)
        return (2, 0, k)

    items[:] = [item for _k, item in sorted(enumerate(items), key=rank)]


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def run_cli(capsys):
    """Run the CLI in-process; return (exit status, stdout, stderr)."""
    from bpcheck.cli.main import main

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
