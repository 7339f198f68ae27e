"""The reference model of the TCG Battle Phase.

An OpenSpiel-shaped API: :func:`bpcheck.model.board.load_board` makes an initial
:class:`~bpcheck.model.state.State`; a :class:`~bpcheck.model.engine.Rules` object answers
``legal_actions(state)`` and ``apply(state, action) -> (state, events)``. Rule IDs cited in
comments (``# rule: ID``) are defined in docs/rules.md.
"""
