#!/usr/bin/env python3
"""Write docs/transcript.md: two battles over the JSON-lines protocol, recorded from real runs
(bpcheck's client talking to `python -m bpcheck.engines.serve` in a subprocess) and annotated:
a direct attack that ends the duel, and a whole battle with a replay and a Damage Step chain.

    python scripts/transcript.py          # rewrite docs/transcript.md
    python scripts/transcript.py --check  # exit 1 if docs/transcript.md is not what a run gives

tests/test_protocol_kit.py runs the check, so the transcript stays true.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "transcript.md"
# Part 1: a direct attack ends the duel (every player passes every time).
BOARD = "boards/rule-lp-zero-battle.toml"
PREFER = ("attack Battle Ox -> direct", "enter Battle Phase", "pass", "end Battle Phase")
# Part 2: a whole battle with a replay and a Damage Step chain. PLAN: the actions taken, in
# order ("STEP|LABEL": only in that step); every other decision is a pass (or "end turn").
BOARD2 = "tests/data/transcript-battle.toml"
PLAN = (
    "enter Battle Phase",
    "attack Battle Ox -> Mokey Mokey",
    "activate Call of the Haunted -> Summoned Skull",
    "replay: attack Mokey Mokey",
    "damage_step_start|activate Reinforcements -> Battle Ox",
    "activate Rush Recklessly -> Mokey Mokey",
)
PASSES = ("pass", "end Battle Phase", "end turn")


def _prefer(actions, step):
    return next((a for want in PREFER for a in actions if a.label == want), actions[0])


def _planned(plan: list[str]):
    def choose(actions, step):
        labels = {a.label: a for a in actions}
        if plan:
            at, _, want = plan[0].rpartition("|")
            if want in labels and (not at or at == step):
                plan.pop(0)
                return labels[want]
        return next(labels[x] for x in PASSES if x in labels)

    return choose


def record(board_path: str = BOARD, choose=_prefer) -> list[tuple[str, bytes]]:
    """Play one battle on a board through the protocol; every line sent (→) and received (←)."""
    from bpcheck.engines import jsonl
    from bpcheck.model.board import load_board

    lines: list[tuple[str, bytes]] = []

    class Recording(jsonl._Process):
        def send(self, data: bytes) -> bool:
            lines.append(("→", data.rstrip(b"\n")))
            return super().send(data)

        def receive(self, timeout: float):
            line = super().receive(timeout)
            if line is not None:
                lines.append(("←", line.rstrip(b"\n")))
            return line

    saved = jsonl._Process
    jsonl._Process = Recording  # type: ignore[misc]
    try:
        engine = jsonl.JsonlEngine(f"{sys.executable} -m bpcheck.engines.serve", name="cmd:bpcheck serve")
        board = load_board(ROOT / board_path, board_path)
        state = engine.start(board)
        step = "main1"  # boards start in Main Phase 1; then the step is followed by its events
        while not engine.is_terminal(state):
            action = choose(engine.legal_actions(state), step)
            state, events = engine.apply(state, action)
            step = next((e["to"] for e in reversed(events) if e.kind == "phase_changed"), step)
        engine.close()
    finally:
        jsonl._Process = saved  # type: ignore[misc]
    return lines


def _why(kinds: list[str], before: dict | None, after: dict | None) -> str:
    """What the events of one step mean for priority, passes and windows (docs/protocol.md,
    "Priority, passes and windows, step by step")."""
    if after is None:
        return ""
    who = f"P{after['priority'] + 1}" if after.get("priority") is not None else ""
    if "attack_declared" in kinds:
        return (" The attack-declaration window opens (`open_windows.attack_declaration`, "
                f"`open_windows.events` {json.dumps(after['open_windows']['events'])}); the turn player has priority: round 1 of passes.")
    if "replay" in kinds:
        return (" The whole chain resolved (last link first): it closed the attack-declaration window, and it changed the monsters P2"
                " controls: a replay (`attack.replay_pending`; the Summon's window is emptied too). The turn player must choose a"
                " target, a direct attack or calling the attack off.")
    if "replay_choice" in kinds:
        return " A new target is not a new attack declaration: no window opens; one round of passes enters the Damage Step."
    if "chain_link_added" in kinds:
        return f" A chain link: `passes` back to 0, priority to the other player ({who}), who may respond or pass."
    if "chain_resolved" in kinds:
        return f" The second pass in a row with a chain: it resolves, last link first; then `passes` 0 and priority to the turn player ({who}), in the same step."
    if "damage_calculation" in kinds:
        return " Leaving `damage_step_during_calculation` performs damage calculation; its events come before the `phase_changed`."
    if "phase_changed" in kinds and kinds[0] == "passed":
        return f" The second pass in a row with an empty chain: the step ends; the new one starts with `passes` 0 and priority to the turn player ({who})."
    if kinds == ["passed"] and before and before["open_windows"]["attack_declaration"] and not after["open_windows"]["attack_declaration"]:
        return (" The second pass of round 1: the attack-declaration window closes. Only `passed` is emitted: the step stays "
                f"`{after['step']}`, `passes` 0, priority back to the turn player ({who}) for round 2.")
    if kinds == ["passed"] and after.get("passes") == 1:
        return f" The first pass of a round: `passes` 1, priority to {who}."
    return ""


def _note(req: dict, reply: dict, seen_observation: bool, nxt: dict | None) -> str:
    op = req["op"]
    if op == "hello":
        return ("bpcheck offers protocol versions 1 and 2; the engine picks 2 and declares its capabilities "
                "(`{}`: none, it observes everything, asks every pass, clones states, sends no passcodes).")
    if op == "start":
        return ("The board as its TOML file says, its path, and the definition of every card it names. "
                "The engine numbers the cards (uids 1, 2, ... in file order) and gives the initial state's handle.")
    if op == "terminal":
        return "Is the state terminal (End Phase or duel over)? bpcheck asks once per new state."
    if op == "observe":
        obs = reply.get("observation", {})
        where = f"{obs.get('step')}, P{obs['to_act'] + 1} to act" if obs.get("to_act") is not None else f"{obs.get('step')}, nobody to act"
        lp = " / ".join(str(p["lp"]) for p in obs.get("players", []))
        first = "" if seen_observation else " The first one is shown whole; later ones are cut after 160 characters."
        return f"The snapshot of docs/observation.md: {where}, LP {lp}{', the duel is over' if obs.get('over') else ''}.{first}"
    if op == "legal_actions":
        labels = [a["label"] for a in reply.get("actions", [])]
        who = f"P{reply['actions'][0]['player'] + 1}" if labels else "nobody"
        taken = f" The battle below takes {nxt['action']!r}." if nxt else ""
        return f"{who} may: {', '.join(repr(x) for x in labels)}.{taken}"
    if op == "apply":
        kinds = [e["kind"] for e in reply.get("events", [])]
        return f"Apply {req['action']!r}: the next state's handle and what happened, in order ({', '.join(kinds) or 'no event'})."
    return ""


def _part(lines: list[tuple[str, bytes]], step_prefix: str, cut_start: bool) -> list[str]:
    out: list[str] = []
    pairs = [(json.loads(lines[k][1]), json.loads(lines[k + 1][1]), lines[k][1], lines[k + 1][1]) for k in range(0, len(lines), 2)]
    observations = [(i, rep["observation"]) for i, (req, rep, _a, _b) in enumerate(pairs) if req["op"] == "observe" and "observation" in rep]
    seen_obs = False
    step = 0
    for i, (req, reply, req_b, rep_b) in enumerate(pairs):
        nxt = next((r for r, _rep, _a, _b in pairs[i + 1:] if r["op"] == "apply"), None)
        note = _note(req, reply, seen_obs, nxt)
        if req["op"] == "apply":
            step += 1
            out += [f"### {step_prefix}{step}: {req['action']}", ""]
            before = next((o for j, o in reversed(observations) if j < i), None)
            after = next((o for j, o in observations if j > i), None)
            note += _why([e["kind"] for e in reply.get("events", [])], before, after)
        out.append(note)
        out.append("")
        shown_req, shown = req_b.decode(), rep_b.decode()
        if req["op"] == "start" and cut_start and len(shown_req) > 400:
            shown_req = shown_req[:400] + f" … ({len(req_b):,} bytes: the definitions of every card of the pool, as in part 1)"
        if req["op"] == "observe":
            if seen_obs and len(shown) > 160:
                shown = shown[:160] + f" … ({len(rep_b):,} bytes)"
            seen_obs = True
        out += ["```text", f"→ {shown_req}", f"← {shown}", "```", ""]
    out += [
        "The engine's standard input then ends; it exits with status 0.",
        "",
    ]
    return out


def render(lines: list[tuple[str, bytes]], lines2: list[tuple[str, bytes]]) -> str:
    out = [
        "# A whole battle over the protocol",
        "",
        "Generated by `python scripts/transcript.py` from real runs (a test keeps it current): bpcheck's",
        "JSON-lines client (`engines/jsonl.py`) drives `python -m bpcheck.engines.serve`. `→` is a line",
        "bpcheck wrote to the engine's standard input, `←` a line the engine wrote to its standard output.",
        "The messages are defined in [protocol.md](protocol.md) and the schema (the values of every event:",
        "[protocol.md](protocol.md#events-field-by-field); who acts and when a pass ends a step or a window:",
        "[protocol.md](protocol.md#priority-passes-and-windows-step-by-step)); the observation field by",
        "field in [observation.md](observation.md). During `bpcheck check` the same calls are made for",
        "every state and action the exploration meets.",
        "",
        "- [Part 1](#part-1-a-direct-attack-ends-the-duel): a direct attack ends the duel.",
        "- [Part 2](#part-2-a-whole-battle-with-a-replay-and-a-damage-step-chain): a whole battle, from",
        "  Main Phase 1 to the End Phase, with the two rounds of passes after an attack declaration, a",
        "  chain in the attack-declaration window that makes the attack replay, and a two-link chain in",
        "  the Damage Step.",
        "",
        "## Part 1: a direct attack ends the duel",
        "",
        f"`{BOARD}`: P1 enters the Battle Phase, Battle Ox attacks directly, every player",
        "passes every time, and 1700 battle damage takes P2 from 1500 LP to 0.",
        "",
    ]
    out += _part(lines, "Step ", cut_start=False)
    out += [
        "## Part 2: a whole battle with a replay and a Damage Step chain",
        "",
        f"`{BOARD2}`: P1 (turn player) has Battle Ox (1700 ATK) and a Set Reinforcements; P2 has",
        "Mokey Mokey (300 ATK), a Set Call of the Haunted, a Set Rush Recklessly and Summoned Skull in",
        "the Graveyard. Battle Ox attacks Mokey Mokey; in the attack-declaration window P2 activates Call",
        "of the Haunted and Summons Summoned Skull, which makes the attack replay; P1 attacks Mokey Mokey",
        "again. In the Damage Step P1 activates Reinforcements (+500 ATK to Battle Ox) and P2 chains Rush",
        "Recklessly (+700 ATK to Mokey Mokey): the chain resolves last link first, damage calculation",
        "compares 2200 with 1000, P2 takes 1200, Mokey Mokey goes to the Graveyard at the end of the",
        "Damage Step; then the Battle Phase ends and P1 ends the turn. Everything else is a pass.",
        "",
    ]
    out += _part(lines2, "Step 2.", cut_start=True)
    return "\n".join(out)


def main(argv: list[str]) -> int:
    text = render(record(), record(BOARD2, _planned(list(PLAN))))
    if "--check" in argv:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is not current: run python scripts/transcript.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
