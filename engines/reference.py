"""The reference model behind the engine interface (:mod:`bpcheck.engines.interface`)."""

from __future__ import annotations

from bpcheck.engines.interface import EngineRefusal
from bpcheck.model.board import Board
from bpcheck.model.engine import Action, Rules
from bpcheck.model.observe import observe, with_extras
from bpcheck.model.rulesets import under_ruleset


class ReferenceEngine:
    """The reference model behind the engine interface. ``rules_cls`` selects a rules variant
    (a subclass of :class:`Rules`); mutants are such subclasses."""

    def __init__(self, rules_cls: type[Rules] = Rules, name: str = "reference") -> None:
        self.rules_cls = rules_cls
        self.name = name
        self._rules: Rules | None = None

    def start(self, board: Board):
        refuse_unmodelled(board)
        # the board's ruleset (its `ruleset` field, or --ruleset: docs/rulesets.md); a mutant
        # plays under it too (model/rulesets.py under_ruleset)
        self._rules = under_ruleset(self.rules_cls, board.ruleset)(board.pool)
        return board.state

    @property
    def ruleset(self) -> str:
        """The name of the ruleset the engine plays the current board under."""
        return self.rules.name

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


def unmodelled_cards(board: Board) -> list:
    """The cards of a board whose effects the reference model does not model: cards of a card
    database (``--cards-db``) other than plain Normal Monsters (model/cards.py ``card_from_db``)."""
    pool = board.pool
    return [c for c in pool if not c.effects_known] if pool is not None else []


def refuse_unmodelled(board: Board) -> None:
    """:class:`EngineRefusal` naming every card of the board the reference model does not model:
    it knows their data (their database row), not their effects, so it cannot play the board.
    The board is ``skipped`` on the reference (and with ``--differential``), never judged by a
    guess; an engine that has the cards' scripts (``--engine ocgcore``) plays it. The same for
    Xyz materials, the Extra Monster Zones, the Pendulum Zones and the Extra Deck, each named
    with its cards (they have no place in the model's State)."""
    extras = board.extras.describe(board.state)
    if extras:  # the model's State has no place for them (model/board.py BoardExtras)
        raise EngineRefusal(f"the reference model does not model {'; '.join(extras)}: a board of a card database's cards (docs/boards.md)")
    cards = unmodelled_cards(board)
    if cards:
        named = ", ".join(f"{c.name!r} ({c.passcode})" for c in sorted(cards, key=lambda c: c.name))
        raise EngineRefusal(
            f"the reference model does not model {named} (a card of the card database: its data is known, its effects are not modelled)"
        )


def board_observation(board: Board) -> dict:
    """A board as its file describes it, in the observation schema (docs/model.md): the reference
    engine's observation of the board's initial state. What a report draws for an engine that gave
    no observation of the board (it failed before giving its initial state, explorers/run.py)."""
    engine = ReferenceEngine()
    engine._rules = engine.rules_cls(board.pool)  # drawn as the file says, cards the model does not play included
    obs = engine.observe(board.state)
    if board.extras.is_empty():
        return obs
    # the places the model's State has none for, in the shape an engine that plays them gives (docs/observation.md)
    return with_extras(engine._rules, obs, board.extras)
