"""The report options shared by the commands that check engines (`check`, and later `mutants`
and `conform`): ``--report DIR``, ``--graph-limit N`` and ``--github``.

A command adds them with :func:`add_report_arguments`, passes ``graph_limit(args)`` to
``check_board`` so that small state graphs are recorded, and at the end hands its runs to
:func:`emit_reports`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from bpcheck.errors import InputError
from bpcheck.harness.lifecycle import writer_error
from bpcheck.reports.bundle import write_report
from bpcheck.reports.github import annotations, markdown_summary
from bpcheck.reports.groups import group_runs, select_within
from bpcheck.reports.runs import runs_of
from bpcheck.reports.terminal import print_workflow_command

DEFAULT_GRAPH_LIMIT = 200


def graph_limit(args: argparse.Namespace) -> int | None:
    """The state-graph limit to record with, or None when no report is asked for."""
    return args.graph_limit if getattr(args, "report", None) else None


def writer_failed(args: argparse.Namespace, output: str, e: BaseException, failures: list[dict]) -> None:
    """A report writer's own bug: one line on stderr (traceback in a file), recorded for --json."""
    line = writer_error(e, getattr(args, "command", None) or "check", output)
    print(line, file=sys.stderr)
    failures.append({"output": output, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")})


def _runner_path(report: str) -> str:
    """The report folder as the workflow names it: relative to the job's workspace
    (GITHUB_WORKSPACE, else the current directory) when it is inside, else as given."""
    p = Path(report).resolve()
    for base in (os.environ.get("GITHUB_WORKSPACE"), os.getcwd()):
        if base:
            try:
                return p.relative_to(Path(base).resolve()).as_posix() + "/"
            except ValueError:
                continue
    return str(report)


def artifacts_url(env) -> str | None:
    """This workflow run's page, where uploaded artifacts are listed (``#artifacts``), from
    GitHub's variables; None when one is missing or not of GitHub's shape (never a link made of
    arbitrary text)."""
    server, repo, run = env.get("GITHUB_SERVER_URL", ""), env.get("GITHUB_REPOSITORY", ""), env.get("GITHUB_RUN_ID", "")
    if not (re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d+)?", server) and re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo) and re.fullmatch(r"\d+", run)):
        return None
    return f"{server}/{repo}/actions/runs/{run}#artifacts"


def emit_reports(args: argparse.Namespace, runs: list, errors: list[dict], title: str, meta: dict | None = None, left_out: int = 0) -> list[dict]:
    """Write --report and print --github output for `runs` (bpcheck.reports.runs.Run). A writer
    that fails (a bug in bpcheck) costs its own output only: it is named on stderr (the traceback
    in a file), the other outputs are written, and the failures come back as ``[{output, error}]``
    for the command's --json; the exit status stays the verdict's (docs/checking.md)."""
    failures: list[dict] = []
    report_index = None
    if getattr(args, "report", None):
        out = Path(args.report)
        if out.exists() and not out.is_dir():
            raise InputError(args.report, "--report", "exists and is not a folder")
        try:
            outcome = write_report(out, runs, errors, title, meta, timings=getattr(args, "stats", False), left_out=left_out)
        except OSError as e:
            raise InputError(args.report, "--report", f"cannot write the report: {e.strerror or e}") from None
        except InputError:
            raise
        except Exception as e:  # noqa: BLE001 - a bug outside the per-file guards: the report is lost, nothing else
            writer_failed(args, f"the report {args.report}", e, failures)
            outcome = None
        if outcome is not None:
            for line in outcome.lines():
                print(line)
            for rel, e in outcome.failures:
                writer_failed(args, f"{Path(args.report) / rel}", e, failures)
            report_index = str(out / "index.html")
    if getattr(args, "github", False):
        where = f"the job summary and {report_index}" if report_index else "the job summary"
        try:
            lines = annotations(runs, errors, where)
        except Exception as e:  # noqa: BLE001
            writer_failed(args, "the --github annotations", e, failures)
            lines = []
        for line in lines:
            print_workflow_command(line)  # the only lines bpcheck lets start with "::"
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        report_ref, artifacts = report_index, None
        if target and report_index:  # read on github.com: the runner's path is no link, the run's artifacts are
            report_ref, artifacts = _runner_path(args.report), artifacts_url(os.environ)
        try:
            summary = markdown_summary(runs, errors, title, report=report_ref, left_out=left_out, on_runner=bool(target), artifacts=artifacts)
        except Exception as e:  # noqa: BLE001
            writer_failed(args, "the --github summary", e, failures)
            return failures
        if target:
            try:
                with open(target, "a", encoding="utf-8") as f:
                    f.write(summary + "\n")
            except OSError as e:
                raise InputError(target, "GITHUB_STEP_SUMMARY", f"cannot append the summary: {e.strerror or e}") from None
            print(f"summary: appended to $GITHUB_STEP_SUMMARY ({target})")
        else:
            print(summary)
    return failures


def emit_check_reports(args: argparse.Namespace, results: list, errors: list[dict], engine_name: str, bounds) -> list[dict]:
    """`bpcheck check`: one run per board. Returns the writers' failures (:func:`emit_reports`)."""
    if not (getattr(args, "report", None) or getattr(args, "github", False)):
        return []

    meta = {"engine": engine_name, "strategy": args.strategy}
    for k, v in (("max states", bounds.max_states), ("max depth", bounds.max_depth), ("timeout (s)", bounds.timeout)):
        if v is not None:
            meta[k] = v
    left_out = sum(getattr(br, "left_out", 0) for br in results)
    if left_out:
        meta["max counterexamples"] = getattr(args, "max_counterexamples", None)
    skips_fail = not getattr(args, "allow_skips", False)  # a refused board is not a pass (JUnit: an error case)
    return emit_reports(args, runs_of(results, engine_name, skips_fail), errors, "bpcheck check", meta, left_out=left_out)


def bound_counterexamples(results: list, engine_name: str, limit: int | None) -> tuple[int, list[str]]:
    """``--max-counterexamples N``: keep at most `limit` counterexamples over the boards, in place
    (each board's ``left_out`` counts the ones it lost); the first of each root cause is kept first
    (reports/groups.py), new ones before known ones, then the others in board order. The
    verdicts are the exploration's, untouched. Returns how many were left out, and the root
    causes left out entirely (a bound below their number), each in one line."""
    if limit is None:
        return 0, []

    runs = runs_of(results, engine_name)
    total = sum(len(r.counterexamples) for r in runs)
    if total <= limit:
        return 0, []
    groups = group_runs(runs)
    keep = select_within(groups, limit)
    hidden = [
        ("known: " if g.known else "") + g.title() + f"; first on {g.first.board}"
        for g in groups
        if not any((m.run_index, m.cex_index) in keep for m in g.members)
    ]
    for ri, br in enumerate(results):
        kept = [c for ci, c in enumerate(br.counterexamples) if (ri, ci) in keep]
        br.left_out = len(br.counterexamples) - len(kept)
        br.counterexamples = kept
    return total - len(keep), hidden


def root_causes(results: list, engine_name: str) -> list:
    """The counterexamples of a run grouped by root cause (reports/groups.py)."""
    return group_runs(runs_of(results, engine_name))


__all__ = [
    "DEFAULT_GRAPH_LIMIT",
    "bound_counterexamples",
    "emit_check_reports",
    "emit_reports",
    "graph_limit",
    "root_causes",
    "writer_failed",
]
