"""What users of pytest, ruff or TLC expect of a command line (issue 34 item 4): a list of the
mutants, "did you mean" for a mistyped name, ``--version`` on every command, defaults from
``[tool.bpcheck]`` in pyproject.toml, shell completion (argcomplete, the `completion` extra)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpcheck import __version__
from bpcheck.cli.main import build_parser
from bpcheck.engines.mutants import MUTANTS
from bpcheck.explorers.progress import without_progress
from bpcheck.harness import feedback

ROOT = Path(__file__).resolve().parent.parent
BOARD = str(ROOT / "boards" / "000-replay-1.toml")


def _commands() -> list[str]:
    p = build_parser()
    (sub,) = [a for a in p._actions if a.dest == "command"]
    return list(sub.choices)


# -- bpcheck mutants --list ----------------------------------------------------------------------


def test_mutants_list_names_each_mutant_with_its_bug_one_line_each(run_cli):
    code, out, err = run_cli("mutants", "--list")
    assert code == 0 and err == "", err
    lines = out.splitlines()
    assert len(lines) == len(MUTANTS)
    for line, (name, m) in zip(lines, MUTANTS.items()):
        assert line.startswith(name + " ") and line.endswith(m.description) and m.description, line
    assert "replay-resets-count" in lines[0] and "attack bookkeeping" in lines[0]


def test_mutants_list_begins_no_progress_so_its_stderr_is_empty_under_any_load(run_cli, monkeypatch):
    """`mutants` is a long command, whose progress line comes 2 s after it began: a listing that
    took that long on a loaded machine printed one (`err == ""` above held on a quiet machine
    only). `--list` runs nothing and begins no progress (issue 34)."""
    begun = []
    real = feedback.Progress
    monkeypatch.setattr(feedback, "Progress", lambda command, **kw: begun.append(command) or real(command, **kw))
    code, out, err = run_cli("mutants", "--list")
    assert code == 0 and out and begun == []


# -- did you mean ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,said",
    [
        (("chek", BOARD), "invalid choice: 'chek' (choose from "),
        (("check", BOARD, "--invariants", "attack.cont"), "unknown invariant or family 'attack.cont' (did you mean 'attack.count' or 'attack counts'?)"),
        (("check", BOARD, "--strategy", "bsf"), "(did you mean 'bfs'?)"),
        (("mutants", "--only", "fifo-chian"), "unknown mutant(s): fifo-chian (did you mean 'fifo-chain'?)"),
        (("check", BOARD, "--engine", "mutant:fifo-chian"), "unknown mutant 'fifo-chian' (did you mean 'fifo-chain'?)"),
        (("check", BOARD, "--engine", "ocgcor"), "unknown engine spec 'ocgcor' (did you mean 'ocgcore'?)"),
        (("check", BOARD, "--engine", "mutnat:fifo-chain"), "cannot import 'mutnat' (did you mean 'mutant:fifo-chain'?)"),
    ],
)
def test_a_mistyped_name_is_bad_input_with_the_name_meant(run_cli, argv, said):
    code, out, err = run_cli(*argv)
    assert code == 2 and said in err and "Traceback" not in err, err
    if argv[0] == "chek":
        assert err.rstrip().endswith("(did you mean 'check'?)"), err


def test_a_name_close_to_nothing_gets_no_guess(run_cli):
    code, _out, err = run_cli("check", BOARD, "--invariants", "zzzz")
    assert code == 2 and "did you mean" not in err and "unknown invariant or family 'zzzz'" in err


# -- --version everywhere ---------------------------------------------------------------------------


def test_every_command_answers_version(run_cli):
    commands = _commands()
    assert {"check", "scenario", "fuzz", "mutants", "prove", "serve", "cards"} <= set(commands)
    for command in commands:
        code, out, _err = run_cli(command, "--version")
        assert (code, out) == (0, f"bpcheck {__version__}\n"), command


# -- [tool.bpcheck] --------------------------------------------------------------------------------


def _project(tmp_path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.bpcheck]\n" + body, encoding="utf-8")
    return tmp_path


def test_the_cli_takes_its_defaults_from_tool_bpcheck(run_cli, tmp_path, monkeypatch):
    sub = _project(tmp_path, 'engine = "mutant:replay-resets-count"\ninvariants = ["attack counts"]\nmax_depth = 40\n') / "deeper"
    sub.mkdir()
    monkeypatch.chdir(sub)  # the nearest pyproject.toml from here up
    code, out, err = run_cli("check", BOARD, "-q")
    assert code == 1 and out.startswith("FAIL") and "(1 board, 11 invariants)" in out, out + err
    code, out, err = run_cli("check", BOARD, "-q", "--engine", "reference", "--invariants", "attack.count")  # the command line wins
    assert code == 0 and "(1 board, 1 invariant)" in out, out + err


def test_a_path_in_tool_bpcheck_is_taken_from_its_folder(run_cli, tmp_path, monkeypatch):
    project = _project(tmp_path, 'baseline = "known.toml"\n')
    (project / "known.toml").write_text("[[known]]\nboard = 'x'\n", encoding="utf-8")  # no reason: refused, naming this file
    sub = project / "a"
    sub.mkdir()
    monkeypatch.chdir(sub)
    code, _out, err = run_cli("check", BOARD, "-q")
    assert code == 2 and str(project / "known.toml") in err, err


@pytest.mark.parametrize(
    "body,field,problem",
    [
        ("max_state = 3\n", "tool.bpcheck.max_state", "unknown key (did you mean 'max_states'?) (known: allow_skips, baseline, boards, call_timeout, "
         "cards_db, engine, invariants, jobs, max_depth, max_states, scenarios, strategy, timeout)"),
        ('max_states = "3"\n', "tool.bpcheck.max_states", "expected a whole number of at least 1, got '3'"),
        ("allow_skips = 1\n", "tool.bpcheck.allow_skips", "expected true or false, got 1"),
        ('strategy = "random"\n', "tool.bpcheck.strategy", "expected \"bfs\" or \"dfs\", got 'random'"),
        ("timeout = -1\n", "tool.bpcheck.timeout", "expected a number of seconds above 0, got -1"),
    ],
)
def test_a_bad_key_or_value_in_tool_bpcheck_is_bad_input_naming_file_and_key(run_cli, tmp_path, monkeypatch, body, field, problem):
    monkeypatch.chdir(_project(tmp_path, body))
    code, out, err = run_cli("check", BOARD)
    assert code == 2 and out == "" and without_progress(err).strip() == f"bpcheck: error: {tmp_path / 'pyproject.toml'}: {field}: {problem}", err


def test_the_pytest_plugin_accepts_the_cli_keys_and_checks_them(tmp_path):
    from bpcheck.harness.pytest_plugin import _tool_table

    table, _where = _tool_table(_project(tmp_path, 'scenarios = ["s"]\nmax_depth = 9\nallow_skips = true\n'))
    assert table["max_depth"] == 9 and table["scenarios"] == ["s"]
    with pytest.raises(pytest.UsageError, match="tool.bpcheck.max_depth: expected a whole number of at least 1, got 0"):
        _tool_table(_project(tmp_path, "max_depth = 0\n"))


def test_allow_skips_in_tool_bpcheck_and_strict_on_the_command_line(run_cli, tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        monkeypatch.chdir(_project(tmp_path, "allow_skips = true\n"))
        argv = ("check", BOARD, "--engine", "lifecycle_engines:RefusesReplayBoards", "-q")
        code, out, _err = run_cli(*argv)
        assert code == 0 and "skipped (the engine refused them)" in out
        code, out, _err = run_cli(*argv, "--strict")  # the command line wins
        assert code == 3 and "not checked: the engine refused 1 board" in out
    finally:
        sys.path.remove(str(ROOT / "tests"))


# -- shell completion --------------------------------------------------------------------------------


def test_shell_completion_completes_commands_and_options(tmp_path):
    pytest.importorskip("argcomplete", reason="argcomplete (the `completion` extra, in the `test` extra) is not installed")
    out = tmp_path / "completions"

    def complete(line: str) -> list[str]:
        env = {**os.environ, "_ARGCOMPLETE": "1", "_ARGCOMPLETE_SHELL": "bash", "COMP_LINE": line, "COMP_POINT": str(len(line)),
               "_ARGCOMPLETE_STDOUT_FILENAME": str(out), "_ARGCOMPLETE_IFS": "\n"}
        p = subprocess.run([sys.executable, "-m", "bpcheck"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return [w.strip() for w in out.read_text().split("\n") if w.strip()]

    assert complete("bpcheck che") == ["check"]
    assert complete("bpcheck check --allow") == ["--allow-skips"]
    assert "--list" in complete("bpcheck mutants --li")


def test_the_configuration_doc_lists_every_key_and_the_commands_that_take_it():
    import argparse
    import re

    from bpcheck.harness.config import KEYS, NOT_FOR, ONLY

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    rows = dict(re.findall(r"^\| `(\w+)` \| [^|]+ \| `[^`]+` \| (.+) \|$", (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8"), flags=re.M))
    assert set(rows) == {k for k, key in KEYS.items() if key.dest is not None}
    for k, key in KEYS.items():
        if key.dest is None:
            continue
        takes = [c for c, sp in sub.choices.items() if key.dest in {a.dest for a in sp._actions} and c not in NOT_FOR.get(k, ()) and c in ONLY.get(k, (c,))]
        listed = re.findall(r"`([a-z-]+)`", rows[k].split(" (")[0])
        assert listed == takes, (k, listed, takes)
