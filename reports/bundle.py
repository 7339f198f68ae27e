"""`--report DIR`: every report format for a list of runs, written into one folder.

    DIR/index.html                         verdicts, counterexamples by root cause, coverage, boards × invariants
    DIR/junit.xml                          one test case per board × invariant (and goal)
    DIR/results.sarif                      SARIF 2.1.0, one result per counterexample
    DIR/summary.md                         the Markdown summary (the one `--github` prints)
    DIR/counterexamples/NAME.html          a root cause's page: its first counterexample step by step, every member listed
    DIR/counterexamples/NAME.dot / .svg    that counterexample's trace, one board per state
    DIR/counterexamples/NAME.graph.dot / .svg   the state graph with the path, or its summary
    DIR/counterexamples/NAME.itf.json      that trace in the Informal Trace Format

Counterexamples are grouped by root cause (reports/groups.py): one page, one set of pictures and
one ITF trace per group, named after its first counterexample, so a bug that breaks a hundred
boards costs one page. `bpcheck check` calls :func:`write_report` with one run per board; a
command that checks several engines passes one run per engine and board
(:class:`bpcheck.reports.runs.Run`). The DOT files are always written; an SVG that cannot be
rendered is reported in :attr:`ReportOutcome.problems` and on the page.

A writer that fails (a bug in bpcheck) costs its own file only: the file is replaced by a short
one that says it could not be written (an ``<error>`` case in junit.xml, an error notification in
results.sarif, a page that says why), the failure is kept in :attr:`ReportOutcome.failures` for
the command to report, and every other file is written all the same.
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bpcheck import __version__
from bpcheck.reports import graphviz, html, itf, junit, sarif
from bpcheck.reports.github import markdown_summary
from bpcheck.reports.groups import group_runs
from bpcheck.reports.outputs import replace_dir
from bpcheck.reports.runs import Run, cex_names, refused_unchecked
from bpcheck.reports.safe import xml_safe


@dataclass
class ReportOutcome:
    dir: Path
    counterexamples: int = 0
    groups: int = 0
    svgs: int = 0
    renderer: str | None = None
    problems: list[str] = field(default_factory=list)  # plain-words rendering failures
    failures: list[tuple[str, Exception]] = field(default_factory=list)  # (file, the writer's exception): bpcheck's bugs

    def lines(self) -> list[str]:
        formats = ["junit.xml", "results.sarif", "summary.md"]
        failed = {f for f, _e in self.failures}
        kept = ", ".join(f for f in formats if f not in failed)
        out = [
            f"report: {self.dir / 'index.html'} ({self.counterexamples} counterexample{'s' if self.counterexamples != 1 else ''}"
            + (f" in {self.groups} root cause{'s' if self.groups != 1 else ''}, one page each" if self.counterexamples else "")
            + (f"; {kept}" if kept else "")
            + (f"; {self.svgs} SVGs rendered with {Path(self.renderer).name}" if self.svgs and self.renderer else "")
            + ")"
        ]
        out += [f"report: {p}" for p in self.problems]
        out += [f"report: {f} was not written in full: a bug in bpcheck ({type(e).__name__}); the other files are complete" for f, e in self.failures]
        return out


def write_report(
    out_dir: str | Path,
    runs: list[Run],
    errors: list[dict] = (),
    title: str = "bpcheck check",
    meta: dict | None = None,
    timings: bool = False,
    left_out: int = 0,
) -> ReportOutcome:
    """Write the report into `out_dir`, replaced whole: it is built in a folder beside it and
    renamed into place when complete (bpcheck.reports.outputs.replace_dir), so an interrupted run leaves
    the old report or the new one, never a mix; a folder holding files bpcheck did not write is
    refused, never cleaned. `left_out`: counterexamples ``--max-counterexamples`` left out."""
    final = Path(out_dir)
    done: list[ReportOutcome] = []
    replace_dir(final, "report", lambda tmp: done.append(_write_into(tmp, runs, errors, title, meta, timings, left_out)))
    outcome = done[0]
    outcome.dir = final
    return outcome


def _guard(outcome: ReportOutcome, out: Path, path: Path, make: Callable[[], str], fallback: Callable[[Exception], str] | None = None) -> bool:
    """Write `make()` to `path`; a writer's exception (not an OSError: a disk that cannot be
    written is the caller's bad output) is kept in `outcome.failures`, and `fallback(e)` is
    written instead when there is one. True when the real content was written."""
    try:
        text = make()
    except Exception as e:  # noqa: BLE001 - a bug in one writer costs its file only
        outcome.failures.append((path.relative_to(out).as_posix(), e))
        if fallback is not None:
            path.write_text(fallback(e), encoding="utf-8")
        return False
    path.write_text(text, encoding="utf-8")
    return True


def _why(e: Exception) -> str:
    text = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _overall(runs: list[Run], errors) -> str:
    verdicts = [r.verdict for r in runs]
    return "error" if errors else ("fail" if "fail" in verdicts else ("inconclusive" if "inconclusive" in verdicts or refused_unchecked(runs) else "pass"))


def _fallback_page(what: str, runs: list[Run], errors):
    def make(e: Exception) -> str:
        return html.page(
            f"{what}: not written",
            f'<main><h1>{html.esc(what)} could not be written</h1><p class="banner v-error">a bug in bpcheck {html.esc(__version__)}: '
            f"{html.esc(_why(e))}. The run's verdict ({html.esc(_overall(runs, errors).upper())}), its exit status and the other "
            "files of this report stand; the console names the file holding the traceback.</p></main>",
        )

    return make


def _fallback_junit(runs: list[Run], errors, title: str):
    def make(e: Exception) -> str:
        root = ET.Element("testsuites", {"name": title, "tests": "1", "failures": "0", "errors": "1", "skipped": "0"})
        suite = ET.SubElement(root, "testsuite", {"name": "bpcheck report", "tests": "1", "failures": "0", "errors": "1", "skipped": "0"})
        case = ET.SubElement(suite, "testcase", {"classname": "bpcheck", "name": "junit.xml"})
        msg = f"junit.xml could not be written (a bug in bpcheck: {_why(e)}); the run's verdict: {_overall(runs, errors).upper()}"
        err = ET.SubElement(case, "error", {"message": xml_safe(msg), "type": "InternalError"})
        err.text = xml_safe(msg + "; see the console, --json or index.html for the results")
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

    return make


def _fallback_sarif(e: Exception) -> str:
    doc = {
        "$schema": sarif.SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "bpcheck", "version": __version__}},
                "invocations": [
                    {
                        "executionSuccessful": False,
                        "toolExecutionNotifications": [
                            {"level": "error", "message": {"text": f"results.sarif could not be written: a bug in bpcheck ({_why(e)})"}}
                        ],
                    }
                ],
                "results": [],
            }
        ],
    }
    return json.dumps(doc, indent=1) + "\n"


def _write_into(out: Path, runs: list[Run], errors, title: str, meta: dict | None, timings: bool, left_out: int = 0) -> ReportOutcome:
    cdir = out / "counterexamples"
    cdir.mkdir(parents=True, exist_ok=True)
    outcome = ReportOutcome(out)
    names = cex_names(runs)
    groups = group_runs(runs)
    for g in groups:  # a group's files are named after its first counterexample
        g.page = names[(g.first.run_index, g.first.cex_index)]
    page_of = {(m.run_index, m.cex_index): g.page for g in groups for m in g.members}
    outcome.counterexamples = len(page_of)
    outcome.groups = len(groups)
    jobs = []  # (group, {picture: (dot path, svg path)})
    for g in groups:
        run, cex, name = g.first.run, g.first.cex, g.page
        _guard(outcome, out, cdir / f"{name}.itf.json", lambda: itf.trace_json(cex))
        pics = {}
        for key, make, stem in (
            ("trace", lambda: graphviz.trace_dot(cex), name),
            ("graph", lambda: graphviz.state_graph_dot(cex, run.explore.graph), f"{name}.graph"),
        ):
            dot_path, svg_path = cdir / f"{stem}.dot", cdir / f"{stem}.svg"
            if _guard(outcome, out, dot_path, make):  # the DOT is always written (when its writer works)
                pics[key] = (dot_path, svg_path)
        jobs.append((g, pics))
    # render in parallel (one renderer process per picture); results are used in a fixed order
    todo = [paths for _g, pics in jobs for paths in pics.values()]
    tty = sys.stderr.isatty() and not os.environ.get("CI")  # progress on a terminal only
    rendered = {}
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        for k, (paths, r) in enumerate(zip(todo, pool.map(lambda paths: graphviz.render_svg(*paths), todo)), 1):
            rendered[paths] = r
            if tty:
                sys.stderr.write(f"\rreport: rendering pictures {k}/{len(todo)}   ")
                sys.stderr.flush()
    if tty and todo:
        sys.stderr.write("\r" + " " * 50 + "\r")
        sys.stderr.flush()
    for g, pics in jobs:
        pictures = {}
        for key in ("trace", "graph"):
            if key not in pics:
                pictures[key] = (None, "its DOT could not be written (a bug in bpcheck)")
                continue
            dot_path, svg_path = pics[key]
            r = rendered[(dot_path, svg_path)]
            if r.ok:
                outcome.svgs += 1
                outcome.renderer = r.program
                pictures[key] = (svg_path.read_text(encoding="utf-8"), r.message)
            else:
                outcome.problems.append(f"SVG not rendered for {dot_path.relative_to(out).as_posix()}: {r.message} (the DOT file is written)")
                pictures[key] = (None, r.message)
        run, cex = g.first.run, g.first.cex
        _guard(
            outcome, out, cdir / f"{g.page}.html", lambda: html.cex_page(run, cex, g.page, pictures, group=g), _fallback_page(f"counterexamples/{g.page}.html", runs, errors)
        )
    errors = list(errors)
    _guard(
        outcome, out, out / "index.html", lambda: html.index_page(runs, page_of, errors, title, meta, groups=groups, left_out=left_out), _fallback_page("index.html", runs, errors)
    )
    _guard(outcome, out, out / "junit.xml", lambda: junit.junit_xml(runs, errors, name=title, timings=timings), _fallback_junit(runs, errors, title))
    _guard(outcome, out, out / "results.sarif", lambda: sarif.sarif_json(runs, errors), _fallback_sarif)
    _guard(
        outcome,
        out,
        out / "summary.md",
        lambda: markdown_summary(runs, errors, title, report="index.html", left_out=left_out),
        lambda e: f"## bpcheck: the summary could not be written (a bug in bpcheck: {_why(e)})\n",
    )
    return outcome


__all__ = ["ReportOutcome", "write_report"]
