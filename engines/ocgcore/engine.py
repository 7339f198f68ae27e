"""The EDOPro core as a bpcheck engine (docs/ocgcore.md).

An engine state is a :class:`Node`: the path of responses given to the core from the puzzle's
start, the prompt the core waits on there, the tracker (card identities, chain, attack, step) and
the observation, computed once when the node is reached. The core cannot copy a duel, so a
node's live duel is kept in a bounded LRU cache (``cache_size`` duels); any other node is reached
again by resetting a duel (the puzzle script clears the field) and replaying its path. Evicted
duels are reset and reused; duels beyond the pool are destroyed.

Actions are the core's prompts, grouped the way bpcheck's model names them: an activation and the
cost and target choices the core asks while the link is built (between MSG_CHAINING and
MSG_CHAINED) are one action, ``activate Book of Moon -> Mokey Mokey``; an attack and its target
choice are one action, ``attack Battle Ox -> direct``. The legal actions of a node are therefore
found by playing each choice (:meth:`OcgcoreEngine.legal_actions` computes the children).
"""

from __future__ import annotations

import os
import struct
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

from bpcheck.engines.faults import SystemFault
from bpcheck.engines.interface import Capabilities, EngineRefusal
from bpcheck.model.board import Board
from bpcheck.model.cdb import ATTRIBUTE_NAMES, RACE_NAMES
from bpcheck.model.events import Event, ev
from bpcheck.model.rulesets import DEFAULT_RULESET

from . import core as K
from . import messages as M
from .puzzle import Puzzle, build_puzzle
from .track import PILE_LOCS, Track, TrackError, position_name

# What the core does not say (protocol v2 "unobserved" paths; docs/ocgcore.md explains each).
UNOBSERVED = frozenset(
    {
        "priority",
        "passes",
        "open_windows",
        "chains_in_step",
        "next_uid",
        "lingering",
        "pending_triggers",
        "choice",
        "players[].monsters[].modifiers",
        "players[].monsters[].lingering_modifiers",
        "players[].monsters[].attacks_declared",
        "players[].monsters[].declared_at",
        "players[].monsters[].declared_direct",
        "players[].monsters[].cannot_attack_this_turn",
        "players[].monsters[].flipped_by_battle",
        "players[].monsters[].once_per_turn_used",
        "players[].spells[].linked_monster",
        "players[].field_zone.linked_monster",
        "attack.potential_targets",
        "attack.direct_was_legal",
        "attack.target_was_facedown",
        "attack.replay_pending",
        "attack.battle_ended",
        "chain[].effect",
        "chain[].speed",
        "chain[].card_activation",
        "chain[].cost_info",
    }
)

CAPABILITIES = Capabilities(unobserved=UNOBSERVED, implicit_passes=True, cloning=False, passcodes=True)

MONSTER_QUERY = (K.QUERY_CODE | K.QUERY_POSITION | K.QUERY_TYPE | K.QUERY_LEVEL | K.QUERY_ATTRIBUTE | K.QUERY_RACE
                 | K.QUERY_ATTACK | K.QUERY_DEFENSE | K.QUERY_BASE_ATTACK | K.QUERY_BASE_DEFENSE | K.QUERY_OWNER
                 | K.QUERY_STATUS | K.QUERY_OVERLAY_CARD)
SPELL_QUERY = K.QUERY_CODE | K.QUERY_POSITION | K.QUERY_OWNER | K.QUERY_STATUS | K.QUERY_EQUIP_CARD | K.QUERY_TARGET_CARD
PILE_QUERY = K.QUERY_CODE | K.QUERY_OWNER
PLAYER_NAMES = ("P1", "P2")
SUB_PROMPTS = (M.MSG_SELECT_CARD, M.MSG_SELECT_TRIBUTE, M.MSG_SELECT_UNSELECT_CARD, M.MSG_SELECT_OPTION,
               M.MSG_SELECT_YESNO, M.MSG_SELECT_EFFECTYN, M.MSG_SELECT_POSITION)
# declarations a card asks for ("declare 1 Type", an LP cost in hundreds): inside an action, and
# named in its label, since no event says what was declared
ANNOUNCE_PROMPTS = (M.MSG_ANNOUNCE_RACE, M.MSG_ANNOUNCE_ATTRIB, M.MSG_ANNOUNCE_NUMBER, M.MSG_ANNOUNCE_CARD)
PARSE_CACHE = 4096  # distinct location replies kept parsed
OBS_CACHE = 4096  # distinct observations kept built (a few KB each)
SCRIPT_PROMPTS = SUB_PROMPTS + ANNOUNCE_PROMPTS + (M.MSG_SELECT_PLACE, M.MSG_SELECT_DISFIELD, M.MSG_ROCK_PAPER_SCISSORS)  # questions card scripts ask
_DECLARABLE: dict[tuple, list[int]] = {}  # (database, ANNOUNCE_CARD opcodes) -> its first declarable passcodes
# Run before each puzzle: the core keeps a card's script table (the Lua global cPASSCODE) across
# ReloadFieldBegin and loads the script only when that global is nil (interpreter.cpp,
# load_card_script), so on a reset duel a script's own state survived its last game: the counters of
# Concentrating Current (s[0], s[1]), and the global_check flag of aux.GlobalCheck (203 scripts),
# which then did not register its global effects again, though the reset had deleted them. Every
# card script is loaded afresh instead, as on a new duel.
FORGET_CARD_SCRIPTS = 'for k in pairs(_G) do if type(k) == "string" and k:match("^c%d+$") then _G[k] = nil end end'
SUMMONED_STATUS = (K.STATUS_SUMMON_TURN | K.STATUS_SPSUMMON_TURN | K.STATUS_FLIP_SUMMON_TURN | K.STATUS_SPSUMMON_STEP
                   | K.STATUS_SUMMONING)
RPS_HANDS = ("scissors", "rock", "paper")  # the core's answers 1, 2, 3 to MSG_ROCK_PAPER_SCISSORS
MAX_AUTO = 200  # automatic answers in a row before the adapter calls the core stuck


def default_paths(project_root: str | None = None) -> tuple[str, str, str]:
    """OCGCORE, OCG_SCRIPTS and OCG_CARDS, defaulting to ``../shared/ocgcore/`` beside the project:
    beside `project_root` when given, else beside the working directory (the project root, as the
    README runs bpcheck), else beside the source checkout of an editable install."""
    if project_root is not None:
        roots = [project_root]
    else:
        roots = [os.getcwd(), os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
    candidates = [os.path.normpath(os.path.join(r, "..", "shared", "ocgcore")) for r in roots]
    shared = next((c for c in candidates if os.path.exists(os.path.join(c, "libocgcore.so"))), candidates[0])
    return (
        os.environ.get("OCGCORE") or os.path.join(shared, "libocgcore.so"),
        os.environ.get("OCG_SCRIPTS") or os.path.join(shared, "scripts"),
        os.environ.get("OCG_CARDS") or os.path.join(shared, "cards.cdb"),
    )


@dataclass(frozen=True)
class OcgAction:
    """One choice offered by the core (possibly several prompts answered in a row)."""

    kind: str
    player: int
    label: str
    responses: tuple[bytes, ...] = field(repr=False, default=())
    prompt: str = ""
    card_uid: int | None = None
    target: int | None = None
    targets: tuple[int, ...] = ()
    cost: tuple[int, ...] = ()
    option: str | None = None  # a replay's "call_off" or "direct", as the model's replay actions say

    def to_dict(self) -> dict:
        """The action record, with the fields of the model's actions (docs/model.md) the core's
        answer determines, plus the core's prompt it answered."""
        d: dict[str, Any] = {"kind": self.kind, "player": self.player, "label": self.label, "prompt": self.prompt}
        for k in ("card_uid", "target"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.targets:
            d["targets"] = list(self.targets)
        if self.cost:
            d["cost"] = list(self.cost)
        if self.option is not None:
            d["option"] = self.option
        return d


class Node:
    """An engine state (opaque to the checker)."""

    __slots__ = ("path", "prompt", "track", "obs", "terminal", "children", "__weakref__")

    def __init__(self, path: tuple, prompt: M.Prompt | None, track: Track, terminal: bool) -> None:
        self.path = path
        self.prompt = prompt
        self.track = track
        self.terminal = terminal
        self.obs: dict | None = None
        # label -> [action, child, events]. A child is held strongly until the checker takes it
        # (apply), then weakly: the checker owns the states it keeps, and a parent never keeps its
        # subtree alive (that would hold every state ever explored). A child the checker let go
        # is played again if asked for (a counterexample's trace is rebuilt by re-applying).
        self.children: dict[str, list] | None = None


class CardNames:
    """passcode -> bpcheck card name (the board's pool names first, then cards.cdb)."""

    def __init__(self, puzzle: Puzzle, cards: K.CardDatabase, board: Board) -> None:
        self.by_code = dict(puzzle.names)
        self.cards = cards
        for name in board.pool.names():
            c = board.pool[name]
            try:
                code = int(c.passcode)
            except (TypeError, ValueError):
                continue
            self.by_code.setdefault(code, name)
        self.pool = board.pool

    def __call__(self, code: int) -> str:
        n = self.by_code.get(code)
        if n is None:
            n = self.cards.names.get(code, f"#{code}")
            self.by_code[code] = n
        return n

    def type_of(self, code: int) -> int:
        return self.cards.type_of(code)


class OcgcoreEngine:
    """``--engine ocgcore[:LIB]``: the real EDOPro core, in process, through ctypes."""

    capabilities = CAPABILITIES

    def __init__(self, library: str | None = None, scripts: str | None = None, cards: str | None = None, cache_size: int = 16, pool_size: int = 8, obs_cache: int = OBS_CACHE, scripts_overlay: str | None = None) -> None:
        # script folders searched before `scripts` (a folder shadowing some cards: bpcheck sweep --scripts-overlay)
        self.scripts_overlay = tuple(f for f in (scripts_overlay or "").split(os.pathsep) if f)
        lib, scr, cdb = default_paths()
        self.library_path = library or lib
        self.scripts = scripts or scr
        self.cards_path = cards or cdb
        self.name = "ocgcore" if library is None else f"ocgcore:{library}"
        self.cache_size = max(1, cache_size)
        self.pool_size = pool_size
        self.obs_cache_size = obs_cache  # 0: every observation built afresh (what the tests compare with)
        self._core: K.CoreLibrary | None = None
        self._cards: K.CardDatabase | None = None
        self._script_cache: dict[str, bytes] = {}
        self._live: OrderedDict[tuple, K.Duel] = OrderedDict()
        self._free: list[K.Duel] = []
        self.puzzle: Puzzle | None = None
        self.board: Board | None = None
        self.observe_extras = False
        self._parse_cache: dict[bytes, list] = {}
        self._obs_cache: OrderedDict[tuple, dict] = OrderedDict()
        self.stats = {"created": 0, "replays": 0, "replayed_steps": 0, "cache_hits": 0, "evicted": 0, "destroyed": 0, "obs_hits": 0, "replayed_children": 0, "replay_mismatch": 0, "random_replays": 0}

    # -- set-up ------------------------------------------------------------------------------

    def _load(self) -> None:
        for path, var in ((self.library_path, "OCGCORE"), (self.scripts, "OCG_SCRIPTS"), (self.cards_path, "OCG_CARDS")):
            if not os.path.exists(path):
                raise EngineRefusal(f"the EDOPro core is not available: {path} not found (set {var})")
        if not os.path.isfile(os.path.join(self.scripts, "utility.lua")):
            raise EngineRefusal(f"{self.scripts} holds no utility.lua (set OCG_SCRIPTS to the CardScripts folder)")
        try:
            self._core = K.CoreLibrary.load(self.library_path)
            self._cards = K.card_database(self.cards_path)  # shared: read once per process
        except K.CoreError as e:
            raise EngineRefusal(str(e)) from None

    def start(self, board: Board) -> Node:
        self.close()
        if self._core is None:
            self._load()
        assert self._cards is not None
        self.board = board
        # a board with Xyz materials, Extra Monster Zones, Pendulum Zones or an Extra Deck, or a
        # card of a card database whose effects may put cards there (any but a plain Normal
        # Monster: a Pendulum monster goes to the Extra Deck, an effect attaches a material), is
        # observed with them (optional paths: docs/observation.md); any other exactly as before
        self.observe_extras = not board.extras.is_empty() or any(c.from_database and not c.effects_known for c in board.pool)
        self.puzzle = build_puzzle(board, self._cards)
        self.names = CardNames(self.puzzle, self._cards, board)
        duel = self._new_duel()
        self._reset(duel)
        track = self._initial_track(duel)
        events: list[Event] = []
        path: list[bytes] = []
        prompt, terminal = self._run(duel, track, events, path, auto_until_main=True)
        node = Node(tuple(path), prompt, track, terminal)
        node.obs = self._observe(duel, node)
        self._put(node.path, duel)
        return node

    def _attack_not_cancelled(self, duel: K.Duel, track: Track, prompt) -> bool:
        """At a battle command with an attack under way (the core dropped it without a message),
        whether the attacker, still on the field, lacks the core's STATUS_ATTACK_CANCELED: then
        the core dropped it as a replay (the status stays until the next declaration,
        processor.cpp:1928), not as a stop."""
        if prompt.kind != M.MSG_SELECT_BATTLECMD or track.attack is None:
            return False
        w = track.where(track.attack[0])
        if w is None or w[1] != K.LOCATION_MZONE:
            return False
        q = duel.query_location(w[0], K.LOCATION_MZONE, K.QUERY_CODE | K.QUERY_STATUS)
        card = q[w[2]] if w[2] < len(q) else None
        return card is not None and not card.get(K.QUERY_STATUS, 0) & K.STATUS_ATTACK_CANCELED

    @property
    def stores_replays(self) -> bool:
        """Whether the duel stores replays (DUEL_STORE_ATTACK_REPLAYS: ruleset goat)."""
        return self.puzzle is not None and bool(self.puzzle.flags & K.DUEL_STORE_ATTACK_REPLAYS)

    @property
    def ruleset(self) -> str:
        """The name of the ruleset the current board is played under: the core gets its duel
        flags (model/rulesets.py core_duel_flags, set by the puzzle: puzzle.py)."""
        return (self.board.ruleset if self.board is not None else None) or DEFAULT_RULESET

    def _new_duel(self) -> K.Duel:
        assert self._core is not None and self._cards is not None and self.puzzle is not None
        d = K.Duel(self._core, self._cards, self.scripts, self.puzzle.flags | K.DUEL_PSEUDO_SHUFFLE, lp=self.puzzle.lp, script_cache=self._script_cache, overlay=self.scripts_overlay)
        if not (d.load_script_file("constant.lua") and d.load_script_file("utility.lua")):
            d.close()
            raise EngineRefusal(f"the core could not load constant.lua / utility.lua from {self.scripts}")
        self.stats["created"] += 1
        return d

    def _reset(self, duel: K.Duel) -> None:
        """Put the puzzle on a duel (ReloadFieldBegin clears whatever was there) and start it."""
        assert self.puzzle is not None
        duel.log.clear()
        duel.dirty = False
        duel.pristine = not duel.drew  # the generator where the seed puts it, unless it drew before
        duel.messages()
        if not duel.load_source(FORGET_CARD_SCRIPTS, "bpcheck-reset.lua"):
            raise EngineRefusal("the core refused to forget its card scripts: " + "; ".join(duel.log[-3:]))
        if not duel.load_source(self.puzzle.lua, "bpcheck-puzzle.lua"):
            raise EngineRefusal("the core refused the puzzle: " + "; ".join(duel.log[-3:]))
        if duel.missing_cards:
            raise EngineRefusal(f"cards missing from {self.cards_path}: {sorted(set(duel.missing_cards))}")
        duel.start()

    def _initial_track(self, duel: K.Duel) -> Track:
        """Give every card the core placed its board uid (matching by place, piles by passcode)."""
        pz = self.puzzle
        assert pz is not None
        t = Track(pz.swap, self.names)
        t.lp = (pz.lp[0], pz.lp[1])
        for (con, loc, seq), (uid, code, _name) in pz.field.items():
            t.field[(con, loc, seq)] = uid
            t.cards[uid] = (code, con)
        for con in (0, 1):
            for loc in PILE_LOCS:
                q = duel.query_location(con, loc, PILE_QUERY)
                want = list(pz.piles.get((con, loc), []))
                pile = []
                for card in q:
                    if card is None:
                        continue
                    code = card.get(K.QUERY_CODE)
                    k = next((i for i, w in enumerate(want) if w[1] == code), None)
                    if k is None:
                        raise EngineRefusal(f"the core put card {code} in a pile the board does not have it in")
                    uid = want.pop(k)[0]
                    pile.append(uid)
                    t.cards[uid] = (code, card.get(K.QUERY_OWNER, con))
                t.piles[(con, loc)] = tuple(pile)
        # Owners of field cards as the core has them
        for (con, loc, seq), uid in t.field.items():
            pass
        extras = self.board.extras  # type: ignore[union-attr]
        for bp in (0, 1):
            st = self.board.state.players[bp]  # type: ignore[union-attr]
            for m in list(st.monsters) + list(extras.extra_monsters[bp]):
                if m is not None:
                    t.cards[m.uid] = (t.cards[m.uid][0], m.owner ^ pz.swap)
            for s in list(st.spells) + [st.field_zone] + list(extras.pendulum[bp]):
                if s is not None:
                    t.cards[s.uid] = (t.cards[s.uid][0], s.owner ^ pz.swap)
        # Xyz materials, in the core's order under each Xyz monster (checked against the core)
        for host, mats in pz.overlays.items():
            t.overlays[host] = tuple(u for u, _c, _n, _o in mats)
            for u, code, _n, owner in mats:
                t.cards[u] = (code, owner)
            where = t.where(host)
            q = duel.query_location(where[0], K.LOCATION_MZONE, K.QUERY_CODE | K.QUERY_OVERLAY_CARD)[where[2]] if where else None
            got = q.get(K.QUERY_OVERLAY_CARD) if q else None
            if got != [code for _u, code, _n, _o in mats]:
                raise EngineRefusal(f"the core did not put the materials of {t.name(host)!r} under it ({got} instead of {[code for _u, code, _n, _o in mats]})")
        return t

    # -- live duels ----------------------------------------------------------------------------

    def _put(self, path: tuple, duel: K.Duel, dirty: bool = False) -> None:
        """Cache the duel standing at ``path``. ``dirty``: it stands at a question a card script
        asks (a target, a cost, a choice while resolving): the script's Lua coroutine is suspended
        there, and the core's interpreter keeps it across ReloadFieldBegin, so a reset of that duel
        is not a new duel (a later call finds the stale coroutine: "recursive event trigger
        detected", 000-replay-6, findings F17). Such a duel is destroyed, never reset."""
        duel.dirty = dirty
        old = self._live.pop(path, None)
        if old is not None and old is not duel:
            self._retire(old)
        self._live[path] = duel
        while len(self._live) > self.cache_size:
            _p, d = self._live.popitem(last=False)
            self.stats["evicted"] += 1
            self._retire(d)

    def _retire(self, duel: K.Duel) -> None:
        if duel.dirty:
            duel.close()
            self.stats["destroyed"] += 1
        elif len(self._free) < self.pool_size:
            self._free.append(duel)
        else:
            duel.close()
            self.stats["destroyed"] += 1

    def _take(self, path: tuple, track: Track | None = None) -> K.Duel:
        """A duel standing at ``path``: the cached one (removed from the cache) or a replay.

        A replay on a duel used before (reset with the puzzle) can come out different from one
        on a new duel: on ``rule-ch-qp-hand`` the core's hand held its two cards in the other
        order after some replays, so the prompt's hand positions named the other card (findings
        F26). With ``track`` (what the adapter knows of the state at ``path``), a replay on a used
        duel is checked against it (the cards in each pile, in order) and done again on a new
        duel when they differ. (Every pile is compared: on the boards tried, only that hand ever
        differed, 320 of 982 replays; the others, 2,920 replays on four boards, never.)"""
        d = self._live.pop(path, None)
        if d is not None:
            self.stats["cache_hits"] += 1
            return d
        if track is not None and track.random:
            # the core drew a random number on the way (a die, a coin): a reset duel's generator
            # goes on from where its last game left it, a new duel's starts from the seed, as the
            # first play of this path did (on a pristine duel: _play), so the replay draws the same
            self.stats["random_replays"] += 1
            d = self._new_duel()
            self._reset(d)
            self._replay(d, path)
            d.drew = True
            return d
        d, fresh = self._blank_duel()
        self._replay(d, path)
        if track is not None and track.drew:
            d.drew = True
        if not fresh and track is not None and not self._piles_match(d, track):
            self.stats["replay_mismatch"] += 1
            d.close()
            d = self._new_duel()
            self._reset(d)
            self._replay(d, path)
        return d

    def _piles_match(self, d: K.Duel, track: Track) -> bool:
        """The core's hand, Graveyard, banished pile, Deck and Extra Deck of both players hold the
        cards the adapter's tracker has there, in the same order."""
        for con in (0, 1):
            for loc in PILE_LOCS:
                want = [track.cards[u][0] for u in track.piles.get((con, loc), ())]
                got = [c.get(K.QUERY_CODE) for c in d.query_location(con, loc, PILE_QUERY) if c is not None]
                if got != want:
                    return False
        return True

    def _blank_duel(self) -> tuple[K.Duel, bool]:
        """A duel reset with the puzzle, and whether it is new (never used before)."""
        fresh = False
        if self._free:
            d = self._free.pop()
        elif len(self._live) < self.cache_size:
            d = self._new_duel()  # the cache is not full yet: one more live duel
            fresh = True
        else:
            _p, d = self._live.popitem(last=False)  # reuse the least recently used one
            self.stats["evicted"] += 1
            if d.dirty:
                d.close()
                self.stats["destroyed"] += 1
                d = self._new_duel()
                fresh = True
        self._reset(d)
        return d, fresh

    def _replay(self, d: K.Duel, path: tuple) -> None:
        self.stats["replays"] += 1
        self.stats["replayed_steps"] += len(path)
        for resp in path:
            if not self._process_quiet(d):
                raise SystemFault("engine-fault", "the core ended the duel while an action path was replayed (non-deterministic core?)")
            d.respond(resp)
        if not self._process_quiet(d):
            raise SystemFault("engine-fault", "the core ended the duel while an action path was replayed (non-deterministic core?)")

    @staticmethod
    def _process_quiet(d: K.Duel) -> bool:
        """Process to the next prompt, ignoring the messages (a replay: they were read when the
        path was first played). OCG_DuelProcess clears the message buffer itself, so the messages
        of a replay need not be fetched."""
        process = d.process
        while True:
            st = process()
            if st == K.STATUS_AWAITING:
                return True
            if st == K.STATUS_END:
                return False

    # -- running the core ----------------------------------------------------------------------

    def _run(self, duel: K.Duel, track: Track, events: list[Event], path: list[bytes], auto_until_main: bool = False) -> tuple[M.Prompt | None, bool]:
        """Process until a prompt the checker must answer (or the duel's end, or the End Phase).
        Prompts the adapter answers itself (zones, the Draw and Standby Phases before the board's
        Main Phase 1) are answered here and appended to ``path``."""
        track.probe = lambda: self._battle_marked(duel, track)
        try:
            return self._run_to_prompt(duel, track, events, path, auto_until_main)
        finally:
            track.probe = None
            if track.drew:
                duel.drew = True

    @staticmethod
    def _battle_marked(duel: K.Duel, track: Track) -> list[tuple[int, int]]:
        """(core controller, uid) of each monster the core shows destroyed by battle now."""
        out = []
        for con in (0, 1):
            for seq, q in enumerate(duel.query_location(con, K.LOCATION_MZONE, K.QUERY_CODE | K.QUERY_STATUS)[:7]):
                if q and q.get(K.QUERY_STATUS, 0) & K.STATUS_BATTLE_DESTROYED:
                    uid = track.at(con, K.LOCATION_MZONE, seq)
                    if uid is not None:
                        out.append((con, uid))
        return out

    def _run_to_prompt(self, duel: K.Duel, track: Track, events: list[Event], path: list[bytes], auto_until_main: bool) -> tuple[M.Prompt | None, bool]:
        for _ in range(MAX_AUTO):
            prompt = None
            while True:
                st = duel.process()
                if track.step == "damage_step_during_calculation" and track.attack is not None and track.attack[2]:
                    # after the calculation, before whatever the core does next (a trigger may
                    # follow at once, with no step the adapter could see end): the marks it set
                    track.probe_marks(events)
                for kind, p in duel.messages():
                    if kind == M.MSG_RETRY:
                        raise SystemFault("engine-fault", "the core rejected a response (MSG_RETRY): " + self._log_tail(duel))
                    if kind in M.PROMPTS:
                        prompt = M.parse_prompt(kind, p)
                    else:
                        try:
                            track.feed(kind, p, events)
                        except TrackError as e:
                            raise SystemFault("engine-fault", f"the adapter lost track of a card: {e}") from None
                        if track.over or (track.phase == K.PHASE_END and not auto_until_main):
                            return None, True  # the End Phase (or the duel's end) is terminal, as in the model
                if st != K.STATUS_CONTINUE:
                    break
            if st == K.STATUS_END or track.over:
                return None, True
            if prompt is None:
                raise SystemFault("engine-fault", "the core awaits a response without a prompt")
            infer_step(track, prompt, events, self.stores_replays and self._attack_not_cancelled(duel, track, prompt))
            if is_replay_question(prompt, track):
                a = track.attack
                assert a is not None
                # The core asks because the opponent's monsters changed since the attack was
                # announced, or because its target is no longer a valid one (its battle processor's
                # attack_rollback); the tracker tells which.
                changed = track.monsters_of(1 - prompt.player) != track.opp_at_attack
                events.append(ev("replay", attacker_uid=a[0], reason="targets_changed" if changed else "attack_illegal"))
            auto = self._auto_response(prompt, track, auto_until_main)
            if auto is None:
                return prompt, False
            duel.respond(auto)
            path.append(auto)
        raise SystemFault("engine-fault", f"the core asked {MAX_AUTO} automatic questions in a row")

    def _auto_response(self, pr: M.Prompt, track: Track, before_main: bool) -> bytes | None:
        if before_main and track.phase in (0, K.PHASE_DRAW, K.PHASE_STANDBY):
            return self._setup_response(pr, track)
        if pr.kind in (M.MSG_SELECT_PLACE, M.MSG_SELECT_DISFIELD):
            places = M.free_places(pr)
            if len(places) < pr.place_count:
                raise SystemFault("engine-fault", "SELECT_PLACE with fewer free zones than it asks for")
            return M.place_response(places[: pr.place_count])
        if pr.kind == M.MSG_SORT_CHAIN or pr.kind == M.MSG_SORT_CARD:
            return bytes([0xFF])
        return None

    def _setup_response(self, pr: M.Prompt, track: Track) -> bytes:
        """The fixed answer to a question the core asks in the Draw or Standby Phase, before the
        board's Main Phase 1 (docs/ocgcore.md, "The turn's start"). The board is the state at Main
        Phase 1, so the turn's start is set-up, not explored: an optional trigger is declined
        (SELECT_CHAIN: pass; SELECT_EFFECTYN: no), a mandatory one activated (a forced SELECT_CHAIN:
        the first the core lists), a maintenance question answered "yes" (SELECT_YESNO: pay the cost,
        so the card stays where the board puts it), and any other question a card script asks while
        such a trigger resolves gets its first answer in the adapter's order (the first card(s), the
        first option, the first declaration); zones as everywhere (the lowest free zone)."""
        if pr.kind == M.MSG_SELECT_CHAIN:
            return M.int_response(0 if pr.forced and pr.chains else -1)
        if pr.kind == M.MSG_SELECT_EFFECTYN:
            return M.int_response(0)
        if pr.kind == M.MSG_SELECT_YESNO:
            return M.int_response(1)
        if pr.kind in (M.MSG_SELECT_PLACE, M.MSG_SELECT_DISFIELD, M.MSG_SORT_CHAIN, M.MSG_SORT_CARD):
            auto = self._auto_response(pr, track, False)
            assert auto is not None
            return auto
        if pr.kind in SCRIPT_PROMPTS:
            try:
                options = self._choice_options(track, pr, inside=True)
            except SystemFault:
                options = []
            if options:
                return options[0][2]
        raise EngineRefusal(f"the core asks {pr.name} before the board's Main Phase 1, which the adapter cannot answer there")

    @staticmethod
    def _log_tail(d: K.Duel) -> str:
        return "; ".join(d.log[-3:]) or "(no core log)"

    # -- names -------------------------------------------------------------------------------

    def _ref(self, track: Track, uid: int | None, places: dict | None = None) -> str:
        """A card's name, made unique with its place the way the reference model does."""
        if uid is None:
            return "direct"
        name = track.name(uid)
        same = [u for u in self._all_uids(track) if track.name(u) == name]
        if len(same) <= 1:
            return name
        loc = self._where(track, uid)
        clash = [u for u in same if self._where(track, u) == loc]
        if len(clash) > 1:
            return f"{name} [{loc} #{sorted(clash).index(uid) + 1}]"
        return f"{name} [{loc}]"

    @staticmethod
    def _all_uids(track: Track):
        yield from track.field.values()
        for pile in track.piles.values():
            yield from pile

    def _where(self, track: Track, uid: int) -> str:
        w = track.where(uid)
        if w is None:
            host = next((h for h, mats in track.overlays.items() if uid in mats), None)
            return f"material of {self._where(track, host)}" if host is not None else "gone"
        con, loc, seq = w
        bp = PLAYER_NAMES[track.bp(con)]
        if loc == K.LOCATION_MZONE:
            return f"{bp} EMZ{seq - 4}" if seq >= 5 else f"{bp} M{seq + 1}"
        if loc == K.LOCATION_SZONE:
            return f"{bp} FZ" if seq == 5 else f"{bp} S{seq + 1}"
        return f"{bp} {dict(((K.LOCATION_HAND, 'hand'), (K.LOCATION_GRAVE, 'graveyard'), (K.LOCATION_REMOVED, 'banished'), (K.LOCATION_DECK, 'deck'))).get(loc, 'extra')}"

    def _card_ref(self, track: Track, con: int, loc: int, seq: int) -> tuple[str, int | None]:
        uid = track.at(con, loc, seq)
        if uid is None:
            return "?", None
        return self._ref(track, uid), uid

    # -- actions -----------------------------------------------------------------------------

    def _top_options(self, node: Node) -> list[tuple[str, str, bytes, str | None]]:
        """(kind, label, response, card) for each answer to the node's prompt."""
        pr, t = node.prompt, node.track
        assert pr is not None
        out: list[tuple[str, str, bytes, str | None]] = []
        if pr.kind == M.MSG_SELECT_IDLECMD:
            main1 = t.phase == K.PHASE_MAIN1
            if main1 and pr.to_bp:
                out.append(("enter_bp", "enter Battle Phase", M.int_response(6), None))
            if pr.to_ep:
                out.append(("skip_bp" if main1 else "end_turn", "skip Battle Phase" if main1 else "end turn", M.int_response(7), None))
            if not main1:
                for i, (code, con, lc, seq) in enumerate(pr.repositionable):
                    mon = node.obs["players"][t.bp(con)]["monsters"][seq] if node.obs and seq < 5 else None
                    if mon is not None and mon["position"].startswith("facedown"):
                        continue  # turning a face-down monster face-up is a Flip Summon: left out, as in the model
                    ref, u = self._card_ref(t, con, lc, seq)
                    out.append(("change_position", f"change position {ref}", M.int_response((i << 16) | 2), u))
            for i, ch in enumerate(pr.chains):
                ref, u = self._card_ref(t, ch[1], ch[2], ch[3])
                out.append(("activate", f"activate {ref}", M.int_response((i << 16) | 5), u))
        elif pr.kind == M.MSG_SELECT_BATTLECMD:
            if pr.to_m2:
                out.append(("pass", "end Battle Phase", M.int_response(2), None))
            for i, (code, con, lc, seq, _direct) in enumerate(pr.attackers):
                ref, u = self._card_ref(t, con, lc, seq)
                out.append(("attack", f"attack {ref}", M.int_response((i << 16) | 1), u))
            for i, ch in enumerate(pr.chains):
                ref, u = self._card_ref(t, ch[1], ch[2], ch[3])
                out.append(("activate", f"activate {ref}", M.int_response(i << 16), u))
        elif pr.kind == M.MSG_SELECT_CHAIN:
            if not pr.forced:
                out.append(("pass", "pass", M.int_response(-1), None))
            for i, ch in enumerate(pr.chains):
                ref, u = self._card_ref(t, ch[1], ch[2], ch[3])
                out.append(("trigger" if pr.forced else "activate", f"activate {ref}", M.int_response(i), u))
        elif pr.kind == M.MSG_SELECT_EFFECTYN and pr.description in TRIGGER_QUESTIONS:
            code, con, lc, seq, _pos = pr.cards[0]
            ref, u = self._card_ref(t, con, lc, seq)
            out.append(("trigger", f"activate {ref}", M.int_response(1), u))
            out.append(("decline", f"decline {ref}", M.int_response(0), u))
        elif is_replay_question(pr, t):
            # the core's "replay or not" question (SELECT_YESNO, string 30) to the turn player
            au = t.attack[0]  # type: ignore[index]
            out.append(("replay", "replay: attack", M.int_response(1), au))
            out.append(("replay", "replay: call off", M.int_response(0), au))
        else:
            out.extend(self._choice_options(node.track, pr))
        return out

    def _choice_options(self, t: Track, pr: M.Prompt, inside: bool = False) -> list[tuple[str, str, bytes, str | None]]:
        """The answers to a choice prompt. ``inside`` an action (its costs and targets, an attack's
        target) the core's "cancel" is not offered: cancelling takes the action back, which bpcheck's
        actions do not model (the action is simply not chosen)."""
        out: list[tuple[str, str, bytes, str | None]] = []
        if pr.kind == M.MSG_SELECT_YESNO:
            out.append(("choose", f"choose yes ({pr.description})", M.int_response(1), None))
            out.append(("choose", f"choose no ({pr.description})", M.int_response(0), None))
        elif pr.kind == M.MSG_SELECT_EFFECTYN:
            code, con, lc, seq, _pos = pr.cards[0]
            ref, _u = self._card_ref(t, con, lc, seq)
            out.append(("choose", f"choose yes: {ref}", M.int_response(1), ref))
            out.append(("choose", f"choose no: {ref}", M.int_response(0), ref))
        elif pr.kind == M.MSG_SELECT_OPTION:
            for i, d in enumerate(pr.options):
                # named by the card's own string where the database has it ("Half or Nothing":
                # "choose End the Battle Phase", as the reference model's choose_one labels)
                words = self._cards.string(d) if self._cards is not None else None
                out.append(("choose", f"choose {words}" if words else f"choose option {d}", M.int_response(i), None))
        elif pr.kind in (M.MSG_SELECT_CARD, M.MSG_SELECT_TRIBUTE):
            refs = [self._card_ref(t, c[1], c[2], c[3])[0] for c in pr.cards]
            lo, hi = max(pr.minimum, 1), max(pr.maximum, 1)
            for k in range(lo, min(hi, len(refs)) + 1):
                for combo in combinations(range(len(refs)), k):
                    label = "choose " + ", ".join(refs[i] for i in combo)
                    out.append(("choose", label, M.cards_response(list(combo)), None))
            if (pr.cancelable and not inside) or pr.minimum == 0:
                out.append(("choose", "choose nothing", M.int_response(-1), None))
        elif pr.kind == M.MSG_SELECT_UNSELECT_CARD:
            for i, c in enumerate(pr.cards + pr.unselect):
                ref = self._card_ref(t, c[1], c[2], c[3])[0]
                out.append(("choose", f"choose {ref}", M.unselect_response(i), None))
            if pr.finishable or (pr.cancelable and not inside):
                out.append(("choose", "choose finish", M.unselect_response(None), None))
        elif pr.kind == M.MSG_SELECT_POSITION:
            for bit in (K.POS_FACEUP_ATTACK, K.POS_FACEDOWN_ATTACK, K.POS_FACEUP_DEFENSE, K.POS_FACEDOWN_DEFENSE):
                if pr.positions & bit:
                    out.append(("choose", f"choose {position_name(bit)}", M.int_response(bit), None))
        elif pr.kind in (M.MSG_ANNOUNCE_RACE, M.MSG_ANNOUNCE_ATTRIB):
            # "declare 1 Type / Attribute" (The Regulation of Tribe, Archnemesys Protos): every
            # choice of `count` of the available bits, named as the card data names them
            race = pr.kind == M.MSG_ANNOUNCE_RACE
            names = dict(RACE_NAMES if race else ATTRIBUTE_NAMES)
            bits = [1 << i for i in range(64) if pr.available >> i & 1]
            for combo in combinations(bits, pr.count):
                label = ", ".join(names.get(b, f"0x{b:x}") for b in combo)
                mask = sum(combo)
                resp = M.race_response(mask) if race else M.attribute_response(mask)
                out.append(("choose", f"declare {'Type' if race else 'Attribute'} {label}", resp, None))
        elif pr.kind == M.MSG_ANNOUNCE_NUMBER:
            for i, n in enumerate(pr.options):
                out.append(("choose", f"declare {n}", M.int_response(i), None))
        elif pr.kind == M.MSG_ANNOUNCE_CARD:
            # "declare 1 card name" (Cloak and Dagger, Great Phantom Thief): a bounded candidate
            # set, docs/ocgcore.md: every card of the duel the filter allows, then the first card of
            # the database (by passcode) outside the duel that it allows, standing for "a name not
            # in this duel"; each named by the card declared
            for code in self._declarable_names(t, pr.options):
                out.append(("choose", f"declare {self._cards.names.get(code, code) if self._cards else code}", M.card_response(code), None))
        elif pr.kind == M.MSG_ROCK_PAPER_SCISSORS:
            # Duel.RockPaperScissors (Transmission Gear): the core asks each player in turn for a
            # hand, answered 1 to 3 (playerop.cpp, RockPaperScissors); a choice of that player
            for n, hand in enumerate(RPS_HANDS, 1):
                out.append(("choose", f"choose {hand}", M.int_response(n), None))
        else:
            raise SystemFault("engine-fault", f"the core asks {pr.name}, which the adapter cannot answer")
        return out

    def _declarable_names(self, t: Track, opcodes: list[int]) -> list[int]:
        """The passcodes an ANNOUNCE_CARD with these opcodes is answered with: the duel's cards
        (the tracker's, and the card an alternate artwork is an alias of) that the core would
        accept, by passcode, then the first card of the database outside the duel that it would
        accept (none when there is none)."""
        db = self._cards
        if db is None:
            return []

        def ok(code: int) -> bool:
            row = db.rows.get(code)
            if row is None:
                return False
            alias, setcode, typ, _level, attr, race = row[:6]
            setcodes = [(setcode >> (16 * i)) & 0xFFFF for i in range(4) if (setcode >> (16 * i)) & 0xFFFF]
            return M.declarable(code, alias, setcodes, typ, race, attr, opcodes)

        in_duel = set()
        for code, _owner in t.cards.values():
            in_duel.add(code)
            alias = db.rows.get(code, (0,))[0]
            if alias:
                in_duel.add(alias)
        out = sorted(c for c in in_duel if ok(c))
        key = (db.path, tuple(opcodes))
        order = _DECLARABLE.get(key)
        if order is None:
            order = _DECLARABLE[key] = [c for c in sorted(db.rows) if ok(c)][:64]
            while len(_DECLARABLE) > 64:
                del _DECLARABLE[next(iter(_DECLARABLE))]
        other = next((c for c in order if c not in in_duel), None)
        return out + ([other] if other is not None else [])

    def legal_actions(self, node: Node) -> list[OcgAction]:
        if node.terminal or node.prompt is None:
            return []
        if node.children is None:
            self._expand(node)
            self._expand_forced(node)
        assert node.children is not None
        return [entry[0] for entry in node.children.values()]

    def _expand_forced(self, node: Node, limit: int = 400) -> None:
        """Children with a single answer (the pass-only rounds the core asks) are expanded at once,
        while their duel is live: the explorer will ask for them anyway, and later, in a wide
        breadth-first frontier, their duel would have been evicted and had to be replayed."""
        assert node.children is not None
        work = [e[1] for e in node.children.values() if isinstance(e[1], Node)]
        while work and limit > 0:
            c = work.pop()
            if c.children is not None or c.terminal or c.prompt is None or c.path not in self._live:
                continue
            try:
                if len(self._top_options(c)) != 1:
                    continue
            except SystemFault:
                continue
            self._expand(c)
            limit -= 1
            work.extend(e[1] for e in c.children.values() if isinstance(e[1], Node))  # type: ignore[union-attr]

    def _expand(self, node: Node) -> None:
        """Play every answer to the node's prompt (and the choices inside each action)."""
        assert node.prompt is not None
        player = node.track.bp(node.prompt.player)
        results: list[tuple[OcgAction, Node, list[Event]]] = []
        for kind, label, resp, uid in self._top_options(node):
            for responses, child, events, declared in self._play(node, resp, kind, uid):
                if (node.prompt.kind == M.MSG_ROCK_PAPER_SCISSORS and child.prompt is not None
                        and child.prompt.kind == M.MSG_ROCK_PAPER_SCISSORS and (node.prompt.player, child.prompt.player) == (1, 0)):
                    # the second hand (core player 1's: the core asks player 0 first) tied with the
                    # first and the core asks player 0 again
                    # (Duel.RockPaperScissors repeats a tie by default): back at the round's
                    # start, the same state, left out (each tie would be one more round, unbounded)
                    continue
                full, target, targets, cost = self._label(kind, label, child, events, responses)
                if declared:
                    full += " (" + "; ".join(declared) + ")"
                option = None
                if kind == "replay":  # the choice the core's answer made (track.py, _play)
                    choice = next((e.get("choice") for e in events if e.kind == "replay_choice"), None)
                    option = choice if choice in ("call_off", "direct") else None
                a = OcgAction(kind, player, full, responses, node.prompt.name, uid if isinstance(uid, int) else None, target, targets, cost,
                              option)
                results.append((a, child, events))
        seen: dict[str, int] = {}
        children: dict[str, Any] = {}
        for a, child, events in results:
            n = seen.get(a.label, 0)
            seen[a.label] = n + 1
            if n:
                a = replace(a, label=f"{a.label} #{n + 1}")
            children[a.label] = [a, child, events]
        node.children = children

    def _play(self, node: Node, resp: bytes, kind: str, uid=None) -> list[tuple[tuple[bytes, ...], Node, list[Event], tuple[str, ...]]]:
        """Answer ``resp`` at ``node``; if the answer opens choices inside the same action (costs,
        targets, an attack target), play each of them too. Returns the resulting nodes."""
        assert node.prompt is not None
        out = []
        first = node.track.copy()
        first.selecting_attack = kind == "attack"
        first.repositioning = uid if kind == "change_position" and isinstance(uid, int) else None
        pre: list[Event] = [ev("passed", player=node.track.bp(node.prompt.player))] if kind == "pass" else []
        if kind == "decline":  # an optional trigger the core offered (SELECT_EFFECTYN), declined
            code, con, lc, seq, _pos = node.prompt.cards[0]
            u = node.track.at(con, lc, seq)
            pre = [ev("trigger_declined", card=node.track.name(u), card_uid=u, player=node.track.bp(node.prompt.player))]
        if kind == "replay":
            au = first.attack[0]  # type: ignore[index]
            if resp == M.int_response(1):
                # continuing: the target choice that follows is part of this action, and the
                # core's new announcement of the attack is the replay choice (track.py)
                first.selecting_attack = first.replaying = True
            else:
                # not continuing: the core ends the attack there and asks for a battle command
                pre = [ev("replay_choice", attacker_uid=au, choice="call_off", target_uid=None),
                       ev("attack_ended", attacker_uid=au, reason="called_off")]
                first.attack = None
        stack: list[tuple[tuple[bytes, ...], Track, list[Event], tuple[str, ...]]] = [((resp,), first, pre, ())]
        while stack:
            responses, before, events_before, declared = stack.pop(0)
            duel = self._take(node.path + responses[:-1], before)
            track = before.copy()
            events = list(events_before)
            path = list(node.path + responses)
            duel.respond(responses[-1])
            prompt, terminal = self._run(duel, track, events, path)
            if track.random and not before.random and not duel.pristine:
                # a die or a coin on a reset duel whose generator had drawn before: played again
                # on a new duel, so that the numbers are the seed's along this path, as every
                # later replay of it draws them (_take)
                self.stats["random_replays"] += 1
                duel.close()
                duel = self._new_duel()
                self._reset(duel)
                self._replay(duel, node.path + responses[:-1])
                track = before.copy()
                events = list(events_before)
                path = list(node.path + responses)
                duel.respond(responses[-1])
                prompt, terminal = self._run(duel, track, events, path)
            so_far = tuple(path[len(node.path) :])
            if not terminal and prompt is not None and (
                    (prompt.kind in SUB_PROMPTS and (track.building is not None or track.selecting_attack))
                    or (prompt.kind in ANNOUNCE_PROMPTS and track.building is not None)):
                # the action goes on: one branch per choice, each from a duel standing here
                self._put(tuple(path), duel, dirty=not track.selecting_attack)
                for _k, lab, r2, _c in self._choice_options(track, prompt, inside=True):
                    stack.append((so_far + (r2,), track, events, declared + ((lab,) if prompt.kind in ANNOUNCE_PROMPTS else ())))
                continue
            track.selecting_attack = False
            track.repositioning = None
            child = Node(tuple(path), prompt, track, terminal)
            child.obs = self._observe(duel, child)
            self._put(child.path, duel, dirty=prompt is not None and not terminal and prompt.kind in SCRIPT_PROMPTS and not is_replay_question(prompt, track))
            out.append((so_far, child, events, declared))
        return out

    def _label(self, kind: str, label: str, child: Node, events: list[Event], responses):
        """The full label of an action (the model's naming: attack targets, activation costs and
        targets) and its target / targets / cost uids, read from what the core did."""
        if kind == "attack":
            for e in events:
                if e.kind == "attack_declared":
                    tu = e.get("target_uid")
                    return f"{label} -> {'direct' if tu is None else self._ref(child.track, tu)}", tu, (), ()
            return f"{label} (no attack)", None, (), ()
        if kind == "replay":
            for e in events:
                if e.kind == "replay_choice":
                    tu = e.get("target_uid")
                    if e.get("choice") == "call_off":
                        return label, None, (), ()
                    return f"{label} {'direct' if tu is None else self._ref(child.track, tu)}", tu, (), ()
            return f"{label} (no attack)", None, (), ()
        costs: list[int] = []
        targets: list[int] = []
        if kind in ("activate", "trigger"):
            costs = [e.get("card_uid") for e in events if e.kind == "card_moved" and e.get("reason") in ("cost", "discard", "tribute")]
            for e in events:
                if e.kind == "chain_link_added":
                    targets = list(e.get("targets") or ())
                    break
            if costs:
                label += " [" + ", ".join(self._ref(child.track, u) for u in costs) + "]"
            if targets:
                label += " -> " + ", ".join(self._ref(child.track, u) for u in targets)
            if len(responses) > 1 and not costs and not targets:
                label += f" (choice {'/'.join(r.hex() for r in responses[1:])})"
        return label, None, tuple(targets), tuple(costs)

    def apply(self, node: Node, action: OcgAction):
        if node.children is None:
            self._expand(node)
        assert node.children is not None
        hit = node.children.get(action.label)
        if hit is None or hit[0].responses != action.responses:
            raise SystemFault("engine-fault", f"{action.label!r} is not an action of this state")
        child = hit[1] if isinstance(hit[1], Node) else hit[1]()
        if child is None:  # taken before and let go by the checker: play the answers again
            self.stats["replayed_children"] += 1
            self._expand(node)
            hit = node.children[action.label]
            child = hit[1]
        hit[1] = weakref.ref(child)
        return child, list(hit[2])

    def state_key(self, node: Node) -> bytes:
        """What tells two states apart beyond the observation (mixed into the fingerprint): the
        core's observation does not show its window bookkeeping, so two states with the same
        observation are one state only if the core asks the same question after as many answers.
        (Without it, the pass rounds the core asks, which look alike, would fold into cycles.)"""
        pr = node.prompt
        head = len(node.path).to_bytes(4, "little")
        return head if pr is None else head + bytes([pr.kind]) + pr.raw

    def observe(self, node: Node) -> dict:
        assert node.obs is not None
        return node.obs

    def is_terminal(self, node: Node) -> bool:
        return node.terminal

    def close(self) -> None:
        for d in list(self._live.values()) + self._free:
            d.close()
        self._live.clear()
        self._free.clear()
        self._obs_cache.clear()  # observations belong to one board

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order varies
        try:
            self.close()
        except Exception:
            pass

    # -- the observation -----------------------------------------------------------------------

    def _parsed(self, raw: bytes) -> list[dict | None]:
        """A location reply parsed, once per distinct reply (replies repeat: on
        boards/000-replay-5.toml 25,538 queries give 136 distinct replies). Read-only."""
        hit = self._parse_cache.get(raw)
        if hit is None:
            if len(self._parse_cache) >= PARSE_CACHE:
                self._parse_cache.clear()
            hit = self._parse_cache[raw] = K.parse_location_query(raw)
        return hit

    def _observe(self, duel: K.Duel, node: Node) -> dict:
        """The observation of a node. The core is asked every time (its replies are the truth:
        a continuous effect changes ATK without any message); the observation is built once per
        distinct (replies, tracker) and shared, read-only, by every node that has the same."""
        t = node.track
        raws = (
            duel.query_location_raw(0, K.LOCATION_MZONE, MONSTER_QUERY),
            duel.query_location_raw(1, K.LOCATION_MZONE, MONSTER_QUERY),
            duel.query_location_raw(0, K.LOCATION_SZONE, SPELL_QUERY),
            duel.query_location_raw(1, K.LOCATION_SZONE, SPELL_QUERY),
            duel.query_field_raw(),
        )
        key = (
            raws,
            t.turn, t.step, t.over, t.winner,
            None if node.terminal or node.prompt is None else node.prompt.player,
            tuple(sorted(t.field.items())),
            tuple(t.piles.items()),
            None if t.attack is None else tuple(t.attack),
            tuple((u, c, p, tuple(ts), n) for u, c, p, ts, n in t.chain),
            tuple((u, t.cards[u]) for u in range(1000, t.next_token)),
            tuple(sorted(t.overlays.items())),
        )
        obs = self._obs_cache.get(key)
        if obs is not None:
            self._obs_cache.move_to_end(key)
            self.stats["obs_hits"] += 1
            return obs
        obs = self._build_observation(t, node, raws)
        if not self.obs_cache_size:
            return obs
        self._obs_cache[key] = obs
        if len(self._obs_cache) > self.obs_cache_size:
            self._obs_cache.popitem(last=False)
        return obs

    def _build_observation(self, t: Track, node: Node, raws: tuple[bytes, ...]) -> dict:
        pz = self.puzzle
        assert pz is not None and self.board is not None
        pool = self.board.pool
        lps = self._lps(raws[4])
        players: list[dict] = [{}, {}]
        extras = self.observe_extras
        equips: dict[int, list[int]] = {}
        spells_by_cp: dict[int, list] = {}
        for cp in (0, 1):
            spells_by_cp[cp] = self._parsed(raws[2 + cp])
            for seq, q in enumerate(spells_by_cp[cp]):
                if q and q.get(K.QUERY_EQUIP_CARD):
                    tgt = t.at(*q[K.QUERY_EQUIP_CARD])
                    uid = t.at(cp, K.LOCATION_SZONE, seq)
                    if tgt is not None and uid is not None:
                        equips.setdefault(tgt, []).append(uid)
        for cp in (0, 1):
            bp = t.bp(cp)
            monsters: list[dict | None] = [None] * 7  # the Main Monster Zones, then the Extra Monster Zones
            for seq, q in enumerate(self._parsed(raws[cp])[:7]):
                if q is None:
                    continue
                uid = self._uid(t, cp, K.LOCATION_MZONE, seq, q)
                mats = t.overlays.get(uid, ())
                if [t.cards[u][0] for u in mats] != q.get(K.QUERY_OVERLAY_CARD, []):
                    raise SystemFault("engine-fault", f"the adapter lost track of the materials of {t.name(uid)!r}: the core has {q.get(K.QUERY_OVERLAY_CARD)}")
                name = t.name(uid)
                status = q.get(K.QUERY_STATUS, 0)
                typ = q.get(K.QUERY_TYPE, 0)
                monsters[seq] = {
                    "uid": uid,
                    "card": name,
                    "passcode": _pc(self._official(q.get(K.QUERY_CODE))),
                    "owner": t.bp(q.get(K.QUERY_OWNER, cp)),
                    "controller": bp,
                    "token": bool(typ & K.TYPE_TOKEN),
                    "level": q.get(K.QUERY_LEVEL),
                    "attribute": K.ATTRIBUTES.get(q.get(K.QUERY_ATTRIBUTE, 0)),
                    "race": K.RACES.get(q.get(K.QUERY_RACE, 0)),
                    "position": position_name(q.get(K.QUERY_POSITION, 0)),
                    "atk": q.get(K.QUERY_ATTACK),
                    "def": q.get(K.QUERY_DEFENSE),
                    "base_atk": q.get(K.QUERY_BASE_ATTACK),
                    "base_def": q.get(K.QUERY_BASE_DEFENSE),
                    # a monster whose Summon the core is still completing (a second Token's position
                    # asked: STATUS_SPSUMMON_STEP) is Summoned this turn as its `summoned` event
                    # says; the core sets STATUS_SPSUMMON_TURN once every monster is placed
                    "summoned_this_turn": bool(status & SUMMONED_STATUS),
                    "destroyed_by_battle": bool(status & K.STATUS_BATTLE_DESTROYED),
                    "set_this_turn": bool(status & K.STATUS_SET_TURN),
                    "position_changed_this_turn": bool(status & K.STATUS_FORM_CHANGED),
                    "equipped_with": sorted(equips.get(uid, ())),
                }
                if mats or extras:
                    monsters[seq]["materials"] = [self._pile_card(t, u) for u in mats]
            spells: list[dict | None] = [None] * 5
            pend: list[dict | None] = [None, None]
            fz = None
            for seq, q in enumerate(spells_by_cp[cp][:6]):
                if q is None:
                    continue
                uid = self._uid(t, cp, K.LOCATION_SZONE, seq, q)
                name = t.name(uid)
                status = q.get(K.QUERY_STATUS, 0)
                card = pool[name] if name in pool else None
                eq = q.get(K.QUERY_EQUIP_CARD)
                eq_uid = t.at(*eq) if eq else None
                targets = [t.at(*x) for x in q.get(K.QUERY_TARGET_CARD, [])]
                attached = next((u for u in targets if u is not None and u != eq_uid), None)
                d = {
                    "uid": uid,
                    "card": name,
                    "passcode": _pc(self._official(q.get(K.QUERY_CODE))),
                    "owner": t.bp(q.get(K.QUERY_OWNER, cp)),
                    "controller": bp,
                    "kind": card.kind if card else None,
                    "subtype": card.subtype if card else None,
                    "face_up": bool(q.get(K.QUERY_POSITION, 0) & 0x5),
                    "set_this_turn": bool(status & K.STATUS_SET_TURN),
                    "equipped_to": eq_uid,
                    "attached_to": attached,
                    "on_chain": any(link[0] == uid for link in t.chain),
                }
                if seq == 5:
                    fz = d
                elif seq in (0, 4) and extras and self._in_pzone(t, uid):
                    pend[0 if seq == 0 else 1] = {k: d[k] for k in ("uid", "card", "passcode", "owner", "controller", "face_up")}
                elif seq < 5:
                    spells[seq] = d
            players[bp] = {
                "lp": lps[cp],
                "monsters": monsters[:5],
                "spells": spells,
                "field_zone": fz,
            }
            if extras:  # optional paths (engines/observation_paths.py OPTIONAL_PATHS; docs/observation.md)
                players[bp]["extra_monsters"] = monsters[5:7]
                players[bp]["pendulum"] = pend
            for key, loc in (("hand", K.LOCATION_HAND), ("graveyard", K.LOCATION_GRAVE), ("banished", K.LOCATION_REMOVED), ("deck", K.LOCATION_DECK),
                             ("extra_deck", K.LOCATION_EXTRA)):
                if key == "extra_deck" and not extras:
                    continue
                pile = t.piles.get((cp, loc), ())
                players[bp][key] = [self._pile_card(t, u) for u in pile]
        a = t.attack
        obs = {
            "schema": 1,
            "turn": t.turn + pz.turn_offset,
            "turn_player": pz.swap,  # the core's turn player is always core player 0
            "phase": _phase_of(t.step),
            "step": t.step,
            "over": t.over,
            "winner": t.winner,
            "to_act": None if node.terminal or node.prompt is None else t.bp(node.prompt.player),
            "players": players,
            "attack": None if a is None else {"attacker": a[0], "target": a[1], "damage_calculated": a[2]},
            "chain": [
                {
                    "card": t.name(u),
                    "passcode": _pc(self._official(code)),
                    "card_uid": u,
                    "controller": t.bp(p),
                    "targets": list(ts),
                    "negated": neg,
                    "kind": pool[t.name(u)].kind if t.name(u) in pool else None,
                    "subtype": pool[t.name(u)].subtype if t.name(u) in pool else None,
                }
                for u, code, p, ts, neg in t.chain
            ],
        }
        return obs

    def _pile_card(self, t: Track, u: int) -> dict:
        return {"uid": u, "card": t.name(u), "passcode": _pc(self._official(t.cards[u][0])), "owner": t.bp(t.cards[u][1])}

    def _in_pzone(self, t: Track, uid: int) -> bool:
        """A card in Spell & Trap Zone 1 or 5 stands in a Pendulum Zone when it is a Pendulum
        monster card (the core's pzone flag is not in its query replies; such a card in those
        zones is there as a Pendulum card: no Battle Phase board places one otherwise)."""
        typ = self.names.type_of(t.cards[uid][0])
        return bool(typ & K.TYPE_MONSTER and typ & K.TYPE_PENDULUM)

    def _official(self, code: int | None) -> int | None:
        """The card's passcode as printed: an alternate (a token copy such as 73915053, Sheep Token)
        gives the code it is an alias of (cards.cdb ``alias``)."""
        if code is None or self._cards is None:
            return code
        row = self._cards.rows.get(code)
        return row[0] if row and row[0] else code

    def _uid(self, t: Track, con: int, loc: int, seq: int, q: dict) -> int:
        uid = t.at(con, loc, seq)
        code = q.get(K.QUERY_CODE)
        if uid is None or t.cards[uid][0] != code:
            raise SystemFault("engine-fault", f"the adapter lost track of card {code} at core player {con} location {loc:#x} sequence {seq}")
        return uid

    @staticmethod
    def _lps(buf: bytes) -> tuple[int, int]:
        """Both players' LP from a field query reply, as the observation has them: never below 0.
        The core keeps the number it computed (a signed LP: 8,000 - 9,700 is -1,700 after Armityle
        the Chaos Phantom's lethal battle damage), while a player's LP reach 0 and go no lower
        (rule: LP-ZERO); the event keeps the amount the core dealt (docs/ocgcore.md, "LP")."""
        i = 4
        lps = []
        for _player in (0, 1):
            lps.append(max(struct.unpack_from("<i", buf, i)[0], 0))  # rule: LP-ZERO (the core's number is signed)
            i += 4
            for _z in range(7 + 8):
                present = buf[i]
                i += 1 + (5 if present else 0)
            i += 6 * 4
        return lps[0], lps[1]


BATTLE_PHASES = (K.PHASE_BATTLE_START, K.PHASE_BATTLE_STEP, K.PHASE_DAMAGE, K.PHASE_DAMAGE_CAL, K.PHASE_BATTLE)
TIMING_BATTLE_START, TIMING_BATTLE_END, TIMING_ATTACK = 0x8, 0x10, 0x1000
TIMING_DAMAGE_STEP, TIMING_DAMAGE_CAL, TIMING_BATTLE_STEP_END, TIMING_BATTLED = 0x2000, 0x4000, 0x4000000, 0x8000000


def infer_step(track: Track, pr: M.Prompt, events: list[Event], stores_replays: bool = False) -> None:
    """The Battle Phase step the core is in. The core announces only some steps with
    MSG_NEW_PHASE; the rest is read from the prompt: a battle command is the Battle Step, and a
    chain prompt's timing hints say the step (the turn player's hint, TIMING_*). `stores_replays`:
    the duel has DUEL_STORE_ATTACK_REPLAYS (ruleset goat) and the core did not cancel the attack it
    dropped (OcgcoreEngine._attack_not_cancelled), so the drop is a stored replay, not a stop."""
    if pr.kind == M.MSG_SELECT_BATTLECMD:
        track.set_step("battle_step", events)
        if track.attack is not None:
            # Back at the battle command with an attack under way: the core ended it without a
            # message (its battle processor drops an attack whose attacker left the field, changed
            # control or can no longer attack when the battle goes on: findings F19). Said here,
            # as the model says it, so the attack does not outlive its end in the observations.
            au = track.attack[0]
            w = track.where(au)
            left = w is None or w[1] != K.LOCATION_MZONE or w[0] != pr.player  # (the prompt's player: the turn player)
            if stores_replays and not left:
                # DUEL_STORE_ATTACK_REPLAYS (ruleset goat) and an attack the core did not cancel:
                # where the core would ask its replay question it answers "no" itself and the
                # declaration is not counted (its battle processor: the replay step,
                # processor.cpp:2197, and the count, :2217): a replay whose attack is stored, as
                # the model's goat ruleset says it (GOAT-RPL-STORED). A cancelled attack (the
                # attacker can no longer attack, :2178) is a stop, as under every ruleset.
                changed = track.monsters_of(1 - pr.player) != track.opp_at_attack  # (else the target left or the attack became illegal)
                events.append(ev("replay", attacker_uid=au, reason="targets_changed" if changed else "attack_illegal"))
                events.append(ev("replay_choice", attacker_uid=au, choice="call_off", target_uid=None))
                events.append(ev("attack_ended", attacker_uid=au, reason="called_off"))
            else:
                events.append(ev("attack_stopped", attacker_uid=au, reason="attacker_left_field" if left else "cannot_attack"))
            track.attack = None
        return
    if pr.kind != M.MSG_SELECT_CHAIN or track.phase not in BATTLE_PHASES:
        return
    raw = pr.raw
    mine, other = M.u32(raw, 3), M.u32(raw, 7)
    tim = mine if pr.player == 0 else other  # core player 0 is the turn player
    if tim & TIMING_BATTLED:
        step = "damage_step_after_calculation_1"
    elif tim & TIMING_DAMAGE_CAL:
        # the core's PHASE_DAMAGE_CAL window (EVENT_PRE_DAMAGE_CALCULATE) is "during damage
        # calculation"; "before damage calculation" is its EVENT_BATTLE_CONFIRM, in PHASE_DAMAGE
        step = "damage_step_during_calculation"
    elif tim & TIMING_DAMAGE_STEP:
        step = "damage_step_start"
    elif tim & TIMING_BATTLE_END:
        step = "battle_end_step"
    elif tim & TIMING_BATTLE_START:
        step = "battle_start_step"
    elif tim & (TIMING_ATTACK | TIMING_BATTLE_STEP_END):
        step = "battle_step"
    else:
        return
    track.advance_damage_step(step, events)


# The descriptions of the core's own "activate this optional trigger?" questions (SELECT_EFFECTYN:
# processor.cpp:443, a lone optional trigger; :743, string 221; :3761, string 94, a Trap's trigger in
# a new chain). Any other SELECT_EFFECTYN outside an activation is a card script's question
# (Duel.SelectEffectYesNo): a destruction replacement ("you can destroy this card instead":
# Fighting Spirit, Power of the Guardians, string 96) is a choice, not an activation. rule: DS-DESTROYED-MARK
TRIGGER_QUESTIONS = (0, 221, 94)

REPLAY_QUESTION = 30  # the core's string for "replay or not" (its battle processor, step 11)


def is_replay_question(pr: M.Prompt, track: Track) -> bool:
    return pr.kind == M.MSG_SELECT_YESNO and pr.description == REPLAY_QUESTION and track.attack is not None and not track.replaying


def _phase_of(step: str) -> str:
    if step in ("main1", "main2"):
        return step
    if step == "end_phase":
        return "end"
    if step in ("draw_phase", "standby_phase"):
        return step.split("_")[0]
    return "battle"


def _pc(code: int | None) -> str | None:
    """A passcode as bpcheck's pool writes it: eight digits."""
    return None if code is None else f"{code:08d}"
