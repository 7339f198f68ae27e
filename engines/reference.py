"""The reference model behind the engine interface (:mod:`bpcheck.engines.interface`)."""

from __future__ import annotations

from bpcheck.model.board import Board
from bpcheck.model.engine import Action, Rules
from bpcheck.model.observe import observe


class ReferenceEngine:
    """The reference model behind the engine interface. ``rules_cls`` selects a rules variant
    (a subclass of :class:`Rules`); mutants are such subclasses."""

    def __init__(self, rules_cls: type[Rules] = Rules, name: str = "reference") -> None:
        self.rules_cls = rules_cls
        self.name = name
        self._rules: Rules | None = None

    def start(self, board: Board):
        self._rules = self.rules_cls(board.pool)
        return board.state

    @property
    def rules(self) -> Rules:
        assert self._rules is not None, "start() first"
        return self._rules

    def legal_actions(self, state) -> list[Action]:
        return self.rules.legal_actions(state)

    def apply(self, state, action: Action):
        return self.rules.apply(state, action)

    def observe(self, state) -> dict:
        return observe(self.rules, state)

    def is_terminal(self, state) -> bool:
        return self.rules.is_terminal(state)


def board_observation(board: Board) -> dict:
    """A board as its file describes it, in the observation schema (docs/model.md): the reference
    engine's observation of the board's initial state. What a report draws for an engine that gave
    no observation of the board (it failed before giving its initial state, explorers/run.py)."""
    engine = ReferenceEngine()
    return engine.observe(engine.start(board))
