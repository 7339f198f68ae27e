"""The report options shared by the commands that check engines (`check`, and later `mutants`
and `conform`): ``--report DIR``, ``--graph-limit N`` and ``--github``.

A command adds them with :func:`add_report_arguments`, passes ``graph_limit(args)`` to
``check_board`` so that small state graphs are recorded, and at the end hands its runs to
:func:`emit_reports`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from bpcheck.errors import InputError
from bpcheck.main import _positive

DEFAULT_GRAPH_LIMIT = 200


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        metavar="DIR",
        help="write a self-contained HTML report (index.html), junit.xml, results.sarif, summary.md and, per "
        "counterexample, its page, DOT and SVG pictures and ITF trace into DIR",
    )
    p.add_argument(
        "--graph-limit",
        type=_positive(int),
        default=DEFAULT_GRAPH_LIMIT,
        metavar="N",
        help=f"with --report: draw the whole state graph of a board explored in at most N states (default {DEFAULT_GRAPH_LIMIT}); "
        "larger ones are summarised",
    )
    p.add_argument(
        "--github",
        action="store_true",
        help="print GitHub Actions annotations, and a Markdown summary (appended to $GITHUB_STEP_SUMMARY when set, else printed)",
    )


def graph_limit(args: argparse.Namespace) -> int | None:
    """The state-graph limit to record with, or None when no report is asked for."""
    return args.graph_limit if getattr(args, "report", None) else None


def emit_reports(args: argparse.Namespace, runs: list, errors: list[dict], title: str, meta: dict | None = None) -> None:
    """Write --report and print --github output for `runs` (bpcheck.reports.runs.Run)."""
    report_index = None
    if getattr(args, "report", None):
        from bpcheck.reports.bundle import write_report

        out = Path(args.report)
        if out.exists() and not out.is_dir():
            raise InputError(args.report, "--report", "exists and is not a folder")
        try:
            outcome = write_report(out, runs, errors, title, meta, timings=getattr(args, "stats", False))
        except OSError as e:
            raise InputError(args.report, "--report", f"cannot write the report: {e.strerror or e}") from None
        for line in outcome.lines():
            print(line)
        report_index = str(out / "index.html")
    if getattr(args, "github", False):
        from bpcheck.model.inputs import print_workflow_command
        from bpcheck.reports.github import annotations, markdown_summary

        where = f"the job summary and {report_index}" if report_index else "the job summary"
        for line in annotations(runs, errors, where):
            print_workflow_command(line)  # the only lines bpcheck lets start with "::"
        summary = markdown_summary(runs, errors, title, report=report_index)
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        if target:
            try:
                with open(target, "a", encoding="utf-8") as f:
                    f.write(summary + "\n")
            except OSError as e:
                raise InputError(target, "GITHUB_STEP_SUMMARY", f"cannot append the summary: {e.strerror or e}") from None
            print(f"summary: appended to $GITHUB_STEP_SUMMARY ({target})")
        else:
            print(summary)


def emit_check_reports(args: argparse.Namespace, results: list, errors: list[dict], engine_name: str, bounds) -> None:
    """`bpcheck check`: one run per board."""
    if not (getattr(args, "report", None) or getattr(args, "github", False)):
        return
    from bpcheck.reports.runs import runs_of

    meta = {"engine": engine_name, "strategy": args.strategy}
    for k, v in (("max states", bounds.max_states), ("max depth", bounds.max_depth), ("timeout (s)", bounds.timeout)):
        if v is not None:
            meta[k] = v
    emit_reports(args, runs_of(results, engine_name), errors, "bpcheck check", meta)


__all__ = ["DEFAULT_GRAPH_LIMIT", "add_report_arguments", "emit_check_reports", "emit_reports", "graph_limit"]
