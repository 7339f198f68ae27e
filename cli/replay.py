"""`bpcheck replay`: re-run a saved counterexample step by step and print what each step did
(loading and checking counterexamples: :mod:`bpcheck.harness.replay`)."""

from __future__ import annotations

from bpcheck.cli.args import error as _err
from bpcheck.harness.replay import _forced, engine_note, load_cex_board, load_counterexamples, pick_action
from bpcheck.errors import InputError
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK
from bpcheck.explorers.checking import EngineSystem
from bpcheck.engines.faults import SystemFault
from bpcheck.invariants import REGISTRY
from bpcheck.model import fields
from bpcheck.engines import make_engine
from bpcheck.reports.safe import line as _line  # what an engine or a file said, on one line
from bpcheck.reports.text import board_lines




def replay_file(path: str, verbose: bool = True, engine: str | None = None, call_timeout: float | None = None) -> int:
    engine_name = engine or "reference"
    try:
        cexs = load_counterexamples(path)
        make_engine(engine, call_timeout=call_timeout)  # a bad --engine is a usage error before anything runs
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    if not cexs:  # nothing replayed is not "fixed" (exit 0 would say so): a usage error, said plainly
        _err(InputError(path, "boards", "the result holds no counterexample: there is nothing to replay (its boards passed, were inconclusive or skipped)"))
        return EXIT_BAD_INPUT
    worst = EXIT_OK
    for cex in cexs:
        note = engine_note(cex, engine_name)
        if note:
            print(note)
        try:
            code = replay_one(path, cex, verbose, engine, call_timeout)
        except SystemFault as f:  # an out-of-process engine crashed, hung, ... (docs/protocol.md)
            print(f"  engine fault: {f.kind}: {_line(f.message)}")
            code = EXIT_FAIL
        except InputError as e:
            _err(e)
            code = EXIT_BAD_INPUT
        if code == EXIT_BAD_INPUT or worst == EXIT_BAD_INPUT:
            worst = EXIT_BAD_INPUT
        elif code == EXIT_FAIL:
            worst = EXIT_FAIL
    return worst


def replay_one(path: str, cex: dict, verbose: bool, engine_spec: str | None = None, call_timeout: float | None = None) -> int:
    if cex["invariant"] == "DIFF":  # a differential-mode counterexample: replay in lockstep
        from bpcheck.cli.traces import replay_differential

        return replay_differential(cex, verbose, engine_spec, call_timeout, cex_path=path)
    try:
        # A trace is short: a cmd: engine is always asked twice (docs/protocol.md).
        engine = make_engine(engine_spec, call_timeout=call_timeout, check_determinism=True)
        board = load_cex_board(path, cex)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    try:
        return _replay(cex, engine, board, verbose)
    finally:
        close = getattr(engine, "close", None)
        if callable(close):
            close()


def _replay(cex: dict, engine, board, verbose: bool) -> int:
    invariants = list(REGISTRY.values())
    system = EngineSystem(engine, board, invariants)
    s = system.initial_states()[0]
    found: list[tuple[int, str, str, str | None]] = []  # (step, invariant, message, signature)

    def note(step: int, results):
        for pid, verdict in results:
            if verdict is not None and verdict is not True:
                found.append((step, pid, str(verdict), getattr(verdict, "key", None)))

    folded = None
    if cex.get("folded"):
        # #N entries of a trace the engine could not replay for the report, with forced passes folded
        # (reduction): each is a decision, followed by the forced passes the explorer took after it,
        # which are re-executed here exactly as the explorer folded them (explorers/reduce.py)
        from bpcheck.explorers.reduce import Reduced

        folded = Reduced(system)
        folded.finish(None)
        s = folded.initial_states()[0]
    n = 0  # steps taken (forced passes included)
    what = "decisions, forced passes folded" if folded is not None else "steps"
    print(f"replaying {cex['invariant']} on {_line(cex['board'])} ({len(cex['trace'])} {what})")
    note(0, system.check_state(s))
    for k, label in enumerate(cex["trace"], 1):
        acts = system.actions(s)
        note(k - 1, system.check_actions(s, acts))
        act = pick_action(acts, label)
        if act is None:
            legal = ", ".join(a.label for a in acts) or "(none: the state is terminal)"
            _err(InputError(cex.get("_file", "<counterexample>"), fields.field_path(fields.field_path(cex.get("_where", ""), "trace"), k - 1), f"step {k}: {label!r} is not legal here (the trace no longer applies); legal: {legal}"))
            return EXIT_BAD_INPUT
        if folded is not None:  # a decision, then the forced passes the explorer folded after it
            s2, macro = folded.step(s, act)
            for j, m in enumerate(macro.micro):
                n += 1
                before = len(found)
                if j:
                    note(n - 1, system.check_state(m.before))
                    note(n - 1, system.check_actions(m.before, [m.action]))
                note(n, system.check_transition(m.before, m.action, m.info, m.after))
                if verbose:
                    mark = "  <-- " + ", ".join(pid for _k, pid, _m in found[before:]) if len(found) > before else ""
                    shown = (label if act.label == label else f"{label} = {act.label}") if not j else f"{m.action.label} (forced)"
                    print(f"  {n:3}. {_line(shown)}{mark}")
            note(n, system.check_state(s2))
            s = s2
            continue
        n += 1
        s2, events = system.step(s, act)
        before = len(found)
        note(k, system.check_transition(s, act, events, s2))
        note(k, system.check_state(s2))
        if verbose:
            mark = "  <-- " + ", ".join(pid for _k, pid, _m, _g in found[before:]) if len(found) > before else ""
            shown = label if act.label == label else f"{label} = {act.label}"
            print(f"  {k:3}. {_line(shown)}{' (forced)' if _forced(cex, k - 1) else ''}{mark}")
        s = s2
    if not system.is_terminal(s):
        note(n, system.check_actions(s, system.actions(s)))
    if found:
        step, pid, msg, _sig = found[0]
        again = [g for _s, p, _m, g in found if p == cex["invariant"]]
        print(f"violated at step {step}: {pid}: {_line(msg)}")
        if not again:
            print(f"(the recorded invariant {cex['invariant']} held; another one did not)")
        elif cex.get("signature") is not None and cex["signature"] not in again:
            print(f"(the recorded {cex['invariant']} [{cex['signature']}] did not recur; it failed as {', '.join(dict.fromkeys(str(g) for g in again))})")
        if verbose:
            print("board at the end of the trace:")
            try:
                for line in board_lines(s[1]):
                    print("    " + _line(line))
            except (KeyError, TypeError, IndexError, AttributeError, ValueError):
                print("    (the engine's observation cannot be drawn: it does not follow docs/model.md)")
        return EXIT_FAIL
    print(f"the trace replays and every invariant holds: {cex['invariant']} is no longer violated")
    return EXIT_OK
