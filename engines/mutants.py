"""Mutant engines: the reference model with one realistic rules bug each.

A checker that never fails proves nothing. Each mutant is a :class:`Rules` subclass that
overrides one decision the way real engines have got it wrong; ``bpcheck mutants`` runs the
checker on every mutant over the seed boards and reports which invariant kills it. When a mutant
survives, the answer is a better invariant or a better seed board, never a weaker mutant.

Every mutant declares the family of invariants it is aimed at and a board where it shows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bpcheck.model.cards import STAT_OPS, choice_options
from bpcheck.model.engine import STAT_CHANGE_STEPS, Action, Rules
from bpcheck.model.state import Pos, Step, Trigger


class ReplayResetsCount(Rules):
    """Calling an attack off after a replay erases the monster's attack bookkeeping."""

    def _replay_choice(self, w, action):
        super()._replay_choice(w, action)
        if action.option == "call_off":
            f = w.s.find_monster(action.card_uid)
            if f is not None:
                side, i, m = f
                self._put_monster(w, side, i, replace(m, attacks_declared=0, declared_at=frozenset(), declared_direct=False))


class ReplayIsSecondAttack(Rules):
    """Continuing after a replay counts as a second attack declaration."""

    def _replay_choice(self, w, action):
        super()._replay_choice(w, action)
        if action.option != "call_off":
            f = w.s.find_monster(action.card_uid)
            if f is not None:
                side, i, m = f
                self._put_monster(w, side, i, replace(m, attacks_declared=m.attacks_declared + 1))


class StatChangeReplays(Rules):
    """An attack target whose ATK/DEF was changed triggers a replay."""

    def replay_reason(self, s, a):
        reason = super().replay_reason(s, a)
        if reason is None and a.target is not None and s.find_monster(a.target) is not None:
            base = self.card(self.name_of(s, a.target))
            if (self.atk(s, a.target), self.defense(s, a.target)) != (base.atk or 0, base.def_ or 0):
                return "targets_changed"
        return reason


class OpponentSummonNoReplay(Rules):
    """A monster Special Summoned to the opponent's side does not trigger a replay (only
    disappearing targets do)."""

    def replay_reason(self, s, a):
        now = self.attackable(s, 1 - s.turn_player)
        if now - a.potential_targets and not (a.potential_targets - now):
            return None
        return super().replay_reason(s, a)


class ReplayChargesCostAgain(Rules):
    """An attack cost (Dark Elf's 1000 LP) is charged again when the attack continues after a
    replay."""

    def _replay_choice(self, w, action):
        cost = self.static_amount(w.s, action.card_uid, "attack_cost") if action.option != "call_off" else 0
        super()._replay_choice(w, action)
        if cost:
            self._pay_lp(w, w.s.turn_player, cost)
            w.emit("attack_cost_paid", attacker_uid=action.card_uid, player=w.s.turn_player, amount=cost)
            self._check_lp(w)


class MirrorForceInDamageStep(Rules):
    """"When an attack is declared" cards stay legal during the whole attack, Damage Step
    included (Mirror Force, Sakuretsu Armor, ...)."""

    def _timing_ok(self, s, p, c, eff):
        if eff.when == "attack_declared" and s.attack is not None and s.step.in_damage_step:
            return True
        return super()._timing_ok(s, p, c, eff)

    def damage_step_allows(self, s, c, eff):
        if eff.when == "attack_declared":
            return True
        return super().damage_step_allows(s, c, eff)


class StatChangeDuringCalculation(Rules):
    """Cards that directly change ATK/DEF may also be activated during damage calculation."""

    stat_change_steps = STAT_CHANGE_STEPS + (Step.DS_DURING_CALC,)

    def _can_activate(self, s, p, uid, c, eff, loc):
        if s.step is Step.DS_DURING_CALC and eff.changes_stats_directly and not s.chain:
            s = replace(s, chain_count_in_step=0)
        return super()._can_activate(s, p, uid, c, eff, loc)


class CounterTrapsRefusedInDamageStep(Rules):
    """Counter Traps are refused in the Damage Step."""

    def damage_step_allows(self, s, c, eff):
        if c.kind == "trap" and c.subtype == "counter":
            return False
        return super().damage_step_allows(s, c, eff)


class NegatingQuickEffectRefusedInDamageStep(Rules):
    """A monster's Quick Effect that negates an activation is refused in the Damage Step, as if
    only ATK/DEF changes and Counter Traps were allowed there ("Horus the Black Flame Dragon LV8"
    cannot answer "Rush Recklessly" at the start of the Damage Step)."""

    def damage_step_allows(self, s, c, eff):
        if c.is_monster and eff.type == "quick" and eff.negates_activation and not eff.changes_stats_directly:
            return False
        return super().damage_step_allows(s, c, eff)


class MightNotAlterCountsAsAtkChange(Rules):
    """A card that might not alter ATK/DEF at resolution counts as one that does: an effect with a
    choice of which one option changes ATK/DEF ("Half or Nothing") is allowed in the Damage Step."""

    def damage_step_allows(self, s, c, eff):
        if s.step in self.stat_change_steps and any(
            o.op == "choose_one" and any(x.op in STAT_OPS for _label, ops in choice_options(o) for x in ops) for o in eff.ops
        ):  # fmt: skip
            return True
        return super().damage_step_allows(s, c, eff)


class StartTriggersAfterTheFlip(Rules):
    """"At the start of the Damage Step" triggers wait until "before damage calculation", after
    the face-down target was flipped ("Ninja Grandmaster Sasuke" activates late, "Sasuke
    Samurai" finds its target face-up and never activates)."""

    def _gather_triggers(self, w, when):
        if when == "start_of_damage_step":
            return
        if when == "before_damage_calculation":
            super()._gather_triggers(w, "start_of_damage_step")
            if w.s.triggers:
                return
        super()._gather_triggers(w, when)


class DamageResponsesRefusedInDamageStep(Rules):
    """Cards activated "when you take damage" are refused in the Damage Step, as if they had to
    name it ("Attack and Receive" cannot answer battle damage)."""

    def damage_step_allows(self, s, c, eff):
        if eff.when == "damage_taken":
            return False
        return super().damage_step_allows(s, c, eff)


class DestroyerTriggersAfterCalculation(Rules):
    """"If this card destroys an opponent's monster by battle" triggers activate right after damage
    calculation (as extra-attack effects do), not at the end of the Damage Step."""

    def _destroyer_triggers(self, s, moved):
        return []

    def _gather_triggers(self, w, when):
        super()._gather_triggers(w, when)
        a = w.s.attack
        if when == "after_damage_calculation" and a is not None and a.target is not None:
            extra = []
            tp = w.s.turn_player
            for me, other, controller in ((a.attacker, a.target, tp), (a.target, a.attacker, 1 - tp)):
                f, g = w.s.find_monster(me), w.s.find_monster(other)
                if f is None or g is None or not g[2].destroyed_by_battle:
                    continue
                for e in self.card(f[2].card).effects:
                    if e.type == "trigger" and e.when in ("destroys_by_battle", "destroys_by_battle_sent_to_gy"):
                        extra.append(Trigger(controller, me, f[2].card, e.index, e.mandatory))
            if extra:
                self._queue_triggers(w, list(w.s.triggers) + extra)


class ExtraAttackAtEndOfDamageStep(Rules):
    """An effect that gives an attacking monster a second attack when it destroys a monster by
    battle activates at the end of the Damage Step with the other "destroys ... by battle"
    triggers, not right after damage calculation."""

    def _condition(self, s, p, uid, c, eff, cond):
        if cond == "self_attacking_destroys_by_battle":
            return False  # (not after damage calculation: gathered below instead)
        return super()._condition(s, p, uid, c, eff, cond)

    def _destroyer_triggers(self, s, moved):
        found = super()._destroyer_triggers(s, moved)
        a = s.attack
        if a is not None and a.target is not None and a.target in {e["card_uid"] for e in moved}:
            f = s.find_monster(a.attacker)
            if f is not None:
                for e in self.card(f[2].card).effects:
                    if e.type == "trigger" and any(o.op == "extra_attack" for o in e.ops):
                        found.append(Trigger(s.turn_player, a.attacker, f[2].card, e.index, e.mandatory))
        return found


class ExtraAttackIgnored(Rules):
    """A resolved "It can make a second attack in a row" changes nothing: the monster still has
    one attack."""

    def attack_options(self, s, m):
        return super().attack_options(s, replace(m, extra_attacks=0))


class ExtraAttackWithoutEffect(Rules):
    """A monster whose card can give it a second attack has it whether or not that effect was
    activated and resolved."""

    def attack_options(self, s, m):
        if m.extra_attacks == 0 and any(o.op == "extra_attack" for e in self.card(m.card).effects for o in e.ops):
            m = replace(m, extra_attacks=1)
        return super().attack_options(s, m)


class InsteadIgnored(Rules):
    """An Equip Card that is destroyed "instead" of its monster being destroyed by battle (Mirror
    of Yata) is ignored: the monster is sent to the Graveyard."""

    def _destroyed_instead(self, s, uid):
        return None


class InsteadAtDamageCalculation(Rules):
    """What is done "instead" of destruction by battle is done at damage calculation: the monster
    is never destroyed by battle, its Equip Card goes at once."""

    def _damage_calculation(self, w):
        super()._damage_calculation(w)
        for side, i, m in list(w.s.monsters()):
            if m.destroyed_by_battle:
                instead = self._destroyed_instead(w.s, m.uid)
                if instead is not None:
                    self._put_monster(w, side, i, replace(m, destroyed_by_battle=False))
                    self.destroy(w, instead, by="effect")


class OpponentSummonEffectsInDamageStep(Rules):
    """An optional effect triggered by the opponent's Summon ("Naturia Horneedle") may be activated in
    the Damage Step: DS-LEGAL-OPTIONAL-TRIGGER applied without its DS-OPPONENT-SUMMON exception."""

    def damage_step_allows(self, s, c, eff):
        if c.is_monster and eff.when == "summoned" and not eff.mandatory:
            return True
        return super().damage_step_allows(s, c, eff)


class DestroyedByBattleTriggersNeedGraveyard(Rules):
    """An "If this card is destroyed by battle" trigger that names no Graveyard ("Slate Warrior")
    activates only from the Graveyard: banished by "Macro Cosmos", it does not."""

    def _destroyed_by_battle_triggers(self, s, moved):
        return super()._destroyed_by_battle_triggers(s, [e for e in moved if e["to"] == "graveyard"])


class DestroyedTriggersNotByBattle(Rules):
    """A trigger on being destroyed in general ("Warm Worm": "If this card is destroyed") activates
    after a card effect destroys the monster, not when it is destroyed by battle."""

    def _destroyed_in_battle_triggers(self, s, moved):
        return []


class DamageStepBoostAtCalculationOnly(Rules):
    """A monster's continuous effect that applies "during the Damage Step only" (Steamroid) is
    applied at damage calculation only, not from the start of the Damage Step."""

    def _damage_step_mods(self, s, uid):
        if s.step is not Step.DS_DURING_CALC:
            return []
        return super()._damage_step_mods(s, uid)


class CalculationHalvingIgnored(Rules):
    """A continuous effect applied at damage calculation only (Gaia Plate the Earth Giant's
    halving of the monster battling it) is never applied."""

    def _calculation_continuous(self, s, attacker, target, atk_a, value):
        return atk_a, value


class CalculationHalvingFromDamageStepStart(Rules):
    """A continuous effect applied at damage calculation only (Gaia Plate the Earth Giant's
    halving of the monster battling it) applies from the start of the Damage Step instead: the
    battling monster's ATK shows halved in every sub-step, and damage calculation uses it as it is."""

    def damage_step_key(self, s):
        a = s.attack
        if a is None or a.target is None or not s.step.in_damage_step:
            return None
        return (a.attacker, a.target)

    def _damage_step_mods(self, s, uid):
        out = super()._damage_step_mods(s, uid)
        a = s.attack
        if self.damage_step_key(s) is None or uid not in (a.attacker, a.target):
            return out
        other = a.target if uid == a.attacker else a.attacker
        for _side, src_uid, src, st in self._active_statics(s):
            if st.apply == "halve_battler_at_calculation" and src_uid == other:
                out = out + [(src.card, "atk", "halve", 0)]
        return out

    def _calculation_continuous(self, s, attacker, target, atk_a, value):
        return atk_a, value


class BattleDamageRedirectIgnored(Rules):
    """A continuous effect that gives its controller's battle damage to the opponent ("Amazoness
    Swords Woman") is never applied: the controller takes it."""

    def _damage_redirected(self, s, attacker, target, damage):
        return damage


class BattleDamageRedirectEveryBattle(Rules):
    """That effect applies to every battle of its controller's monsters, not only to battles
    involving the card itself."""

    def _damage_redirected(self, s, attacker, target, damage):
        sides = {side for side, _u, _src, st in self._active_statics(s) if st.apply == "battle_damage_to_opponent"}
        return sorted((1 - p if p in sides else p, a) for p, a in damage)


class BattleBanishIgnored(Rules):
    """A monster's effect that banishes an opponent's monster it destroys by battle ("Dark
    Magician of Chaos") is ignored: the monster goes to the Graveyard."""

    def _battle_banishers(self, s, attacker, target):
        return []


class OwnBanishIgnoredByBattle(Rules):
    """"If this face-up card would leave the field, banish it instead" no longer applies once the
    monster is destroyed by battle (treated as any other continuous effect of a destroyed-by-battle
    monster): it goes to the Graveyard."""

    def _banishes_itself(self, s, m):
        return False if m.destroyed_by_battle else super()._banishes_itself(s, m)


class BattleBanishAtCalculation(Rules):
    """The monster that "Dark Magician of Chaos" destroys by battle is banished at damage
    calculation, not when destroyed-by-battle monsters leave the field."""

    def _damage_calculation(self, w):
        super()._damage_calculation(w)
        for _side, _i, m in list(w.s.monsters()):
            if m.destroyed_by_battle and m.banish_when_sent:
                self._move_from_field(w, m.uid, "banished", reason="battle")


class BattleNegationIgnored(Rules):
    """"Negate the effects of monsters destroyed by battle with Fiend-Type monsters you control"
    ("Dark Ruler Ha Des") is ignored: the destroyed monster's trigger activates."""

    def _negates_destroyed_by(self, s, destroyer, victim_side):
        return False


class BattleNegationAnyDestroyer(Rules):
    """That negation applies to every monster destroyed by battle while "Dark Ruler Ha Des" is
    face-up, whatever destroyed it (the Fiend condition is left out)."""

    def _negates_destroyed_by(self, s, destroyer, victim_side):
        return any(
            st.apply == "negate_destroyed_by_own_fiends" and side != victim_side for side, _u, _src, st in self._active_statics(s)
        )


class RefusedByRulingInDamageStep(Rules):
    """The cards 002 names as refused in the Damage Step ("Curse of Anubis") may be activated there,
    as any card that directly changes ATK/DEF: DS-LEGAL-STATS without its DS-REFUSED-BY-RULING exception."""

    def damage_step_allows(self, s, c, eff):
        if c.name == "Curse of Anubis" and eff.type == "activate":
            return s.step in self.stat_change_steps and eff.changes_stats_directly
        return super().damage_step_allows(s, c, eff)


class AllowedByRulingRefusedInDamageStep(Rules):
    """The cards 002 allows in the Damage Step by ruling although their text gives no sign of it
    ("Chthonian Blast") are refused there: DS-ILLEGAL-OTHER applied without its DS-ALLOWED-BY-RULING exception."""

    def damage_step_allows(self, s, c, eff):
        if c.name == "Chthonian Blast" and eff.type == "activate":
            return False
        return super().damage_step_allows(s, c, eff)


class DestroyedWindowOnlyByBattle(Rules):
    """"When a face-up monster you control is destroyed and sent to the Graveyard" ("Chthonian Blast")
    answers only destruction by battle: a monster destroyed by a card effect opens no window after its Chain."""

    def _collect_fresh(self, w, acc):
        return [f for f in super()._collect_fresh(w, acc) if f[0] != "own_monster_destroyed"]

class ProtectionWithoutChoice(Rules):
    """An optional protection from destruction by battle (Gyroid) is applied automatically at
    damage calculation, its controller never asked (as the EDOPro core does)."""

    def _protection_to_choose(self, s):
        return None

    def _damage_calculation(self, w):
        a = w.s.attack
        if a is not None and a.target is not None:
            auto = tuple(
                (m.uid, True) for uid in (a.attacker, a.target) for f in [w.s.find_monster(uid)] if f is not None for m in [f[2]] if self._optional_protection(w.s, m)
            )
            w.s = replace(w.s, attack=replace(a, protections=auto))
        super()._damage_calculation(w)


class ProtectionChoiceIgnored(Rules):
    """Its controller chooses to apply an optional protection from destruction by battle, and
    the monster is destroyed by battle anyway."""

    def _damage_calculation(self, w):
        a = w.s.attack
        if a is not None:
            w.s = replace(w.s, attack=replace(a, protections=()))
        super()._damage_calculation(w)


class ScrapSharkSparedByBattle(Rules):
    """A monster destroyed by battle whose Continuous Effect destroys it when a card or effect is
    activated ("Scrap Shark") is spared that effect, like the other self-destroying monsters: it
    is sent to the Graveyard by battle."""

    def _destroyed_on_activation(self, w, c):
        if not (c.is_spell_trap or c.kind == "monster"):
            return
        for _side, _i, m in list(w.s.monsters()):
            if m.pos is not Pos.FACEDOWN and not m.destroyed_by_battle and self.has_static(w.s, m.uid, "destroy_self_on_activation"):
                self.destroy(w, m.uid, by="effect")


class DeclarationWindowStaysOpen(Rules):
    """The attack-declaration window stays open after both players pass."""

    def _advance(self, w):
        s = w.s
        if s.step is Step.BP_BATTLE and s.attack is not None and any(f[0] == "attack_declared" for f in s.fresh):
            if not any(f[0] == "window_passed" for f in s.fresh):
                w.s = replace(s, fresh=s.fresh + (("window_passed",),), passes=0, priority=s.turn_player)
                return
            w.s = replace(s, fresh=tuple(f for f in s.fresh if f[0] == "attack_declared"))
            self._enter_damage_step(w)
            w.s = replace(w.s, fresh=())
            return
        super()._advance(w)


class FlipEffectBeforeCalculation(Rules):
    """Flip effects of a monster flipped by the attack activate as soon as it is flipped,
    before damage calculation."""

    def _flip_target(self, w):
        super()._flip_target(w)
        self._gather_flip_triggers(w)
        for side, i, m in list(w.s.monsters()):
            if m.flipped_by_battle:
                self._put_monster(w, side, i, replace(m, flipped_by_battle=False))


class TargetsDestroyedByBattle(Rules):
    """Monsters destroyed by battle can still be chosen as targets (a flip monster can target
    itself)."""

    def _target_pool(self, s, p, uid, spec, c):
        out = super()._target_pool(s, p, uid, spec, c)
        if spec.zone == "monster":
            sides = {"own": (p,), "opponent": (1 - p,), "any": (0, 1)}[spec.side]
            for side in sides:
                for m in s.players[side].monsters:
                    if m is not None and m.destroyed_by_battle and m.uid not in out:
                        out.append(m.uid)
        return out


class EqualAtkDestroysOne(Rules):
    """Two monsters with equal ATK: only the attack target is destroyed."""

    def battle_result(self, tp, attacker, atk_a, target, pos, value):
        if target is not None and pos is Pos.ATK and atk_a == value and atk_a > 0:
            return [target], []
        return super().battle_result(tp, attacker, atk_a, target, pos, value)


class DamageToWrongPlayer(Rules):
    """When the attacker wins a battle between Attack Position monsters, the battle damage goes
    to the attacking player."""

    def battle_result(self, tp, attacker, atk_a, target, pos, value):
        destroy, damage = super().battle_result(tp, attacker, atk_a, target, pos, value)
        if target is not None and pos is Pos.ATK and value is not None and atk_a > value:
            damage = [(tp, amount) for _p, amount in damage]
        return destroy, damage


class BattlePhaseOnFirstTurn(Rules):
    """The Battle Phase may be entered on the first turn of the duel."""

    def _legal_actions(self, s):
        acts = super()._legal_actions(s)
        if s.turn == 1 and s.step is Step.MAIN1 and not s.chain and s.priority == s.turn_player:
            if not any(a.kind == "enter_bp" for a in acts):
                acts.insert(0, Action("enter_bp", s.turn_player, "enter Battle Phase"))
        return acts


class SetCardActivatesSameTurn(Rules):
    """Quick-Play Spells and Traps may be activated the turn they were Set."""

    def _can_activate(self, s, p, uid, c, eff, loc):
        if loc == "set":
            f = s.find_spell(uid)
            if f is not None and f[2].set_this_turn:
                side, i, card = f
                sp = list(s.players[side].spells)
                if i < 5:
                    sp[i] = replace(card, set_this_turn=False)
                    s = s.with_player(side, replace(s.players[side], spells=tuple(sp)))
        return super()._can_activate(s, p, uid, c, eff, loc)


class ControllersGraveyard(Rules):
    """Cards leaving the field go to their controller's Graveyard, not their owner's."""

    def pile_of(self, owner, controller):
        return controller


class FifoChain(Rules):
    """A chain resolves first in, first out."""

    def _resolve_chain(self, w):
        w.s = replace(w.s, chain=tuple(reversed(w.s.chain)))
        super()._resolve_chain(w)


class DirectAttackPastMonsters(Rules):
    """Any monster may attack directly even while the opponent controls monsters."""

    def can_attack_directly(self, s, uid, defender):
        return True


class PositionChangesTwice(Rules):
    """A manual battle position change is not recorded, so the monster may change position again
    in the same Main Phase 2 (and its position_changed_this_turn stays false)."""

    def _manual_position(self, w, action):
        super()._manual_position(w, action)
        f = w.s.find_monster(action.card_uid)
        if f is not None:
            side, i, m = f
            self._put_monster(w, side, i, replace(m, position_changed=False))


class PositionChangeAfterAttack(Rules):
    """A monster that declared an attack this turn may still change its battle position manually
    in Main Phase 2."""

    def _position_changes(self, s):
        out = super()._position_changes(s)
        offered = {a.card_uid for a in out}
        tp = s.turn_player
        for m in s.players[tp].monsters:
            if m is None or m.uid in offered or m.pos is Pos.FACEDOWN or not m.attacks_declared:
                continue
            if m.summoned_this_turn or m.set_this_turn or m.position_changed:
                continue
            out.append(Action("change_position", tp, f"change position {self.ref(s, m.uid)}", card_uid=m.uid))
        return out


class BattlePhaseEndsTheTurn(Rules):
    """When the Battle Phase ends, the turn goes straight to the End Phase: no Main Phase 2."""

    def _change_step(self, w, to):
        super()._change_step(w, Step.END if w.s.step is Step.BP_END and to is Step.MAIN2 else to)


class BattlePhaseWithoutEndStep(Rules):
    """With no attack in progress, ending the Battle Phase goes from the Battle Step straight to
    Main Phase 2: no End Step, so no window for "at the end of the Battle Phase"."""

    def _change_step(self, w, to):
        super()._change_step(w, Step.MAIN2 if w.s.step is Step.BP_BATTLE and to is Step.BP_END else to)


class EndStepWithoutPriority(Rules):
    """The End Step is entered and left in one move: on entering it play goes straight on to Main
    Phase 2, so no player gets priority there (no window for "at the end of the Battle Phase")."""

    def _change_step(self, w, to):
        super()._change_step(w, to)
        if to is Step.BP_END:
            super()._change_step(w, Step.MAIN2)


class OcgStartStepUnderTcg(Rules):
    """The OCG's Start Step under the TCG: only the turn player may activate Spell Speed 2 cards
    there, so the opponent's Set Trap is not offered after the turn player passes (the ocg
    ruleset's hook, model/rulesets.py, applied where the TCG rule holds)."""

    start_step_turn_player_only = True


class OcgNegateEffectUnderTcg(Rules):
    """The OCG's reading of Quick Effects that negate an activated effect under the TCG: "Skull
    Meister" is refused in the Damage Step, as if the TCG did not allow it there (the ocg ruleset's
    hook, model/rulesets.py, applied where the TCG rule holds: Mystic Tomato's effect activated in
    the Graveyard at the end of the Damage Step cannot be answered)."""

    negate_effect_in_damage_step = False


class SkippedBattlePhaseHasMainPhase2(Rules):
    """Skipping the Battle Phase leads to Main Phase 2 (the turn player may still change
    positions and activate cards there), not to the End Phase."""

    def _change_step(self, w, to):
        super()._change_step(w, Step.MAIN2 if w.s.step is Step.MAIN1 and to is Step.END else to)


class EquipOutlivesItsMonster(Rules):
    """A card that keeps a monster as its target (an Equip Card, Fiendish Chain, Spellbinding
    Circle) is not destroyed when that monster leaves the field: it stays, pointing at nothing."""

    def _cleanup(self, w):
        hidden = {}
        for side, i, c in list(w.s.spell_traps()):  # what they keep is hidden from the reference's cleanup
            if (c.equipped_to is not None or c.attached_to is not None) and not c.activating:
                hidden[c.uid] = (c.equipped_to, c.attached_to)
                self._set_spell(w, side, i, replace(c, equipped_to=None, attached_to=None))
        super()._cleanup(w)
        for side, i, c in list(w.s.spell_traps()):
            if c.uid in hidden:
                eq, at = hidden[c.uid]
                self._set_spell(w, side, i, replace(c, equipped_to=eq, attached_to=at))


class CallOfTheHauntedKeepsItsMonster(Rules):
    """When Call of the Haunted leaves the field, the monster it Special Summoned stays (the
    engine forgets the card's "when this card leaves the field, destroy that monster")."""

    def _move_card_object(self, w, side, card, dest, reason):
        f = w.s.find_spell(card.uid)
        if f is not None and f[2].linked_monster is not None:
            self._set_spell(w, f[0], f[1], replace(f[2], linked_monster=None))
            card = w.s.find_spell(card.uid)[2]
        super()._move_card_object(w, side, card, dest, reason)


class CallOfTheHauntedForgetsItsMonster(Rules):
    """Call of the Haunted Special Summons its target but is never bound to it: the engine does
    not record the link (linked_monster stays empty), so neither card takes the other along. An
    invariant that believed the engine's linked_monster would see no link and pass it."""

    def _finish_link(self, w, link):
        super()._finish_link(w, link)
        f = w.s.find_spell(link.card_uid)
        if f is not None and f[2].linked_monster is not None:
            self._set_spell(w, f[0], f[1], replace(f[2], linked_monster=None))  # the bond is never made


class DamageStepProtectionLastsTheTurn(Rules):
    """Effects that last until the end of the Damage Step (Kuriboh's "you take no battle damage
    from that battle") are kept until the end of the turn."""

    def _leave_damage_step(self, w):
        kept = tuple(l for l in w.s.lingering if l.until == "end_of_damage_step")
        super()._leave_damage_step(w)
        w.s = replace(w.s, lingering=w.s.lingering + kept)


class CalculationBoostOutlastsCalculation(Rules):
    """An ATK change for damage calculation only (Injection Fairy Lily's 3000) lasts until the end
    of the Damage Step instead of ending with damage calculation."""

    def _expire_mods(self, w, until):
        if until == "damage_calculation" and w.s.step is Step.DS_DURING_CALC:
            return  # (the reference ends them here; they end with the Damage Step instead)
        super()._expire_mods(w, until)


class DestroyedFaceDownFlips(Rules):
    """A face-down Flip monster destroyed by a card effect (Torrential Tribute, Dark Hole) still
    activates its Flip effect, as if destroying it had flipped it."""

    def destroy(self, w, uid, by, banish=False):
        f = w.s.find_monster(uid)
        super().destroy(w, uid, by, banish)
        if f is not None and f[2].pos is Pos.FACEDOWN and w.s.find_monster(uid) is None:
            for e in self.card(f[2].card).effects:
                if e.type == "flip" and not (e.targets and not self._target_choices(w.s, f[0], uid, e)):
                    w.s = replace(w.s, triggers=w.s.triggers + (Trigger(f[0], uid, f[2].card, e.index, e.mandatory),))


class DestroyedActivationIsNegated(Rules):
    """Destroying a card whose activation is on the chain (Mystical Space Typhoon chained to
    Fiendish Chain) negates that activation, as if destroying and negating were the same."""

    def destroy(self, w, uid, by, banish=False):
        if any(l.card_uid == uid for l in w.s.chain):
            w.s = replace(w.s, chain=tuple(replace(l, negated=True) if l.card_uid == uid else l for l in w.s.chain))
        super().destroy(w, uid, by, banish)


class NegatedCardStaysOnTheField(Rules):
    """A Spell or Trap Card whose activation was negated (by Trap Jammer, Magic Jammer, Seven
    Tools of the Bandit) stays face-up on the field when its link resolves."""

    def destroy(self, w, uid, by, banish=False):
        if by == "effect" and any(l.card_uid == uid and l.negated for l in w.s.chain) and w.s.find_spell(uid) is not None:
            return  # "negate the activation, and if you do, destroy it": the destruction is forgotten
        super().destroy(w, uid, by, banish)

    def _finish_link(self, w, link):
        if link.negated and link.is_card_activation:
            f = w.s.find_spell(link.card_uid)
            if f is not None:
                self._set_spell(w, f[0], f[1], replace(f[2], activating=False))
                return
        super()._finish_link(w, link)


class SummonWindowStaysOpen(Rules):
    """"When a monster is Summoned" cards (Torrential Tribute, Bottomless Trap Hole) stay legal
    for the rest of the turn once a monster was Summoned, not only right after the Summon."""

    def _timing_ok(self, s, p, c, eff):
        if eff.when == "summoned" and any(m.summoned_this_turn for _s, _i, m in s.monsters()):
            return True
        return super()._timing_ok(s, p, c, eff)


class SummonedMonsterCannotAttack(Rules):
    """A monster Summoned this turn is never offered an attack, as if it had to wait a turn (the
    TCG has no such rule: a monster Normal Summoned in Main Phase 1, or Special Summoned in the
    Battle Phase, may attack)."""

    def attack_options(self, s, m):
        return [] if m.summoned_this_turn else super().attack_options(s, m)


class UnattackableMonsterBlocksDirectAttack(Rules):
    """A monster that cannot be attacked (The Legendary Fisherman while Umi is face-up) still
    stops a direct attack: the engine offers a direct attack only when the opponent controls no
    monster at all, or the attacker's own effect allows it."""

    def can_attack_directly(self, s, uid, defender):
        if self.has_static(s, uid, "direct_attack"):
            return True
        return not any(m is not None and not m.destroyed_by_battle for m in s.players[defender].monsters)


class OpponentNotAskedAfterDeclaration(Rules):
    """After an attack declaration, the turn player's pass closes the response window at once:
    the opponent is never asked whether to respond to the declaration (Sakuretsu Armor, Mirror
    Force never get their chance)."""

    def _pass(self, w, p):
        s = w.s
        if (
            s.step is Step.BP_BATTLE and s.attack is not None and not s.chain and s.passes == 0 and p == s.turn_player
            and any(f[0] == "attack_declared" for f in s.fresh)
        ):  # fmt: skip
            w.emit("passed", player=p)
            self._advance(w)  # as if both had passed
            return
        super()._pass(w, p)


class NoActivationAfterDeclarationWindow(Rules):
    """Once both players have passed on an attack declaration, nothing can be activated until the
    Damage Step: the engine takes the declaration window for the Battle Step's only chance to
    respond (003/004: "other cards may still be activated" before both agree to enter the Damage
    Step, "Book of Moon" among them)."""

    def _activations(self, s, p):
        if s.step is Step.BP_BATTLE and s.attack is not None and not any(f[0] == "attack_declared" for f in s.fresh):
            return []
        return super()._activations(s, p)


class BattlePhaseEndsOnlyWhenNoAttackIsLeft(Rules):
    """The turn player cannot end the Battle Phase while a monster could still attack: the engine
    offers "end Battle Phase" only once no monster has an attack left, as if every monster had to
    attack."""

    def _pass_action(self, s, p):
        if s.step is Step.BP_BATTLE and s.attack is None and not s.chain and p == s.turn_player:
            if any(m is not None and self.attack_options(s, m) for m in s.players[p].monsters):
                return None
        return super()._pass_action(s, p)


@dataclass(frozen=True)
class Mutant:
    name: str
    rules: type[Rules]
    family: str  # the invariant family it is aimed at
    board: str  # a seed board where the bug shows

    @property
    def description(self) -> str:
        return " ".join((self.rules.__doc__ or "").split())


MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant("replay-resets-count", ReplayResetsCount, "replay", "000-replay-1.toml"),
        Mutant("replay-is-second-attack", ReplayIsSecondAttack, "attack counts", "000-replay-2.toml"),
        Mutant("stat-change-replays", StatChangeReplays, "replay", "000-not-replay-1.toml"),
        Mutant("opponent-summon-no-replay", OpponentSummonNoReplay, "replay", "000-replay-1.toml"),
        Mutant("replay-charges-cost-again", ReplayChargesCostAgain, "replay", "000-replay-dark-elf.toml"),
        Mutant("mirror-force-in-damage-step", MirrorForceInDamageStep, "damage step", "000-ds-spell-trap-list-not-ok.toml"),
        Mutant("stat-change-during-calculation", StatChangeDuringCalculation, "damage step", "000-ds-spell-trap-list-ok.toml"),
        Mutant("counter-traps-refused-in-damage-step", CounterTrapsRefusedInDamageStep, "damage step", "000-ds-counter-traps.toml"),
        Mutant("negating-quick-effect-refused-in-damage-step", NegatingQuickEffectRefusedInDamageStep, "damage step", "004-ds-horus-negates.toml"),
        Mutant("might-not-alter-counts-as-atk-change", MightNotAlterCountsAsAtkChange, "damage step", "002-half-or-nothing.toml"),
        Mutant("start-triggers-after-the-flip", StartTriggersAfterTheFlip, "damage step", "002-ds-start-triggers.toml"),
        Mutant("damage-responses-refused-in-damage-step", DamageResponsesRefusedInDamageStep, "damage step", "002-ds-damage-response.toml"),
        Mutant("destroyer-triggers-after-calculation", DestroyerTriggersAfterCalculation, "damage step", "002-ds-destroys-by-battle.toml"),
        Mutant("extra-attack-at-end-of-damage-step", ExtraAttackAtEndOfDamageStep, "damage step", "002-ds-extra-attack.toml"),
        Mutant("extra-attack-ignored", ExtraAttackIgnored, "attack counts", "002-ds-extra-attack.toml"),
        Mutant("extra-attack-without-effect", ExtraAttackWithoutEffect, "attack counts", "002-ds-extra-attack.toml"),
        Mutant("instead-ignored", InsteadIgnored, "damage step", "002-ds-instead.toml"),
        Mutant("instead-at-damage-calculation", InsteadAtDamageCalculation, "damage step", "002-ds-instead.toml"),
        Mutant("opponent-summon-effects-in-damage-step", OpponentSummonEffectsInDamageStep, "damage step", "002-ds-opponent-summon.toml"),
        Mutant("destroyed-by-battle-triggers-need-graveyard", DestroyedByBattleTriggersNeedGraveyard, "damage step", "002-ds-destroyed-by-battle.toml"),
        Mutant("destroyed-triggers-not-by-battle", DestroyedTriggersNotByBattle, "damage step", "002-ds-destroyed-in-general.toml"),
        Mutant("damage-step-boost-at-calculation-only", DamageStepBoostAtCalculationOnly, "accounting", "002-ds-start-cont.toml"),
        Mutant("calculation-halving-ignored", CalculationHalvingIgnored, "accounting", "002-ds-calc-cont.toml"),
        Mutant("calculation-halving-from-damage-step-start", CalculationHalvingFromDamageStepStart, "accounting", "002-ds-calc-cont.toml"),
        Mutant("battle-damage-redirect-ignored", BattleDamageRedirectIgnored, "accounting", "002-ds-damage-cont.toml"),
        Mutant("battle-damage-redirect-every-battle", BattleDamageRedirectEveryBattle, "accounting", "002-ds-damage-cont.toml"),
        Mutant("battle-banish-ignored", BattleBanishIgnored, "damage step", "002-ds-banish-battle.toml"),
        Mutant("own-banish-ignored-by-battle", OwnBanishIgnoredByBattle, "damage step", "002-ds-banish-battle.toml"),
        Mutant("battle-banish-at-calculation", BattleBanishAtCalculation, "damage step", "002-ds-banish-battle.toml"),
        Mutant("battle-negation-ignored", BattleNegationIgnored, "damage step", "002-ds-negate-battle.toml"),
        Mutant("battle-negation-any-destroyer", BattleNegationAnyDestroyer, "damage step", "002-ds-negate-battle.toml"),
        Mutant("protection-without-choice", ProtectionWithoutChoice, "damage step", "002-ds-calc-protect.toml"),
        Mutant("protection-choice-ignored", ProtectionChoiceIgnored, "damage step", "002-ds-calc-protect.toml"),
        Mutant("scrap-shark-spared-by-battle", ScrapSharkSparedByBattle, "damage step", "002-self-destroy-scrap-shark.toml"),
        Mutant("declaration-window-stays-open", DeclarationWindowStaysOpen, "chains and windows", "003-004-example-3.toml"),
        Mutant("flip-effect-before-calculation", FlipEffectBeforeCalculation, "damage step", "000-flip-man-eater-bug.toml"),
        Mutant("targets-destroyed-by-battle", TargetsDestroyedByBattle, "damage step", "000-flip-hane-hane.toml"),
        Mutant("equal-atk-destroys-one", EqualAtkDestroysOne, "accounting", "000-not-replay-1.toml"),
        Mutant("damage-to-wrong-player", DamageToWrongPlayer, "accounting", "rule-calc-atk-atk.toml"),
        Mutant("battle-phase-on-first-turn", BattlePhaseOnFirstTurn, "attack counts", "002-first-turn.toml"),
        Mutant("set-card-activates-same-turn", SetCardActivatesSameTurn, "chains and windows", "rule-ch-set-turn.toml"),
        Mutant("controllers-graveyard", ControllersGraveyard, "accounting", "000-control-owner-graveyard.toml"),
        Mutant("fifo-chain", FifoChain, "chains and windows", "rule-ch-lifo-ring.toml"),
        Mutant("direct-attack-past-monsters", DirectAttackPastMonsters, "attack counts", "000-replay-2.toml"),
        Mutant("position-changes-twice", PositionChangesTwice, "attack counts", "000-replay-5.toml"),
        Mutant("position-change-after-attack", PositionChangeAfterAttack, "attack counts", "rule-atk-position.toml"),
        Mutant("battle-phase-ends-the-turn", BattlePhaseEndsTheTurn, "turn structure", "002-skip-battle-phase.toml"),
        Mutant("skipped-battle-phase-has-main-phase-2", SkippedBattlePhaseHasMainPhase2, "turn structure", "002-skip-battle-phase.toml"),
        Mutant("battle-phase-without-end-step", BattlePhaseWithoutEndStep, "turn structure", "002-skip-battle-phase.toml"),
        Mutant("end-step-without-priority", EndStepWithoutPriority, "turn structure", "002-skip-battle-phase.toml"),
        Mutant("ocg-start-step-under-tcg", OcgStartStepUnderTcg, "chains and windows", "000-replay-1.toml"),
        Mutant("ocg-negate-effect-under-tcg", OcgNegateEffectUnderTcg, "damage step", "002-ds-negate-effect.toml"),
        Mutant("equip-outlives-its-monster", EquipOutlivesItsMonster, "accounting", "rule-card-cont-target.toml"),
        Mutant("call-of-the-haunted-keeps-its-monster", CallOfTheHauntedKeepsItsMonster, "accounting", "rule-card-cont-target.toml"),
        Mutant("call-of-the-haunted-forgets-its-monster", CallOfTheHauntedForgetsItsMonster, "accounting", "rule-card-cont-target.toml"),
        Mutant("damage-step-protection-lasts-the-turn", DamageStepProtectionLastsTheTurn, "damage step", "rule-ds-kuriboh.toml"),
        Mutant("calculation-boost-outlasts-calculation", CalculationBoostOutlastsCalculation, "damage step", "rule-ds-lily.toml"),
        Mutant("destroyed-face-down-flips", DestroyedFaceDownFlips, "damage step", "000-facedown-flip-destroyed-by-bug.toml"),
        Mutant("destroyed-activation-is-negated", DestroyedActivationIsNegated, "chains and windows", "002-fiendish-chain-mst.toml"),
        Mutant("summon-window-stays-open", SummonWindowStaysOpen, "chains and windows", "003-004-shining-angel-torrential.toml"),
        Mutant("negated-card-stays-on-the-field", NegatedCardStaysOnTheField, "chains and windows", "000-ds-counter-traps.toml"),
        Mutant("summoned-monster-cannot-attack", SummonedMonsterCannotAttack, "attack counts", "rule-atk-summon-turn.toml"),
        Mutant("unattackable-monster-blocks-direct-attack", UnattackableMonsterBlocksDirectAttack, "attack counts", "000-replay-3.toml"),
        Mutant("opponent-not-asked-after-declaration", OpponentNotAskedAfterDeclaration, "chains and windows", "003-004-example-1.toml"),
        Mutant("no-activation-after-declaration-window", NoActivationAfterDeclarationWindow, "chains and windows", "003-004-example-2.toml"),
        Mutant("battle-phase-ends-only-when-no-attack-is-left", BattlePhaseEndsOnlyWhenNoAttackIsLeft, "turn structure", "000-replay-1.toml"),
        Mutant("refused-by-ruling-in-damage-step", RefusedByRulingInDamageStep, "damage step", "002-ds-refused-by-ruling.toml"),
        Mutant("allowed-by-ruling-refused-in-damage-step", AllowedByRulingRefusedInDamageStep, "damage step", "002-ds-allowed-by-ruling.toml"),
        Mutant("destroyed-window-only-by-battle", DestroyedWindowOnlyByBattle, "chains and windows", "002-ds-allowed-by-ruling.toml"),
    )
}


# =============================================================================================
# Value mutants: bugs that show only at particular values (ATK equal to DEF, damage exactly equal
# to the remaining LP, 0 against 0). The concrete seed boards do not hit those values, so
# enumeration (`bpcheck check`, `bpcheck mutants`) misses them; `bpcheck prove` kills them from
# the symbolic boards in symbolic/ (docs/proving.md). They are reachable as `--engine
# mutant:NAME` but kept out of MUTANTS, whose every member `bpcheck mutants` must kill on the
# seed boards. Their arithmetic goes through bpcheck.model.arith, like the rules they change.
# =============================================================================================

from bpcheck.model import arith  # noqa: E402


class ExactLethalGoesOn(Rules):
    """A player whose LP reach exactly 0 stays in the duel: the engine ends it only when the
    damage exceeds the LP left (damage > LP instead of damage >= LP)."""

    def __init__(self, pool):
        super().__init__(pool)
        self._overkilled: set[int] = set()

    def _lose_lp(self, w, p, amount):
        if arith.gt(amount, w.s.players[p].lp):
            self._overkilled.add(p)
        super()._lose_lp(w, p, amount)

    def _pay_lp(self, w, p, amount):
        # The bug is in damage only: a cost that takes the LP to 0 ends the duel as in the reference.
        if arith.ge(amount, w.s.players[p].lp):
            self._overkilled.add(p)
        super()._pay_lp(w, p, amount)

    def _check_lp(self, w):
        if w.s.over:
            return
        zero = sorted(p for p in self._overkilled if arith.le(w.s.players[p].lp, 0))
        self._overkilled.clear()
        if not zero:
            return
        winner = None if len(zero) == 2 else 1 - zero[0]
        w.s = replace(w.s, over=True, winner=winner, triggers=(), choice=None)
        w.emit("duel_over", winner=winner, reason="lp_zero")

    def apply(self, s, action):
        self._overkilled.clear()
        return super().apply(s, action)


class CostNeedsMoreLp(Rules):
    """An LP cost can be paid only with more LP than the cost: with exactly 1000 LP, Seven Tools
    of the Bandit is refused (an off-by-one: LP > cost instead of LP >= cost)."""

    def _costs_payable(self, s, p, uid, eff):
        for o in eff.cost:
            if o.op == "pay_lp" and arith.le(s.players[p].lp, o.get("amount")):
                return False
        return super()._costs_payable(s, p, uid, eff)


class ZeroAtkAttackerTakesNoDamage(Rules):
    """A 0-ATK attacker against a Defense Position monster takes no battle damage: the engine
    skips damage calculation for an attacker with 0 ATK (as if it could deal nothing, it
    receives nothing)."""

    def battle_result(self, tp, attacker, atk_a, target, pos, value):
        if target is not None and pos is not Pos.ATK and arith.eq(atk_a, 0):
            return [], []
        return super().battle_result(tp, attacker, atk_a, target, pos, value)


VALUE_MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant("exact-lethal-goes-on", ExactLethalGoesOn, "accounting", "symbolic/lp-zero-battle.toml"),
        Mutant("cost-needs-more-lp", CostNeedsMoreLp, "chains and windows", "symbolic/counter-trap-lp-cost.toml"),
        Mutant("zero-atk-attacker-takes-no-damage", ZeroAtkAttackerTakesNoDamage, "accounting", "symbolic/calc-atk-def.toml"),
    )
}
