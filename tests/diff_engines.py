"""Engines that disagree with the reference model in one known way, for the tests of differential
mode and trace conformance (not shipped as mutants). Each is the reference model with one change."""

from __future__ import annotations

from dataclasses import replace

from bpcheck.model.engine import Action, Rules
from bpcheck.model.events import Event
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.model.state import Step


class NoCallOff(Rules):
    """A replay never offers calling the attack off."""

    def _replay_actions(self, s):
        return [a for a in super()._replay_actions(s) if a.option != "call_off"]


class SkipFromBattleStep(Rules):
    """The turn player may also 'skip Battle Phase' from the Battle Step (straight to the End Phase)."""

    def _legal_actions(self, s):
        acts = super()._legal_actions(s)
        if s.step is Step.BP_BATTLE and any(a.label == "end Battle Phase" for a in acts):
            acts.append(Action("skip_bp", s.turn_player, "skip Battle Phase"))
        return acts


class SilentPhaseChanges(Rules):
    """Entering the Battle Phase reports no phase_changed event (the state is right)."""

    def apply(self, s, action):
        s2, events = super().apply(s, action)
        if action.kind == "enter_bp":
            events = [e for e in events if e.kind != "phase_changed"]
        return s2, events


class DamageRefund(Rules):
    """Battle damage leaves the damaged player 100 LP more than it should (the event is right)."""

    def apply(self, s, action):
        s2, events = super().apply(s, action)
        for e in events:
            if e.kind == "battle_damage":
                p = e["player"]
                pl = list(s2.players)
                pl[p] = replace(pl[p], lp=pl[p].lp + 100)
                s2 = replace(s2, players=tuple(pl))
        return s2, events


class DamageEventWrongPlayer(Rules):
    """The battle_damage event names the wrong player (the LP are right)."""

    def apply(self, s, action):
        s2, events = super().apply(s, action)
        out = []
        for e in events:
            if e.kind == "battle_damage":
                e = Event(e.kind, tuple((k, 1 - v if k == "player" else v) for k, v in e.data))
            out.append(e)
        return s2, out


class EndsAtMain2(ReferenceEngine):
    """An engine that says the game is over as soon as Main Phase 2 begins (its observations are right)."""

    def __init__(self) -> None:
        super().__init__(Rules, name="ends-at-main2")

    def is_terminal(self, state) -> bool:
        return state.step is Step.MAIN2 or super().is_terminal(state)


class ChainEventsWithoutSpeed(Rules):
    """Its chain_link_added events leave out effect, speed and damage_step (what the EDOPro
    adapter cannot say, findings F7); everything else is the reference's."""

    def apply(self, s, action):
        s2, events = super().apply(s, action)
        drop = {"effect", "speed", "damage_step"}
        return s2, [Event(e.kind, tuple(kv for kv in e.data if kv[0] not in drop)) if e.kind == "chain_link_added" else e for e in events]


class ChainEventsWithoutSpeedWrongTargets(ChainEventsWithoutSpeed):
    """As ChainEventsWithoutSpeed, and its chain_link_added events name no targets (a field both
    sides report, and disagree on)."""

    def apply(self, s, action):
        s2, events = super().apply(s, action)
        return s2, [Event(e.kind, tuple((k, () if k == "targets" else v) for k, v in e.data)) if e.kind == "chain_link_added" else e for e in events]
