"""`--report DIR`: every report format for a list of runs, written into one folder.

    DIR/index.html                         boards × invariants, verdicts, exercise counts, coverage
    DIR/junit.xml                          one test case per board × invariant (and goal)
    DIR/results.sarif                      SARIF 2.1.0, one result per counterexample
    DIR/summary.md                         the Markdown summary (the one `--github` prints)
    DIR/counterexamples/NAME.html          the counterexample's page: pictures + step viewer
    DIR/counterexamples/NAME.dot / .svg    the trace, one board per state
    DIR/counterexamples/NAME.graph.dot / .svg   the state graph with the path, or its summary
    DIR/counterexamples/NAME.itf.json      the trace in the Informal Trace Format

`bpcheck check` calls :func:`write_report` with one run per board; a command that checks several
engines passes one run per engine and board (:class:`bpcheck.reports.runs.Run`). The DOT files
are always written; an SVG that cannot be rendered is reported in :attr:`ReportOutcome.problems`
and on the counterexample's page, and the rest of the report is written all the same.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bpcheck.outputs import replace_dir
from bpcheck.reports import graphviz, html, itf, junit, sarif
from bpcheck.reports.github import markdown_summary
from bpcheck.reports.runs import Run, cex_names

@dataclass
class ReportOutcome:
    dir: Path
    counterexamples: int = 0
    svgs: int = 0
    renderer: str | None = None
    problems: list[str] = field(default_factory=list)  # plain-words rendering failures

    def lines(self) -> list[str]:
        out = [
            f"report: {self.dir / 'index.html'} ({self.counterexamples} counterexample{'s' if self.counterexamples != 1 else ''}; "
            f"junit.xml, results.sarif, summary.md"
            + (f"; {self.svgs} SVGs rendered with {Path(self.renderer).name}" if self.svgs and self.renderer else "")
            + ")"
        ]
        out += [f"report: {p}" for p in self.problems]
        return out


def write_report(
    out_dir: str | Path,
    runs: list[Run],
    errors: list[dict] = (),
    title: str = "bpcheck check",
    meta: dict | None = None,
    timings: bool = False,
) -> ReportOutcome:
    """Write the report into `out_dir`, replaced whole: it is built in a folder beside it and
    renamed into place when complete (bpcheck.outputs.replace_dir), so an interrupted run leaves
    the old report or the new one, never a mix; a folder holding files bpcheck did not write is
    refused, never cleaned."""
    final = Path(out_dir)
    done: list[ReportOutcome] = []
    replace_dir(final, "report", lambda tmp: done.append(_write_into(tmp, runs, errors, title, meta, timings)))
    outcome = done[0]
    outcome.dir = final
    return outcome


def _write_into(out: Path, runs: list[Run], errors, title: str, meta: dict | None, timings: bool) -> ReportOutcome:
    cdir = out / "counterexamples"
    cdir.mkdir(parents=True, exist_ok=True)
    outcome = ReportOutcome(out)
    names = cex_names(runs)
    jobs = []  # (run, cex, name, {picture: (dot path, svg path)})
    for ri, run in enumerate(runs):
        graph = run.explore.graph
        for ci, cex in enumerate(run.counterexamples):
            name = names[(ri, ci)]
            outcome.counterexamples += 1
            (cdir / f"{name}.itf.json").write_text(itf.trace_json(cex), encoding="utf-8")
            pics = {}
            for key, dot_text, stem in (
                ("trace", graphviz.trace_dot(cex), name),
                ("graph", graphviz.state_graph_dot(cex, graph), f"{name}.graph"),
            ):
                dot_path, svg_path = cdir / f"{stem}.dot", cdir / f"{stem}.svg"
                dot_path.write_text(dot_text, encoding="utf-8")  # the DOT is always written
                pics[key] = (dot_path, svg_path)
            jobs.append((run, cex, name, pics))
    # render in parallel (one renderer process per picture); results are used in a fixed order
    todo = [paths for _r, _c, _n, pics in jobs for paths in pics.values()]
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
    for run, cex, name, pics in jobs:
        pictures = {}
        for key, (dot_path, svg_path) in pics.items():
            r = rendered[(dot_path, svg_path)]
            if r.ok:
                outcome.svgs += 1
                outcome.renderer = r.program
                pictures[key] = (svg_path.read_text(encoding="utf-8"), r.message)
            else:
                outcome.problems.append(f"SVG not rendered for {dot_path.relative_to(out).as_posix()}: {r.message} (the DOT file is written)")
                pictures[key] = (None, r.message)
        (cdir / f"{name}.html").write_text(html.cex_page(run, cex, name, pictures), encoding="utf-8")
    (out / "index.html").write_text(html.index_page(runs, names, list(errors), title, meta), encoding="utf-8")
    (out / "junit.xml").write_text(junit.junit_xml(runs, list(errors), name=title, timings=timings), encoding="utf-8")
    (out / "results.sarif").write_text(sarif.sarif_json(runs, list(errors)), encoding="utf-8")
    (out / "summary.md").write_text(markdown_summary(runs, list(errors), title, report="index.html"), encoding="utf-8")
    return outcome


__all__ = ["ReportOutcome", "write_report"]
