"""`bpcheck check`: parse, run (:class:`bpcheck.harness.check.CheckRun`), print the summary, exit."""

from __future__ import annotations

import argparse
import sys

from bpcheck.cli.args import invariants as select_invariants
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_INTERNAL, EXIT_OK
from bpcheck.errors import InputError
from bpcheck.explorers.core import collision_probability
from bpcheck.explorers.run import overall_verdict
from bpcheck.harness.boards import board_files, exclude_boards
from bpcheck.harness.check import CheckOptions, CheckOutcome, CheckRun, WorkerBug, known_disagreements_note, report_error
from bpcheck.harness.lifecycle import Interrupted
from bpcheck.reports.safe import one_line as _line  # what an engine said, on one line
from bpcheck.reports.text import plural


def cmd_check(args: argparse.Namespace) -> int:
    opts = CheckOptions.from_namespace(args)
    invariants = select_invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    run = CheckRun(opts, invariants)
    try:
        files, excluded = exclude_boards(board_files(args.paths), opts.exclude)
        run.prepare(files)
    except InputError as e:
        report_error(e)
        return EXIT_BAD_INPUT
    out = run.run(files, excluded)
    try:
        for line in out.checkpoint_notes:
            print(line)
        for line in run.finish(out):
            print(line)
        for line in summary_lines(opts, out):
            print(line)
    except Interrupted:  # a second signal while the results are printed: --json is still written whole
        run.write_json(out)
        raise
    write_failed = run.write_outputs(out)
    if isinstance(out.internal, WorkerBug):  # a worker's bug or death: exit 4, the traceback in a file
        print(out.internal.report(), file=sys.stderr)
        return EXIT_INTERNAL
    if out.internal is not None:
        raise out.internal  # bpcheck.cli.main.main: exit 4, one line, the traceback in a file
    if run.sig.signum is not None:
        return run.sig.exit_status
    if out.errors or write_failed:
        return EXIT_BAD_INPUT
    return {"fail": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}.get(overall_verdict(out.verdicts, 0, opts.skips_fail), EXIT_OK)


def summary_lines(opts: CheckOptions, out: CheckOutcome) -> list[str]:
    """The run's summary on stdout, after the boards and the root causes."""
    results, invariants = out.results, out.invariants
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
    # an invariant of rulesets no board was played under (goat's replay.stored on tcg boards) is
    # not vacuous: its situation cannot arise there (docs/rulesets.md)
    played = {br.board.ruleset or "tcg" for br in results}
    other_rulesets = {inv.id for inv in invariants if not played & set(getattr(inv, "rulesets", played))}
    never = [k for k, v in inv_total.items() if v == 0 and k not in unjudged and k not in not_evaluated and k not in other_rulesets]
    never_evaluated = [k for k, v in inv_total.items() if v == 0 and k not in unjudged and k in not_evaluated]
    verdicts = out.verdicts
    n_pass, n_fail, n_inc, n_skip = (verdicts.count(v) for v in ("pass", "fail", "inconclusive", "skipped"))
    lines = [
        f"check: {n_pass} passed, {n_fail} failed, {n_inc} inconclusive"
        + (f", {n_skip} skipped" if n_skip else "")
        + (f", {len(out.errors)} bad input" if out.errors else "")
        + (f", {out.n_crashed} crashed" if out.n_crashed else "")
        + f" ({plural(len(out.files), 'board')}, {plural(len(invariants), 'invariant')})"
    ]
    if out.excluded:
        lines.append(f"excluded by --exclude (not checked): {', '.join(out.excluded)}")
    if n_skip and not opts.skips_fail:  # --allow-skips: today's line, a skip keeps a pass
        lines.append("skipped (the engine refused them): " + ", ".join(r.board.path for r in results if r.verdict == "skipped"))
    elif n_skip:  # skipped is not passed: each board named with the engine's reason (exit 3)
        lines.append(f"not checked: the engine refused {n_skip} board{'s' if n_skip != 1 else ''}, so the run is inconclusive (exit 3; --allow-skips accepts them):")
        lines += [f"  {_line(r.board.path)}: {_line(r.skip_reason)}" for r in results if r.verdict == "skipped"]
    lines += _fail_fast_lines(out)
    if out.interrupted is not None:
        ns = out.not_started
        lines.append(f"interrupted by {out.interrupted['signal']}: the results above are of the boards finished before it" + (f"; {plural(len(ns), 'board')} not started" if ns else ""))
    explored = [r.result for r in results if r.verdict != "skipped" and r.result.states]
    if explored and opts.verbose:
        c = collision_probability(sum(x.states for x in explored), sum(x.generated for x in explored))
        lines.append(f"fingerprint collision probability over the run: {c['optimistic']:.1e} (optimistic), at most {c['bound']:.1e}")
    if never and explored:
        lines.append(f"vacuous on every board (their situation never arose): {', '.join(never)}")
    if never_evaluated and explored:
        lines.append("not evaluated on any board (the engine does not observe what they read): " + ", ".join(f"{k} ({not_evaluated[k]})" for k in never_evaluated))
    lines += _bounded_lines(out)
    if any(c.invariant == "DIFF" and getattr(c, "baselined", None) is None for br in results for c in br.counterexamples):
        lines.append("DIFF counterexamples show what differs and the trace; the observations before and after each step are in --json, --cex-dir and --report.")
    return lines + known_disagreements_note(opts, results)


def _fail_fast_lines(out: CheckOutcome) -> list[str]:
    ff = out.fail_fast
    if ff is None:
        return []
    nf = ff["not_finished"]
    unfinished = f"{plural(len(nf), 'board')} not finished (explored within a budget only, no verdict): {', '.join(nf)}" if nf else ""
    if ff["stopped_at"] is None:
        return ["fail-fast: no board failed; " + (unfinished if nf else "every board was run")]
    nr = ff["not_run"]
    left = [x for x in (unfinished, f"{plural(len(nr), 'board')} not run: {', '.join(nr)}" if nr else "") if x]
    return [
        f"fail-fast: stopped at the first failing board in the {'cost order' if out.baseline is not None else 'budget rounds'}, {ff['stopped_at']}; "
        + ("; ".join(left) if left else "no board was left to run")
    ]


def _bounded_lines(out: CheckOutcome) -> list[str]:
    """What ``--max-counterexamples`` left out of every output."""
    if not out.left_out:
        return []
    kept = sum(len(br.counterexamples) for br in out.results)
    lines = [
        f"max-counterexamples: {kept} counterexample{'s' if kept != 1 else ''} kept, {out.left_out} left out of every output "
        "(the first of each root cause is kept first; the verdicts above count them all)"
    ]
    hidden = out.hidden_causes
    if hidden:
        lines.append(f"max-counterexamples: {len(hidden)} root cause{'s' if len(hidden) != 1 else ''} left out entirely (a larger N shows them):")
        lines += [f"  {line}" for line in hidden[:10]]
        if len(hidden) > 10:
            lines.append(f"  and {len(hidden) - 10} more (--json lists every one)")
    return lines
