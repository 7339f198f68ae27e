"""The effect vocabulary: every operation a card's data may name, in one place.

Each operation is a function ``run(rules, w, link, op, chosen) -> Choice | None`` registered
with the parameters it accepts. Adding an operation means adding one function here (and a line
in docs/cards.md); cards then use it by name. An operation that needs a player's decision while
it resolves returns a :class:`~bpcheck.model.state.Choice`; resolution resumes with ``chosen``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from bpcheck.model import arith
from bpcheck.model.state import CardRef, ChainLink, Choice, Lingering, Mod, Pos
from bpcheck.model.state import replace as _replace

if TYPE_CHECKING:  # pragma: no cover
    from bpcheck.model.cards import Op
    from bpcheck.model.engine import _W, Rules


@dataclass(frozen=True)
class OpSpec:
    params: frozenset[str]
    run: Callable | None  # None: a cost, paid by the engine at activation


OPERATIONS: dict[str, OpSpec] = {}


def operation(name: str, *params: str, cost: bool = False):
    def deco(fn):
        OPERATIONS[name] = OpSpec(frozenset(params), None if cost else fn)
        return fn

    return deco


# Costs (paid at activation by the engine; rule: CH-COST). Registered for validation only.
for _name, _params in (
    ("pay_lp", ("amount",)),
    ("tribute", ("side", "archetype", "face", "except_self")),
    ("discard", ("count",)),
    ("discard_self", ()),
    ("send_self_to_gy", ()),
):
    OPERATIONS[_name] = OpSpec(frozenset(_params), None)


def run_op(rules: "Rules", w: "_W", link: ChainLink, op: "Op", op_index: int, chosen) -> Choice | None:
    spec = OPERATIONS[op.op]
    if spec.run is None:
        raise AssertionError(f"{op.op} is a cost, not a resolution operation")
    ch = spec.run(rules, w, link, op, chosen)
    if ch is not None:
        return Choice(ch.player, ch.kind, ch.options, link, op_index)
    return None


# ---------------------------------------------------------------------------------------------
# Selecting what an operation applies to


def _affected(rules: "Rules", w: "_W", link: ChainLink, uid: int) -> bool:
    """A Spell's effect does not apply to a monster unaffected by Spells (The Legendary
    Fisherman with Umi); nothing applies to a monster destroyed by battle (DS-NO-TARGET-DESTROYED)."""
    f = w.s.find_monster(uid)
    if f is None:
        return True
    if f[2].destroyed_by_battle:
        return False
    if rules.card(link.card).kind == "spell" and rules.has_static(w.s, uid, "unaffected_by_spells"):
        return False
    return True


def select(rules: "Rules", w: "_W", link: ChainLink, what: str) -> list[int]:
    s = w.s
    p = link.controller
    if what == "target":
        # Targets that are still where they were chosen (rule: CH-COST).
        out = []
        for t in link.targets:
            if s.find_monster(t) is not None or s.find_spell(t) is not None:
                out.append(t)
            elif any(g.uid == t for pl in s.players for g in pl.graveyard):
                out.append(t)
        return [u for u in out if _affected(rules, w, link, u)]
    if what == "self":
        # A monster already destroyed by battle is not affected, even by its own effect
        # (rule: DS-NO-TARGET-DESTROYED; e.g. Reflect Bounder's "destroy this card").
        return [u for u in (link.card_uid,) if _affected(rules, w, link, u)]
    if what == "attacker":
        return [s.attack.attacker] if s.attack is not None and s.find_monster(s.attack.attacker) else []
    if what == "opponent_attacker":  # the attacking monster, if it is the link controller's opponent's
        if s.attack is None or s.turn_player == p or not s.find_monster(s.attack.attacker):
            return []
        return [s.attack.attacker] if _affected(rules, w, link, s.attack.attacker) else []
    if what == "own_battling_monster":
        if s.attack is None:
            return []
        mine = s.attack.attacker if p == s.turn_player else s.attack.target
        return [mine] if mine is not None and s.find_monster(mine) is not None else []
    if what == "opponent_attack_position_monsters":
        return [m.uid for m in s.players[1 - p].monsters if m is not None and m.pos is Pos.ATK and _affected(rules, w, link, m.uid)]
    if what == "all_monsters":
        return [m.uid for _side, _i, m in s.monsters() if _affected(rules, w, link, m.uid)]
    if what == "attack_target":  # "that monster": the monster the attack is aimed at, still on the field
        if s.attack is None or s.attack.target is None or s.find_monster(s.attack.target) is None:
            return []
        return [s.attack.target] if _affected(rules, w, link, s.attack.target) else []
    if what == "opponent_face_up_monsters":  # "all monsters they currently control" (face-up: they have an ATK to halve)
        return [m.uid for m in s.players[1 - p].monsters if m is not None and m.pos.face_up and _affected(rules, w, link, m.uid)]
    if what == "face_up_effect_monsters":  # "all Effect Monsters on the field" ("Curse of Anubis")
        return [m.uid for _side, _i, m in s.monsters() if m.pos.face_up and rules.card(m.card).is_effect_monster and _affected(rules, w, link, m.uid)]
    if what == "summoned_opponent_monsters_atk_1500":
        return [u for u in rules._bottomless_targets(s, p)]
    if what == "destroyer":  # "the monster that destroyed it": the other monster of the battle, still on the field
        a = s.attack
        if a is None or a.target is None or link.card_uid not in (a.attacker, a.target):
            return []
        other = a.target if link.card_uid == a.attacker else a.attacker
        return [other] if s.find_monster(other) is not None and _affected(rules, w, link, other) else []
    if what == "summoned_opponent_monsters":  # "the Special Summoned monster" ("Naturia Horneedle")
        return [u for u in rules._summoned_by_opponent(s, p) if _affected(rules, w, link, u)]
    raise AssertionError(f"unknown selector {what!r}")


def _amount(rules: "Rules", w: "_W", link: ChainLink, value, what_uid: int | None = None) -> int:
    if isinstance(value, int):
        return value
    s = w.s
    if value == "attacker_atk":
        return rules.atk(s, s.attack.attacker) if s.attack is not None and s.find_monster(s.attack.attacker) else 0
    if value == "target_atk":
        if what_uid is not None and s.find_monster(what_uid) is not None:
            return rules.atk(s, what_uid)
        for t in link.targets:
            if s.find_monster(t) is not None:
                return rules.atk(s, t)
        return 0
    if value == "opposing_battler_atk":
        a = s.attack
        if a is None or a.target is None:
            return 0
        other = a.target if link.controller == s.turn_player else a.attacker
        return rules.atk(s, other) if s.find_monster(other) is not None else 0
    raise AssertionError(f"unknown amount {value!r}")


# ---------------------------------------------------------------------------------------------
# Operations


@operation("destroy", "what", "banish", "then_damage_both")
def _destroy(rules, w, link, op, chosen):
    uids = select(rules, w, link, op.get("what"))
    both = op.get("then_damage_both")
    for u in uids:
        dmg = _amount(rules, w, link, both, u) if both else 0
        existed = w.s.find_monster(u) is not None or w.s.find_spell(u) is not None
        rules.destroy(w, u, by="effect", banish=bool(op.get("banish")))
        if both and existed:
            # Old "Ring of Destruction": damage to both players equal to its ATK.
            rules.effect_damage(w, link.controller, dmg, link.card)
            rules.effect_damage(w, 1 - link.controller, dmg, link.card)
    return None


@operation("destroy_lowest_atk", "then_half_damage_both")
def _destroy_lowest_atk(rules, w, link, op, chosen):
    """"Destroy the 1 face-up monster on the field that has the lowest ATK (your choice, if
    tied), and if you do, inflict damage to both players equal to half of that monster's ATK"
    ("Chthonian Blast"): a tie is the link controller's choice, labelled by the monsters' names."""
    s = w.s
    face_up = [m.uid for _side, _i, m in s.monsters() if m.pos.face_up and _affected(rules, w, link, m.uid)]
    if not face_up:
        return None
    # (ATK may be symbolic under bpcheck prove: compared through arith, each comparison a decision)
    low = rules.atk(s, face_up[0])
    for u in face_up[1:]:
        if arith.lt(rules.atk(s, u), low, "DS-ALLOWED-BY-RULING"):
            low = rules.atk(s, u)
    lowest = [u for u in face_up if arith.eq(rules.atk(s, u), low, "DS-ALLOWED-BY-RULING")]
    if len(lowest) > 1 and chosen is None:
        return Choice(link.controller, "lowest_atk", tuple((rules.ref(s, u), u) for u in lowest), link, 0)
    u = chosen[1] if len(lowest) > 1 else lowest[0]
    rules.destroy(w, u, by="effect")
    if op.get("then_half_damage_both") and w.s.find_monster(u) is None:
        half = arith.halve(low)
        rules.effect_damage(w, link.controller, half, link.card)
        rules.effect_damage(w, 1 - link.controller, half, link.card)
    return None


@operation("banish", "what")
def _banish(rules, w, link, op, chosen):
    for u in select(rules, w, link, op.get("what")):
        if w.s.find_monster(u) is not None:
            rules._move_from_field(w, u, "banished", reason="banished")
    return None


@operation("negate_activation", "destroy")
def _negate_activation(rules, w, link, op, chosen):
    # rule: CH-NEGATE (the chain link directly below this one)
    chain = w.s.chain
    if not chain:
        return None
    below = chain[-1]
    w.s = _replace(w.s, chain=chain[:-1] + (_replace(below, negated=True),))
    w.emit("activation_negated", link=len(chain), card=below.card, card_uid=below.card_uid, by=link.card)
    if op.get("destroy") and below.is_card_activation:
        rules.destroy(w, below.card_uid, by="effect")
    return None


@operation("negate_effect")
def _negate_effect(rules, w, link, op, chosen):
    # "negate that effect": the effect of the link directly below this one is negated, not its
    # activation; it resolves doing nothing (rule: DS-LEGAL-NEGATE-EFFECT)
    chain = w.s.chain
    if not chain:
        return None
    below = chain[-1]
    w.s = _replace(w.s, chain=chain[:-1] + (_replace(below, effect_negated=True),))
    w.emit("effect_negated", link=len(chain), card=below.card, card_uid=below.card_uid, by=link.card)
    return None


def _mod_op(stat: str, kind: str):
    def run(rules, w, link, op, chosen):
        for u in select(rules, w, link, op.get("what")):
            if w.s.find_monster(u) is None:
                continue
            amount = 0 if kind == "halve" else _amount(rules, w, link, op.get("amount"))
            rules.add_mod(w, u, Mod(stat, kind, amount, link.card, link.card_uid, op.get("until", "end_of_turn")))
        return None

    return run


OPERATIONS["modify_atk"] = OpSpec(frozenset({"what", "amount", "until"}), _mod_op("atk", "add"))
OPERATIONS["modify_def"] = OpSpec(frozenset({"what", "amount", "until"}), _mod_op("def", "add"))
OPERATIONS["halve_atk"] = OpSpec(frozenset({"what", "until"}), _mod_op("atk", "halve"))
# "the original DEF of those monsters becomes 0": the base the other changes apply to ("Curse of Anubis")
OPERATIONS["set_original_def"] = OpSpec(frozenset({"what", "amount", "until"}), _mod_op("def", "set_original"))


@operation("set_position", "what", "position")
def _set_position(rules, w, link, op, chosen):
    pos = Pos(op.get("position"))
    for u in select(rules, w, link, op.get("what")):
        f = w.s.find_monster(u)
        if f is None or not f[2].pos.face_up:
            continue  # the target is no longer face-up: nothing to change
        if pos is Pos.FACEDOWN and rules.card(f[2].card).is_token:
            continue  # rule: CARD-TOKEN
        rules.set_position(w, u, pos, by="effect")
    rules._cleanup(w)
    return None


@operation("change_position", "what")
def _change_position(rules, w, link, op, chosen):
    for u in select(rules, w, link, op.get("what")):
        f = w.s.find_monster(u)
        if f is None or not f[2].pos.face_up:
            continue
        rules.set_position(w, u, Pos.DEF if f[2].pos is Pos.ATK else Pos.ATK, by="effect")
    rules._cleanup(w)
    return None


@operation("special_summon", "what", "from", "filter", "position", "each_player", "link")
def _special_summon(rules, w, link, op, chosen):
    pos = Pos(op.get("position", "attack"))
    p = link.controller
    if op.get("what") == "target":
        for u in select(rules, w, link, "target"):
            g = next((x for pl in w.s.players for x in pl.graveyard if x.uid == u), None)
            if g is None:
                continue
            if rules.summon(w, g, "graveyard", p, pos) is not None and op.get("link"):
                f = w.s.find_spell(link.card_uid)
                if f is not None:
                    rules._set_spell(w, f[0], f[1], _replace(f[2], linked_monster=u))
        return None
    # From the Deck: the player picks the card while the effect resolves.
    players = [p, 1 - p] if op.get("each_player") else [p]
    stage = 0
    if chosen is not None:
        kind, value = chosen
        stage = int(kind.rsplit(":", 1)[1])
        who = players[stage]
        ref = next(x for x in w.s.players[who].deck if x.uid == value)
        rules.summon(w, ref, "deck", who, pos)
        stage += 1
    while stage < len(players):
        who = players[stage]
        opts = rules._deck_choices(w.s, who, op)
        if opts and None in w.s.players[who].monsters:
            seen: dict[str, int] = {}
            for r in sorted(opts, key=lambda r: (r.card, r.uid)):
                seen.setdefault(r.card, r.uid)
            return Choice(who, f"summon_from_deck:{stage}", tuple(seen.items()), link, 0)
        stage += 1
    return None


@operation("tokens", "token", "count", "position", "to")
def _tokens(rules, w, link, op, chosen):
    p = link.controller if op.get("to") == "you" else 1 - link.controller
    for _ in range(op.get("count")):
        uid = rules.new_uid(w)
        # A token's owner is the player who controls it when it is Summoned.
        if rules.summon(w, CardRef(uid, op.get("token"), p), None, p, Pos(op.get("position")), how="token") is None:
            break
    return None


@operation("negate_attack")
def _negate_attack(rules, w, link, op, chosen):
    # rule: STOP-ATTACK (the attack is negated: it stops; judged after the chain)
    a = w.s.attack
    if a is None:
        return None
    f = w.s.find_monster(a.attacker)
    if f is not None:
        rules._put_monster(w, f[0], f[1], _replace(f[2], cannot_attack_this_turn=True))
    return None


@operation("forbid_attack", "what")
def _forbid_attack(rules, w, link, op, chosen):
    for u in select(rules, w, link, op.get("what")):
        f = w.s.find_monster(u)
        if f is not None:
            rules._put_monster(w, f[0], f[1], _replace(f[2], cannot_attack_this_turn=True))
    return None


@operation("extra_attack", "what")
def _extra_attack(rules, w, link, op, chosen):
    # rule: DS-EXTRA-ATTACK ("It can make a second attack in a row": one more declaration this turn)
    for u in select(rules, w, link, op.get("what")):
        f = w.s.find_monster(u)
        if f is not None:
            rules._put_monster(w, f[0], f[1], _replace(f[2], extra_attacks=f[2].extra_attacks + 1))
    return None


def _lingering(what):
    def run(rules, w, link, op, chosen):
        p = link.controller if op.get("to") == "you" else 1 - link.controller
        rules.add_lingering(w, Lingering(what, p, link.card, op.get("until", "end_of_turn")))
        return None

    return run


OPERATIONS["no_battle_damage"] = OpSpec(frozenset({"to", "until"}), _lingering("no_battle_damage"))
OPERATIONS["battle_indestructible"] = OpSpec(frozenset({"to", "until"}), _lingering("battle_indestructible"))


@operation("return_to_hand", "what")
def _return_to_hand(rules, w, link, op, chosen):
    for u in select(rules, w, link, op.get("what")):
        if w.s.find_monster(u) is not None:
            rules._move_from_field(w, u, "hand", reason="returned")
    rules._cleanup(w)
    return None


@operation("add_to_hand", "what")
def _add_to_hand(rules, w, link, op, chosen):
    for u in select(rules, w, link, op.get("what")):
        for side in (0, 1):
            pl = w.s.players[side]
            g = next((x for x in pl.graveyard if x.uid == u), None)
            if g is not None:
                w.s = w.s.with_player(side, _replace(pl, graveyard=tuple(x for x in pl.graveyard if x.uid != u)))
                rules._add_to_pile(w, g.owner, g, "hand")
                w.emit("card_moved", card=g.card, card_uid=u, owner=g.owner, **{"from": "graveyard", "to": "hand"}, reason="effect")
    return None


def _per_copy(w: "_W", link: ChainLink, op: "Op") -> int:
    """``per_copy_in_graveyard``: that much for each card of the same name in the link
    controller's Graveyard ("for each "Attack and Receive" card in your Graveyard")."""
    each = op.get("per_copy_in_graveyard", 0)
    return each * sum(1 for g in w.s.players[link.controller].graveyard if g.card == link.card) if each else 0


@operation("gain_lp", "amount", "per_copy_in_graveyard")
def _gain_lp(rules, w, link, op, chosen):
    amount = op.get("amount")
    if amount == "tributed_atk_or_def":
        info = dict(link.cost_info)
        if chosen is None:
            a, d = info.get("tributed_atk", 0), info.get("tributed_def", 0)
            return Choice(link.controller, "atk_or_def", ((f"ATK {a}", a), (f"DEF {d}", d)), link, 0)
        amount = chosen[1]
    rules.gain_lp(w, link.controller, amount + _per_copy(w, link, op))
    return None


@operation("damage", "to", "amount", "per_copy_in_graveyard")
def _damage(rules, w, link, op, chosen):
    to = op.get("to")
    p = 1 - link.controller if to == "opponent" else link.controller
    if to == "controller":
        p = link.controller
    rules.effect_damage(w, p, _amount(rules, w, link, op.get("amount")) + _per_copy(w, link, op), link.card)
    return None


@operation("send_deck_to_gy", "count", "player")
def _send_deck_to_gy(rules, w, link, op, chosen):
    """"Send the top N cards of your opponent's Deck to the Graveyard" (the Deck's order is not
    modelled: the first N of the Deck as the model keeps it, by name)."""
    p = 1 - link.controller
    for ref in w.s.players[p].deck[: op.get("count")]:
        rules.deck_to_graveyard(w, p, ref)
    return None


@operation("take_control", "what", "until")
def _take_control(rules, w, link, op, chosen):
    for u in select(rules, w, link, op.get("what")):
        rules.take_control(w, u, link.controller)
    rules._cleanup(w)
    return None


@operation("equip", "what")
def _equip(rules, w, link, op, chosen):
    f = w.s.find_spell(link.card_uid)
    for u in select(rules, w, link, op.get("what")):
        m = w.s.find_monster(u)
        if f is not None and m is not None and m[2].pos.face_up:
            rules._set_spell(w, f[0], f[1], _replace(f[2], equipped_to=u))
    return None


@operation("attach", "what")
def _attach(rules, w, link, op, chosen):
    f = w.s.find_spell(link.card_uid)
    for u in select(rules, w, link, op.get("what")):
        if f is not None and w.s.find_monster(u) is not None:
            rules._set_spell(w, f[0], f[1], _replace(f[2], attached_to=u))
    return None




@operation("choose_one", "by", "options")
def _choose_one(rules, w, link, op, chosen):
    """A player chooses one of the options and its operations resolve ("Your opponent chooses 1 of
    these effects": "Half or Nothing"). An option that could change nothing is not offered: one
    whose every operation changes ATK/DEF of monsters that are not there (with no face-up monster,
    "Half or Nothing" offers only "End the Battle Phase"); if none could, every option is."""
    options = [(dict(o)["label"], dict(o)["ops"]) for o in op.get("options")]
    if chosen is None:
        usable = [i for i, (_label, ops) in enumerate(options) if not _does_nothing(rules, w, link, ops)]
        usable = usable or list(range(len(options)))
        if len(usable) > 1:
            who = 1 - link.controller if op.get("by") == "opponent" else link.controller
            return Choice(who, "option", tuple((options[i][0], i) for i in usable), link, 0)
        pick = usable[0]
    else:
        pick = chosen[1]
    for sub in options[pick][1]:
        OPERATIONS[sub.op].run(rules, w, link, sub, None)
    return None


_STAT_OP_NAMES = frozenset({"modify_atk", "modify_def", "halve_atk", "set_original_def"})


def _does_nothing(rules, w, link, ops) -> bool:
    return all(o.op in _STAT_OP_NAMES and not select(rules, w, link, o.get("what")) for o in ops)


@operation("end_battle_phase")
def _end_battle_phase(rules, w, link, op, chosen):
    """"End the Battle Phase": a lingering effect that ends it once the whole chain has resolved
    (``Rules.end_battle_phase``): play goes on to the End Step."""
    rules.add_lingering(w, Lingering("end_battle_phase", w.s.turn_player, link.card, "end_of_chain"))
    return None
