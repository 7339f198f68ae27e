"""The suite never depends on the machine's load (issue 34).

A long command (check, fuzz, mutants, prove, scenario) prints a progress line on stderr once it
has run FIRST_AFTER seconds (explorers/progress.py): on a quiet machine an early error comes
before it, on a loaded one after. A test that compares a long command's whole stderr, or counts
its lines, must compare it without the progress (``without_progress``) or run the command with
``-q``. This test reads the suite's sources and finds the comparisons that would not.
"""

from __future__ import annotations

import re
from pathlib import Path

from bpcheck.explorers.progress import without_progress

TESTS = Path(__file__).resolve().parent

# a whole-stderr comparison or a count of its lines (the fragile forms; `in` checks are safe)
FRAGILE = re.compile(
    r"(\(\w+,\)\s*=\s*[\w.]*(stderr|err)\.(strip\(\)\.)?splitlines\(\))"  # (line,) = r.stderr.splitlines()
    r"|(len\([\w.]*(stderr|err)\.(strip\(\)\.)?splitlines\(\)\))"  # len(r.stderr.splitlines())
    r"|([\w.]*(stderr|err)\.count\()"  # r.stderr.count("\n")
    r"|([\w.]*(stderr|err)\.strip\(\)\s*==)"  # r.stderr.strip() == "..."
    r"|(\b(stderr|err)\s*==\s*(\"\"|''))"  # err == "" (an empty stderr: until a progress line comes)
)
# commands that never show progress (bpcheck.harness.feedback.LONG_COMMANDS are the others), or a
# test that is quiet: a comparison in a test that runs only these is safe
SAFE_TEST = re.compile(r'"(cards|validate|serve|invariants|baseline|replay|record|conform|export-puzzle)"|"-q"|--quiet|main\(\[\'cards\'\]\)|"mutants", "--list"|-m bpcheck cards ')


def _tests(text: str):
    """Each top-level test function's source, with its name."""
    for m in re.finditer(r"^def (test_\w+)\(.*?(?=^def |^class |^@|\Z)", text, flags=re.M | re.S):
        yield m.group(1), m.group(0)


def test_no_test_compares_a_long_commands_whole_stderr_without_filtering_progress():
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        for name, body in _tests(path.read_text(encoding="utf-8")):
            for line in body.splitlines():
                if FRAGILE.search(line) and "without_progress" not in line and not SAFE_TEST.search(body):
                    found.append(f"{path.name}::{name}: {line.strip()}")
    assert not found, "compare stderr without the progress lines (without_progress) or run with -q:\n" + "\n".join(found)


def test_the_guard_sees_the_pattern_that_failed_under_load():
    """The form issue 34 met (one exact stderr line of `bpcheck fuzz`), and its robust form."""
    fragile = 'def test_x():\n    r = bpcheck("fuzz", "--engine", "picky:nothing")\n    assert r.stderr.strip() == "bpcheck: error: x"\n'
    robust = fragile.replace("r.stderr.strip() ==", "without_progress(r.stderr).strip() ==")
    empty = 'def test_y(run_cli):\n    code, out, err = run_cli("check", "b.toml")\n    assert err == ""\n'
    for src, bad in ((fragile, True), (robust, False), (empty, True), (empty.replace('"b.toml"', '"b.toml", "-q"'), False)):
        (name, body), = _tests(src)
        hits = [ln for ln in body.splitlines() if FRAGILE.search(ln) and "without_progress" not in ln and not SAFE_TEST.search(body)]
        assert bool(hits) is bad, (src, hits)
    # and what a loaded machine writes is compared as a quiet one's
    loaded = "bpcheck fuzz [2 s] setting up\nbpcheck: error: --engine: x\n"
    assert without_progress(loaded).strip() == "bpcheck: error: --engine: x"
