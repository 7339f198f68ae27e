"""Feedback while a run goes on (issue 25 item 2; explorers/progress.py, cli/feedback.py,
docs/checking.md "Progress and early results"): progress lines on stderr in CI too, a line in
place on a terminal that clears itself, one number format, each board's verdict when stdout holds
it back, the first counterexample as soon as it is found; stdout unchanged.

The process tests read stderr from a file as it grows (``CI=true``, stderr not a terminal) and
time what appears there; the runs are made long by an engine that sleeps in each step
(tests/lifecycle_engines.py), never by a large board, so they say the same on a fast machine or a
loaded one, and each is stopped with SIGINT once it has shown what the test waits for."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from bpcheck.explorers.pool import Pool, notify
from bpcheck.explorers.progress import FIRST_AFTER, LINE_EVERY, Progress, count, duration, rate, without_progress

ROOT = Path(__file__).resolve().parent.parent
TOKENS = "boards/000-tokens.toml"  # 3,047 states (reduced): long with a slow engine
SMALL = "boards/000-replay-1.toml"
HEAD = re.compile(r"^bpcheck (\w+) \[([0-9hmins ]+)\] ")


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def seconds(text: str) -> int:
    """``4 min 12 s`` -> 252 (the inverse of duration())."""
    total = 0
    for n, unit in re.findall(r"(\d+) (h|min|s)\b", text):
        total += int(n) * {"h": 3600, "min": 60, "s": 1}[unit]
    return total


# -- the number format and the line ------------------------------------------------------------


def test_one_number_format():
    assert [count(0), count(999), count(1234), count(742799.4)] == ["0", "999", "1,234", "742,799"]
    assert [rate(0.04), rate(9.94), rate(10), rate(2100.4)] == ["0.0", "9.9", "10", "2,100"]
    assert [duration(0), duration(8.4), duration(59.6), duration(61), duration(120), duration(3725), duration(7200)] == [
        "0 s", "8 s", "1 min", "1 min 1 s", "2 min", "1 h 2 min", "2 h"
    ]
    for s in (0, 8, 59, 61, 119, 3599):
        assert seconds(duration(s)) == s


def test_plain_lines_at_a_steady_interval_with_counts_rate_and_eta():
    clock, err = Clock(), io.StringIO()
    p = Progress("check", total=3, mode="lines", stream=err, clock=clock, background=False)
    p.plan([1000.0, 1000.0, 2000.0])
    a = p.start("a.toml", 1000.0)
    assert not p.tick() and err.getvalue() == ""  # nothing in the first seconds
    clock.t += FIRST_AFTER
    a.update(500)
    assert p.tick()
    line = err.getvalue()
    assert line == "bpcheck check [2 s] 0/3 boards done; running a.toml (500 states); 250 states/s; ETA ~14 s\n"
    assert not p.tick()  # the next one comes LINE_EVERY seconds later
    a.update(1000)
    p.finish(a, failed=True, violations=2)
    b = p.start("b.toml", 1000.0)
    b.update(10)
    b.found()
    clock.t += LINE_EVERY
    assert p.tick()
    last = err.getvalue().splitlines()[-1]
    assert last.startswith("bpcheck check [12 s] 1/3 boards done, 1 failed, 3 violations found; running b.toml (10 states); ")
    assert "ETA ~" in last  # 990 + 2,000 states left at the rate of the last 10 s
    b.update(5000)  # past what was expected of it: how much longer is not known
    clock.t += LINE_EVERY
    p.tick()
    assert "ETA" not in err.getvalue().splitlines()[-1]
    p.extra("cluster", "4 workers alive")
    clock.t += LINE_EVERY
    p.tick()
    assert "; cluster: " not in err.getvalue() and "4 workers alive" in err.getvalue().splitlines()[-1]
    p.close()
    text = err.getvalue()
    assert "\r" not in text and not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)  # plain lines only
    assert all(HEAD.match(line) for line in text.splitlines())


def test_the_eta_learns_from_finished_boards():
    """issue 34: `./scripts/check`'s ETA was 4x optimistic. The boards here cost 4x what was
    expected of them (400 states at 10 states/s, expected 100): before a board has finished the
    states-per-second ETA cannot know it; once two have, the seconds they took per unit of
    expected cost price the rest, spread over the workers: exact on a fake clock."""
    clock, err = Clock(), io.StringIO()
    p = Progress("check", total=4, mode="lines", stream=err, clock=clock, background=False)
    p.plan([100.0] * 4, workers=2)
    a, b = p.start("a.toml", 100.0), p.start("b.toml", 100.0)
    clock.t += 10
    a.update(100), b.update(100)
    p.tick()
    first = err.getvalue().splitlines()[-1]
    assert first.endswith("; 20 states/s; ETA ~10 s"), first  # the guess: 70 s are left in truth
    clock.t += 30
    a.update(400), b.update(400)
    p.finish(a), p.finish(b)
    c, d = p.start("c.toml", 100.0), p.start("d.toml", 100.0)
    clock.t += 10
    c.update(100), d.update(100)
    assert p.eta(None) == 30.0  # learned: 0.4 s per unit; c and d each 40 s, 10 s run: 30 s left
    clock.t += LINE_EVERY
    p.tick()
    assert err.getvalue().splitlines()[-1].endswith("ETA ~20 s"), err.getvalue()
    p.close()


def test_the_eta_waits_for_the_longest_board_and_spreads_the_rest_over_the_workers():
    clock = Clock()
    p = Progress("check", total=3, mode="lines", stream=io.StringIO(), clock=clock, background=False)
    p.plan([100.0, 400.0, 100.0], workers=2)
    a, b = p.start("a.toml", 100.0), p.start("b.toml", 400.0)
    clock.t += 10
    a.update(100), b.update(100)
    p.finish(a)  # 0.1 s per unit of expected cost
    p.start("c.toml", 100.0)
    assert p.eta(None) == 30.0  # b needs 30 s more, c 10 s: the workers share 40 s, but b alone is 30 s
    q = Progress("check", total=4, mode="lines", stream=io.StringIO(), clock=clock, background=False)
    q.plan([100.0, 100.0, 100.0, 100.0], workers=2)
    x, y = q.start("x", 100.0), q.start("y", 100.0)
    clock.t += 5
    x.update(100), y.update(25)
    q.finish(x)  # 5 s for 100: 0.05 s per unit
    clock.t += 5  # y has run 10 s, expected 5: slower than the finished one; its states say half done
    y.update(50)
    assert q.eta(None) == 10.0  # y: 10 s more by its own progress; 2 not started: 5 s each over 2 workers
    y.update(150)  # past what was expected of it (scaled by x: 100 states for 100): not known
    assert q.eta(None) is None


def test_notes_wait_for_the_first_seconds_and_die_with_a_short_run():
    clock, err = Clock(), io.StringIO()
    p = Progress("check", mode="lines", stream=err, clock=clock, background=False)
    p.note(["first counterexample: x", "  trace: y"])
    assert err.getvalue() == ""
    clock.t += FIRST_AFTER
    p.tick()
    assert err.getvalue().splitlines()[:2] == ["bpcheck check [2 s] first counterexample: x", "  trace: y"]
    p.note(["later"])  # after the first seconds: at once
    assert err.getvalue().splitlines()[-1] == "bpcheck check [2 s] later"
    p.close()
    q = Progress("check", mode="lines", stream=err, clock=clock, background=False)
    q.note(["dropped"])
    q.close()  # the run ended before anything was due: its stdout says it all
    assert "dropped" not in err.getvalue()
    assert without_progress(err.getvalue() + "bpcheck: error: x\n  not ours\n") == "bpcheck: error: x\n  not ours\n"


def test_on_a_terminal_one_line_in_place_cleared_before_anything_else(monkeypatch):
    clock, tty, out = Clock(), Tty(), io.StringIO()
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", tty)
    p = Progress("check", total=2, clock=clock, background=False)
    assert p.mode == "live"
    t = p.start("a.toml")
    clock.t += FIRST_AFTER
    t.update(12345)
    p.tick()
    assert tty.getvalue().startswith("\rbpcheck check [2 s] 0/2 boards done; running a.toml (12,345 states)")
    shown = len(tty.getvalue()) - 1
    print("PASS         a.toml")  # a result on stdout: the line is cleared first
    assert tty.getvalue().endswith("\r" + " " * shown + "\r")
    assert out.getvalue() == "PASS         a.toml\n"
    clock.t += 1
    p.tick()  # drawn again
    p.close()
    assert tty.getvalue().endswith("\r") and sys.stdout is out and sys.stderr is tty  # cleared, streams back
    monkeypatch.setenv("CI", "true")
    for quiet, mode in ((False, "lines"), (True, "off")):  # CI: plain lines even on a terminal
        q = Progress("check", stream=tty, quiet=quiet, background=False)
        assert q.mode == mode
        q.close()


def _noisy(n: int) -> int:
    for k in range(n):
        notify(("progress", k, 0, 0))
    return n


def test_worker_notes_come_before_the_outcome():
    got = []
    with Pool(1, on_note=lambda i, payload: got.append((i, payload))) as pool:
        outs = list(pool.run(_noisy, [(3,), (2,)]))
    assert [o.value for o in outs] == [3, 2]
    assert got == [(0, ("progress", 0, 0, 0)), (0, ("progress", 1, 0, 0)), (0, ("progress", 2, 0, 0)), (1, ("progress", 0, 0, 0)), (1, ("progress", 1, 0, 0))]


def test_the_first_counterexample_in_a_few_lines(tmp_path):
    """Replayed on an engine of its own, as the board's result replays it; a baselined one is
    not shown (the run would pass)."""
    from bpcheck.engines import make_engine
    from bpcheck.explorers.baseline import load_baseline
    from bpcheck.explorers.run import check_board
    from bpcheck.harness.feedback import FirstCounterexample, baseline_knows, replayed_counterexample
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    board, engine = load_board(ROOT / SMALL, SMALL), "mutant:replay-resets-count"
    invs = select(None)
    clock, err = Clock(), io.StringIO()
    p = Progress("check", mode="lines", stream=err, clock=clock, background=False, first=0)
    first = FirstCounterexample(p, replayed_counterexample(engine, {}, invs, engine))
    found = []
    br = check_board(board, make_engine(engine), invs, engine_name=engine, progress=False, found=lambda v, reduced: (found.append(v), first(board, v, reduced)))
    assert len(found) == len(br.counterexamples) == 5 and first.shown
    lines = err.getvalue().splitlines()
    cex = next(c for c in br.counterexamples if c.invariant == found[0].prop)  # the one shown: the first found
    assert lines[0] == f"bpcheck check [0 s] first counterexample, found after 0 s: {cex.invariant} on {SMALL} (the run goes on; the full report comes with the results)"
    assert lines[1] == f"  violation: {cex.message}"
    trace = " ".join(x.strip() for x in lines[2:])
    assert trace.startswith("trace (5 decisions, 9 steps): P1: enter Battle Phase; ") and trace.endswith("; P1: replay: call off")
    assert len(lines) <= 6
    bl = tmp_path / "b.toml"
    bl.write_text("".join(f'[[known]]\nboard = "{SMALL}"\ninvariant = "{c.invariant}"\nsignature = "{c.key}"\nreason = "known"\n' for c in br.counterexamples))
    err2 = io.StringIO()
    q = Progress("check", mode="lines", stream=err2, clock=clock, background=False, first=0)
    quiet = FirstCounterexample(q, replayed_counterexample(engine, {}, invs, engine), baseline_knows(load_baseline(str(bl)), engine, False))
    for v in found:
        quiet(board, v, True)
    assert err2.getvalue() == "" and not quiet.shown


# -- through real processes, as CI runs them ---------------------------------------------------


def _env(**extra: str) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY",)}
    e["PYTHONPATH"] = str(ROOT / "tests") + os.pathsep + e.get("PYTHONPATH", "")
    e["CI"] = "true"
    e.update(extra)
    return e


class Watched:
    """A bpcheck process whose stderr goes to a file, read as it grows: each line with the
    time it appeared (seconds from the start)."""

    def __init__(self, tmp_path: Path, args: list[str], **env: str) -> None:
        self.path = tmp_path / "stderr.txt"
        self._f = open(self.path, "w")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([sys.executable, "-m", "bpcheck", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=self._f, text=True, env=_env(**env))
        self.lines: list[tuple[float, str]] = []
        self._text = ""

    def poll(self) -> None:
        text = self.path.read_text()
        now = time.monotonic() - self.t0
        done = text[len(self._text):]
        if "\n" in done:
            new = done[: done.rindex("\n") + 1]
            self._text += new
            self.lines += [(now, line) for line in new.splitlines()]

    def wait_for(self, pred, timeout: float) -> tuple[float, str]:
        end = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < end:
            self.poll()
            for t, line in self.lines[seen:]:
                if pred(line):
                    return t, line
            seen = len(self.lines)
            assert self.p.poll() is None, f"the run ended first: {self.p.returncode}\n{self._text}"
            time.sleep(0.05)
        raise AssertionError(f"not seen within {timeout} s:\n{self._text}")

    def stop(self) -> tuple[int, str]:
        self.p.send_signal(signal.SIGINT)
        out, _ = self.p.communicate(timeout=120)
        self._f.close()
        self.poll()
        return self.p.returncode, out


def test_ci_shows_progress_lines_within_5_s_and_then_at_a_steady_interval(tmp_path):
    w = Watched(tmp_path, ["check", TOKENS, "--engine", "lifecycle_engines:slow"], LIFECYCLE_SLOW="0.02")
    try:
        t1, first = w.wait_for(HEAD.match, 60)
        t2, second = w.wait_for(lambda line: HEAD.match(line) and line != first, 60)
    finally:
        code, out = w.stop()
    # The promise: the first line 2 s after the command began (its own clock, the line's head).
    # From the test's Popen the interpreter's start and bpcheck's imports come on top: 1.4-1.9 s
    # at load average 4 on this 2-core machine, more under heavier load, so the wall-clock bound
    # from outside is a loose one (it was 5 s: a loaded machine could miss it; issue 34).
    assert seconds(HEAD.match(first).group(2)) <= 5, first
    assert t1 <= 20.0, (t1, first)
    gap = seconds(HEAD.match(second).group(2)) - seconds(HEAD.match(first).group(2))
    assert 5 <= gap <= 30 and t2 - t1 <= 30, (first, second, t2 - t1)  # steady: neither a flood nor silence
    assert "0/1 boards done; running 000-tokens.toml (" in second and " states/s" in second
    text = w.path.read_text()
    assert "\r" not in text and "\x1b" not in text  # plain lines in a CI log
    assert code == 130 and out.startswith("INCONCLUSIVE boards/000-tokens.toml")  # stdout: the results only


def test_the_first_counterexample_of_a_broken_engine_comes_at_once(tmp_path):
    """The mutant breaks its invariants a few steps deep on a board that takes minutes to
    explore with this engine: the counterexample is on stderr while the exploration goes on,
    long before the board's result (stdout is still empty then)."""
    w = Watched(tmp_path, ["check", TOKENS, "--engine", "lifecycle_engines:slow_buggy"], LIFECYCLE_SLOW="0.01")
    try:
        t, line = w.wait_for(lambda line: "first counterexample" in line, 120)
        w.poll()
        following = [x for _t, x in w.lines if x.startswith("  ")]
        running = w.p.poll() is None
    finally:
        code, out = w.stop()
    assert running
    m = re.search(r"found after ([0-9hmins ]+): (\S+) on boards/000-tokens.toml", line)
    assert m, line
    shown_at = seconds(HEAD.match(line).group(2))
    assert shown_at - seconds(m.group(1)) <= 30  # shown within 30 s of finding it (at once, in fact)
    assert following[0].startswith("  violation: ") and following[1].startswith("  trace (")
    assert code == 130 and f"{m.group(2)}:" in out  # the full counterexample, with the results


def test_a_verdict_stdout_holds_back_is_on_stderr_when_known(tmp_path):
    """-j 2: the slow board comes first in board order, so stdout holds the small board's
    result back until it is done; stderr has the small board's verdict as soon as it is known."""
    w = Watched(
        tmp_path,
        ["check", TOKENS, SMALL, "-j", "2", "--engine", "lifecycle_engines:slow_buggy"],
        LIFECYCLE_SLOW="0.01",
        LIFECYCLE_SLOW_ON="000-tokens",
    )
    try:
        _t, line = w.wait_for(lambda line: f"FAIL {SMALL}:" in line, 120)
        running = w.p.poll() is None
    finally:
        code, out = w.stop()
    assert running and line.endswith("(on stdout in board order)") and "violated: " in line
    assert code == 130 and out.index("boards/000-tokens.toml") < out.index(SMALL)  # stdout: board order


def test_quiet_and_short_runs_say_nothing_on_stderr(run_cli):
    code, out, err = run_cli("check", SMALL, "--engine", "mutant:replay-resets-count", "-q")
    assert code == 1 and err == "" and out.startswith("FAIL")
    args = SimpleNamespace(quiet=True)
    from bpcheck.harness.feedback import run_progress

    assert run_progress(args, "check").mode == "off"


def test_stdout_streams_each_board_as_soon_as_board_order_allows(tmp_path):
    """stdout to a pipe (a CI log, `| tee`): each board's line goes out as soon as it and every
    board before it are done, not when the run ends (issue 34: `./scripts/check` printed nothing
    for minutes, then everything). The second board's engine (tests/engines/gated_engine.py) is
    held until the test has read the first board's line, so a line kept in a buffer can never
    come: the engine then gives up after its bound and says so. With -j 2 the same bytes."""
    a, b, c = "boards/000-replay-1.toml", "boards/002-enter-battle-phase.toml", "boards/002-first-turn.toml"
    engine = f"cmd:{sys.executable} {ROOT / 'tests' / 'engines' / 'gated_engine.py'}"
    outputs = []
    for jobs in ("1", "2"):
        go = tmp_path / f"go-{jobs}"
        buffered = {k: v for k, v in _env(BPCHECK_GATE_BOARD=b, BPCHECK_GATE_GO=str(go)).items() if k != "PYTHONUNBUFFERED"}  # as in CI
        with open(tmp_path / f"stderr-{jobs}.txt", "w") as err:
            p = subprocess.Popen(
                [sys.executable, "-m", "bpcheck", "check", a, b, c, "--engine", engine, "--call-timeout", "300", "-j", jobs, "-q"],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True, env=buffered,
            )
            first = p.stdout.readline()  # board b waits for `go`: this line can only come while the run goes on
            go.touch()
            rest, _ = p.communicate(timeout=600)
        assert not (tmp_path / f"go-{jobs}.late").exists(), f"-j {jobs}: the first board's line came only when the run ended"
        assert p.returncode == 0, (first + rest, (tmp_path / f"stderr-{jobs}.txt").read_text())
        assert first.startswith(f"PASS         {a}: "), first
        outputs.append(first + rest)
    assert outputs[0] == outputs[1]  # whatever -j, the same bytes
    lines = [line.split(":")[0].split()[-1] for line in outputs[0].splitlines() if line.startswith("PASS")]
    assert lines == [a, b, c]
