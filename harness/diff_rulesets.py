"""`bpcheck diff-rulesets BOARD --a A --b B`: the run behind the command (the search:
:mod:`bpcheck.explorers.ruleset_diff`; docs/rulesets.md)."""

from __future__ import annotations

from bpcheck.engines.reference import refuse_unmodelled
from bpcheck.engines.interface import EngineRefusal
from bpcheck.errors import InputError
from bpcheck.explorers.ruleset_diff import RulesetDiff, diff_rulesets
from bpcheck.model.board import load_board
from bpcheck.model.rulesets import ruleset_class


def run_diff_rulesets(path: str, a: str, b: str, max_states: int = 200_000, cards_db: str | None = None) -> RulesetDiff:
    """Load the board at `path` and search it (InputError: a bad board, an unknown ruleset, a
    card the reference model does not play)."""
    ruleset_class(a, "--a")
    ruleset_class(b, "--b")
    board = load_board(path, path, cards_db=cards_db)
    try:
        refuse_unmodelled(board)
    except EngineRefusal as e:
        raise InputError(path, "", str(e)) from None
    return diff_rulesets(board, a, b, max_states)


def result_lines(r: RulesetDiff) -> list[str]:
    """The result as printed: the line of play, numbered as a counterexample's trace, and what
    differs after it; or that the board does not tell the rulesets apart."""
    head = f"diff-rulesets {r.board}: {r.a} vs {r.b}"
    if not r.found:
        if r.bound_hit:
            return [f"{head}: no difference within the bound ({r.pairs} pairs of states explored; --max-states): inconclusive"]
        return [f"{head}: no difference: every line of play ({r.pairs} pairs of states) offers the same actions and reaches the same states under both"]
    what = "offer different actions" if r.kind == "actions" else "reach different states"
    out = [f"{head}: they {what} after {len(r.line)} action{'s' if len(r.line) != 1 else ''} ({r.pairs} pairs of states explored)"]
    for i, (label, step) in enumerate(zip(r.line, r.steps), 1):
        out.append(f"  {i:3}. [{step}] {label}")
    out.append("  then:")
    out += [f"       {d}" for d in r.differences]
    return out
