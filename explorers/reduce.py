"""Reduction: collapse chains of forced moves into one transition (it knows nothing of Yu-Gi-Oh!).

Most states of a Battle Phase offer exactly one action: a player who can only pass. Such a state
is no decision, and need not be stored, compared or shown. :class:`Reduced` wraps any
:class:`~bpcheck.explorers.core.TransitionSystem`: ``step(s, a)`` applies ``a``, then keeps
applying the only action while the state reached is *collapsible* (``collapsible(state,
actions)``, given by the binding: for engines, :func:`single_pass` — one action and it is a pass),
and returns the last state. The states passed through (the *intermediate* states) are never seen
by the explorer: not stored, not fingerprinted into its visited set, not expanded.

Every invariant still judges every micro-step, exactly once, as the unreduced explorer would:

- the first micro-transition (the decision) is judged like any transition;
- an intermediate state met for the first time (the wrapper keeps the fingerprints of the
  intermediate states it has judged) gets ``check_state``, ``check_actions`` and the DEADLOCK
  check, and the forced transition out of it ``check_transition``; an intermediate state met
  again is stepped through without judging (its verdicts are those it had, as an unreduced
  explorer would not expand a state twice), so the ``checked`` / ``violations`` statistics equal
  the unreduced run's;
- all those verdicts are handed to the explorer as the macro transition's ``check_transition``.

A chain stops (and the state is handed to the explorer, which stores and judges it) at a state
that is terminal, offers no action or more than one, or offers one that is not collapsible; at a
state the chain has already passed through (a forced loop: the explorer's own CYCLE detection
then finds it), after :data:`MAX_CHAIN` micro-steps, at a state that meets a goal not yet
reported, and before a forced step the inner system fails on (the explorer then meets the fault
itself, with the same message as unreduced).

Counterexamples: the explorer's traces are macro traces (one entry per decision);
:func:`micro_trail` expands one into its micro-steps, marks the forced ones, and cuts a violation
found inside a macro step at the micro-step where it arose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from bpcheck.explorers.core import DEADLOCK, SystemFault, Violation

MAX_CHAIN = 10_000  # forced micro-steps in one macro step at most (then the state is stored)


def single_pass(system: Any) -> Callable[[Any, Sequence[Any]], bool]:
    """The collapsible predicate for engines: the state offers exactly one action and its kind is
    ``pass``. A single action of another kind (the only attack target, a mandatory trigger, the
    only option of a choice) is not collapsed: it is a rule event a reader of a trace looks for,
    its label names a card, and it is rare (docs/checking.md, Reduction)."""
    kind = system.action_kind

    def collapsible(_s: Any, acts: Sequence[Any]) -> bool:
        return len(acts) == 1 and kind(acts[0]) == "pass"

    return collapsible


def single_action(_s: Any, acts: Sequence[Any]) -> bool:
    """Collapse any state with exactly one action (for systems without pass actions; tests)."""
    return len(acts) == 1


@dataclass
class Micro:
    """One micro-step of a macro step: `action` from `before` gave `after` with `info`."""

    before: Any
    action: Any
    info: Any
    after: Any


class MacroInfo:
    """The info of a macro transition: its micro-steps (the first is the decision, the rest are
    forced) and the verdicts every newly judged micro-step gave, in order."""

    __slots__ = ("micro", "verdicts")

    def __init__(self, micro: list[Micro], verdicts: list) -> None:
        self.micro = micro
        self.verdicts = verdicts

    @property
    def last(self) -> Any:
        return self.micro[-1].info


class _Known:
    """Stands for a state the explorer already holds (the end of a chain judged before): the
    explorer only takes its fingerprint, finds it known and records the edge."""

    __slots__ = ("fp",)

    def __init__(self, fp: int) -> None:
        self.fp = fp

    def __repr__(self) -> str:
        return f"<known state {self.fp:016x}>"


class Reduced:
    """`system` with chains of collapsible states folded into single transitions (module doc)."""

    reduced = True

    def __init__(self, system: Any, collapsible: Callable[[Any, Sequence[Any]], bool] | None = None, max_chain: int = MAX_CHAIN) -> None:
        self.inner = system
        self.collapsible = collapsible if collapsible is not None else single_pass(system)
        self.max_chain = max_chain
        # intermediate states judged here -> the fingerprint of the state their chain ended in
        # (None while the chain runs); a chain that meets one again stands for that state (_Known)
        self.judged: dict[int, int | None] = {}
        self.handed: set[int] = set()  # collapsible states handed to the explorer unjudged (it judges them)
        self.joins: set[int] = set()  # judged intermediate states met again in a forced loop: stored
        # states a chain ended in that are terminal or not collapsible (decisions): met again, their
        # actions need not be asked for (the explorer holds them)
        self.decided: set[int] = set()
        self.memo = True  # exploring (False after finish(): steps re-execute every chain in full)
        self.reported: set[str] = set()  # goals goals_reached has reported to the explorer
        self.micro_transitions = 0  # micro-steps taken while exploring (the decisions included)
        self.collapsed = 0  # intermediate states passed through (with repeats)
        self._expanded_joins: set[int] = set()
        self._fp: tuple[Any, int] | None = None  # (state, fingerprint) of the state step returned last
        self._start: tuple[Any, bool] | None = None  # (state, whether it is a judged join) from `actions`
        self._pre: tuple[Any, list] | None = None  # (decision state, [(action, step result, fault)]) from `actions`

    def __getattr__(self, name: str) -> Any:  # board, unobserved, not_judged, ...: the inner system's
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _is_join(self, s) -> bool:
        """Whether `s` (the state step returned last, or the one `actions` was asked about last) is
        a judged intermediate state handed to the explorer: its checks were made already."""
        c = self._fp
        if c is not None and c[0] is s:
            return c[1] in self.joins
        st = self._start
        return st is not None and st[0] is s and st[1]

    def finish(self, res: Any) -> Any:
        """Correct the explorer's statistics after :func:`~bpcheck.explorers.core.explore`: a join
        state's DEADLOCK check was made when it was judged as an intermediate state, and the
        explorer counts it again when it expands the state."""
        st = res.props.get(DEADLOCK)
        if st is not None:
            st.checked -= len(self._expanded_joins)
        self._expanded_joins = set()
        self._pre = None
        self.memo = False
        return res

    # -- TransitionSystem ------------------------------------------------------------------

    def initial_states(self):
        out = self.inner.initial_states()
        for s in out:
            try:
                if not self.inner.is_terminal(s) and self.collapsible(s, self.inner.actions(s)):
                    self.handed.add(self.inner.fingerprint(s))  # the explorer judges it as a stored state
            except SystemFault:
                pass  # the explorer meets the fault itself
        return out

    def actions(self, s):
        acts = self.inner.actions(s)
        if self.memo and len(acts) > 1:
            # The explorer steps every action of a decision in turn, and each step runs its chain:
            # applying them all first keeps an engine's per-state caches (legality) warm.
            pre = []
            for a in acts:
                try:
                    pre.append((a, self.inner.step(s, a), None))
                except SystemFault as f:
                    pre.append((a, None, f))
            self._pre = (s, pre)
        else:
            self._pre = None
        if self.collapsible(s, acts):
            fp = self.fingerprint(s)
            join = fp in self.joins
            if join and self.memo:
                self._expanded_joins.add(fp)
            self._start = (s, join)
        else:
            self._start = None
        return acts

    def step(self, s, a):
        inner = self.inner
        pre = self._pre
        got = None
        if pre is not None and pre[0] is s:
            got = next((x for x in pre[1] if x[0] is a), None)
        if got is None:
            s2, info = inner.step(s, a)  # a fault of the decision itself: the explorer records it
        elif got[2] is not None:
            raise got[2]
        else:
            s2, info = got[1]
        verdicts = [] if self._is_join(s) else list(inner.check_transition(s, a, info, s2))
        micro = [Micro(s, a, info, s2)]
        judged, handed, joins, decided = self.judged, self.handed, self.joins, self.decided
        exploring = self.memo
        new: list[int] = []  # the intermediate states this chain judges (their end is memoised)
        seen: set[int] = set()  # replaying: the states this chain passed through
        while True:
            fp = inner.fingerprint(s2)  # the explorer asks for it next if the chain ends here
            self._fp = (s2, fp)
            if fp in decided or fp in handed or fp in joins:
                break  # a state the explorer stores
            if exploring and fp in judged:
                end = judged[fp]
                if end is None:  # a forced loop: this state is stored from now on (CYCLE finds the loop)
                    joins.add(fp)
                    break
                # judged before, by a chain that ended in a state the explorer holds: stand for it
                self.micro_transitions += len(micro)
                self._memo_end(new, end)
                return _Known(end), MacroInfo(micro, verdicts)
            try:
                if inner.is_terminal(s2):
                    decided.add(fp)
                    break
                acts = inner.actions(s2)
            except SystemFault:
                break  # handed to the explorer, which meets the fault itself
            if not self.collapsible(s2, acts):
                decided.add(fp)
                break
            if not exploring:
                if fp in seen:
                    break
                seen.add(fp)
            elif len(micro) >= self.max_chain or self._new_goal(s2, info):
                handed.add(fp)
                break
            a2 = acts[0]
            try:
                s3, info3 = inner.step(s2, a2)
            except SystemFault:
                if exploring:
                    handed.add(fp)
                break
            if exploring:
                self.collapsed += 1
                judged[fp] = None
                new.append(fp)
                verdicts += inner.check_state(s2)
                verdicts += inner.check_actions(s2, acts)
                verdicts.append((DEADLOCK, True))
                verdicts += inner.check_transition(s2, a2, info3, s3)
            micro.append(Micro(s2, a2, info3, s3))
            s2, info = s3, info3
        self.micro_transitions += len(micro)
        if new:
            self._memo_end(new, self._fp[1])
        return s2, MacroInfo(micro, verdicts)

    def _memo_end(self, fps: list[int], end: int) -> None:
        for f in fps:
            self.judged[f] = end

    def _new_goal(self, s, info) -> bool:
        return any(g not in self.reported for g in self.inner.goals_reached(s, info))

    def is_terminal(self, s) -> bool:
        return self.inner.is_terminal(s)

    def fingerprint(self, s) -> int:
        if type(s) is _Known:
            return s.fp
        c = self._fp
        if c is not None and c[0] is s:
            return c[1]
        return self.inner.fingerprint(s)

    def action_kind(self, a) -> str:
        return self.inner.action_kind(a)

    def action_name(self, a) -> str:
        return self.inner.action_name(a)

    def check_state(self, s):
        if self._is_join(s):
            return []
        return self.inner.check_state(s)

    def check_actions(self, s, actions):
        if self._is_join(s):
            return []
        return self.inner.check_actions(s, actions)

    def check_transition(self, s, a, info, s2):
        if isinstance(info, MacroInfo):
            return info.verdicts
        return self.inner.check_transition(s, a, info, s2)

    def goals_reached(self, s, info) -> list[str]:
        got = self.inner.goals_reached(s, info.last if isinstance(info, MacroInfo) else info)
        self.reported.update(got)
        return got


# -- counterexamples ---------------------------------------------------------------------------


def _fails(verdict: Any, prop: str, want_prop: str, key: Any) -> bool:
    return prop == want_prop and verdict is not None and verdict is not True and getattr(verdict, "key", None) == key


def locate(system: Reduced, macro: MacroInfo, prop: str, key: Any) -> tuple[int, str] | None:
    """Where in `macro` the violation (prop, key) first arises, judging every micro-step again:
    (number of micro-steps to keep, "transition" / "state" / "actions"), or None."""
    inner = system.inner
    for j, m in enumerate(macro.micro):
        if j > 0:  # m.before is an intermediate state
            if any(_fails(v, p, prop, key) for p, v in inner.check_state(m.before)):
                return j, "state"
            if any(_fails(v, p, prop, key) for p, v in inner.check_actions(m.before, [m.action])):
                return j, "actions"
        if any(_fails(v, p, prop, key) for p, v in inner.check_transition(m.before, m.action, m.info, m.after)):
            return j + 1, "transition"
    return None


def micro_trail(system: Reduced, v: Violation) -> tuple[list[tuple[Any, Any, Any]], list[bool], str, int | None]:
    """A macro trace re-executed as micro-steps: ``(trail, forced, at, cycle_start)``, the trail
    in :func:`~bpcheck.explorers.core.replay_trace`'s form over the inner system's states,
    ``forced[k]`` whether step k was forced (not a decision), `at` where the violation arose and
    the cycle start as a micro-step index. A transition violation is cut at its micro-step."""
    s = system.initial_states()[v.initial]
    trail: list[tuple[Any, Any, Any]] = []
    forced: list[bool] = []
    at = v.at
    cycle_start = None
    for k, ai in enumerate(v.trace):
        if v.cycle_start is not None and k == v.cycle_start:
            cycle_start = len(trail)
        a = system.actions(s)[ai]
        try:
            s2, macro = system.step(s, a)
        except SystemFault as f:
            if k != len(v.trace) - 1:
                raise
            trail.append((s, a, f))
            forced.append(False)
            break
        micro = macro.micro
        if k == len(v.trace) - 1 and v.at == "transition":
            where = locate(system, macro, v.prop, v.key)
            if where is not None:
                micro = micro[: where[0]]
                at = where[1]
        for j, m in enumerate(micro):
            trail.append((m.before, m.action, m.info))
            forced.append(j > 0)
        s = micro[-1].after
    if v.cycle_start is not None and cycle_start is None:
        cycle_start = len(trail)
    trail.append((s, None, None))
    return trail, forced, at, cycle_start


def expand_witness(system: Reduced, initial: int, trace: Sequence[int]) -> list[Any]:
    """A goal's macro witness as the micro actions it takes."""
    s = system.initial_states()[initial]
    out = []
    for ai in trace:
        s, macro = system.step(s, system.actions(s)[ai])
        out.extend(m.action for m in macro.micro)
    return out


__all__ = ["MAX_CHAIN", "MacroInfo", "Micro", "Reduced", "expand_witness", "locate", "micro_trail", "single_action", "single_pass"]
