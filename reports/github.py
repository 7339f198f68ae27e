"""GitHub Actions output: workflow-command annotations and a Markdown job summary.

GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (and 50 per job);
the ones past that are dropped silently. So at most :data:`PER_STEP` of each level are printed:
when there are more, the last one printed says how many were left out and where to see them
(the summary, the report). The summary is capped below GitHub's 1 MiB per step.
"""

from __future__ import annotations

from bpcheck.reports.board import player_of
from bpcheck.reports.groups import Group, group_runs
from bpcheck.reports.runs import Run, refused_unchecked
from bpcheck.reports.safe import gh_data, gh_property, md_code, md_text
from bpcheck.reports.text import decision_groups, forced_summary, plural

PER_STEP = 10  # per level (error, warning, notice) and step
SUMMARY_LIMIT = 1_000_000  # bytes; GitHub refuses a step summary over 1 MiB


escape_data = gh_data  # a command's message (reports/safe.py)
escape_property = gh_property  # a command's property value


def command(level: str, message: str, file: str | None = None, title: str | None = None, line: int | None = None) -> str:
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
    if line is not None:
        props.append(f"line={line}")
    if title:
        props.append(f"title={escape_property(title)}")
    return f"::{level}{' ' + ','.join(props) if props else ''}::{escape_data(message)}"


def _trace_line(cex) -> str:
    return " → ".join(
        (f"{player_of(d.player)}: {d.action.get('label', '?')}" if d is not None else "")
        + (f" (then {forced_summary(f, f[0].before)})" if f else "")
        for d, f in decision_groups(cex.steps)
    )


def _boards_text(g: Group, limit: int = 10) -> str:
    boards = g.boards()
    return ", ".join(boards[:limit]) + (f" and {len(boards) - limit} more" if len(boards) > limit else "")


def _findings(runs: list[Run], errors: list[dict]) -> dict[str, list[tuple[str, str, str]]]:
    """(file, title, message) per level, most important first. Counterexamples are annotated
    once per root cause (reports/groups.py), on the board of its first one, naming the others;
    known disagreements of a baseline are not annotated."""
    out: dict[str, list[tuple[str, str, str]]] = {"error": [], "warning": []}
    several = len({r.engine for r in runs}) > 1
    for e in errors:
        out["error"].append((e["file"], "bpcheck: bad input", f"{e.get('field') or '-'}: {e['problem']}"))
    for g in group_runs(runs):
        if g.known:
            continue
        cex, run = g.first.cex, g.first.run
        who = f" [{run.engine}]" if several else ""
        more = ""
        if g.count > 1:
            inv = ", ".join(f"{i} x{n}" if n > 1 else i for i, n in g.invariants().items())
            more = f"\nroot cause #{g.number}: {g.count} counterexamples ({inv}) on {plural(len(g.boards()), 'board')}: {_boards_text(g)}"
        msg = (
            f"{cex.message}\n{cex.statement}"
            + (f"\nrules: {', '.join(cex.rules)}" if cex.rules else "")
            + f"\n{_trace_title(cex)} ({plural(len(cex.steps), 'step')}): {_trace_line(cex) or 'the initial state'}"
            + more
        )
        title = f"bpcheck: {cex.invariant} violated{who}" + (f" (+{g.count - 1} like it)" if g.count > 1 else "")
        out["error"].append((run.board, title, msg))
    for run in runs:
        who = f" [{run.engine}]" if several else ""
        if run.skip_reason is not None:
            out["warning"].append((run.board, f"bpcheck: skipped{who}", f"the engine refused this board: {run.skip_reason}; nothing was checked"))
        for g in run.goals():
            if not g["reached"] and run.skip_reason is None:
                if run.explore.bound_hit:
                    out["warning"].append(
                        (run.board, f"bpcheck: goal {g['id']} not reached within the bound{who}", g.get("description") or f"goal {g['id']!r} was not reached before the bound ({run.explore.bound_hit})")
                    )
                else:
                    out["error"].append((run.board, f"bpcheck: goal {g['id']} not reachable{who}", g.get("description") or f"goal {g['id']!r} cannot be reached"))
        if run.explore.bound_hit:
            out["warning"].append(
                (run.board, f"bpcheck: inconclusive{who}", f"bound hit: {run.explore.bound_hit}; {run.explore.states} states explored, not a pass")
            )
    return out


def annotations(runs: list[Run], errors: list[dict] = (), where: str = "the job summary") -> list[str]:
    lines = []
    for level, items in _findings(runs, errors).items():
        if len(items) <= PER_STEP:
            shown, left = items, 0
        else:
            shown, left = items[: PER_STEP - 1], len(items) - (PER_STEP - 1)
        for f, title, msg in shown:
            lines.append(command(level, msg, file=f, title=title))
        if left:
            noun = "problems" if level == "error" else "warnings"
            lines.append(
                command(
                    level,
                    f"{left} more {noun} not annotated here (GitHub shows {PER_STEP} {level} annotations per step): see {where}",
                    title=f"bpcheck: {left} more {noun}",
                )
            )
    return lines


_md = md_text  # prose from runs (an engine's words included): reports/safe.py


def markdown_summary(
    runs: list[Run], errors: list[dict] = (), title: str = "bpcheck check", report: str | None = None, left_out: int = 0, on_runner: bool = False, artifacts: str | None = None
) -> str:
    """The job summary. `report`: where the HTML report is; `on_runner`: the summary is read on
    github.com (GITHUB_STEP_SUMMARY), where the runner's files are not: `report` is then the
    folder in the workspace, to upload as an artifact, and `artifacts` this run's page that
    lists them (a link only to GitHub's own page, harness/reporting.py artifacts_url)."""
    verdicts = [r.verdict for r in runs]
    n_fail, n_inc, n_pass = verdicts.count("fail"), verdicts.count("inconclusive"), verdicts.count("pass")
    n_skip = verdicts.count("skipped")
    overall = "ERROR" if errors else ("FAIL" if n_fail else ("INCONCLUSIVE" if n_inc or refused_unchecked(runs) else "PASS"))
    icon = {"PASS": "✅", "FAIL": "❌", "INCONCLUSIVE": "⚠️", "ERROR": "❌"}[overall]
    engines = sorted({r.engine for r in runs})
    head = [
        f"## {icon} {title}: {overall}",
        "",
        f"{n_pass} passed, {n_fail} failed, {n_inc} inconclusive"
        + (f", {n_skip} skipped" if n_skip else "")
        + (f", {len(errors)} bad input" if errors else "")
        + f" ({len(runs)} run{'s' if len(runs) != 1 else ''}; engine{'s' if len(engines) != 1 else ''}: {_md(', '.join(engines)) or '-'})",
        "",
    ]
    if report and on_runner:
        where = f" ([this run's artifacts]({artifacts}))" if artifacts else ""
        head += [
            f"Full report: {md_code(report + 'index.html' if report.endswith('/') else report)} on the runner, not on GitHub: upload the folder "
            f"{md_code(report)} as an artifact (`actions/upload-artifact`) to read it{where}.",
            "",
        ]
    elif report:
        head += [f"Full report: {md_code(report)}", ""]
    body: list[str] = []
    groups = group_runs(runs)
    number = {(m.run_index, m.cex_index): g.number for g in groups for m in g.members}
    bad = [(ri, r) for ri, r in enumerate(runs) if r.verdict != "pass"]
    if bad or errors:
        body += ["| board | engine | verdict | states | transitions | counterexamples |", "|---|---|---|---:|---:|---|"]
        for e in errors:
            body.append(f"| {md_code(e['file'])} | | bad input: {_md(e['problem'])} | | | |")
        for ri, r in bad:
            x = r.explore
            cx = (
                ", ".join(
                    f"{md_code(c.invariant)} (#{number[(ri, ci)]}" + (", known)" if getattr(c, "baselined", None) is not None else ")")
                    for ci, c in enumerate(r.counterexamples)
                )
                or (x.bound_hit and _md(f"bound hit: {x.bound_hit}"))
                or (r.skip_reason and _md(f"refused by the engine: {r.skip_reason}"))
                or "-"
            )
            body.append(f"| {md_code(r.board)} | {_md(r.engine)} | {r.verdict} | {x.states} | {x.transitions} | {cx} |")
        body.append("")
    if n_pass:
        body += [f"<details><summary>{n_pass} passing run{'s' if n_pass != 1 else ''}</summary>", ""]
        body += ["| board | engine | states | transitions | depth |", "|---|---|---:|---:|---:|"]
        for r in runs:
            if r.verdict == "pass":
                x = r.explore
                body.append(f"| {md_code(r.board)} | {_md(r.engine)} | {x.states} | {x.transitions} | {x.max_depth} |")
        body += ["", "</details>", ""]
    cex_parts: list[str] = []
    for g in groups:
        if g.known:
            continue
        c, r = g.first.cex, g.first.run
        boards = g.boards()
        inv = ", ".join(md_code(i) + (f" ×{n}" if n > 1 else "") for i, n in g.invariants().items())
        part = [
            f"### #{g.number} {md_code(c.invariant)} on {md_code(r.board)}" + (f" ({_md(r.engine)})" if len(engines) > 1 else "")
            + (f" and {g.count - 1} more like it" if g.count > 1 else ""),
            "",
            f"> {_md(c.statement)}",
            "",
        ]
        if g.count > 1:
            part += [
                f"**Root cause #{g.number}:** {g.count} counterexamples ({inv}) on {len(boards)} board{'s' if len(boards) != 1 else ''}, "
                f"{_md(g.family)}, {_md(g.where)}",
                "",
                f"<details><summary>the {len(boards)} boards</summary>",
                "",
                *[f"- {md_code(b)}" for b in boards],
                "",
                "</details>",
                "",
            ]
        if c.rules:
            part += [f"Rules: {', '.join(c.rules)} (docs/rules.md)", ""]
        part += [f"**Found:** {_md(c.message)}", "", f"<details><summary>{_trace_title(c)}: {len(c.steps)} steps</summary>", ""]
        for d, forced in decision_groups(c.steps):
            if d is not None:
                part.append(f"{d.index}. {player_of(d.player)}: {md_code(d.action.get('label', '?'))}")
            if forced:
                part.append(f"   - then {_md(forced_summary(forced, forced[0].before))} (step{'s' if len(forced) > 1 else ''} {forced[0].index}{'-' + str(forced[-1].index) if len(forced) > 1 else ''})")
        part += ["", "</details>", ""]
        cex_parts.append("\n".join(part))
    n_known = sum(g.count for g in groups if g.known)
    if n_known:
        body += [f"{n_known} known disagreement{'s' if n_known != 1 else ''} (baseline) did not fail a board.", ""]
    if left_out:
        body += [f"{left_out} counterexample{'s' if left_out != 1 else ''} left out by `--max-counterexamples` (the verdicts count them).", ""]
    text = "\n".join(head + body)
    if cex_parts:
        n_new = sum(g.count for g in groups if not g.known)
        text += f"\n## Counterexamples by root cause ({n_new} in {len(cex_parts)} group{'s' if len(cex_parts) != 1 else ''})\n\n"
        left = 0
        for k, part in enumerate(cex_parts):
            if len((text + part).encode()) > SUMMARY_LIMIT - 500:
                left = len(cex_parts) - k
                break
            text += part + "\n"
        if left:
            text += f"\n_{left} more root cause{'s' if left != 1 else ''} left out (the summary is limited to 1 MiB): see the report._\n"
    return text


__all__ = ["PER_STEP", "annotations", "command", "escape_data", "escape_property", "markdown_summary"]


def _trace_title(cex) -> str:
    """'shortest trace' for a BFS counterexample; DFS ones are not known to be shortest."""
    return getattr(cex, "trace_title", "shortest trace")
