"""bpcheck's pytest plugin (entry point ``pytest11``: installed with bpcheck, on in every pytest run).

It judges *your* engine from your own test suite (docs/scenarios.md, "pytest"):

- collects the scenario files and board files named in ``[tool.bpcheck]`` of your
  pyproject.toml (``scenarios = ["rulings"]``, ``boards = ["boards"]``): each scenario file is one
  test (a ruling played on the engine), each board one test (``bpcheck check`` of that board:
  every reachable state, every invariant); without that table it collects nothing;
- runs them against ``--bp-engine SPEC`` (or ``engine = "..."`` in ``[tool.bpcheck]``; default the
  reference model), any spec ``--engine`` takes (``bpcheck.engines.registry.ENGINE_SPECS``);
- gives fixtures: ``bp_engine_spec`` (the spec), ``bp_make_engine`` (a factory: each call, a fresh
  engine), ``bp_engine`` (one fresh engine for the test, closed after it), ``bp`` (the helpers
  below bound to the engine);
- and helpers that fail a test with the counterexample text: :func:`assert_scenario`,
  :func:`assert_board`. A board the engine refuses (``EngineRefusal``) is a skip with the
  engine's reason, never a pass.

Stateful differential testing takes the factory: ``bpcheck.harness.testing.engine_state_machine(
bp_make_engine)`` (Hypothesis; see docs/scenarios.md).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Callable

import pytest

from bpcheck.engines import make_engine
from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.registry import engine_help
from bpcheck.errors import InputError
from bpcheck.explorers.core import Bounds
from bpcheck.explorers.run import check_board
from bpcheck.harness.config import KEYS as CLI_KEYS
from bpcheck.harness.scenarios import load_scenario, run_scenario
from bpcheck.harness.testing import MachineFailure, run_engine_state_machine
from bpcheck.invariants import select
from bpcheck.model.board import load_board
from bpcheck.reports.text import counterexample_text

CONFIG_KEYS = {"engine": str, "scenarios": list, "boards": list, "invariants": list, "max_states": int}
DEFAULT_MAX_STATES = 200_000


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bpcheck", "bpcheck: rulings and boards against an engine")
    group.addoption(
        "--bp-engine",
        metavar="SPEC",
        default=None,
        help=engine_help("the engine bpcheck's scenarios, boards and fixtures use (else [tool.bpcheck] engine in pyproject.toml)"),
    )


class _Settings:
    def __init__(self, config: pytest.Config) -> None:
        self.root = Path(config.rootpath)
        table, where = _tool_table(self.root)
        self.where = where
        self.engine: str = config.getoption("--bp-engine") or table.get("engine") or "reference"
        self.scenarios = [(self.root / p).resolve() for p in table.get("scenarios", [])]
        self.boards = [(self.root / p).resolve() for p in table.get("boards", [])]
        self.invariants: list[str] | None = table.get("invariants")
        self.max_states: int = table.get("max_states", DEFAULT_MAX_STATES)

    def make_engine(self):
        """A fresh engine; a ``cmd:`` engine's command runs in the rootdir, so its relative paths
        are taken from there, as the board and scenario paths are (docs/scenarios.md, "pytest")."""
        return make_engine(self.engine, cwd=str(self.root))


def _tool_table(root: Path) -> tuple[dict, str]:
    """``[tool.bpcheck]`` of the pyproject.toml at the rootdir, checked (`file: field: problem`)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}, str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise pytest.UsageError(f"{path}: cannot read it: {e}") from None
    table = data.get("tool", {}).get("bpcheck", {})
    if not isinstance(table, dict):
        raise pytest.UsageError(f"{path}: tool.bpcheck: expected a table")
    for k, v in table.items():
        if k not in CONFIG_KEYS and k in CLI_KEYS:  # the command line's default (harness/config.py): checked, not used here
            if not CLI_KEYS[k].check(v):
                raise pytest.UsageError(f"{path}: tool.bpcheck.{k}: expected {CLI_KEYS[k].kind}, got {v!r}")
            continue
        if k not in CONFIG_KEYS:
            raise pytest.UsageError(f"{path}: tool.bpcheck.{k}: unknown field (allowed: {', '.join(sorted(CLI_KEYS))})")
        typ = CONFIG_KEYS[k]
        if not isinstance(v, typ) or isinstance(v, bool):
            raise pytest.UsageError(f"{path}: tool.bpcheck.{k}: expected {'a string' if typ is str else 'a list of strings' if typ is list else 'a whole number'}, got {v!r}")
        if typ is list and not all(isinstance(x, str) for x in v):
            raise pytest.UsageError(f"{path}: tool.bpcheck.{k}: expected a list of strings, got {v!r}")
        if k == "max_states" and v < 1:
            raise pytest.UsageError(f"{path}: tool.bpcheck.max_states: must be at least 1, got {v}")
    return table, str(path)


_KEY = pytest.StashKey["_Settings"]()


def pytest_configure(config: pytest.Config) -> None:
    settings = _Settings(config)

    try:  # a bad --bp-engine is a usage error before anything is collected
        engine = settings.make_engine()
    except InputError as e:
        raise pytest.UsageError(f"--bp-engine: {e.render()}") from None
    _close(engine)
    config.stash[_KEY] = settings


def pytest_report_header(config: pytest.Config) -> str | None:
    s = config.stash.get(_KEY, None)
    if s is None or not (s.scenarios or s.boards):
        return None
    def show(paths: list[Path]) -> str:
        return ", ".join(_display(config, p) for p in paths) or "-"

    return f"bpcheck: engine {s.engine}; scenarios {show(s.scenarios)}; boards {show(s.boards)}"


def _under(path: Path, roots: list[Path]) -> bool:
    p = path.resolve()
    return any(p == r or r in p.parents for r in roots)


def pytest_collect_file(parent: pytest.Collector, file_path: Path):
    if file_path.suffix != ".toml":
        return None
    s: _Settings = parent.config.stash[_KEY]
    if _under(file_path, s.scenarios):
        return ScenarioFile.from_parent(parent, path=file_path)
    if _under(file_path, s.boards):
        return BoardFile.from_parent(parent, path=file_path)
    return None


def _close(engine: Any) -> None:
    close = getattr(engine, "close", None)
    if callable(close):
        close()


def _display(config: pytest.Config, path: Path) -> str:
    try:
        return str(path.relative_to(config.rootpath))
    except ValueError:
        return str(path)


class BpFailure(Exception):
    """A scenario or board failed: the message is the counterexample text."""


class _BpItem(pytest.Item):
    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, BpFailure):
            return str(excinfo.value)
        if isinstance(excinfo.value, InputError):
            return f"bad input: {excinfo.value.render()}"
        return super().repr_failure(excinfo)


class ScenarioFile(pytest.File):
    def collect(self):
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioItem(_BpItem):
    def runtest(self) -> None:
        s: _Settings = self.config.stash[_KEY]
        run_scenario_file(self.path, s.make_engine, _display(self.config, self.path), s.engine)

    def reportinfo(self):
        return self.path, 0, f"scenario: {self.name}"


class BoardFile(pytest.File):
    def collect(self):
        yield BoardItem.from_parent(self, name=self.path.stem)


class BoardItem(_BpItem):
    def runtest(self) -> None:
        s: _Settings = self.config.stash[_KEY]
        check_board_file(self.path, s.make_engine, _display(self.config, self.path), s.invariants, s.max_states, s.engine)

    def reportinfo(self):
        return self.path, 0, f"board: {self.name}"


# ---------------------------------------------------------------------------------------------
# The helpers (usable from any test; the `bp` fixture binds them to the configured engine)


def _engine_name(engine: Any, engine_name: str | None) -> str:
    """How a failure names the engine, the same for scenarios and boards: the spec when there is
    one (what the user configured: ``--bp-engine``, ``[tool.bpcheck] engine``), else the engine's
    own ``name``."""
    return engine_name or getattr(engine, "name", None) or "engine"


def run_scenario_file(path: Path | str, make_engine: Callable[[], Any], display: str | None = None, engine_name: str | None = None):
    """Play one scenario file on a fresh engine; raise :class:`BpFailure` with the counterexample
    text when it fails, skip when the engine refuses the board. Returns the result. The failure
    names the engine ``engine_name`` (default: the engine's ``name``), as :func:`check_board_file`
    does."""
    sc = load_scenario(path, display or str(path))
    engine = make_engine()
    try:
        res = run_scenario(sc, engine)
        res.engine = _engine_name(engine, engine_name)
    finally:
        _close(engine)
    if res.status == "skipped":
        pytest.skip(f"{res.path}: the engine refused the board: {res.reason}")
    if res.status != "pass":
        raise BpFailure(res.counterexample())
    return res


def check_board_file(
    path: Path | str,
    make_engine: Callable[[], Any],
    display: str | None = None,
    invariants: list[str] | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    engine_name: str | None = None,
):
    """`bpcheck check` of one board file on a fresh engine; raise :class:`BpFailure` with the
    counterexamples' text on a violation or when a bound is hit (inconclusive is not a pass);
    skip when the engine refuses the board. Returns the :class:`BoardResult`. The failure names
    the engine ``engine_name`` (default: the engine's ``name``)."""
    board = load_board(path, display or str(path))
    try:
        invs = select(invariants)
    except KeyError as e:
        raise InputError("tool.bpcheck.invariants", "", f"unknown invariant or family {e.args[0]!r}") from None
    engine = make_engine()
    engine_name = _engine_name(engine, engine_name)
    try:
        br = check_board(board, engine, invs, "bfs", Bounds(max_states=max_states), engine_name, progress=False)
    except EngineRefusal as e:
        pytest.skip(f"{board.path}: the engine refused the board: {e.reason}")
    finally:
        _close(engine)
    if br.verdict == "skipped":  # check_board reports a refusal as a skipped board
        pytest.skip(f"{board.path}: the engine refused the board: {br.skip_reason}")
    r = br.result
    if br.counterexamples:
        text = "\n\n".join(counterexample_text(c) for c in br.counterexamples)
        raise BpFailure(f"board {board.path} failed on {engine_name} ({r.states} states):\n{text}")
    if r.status != "pass":
        raise BpFailure(f"board {board.path} is inconclusive on {engine_name}: bound hit ({r.bound_hit}) after {r.states} states; raise [tool.bpcheck] max_states")
    return br


def _or_fail(run: Callable[[], Any]) -> Any:
    """``run()``, or the calling test failed with one message and no Python trace: the
    counterexample (:class:`BpFailure`), or ``bad input: file: field: problem`` for a malformed
    board or scenario (:class:`~bpcheck.errors.InputError`). The test is failed *after* the
    ``except`` block, so pytest shows no chained "During handling of the above exception" and
    no second copy of the message."""
    try:
        return run()
    except BpFailure as e:
        message = str(e)
    except InputError as e:
        message = f"bad input: {e.render()}"
    pytest.fail(message, pytrace=False)


def assert_scenario(path: Path | str, engine: Any = None):
    """Fail the calling test with the counterexample text unless the scenario passes on
    `engine` (an engine object, a factory, or None: the reference model). A relative `path` is
    taken from the current directory (the `bp` fixture's from the test file or the rootdir)."""
    make = _factory(engine)
    return _or_fail(lambda: run_scenario_file(path, make))


def assert_board(path: Path | str, engine: Any = None, invariants: list[str] | None = None, max_states: int = DEFAULT_MAX_STATES):
    """Fail the calling test with the counterexamples' text unless `bpcheck check` passes the
    board on `engine` (an engine object, a factory, or None: the reference model). A relative
    `path` is taken from the current directory (the `bp` fixture's from the test file or the
    rootdir)."""
    make = _factory(engine)
    return _or_fail(lambda: check_board_file(path, make, None, invariants, max_states))


def _factory(engine: Any) -> Callable[[], Any]:
    if engine is None:
        return lambda: make_engine("reference")
    if callable(engine) and not hasattr(engine, "legal_actions"):
        return engine
    return lambda: _Unclosed(engine)


class _Unclosed:
    """An engine the caller owns: the helpers use it but do not close it."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        if name == "close":
            raise AttributeError(name)
        return getattr(self._engine, name)


class BpHelpers:
    """The `bp` fixture: the helpers bound to the configured engine factory.

    A relative path is looked for beside the test file first, then from the rootdir (where
    ``[tool.bpcheck]`` paths start), never from the current directory: the same test passes
    whichever directory pytest runs from. Failures name the engine by its spec, as the collected
    scenario and board tests do."""

    def __init__(self, make_engine: Callable[[], Any], spec: str, test_dir: Path | None = None, root: Path | None = None) -> None:
        self.make_engine = make_engine
        self.spec = spec
        self.test_dir = test_dir
        self.root = root

    def path(self, path: Path | str) -> tuple[Path, str]:
        """Where a path given to :meth:`scenario` or :meth:`board` is, and how messages show it
        (from the rootdir when under it). Bad input when it is in neither place."""
        p = Path(path)
        bases = [b for b in (self.test_dir, self.root) if b is not None]
        if p.is_absolute() or not bases:
            found = p
        else:
            found = next((b / p for b in bases if (b / p).exists()), None)
            if found is None:
                tried = " and ".join(dict.fromkeys(_shown(b / p, self.root) or str(b / p) for b in bases))
                raise InputError(str(path), "", f"no such file (a relative path is looked for beside the test file, then from the rootdir: {tried})")
        return found, _shown(found, self.root) or str(found)

    def scenario(self, path: Path | str):
        """Play the scenario file on a fresh engine; fail the test with what the engine did."""

        def run():
            p, display = self.path(path)
            return run_scenario_file(p, self.make_engine, display, self.spec)

        return _or_fail(run)

    def board(self, path: Path | str, invariants: list[str] | None = None, max_states: int = DEFAULT_MAX_STATES):
        """`bpcheck check` of the board file; fail the test with the counterexamples."""

        def run():
            p, display = self.path(path)
            return check_board_file(p, self.make_engine, display, invariants, max_states, self.spec)

        return _or_fail(run)

    def state_machine(self, **kw: Any) -> None:
        """Stateful differential testing of the configured engine against the reference model on
        random boards (bpcheck.harness.testing, docs/fuzzing.md); Hypothesis shrinks a failing run, and
        the test fails with the machine's message, the shrunk board and the steps played, once."""
        failure = None
        try:
            run_engine_state_machine(self.make_engine, **kw)
        except MachineFailure as e:
            failure = "\n".join([f"{self.spec}: {e}", *getattr(e, "__notes__", ())])
        if failure is not None:
            pytest.fail(failure, pytrace=False)


def _shown(path: Path, root: Path | None) -> str | None:
    """`path` relative to the rootdir, or None when it is not under it."""
    if root is None:
        return None
    try:
        rel = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return rel.as_posix() if str(rel) != "." else "."


@pytest.fixture(scope="session")
def bp_engine_spec(pytestconfig: pytest.Config) -> str:
    """The engine spec (--bp-engine, [tool.bpcheck] engine, or "reference")."""
    return pytestconfig.stash[_KEY].engine


@pytest.fixture(scope="session")
def bp_make_engine(pytestconfig: pytest.Config) -> Callable[[], Any]:
    """A factory: each call returns a fresh engine for the configured spec. This is what
    stateful testing takes: ``bpcheck.harness.testing.engine_state_machine(bp_make_engine)``."""
    return pytestconfig.stash[_KEY].make_engine


@pytest.fixture
def bp_engine(bp_make_engine):
    """One fresh engine for this test (the engine interface: start, legal_actions, apply,
    observe, is_terminal), closed after it."""
    engine = bp_make_engine()
    yield engine
    _close(engine)


@pytest.fixture
def bp(request: pytest.FixtureRequest, bp_make_engine, bp_engine_spec) -> BpHelpers:
    """``bp.scenario(path)``, ``bp.board(path)`` and ``bp.state_machine(...)``: fail the test with
    the counterexample. Relative paths: beside the test file, else from the rootdir."""
    return BpHelpers(bp_make_engine, bp_engine_spec, Path(request.path).parent, Path(request.config.rootpath))
