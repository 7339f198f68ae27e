"""Every engine spec form is named wherever a user meets --engine: each command's --help, the
pytest plugin's --bp-engine, and the error for a spec bpcheck does not know (one list:
bpcheck.engines.registry.ENGINE_SPECS)."""

from __future__ import annotations

import os
import subprocess
import sys

from pathlib import Path

import pytest

from bpcheck.engines.registry import IN_PROCESS_FORMS, SPEC_FORMS
from bpcheck.explorers.progress import without_progress

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ["check", "fuzz", "scenario", "replay", "record", "prove", "sweep"]


def _bpcheck(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["COLUMNS"] = "400"  # one help entry per line: the forms are not split across lines
    return subprocess.run([sys.executable, "-m", "bpcheck", *args], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def _engine_help(out: str) -> str:
    return next(line for line in out.splitlines() if line.strip().startswith("--engine ENGINE"))


def test_the_forms_are_every_engine_make_engine_knows():
    assert SPEC_FORMS == ("reference", "mutant:NAME", "ocgcore", "ocgcore:LIB", "cmd:COMMAND", "package.module:factory")
    assert "cmd:COMMAND" not in IN_PROCESS_FORMS and len(IN_PROCESS_FORMS) == len(SPEC_FORMS) - 1


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_lists_every_engine_spec_form(command):
    r = _bpcheck(command, "--help")
    assert r.returncode == 0, r.stderr
    line = _engine_help(r.stdout)
    for form in SPEC_FORMS:
        assert form in line, (form, line)


def test_serve_help_lists_the_in_process_forms():
    line = _engine_help(_bpcheck("serve", "--help").stdout)
    for form in IN_PROCESS_FORMS:
        assert form in line, (form, line)
    assert "cmd:" not in line  # serve serves an in-process engine


@pytest.mark.parametrize("spec,problem", [("ocgcor", "unknown engine spec 'ocgcor'"), ("mutnat:fifo-chain", "cannot import 'mutnat'"), (":x", "unknown engine spec ':x'")])
def test_an_unknown_spec_is_bad_input_naming_every_form(spec, problem):
    r = _bpcheck("check", "boards/002-first-turn.toml", "--engine", spec)
    assert r.returncode == 2 and r.stdout == ""
    assert "Traceback" not in r.stderr
    (line,) = without_progress(r.stderr).splitlines()  # a progress line may come first on a loaded machine
    assert line.startswith(f"bpcheck: error: --engine: {problem}"), line
    assert line.endswith("an engine spec is reference, mutant:NAME, ocgcore, ocgcore:LIB, cmd:COMMAND or package.module:factory (docs/engines.md)"), line


def test_the_same_error_from_fuzz_and_scenario(run_cli):
    for argv in (["fuzz", "--engine", "ocgcor"], ["scenario", "scenarios/", "--engine", "ocgcor"]):
        code, _out, err = run_cli(*argv)
        assert code == 2 and "unknown engine spec 'ocgcor' (did you mean 'ocgcore'?); an engine spec is reference, mutant:NAME, ocgcore" in err, err


def test_the_pytest_option_lists_every_form(pytester):
    pytester.makefile(".toml", pyproject="[tool.pytest.ini_options]\n")
    r = pytester.runpytest("--help")
    text = " ".join(r.stdout.str().split())  # pytest wraps its help
    start = text.index("--bp-engine=SPEC")
    for form in SPEC_FORMS:
        assert form in text[start : start + 600], form
    r = pytester.runpytest("--bp-engine", "ocgcor")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--bp-engine: --engine: unknown engine spec 'ocgcor' (did you mean 'ocgcore'?); an engine spec is reference, mutant:NAME, ocgcore, ocgcore:LIB, cmd:COMMAND or package.module:factory*"])
