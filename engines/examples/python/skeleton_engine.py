#!/usr/bin/env python3
"""A skeleton engine for bpcheck's JSON-lines protocol (docs/protocol.md), in Python with its
standard library only: copy it and grow it into your engine, or read it as a worked example.

It speaks protocol 2 and plays the smallest part of the Battle Phase: entering or skipping it,
the pass rounds of the Battle Start, Battle and End Steps (a turn player with no monster can
only end the Battle Phase), Main Phase 2 and the end of the turn, and the first turn of the duel
(no Battle Phase). It refuses, at `start`, any board where the turn player could attack or a
Spell or Trap is on the field: that is where your engine takes over. It declares two
capabilities to show how: passcodes beside card names, and two counters it does not keep.

    bpcheck check boards/002-enter-battle-phase.toml --differential \\
        --engine cmd:"python3 engines/examples/python/skeleton_engine.py"

One request per line on stdin, one reply per line on stdout (flushed); logs go to stderr.
"""

import json
import sys

ENGINE = "skeleton (python)"
UNOBSERVED = ["chains_in_step", "next_uid"]  # fields this engine does not keep (see docs/protocol.md)
PILES = ("hand", "graveyard", "banished", "deck")
MONSTER_FIELDS = {"zone", "card", "position", "summoned_this_turn"}


class Refuse(Exception):
    """A request this engine cannot answer: becomes {"id": ..., "error": ...}."""


class Duel:
    """One board. A state is a small dict; its handle is its index in `states`."""

    def __init__(self, board, cards):
        self.cards = cards
        if board.get("p1", {}).get("spells") or board.get("p2", {}).get("spells") or any(
            board.get(p, {}).get("field_spell") for p in ("p1", "p2")
        ):
            raise Refuse("the skeleton plays no Spell or Trap (a board with Spells/Traps on the field)")
        self.turn = board["turn"]
        self.turn_player = board["turn_player"] - 1  # boards say 1/2, the protocol 0/1
        # Card instances are numbered as bpcheck numbers them: P1 then P2; monsters, spells, the
        # Field Spell, hand, Graveyard, banished, Deck, each in list order (docs/protocol.md).
        self.players = []
        uid = 0
        for side, key in enumerate(("p1", "p2")):
            p = board.get(key, {})
            zones = [None] * 5
            for m in p.get("monsters", []):
                extra = set(m) - MONSTER_FIELDS
                if extra:
                    raise Refuse(f"{key}.monsters: the skeleton does not know {', '.join(sorted(extra))}")
                uid += 1
                zones[m["zone"] - 1] = self.monster(uid, m, side)
            piles = {}
            for pile in PILES:
                refs = []
                for name in p.get(pile, []):
                    uid += 1
                    refs.append(self.ref(uid, name if isinstance(name, str) else name["card"], side))
                piles[pile] = sorted(refs, key=lambda r: (r["card"], r["uid"]))
            self.players.append({"lp": p.get("lp", 8000), "monsters": zones, **piles})
        if self.turn > 1 and any(self.players[self.turn_player]["monsters"]):
            raise Refuse("the turn player controls a monster: attacks are beyond the skeleton")
        self.states = [{"step": "main1", "priority": self.turn_player, "passes": 0}]

    def card(self, name):
        if name not in self.cards:
            raise Refuse(f"unknown card {name!r}")
        return self.cards[name]

    def monster(self, uid, m, side):
        c = self.card(m["card"])
        if c["kind"] not in ("monster", "token"):
            raise Refuse(f"{m['card']!r} is not a monster")
        return {
            "uid": uid, "card": c["name"], "passcode": c["passcode"], "owner": side, "controller": side,
            "token": c["kind"] == "token", "level": c["level"], "attribute": c["attribute"], "race": c["race"],
            "position": m.get("position", "attack"), "atk": c["atk"], "def": c["def"], "base_atk": c["atk"],
            "base_def": c["def"], "modifiers": [], "lingering_modifiers": [],
            "summoned_this_turn": m.get("summoned_this_turn", False), "attacks_declared": 0, "declared_at": [],
            "declared_direct": False, "cannot_attack_this_turn": False, "destroyed_by_battle": False,
            "flipped_by_battle": False, "set_this_turn": False, "position_changed_this_turn": False,
            "once_per_turn_used": [], "equipped_with": [],
        }

    def ref(self, uid, name, side):
        return {"uid": uid, "card": name, "passcode": self.card(name)["passcode"], "owner": side}

    # -- the rules this skeleton knows ------------------------------------------------------

    def state(self, handle):
        if not isinstance(handle, int) or isinstance(handle, bool) or not 0 <= handle < len(self.states):
            raise Refuse(f"unknown state handle {handle!r}")
        return self.states[handle]

    def terminal(self, s):
        return s["step"] == "end_phase"

    def actions(self, s):
        tp, who = self.turn_player, s["priority"]
        if s["step"] == "main1":
            skip = {"kind": "skip_bp", "player": tp, "label": "skip Battle Phase"}
            return [skip] if self.turn == 1 else [{"kind": "enter_bp", "player": tp, "label": "enter Battle Phase"}, skip]
        if s["step"] == "main2":
            return [{"kind": "end_turn", "player": tp, "label": "end turn"}]
        if self.terminal(s):
            return []
        label = "end Battle Phase" if s["step"] == "battle_step" and who == tp else "pass"
        return [{"kind": "pass", "player": who, "label": label}]

    NEXT = {"battle_start_step": "battle_step", "battle_step": "battle_end_step", "battle_end_step": "main2"}

    def apply(self, s, label):
        action = next((a for a in self.actions(s) if a["label"] == label), None)
        if action is None:
            raise Refuse(f"{label!r} is not a legal action here")
        tp = self.turn_player
        if action["kind"] == "enter_bp":
            return {"step": "battle_start_step", "priority": tp, "passes": 0}, [self.phase("main1", "battle_start_step")]
        if action["kind"] == "skip_bp":
            return {"step": "end_phase", "priority": tp, "passes": 0}, [self.phase("main1", "end_phase")]
        if action["kind"] == "end_turn":
            return {"step": "end_phase", "priority": tp, "passes": 0}, [self.phase("main2", "end_phase")]
        events = [{"kind": "passed", "player": action["player"]}]
        if s["passes"] == 0:  # the first pass hands priority to the other player
            return {"step": s["step"], "priority": 1 - s["priority"], "passes": 1}, events
        nxt = self.NEXT[s["step"]]  # both passed in a row with an empty chain: the step ends
        return {"step": nxt, "priority": tp, "passes": 0}, events + [self.phase(s["step"], nxt)]

    @staticmethod
    def phase(frm, to):
        return {"kind": "phase_changed", "from": frm, "to": to}

    def handle_of(self, s):
        for h, known in enumerate(self.states):  # the same state keeps its handle
            if known == s:
                return h
        self.states.append(s)
        return len(self.states) - 1

    def observe(self, s):
        step = s["step"]
        phase = {"main1": "main1", "main2": "main2", "end_phase": "end"}.get(step, "battle")
        return {
            "schema": 1, "turn": self.turn, "turn_player": self.turn_player, "phase": phase, "step": step,
            "over": False, "winner": None, "to_act": None if self.terminal(s) else s["priority"],
            "priority": s["priority"], "passes": s["passes"],
            "players": [
                {"lp": p["lp"], "monsters": p["monsters"], "spells": [None] * 5, "field_zone": None, **{k: p[k] for k in PILES}}
                for p in self.players
            ],
            "attack": None, "chain": [],
            "open_windows": {"attack_declaration": False, "summon": False, "events": []},
            "lingering": [], "pending_triggers": [], "choice": None,
        }


def answer(duel, req):
    """The reply fields for one request (or Refuse)."""
    op = req.get("op")
    if op == "hello":
        if 2 not in req.get("versions", [req.get("protocol")]):
            raise Refuse("this engine speaks protocol 2")
        return {"protocol": 2, "engine": ENGINE, "capabilities": {"unobserved": UNOBSERVED, "passcodes": True}}, duel
    if op == "start":
        # the ruleset to play (docs/protocol.md, "The ruleset"; missing: the board's own, else tcg)
        ruleset = req.get("ruleset") or req["board"].get("ruleset") or "tcg"
        if ruleset != "tcg":
            raise Refuse(f"this engine plays the TCG rules only, not {ruleset!r}")
        duel = Duel(req["board"], req["cards"])
        return {"state": 0}, duel
    if duel is None:
        raise Refuse("send 'start' first")
    s = duel.state(req.get("state"))
    if op == "legal_actions":
        return {"actions": duel.actions(s)}, duel
    if op == "apply":
        label = req["action"]["label"] if isinstance(req.get("action"), dict) else req.get("action")
        s2, events = duel.apply(s, label)
        return {"state": duel.handle_of(s2), "events": events}, duel
    if op == "observe":
        return {"observation": duel.observe(s)}, duel
    if op == "terminal":
        return {"terminal": duel.terminal(s)}, duel
    raise Refuse(f"unknown op {op!r}")


def main():
    duel = None
    for line in sys.stdin:
        if not line.strip():
            continue
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id") if isinstance(req, dict) else None
            fields, duel = answer(duel, req)
            reply = {"id": rid, **fields}
        except Refuse as e:
            reply = {"id": rid, "error": str(e)}
        except Exception as e:  # a bug in the engine: say so and keep serving
            reply = {"id": rid, "error": f"internal error: {type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
