"""An independent engine's classic bug, and its twin without it (issue 8).

``ForgetsDirectAttacks`` does not count a direct attack declaration: the monster's
``attacks_declared`` stays 0 and ``declared_direct`` false, so it may attack directly again and
again. It is honest about what it counts (its observation shows its own wrong bookkeeping), so
an invariant that read the engine's counters would see nothing wrong. ``CountsDirectAttacks`` is
the same engine with the bookkeeping done: it must pass.

Use as ``--engine lying_direct:ForgetsDirectAttacks`` with this folder on the Python path.
"""

from __future__ import annotations

from dataclasses import replace

from bpcheck.model.engine import Rules


class ForgetsDirectAttacks(Rules):
    """Direct attack declarations are not counted."""

    def _declare_attack(self, w, action):
        before = w.s.find_monster(action.card_uid)
        super()._declare_attack(w, action)
        if action.target is None and before is not None:
            f = w.s.find_monster(action.card_uid)
            if f is not None:
                side, i, m = f
                old = before[2]
                self._put_monster(w, side, i, replace(m, attacks_declared=old.attacks_declared, declared_direct=old.declared_direct))


class CountsDirectAttacks(Rules):
    """The same declaration hook, with every declaration counted."""

    def _declare_attack(self, w, action):
        super()._declare_attack(w, action)
