"""Observations: bpcheck's documented, JSON-serialisable snapshot of a state (docs/model.md).

Invariants, scenarios and reports read observations and events, never State internals, so that
any engine that produces the same snapshot can be judged. Computed values (current ATK/DEF and the
modifiers behind them) are included so that a reader does not have to know the rules to see them.
"""

from __future__ import annotations

from typing import Any

from bpcheck.model.engine import Rules
from bpcheck.model.state import Attack, Monster, SpellTrap, State

SCHEMA_VERSION = 1


class _Cache:
    """Per-engine memo of the observation pieces of unchanged card objects.

    States share unchanged sub-objects (a monster untouched by a transition is the same
    object in the next state), so most of an observation can be reused. Entries keep a
    reference to their key object, so an ``id`` is never confused with a dead object's.
    """

    # Entries past this (per kind) clear the cache. Measured (docs/performance.md, peak memory
    # per explored state): 200,000 held ~40 % of a run's memory for no speed; 5,000 keeps the hits.
    LIMIT = 5_000

    def __init__(self) -> None:
        self.monsters: dict[int, tuple] = {}
        self.spells: dict[int, tuple] = {}
        self.piles: dict[int, tuple] = {}
        self.players: dict[int, tuple] = {}  # one player's part (see _player)
        # the parts of the observation that depend on one tuple of the state alone (shared by
        # a state with the states before it until it changes): "chain", "open_windows",
        # "lingering", "pending_triggers", "attack"
        self.chains: dict[int, tuple] = {}
        self.links: dict[int, tuple] = {}  # one chain link's part
        self.windows: dict[int, tuple] = {}
        self.lingering: dict[int, tuple] = {}
        self.triggers: dict[int, tuple] = {}
        self.attacks: dict[int, tuple] = {}

    def trim(self) -> None:
        for d in (self.monsters, self.spells, self.piles, self.players, self.chains, self.links, self.windows, self.lingering, self.triggers, self.attacks):
            if len(d) > self.LIMIT:
                d.clear()


def _cache(r: Rules) -> _Cache:
    c = getattr(r, "_observe_cache", None)
    if c is None:
        c = _Cache()
        r._observe_cache = c  # type: ignore[attr-defined]
    return c


def _monster(r: Rules, s: State, side: int, m: Monster, equipped: tuple[int, ...] = ()) -> dict[str, Any]:
    atk, dfn, mods = r.battle_stats(s, m.uid)
    cache = _cache(r)
    key = (side, atk, dfn, tuple(mods), equipped)
    hit = cache.monsters.get(id(m))
    if hit is not None and hit[0] is m and hit[1] == key:
        return hit[2]
    d = _monster_dict(r, side, m, atk, dfn, mods, equipped)
    cache.monsters[id(m)] = (m, key, d)
    return d


def _monster_dict(r: Rules, side: int, m: Monster, atk: int, dfn: int, mods, equipped) -> dict[str, Any]:
    c = r.card(m.card)
    return {
        "uid": m.uid,
        "card": m.card,
        "owner": m.owner,
        "controller": side,
        "token": c.is_token,
        "level": c.level,
        "attribute": c.attribute,
        "race": c.race,
        "position": m.pos.value,
        "atk": atk,
        "def": dfn,
        "base_atk": c.atk,
        "base_def": c.def_,
        "modifiers": [{"source": src, "stat": st, "kind": k, "amount": a} for src, st, k, a in mods],
        "lingering_modifiers": [
            {"source": md.source, "source_uid": md.source_uid, "stat": md.stat, "kind": md.kind, "amount": md.amount, "until": md.until}
            for md in m.mods
        ],
        "summoned_this_turn": m.summoned_this_turn,
        "attacks_declared": m.attacks_declared,
        "declared_at": sorted(m.declared_at),
        "declared_direct": m.declared_direct,
        "cannot_attack_this_turn": m.cannot_attack_this_turn,
        "destroyed_by_battle": m.destroyed_by_battle,
        "flipped_by_battle": m.flipped_by_battle,
        "set_this_turn": m.set_this_turn,
        "position_changed_this_turn": m.position_changed,
        "once_per_turn_used": sorted(m.effects_used),
        "equipped_with": list(equipped),
    }


def _spell(r: Rules, s: State, side: int, c: SpellTrap) -> dict[str, Any]:
    cache = _cache(r)
    hit = cache.spells.get(id(c))
    if hit is not None and hit[0] is c and hit[1] == side:
        return hit[2]
    d = _spell_dict(r, side, c)
    cache.spells[id(c)] = (c, side, d)
    return d


def _spell_dict(r: Rules, side: int, c: SpellTrap) -> dict[str, Any]:
    card = r.card(c.card)
    return {
        "uid": c.uid,
        "card": c.card,
        "owner": c.owner,
        "controller": side,
        "kind": card.kind,
        "subtype": card.subtype,
        "face_up": c.face_up,
        "set_this_turn": c.set_this_turn,
        "equipped_to": c.equipped_to,
        "attached_to": c.attached_to,
        "linked_monster": c.linked_monster,
        "on_chain": c.activating,
    }


def _pile(r: Rules, refs) -> list[dict[str, Any]]:
    cache = _cache(r)
    hit = cache.piles.get(id(refs))
    if hit is not None and hit[0] is refs:
        return hit[1]
    out = [{"uid": x.uid, "card": x.card, "owner": x.owner} for x in refs]
    cache.piles[id(refs)] = (refs, out)
    return out


def with_extras(r: Rules, obs: dict[str, Any], extras) -> dict[str, Any]:
    """`obs` (not changed) with the places of a board the model's State has no place for (a
    :class:`bpcheck.model.board.BoardExtras`: Xyz materials, the Extra Monster Zones, the Pendulum
    Zones, the Extra Deck), in the fields an engine that plays such a board gives them
    (docs/observation.md): ``materials`` on every monster, ``extra_monsters``, ``pendulum`` and
    ``extra_deck`` on both players. The model plays no such board; this draws one as its file
    says (a report of a board the engine under test failed on), in the same shape."""
    players = []
    for side, p in enumerate(obs["players"]):
        p = dict(p)
        emz = [None if m is None else _monster_dict(r, side, m, r.card(m.card).atk or 0, r.card(m.card).def_ or 0, (), ()) for m in extras.extra_monsters[side]]
        p["monsters"] = [None if m is None else dict(m) for m in p["monsters"]]
        for m in [*p["monsters"], *emz]:
            if m is not None:
                m["materials"] = [{"uid": x.uid, "card": x.card, "owner": x.owner} for x in extras.materials_of(m["uid"])]
        p["extra_monsters"] = emz
        p["pendulum"] = [None if c is None else {"uid": c.uid, "card": c.card, "owner": c.owner, "controller": side, "face_up": True} for c in extras.pendulum[side]]
        p["extra_deck"] = [{"uid": x.uid, "card": x.card, "owner": x.owner} for x in extras.extra_deck[side]]
        players.append(p)
    return {**obs, "players": players}


def observe(r: Rules, s: State) -> dict[str, Any]:
    """The observation of `s`. Parts may be shared with earlier observations: treat it as
    read-only (copy it before changing it)."""
    _cache(r).trim()
    memo = r._memo(s)
    if memo is None:
        players = _players(r, s)
    else:
        # The players part depends on the two players alone (FIELD_PURE): states that share
        # their players (a pass, a step change) share it.
        # A Damage-Step-only ATK change (rule: DS-START-CONT) depends on the step and the
        # attack too: such states get a part of their own.
        ds = r.damage_step_key(s)
        key = "observation" if ds is None else ("observation", ds)
        players = memo.get(key)
        if players is None:
            players = memo[key] = _players(r, s)
    return _top(r, s, players)


def _players(r: Rules, s: State) -> list[dict[str, Any]]:
    equips: dict[int, list[int]] = {}
    for _side, _i, c in s.spell_traps():
        if c.equipped_to is not None:
            equips.setdefault(c.equipped_to, []).append(c.uid)
    return [_player(r, s, 0, equips), _player(r, s, 1, equips)]


def _player(r: Rules, s: State, side: int, equips: dict[int, list[int]]) -> dict[str, Any]:
    """One player's part. What it shows of a monster depends on the whole field (current ATK/DEF,
    equips), everything else on the :class:`Player` object alone; so when the player object is
    the one seen before and each of its monsters' parts is the very dict seen then
    (:func:`_monster` gives the same dict only for the same monster with the same ATK, DEF,
    modifiers and equips), the part built then is the one this would build (a transition that
    changes one player leaves the other one's part as it was)."""
    p = s.players[side]
    mons = [None if m is None else _monster(r, s, side, m, tuple(sorted(equips.get(m.uid, ())))) for m in p.monsters]
    cache = _cache(r).players
    hit = cache.get(id(p))
    if hit is not None and hit[0] is p and hit[1] == side:
        old = hit[2]["monsters"]
        if all(a is b for a, b in zip(old, mons)):
            return hit[2]
    d = {
        "lp": p.lp,
        "monsters": mons,
        "spells": [None if c is None else _spell(r, s, side, c) for c in p.spells],
        "field_zone": None if p.field_zone is None else _spell(r, s, side, p.field_zone),
        "hand": _pile(r, p.hand),
        "graveyard": _pile(r, p.graveyard),
        "banished": _pile(r, p.banished),
        "deck": _pile(r, p.deck),
    }
    cache[id(p)] = (p, side, d)
    return d


def _chain(r: Rules, chain: tuple) -> list[dict[str, Any]]:
    """The "chain" part: it depends on the chain tuple alone, which a state shares with the states
    before it until a link is added or resolved; each link's part depends on its
    :class:`ChainLink` object alone (and the card pool), which every chain holding it shares."""
    cache = _cache(r)
    hit = cache.chains.get(id(chain))
    if hit is not None and hit[0] is chain:
        return hit[1]
    links = cache.links
    out = []
    for l in chain:
        h = links.get(id(l))
        if h is not None and h[0] is l:
            out.append(h[1])
            continue
        card = r.pool[l.card]
        d = {
            "card": l.card,
            "card_uid": l.card_uid,
            "effect": l.effect,
            "controller": l.controller,
            "speed": l.speed,
            "targets": list(l.targets),
            "negated": l.negated,
            "card_activation": l.is_card_activation,
            "kind": card.kind,
            "subtype": card.subtype,
            "cost_info": [list(x) for x in l.cost_info],
        }
        links[id(l)] = (l, d)
        out.append(d)
    cache.chains[id(chain)] = (chain, out)
    return out


def _memo(cache: dict[int, tuple], obj: Any, build: Any) -> Any:
    """``build(obj)``, once per object of the state (``cache``: one kind of _Cache)."""
    hit = cache.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    out = build(obj)
    cache[id(obj)] = (obj, out)
    return out


def _windows_part(fresh: tuple) -> dict[str, Any]:
    return {
        "attack_declaration": any(f[0] == "attack_declared" for f in fresh),
        "summon": any(f[0] == "summoned" for f in fresh),
        "events": [list(f) for f in fresh],
    }


def _windows(r: Rules, fresh: tuple) -> dict[str, Any]:
    """The "open_windows" part (rule: WIN-EVENT): it depends on the state's ``fresh`` alone."""
    return _memo(_cache(r).windows, fresh, _windows_part)


def _lingering_part(lingering: tuple) -> list[dict[str, Any]]:
    return [{"what": l.what, "player": l.player, "source": l.source, "until": l.until} for l in lingering]


def _lingering(r: Rules, lingering: tuple) -> list[dict[str, Any]]:
    return _memo(_cache(r).lingering, lingering, _lingering_part)


def _triggers_part(triggers: tuple) -> list[dict[str, Any]]:
    return [{"card": t.card, "card_uid": t.card_uid, "effect": t.effect, "player": t.player, "mandatory": t.mandatory} for t in triggers]


def _triggers(r: Rules, triggers: tuple) -> list[dict[str, Any]]:
    return _memo(_cache(r).triggers, triggers, _triggers_part)


def _attack_part(a: Attack) -> dict[str, Any]:
    return {
        "attacker": a.attacker,
        "target": a.target,
        "potential_targets": sorted(a.potential_targets),
        "direct_was_legal": a.direct_was_legal,
        "target_was_facedown": a.target_was_facedown,
        "replay_pending": a.replay_pending,
        "battle_ended": a.battle_ended,
        "damage_calculated": a.calculated,
    }


def _attack(r: Rules, a: Attack) -> dict[str, Any]:
    return _memo(_cache(r).attacks, a, _attack_part)


def _top(r: Rules, s: State, players: list[dict[str, Any]]) -> dict[str, Any]:
    a = s.attack
    return {
        "schema": SCHEMA_VERSION,
        "turn": s.turn,
        "turn_player": s.turn_player,
        "phase": s.step.phase,
        "step": s.step.value,
        "over": s.over,
        "winner": s.winner,
        "to_act": r.to_act(s),
        "priority": s.priority,
        "passes": s.passes,
        "players": players,
        "attack": None if a is None else _attack(r, a),
        "chain": _chain(r, s.chain),
        "open_windows": _windows(r, s.fresh),
        "chains_in_step": s.chain_count_in_step,
        "next_uid": s.next_uid,
        "lingering": _lingering(r, s.lingering),
        "pending_triggers": _triggers(r, s.triggers),
        "choice": None
        if s.choice is None
        else {
            "player": s.choice.player,
            "kind": s.choice.kind.split(":")[0],
            "stage": s.choice.kind,
            "options": [[label, value] for label, value in s.choice.options],
            # (a choice at damage calculation, DS-CALC-PROTECT-CHOICE: no link resolves; the monster)
            **({"card_uid": s.choice.op_index} if s.choice.link is None else {}),
            "resolving": None
            if s.choice.link is None
            else {
                "card": s.choice.link.card,
                "card_uid": s.choice.link.card_uid,
                "controller": s.choice.link.controller,
                "targets": list(s.choice.link.targets),
                "operation": s.choice.op_index,
                "cost_info": [list(x) for x in s.choice.link.cost_info],
            },
        },
    }
