"""`bpcheck fuzz` stops cleanly (issue 24 item 7, issue 25 item 6): `--timeout S` for the whole
run, SIGINT / SIGTERM with the summary and `--json` of what was done (exit 130 / 143, as
`check`), and exit statuses a CI step can rely on (`--strict`)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bpcheck.harness.board_writer import board_size, document_board
from bpcheck.engines import make_engine
from bpcheck.explorers.core import Bounds
from bpcheck.explorers.run import check_board
from bpcheck.harness.fuzz import fuzz
from bpcheck.invariants import select

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS / "engines"), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def bpcheck(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, timeout=600, cwd=ROOT, env=_env(**env))


# -- --timeout ------------------------------------------------------------------------------------


def test_timeout_ends_the_search_with_the_summary_and_exit_0(tmp_path):
    js = tmp_path / "f.json"
    r = bpcheck("fuzz", "--examples", "100000", "--max-states", "400", "--timeout", "4", "--json", str(js))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(js.read_text())
    n = doc["stats"]["search_examples"]
    assert 0 < n < 100000 and doc["stats"]["explored"] == n
    assert doc["verdict"] == "pass" and doc["stopped"] == {"reason": "timeout (4 s)", "during": "search"} and doc["timeout"] == 4
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"fuzz: {n} boards drawn, ")
    assert lines[1] == "stopped: timeout (4 s) during the search; the figures above are of what was finished before it"
    assert lines[2].startswith(f"PASS  no invariant broken on the {n} boards explored") and lines[2].endswith(
        f"timeout (4 s) stopped the search after {n} of the 100000 boards to draw"
    ), lines[2]


def test_timeout_with_strict_is_inconclusive(tmp_path):
    r = bpcheck("fuzz", "--examples", "100000", "--max-states", "400", "--timeout", "3", "--strict", "--json", str(tmp_path / "f.json"))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "INCONCLUSIVE  no invariant broken on the " in r.stdout and "but with --strict a partial search is no pass" in r.stdout
    assert json.loads((tmp_path / "f.json").read_text())["verdict"] == "inconclusive"


def test_a_timeout_before_any_board_is_inconclusive(tmp_path):
    # the engine takes 0.5 s to start a board: the run ends while the cards are offered to it
    r = bpcheck("fuzz", "--engine", "picky:slow_start", "--timeout", "0.3", "--json", str(tmp_path / "f.json"), PICKY_START_DELAY="0.5")
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "fuzz: 0 boards drawn, 0 states explored",
        "stopped: timeout (0.3 s) before any board was drawn; the figures above are of what was finished before it",
        "INCONCLUSIVE  no board was explored",
    ]
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["verdict"] == "inconclusive" and doc["stopped"] == {"reason": "timeout (0.3 s)", "during": "probe"}


def test_a_stop_during_the_shrink_keeps_the_smallest_failing_board_found():
    invariants = select(None)
    engines = {"built": 0}

    def make():
        engines["built"] += 1
        return make_engine("mutant:direct-attack-past-monsters")

    kw = dict(engine_name="mutant:direct-attack-past-monsters", examples=20, seed_value=0, max_states=1500, progress=False)
    full = fuzz(make, invariants, **kw)
    assert full.invariant == "attack.direct-legal" and full.stopped is None and full.stats.shrink_examples > 8
    searched = full.stats.search_examples
    # The same run, stopped (as a signal or --timeout would) after 6 boards of the shrink.
    engines["built"] = 0
    cut = fuzz(make, invariants, **kw, stop=lambda: "interrupted (SIGTEST)" if engines["built"] >= searched + 6 else None)
    assert cut.stopped == "interrupted (SIGTEST)" and cut.stopped_during == "shrink"
    assert cut.invariant == full.invariant and cut.stats.search_examples == searched
    assert cut.stats.shrink_examples < full.stats.shrink_examples
    assert board_size(full.doc) <= board_size(cut.doc) <= board_size(cut.found_doc)
    # The board reported breaks the invariant, with the depth reported.
    br = check_board(document_board(cut.doc), make_engine("mutant:direct-attack-past-monsters"), invariants, "bfs", Bounds(max_states=1500))
    assert min(len(c.labels) for c in br.counterexamples if c.invariant == cut.invariant) == cut.depth


# -- signals -------------------------------------------------------------------------------------


def _interrupt(tmp_path, args: list[str], sig: int, boards_first: int = 3) -> tuple[int, str, str]:
    """Run `bpcheck fuzz ARGS` on the slowed reference model, wait until `boards_first` boards
    have begun, send `sig`; (exit status, stdout, stderr)."""
    marker = tmp_path / "started"
    p = subprocess.Popen(
        [sys.executable, "-m", "bpcheck", "fuzz", "--engine", "lifecycle_engines:slow", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(LIFECYCLE_SLOW="0.003", LIFECYCLE_STARTED=str(marker)),
    )
    t0 = time.monotonic()
    while not marker.exists() or len(marker.read_text().splitlines()) < boards_first:
        assert time.monotonic() - t0 < 300 and p.poll() is None, "the boards never started"
        time.sleep(0.05)
    p.send_signal(sig)
    out, err = p.communicate(timeout=300)
    return p.returncode, out, err


@pytest.mark.parametrize("sig,jobs", [(signal.SIGINT, "1"), (signal.SIGTERM, "2")], ids=["SIGINT", "SIGTERM -j 2"])
def test_a_signal_writes_the_summary_and_json_of_what_was_done(tmp_path, sig, jobs):
    js = tmp_path / "f.json"
    code, out, err = _interrupt(tmp_path, ["--examples", "1000", "--max-states", "3000", "--json", str(js), "-j", jobs], sig)
    name = signal.Signals(sig).name
    assert code == 128 + sig, out + err
    assert "Traceback" not in err
    doc = json.loads(js.read_text())
    n = doc["stats"]["search_examples"]
    assert doc["stopped"] == {"reason": f"interrupted ({name})", "during": "search"} and doc["verdict"] == "inconclusive"
    # the boards finished before it, each counted once (with workers: those up to the first board
    # a worker had not finished, in draw order, maybe none: the same figures as one process gives)
    assert doc["stats"]["explored"] == n and (n >= 2 or jobs == "2")
    assert re.match(rf"fuzz: {n} boards? drawn, [\d,]+ states explored", out), out  # ("1 board": reports/text.plural)
    assert f"stopped: interrupted ({name}) during the search; the figures above are of what was finished before it" in out
    if n:
        assert re.search(rf"INCONCLUSIVE  no invariant broken on the {n} boards? explored before interrupted \({name}\)", out), out
    else:
        assert "INCONCLUSIVE  no board was explored" in out
