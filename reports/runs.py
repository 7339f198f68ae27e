"""What every machine-readable and graphical report reads: runs (an engine on a board).

A :class:`Run` pairs the engine's name with the :class:`~bpcheck.explorers.run.BoardResult` of
one board: its verdict, counts, invariant rows (exercise counts and verdicts), goals and
counterexamples. ``bpcheck check`` makes one run per board; a command that checks several
engines (``mutants``, ``conform``) makes one per engine and board and hands the same list to
:func:`bpcheck.reports.bundle.write_report`. Nothing here re-derives a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Run:
    engine: str
    result: object  # bpcheck.explorers.run.BoardResult
    skips_fail: bool = False  # `check` without --allow-skips: a refused board is not checked (exit 3), an error in JUnit

    @property
    def board(self) -> str:
        return self.result.board.path

    @property
    def board_name(self) -> str:
        return self.result.board.name

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def skip_reason(self) -> str | None:
        """The engine's reason for refusing the board (verdict ``skipped``), else None."""
        return getattr(self.result, "skip_reason", None)

    @property
    def not_compared(self) -> list[str]:
        """Observation paths the engine does not observe (protocol v2 ``unobserved``): never
        compared, fingerprinted or judged; every report lists them."""
        return list(getattr(self.result, "not_compared", None) or [])

    @property
    def explore(self):
        return self.result.result

    @property
    def counterexamples(self) -> list:
        return self.result.counterexamples

    def rows(self) -> list[dict]:
        return self.result.invariant_rows()

    def goals(self) -> list[dict]:
        return [
            {**g.to_dict(), "reached": self.result.witnesses.get(g.id) is not None, "witness": self.result.witnesses.get(g.id)}
            for g in self.result.goals
        ]


def refused_unchecked(runs: list[Run]) -> bool:
    """Whether a board was refused where a skip is not a pass (`check` without --allow-skips):
    the run's overall verdict is then inconclusive, as its exit status (3)."""
    return any(r.verdict == "skipped" and r.skips_fail for r in runs)


def runs_of(results: list, engine: str, skips_fail: bool = False) -> list[Run]:
    return [Run(engine, r, skips_fail) for r in results]


def slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s or "x"


def cex_names(runs: list[Run]) -> dict[tuple[int, int], str]:
    """A file-name stem per counterexample, (run index, cex index) -> stem, unique and stable:
    ``BOARD.INVARIANT`` (``ENGINE.BOARD.INVARIANT`` when the runs have several engines)."""
    engines = {r.engine for r in runs}
    names: dict[tuple[int, int], str] = {}
    used: set[str] = set()
    for ri, run in enumerate(runs):
        for ci, cex in enumerate(run.counterexamples):
            base = f"{Path(run.board).stem}.{cex.invariant}"
            if len(engines) > 1:
                base = f"{run.engine}.{base}"
            base = slug(base)
            name, k = base, 2
            while name.lower() in used:
                name = f"{base}-{k}"
                k += 1
            used.add(name.lower())
            names[(ri, ci)] = name
    return names


__all__ = ["Run", "cex_names", "runs_of", "slug"]
