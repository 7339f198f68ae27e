"""`bpcheck replay`: re-run a saved counterexample step by step and print what each step did
(loading and checking counterexamples: :mod:`bpcheck.harness.replay`)."""

from __future__ import annotations

from bpcheck.cli.args import error as _err
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK
from bpcheck.cli.traces import replay_differential
from bpcheck.engines import make_engine
from bpcheck.engines.faults import SystemFault
from bpcheck.errors import InputError
from bpcheck.harness.replay import TraceReplay, engine_note, load_cex_board, load_counterexamples, ruleset_note
from bpcheck.model.rulesets import DEFAULT_RULESET
from bpcheck.reports.safe import line as _line  # what an engine or a file said, on one line
from bpcheck.reports.text import board_lines


def replay_file(path: str, verbose: bool = True, engine: str | None = None, call_timeout: float | None = None, ruleset: str | None = None) -> int:
    """`ruleset`: --ruleset, the ruleset of a counterexample whose file and board name none."""
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
        note = ruleset_note(cex, ruleset)
        if note:
            print(note)
        try:
            code = replay_one(path, cex, verbose, engine, call_timeout, ruleset)
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


def replay_one(path: str, cex: dict, verbose: bool, engine_spec: str | None = None, call_timeout: float | None = None, ruleset: str | None = None) -> int:
    if cex["invariant"] == "DIFF":  # a differential-mode counterexample: replay in lockstep

        return replay_differential(cex, verbose, engine_spec, call_timeout, cex_path=path, ruleset=ruleset)
    try:
        # A trace is short: a cmd: engine is always asked twice (docs/protocol.md).
        engine = make_engine(engine_spec, call_timeout=call_timeout, check_determinism=True)
        board = load_cex_board(path, cex, ruleset)
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
    rp = TraceReplay(cex, engine, board)
    rs = f" (ruleset {board.ruleset})" if board.ruleset not in (None, DEFAULT_RULESET) else ""  # as check names it
    print(f"replaying {cex['invariant']} on {_line(cex['board'])}{rs} ({len(cex['trace'])} {rp.what})")
    try:
        for n, shown, broken in rp.steps():
            if verbose:
                print(f"  {n:3}. {_line(shown)}{'  <-- ' + ', '.join(broken) if broken else ''}")
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    if not rp.found:
        print(f"the trace replays and every invariant holds: {cex['invariant']} is no longer violated")
        return EXIT_OK
    step, pid, msg, _sig = rp.found[0]
    again = [g for _s, p, _m, g in rp.found if p == cex["invariant"]]
    print(f"violated at step {step}: {pid}: {_line(msg)}")
    if not again:
        print(f"(the recorded invariant {cex['invariant']} held; another one did not)")
    elif cex.get("signature") is not None and cex["signature"] not in again:
        print(f"(the recorded {cex['invariant']} [{cex['signature']}] did not recur; it failed as {', '.join(dict.fromkeys(str(g) for g in again))})")
    if verbose:
        print("board at the end of the trace:")
        try:
            for line in board_lines(rp.state[1]):
                print("    " + _line(line))
        except (KeyError, TypeError, IndexError, AttributeError, ValueError):
            print("    (the engine's observation cannot be drawn: it does not follow docs/model.md)")
    return EXIT_FAIL
