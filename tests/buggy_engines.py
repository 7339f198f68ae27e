"""Hand-built inconsistent engines for the checker's own tests (not shipped as mutants)."""

from __future__ import annotations

from bpcheck.model.engine import Rules
from bpcheck.engines.mutants import ReplayResetsCount


# The shipped mutant, loaded here through the `package.module:factory` path of --engine.
CallOffForgetsAttack = ReplayResetsCount


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


class _CorruptObservation:
    """An engine whose observations lose a field the invariants read (a schema-valid-looking
    but inconsistent engine): the checker must report it, not crash."""

    name = "corrupt-observation"

    def __init__(self):
        from bpcheck.engines.reference import ReferenceEngine

        self.inner = ReferenceEngine()

    def start(self, board):
        return self.inner.start(board)

    def legal_actions(self, state):
        return self.inner.legal_actions(state)

    def apply(self, state, action):
        return self.inner.apply(state, action)

    def is_terminal(self, state):
        return self.inner.is_terminal(state)

    def observe(self, state):
        import copy

        obs = copy.deepcopy(self.inner.observe(state))
        for p in obs["players"]:
            for m in p["monsters"]:
                if m is not None:
                    del m["position"]
        return obs


def corrupt_observation():
    return _CorruptObservation()


class QuietBattleEnd(Rules):
    """Not a bug: the rules of the reference model, but the engine does not report the
    ``battle_ended_early`` event (the EDOPro core's adapter has no such event). A battler that
    leaves the field in the Damage Step must still end the battle for the invariants, from the
    card_moved events alone (DS-BATTLER-LEAVES)."""

    name = "quiet-battle-end"

    def _battle_ended_early(self, w):
        n = len(w.events)
        ended = super()._battle_ended_early(w)
        w.events[n:] = [e for e in w.events[n:] if e.kind != "battle_ended_early"]
        return ended
