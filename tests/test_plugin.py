"""bpcheck's pytest plugin (cli/pytest_plugin.py, entry point pytest11), run on user projects
made with pytester (docs/scenarios.md, "pytest")."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# pytester's in-process runs restore sys.modules after each run, dropping the modules a run
# imported; numpy's C extension cannot be loaded twice in one process, so the second run that
# explores a board would fail to import it. Imported here, before any run, it stays loaded
# (run alone, this file otherwise failed from its second test on).
importlib.import_module("numpy")

ROOT = Path(__file__).resolve().parent.parent
BOARD = (ROOT / "boards" / "000-replay-1.toml").as_posix()
SCENARIO = (ROOT / "scenarios" / "000-replay-1.toml").read_text(encoding="utf-8").replace("../boards/000-replay-1.toml", BOARD)
FIRST_TURN = (ROOT / "boards" / "002-first-turn.toml").read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def _not_ci(monkeypatch):
    """The inner pytest runs as on a workstation: with CI (or BUILD_NUMBER) set, pytest writes the
    short test summary's lines in full, so each failure's message would be counted twice."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)


def project(pytester: pytest.Pytester, tool: str = 'scenarios = ["rulings"]\nboards = ["boards"]\n') -> None:
    pytester.makefile(".toml", pyproject=f"[tool.pytest.ini_options]\naddopts = '-p no:cacheprovider'\n\n[tool.bpcheck]\n{tool}")
    (pytester.path / "rulings").mkdir()
    (pytester.path / "rulings" / "replay-1.toml").write_text(SCENARIO, encoding="utf-8")
    (pytester.path / "boards").mkdir()
    (pytester.path / "boards" / "first-turn.toml").write_text(FIRST_TURN, encoding="utf-8")
    (pytester.path / "other.toml").write_text("not = 'a scenario'\n")  # outside the configured folders: not collected


def test_collects_scenarios_and_boards_on_the_reference(pytester):
    project(pytester)
    r = pytester.runpytest("-v")
    r.assert_outcomes(passed=2)
    for line in ("bpcheck: engine reference; scenarios rulings; boards boards", "*rulings/replay-1.toml::replay-1 PASSED*", "*boards/first-turn.toml::first-turn PASSED*"):
        r.stdout.fnmatch_lines([line])


def test_bp_engine_option_fails_the_scenario_with_the_counterexample(pytester):
    project(pytester, 'scenarios = ["rulings"]\n')
    r = pytester.runpytest("--bp-engine", "mutant:replay-resets-count")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "scenario '000 replay example 1' (rulings/replay-1.toml) failed on mutant:replay-resets-count:" in out
    assert "line.opponent-summons.step[3] (do 'replay: call off'): expect.attacks.Battle Ox: expected 1, got 0" in out
    assert "offered: replay: attack Blue-Eyes White Dragon, replay: call off" in out


def test_engine_from_tool_bpcheck_and_the_option_overrides_it(pytester):
    project(pytester, 'scenarios = ["rulings"]\nboards = ["boards"]\nengine = "mutant:battle-phase-on-first-turn"\n')
    r = pytester.runpytest()
    r.assert_outcomes(passed=1, failed=1)  # the ruling does not touch turn 1; the board does
    r.stdout.fnmatch_lines(["*board boards/first-turn.toml failed on mutant:battle-phase-on-first-turn*", "*attack.no-battle-phase-turn-1*"])
    pytester.runpytest("--bp-engine", "reference").assert_outcomes(passed=2)


def test_fixtures_and_helpers(pytester):
    project(pytester, 'engine = "mutant:replay-resets-count"\n')
    pytester.makepyfile(
        test_mine=f"""
        import pytest
        from bpcheck.model.board import load_board
        from bpcheck.harness.pytest_plugin import assert_scenario

        def test_spec(bp_engine_spec):
            assert bp_engine_spec == "mutant:replay-resets-count"

        def test_engine_is_fresh_and_usable(bp_engine, bp_make_engine):
            state = bp_engine.start(load_board({BOARD!r}))
            assert [a.label for a in bp_engine.legal_actions(state)] == ["enter Battle Phase", "skip Battle Phase"]
            assert bp_make_engine() is not bp_make_engine()

        def test_bp_scenario_fails_with_the_counterexample(bp):
            bp.scenario("rulings/replay-1.toml")

        def test_assert_scenario_on_the_reference():
            assert assert_scenario("rulings/replay-1.toml").status == "pass"

        def test_bp_board(bp):
            bp.board("boards/first-turn.toml")
        """
    )
    r = pytester.runpytest("test_mine.py", "-rf")
    r.assert_outcomes(passed=4, failed=1)
    r.stdout.fnmatch_lines(["*test_bp_scenario_fails_with_the_counterexample*", "*expect.attacks.Battle Ox: expected 1, got 0*"])
    assert "Traceback" not in r.stdout.str()  # the counterexample, not a Python trace


def test_a_refused_board_is_a_skip_with_the_reason(pytester):
    project(pytester, 'scenarios = ["rulings"]\nboards = ["boards"]\nengine = "myengine:make"\n')
    pytester.makepyfile(
        myengine="""
        from bpcheck.engines.interface import EngineRefusal
        from bpcheck.engines.reference import ReferenceEngine

        class Mine(ReferenceEngine):
            def start(self, board):
                raise EngineRefusal("no Battle Phase yet")

        def make():
            return Mine(name="mine")
        """
    )
    pytester.syspathinsert()
    r = pytester.runpytest("-rs")
    r.assert_outcomes(skipped=2)
    r.stdout.fnmatch_lines(["*the engine refused the board: no Battle Phase yet*"])


def test_bad_configuration_is_a_usage_error(pytester):
    project(pytester, 'scenarios = "rulings"\n')
    r = pytester.runpytest()
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*pyproject.toml: tool.bpcheck.scenarios: expected a list of strings, got 'rulings'*"])
    pytester.makefile(".toml", pyproject='[tool.pytest.ini_options]\n[tool.bpcheck]\nengin = "reference"\n')
    r = pytester.runpytest()
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*tool.bpcheck.engin: unknown field*"])
    pytester.makefile(".toml", pyproject="[tool.pytest.ini_options]\n")
    r = pytester.runpytest("--bp-engine", "mutant:nope")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--bp-engine: --engine: unknown mutant 'nope'*"])


def test_without_tool_bpcheck_nothing_is_collected(pytester):
    pytester.makefile(".toml", pyproject="[tool.pytest.ini_options]\n")
    (pytester.path / "replay-1.toml").write_text(SCENARIO, encoding="utf-8")
    r = pytester.runpytest()
    assert r.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_a_malformed_scenario_is_reported_as_bad_input(pytester):
    project(pytester, 'scenarios = ["rulings"]\n')
    (pytester.path / "rulings" / "typo.toml").write_text(SCENARIO.replace('"RPL-TRIGGER"', '"RPL-TRIGGR"'), encoding="utf-8")
    r = pytester.runpytest()
    r.assert_outcomes(passed=1, failed=1)
    assert "bad input: rulings/typo.toml: rules[0]: unknown rule ID 'RPL-TRIGGR'" in r.stdout.str()


def test_the_stateful_machine_runs_against_the_configured_engine(pytester):
    project(pytester, 'engine = "mutant:fifo-chain"\n')
    pytester.makepyfile(
        test_machine="""
        from hypothesis import settings, HealthCheck, Phase

        def test_state_machine(bp):
            # no shrinking: minutes of it on the whole card pool (272 s under load), and what is
            # tested here is that the machine runs the configured engine
            bp.state_machine(settings_=settings(max_examples=40, stateful_step_count=40, deadline=None, derandomize=True,
                                                suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate]))
        """
    )
    r = pytester.runpytest("-q", "test_machine.py")
    r.assert_outcomes(failed=1)  # the mutant is caught against the reference
    r.stdout.fnmatch_lines(["mutant:fifo-chain: DIFF: *"])


def _example(marker: str) -> str:
    """The Python block after ``<!-- marker -->`` in docs/scenarios.md."""
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    block = text.split(f"<!-- {marker} -->", 1)[1]
    return block.split("```python\n", 1)[1].split("```", 1)[0]


def test_a_failure_prints_the_counterexample_once(pytester):
    project(pytester, 'scenarios = ["rulings"]\nboards = ["boards"]\nengine = "mutant:battle-phase-on-first-turn"\n')
    pytester.makepyfile(
        test_mine="""
        from bpcheck.harness.pytest_plugin import assert_board

        def test_bp_board(bp):
            bp.board("boards/first-turn.toml")

        def test_assert_board():
            from bpcheck.engines import make_engine
            assert_board("boards/first-turn.toml", make_engine("mutant:battle-phase-on-first-turn"))
        """
    )
    r = pytester.runpytest("-p", "no:randomly")
    r.assert_outcomes(passed=1, failed=3)  # the ruling passes; the collected board, bp.board and assert_board fail
    out = r.stdout.str()
    assert "During handling of the above exception" not in out and "Traceback" not in out
    # each failure shows the counterexample once: three failures, three copies
    assert out.count("violation [battle-phase-on-turn-1]: the Battle Phase was entered on turn 1") == 3, out
    assert out.count("board boards/first-turn.toml failed on mutant:battle-phase-on-first-turn") == 3, out


def test_bad_input_is_a_clean_test_failure(pytester):
    project(pytester, 'engine = "reference"\n')
    (pytester.path / "boards" / "bad.toml").write_text("turn = 2\nturn_player = 1\n[p1]\nlp = 8000\n", encoding="utf-8")
    (pytester.path / "rulings" / "typo.toml").write_text(SCENARIO.replace('"RPL-TRIGGER"', '"RPL-TRIGGR"'), encoding="utf-8")
    pytester.makepyfile(
        test_mine="""
        from bpcheck.harness.pytest_plugin import assert_scenario

        def test_board(bp):
            bp.board("boards/bad.toml")

        def test_scenario(bp):
            bp.scenario("rulings/typo.toml")

        def test_missing(bp):
            bp.board("boards/nope.toml")

        def test_helper():
            assert_scenario("rulings/typo.toml")
        """
    )
    r = pytester.runpytest("-rf")
    r.assert_outcomes(failed=4)
    out = r.stdout.str()
    for line in (
        "bad input: boards/bad.toml: p2: missing required field",
        "bad input: rulings/typo.toml: rules[0]: unknown rule ID 'RPL-TRIGGR'",
        "bad input: boards/nope.toml: no such file (a relative path is looked for beside the test file, then from the rootdir: boards/nope.toml)",
    ):
        assert line in out, out
    assert out.count("bad input: rulings/typo.toml: rules[0]: unknown rule ID 'RPL-TRIGGR'") == 2, out  # two tests, once each
    assert "Traceback" not in out and "InputError" not in out and "During handling" not in out


def test_bp_paths_resolve_from_the_test_file_then_the_rootdir_not_the_current_directory(pytester, monkeypatch):
    project(pytester, 'engine = "mutant:battle-phase-on-first-turn"\n')
    deep = pytester.path / "tests" / "deep"
    deep.mkdir(parents=True)
    (deep / "near.toml").write_text(FIRST_TURN, encoding="utf-8")  # beside the test file
    (deep / "test_paths.py").write_text(
        "def test_near(bp):\n    bp.board('near.toml')\n\n"
        "def test_from_root(bp):\n    bp.board('boards/first-turn.toml')\n\n"
        "def test_scenario_from_root(bp):\n    assert bp.scenario('rulings/replay-1.toml').status == 'pass'\n",
        encoding="utf-8",
    )
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # pytest started from another folder: the paths do not change
    r = pytester.runpytest(str(deep), "--rootdir", str(pytester.path), "-c", str(pytester.path / "pyproject.toml"))
    r.assert_outcomes(passed=1, failed=2)
    out = r.stdout.str()
    assert "board tests/deep/near.toml failed on mutant:battle-phase-on-first-turn" in out, out
    assert "board boards/first-turn.toml failed on mutant:battle-phase-on-first-turn" in out, out
    assert "no such file" not in out


def test_failures_name_the_engine_the_same_way_in_boards_and_scenarios(pytester):
    project(pytester, 'scenarios = ["rulings"]\nboards = ["boards"]\nengine = "myengine:make"\n')
    (pytester.path / "boards" / "replay-1.toml").write_text((ROOT / "boards" / "000-replay-1.toml").read_text(encoding="utf-8"), encoding="utf-8")
    pytester.makepyfile(
        myengine="""
        from bpcheck.engines.mutants import MUTANTS
        from bpcheck.engines.reference import ReferenceEngine

        def make():  # calls itself by a name of its own; the user configured `myengine:make`
            return ReferenceEngine(MUTANTS["replay-resets-count"].rules, name="my own name")
        """,
        test_mine="""
        from bpcheck.harness.pytest_plugin import assert_board, assert_scenario
        from myengine import make

        def test_bp_scenario(bp):
            bp.scenario("rulings/replay-1.toml")

        def test_bp_board(bp):
            bp.board("boards/replay-1.toml")

        def test_helpers_scenario():
            assert_scenario("rulings/replay-1.toml", make)

        def test_helpers_board():
            assert_board("boards/replay-1.toml", make)
        """,
    )
    pytester.syspathinsert()
    r = pytester.runpytest("-p", "no:randomly")
    out = r.stdout.str()
    # configured: the spec, for the collected items and the bp fixture alike
    assert out.count("(rulings/replay-1.toml) failed on myengine:make:") == 2, out  # the collected ruling and bp.scenario
    assert out.count("board boards/replay-1.toml failed on myengine:make (") == 2, out  # the collected board and bp.board
    # given an engine, no spec: its own name, for both helpers
    assert "(rulings/replay-1.toml) failed on my own name:" in out and "board boards/replay-1.toml failed on my own name (" in out, out
    assert "failed on engine" not in out


def test_the_documented_state_machine_example_runs(pytester):
    project(pytester, 'engine = "reference"\n')
    # the same draws every run, and no shrinking (minutes of it on this board pool): what is
    # tested here is the fixture's failure message, not Hypothesis' shrinker
    pytester.makeconftest(
        """
        from hypothesis import Phase, settings
        settings.register_profile("plugin-test", derandomize=True, database=None, phases=[Phase.explicit, Phase.generate])
        settings.load_profile("plugin-test")
        """
    )
    pytester.makepyfile(test_machine=_example("state-machine-example"))
    pytester.runpytest("-q", "test_machine.py").assert_outcomes(passed=1)
    r = pytester.runpytest("-q", "test_machine.py", "--bp-engine", "mutant:direct-attack-past-monsters")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "mutant:direct-attack-past-monsters: DIFF: after " in out
    assert re.search(r"engine offers 'attack Battle Ox \[P\d M\d\] -> direct'", out), out
    assert out.count("which the reference does not") == 1, out  # once (the short summary cuts the line before it)
    assert "Failing test case" in out and "board:" in out  # Hypothesis' run: the board and the steps
    assert "Traceback" not in out and "During handling" not in out and "testing.py:" not in out.split("Explanation:")[0]


def _crash_project(pytester: pytest.Pytester) -> None:
    """A project whose engine is a `cmd:` command with a path relative to the rootdir: the crash
    engine (tests/engines/crash_engine.py, a multi-line Python traceback on stderr, then a plain
    last line) and a board on which it crashes (an attack declaration)."""
    import shutil
    import sys

    engines = pytester.path / "engines"
    engines.mkdir()
    for name in ("crash_engine.py", "faulty.py"):
        shutil.copy(ROOT / "tests" / "engines" / name, engines / name)
    project(pytester, f'engine = "cmd:{Path(sys.executable).as_posix()} engines/crash_engine.py"\nboards = ["boards"]\n')
    (pytester.path / "boards" / "first-turn.toml").unlink()
    (pytester.path / "boards" / "replay-1.toml").write_text((ROOT / "boards" / "000-replay-1.toml").read_text(encoding="utf-8"), encoding="utf-8")


def test_a_cmd_engine_path_resolves_from_the_rootdir_and_a_crash_shows_its_stderr_tail(pytester, monkeypatch):
    """issue 34: a `cmd:` engine's relative path resolved from the current directory while board
    paths resolved from the rootdir; and a crash showed only its last stderr line. Started from
    another folder, the engine is found under the rootdir, and the crash's whole traceback is
    shown: its cause in the middle, not only the last line."""
    _crash_project(pytester)
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no engines/ here: a command run from here would not start
    r = pytester.runpytest(str(pytester.path / "boards"), "--rootdir", str(pytester.path), "-c", str(pytester.path / "pyproject.toml"))
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "cannot run" not in out and "No such file" not in out, out
    assert "crash: the engine exited with status 3 before answering 'apply' (stderr: crash_engine: giving up on purpose)" in out, out
    tail = [line.strip() for line in out.splitlines() if line.strip().startswith("| ")]
    assert tail[0] == "| Traceback (most recent call last):", tail
    assert any("in damage_of" in line for line in tail), tail  # the frames, not only the last line
    assert "| KeyError: \"attacker_atk: the attack record has no ATK (crash_engine's planted bug)\"" in tail, tail
    assert tail[-1] == "| crash_engine: giving up on purpose", tail
    assert f"the engine's stderr when it crashed (its last {len(tail)} lines):" in out, out
    assert "Traceback" not in out.replace("| Traceback (most recent call last):", ""), out  # no trace of bpcheck's own


def test_a_cmd_engine_runs_in_the_rootdir_from_a_subfolder_too(pytester, monkeypatch):
    """pytest started in a subfolder of the project (its rootdir found from the pyproject.toml
    above): the same engine, found the same way."""
    _crash_project(pytester)
    sub = pytester.path / "boards"
    monkeypatch.chdir(sub)
    r = pytester.runpytest(str(sub), "-c", str(pytester.path / "pyproject.toml"))
    r.assert_outcomes(failed=1)
    assert "(stderr: crash_engine: giving up on purpose)" in r.stdout.str(), r.stdout.str()
