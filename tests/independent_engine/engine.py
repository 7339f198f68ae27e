"""An independent Battle Phase engine, written from bpcheck's documentation only.

Written against docs/engines.md, docs/protocol.md, docs/observation.md, docs/model.md,
docs/transcript.md, docs/cards.md and the rules catalogue docs/rules.md, as the author of an
in-house engine would: no line of bpcheck is imported or copied here (Python's standard library
only). It plays the part of the Battle Phase its boards need:

- Normal Monsters and Tokens (no effects), in any position, either side, owned by either player;
- monsters whose only card data is an attack cost (the static ``attack_cost``: Dark Elf), or
  "must attack if able" and "destroy it in face-up Defense Position" (Berserk Gorilla);
- three kinds of Set Trap Card, recognised by their card data (the ``cards`` of ``start``), never
  by name: "destroy the attacking monster" when an opponent's monster declares an attack (Sakuretsu
  Armor), "Special Summon a monster from your Graveyard and stay bound to it" (Call of the
  Haunted), and "no battle damage, no destruction by battle this turn" (Waboku);
- more Spells and Traps, recognised the same way (issue 34): +N ATK/DEF to a face-up monster until
  the end of the turn (Reinforcements, Rush Recklessly, Castle Walls), negate the attack and deal
  its ATK (Magic Cylinder), destroy a face-up monster and deal its ATK to both players (Ring of
  Destruction), turn a monster face-down (Book of Moon), destroy the opponent's Attack Position
  monsters (Mirror Force), three Tokens on the opponent's field (Ojama Trio), Counter Traps that
  negate a Trap or Spell activation (Trap Jammer, Seven Tools of the Bandit, Magic Jammer),
  destroy a Spell/Trap (Mystical Space Typhoon, Dust Tornado), "Level N or higher cannot attack"
  (Gravity Bind), a Continuous Trap chaining a monster (Fiendish Chain), and face-up from the
  start a "banished instead" Trap (Macro Cosmos) and an Equip giving a direct attack (Shooting
  Star Bow - Ceal); Quick-Play Spells from the hand, Kuriboh from the hand, the direct_attack
  static (Jinzo #7), Flip monsters that destroy or return a monster (Man-Eater Bug, Hane-Hane);
- entering and skipping the Battle Phase, its steps, priority and passes, the attack-declaration
  window, chains (last in, first out, Spell Speeds), replays and stopped attacks, every
  Damage-Step sub-step, damage calculation, LP and the end of the duel, Main Phase 2 battle
  position changes.

Anything else on a board (another card or card kind) is refused at ``start``.

It keeps no bookkeeping it does not need and reports none: its observations leave out every field
an engine may withhold (``WITHHELD``, declared in its protocol 2 ``hello``), and carry ``hidden``,
a key of its whole state, so that states the observation does not tell apart stay apart.

Bugs are planted for the tests: ``Engine(bug=NAME)`` plays with one rules bug of ``BUGS``.
"""

from __future__ import annotations

import copy
import hashlib
import json

# Every field of the observation this engine does not report (docs/protocol.md, "Partial
# observations"; the list of fields an engine may withhold and still be judged).
WITHHELD = (
    "priority", "passes", "open_windows", "chains_in_step", "next_uid", "lingering", "pending_triggers", "choice",
    "players[].monsters[].modifiers", "players[].monsters[].lingering_modifiers", "players[].monsters[].summoned_this_turn",
    "players[].monsters[].set_this_turn", "players[].monsters[].position_changed_this_turn",
    "players[].monsters[].attacks_declared", "players[].monsters[].declared_at", "players[].monsters[].declared_direct",
    "players[].monsters[].cannot_attack_this_turn", "players[].monsters[].destroyed_by_battle",
    "players[].monsters[].flipped_by_battle", "players[].monsters[].once_per_turn_used", "players[].monsters[].equipped_with",
    "players[].spells[].set_this_turn", "players[].spells[].linked_monster", "players[].spells[].on_chain",
    "players[].field_zone.set_this_turn", "players[].field_zone.linked_monster", "players[].field_zone.on_chain",
    "attack.potential_targets", "attack.direct_was_legal", "attack.target_was_facedown", "attack.replay_pending",
    "attack.battle_ended", "attack.damage_calculated",
    "chain[].effect", "chain[].speed", "chain[].negated", "chain[].card_activation", "chain[].kind", "chain[].subtype",
    "chain[].cost_info",
)  # fmt: skip

# The planted bugs, each a mistake an engine author could make (name -> what the engine does).
BUGS = {
    "summoned-cannot-attack": "a monster Summoned this turn is never offered an attack",
    "direct-past-face-down": "a direct attack is offered while the opponent controls only face-down monsters",
    "no-response-to-declaration": "after an attack declaration the turn player's pass closes the window: the opponent never gets priority",
    "count-at-damage-calculation": "an attack counts only when it reaches damage calculation: a monster whose attack was called off attacks again",
    "no-replay-on-summon": "a monster Special Summoned to the opponent's side during an attack causes no replay",
    "replay-without-call-off": "a replay offers the targets only, never calling the attack off",
    "piercing-for-everyone": "an attack on a Defense Position monster with lower DEF inflicts the difference to its controller",
    "equal-atk-both-survive": "two Attack Position monsters with equal ATK both survive the battle",
    "exact-zero-lp-goes-on": "a player whose LP fall exactly to 0 stays in the duel (only less than 0 loses)",
    "sent-at-damage-calculation": "monsters destroyed by battle go to the Graveyard at damage calculation, not at the end of the Damage Step",
    "controllers-graveyard": "a monster destroyed by battle goes to its controller's Graveyard, not its owner's",
    "defense-position-attacks": "a face-up Defense Position monster is offered an attack",
    "position-change-after-attack": "a monster that attacked this turn may still change its battle position in Main Phase 2",
    "no-before-damage-calculation": "the Damage Step skips the before-damage-calculation sub-step",
    "declaration-traps-in-damage-step": "\"when an attack is declared\" Traps stay activatable for the whole attack, Damage Step included",
    "chain-first-in-first-out": "a chain resolves from its first link to its last",
    "protection-ends-with-the-damage-step": "\"no battle damage / not destroyed by battle this turn\" ends with the Damage Step",
    "battle-phase-without-end-step": "ending the Battle Phase goes from the Battle Step straight to Main Phase 2",
    "no-main-phase-2": "after the Battle Phase the turn goes straight to the End Phase",
    "attack-goes-on-without-attacker": "an attack whose attacker was destroyed by a chain goes on to the Damage Step",
    "bound-trap-stays": "a Trap bound to the monster it Special Summoned stays on the field when that monster is destroyed",
}

DS = (
    "damage_step_start", "damage_step_flip", "damage_step_before_calculation", "damage_step_during_calculation",
    "damage_step_after_calculation_1", "damage_step_after_calculation_2", "damage_step_end",
)  # fmt: skip
PILES = ("hand", "graveyard", "banished", "deck")


def players_so_far(players: list, current: dict, where: list) -> dict:
    """The monster at a board place such as ``["P1", "M2"]`` among the players built so far."""
    if len(where) != 2 or where[0] not in ("P1", "P2") or not where[1].startswith("M"):
        raise ValueError(where)
    side = int(where[0][1]) - 1
    p = current if side == len(players) else players[side]
    m = p["monsters"][int(where[1][1:]) - 1]
    if m is None:
        raise LookupError(where)
    return m


class Refusal(Exception):
    """This engine cannot play the board (the protocol's error reply to ``start``)."""


def ev(kind: str, **fields) -> dict:
    return {"kind": kind, **fields}


# -- reading the card data ------------------------------------------------------------------------


def _plain(d: dict) -> dict:
    """A target or operation record without its unset (null, false) parameters."""
    return {k: v for k, v in d.items() if v is not None and v is not False}


def _trap_kind(c: dict) -> str | None:
    """Which Spell or Trap this engine knows a card is, by its card data; None: none."""
    other = _other_kind(c)
    if other is not None:
        return other
    if c.get("kind") != "trap" or c.get("statics"):
        return None
    effs = c.get("effects") or []
    if len(effs) != 1:
        return None
    e = effs[0]
    if e.get("type") != "activate" or e.get("cost") or e.get("location", "field") != "field":
        return None
    ops = [{k: v for k, v in o.items()} for o in e.get("ops") or []]
    targets = e.get("targets") or []
    if (
        e.get("when") == "attack_declared"
        and list(e.get("conditions") or []) == ["opponent_monster_attacking"]
        and len(targets) == 1 and targets[0].get("zone") == "monster" and targets[0].get("side") == "opponent"
        and targets[0].get("attacker_only") and targets[0].get("count") == 1
        and ops == [{"op": "destroy", "what": "target"}]
    ):  # fmt: skip
        return "destroy-attacker"
    if (
        not e.get("when") and not e.get("conditions") and c.get("subtype") == "continuous"
        and len(targets) == 1 and targets[0].get("zone") == "graveyard" and targets[0].get("side") == "own"
        and targets[0].get("kind") == "monster" and targets[0].get("count") == 1
        and len(ops) == 1 and ops[0].get("op") == "special_summon" and ops[0].get("what") == "target"
        and ops[0].get("position") == "attack" and ops[0].get("link") is True
    ):  # fmt: skip
        return "revive-bound"
    if (
        not e.get("when") and not e.get("conditions") and not targets and c.get("subtype") == "normal"
        and sorted((o.get("op"), o.get("to"), o.get("until")) for o in ops)
        == [("battle_indestructible", "you", "end_of_turn"), ("no_battle_damage", "you", "end_of_turn")]
    ):  # fmt: skip
        return "protect"
    return None


ONE_FACE_UP = {"zone": "monster", "side": "any", "count": 1, "face": "up"}


def _other_kind(c: dict) -> str | None:
    """The Set Spells/Traps of the seed boards this engine plays besides the first three, by their
    card data (docs/cards.md): "one face-up monster gains N ATK until the end of the turn"
    (Reinforcements, Rush Recklessly), "negate the attack and inflict its ATK to the opponent"
    (Magic Cylinder), "destroy one face-up monster and inflict its ATK to both players" (Ring of
    Destruction)."""
    if c.get("kind") not in ("trap", "spell"):
        return None
    effs = c.get("effects") or []
    if len(effs) != 1:
        return None
    e = effs[0]
    if e.get("type") != "activate" or e.get("location", "field") != "field" or _lp_cost(c) is None:
        return None
    if e.get("cost") and c.get("subtype") != "counter":
        return None
    targets = [_plain(t) for t in e.get("targets") or []]
    ops = [_plain(o) for o in e.get("ops") or []]
    when, conds = e.get("when"), list(e.get("conditions") or [])
    if (
        c["kind"] == "trap" and c.get("subtype") == "continuous" and not when and not conds and not targets and not ops
        and [_plain(x) for x in c.get("statics") or []] == [{"apply": "banish_instead_of_graveyard", "to": "all_cards"}]
    ):  # fmt: skip
        return "banish-instead"  # (Macro Cosmos: played only face-up from the start)
    statics = [_plain(x) for x in c.get("statics") or []]
    if (
        c["kind"] == "spell" and c.get("subtype") == "equip" and targets == [ONE_FACE_UP] and ops == [{"op": "equip", "what": "target"}]
        and len(statics) == 2 and statics[1] == {"apply": "direct_attack", "to": "equipped"}
        and statics[0].get("apply") == "modify_atk" and statics[0].get("to") == "equipped" and isinstance(statics[0].get("amount"), int)
        and set(statics[0]) == {"apply", "to", "amount"}
    ):  # fmt: skip
        return "equip-direct"  # (Shooting Star Bow - Ceal: played only face-up and equipped from the start)
    if (
        c["kind"] == "trap" and c.get("subtype") == "continuous" and not when and not conds
        and targets == [{**ONE_FACE_UP, "effect_monster": True}] and ops == [{"op": "attach", "what": "target"}]
        and statics == [{"apply": "cannot_attack", "to": "attached"}, {"apply": "negate_effects", "to": "attached"}]
    ):  # fmt: skip
        return "chain-monster"  # (Fiendish Chain)
    if (
        c["kind"] == "trap" and c.get("subtype") == "continuous" and not when and not conds and not targets and not ops
        and len(statics) == 1 and statics[0].get("apply") == "cannot_attack" and statics[0].get("to") == "all_monsters"
        and _min_level(statics[0]) is not None
    ):  # fmt: skip
        return "attack-lock"  # (Gravity Bind)
    if c.get("statics"):
        return None
    if (
        c["kind"] == "trap" and c.get("subtype") == "counter" and when in ("trap_activated", "spell_activated")
        and set(conds) <= {"battle_phase", "responding_to_opponent"} and not targets
        and ops == [{"op": "negate_activation", "destroy": True}] and _lp_cost(c) is not None
    ):  # fmt: skip
        return "jammer"
    if (c["kind"], c.get("subtype")) not in (("trap", "normal"), ("spell", "quick-play")):
        return None
    if not when and not conds and targets == [ONE_FACE_UP] and len(ops) == 1:
        o = ops[0]
        if o.get("op") in ("modify_atk", "modify_def") and o.get("what") == "target" and o.get("until") == "end_of_turn" and set(o) == {"op", "what", "amount", "until"} and isinstance(o["amount"], int):
            return "boost"
        if c["kind"] == "trap" and o == {"op": "destroy", "what": "target", "then_damage_both": "target_atk"}:
            return "ring"
    if (
        not when and not conds and targets in ([{"zone": "spell_trap", "side": "any", "count": 1}], [{"zone": "spell_trap", "side": "opponent", "count": 1}])
        and ops == [{"op": "destroy", "what": "target"}]
    ):  # fmt: skip
        return "destroy-spell-trap"
    if not when and not conds and targets == [{**ONE_FACE_UP, "can_flip_down": True}] and ops == [{"op": "set_position", "position": "facedown", "what": "target"}]:
        return "moon"
    if (
        c["kind"] == "trap" and not when and conds == ["opponent_free_monster_zones_3"] and not targets
        and ops == [{"op": "tokens", "count": 3, "position": "defense", "to": "opponent", "token": ops[0].get("token")}]
    ):  # fmt: skip
        return "tokens-to-opponent"
    if (
        c["kind"] == "trap" and when == "attack_declared" and conds == ["opponent_monster_attacking"] and not targets
        and ops == [{"op": "destroy", "what": "opponent_attack_position_monsters"}]
    ):  # fmt: skip
        return "destroy-attack-position"
    if (
        c["kind"] == "trap" and when == "attack_declared" and conds == ["opponent_monster_attacking"]
        and targets == [{"zone": "monster", "side": "opponent", "count": 1, "attacker_only": True}]
        and ops == [{"op": "negate_attack"}, {"op": "damage", "amount": "target_atk", "to": "opponent"}]
    ):  # fmt: skip
        return "cylinder"
    return None


def _lp_cost(c: dict) -> int | None:
    """The LP an activation costs (``pay_lp``: 0 for none); None for a cost this engine does not play."""
    cost = [_plain(o) for o in (c.get("effects") or [{}])[0].get("cost") or []]
    if not cost or cost == [{"op": "discard", "count": 1}]:
        return 0
    if len(cost) == 1 and cost[0].get("op") == "pay_lp" and isinstance(cost[0].get("amount"), int):
        return cost[0]["amount"]
    return None


def _discards(c: dict) -> bool:
    """Its activation costs one card discarded from the hand (``discard {count = 1}``)."""
    return [_plain(o) for o in (c.get("effects") or [{}])[0].get("cost") or []] == [{"op": "discard", "count": 1}]


def _min_level(st: dict) -> int | None:
    """A static's filter ``[["min_level", N]]`` (Level N or higher), else None."""
    f = st.get("filter")
    if isinstance(f, list) and len(f) == 1 and isinstance(f[0], list) and len(f[0]) == 2 and f[0][0] == "min_level":
        return f[0][1]
    return None


def _hand_kind(c: dict) -> str | None:
    """A monster effect activated from the hand this engine plays, by its card data: "during damage
    calculation, if your opponent's monster attacks: discard this card; you take no battle damage
    from that battle" (Kuriboh); None for any other card."""
    if c.get("kind") != "monster" or c.get("statics") or len(c.get("effects") or []) != 1:
        return None
    e = c["effects"][0]
    if (
        e.get("type") == "quick" and e.get("location") == "hand" and e.get("when") == "during_damage_calculation"
        and list(e.get("conditions") or []) == ["opponent_monster_attacking"] and not e.get("targets")
        and [_plain(o) for o in e.get("cost") or []] == [{"op": "discard_self"}]
        and [_plain(o) for o in e.get("ops") or []] == [{"op": "no_battle_damage", "to": "you", "until": "end_of_damage_step"}]
        and not e.get("once_per_turn") and not e.get("mandatory")
    ):  # fmt: skip
        return "no-damage-from-hand"
    return None


def _boost(c: dict) -> tuple[str, int]:
    o = _plain(c["effects"][0]["ops"][0])
    return o["op"][len("modify_"):], o["amount"]


def _speed(c: dict) -> int:
    """CH-SPEED (docs/cards.md): Counter Traps 3, other Traps and Quick-Play Spells 2."""
    return 3 if c.get("subtype") == "counter" else 2


def _vanilla(c: dict) -> bool:
    plain = not c.get("effects") and not c.get("statics")
    return plain and ((c.get("kind") == "monster" and c.get("subtype") == "normal") or c.get("kind") == "token")


STATICS = {"attack_cost", "must_attack", "destroy_if_face_up_defense", "direct_attack"}  # the statics this engine plays (docs/cards.md)


def _statics(c: dict) -> dict | None:
    """A monster's continuous effects by name (``{"attack_cost": {"amount": 1000}}``), when its card
    data holds no effect and only statics on itself that this engine plays (docs/cards.md:
    ``attack_cost {amount}``, Dark Elf; ``must_attack`` and ``destroy_if_face_up_defense``, Berserk
    Gorilla); None for any other card."""
    if c.get("kind") != "monster" or c.get("effects"):
        return None
    out = {}
    for st in c.get("statics") or []:
        params = {k: v for k, v in st.items() if v is not None and k not in ("apply", "to")}
        if st.get("apply") not in STATICS or st.get("to") != "self" or st["apply"] in out:
            return None
        if set(params) != ({"amount"} if st["apply"] == "attack_cost" else set()):
            return None
        if st["apply"] == "attack_cost" and not (isinstance(params["amount"], int) and params["amount"] > 0):
            return None
        out[st["apply"]] = params
    return out


def _attack_cost(c: dict) -> int | None:
    """The LP a monster pays to declare an attack (ATK-COST), or None."""
    st = (_statics(c) or {}).get("attack_cost")
    return None if st is None else st["amount"]


def _flip_kind(c: dict) -> str | None:
    """A Flip monster this engine plays, by its card data: "FLIP: Target 1 monster on the field;
    destroy that target" (Man-Eater Bug) or "return that target to the hand" (Hane-Hane)."""
    if c.get("kind") != "monster" or c.get("subtype") != "flip" or c.get("statics") or len(c.get("effects") or []) != 1:
        return None
    e = c["effects"][0]
    if e.get("type") != "flip" or not e.get("mandatory") or e.get("cost") or e.get("conditions") or e.get("when") or e.get("once_per_turn"):
        return None
    if [_plain(t) for t in e.get("targets") or []] != [{"zone": "monster", "side": "any", "count": 1}]:
        return None
    ops = [_plain(o) for o in e.get("ops") or []]
    if ops == [{"op": "destroy", "what": "target"}]:
        return "flip-destroy"
    if ops == [{"op": "return_to_hand", "what": "target"}]:
        return "flip-bounce"
    return None


def _plays(c: dict) -> bool:
    """A monster this engine plays: vanilla, with no effect but the statics it plays, or a Flip
    monster it plays."""
    return _vanilla(c) or _statics(c) is not None or _flip_kind(c) is not None


# -- the engine -----------------------------------------------------------------------------------


class Engine:
    """States are plain dicts, never changed once given out (``apply`` works on a copy)."""

    def __init__(self, bug: str | None = None) -> None:
        if bug is not None and bug not in BUGS:
            raise ValueError(f"unknown bug {bug!r} (known: {', '.join(sorted(BUGS))})")
        self.bug = bug
        self.cards: dict = {}
        self.stats: dict = {}  # card name -> (atk, def) on this board

    # -- start --------------------------------------------------------------------------------

    def start(self, board: dict, cards: dict, ruleset: str | None = None) -> dict:
        """The initial state of a board (docs/boards.md), its cards numbered as bpcheck numbers
        them (docs/protocol.md "The board"); Refusal for anything this engine does not play."""
        self.cards = cards
        ruleset = ruleset or board.get("ruleset", "tcg")  # docs/protocol.md "The ruleset": start's, else the board's, else tcg
        if ruleset != "tcg":
            raise Refusal(f"ruleset: this engine plays the TCG rules only, not {ruleset!r}")
        if board.get("step", "main1") != "main1":
            raise Refusal(f"step: this engine starts in Main Phase 1 only, not {board.get('step')!r}")
        for key in ("turn", "turn_player"):
            if not isinstance(board.get(key), int):
                raise Refusal(f"{key}: missing")
        uid = 0
        players = []
        for side, key in enumerate(("p1", "p2")):
            pd = board.get(key) or {}
            p = {"lp": pd.get("lp", 8000), "monsters": [None] * 5, "spells": [None] * 5, "field_zone": None}
            if not isinstance(p["lp"], int):
                raise Refusal(f"{key}.lp: this engine plays concrete boards only")
            for j, m in enumerate(pd.get("monsters") or []):
                c = self._card(m.get("card"), f"{key}.monsters[{j}]")
                if not _plays(c):
                    raise Refusal(f"{key}.monsters[{j}]: {m.get('card')!r} has effects; this engine plays Normal Monsters, Tokens and attack costs")
                for stat in ("atk", "def"):
                    if stat in m:
                        if not isinstance(m[stat], int):
                            raise Refusal(f"{key}.monsters[{j}].{stat}: this engine plays concrete boards only")
                        self.stats.setdefault(c["name"], {})[stat] = m[stat]
                uid += 1
                p["monsters"][m["zone"] - 1] = {
                    "uid": uid, "card": c["name"], "owner": m.get("owner", side + 1) - 1, "pos": m["position"],
                    "token": c.get("kind") == "token", "summoned": bool(m.get("summoned_this_turn")),
                    "set": bool(m.get("set_this_turn")), "attacks": 0, "declared_at": [], "direct": False,
                    "stopped": False, "changed": False, "marked": False, "mods": [],
                }  # fmt: skip
            for j, t in enumerate(pd.get("spells") or []):
                c = self._card(t.get("card"), f"{key}.spells[{j}]")
                kind = _trap_kind(c)
                if kind is None:
                    raise Refusal(f"{key}.spells[{j}]: this engine knows no card like {t.get('card')!r}")
                face_up_only = kind in ("banish-instead", "equip-direct")
                if (bool(t.get("face_up")) != face_up_only and kind != "attack-lock") or bool(t.get("equipped_to")) != (kind == "equip-direct") or t.get("attached_to"):
                    raise Refusal(f"{key}.spells[{j}]: this engine plays Set Spells and Traps (and face-up Macro Cosmos, Gravity Bind, an equipped Shooting Star Bow - Ceal)")
                uid += 1
                equipped = None
                if kind == "equip-direct":  # "P1 M2": a face-up monster (docs/boards.md)
                    where = str(t["equipped_to"]).split()
                    try:
                        mon = players_so_far(players, p, where)
                    except (LookupError, ValueError):
                        raise Refusal(f"{key}.spells[{j}].equipped_to: no monster at {t['equipped_to']!r}") from None
                    equipped = mon["uid"]
                    amount = _plain(c["statics"][0])["amount"]
                    mon.setdefault("equips", []).append({"uid": uid, "amount": amount})
                p["spells"][t["zone"] - 1] = {
                    "uid": uid, "card": c["name"], "owner": t.get("owner", side + 1) - 1, "face_up": bool(t.get("face_up")),
                    "set": bool(t.get("set_this_turn")), "bound": None, "active": bool(t.get("face_up")), "equipped_to": equipped,
                }  # fmt: skip
            if pd.get("field_spell") is not None:
                raise Refusal(f"{key}.field_spell: this engine plays no Field Spells")
            for pile in PILES:
                refs = []
                for j, entry in enumerate(pd.get(pile) or []):
                    name = entry if isinstance(entry, str) else entry.get("card")
                    c = self._card(name, f"{key}.{pile}[{j}]")
                    if not (_plays(c) or _trap_kind(c) or _hand_kind(c)):
                        raise Refusal(f"{key}.{pile}[{j}]: {name!r} has effects this engine does not play")
                    uid += 1
                    refs.append({"uid": uid, "card": name, "owner": side})
                p[pile] = sorted(refs, key=lambda r: (r["card"], r["uid"]))
            players.append(p)
        tp = board["turn_player"] - 1
        return {
            "turn": board["turn"], "tp": tp, "step": "main1", "over": False, "winner": None, "players": players,
            "priority": tp, "passes": 0, "attack": None, "window": False, "chain": [], "lingering": [], "next_uid": 1000,
        }  # fmt: skip

    def _card(self, name, where: str) -> dict:
        c = self.cards.get(name) if isinstance(name, str) else None
        if c is None:
            raise Refusal(f"{where}: card {name!r} is not among the cards sent")
        return c

    # -- queries ------------------------------------------------------------------------------

    @staticmethod
    def terminal(s: dict) -> bool:
        return s["over"] or s["step"] == "end_phase"

    @staticmethod
    def monsters(s: dict, side: int | None = None):
        for i, p in enumerate(s["players"]):
            if side is None or side == i:
                for z, m in enumerate(p["monsters"]):
                    if m is not None:
                        yield i, z, m

    def find(self, s: dict, uid: int):
        for side, z, m in self.monsters(s):
            if m["uid"] == uid:
                return side, z, m
        return None

    def find_trap(self, s: dict, uid: int):
        for side, p in enumerate(s["players"]):
            for z, t in enumerate(p["spells"]):
                if t is not None and t["uid"] == uid:
                    return side, z, t
        return None

    def stat(self, m: dict, key: str) -> int:
        own = self.stats.get(m["card"], {})
        base = own[key] if key in own else (self.cards[m["card"]].get(key) or 0)
        if m.get("mods") or m.get("equips"):  # lingering modifiers (stat_modified), an Equip Card's; never below 0
            base += sum(x["amount"] for x in m.get("mods") or [] if x["stat"] == key)
            base = max(0, base + (sum(x["amount"] for x in m.get("equips") or []) if key == "atk" else 0))
        return base

    def name(self, s: dict, uid: int) -> str:
        """A card as labels name it (docs/protocol.md, "Action labels and duplicate card names"): its
        name, with its place when another card anywhere in the duel (fields, hands, Graveyards,
        banished piles, Decks) shares the name: ``Battle Ox [P1 M1]``, ``Battle Ox [P2 graveyard]``;
        copies in one pile are numbered by uid from 1: ``Mokey Mokey [P2 graveyard #2]``."""
        nm = self._name_of(s, uid)
        count, where = 0, None
        for side, p in enumerate(s["players"]):
            for tag, zone in (("M", p["monsters"]), ("S", p["spells"])):
                for z, x in enumerate(zone):
                    if x is not None and x["card"] == nm:
                        count += 1
                        if x["uid"] == uid:
                            where = f"P{side + 1} {tag}{z + 1}"
            for pile in PILES:
                same = sorted((r for r in p[pile] if r["card"] == nm), key=lambda r: r["uid"])
                count += len(same)
                for k, r in enumerate(same):
                    if r["uid"] == uid:
                        where = f"P{side + 1} {pile}" + (f" #{k + 1}" if len(same) > 1 else "")
        return nm if count <= 1 or where is None else f"{nm} [{where}]"

    def _name_of(self, s: dict, uid: int) -> str:
        for p in s["players"]:
            for x in [*p["monsters"], *p["spells"], *(r for pile in PILES for r in p[pile])]:
                if x is not None and x["uid"] == uid:
                    return x["card"]
        return f"#{uid}"

    def attackable(self, s: dict, defender: int) -> list[int]:
        return [m["uid"] for _side, _z, m in self.monsters(s, defender) if not m["marked"]]

    def attached(self, s: dict, m: dict) -> bool:
        """A Fiendish Chain is attached to this monster (it cannot attack, its effects are negated)."""
        return any(t is not None and t.get("attached_to") == m["uid"] for p in s["players"] for t in p["spells"])

    def locked(self, s: dict, m: dict) -> bool:
        """A resolved, face-up "Level N or higher monsters cannot declare an attack" (Gravity Bind)
        applies to this monster, or a Fiendish Chain is attached to it (ATK-CANNOT)."""
        if self.attached(s, m):
            return True
        for p in s["players"]:
            for t in p["spells"]:
                if t is not None and t.get("active") and _trap_kind(self.cards[t["card"]]) == "attack-lock":
                    if (self.cards[m["card"]].get("level") or 0) >= _min_level(_plain(self.cards[t["card"]]["statics"][0])):
                        return True
        return False

    def may_attack(self, s: dict, m: dict, lp: int) -> bool:
        if self.locked(s, m):
            return False
        if self.bug == "summoned-cannot-attack" and m["summoned"]:
            return False
        if m["pos"] != "attack" and not (self.bug == "defense-position-attacks" and m["pos"] == "defense"):
            return False
        if m["attacks"] or m["stopped"]:
            return False
        # ATK-COST (docs/rules.md): a cost that cannot be paid forbids the declaration
        cost = _attack_cost(self.cards[m["card"]])
        return cost is None or lp >= cost

    def direct_allowed(self, s: dict, attacker_side: int, m: dict | None = None) -> bool:
        if m is not None and (self.has(s, m, "direct_attack") or m.get("equips")):  # ATK-DIRECT: "can attack your opponent directly"
            return True
        opp = [m for _side, _z, m in self.monsters(s, 1 - attacker_side) if not m["marked"]]
        if self.bug == "direct-past-face-down":
            opp = [m for m in opp if m["pos"] != "facedown"]
        return not opp

    def has(self, s: dict, m: dict, static: str) -> bool:
        """A continuous effect of `m` applies: it is face-up and not destroyed by battle (statics apply
        while the card is face-up, docs/cards.md; a monster marked destroyed by battle applies none,
        DS-DESTROYED-MARK), and no Fiendish Chain negates its effects."""
        return m["pos"] != "facedown" and not m["marked"] and static in (_statics(self.cards[m["card"]]) or {}) and not self.attached(s, m)

    def must_attack_pending(self, s: dict) -> bool:
        """ATK-MUST, BP-MUST-ENTER: a monster of the turn player that must attack has not declared an
        attack and could declare one now."""
        tp = s["tp"]
        lp = s["players"][tp]["lp"]
        return any(
            self.has(s, m, "must_attack") and self.may_attack(s, m, lp) and (self.attackable(s, 1 - tp) or self.direct_allowed(s, tp, m))
            for _side, _z, m in self.monsters(s, tp)
        )

    def _self_destroy(self, s: dict, events: list) -> None:
        """DS-SELF-DESTROY: a monster whose continuous effect destroys it in face-up Defense Position is
        destroyed by that rule after each chain, right after damage calculation and after a position
        change (docs/cards.md); the target flipped by an attack only after damage calculation (and not
        if it was destroyed by that battle)."""
        a = s["attack"]
        for _side, _z, m in list(self.monsters(s)):
            if m["pos"] != "defense" or not self.has(s, m, "destroy_if_face_up_defense"):
                continue
            if a is not None and not a["calculated"] and a["target"] == m["uid"] and a.get("flipped"):
                continue
            side, z, m = self.find(s, m["uid"])
            events.append(ev("destroyed", card=m["card"], card_uid=m["uid"], by="rule"))
            self._leave(s, events, side, z, m, "destroyed")
            self._bound_trap_goes(s, events, m["uid"])

    def in_force(self, s: dict, what: str, player: int) -> bool:
        return any(x["what"] == what and x["player"] == player for x in s["lingering"])

    # -- actions ------------------------------------------------------------------------------

    def legal_actions(self, s: dict) -> list[dict]:
        if self.terminal(s):
            return []
        tp = s["tp"]
        step = s["step"]
        if s.get("pending"):  # a mandatory Flip effect waits: its player activates it (no pass, no decline)
            trig = s["pending"][0]
            who = self.name(s, trig["uid"])
            # DS-NO-TARGET-DESTROYED: never a monster destroyed by battle, itself included
            return [
                {"kind": "trigger", "player": trig["player"], "label": f"activate {who} -> {self.name(s, m['uid'])}", "card_uid": trig["uid"], "effect": 0, "targets": [m["uid"]]}
                for _side, _z, m in self.monsters(s) if not m["marked"]
            ]  # fmt: skip
        if step in ("main1", "main2") and s["chain"]:  # a chain in a Main Phase: respond or pass
            p = s["priority"]
            return [{"kind": "pass", "player": p, "label": "pass"}] + self._activations(s, p)
        if step == "main1":
            out = [] if s["turn"] == 1 else [{"kind": "enter_bp", "player": tp, "label": "enter Battle Phase"}]
            if s["turn"] == 1 or not self.must_attack_pending(s):  # BP-MUST-ENTER (BP-FIRST-TURN wins on turn 1)
                out.append({"kind": "skip_bp", "player": tp, "label": "skip Battle Phase"})
            return out + self._activations(s, tp)
        if step == "main2":
            out = []
            for _side, _z, m in self.monsters(s, tp):
                if m["pos"] == "facedown" or m["summoned"] or m["set"] or m["changed"]:
                    continue
                if m["attacks"] and self.bug != "position-change-after-attack":
                    continue
                out.append({"kind": "change_position", "player": tp, "label": f"change position {self.name(s, m['uid'])}", "card_uid": m["uid"]})
            return out + [{"kind": "end_turn", "player": tp, "label": "end turn"}] + self._activations(s, tp)
        a = s["attack"]
        if a is not None and a["replay"]:
            return self._replay_actions(s)
        p = s["priority"]
        label = "end Battle Phase" if step == "battle_step" and p == tp and a is None and not s["chain"] else "pass"
        # ATK-MUST: the Battle Phase cannot be ended while a monster must attack and can
        out = [] if label == "end Battle Phase" and self.must_attack_pending(s) else [{"kind": "pass", "player": p, "label": label}]
        if p == tp and step == "battle_step" and a is None and not s["chain"]:
            for side, _z, m in self.monsters(s, tp):
                if not self.may_attack(s, m, s["players"][tp]["lp"]):
                    continue
                who = self.name(s, m["uid"])
                for t in self.attackable(s, 1 - tp):
                    out.append({"kind": "attack", "player": tp, "label": f"attack {who} -> {self.name(s, t)}", "card_uid": m["uid"], "target": t})
                if self.direct_allowed(s, side, m):
                    out.append({"kind": "attack", "player": tp, "label": f"attack {who} -> direct", "card_uid": m["uid"]})
        out += self._activations(s, p)
        return out

    def _replay_actions(self, s: dict) -> list[dict]:
        tp, a = s["tp"], s["attack"]
        out = []
        for t in self.attackable(s, 1 - tp):
            out.append({"kind": "replay", "player": tp, "label": f"replay: attack {self.name(s, t)}", "card_uid": a["attacker"], "target": t, "option": "target"})
        if self.direct_allowed(s, tp, self.find(s, a["attacker"])[2]):
            out.append({"kind": "replay", "player": tp, "label": "replay: attack direct", "card_uid": a["attacker"], "option": "direct"})
        if self.bug != "replay-without-call-off":
            out.append({"kind": "replay", "player": tp, "label": "replay: call off", "card_uid": a["attacker"], "option": "call_off"})
        return out

    def _activations(self, s: dict, p: int) -> list[dict]:
        step = s["step"]
        in_ds = step in DS
        if step == "end_phase":
            return []
        out = []
        top = s["chain"][-1] if s["chain"] else None
        for t in s["players"][p]["spells"]:
            if t is None or t["face_up"] or t["set"]:
                continue
            kind = _trap_kind(self.cards[t["card"]])
            # DS-LEGAL-STATS: a card that directly changes ATK, in sub-steps (1)-(3) of the Damage Step
            # only; DS-LEGAL-COUNTER: Counter Traps; DS-ILLEGAL-OTHER: no other of these cards
            if in_ds and not (kind == "boost" and step in DS[:3]) and kind != "jammer" and not (kind == "destroy-attacker" and self.bug == "declaration-traps-in-damage-step"):
                continue
            if top is not None and top["speed"] > _speed(self.cards[t["card"]]):  # CH-SPEED
                continue
            label = f"activate {self.name(s, t['uid'])}"
            base = {"kind": "activate", "player": p, "card_uid": t["uid"], "effect": 0}
            if kind in ("destroy-attacker", "cylinder"):
                a = s["attack"]
                window = s["window"] or (self.bug == "declaration-traps-in-damage-step" and a is not None)
                if a is None or not window or p == s["tp"]:
                    continue
                f = self.find(s, a["attacker"])
                if f is None or f[0] == p:
                    continue
                out.append({**base, "label": f"{label} -> {self.name(s, a['attacker'])}", "targets": [a["attacker"]]})
            elif kind == "revive-bound":
                if all(z is not None for z in s["players"][p]["monsters"]):
                    continue
                for r in s["players"][p]["graveyard"]:
                    if self.cards[r["card"]].get("kind") == "monster":
                        out.append({**base, "label": f"{label} -> {self.name(s, r['uid'])}", "targets": [r["uid"]]})
            elif kind == "protect":
                out.append({**base, "label": label, "targets": []})
            elif kind in ("boost", "ring", "moon"):  # one face-up monster on the field (never one destroyed by battle)
                for _side, _z, m in self.monsters(s):
                    if m["pos"] != "facedown" and not m["marked"] and not (kind == "moon" and m["token"]):
                        out.append({**base, "label": f"{label} -> {self.name(s, m['uid'])}", "targets": [m["uid"]]})
            elif kind == "tokens-to-opponent":
                if sum(z is None for z in s["players"][1 - p]["monsters"]) >= 3:
                    out.append({**base, "label": label, "targets": []})
            elif kind == "destroy-attack-position":
                a = s["attack"]
                if a is None or not s["window"] or p == s["tp"]:
                    continue
                f = self.find(s, a["attacker"])
                if f is not None and f[0] != p:
                    out.append({**base, "label": label, "targets": []})
            elif kind == "jammer":  # "When [your opponent] activates a Trap Card [during the Battle Phase]"
                conds = self.cards[t["card"]]["effects"][0].get("conditions") or []
                wanted = "trap" if self.cards[t["card"]]["effects"][0].get("when") == "trap_activated" else "spell"
                if top is None or not top.get("card_activation") or self.cards[top["card"]].get("kind") != wanted:
                    continue
                if ("responding_to_opponent" in conds and top["player"] == p) or ("battle_phase" in conds and s["step"] in ("main1", "main2")):
                    continue
                if s["players"][p]["lp"] < _lp_cost(self.cards[t["card"]]):
                    continue
                if _discards(self.cards[t["card"]]):  # one action per card it may discard: `activate X [cost card]`
                    for r in sorted(s["players"][p]["hand"], key=lambda r: r["uid"]):
                        out.append({**base, "label": f"{label} [{self.name(s, r['uid'])}]", "targets": [], "cost": [r["uid"]]})
                    continue
                out.append({**base, "label": label, "targets": []})
            elif kind == "destroy-spell-trap":
                side = _plain(self.cards[t["card"]]["effects"][0]["targets"][0])["side"]
                out += [{**base, "label": f"{label} -> {self.name(s, u)}", "targets": [u]} for u in self._spell_trap_uids(s, None if side == "any" else 1 - p) if u != t["uid"]]
            elif kind == "attack-lock":
                out.append({**base, "label": label, "targets": []})
            elif kind == "chain-monster":  # one face-up Effect Monster on the field
                for _side, _z, m in self.monsters(s):
                    if m["pos"] != "facedown" and not m["marked"] and self.cards[m["card"]].get("subtype") not in ("normal", "token"):
                        out.append({**base, "label": f"{label} -> {self.name(s, m['uid'])}", "targets": [m["uid"]]})
        return out + self._hand_activations(s, p, top)

    def _spell_trap_uids(self, s: dict, side: int | None = None) -> list[int]:
        return [t["uid"] for i, q in enumerate(s["players"]) if side in (None, i) for t in q["spells"] if t is not None]

    def _hand_activations(self, s: dict, p: int, top: dict | None) -> list[dict]:
        """Quick-Play Spells from the hand in their controller's own turn with a free Spell & Trap
        Zone (CH-QP-HAND), and Kuriboh; copies of a card in one hand offer one activation, named
        after the copy with the lowest uid (docs/protocol.md)."""
        step = s["step"]
        out, seen = [], set()
        me = s["players"][p]
        for r in sorted(me["hand"], key=lambda r: r["uid"]):
            if r["card"] in seen:
                continue
            seen.add(r["card"])
            c = self.cards[r["card"]]
            label = f"activate {self.name(s, r['uid'])}"
            base = {"kind": "activate", "player": p, "card_uid": r["uid"], "effect": 0}
            if top is not None and top["speed"] > (2 if c.get("kind") == "monster" else _speed(c)):
                continue
            if _hand_kind(c) == "no-damage-from-hand":
                a = s["attack"]
                if step != "damage_step_during_calculation" or a is None or s.get("chains", 0):  # DS-DURING-CALC-ONE-CHAIN
                    continue
                f = self.find(s, a["attacker"])
                if f is not None and f[0] != p:
                    out.append({**base, "label": label, "targets": []})
                continue
            if c.get("kind") != "spell" or p != s["tp"] or None not in me["spells"]:
                continue
            kind = _trap_kind(c)
            if step in DS and not (kind == "boost" and step in DS[:3]):
                continue
            if kind in ("boost", "moon"):
                for _side, _z, m in self.monsters(s):
                    if m["pos"] != "facedown" and not m["marked"] and not (kind == "moon" and m["token"]):
                        out.append({**base, "label": f"{label} -> {self.name(s, m['uid'])}", "targets": [m["uid"]]})
            elif kind == "destroy-spell-trap":
                out += [{**base, "label": f"{label} -> {self.name(s, u)}", "targets": [u]} for u in self._spell_trap_uids(s)]
        return out

    # -- apply --------------------------------------------------------------------------------

    def apply(self, s0: dict, label: str) -> tuple[dict, list[dict]]:
        action = next((x for x in self.legal_actions(s0) if x["label"] == label), None)
        if action is None:
            raise ValueError(f"{label!r} is not a legal action here")
        s = copy.deepcopy(s0)
        events: list[dict] = []
        kind = action["kind"]
        if kind == "enter_bp":
            self._step_to(s, events, "battle_start_step")
        elif kind == "skip_bp":
            self._step_to(s, events, "end_phase")
        elif kind == "end_turn":
            self._step_to(s, events, "end_phase")
        elif kind == "change_position":
            _side, _z, m = self.find(s, action["card_uid"])
            new = "defense" if m["pos"] == "attack" else "attack"
            events.append(ev("position_changed", card=m["card"], card_uid=m["uid"], **{"from": m["pos"], "to": new}, by="manual"))
            m["pos"], m["changed"] = new, True
            self._self_destroy(s, events)
        elif kind == "attack":
            self._declare(s, events, action)
        elif kind == "replay":
            self._replay_choice(s, events, action)
        elif kind in ("activate", "trigger"):
            self._activate(s, events, action)
        elif kind == "pass":
            self._pass(s, events, action["player"])
        return s, events

    def _open(self, s: dict) -> None:
        """An open game state: the turn player first (PRI-TP-FIRST)."""
        s["priority"], s["passes"] = s["tp"], 0

    def _step_to(self, s: dict, events: list, to: str) -> None:
        events.append(ev("phase_changed", **{"from": s["step"], "to": to}))
        s["step"] = to
        s["chains"] = 0
        self._open(s)

    def _declare(self, s: dict, events: list, action: dict) -> None:
        side, _z, m = self.find(s, action["card_uid"])
        t = action.get("target")
        events.append(ev("attack_declared", attacker=m["card"], attacker_uid=m["uid"], target=None if t is None else self._name_of(s, t), target_uid=t, player=side))
        if self.bug != "count-at-damage-calculation":
            m["attacks"] += 1
        if t is None:
            m["direct"] = True
        else:
            m["declared_at"].append(t)
        s["attack"] = {"attacker": m["uid"], "target": t, "targets": sorted(self.attackable(s, 1 - side)), "replay": False, "calculated": False}
        s["window"] = True
        self._open(s)
        cost = _attack_cost(self.cards[m["card"]])
        if cost is not None:  # ATK-COST: paid once, at the declaration (a replay does not pay again)
            p = s["players"][side]
            p["lp"] = max(0, p["lp"] - cost)
            events.append(ev("lp_paid", player=side, amount=cost))
            events.append(ev("attack_cost_paid", attacker_uid=m["uid"], player=side, amount=cost))
            self._lp_check(s, events)  # LP-ZERO: a cost that takes the LP to 0 ends the duel too

    def _replay_choice(self, s: dict, events: list, action: dict) -> None:
        a = s["attack"]
        option = action["option"]
        t = action.get("target")
        named = {} if option == "call_off" else {"target": None if t is None else self._name_of(s, t)}
        events.append(ev("replay_choice", attacker_uid=a["attacker"], choice=option, **named, target_uid=t))
        if option == "call_off":
            events.append(ev("attack_ended", attacker_uid=a["attacker"], reason="called_off"))
            s["attack"] = None
        else:
            a["target"] = action.get("target")
            a["replay"] = False
            a["targets"] = sorted(self.attackable(s, 1 - s["tp"]))
            _side, _z, m = self.find(s, a["attacker"])
            if a["target"] is None:
                m["direct"] = True
            elif a["target"] not in m["declared_at"]:
                m["declared_at"].append(a["target"])
        self._open(s)

    def _activate(self, s: dict, events: list, action: dict) -> None:
        p = action["player"]
        me = s["players"][p]
        if s.get("pending"):  # the Flip effect starts a chain (Spell Speed 1)
            trig = s["pending"].pop(0)
            s["chain"].append({"uid": trig["uid"], "card": trig["card"], "player": p, "targets": list(action["targets"]), "speed": 1, "negated": False})
            events.append(ev(
                "chain_link_added", link=len(s["chain"]), card=trig["card"], card_uid=trig["uid"], effect=0, player=p, speed=1,
                targets=list(action["targets"]), damage_step=s["step"] in DS, step=s["step"],
            ))  # fmt: skip
            s["priority"], s["passes"] = 1 - p, 0
            return
        ref = next((r for r in me["hand"] if r["uid"] == action["card_uid"]), None)
        if ref is not None:
            me["hand"].remove(ref)
            if _hand_kind(self.cards[ref["card"]]):  # its cost: discard this card
                self._to_pile(s, ref, "graveyard")
                events.append(ev("card_moved", card=ref["card"], card_uid=ref["uid"], owner=ref["owner"], **{"from": "hand", "to": "graveyard"}, reason="cost"))
                s["chain"].append({"uid": ref["uid"], "card": ref["card"], "player": p, "targets": [], "speed": 2, "negated": False})
                events.append(ev(
                    "chain_link_added", link=len(s["chain"]), card=ref["card"], card_uid=ref["uid"], effect=0, player=p, speed=2,
                    targets=[], damage_step=s["step"] in DS, step=s["step"],
                ))  # fmt: skip
                s["priority"], s["passes"] = 1 - p, 0
                return
            z = me["spells"].index(None)  # a Spell activated from the hand: the leftmost free zone
            me["spells"][z] = {"uid": ref["uid"], "card": ref["card"], "owner": ref["owner"], "face_up": True, "set": False, "bound": None}
            events.append(ev("card_moved", card=ref["card"], card_uid=ref["uid"], owner=ref["owner"], **{"from": "hand", "to": "spell_trap_zone"}, reason="activated"))
        _side, _z, t = self.find_trap(s, action["card_uid"])
        t["face_up"] = True
        for u in action.get("cost") or []:  # a discard cost: the chosen card goes from the hand
            ref = next(r for r in me["hand"] if r["uid"] == u)
            me["hand"].remove(ref)
            self._to_pile(s, ref, "graveyard")
            events.append(ev("card_moved", card=ref["card"], card_uid=ref["uid"], owner=ref["owner"], **{"from": "hand", "to": "graveyard"}, reason="discard"))
        cost = _lp_cost(self.cards[t["card"]])
        if cost:  # pay_lp: paid at activation, before the link is added
            me["lp"] = max(0, me["lp"] - cost)
            events.append(ev("lp_paid", player=p, amount=cost))
        speed = _speed(self.cards[t["card"]])
        s["chain"].append({"uid": t["uid"], "card": t["card"], "player": p, "targets": list(action["targets"]), "speed": speed, "negated": False, "card_activation": True})
        events.append(ev(
            "chain_link_added", link=len(s["chain"]), card=t["card"], card_uid=t["uid"], effect=0, player=p, speed=speed,
            targets=list(action["targets"]), damage_step=s["step"] in DS, step=s["step"],
        ))  # fmt: skip
        s["priority"], s["passes"] = 1 - p, 0  # the other player may respond (PRI-PASS-PASS)

    def _pass(self, s: dict, events: list, player: int) -> None:
        events.append(ev("passed", player=player))
        s["passes"] += 1
        if self.bug == "no-response-to-declaration" and s["window"] and not s["chain"] and player == s["tp"]:
            s["passes"] = 2  # (the window closes on the turn player's pass alone)
        if s["passes"] < 2:
            s["priority"] = 1 - player
            return
        if s["chain"]:
            self._resolve(s, events)
            if not s["over"]:
                self._after_chain(s, events)
                self._open(s)
            return
        if s["window"]:
            s["window"] = False  # the attack-declaration window closes; the Battle Step goes on
            self._open(s)
            return
        self._advance(s, events)

    # -- chains -------------------------------------------------------------------------------

    def _resolve(self, s: dict, events: list) -> None:
        order = list(s["chain"]) if self.bug == "chain-first-in-first-out" else list(reversed(s["chain"]))
        for k, link in (list(enumerate(order)) if self.bug == "chain-first-in-first-out" else [(len(order) - 1 - i, x) for i, x in enumerate(order)]):
            f = self.find_trap(s, link["uid"])
            if link["negated"]:
                events.append(ev("chain_link_resolved", card=link["card"], card_uid=link["uid"], negated=True))
                continue
            if _hand_kind(self.cards[link["card"]]) == "no-damage-from-hand":
                s["lingering"].append({"what": "no_battle_damage", "player": link["player"], "source": link["card"], "until": "end_of_damage_step"})
                events.append(ev("lingering_effect", what="no_battle_damage", player=link["player"], source=link["card"], until="end_of_damage_step"))
                events.append(ev("chain_link_resolved", card=link["card"], card_uid=link["uid"], negated=False))
                continue
            name = link["card"]
            flip = _flip_kind(self.cards[name])
            if flip is not None:
                m = self.find(s, link["targets"][0])
                if m is not None and not m[2]["marked"]:
                    if flip == "flip-destroy":
                        self._destroy(s, events, m[2]["uid"])
                    else:
                        self._leave(s, events, m[0], m[1], m[2], "returned")
                        self._bound_trap_goes(s, events, m[2]["uid"])
                events.append(ev("chain_link_resolved", card=name, card_uid=link["uid"], negated=False))
                continue
            if f is None and self.cards[name].get("subtype") == "continuous":
                # a Continuous card that left the field before it resolved does nothing (docs/protocol.md)
                events.append(ev("chain_link_resolved", card=name, card_uid=link["uid"], negated=False))
                continue
            # (a Normal or Quick-Play Spell, a Normal or Counter Trap resolves even if its card is gone)
            t = None if f is None else f[2]
            kind = _trap_kind(self.cards[name])
            if kind == "destroy-spell-trap":
                g = self.find_trap(s, link["targets"][0])
                if g is not None:
                    events.append(ev("destroyed", card=g[2]["card"], card_uid=g[2]["uid"], by="effect"))
                    self._trap_to_graveyard(s, events, g[2]["uid"], "destroyed")
                    if g[2]["bound"] is not None and self.find(s, g[2]["bound"]) is not None:  # "When this card leaves the field, destroy that target"
                        self._destroy(s, events, g[2]["bound"])
            if kind == "jammer" and k > 0:
                below = s["chain"][k - 1]
                below["negated"] = True
                events.append(ev("activation_negated", link=k, card=below["card"], card_uid=below["uid"], by=name))
                if self.find_trap(s, below["uid"]) is not None:
                    events.append(ev("destroyed", card=below["card"], card_uid=below["uid"], by="effect"))
                    self._trap_to_graveyard(s, events, below["uid"], "destroyed")
            elif kind == "attack-lock" and t is not None:
                t["active"] = True
            elif kind == "chain-monster" and t is not None:
                m = self.find(s, link["targets"][0])
                if m is not None and not m[2]["marked"]:
                    t["attached_to"] = m[2]["uid"]
                else:  # docs/cards.md, attach: its target gone, it goes as it resolves
                    self._trap_to_graveyard(s, events, t["uid"], "resolved")
            elif kind == "moon":
                m = self.find(s, link["targets"][0])
                if m is not None and m[2]["pos"] != "facedown":
                    events.append(ev("position_changed", card=m[2]["card"], card_uid=m[2]["uid"], **{"from": m[2]["pos"], "to": "facedown"}, by="effect"))
                    m[2]["pos"] = "facedown"
            elif kind == "destroy-attack-position":
                for uid in [m["uid"] for _s, _z, m in self.monsters(s, 1 - link["player"]) if m["pos"] == "attack"]:
                    self._destroy(s, events, uid)
            elif kind == "tokens-to-opponent":
                self._tokens(s, events, link, name)
            elif kind == "destroy-attacker":
                target = link["targets"][0]
                m = self.find(s, target)
                if m is not None and not m[2]["marked"]:
                    self._destroy(s, events, target)
            elif kind == "revive-bound":
                self._revive(s, events, link, t)
                if t["bound"] is None:  # docs/cards.md, special_summon: its target gone, it goes as it resolves
                    self._trap_to_graveyard(s, events, t["uid"], "resolved")
            elif kind == "boost":
                m = self.find(s, link["targets"][0])
                if m is not None and not m[2]["marked"]:  # a target still on the field (face-down too)
                    stat, amount = _boost(self.cards[name])
                    m[2]["mods"].append({"stat": stat, "amount": amount, "source": name, "until": "end_of_turn"})
                    events.append(ev("stat_modified", card=m[2]["card"], card_uid=m[2]["uid"], stat=stat, modifier="add", amount=amount, source=name, until="end_of_turn"))
            elif kind == "ring":
                m = self.find(s, link["targets"][0])
                if m is not None and not m[2]["marked"]:
                    amount = self.stat(m[2], "atk")
                    self._destroy(s, events, m[2]["uid"])
                    for p in (link["player"], 1 - link["player"]):  # docs/cards.md: its controller first
                        self._effect_damage(s, events, p, amount, name)
                    self._lp_check(s, events)
            elif kind == "cylinder":
                a = s["attack"]
                m = self.find(s, link["targets"][0])
                if a is not None and m is not None and a["attacker"] == m[2]["uid"]:
                    a["negated"] = True
                    self._effect_damage(s, events, 1 - link["player"], self.stat(m[2], "atk"), name)
                    self._lp_check(s, events)
            elif kind == "protect":
                for what in ("no_battle_damage", "battle_indestructible"):
                    s["lingering"].append({"what": what, "player": link["player"], "source": name, "until": "end_of_turn"})
                    events.append(ev("lingering_effect", what=what, player=link["player"], source=name, until="end_of_turn"))
            if self.cards[name].get("subtype") != "continuous" and self.find_trap(s, link["uid"]) is not None:
                self._trap_to_graveyard(s, events, link["uid"], "resolved")
            events.append(ev("chain_link_resolved", card=link["card"], card_uid=link["uid"], negated=False))
            if s["over"]:  # LP-ZERO mid-chain: the links below never resolve, no chain_resolved
                s["chain"] = []
                return
        s["chain"] = []
        s["window"] = False
        s["chains"] = s.get("chains", 0) + 1
        events.append(ev("chain_resolved"))
        self._self_destroy(s, events)  # docs/cards.md, destroy_if_face_up_defense: after each chain

    def _tokens(self, s: dict, events: list, link: dict, name: str) -> None:
        op = _plain(self.cards[name]["effects"][0]["ops"][0])
        side = 1 - link["player"]
        zones = s["players"][side]["monsters"]
        if sum(z is None for z in zones) < op["count"]:
            return
        for _ in range(op["count"]):
            z = zones.index(None)
            uid = s["next_uid"]
            s["next_uid"] += 1
            zones[z] = {
                "uid": uid, "card": op["token"], "owner": side, "pos": op["position"], "token": True, "summoned": True,
                "set": False, "attacks": 0, "declared_at": [], "direct": False, "stopped": False, "changed": False, "marked": False,
                "mods": [],
            }  # fmt: skip
            events.append(ev("summoned", card=op["token"], card_uid=uid, player=side, position=op["position"], how="token", **{"from": "token"}))

    def _effect_damage(self, s: dict, events: list, player: int, amount: int, card: str) -> None:
        if amount <= 0:
            return
        lp = s["players"][player]
        lp["lp"] = max(0, lp["lp"] - amount)
        events.append(ev("effect_damage", player=player, amount=amount, card=card))

    def _revive(self, s: dict, events: list, link: dict, trap: dict) -> None:
        p = link["player"]
        me = s["players"][p]
        ref = next((r for r in me["graveyard"] if r["uid"] == link["targets"][0]), None)
        free = [z for z in range(5) if me["monsters"][z] is None]
        if ref is None or not free:
            return
        me["graveyard"].remove(ref)
        me["monsters"][free[0]] = {
            "uid": ref["uid"], "card": ref["card"], "owner": ref["owner"], "pos": "attack", "token": False, "summoned": True,
            "set": False, "attacks": 0, "declared_at": [], "direct": False, "stopped": False, "changed": False, "marked": False,
            "mods": [],
        }  # fmt: skip
        events.append(ev("summoned", card=ref["card"], card_uid=ref["uid"], player=p, position="attack", how="special", **{"from": "graveyard"}))
        trap["bound"] = ref["uid"]

    def _after_chain(self, s: dict, events: list) -> None:
        """A stop or a replay after the whole chain resolved, in the Battle Step (STOP-ATTACK,
        RPL-TRIGGER, RPL-AFTER-CHAIN)."""
        a = s["attack"]
        if a is None or s["step"] != "battle_step":
            return
        tp = s["tp"]
        f = self.find(s, a["attacker"])
        if f is None or f[0] != tp or f[2]["pos"] != "attack" or a.get("negated") or self.locked(s, f[2]):
            if self.bug == "attack-goes-on-without-attacker" and f is None:
                return
            if f is not None:
                f[2]["stopped"] = True
            events.append(ev("attack_stopped", attacker_uid=a["attacker"], reason="attacker_left_field" if f is None or f[0] != tp else "cannot_attack"))
            s["attack"] = None
            return
        now = sorted(self.attackable(s, 1 - tp))
        changed = now != a["targets"]
        illegal = (a["target"] is None and not self.direct_allowed(s, tp, f[2])) or (a["target"] is not None and a["target"] not in now)
        if self.bug == "no-replay-on-summon":
            changed = changed and not set(a["targets"]) < set(now)  # (only disappearing targets count)
            illegal = a["target"] is not None and a["target"] not in now
        if changed or illegal:
            events.append(ev("replay", attacker_uid=a["attacker"], reason="targets_changed" if changed else "attack_illegal"))
            a["replay"] = True

    # -- steps and the Damage Step --------------------------------------------------------------

    def _advance(self, s: dict, events: list) -> None:
        step = s["step"]
        a = s["attack"]
        if step == "battle_start_step":
            self._step_to(s, events, "battle_step")
        elif step == "battle_step":
            if a is not None:
                self._step_to(s, events, "damage_step_start")
            elif self.bug == "battle-phase-without-end-step":
                self._step_to(s, events, "main2")
            else:
                self._step_to(s, events, "battle_end_step")
        elif step == "damage_step_start":
            t = self.find(s, a["target"]) if a["target"] is not None else None
            if t is not None and t[2]["pos"] == "facedown":
                self._step_to(s, events, "damage_step_flip")
                t[2]["pos"] = "defense"
                a["flipped"] = True
                events.append(ev("flipped", card=t[2]["card"], card_uid=t[2]["uid"], by="battle", face_up=True))
            elif self.bug == "no-before-damage-calculation":
                self._step_to(s, events, "damage_step_during_calculation")
            else:
                self._step_to(s, events, "damage_step_before_calculation")
        elif step == "damage_step_flip":
            self._step_to(s, events, "damage_step_before_calculation")
        elif step == "damage_step_before_calculation":
            self._step_to(s, events, "damage_step_during_calculation")
        elif step == "damage_step_during_calculation":
            self._calculate(s, events)
            if not s["over"]:
                self._step_to(s, events, "damage_step_after_calculation_1")
        elif step == "damage_step_after_calculation_1":
            self._step_to(s, events, "damage_step_after_calculation_2")
            # DS-FLIP-EFFECT-TIMING: the Flip effect of the target flipped by this attack triggers
            # now, even if it was destroyed by battle (it is still on the field)
            t = self.find(s, a["target"]) if a["target"] is not None and a.get("flipped") else None
            if t is not None and _flip_kind(self.cards[t[2]["card"]]):
                s["pending"] = [{"uid": t[2]["uid"], "card": t[2]["card"], "player": t[0]}]
        elif step == "damage_step_after_calculation_2":
            self._step_to(s, events, "damage_step_end")
            self._send_destroyed(s, events)
        elif step == "damage_step_end":
            if self.bug == "protection-ends-with-the-damage-step" and s["lingering"]:
                s["lingering"] = []
                events.append(ev("effect_expired", what="lingering", until="end_of_damage_step"))
            elif any(x["until"] == "end_of_damage_step" for x in s["lingering"]):  # DS-LINGERING-END
                s["lingering"] = [x for x in s["lingering"] if x["until"] != "end_of_damage_step"]
                events.append(ev("effect_expired", what="lingering", until="end_of_damage_step"))
            events.append(ev("attack_ended", attacker_uid=a["attacker"], reason="damage_step_over"))
            s["attack"] = None
            self._step_to(s, events, "battle_step")
        elif step == "battle_end_step":
            self._step_to(s, events, "end_phase" if self.bug == "no-main-phase-2" else "main2")

    def _calculate(self, s: dict, events: list) -> None:
        """Damage calculation (DS-CALC-*), performed when damage calculation is left."""
        a = s["attack"]
        tp = s["tp"]
        fa = self.find(s, a["attacker"])
        ft = self.find(s, a["target"]) if a["target"] is not None else None
        if fa is None or (a["target"] is not None and ft is None):
            return  # (a battler left: no damage calculation; this engine's cards never do that)
        am = fa[2]
        if self.bug == "count-at-damage-calculation":
            am["attacks"] += 1
        atk = self.stat(am, "atk")
        damage = {0: 0, 1: 0}
        destroyed = []
        if ft is None:
            events.append(ev("damage_calculation", attacker_uid=am["uid"], target_uid=None, attacker_atk=atk, target_value=None, target_position=None))
            damage[1 - tp] = atk
        else:
            tm = ft[2]
            if tm["pos"] == "attack":
                val = self.stat(tm, "atk")
                events.append(ev("damage_calculation", attacker_uid=am["uid"], target_uid=tm["uid"], attacker_atk=atk, target_value=val, target_position="attack"))
                if atk > val:
                    destroyed, damage[1 - tp] = [tm], atk - val
                elif atk < val:
                    destroyed, damage[tp] = [am], val - atk
                elif atk > 0 and self.bug != "equal-atk-both-survive":
                    destroyed = [am, tm]
            else:
                val = self.stat(tm, "def")
                events.append(ev("damage_calculation", attacker_uid=am["uid"], target_uid=tm["uid"], attacker_atk=atk, target_value=val, target_position="defense"))
                if atk > val:
                    destroyed = [tm]
                    if self.bug == "piercing-for-everyone":
                        damage[1 - tp] = atk - val
                elif atk < val:
                    damage[tp] = val - atk
        for p in (0, 1):
            if damage[p] and not self.in_force(s, "no_battle_damage", p):
                s["players"][p]["lp"] = max(0, s["players"][p]["lp"] - damage[p])
                events.append(ev("battle_damage", player=p, amount=damage[p], attacker_uid=am["uid"], target_uid=a["target"]))
        for m in destroyed:
            side = self.find(s, m["uid"])[0]
            if self.in_force(s, "battle_indestructible", side):
                continue
            m["marked"] = True
            events.append(ev("destroyed_by_battle", card=m["card"], card_uid=m["uid"], controller=side))
        a["calculated"] = True
        if self.bug == "sent-at-damage-calculation":
            self._send_destroyed(s, events)
        self._self_destroy(s, events)  # DS-SELF-DESTROY: right after damage calculation
        self._lp_check(s, events)

    def _lp_check(self, s: dict, events: list) -> None:
        lps = [p["lp"] for p in s["players"]]
        zero = [i for i, lp in enumerate(lps) if (lp < 0 if self.bug == "exact-zero-lp-goes-on" else lp <= 0)]
        if not zero:
            return
        s["over"] = True
        s["winner"] = None if len(zero) == 2 else 1 - zero[0]
        events.append(ev("duel_over", winner=s["winner"], reason="lp_zero"))

    def _send_destroyed(self, s: dict, events: list) -> None:
        """Monsters destroyed by battle leave the field together, to their owner's Graveyard
        (Tokens: nowhere), and a Trap bound to one of them is destroyed (DS-SEND-OWNER-GY,
        CARD-CONT-TARGET)."""
        gone = [(side, z, m) for side, z, m in self.monsters(s) if m["marked"]]
        for side, z, m in gone:
            self._leave(s, events, side, z, m, "battle")
        for _side, z, m in gone:
            self._bound_trap_goes(s, events, m["uid"])

    def _leave(self, s: dict, events: list, side: int, z: int, m: dict, reason: str) -> None:
        s["players"][side]["monsters"][z] = None
        if m["token"]:
            to = "nowhere"
        else:
            to = "hand" if reason == "returned" else "banished" if self.banish_instead(s) else "graveyard"
            pile_owner = side if (self.bug == "controllers-graveyard" and reason == "battle") else m["owner"]
            g = s["players"][pile_owner][to]
            g.append({"uid": m["uid"], "card": m["card"], "owner": m["owner"]})
            g.sort(key=lambda r: (r["card"], r["uid"]))
        events.append(ev("card_moved", card=m["card"], card_uid=m["uid"], owner=m["owner"], **{"from": "monster_zone", "to": to}, reason=reason))

    def _destroy(self, s: dict, events: list, uid: int) -> None:
        side, z, m = self.find(s, uid)
        events.append(ev("destroyed", card=m["card"], card_uid=uid, by="effect"))
        self._leave(s, events, side, z, m, "destroyed")
        self._bound_trap_goes(s, events, uid)

    def _bound_trap_goes(self, s: dict, events: list, monster_uid: int) -> None:
        for p in s["players"]:  # CARD-CONT-TARGET: an Equip Card whose monster left is destroyed
            for t in p["spells"]:
                if t is not None and (t.get("equipped_to") == monster_uid or t.get("attached_to") == monster_uid):
                    events.append(ev("destroyed", card=t["card"], card_uid=t["uid"], by="rule"))
                    self._trap_to_graveyard(s, events, t["uid"], "destroyed")
        if self.bug == "bound-trap-stays":
            return
        for p in s["players"]:
            for t in p["spells"]:
                if t is not None and t["bound"] == monster_uid:
                    # (by the rule the card states: "When that target is destroyed, destroy this card")
                    events.append(ev("destroyed", card=t["card"], card_uid=t["uid"], by="rule"))
                    self._trap_to_graveyard(s, events, t["uid"], "destroyed")

    def _trap_to_graveyard(self, s: dict, events: list, uid: int, reason: str) -> None:
        side, z, t = self.find_trap(s, uid)
        s["players"][side]["spells"][z] = None
        if t.get("equipped_to") is not None:  # its monster loses what it gave
            m = self.find(s, t["equipped_to"])
            if m is not None:
                m[2]["equips"] = [x for x in m[2].get("equips") or [] if x["uid"] != uid]
        to = "banished" if self.banish_instead(s) else "graveyard"
        g = s["players"][t["owner"]][to]
        g.append({"uid": t["uid"], "card": t["card"], "owner": t["owner"]})
        g.sort(key=lambda r: (r["card"], r["uid"]))
        events.append(ev("card_moved", card=t["card"], card_uid=t["uid"], owner=t["owner"], **{"from": "spell_trap_zone", "to": to}, reason=reason))

    def _to_pile(self, s: dict, ref: dict, pile: str) -> None:
        g = s["players"][ref["owner"]][pile]
        g.append({"uid": ref["uid"], "card": ref["card"], "owner": ref["owner"]})
        g.sort(key=lambda r: (r["card"], r["uid"]))

    def banish_instead(self, s: dict) -> bool:
        """A face-up "any card sent to the GY is banished instead" (Macro Cosmos) is on the field."""
        return any(
            t is not None and t["face_up"] and _trap_kind(self.cards[t["card"]]) == "banish-instead" for p in s["players"] for t in p["spells"]
        )

    # -- the observation ------------------------------------------------------------------------

    def observe(self, s: dict) -> dict:
        """The snapshot of docs/observation.md without the fields this engine withholds."""
        players = []
        for side, p in enumerate(s["players"]):
            mons = []
            for m in p["monsters"]:
                if m is None:
                    mons.append(None)
                    continue
                c = self.cards[m["card"]]
                mons.append({
                    "uid": m["uid"], "card": m["card"], "owner": m["owner"], "controller": side, "token": m["token"],
                    "level": c.get("level"), "attribute": c.get("attribute"), "race": c.get("race"), "position": m["pos"],
                    "atk": self.stat(m, "atk"), "def": self.stat(m, "def"), "base_atk": c.get("atk"), "base_def": c.get("def"),
                })  # fmt: skip
            spells = []
            for t in p["spells"]:
                if t is None:
                    spells.append(None)
                    continue
                c = self.cards[t["card"]]
                spells.append({
                    "uid": t["uid"], "card": t["card"], "owner": t["owner"], "controller": side, "kind": c["kind"],
                    "subtype": c["subtype"], "face_up": t["face_up"], "equipped_to": t.get("equipped_to"), "attached_to": t.get("attached_to"),
                })  # fmt: skip
            players.append({"lp": p["lp"], "monsters": mons, "spells": spells, "field_zone": None, **{k: [dict(r) for r in p[k]] for k in PILES}})
        a = s["attack"]
        step = s["step"]
        phase = "battle" if step.startswith(("battle", "damage_step")) else {"end_phase": "end"}.get(step, step)
        main = step in ("main1", "main2") and not s["chain"]
        to_act = None if self.terminal(s) else (s["tp"] if main or (a is not None and a["replay"]) else s["priority"])
        if s.get("pending") and not self.terminal(s):
            to_act = s["pending"][0]["player"]
        return {
            "schema": 1, "turn": s["turn"], "turn_player": s["tp"], "phase": phase, "step": step, "over": s["over"],
            "winner": s["winner"], "to_act": to_act, "players": players,
            "attack": None if a is None else {"attacker": a["attacker"], "target": a["target"]},
            "chain": [{"card": l["card"], "card_uid": l["uid"], "controller": l["player"], "targets": list(l["targets"])} for l in s["chain"]],
            "hidden": self.key(s),
        }  # fmt: skip

    @staticmethod
    def key(s: dict) -> str:
        """A key of the whole state (what the observation leaves out included)."""
        return hashlib.sha256(json.dumps(s, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]
