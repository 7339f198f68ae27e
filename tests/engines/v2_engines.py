"""Small in-process engines that use one protocol v2 capability each (docs/protocol.md), for
tests/test_protocol_v2.py. Each is the reference model seen the way a real engine sees a duel;
the tests serve them through the real protocol (``bpcheck serve --engine v2_engines:NAME``,
with this folder on PYTHONPATH) and check them with ``cmd:``.

- :class:`Partial` does not observe the modifiers breakdown, lingering effects, pending
  triggers, open windows and two counters (``unobserved``);
- :class:`Implicit` never asks a player who can only pass (``implicit_passes``);
  :class:`ImplicitFoldsWindow` also passes for the defender at the attack declaration even when
  it could respond (a window the reference has and the engine lacks);
- :class:`Passcodes` puts a passcode beside every card name; :class:`WrongPasscode` gets one wrong.
"""

from __future__ import annotations

import orjson
import xxhash

from bpcheck.engines.interface import Capabilities
from bpcheck.engines.observation_paths import strip
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.model.events import Event

PARTIAL = frozenset(
    {
        "players[].monsters[].modifiers",
        "players[].monsters[].lingering_modifiers",
        "lingering",
        "pending_triggers",
        "open_windows",
        "chains_in_step",
        "next_uid",
    }
)


class Partial(ReferenceEngine):
    capabilities = Capabilities(unobserved=PARTIAL)

    def __init__(self) -> None:
        super().__init__(name="v2-partial")

    def observe(self, state) -> dict:
        # What it does not show still tells its states apart: an opaque key (protocol v2 "hidden").
        full = super().observe(state)
        obs = strip(full, PARTIAL)
        left_out = {k: full[k] for k in ("lingering", "pending_triggers", "open_windows", "chains_in_step", "next_uid")}
        left_out["mods"] = [[m and m["modifiers"] for m in p["monsters"]] for p in full["players"]]
        return {**obs, "hidden": f"{xxhash.xxh3_64_intdigest(orjson.dumps(left_out, option=orjson.OPT_SORT_KEYS)):016x}"}


class PartialLpBug(Partial):
    """Partial, and battle damage to P2 is 100 short: a real disagreement still found."""

    def apply(self, state, action):
        s2, events = super().apply(state, action)
        return s2, events

    def observe(self, state) -> dict:
        obs = super().observe(state)
        p2 = obs["players"][1]
        if p2["lp"] < 8000 and obs["turn_player"] == 0:
            obs = {**obs, "players": [obs["players"][0], {**p2, "lp": p2["lp"] + 100}]}
        return obs


class Implicit(ReferenceEngine):
    """Asks only players with a real choice: a state where the player to act can only pass is
    passed through (its `passed` event is not reported, as a real core does not report it)."""

    capabilities = Capabilities(implicit_passes=True)

    def __init__(self) -> None:
        super().__init__(name="v2-implicit")

    def fold(self, state, events: list[Event]):
        while not self.rules.is_terminal(state):
            acts = self.rules.legal_actions(state)
            if not self.folds(state, acts):
                break
            state, evs = self.rules.apply(state, next(a for a in acts if a.kind == "pass"))
            events += [e for e in evs if e.kind != "passed"]
        return state, events

    def folds(self, state, acts) -> bool:
        return len(acts) == 1 and acts[0].kind == "pass"

    def start(self, board):
        s = super().start(board)
        return self.fold(s, [])[0]

    def apply(self, state, action):
        s2, events = self.rules.apply(state, action)
        return self.fold(s2, [e for e in events if e.kind != "passed"])


class ImplicitFoldsWindow(Implicit):
    """Also passes for the defender at the attack declaration, even when it could respond."""

    def folds(self, state, acts) -> bool:
        if super().folds(state, acts):
            return True
        passes = [a for a in acts if a.kind == "pass"]
        return bool(passes) and state.attack is not None and passes[0].player != state.turn_player and bool(state.fresh) and not state.chain


def _with_passcodes(v, pool, wrong: bool = False):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            out[k] = _with_passcodes(x, pool, wrong)
            if isinstance(x, str) and x in pool and k in ("card", "attacker", "target"):
                code = pool[x].passcode
                if wrong and k == "card":
                    code = "00000001"
                out["passcode" if k == "card" else f"{k}_passcode"] = code
        return out
    if isinstance(v, list):
        return [_with_passcodes(x, pool, wrong) for x in v]
    return v


class Passcodes(ReferenceEngine):
    capabilities = Capabilities(passcodes=True)
    wrong = False

    def __init__(self) -> None:
        super().__init__(name="v2-passcodes")

    def observe(self, state) -> dict:
        return _with_passcodes(super().observe(state), self.rules.pool, self.wrong and state.attack is not None)

    def apply(self, state, action):
        s2, events = super().apply(state, action)
        pool = self.rules.pool
        out = []
        for e in events:
            d = _with_passcodes(e.to_dict(), pool)
            out.append(Event(d.pop("kind"), tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in d.items())))
        return s2, out


class WrongPasscode(Passcodes):
    """Passcodes, but once an attack is declared every card's passcode is wrong."""

    wrong = True


class EventsReordered(ReferenceEngine):
    """Reports the events of a transition in another order whenever they are of several kinds
    (the same events: only their order differs). Capabilities: none (any engine may do it)."""

    def __init__(self) -> None:
        super().__init__(name="v2-events-reordered")

    def apply(self, state, action):
        s2, events = super().apply(state, action)
        if len({e.kind for e in events}) > 1:
            events = list(reversed(events))
        return s2, events


class BadPath(ReferenceEngine):
    """Declares an unobserved path that names no part of the observation."""

    capabilities = Capabilities(unobserved=frozenset({"players[].monsters[].aura"}))


class MissingPasscodes(ReferenceEngine):
    """Declares passcodes and gives none."""

    capabilities = Capabilities(passcodes=True)


class ExtraWindow(Implicit):
    """Implicit passes, and a window of its own the reference lacks: on entering Main Phase 2 it
    first asks the turn player to respond (pass only), then goes on as the reference."""

    def apply(self, state, action):
        if isinstance(state, tuple):  # the extra window closes: the state it held back
            return state[1], []
        s2, events = super().apply(state, action)
        if s2.step.value == "main2" and not self.rules.is_terminal(s2):
            return ("window", s2), events
        return s2, events

    def legal_actions(self, state):
        from bpcheck.model.engine import Action

        if isinstance(state, tuple):
            return [Action("pass", state[1].turn_player, "pass")]
        return super().legal_actions(state)

    def observe(self, state):
        if isinstance(state, tuple):
            return {**super().observe(state[1]), "hidden": "extra window"}
        return super().observe(state)

    def is_terminal(self, state) -> bool:
        return False if isinstance(state, tuple) else super().is_terminal(state)
