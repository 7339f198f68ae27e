"""Card facts the invariants need, written down independently of the model's card data.

The model derives behaviour from model/cards/*.toml; invariants must not recompute a verdict
with the model's own data or code, so the few card facts they rely on are restated here from
the printed card texts and the seed passages that name them. A disagreement between this table
and an engine is exactly what the invariants are for.
"""

from __future__ import annotations

# Monsters that may attack directly even when the opponent controls monsters (000 "CAN I USE
# MIRROR FORCE WHEN A TOON ATTACKS?"; card texts).
DIRECT_ATTACKERS = frozenset({"Jinzo #7"})
# Equip Spells that let the equipped monster attack directly (000 replay example #4).
DIRECT_ATTACK_EQUIPS = frozenset({"Shooting Star Bow - Ceal"})
# Monsters that cannot be targeted for attacks while a Field Spell is face-up (000 example #3).
UNATTACKABLE_WHILE_FIELD = {"The Legendary Fisherman": "Umi"}
# Monsters that may attack each opponent's monster once each (000 replay example #5).
EACH_MONSTER_ATTACKERS = frozenset({"Asura Priest"})
# Monsters that must attack if able (002 ¶1).
MUST_ATTACK = frozenset({"Berserk Gorilla"})
# Continuous Traps whose attached monster cannot attack (002 Battle Step note; 003/004).
CANNOT_ATTACK_ATTACHED = frozenset({"Fiendish Chain", "Spellbinding Circle", "Shadow Spell"})
# Face-up cards that stop Level 4+ monsters from attacking (000 not-a-replay example #3).
LEVEL_LOCKS = {"Gravity Bind": 4}
# Cards whose resolution negates the attack (the attack stops: STOP-ATTACK).
NEGATE_ATTACK_CARDS = frozenset({"Magic Cylinder"})

# "When an (opponent's) monster declares an attack" cards (002 attack declaration; 003/004).
ATTACK_RESPONSE_CARDS = frozenset({"Mirror Force", "Magic Cylinder", "Sakuretsu Armor", "Magician's Circle"})

# Damage Step, what may be activated (000 "Spell / Trap Cards"; 002 lists; 003/004 lists).
# Cards that directly change ATK/DEF: legal up to the start of damage calculation.
DS_STAT_CARDS = frozenset({"Reinforcements", "Rush Recklessly", "Castle Walls", "Mirror Wall", "Shadow Spell"})
# Effects whose text names damage calculation: legal during it only.
DS_CALC_ONLY_CARDS = frozenset({"Kuriboh", "Injection Fairy Lily"})
# TCG: an ATK/DEF modifier whose text names the Damage Step ("Honest"): legal up to and
# including damage calculation (002 "Cards that can be activated at Damage Step").
DS_UP_TO_CALC_CARDS = frozenset({"Honest"})
DS_DAMAGE_CALC_CARDS = DS_CALC_ONLY_CARDS | DS_UP_TO_CALC_CARDS
# Triggered and flip effects that activate in the Damage Step.
DS_TRIGGER_CARDS = frozenset(
    {"Man-Eater Bug", "Hane-Hane", "Penguin Soldier", "Magician of Faith", "Mystic Tomato", "Shining Angel", "Reflect Bounder"}
)
FLIP_MONSTERS = frozenset({"Man-Eater Bug", "Hane-Hane", "Penguin Soldier", "Magician of Faith"})
# Monster effects of Spell Speed 2 (Quick Effects) in the pool.
QUICK_EFFECT_MONSTERS = frozenset({"Honest", "Kuriboh", "Injection Fairy Lily"})

# Counter Traps: what they answer and what they need (card texts; 000 "Counter-Trap cards may be
# used during the Damage Step").
COUNTER_TRAPS = {
    "Magic Jammer": {"answers": "spell", "discard": 1},
    "Seven Tools of the Bandit": {"answers": "trap", "lp": 1000},
    "Trap Jammer": {"answers": "trap", "opponent_only": True, "battle_phase": True},
}

TOKENS = frozenset({"Sheep Token", "Ojama Token"})

# Sub-steps of the TCG Damage Step, in order (002). The flip sub-step happens only for a
# face-down target.
DAMAGE_STEPS = (
    "damage_step_start",
    "damage_step_flip",
    "damage_step_before_calculation",
    "damage_step_during_calculation",
    "damage_step_after_calculation_1",
    "damage_step_after_calculation_2",
    "damage_step_end",
)
STAT_CHANGE_STEPS = ("damage_step_start", "damage_step_flip", "damage_step_before_calculation")


def speed_of(kind: str, subtype: str, card: str) -> int:
    """Spell speed from the card category (rulebook; CH-SPEED)."""
    if kind == "trap":
        return 3 if subtype == "counter" else 2
    if kind == "spell":
        return 2 if subtype == "quick-play" else 1
    return 2 if card in QUICK_EFFECT_MONSTERS else 1
