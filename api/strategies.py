"""Hypothesis strategies for Battle Phase boards (docs/fuzzing.md): the public name of
:mod:`bpcheck.harness.strategies`, where they are built."""

from bpcheck.harness.strategies import CardChoice, board_documents, boards, card_choice

__all__ = ["CardChoice", "board_documents", "boards", "card_choice"]
