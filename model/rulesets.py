"""Rulesets as first-class objects (python-chess's ``VARIANTS``): one :class:`Rules` subclass per
ruleset and a registry, :data:`RULESETS`, from a ruleset's name to its class.

``tcg`` is the reference (:class:`~bpcheck.model.engine.Rules` itself, the default). A ruleset
overrides the variant hooks of :class:`Rules` (class attributes and methods marked "Variant
hook"), each citing its rule in docs/rules.md; docs/rulesets.md says how a ruleset is chosen
(a board's or scenario's ``ruleset`` field, ``--ruleset``) and how one is added (one class here
plus its catalogue entries).
"""

from __future__ import annotations

from bpcheck.errors import InputError
from bpcheck.model.engine import STAT_CHANGE_STEPS, Action, Rules
from bpcheck.model.state import State

DEFAULT_RULESET = "tcg"


class OcgRules(Rules):
    """The OCG Battle Phase: 002's "OCG Battle Phase" section and the TCG section's "In the OCG"
    sentences."""

    name = "ocg"
    # rule: OCG-START-STEP-TP (only the turn player activates Spell Speed 2 in the Start Step)
    start_step_turn_player_only = True
    # rule: OCG-BATTLE-ONE-CHAIN (only one Chain in response to an attack declaration)
    one_chain_per_attack_declaration = True
    # rule: OCG-DS-FLIP-BEFORE-CALC (the face-down target is flipped at "Before Damage Calculation")
    flip_in_own_substep = False
    # rule: OCG-DS-CALC-SAYS-SO (during damage calculation only cards that say so: an ATK/DEF
    # modifier naming the Damage Step is activated up to, not during, damage calculation)
    damage_step_timing_steps = STAT_CHANGE_STEPS
    # rule: OCG-DS-NEGATE-EFFECT (a Quick Effect that negates an activated effect, not its
    # activation, is not allowed in the Damage Step for this reason alone: "Skull Meister")
    negate_effect_in_damage_step = False
    # The EDOPro core has no duel flag for 002's OCG Battle Phase (docs/ocgcore.md, "Rulesets and
    # the core's duel flags"): `--engine ocgcore` plays an ocg board with the flags of tcg.
    core_duel_flags: tuple[str, ...] = ()


class GoatRules(Rules):
    """The Goat-format era (April 2005): a replay the turn player does not attack again after is
    stored, as the EDOPro core's ``DUEL_STORE_ATTACK_REPLAYS`` flag (part of ``DUEL_MODE_GOAT``)
    does: the core does not ask whether to attack again and does not count the declaration, so
    the monster may declare an attack later in the Battle Phase."""

    name = "goat"
    replay_stores_attack = True  # rule: GOAT-RPL-STORED
    # The one flag of the core's DUEL_MODE_GOAT that this ruleset models (rule: GOAT-RPL-STORED);
    # the mode's others change what the model plays as tcg (docs/ocgcore.md, "Rulesets and the
    # core's duel flags").
    core_duel_flags: tuple[str, ...] = ("DUEL_STORE_ATTACK_REPLAYS",)

    def _replay_actions(self, s: State) -> list[Action]:
        # rule: GOAT-RPL-STORED (no choice of a new target: the attack is stored)
        return [a for a in super()._replay_actions(s) if a.option == "call_off"]


RULESETS: dict[str, type[Rules]] = {"tcg": Rules, "ocg": OcgRules, "goat": GoatRules}


def known_rulesets() -> str:
    return ", ".join(RULESETS)


def ruleset_class(name: str | None, file: str = "--ruleset", field: str = "") -> type[Rules]:
    """The class of the ruleset `name` (None: the default, tcg); an unknown name is an
    :class:`InputError` naming `file`, `field` and the known rulesets."""
    if name is None:
        return RULESETS[DEFAULT_RULESET]
    cls = RULESETS.get(name)
    if cls is None:
        raise InputError(file, field, f"unknown ruleset {name!r} (known: {known_rulesets()})")
    return cls


def core_duel_flags(name: str | None) -> tuple[str, ...]:
    """The names of the EDOPro core's duel flags (``DUEL_*`` of its ``ocgapi_constants.h``) that
    select the ruleset `name` in the core, beyond the Master Rule 5 duel every ruleset starts
    from: data for an engine adapter (engines/ocgcore), which resolves the names. A ruleset class
    states them as ``core_duel_flags``; one stating none (tcg, the reference) needs none."""
    return tuple(getattr(ruleset_class(name), "core_duel_flags", ()))


def under_ruleset(rules_cls: type[Rules], name: str | None) -> type[Rules]:
    """`rules_cls` (the reference or a mutant: a :class:`Rules` subclass) played under the
    ruleset `name`: the class itself under tcg, else a class whose method order puts the mutant's
    overrides before the ruleset's (``Mutant -> OcgRules -> Rules``)."""
    rs = ruleset_class(name)
    if rs is Rules or issubclass(rules_cls, rs):
        return rules_cls
    if rules_cls is Rules:
        return rs
    return type(f"{rules_cls.__name__}[{rs.name}]", (rules_cls, rs), {"name": rs.name})
