"""Planted in-process engines for tests/test_profiled.py: the reference model with one wrong offer.

``Offers``: the reference model playing a board that names cards of a card database (it plays
them as cards without effects instead of refusing the board), which also offers one such card for
activation in the steps given: an offer the card's profile may or may not allow there. Taking that
offer passes (the card's effect is not what is judged: the offer is).

``ResponseWindow``: the reference model, with a response window before the turn player's choices
(the EDOPro core's, docs/ocgcore-findings.md F25): in Main Phase 1 and in the Battle Step with no
attack in progress, the turn player is first asked only whether to respond (a plain "pass"). Then
either the choices follow (``lose=False``, as the core does), or the pass leaves the step at once
(``lose=True``: Main Phase 1 goes to the Battle Phase, the Battle Step to Main Phase 2), and the
turn's choices (entering or skipping the Battle Phase, the attacks) were never offered.
"""

from __future__ import annotations

from bpcheck.engines.reference import ReferenceEngine
from bpcheck.model.engine import Action


def _find(obs: dict, name: str) -> tuple[int, int] | None:
    """(player, uid) of the first card called `name` in the observation (field, hand, GY)."""
    for side, p in enumerate(obs["players"]):
        for c in [*p["monsters"], *p["spells"], *p["hand"], *p["graveyard"]]:
            if c is not None and c["card"] == name:
                return side, c["uid"]
    return None


class Offers(ReferenceEngine):
    def __init__(self, card: str, steps: tuple[str, ...], kind: str = "activate", name: str = "planted-offer") -> None:
        super().__init__(name=name)
        self.card, self.steps, self.kind = card, steps, kind
        self.label = f"activate {card} (planted)"

    def start(self, board):
        self._rules = self.rules_cls(board.pool)  # (no refusal: the database cards play as cards without effects)
        return board.state

    def legal_actions(self, state):
        acts = super().legal_actions(state)
        if state.step.value not in self.steps or not acts or any(a.kind in ("trigger", "replay", "choose") for a in acts):
            return acts
        found = _find(self.observe(state), self.card)
        if found is None or found[0] != self.rules.to_act(state):
            return acts  # (offered to the card's controller only)
        return [*acts, Action(self.kind, found[0], self.label, card_uid=found[1])]

    def apply(self, state, action):
        if action.label == self.label:
            acts = super().legal_actions(state)
            on = next((a for a in acts if a.kind == "pass"), acts[0])  # (Main Phase 1 has no pass: the turn goes on)
            return super().apply(state, on)
        return super().apply(state, action)


def forbidden_lance_during_calculation():
    """A Quick-Play Spell that changes ATK offered during damage calculation (DS-ATK: up to, not
    including, damage calculation)."""
    return Offers("Forbidden Lance", ("damage_step_during_calculation",))


def echo_oscillation_at_start_of_damage_step():
    """A Continuous Trap whose card activation the Damage Step rules forbid and whose other effect
    the profile cannot classify (a Trap effect with no event and no window): not judged."""
    return Offers("Echo Oscillation", ("damage_step_start",))


def forbidden_lance_at_start_of_damage_step():
    return Offers("Forbidden Lance", ("damage_step_start",))


def dian_keto_in_battle_step():
    """A Normal Spell (Spell Speed 1) offered in the Battle Step."""
    return Offers("Dian Keto the Cure Master", ("battle_step",))


def dian_keto_in_main_phase():
    return Offers("Dian Keto the Cure Master", ("main1",))


def draining_shield_in_battle_start_step():
    """A Trap that needs an opponent's attack declaration offered at the start of the Battle Phase."""
    return Offers("Draining Shield", ("battle_start_step",))


def giant_rat_before_battle():
    """A "destroyed by battle and sent to the GY" trigger offered before any battle."""
    return Offers("Giant Rat", ("battle_step",), kind="trigger")


def giant_rat_at_end_of_damage_step():
    return Offers("Giant Rat", ("damage_step_end",), kind="trigger")


# -- the response window (F25) -------------------------------------------------------------------


class ResponseWindow(ReferenceEngine):
    """States are (reference state, whether the response window is open)."""

    def __init__(self, lose: bool) -> None:
        super().__init__(name="response-window-lost" if lose else "response-window")
        self.lose = lose

    def _wrap(self, s):
        r = self.rules
        owed = (
            not r.is_terminal(s) and not s.chain and r.to_act(s) == s.turn_player
            and (s.step.value == "main1" or (s.step.value == "battle_step" and s.attack is None))
        )  # fmt: skip
        return (s, owed)

    def start(self, board):
        super().start(board)
        return self._wrap(board.state)

    def legal_actions(self, state):
        s, window = state
        if window:
            return [Action("pass", s.turn_player, "pass")]
        return super().legal_actions(s)

    def apply(self, state, action):
        s, window = state
        if not window:
            s2, events = super().apply(s, action)
            return (self._wrap(s2) if s2.step != s.step else (s2, False)), events  # (a window where a step begins)
        if not self.lose:
            return (s, False), []
        acts = super().legal_actions(s)
        leave = next(a for a in acts if a.kind == "enter_bp") if s.step.value == "main1" else next(a for a in acts if a.kind == "pass")
        s2, events = super().apply(s, leave)
        while s2.step == s.step and not super().is_terminal(s2):  # (the opponent's passes too: the step is left at once)
            s2, more = super().apply(s2, next(a for a in super().legal_actions(s2) if a.kind == "pass"))
            events = [*events, *more]
        return (s2, False), events

    def observe(self, state):
        return super().observe(state[0])

    def is_terminal(self, state):
        return super().is_terminal(state[0])


def response_window_lost():
    return ResponseWindow(lose=True)


def response_window_kept():
    return ResponseWindow(lose=False)


# -- withheld (profile.withheld) -----------------------------------------------------------------


def forbidden_lance_battle_step_only():
    """A Quick-Play Spell (no window in its text) offered in the Battle Step but withheld in the
    Start Step and the End Step of the same Battle Phase, with the same board."""
    return Offers("Forbidden Lance", ("battle_step",))


def forbidden_lance_whole_battle_phase():
    """The same card offered at every open state of the Battle Phase outside the Damage Step (where
    its profile allows it up to damage calculation only: DS-ATK)."""
    return Offers("Forbidden Lance", ("battle_start_step", "battle_step", "battle_end_step", "damage_step_start",
                                      "damage_step_before_calculation"))


class KeepsOnField(ReferenceEngine):
    """The reference model playing a board that names cards of a card database (as cards without
    effects), except that the monster called `card` never leaves the field: its moves from the
    Monster Zone are not reported and the observation keeps it where it was (an engine that forgets
    to send a "Crystal Beast" destroyed by battle anywhere: docs/ocgcore-findings.md F36)."""

    def __init__(self, card: str) -> None:
        super().__init__(name="keeps-on-field")
        self.card = card
        self.kept: tuple[int, int, dict] | None = None

    def start(self, board):
        self._rules = self.rules_cls(board.pool)
        return board.state

    def apply(self, state, action):
        out = super().apply(state, action)
        events = [e for e in out[1] if not (e.kind == "card_moved" and e.get("card") == self.card and e.get("from") == "monster_zone")]
        return (out[0], events, *out[2:])

    def observe(self, state):
        obs = super().observe(state)
        for side, p in enumerate(obs["players"]):
            for i, m in enumerate(p["monsters"]):
                if m is not None and m["card"] == self.card:
                    self.kept = (side, i, m)
                    return obs
        if self.kept is not None:
            side, i, m = self.kept
            p = obs["players"][side]
            p["monsters"][i] = m
            p["graveyard"] = [c for c in p["graveyard"] if c["uid"] != m["uid"]]
        return obs
