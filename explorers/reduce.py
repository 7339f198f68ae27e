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
- an intermediate state met for the first time gets ``check_state``, ``check_actions`` and the
  DEADLOCK check, and the forced transition out of it ``check_transition``; the wrapper keeps
  the fingerprints of the intermediate states it has judged, and a chain that meets one again
  stands for the state its chain ended in (``_Known``) instead of walking on, so the
  ``checked`` / ``violations`` statistics equal the unreduced run's;
- all those verdicts are handed to the explorer as the macro transition's ``check_transition``,
  and :meth:`Reduced.claims` says which of them belong to which intermediate state. An explorer
  of several processes (explorers/parallel.py), where each process has judged only what it met,
  counts each intermediate state's verdicts once, at its first judging in the sequential order.

A chain stops (and the state is handed to the explorer, which stores and judges it) at a state
that is terminal, offers no action or more than one, or offers one that is not collapsible; at
a collapsible initial state (the explorer stores those); at a state that meets a goal; before a
forced step the inner system fails on (the explorer then meets the fault itself, with the same
message as unreduced); at a forced loop, at the loop's state with the least fingerprint (at the
first arrival there; the explorer's CYCLE detection then finds the loop); and after
:data:`MAX_CHAIN` micro-steps. All but the last depend on the states alone, never on what was
explored before, so every process folds the same chains and the result does not depend on the
worker count. (A chain cut at :data:`MAX_CHAIN` ends where its count ran out; its states are
not memoised, and a forced chain that long without a loop would need 10,000 distinct forced
states in a row.) A goal met by the events of a forced step into a state that other forced
steps also reach is the one case where one state may be stored (via that step) and folded (via
another); goals on states (a step, the end of the duel) have no such case.

Counterexamples: the explorer's traces are macro traces (one entry per decision);
:func:`micro_trail` expands one into its micro-steps, marks the forced ones, and cuts a violation
found inside a macro step at the micro-step where it arose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from bpcheck.engines.faults import SystemFault, check_stop
from bpcheck.explorers.core import DEADLOCK, FingerprintMap, Violation

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

    __slots__ = ("micro", "verdicts", "parts")

    def __init__(self, micro: list[Micro], verdicts: list, parts: list[tuple[int, int, int]] | None = None) -> None:
        self.micro = micro
        self.verdicts = verdicts
        self.parts = parts or []  # (fingerprint, start, end): the verdicts of each intermediate state judged

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
        # intermediate states judged here -> the fingerprint of the state their chain ends in, or
        # 0 when that end is not the state's own (a chain cut at max_chain; a real end with
        # fingerprint 0 only costs a walk): a chain that meets one with an end again stands for
        # that end (_Known) instead of walking on. 16 bytes an entry (one per forced state).
        self.judged = FingerprintMap()
        # states a chain ended in that are terminal or not collapsible (decisions): met again,
        # their actions need not be asked for (a cache: they would stop a chain anyway; a set,
        # probed at every forced step: a FingerprintIndex look-up costs ~3 us, a set's 0.1)
        self.decided: set[int] = set()
        self._stops: set[int] | None = None  # the collapsible initial states (stored, never folded)
        self._shared: tuple[list[int], list[int], list[int]] | None = None  # share(): memo pairs and decisions since the last call
        self.memo = True  # exploring (False after finish(): steps re-execute every chain in full)
        self.ordered = True  # see in_order()
        # the memo entries made since the current chunk of a parallel exploration began
        # (chunk_begins(); None: no chunk marked): out of order, a chain may still stand for the
        # end of an entry made before (in_order)
        self._since: set[int] | None = None
        self.micro_transitions = 0  # micro-steps taken while exploring (the decisions included)
        self.collapsed = 0  # intermediate states passed through (with repeats)
        self._fp: tuple[Any, int] | None = None  # (state, fingerprint) of the state step returned last
        self._start: tuple[Any, int] | None = None  # (collapsible state, its fingerprint) from `actions`
        # (decision state, {id(action): (action, step result, fault)}) from `actions`: looked up
        # by the action's identity in constant time (a scan per step was quadratic in the actions
        # of a state; the dict holds every action, so no id is reused while it lives)
        self._pre: tuple[Any, dict] | None = None

    def __getattr__(self, name: str) -> Any:  # board, unobserved, not_judged, ...: the inner system's
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def finish(self, res: Any) -> Any:
        """After an exploration: later steps (counterexamples, witnesses) re-execute every chain
        in full and judge nothing. Returns `res` unchanged (the statistics already equal the
        unreduced run's)."""
        self._pre = None
        self.memo = False
        return res

    def stops(self) -> set[int]:
        """The fingerprints of the initial states that are collapsible: the explorer stores them,
        so a chain that meets one ends there. Computed from the initial states alone, so every
        process agrees (explorers/parallel.py)."""
        if self._stops is None:
            out: set[int] = set()
            for s in self.inner.initial_states():
                try:
                    if not self.inner.is_terminal(s) and self.collapsible(s, self.inner.actions(s)):
                        out.add(self.inner.fingerprint(s))
                except SystemFault:
                    continue  # not a stop: the explorer meets the fault itself when it expands it
            self._stops = out
        return self._stops

    # -- TransitionSystem ------------------------------------------------------------------

    def initial_states(self):
        self.stops()
        return self.inner.initial_states()

    def actions(self, s):
        acts = self.inner.actions(s)
        if self.memo and len(acts) > 1:
            # The explorer steps every action of a decision in turn, and each step runs its chain:
            # applying them all first keeps an engine's per-state caches (legality) warm.
            pre: dict[int, tuple] = {}
            for a in acts:
                check_stop()  # a stop the explorer has not acted on for a while: leave this state now
                try:
                    pre[id(a)] = (a, self.inner.step(s, a), None)
                except SystemFault as f:
                    pre[id(a)] = (a, None, f)
            self._pre = (s, pre)
        else:
            self._pre = None
        self._start = (s, self.fingerprint(s)) if self.collapsible(s, acts) else None
        return acts

    def step(self, s, a):
        """Apply `a`, then the only action of every collapsible state after it, until a state that
        ends the chain (module doc). Where a chain ends depends on the states alone, never on what
        was explored before, so every process folds the same chains (explorers/parallel.py)."""
        inner = self.inner
        pre = self._pre
        got = None
        if pre is not None and pre[0] is s:
            got = pre[1].get(id(a))
            if got is not None and got[0] is not a:
                got = None
        if got is None:
            s2, info = inner.step(s, a)  # a fault of the decision itself: the explorer records it
        elif got[2] is not None:
            raise got[2]
        else:
            s2, info = got[1]
        exploring = self.memo
        ordered, since = self.ordered, self._since
        verdicts = list(inner.check_transition(s, a, info, s2)) if exploring else []
        micro = [Micro(s, a, info, s2)]
        judged, decided, stops = self.judged, self.decided, self.stops()
        parts: list[tuple[int, int, int]] = []  # (fingerprint, start, end in verdicts) of each state judged here
        new: list[int] = []  # the intermediate states this chain judges (their end is memoised)
        # fingerprint -> k: the state is micro[k].before (a forced loop returns to one of them)
        walked: dict[int, int] = {}
        st = self._start
        if st is not None and st[0] is s:
            walked[st[1]] = 0
        capped = False
        while True:
            fp = inner.fingerprint(s2)  # the explorer asks for it next if the chain ends here
            self._fp = (s2, fp)
            if fp in decided or fp in stops:
                break  # a state the explorer stores
            if inner.goals_reached(s2, info):
                break  # a goal is met here: the explorer stores the state (its witness ends here)
            if fp in walked:  # a forced loop: end at its state with the least fingerprint
                s2 = self._cut_loop(micro, walked, fp, verdicts, parts, new)
                break
            known = False  # judged before, earlier in the sequential order
            if exploring:
                end = judged.get(fp)
                if end is not None:
                    known = ordered or (since is not None and fp not in since)
                    if known and end:
                        # judged before, by a chain that ended where this one would: stand for its end
                        self.micro_transitions += len(micro)
                        self._memo_end(new, end)
                        return _Known(end), MacroInfo(micro, verdicts, parts)
            else:
                end = None
            try:
                if inner.is_terminal(s2):
                    self._decide(fp)
                    break
                acts = inner.actions(s2)
            except SystemFault:
                break  # handed to the explorer, which meets the fault itself
            if not self.collapsible(s2, acts):
                self._decide(fp)
                break
            if len(micro) >= self.max_chain:
                capped = True
                break
            a2 = acts[0]
            try:
                s3, info3 = inner.step(s2, a2)
            except SystemFault:
                break  # stored: the explorer meets the fault itself, as unreduced
            walked[fp] = len(micro)
            if exploring and not known:
                self.collapsed += 1
                if end is None:
                    new.append(fp)
                start = len(verdicts)
                verdicts += inner.check_state(s2)
                verdicts += inner.check_actions(s2, acts)
                verdicts.append((DEADLOCK, True))
                verdicts += inner.check_transition(s2, a2, info3, s3)
                parts.append((fp, start, len(verdicts)))
            micro.append(Micro(s2, a2, info3, s3))
            s2, info = s3, info3
        self.micro_transitions += len(micro)
        if new:
            self._memo_end(new, 0 if capped else self._fp[1])
        return s2, MacroInfo(micro, verdicts, parts)

    def _cut_loop(self, micro: list[Micro], walked: dict[int, int], fp: int, verdicts: list, parts: list, new: list) -> Any:
        """The chain has come back to a state it passed (`fp`): it is a forced loop, and every
        chain that enters it goes round it. Where it ends must not depend on where it entered, so
        it ends at the loop's state with the least fingerprint, at its first arrival there (or, if
        that is where this chain started, once round). What was judged past that point is
        dropped: the state is stored, and the chain leaving it judges the rest."""
        k0 = walked[fp]
        ring = sorted((f, k) for f, k in walked.items() if k >= k0)
        low, k = ring[0]
        if k > 0:  # the least state is an intermediate one: arrive there (micro[k - 1].after)
            del micro[k:]
            keep = [p for p in parts if walked[p[0]] < k]
            cut = keep[-1][2] if keep else (parts[0][1] if parts else len(verdicts))
            del verdicts[cut:]
            parts[:] = keep
            new[:] = [f for f in new if walked[f] < k]
        s2 = micro[-1].after
        self._fp = (s2, low)
        return s2

    def _decide(self, fp: int) -> None:
        self.decided.add(fp)
        if self._shared is not None:
            self._shared[2].append(fp)

    def _memo_end(self, fps: list[int], end: int) -> None:
        add = self.judged.add
        for f in fps:
            add(f, end)
        if self._since is not None:
            self._since.update(fps)
        sh = self._shared
        if sh is not None:
            sh[0].extend(fps)
            sh[1].extend([end] * len(fps))

    # -- sharing the memo between the processes of a parallel exploration -------------------

    def share(self) -> tuple:
        """What this process has learned since the last call: the forced states it judged with
        the state their chain ends in, and the decisions it met (explorers/parallel.py hands them
        to the other workers, whose chains then stop at them instead of walking on). Sharing
        never changes a result: a chain that stands for a known end (``_Known``) would have
        reached that same end, and the verdicts it skips were counted where they were first
        judged (in an earlier chunk, so earlier in the sequential order)."""
        sh = self._shared
        if sh is None:  # the first call: everything so far; from now on, keep what is added
            self._shared = ([], [], [])
            k, v = self.judged.pairs()
            return (k, v, np.fromiter(self.decided, np.uint64, len(self.decided)))
        fps, ends, dec = sh
        self._shared = ([], [], [])
        return (np.array(fps, np.uint64), np.array(ends, np.uint64), np.array(dec, np.uint64))

    def in_order(self, ordered: bool) -> None:
        """The explorer says whether the states it expands next come after every state expanded
        so far in the sequential order (True, the default) or may come before some
        (explorers/parallel.py: states handed over by another worker within a chunk). Out of
        order, a chain meeting a state judged before neither stands for its end (that end may
        not be known yet where the sequential run would have found it) nor skips judging it
        (this may be its first judging in the sequential order: its claim must be there for the
        owner's decision); it only adds no second memo entry. An entry made before the current
        chunk began (:meth:`chunk_begins`) is the exception: every state of the earlier chunks
        comes before every state of this one, so its end is stored and its judging counted
        where the sequential run has them, and the chain stands for it as in order."""
        self.ordered = ordered

    def chunk_begins(self) -> None:
        """The explorer of several processes begins a chunk (explorers/parallel.py): the memo
        entries made from now on are this chunk's, and only those an out-of-order chain must not
        rely on (:meth:`in_order`). Call it after :meth:`learn`: what other workers shared was
        judged in earlier chunks."""
        self._since = set()

    def learn(self, shared: tuple) -> None:
        """Take what another process shared (:meth:`share`)."""
        fps, ends, dec = shared
        if fps.size:
            fresh = np.flatnonzero(~self.judged.has_many(fps))
            add = self.judged.add
            for f, e in zip(fps[fresh].tolist(), ends[fresh].tolist()):
                add(f, e)
        if dec.size:
            self.decided.update(dec.tolist())

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
        return self.inner.check_state(s)

    def check_actions(self, s, actions):
        return self.inner.check_actions(s, actions)

    def check_transition(self, s, a, info, s2):
        if isinstance(info, MacroInfo):
            return info.verdicts
        return self.inner.check_transition(s, a, info, s2)

    @staticmethod
    def claims(info: Any) -> list[tuple[int, int, int]] | None:
        """The intermediate states a macro transition judged, as (fingerprint, start, end) into
        its ``check_transition`` verdicts: the explorer of several processes counts each state's
        verdicts once, at its first judging in the sequential order (explorers/parallel.py); the
        verdicts before the first claim are the decision's own."""
        return info.parts if isinstance(info, MacroInfo) else None

    def goals_reached(self, s, info) -> list[str]:
        return self.inner.goals_reached(s, info.last if isinstance(info, MacroInfo) else info)

    @staticmethod
    def slim_info(info: Any) -> Any:
        """What :meth:`goals_reached` needs of a step's info: the last micro-step's (an explorer
        keeping a transition's info for a while keeps this, not every state passed through)."""
        return info.last if isinstance(info, MacroInfo) else info


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
