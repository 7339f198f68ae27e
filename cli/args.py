"""The options several commands share, as argparse arguments: progress (`-q`), `-j N` and
`--cluster`, the report options, and the argparse types they use."""

from __future__ import annotations

import argparse

from bpcheck.errors import InputError, did_you_mean
from bpcheck.harness.config import cli_defaults
from bpcheck.harness.check import report_error
from bpcheck.harness.reporting import DEFAULT_GRAPH_LIMIT
from bpcheck.invariants import REGISTRY, select
from bpcheck.model.cmdline import positive_number
from bpcheck.model.rulesets import RULESETS


def add_quiet_argument(p) -> None:
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="nothing on stderr while the run goes on: no progress, early verdicts or first counterexample (errors still; stdout is unchanged)",
    )


def add_ruleset_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ruleset",
        choices=list(RULESETS),
        help="the ruleset of boards and scenarios that name none (a file's own `ruleset` field wins; default: tcg; docs/rulesets.md)",
    )


def add_cards_db_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cards-db",
        metavar="FILE",
        help="a card database (cards.cdb): boards may name any of its cards by name or passcode, their facts read from it "
        "(default: the engine's own with --engine ocgcore, OCG_CARDS; otherwise the built-in pool only; docs/boards.md)",
    )


def jobs_type(text: str) -> int:
    """-j N: N >= 1 worker processes, or 0 for the number of CPUs this process may use."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of worker processes (0 = one per CPU), got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (one per CPU) or more, got {n}")
    return n


def add_jobs_argument(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "-j",
        "--jobs",
        type=jobs_type,
        default=None,
        metavar="N",
        help=f"{what} in N worker processes (default 1: in this process; 0: one per CPU; with --cluster, N Ray workers, default every CPU of the cluster); the output is the same whatever N",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the workers on a Ray cluster (docs/cluster.md): auto (RAY_ADDRESS), local:N (start a local Ray with N workers) or HOST:PORT; the output is the same as -j 1. Needs: "
        + "pip install 'bpcheck[cluster]'",
    )


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        metavar="DIR",
        help="write a self-contained HTML report (index.html), junit.xml, results.sarif, summary.md and, per "
        "counterexample, its page, DOT and SVG pictures and ITF trace into DIR",
    )
    p.add_argument(
        "--graph-limit",
        type=positive(int),
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


def add_max_counterexamples(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-counterexamples",
        type=positive(int),
        metavar="N",
        help="keep at most N counterexamples in every output (text, --json, --cex-dir, --report, --github): first one of each "
        "root cause, then the others in board order; verdicts and exit status still count every violation, and the outputs say "
        "how many were left out",
    )


def positive(kind):
    """An argparse type: a finite number > 0 of ``kind`` (nan, inf, 0, -1 refused)."""

    return positive_number(kind)


def error(e: InputError) -> None:
    """Bad input on stderr: one line, whatever a file or an engine said (every command's)."""
    report_error(e)


def invariants(args: argparse.Namespace) -> list | None:
    """The invariants named by --invariants (all by default), or None after reporting bad input."""
    try:
        return select(args.invariants)
    except KeyError as e:
        names = [*REGISTRY, *sorted({i.family for i in REGISTRY.values()})]
        error(InputError("--invariants", "", f"unknown invariant or family {e.args[0]!r}{did_you_mean(e.args[0], names)} (see `bpcheck invariants`)"))
        return None


def project_defaults(parser: argparse.ArgumentParser) -> None:
    """Every command's defaults from ``[tool.bpcheck]`` of the nearest pyproject.toml
    (harness/config.py, docs/configuration.md): an option given on the command line wins. A bad
    key or value raises InputError naming the file and the key."""
    for action in getattr(parser, "_actions", ()):  # (a parser stand-in of a test has none)
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                dests = {a.dest for a in sub._actions}
                values, _path = cli_defaults(command, dests)
                if values:
                    sub.set_defaults(**values)
