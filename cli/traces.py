"""`bpcheck record` and `bpcheck conform`: write a trace an engine plays, judge recorded traces
(the trace format and the judging: :mod:`bpcheck.harness.traces`)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK
from bpcheck.engines import make_engine
from bpcheck.engines.faults import SystemFault
from bpcheck.errors import InputError
from bpcheck.explorers.differential import (
    DIFF,
    DifferentialSystem,
)
from bpcheck.harness.replay import load_cex_board, pick_action
from bpcheck.harness.traces import TRACE_VERSION, _close, _dumps, conform_trace, divergence_text, load_trace
from bpcheck.invariants.base import Invariant
from bpcheck.model.board import load_board
from bpcheck.model.rulesets import DEFAULT_RULESET
from bpcheck.reports.outputs import atomic_write_text, prepare_file
from bpcheck.reports.safe import line as _line  # what an engine or a trace said, on one line
from bpcheck.reports.text import plural


def record(board_path: str, engine_spec: str | None, out: str, actions: list[str] | None, steps: int | None, seed: int, ruleset: str | None = None) -> int:
    """`ruleset`: --ruleset, the board's ruleset when it names none; the header says the one played."""
    prepare_file(out, "--out", inputs=(Path(board_path),))  # before the engine plays: a missing folder is exit 2 now
    board = load_board(board_path, board_path, ruleset=ruleset)
    engine = make_engine(engine_spec)
    name = engine_spec or "reference"
    lines: list[str] = []
    fault: str | None = None
    stopped = ""
    rng = random.Random(seed)
    try:
        st = engine.start(board)
        # the ruleset played, so conform judges the trace under it (docs/traces.md)
        head = {"bpcheck_trace": TRACE_VERSION, "board": board_path, "engine": name, "ruleset": board.ruleset or DEFAULT_RULESET}
        lines.append(_dumps({**head, "observation": engine.observe(st)}))
        todo = len(actions) if actions is not None else steps
        assert todo is not None
        for k in range(1, todo + 1):
            if engine.is_terminal(st):
                stopped = f"the engine's state is terminal after {plural(k - 1, 'step')}"
                if actions is not None:
                    raise InputError("--actions", f"[{k - 1}]", f"{actions[k - 1]!r}: the engine's state is terminal after step {k - 1}")
                break
            acts = list(engine.legal_actions(st))
            if not acts:
                stopped = f"the engine offers no action after {plural(k - 1, 'step')}"
                if actions is not None:
                    raise InputError("--actions", f"[{k - 1}]", f"{actions[k - 1]!r}: the engine offers no action after step {k - 1}")
                break
            if actions is not None:
                act = next((a for a in acts if a.label == actions[k - 1]), None)
                if act is None:
                    offered = "; ".join(a.label for a in acts)
                    raise InputError("--actions", f"[{k - 1}]", f"{actions[k - 1]!r} is not offered by the engine at step {k}; it offers: {offered}")
            else:
                act = acts[rng.randrange(len(acts))]
            st, events = engine.apply(st, act)
            lines.append(_dumps({"action": act.label, "observation": engine.observe(st), "events": [e.to_dict() for e in events]}))
    except InputError:
        raise
    except SystemFault as f:
        fault = f"{f.kind}: {f.message}"
    except Exception as e:  # an engine that crashes must not crash bpcheck
        fault = f"{type(e).__name__}: {e}"
    finally:
        _close(engine)
    try:
        atomic_write_text(out, "\n".join(lines) + "\n")
    except OSError as e:
        raise InputError(out, "", f"cannot write the trace: {e.strerror}") from None
    n = len(lines) - 1
    if fault is not None:
        print(f"engine fault after {n} recorded steps: {_line(fault)}")
        print(f"wrote the {plural(n, 'step')} recorded before the fault to {out}")
        return EXIT_FAIL
    rs = f" (ruleset {board.ruleset})" if board.ruleset not in (None, DEFAULT_RULESET) else ""
    print(f"recorded {plural(n, 'step')} of {name} on {board_path}{rs} to {out}" + (f" ({stopped})" if stopped else ""))
    return EXIT_OK


def conform_file(path: str, invariants: list[Invariant], verbose: bool = True, ruleset: str | None = None) -> tuple[int, dict]:
    try:
        trace = load_trace(path)
        d, checked = conform_trace(trace, invariants, ruleset)
    except InputError as e:
        print(_line(f"bpcheck: error: {e.render()}"), file=sys.stderr)
        return EXIT_BAD_INPUT, {"trace": path, "verdict": "malformed", "error": e.render()}
    n = len(trace.steps)
    rs = f", ruleset {trace.played}" if trace.played != DEFAULT_RULESET else ""  # as check names it (docs/rulesets.md)
    print(_line(f"conform {path}: board {trace.board}, engine {trace.engine}{rs}, {plural(n, 'step')}"))
    if verbose:
        for st in trace.steps[: (d.step if d is not None else n)]:
            mark = "   <-- diverges" if d is not None and st.index == d.step else ""
            print(f"  {st.index:3}. {_line(st.action)}{mark}")
    doc: dict[str, Any] = {"trace": path, "board": trace.board, "engine": trace.engine, "ruleset": trace.played, "steps": n}
    if d is None:
        print(f"CONFORMS  {path}: all {plural(n, 'step')} are legal and match the reference model; every invariant held")
        return EXIT_OK, {**doc, "verdict": "conforms", "divergence": None}
    for line in divergence_text(trace, d, verbose):
        print(_line(line))
    return EXIT_FAIL, {**doc, "verdict": "diverges", "divergence": d.to_dict()}


def conform_files(paths: list[str], invariants: list[Invariant], verbose: bool = True, json_out: str | None = None, ruleset: str | None = None) -> int:
    """`ruleset`: --ruleset, for traces whose header and board name none (docs/traces.md)."""
    if json_out:  # checked before any trace is read: a folder that is not there is exit 2 now

        try:
            prepare_file(json_out, "--json", inputs=tuple(Path(p) for p in paths))
        except InputError as e:
            print(_line(f"bpcheck: error: {e.render()}"), file=sys.stderr)
            return EXIT_BAD_INPUT
    worst = EXIT_OK
    docs = []
    for k, p in enumerate(paths):
        if k:
            print()
        code, doc = conform_file(p, invariants, verbose, ruleset)
        docs.append(doc)
        if code == EXIT_BAD_INPUT or worst == EXIT_BAD_INPUT:
            worst = EXIT_BAD_INPUT
        elif code == EXIT_FAIL:
            worst = EXIT_FAIL
    not_checked = [i.id for i in invariants if i.kind == "actions"]
    if not_checked and verbose:
        print(f"(not checked on traces, which record the action taken, not the set offered: {', '.join(not_checked)})")
    if json_out:
        try:
            atomic_write_text(json_out, json.dumps({"bpcheck_conform": 1, "traces": docs}, indent=1) + "\n")
        except OSError as e:
            print(_line(f"bpcheck: error: {json_out}: --json: cannot write the results: {e.strerror or e}"), file=sys.stderr)
            return EXIT_BAD_INPUT
    return worst


def replay_differential(
    cex: dict, verbose: bool = True, engine_spec: str | None = None, call_timeout: float | None = None, cex_path: str = ".", ruleset: str | None = None
) -> int:
    """Replay a DIFF counterexample with the engine named on the command line (`engine_spec`,
    never the file's) and the reference model in lockstep."""
    try:
        engine = make_engine(engine_spec, call_timeout=call_timeout)
        board = load_cex_board(cex_path, cex, ruleset)
    except InputError as e:
        print(f"bpcheck: error: {e.render()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"replaying {DIFF} on {cex['board']} ({plural(len(cex['trace']), 'step')}), engine {engine_spec or 'reference'} against the reference model")
    found: list[tuple[int, str]] = []

    def note(k: int, results) -> None:
        for pid, verdict in results:
            if pid == DIFF and verdict is not None and verdict is not True:
                found.append((k, str(verdict)))

    try:
        system = DifferentialSystem(engine, board, [])
        s = system.initial_states()[0]
        note(0, system.check_state(s))
        for k, label in enumerate(cex["trace"], 1):
            if found:
                break
            if s[2] is None:
                break
            acts = system.actions(s)
            note(k - 1, system.check_actions(s, acts))
            if found:
                break
            act = pick_action(acts, label)
            if act is None:
                legal = ", ".join(a.label for a in acts) or "(none: the state is terminal)"
                field_ = f"{cex.get('_where', '')}.trace[{k - 1}]".lstrip(".")
                print(_line(f"bpcheck: error: {cex.get('_file', '<counterexample>')}: {field_}: step {k}: {label!r} is not legal here (the trace no longer applies); legal: {legal}"), file=sys.stderr)
                return EXIT_BAD_INPUT
            s2, info = system.step(s, act)
            note(k, system.check_transition(s, act, info, s2))
            if s2[2] is not None:
                note(k, system.check_state(s2))
            if verbose:
                print(f"  {k:3}. {_line(label)}" + ("  <-- DIFF" if found else ""))
            s = s2
        if not found and s[2] is not None and not system.is_terminal(s):
            note(len(cex["trace"]), system.check_actions(s, system.actions(s)))
    except SystemFault as f:
        print(f"engine fault while replaying: {f.kind}: {_line(f.message)}")
        return EXIT_FAIL
    finally:
        _close(engine)
    if found:
        k, msg = found[0]
        print(f"engine and reference still disagree at step {k}: {_line(msg)}")
        return EXIT_FAIL
    print(f"the engine agrees with the reference model along the whole trace: {DIFF} is no longer violated")
    return EXIT_OK
