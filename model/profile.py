"""Card profiles: the Battle Phase facts of a card, read from its data row and its English text.

``profile(card) -> CardProfile`` reads a :class:`bpcheck.model.cdb.Card` (its ``datas`` row and
its ``texts.desc``), never the card scripts and never a list of card names. It cuts the text into
effects and, for each effect, decides:

- ``kind``: ``activation`` (a Spell/Trap Card's own activation), ``ignition``, ``quick``,
  ``trigger``, ``flip``, ``continuous`` (text that is not activated: continuous effects,
  Summoning conditions, restrictions) or ``materials`` (an Extra Deck monster's material line);
- ``optional`` (a trigger or Flip effect that says "you can") or mandatory;
- ``speed``: the Spell Speed 1, 2 or 3 (``None`` for text that is not activated);
- ``events``: what a trigger waits for (``destroyed_by_battle``, ``sent_to_gy``, ``flipped``, ...);
- ``windows``: the times its text allows or forbids (``battle_phase``, ``either_turn``,
  ``attack_declared_by_opponent``, ``damage_calculation``, ``not_damage_step``, ...);
- ``damage_step``: per ruleset (``tcg``, ``ocg``) and per Damage Step sub-step (``start``,
  ``before_calc``, ``during_calc``, ``after_calc``, ``end``), whether the seeds' Damage Step
  rules allow an activation of this effect there. The effect's own timing (its events and
  windows) still applies on top: ``True`` means "the Damage Step rules do not forbid it".

Every decision is a :class:`Decision`: its value, the id of the rule that made it (``RULES``: each
with its seed citation, docs/profiles.md), and its evidence: the text span (character offsets
into ``card.text`` and the quoted words) or the data bit. Where the rules cannot decide from the
text, the value is :data:`UNKNOWN`, never a guess.

The reader is a table of phrase patterns (``PATTERNS``), each with the rule it serves. Modern
("Problem-Solving") card text is structured: an activation condition ends with ":", a cost
with ";", Quick Effects say "(Quick Effect)"; text with neither ":" nor ";" is not activated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bpcheck.model import cdb as C

UNKNOWN = "unknown"
SUBSTEPS = ("start", "before_calc", "during_calc", "after_calc", "end")
RULESETS = ("tcg", "ocg")

S002 = "002_137609e72fe0b129.txt"  # "Breakdown of the Battle Phase" (TCG and OCG)
S004 = "004_d23456bb122fd088.txt"  # "Basic FAQ: Phases & Steps"
S000 = "000_47ceed25f3514138.txt"  # "Basic Game Play" FAQ
S003 = "003_6482fb3e57096706.txt"  # card-maker wiki Battle Phase page


@dataclass(frozen=True)
class Rule:
    id: str
    says: str
    cite: str  # seed file:line (heading)


def _r(id_: str, says: str, cite: str) -> tuple[str, Rule]:
    return id_, Rule(id_, says, cite)


# Every rule the reader applies, with the seed passage it rests on (docs/profiles.md, table).
RULES: dict[str, Rule] = dict([
    # -- reading the text (the card's own wording; the "modern card text is structured")
    _r("TXT-NOT-ACTIVATED", "text with neither ':' nor ';' is not an activated effect (continuous effect, condition or restriction)",
       "issue 30 item 2 (conditions before ':', costs before ';'); no seed passage"),
    _r("TXT-MATERIALS", "the first line of a Fusion/Synchro/Xyz/Link monster's text without ':'/';' lists its materials", "card frame (datas.type); no seed passage"),
    _r("TXT-NORMAL-MONSTER", "a Normal Monster (TYPE_NORMAL, no TYPE_EFFECT) has no effects: its text is flavour", f"{S000}:11 (Synchro Monsters; 'Normal' vs effect frames); datas.type"),
    _r("TXT-OLD-TRIGGER", "old wording 'When <event>, you can ...' (no ':') is an optional trigger", f"{S002}:67 (Most optional Trigger and Trigger-like Effects); wording only"),
    _r("TXT-UNDECIDED", "the text neither has the structure of an activated effect nor of a continuous one", "no rule decides"),
    # -- kinds
    _r("KIND-ST-ACTIVATION", "the first effect of a Normal/Quick-Play/Counter/Ritual Spell or Normal/Counter Trap is the card's activation",
       f"{S000}:183 (Spell / Trap Cards); {S004}:30 (Main Phase 1: activate Spell/Trap Cards)"),
    _r("KIND-ST-ACTIVATION-IMPLICIT", "a Continuous/Field/Equip Spell or Continuous Trap is activated as a card before its effects apply",
       f"{S002}:50 (Continuous Trap Cards ... activated during the Damage Step)"),
    _r("KIND-PENDULUM-SCALE", "a Pendulum Monster can be activated as a Spell Card in a Pendulum Zone (Spell Speed 1: not in the Battle Phase)",
       "the seeds are silent on Pendulum Zones: the official TCG rulebook (Pendulum Monsters are activated as Spell Cards in the Pendulum Zone during your Main Phase)"),
    _r("TXT-ST-RESOLUTION", "a Normal/Quick-Play/Counter Spell or Normal/Counter Trap whose activation has neither ':' nor ';' (older wording) resolves all the sentences that follow it that have neither, up to one that starts another effect",
       "issue 30 item 2 (modern card text is structured; older text is one effect); no seed passage"),
    _r("KIND-QUICK", "'(Quick Effect)' or an effect usable 'during either player's/your opponent's turn' is a Quick Effect",
       f"{S002}:56 (Spell Speed 2 Monster Effects (Quick Effects)); {S000}:162 (monsters' effects during your opponent's turn)"),
    _r("KIND-FLIP", "'FLIP:' starts a Flip effect", f"{S004}:85 (Flip Monster Effects (which are mandatory by nature)); {S002}:69"),
    _r("KIND-TRIGGER", "an activation condition naming an event or a timing ('When/If ... is destroyed', 'at the start of the Damage Step', 'During the End Phase') is a Trigger Effect",
       f"{S002}:10, 83, 111, 127, 163, 181 (trigger effects whose timing is ...)"),
    _r("KIND-IGNITION", "an activated monster/Spell effect with neither an event nor a window is an Ignition Effect (Main Phase only)",
       f"{S000}:160 (Most Effect Monsters ... only during Main Phase 1 or Main Phase 2 of your own turn)"),
    _r("KIND-TRAP-EFFECT", "an activated Trap effect (on the field or in the GY) with no event and no window: its kind is not decidable from the seeds",
       "no seed passage: UNKNOWN"),
    _r("OPT-YOU-CAN", "'you can' makes a trigger optional; a trigger without it is mandatory", f"{S002}:45-46, 67 (Mandatory / optional Trigger Effects)"),
    # -- Spell Speed
    _r("SS3-COUNTER", "Counter Trap Cards are Spell Speed 3", f"{S004}:79 (Counter Trap Cards ... Spell Speed 3)"),
    _r("SS2-FAST-CARDS", "Trap Cards and Quick-Play Spell Cards are fast (Spell Speed 2): activatable in every phase",
       f"{S002}:11 (Spell Speed 2 or 3 cards); {S004}:12, 44 (Trap Cards and Quick-Play Spell Cards may be activated)"),
    _r("SS2-QUICK", "Quick Effects are Spell Speed 2", f"{S002}:56 (Spell Speed 2 Monster Effects (Quick Effects)); {S004}:17"),
    _r("SS1-SPELL", "other Spell Cards are activated in the Main Phase only (Spell Speed 1)", f"{S004}:30 (Main Phase: Spell and/or Trap Cards of any speed) with {S004}:12, 17, 44"),
    _r("SS1-IGNITION", "Ignition Effects are Spell Speed 1", f"{S000}:160"),
    _r("SS1-TRIGGER", "Trigger and Flip effects of monsters and Spells are Spell Speed 1",
       "the seeds give no Spell Speed for Trigger Effects: the issue brief's Spell Speed list (flagged in docs/profiles.md)"),
    _r("SS2-TRAP-EFFECT", "effects of a Trap Card are Spell Speed 2 (Counter Trap: 3)", f"{S004}:79 with {S002}:11; the speed of a Trap's trigger-like effects is not stated in the seeds (flagged)"),
    # -- Damage Step (TCG list: 002:41-74; OCG sub-steps: 002:221-270)
    _r("DS-SS1", "a Spell Speed 1 effect that is not a trigger cannot be activated in the Battle Phase at all",
       f"{S004}:17, 44 (Trap Cards, Quick-Play Spell Cards and monster Quick Effects); {S000}:160"),
    _r("DS-COUNTER", "Counter Trap Cards can be activated in the Damage Step", f"{S002}:43; {S004}:79; {S003}:55"),
    _r("DS-MANDATORY", "Mandatory Effects can be activated in the Damage Step", f"{S002}:45-46; {S004}:83"),
    _r("DS-FLIP", "Flip effects can be activated in the Damage Step", f"{S002}:69; {S004}:85"),
    _r("DS-EXCEPT", "an effect whose text says it cannot be activated in the Damage Step ('except during the Damage Step') cannot",
       f"{S002}:46 (... that specifically note they cannot activate during the Damage Step), 68"),
    _r("DS-OPT-TRIGGER", "most optional Trigger and Trigger-like Effects can be activated in the Damage Step", f"{S002}:67-69"),
    _r("DS-OPP-SUMMON", "an optional trigger on a monster Summoned by the opponent cannot be activated in the Damage Step",
       f"{S002}:51, 70"),
    _r("DS-SS-SELF-HAND", "an optional trigger that Special Summons the card itself from the hand cannot be activated in the Damage Step",
       f"{S002}:71"),
    _r("DS-TIMING", "an effect whose activation timing names a Damage Step sub-step is activated in that sub-step",
       f"{S002}:63-64 (Any effect that specifically mentions an activation timing during the Damage Step); sub-steps {S002}:80-83, 108-111, 124-127, 158-163, 178-181; OCG {S002}:223-270"),
    _r("DS-RESPOND-DAMAGE", "a card or effect that activates in response to damage (not only effect damage: 'when you take damage', 'when you take battle damage') can be activated in the Damage Step; this names its timing, so it is 'otherwise specified' for DS-SS-SELF-HAND",
       f"{S002}:63-64 (This includes cards and effects that activate in response to damage without specifying effect damage, like \"Attack and Receive\" and \"Numinous Healer\"); {S002}:71"),
    _r("DS-NEGATE-ACTIVATION", "Quick Effects that negate an activation can be activated in the Damage Step", f"{S002}:56; {S004}:87; {S003}:61"),
    _r("DS-NEGATE-RESPONSE-TCG", "TCG only: a Quick Effect that must respond directly to an effect's activation to negate that effect; OCG: not for this reason alone",
       f"{S002}:58-62"),
    _r("DS-NAMED-REFUSED", "the cards 002 names as refused in the Damage Step ('Scrap Sheen', 'Zero Force', 'Curse of Anubis'): their card activation cannot be activated there, although they change ATK/DEF",
       f"{S002}:53"),
    _r("DS-NAMED-ALLOWED", "the cards 002 names as allowed in the Damage Step by rulings although their text gives no sign of it: 'Chthonian Blast' (both rulesets), 'Muko' (TCG only: OCG refused); 'Desrook Archfiend' is read as an optional trigger (DS-OPT-TRIGGER) already",
       f"{S002}:74"),
    _r("DS-ATK", "cards and effects that directly change ATK/DEF can be activated from the start of the Damage Step up to, not including, damage calculation",
       f"{S002}:48-49, 121; {S003}:66 ('Shadow Spell' can be used); {S004}:81 (A card that alters the ATK and/or DEF can only be activated up until the start of damage calculation); OCG {S002}:227, 237, 244"),
    _r("DS-ATK-CALC-TCG", "TCG: an ATK/DEF modifier whose text says 'Damage Step' or 'damage calculation' can be activated up to and including damage calculation",
       f"{S002}:54, 121"),
    _r("DS-ATK-CALC-OCG", "OCG: only an ATK/DEF modifier whose text says 'damage calculation' can be activated during damage calculation",
       f"{S002}:54 ('In the OCG, only cards that specify they can be activated during damage calculation can be'), 244"),
    _r("DS-ATK-CALC-OCG-AMBIGUOUS", "OCG: a modifier that says 'Damage Step' but not 'damage calculation': 002:54 forbids it during damage calculation, 002:245 allows 'Honest' there",
       f"{S002}:54 against {S002}:245: UNKNOWN"),
    _r("DS-CONT-TRAP", "a Continuous Trap Card can be activated in the Damage Step only if a Continuous Effect of it directly changes ATK/DEF",
       f"{S002}:50"),
    _r("DS-ATK-CONDITIONAL", "an ATK/DEF change under a condition of its own sentence ('While you control ...', 'If Summoned this way, ...', 'after the first time ...'): it might not alter ATK/DEF, and whether it is 'directly' is not decidable from the text: UNKNOWN",
       f"{S002}:48-50 (directly alter the ATK/DEF), 53 (Cards like \"Half or Nothing\" which might not alter ATK/DEF at resolution cannot be activated during the Damage Step): UNKNOWN"),
    _r("DS-ATK-MODAL", "an ATK/DEF change that is one of the effects to choose from ('Activate 1 of these effects'): allowed only when that one is chosen, not decidable from the text: UNKNOWN",
       f"{S002}:48-49 (Spell/Trap Cards and card effects that directly alter the ATK/DEF): UNKNOWN"),
    _r("DS-ATK-LINGERING", "an ATK/DEF change among effects applied for the rest of the turn to a kind of monster ('Apply these effects until the end of this turn. ● Rank 3 or lower Xyz Monsters gain ...'): whether it alters any ATK/DEF at resolution is not decidable from the text: UNKNOWN",
       f"{S002}:48-49, 53 (might not alter ATK/DEF at resolution): UNKNOWN"),
    _r("DS-CONT-TRAP-UNSURE", "a Continuous Trap whose ATK/DEF change is in an activated effect: allowed only if that effect is activated with the card ('Desperate Tag'), not decidable from the text",
       f"{S002}:50: UNKNOWN"),
    _r("DS-DESTROYED-EVENT", "a card or effect that activates when a monster is destroyed by battle (and sent to the Graveyard), or destroyed in general, is activated at the end of the Damage Step",
       f"{S002}:186 (Cards and effects that activate \"[when/if] [a monster] is destroyed by battle (and sent to the Graveyard)\"... will now activate at this time), 190 (... when a monster is destroyed in general are activated at this time)"),
    _r("DS-NOT-LISTED", "a fast card or effect that is none of the above cannot be activated in the Damage Step",
       f"{S002}:38-39 (The Damage Step has specific rules that govern what can or cannot be activated); {S000}:183 ('Waboku', 'Mirror Force' ... cannot); {S003}:53"),
    _r("DS-NONE", "text that is not activated has no activation in the Damage Step", "no activation"),
    _r("DS-UNKNOWN-KIND", "the effect's kind is unknown, so its Damage Step allowance is too", "no rule decides"),
    # -- windows and events
    _r("WIN-TEXT", "a window the activation condition names ('during either player's turn', 'when an opponent's monster declares an attack', 'Activate only during the Battle Phase', 'except during the Damage Step')",
       f"{S002}:21-29 (Attack declaration), 197-203 (End Step), {S004}:44, 60-64"),
    _r("EVT-TEXT", "the event a trigger's condition names", f"{S002}:80-195 (what activates in each sub-step)"),
    _r("EVT-FLIP", "a Flip effect's event is the card being flipped face-up", f"{S002}:165; {S000}:191"),
    _r("EVT-UNKNOWN", "a trigger whose condition names no known event", "no rule decides"),
    # -- what a card's text does to damage calculation (battle_mods: acc.battle-damage, acc.destroyed-by-battle)
    _r("BD-PIERCE", "'inflict piercing battle damage' / 'inflict the difference as Battle Damage': an attack on a Defense Position monster whose DEF is lower deals the difference to its controller",
       f"{S002}:135-138 (Battle damage is inflicted [at damage calculation]); the card's text (the seeds name no piercing card)"),
    _r("BD-NO-DAMAGE", "'<player> take(s) no battle damage from battles/attacks involving this card'",
       f"{S002}:135-138 (Battle damage is inflicted); the card's text"),
    _r("BD-DOUBLE", "'double any Battle Damage ...' / '... is doubled': that player's battle damage is doubled",
       f"{S002}:135-138; the card's text"),
    _r("BD-HALVE", "'any battle damage ... is halved': the battle damage is halved", f"{S002}:135-138; the card's text"),
    _r("BD-REFLECT", "'your opponent takes any Battle Damage you would have taken ...': the damage goes to the other player",
       f"{S002}:135-138; the card's text"),
    _r("BD-INDESTRUCTIBLE", "'... cannot be destroyed by battle': a continuous effect that prevents destruction by battle applies at damage calculation",
       f"{S002}:122 (If there is a Continuous effect that can prevent a monster from being destroyed by battle ... at this time)"),
    _r("BD-CANNOT-DESTROY", "'This card cannot destroy monsters by battle': a monster that battles this card is not destroyed by that battle",
       f"{S002}:122 (a Continuous effect that can prevent a monster from being destroyed by battle ... at this time); the card's text"),
    _r("BD-GAIN", "'If a player would take damage from a battle involving this card, they gain that much LP, instead': no battle damage from its battles; each player gains what they would have taken",
       f"{S002}:135-138 (Battle damage is inflicted [at damage calculation]); the card's text (a replacement of the damage)"),
    _r("BD-REPLACE", "'would be destroyed by battle ... instead' / 'it is not destroyed': a replacement, done when destroyed-by-battle monsters are sent to the GY",
       f"{S002}:122, 175 (something to be done 'instead' of a monster being destroyed by battle)"),
    _r("BD-OTHER", "other text about battle damage or destruction by battle, in a wording the reader does not compute: UNKNOWN",
       "no rule decides"),
])


# ---------------------------------------------------------------------------------------------
# the phrase patterns
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pattern:
    id: str
    regex: re.Pattern
    means: str  # the token it yields (an event, a window, a marker)
    rule: str   # RULES id


def _p(id_: str, rx: str, means: str, rule: str) -> Pattern:
    # card texts write the apostrophe both ways ("player's", "player’s")
    return Pattern(id_, re.compile(rx.replace("'", "['’]")), means, rule)


# markers: things a segment says about itself
MARKERS: tuple[Pattern, ...] = (
    _p("quick-effect", r"\((?:this is a )?Quick Effect\)", "quick", "KIND-QUICK"),
    _p("quick-either-turn", r"(?i)this effect can (?:also )?be activated during (?:either player's|your opponent's) turn", "quick", "KIND-QUICK"),
    _p("flip", r"^FLIP:", "flip", "KIND-FLIP"),
    _p("you-can", r"\b[Yy]ou can\b", "optional", "OPT-YOU-CAN"),
    _p("once-per-turn", r"(?i)\bonce per (?:opponent's )?turn\b|\bonly (?:use|activate) (?:this effect of|each effect of|1) ", "once_per_turn", "TXT-NOT-ACTIVATED"),
    _p("negate-activation", r"(?i)\bnegate (?:the|that|its|their) activation", "negate_activation", "DS-NEGATE-ACTIVATION"),
    _p("negate-that-effect", r"(?i)\bnegate (?:that|the|its) (?:card's |monster's )?effect\b", "negate_effect", "DS-NEGATE-RESPONSE-TCG"),
    _p("except-damage-step", r"(?i)except (?:during|in) the Damage Step|cannot be activated during the Damage Step", "not_damage_step", "DS-EXCEPT"),
    _p("ss-self", r"Special Summon this card\b", "ss_self", "DS-SS-SELF-HAND"),
    _p("from-hand", r"(?i)\b(?:from|in) your hand\b", "hand", "DS-SS-SELF-HAND"),
    _p("replacement", r"\bwould\b[^.]*\binstead\b", "replacement", "TXT-NOT-ACTIVATED"),
)

# ATK/DEF changed directly by the resolution (002:48-49)
ATK_CHANGE: tuple[Pattern, ...] = (
    # (not Life Points: "they gain Life Points equal to half the ATK of ...", Dark Cure)
    _p("atk-gain-lose", r"\b(?:gains?|loses?)\b(?!\s+(?:\d+\s+)?(?:Life Points|LP)\b)[^.;:]{0,60}?\b(?:ATK|DEF)\b", "atk_change", "DS-ATK"),
    _p("atk-becomes", r"\b(?:ATK|DEF)\b[^.;:]{0,40}?\b(?:becomes?|is halved|are halved|is doubled|are doubled)\b", "atk_change", "DS-ATK"),
    _p("atk-verb", r"\b(?:[Ii]ncrease|[Dd]ecrease|[Rr]educe|[Hh]alve|[Dd]ouble|[Cc]hange)s?\b(?!\s+(?:your |their |your opponent's |)(?:Life Points|LP)\b)[^.;:]{0,40}?\b(?:ATK|DEF)\b", "atk_change", "DS-ATK"),
)

# events a trigger's condition names (EVT-TEXT); several may match one condition
EVENTS: tuple[Pattern, ...] = (
    _p("ev-start-ds", r"(?i)start of the Damage Step", "start_of_damage_step", "DS-TIMING"),
    _p("ev-before-calc", r"(?i)before damage calculation", "before_damage_calculation", "DS-TIMING"),
    _p("ev-calc", r"(?i)(?:during|at) (?:the |that )?damage calculation", "damage_calculation", "DS-TIMING"),
    _p("ev-after-calc", r"(?i)after damage calculation", "after_damage_calculation", "DS-TIMING"),
    _p("ev-end-ds", r"(?i)end of the Damage Step", "end_of_damage_step", "DS-TIMING"),
    _p("ev-destroyed-by-battle", r"\b(?:is|are|was|were|be|gets?) destroyed by battle|\bdestroyed by battle\b(?! or)", "destroyed_by_battle", "EVT-TEXT"),
    _p("ev-destroyed-battle-or-effect", r"destroyed by battle or (?:a |by a |an opponent's )?card effect", "destroyed_by_battle", "EVT-TEXT"),
    _p("ev-destroys-by-battle", r"\bdestroys? (?!this card)[^.:;]{0,60}?\bby battle\b", "destroys_by_battle", "EVT-TEXT"),
    _p("ev-destroyed", r"\b(?:is|are|was|were|gets?) destroyed\b(?! by battle\b(?! or))", "destroyed", "EVT-TEXT"),
    _p("ev-sent-gy", r"\b(?:sent|sends? (?:it|them|that monster))(?: from [^.:;]{1,30}?)? to (?:the |your |its owner's |their |his )?(?:GY|Graveyard)", "sent_to_gy", "EVT-TEXT"),
    _p("ev-tributed", r"\b(?:is|are) Tributed\b", "tributed", "EVT-TEXT"),
    _p("ev-flipped", r"(?i)\bflipped face-up\b|\bis flipped\b", "flipped", "EVT-TEXT"),
    _p("ev-battle-damage", r"(?i)\b(?:inflicts?|takes?|take|would take|would inflict)\b[^.:;]{0,40}?\bbattle damage\b|battle damage is inflicted", "battle_damage", "EVT-TEXT"),
    _p("ev-effect-damage", r"(?i)\b(?:inflicts?|takes?)\b (?:effect )?damage\b(?! calculation)", "damage", "DS-TIMING"),
    _p("ev-attack-declared", r"declares? (?:an|a direct) attack|an? (?:direct )?attack is declared", "attack_declared", "EVT-TEXT"),
    _p("ev-attacked", r"\b(?:is|are|was) (?:being )?attacked\b|\battacks or is attacked\b|\bis targeted for an attack\b|targeted for an attack", "attacked", "EVT-TEXT"),
    _p("ev-attacks", r"\b(?:this card|it|the equipped monster|[Aa] monster|your monster) attack(?:s|ed)\b", "attacks", "EVT-TEXT"),
    _p("ev-battles", r"\bbattle[sd]\b|\bis battling\b", "battles", "EVT-TEXT"),
    _p("ev-opp-summons", r"(?:your )?opponent (?:Normal |Special |Flip |Tribute |Normal or Special |Normal or Flip )?Summons", "opponent_summons", "DS-OPP-SUMMON"),
    _p("ev-summoned", r"\b(?:is|are|was|were)\s(?:[A-Z][a-z]+\s(?:or\s[A-Z][a-z]+\s)?)?Summoned\b(?! this turn)|\b(?:you|player) (?:[A-Z][a-z]+ )?Summons?\b", "summoned", "EVT-TEXT"),
    _p("ev-leaves", r"\bleaves the field\b", "leaves_field", "EVT-TEXT"),
    _p("ev-banished", r"\b(?:is|are) banished\b", "banished", "EVT-TEXT"),
    _p("ev-to-hand", r"\b(?:added|returned) (?:from [^.:;]{1,40} )?to (?:your|the|its owner's|their) hand\b", "to_hand", "EVT-TEXT"),
    _p("ev-discarded", r"\bdiscarded\b", "discarded", "EVT-TEXT"),
    # (not "you can select and activate 1 of these effects": the choice of an effect, no event)
    _p("ev-activation", r"\b(?:activates?|is activated|are activated)\b(?! (?:1|one|either) of (?:these|the following) effects)", "activation", "EVT-TEXT"),
    _p("ev-targeted", r"\b(?:targets|is targeted by|targeting) (?:this card|this face-up card)|that targets this", "targeted", "EVT-TEXT"),
    _p("ev-standby", r"Standby Phase", "standby_phase", "EVT-TEXT"),
    _p("ev-end-phase", r"End Phase", "end_phase", "EVT-TEXT"),
    _p("ev-start-bp", r"(?i)start of (?:the|your|each) Battle Phase", "start_of_battle_phase", "EVT-TEXT"),
    _p("ev-end-bp", r"(?i)end of (?:the|your|each) Battle Phase", "end_of_battle_phase", "EVT-TEXT"),
    _p("ev-material", r"\bused as (?:an? )?[^.:;]{0,30}Material\b|\bmaterial is detached\b|\bdetached\b", "used_as_material", "EVT-TEXT"),
)

# windows the activation condition names (WIN-TEXT)
WINDOWS: tuple[Pattern, ...] = (
    _p("w-either-turn", r"(?i)either player's (?:turn|Draw Phase|Standby Phase|Main Phase|Battle Phase|End Phase)", "either_turn", "WIN-TEXT"),
    _p("w-opp-turn", r"(?i)(?:your )?opponent's (?:turn|Draw Phase|Standby Phase|Main Phase|Battle Phase|End Phase)|once per opponent's turn", "opponent_turn", "WIN-TEXT"),
    _p("w-your-turn", r"(?i)\bduring your turn\b|\byour (?:Draw|Standby|Main|Battle|End) Phase", "your_turn", "WIN-TEXT"),
    _p("w-main", r"Main Phase", "main_phase", "WIN-TEXT"),
    _p("w-standby", r"Standby Phase", "standby_phase", "WIN-TEXT"),
    _p("w-end-phase", r"(?<!except during the )End Phase", "end_phase", "WIN-TEXT"),
    _p("w-bp", r"(?<!start of the )(?<!end of the )(?<!start of your )(?<!end of your )Battle Phase", "battle_phase", "WIN-TEXT"),
    _p("w-start-bp", r"(?i)start of (?:the|your|each) Battle Phase", "start_of_battle_phase", "WIN-TEXT"),
    _p("w-end-bp", r"(?i)end of (?:the|your|each) Battle Phase", "end_of_battle_phase", "WIN-TEXT"),
    _p("w-attack-opp", r"(?:an |your )?opponent's monster declares (?:an|a direct) attack|opponent declares (?:an|a direct) attack", "attack_declared_by_opponent", "WIN-TEXT"),
    _p("w-attack", r"declares? (?:an|a direct) attack|an? (?:direct )?attack is declared", "attack_declared", "WIN-TEXT"),
    _p("w-attacked", r"\b(?:is|are) (?:being )?attacked\b|targeted for an attack", "attacked", "WIN-TEXT"),
    _p("w-ds", r"(?i)(?<!except )during the Damage Step", "damage_step", "WIN-TEXT"),
    _p("w-start-ds", r"(?i)start of the Damage Step", "start_of_damage_step", "WIN-TEXT"),
    _p("w-before-calc", r"(?i)before damage calculation", "before_damage_calculation", "WIN-TEXT"),
    _p("w-calc", r"(?i)(?:during|at) (?:the |that )?damage calculation", "damage_calculation", "WIN-TEXT"),
    _p("w-after-calc", r"(?i)after damage calculation", "after_damage_calculation", "WIN-TEXT"),
    _p("w-end-ds", r"(?i)end of the Damage Step", "end_of_damage_step", "WIN-TEXT"),
    _p("w-not-ds", r"(?i)except (?:during|in) the Damage Step", "not_damage_step", "DS-EXCEPT"),
    _p("w-not-end", r"(?i)except (?:during|in) the End (?:Phase|Step)|not (?:in|during) the End (?:Phase|Step)", "not_end_phase", "WIN-TEXT"),
    _p("w-not-turn-sent", r"(?i)except the turn (?:this card|it) was sent to the (?:GY|Graveyard)", "not_turn_sent_to_gy", "WIN-TEXT"),
)

PATTERNS: tuple[Pattern, ...] = MARKERS + ATK_CHANGE + EVENTS + WINDOWS

# sub-steps a Damage Step timing event names (DS-TIMING)
TIMING_SUBSTEP = {
    "start_of_damage_step": "start", "before_damage_calculation": "before_calc",
    "damage_calculation": "during_calc", "after_damage_calculation": "after_calc", "end_of_damage_step": "end",
}
TIMING_PATTERNS = {"w-start-ds": "start", "w-before-calc": "before_calc", "w-calc": "during_calc",
                   "w-after-calc": "after_calc", "w-end-ds": "end"}
# "you can" in text without ':' or ';', other than a Summoning procedure or a restriction
OLD_YOU_CAN = re.compile(r"\b[Yy]ou can (?!only\b|(?:Normal |Tribute |Ritual |Special |Fusion |Synchro |Xyz |Link |Pendulum )?(?:Summon|Set)\b|activate this card from your hand\b|also\b)\w+")


# ---------------------------------------------------------------------------------------------
# decisions and profiles
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Evidence:
    span: tuple[int, int] | None = None  # offsets into card.text
    quote: str | None = None
    bit: str | None = None  # a datas bit: "type&TYPE_COUNTER"
    pattern: str | None = None

    def to_dict(self) -> dict:
        d: dict = {}
        if self.span is not None:
            d["span"] = list(self.span)
            d["text"] = self.quote
        if self.bit is not None:
            d["bit"] = self.bit
        if self.pattern is not None:
            d["pattern"] = self.pattern
        return d


@dataclass(frozen=True)
class Decision:
    value: object
    rule: str
    evidence: tuple[Evidence, ...] = ()

    @property
    def decided(self) -> bool:
        return self.value != UNKNOWN

    def to_dict(self) -> dict:
        return {"value": self.value, "rule": self.rule, "evidence": [e.to_dict() for e in self.evidence]}


@dataclass
class EffectProfile:
    index: int
    section: str  # "main", "pendulum" or "monster" (a Pendulum card's two texts)
    span: tuple[int, int] | None  # None: a Spell/Trap's implicit card activation
    text: str
    number: int | None  # "(n):"
    kind: Decision
    optional: Decision | None
    speed: Decision
    events: Decision
    windows: Decision
    damage_step: dict[str, dict[str, Decision]] | None  # ruleset -> sub-step -> allowed
    once_per_turn: bool = False

    @property
    def activated(self) -> bool:
        return self.kind.value not in ("continuous", "materials")

    @property
    def decided(self) -> bool:
        if not self.kind.decided:
            return False
        if not self.activated:
            return True
        ds = all(d.decided for r in (self.damage_step or {}).values() for d in r.values())
        return self.speed.decided and self.events.decided and ds and (self.optional is None or self.optional.decided)

    def to_dict(self) -> dict:
        return {
            "index": self.index, "section": self.section,
            "span": list(self.span) if self.span else None, "text": self.text, "number": self.number,
            "kind": self.kind.to_dict(),
            "optional": self.optional.to_dict() if self.optional else None,
            "speed": self.speed.to_dict(), "events": self.events.to_dict(), "windows": self.windows.to_dict(),
            "damage_step": None if self.damage_step is None else {
                rs: {s: d.to_dict() for s, d in sub.items()} for rs, sub in self.damage_step.items()},
            "once_per_turn": self.once_per_turn,
        }


@dataclass(frozen=True)
class BattleMod:
    """What a sentence of a card's text that is not activated does to damage calculation
    (docs/profiles.md "Battle modifications"). ``kind``: ``piercing``, ``no_damage``, ``double``,
    ``halve``, ``reflect``, ``gain`` (the damage becomes LP gained), ``indestructible``, ``cannot_destroy`` (the monster that
    battles this card is not destroyed by that battle), ``replacement`` or ``other``. ``sure``: the
    sentence is one of the wordings the reader computes (then ``scope``, ``role``, ``direct``,
    ``to`` and ``conditions`` say exactly when and to whom it applies); otherwise only its kind is
    known and ``why`` says so. ``self_only``: the sentence is about this card's own battles (an
    unsure one then matters only where this card battles)."""

    kind: str
    rule: str
    evidence: Evidence
    section: str
    sure: bool
    why: str = ""
    scope: tuple = ("self",)  # ("self",) | ("equipped",) (an Equip Card's monster) | ("race", RACE, other) | ("archetype", NAME, other, side)
    role: str | None = None  # None (any) | "attacker" | "target" | "battler" | "defense" (this Defense Position card)
    direct: bool | None = None  # True: direct attacks only; False: attacks on a monster only
    to: str | None = None  # the player whose damage it changes: "you", "opponent", "both"
    conditions: tuple = ()  # ("control_race", RACE, other) | ("control_token",) | ("archetype_face_up", NAME, side) | ("your_turn",) | ("opponent_turn",) | ("equipped",) | ("gemini",) | ("flipped",) | ("self_attack_position",)
    self_only: bool = False

    def to_dict(self) -> dict:
        return {"kind": self.kind, "rule": self.rule, "evidence": self.evidence.to_dict(), "section": self.section,
                "sure": self.sure, "why": self.why, "scope": list(self.scope), "role": self.role, "direct": self.direct,
                "to": self.to, "conditions": [list(c) for c in self.conditions], "self_only": self.self_only}


@dataclass
class CardProfile:
    code: int
    name: str
    kind: str
    subtype: str
    type_names: list[str]
    effects: list[EffectProfile] = field(default_factory=list)
    battle_mods: list[BattleMod] = field(default_factory=list)

    @property
    def decided(self) -> bool:
        return all(e.decided for e in self.effects)

    @property
    def battle_relevant(self) -> bool:
        """At least one effect may be activated in the Battle Phase: fast or a trigger, or a
        window/event of the Battle Phase."""
        for e in self.effects:
            if not e.activated or not e.kind.decided:
                continue
            if e.kind.value in ("quick", "trigger", "flip") or (e.speed.value in (2, 3)):
                return True
        return False

    def to_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "kind": self.kind, "subtype": self.subtype,
                "type_names": self.type_names, "effects": [e.to_dict() for e in self.effects],
                "battle_mods": [b.to_dict() for b in self.battle_mods]}


# ---------------------------------------------------------------------------------------------
# cutting the text
# ---------------------------------------------------------------------------------------------

SECTION_RX = re.compile(r"\[ ?(Pendulum Effect|Monster Effect|Flavor Text) ?\]")
RULE_LINE_RX = re.compile(r"-{10,}")
NUMBER_RX = re.compile(r"\((\d{1,2})\):\s*")
MERGE_RX = re.compile(r"^(?:You can only (?:use|activate|Special Summon)|This effect can (?:also )?(?:only )?be (?:used|activated)|Then\b|\(|This card must be face-up)")


def _sections(card: C.Card) -> list[tuple[str, int, int]]:
    t = card.text
    marks = list(SECTION_RX.finditer(t))
    if not marks:
        return [("main", 0, len(t))]
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(t)
        rl = RULE_LINE_RX.search(t, m.end(), end)
        if rl:
            end = rl.start()
        name = {"Pendulum Effect": "pendulum", "Monster Effect": "monster", "Flavor Text": "flavor"}[m.group(1)]
        out.append((name, m.end(), end))
    return out


def _sentences(t: str, a: int, b: int) -> list[tuple[int, int]]:
    """Split t[a:b] at sentence ends and line breaks, outside quotes and parentheses."""
    out = []
    depth = 0
    quote = False
    start = a
    i = a
    while i < b:
        ch = t[i]
        if ch == '"':
            quote = not quote
        elif ch == "(" and not quote:
            depth += 1
        elif ch == ")" and not quote and depth:
            depth -= 1
            if depth == 0 and i > a and t[i - 1] == "." and i + 2 < b and t[i + 1] == " " and t[i + 2].isupper():
                out.append((start, i + 1))
                start = i + 1
        elif ch in "\r\n" and not _bullet_joins(t, i, b):
            out.append((start, i))
            start = i + 1
            depth = 0
            quote = False
        elif ch == "." and depth == 0 and not quote:
            j = i + 1
            if j >= b or t[j] in " \r\n":
                k = j
                while k < b and t[k] == " ":
                    k += 1
                if k < b and t[k] in "\r\n" and _bullet_joins(t, k, b):
                    pass
                elif k >= b or t[k].isupper() or t[k] in '("\r\n':
                    out.append((start, i + 1))
                    start = j
        i += 1
    out.append((start, b))
    trimmed = []
    for s, e in out:
        while s < e and t[s] in " \r\n":
            s += 1
        while e > s and t[e - 1] in " \r\n":
            e -= 1
        if e > s:
            trimmed.append((s, e))
    return trimmed


def _bullet_joins(t: str, i: int, b: int) -> bool:
    """At the line break t[i]: does the next line continue this effect? A "●" line continues it
    (a choice of the effect) unless it is an effect of its own (it has ':' or ';')."""
    j = i
    while j < b and t[j] in "\r\n":
        j += 1
    if j >= b or t[j] != "●":
        return False
    end = j
    while end < b and t[end] not in "\r\n":
        end += 1
    return _top_level(t, j, end, ":") < 0 and _top_level(t, j, end, ";") < 0


def _segments(card: C.Card) -> list[tuple[str, int, int, int | None]]:
    """(section, start, end, number) of each effect of the card's text, in text order."""
    t = card.text
    segs: list[tuple[str, int, int, int | None]] = []
    for section, a, b in _sections(card):
        if section == "flavor":
            continue
        body = t[a:b].strip()
        if not body or body in ("-n/a-", "n/a"):
            continue
        numbers = list(NUMBER_RX.finditer(t, a, b))
        pieces: list[tuple[int, int, int | None]] = []
        if numbers:
            if numbers[0].start() > a:
                pieces += [(s, e, None) for s, e in _sentences(t, a, numbers[0].start())]
            for i, m in enumerate(numbers):
                end = numbers[i + 1].start() if i + 1 < len(numbers) else b
                s, e = m.start(), end
                while e > s and t[e - 1] in " \r\n":
                    e -= 1
                pieces.append((s, e, int(m.group(1))))
        else:
            for s, e in _sentences(t, a, b):
                if pieces and pieces[-1][2] is None and MERGE_RX.match(t[s:e]) and not (
                        t[s] == "(" and (_top_level(t, s, e, ":") >= 0 or _top_level(t, s, e, ";") >= 0
                                         or t.startswith("(Quick Effect)", s))):
                    pieces[-1] = (pieces[-1][0], e, None)
                else:
                    pieces.append((s, e, None))
        segs += [(section, s, e, n) for s, e, n in pieces]
    return segs


def _top_level(t: str, a: int, b: int, ch: str) -> int:
    """The first ``ch`` in t[a:b] outside quotes and parentheses, or -1."""
    depth = 0
    quote = False
    for i in range(a, b):
        c = t[i]
        if c == '"':
            quote = not quote
        elif quote:
            continue
        elif c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif c == ch and depth == 0:
            return i
    return -1


def _find(patterns, t: str, a: int, b: int) -> list[tuple[Pattern, re.Match]]:
    seg = t[a:b]
    out = []
    for p in patterns:
        m = p.regex.search(seg)
        if m:
            out.append((p, m))
    return out


def _ev(t: str, a: int, m: re.Match, p: Pattern | None = None) -> Evidence:
    s, e = a + m.start(), a + m.end()
    return Evidence(span=(s, e), quote=t[s:e], pattern=p.id if p else None)


def _bit(name: str) -> Evidence:
    return Evidence(bit=name)


def _all(value, rule: str, ev=()) -> dict[str, dict[str, Decision]]:
    return {rs: {s: Decision(value, rule, tuple(ev)) for s in SUBSTEPS} for rs in RULESETS}


# ---------------------------------------------------------------------------------------------
# the reader
# ---------------------------------------------------------------------------------------------

ACTIVATION_SUBTYPES = {"Normal", "Quick-Play", "Counter", "Ritual"}


def profile(card: C.Card) -> CardProfile:
    """The profile of one card, from its data row and its text only."""
    prof = CardProfile(card.code, card.name, card.kind, card.subtype, card.type_names)
    t = card.text
    if card.kind == "monster" and card.type & C.TYPE_NORMAL and not card.type & C.TYPE_EFFECT and not card.type & C.TYPE_PENDULUM:
        return prof  # TXT-NORMAL-MONSTER: flavour text only
    segs = _segments(card)
    is_st = card.kind in ("spell", "trap")
    idx = 0
    explicit = [i for i, (sec, s, e, _) in enumerate(segs) if sec == "main" and re.match(r"Activate this card\b(?! only)", t[s:e])]
    if is_st and card.subtype not in ACTIVATION_SUBTYPES and not explicit:
        prof.effects.append(_implicit_activation(card, segs))
        idx = 1
    activation_done = not is_st or (card.subtype not in ACTIVATION_SUBTYPES and not explicit)
    only_sentences = [(s, e) for _, s, e, _ in segs if re.match(ONLY_RX, t[s:e])]
    segs = _merge_resolution(card, segs, activation_done)
    for n, (section, s, e, number) in enumerate(segs):
        materials = (n == 0 and card.is_extra_deck and section != "pendulum"
                     and _top_level(t, s, e, ":") < 0 and _top_level(t, s, e, ";") < 0
                     and (e == len(t) or t[e] in "\r\n" or "+" in t[s:e] or re.match(r"\d", t[s:e])))
        if materials:
            prof.effects.append(_simple(idx, section, s, e, number, t, "materials", "TXT-MATERIALS"))
        elif not activation_done and section == "main" and not re.match(ONLY_RX, t[s:e]):
            prof.effects.append(_effect(card, idx, section, s, e, number, activation=True, extra_windows=only_sentences))
            activation_done = True
        else:
            prof.effects.append(_effect(card, idx, section, s, e, number))
        idx += 1
    if is_st and card.kind == "trap" and card.subtype == "Continuous" and explicit:
        _continuous_trap_atk(card, prof)
    if card.kind == "monster" and card.type & C.TYPE_PENDULUM:
        prof.effects.append(_pendulum_scale(idx))
    prof.battle_mods = battle_mods(card, prof)
    return prof


# an activation condition ("You can only activate this card when you take damage"): a window or
# event of the card's activation, not an effect of its own
ONLY_RX = re.compile(r"(?:You can only activate (?:this card )?(?:when|if|during|while|at|after|before)\b|Activate (?:this card )?only\b)")
# a sentence that starts another effect after an older-worded activation (TXT-ST-RESOLUTION)
# (a delayed or later effect: "When that monster is returned ...", "During your next Standby Phase")
NEW_EFFECT_RX = re.compile(r"(?:You can only|Activate (?:this card )?only|You cannot|You can banish|(?:If|When) this (?:card|Set card) (?:is|in|was)"
                           r"|While this card|Once per turn|Each time|When\b|During\b|At the (?:start|end)\b|[^.]*\bwould\b[^.]*\binstead\b"
                           r"|[^.]*\bthis card (?:from|in) your (?:GY|Graveyard)\b)")
# a response to damage that is not only effect damage (DS-RESPOND-DAMAGE, 002:63-64)
DAMAGE_RESPONSE_RX = re.compile(
    r"(?i)\b(?:you|your opponent|a player|either player) (?:takes?|would take|receives?)\b(?! effect damage)(?:(?! effect damage)[^.:;]){0,30}?\bdamage\b(?! calculation)"
    r"|\binflicts? (?:battle )?damage to you\b")


def _merge_resolution(card: C.Card, segs, activation_done: bool):
    """TXT-ST-RESOLUTION: an older-worded Normal/Quick-Play/Counter Spell or Trap ("Roll a six-sided
    die. All monsters your opponent currently controls lose ATK ...") is one activation: the
    sentences after it that have neither ':' nor ';' and start no effect of their own are its
    resolution, not effects of their own."""
    if activation_done or card.subtype not in ACTIVATION_SUBTYPES:
        return segs
    t = card.text
    out = list(segs)
    for i, (section, s, e, number) in enumerate(out):
        if section != "main" or number is not None or re.match(ONLY_RX, t[s:e]):
            continue
        if _top_level(t, s, e, ":") >= 0 or _top_level(t, s, e, ";") >= 0:
            return out  # a structured activation: the next sentences are effects of their own
        j = i + 1
        end = e
        while j < len(out):
            sec2, s2, e2, n2 = out[j]
            if (sec2 != "main" or n2 is not None or _top_level(t, s2, e2, ":") >= 0 or _top_level(t, s2, e2, ";") >= 0
                    or NEW_EFFECT_RX.match(t[s2:e2])):
                break
            end = e2
            j += 1
        return out[:i] + [(section, s, end, None)] + out[j:]
    return out


def _pendulum_scale(idx: int) -> EffectProfile:
    """KIND-PENDULUM-SCALE: a Pendulum Monster's activation as a Spell Card in a Pendulum Zone."""
    ev = (_bit("type&TYPE_PENDULUM"),)
    return EffectProfile(idx, "pendulum", None, "", None, Decision("activation", "KIND-PENDULUM-SCALE", ev), None,
                         Decision(1, "KIND-PENDULUM-SCALE", ev), Decision([], "EVT-TEXT"), Decision([], "WIN-TEXT"),
                         _all(False, "DS-SS1", ev))


def _continuous_trap_atk(card: C.Card, prof: CardProfile) -> None:
    """DS-CONT-TRAP: a Continuous Trap activated with "Activate this card by ..." whose own
    resolution does not change ATK/DEF is still allowed when a Continuous Effect of it does."""
    t = card.text
    act = next((x for x in prof.effects if x.kind.value == "activation"), None)
    if act is None or act.damage_step is None or act.damage_step["tcg"]["start"].rule != "DS-NOT-LISTED":
        return
    doubted = None
    for x in prof.effects:
        if x.kind.value == "continuous" and x.span:
            for p, m in _find(ATK_CHANGE, t, *x.span):
                ev = (_ev(t, x.span[0], m, p),)
                doubt = _atk_doubt(t, x.span[0], x.span[1], x.span[0] + m.start())
                if doubt is not None:
                    doubted = doubted or (doubt[0], ev + (doubt[1],))
                    continue
                act.damage_step = {rs: {s: Decision(s in ("start", "before_calc"), "DS-CONT-TRAP", ev) for s in SUBSTEPS}
                                   for rs in RULESETS}
                return
    if doubted is not None:
        # (its Continuous Effect changes ATK/DEF only under a condition: whether that is "directly" is not decidable)
        rule, ev = doubted
        act.damage_step = {rs: {s: Decision(UNKNOWN if s in ("start", "before_calc") else False, rule, ev) for s in SUBSTEPS}
                           for rs in RULESETS}


def _simple(idx, section, s, e, number, t, kind, rule) -> EffectProfile:
    ev = (Evidence(span=(s, e), quote=t[s:e]),)
    none = Decision(None, rule, ev)
    return EffectProfile(idx, section, (s, e), t[s:e], number, Decision(kind, rule, ev), None, none,
                         Decision([], rule), Decision([], rule), None)


def _implicit_activation(card: C.Card, segs) -> EffectProfile:
    """A Continuous/Field/Equip Spell's or Continuous Trap's activation as a card."""
    t = card.text
    bit = f"type&TYPE_{card.subtype.upper().replace('-', '')}"
    kind = Decision("activation", "KIND-ST-ACTIVATION-IMPLICIT", (_bit(bit),))
    windows: list[str] = []
    wev: list[Evidence] = []
    for _, s, e, _ in segs:
        if re.match(r"Activate (?:this card )?only\b", t[s:e]):
            for p, m in _find(WINDOWS, t, s, e):
                windows.append(p.means)
                wev.append(_ev(t, s, m, p))
    if card.kind == "trap":
        speed = Decision(2, "SS2-FAST-CARDS", (_bit("type&TYPE_TRAP"),))
        # DS-CONT-TRAP: allowed only if a Continuous Effect (not-activated text) changes ATK/DEF
        cont_atk: list[Evidence] = []
        act_atk: list[Evidence] = []
        doubted: list[tuple[str, Evidence, Evidence]] = []  # (rule, the change, the doubt): _atk_doubt
        for _, s, e, _ in segs:
            hits = _find(ATK_CHANGE, t, s, e)
            if not hits:
                continue
            activated = _top_level(t, s, e, ":") >= 0 or _top_level(t, s, e, ";") >= 0
            if activated:
                act_atk.extend(_ev(t, s, m, p) for p, m in hits[:1])
                continue
            for p, m in hits:
                doubt = _atk_doubt(t, s, e, s + m.start())
                if doubt is None:
                    cont_atk.append(_ev(t, s, m, p))
                    break
                doubted.append((doubt[0], _ev(t, s, m, p), doubt[1]))
        if cont_atk:
            ds = {rs: {s: Decision(s in ("start", "before_calc"), "DS-CONT-TRAP", tuple(cont_atk)) for s in SUBSTEPS} for rs in RULESETS}
        elif doubted:
            # (a Continuous Effect that changes ATK/DEF only under a condition: DS-CONT-TRAP's "directly" is not decidable)
            rule, aev, dev = doubted[0]
            ds = {rs: {s: Decision(UNKNOWN if s in ("start", "before_calc") else False, rule, (aev, dev)) for s in SUBSTEPS}
                  for rs in RULESETS}
        elif act_atk:
            ds = {rs: {s: Decision(UNKNOWN if s in ("start", "before_calc") else False, "DS-CONT-TRAP-UNSURE", tuple(act_atk))
                       for s in SUBSTEPS} for rs in RULESETS}
        else:
            ds = _all(False, "DS-CONT-TRAP", (_bit(bit),))
    else:
        speed = Decision(1, "SS1-SPELL", (_bit(bit),))
        ds = _all(False, "DS-SS1", (_bit(bit),))
    return EffectProfile(0, "main", None, "", None, kind, None, speed,
                         Decision([], "EVT-TEXT"), Decision(sorted(set(windows)), "WIN-TEXT", tuple(wev)), ds)


def _effect(card: C.Card, idx: int, section: str, s: int, e: int, number: int | None,
            activation: bool = False, extra_windows=()) -> EffectProfile:
    t = card.text
    body_s = s
    nm = NUMBER_RX.match(t, s, e)
    if nm:
        body_s = nm.end()
    colon = _top_level(t, body_s, e, ":")
    semi = _top_level(t, body_s, e, ";")
    if colon >= 0 and semi >= 0 and semi < colon:
        colon = -1  # a ':' after the cost belongs to the resolution (a "●" choice)
    flip = re.match(r"FLIP:", t[body_s:e])
    cond = (body_s, colon) if colon >= 0 and not flip else None
    res_start = (semi + 1) if semi >= 0 else (colon + 1 if colon >= 0 else body_s)
    marks = {p.means: (p, m) for p, m in _find(MARKERS, t, body_s, e)}
    seg_ev = Evidence(span=(s, e), quote=t[s:e])
    activated_text = colon >= 0 or semi >= 0
    st = card.kind in ("spell", "trap") and section == "main"
    once = "once_per_turn" in marks

    # condition: the text before ':'; old wording: before ", you can"
    old_trigger = None
    if cond is None and not activated_text and not activation:
        m = re.match(r"(When\b[^.;:]*?),\s+(?:you can|you may)\b", t[body_s:e])
        if m and "replacement" not in marks:
            old_trigger = m
            cond = (body_s, body_s + m.end(1))
    cond_text_span = cond or (body_s, body_s)
    events_found = _find(EVENTS, t, *cond_text_span)
    win_spans = [(p, m, cond_text_span[0]) for p, m in _find(WINDOWS, t, *cond_text_span)]
    for ws, we in extra_windows:
        win_spans += [(p, m, ws) for p, m in _find(WINDOWS, t, ws, we)]
    if "quick" in marks:  # "(Quick Effect)" closes the condition in older texts too
        qp, qm = marks["quick"]
        q_end = body_s + qm.start()
        win_spans += [(p, m, body_s) for p, m in _find(WINDOWS, t, body_s, q_end) if (p.means not in {w[0].means for w in win_spans})]
    # drop "opponent_turn" when "either_turn" matched the same words; drop generic attack when by-opponent
    windows = sorted({p.means for p, _, _ in win_spans})
    if "either_turn" in windows and "opponent_turn" in windows:
        windows.remove("opponent_turn")
    if "attack_declared_by_opponent" in windows and "attack_declared" in windows:
        windows.remove("attack_declared")
    wev = tuple(Evidence(span=(a + m.start(), a + m.end()), quote=t[a + m.start():a + m.end()], pattern=p.id)
                for p, m, a in win_spans if p.means in windows)
    windows_d = Decision(windows, "WIN-TEXT", wev)

    # -- kind --------------------------------------------------------------------------------
    optional = None
    ev_list = sorted({p.means for p, _ in events_found})
    if "opponent_summons" in ev_list and "summoned" in ev_list:
        ev_list.remove("summoned")
    if "attacked" in ev_list and "attacks" in ev_list and re.search(r"attacks or is attacked", t[cond_text_span[0]:cond_text_span[1]]):
        pass
    ev_evidence = tuple(_ev(t, cond_text_span[0], m, p) for p, m in events_found if p.means in ev_list)
    if activation:
        bit = f"type&TYPE_{card.subtype.upper().replace('-', '')}" if card.subtype != "Normal" else f"type=TYPE_{card.kind.upper()} only"
        kind = Decision("activation", "KIND-ST-ACTIVATION", (_bit(bit),))
    elif card.kind == "monster" and card.type & C.TYPE_NORMAL and section != "pendulum":
        kind = Decision("continuous", "TXT-NORMAL-MONSTER", (_bit("type&TYPE_NORMAL"),))
    elif flip:
        kind = Decision("flip", "KIND-FLIP", (Evidence(span=(body_s, body_s + 5), quote="FLIP:", pattern="flip"),))
    elif "quick" in marks:
        kind = Decision("quick", "KIND-QUICK", (_ev(t, body_s, marks["quick"][1], marks["quick"][0]),))
    elif old_trigger is not None:
        kind = Decision("trigger", "TXT-OLD-TRIGGER", (Evidence(span=cond, quote=t[cond[0]:cond[1]]),))
    elif not activated_text:
        if re.match(r"(?:When|Each time)\b", t[body_s:e]) and ev_list and "replacement" not in marks:
            kind = Decision(UNKNOWN, "TXT-UNDECIDED", (seg_ev,))
        elif OLD_YOU_CAN.search(t, body_s, e) and "replacement" not in marks:
            # old wording ("Once per turn, you can send ... to destroy ...") may be an activated
            # effect written without ':' or ';': the structure does not tell
            m = OLD_YOU_CAN.search(t, body_s, e)
            kind = Decision(UNKNOWN, "TXT-UNDECIDED", (Evidence(span=(m.start(), m.end()), quote=m.group(0)),))
        else:
            kind = Decision("continuous", "TXT-NOT-ACTIVATED", (seg_ev,))
    elif (cond is not None and "either_turn" in windows and not st and card.kind == "monster"
          and not any(w in TIMING_SUBSTEP for w in windows)):
        kind = Decision("quick", "KIND-QUICK", wev)
    elif cond is not None and ev_list:
        kind = Decision("trigger", "KIND-TRIGGER", ev_evidence)
    elif cond is not None and ({"either_turn", "opponent_turn"} & set(windows)) and not st:
        kind = Decision("quick", "KIND-QUICK", wev)
    elif card.kind == "trap" and section == "main":
        if cond is not None and ({"either_turn", "opponent_turn"} & set(windows)):
            kind = Decision("quick", "KIND-QUICK", wev)
        else:
            kind = Decision(UNKNOWN, "KIND-TRAP-EFFECT", (seg_ev,))
    else:
        kind = Decision("ignition", "KIND-IGNITION", (seg_ev,))

    k = kind.value
    if k in ("trigger", "flip"):
        yc = re.search(r"\b[Yy]ou (?:can|may)\b(?! only)", t[(cond[1] if cond else body_s):e])
        if yc:
            a = cond[1] if cond else body_s
            optional = Decision(True, "OPT-YOU-CAN", (_ev(t, a, yc),))
        else:
            optional = Decision(False, "OPT-YOU-CAN", (seg_ev,))

    # -- events ------------------------------------------------------------------------------
    if k == "flip":
        events = Decision(["flipped"], "EVT-FLIP", kind.evidence)
    elif k == "trigger":
        events = Decision(ev_list, "EVT-TEXT", ev_evidence) if ev_list else Decision(UNKNOWN, "EVT-UNKNOWN", (seg_ev,))
    elif k == UNKNOWN:
        events = Decision(UNKNOWN, "DS-UNKNOWN-KIND", (seg_ev,))
    else:
        events = Decision([], "EVT-TEXT")

    # -- speed -------------------------------------------------------------------------------
    if k in ("continuous", "materials"):
        speed = Decision(None, "DS-NONE", kind.evidence)
    elif k == UNKNOWN:
        speed = Decision(UNKNOWN, "DS-UNKNOWN-KIND", kind.evidence)
    elif k == "activation":
        if card.kind == "trap" and card.subtype == "Counter":
            speed = Decision(3, "SS3-COUNTER", (_bit("type&TYPE_COUNTER"),))
        elif card.kind == "trap" or card.subtype == "Quick-Play":
            speed = Decision(2, "SS2-FAST-CARDS", kind.evidence)
        else:
            speed = Decision(1, "SS1-SPELL", kind.evidence)
    elif card.kind == "trap" and section == "main":
        speed = Decision(3 if card.subtype == "Counter" else 2, "SS2-TRAP-EFFECT", (_bit("type&TYPE_TRAP"),))
    elif k == "quick":
        speed = Decision(2, "SS2-QUICK", kind.evidence)
    elif card.kind == "spell" and card.subtype == "Quick-Play" and section == "main":
        speed = Decision(2, "SS2-FAST-CARDS", (_bit("type&TYPE_QUICKPLAY"),))
    elif k == "ignition":
        speed = Decision(1, "SS1-IGNITION", kind.evidence)
    else:
        speed = Decision(1, "SS1-TRIGGER", kind.evidence)

    resp = [(a, m) for a, b in ([cond] if cond else []) + list(extra_windows) for m in [DAMAGE_RESPONSE_RX.search(t, a, b)] if m]
    resp_ev = tuple(Evidence(span=(m.start(), m.end()), quote=m.group(0)) for _, m in resp[:1])
    ds = _damage_step(card, t, k, kind, optional, speed, marks, body_s, e, cond, res_start, ev_list, ev_evidence, windows, wev, seg_ev,
                      resp_ev)
    return EffectProfile(idx, section, (s, e), t[s:e], number, kind, optional, speed, events, windows_d, ds, once)


def _damage_step(card, t, k, kind, optional, speed, marks, body_s, e, cond, res_start, ev_list, ev_evidence,
                 windows, wev, seg_ev, resp_ev=()):
    if k in ("continuous", "materials"):
        return None
    if k == UNKNOWN:
        return _all(UNKNOWN, "DS-UNKNOWN-KIND", (seg_ev,))
    if "not_damage_step" in marks:
        p, m = marks["not_damage_step"]
        return _all(False, "DS-EXCEPT", (_ev(t, body_s, m, p),))
    if k == "activation" and card.subtype == "Counter" and card.kind == "trap":
        return _all(True, "DS-COUNTER", (_bit("type&TYPE_COUNTER"),))
    # the cards 002 names by name: a ruling, not a reading of the text (002:53, 002:74); the card
    # activation of a Spell/Trap Card only
    named = NAMED_DAMAGE_STEP.get(card.name) if k == "activation" else None
    if named is not None:
        rule, by_ruleset = named
        ev = (_bit(f"name={card.name}"),)
        return {rs: {s: Decision(by_ruleset[rs], rule, ev) for s in SUBSTEPS} for rs in RULESETS}
    # the activation timing is the first Damage Step timing the condition names (Reflect Bounder:
    # "Before damage calculation, if ... was in face-up Attack Position at the start of the Damage Step")
    tim = sorted((x.span[0], x.pattern) for x in wev if x.pattern in TIMING_PATTERNS)
    timing = [TIMING_PATTERNS[tim[0][1]]] if tim else []
    damage_step_window = "damage_step" in windows
    timing_ev = tuple(x for x in wev if x.pattern in TIMING_PATTERNS and (not tim or x.span[0] == tim[0][0])) or tuple(
        x for x in wev if x.pattern == "w-ds")

    if k in ("trigger", "flip"):
        if timing:
            return _all_by(lambda s: s in timing, "DS-TIMING", timing_ev)
        if resp_ev:
            return _all(True, "DS-RESPOND-DAMAGE", resp_ev)
        if k == "flip":
            return _all(True, "DS-FLIP", kind.evidence)
        if optional is not None and optional.value is False:
            return _all(True, "DS-MANDATORY", optional.evidence)
        if "opponent_summons" in ev_list:
            return _all(False, "DS-OPP-SUMMON", tuple(x for x in ev_evidence if x.pattern == "ev-opp-summons"))
        if "ss_self" in marks:
            sp, sm = marks["ss_self"]
            hand = _find([p for p in MARKERS if p.means == "hand"], t, res_start, e)
            if not hand and cond is not None:
                hand = _find([p for p in MARKERS if p.means == "hand"], t, *cond)
            if hand:
                return _all(False, "DS-SS-SELF-HAND", (_ev(t, body_s, sm, sp),))
        return _all(True, "DS-OPT-TRIGGER", (optional.evidence if optional else kind.evidence))

    if speed.value == 1:
        return _all(False, "DS-SS1", speed.evidence)
    if speed.value == UNKNOWN:
        return _all(UNKNOWN, "DS-UNKNOWN-KIND", speed.evidence)

    # fast effects and fast card activations (Spell Speed 2)
    monster_quick = k == "quick" and card.kind == "monster"
    if monster_quick and "negate_activation" in marks:
        p, m = marks["negate_activation"]
        return _all(True, "DS-NEGATE-ACTIVATION", (_ev(t, body_s, m, p),))
    atk = _find(ATK_CHANGE, t, res_start, e)
    if timing:
        return _all_by(lambda s: s in timing, "DS-TIMING", timing_ev)
    if resp_ev:
        return _all(True, "DS-RESPOND-DAMAGE", resp_ev)
    if damage_step_window:
        if atk:
            return _atk_ds(t, body_s, e, cond, atk, res_start)
        return _all(True, "DS-TIMING", timing_ev)
    if monster_quick and "negate_effect" in marks and "activation" in ev_list:
        p, m = marks["negate_effect"]
        ev = (_ev(t, body_s, m, p),) + tuple(x for x in ev_evidence if x.pattern == "ev-activation")
        return {"tcg": {s: Decision(True, "DS-NEGATE-RESPONSE-TCG", ev) for s in SUBSTEPS},
                "ocg": {s: Decision(False, "DS-NEGATE-RESPONSE-TCG", ev) for s in SUBSTEPS}}
    if atk:
        return _atk_ds(t, body_s, e, cond, atk, res_start)
    destroyed = DESTROYED_EVENT_RX.search(t, *cond) if cond is not None else None
    if destroyed:  # the profile rule DS-DESTROYED-EVENT (a Trap "When a monster you control is destroyed by battle: ...")
        return _all_by(lambda s: s == "end", "DS-DESTROYED-EVENT",
                       (Evidence(span=(destroyed.start(), destroyed.end()), quote=destroyed.group(0)),))
    return _all(False, "DS-NOT-LISTED", (seg_ev,) if k != "activation" else kind.evidence + (seg_ev,))


# 002 names these cards, not a wording: its rulings decide their card activation in the Damage Step
# (every sub-step; per ruleset).
NAMED_DAMAGE_STEP: dict[str, tuple[str, dict[str, bool]]] = {
    # 002:53: ""Scrap Sheen", "Zero Force", and "Curse of Anubis" cannot be activated during the Damage Step."
    "Scrap Sheen": ("DS-NAMED-REFUSED", {"tcg": False, "ocg": False}),
    "Zero Force": ("DS-NAMED-REFUSED", {"tcg": False, "ocg": False}),
    "Curse of Anubis": ("DS-NAMED-REFUSED", {"tcg": False, "ocg": False}),
    # 002:74: "... have rulings stating that they are allowed to do so: "Chthonian Blast" and
    # "Desrook Archfiend". In the TCG only, "Muko" can be activated during the Damage Step."
    "Chthonian Blast": ("DS-NAMED-ALLOWED", {"tcg": True, "ocg": True}),
    "Muko": ("DS-NAMED-ALLOWED", {"tcg": True, "ocg": False}),
}


def _all_by(pred, rule, ev) -> dict[str, dict[str, Decision]]:
    return {rs: {s: Decision(bool(pred(s)), rule, tuple(ev)) for s in SUBSTEPS} for rs in RULESETS}


# the start of the clause an ATK/DEF change is in: after a sentence end, a line break, ':' or ';'
_CLAUSE_START = re.compile(r"(?:[.!?]\)?\s+|\n|[:;]\s*)")
# a condition that opens the clause, before a comma ("While you control ..., this card gains 3000 ATK")
_ATK_CONDITION = re.compile(r"(?:●\s*)?(?:While|If|Each turn, after|After)\b(?!\s+(?:you do|it does|they do|so|(?:that|the|this) (?:target|monster|card)s? (?:is|are) still|(?:it|they) (?:is|are) still)\b)[^.;:●]*?,\s", re.I)
_MODAL = re.compile(r"\b(?:Activate|Apply|Use) (?:1|one) of these effects\b", re.I)
_LINGERING = re.compile(r"^\s*Apply these effects (?:until the end of this turn|for the rest of this turn)", re.I)


def _atk_doubt(t: str, s: int, e: int, hit: int) -> tuple[str, Evidence] | None:
    """Why the ATK/DEF change at ``hit`` (inside the text t[s:e]) may not be one that "directly"
    alters ATK/DEF (002:48-53): a condition of its own clause (DS-ATK-CONDITIONAL), one of the
    effects to choose from (DS-ATK-MODAL), or effects applied for the rest of the turn to a kind of
    monster (DS-ATK-LINGERING); None when there is no such sign."""
    a = s
    for m in _CLAUSE_START.finditer(t, s, hit):
        a = m.end()
    c = _ATK_CONDITION.match(t, a, hit)
    if c and c.end() <= hit:
        return "DS-ATK-CONDITIONAL", Evidence(span=(a, c.end()), quote=t[a:c.end()].strip())
    bullet = t.rfind("●", s, hit)
    if bullet >= 0:
        mod = _MODAL.search(t, s, bullet)
        if mod:
            return "DS-ATK-MODAL", Evidence(span=(mod.start(), mod.end()), quote=mod.group(0))
        ling = _LINGERING.match(t[s:bullet])
        if ling:
            return "DS-ATK-LINGERING", Evidence(span=(s + ling.start(), s + ling.end()), quote=ling.group(0).strip())
    return None


def _atk_ds(t, body_s, e, cond, atk, res_start):
    """DS-ATK, DS-ATK-CALC-TCG, DS-ATK-CALC-OCG: an effect that directly changes ATK/DEF."""
    p, m = atk[0]
    aev = _ev(t, res_start, m, p)
    doubts = [_atk_doubt(t, body_s, e, res_start + mm.start()) for _pp, mm in atk]
    if all(doubts):
        # every ATK/DEF change of it may not be a direct one: UNKNOWN where DS-ATK would allow it (or
        # leave it open); where DS-ATK refuses it, neither reading allows it
        rule, dev = doubts[0]
        direct = _atk_ds_direct(t, body_s, e, cond, aev)
        return {rs: {s: (d if d.value is False else Decision(UNKNOWN, rule, (aev, dev))) for s, d in subs.items()}
                for rs, subs in direct.items()}
    return _atk_ds_direct(t, body_s, e, cond, aev)


def _atk_ds_direct(t, body_s, e, cond, aev):
    calc = re.search(r"(?i)damage calculation", t[body_s:e])
    dstep = re.search(r"Damage Step", t[body_s:e])
    cond_calc = cond is not None and re.search(r"(?i)damage calculation", t[cond[0]:cond[1]])
    out: dict[str, dict[str, Decision]] = {"tcg": {}, "ocg": {}}
    for s in ("start", "before_calc"):
        for rs in RULESETS:
            out[rs][s] = Decision(True, "DS-ATK", (aev,))
    for s in ("after_calc", "end"):
        for rs in RULESETS:
            out[rs][s] = Decision(False, "DS-ATK", (aev,))
    if calc or dstep:
        w = calc or dstep
        wev = Evidence(span=(body_s + w.start(), body_s + w.end()), quote=w.group(0))
        out["tcg"]["during_calc"] = Decision(True, "DS-ATK-CALC-TCG", (aev, wev))
    else:
        out["tcg"]["during_calc"] = Decision(False, "DS-ATK", (aev,))
    if cond_calc:
        cev = Evidence(span=(cond[0] + cond_calc.start(), cond[0] + cond_calc.end()), quote=cond_calc.group(0))
        out["ocg"]["during_calc"] = Decision(True, "DS-ATK-CALC-OCG", (aev, cev))
    elif calc or dstep:
        w = calc or dstep
        wev = Evidence(span=(body_s + w.start(), body_s + w.end()), quote=w.group(0))
        out["ocg"]["during_calc"] = Decision(UNKNOWN, "DS-ATK-CALC-OCG-AMBIGUOUS", (aev, wev))
    else:
        out["ocg"]["during_calc"] = Decision(False, "DS-ATK-CALC-OCG", (aev,))
    return out


def profile_dict(card: C.Card) -> dict:
    return profile(card).to_dict()


# ---------------------------------------------------------------------------------------------
# battle modifications: what a card's text that is not activated does to damage calculation
# ---------------------------------------------------------------------------------------------

BD_KEYWORDS = re.compile(
    r"battle damage|would take battle or effect damage|damage from a battle|destroyed by battle|piercing|inflict the difference|"
    r"takes? no damage|"
    r"damage becomes|that much LP instead|"
    r"cannot be destroyed(?! by (?:your opponent's |an opponent's |your |)(?:card )?effects?)|"
    r"not destroyed as a result of battle|cannot destroy monsters by battle|"
    r"would be destroyed(?! by (?:your opponent's |an opponent's |your |a |)(?:card )?effects?)", re.I)
# a trigger's event, not a change of the damage calculation
# an activation condition on a monster destroyed (by battle, or in general: 002:186, 190)
DESTROYED_EVENT_RX = re.compile(r"\b(?:when|if)\b[^:;.]*?\b(?:is|are) destroyed(?: by battle)?(?: and sent to (?:the|your|its owner's) (?:GY|Graveyard))?\b"
                                r"(?! by (?:a |an |your opponent's |)card effects?)", re.I)
BD_EVENT = re.compile(r"\b(?:if|when)\b[^,:;]*?\b(?:(?:is|are|was|were) destroyed by battle(?: and sent to the (?:GY|Graveyard))?|"
                      r"(?:inflicts?|takes?) battle damage\b[^,:;]*)", re.I)
# a monster Type (the database's races: not a card type such as "Ritual" or "Xyz")
_SUBJ_RACE = r"(?P<race>" + "|".join(sorted((re.escape(n) for _b, n in C.RACE_NAMES), key=len, reverse=True)) + r")(?:-Type)?"
# a condition before the sentence's main clause (", " after it): (pattern id, regex, condition builder)
BD_CONDITIONS = (
    ("bd-c-race", re.compile(rf"while you control (?:a|an|another) {_SUBJ_RACE} monster(?P<other> \(other than this card\))?", re.I),
     lambda m: ("control_race", m["race"], bool(m["other"]) or m.group(0).lower().startswith("while you control another"))),
    ("bd-c-archetype", re.compile(r"while (?P<you>you control )?another face-up \"(?P<arch>[^\"]+)\" monster(?:\(s\))?(?: is on the field)?", re.I),
     lambda m: ("archetype_face_up", m["arch"], "you" if m["you"] else "any")),
    ("bd-c-token", re.compile(r"while you control a Token", re.I), lambda m: ("control_token",)),
    ("bd-c-your-turn", re.compile(r"during your (?:turn|Battle Phase)", re.I), lambda m: ("your_turn",)),
    ("bd-c-opponent-turn", re.compile(r"during your opponent's (?:turn|Battle Phase)", re.I), lambda m: ("opponent_turn",)),
    ("bd-c-equipped", re.compile(r"if this card is equipped with [^,]+", re.I), lambda m: ("equipped",)),
    ("bd-c-flipped", re.compile(r"if this card was flipped face-up", re.I), lambda m: ("flipped",)),
    ("bd-c-attack-position", re.compile(r"while this card is in face-up Attack Position(?: on the field)?", re.I), lambda m: ("self_attack_position",)),
)


def _scope_of(m: re.Match) -> tuple:
    d = m.groupdict()
    arch = d.get("arch") or d.get("arch2")
    if arch:
        return ("archetype", arch, bool(d.get("other")), "you")
    if d.get("race"):
        return ("race", d["race"], False)
    subj = (d.get("subj") or "this card").lower()
    if subj.startswith("a monster you control"):
        return ("any", "you")
    return ("self",)


# the sentences the reader computes: (pattern id, regex on the whole sentence's main clause, the mods it gives)
BD_TEMPLATES = (
    ("bd-pierce", re.compile(
        r"(?:if|when) (?P<subj>this card|your \"(?P<arch>[^\"]+)\" monsters?|an? " + _SUBJ_RACE + r" monsters? you control|a monster you control) "
        r"attacks a Defense Position monster, inflict piercing (?:battle )?damage(?: to your opponent)?", re.I),
     lambda m: [dict(kind="piercing", rule="BD-PIERCE", scope=_scope_of(m), role="attacker", direct=False, to="opponent")]),
    ("bd-pierce-difference", re.compile(
        r"(?:● )?during battle between this attacking card and a Defense Position monster whose DEF is lower than the ATK of this card, "
        r"inflict the difference as Battle Damage to your opponent", re.I),
     lambda m: [dict(kind="piercing", rule="BD-PIERCE", role="attacker", direct=False, to="opponent")]),
    ("bd-indestructible", re.compile(
        r"(?P<subj>this card|this Defense Position card|(?P<other>other )?\"(?P<arch>[^\"]+)\" (?:monsters|cards) you control|your \"(?P<arch2>[^\"]+)\" monsters) "
        r"cannot be destroyed by battle(?: or (?:by )?card effects)?(?P<att> while they are attacking)?", re.I),
     lambda m: [dict(kind="indestructible", rule="BD-INDESTRUCTIBLE", scope=_scope_of(m),
                     role="attacker" if m["att"] else ("defense" if "defense" in m["subj"].lower() else None))]),
    ("bd-indestructible-plain", re.compile(r"cannot be destroyed by battle(?: or (?:by )?card effects)?", re.I),
     lambda m: [dict(kind="indestructible", rule="BD-INDESTRUCTIBLE")]),
    ("bd-indestructible-no-damage", re.compile(
        r"this card cannot be destroyed by battle,? and you take no battle damage from (?:battles|attacks) involving this card", re.I),
     lambda m: [dict(kind="indestructible", rule="BD-INDESTRUCTIBLE"),
                dict(kind="no_damage", rule="BD-NO-DAMAGE", role="battler", to="you")]),
    # older wording: "... is not destroyed as a result of battle." (its "(Damage calculation is applied normally.)" is a sentence apart)
    ("bd-not-destroyed-result", re.compile(r"this card is not destroyed as a result of battle", re.I),
     lambda m: [dict(kind="indestructible", rule="BD-INDESTRUCTIBLE")]),
    # an Equip Card's: only the monster it is equipped to (scope "equipped": the card's `equipped_to`)
    ("bd-not-destroyed-equipped", re.compile(
        r"the monster equipped with this card is not destroyed as a result of battle(?: or by the effect of a card that targets the monster)?", re.I),
     lambda m: [dict(kind="indestructible", rule="BD-INDESTRUCTIBLE", scope=("equipped",))]),
    ("bd-cannot-destroy", re.compile(r"this card cannot destroy monsters by battle", re.I),
     lambda m: [dict(kind="cannot_destroy", rule="BD-CANNOT-DESTROY", role="battler")]),
    ("bd-no-damage", re.compile(r"(?P<who>you|your opponent) takes? no battle damage from (?:battles|attacks) involving this card", re.I),
     lambda m: [dict(kind="no_damage", rule="BD-NO-DAMAGE", role="battler", to="you" if m["who"].lower() == "you" else "opponent")]),
    ("bd-double-attacked", re.compile(r"double any battle damage your opponent takes when they attack this (?:monster|card)", re.I),
     lambda m: [dict(kind="double", rule="BD-DOUBLE", role="target", to="opponent")]),
    ("bd-double-direct", re.compile(r"the battle damage this card inflicts by attacking your opponent's life points directly is doubled", re.I),
     lambda m: [dict(kind="double", rule="BD-DOUBLE", role="attacker", direct=True, to="opponent")]),
    ("bd-reflect", re.compile(
        r"your opponent takes any battle damage you would have taken from battles involving (?:a|an) face-up \"(?P<arch>[^\"]+)\" monster you control(?P<exc>, except this card)?", re.I),
     lambda m: [dict(kind="reflect", rule="BD-REFLECT", scope=("archetype", m["arch"], bool(m["exc"]), "you"), role="battler", to="you")]),
    ("bd-halve", re.compile(r"any battle damage from battles involving this card is halved", re.I),
     lambda m: [dict(kind="halve", rule="BD-HALVE", role="battler", to="both")]),
    ("bd-halve-opponent", re.compile(r"any battle damage your opponent takes from (?:attacks|battles) involving this card is halved", re.I),
     lambda m: [dict(kind="halve", rule="BD-HALVE", role="battler", to="opponent")]),
    ("bd-gain", re.compile(r"if a player would take damage from a battle involving this card, they gain that much LP,? instead", re.I),
     lambda m: [dict(kind="gain", rule="BD-GAIN", role="battler", to="both")]),
    ("bd-halve-direct", re.compile(
        r"this card can attack your opponent directly, but when it uses this effect, any battle damage it inflicts to your opponent is halved", re.I),
     lambda m: [dict(kind="halve", rule="BD-HALVE", role="attacker", direct=True, to="opponent", conditions=(("direct_by_effect",),))]),
)
# a text that grants the bullets after it to another monster
GRANTED_RX = re.compile(r"\bgains? (?:this|these|the following) effects?\b", re.I)
# why a sentence is not computed though its kind is known
BD_WHY_GRANTED = "granted by an effect of this card (\"If you do, this card gets the following effect\"): whether it was granted is not computed"
BD_ONCE_PER_TURN = re.compile(r"once per turn, (?:if|when)\b", re.I)
BD_WHY_ONCE = "once per turn: whether it was already applied this turn (to any damage it names) is not computed"
BD_YOU_NO_DAMAGE = re.compile(r"\bif you would take [^,]*damage, you take no damage$", re.I)
_BD_SELF_ONLY = re.compile(r"^(?:● )?(?:this card|if this card|when this card|the first time this card|this face-up card)\b|involving this card", re.I)


def _bd_kind(sent: str) -> tuple[str, str]:
    lo = sent.lower()
    if "piercing" in lo or "inflict the difference" in lo:
        return "piercing", "BD-PIERCE"
    if "gain" in lo and "lp" in lo and "instead" in lo:
        return "gain", "BD-GAIN"
    if "no battle damage" in lo or "take no damage" in lo or "takes no damage" in lo:
        return "no_damage", "BD-NO-DAMAGE"
    if "double" in lo or "twice" in lo:
        return "double", "BD-DOUBLE"
    if "halve" in lo or "half" in lo:
        return "halve", "BD-HALVE"
    if "not destroyed as a result of battle" in lo and "instead" not in lo:
        return "indestructible", "BD-INDESTRUCTIBLE"
    if "instead" in lo or "would be destroyed" in lo or "is not destroyed" in lo:
        return "replacement", "BD-REPLACE"
    if "cannot destroy monsters by battle" in lo:
        return "cannot_destroy", "BD-CANNOT-DESTROY"
    if "cannot be destroyed" in lo or "not destroyed as a result of battle" in lo:
        return "indestructible", "BD-INDESTRUCTIBLE"
    return "other", "BD-OTHER"


def battle_mods(card: C.Card, prof: CardProfile) -> list[BattleMod]:
    """The battle modifications of a card's text (docs/profiles.md): each sentence of an effect
    that is not activated and names battle damage or destruction by battle, computed where its
    wording is one of :data:`BD_TEMPLATES`, else its kind only (``sure`` False)."""
    t = card.text
    out: list[BattleMod] = []
    gemini = bool(card.type & C.TYPE_GEMINI)
    for e in prof.effects:
        if e.span is None or e.kind.value == "materials":
            continue
        activated = e.kind.decided and e.activated
        spans = []
        for s, en in _sentences(t, e.span[0], e.span[1]):
            cuts = [i for i in range(s, en) if t[i] == "●"]  # ("... with this effect:\n● <effect>": each bullet apart)
            bounds = [s, *cuts, en]
            pieces = [(a, b) for a, b in zip(bounds, bounds[1:]) if t[a:b].strip()]
            # an activated effect's own sentences go through the chain; a bullet it grants (a Gemini
            # monster's "... with this effect: ● ...") is read as the card's text
            spans += [(a, b, True) for a, b in pieces if t[a] == "●"] if activated else [(a, b, False) for a, b in pieces]
        for s, en, granted in spans:
            sent = t[s:en].rstrip()
            en = s + len(sent)
            if not BD_KEYWORDS.search(BD_EVENT.sub(" ", sent)):
                continue  # (none, or only a trigger's event: "If this card is destroyed by battle, ...")
            if sent.startswith("●") and GRANTED_RX.search(t, e.span[0], s):
                # "An Xyz Monster ... using this card as material gains this effect.\n● Cannot be destroyed by
                # battle.": the bullet is another monster's text, not this card's
                kind, rule = _bd_kind(sent)
                out.append(BattleMod(kind, rule, Evidence(span=(s, en), quote=sent), e.section, False,
                                     "granted to another monster ('gains this effect')"))
                continue
            colon = _top_level(t, s, en, ":")
            if colon >= 0 and not NUMBER_RX.match(sent):
                rest = t[colon + 1:en]
                if sent.startswith("●") and BD_KEYWORDS.search(BD_EVENT.sub(" ", rest)) and ":" not in rest:
                    # "● <label>: <text>": a text granted on a condition its label names (a Tribute, a coin toss)
                    kind, rule = _bd_kind(rest)
                    out.append(BattleMod(kind, rule, Evidence(span=(s, en), quote=sent), e.section, False,
                                         "granted on the condition its bullet names"))
                continue
            body = NUMBER_RX.sub("", sent, count=1) if NUMBER_RX.match(sent) else sent
            body = body.strip().rstrip(".").strip()
            if body.startswith("● "):
                body = body[2:]
            conds: list[tuple] = [("gemini",)] if gemini else []
            ids: list[str] = []
            changed = True
            while changed:
                changed = False
                for pid, rx, build in BD_CONDITIONS:
                    m = rx.match(body)
                    if m and body[m.end():m.end() + 2] == ", ":
                        conds.append(build(m))
                        ids.append(pid)
                        body = body[m.end() + 2:]
                        changed = True
            ev = Evidence(span=(s, en), quote=sent)
            # a bullet an activated effect grants ("If you do, this card gets the following effect: ● ...")
            # applies only once that effect resolved (a Gemini monster's is its `gemini` condition)
            by_effect = granted and not gemini
            for pid, rx, build in BD_TEMPLATES:
                m = rx.fullmatch(body)
                if m:
                    for kw in build(m):
                        kw.setdefault("scope", ("self",))
                        kw["conditions"] = tuple(conds) + tuple(kw.get("conditions", ()))
                        if by_effect:
                            kw.update(sure=False, why=BD_WHY_GRANTED, self_only=kw["scope"] == ("self",))
                        else:
                            kw["sure"] = True
                        out.append(BattleMod(evidence=Evidence(span=(s, en), quote=sent, pattern="+".join([*ids, pid])),
                                             section=e.section, **kw))
                    break
            else:
                kind, rule = _bd_kind(sent)
                self_only = bool(_BD_SELF_ONLY.search(sent)) and '"' not in sent and "you control" not in sent.lower()
                once = not by_effect and bool(BD_ONCE_PER_TURN.match(body))
                why = BD_WHY_GRANTED if by_effect else BD_WHY_ONCE if once else "a wording the reader does not compute"
                # whose damage an unsure "you take no damage" prevents (only that player's damage can change)
                to = "you" if once and kind == "no_damage" and BD_YOU_NO_DAMAGE.search(body) else None
                out.append(BattleMod(kind, rule, ev, e.section, False, why, to=to, self_only=self_only))
    return out
