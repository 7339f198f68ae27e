"""Small readers over observations (bpcheck's JSON snapshot). No rules live here."""

from __future__ import annotations

import re
from typing import Iterator

from bpcheck.invariants.base import Unknown, by_history

# -- the observation paths the readers below read (for the invariants' ``reads=``) ------------


def monster_fields(*names: str) -> list[str]:
    """``players[].monsters[].NAME`` for each name, and the same field of the Extra Monster
    Zones' monsters (``players[].extra_monsters[].NAME``, an optional path: :func:`monsters`
    yields them too). An engine withholds a monster field by its ``players[].monsters[]`` path,
    for every monster."""
    return [f"players[].{z}[].{n}" for z in ("monsters", "extra_monsters") for n in names]


def spell_fields(*names: str) -> list[str]:
    """The paths of fields of the cards :func:`spells` yields: the Spell & Trap Zones and the Field Zone."""
    return [f"players[].{z}.{n}" for z in ("spells[]", "field_zone") for n in names]


def pile_fields(*names: str) -> list[str]:
    return [f"players[].{p}[].{n}" for p in ("hand", "graveyard", "banished", "deck") for n in names]


def extra_place_fields(*names: str) -> list[str]:
    """The paths :func:`extra_places` reads: the optional places of a card-database board."""
    return [f"players[].{p}.{n}" for p in ("extra_monsters[]", "pendulum[]", "extra_deck[]", "monsters[].materials[]", "extra_monsters[].materials[]") for n in names]


# a Spell/Trap in force (:func:`activating` reads the monitor's chain, not on_chain)
ACTIVE = spell_fields("uid", "card", "face_up")
ATTACKABLE = [*monster_fields("uid", "card", "position"), *ACTIVE]
MAY_ATTACK_DIRECTLY = sorted({*ATTACKABLE, *monster_fields("controller"), *spell_fields("attached_to", "equipped_to")})
CANNOT_ATTACK = sorted({*monster_fields("uid", "level"), *ACTIVE, *spell_fields("attached_to")})
CARD_PLACES = sorted({*monster_fields("uid", "card"), *spell_fields("uid", "card"), *pile_fields("uid", "card"), *extra_place_fields("uid", "card")})


# what the readers below do without the engine's fields (for the invariants' ``fields=``)
ON_CHAIN = {
    p: by_history("the chain history (the cards whose activation is on the chain, by the card data)")
    for p in ("players[].spells[].on_chain", "players[].field_zone.on_chain")
}
MARKS = {"players[].monsters[].destroyed_by_battle": by_history("the battle history (the monsters marked destroyed by battle)")}
CANNOT_ATTACK_AGAIN = {
    "players[].monsters[].cannot_attack_this_turn": by_history("the attacks history (stopped attacks, effects that forbade an attack)")
}


def monsters(obs: dict, side: int | None = None) -> Iterator[dict]:
    """The monsters on the field: the Main Monster Zones', then the Extra Monster Zones' (an
    optional path: a board with them, docs/observation.md)."""
    for i, p in enumerate(obs["players"]):
        if side is None or side == i:
            for m in p["monsters"]:
                if m is not None:
                    yield m
            for m in p.get("extra_monsters") or ():
                if m is not None:
                    yield m


def extra_places(p: dict, side: int) -> Iterator[tuple[dict, str]]:
    """(card, place) of each card of the optional places of a player's view (docs/observation.md:
    a board with Extra Monster Zones, Pendulum Zones, an Extra Deck or Xyz materials): the Extra
    Monster Zones' monsters (``P1 EMZ1``), the Pendulum Zones' cards (``P1 PZ1``), the Extra
    Deck's (``P1 ED``) and every monster's materials (``P1 M1 material``)."""
    for i, m in enumerate(p.get("extra_monsters") or ()):
        if m is not None:
            yield m, f"P{side + 1} EMZ{i + 1}"
    for i, c in enumerate(p.get("pendulum") or ()):
        if c is not None:
            yield c, f"P{side + 1} PZ{i + 1}"
    for c in p.get("extra_deck") or ():
        yield c, f"P{side + 1} ED"
    for zone, tag in (("monsters", "M"), ("extra_monsters", "EMZ")):
        for i, m in enumerate(p.get(zone) or ()):
            for c in (m or {}).get("materials") or ():
                yield c, f"P{side + 1} {tag}{i + 1} material"


def monster(obs: dict, uid: int | None) -> dict | None:
    if uid is None:
        return None
    for m in monsters(obs):
        if m["uid"] == uid:
            return m
    return None


def spells(obs: dict) -> Iterator[dict]:
    for p in obs["players"]:
        for c in p["spells"]:
            if c is not None:
                yield c
        if p["field_zone"] is not None:
            yield p["field_zone"]


def find_spell(obs: dict, uid: int) -> dict | None:
    for c in spells(obs):
        if c["uid"] == uid:
            return c
    return None


def in_pile(obs: dict, uid: int) -> tuple[int, str] | None:
    for side, p in enumerate(obs["players"]):
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in p[pile]:
                if c["uid"] == uid:
                    return side, pile
    return None


def activating(c: dict, mon, cards) -> bool:
    """A Spell/Trap on the field is being activated: its card activation is on the chain, by the
    monitor's chain history (the links added and not yet resolved) and the card data (an effect of
    type ``activate`` is the card's activation). Never the engine's ``on_chain``."""
    if not mon.chain.links:
        return False
    got = _activations(mon, cards).get(c["uid"], False)
    if got is True or got is False:
        return got
    return fact(None, got[0], f"whether its {effect_words(got[1])} is the card's activation")


def _activations(mon, cards) -> dict:
    """uid -> True when a link of that card on the chain is its card activation (its first such
    link in chain order), False when none is, or (card, effect) when the card data cannot say
    for the first of its links that decides: :func:`activating` for every card at once, built once
    per monitor (a monitor is immutable; asked about every Spell/Trap on the field by several
    invariants per transition)."""
    cache = getattr(mon, "_cache", None)
    if cache is not None:
        got = cache.get("activations")
        if got is not None and got[0] is cards:
            return got[1]
    out: dict = {}
    for link in mon.chain.links:
        uid = link[0]
        if out.get(uid, False) is not False:
            continue  # decided by an earlier link of the same card
        eff = cards.effect(link[1], link[2])
        if eff is None:
            out[uid] = (link[1], link[2])
        elif eff.get("type") == "activate":
            out[uid] = True
        else:
            out[uid] = False
    if cache is not None:
        cache["activations"] = (cards, out)
    return out


def face_up_card(obs: dict, name: str, mon, cards) -> bool:
    return any(c["card"] == name and c["face_up"] and not activating(c, mon, cards) for c in spells(obs))


def _active(c: dict, mon, cards) -> bool:
    return c["face_up"] and not activating(c, mon, cards)


def effect_words(effect) -> str:
    """An effect as a message names it: ``effect 1`` (its index in the card data), or, when the
    engine's chain link names none, what is known, never ``effect None``."""
    return "effect (its chain link names none)" if effect is None else f"effect {effect}"


def destroyed_instead(obs: dict, cards, monster_uid: int) -> int | None:
    """The face-up Equip Card on monster `monster_uid` in `obs` that is destroyed instead of the
    monster being destroyed by battle, by its card data (DS-INSTEAD), or None. Raises Unknown
    when an Equip Card's data cannot say."""
    for c in spells(obs):
        if c.get("face_up") and c.get("equipped_to") == monster_uid and cards is not None:
            if fact(cards.destroyed_instead_of_equipped(c["card"]), c["card"], "whether it is destroyed instead of its monster"):
                return c["uid"]
    return None


def allowed_attacks(rec, card: str) -> int:
    """The attack declarations a one-attack monster is allowed this turn: one, and one more for
    each extra attack a resolved effect of its own gave it (DS-EXTRA-ATTACK, the monitor's
    ``attacks`` history). Raises Unknown when such an effect may have resolved but the card data
    cannot say which of its effects did."""
    if rec.extra is None:
        raise Unknown(card, "which of its effects resolved (the engine did not say), so how many attacks it has")
    return 1 + rec.extra


def fact(value, card: str, what: str):
    """A card fact, or raise Unknown (the caller turns it into a NotJudged verdict)."""
    if value is None:
        raise Unknown(card, what)
    return value


# The readers below take the monitor of the observation they read (``ctx.mon``; ``t.mon`` for
# ``t.before``, ``t.mon_after`` for ``t.after``): the battle marks and the chain are its history,
# never the engine's destroyed_by_battle and on_chain.


def attackable(obs: dict, defender: int, cards, mon) -> set[int]:
    """The defender's monsters that can be chosen as attack targets (ATK-TARGET-IMMUNE); a
    monster marked destroyed by battle (the monitor's battle history) cannot (DS-NO-TARGET-DESTROYED)."""
    out = set()
    marked = mon.battle.destroyed
    for m in monsters(obs, defender):
        if m["uid"] in marked:
            continue
        if m["position"] != "facedown":
            immune, field = fact(cards.unattackable_while(m["card"]), m["card"], "whether it can be attacked")
            if immune and (field is None or face_up_card(obs, field, mon, cards)):
                continue
        out.add(m["uid"])
    return out


# What :func:`negated` reads of an observation (an invariant that asks it declares them: reads=)
NEGATION_READS = ("players[].field_zone", *spell_fields("card", "face_up", "attached_to"))


def negated(obs: dict, uid: int, cards, mon) -> bool:
    return any(
        _active(c, mon, cards) and c["attached_to"] == uid and fact(cards.negates_attached(c["card"]), c["card"], "whether it negates effects")
        for c in spells(obs)
    )


def may_attack_directly(obs: dict, uid: int, cards, mon) -> bool:
    m = monster(obs, uid)
    if m is None:
        return False
    if fact(cards.can_attack_directly(m["card"]), m["card"], "whether it can attack directly") and not negated(obs, uid, cards, mon):
        return True
    for c in spells(obs):
        if _active(c, mon, cards) and c["equipped_to"] == uid and fact(cards.grants_direct_attack(c["card"]), c["card"], "whether it grants a direct attack"):
            return True
    return not attackable(obs, 1 - m["controller"], cards, mon)


def cannot_attack(obs: dict, uid: int, cards, mon) -> bool:
    """A continuous effect forbids this monster to attack (ATK-CANNOT)."""
    m = monster(obs, uid)
    if m is None:
        return True
    for c in spells(obs):
        if not _active(c, mon, cards):
            continue
        if c["attached_to"] == uid and fact(cards.stops_attached_attacking(c["card"]), c["card"], "whether it stops attacks"):
            return True
        lvl = fact(cards.level_lock(c["card"]), c["card"], "whether it stops attacks by Level")
        if lvl is not False and (m["level"] or 0) >= lvl:
            return True
    return False


def uid_places(obs: dict) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for side, p in enumerate(obs["players"]):
        for i, m in enumerate(p["monsters"]):
            if m:
                out.setdefault(m["uid"], []).append(f"P{side + 1} M{i + 1}")
        for i, c in enumerate(p["spells"]):
            if c:
                out.setdefault(c["uid"], []).append(f"P{side + 1} S{i + 1}")
        if p["field_zone"]:
            out.setdefault(p["field_zone"]["uid"], []).append(f"P{side + 1} FZ")
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in p[pile]:
                out.setdefault(c["uid"], []).append(f"P{side + 1} {pile}")
        for c, place in extra_places(p, side):
            out.setdefault(c["uid"], []).append(place)
    return out


def uid_count_ok(obs: dict) -> bool:
    """Every uid is in one place (what :func:`uid_places` would find, reading the same fields,
    without naming the places)."""
    seen: set = set()
    add = seen.add
    n = 0
    for p in obs["players"]:
        for m in p["monsters"]:
            if m:
                add(m["uid"])
                n += 1
        for c in p["spells"]:
            if c:
                add(c["uid"])
                n += 1
        if p["field_zone"]:
            add(p["field_zone"]["uid"])
            n += 1
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in p[pile]:
                add(c["uid"])
                n += 1
    for side, p in enumerate(obs["players"]):
        for c, _place in extra_places(p, side):
            add(c["uid"])
            n += 1
    return len(seen) == n


def card_name(obs: dict, uid: int | None) -> str:
    if uid is None:
        return "direct"
    m = monster(obs, uid)
    if m:
        return m["card"]
    c = find_spell(obs, uid)
    if c:
        return c["card"]
    for side, p in enumerate(obs["players"]):
        for pile in ("hand", "graveyard", "banished", "deck"):
            for x in p[pile]:
                if x["uid"] == uid:
                    return x["card"]
        for x, _place in extra_places(p, side):
            if x["uid"] == uid:
                return x["card"]
    return f"#{uid}"


_PILE_TAGS = {"hand": "hand", "graveyard": "GY", "banished": "banished", "deck": "deck"}


def card_place(obs: dict, uid: int) -> tuple[str, str] | None:
    """A card's name and where it is (``P2 M2``, ``P1 S3``, ``P1 FZ``, ``P2 GY``, ``P1 hand``),
    or None when the observation does not hold it."""
    for side, p in enumerate(obs.get("players", ())):
        for i, m in enumerate(p.get("monsters", ())):
            if m and m.get("uid") == uid:
                return m.get("card", "?"), f"P{side + 1} M{i + 1}"
        for i, c in enumerate(p.get("spells", ())):
            if c and c.get("uid") == uid:
                return c.get("card", "?"), f"P{side + 1} S{i + 1}"
        fz = p.get("field_zone")
        if fz and fz.get("uid") == uid:
            return fz.get("card", "?"), f"P{side + 1} FZ"
        for pile, tag in _PILE_TAGS.items():
            for c in p.get(pile, ()):
                if c.get("uid") == uid:
                    return c.get("card", "?"), f"P{side + 1} {tag}"
        for c, place in extra_places(p, side):
            if c.get("uid") == uid:
                return c.get("card", "?"), place
    return None


def card_ref(obs: dict, uid: int | None, *more: dict) -> str:
    """A card as people read it in a message: its name and zone, ``Sheep Token [P2 M2]``, from
    the first of the observations given that holds it (e.g. the state after an action, then the
    one before, for a card that left the field); ``#uid`` only when none does; ``direct`` for
    no card (a direct attack). Messages name cards this way, never by uid alone."""
    if uid is None:
        return "direct"
    for o in (obs, *more):
        if o is None:
            continue
        found = card_place(o, uid)
        if found is not None:
            return f"{found[0]} [{found[1]}]"
    return f"#{uid}"


def card_refs(obs: dict, uids, *more: dict) -> str:
    """Several cards, in the order given: ``[Battle Ox [P1 M1], Sheep Token [P2 M2]]``."""
    return "[" + ", ".join(card_ref(obs, u, *more) for u in uids) + "]"


class lazy_ref:
    """:func:`card_ref`, worked out only when formatted into a message (``f"{who} ..."``): a
    check names a card once for its several messages without walking the observation when it
    holds."""

    __slots__ = ("args",)

    def __init__(self, obs: dict, uid: int | None, *more: dict) -> None:
        self.args = (obs, uid, *more)

    def __format__(self, spec: str) -> str:
        return format(card_ref(*self.args), spec)

    __str__ = lambda self: card_ref(*self.args)  # noqa: E731


# Words of a card's text that change who may attack, what, how often, or whether the Battle Phase
# is conducted: on a card of a card database (whose effects are not modelled) they make the
# invariants that compute what is legal say "not judged" (issue 30 item 6)
ATTACK_RULE_TEXT = re.compile(
    r"(?:cannot|neither player can) (?:attack|declare (?:an )?attacks?|conduct (?:your|their|the|his) Battle Phase|enter the Battle Phase)"
    r"|skip (?:your|their|the|his) (?:next )?Battle Phase|end the Battle Phase|must attack"
    r"|attack (?:your opponent |the opponent )?directly|become direct attacks?|(?:second|third) attack|attack (?:twice|all|each)"
    r"|cannot be (?:targeted for|selected as) an attack|cannot target [^.]{0,40}for attacks|negate the attack"
    r"|Battle Phase twice|additional Battle Phase"
    r"|attack with (?:it|that monster|this card) instead|a direct attack instead|proceed to damage calculation|(?:change|switch) the attack target|attack(?:/effect)? now targets",
    re.I)


def db_attack_effect(t) -> str | None:
    """Why an attack or a damage calculation in transition `t` may be a card's doing, or None: a
    card of a card database whose text changes the attack rules (:data:`ATTACK_RULE_TEXT`: "attack
    with it instead", "proceed to damage calculation") is on the chain or resolves in `t`; bpcheck
    models no attack an effect performs (F28, docs/ocgcore-findings.md F33 note 3)."""
    rows = getattr(t.cards, "rows", None)
    if not rows:
        return None
    names = [e["card"] for e in t.events if e.kind in ("chain_link_added", "chain_link_resolved")]
    names += [l[1] for l in t.mon.chain.links]  # (card_uid, card, ...)
    for name in names:
        row = rows.get(name) if type(name) is str else None
        m = ATTACK_RULE_TEXT.search(row.text) if row is not None else None
        if m:
            return f"{name} (a card of a card database) resolves with \"{m.group(0)}\": an attack an effect performs is not modelled"
    return None


def db_rules_unknown(obs: dict, mon, cards, uids=None) -> str | None:
    """Why what is legal in a Battle Phase cannot be computed here, or None: a card of a card
    database resolved an effect this turn (history ``db_resolved``), or one face-up on the field
    (or one of `uids`, any position) has text that changes the attack rules (:data:`ATTACK_RULE_TEXT`)."""
    rows = getattr(cards, "rows", None)
    if not rows:
        return None
    if mon["db_resolved"]:
        return (f"an effect of {mon['db_resolved'][0]} (a card of a card database, whose effects bpcheck does not model) "
                "resolved this turn and may have changed what is legal")
    pendulum = [c for p in obs["players"] for c in p.get("pendulum") or () if c is not None]  # (face-up: a Pendulum Effect)
    for c in [*monsters(obs), *spells(obs), *pendulum]:
        name = c.get("card")
        row = rows.get(name) if type(name) is str else None
        up = c["face_up"] if "face_up" in c else not str(c.get("position", "")).startswith("facedown")
        if row is None or not (up or (uids and c.get("uid") in uids)):
            continue
        m = ATTACK_RULE_TEXT.search(row.text)
        if m:
            return f"the text of {name} (a card of a card database) may change the attack rules: '{m.group(0)}'"
    return None
