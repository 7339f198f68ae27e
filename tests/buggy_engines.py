"""Hand-built inconsistent engines for the checker's own tests (not shipped as mutants)."""

from __future__ import annotations

from dataclasses import replace

from bpcheck.model.engine import Rules


class CallOffForgetsAttack(Rules):
    """Bug: calling an attack off after a replay erases the monster's attack bookkeeping."""

    name = "call-off-forgets-attack"

    def _replay_choice(self, w, action):
        super()._replay_choice(w, action)
        if action.option == "call_off":
            f = w.s.find_monster(action.card_uid)
            if f is not None:
                side, i, m = f
                self._put_monster(w, side, i, replace(m, attacks_declared=0, declared_at=frozenset(), declared_direct=False))


class DeadEndStep(Rules):
    """Bug: entering the End Step leaves a state with no legal action (a deadlock)."""

    name = "dead-end-step"

    def legal_actions(self, s):
        if s.step.value == "battle_end_step":
            return []
        return super().legal_actions(s)


class EndStepLoops(Rules):
    """Bug: both players passing in the End Step goes back to the Battle Step (a cycle)."""

    name = "end-step-loops"

    def _advance(self, w):
        if w.s.step.value == "battle_end_step":
            from bpcheck.model.state import Step

            self._change_step(w, Step.BP_BATTLE)
            return
        super()._advance(w)


def broken_factory():
    raise RuntimeError("cannot connect to the engine")
