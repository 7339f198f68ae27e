"""The `bpcheck` command line.

Exit statuses (the CI contract, also in the README and docs/checking.md):
  0  everything checked passed (boards an engine refused are skipped, unless --strict)
  1  a check failed (an invariant, a scenario expectation, an engine fault)
  2  bad input or usage (the message names the file, the field and the problem)
  3  inconclusive (a bound was hit in `check`; `fuzz`: no board explored, or a partial search with --strict)
  4  internal error: a bug in bpcheck (one line; the traceback is written to a file); a report
     writer's own bug costs that output only and keeps the verdict's status
  129 / 130 / 143  stopped by SIGHUP / SIGINT / SIGTERM (finished boards' results are written)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Sequence

from bpcheck import __version__
from bpcheck.errors import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INTERNAL, EXIT_OK, InputError

STARTED = time.monotonic()  # when the command began: the progress's clock (cli/feedback.py); main() sets it again


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, no traceback
        self.print_usage(sys.stderr)
        print(f"bpcheck: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _err(e: InputError) -> None:
    from bpcheck.model.inputs import one_line

    print(one_line(f"bpcheck: error: {e.render()}"), file=sys.stderr)  # one line, whatever a file or an engine said


def cmd_scenario(args: argparse.Namespace) -> int:
    from bpcheck.scenarios import cmd_scenario as run  # docs/scenarios.md

    return run(args)


def cmd_validate(args: argparse.Namespace) -> int:
    from bpcheck.model.board import load_board, parse_toml, read_text
    from bpcheck.scenarios import load_scenario

    from bpcheck.explorers.checking import parse_goals
    from bpcheck.model.inputs import input_files

    try:
        files = input_files(args.files, ".toml", "board or scenario")
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    bad = 0
    for path, display in files:
        try:
            data = parse_toml(read_text(path, display), display)
            if "step" in data or "board" in data:
                sc = load_scenario(path, display)
                print(f"ok    {display}  scenario {sc.name!r}: {len(sc.steps)} steps, rules {', '.join(sc.rules)}")
            else:
                b = load_board(path, display, symbolic=True)  # a symbolic board is valid (bpcheck prove)
                parse_goals(b)  # what `check` reads besides the board: validate accepts what check accepts
                n = sum(1 for _ in b.state.monsters())
                sym = f"; symbolic: {', '.join(r.describe() for r in b.symbols)}" if b.symbols else ""
                print(f"ok    {display}  board {b.name!r}: turn {b.state.turn}, {n} monsters on the field{sym}")
        except InputError as e:
            _err(e)
            bad += 1
    return EXIT_BAD_INPUT if bad else EXIT_OK


def cmd_cards(args: argparse.Namespace) -> int:
    from bpcheck.model.cards import builtin_pool, card_summary

    pool = builtin_pool()
    if args.name:
        if args.name not in pool:
            close = [n for n in pool.names() if args.name.lower() in n.lower()]
            hint = f"; did you mean: {', '.join(close)}" if close else ""
            _err(InputError("<card pool>", "name", f"unknown card {args.name!r}{hint}"))
            return EXIT_BAD_INPUT
        d = card_summary(pool[args.name])
        if args.json:
            print(json.dumps(d, indent=2))
        else:
            for k, v in d.items():
                print(f"{k:10} {v}")
        return EXIT_OK
    rows = [card_summary(c) for c in pool]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for d in rows:
        stats = f"{d['atk']}/{d['def_']}" if "atk" in d else ""
        print(f"{d['passcode']}  {d['kind']:7} {d['subtype']:10} {stats:>9}  {d['name']}")
    print(f"{len(rows)} cards")
    return EXIT_OK


def _board_files(paths: list[str]) -> list[tuple[Path, str]]:
    from bpcheck.model.inputs import input_files

    return input_files(paths, ".toml", "board")


def _exclude(files: list[tuple[Path, str]], patterns: list[str] | None) -> tuple[list[tuple[Path, str]], list[str]]:
    """`files` less those an ``--exclude`` pattern matches (a shell pattern over the board's path
    as found, or over its file name), and the paths left out. A pattern that matches no board, or
    patterns that leave none, are errors: a typo never silently checks a board the user meant to
    leave out, and a run never checks "0 boards" and passes."""
    if not patterns:
        return files, []
    from fnmatch import fnmatchcase

    pats = [p[2:] if p.startswith("./") else p for p in patterns]
    used = [False] * len(pats)
    kept, out = [], []
    for path, shown in files:
        hit = False
        for i, pat in enumerate(pats):
            if fnmatchcase(path.as_posix(), pat) or fnmatchcase(path.name, pat):
                used[i] = hit = True
        if hit:
            out.append(path.as_posix())
        else:
            kept.append((path, shown))
    for pat, u in zip(patterns, used):
        if not u:
            raise InputError("--exclude", pat, f"matches none of the {len(files)} board files given (a shell pattern over a board's path or file name)")
    if not kept:
        raise InputError("--exclude", " ".join(patterns), f"leaves none of the {len(files)} board files given")
    return kept, out


def _positive(kind):
    from bpcheck.model.inputs import positive_number  # finite and > 0: nan, inf, 0, -1 refused

    return positive_number(kind)


def _invariants(args: argparse.Namespace):
    """The invariants named by --invariants (all by default), or None after reporting bad input."""
    from bpcheck.invariants import select

    try:
        return select(args.invariants)
    except KeyError as e:
        _err(InputError("--invariants", "", f"unknown invariant or family {e.args[0]!r} (see `bpcheck invariants`)"))
        return None


def _check_outputs(args: argparse.Namespace, files: list[tuple[Path, str]]) -> None:
    """Output paths are checked before the run (exit 2 now, not a traceback after it), and the
    outputs an earlier run left there are removed: CI never reads a stale result."""
    from bpcheck.outputs import prepare_dir, prepare_file

    inputs = tuple(p for p, _d in files)
    if args.resume and not args.checkpoint:
        raise InputError("--resume", "", "needs --checkpoint FILE (the checkpoint to resume)")
    if args.checkpoint and getattr(args, "fail_fast", False):
        raise InputError("--fail-fast", "", "not with --checkpoint (a checkpoint is of one board; --fail-fast orders several)")
    if args.checkpoint:
        if len(files) != 1:
            raise InputError("--checkpoint", "", f"checkpoints are per board: give exactly one board file (got {len(files)})")
        prepare_file(args.checkpoint, "--checkpoint", keep=True, inputs=inputs)
        if not args.resume and Path(args.checkpoint).exists():  # hours of exploration: never dropped silently
            raise InputError(args.checkpoint, "--checkpoint", "a checkpoint is already there: add --resume to go on from it, or remove it")
    if args.json:
        prepare_file(args.json, "--json", inputs=inputs)
    if args.cex_dir:
        prepare_dir(args.cex_dir, "--cex-dir", "counterexamples")
    if getattr(args, "report", None):
        prepare_dir(args.report, "--report", "report")


class LoadBound(Exception):
    """--timeout or --memory-limit was reached while a board was read (:func:`load_bounded`)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def load_bounded(path, display: str, timeout: float | None, memory_limit: int | None):
    """``load_board(path, display)`` within the board's bounds: ``--timeout`` counts from here,
    so a board that takes longer than that to read is stopped while it is read (an interval timer
    in this, the main, thread); ``--memory-limit``: a board whose reading could take the process
    past the limit (reading costs at most twice the file plus 16 MiB: docs/bad-input.md, "Bounded
    cost") is not read. Either is :class:`LoadBound`, the board inconclusive."""
    import os
    import signal

    from bpcheck.explorers.core import current_rss
    from bpcheck.model.board import load_board

    if memory_limit is not None:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0  # the reader says what is wrong with it
        rss = current_rss()
        need = 2 * size + 16 * 2**20
        if rss is not None and rss + need >= memory_limit * 0.9:
            mib = lambda n: f"{n / 2**20:,.0f} MiB"  # noqa: E731
            raise LoadBound(f"memory limit ({mib(memory_limit)}; {mib(rss)} in use, reading the board may need {mib(need)} more: not read)")
    use_timer = timeout is not None and hasattr(signal, "setitimer")
    if use_timer:
        try:
            old = signal.signal(signal.SIGALRM, _load_alarm)
        except ValueError:  # not the main thread: no timer
            use_timer = False
    if not use_timer:
        return load_board(path, display)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return load_board(path, display)
    except _LoadTimeout:
        raise LoadBound(f"time limit ({timeout:g} s) while reading the board") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class _LoadTimeout(BaseException):
    """(BaseException: nothing on the way catches it as an error of the file)"""


def _load_alarm(_signum, _frame) -> None:
    raise _LoadTimeout()


def unloaded_result(display: str, invariants, strategy: str, why: str):
    """The result of a board that was not read to the end (:class:`LoadBound`): inconclusive, the
    bound named, nothing explored."""
    from bpcheck.model.board import Board

    return _interrupted_result(Board(path=display, name=display, state=None, pool=None), invariants, strategy, why)  # type: ignore[arg-type]


def _interrupted_result(board, invariants, strategy: str, why: str):
    """A board whose exploration a signal cut short before it could stop by itself."""
    from bpcheck.explorers.checking import parse_goals
    from bpcheck.explorers.core import ExploreResult
    from bpcheck.explorers.run import BoardResult

    try:
        goals = parse_goals(board)
    except InputError:
        goals = []
    br = BoardResult(board, ExploreResult(status="inconclusive", strategy=strategy, bound_hit=why), list(invariants), goals)
    br.witnesses = {g.id: None for g in goals}
    return br


def _board_lines(br, display: str, args: argparse.Namespace) -> list[str]:
    from bpcheck.reports.safe import line as _line  # what an engine said, on one line

    r = br.result
    display = _line(display)
    if br.verdict == "skipped":
        return [f"{'SKIPPED':12} {display}: the engine refused this board: {_line(br.skip_reason)}"]
    vac = [row["id"] for row in br.invariant_rows() if row["verdict"] == "vacuous"]
    line = f"{r.status.upper():12} {display}: {r.states} states, {r.transitions} transitions, depth {r.max_depth}"
    if getattr(br, "reduction", None):  # reduction (explorers/reduce.py): what was folded
        line += f" (decisions; {br.reduction['forced_states']} forced-pass states judged, not stored)"
    if args.stats:
        line += f", {r.elapsed:.2f} s ({r.states / max(r.elapsed, 1e-9):,.0f} states/s)"
    if r.bound_hit:
        line += f"; bound hit: {r.bound_hit}"
    out = [line]
    if r.states and not r.bound_hit:
        c = r.collision
        if args.verbose or c["optimistic"] >= 1e-9:
            out.append(f"             fingerprint collision probability: {c['optimistic']:.1e} (optimistic, as TLC), at most {c['bound']:.1e}")
    if vac and args.verbose:
        out.append(f"             vacuous here: {', '.join(vac)}")
    for inv_id, why in br.not_judged.items():  # never silent: card data the invariants cannot classify
        out.append(f"             not judged here: {inv_id}: {_line('; '.join(why))}")
    for g in br.goals:
        desc = " (" + g.description + ")" if g.description else ""
        if br.witnesses.get(g.id) is None:
            if r.bound_hit:
                out.append(f"             goal {g.id!r} was not reached within the bound ({r.bound_hit}){desc}")
            else:
                out.append(f"             goal {g.id!r} is not reachable{desc}")
        elif args.verbose:
            out.append(f"             goal {g.id!r} reached in {len(br.witnesses[g.id])} steps")
    unreported = {x["path"] for x in getattr(br, "not_reported", None) or []}
    declared = [p for p in br.not_compared if p not in unreported]
    if declared:  # protocol v2: what the engine does not observe is never compared
        out.append(f"             not compared (the engine does not observe them): {_line(', '.join(declared))}")
    for side in ("engine", "reference"):  # --differential: fields one side does not report at all
        paths = [x["path"] for x in getattr(br, "not_reported", None) or [] if x["side"] == side]
        if paths:
            out.append(f"             not compared (the {side} does not report them): {_line(', '.join(paths))}")
    judged = {row["id"]: row for row in br.invariant_rows()}
    by_reason: dict[str, list[str]] = {}
    for inv_id, why in sorted(br.not_evaluated.items()):
        row = judged.get(inv_id, {})
        if row.get("violations"):  # it found a violation here: its counterexample says so, not "not evaluated"
            continue
        if row.get("checked"):  # judged where it could read what it needs, not evaluated elsewhere
            out.append(f"             partly evaluated: {inv_id} (held where judged; not evaluated where {_line(why.removeprefix('the '))})")
        else:
            by_reason.setdefault(why, []).append(inv_id)
    for why, ids in by_reason.items():  # one line per reason, not per invariant
        out.append(f"             not evaluated ({_line(why)}): {', '.join(ids)}")
    for inv_id, parts in sorted(getattr(br, "not_evaluated_parts", {}).items()):
        out.append(f"             not evaluated in part: {inv_id}: {_line('; '.join(parts))}")
    new = []
    for cex in br.counterexamples:
        what = _cex_what(cex)
        if getattr(cex, "baselined", None) is not None:
            out.append(f"             known disagreement (baseline): {_line(what)}: {_line(cex.baselined)}")
            continue
        new.append(what)
    if new:  # each root cause's trace is printed once, after the boards (reports/text.py root_cause_lines)
        out.append(f"             violated: {', '.join(dict.fromkeys(new))} (traces below, by root cause)")
    for gone in (getattr(br, "baseline", None) or {}).get("gone", []):
        what = f"{gone['path']} [{gone['signature']}]" if gone["kind"] == "invariant" else f"DIFF {gone['kind']} {gone['path']}"
        out.append(f"             baseline: no longer occurs: {_line(what)} ({_line(gone['reason'])})")
    return out


def _cex_what(cex) -> str:
    """A counterexample as a baseline lists it: ``DIFF KIND PATH`` or ``INVARIANT [SIGNATURE]``."""
    if cex.invariant == "DIFF" and isinstance(cex.key, tuple):
        return f"DIFF {cex.key[0]} {cex.key[1]}"
    return f"{cex.invariant} [{cex.key}]" if isinstance(cex.key, str) else cex.invariant


def _known_disagreements_note(args: argparse.Namespace, results) -> list[str]:
    """For a failing run of an engine whose known disagreements bpcheck ships (the EDOPro core:
    baselines/ocgcore.toml, docs/ocgcore-findings.md) without --baseline: where they are listed,
    how many of this run's counterexamples they account for, and the command line that uses
    them. Empty otherwise."""
    import os
    import shlex

    from bpcheck.engines.registry import known_disagreements

    known = known_disagreements(args.engine or "reference")
    failing = [br for br in results if br.verdict == "fail"]
    if known is None or args.baseline or not failing:
        return []
    # the checkout: the working directory when it holds the files (an installed wheel does not
    # ship them), else the one the CLI package is in (cli/ of an editable install)
    roots = [Path.cwd(), Path(__file__).resolve().parent.parent]
    root = next((r for r in roots if (r / known["baseline"]).exists()), roots[-1])

    def shown(rel: str) -> str:
        p = root / rel
        if not p.exists():
            return f"{rel} (in bpcheck's source tree)"
        try:
            return os.path.relpath(p)
        except ValueError:
            return str(p)

    baseline_path = shown(known["baseline"])
    lines = [
        f"note: {known['engine']} disagrees with the reference model in known, explained ways: {baseline_path} lists them board by board, "
        f"each with its reason, and {shown(known['findings'])} explains each finding (its trace, its class: structural, adapter, "
        "rules choice or core bug)."
    ]
    bl_file = root / known["baseline"]
    if bl_file.exists():
        from bpcheck.explorers.baseline import load_baseline

        try:
            bl = load_baseline(str(bl_file))
        except InputError:
            bl = None
        if bl is not None:
            engine_name = args.engine or "reference"
            n = listed = 0
            for br in failing:
                _mine, hits = bl.match(br, engine_name, args.differential)
                n += len(hits)
                listed += sum(h is not None for h in hits)
            lines.append(f"      {listed} of the {n} counterexamples above are listed there; {n - listed} are not.")
    given = list(getattr(args, "argv", None) or [])
    argv = ["bpcheck", *given] if given[:1] == ["check"] else ["bpcheck", "check", "BOARD...", "--engine", args.engine]
    lines.append("      To fail only on what is not listed: " + shlex.join([*argv, "--baseline", baseline_path.split(" (")[0]]))
    return lines


def cmd_check(args: argparse.Namespace) -> int:
    from bpcheck.errors import EXIT_INCONCLUSIVE
    from bpcheck.explorers.core import Bounds, ResumeMismatch, collision_probability
    from bpcheck.explorers.run import check_board, overall_verdict, result_document
    from bpcheck.lifecycle import CURRENT as sig
    from bpcheck.lifecycle import Interrupted

    invariants = _invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    try:
        files, excluded = _exclude(_board_files(args.paths), args.exclude)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    from bpcheck.engines import make_engine

    engine_kw = {"call_timeout": args.call_timeout, "check_determinism": args.check_determinism}
    try:
        make_engine(args.engine, **engine_kw)
        _check_outputs(args, files)
        from bpcheck.jobs import setup_cluster

        setup_cluster(args, args.engine, engine_kw)  # --cluster: Ray, every node able to run the engine
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    engine_name = args.engine or "reference"
    system_kw: dict = {}
    if args.differential:  # lockstep with the reference model: explorers/differential.py
        from bpcheck.explorers.differential import DIFF_INVARIANT, DifferentialSystem

        invariants = [*invariants, DIFF_INVARIANT]
        system_kw["system_cls"] = DifferentialSystem
        if args.diff_continue_order:
            import functools

            system_kw["system_cls"] = functools.partial(DifferentialSystem, continue_past_order=True)
    elif args.diff_continue_order:
        _err(InputError("--diff-continue-order", "", "needs --differential"))
        return EXIT_BAD_INPUT
    baseline = None
    if args.baseline:  # known, explained disagreements (explorers/baseline.py, docs/checking.md)
        from bpcheck.explorers.baseline import load_baseline

        try:
            baseline = load_baseline(args.baseline)
        except InputError as e:
            _err(e)
            return EXIT_BAD_INPUT
    bounds = Bounds(args.max_states, args.max_depth, args.timeout)
    from bpcheck.reporting import emit_check_reports, graph_limit

    if graph_limit(args):  # --report draws small state graphs: record them (bounded)
        system_kw["graph_limit"] = graph_limit(args)
    system_kw["reduce"] = not args.no_reduce  # reduction: explorers/reduce.py (off with --differential / --checkpoint)
    system_kw["stop"] = sig.stop_reason  # SIGINT / SIGTERM / SIGHUP: stop cleanly, keep what was found
    if args.memory_limit:
        system_kw["memory_limit"] = args.memory_limit
    results = []
    errors: list[dict] = []
    not_started: list[str] = []
    checkpoint_note: list[str] = []
    internal: Exception | None = None  # bpcheck's own bug: the finished boards are written, then exit 4
    sig.polling = True  # the first signal stops the exploration; outputs are still written
    from bpcheck.jobs import resolve_jobs

    jobs = resolve_jobs(args.jobs)
    fail_fast = None
    n_crashed = 0
    from bpcheck.feedback import CheckFeed  # progress and early results on stderr (cli/feedback.py)

    feed = CheckFeed(args, files, invariants, engine_kw, engine_name, system_kw, baseline, lambda br, d: _board_lines(br, d, args)[0])
    try:
        if args.fail_fast or (jobs > 1 and len(files) > 1):  # cli/jobs.py: workers and the cost order
            outcome = _check_jobs(args, files, jobs, invariants, engine_kw, engine_name, system_kw, bounds, baseline, feed)
            results, errors, not_started = outcome.results, outcome.errors, outcome.not_started
            if outcome.internal is not None:
                internal = _WorkerBug(outcome.internal, outcome.internal_traceback)
            n_crashed = len(outcome.crashed)
            if outcome.crashed and outcome.internal is None:
                internal = _WorkerBug(f"{len(outcome.crashed)} worker process(es) died: " + "; ".join(outcome.crashed), None)
            if args.fail_fast:
                fail_fast = {"stopped_at": outcome.stopped_at, "not_run": outcome.not_run, "not_finished": outcome.not_finished}
            files_iter: list = []
        else:
            files_iter = files
        for k, (path, display) in enumerate(files_iter):
            if sig.signum is not None:
                not_started = [d for _p, d in files[k:]]
                break
            board = None
            try:
                started = time.monotonic()
                try:
                    board = feed.board(k, path, display, lambda p, d: load_bounded(p, d, args.timeout, args.memory_limit))
                except LoadBound as lb:  # --timeout / --memory-limit reached while reading: inconclusive
                    br = unloaded_result(display, invariants, args.strategy, lb.why)
                    results.append(br)
                    print("\n".join(_board_lines(br, display, args)))
                    continue
                controls = dict(system_kw)
                if args.timeout is not None:
                    controls["started"] = started  # --timeout covers the reading too
                if args.checkpoint:
                    controls.update(_checkpoint_controls(args, board, engine_name, invariants, checkpoint_note))
                if jobs > 1:  # one board: the sharded explorer (explorers/parallel.py), where it applies
                    from bpcheck.explorers.run import system_factory

                    from bpcheck.explorers.checking import EngineSystem
                    from bpcheck.explorers.cluster import active, explorer_transport

                    make_system = system_factory(board, args.engine, engine_kw, [i.id for i in invariants], system_kw.get("system_cls", EngineSystem))
                    controls["parallel"] = (jobs, make_system, explorer_transport(active()))  # --cluster: Ray actors
                task = feed.begin(board, display)
                br = check_board(board, make_engine(args.engine, **engine_kw), invariants, args.strategy, bounds, engine_name, progress=task, found=feed.found(board, task), **controls)
            except InputError as e:
                _err(e)
                errors.append({"file": e.file, "field": e.field, "problem": e.problem})
                continue
            except ResumeMismatch as e:
                e2 = InputError(args.checkpoint, "--resume", str(e))
                _err(e2)
                errors.append({"file": e2.file, "field": e2.field, "problem": e2.problem})
                continue
            except Interrupted as e:  # a second signal: the board is cut short where it was
                if board is not None:
                    br = _interrupted_result(board, invariants, args.strategy, f"interrupted ({e.name})")
                    results.append(br)
                    print("\n".join(_board_lines(br, display, args)))
                not_started = [d for _p, d in files[k + 1 :]]
                break
            except Exception as e:  # a bug in bpcheck: keep what is finished, then report it (exit 4)
                internal = e
                break
            results.append(br)
            if baseline is not None:  # known disagreements do not fail the board; new ones do
                baseline.outcome(br, engine_name, args.differential)
            if args.checkpoint:
                _finish_checkpoint(args, br, checkpoint_note)
            feed.finish(task, br)
            print("\n".join(_board_lines(br, display, args)))
    finally:
        feed.close()
    for line in checkpoint_note:
        print(line)
    from bpcheck.reporting import bound_counterexamples

    # --max-counterexamples: the outputs keep at most N (the verdicts count every one)
    left_out, hidden_causes = bound_counterexamples(results, engine_name, args.max_counterexamples)
    report_errors: list[dict] = []  # report writers that failed (bpcheck's bugs): each costs its own output only
    groups = _print_root_causes(args, results, engine_name, report_errors)
    interrupted = None
    if sig.signum is not None:
        interrupted = {"signal": sig.name, "not_started": not_started}
    strict = bool(args.strict)
    doc = result_document(
        results,
        engine_name,
        args.strategy,
        bounds,
        errors,
        timings=args.stats,
        strict=strict,
        interrupted=interrupted,
        internal_error=None if internal is None else _internal_line(internal),
        fail_fast=fail_fast,
        excluded=excluded,
    )
    inv_total = {inv.id: 0 for inv in invariants}
    for br in results:
        if br.verdict == "skipped":
            continue
        for row in br.invariant_rows():
            if row["id"] in inv_total:
                inv_total[row["id"]] += row["checked"]
    unjudged = {k for br in results for k in br.not_judged}
    # never checked: vacuous (the situation never arose) only where it was evaluated at all; an
    # invariant not evaluated on a board (the engine does not observe what it reads) is listed apart
    not_evaluated = {k: why for br in reversed(results) if br.verdict != "skipped" for k, why in br.not_evaluated.items()}
    never = [k for k, v in inv_total.items() if v == 0 and k not in unjudged and k not in not_evaluated]
    never_evaluated = [k for k, v in inv_total.items() if v == 0 and k not in unjudged and k in not_evaluated]
    verdicts = [r.verdict for r in results]
    n_pass, n_fail, n_inc, n_skip = (verdicts.count(v) for v in ("pass", "fail", "inconclusive", "skipped"))
    print(
        f"check: {n_pass} passed, {n_fail} failed, {n_inc} inconclusive"
        + (f", {n_skip} skipped" if n_skip else "")
        + (f", {len(errors)} bad input" if errors else "")
        + (f", {n_crashed} crashed" if n_crashed else "")
        + f" ({len(files)} boards, {len(invariants)} invariants)"
    )
    if excluded:
        print(f"excluded by --exclude (not checked): {', '.join(excluded)}")
    if n_skip:
        print(f"skipped (the engine refused them{'; --strict: not a pass' if strict else ''}): " + ", ".join(r.board.path for r in results if r.verdict == "skipped"))
    if fail_fast is not None:
        nf = fail_fast["not_finished"]
        unfinished = f"{len(nf)} boards not finished (explored within a budget only, no verdict): {', '.join(nf)}" if nf else ""
        if fail_fast["stopped_at"] is None:
            print("fail-fast: no board failed; " + (unfinished if nf else "every board was run"))
        else:
            nr = fail_fast["not_run"]
            left = [x for x in (unfinished, f"{len(nr)} boards not run: {', '.join(nr)}" if nr else "") if x]
            print(
                f"fail-fast: stopped at the first failing board in the {'cost order' if baseline is not None else 'budget rounds'}, {fail_fast['stopped_at']}; "
                + ("; ".join(left) if left else "no board was left to run")
            )
    if interrupted is not None:
        print(f"interrupted by {sig.name}: the results above are of the boards finished before it" + (f"; {len(not_started)} boards not started" if not_started else ""))
    explored = [r.result for r in results if r.verdict != "skipped" and r.result.states]
    if explored and args.verbose:
        c = collision_probability(sum(x.states for x in explored), sum(x.generated for x in explored))
        print(f"fingerprint collision probability over the run: {c['optimistic']:.1e} (optimistic), at most {c['bound']:.1e}")
    if never and explored:
        print(f"vacuous on every board (their situation never arose): {', '.join(never)}")
    if never_evaluated and explored:
        print("not evaluated on any board (the engine does not observe what they read): " + ", ".join(f"{k} ({not_evaluated[k]})" for k in never_evaluated))
    if left_out:
        kept = sum(len(br.counterexamples) for br in results)
        print(
            f"max-counterexamples: {kept} counterexample{'s' if kept != 1 else ''} kept, {left_out} left out of every output "
            "(the first of each root cause is kept first; the verdicts above count them all)"
        )
        if hidden_causes:
            print(f"max-counterexamples: {len(hidden_causes)} root cause{'s' if len(hidden_causes) != 1 else ''} left out entirely (a larger N shows them):")
            for line in hidden_causes[:10]:
                print(f"  {line}")
            if len(hidden_causes) > 10:
                print(f"  and {len(hidden_causes) - 10} more (--json lists every one)")
    if any(c.invariant == "DIFF" and getattr(c, "baselined", None) is None for br in results for c in br.counterexamples):
        print("DIFF counterexamples show what differs and the trace; the observations before and after each step are in "
              "--json, --cex-dir and --report.")
    for line in _known_disagreements_note(args, results):
        print(line)
    write_failed = False
    for what, write in (
        ("--cex-dir", lambda: _write_cex_dir(args, doc, results)),
        ("--report/--github", lambda: report_errors.extend(emit_check_reports(args, results, errors, engine_name, bounds))),
        ("--json", lambda: _write_json(args, _json_extras(args, doc, groups, (left_out, hidden_causes), report_errors))),  # last: it records the others' failures
    ):
        try:  # one output that cannot be written (a full disk) does not cost the others
            write()
        except InputError as e:
            _err(e)
            write_failed = True
        except Exception as e:  # a bug in one writer costs that output only: the verdict and exit status stand
            from bpcheck.reporting import writer_failed

            writer_failed(args, what, e, report_errors)
    if isinstance(internal, _WorkerBug):  # a worker's bug or death: exit 4, the traceback in a file
        print(internal.report(), file=sys.stderr)
        return EXIT_INTERNAL
    if internal is not None:
        raise internal  # bpcheck.main.main: exit 4, one line, the traceback in a file
    if sig.signum is not None:
        return sig.exit_status
    if errors or write_failed:
        return EXIT_BAD_INPUT
    overall = overall_verdict(verdicts, 0, strict)
    if overall == "fail":
        return EXIT_FAIL
    if overall == "inconclusive":
        return EXIT_INCONCLUSIVE
    return EXIT_OK


class _WorkerBug(Exception):
    """bpcheck's own failure in a worker process (-j N): an exception there, or a worker that
    died. The finished boards are written; the run exits 4."""

    def __init__(self, line: str, tb: str | None) -> None:
        super().__init__(line)
        self.line = line
        self.tb = tb

    def report(self) -> str:
        """One line; the worker's traceback goes to a file, as for a bug in this process."""
        import os
        import tempfile

        from bpcheck.lifecycle import terminal_safe

        saved = ""
        if self.tb:
            folder = os.environ.get("BPCHECK_CRASH_DIR") or tempfile.gettempdir()
            try:
                fd, path = tempfile.mkstemp(prefix="bpcheck-internal-error-", suffix=".txt", dir=folder)
                with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
                    f.write(f"bpcheck {__version__} internal error in a worker of `bpcheck check`\nargv: {sys.argv!r}\n\n{self.tb}")
                saved = f"; the full traceback is in {path}"
            except OSError as oe:
                saved = f"; the traceback could not be written to {folder!r} ({oe.strerror or oe})"
        return terminal_safe(f"bpcheck: internal error (a bug in bpcheck, exit 4) in `check`: {self.line}{saved}")


def _internal_line(e: Exception) -> str:
    if isinstance(e, _WorkerBug):
        return e.line.splitlines()[0]
    return f"{type(e).__name__}: {e}".splitlines()[0]


def _check_jobs(args, files, jobs: int, invariants, engine_kw: dict, engine_name: str, system_kw: dict, bounds, baseline, feed):
    """`check -j N` (several boards) and `check --fail-fast`: cli/jobs.py schedules, this prints."""
    from bpcheck.explorers.run import check_board_task, restore_invariants
    from bpcheck.jobs import run_check_jobs
    from bpcheck.lifecycle import CURRENT as sig

    controls = {k: v for k, v in system_kw.items() if k != "stop"}  # a worker polls its own flag
    if jobs == 1:
        controls["stop"] = sig.stop_reason
    # --fail-fast: budget rounds, each board stopping at its first violation; not with --baseline,
    # where the first violation may be a known one: the board must go on (or it would pass
    # unexplored), so each board is explored to the end, cheapest first (docs/checking.md)
    rounds = bool(args.fail_fast) and baseline is None
    if rounds:
        controls["stop_on_violation"] = True
    inv_ids = [i.id for i in invariants]

    def task_args(board, within) -> tuple:
        return (board, args.engine, engine_kw, inv_ids, args.strategy, within, engine_name, controls)

    def restore(br):
        br = restore_invariants(br, invariants)
        if baseline is not None:  # known disagreements do not fail the board; new ones do
            baseline.outcome(br, engine_name, args.differential)
        return br

    def emit(i: int, entry) -> None:
        display = files[i][1]
        if entry.kind == "result":
            print("\n".join(_board_lines(entry.value, display, args)))
        elif entry.kind == "error":
            _err(entry.value)
        elif entry.kind == "crash":
            print(f"{'CRASHED':12} {display}: {entry.value} while checking this board (no result; bpcheck exits 4)")
        elif entry.kind == "internal":
            print(f"{'ERROR':12} {display}: internal error (a bug in bpcheck): {entry.value}")

    def cut_short(board):
        return _interrupted_result(board, invariants, args.strategy, f"interrupted ({sig.name})")

    def shard(board):
        """A board expected to cost SHARD_AT states or more is explored by all the workers at once
        (cli/jobs.py), when the sharded explorer can take it."""
        from bpcheck.explorers.checking import EngineSystem
        from bpcheck.explorers.cluster import active, explorer_transport
        from bpcheck.explorers.run import can_shard, system_factory
        from bpcheck.jobs import SHARD_AT, board_cost

        if jobs <= 1 or board_cost(board) < SHARD_AT or not can_shard(args.strategy, system_kw.get("graph_limit"), controls, bounds):
            return None
        c = dict(controls, stop=sig.stop_reason)  # in this process (cli/jobs.py adds its progress)
        c["parallel"] = (jobs, system_factory(board, args.engine, engine_kw, inv_ids, system_kw.get("system_cls", EngineSystem)), explorer_transport(active()))
        return (board, args.engine, engine_kw, inv_ids, args.strategy, bounds, engine_name, c)

    class _Unloaded:
        def __init__(self, result) -> None:
            self.result_without_exploring = result

    def load(path, display):  # --timeout and --memory-limit cover the reading too (load_bounded)
        try:
            return load_bounded(path, display, args.timeout, args.memory_limit)
        except LoadBound as lb:
            return _Unloaded(unloaded_result(display, invariants, args.strategy, lb.why))

    return run_check_jobs(
        files, jobs, bool(args.fail_fast), check_board_task, task_args, restore, emit, load, cut_short, sig, shard=shard, bounds=bounds, rounds=rounds, feed=feed
    )


def _write_json(args: argparse.Namespace, doc: dict) -> None:
    """--json, written atomically (a temporary file renamed over the target)."""
    from bpcheck.outputs import atomic_write_text

    if args.json:
        try:
            atomic_write_text(args.json, json.dumps(doc, indent=1, sort_keys=False) + "\n")
        except OSError as e:
            raise InputError(args.json, "--json", f"cannot write the result: {e.strerror or e}") from None


def _print_root_causes(args: argparse.Namespace, results: list, engine_name: str, report_errors: list[dict]) -> list:
    """The counterexamples' traces, each root cause once (reports/groups.py), after the boards.
    Returns the groups (for --json); a bug in the text writer costs the text only."""
    from bpcheck.reporting import root_causes, writer_failed
    from bpcheck.reports.text import root_cause_lines

    try:
        groups = root_causes(results, engine_name)
    except Exception as e:  # noqa: BLE001
        writer_failed(args, "the grouping of counterexamples by root cause", e, report_errors)
        return []
    try:
        lines = root_cause_lines(groups)
    except Exception as e:  # noqa: BLE001
        writer_failed(args, "the counterexamples as text", e, report_errors)
        return groups
    if lines:
        print("\n".join(lines))
        print()
    return groups


def _json_extras(args: argparse.Namespace, doc: dict, groups: list, bounded: tuple[int, list[str]], report_errors: list[dict]) -> dict:
    """What --json adds to the result document: the root causes (each counterexample's
    ``group``), what --max-counterexamples left out, and the report writers that failed."""
    if groups:
        doc["groups"] = [g.to_dict() for g in groups]
        for g in groups:
            for m in g.members:
                doc["boards"][m.run_index]["counterexamples"][m.cex_index]["group"] = g.number
    if args.max_counterexamples is not None:
        left_out, hidden = bounded
        doc["max_counterexamples"] = {"limit": args.max_counterexamples, "left_out": left_out}
        if hidden:
            doc["max_counterexamples"]["root_causes_left_out"] = list(hidden)
    if report_errors:
        doc["report_errors"] = list(report_errors)
    return doc


def _write_cex_dir(args: argparse.Namespace, doc: dict, results: list) -> None:
    """--cex-dir: the folder is built aside, then renamed into place."""
    from bpcheck.outputs import replace_dir

    if args.cex_dir:
        from bpcheck.reports.runs import cex_names, runs_of

        runs = runs_of(results, doc["engine"])
        names = cex_names(runs)

        def build(out: Path) -> None:
            for ri, run in enumerate(runs):
                for ci, cex in enumerate(run.counterexamples):
                    (out / f"{names[(ri, ci)]}.json").write_text(
                        json.dumps({"bpcheck_counterexample": 1, **cex.to_dict(full=False)}, indent=1) + "\n", encoding="utf-8"
                    )

        try:
            replace_dir(args.cex_dir, "counterexamples", build)
        except OSError as e:
            raise InputError(args.cex_dir, "--cex-dir", f"cannot write the counterexamples: {e.strerror or e}") from None


def _checkpoint_controls(args: argparse.Namespace, board, engine_name: str, invariants, notes: list[str]) -> dict:
    """--checkpoint FILE [--resume]: the explorer's checkpoint hook, and the snapshot to resume."""
    from bpcheck.explorers.checkpoint import checkpoint_key, read_checkpoint, write_checkpoint

    key = checkpoint_key(board.path, engine_name, [i.id for i in invariants], args.strategy, args.max_depth, bool(args.differential))
    out: dict = {"checkpoint_every": args.checkpoint_every}

    def save(snap) -> None:
        try:
            write_checkpoint(args.checkpoint, snap, key)
        except OSError as e:
            raise InputError(args.checkpoint, "--checkpoint", f"cannot write the checkpoint: {e.strerror or e}") from None

    out["on_checkpoint"] = save
    if args.resume:
        snap = read_checkpoint(args.checkpoint, key)
        out["resume"] = snap
        notes.append(f"checkpoint: resumed {args.checkpoint} ({len(snap.fps)} states explored before, {len(snap.frontier)} to expand)")
    return out


def _finish_checkpoint(args: argparse.Namespace, br, notes: list[str]) -> None:
    r = br.result
    if r.resumable:
        notes.append(f"checkpoint: written to {args.checkpoint} ({r.states} states); go on with --checkpoint {args.checkpoint} --resume")
    elif Path(args.checkpoint).exists():
        Path(args.checkpoint).unlink()  # the exploration is complete: nothing is left to resume
        notes.append(f"checkpoint: {args.checkpoint} removed (the exploration is complete)")


def _size(text: str) -> int:
    """A memory size: 500M, 2G, 1.5GiB, 800MB or a number of bytes (K/M/G/T: powers of 1024)."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size such as 500M, 2G or 1.5GiB, got {text!r}")
    n = float(m.group(1)) * 1024 ** "_kmgt".index(m.group(2).lower() or "_")
    if n < 1 or n != n or n > 2**62:
        raise argparse.ArgumentTypeError(f"must be a positive size, got {text!r}")
    return int(n)


def cmd_record(args: argparse.Namespace) -> int:
    from bpcheck.traces import record

    return record(args.board, args.engine, args.out, args.actions, args.random, args.seed)


def cmd_conform(args: argparse.Namespace) -> int:
    from bpcheck.traces import conform_files

    invariants = _invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    return conform_files(args.traces, invariants, verbose=not args.quiet, json_out=args.json)


def cmd_serve(args: argparse.Namespace) -> int:
    from bpcheck.engines.serve import run

    return run(args.engine)


def cmd_replay(args: argparse.Namespace) -> int:
    from bpcheck.replay import replay_file

    return replay_file(args.file, verbose=not args.quiet, engine=args.engine, call_timeout=args.call_timeout)


def invariants_markdown() -> str:
    from bpcheck.invariants.docs import markdown

    return markdown()


def cmd_invariants(args: argparse.Namespace) -> int:
    from bpcheck.invariants import REGISTRY
    from bpcheck.invariants.signatures import signatures_of

    if args.markdown:
        print(invariants_markdown())
        return EXIT_OK
    if args.json:  # with each invariant's signatures (name: the phrase of its message), which baseline entries name
        print(json.dumps([{**i.to_dict(), "signatures": signatures_of(i.id)} for i in sorted(REGISTRY.values(), key=lambda i: i.id)], indent=2))
        return EXIT_OK
    for inv in sorted(REGISTRY.values(), key=lambda i: (i.family, i.id)):
        print(f"{inv.id:32} {inv.kind:10} {inv.family:18} {', '.join(inv.rules)}")
        print(f"{'':32} {inv.statement}")
        print(f"{'':32} signatures: {', '.join(signatures_of(inv.id))}")
    return EXIT_OK


def _cmd_mutants(args: argparse.Namespace) -> int:
    from bpcheck.mutants import cmd_mutants

    return cmd_mutants(args)


def _cmd_export_puzzle(args: argparse.Namespace) -> int:
    from bpcheck.export_puzzle import cmd_export_puzzle

    return cmd_export_puzzle(args)


def _cmd_baseline(args: argparse.Namespace) -> int:
    from bpcheck.baseline import cmd_baseline

    return cmd_baseline(args)


def build_parser() -> argparse.ArgumentParser:
    from bpcheck.engines.registry import IN_PROCESS_FORMS, engine_help

    p = _Parser(prog="bpcheck", description="Model checker and property-test harness for the Yu-Gi-Oh! TCG Battle Phase.")
    p.add_argument("--version", action="version", version=f"bpcheck {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sc = sub.add_parser("scenario", help="run scenario files (executable rulings)")
    sc.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders")
    sc.add_argument("--json", metavar="FILE", help="write results as JSON")
    sc.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")
    sc.add_argument("--engine", metavar="ENGINE", help=engine_help())
    sc.add_argument("--strict", action="store_true", help="a scenario skipped because the engine refuses its board fails the run (exit 1)")
    sc.set_defaults(fn=cmd_scenario)

    va = sub.add_parser("validate", help="validate board and scenario files")
    va.add_argument("files", nargs="+", metavar="FILE")
    va.set_defaults(fn=cmd_validate)

    ck = sub.add_parser("check", help="explore every reachable state of each board and check the invariants")
    ck.add_argument("paths", nargs="+", metavar="PATH", help="board files or folders")
    ck.add_argument("--engine", metavar="ENGINE", help=engine_help())
    ck.add_argument("--call-timeout", type=_positive(float), metavar="S", help="cmd: engines: seconds per call before a timeout fault (default 10)")
    ck.add_argument(
        "--check-determinism", action="store_true", help="cmd: engines: ask every legal_actions and apply twice and compare the replies"
    )
    ck.add_argument("--invariants", metavar="IDS", help="comma-separated invariant IDs or family names (default: all)")
    ck.add_argument(
        "--differential", action="store_true", help="also compare the engine with the reference model in lockstep (invariant DIFF)"
    )
    ck.add_argument(
        "--diff-continue-order",
        action="store_true",
        help="with --differential: report a difference of event order only, and go on comparing in lockstep past it",
    )
    ck.add_argument(
        "--baseline",
        metavar="FILE",
        help="known, explained disagreements (with --differential: kind and path) and known invariant violations (invariant and signature) "
        "(TOML, docs/checking.md); they do not fail, new ones do. The EDOPro core's: baselines/ocgcore.toml",
    )
    ck.add_argument("--strategy", choices=("bfs", "dfs"), default="bfs", help="bfs (default: shortest counterexamples) or dfs")
    ck.add_argument("--max-states", type=_positive(int), metavar="N", help="stop before storing more than N distinct states (inconclusive)")
    ck.add_argument("--max-depth", type=_positive(int), metavar="N", help="do not expand states deeper than N (inconclusive)")
    ck.add_argument("--timeout", type=_positive(float), metavar="S", help="stop after S seconds per board, its reading included (inconclusive)")
    ck.add_argument("--json", metavar="FILE", help="write the machine-readable result (docs/check-result.schema.json)")
    ck.add_argument("--cex-dir", metavar="DIR", help="write each counterexample as a replayable JSON file")
    ck.add_argument("--stats", action="store_true", help="also print and record timings (not byte-for-byte deterministic)")
    ck.add_argument("-v", "--verbose", action="store_true", help="list vacuous invariants, reached goals and collision estimates per board")
    from bpcheck.feedback import add_quiet_argument

    add_quiet_argument(ck)  # progress, early verdicts and the first counterexample on stderr (docs/checking.md)
    ck.add_argument("--strict", action="store_true", help="a board the engine refuses (skipped) is not a pass: exit 3 instead of 0")
    ck.add_argument(
        "--memory-limit", type=_size, metavar="SIZE", help="stop a board as inconclusive before bpcheck's processes together (-j N workers and engines included) use SIZE of memory (e.g. 2G); a board whose reading could pass it is not read"
    )
    from bpcheck.jobs import add_jobs_argument

    add_jobs_argument(ck, "check the boards")
    ck.add_argument(
        "--exclude",
        action="append",
        metavar="PATTERN",
        help="leave out the board files whose path or file name matches this shell pattern (repeatable); they are listed as excluded, and a pattern that matches none is an error",
    )
    ck.add_argument(
        "--fail-fast",
        action="store_true",
        help="check the boards cheapest first (expected cost) in rounds of growing state budgets and stop at the first failing one; the boards not finished or not run are listed",
    )
    # reduction (explorers/reduce.py, docs/checking.md): chains of forced passes are one transition
    ck.add_argument(
        "--no-reduce", action="store_true", help="store and count every state, forced passes included (the perft numbers; default: reduce)"
    )
    ck.add_argument("--checkpoint", metavar="FILE", help="save the exploration to FILE when it stops early and periodically (one board)")
    ck.add_argument("--resume", action="store_true", help="with --checkpoint FILE: go on from the exploration saved there")
    ck.add_argument(
        "--checkpoint-every", type=_positive(float), default=300.0, metavar="S", help="with --checkpoint: also save every S seconds (default 300)"
    )
    from bpcheck.reporting import add_max_counterexamples, add_report_arguments

    add_report_arguments(ck)  # --report DIR, --graph-limit N, --github
    add_max_counterexamples(ck)
    ck.set_defaults(fn=cmd_check)

    rp = sub.add_parser("replay", help="replay a saved counterexample step by step and check it again")
    rp.add_argument("file", metavar="CEX.json", help="a counterexample file (--cex-dir) or a result file (--json)")
    rp.add_argument("-q", "--quiet", action="store_true")
    rp.add_argument(
        "--engine", metavar="ENGINE", help=engine_help("the engine to replay on, never the one the file names (docs/bad-input.md)")
    )
    rp.add_argument("--call-timeout", type=_positive(float), metavar="S", help="cmd: engines: seconds per call before a timeout fault (default 10)")
    rp.set_defaults(fn=cmd_replay)

    rc = sub.add_parser("record", help="record a trace of an engine on a board (docs/traces.md)")
    rc.add_argument("board", metavar="BOARD", help="a board file")
    rc.add_argument("--engine", metavar="ENGINE", help=engine_help("the engine to record"))
    how = rc.add_mutually_exclusive_group(required=True)
    how.add_argument("--actions", nargs="+", metavar="LABEL", help="the action labels to play, in order")
    how.add_argument("--random", type=_positive(int), metavar="N", help="a random walk of at most N steps")
    rc.add_argument("--seed", type=int, default=0, metavar="S", help="the random walk's seed (default 0): same seed, same walk")
    rc.add_argument("--out", required=True, metavar="TRACE.jsonl", help="the trace file to write")
    rc.set_defaults(fn=cmd_record)

    cf = sub.add_parser("conform", help="check recorded engine traces against the reference model and the invariants")
    cf.add_argument("traces", nargs="+", metavar="TRACE.jsonl", help="trace files (docs/traces.md)")
    cf.add_argument("--invariants", metavar="IDS", help="comma-separated invariant IDs or family names (default: all)")
    cf.add_argument("--json", metavar="FILE", help="write the results as JSON")
    cf.add_argument("-q", "--quiet", action="store_true", help="print the verdict and the divergence only")
    cf.set_defaults(fn=cmd_conform)

    mu = sub.add_parser("mutants", help="run the checker on every mutant engine: which invariant kills each")
    mu.add_argument("paths", nargs="*", metavar="PATH", help="board files or folders (default: boards/)")
    mu.add_argument("--only", metavar="NAMES", help="comma-separated mutant names")
    mu.add_argument("--max-states", type=_positive(int), metavar="N", help="per board and mutant")
    mu.add_argument("--json", metavar="FILE", help="write the results as JSON")
    mu.add_argument("--stats", action="store_true", help="also record timings in the JSON (not deterministic)")
    mu.add_argument(
        "--own-board-first",
        action="store_true",
        help="try each mutant's own seed board first (the board written to show its bug), then the others cheapest first",
    )
    add_jobs_argument(mu, "run the mutants")
    add_quiet_argument(mu)
    add_report_arguments(mu)
    mu.set_defaults(fn=_cmd_mutants)

    from bpcheck.prove import add_prove_parser  # `bpcheck prove`: symbolic numbers (cli/prove.py, docs/proving.md)

    add_prove_parser(sub, _positive)

    # `bpcheck fuzz` (issue 10): random boards, explored and shrunk; parser and command in cli/fuzz.py
    from bpcheck.fuzz import add_fuzz_parser

    add_fuzz_parser(sub, _positive)

    sv = sub.add_parser("serve", help="serve an in-process engine over the JSON-lines protocol on stdin/stdout (docs/protocol.md)")
    sv.add_argument("--engine", metavar="ENGINE", help=engine_help("the in-process engine to serve", IN_PROCESS_FORMS))
    sv.set_defaults(fn=cmd_serve)

    ep = sub.add_parser("export-puzzle", help="write an EDOPro puzzle script (Lua) for a board or a counterexample (docs/ocgcore.md)")
    ep.add_argument("file", metavar="BOARD.toml|CEX.json", help="a board, a counterexample file (--cex-dir) or a result file (--json)")
    ep.add_argument("--index", type=int, default=0, metavar="N", help="which counterexample of a result file (default 0)")
    ep.add_argument("--out", metavar="FILE.lua", help="write the script here (default: standard output)")
    ep.set_defaults(fn=_cmd_export_puzzle)

    bl = sub.add_parser("baseline", help="draft baseline entries for the disagreements (kind, path) and violations (invariant, signature) of a check --json result (docs/checking.md)")
    bl.add_argument("result", metavar="RESULT.json", help="a result file of `bpcheck check --json` (with --engine, --differential)")
    bl.add_argument("--out", metavar="FILE.toml", help="write the draft here (default: standard output)")
    bl.set_defaults(fn=_cmd_baseline)

    iv = sub.add_parser("invariants", help="list the invariant library")
    iv.add_argument("--json", action="store_true")
    iv.add_argument("--markdown", action="store_true", help="print docs/invariants.md")
    iv.set_defaults(fn=cmd_invariants)

    ca = sub.add_parser("cards", help="list the card pool, or show one card")
    ca.add_argument("name", nargs="?", metavar="NAME")
    ca.add_argument("--json", action="store_true", help="print JSON")
    ca.set_defaults(fn=cmd_cards)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. The exit status is the CI contract (README, docs/checking.md): a closed
    stdout never changes it, a signal stops the run cleanly (128 + its number, after writing what
    was finished), and bpcheck's own bug is exit 4 with one line, never 1 and never a traceback.
    Control characters from files or engines never reach the terminal raw (docs/bad-input.md)."""
    import contextlib

    from bpcheck import lifecycle
    from bpcheck.model.inputs import output_escaping

    global STARTED
    if argv is not None:  # called again in one process (tests): this command's start
        STARTED = time.monotonic()
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command line as given (for notes that repeat it)
    command = getattr(args, "command", "?")
    sig = lifecycle.Signals()
    lifecycle.CURRENT = sig
    serving = command == "serve"  # `serve` speaks the protocol on stdout: left as it is
    with contextlib.nullcontext() if serving else output_escaping():
        guard = None
        if not serving:
            guard = lifecycle.GuardedStdout(sys.stdout)
            sys.stdout = guard
        sig.install()
        try:
            try:
                from bpcheck.feedback import begin_run

                begin_run(args)  # progress on stderr from the command's start (cli/feedback.py)
                return int(args.fn(args))
            except InputError as e:  # any bad input not caught closer to its file
                _err(e)
                return EXIT_BAD_INPUT
            except lifecycle.Interrupted as e:
                print(f"bpcheck: interrupted by {e.name}", file=sys.stderr)
                return e.exit_status
            except BrokenPipeError:  # a pipe other than stdout (stdout's is handled by the guard)
                print("bpcheck: error: an output pipe was closed", file=sys.stderr)
                return EXIT_BAD_INPUT
            except Exception as e:  # bpcheck's own bug: exit 4, one line, the traceback in a file
                print(lifecycle.internal_error(e, command), file=sys.stderr)
                return EXIT_INTERNAL
            finally:
                from bpcheck.explorers.progress import close_all

                close_all()  # no progress line outlives its command (explorers/progress.py)
                if guard is not None:
                    guard.flush()
                    sys.stdout = guard._s
        except lifecycle.Interrupted as e:  # a signal while finishing up
            print(f"bpcheck: interrupted by {e.name}", file=sys.stderr)
            return e.exit_status
        finally:
            sig.polling = False
            sig.restore()
            cl = sys.modules.get("bpcheck.explorers.cluster")
            if cl is not None:  # --cluster: leave the cluster (a local:N one stops)
                cl.disconnect()

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
