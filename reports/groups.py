"""Counterexamples grouped by root cause, so that one bug is shown once however many boards and
invariants it breaks (docs/reports.md, "Root causes").

Two counterexamples are one group when they were found on the same engine and

* their invariants are of one family (``invariant_family`` below; a structural property, DEADLOCK,
  CYCLE or ENGINE-FAULT, is its own family, an engine fault of each kind separately; a DIFF is of
  the family ``differential`` and also keeps its disagreement's kind and path);
* their shortest traces end in the same violating step, read from the trace alone: the kind of
  the last action (``pass``, ``attack``, ``replay``, ...) and the step of the turn before and
  after it (``battle_end_step`` -> ``end_phase``), or the initial state's step when the board
  itself breaks the invariant. This is the part of the shortest trace that boards share: the
  steps before it name each board's own cards, the step where it breaks does not;
* both are known disagreements of a baseline, or neither is;

and, on one board, two counterexamples of one family whose traces are one the start of the other
(the longer runs on past the first violation: a consequence of it) are one group too.

A violating step that also ends the duel (its state after has ``over`` true) stays where it
was instead of moving on, so its step after differs from the same bug's on boards where the duel
goes on (``pass`` in damage_step_during_calculation, not ``-> damage_step_after_calculation_1``,
where the wrong player's battle damage was lethal). It joins the group of the same family,
fault or disagreement, action kind and step before (the first such group that did not end the
duel): one bug, one root cause, whether or not it also ended the duel on some board.

Groups are numbered in the order of their first counterexample in the run (boards in the order
given, counterexamples in each board's order): that first one, a shortest trace on its board,
shows the group. Nothing here knows a rule: the key reads the counterexample's kind, the action
records and the ``step`` field of the observations.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bpcheck.reports.runs import Run

STRUCTURAL = ("DEADLOCK", "CYCLE", "ENGINE-FAULT")


@dataclass
class Member:
    run_index: int
    cex_index: int
    run: Run
    cex: Any  # bpcheck.explorers.run.Counterexample

    @property
    def board(self) -> str:
        return self.run.board


@dataclass
class Group:
    number: int  # 1, 2, ... in the order of first appearance
    key: tuple
    family: str
    where: str  # the violating step in words
    members: list[Member] = field(default_factory=list)
    page: str = ""  # --report: the stem of its page (counterexamples/STEM.html), set by the report writer

    @property
    def first(self) -> Member:
        """The counterexample that shows the group: its first in the run's order."""
        return self.members[0]

    @property
    def known(self) -> bool:
        """Every member is a known disagreement of the baseline (``--baseline``)."""
        return getattr(self.first.cex, "baselined", None) is not None

    @property
    def engine(self) -> str:
        return self.first.run.engine

    @property
    def count(self) -> int:
        return len(self.members)

    def boards(self) -> list[str]:
        """The boards it hit, in the run's order, each once."""
        return list(dict.fromkeys(m.board for m in self.members))

    def invariants(self) -> Counter:
        """Counterexamples per invariant, in the order first seen."""
        return Counter(m.cex.invariant for m in self.members)

    def title(self) -> str:
        inv = self.invariants()
        parts = ", ".join(f"{i} x{n}" if n > 1 else i for i, n in inv.items())
        nb = len(self.boards())
        return (
            f"{self.count} counterexample{'s' if self.count != 1 else ''} on {nb} board{'s' if nb != 1 else ''} "
            f"({parts}): {self.family}, {self.where}"
        )

    def to_dict(self, board_index: dict[int, int] | None = None) -> dict:
        """For ``--json``: the members as [board index, counterexample index] pairs of the
        result's ``boards`` (`board_index` maps a run index to its board index, default the same)."""
        bi = board_index or {}
        return {
            "id": self.number,
            "family": self.family,
            "where": self.where,
            "engine": self.engine,
            "known": self.known,
            "count": self.count,
            "boards": self.boards(),
            "invariants": dict(self.invariants()),
            "counterexamples": [[bi.get(m.run_index, m.run_index), m.cex_index] for m in self.members],
        }


def _families(run: Run) -> dict[str, str]:
    out = {}
    for inv in getattr(run.result, "invariants", None) or []:
        iid = getattr(inv, "id", None)
        if iid is not None:
            out[iid] = getattr(inv, "family", "") or iid
    return out


def invariant_family(invariant: str, families: dict[str, str]) -> str:
    if invariant in STRUCTURAL:
        return invariant
    if invariant == "DIFF":
        return "differential"
    return families.get(invariant) or invariant


def violating_step(cex) -> tuple:
    """(last action kind, step before, step after): where the trace breaks; (None, step, step)
    when the board itself breaks the invariant (no step)."""
    steps = getattr(cex, "steps", None) or []
    if not steps:
        init = cex.initial_observation if isinstance(cex.initial_observation, dict) else {}
        return (None, init.get("step"), init.get("step"))
    last = steps[-1]
    action = last.action if isinstance(last.action, dict) else {}
    before = last.before if isinstance(last.before, dict) else {}
    after = last.after if isinstance(last.after, dict) else {}
    return (action.get("kind"), before.get("step"), after.get("step"))


def describe_step(sig: tuple) -> str:
    kind, before, after = sig
    if kind is None:
        return f"in the initial state ({before or '?'})"
    move = f"{before or '?'}" + (f" -> {after}" if after != before else "")
    return f"at '{kind}' in {move}"


def group_key(run: Run, cex, families: dict[str, str]) -> tuple:
    """(engine, family, what tells disagreements or faults apart, violating step, known)."""
    family = invariant_family(cex.invariant, families)
    extra: tuple = ()
    if cex.invariant == "DIFF" and getattr(cex, "key", None) is not None:
        extra = tuple(str(x) for x in cex.key)
    elif cex.invariant == "ENGINE-FAULT":
        extra = (str(cex.message).split(":", 1)[0],)  # the fault's kind: crash, timeout, schema, ...
    known = getattr(cex, "baselined", None) is not None
    return (run.engine, family, extra, violating_step(cex), known)


def ended_the_duel(cex) -> bool:
    """Whether the violating step ended the duel (the state after it says ``over``)."""
    steps = getattr(cex, "steps", None) or []
    after = steps[-1].after if steps else None
    return isinstance(after, dict) and bool(after.get("over"))


def _extends(longer: list, shorter: list) -> bool:
    return len(shorter) <= len(longer) and list(longer[: len(shorter)]) == list(shorter)


def group_runs(runs: list[Run]) -> list[Group]:
    """The runs' counterexamples grouped by root cause, in order of first appearance.

    Two counterexamples are joined when they have the same key (:func:`group_key`: the same
    family breaking at the same step, on any board), or when they are of the same board, engine
    and family and one's trace starts with the other's whole trace (a shortest trace that runs
    on past the first violation: a consequence of it). Groups are what these joins connect."""
    items: list[tuple[int, int, Run, Any, tuple]] = []
    for ri, run in enumerate(runs):
        families = _families(run)
        for ci, cex in enumerate(run.counterexamples):
            items.append((ri, ci, run, cex, group_key(run, cex, families)))
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)  # the earlier one leads: numbering follows the run's order

    first_of_key: dict[tuple, int] = {}
    by_board: dict[tuple, list[int]] = {}
    for i, (ri, _ci, run, cex, key) in enumerate(items):
        if key in first_of_key:
            join(first_of_key[key], i)
        else:
            first_of_key[key] = i
        bucket = by_board.setdefault((ri, key[0], key[1], key[4]), [])
        for j in bucket:
            other = items[j][3]
            if _extends(cex.labels, other.labels) or _extends(other.labels, cex.labels):
                join(j, i)
        bucket.append(i)
    # a step that also ended the duel: with the same bug where the duel went on (module doc)
    going_on: dict[tuple, int] = {}
    for i, (_ri, _ci, _run, cex, key) in enumerate(items):
        if not ended_the_duel(cex):
            going_on.setdefault(_but_after(key), i)
    for i, (_ri, _ci, _run, cex, key) in enumerate(items):
        if ended_the_duel(cex) and _but_after(key) in going_on:
            join(going_on[_but_after(key)], i)
    groups: dict[int, Group] = {}
    for i, (ri, ci, run, cex, key) in enumerate(items):
        root = find(i)
        g = groups.get(root)
        if g is None:
            family = key[1] + (f" ({' '.join(key[2])})" if key[2] else "")
            g = groups[root] = Group(len(groups) + 1, key, family, describe_step(key[3]))
        g.members.append(Member(ri, ci, run, cex))
    return list(groups.values())


def _but_after(key: tuple) -> tuple:
    """A group key without the step after the violating one: (engine, family, extra, (kind,
    step before), known)."""
    engine, family, extra, (kind, before, _after), known = key
    return (engine, family, extra, (kind, before), known)


def membership(groups: list[Group]) -> dict[tuple[int, int], Group]:
    """(run index, counterexample index) -> its group."""
    return {(m.run_index, m.cex_index): g for g in groups for m in g.members}


def select_within(groups: list[Group], limit: int) -> set[tuple[int, int]]:
    """Which counterexamples a bound of `limit` keeps (``--max-counterexamples``): first the one
    that shows each group (new disagreements before known ones), then the others in the run's
    order (new before known), so a bound never hides a root cause while it has room for it."""
    of = membership(groups)
    firsts = [g for g in groups if not g.known] + [g for g in groups if g.known]
    order = [(g.first.run_index, g.first.cex_index) for g in firsts]
    rest = sorted(k for k in of if k not in set(order))
    order += [k for k in rest if not of[k].known] + [k for k in rest if of[k].known]
    return set(order[: max(0, limit)])


__all__ = ["Group", "Member", "describe_step", "ended_the_duel", "group_key", "group_runs", "invariant_family", "membership", "select_within", "violating_step"]
