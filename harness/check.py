"""One `bpcheck check` run as a library object: options in, board results and outputs out.

:class:`CheckOptions` holds what a run is given (the engine, the invariants, the bounds, the
controls and the outputs: the command line's options, by the same names), :class:`CheckRun` runs
it over board files (one process, ``-j N`` worker processes, ``--fail-fast`` rounds: jobs.py
schedules them) and writes its outputs; :class:`CheckOutcome` is what it found. The command line
(:mod:`bpcheck.cli.check`) parses, calls, prints the summary and maps the outcome to an exit status.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from bpcheck import __version__
from bpcheck.engines import make_engine
from bpcheck.engines.registry import known_disagreements
from bpcheck.model.rulesets import DEFAULT_RULESET
from bpcheck.errors import InputError
from bpcheck.explorers.baseline import load_baseline
from bpcheck.explorers.checking import EngineSystem, parse_goals
from bpcheck.explorers.checkpoint import checkpoint_key, read_checkpoint, write_checkpoint
from bpcheck.explorers.cluster import active, explorer_transport
from bpcheck.explorers.core import Bounds, ExploreResult, ResumeMismatch
from bpcheck.explorers.differential import DIFF_INVARIANT, DifferentialSystem
from bpcheck.explorers.run import BoardResult, can_shard, check_board, check_board_task, restore_invariants, result_document, system_factory
from bpcheck.harness import jobs as schedule  # SHARD_AT and board_cost read through the module (tests set them)
from bpcheck.harness import lifecycle
from bpcheck.harness.boards import LoadBound, boards_cards_db, check_cards_db, load_bounded
from bpcheck.harness.feedback import CheckFeed
from bpcheck.harness.jobs import resolve_jobs, run_check_jobs, setup_cluster
from bpcheck.harness.lifecycle import Interrupted, terminal_safe
from bpcheck.harness.reporting import DEFAULT_GRAPH_LIMIT, bound_counterexamples, emit_check_reports, graph_limit, root_causes, writer_failed
from bpcheck.model.board import Board
from bpcheck.reports import text as text_report
from bpcheck.reports.outputs import atomic_write_text, prepare_dir, prepare_file, replace_dir
from bpcheck.reports.runs import cex_names, runs_of
from bpcheck.reports.safe import line as _line
from bpcheck.reports.safe import one_line
from bpcheck.reports.text import plural


def report_error(e: InputError) -> None:
    """Bad input, on stderr as one line whatever a file or an engine said (the default reporter)."""
    print(one_line(f"bpcheck: error: {e.render()}"), file=sys.stderr)


@dataclass
class CheckOptions:
    """What a check run is given; the names are the command line's options (``--max-states`` is
    ``max_states``), so ``CheckOptions.from_namespace(args)`` takes them as parsed."""

    engine: str | None = None
    ruleset: str | None = None  # --ruleset NAME: the ruleset of boards that name none (docs/rulesets.md)
    cards_db: str | None = None  # --cards-db FILE: boards may name its cards (default: the engine's own, ocgcore)
    scripts_overlay: str | None = None  # ocgcore: script folders searched first (bpcheck sweep --scripts-overlay)
    call_timeout: float | None = None
    check_determinism: bool = False
    invariants: str | None = None  # IDs or family names, comma-separated (None: all)
    differential: bool = False
    diff_continue_order: bool = False
    baseline: str | None = None
    strategy: str = "bfs"
    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None
    memory_limit: int | None = None
    no_reduce: bool = False
    jobs: int = 1
    # every board in a worker process, even with -j 1 or one board (bpcheck sweep): a board stuck
    # inside one engine call can then be killed (--timeout's deadline, a signal; harness/jobs.py)
    isolate: bool = False
    cluster: str | None = None
    fail_fast: bool = False
    exclude: list[str] | None = None
    checkpoint: str | None = None
    resume: bool = False
    checkpoint_every: float = 300.0
    strict: bool = False  # the default now (a refused board is exit 3); kept for old command lines
    allow_skips: bool = False  # --allow-skips: a board the engine refuses is skipped and keeps a pass
    json: str | None = None
    cex_dir: str | None = None
    report: str | None = None
    graph_limit: int = DEFAULT_GRAPH_LIMIT
    github: bool = False
    max_counterexamples: int | None = None
    stats: bool = False
    verbose: bool = False
    quiet: bool = False
    command: str = "check"
    argv: list[str] = field(default_factory=list)  # the command line as given (notes that repeat it)

    @property
    def skips_fail(self) -> bool:
        """Whether a board the engine refused makes the run inconclusive (exit 3): unless --allow-skips."""
        return self.strict or not self.allow_skips  # --strict on the command line wins over [tool.bpcheck] allow_skips

    @classmethod
    def from_namespace(cls, ns: Any) -> "CheckOptions":
        return cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls) if hasattr(ns, f.name)})


def unloaded_result(display: str, invariants, strategy: str, why: str):
    """The result of a board that was not read to the end (:class:`LoadBound`): inconclusive, the
    bound named, nothing explored."""
    return interrupted_result(Board(path=display, name=display, state=None, pool=None), invariants, strategy, why)  # type: ignore[arg-type]


def interrupted_result(board, invariants, strategy: str, why: str):
    """A board whose exploration a signal cut short before it could stop by itself."""
    try:
        goals = parse_goals(board)
    except InputError:
        goals = []
    br = BoardResult(board, ExploreResult(status="inconclusive", strategy=strategy, bound_hit=why), list(invariants), goals)
    br.witnesses = {g.id: None for g in goals}
    return br


def board_lines(br, display: str, args: CheckOptions) -> list[str]:
    r = br.result
    display = _line(display)
    if br.verdict == "skipped":
        return [f"{'SKIPPED':12} {display}: the engine refused this board: {_line(br.skip_reason)}"]
    vac = [row["id"] for row in br.invariant_rows() if row["verdict"] == "vacuous"]
    rs = br.board.ruleset or DEFAULT_RULESET
    if rs != DEFAULT_RULESET:  # the ruleset named on every board not played under the default (docs/rulesets.md)
        display += f" (ruleset {rs})"
    line = f"{r.status.upper():12} {display}: {plural(r.states, 'state')}, {plural(r.transitions, 'transition')}, depth {r.max_depth}"
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
            out.append(f"             goal {g.id!r} reached in {plural(len(br.witnesses[g.id]), 'step')}")
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


def known_disagreements_note(args: CheckOptions, results) -> list[str]:
    """For a failing run of an engine whose known disagreements bpcheck ships (the EDOPro core:
    baselines/ocgcore.toml, docs/ocgcore-findings.md) without --baseline: where they are listed,
    how many of this run's counterexamples they account for, and the command line that uses
    them. Empty otherwise."""
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


@dataclass
class CheckOutcome:
    """What a check run found: a result per board checked, and what stopped or cost it."""

    files: list[tuple[Path, str]]
    excluded: list[str]
    invariants: list
    engine_name: str
    bounds: Any
    baseline: Any = None
    results: list = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)  # bad input met while checking (a board, a checkpoint)
    not_started: list[str] = field(default_factory=list)
    checkpoint_notes: list[str] = field(default_factory=list)
    internal: Exception | None = None  # bpcheck's own bug: the finished boards are written, then exit 4
    n_crashed: int = 0
    fail_fast: dict | None = None
    interrupted: dict | None = None
    # set by CheckRun.finish: the root causes, what --max-counterexamples left out, the document
    groups: list = field(default_factory=list)
    report_errors: list[dict] = field(default_factory=list)  # report writers that failed (bpcheck's bugs)
    left_out: int = 0
    hidden_causes: list[str] = field(default_factory=list)
    doc: dict = field(default_factory=dict)

    @property
    def verdicts(self) -> list[str]:
        return [r.verdict for r in self.results]


class CheckRun:
    """One check run (what `bpcheck check`, ``-j N`` and ``--fail-fast`` share): :meth:`prepare`
    refuses bad input before anything is explored, :meth:`run` checks the boards (each board's
    verdict lines go to ``emit`` as soon as board order allows), :meth:`finish` groups the
    counterexamples and builds the result document, :meth:`write_outputs` writes ``--cex-dir``,
    ``--report``/``--github`` and ``--json``."""

    def __init__(self, opts: CheckOptions, invariants, *, emit: Callable[[str], None] = print, error: Callable[[InputError], None] = report_error) -> None:
        self.opts = opts
        self.invariants = list(invariants)
        self.emit = emit
        self.error = error
        self.sig = lifecycle.CURRENT
        self.engine_name = opts.engine or "reference"
        self.engine_kw = {"call_timeout": opts.call_timeout, "check_determinism": opts.check_determinism, "cards_db": opts.cards_db}
        if opts.scripts_overlay:  # passed to every engine, in worker processes too
            self.engine_kw["scripts_overlay"] = opts.scripts_overlay
        self.cards_db = boards_cards_db(opts.engine, opts.cards_db)  # the cards a board may name besides the pool's
        self.system_kw: dict = {}
        self.baseline = None
        self.bounds = None

    def prepare(self, files: list[tuple[Path, str]]) -> None:
        """Everything checked before the run: the engine, the output paths (stale outputs removed),
        the cluster, the differential mode and the baseline. Raises :class:`InputError`."""
        opts = self.opts
        make_engine(opts.engine, **self.engine_kw)
        check_cards_db(opts.cards_db)
        check_outputs(opts, files)
        setup_cluster(opts, opts.engine, self.engine_kw)  # --cluster: Ray, every node able to run the engine
        if opts.differential:  # lockstep with the reference model: explorers/differential.py


            self.invariants = [*self.invariants, DIFF_INVARIANT]
            self.system_kw["system_cls"] = DifferentialSystem
            if opts.diff_continue_order:
                self.system_kw["system_cls"] = functools.partial(DifferentialSystem, continue_past_order=True)
        elif opts.diff_continue_order:
            raise InputError("--diff-continue-order", "", "needs --differential")
        if opts.baseline:  # known, explained disagreements (explorers/baseline.py, docs/checking.md)

            self.baseline = load_baseline(opts.baseline)
        self.bounds = Bounds(opts.max_states, opts.max_depth, opts.timeout)
        if graph_limit(opts):  # --report draws small state graphs: record them (bounded)
            self.system_kw["graph_limit"] = graph_limit(opts)
        self.system_kw["reduce"] = not opts.no_reduce  # reduction: explorers/reduce.py (off with --differential / --checkpoint)
        self.system_kw["stop"] = self.sig.stop_reason  # SIGINT / SIGTERM / SIGHUP: stop cleanly, keep what was found
        if opts.memory_limit:
            self.system_kw["memory_limit"] = opts.memory_limit

    def lines(self, br, display: str) -> list[str]:
        return board_lines(br, display, self.opts)

    def run(self, files: list[tuple[Path, str]], excluded: list[str] | None = None) -> CheckOutcome:
        """Check ``files`` (after :meth:`prepare`): in this process, or in worker processes for
        ``-j N`` (several boards) and ``--fail-fast`` (jobs.py schedules them)."""
        out = CheckOutcome(files, list(excluded or []), self.invariants, self.engine_name, self.bounds, self.baseline)
        self.sig.polling = True  # the first signal stops the exploration; outputs are still written
        jobs = resolve_jobs(self.opts.jobs)
        feed = CheckFeed(self.opts, files, self.invariants, self.engine_kw, self.engine_name, self.system_kw, self.baseline, lambda br, d: self.lines(br, d)[0])
        pooled = self.opts.fail_fast or (jobs > 1 and len(files) > 1) or (self.opts.isolate and bool(files))
        feed.workers = jobs if pooled else 1
        try:
            if pooled:  # jobs.py: workers and the cost order
                self._run_jobs(files, jobs, feed, out)
            else:
                self._run_here(files, jobs, feed, out)
        finally:
            feed.close()
        if self.sig.signum is not None:
            out.interrupted = {"signal": self.sig.name, "not_started": out.not_started}
        return out

    def _run_here(self, files, jobs: int, feed, out: CheckOutcome) -> None:
        """The boards one after another in this process (one board with ``-j N``: the sharded explorer)."""
        opts, sig = self.opts, self.sig
        for k, (path, display) in enumerate(files):
            if sig.signum is not None:
                out.not_started = [d for _p, d in files[k:]]
                break
            board = None
            try:
                started = time.monotonic()
                try:
                    board = feed.board(k, path, display, lambda p, d: load_bounded(p, d, opts.timeout, opts.memory_limit, self.cards_db, opts.ruleset))
                except LoadBound as lb:  # --timeout / --memory-limit reached while reading: inconclusive
                    br = unloaded_result(display, self.invariants, opts.strategy, lb.why)
                    out.results.append(br)
                    self.emit("\n".join(self.lines(br, display)))
                    continue
                controls = dict(self.system_kw)
                if opts.timeout is not None:
                    controls["started"] = started  # --timeout covers the reading too
                if opts.checkpoint:
                    controls.update(_checkpoint_controls(opts, board, self.engine_name, self.invariants, out.checkpoint_notes))
                if jobs > 1:  # one board: the sharded explorer (explorers/parallel.py), where it applies
                    make_system = system_factory(board, opts.engine, self.engine_kw, [i.id for i in self.invariants], self.system_kw.get("system_cls", EngineSystem))
                    controls["parallel"] = (jobs, make_system, explorer_transport(active()))  # --cluster: Ray actors
                task = feed.begin(board, display)
                engine = make_engine(opts.engine, **self.engine_kw)
                br = check_board(board, engine, self.invariants, opts.strategy, self.bounds, self.engine_name, progress=task, found=feed.found(board, task), **controls)
            except InputError as e:
                self.error(e)
                out.errors.append({"file": e.file, "field": e.field, "problem": e.problem})
                continue
            except ResumeMismatch as e:
                e2 = InputError(opts.checkpoint, "--resume", str(e))
                self.error(e2)
                out.errors.append({"file": e2.file, "field": e2.field, "problem": e2.problem})
                continue
            except Interrupted as e:  # a second signal: the board is cut short where it was
                if board is not None:
                    br = interrupted_result(board, self.invariants, opts.strategy, f"interrupted ({e.name})")
                    out.results.append(br)
                    self.emit("\n".join(self.lines(br, display)))
                out.not_started = [d for _p, d in files[k + 1 :]]
                break
            except Exception as e:  # a bug in bpcheck: keep what is finished, then report it (exit 4)
                out.internal = e
                break
            out.results.append(br)
            if self.baseline is not None:  # known disagreements do not fail the board; new ones do
                self.baseline.outcome(br, self.engine_name, opts.differential)
            if opts.checkpoint:
                _finish_checkpoint(opts, br, out.checkpoint_notes)
            feed.finish(task, br)
            self.emit("\n".join(self.lines(br, display)))

    def finish(self, out: CheckOutcome) -> list[str]:
        """Group the counterexamples by root cause, bound them (``--max-counterexamples``) and build
        the result document; returns the root causes' lines (each trace once, after the boards)."""
        opts = self.opts
        # --max-counterexamples: the outputs keep at most N (the verdicts count every one)
        out.left_out, out.hidden_causes = bound_counterexamples(out.results, self.engine_name, opts.max_counterexamples)
        out.groups, lines = _root_causes(opts, out.results, self.engine_name, out.report_errors)
        out.doc = result_document(
            out.results,
            self.engine_name,
            opts.strategy,
            self.bounds,
            out.errors,
            timings=opts.stats,
            strict=opts.skips_fail,
            interrupted=out.interrupted,
            internal_error=None if out.internal is None else _internal_line(out.internal),
            fail_fast=out.fail_fast,
            excluded=out.excluded,
            ruleset=opts.ruleset,
        )
        return lines

    def write_outputs(self, out: CheckOutcome) -> bool:
        """``--cex-dir``, ``--report``/``--github``, then ``--json`` (last: it records the others'
        failures). One output that cannot be written (a full disk) does not cost the others; a bug
        in one writer costs that output only. Returns whether an output could not be written."""
        opts, failed = self.opts, False
        cut: Interrupted | None = None  # a signal while an output was written: --json is still written, then it is raised
        for what, write in (
            ("--cex-dir", lambda: _write_cex_dir(opts, out.doc, out.results)),
            ("--report/--github", lambda: out.report_errors.extend(emit_check_reports(opts, out.results, out.errors, self.engine_name, self.bounds))),
            ("--json", lambda: self.write_json(out)),
        ):
            try:
                write()
            except InputError as e:
                self.error(e)
                failed = True
            except Interrupted as e:
                cut = cut or e
                out.report_errors.append({"output": what, "error": f"interrupted by {e.name}: not complete"})
            except Exception as e:  # the verdict and exit status stand
                writer_failed(opts, what, e, out.report_errors)
        if cut is not None:
            raise cut
        return failed

    def write_json(self, out: CheckOutcome) -> None:
        """--json, with no signal cutting it short: one that arrives while it is written is raised
        once the file is whole (lifecycle.Signals.held; a second signal never loses the
        violations found, issue 33). Builds the result document first if :meth:`finish` was cut
        short."""
        with self.sig.held():
            if not out.doc:
                self.finish(out)
            _write_json(self.opts, _json_extras(self.opts, out.doc, out.groups, (out.left_out, out.hidden_causes), out.report_errors))


    def _run_jobs(self, files, jobs: int, feed, out: CheckOutcome) -> None:
        """`check -j N` (several boards) and `check --fail-fast`: jobs.py schedules, this emits."""
        args, sig, invariants, engine_kw, engine_name = self.opts, self.sig, self.invariants, self.engine_kw, self.engine_name
        system_kw, bounds, baseline = self.system_kw, self.bounds, self.baseline

        controls = {k: v for k, v in system_kw.items() if k != "stop"}  # a worker polls its own flag
        if jobs == 1 and args.fail_fast:  # --fail-fast -j 1 runs in this process
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
                self.emit("\n".join(self.lines(entry.value, display)))
            elif entry.kind == "error":
                self.error(entry.value)
            elif entry.kind == "crash":
                self.emit(f"{'CRASHED':12} {display}: {entry.value} while checking this board (no result; bpcheck exits 4)")
            elif entry.kind == "internal":
                self.emit(f"{'ERROR':12} {display}: internal error (a bug in bpcheck): {entry.value}")

        def cut_short(board):
            return interrupted_result(board, invariants, args.strategy, f"interrupted ({sig.name})")

        def killed(board, why: str):  # --timeout's deadline killed its worker inside one step (jobs.py)
            return interrupted_result(board, invariants, args.strategy, why)

        def shard(board):
            """A board expected to cost SHARD_AT states or more is explored by all the workers at once
            (cli/jobs.py), when the sharded explorer can take it."""
            if jobs <= 1 or schedule.board_cost(board) < schedule.SHARD_AT or not can_shard(args.strategy, system_kw.get("graph_limit"), controls, bounds):
                return None
            c = dict(controls, stop=sig.stop_reason)  # in this process (cli/jobs.py adds its progress)

            c["parallel"] = (jobs, system_factory(board, args.engine, engine_kw, inv_ids, system_kw.get("system_cls", EngineSystem)), explorer_transport(active()))
            return (board, args.engine, engine_kw, inv_ids, args.strategy, bounds, engine_name, c)

        class _Unloaded:
            def __init__(self, result) -> None:
                self.result_without_exploring = result

        def load(path, display):  # --timeout and --memory-limit cover the reading too (load_bounded)
            try:
                return load_bounded(path, display, args.timeout, args.memory_limit, self.cards_db, args.ruleset)
            except LoadBound as lb:
                return _Unloaded(unloaded_result(display, invariants, args.strategy, lb.why))

        outcome = run_check_jobs(
            files, jobs, bool(args.fail_fast), check_board_task, task_args, restore, emit, load, cut_short, sig, shard=shard, bounds=bounds, rounds=rounds, feed=feed,
            killed=killed,
        )
        out.results, out.errors, out.not_started = outcome.results, outcome.errors, outcome.not_started
        if outcome.internal is not None:
            out.internal = WorkerBug(outcome.internal, outcome.internal_traceback)
        out.n_crashed = len(outcome.crashed)
        if outcome.crashed and outcome.internal is None:
            out.internal = WorkerBug(f"{len(outcome.crashed)} worker process(es) died: " + "; ".join(outcome.crashed), None)
        if args.fail_fast:
            out.fail_fast = {"stopped_at": outcome.stopped_at, "not_run": outcome.not_run, "not_finished": outcome.not_finished}


class WorkerBug(Exception):
    """bpcheck's own failure in a worker process (-j N): an exception there, or a worker that
    died. The finished boards are written; the run exits 4."""

    def __init__(self, line: str, tb: str | None) -> None:
        super().__init__(line)
        self.line = line
        self.tb = tb

    def report(self) -> str:
        """One line; the worker's traceback goes to a file, as for a bug in this process."""
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
    if isinstance(e, WorkerBug):
        return e.line.splitlines()[0]
    return f"{type(e).__name__}: {e}".splitlines()[0]


def _write_json(args: CheckOptions, doc: dict) -> None:
    """--json, written atomically (a temporary file renamed over the target)."""
    if args.json:
        try:
            atomic_write_text(args.json, json.dumps(doc, indent=1, sort_keys=False) + "\n")
        except OSError as e:
            raise InputError(args.json, "--json", f"cannot write the result: {e.strerror or e}") from None


def _root_causes(args: CheckOptions, results: list, engine_name: str, report_errors: list[dict]) -> tuple[list, list[str]]:
    """The root causes (reports/groups.py: for --json) and their lines, each trace once, to print
    after the boards; a bug in the grouping or the text writer costs that output only."""
    try:
        groups = root_causes(results, engine_name)
    except Exception as e:  # noqa: BLE001
        writer_failed(args, "the grouping of counterexamples by root cause", e, report_errors)
        return [], []
    try:
        lines = text_report.root_cause_lines(groups)  # through the module: a test plants a failing writer
    except Exception as e:  # noqa: BLE001
        writer_failed(args, "the counterexamples as text", e, report_errors)
        return groups, []
    return groups, (lines + [""] if lines else [])


def _json_extras(args: CheckOptions, doc: dict, groups: list, bounded: tuple[int, list[str]], report_errors: list[dict]) -> dict:
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


def _write_cex_dir(args: CheckOptions, doc: dict, results: list) -> None:
    """--cex-dir: the folder is built aside, then renamed into place."""
    if args.cex_dir:
        runs = runs_of(results, doc["engine"])
        names = cex_names(runs)

        def build(out: Path) -> None:
            for ri, run in enumerate(runs):
                for ci, cex in enumerate(run.counterexamples):
                    (out / f"{names[(ri, ci)]}.json").write_text(
                        json.dumps({"bpcheck_counterexample": 1, **cex.to_dict(full=False), "ruleset": run.result.board.ruleset or DEFAULT_RULESET}, indent=1) + "\n", encoding="utf-8"
                    )

        try:
            replace_dir(args.cex_dir, "counterexamples", build)
        except OSError as e:
            raise InputError(args.cex_dir, "--cex-dir", f"cannot write the counterexamples: {e.strerror or e}") from None


def _checkpoint_controls(args: CheckOptions, board, engine_name: str, invariants, notes: list[str]) -> dict:
    """--checkpoint FILE [--resume]: the explorer's checkpoint hook, and the snapshot to resume."""
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


def _finish_checkpoint(args: CheckOptions, br, notes: list[str]) -> None:
    r = br.result
    if r.resumable:
        notes.append(f"checkpoint: written to {args.checkpoint} ({plural(r.states, 'state')}); go on with --checkpoint {args.checkpoint} --resume")
    elif Path(args.checkpoint).exists():
        Path(args.checkpoint).unlink()  # the exploration is complete: nothing is left to resume
        notes.append(f"checkpoint: {args.checkpoint} removed (the exploration is complete)")


def check_outputs(args: CheckOptions, files: list[tuple[Path, str]]) -> None:
    """Output paths are checked before the run (exit 2 now, not a traceback after it), and the
    outputs an earlier run left there are removed: CI never reads a stale result."""
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
