"""-j N (worker processes) and the order of work by expected cost (cli/jobs.py,
explorers/pool.py, docs/checking.md "Parallel checking"): every output is the same whatever N,
--fail-fast stops at the first failing board in the cost order and says what it did not run
(the budget rounds: tests/test_fail_fast_rounds.py),
`bpcheck mutants` tries boards cheapest first, a dead worker costs one board, a signal keeps
what was gathered."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bpcheck.engines.mutants import MUTANTS
from bpcheck.explorers.pool import Pool
from bpcheck.explorers.progress import without_progress
from bpcheck.harness.jobs import board_cost, cost_order, deadline_reason, stream_order
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
B = ROOT / "boards"
SMALL = [str(B / n) for n in ("rule-ch-lifo-ring.toml", "002-first-turn.toml", "000-flip-hane-hane.toml", "rule-ch-lifo-call.toml", "rule-calc-direct.toml")]
BAD = 'name = "bad"\nturn = "x"\n'


def env(**extra: str) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
    e["PYTHONPATH"] = str(ROOT / "tests") + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra)
    return e


def bpcheck(*args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], cwd=ROOT, capture_output=True, text=True, env=env(**extra), timeout=180)


def _check_twice(tmp_path, run_cli, *args: str):
    """(code, stdout, stderr, json text) with -j 1 and with -j 2; stderr without the progress
    lines (they say how far each run got when: tests/test_feedback.py)."""
    out = []
    for j in ("1", "2"):
        js = tmp_path / f"r{j}.json"
        code, stdout, err = run_cli("check", *args, "-j", j, "--json", str(js))
        out.append((code, stdout, without_progress(err), js.read_text()))
    return out


@pytest.mark.parametrize("engine", ["reference", "mutant:fifo-chain"])
def test_check_outputs_are_byte_identical_whatever_the_worker_count(tmp_path, run_cli, engine):
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD)
    one, two = _check_twice(tmp_path, run_cli, *SMALL[:3], str(bad), *SMALL[3:], "--engine", engine)
    assert one == two
    code, stdout, err, doc = one
    assert code == 2  # bad input wins, as documented; every other board is still checked
    assert f"{bad}: turn_player: missing required field" in err
    assert stdout.count("\n") > 5 and "check: " in stdout
    d = json.loads(doc)
    assert [b["board"] for b in d["boards"]] == SMALL  # board order, never completion order
    if engine == "mutant:fifo-chain":
        assert d["counts"]["fail"] == 2 and "chain.lifo" in stdout


def test_reports_are_identical_whatever_the_worker_count(tmp_path, run_cli):
    for j in ("1", "2"):
        code, _o, _e = run_cli("check", *SMALL[:2], "--engine", "mutant:fifo-chain", "-j", j, "--report", str(tmp_path / f"rep{j}"), "--cex-dir", str(tmp_path / f"cex{j}"))
        assert code == 1
    for sub in ("rep", "cex"):
        a, b = tmp_path / f"{sub}1", tmp_path / f"{sub}2"
        names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
        assert names and names == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
        for n in names:
            assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_fail_fast_stops_at_the_first_failing_board_in_the_cost_order(tmp_path, run_cli):
    boards = [*SMALL, str(B / "003-004-example-4.toml")]
    one, two = _check_twice(tmp_path, run_cli, *boards, "--engine", "mutant:fifo-chain", "--fail-fast")
    assert one == two
    code, stdout, _err, doc = one
    assert code == 1
    d = json.loads(doc)
    costs = {b: board_cost(load_board(b)) for b in boards}
    order = sorted(boards, key=lambda b: (costs[b], boards.index(b)))
    # rule-ch-lifo-call (23 states to the chain) is the cheapest board on which the FIFO chain shows
    stop = str(B / "rule-ch-lifo-call.toml")
    assert d["fail_fast"]["stopped_at"] == stop
    after = order[order.index(stop) + 1 :]
    assert after and d["fail_fast"]["not_run"] == [b for b in boards if b in after]
    assert [b["board"] for b in d["boards"]] == [b for b in boards if b not in after]
    assert d["fail_fast"]["not_finished"] == []  # each board before it is within the first budget
    assert f"fail-fast: stopped at the first failing board in the budget rounds, {stop}; {len(after)} boards not run" in stdout
    for b in after:
        assert f"{b}:" not in stdout.split("check: ")[0]


class _LateParent(Pool):
    """A parent too busy to look until every running task has ended (a loaded machine): each
    collect waits for them all and hands their outcomes over in one batch, in the order they
    were dispatched (``REVERSE``: the other way round); ``run`` (plain ``-j N``) yields every
    outcome only at the end, in that order."""

    REVERSE = False

    def collect(self, timeout: float = 0.0):
        got = []
        while self.running():
            got += super().collect(1.0)
        return sorted(got, key=lambda o: o.index, reverse=self.REVERSE)

    def run(self, fn, tasks, order=None, tick=None, poll: float = 0.2):
        yield from sorted(super().run(fn, tasks, order, tick, poll), key=lambda o: o.index, reverse=self.REVERSE)


class _LateParentReversed(_LateParent):
    REVERSE = True


@pytest.mark.parametrize("parent", [_LateParent, _LateParentReversed], ids=["dispatch-order", "reversed"])
def test_fail_fast_reports_the_same_when_the_parent_collects_late(tmp_path, run_cli, monkeypatch, parent):
    """Issue 34 (failed under load only): a failing try and a try after it in the schedule both
    ended before the parent looked; the stop cancelled the later one, but its outcome, already in
    the same batch, was reported, so -j 2 printed a board that -j 1 never runs. The late parent
    makes that batch certain instead of a matter of the machine's load: in the cost order
    (first-turn, flip, lifo-call, lifo-ring, example-4), lifo-call and lifo-ring run together
    (dispatch order: lifo-call's outcome first, the case that failed)."""
    monkeypatch.setattr("bpcheck.explorers.pool.Pool", parent)
    ring, call = str(B / "rule-ch-lifo-ring.toml"), str(B / "rule-ch-lifo-call.toml")
    boards = [ring, *SMALL[1:3], call, str(B / "003-004-example-4.toml")]
    one, two = _check_twice(tmp_path, run_cli, *boards, "--engine", "mutant:fifo-chain", "--fail-fast")
    assert one == two
    code, stdout, _err, doc = one
    d = json.loads(doc)
    assert code == 1 and d["fail_fast"]["stopped_at"] == call
    assert d["fail_fast"]["not_run"] == [ring, boards[-1]]  # lifo-ring fails too, but after the stop
    assert [b["board"] for b in d["boards"]] == boards[1:4] and f"{ring}:" not in stdout


def test_outputs_do_not_depend_on_the_order_results_come_back_in(tmp_path, run_cli, monkeypatch):
    """-j 2 with every result handed over at the end, last board first (the most a loaded
    machine can reorder them): the same outputs as -j 1."""
    monkeypatch.setattr("bpcheck.explorers.pool.Pool", _LateParentReversed)
    one, two = _check_twice(tmp_path, run_cli, *SMALL, "--engine", "mutant:fifo-chain")
    assert one == two and one[0] == 1 and json.loads(one[3])["counts"]["fail"] == 2


def test_fail_fast_without_a_failure_runs_everything(tmp_path, run_cli):
    code, stdout, _ = run_cli("check", *SMALL[1:3], "--fail-fast", "-j", "2")
    assert code == 0 and "fail-fast: no board failed; every board was run" in stdout


def test_cost_order_puts_bigger_boards_first_or_last():
    boards = [B / "003-004-example-4.toml", B / "002-first-turn.toml", B / "000-replay-1.toml"]
    costs = [board_cost(load_board(b)) for b in boards]
    assert costs[0] > costs[2] > costs[1]  # 40,010 / 110 / 2 states measured (tests/perft.json)
    assert cost_order(costs, cheapest_first=True) == [1, 2, 0]
    assert cost_order(costs, cheapest_first=False) == [0, 2, 1]
    assert cost_order([5.0, 5.0, 1.0], cheapest_first=False) == [0, 1, 2]  # ties: board order


def _simulated(order: list[int], costs: list[float], jobs: int) -> tuple[float, list[float]]:
    """Each worker takes the next board of ``order`` when it frees: (the run's length, when each
    board's stdout line can be printed: it and every board before it in board order done)."""
    free = [0.0] * jobs
    done = {}
    for i in order:
        w = free.index(min(free))
        free[w] += costs[i]
        done[i] = free[w]
    shown, last = [], 0.0
    for i in sorted(done):
        last = max(last, done[i])
        shown.append(last)
    return max(free), shown


def test_stream_order_keeps_board_order_and_starts_long_boards_in_time():
    """-j N hands boards out in board order, so stdout (in board order) streams from the start,
    except that a long board starts once waiting longer would make the run longer (issue 34)."""
    assert stream_order([0, 1, 2, 3], [1.0, 1.0, 1.0, 1.0], 2) == [0, 1, 2, 3]
    assert stream_order([0, 1, 2, 3], [1.0, 1.0, 1.0, 10.0], 2) == [3, 0, 1, 2]  # the longest of all: first
    costs = [1.0] * 20 + [3.0]  # latest start of the last: 0.5 x 11.5 - 3 = 2.75; a worker frees at 3
    assert stream_order(list(range(21)), costs, 2) == [0, 1, 2, 3, 4, 5, 20, *range(6, 20)]
    assert stream_order([2, 0, 1], [5.0, 1.0, 1.0], 1) == [2, 0, 1]  # one worker: as given
    # the seed boards, on their expected costs: the run as short as most expensive first (within
    # 1%), and stdout's first line comes with the first boards instead of at the very end
    files = sorted(p for p in B.rglob("*.toml") if p.name != "000-ds-spell-trap-list.toml")
    est = [board_cost(load_board(f)) for f in files]
    for jobs in (2, 4):
        order = stream_order(list(range(len(est))), est, jobs)
        assert sorted(order) == list(range(len(est)))
        streamed, shown = _simulated(order, est, jobs)
        longest_first, shown_lpt = _simulated(cost_order(est, cheapest_first=False), est, jobs)
        assert streamed <= 1.01 * longest_first, (jobs, streamed, longest_first)
        assert shown[0] <= 0.05 * streamed and shown_lpt[0] >= 0.8 * longest_first, (shown[0], shown_lpt[0])
        quarter = len(est) // 4  # (the long boards 2nd and 3rd in board order hold the rest back either way)
        assert shown[quarter] < 0.8 * shown_lpt[quarter], (shown[quarter], shown_lpt[quarter])


def test_mutants_try_boards_cheapest_first_and_rows_keep_their_order(tmp_path, run_cli):
    from bpcheck.harness.boards import board_files as _board_files
    from bpcheck.harness.mutants import mutant_order

    boards = _board_files(["boards/"])  # as `bpcheck mutants` finds them (run from the root)
    m = MUTANTS["fifo-chain"]
    order = mutant_order(m, boards)
    costs = [board_cost(load_board(p, d)) for p, d in order]
    assert costs == sorted(costs) and len(order) == len(boards)
    assert mutant_order(m, boards, own_board_first=True)[0][0].name == m.board
    docs = []
    for j in ("1", "2"):
        out = tmp_path / f"m{j}.json"
        code, stdout, _ = run_cli("mutants", "--only", "fifo-chain,direct-attack-past-monsters,battle-phase-on-first-turn", "-j", j, "--json", str(out))
        assert code == 0, stdout
        docs.append(out.read_text())
        lines = [ln.split()[0] for ln in stdout.splitlines()[1:4]]
        assert lines == ["fifo-chain", "direct-attack-past-monsters", "battle-phase-on-first-turn"]
    assert docs[0] == docs[1]
    rows = json.loads(docs[0])["mutants"]
    fifo = rows[0]
    assert fifo["invariant"] == "chain.lifo" and fifo["board"] in [d for _p, d in order]
    # first round: every board, cheapest first, within FIRST_BUDGET states: the boards before the
    # killing one hold (or are cut by the budget), the killing one fails within it
    from bpcheck.harness.jobs import FIRST_BUDGET

    for p, d in order[: fifo["boards_tried"]]:
        code, _o, _e = run_cli("check", str(p), "--engine", "mutant:fifo-chain", "--max-states", str(FIRST_BUDGET))
        assert code == 1 if d == fifo["board"] else code in (0, 3), d
    assert fifo["explorations"] == fifo["boards_tried"]  # killed in the first round


def test_a_dead_worker_costs_its_board_only():
    r = bpcheck("check", *SMALL, "--engine", "jobs_engines:dies_on_board", "-j", "2")
    assert r.returncode == 4, r.stdout + r.stderr
    assert "CRASHED      boards/000-flip-hane-hane.toml: the worker process was killed by SIGKILL" in r.stdout.replace(str(ROOT) + "/", "")
    assert r.stdout.count("PASS ") == 4 and "1 crashed" in r.stdout
    assert "internal error" in r.stderr and "Traceback" not in r.stderr


def test_sigint_stops_the_workers_and_keeps_the_results(tmp_path, interrupt_cli):
    out = tmp_path / "r.json"
    slow = "boards/002-skip-battle-phase.toml"
    code, stdout = interrupt_cli(
        ["check", "boards/000-replay-1.toml", slow, "boards/002-enter-battle-phase.toml", "-j", "2", "--engine", "lifecycle_engines:slow", "--json", str(out)],
        LIFECYCLE_SLOW="0.3", LIFECYCLE_SLOW_ON="002-skip-battle-phase",
    )
    assert code == 130, stdout
    assert f"INCONCLUSIVE {slow}:" in stdout and "interrupted (SIGINT)" in stdout
    d = json.loads(out.read_text())
    assert d["interrupted"]["signal"] == "SIGINT"
    assert [b["board"] for b in d["boards"]][1] == slow


def test_a_first_sigint_stops_workers_stuck_in_one_step(tmp_path, interrupt_cli):
    """One board's engine blocks inside a step for 600 s: the first SIGINT still ends `check -j 2`
    (interrupt_cli waits 60 s at most): the stuck worker is killed STOP_KILL_AFTER after the signal,
    its board is "interrupted (SIGINT)", the boards finished before are kept."""
    out = tmp_path / "r.json"
    stuck = "boards/002-skip-battle-phase.toml"
    code, stdout = interrupt_cli(
        ["check", "boards/000-replay-1.toml", stuck, "-j", "2", "--engine", "lifecycle_engines:slow", "--json", str(out)],
        LIFECYCLE_SLOW="600", LIFECYCLE_SLOW_ON="002-skip-battle-phase",
    )
    assert code == 130, stdout
    assert f"INCONCLUSIVE {stuck}:" in stdout and "interrupted (SIGINT)" in stdout
    d = json.loads(out.read_text())
    assert [b["board"] for b in d["boards"]] == ["boards/000-replay-1.toml", stuck]
    assert d["boards"][0]["verdict"] == "pass"


def test_a_first_sigint_stops_fail_fast_workers_stuck_in_one_step(tmp_path, interrupt_cli):
    """The same in `check --fail-fast -j 2` (its own scheduling loop): the stuck worker is killed
    after the first signal, the run exits 130 (interrupt_cli waits 60 s at most; the step 600 s)."""
    stuck = "boards/002-skip-battle-phase.toml"
    code, stdout = interrupt_cli(
        ["check", "boards/000-replay-1.toml", stuck, "--fail-fast", "-j", "2", "--engine", "lifecycle_engines:slow"],
        LIFECYCLE_SLOW="600", LIFECYCLE_SLOW_ON="002-skip-battle-phase",
    )
    assert code == 130, stdout
    assert f"INCONCLUSIVE {stuck}:" in stdout and "interrupted (SIGINT)" in stdout, stdout


def test_check_timeout_kills_a_board_stuck_in_one_step(tmp_path):
    """`check -j 2 --timeout 2`: a board whose engine blocks inside one step (600 s) is killed at
    the deadline (2 s + DEADLINE_GRACE), inconclusive with the deadline's reason; the other board's
    result is the one a run without the stuck board gives."""
    stuck, other = "boards/002-skip-battle-phase.toml", "boards/000-replay-1.toml"
    alone = bpcheck("check", other, "--engine", "lifecycle_engines:slow", "--timeout", "2", "--json", str(tmp_path / "a.json"))
    assert alone.returncode == 0, alone.stdout + alone.stderr
    r = bpcheck("check", other, stuck, "-j", "2", "--engine", "lifecycle_engines:slow", "--timeout", "2", "--json", str(tmp_path / "b.json"),
                LIFECYCLE_SLOW="600", LIFECYCLE_SLOW_ON="002-skip-battle-phase")  # (bpcheck() gives up after 180 s)
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"INCONCLUSIVE {stuck}:" in r.stdout and deadline_reason(2.0) in r.stdout, r.stdout
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    assert b["boards"][0] == a["boards"][0]
    assert b["boards"][1]["bound_hit"] == deadline_reason(2.0) and b["boards"][1]["verdict"] == "inconclusive"


def _sleep(x):
    if x == 1:
        time.sleep(600)
    return x


def test_pool_deadline_kills_a_task_that_does_not_return_and_goes_on():
    t0 = time.monotonic()
    with Pool(1, deadline=1.0) as pool:
        got = {o.index: o for o in pool.run(_sleep, [(i,) for i in range(4)])}
    assert time.monotonic() - t0 < 300  # (the task alone sleeps 600 s)
    assert sorted(got) == [0, 1, 2, 3]
    assert got[1].deadline and not got[1].ok and not got[1].crashed and got[1].error == "killed after 1 s", got
    assert all(got[i].ok and got[i].value == i and not got[i].deadline for i in (0, 2, 3)), got


def test_bad_jobs_is_a_usage_error(run_cli):
    code, _o, err = run_cli("check", SMALL[1], "-j", "-1")
    assert code == 2 and "must be 0 (one per CPU) or more" in err
    code, _o, err = run_cli("check", SMALL[1], "-j", "two")
    assert code == 2 and "expected a number of worker processes" in err


def _square(x):
    return x * x


def _die(x):
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def test_pool_gives_each_outcome_once_and_survives_a_dead_worker():
    with Pool(2) as pool:
        got = {o.index: o for o in pool.run(_die, [(i,) for i in range(6)], order=[5, 4, 3, 2, 1, 0])}
    assert sorted(got) == list(range(6))
    assert got[3].crashed and not got[3].ok and "SIGKILL" in got[3].error
    assert all(got[i].ok and got[i].value == i for i in (0, 1, 2, 4, 5))
    with Pool(2) as pool:
        seen = []
        for o in pool.run(_square, [(i,) for i in range(5)]):
            seen.append(o.value)
            if o.value == 0:
                pool.cancel([4])
    assert 16 not in seen or len(seen) == 5  # cancelled before it ran, unless it was already running


@pytest.mark.parametrize("engine, examples, code", [("mutant:direct-attack-past-monsters", "1000", 1), ("reference", "12", 0)])
def test_fuzz_output_is_the_same_whatever_the_worker_count(tmp_path, run_cli, engine, examples, code):
    outs = []
    for j in ("1", "2"):
        js = tmp_path / f"f{j}.json"
        got, stdout, err = run_cli("fuzz", "--engine", engine, "--examples", examples, "--max-states", "300", "--seed", "3", "-j", j, "--json", str(js))
        assert got == code, stdout + err
        outs.append((stdout, js.read_text()))
    assert outs[0] == outs[1]
    d = json.loads(outs[0][1])
    if engine == "reference":  # exit 0: some boards were cut at --max-states (said in the summary, not failed)
        assert d["stats"]["search_examples"] == 12 and d["stats"]["bound_hits"] > 0  # every board drawn was explored and counted once
    else:
        assert d["stats"]["first_failure_example"] >= 1 and "attack.direct-legal" in outs[0][0]


@pytest.mark.parametrize("extra", [(), ("--differential",), ("--engine", "mutant:replay-is-second-attack")])
def test_one_board_with_jobs_gives_the_same_result(tmp_path, run_cli, extra):
    """One board and -j 2: the sharded explorer (explorers/parallel.py) where it is present and
    applies, the sequential one otherwise; the outputs are those of -j 1 either way."""
    one, two = _check_twice(tmp_path, run_cli, str(B / "000-replay-2.toml"), *extra)
    assert one == two and one[0] in (0, 1)
