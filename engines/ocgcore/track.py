"""Following the core's cards and battle from its messages: card identities (bpcheck uids),
the chain, the attack in progress, the phase and step; and turning the messages into bpcheck
events (docs/model.md). One :class:`Track` per engine state; :meth:`Track.copy` before going on.

The core has no card identities in its API: a card is where it is. The tracker knows where each
board card was put and follows every MSG_MOVE / MSG_SWAP, so a card keeps its board uid; tokens
the core creates get uids from 1000 in the order they appear.
"""

from __future__ import annotations

from bpcheck.model.events import Event, ev

from . import core as K
from . import messages as M

PHASE_STEPS = {
    K.PHASE_DRAW: "draw_phase", K.PHASE_STANDBY: "standby_phase", K.PHASE_MAIN1: "main1",
    K.PHASE_BATTLE_START: "battle_start_step", K.PHASE_BATTLE_STEP: "battle_step",
    K.PHASE_DAMAGE: "damage_step_start", K.PHASE_DAMAGE_CAL: "damage_step_during_calculation",
    K.PHASE_BATTLE: "battle_end_step", K.PHASE_MAIN2: "main2", K.PHASE_END: "end_phase",
}
DS_ORDER = ("damage_step_start", "damage_step_before_calculation", "damage_step_during_calculation",
            "damage_step_after_calculation_1", "damage_step_after_calculation_2", "damage_step_end")
# The core names each Damage-Step window it opens with a MSG_HINT of type HINT_EVENT (1) to both
# players just before the window (its damage-step processor, processor.cpp: 40 at the start of the
# Damage Step, :2310; 41 before damage calculation, :2350; 42 during damage calculation, :2381; 43
# after damage calculation, :2632; 44 at the end of the Damage Step, after the monsters destroyed by
# battle were sent, :2697). The chain prompts' timing hints cannot tell the first two apart
# (TIMING_DAMAGE_STEP is set only for the before-calculation window, :2355), and a trigger offered
# on its own (SELECT_EFFECTYN) has none, so the sub-step is read from these. rule: DS-SUBSTEPS
HINT_EVENT = 1
DS_HINTS = {40: "damage_step_start", 41: "damage_step_before_calculation", 42: "damage_step_during_calculation",
            43: "damage_step_after_calculation_1", 44: "damage_step_end"}
PILE_LOCS = (K.LOCATION_HAND, K.LOCATION_GRAVE, K.LOCATION_REMOVED, K.LOCATION_DECK, K.LOCATION_EXTRA)
ZONE_NAMES = {K.LOCATION_DECK: "deck", K.LOCATION_HAND: "hand", K.LOCATION_MZONE: "monster_zone",
              K.LOCATION_SZONE: "spell_trap_zone", K.LOCATION_GRAVE: "graveyard", K.LOCATION_REMOVED: "banished",
              K.LOCATION_EXTRA: "extra_deck", K.LOCATION_OVERLAY: "xyz_material", 0: "nowhere"}


class TrackError(Exception):
    """The tracker lost a card (a message about a place it holds nothing for)."""


def position_name(pos: int) -> str:
    if pos & K.POS_FACEUP_ATTACK:
        return "attack"
    if pos & K.POS_FACEUP_DEFENSE:
        return "defense"
    if pos & K.POS_FACEDOWN_DEFENSE:
        return "facedown"
    return "facedown_attack"


def move_reason(reason: int, to_loc: int) -> str:
    if reason & K.REASON_DESTROY:
        return "battle" if reason & K.REASON_BATTLE else "destroyed"
    if reason & K.REASON_RELEASE:
        return "tribute"
    if reason & K.REASON_DISCARD:
        return "discard"
    if reason & K.REASON_COST:
        return "cost"
    if reason & K.REASON_RETURN:
        return "returned"
    if reason & K.REASON_SPSUMMON or reason & K.REASON_SUMMON:
        return "summoned"
    if reason & K.REASON_RULE:
        return "resolved" if to_loc == K.LOCATION_GRAVE else "rule"
    if to_loc == K.LOCATION_REMOVED:
        return "banished"
    return "effect"


class Track:
    __slots__ = ("swap", "turn", "phase", "step", "over", "winner", "field", "piles", "cards", "next_token",
                 "chain", "building", "attack", "in_calc", "names", "selecting_attack", "last_flip_by",
                 "replaying", "opp_at_attack", "marked", "probe", "overlays", "repositioning", "lp", "random", "drew")

    def __init__(self, swap: int, names) -> None:
        self.swap = swap
        self.turn = 0  # MSG_NEW_TURN of the puzzle's first turn makes it 1
        self.phase = 0
        self.step = "draw_phase"
        self.over = False
        self.winner: int | None = None
        self.field: dict[tuple[int, int, int], int] = {}
        # piles are tuples (replaced, never changed in place), so copying a tracker is cheap
        self.piles: dict[tuple[int, int], tuple[int, ...]] = {(c, l): () for c in (0, 1) for l in PILE_LOCS}
        self.cards: dict[int, tuple[int, int]] = {}  # uid -> (code, core owner)
        self.next_token = 1000
        self.chain: list[list] = []  # [uid, code, core controller, [target uids], negated]
        self.building: int | None = None  # index of the link whose activation is being built
        self.attack: list | None = None  # [attacker uid, target uid or None, damage calculated]
        self.in_calc = False
        self.selecting_attack = False
        self.names = names  # code -> card name (shared, read-only)
        self.last_flip_by = "effect"
        self.replaying = False  # the turn player answered "yes" to the core's replay question
        self.opp_at_attack: tuple = ()  # the opponent's monster uids when the attack was announced
        self.marked: frozenset = frozenset()  # uids whose destroyed_by_battle event was given
        self.probe = None  # () -> the uids the core shows destroyed by battle now (set while running)
        # uid of an Xyz monster -> the uids of its materials, in the core's order (tuples: copied cheaply)
        self.overlays: dict[int, tuple[int, ...]] = {}
        # uid of the monster whose manual position change (the idle command's "change position")
        # is being played: only its first MSG_POS_CHANGE is that change. The core's message does not
        # say why a position changed; any other change is an effect's (one resolving in a chain, or
        # one with no chain: Photon Crusher "at the end of the Damage Step", Level Limit - Area B's
        # continuous effect), rule: MP2-POSITION
        self.repositioning: int | None = None
        # each core player's LP as the LP messages left them (the board's LP to begin with): the core's
        # MSG_LPUPDATE (Duel.SetLP: "Halve your opponent's LP", "you lose LP equal to ...") gives
        # the new LP only, and its event says by how much they changed
        self.lp: tuple[int, int] = (0, 0)
        # the core drew from its random number generator on the way here: a die, a coin, a random
        # pick (messages.RANDOM_MESSAGES: `random`, a path replayed on a new duel only, whose
        # generator starts from the same seed: engine.py, _take), or any draw (`drew`, a hand
        # shuffled too: a duel that stood here is no longer pristine once reset)
        self.random = False
        self.drew = False

    def copy(self) -> "Track":
        t = Track.__new__(Track)
        t.swap, t.turn, t.phase, t.step, t.over, t.winner = self.swap, self.turn, self.phase, self.step, self.over, self.winner
        t.field = dict(self.field)
        t.piles = dict(self.piles)
        t.cards = self.cards  # copied on write (tokens)
        t.next_token = self.next_token
        t.chain = [[u, c, p, list(ts), n] for u, c, p, ts, n in self.chain]
        t.building, t.attack, t.in_calc = self.building, (list(self.attack) if self.attack else None), self.in_calc
        t.selecting_attack, t.names, t.last_flip_by = self.selecting_attack, self.names, self.last_flip_by
        t.replaying, t.opp_at_attack, t.marked, t.probe = self.replaying, self.opp_at_attack, self.marked, None
        t.overlays = dict(self.overlays)
        t.repositioning = self.repositioning
        t.lp = self.lp
        t.random, t.drew = self.random, self.drew
        return t

    # -- names and places ---------------------------------------------------------------------

    def bp(self, core_player: int) -> int:
        return core_player ^ self.swap

    def name(self, uid: int | None) -> str | None:
        if uid is None:
            return None
        code = self.cards[uid][0]
        return self.names(code)

    def at(self, con: int, loc: int, seq: int) -> int | None:
        if loc in (K.LOCATION_MZONE, K.LOCATION_SZONE):
            return self.field.get((con, loc, seq))
        pile = self.piles.get((con, loc))
        if pile is not None and 0 <= seq < len(pile):
            return pile[seq]
        return None

    def take(self, con: int, loc: int, seq: int, code: int | None = None) -> int | None:
        if loc in (K.LOCATION_MZONE, K.LOCATION_SZONE):
            return self.field.pop((con, loc, seq), None)
        pile = self.piles.get((con, loc))
        if pile is None:
            return None
        if code is not None and not (0 <= seq < len(pile) and self.cards[pile[seq]][0] == code):
            # the core renumbers a pile as cards leave it; go by the passcode, nearest first
            same = sorted((abs(i - seq), i) for i, u in enumerate(pile) if self.cards[u][0] == code)
            if not same:
                return None
            seq = same[0][1]
        if 0 <= seq < len(pile):
            self.piles[(con, loc)] = pile[:seq] + pile[seq + 1 :]
            return pile[seq]
        return None

    def put(self, uid: int, con: int, loc: int, seq: int) -> None:
        if loc in (K.LOCATION_MZONE, K.LOCATION_SZONE):
            self.field[(con, loc, seq)] = uid
        elif loc:
            pile = self.piles.get((con, loc), ())
            k = min(seq, len(pile))
            self.piles[(con, loc)] = pile[:k] + (uid,) + pile[k:]

    def monsters_of(self, con: int) -> tuple[int, ...]:
        return tuple(sorted(u for (c, l, _s), u in self.field.items() if c == con and l == K.LOCATION_MZONE))

    def where(self, uid: int) -> tuple[int, int, int] | None:
        for k, u in self.field.items():
            if u == uid:
                return k
        for (c, l), pile in self.piles.items():
            if uid in pile:
                return (c, l, pile.index(uid))
        return None

    # -- messages -> events ---------------------------------------------------------------------

    def set_step(self, step: str, out: list[Event]) -> None:
        """Enter ``step``. Within the Damage Step the core goes through every sub-step in order
        even where it asks nobody (it does not announce them): the ones passed through are
        entered too, in order (the flip sub-step only shows as the flip itself)."""
        if step in DS_ORDER and self.step in DS_ORDER and DS_ORDER.index(step) > DS_ORDER.index(self.step) + 1:
            for mid in DS_ORDER[DS_ORDER.index(self.step) + 1 : DS_ORDER.index(step)]:
                out.append(ev("phase_changed", **{"from": self.step, "to": mid}))
                self.step = mid
        if step != self.step:
            if self.step == "damage_step_during_calculation":
                self.in_calc = False  # damage dealt from now on is an effect's (an Ojama Token destroyed)
                if self.probe is not None:
                    self._marks(out)
            if self.step not in ("draw_phase", "standby_phase"):
                out.append(ev("phase_changed", **{"from": self.step, "to": step}))
            self.step = step

    def advance_damage_step(self, step: str, out: list[Event]) -> None:
        """Enter the Damage-Step sub-step ``step`` unless the duel is already past it: inside the
        Damage Step a step is only ever left forwards (a prompt's lingering timing hint, or the
        old six-step window after the calculation with TIMING_DAMAGE_CAL, processor.cpp:2596, does
        not take it back)."""
        if self.step in DS_ORDER and step in DS_ORDER and DS_ORDER.index(step) < DS_ORDER.index(self.step):
            return
        self.set_step(step, out)

    def probe_marks(self, out: list[Event]) -> None:
        if self.probe is not None:
            self._marks(out)

    def _marks(self, out: list[Event]) -> None:
        """The monsters damage calculation destroyed by battle. The core sends no message when it
        marks them (its damage-step processor sets STATUS_BATTLE_DESTROYED after the calculation,
        before the after-calculation windows); the adapter reads the status from the core
        (``probe``) as the calculation's sub-step ends, and reports them there, as the model does."""
        assert self.probe is not None
        for con, uid in self.probe():
            if uid not in self.marked:
                self.marked = self.marked | {uid}
                out.append(ev("destroyed_by_battle", card=self.name(uid), card_uid=uid, controller=self.bp(con)))

    def feed(self, kind: int, p: bytes, out: list[Event]) -> None:
        """Apply one message; append the bpcheck events it stands for to ``out``."""
        if kind == M.MSG_NEW_PHASE:
            self.phase = int.from_bytes(p[:2], "little")
            self.set_step(PHASE_STEPS.get(self.phase, f"phase_{self.phase:#x}"), out)
        elif kind == M.MSG_NEW_TURN:
            self.turn += 1
        elif kind in M.DRAW_MESSAGES:
            # (a hand of one card is "shuffled" without a draw: player u8, count u32, codes)
            if kind != M.MSG_SHUFFLE_HAND or M.u32(p, 1) > 1:
                self.drew = True
            if kind in M.RANDOM_MESSAGES:
                self.random = True
        elif kind == M.MSG_MOVE:
            self._move(p, out)
        elif kind == M.MSG_DRAW:
            self._draw(p, out)
        elif kind == M.MSG_SWAP:
            l1 = M.loc(p, 4)  # (bytes 0-3: the first card's code)
            l2 = M.loc(p, 18)
            u1, u2 = self.take(*l1[:3]), self.take(*l2[:3])
            if u1 is not None:
                self.put(u1, *l2[:3])
            if u2 is not None:
                self.put(u2, *l1[:3])
            if l1[0] != l2[0] and l1[1] == l2[1] == K.LOCATION_MZONE:  # Creature Swap: each changes control
                for u, a, b in ((u1, l1, l2), (u2, l2, l1)):
                    if u is not None:
                        out.append(ev("control_changed", card=self.name(u), card_uid=u, from_player=self.bp(a[0]), to_player=self.bp(b[0])))
        elif kind == M.MSG_POS_CHANGE:
            code, con, lc, seq, prev, cur = M.U32.unpack_from(p, 0)[0], p[4], p[5], p[6], p[7], p[8]
            uid = self.at(con, lc, seq)
            if uid is None or lc != K.LOCATION_MZONE:
                return  # a Spell/Trap turned face-up to activate: no bpcheck event
            frm, to = position_name(prev), position_name(cur)
            if prev & 0xA and cur & 0x5:
                out.append(ev("flipped", card=self.name(uid), card_uid=uid, by=self._flip_by(), face_up=True))
            else:
                manual = uid == self.repositioning and not self.chain
                if manual:
                    self.repositioning = None  # one manual change per action; what follows is an effect's
                out.append(ev("position_changed", card=self.name(uid), card_uid=uid, **{"from": frm, "to": to}, by="manual" if manual else "effect"))
        elif kind in (M.MSG_SPSUMMONING, M.MSG_SUMMONING):
            # MSG_SUMMONING: a Normal (or Tribute) Summon an effect performs while it resolves
            # ("you can Normal Summon 1 WIND monster": Harpie Dancer); the checker's actions make none
            code = M.u32(p, 0)
            con, lc, seq, pos = M.loc(p, 4)
            uid = self.at(con, lc, seq)
            token = bool(self._type(code) & K.TYPE_TOKEN)
            how = "normal" if kind == M.MSG_SUMMONING else "token" if token else "special"
            out.append(ev("summoned", card=self.name(uid), card_uid=uid, player=self.bp(con), position=position_name(pos), how=how))
        elif kind == M.MSG_CHAINING:
            code = M.u32(p, 0)
            con, lc, seq, _pos = M.loc(p, 4)
            tcon = p[14]
            uid = self.at(con, lc, seq)
            if uid is None:
                raise TrackError(f"MSG_CHAINING for a card the tracker does not hold ({code} at {con}/{lc:#x}/{seq})")
            self.chain.append([uid, code, tcon, [], False])
            self.building = len(self.chain) - 1
        elif kind == M.MSG_BECOME_TARGET:
            n = M.u32(p, 0)
            for k in range(n):
                con, lc, seq, _pos = M.loc(p, 4 + 10 * k)
                uid = self.at(con, lc, seq)
                if self.building is not None and uid is not None:
                    self.chain[self.building][3].append(uid)
        elif kind == M.MSG_CHAINED:
            if self.building is not None:
                uid, code, tcon, targets, _neg = self.chain[self.building]
                out.append(ev("chain_link_added", link=self.building + 1, card=self.name(uid), card_uid=uid,
                              player=self.bp(tcon), targets=tuple(targets), step=self.step))
            self.building = None
        elif kind == M.MSG_CHAIN_SOLVED:
            n = p[0]
            if 1 <= n <= len(self.chain):
                uid, _code, _tcon, _t, neg = self.chain[n - 1]
                out.append(ev("chain_link_resolved", card=self.name(uid), card_uid=uid, negated=neg))
                del self.chain[n - 1 :]
        elif kind in (M.MSG_CHAIN_NEGATED, M.MSG_CHAIN_DISABLED):
            n = p[0]
            if 1 <= n <= len(self.chain):
                link = self.chain[n - 1]
                link[4] = True
                if kind == M.MSG_CHAIN_NEGATED:
                    by = self.name(self.chain[-1][0]) if len(self.chain) > n else None
                    out.append(ev("activation_negated", link=n, card=self.name(link[0]), card_uid=link[0], by=by))
        elif kind == M.MSG_CHAIN_END:
            self.chain = []
            self.building = None
            out.append(ev("chain_resolved"))
        elif kind == M.MSG_ATTACK:
            a = M.loc(p, 0)
            t = M.loc(p, 10)
            au = self.at(*a[:3])
            tu = self.at(*t[:3]) if t[1] else None
            self.attack = [au, tu, False]
            self.selecting_attack = False
            self.opp_at_attack = self.monsters_of(1 - a[0])
            if self.replaying:
                # The core announces the attack again when the turn player continues after a
                # replay (its battle processor with is_replaying_attack: no new attack count, no
                # "attack declared" event raised): the model's replay choice, not a declaration.
                self.replaying = False
                out.append(ev("replay_choice", attacker_uid=au, choice="target" if tu is not None else "direct",
                              target_uid=tu, target=self.name(tu)))
            else:
                out.append(ev("attack_declared", attacker=self.name(au), attacker_uid=au, target=self.name(tu), target_uid=tu,
                              player=self.bp(a[0])))
        elif kind == M.MSG_ATTACK_DISABLED:
            if self.attack:
                out.append(ev("attack_stopped", attacker_uid=self.attack[0], reason="negated"))
                self.attack = None  # a negated attack is over (the core goes back to the battle command)
        elif kind == M.MSG_DAMAGE_STEP_START:
            self.set_step("damage_step_start", out)
        elif kind == M.MSG_HINT:
            if p[0] == HINT_EVENT and self.attack is not None and self.step in DS_ORDER:
                step = DS_HINTS.get(int.from_bytes(p[2:10], "little"))
                if step is not None:
                    self.advance_damage_step(step, out)
        elif kind == M.MSG_BATTLE:
            a = M.loc(p, 0)
            aa = M.u32(p, 10)
            t = M.loc(p, 19)
            da, dd = M.u32(p, 29), M.u32(p, 33)
            self.set_step("damage_step_during_calculation", out)  # MSG_BATTLE is the calculation
            au = self.attack[0] if self.attack else self.at(*a[:3])
            tu = self.attack[1] if self.attack else (self.at(*t[:3]) if t[1] else None)
            if tu is None:
                out.append(ev("damage_calculation", attacker_uid=au, target_uid=None, attacker_atk=aa, target_value=None, target_position=None))
            else:
                tpos = position_name(t[3])
                out.append(ev("damage_calculation", attacker_uid=au, target_uid=tu, attacker_atk=aa,
                              target_value=da if tpos == "attack" else dd, target_position=tpos))
            if self.attack:
                self.attack[2] = True
            self.in_calc = True
        elif kind == M.MSG_DAMAGE:
            player, amount = self.bp(p[0]), M.u32(p, 1)
            self._set_lp(p[0], self.lp[p[0]] - amount)
            if self.in_calc and self.attack:
                out.append(ev("battle_damage", player=player, amount=amount, attacker_uid=self.attack[0], target_uid=self.attack[1]))
            else:
                src = self.name(self.chain[-1][0]) if self.chain else None
                out.append(ev("effect_damage", player=player, amount=amount, card=src))
        elif kind == M.MSG_RECOVER:
            self._set_lp(p[0], self.lp[p[0]] + M.u32(p, 1))
            out.append(ev("lp_gained", player=self.bp(p[0]), amount=M.u32(p, 1)))
        elif kind == M.MSG_PAY_LPCOST:
            self._set_lp(p[0], self.lp[p[0]] - M.u32(p, 1))
            out.append(ev("lp_paid", player=self.bp(p[0]), amount=M.u32(p, 1)))
        elif kind == M.MSG_LPUPDATE:
            # LP set by an effect (Duel.SetLP): a gain, or a loss that is not damage
            new = M.u32(p, 1)
            delta = new - self.lp[p[0]]
            self._set_lp(p[0], new)
            if delta > 0:
                out.append(ev("lp_gained", player=self.bp(p[0]), amount=delta))
            elif delta < 0:
                src = self.name(self.chain[-1][0]) if self.chain else None
                out.append(ev("lp_lost", player=self.bp(p[0]), amount=-delta, card=src))
        elif kind == M.MSG_DAMAGE_STEP_END:
            self.marked = frozenset()
            if self.attack:
                out.append(ev("attack_ended", attacker_uid=self.attack[0], reason="damage_step_over"))
            self.attack = None
            self.in_calc = False
            if self.step in DS_ORDER:
                self.set_step("damage_step_end", out)
            self.set_step("battle_step", out)
        elif kind == M.MSG_WIN:
            w = p[0]
            self.over = True
            self.winner = None if w > 1 else self.bp(w)
            out.append(ev("duel_over", winner=self.winner, reason="lp_zero" if p[1] == 1 else f"core_reason_{p[1]}"))
        if kind in (M.MSG_CHAINING, M.MSG_CHAIN_SOLVING, M.MSG_DAMAGE_STEP_END, M.MSG_MOVE):
            # damage dealt from now on is an effect's: the core deals battle damage before it
            # destroys or moves anything in the calculation (a destruction replacement that deals
            # damage, Vicious Claw's "return this card ... instead. Then, ... inflict 600 damage")
            self.in_calc = False

    def _set_lp(self, core_player: int, lp: int) -> None:
        lps = list(self.lp)
        lps[core_player] = max(lp, 0)  # as the observation has them (the core's may be below 0), rule: LP-ZERO
        self.lp = (lps[0], lps[1])

    def _flip_by(self) -> str:
        return "battle" if self.step.startswith("damage_step") and not self.chain else "effect"

    def _type(self, code: int) -> int:
        return self.names.type_of(code)

    def _draw(self, p: bytes, out: list[Event]) -> None:
        """MSG_DRAW (operations.cpp, draw): player u8, n u32, n x (code u32, position u32). The
        core sends a draw as this message, not as MSG_MOVEs: each card leaves the top of the Deck
        (its last place) for the end of the hand, a card_moved from deck to hand by an effect."""
        con, n = p[0], M.u32(p, 1)
        for k in range(n):
            code = M.u32(p, 5 + 8 * k)
            deck = self.piles.get((con, K.LOCATION_DECK), ())
            uid = self.take(con, K.LOCATION_DECK, len(deck) - 1, code)
            if uid is None:
                raise TrackError(f"MSG_DRAW of {code} by {con}, where the tracker holds no such card in the Deck")
            self.put(uid, con, K.LOCATION_HAND, len(self.piles.get((con, K.LOCATION_HAND), ())))
            out.append(ev("card_moved", card=self.name(uid), card_uid=uid, owner=self.bp(self.cards[uid][1]),
                          **{"from": "deck", "to": "hand"}, reason="effect"))

    def _move(self, p: bytes, out: list[Event]) -> None:
        code = M.u32(p, 0)
        fcon, floc, fseq, fpos = M.loc(p, 4)
        tcon, tloc, tseq, tpos = M.loc(p, 14)
        reason = M.u32(p, 24)
        if floc & K.LOCATION_OVERLAY:  # an Xyz material leaves its monster (detached, or the monster left)
            host = self.at(fcon, floc & ~K.LOCATION_OVERLAY, fseq)
            mats = self.overlays.get(host, ()) if host is not None else ()
            k = fpos if 0 <= fpos < len(mats) and self.cards[mats[fpos]][0] == code else next((i for i, u in enumerate(mats) if self.cards[u][0] == code), None)
            if k is None:
                raise TrackError(f"MSG_MOVE of material {code} from {fcon}/{floc:#x}/{fseq}, where the tracker holds no such material")
            uid = mats[k]
            self.overlays[host] = mats[:k] + mats[k + 1 :]
            if not self.overlays[host]:
                del self.overlays[host]
            floc = K.LOCATION_OVERLAY
        elif floc == 0:  # a new card (a token)
            uid = self.next_token
            self.next_token += 1
            self.cards = dict(self.cards)
            self.cards[uid] = (code, tcon)
        else:
            uid = self.take(fcon, floc, fseq, code)
            if uid is None:
                raise TrackError(f"MSG_MOVE of {code} from {fcon}/{floc:#x}/{fseq}, where the tracker holds no card")
        if tloc & K.LOCATION_OVERLAY:  # attached as a material to the Xyz monster there
            host = self.at(tcon, tloc & ~K.LOCATION_OVERLAY, tseq)
            if host is None:
                raise TrackError(f"MSG_MOVE of {code} under {tcon}/{tloc:#x}/{tseq}, where the tracker holds no monster")
            mats = self.overlays.get(host, ())
            k = min(max(tpos, 0), len(mats))
            self.overlays[host] = mats[:k] + (uid,) + mats[k:]
            tloc = K.LOCATION_OVERLAY
        elif tloc:
            self.put(uid, tcon, tloc, tseq)
        if floc == 0:
            return  # the summon message that follows says it
        if floc == tloc and fcon == tcon and floc not in PILE_LOCS:
            return  # moved within a zone row (a sequence change)
        if floc == tloc == K.LOCATION_MZONE:
            # a monster that changes control (the core's get_control moves it to the other side):
            # it does not leave the field; the model's event for it (docs/model.md)
            out.append(ev("control_changed", card=self.name(uid), card_uid=uid, from_player=self.bp(fcon), to_player=self.bp(tcon)))
            return
        owner = self.bp(self.cards[uid][1])
        frm = "field_zone" if floc == K.LOCATION_SZONE and fseq == 5 else ZONE_NAMES.get(floc, f"loc_{floc:#x}")
        to = "field_zone" if tloc == K.LOCATION_SZONE and tseq == 5 else ZONE_NAMES.get(tloc, f"loc_{tloc:#x}")
        why = move_reason(reason, tloc)
        name = self.name(uid)
        moved = ev("card_moved", card=name, card_uid=uid, owner=owner, **{"from": frm, "to": to}, reason=why)
        if reason & K.REASON_DESTROY and floc in (K.LOCATION_MZONE, K.LOCATION_SZONE) and not reason & K.REASON_BATTLE:
            # one message says both; the destruction first, then the move, as the model tells it.
            # The core's REASON_RULE: destroyed by the game's rules (an Equip Spell whose monster
            # left, a continuous Trap that lost its target), not by an effect
            out.append(ev("destroyed", card=name, card_uid=uid, by="rule" if reason & K.REASON_RULE else "effect"))
        out.append(moved)
        if reason & K.REASON_DESTROY and floc in (K.LOCATION_MZONE, K.LOCATION_SZONE):
            if reason & K.REASON_BATTLE:
                # The core sends battle-destroyed monsters away in the Damage Step's end, which it
                # does not announce otherwise (docs/ocgcore.md)
                if self.step.startswith("damage_step") and self.step != "damage_step_end":
                    moved = out.pop()
                    self.set_step("damage_step_end", out)  # the step change comes before the move
                    out.append(moved)
                if uid not in self.marked:
                    # not seen marked before it left (the core asked nobody in between): said now
                    out.append(ev("destroyed_by_battle", card=name, card_uid=uid, controller=self.bp(fcon)))
                self.marked = self.marked - {uid}
