"""Recording the state graph of a small exploration (generic: states and named edges).

:func:`bpcheck.explorers.core.explore` fills a :class:`GraphRecord` only when asked
(``record_graph=LIMIT``). It keeps the states and edges while the exploration has at most
``LIMIT`` states (and at most ``EDGES_PER_STATE * LIMIT`` edges); past that it drops them
and keeps only counts and the number of states per depth, so the memory it takes is bounded
whatever the size of the exploration. Reports draw a complete record and summarise the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

EDGES_PER_STATE = 20


@dataclass
class GraphRecord:
    limit: int  # the most states drawn
    states: list[Any] = field(default_factory=list)  # by state index (only while complete)
    edges: list[tuple[int, int, str]] = field(default_factory=list)  # (from, to, action name)
    complete: bool = True  # every state and edge of the exploration is here
    total_states: int = 0
    total_edges: int = 0
    depth_counts: list[int] = field(default_factory=list)  # states first reached at each depth
    exhaustive: bool = True  # the exploration itself was not cut by a bound

    def add_state(self, index: int, state: Any) -> None:
        self.total_states += 1
        if not self.complete:
            return
        if index != len(self.states) or index >= self.limit:
            self._drop()
            return
        self.states.append(state)

    def add_edge(self, src: int, dst: int, name: str) -> None:
        self.total_edges += 1
        if not self.complete:
            return
        if len(self.edges) >= EDGES_PER_STATE * self.limit:
            self._drop()
            return
        self.edges.append((src, dst, name))

    def _drop(self) -> None:
        self.complete = False
        self.states = []
        self.edges = []

    def finish(self, depths: Any, exhaustive: bool) -> None:
        counts: list[int] = []
        for d in depths:
            while len(counts) <= d:
                counts.append(0)
            counts[d] += 1
        self.depth_counts = counts
        self.exhaustive = exhaustive

    def map_states(self, fn: Callable[[Any], Any]) -> "GraphRecord":
        """The same record with each state replaced by ``fn(state)`` (e.g. its observation)."""
        return GraphRecord(
            self.limit,
            [fn(s) for s in self.states],
            list(self.edges),
            self.complete,
            self.total_states,
            self.total_edges,
            list(self.depth_counts),
            self.exhaustive,
        )

    def path(self, names: list[str], start: int = 0) -> list[int] | None:
        """The state indices along the edges named `names` from `start`, as far as they exist in
        the record (the last action may have no edge: a crashed step)."""
        if not self.complete:
            return None
        out = {}
        for src, dst, name in self.edges:
            out.setdefault((src, name), dst)
        node = start
        nodes = [node]
        for n in names:
            nxt = out.get((node, n))
            if nxt is None:
                break
            node = nxt
            nodes.append(node)
        return nodes


__all__ = ["EDGES_PER_STATE", "GraphRecord"]
