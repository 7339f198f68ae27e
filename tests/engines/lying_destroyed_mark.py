"""Engines that let a monster destroyed by battle leave the field by an effect before the end of
the Damage Step (DS-DESTROYED-MARK, DS-NO-TARGET-DESTROYED; docs/ocgcore-findings.md F9).

A marked monster stays on the field, untouched by effects, until destroyed-by-battle monsters are
sent to the Graveyard. Each class is the reference model with one bug that shows inside one
transition; use as ``--engine lying_destroyed_mark:NAME`` with this folder on the Python path.
"""

from __future__ import annotations

from bpcheck.model.engine import Rules


def _marked(w):
    return [m.uid for _side, _i, m in w.s.monsters() if m.destroyed_by_battle]


class DestroysMarkedByEffect(Rules):
    """Damage calculation marks the losing monster, and in the same transition an effect destroys
    it again: it goes to the Graveyard destroyed by an effect, not by battle."""

    def _damage_calculation(self, w):
        super()._damage_calculation(w)
        for uid in _marked(w):
            self.destroy(w, uid, by="effect")


class BanishesMarkedByEffect(Rules):
    """Damage calculation marks the losing monster, and in the same transition an effect banishes
    it (no destruction: a plain card_moved with reason banished)."""

    def _damage_calculation(self, w):
        super()._damage_calculation(w)
        for uid in _marked(w):
            self._move_from_field(w, uid, "banished", reason="banished")


class SelfDestroysAfterBattle(Rules):
    """What the EDOPro core does with Reflect Bounder (F9): its mandatory "after damage
    calculation" trigger, "destroy this card", destroys it by its effect although damage
    calculation already destroyed it by battle. The reference model resolves the link without
    effect (an effect does not apply to a monster already destroyed by battle); this engine then
    destroys the card itself, in the transition that resolves the link."""

    def _finish_link(self, w, link):
        super()._finish_link(w, link)
        eff = self.card(link.card).effects[link.effect]
        f = w.s.find_monster(link.card_uid)
        if f is not None and f[2].destroyed_by_battle and not link.negated:
            if any(o.op == "destroy" and o.get("what") == "self" for o in eff.ops):
                self.destroy(w, link.card_uid, by="effect")
