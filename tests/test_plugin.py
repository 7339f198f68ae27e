"""bpcheck's pytest plugin (cli/pytest_plugin.py, entry point pytest11), run on user projects
made with pytester (docs/scenarios.md, "pytest")."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
BOARD = (ROOT / "boards" / "000-replay-1.toml").as_posix()
SCENARIO = (ROOT / "scenarios" / "000-replay-1.toml").read_text(encoding="utf-8").replace("../boards/000-replay-1.toml", BOARD)
FIRST_TURN = (ROOT / "boards" / "002-first-turn.toml").read_text(encoding="utf-8")


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
        from bpcheck.pytest_plugin import assert_scenario

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
        from hypothesis import settings, HealthCheck

        def test_state_machine(bp):
            bp.state_machine(settings_=settings(max_examples=40, stateful_step_count=40, deadline=None, derandomize=True,
                                                suppress_health_check=list(HealthCheck)))
        """
    )
    r = pytester.runpytest("-q", "test_machine.py")
    r.assert_outcomes(failed=1)  # the mutant is caught against the reference
