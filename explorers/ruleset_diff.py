"""``bpcheck diff-rulesets``: the shortest line of play after which two rulesets differ.

A breadth-first search over *pairs* of reference-model states, one under ruleset A and one under
ruleset B, in lockstep from the board's initial state (as :mod:`bpcheck.explorers.differential`
explores an engine beside the reference model). In every pair it compares the actions the two
offer (by label) and the observations (the whole JSON snapshot, docs/model.md: the step, the
cards, the LP, the outcome); while they agree, every action both offer is applied on both sides.
The first disagreement found is on a shortest line of play (breadth first, actions in the
model's order): a :class:`RulesetDiff` with the line and what differs. None within the bound
means the board cannot tell the two rulesets apart (exhaustively, unless the bound was hit).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace

from bpcheck.explorers.differential import card_namer, diff_lines, obs_diff
from bpcheck.model.board import Board
from bpcheck.model.observe import observe
from bpcheck.model.rulesets import ruleset_class


@dataclass
class RulesetDiff:
    """The outcome of one search: ``line`` (the action labels played, the same on both sides)
    and ``differences`` (what differs after it; empty: no difference found), with the counts."""

    board: str
    a: str
    b: str
    line: list[str] = field(default_factory=list)
    kind: str = ""  # "actions" (they offer different actions) or "state" (different observations)
    differences: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # where each action of the line was played
    pairs: int = 0  # pairs of states explored
    bound_hit: bool = False

    @property
    def found(self) -> bool:
        return bool(self.differences)

    def to_dict(self) -> dict:
        return {
            "board": self.board,
            "a": self.a,
            "b": self.b,
            "difference": self.found,
            "kind": self.kind or None,
            "line": self.line,
            "differences": self.differences,
            "pairs": self.pairs,
            "bound_hit": self.bound_hit,
        }


def _actions_difference(la: list[str], lb: list[str], a: str, b: str) -> list[str]:
    sa, sb = set(la), set(lb)
    out = []
    only_a = [x for x in la if x not in sb]
    only_b = [x for x in lb if x not in sa]
    if only_a:
        out.append(f"{a} offers {', '.join(map(repr, only_a))}, which {b} does not")
    if only_b:
        out.append(f"{b} offers {', '.join(map(repr, only_b))}, which {a} does not")
    return out


def diff_rulesets(board: Board, a: str, b: str, max_pairs: int = 200_000) -> RulesetDiff:
    """The shortest line of play on `board` after which rulesets `a` and `b` offer different
    actions or reach different observations (InputError for an unknown ruleset name)."""
    ra = ruleset_class(a, "--a")(board.pool)
    rb = ruleset_class(b, "--b")(board.pool)
    res = RulesetDiff(board.path, a, b)
    start = replace(board, ruleset=a).state
    queue: deque = deque([(start, start, ())])
    seen = {(start, start)}
    while queue:
        sa, sb, line = queue.popleft()
        res.pairs += 1
        oa, ob = observe(ra, sa), observe(rb, sb)
        d = obs_diff(oa, ob)
        if d:
            res.kind = "state"
            res.line = [x for x, _ in line]
            res.steps = [st for _, st in line]
            res.differences = diff_lines(d, a, b, names=(card_namer(oa), card_namer(ob)))
            return res
        acts_a = [] if ra.is_terminal(sa) else ra.legal_actions(sa)
        acts_b = [] if rb.is_terminal(sb) else rb.legal_actions(sb)
        la, lb = [x.label for x in acts_a], [x.label for x in acts_b]
        if sorted(la) != sorted(lb):
            res.kind = "actions"
            res.line = [x for x, _ in line]
            res.steps = [st for _, st in line]
            res.differences = _actions_difference(la, lb, a, b)
            return res
        by_label_b = {x.label: x for x in acts_b}
        for act in acts_a:
            na, _ = ra.apply(sa, act)
            nb, _ = rb.apply(sb, by_label_b[act.label])
            if (na, nb) in seen:
                continue
            if len(seen) >= max_pairs:
                res.bound_hit = True
                return res
            seen.add((na, nb))
            queue.append((na, nb, (*line, (act.label, sa.step.value))))
    return res
