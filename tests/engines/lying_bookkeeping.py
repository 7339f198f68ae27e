"""Engines that play the rules right but lie about their own bookkeeping (issue 8).

Each is the reference model whose *observation* misreports one field the engine keeps for itself.
The invariants keep their own history (invariants/monitor.py), so each lie is a violation that
names both values. One or more per invariant family; use as ``--engine lying_bookkeeping:NAME``
with this folder on the Python path.
"""

from __future__ import annotations

import copy

from bpcheck.engines.reference import ReferenceEngine


class Lying:
    """The reference model with `lie(observation)` applied to every observation it gives."""

    def __init__(self, name: str, lie) -> None:
        self.name = name
        self.inner = ReferenceEngine()
        self.lie = lie

    def start(self, board):
        return self.inner.start(board)

    def legal_actions(self, state):
        return self.inner.legal_actions(state)

    def apply(self, state, action):
        return self.inner.apply(state, action)

    def is_terminal(self, state):
        return self.inner.is_terminal(state)

    def observe(self, state):
        obs = copy.deepcopy(self.inner.observe(state))
        self.lie(obs)
        return obs


def _monsters(obs):
    for p in obs["players"]:
        for m in p["monsters"]:
            if m is not None:
                yield m


def _set(field, value):
    def lie(obs):
        for m in _monsters(obs):
            m[field] = value

    return lie


def _hide_windows(obs):
    obs["open_windows"]["attack_declaration"] = False


def _hide_damage_calculated(obs):
    if obs["attack"] is not None:
        obs["attack"]["damage_calculated"] = False


def _drop_chain_links(obs):
    obs["chain"] = obs["chain"][:1]


# attack counts
def attacks_zero():
    """Reports attacks_declared = 0 for every monster."""
    return Lying("lying:attacks-zero", _set("attacks_declared", 0))


def stop_forgotten():
    """Reports cannot_attack_this_turn = false for every monster."""
    return Lying("lying:stop-forgotten", _set("cannot_attack_this_turn", False))


# replay
def drops_declared_at():
    """Reports declared_at = [] for every monster."""
    return Lying("lying:drops-declared-at", _set("declared_at", []))


def direct_forgotten():
    """Reports declared_direct = false for every monster."""
    return Lying("lying:direct-forgotten", _set("declared_direct", False))


# damage step
def hides_destroyed_mark():
    """Reports destroyed_by_battle = false for every monster."""
    return Lying("lying:hides-destroyed-mark", _set("destroyed_by_battle", False))


def hides_flip():
    """Reports flipped_by_battle = false for every monster."""
    return Lying("lying:hides-flip", _set("flipped_by_battle", False))


def hides_damage_calculated():
    """Reports damage_calculated = false for the attack in progress."""
    return Lying("lying:hides-damage-calculated", _hide_damage_calculated)


# chains and windows
def hides_windows():
    """Reports the attack-declaration window closed at all times."""
    return Lying("lying:hides-windows", _hide_windows)


def drops_chain_links():
    """Shows only the first link of a chain."""
    return Lying("lying:drops-chain-links", _drop_chain_links)


# accounting
def lp_unchanged():
    """Reports 8000 LP for both players whatever happened."""

    def lie(obs):
        for p in obs["players"]:
            p["lp"] = 8000

    return Lying("lying:lp-unchanged", lie)


# not a lie about bookkeeping: a card no definition of the run has
def unknown_card():
    """Reports "Honest" under the name "Honest Abe", which no card definition has: the invariants
    that need its card facts report "not judged", never a pass or a failure."""
    from bpcheck.model.events import Event

    class Renamed(Lying):
        def apply(self, state, action):
            st, events = self.inner.apply(state, action)
            return st, [Event(e.kind, tuple((k, "Honest Abe" if v == "Honest" else v) for k, v in e.data)) for e in events]

    def lie(obs):
        for p in obs["players"]:
            for pile in ("hand", "graveyard", "banished", "deck"):
                for c in p[pile]:
                    if c["card"] == "Honest":
                        c["card"] = "Honest Abe"
        for link in obs["chain"]:
            if link["card"] == "Honest":
                link["card"] = "Honest Abe"

    return Renamed("lying:unknown-card", lie)
