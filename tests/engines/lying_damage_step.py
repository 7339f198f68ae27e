"""Engines whose Damage-Step bug shows only *inside* one transition (issue 8, section 1).

An invariant that follows marks from the state before a transition misses a monster that is
marked and moved in the same transition; the Damage-Step invariants walk the events in order.
Each class is a Rules variant: ``--engine lying_damage_step:NAME`` with this folder on the path.
"""

from __future__ import annotations

from bpcheck.model.engine import Rules
from bpcheck.model.state import Step


class SendsAtCalculation(Rules):
    """Monsters destroyed by battle go to the Graveyard at once, in the damage-calculation
    transition, instead of at the end of the Damage Step (DS-DESTROYED-MARK)."""

    def _damage_calculation(self, w):
        super()._damage_calculation(w)
        self._send_battle_destroyed(w)


class CalculatesOnEntering(Rules):
    """Damage calculation is performed on entering the damage-calculation sub-step, before its
    window (Kuriboh, Injection Fairy Lily) (DS-SUBSTEPS)."""

    def _advance(self, w):
        st = w.s.step
        if st is Step.DS_BEFORE_CALC:
            self._change_step(w, Step.DS_DURING_CALC)
            self._damage_calculation(w)
            return
        if st is Step.DS_DURING_CALC and w.s.attack is not None and w.s.attack.calculated:
            self._change_step(w, Step.DS_AFTER_CALC_1)
            self._gather_triggers(w, "after_damage_calculation")
            return
        super()._advance(w)


class NoBattleGraveyardTriggers(Rules):
    """"Destroyed by battle and sent to the Graveyard" triggers never activate (DS-END-TRIGGERS)."""

    def _gather_triggers(self, w, when):
        if when == "destroyed_by_battle_sent_to_gy":
            return
        super()._gather_triggers(w, when)


class FlipTriggersAtCalculation(Rules):
    """Flip effects of the flipped target wait for damage calculation but become pending in the
    damage-calculation transition itself, in "after damage calculation" (1) (DS-FLIP-EFFECT-TIMING)."""

    def _advance(self, w):
        if w.s.step is Step.DS_DURING_CALC:
            super()._advance(w)
            if not w.s.over and not w.s.triggers:
                self._gather_flip_triggers(w)
            return
        if w.s.step is Step.DS_AFTER_CALC_1:
            self._change_step(w, Step.DS_AFTER_CALC_2)  # the flip effects were already gathered
            return
        super()._advance(w)
