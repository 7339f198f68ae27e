"""Stateful differential testing of an engine with Hypothesis (docs/fuzzing.md).

:func:`engine_state_machine` builds a :class:`hypothesis.stateful.RuleBasedStateMachine` that
drives an engine under test and the reference model in lockstep from a drawn board
(:mod:`bpcheck.harness.strategies`). Its one rule picks an action the engine offers and plays it on both;
after every step the machine compares

- the offered actions (by label) of the engine and of the reference,
- the observations (minus the paths the engine declares it does not observe:
  :func:`bpcheck.engines.interface.capabilities_of` ``(engine).unobserved``),
- the events, and whether each side says the state is terminal,

and runs every invariant on the step: the engine side is an
:class:`~bpcheck.explorers.checking.EngineSystem`, whose ``check_state`` / ``check_transition`` /
``check_actions`` judge it (with any monitors it keeps), exactly as in `bpcheck check`.
Hypothesis shrinks a failing run to a short action sequence on a small board; the failure message
shows the board as a board file and the actions played.

From a user's tests, two lines::

    import bpcheck.harness.testing
    TestMyEngine = bpcheck.harness.testing.engine_state_machine(make_engine).TestCase

``make_engine`` is a callable returning a fresh engine (docs/engines.md), or an engine spec string
as ``--engine`` takes (``mutant:NAME``, ``cmd:COMMAND``, ``package.module:factory``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from hypothesis import HealthCheck, note, reject, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from bpcheck.engines import make_engine
from bpcheck.engines.faults import SystemFault
from bpcheck.engines.interface import EngineRefusal, capabilities_of
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.differential import actions_disagreement, diff_lines, obs_diff, transition_disagreement
from bpcheck.harness.board_writer import board_toml, document_board
from bpcheck.harness.strategies import board_documents
from bpcheck.invariants import select

DEFAULT_STEPS = 100  # a Battle Phase on a small board is 20-60 actions
DEFAULT_EXAMPLES = 100


class MachineFailure(AssertionError):
    """What the machine found wrong with the engine (one of the three below)."""


class InvariantViolated(MachineFailure):
    """An invariant of the library does not hold on the engine's step."""


class EngineDisagrees(MachineFailure):
    """The engine under test and the reference model disagree (DIFF)."""


class EngineFault(MachineFailure):
    """The engine crashed, hung or answered malformed data (ENGINE-FAULT)."""


def strip_paths(obs: Any, paths: Sequence[str]) -> Any:
    """A copy of ``obs`` without the observation paths an engine declares it does not provide,
    in the syntax of :class:`~bpcheck.engines.interface.Capabilities`: ``lingering``,
    ``players[].monsters[].modifiers`` (``[]``: every element of a list; empty zones are
    skipped)."""
    if not paths:
        return obs
    out = _copy(obs)
    for p in paths:
        _drop(out, [seg for seg in p.split(".") if seg])
    return out


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _drop(v: Any, segs: list[str]) -> None:
    if not segs or not isinstance(v, dict):
        return
    head, rest = segs[0], segs[1:]
    every = head.endswith("[]")
    key = head[:-2] if every else head
    if key not in v:
        return
    if not rest:
        del v[key]
        return
    if every:
        for item in v[key] if isinstance(v[key], list) else ():
            _drop(item, rest)
    else:
        _drop(v[key], rest)


def _factory(engine: Callable[[], Any] | str | None) -> tuple[Callable[[], Any], str]:
    if engine is None or isinstance(engine, str):
        spec = engine or "reference"
        make_engine(spec)  # bad specs fail here, when the machine is made, not inside Hypothesis
        return (lambda: make_engine(spec)), spec
    if not callable(engine):
        raise TypeError(f"engine_state_machine expects an engine factory (a callable) or an engine spec string, got {engine!r}")
    return engine, getattr(engine, "__name__", "engine")


def _violations(results) -> list[str]:
    return [f"{pid}: {verdict}" for pid, verdict in results if verdict is not None and verdict is not True]


def engine_state_machine(
    engine: Callable[[], Any] | str | None = None,
    *,
    invariants: Sequence | str | None = None,
    cards: Sequence[str] | None = None,
    reference: Callable[[], Any] = ReferenceEngine,
    differential: bool = True,
    max_examples: int = DEFAULT_EXAMPLES,
    steps: int = DEFAULT_STEPS,
    **board_options: Any,
) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class testing ``engine`` (a factory or a spec string; default the
    reference model) against ``reference`` and the invariants (``invariants``: a list of
    :class:`~bpcheck.invariants.base.Invariant`, IDs/families as ``--invariants`` takes, or all).
    ``cards`` and ``board_options`` go to :func:`bpcheck.harness.strategies.board_documents`.
    ``differential=False`` checks the invariants only. Its ``TestCase`` runs ``max_examples`` runs
    of at most ``steps`` actions each (override with ``TestCase.settings``)."""
    make, engine_name = _factory(engine)
    invs = select(invariants) if invariants is None or isinstance(invariants, str) else list(invariants)
    boards = board_documents(cards, **board_options)

    class EngineMachine(RuleBasedStateMachine):
        last_board: dict | None = None  # the board document of the last run started

        def __init__(self) -> None:
            super().__init__()
            self.system: EngineSystem | None = None
            self.s = None
            self.done = False
            self.actions: list = []
            self.steps = 0

        # -- helpers -----------------------------------------------------------------------

        def _fault(self, f: SystemFault, what: str):
            raise EngineFault(f"ENGINE-FAULT: {f.kind}: {f.message} ({what}, after {self.steps} steps)")

        def _check(self, results, what: str) -> None:
            bad = _violations(results)
            if bad:
                raise InvariantViolated(f"{what}: " + "; ".join(bad))

        def _obs(self, obs: dict) -> dict:
            return strip_paths(obs, self.unobserved)

        def _offer(self) -> None:
            """The actions of the current state: checked, compared, kept for the next step."""
            sysm, s = self.system, self.s
            try:
                terminal = bool(sysm.is_terminal(s))
            except SystemFault as f:
                self._fault(f, "is_terminal")
            if differential:
                ref_t = bool(self.ref.is_terminal(self.ref_s))
                if terminal != ref_t:
                    who = "engine" if terminal else "reference"
                    raise EngineDisagrees(f"DIFF: after {self.steps} steps the {who} says the state is terminal and the other does not")
            if terminal:
                self.done, self.actions = True, []
                return
            try:
                acts = sysm.actions(s)
            except SystemFault as f:
                self._fault(f, "legal_actions")
            if not acts:
                raise InvariantViolated(f"DEADLOCK: a non-terminal state offers no action (after {self.steps} steps)")
            self._check(sysm.check_actions(s, acts), f"the actions offered after {self.steps} steps")
            if differential:
                self.ref_actions = {a.label: a for a in self.ref.legal_actions(self.ref_s)}
                d = actions_disagreement([a.label for a in acts], list(self.ref_actions))
                if d:
                    raise EngineDisagrees(f"DIFF: after {self.steps} steps, {d}")
            self.actions = acts

        # -- the machine ---------------------------------------------------------------------

        @initialize(doc=boards)
        def start(self, doc: dict) -> None:
            type(self).last_board = doc  # after a failure: the (shrunk) board of the run reported
            note("board:\n" + board_toml({k: v for k, v in doc.items() if k != "card"}))
            board = document_board(doc)
            eng = make()
            self.unobserved = tuple(sorted(capabilities_of(eng).unobserved))
            if differential and capabilities_of(eng).implicit_passes:
                raise NotImplementedError(
                    "bpcheck.harness.testing: engines that pass implicitly (implicit_passes) cannot be compared step by step yet; "
                    "use differential=False, or `bpcheck check --differential`"
                )
            try:
                self.system = EngineSystem(eng, board, invs)
                self.s = self.system.initial_states()[0]
            except EngineRefusal:
                reject()  # the engine cannot play this board: draw another (never a failure)
            except SystemFault as f:
                self._fault(f, "start")
            if differential:
                self.ref = reference()
                self.ref_s = self.ref.start(board)
                d = obs_diff(self._obs(self.s[1]), self._obs(self.ref.observe(self.ref_s)))
                if d:
                    raise EngineDisagrees("DIFF: the initial observations differ: " + "; ".join(diff_lines(d, limit=6)))
            self._check(self.system.check_state(self.s), "the initial state")
            self._offer()

        @rule(data=st.data())
        def play(self, data) -> None:
            if self.done or self.system is None:
                return  # the Battle Phase is over: nothing more to play
            a = data.draw(st.sampled_from(self.actions), label="action")
            note(f"step {self.steps + 1}: {a.label}")
            sysm, s = self.system, self.s
            try:
                s2, info = sysm.step(s, a)
            except SystemFault as f:
                self._fault(f, f"apply {a.label!r}")
            self.steps += 1
            if differential:
                r2, rev = self.ref.apply(self.ref_s, self.ref_actions[a.label])
                events = [e.to_dict() for e in info]
                ref_events = [e.to_dict() for e in rev]
                d = transition_disagreement(a.label, self._obs(s2[1]), self._obs(self.ref.observe(r2)), events, ref_events)
                if d:
                    raise EngineDisagrees(f"DIFF: step {self.steps}: {d}")
                self.ref_s = r2
            self._check(sysm.check_transition(s, a, info, s2), f"step {self.steps} ({a.label!r})")
            self._check(sysm.check_state(s2), f"the state after step {self.steps} ({a.label!r})")
            self.s = s2
            self._offer()

    EngineMachine.__name__ = EngineMachine.__qualname__ = f"EngineMachine[{engine_name}]"
    EngineMachine.TestCase.settings = machine_settings(max_examples, steps)
    return EngineMachine


def machine_settings(max_examples: int = DEFAULT_EXAMPLES, steps: int = DEFAULT_STEPS, **kw: Any) -> settings:
    """Settings for the machine on top of the current profile (``ci`` under CI, when loaded)."""
    base = dict(
        max_examples=max_examples,
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    base.update(kw)
    return settings(**base)


def run_engine_state_machine(engine: Callable[[], Any] | str | None = None, *, settings_: settings | None = None, **kw: Any) -> None:
    """Run the machine once as a test (raises the shrunk failure): what the pytest plugin's
    ``--bp-engine SPEC`` calls, ``run_engine_state_machine(SPEC)``."""
    machine = engine_state_machine(engine, **kw)
    run_state_machine_as_test(machine, settings=settings_ or machine.TestCase.settings)


__all__ = [
    "EngineDisagrees",
    "EngineFault",
    "InvariantViolated",
    "MachineFailure",
    "engine_state_machine",
    "machine_settings",
    "run_engine_state_machine",
    "strip_paths",
]
