"""`check --fail-fast` in budget rounds (cli/jobs.py `BudgetRounds`, shared with `bpcheck
mutants`; docs/checking.md "Parallel checking and the order of boards"): a shallow failure on a
board the cost estimate ranks late is found in the first round, before the cheaper boards are
explored to the end; its counterexample is the one the board gives alone; boards cut by a budget
are never reported (not finished), boards finished in a later round are counted once; -j 1 and
-j 2 give the same bytes; a known disagreement (--baseline) does not stop a board. Also: a second
SIGINT while a sharded board runs in `check -j 2` keeps that board's cut-short result."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bpcheck.engines import make_engine
from bpcheck.explorers.core import Bounds
from bpcheck.explorers.run import check_board
from bpcheck.invariants import select
from bpcheck.harness.jobs import FIRST_BUDGET, BudgetRounds, Try, board_cost
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
B = ROOT / "boards"
# A 1-step violation on rule-ch-set-turn (estimated 3,569 states, 190 stored): the mutant lets a
# Set Quick-Play Spell be activated the turn it was Set, which none of the other boards can show.
MUTANT = "mutant:set-card-activates-same-turn"
KILLER = str(B / "rule-ch-set-turn.toml")
# cheaper by the estimate, more than FIRST_BUDGET stored states each (459 and 624), no Set card
BIG_CHEAP = [str(B / "rule-ch-lifo-ring.toml"), str(B / "rule-lp-zero-mid-chain.toml")]
TINY = str(B / "002-first-turn.toml")  # 2 states: finished within the first budget
BOARDS = [KILLER, BIG_CHEAP[0], TINY, BIG_CHEAP[1]]


def _run(run_cli, tmp_path, name: str, *args: str):
    """(code, stdout, stderr without the progress lines, json text)."""
    from bpcheck.explorers.progress import without_progress

    js = tmp_path / f"{name}.json"
    code, stdout, err = run_cli("check", *args, "--json", str(js))
    return code, stdout, without_progress(err), js.read_text()


def test_the_rounds_schedule_cheapest_first_with_growing_budgets():
    r = BudgetRounds(3, None)
    got = []
    while (t := r.take()) is not None:
        got.append((t.key, t.cap, t.final))
        r.done(t, again=t.item != 1 and t.round < 2)  # item 1 finishes at once, the others in round 2
    assert got == [
        ((0, 0), 64, False), ((0, 1), 64, False), ((0, 2), 64, False),
        ((1, 0), 256, False), ((1, 2), 256, False),
        ((2, 0), 1024, False),
        ((2, 2), None, True),  # the last board left open: explored to the end at once
    ]
    # the user's --max-states caps the rounds: the round that reaches it is final (a real bound)
    r = BudgetRounds(2, 100)
    t0, u0 = r.take(), r.take()
    assert (t0.cap, t0.final) == (64, False) and BudgetRounds.cut(t0, "max states (64)")
    r.done(t0, True)
    r.done(u0, True)
    t1 = r.take()
    assert (t1.cap, t1.final) == (100, True) and not BudgetRounds.cut(t1, "max states (100)")
    r.done(t1, False)
    r.done(r.take(), False)
    assert r.take() is None
    t = BudgetRounds(1, None).take()  # one board: nothing to turn to, explored to the end at once
    assert (t.cap, t.final) == (None, True)
    assert not BudgetRounds.cut(Try(0, 0, 64, False), "time limit (5 s)")  # only the budget comes back


def test_a_stop_drops_every_later_try_and_settles_the_earlier_ones():
    r = BudgetRounds(3, None)
    a, b, c = r.take(), r.take(), r.take()
    r.done(a, True)
    r.done(c, True)  # (0, 2) came back before (0, 1): its round-1 try is pending
    late_first = r.take()  # (1, 0), running
    assert late_first.key == (1, 0) and not r.settled((1, 0))  # (0, 1) still runs
    r.done(b, False)
    assert r.stop(b) == [late_first]  # (0, 1) failed: the running (1, 0) is to be cancelled
    assert r.take() is None and not r.has(0) and not r.has(2) and r.settled((0, 1))


def test_the_last_board_left_is_explored_to_the_end_at_once():
    r = BudgetRounds(2, None)
    a, b = r.take(), r.take()
    assert (b.cap, b.final) == (64, False)  # (0, 0) still runs: not known to be the last one
    r.done(a, True)
    r.done(b, False)  # item 1 ended at (0, 1), before (1, 0)
    t = r.take()
    assert (t.key, t.cap, t.final) == ((1, 0), None, True)
    r = BudgetRounds(2, 500)
    a, b = r.take(), r.take()
    r.done(b, True)
    r.done(a, False)
    t = r.take()  # item 1 alone: the user's bound, a real one
    assert (t.key, t.cap, t.final) == ((1, 1), 500, True)
    r = BudgetRounds(2, None)
    a, b = r.take(), r.take()
    r.done(a, False)
    r.stop(a)  # a failure: nothing after it is wanted
    r.done(b, True)
    assert r.take() is None and not r.has(1)


def test_a_shallow_failure_on_a_board_ranked_late_is_found_in_the_first_round(tmp_path, run_cli):
    costs = {b: board_cost(load_board(b)) for b in BOARDS}
    assert max(costs[b] for b in (*BIG_CHEAP, TINY)) < costs[KILLER]  # the killer is tried last
    code, stdout, err, doc = _run(run_cli, tmp_path, "ff", *BOARDS, "--engine", MUTANT, "--fail-fast")
    assert code == 1, stdout + err
    d = json.loads(doc)
    # round 0 (64 states a board): the tiny board finishes, the two larger cheap boards are cut by
    # the budget, the killer fails: it stops there, the cut boards are not finished (no verdict)
    assert d["fail_fast"] == {"stopped_at": KILLER, "not_run": [], "not_finished": BIG_CHEAP}
    assert [(b["board"], b["verdict"]) for b in d["boards"]] == [(KILLER, "fail"), (TINY, "pass")]
    assert d["counts"]["pass"] == 1 and d["counts"]["fail"] == 1 and d["counts"]["inconclusive"] == 0
    assert (
        f"fail-fast: stopped at the first failing board in the budget rounds, {KILLER}; "
        f"2 boards not finished (explored within a budget only, no verdict): {', '.join(BIG_CHEAP)}"
    ) in stdout
    for b in BIG_CHEAP:  # never shown as a board result
        assert f"{b}:" not in stdout.split("check: ")[0]
    # the failing board's result is that of the board explored alone, unbounded, stopping at its
    # first violation: the same shortest counterexample, the same counts
    alone = check_board(load_board(KILLER), make_engine(MUTANT), select(None), "bfs", Bounds(), MUTANT, stop_on_violation=True)
    board = {**d["boards"][0], "counterexamples": [{k: v for k, v in c.items() if k != "group"} for c in d["boards"][0]["counterexamples"]]}
    assert board == json.loads(json.dumps(alone.to_dict()))  # (less the root cause --json adds)
    assert d["boards"][0]["counterexamples"][0]["invariant"] == "chain.not-set-this-turn"
    # and the mutant's bug is indeed absent from the cheaper boards: without the rounds,
    # --fail-fast would have explored each of them to the end before trying the killer
    for b in BIG_CHEAP:
        full = check_board(load_board(b), make_engine(MUTANT), select(None), "bfs", Bounds(), MUTANT, stop_on_violation=True)
        assert full.verdict == "pass" and full.result.states > FIRST_BUDGET, b


def test_rounds_give_the_same_bytes_with_one_or_two_workers(tmp_path, run_cli):
    one = _run(run_cli, tmp_path, "j1", *BOARDS, "--engine", MUTANT, "--fail-fast", "-j", "1")
    two = _run(run_cli, tmp_path, "j2", *BOARDS, "--engine", MUTANT, "--fail-fast", "-j", "2")
    assert one == two and one[0] == 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_boards_explored_again_with_bigger_budgets_are_counted_once(tmp_path, run_cli, jobs):
    """No failure: every board ends in some round (the two larger ones in round 2, at 1,024
    states, after being cut at 64 and 256); each is reported once, exactly as a plain `check`
    explores it."""
    boards = [*BIG_CHEAP, TINY]
    code, stdout, _e, doc = _run(run_cli, tmp_path, "ff", *boards, "--fail-fast", "-j", jobs)
    plain = _run(run_cli, tmp_path, "plain", *boards)
    assert code == 0 == plain[0]
    d, p = json.loads(doc), json.loads(plain[3])
    assert d["fail_fast"] == {"stopped_at": None, "not_run": [], "not_finished": []}
    assert d["boards"] == p["boards"]  # states, transitions, per-invariant checks: the final try's only
    assert d["counts"] == p["counts"] and "fail-fast: no board failed; every board was run" in stdout


def test_the_users_max_states_is_a_real_bound_in_the_rounds(tmp_path, run_cli):
    """--max-states 100: round 0 at 64 states, round 1 at the user's 100; a board cut there is
    inconclusive (a bound hit, as without --fail-fast), not a board left unfinished."""
    boards = [BIG_CHEAP[0], TINY]
    code, _o, _e, doc = _run(run_cli, tmp_path, "ff", *boards, "--fail-fast", "--max-states", "100")
    plain = _run(run_cli, tmp_path, "plain", *boards, "--max-states", "100")
    assert code == 3 == plain[0]
    d = json.loads(doc)
    assert d["fail_fast"]["not_finished"] == [] and d["boards"] == json.loads(plain[3])["boards"]
    assert d["boards"][0]["bound_hit"] == "max states (100)" and d["boards"][0]["verdict"] == "inconclusive"


def test_a_second_signal_keeps_the_sharded_boards_cut_short_result(tmp_path, run_cli, monkeypatch):
    """`check -j 2` over several boards, the expensive one sharded (SHARD_AT lowered so that
    000-tokens takes that path): two SIGINTs while the sharded explorer runs (sent from its stop
    poll, between chunks, so they arrive while it holds the board) end the run at once. The
    sharded board keeps its cut-short result (inconclusive, "interrupted (SIGINT)", no
    counterexamples), the boards that had not started are listed, outputs are written, exit 130
    (cli/jobs.py: "second signal keeps sharded board's result")."""
    import os
    import signal
    import time

    import bpcheck.harness.jobs as jobs
    from bpcheck.explorers import parallel

    boards = [str(B / n) for n in ("000-replay-2.toml", "000-tokens.toml", "rule-ch-lifo-ring.toml")]
    big = boards[1]
    costs = {b: board_cost(load_board(b)) for b in boards}
    assert max(costs, key=costs.get) == big
    monkeypatch.setattr(jobs, "SHARD_AT", costs[big])  # only 000-tokens is sharded
    real = parallel.explore_parallel
    polls: list[str | None] = []

    def spy(make_system, workers, options, *a, **kw):
        inner = options.stop

        def stop():
            if not polls:  # the first poll: a first and a second SIGINT, as from a terminal
                os.kill(os.getpid(), signal.SIGINT)  # the first: the exploration is asked to stop
                polls.append(inner())
                os.kill(os.getpid(), signal.SIGINT)  # the second: bpcheck stops now
                for _ in range(100):
                    time.sleep(0.01)
                raise AssertionError("the second SIGINT did not interrupt the run")
            return inner()

        return real(make_system, workers, dataclasses.replace(options, stop=stop), *a, **kw)

    monkeypatch.setattr(parallel, "explore_parallel", spy)
    js = tmp_path / "r.json"
    code, stdout, err = run_cli("check", *boards, "-j", "2", "--json", str(js))
    assert polls == ["interrupted (SIGINT)"]  # the sharded explorer was running when they came
    assert code == 130, stdout + err
    d = json.loads(js.read_text())
    assert [b["board"] for b in d["boards"]] == [big]  # the sharded board runs first, alone
    b = d["boards"][0]
    assert (b["verdict"], b["bound_hit"], b["counterexamples"]) == ("inconclusive", "interrupted (SIGINT)", [])
    assert d["interrupted"] == {"signal": "SIGINT", "not_started": [boards[0], boards[2]]}
    assert f"INCONCLUSIVE {big}:" in stdout and "interrupted by SIGINT" in stdout


def _env(**extra: str) -> dict:
    import os

    e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
    e["PYTHONPATH"] = str(ROOT / "tests") + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra)
    return e


def test_a_dead_worker_in_the_rounds_costs_its_board_only():
    import subprocess
    import sys

    small = [str(B / n) for n in ("rule-ch-lifo-ring.toml", "002-first-turn.toml", "000-flip-hane-hane.toml", "rule-calc-direct.toml")]
    r = subprocess.run(
        [sys.executable, "-m", "bpcheck", "check", *small, "--engine", "jobs_engines:dies_on_board", "-j", "2", "--fail-fast"],
        cwd=ROOT, capture_output=True, text=True, env=_env(), timeout=180,
    )
    assert r.returncode == 4, r.stdout + r.stderr
    assert f"CRASHED      {small[2]}: the worker process was killed by SIGKILL" in r.stdout
    # rule-ch-lifo-ring (459 states) goes through three rounds and is reported once
    assert r.stdout.count("PASS ") == 3 and "1 crashed" in r.stdout and f"PASS         {small[0]}: 459 states" in r.stdout
    assert "fail-fast: no board failed; every board was run" in r.stdout and "Traceback" not in r.stderr


def test_a_signal_in_the_rounds_leaves_a_board_cut_by_its_budget_not_finished(tmp_path, interrupt_cli):
    """-j 1: rule-ch-lifo-ring is cut by the first budget (64 states), then a SIGINT comes while
    000-replay-4 (slowed down) is explored in the same round: that board is inconclusive
    (interrupted), rule-ch-lifo-ring has no verdict (not finished, never a pass), exit 130."""
    out = tmp_path / "r.json"
    ring, slow = str(B / "rule-ch-lifo-ring.toml"), str(B / "000-replay-4.toml")
    assert board_cost(load_board(ring)) < board_cost(load_board(slow))
    code, stdout = interrupt_cli(
        ["check", slow, ring, "--fail-fast", "--engine", "lifecycle_engines:slow", "--json", str(out)],
        LIFECYCLE_SLOW="0.3", LIFECYCLE_SLOW_ON="000-replay-4",
    )
    assert code == 130, stdout
    d = json.loads(out.read_text())
    assert [(b["board"], b["verdict"], b["bound_hit"]) for b in d["boards"]] == [(slow, "inconclusive", "interrupted (SIGINT)")]
    assert d["fail_fast"] == {"stopped_at": None, "not_run": [], "not_finished": [ring]}
    assert d["interrupted"] == {"signal": "SIGINT", "not_started": []}
    assert f"1 board not finished (explored within a budget only, no verdict): {ring}" in stdout
    assert f"{ring}:" not in stdout.split("check: ")[0]


def test_with_a_baseline_a_known_disagreement_does_not_stop_a_board(tmp_path, run_cli, monkeypatch):
    """--fail-fast --differential --baseline: the first DIFF on 000-replay-1 (14 steps) is a
    known one, a new one comes at 17 steps. Stopping the board at its first violation would
    report it as passing on 64 states; it is explored to the end instead (no rounds, no stop at
    the first violation) and fails, exactly as without --fail-fast."""
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    base = tmp_path / "baseline.toml"
    base.write_text('[[known]]\nboard = "000-replay-1.toml"\nkind = "observation"\npath = "players[1].lp"\nreason = "planted"\n')
    boards = [str(B / "000-replay-1.toml"), TINY]
    common = ("--engine", "diff_engines:DamageRefund", "--differential", "--invariants", "attack counts", "--baseline", str(base))
    code, stdout, err, doc = _run(run_cli, tmp_path, "ff", *boards, *common, "--fail-fast")
    plain = _run(run_cli, tmp_path, "plain", *boards, *common)
    assert code == 1 == plain[0], stdout + err
    d = json.loads(doc)
    assert d["boards"] == json.loads(plain[3])["boards"]
    assert d["boards"][0]["verdict"] == "fail" and d["boards"][0]["baseline"]["known"] == 1
    assert d["fail_fast"] == {"stopped_at": boards[0], "not_run": [], "not_finished": []}
    assert f"fail-fast: stopped at the first failing board in the cost order, {boards[0]}" in stdout


def test_what_the_rounds_report_when_they_stop(monkeypatch):
    """run_check_jobs with a stand-in for the explorer (-j 1): each board has a number of states
    and, maybe, a violation found once that many states are explored. Cost order A, B, C, D:
    (0, A) cut at 64, (0, B) cut, (0, C) passes, (0, D) cut, (1, A) passes at 256, (1, B) fails:
    A and C are reported (C, after B in the cost order, ended in an earlier round), B is where it
    stopped, D (cut twice would be needed) is not finished, E (never reached) not run."""
    from types import SimpleNamespace

    import bpcheck.harness.jobs as jobs
    from bpcheck.harness.lifecycle import Signals

    spec = {"A": (100, None), "B": (500, 200), "C": (10, None), "D": (300, None)}  # states, violation at
    names = ["D", "C", "B", "A"]  # board order (what is printed) differs from the cost order
    costs = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 4.0}
    monkeypatch.setattr(jobs, "board_cost", lambda b: costs[b])
    calls: list[tuple[str, int | None]] = []

    def task(board, within):
        states, bad = spec[board]
        calls.append((board, within.max_states))
        cap = within.max_states
        if bad is not None and (cap is None or bad <= cap):
            return ("ok", SimpleNamespace(board=board, verdict="fail", result=SimpleNamespace(violations=["v"], bound_hit=None)))
        if cap is not None and states > cap:
            return ("ok", SimpleNamespace(board=board, verdict="inconclusive", result=SimpleNamespace(violations=[], bound_hit=f"max states ({cap})")))
        return ("ok", SimpleNamespace(board=board, verdict="pass", result=SimpleNamespace(violations=[], bound_hit=None)))

    printed: list[str] = []
    out = jobs.run_check_jobs(
        [(n, n) for n in names], 1, True, task, lambda b, within: (b, within), lambda br: br,
        lambda i, e: printed.append(names[i]), lambda p, d: p, lambda b: None, Signals(), bounds=Bounds(),
    )
    assert calls == [("A", 64), ("B", 64), ("C", 64), ("D", 64), ("A", 256), ("B", 256)]
    assert [(r.board, r.verdict) for r in out.results] == [("C", "pass"), ("B", "fail"), ("A", "pass")]
    assert printed == ["C", "B", "A"] and out.stopped_at == "B"  # in board order; D has no verdict
    assert (out.not_finished, out.not_run, out.not_started) == (["D"], [], [])
    spec["B"] = (500, 30)  # now B fails within the first budget: the boards after it are not run
    calls.clear()
    out = jobs.run_check_jobs(
        [(n, n) for n in names], 1, True, task, lambda b, within: (b, within), lambda br: br,
        lambda i, e: None, lambda p, d: p, lambda b: None, Signals(), bounds=Bounds(),
    )
    assert calls == [("A", 64), ("B", 64)]
    assert [(r.board, r.verdict) for r in out.results] == [("B", "fail")]
    assert (out.not_finished, out.not_run) == (["A"], ["D", "C"])  # board order
