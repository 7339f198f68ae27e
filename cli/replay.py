"""`bpcheck replay`: re-run a saved counterexample step by step and check every invariant again.

Exit 1 when an invariant is violated along the trace (the counterexample still reproduces),
0 when the whole trace replays and every invariant holds (the bug is fixed), 2 when the file is
malformed or the trace no longer applies (an action it names is not legal any more).
"""

from __future__ import annotations

import json
from pathlib import Path

from bpcheck.errors import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK, InputError
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import SystemFault
from bpcheck.invariants import REGISTRY
from bpcheck.model.board import load_board
from bpcheck.engines import make_engine
from bpcheck.reports.text import board_lines


def _load(path: str) -> list[dict]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "", "no such file") from None
    except json.JSONDecodeError as e:
        raise InputError(path, "", f"malformed JSON: {e}") from None
    if not isinstance(data, dict):
        raise InputError(path, "", "expected a JSON object")
    if "boards" in data:
        cexs = [c for b in data["boards"] for c in b.get("counterexamples", [])]
    elif "trace" in data:
        cexs = [data]
    else:
        raise InputError(path, "", "neither a counterexample (with 'trace') nor a check result (with 'boards')")
    for i, c in enumerate(cexs):
        for key, typ in (("board", str), ("trace", list), ("invariant", str)):
            if not isinstance(c.get(key), typ):
                raise InputError(path, f"counterexamples[{i}].{key}", f"missing or not a {typ.__name__}")
    return cexs


def replay_file(path: str, verbose: bool = True) -> int:
    try:
        cexs = _load(path)
    except InputError as e:
        print(f"bpcheck: error: {e.render()}")
        return EXIT_BAD_INPUT
    worst = EXIT_OK
    for cex in cexs:
        try:
            code = replay_one(path, cex, verbose)
        except SystemFault as f:  # an out-of-process engine crashed, hung, ... (docs/protocol.md)
            print(f"  engine fault: {f.kind}: {f.message}")
            code = EXIT_FAIL
        if code == EXIT_BAD_INPUT or worst == EXIT_BAD_INPUT:
            worst = EXIT_BAD_INPUT
        elif code == EXIT_FAIL:
            worst = EXIT_FAIL
    return worst


def replay_one(path: str, cex: dict, verbose: bool) -> int:
    if cex["invariant"] == "DIFF":  # a differential-mode counterexample: replay in lockstep
        from bpcheck.traces import replay_differential

        return replay_differential(cex, verbose)
    try:
        # A trace is short: a cmd: engine is always asked twice (docs/protocol.md).
        engine = make_engine(cex.get("engine", "reference"), check_determinism=True)
        board = load_board(cex["board"])
    except InputError as e:
        print(f"bpcheck: error: {e.render()}")
        return EXIT_BAD_INPUT
    invariants = list(REGISTRY.values())
    system = EngineSystem(engine, board, invariants)
    s = system.initial_states()[0]
    found: list[tuple[int, str, str]] = []

    def note(step: int, results):
        for pid, verdict in results:
            if verdict is not None and verdict is not True:
                found.append((step, pid, str(verdict)))

    print(f"replaying {cex['invariant']} on {cex['board']} ({len(cex['trace'])} steps)")
    note(0, system.check_state(s))
    for k, label in enumerate(cex["trace"], 1):
        acts = system.actions(s)
        note(k - 1, system.check_actions(s, acts))
        act = next((a for a in acts if a.label == label), None)
        if act is None:
            print(f"  trace diverges at step {k}: {label!r} is not legal here")
            print("  legal: " + ", ".join(a.label for a in acts))
            return EXIT_BAD_INPUT
        s2, events = system.step(s, act)
        before = len(found)
        note(k, system.check_transition(s, act, events, s2))
        note(k, system.check_state(s2))
        if verbose:
            mark = "  <-- " + ", ".join(pid for _k, pid, _m in found[before:]) if len(found) > before else ""
            print(f"  {k:3}. {label}{mark}")
        s = s2
    if not system.is_terminal(s):
        note(len(cex["trace"]), system.check_actions(s, system.actions(s)))
    if found:
        step, pid, msg = found[0]
        again = any(p == cex["invariant"] for _s, p, _m in found)
        print(f"violated at step {step}: {pid}: {msg}")
        if not again:
            print(f"(the recorded invariant {cex['invariant']} held; another one did not)")
        if verbose:
            print("board at the end of the trace:")
            for line in board_lines(s[1]):
                print("    " + line)
        return EXIT_FAIL
    print(f"the trace replays and every invariant holds: {cex['invariant']} is no longer violated")
    return EXIT_OK
