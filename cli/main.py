# PYTHON_ARGCOMPLETE_OK  (argcomplete: this entry point completes; docs/configuration.md)
"""The `bpcheck` command line.

Exit statuses (the CI contract, also in the README and docs/checking.md):
  0  everything given was checked and passed (a board or scenario the engine refused is exit 3,
     `scenario --strict` exit 1; --allow-skips: refused ones are skipped and keep a pass)
  1  a check failed (an invariant, a scenario expectation, an engine fault)
  2  bad input or usage (the message names the file, the field and the problem)
  3  inconclusive (a bound was hit in `check`; boards or scenarios the engine refused; `fuzz`: no board explored, or a partial search with --strict)
  4  internal error: a bug in bpcheck (one line; the traceback is written to a file); a report
     writer's own bug costs that output only and keeps the verdict's status
  129 / 130 / 143  stopped by SIGHUP / SIGINT / SIGTERM (finished boards' results are written)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from typing import Sequence

from bpcheck import __version__
from bpcheck.cli.args import add_cards_db_argument, add_jobs_argument, add_max_counterexamples, add_quiet_argument, add_report_arguments, add_ruleset_argument, positive, project_defaults
from bpcheck.cli.args import error as _err
from bpcheck.cli.args import invariants as _invariants
from bpcheck.cli.baseline import cmd_baseline
from bpcheck.cli.cards import cmd_cards
from bpcheck.cli.check import cmd_check
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK
from bpcheck.cli.export_puzzle import cmd_export_puzzle
from bpcheck.cli.diff_rulesets import add_diff_rulesets_parser
from bpcheck.cli.fuzz import add_fuzz_parser
from bpcheck.cli.mutants import cmd_mutants
from bpcheck.cli.prove import add_prove_parser
from bpcheck.cli.replay import replay_file
from bpcheck.cli.scenario import cmd_scenario  # docs/scenarios.md
from bpcheck.cli.sweep import add_sweep_parser
from bpcheck.cli.traces import conform_files, record
from bpcheck.engines.registry import IN_PROCESS_FORMS, engine_help
from bpcheck.engines.serve import run as serve
from bpcheck.errors import InputError, did_you_mean
from bpcheck.explorers.checking import parse_goals
from bpcheck.explorers.progress import close_all
from bpcheck.harness import lifecycle
from bpcheck.harness.boards import check_cards_db
from bpcheck.harness.feedback import begin_run
from bpcheck.harness.scenarios import load_scenario
from bpcheck.invariants import REGISTRY
from bpcheck.invariants.docs import markdown
from bpcheck.invariants.signatures import signatures_of
from bpcheck.model.board import load_board, parse_toml, read_text
from bpcheck.model.rulesets import DEFAULT_RULESET
from bpcheck.model.cmdline import input_files
from bpcheck.reports.terminal import output_escaping

STARTED = time.monotonic()  # when the command began: the progress's clock (harness/feedback.py); main() sets it again


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, no traceback
        self.print_usage(sys.stderr)
        print(f"bpcheck: error: {_suggest(message)}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _suggest(message: str) -> str:
    """argparse's "invalid choice: 'chek' (choose from ...)" (a command, --strategy), with the
    choice meant when one is close: "... (did you mean 'check'?)"."""
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if not m:
        return message
    return message + did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        files = input_files(args.files, ".toml", "board or scenario")
        check_cards_db(args.cards_db)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    bad = 0
    for path, display in files:
        try:
            data = parse_toml(read_text(path, display), display)
            if "step" in data or "board" in data:
                sc = load_scenario(path, display, cards_db=args.cards_db, ruleset=args.ruleset)
                print(f"ok    {display}  scenario {sc.name!r}: {len(sc.steps)} steps, rules {', '.join(sc.rules)}{_ruleset_note(sc.board.ruleset)}")
            else:
                b = load_board(path, display, symbolic=True, cards_db=args.cards_db, ruleset=args.ruleset)  # a symbolic board is valid (bpcheck prove)
                parse_goals(b)  # what `check` reads besides the board: validate accepts what check accepts
                n = sum(1 for _ in b.state.monsters())
                sym = f"; symbolic: {', '.join(r.describe() for r in b.symbols)}" if b.symbols else ""
                print(f"ok    {display}  board {b.name!r}: turn {b.state.turn}, {n} monsters on the field{_ruleset_note(b.ruleset)}{sym}")
        except InputError as e:
            _err(e)
            bad += 1
    return EXIT_BAD_INPUT if bad else EXIT_OK




def _ruleset_note(ruleset: str | None) -> str:
    """What validate says of a file's ruleset: nothing for the default (tcg), else its name."""
    return "" if (ruleset or DEFAULT_RULESET) == DEFAULT_RULESET else f", ruleset {ruleset}"


def _size(text: str) -> int:
    """A memory size: 500M, 2G, 1.5GiB, 800MB or a number of bytes (K/M/G/T: powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size such as 500M, 2G or 1.5GiB, got {text!r}")
    n = float(m.group(1)) * 1024 ** "_kmgt".index(m.group(2).lower() or "_")
    if n < 1 or n != n or n > 2**62:
        raise argparse.ArgumentTypeError(f"must be a positive size, got {text!r}")
    return int(n)


def cmd_record(args: argparse.Namespace) -> int:
    return record(args.board, args.engine, args.out, args.actions, args.random, args.seed, ruleset=args.ruleset)


def cmd_conform(args: argparse.Namespace) -> int:
    invariants = _invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    return conform_files(args.traces, invariants, verbose=not args.quiet, json_out=args.json, ruleset=args.ruleset)


def cmd_serve(args: argparse.Namespace) -> int:
    return serve(args.engine)


def cmd_replay(args: argparse.Namespace) -> int:
    return replay_file(args.file, verbose=not args.quiet, engine=args.engine, call_timeout=args.call_timeout, ruleset=args.ruleset)


def invariants_markdown() -> str:
    return markdown()


def cmd_invariants(args: argparse.Namespace) -> int:
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
    return cmd_mutants(args)


def _cmd_export_puzzle(args: argparse.Namespace) -> int:
    return cmd_export_puzzle(args)


def _cmd_baseline(args: argparse.Namespace) -> int:
    return cmd_baseline(args)


def complete(parser: argparse.ArgumentParser) -> None:
    """Shell completion with argcomplete, an optional dependency (``pip install
    'bpcheck[completion]'``): imported here, only when a shell asks. Without it, nothing."""
    try:
        import argcomplete  # optional dependency: function-local
    except ImportError:
        return
    argcomplete.autocomplete(parser)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bpcheck", description="Model checker and property-test harness for the Yu-Gi-Oh! TCG Battle Phase.")
    p.add_argument("--version", action="version", version=f"bpcheck {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sc = sub.add_parser("scenario", help="run scenario files (executable rulings)")
    sc.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders")
    sc.add_argument("--json", metavar="FILE", help="write results as JSON")
    sc.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")
    sc.add_argument("--engine", metavar="ENGINE", help=engine_help())
    skips = sc.add_mutually_exclusive_group()  # a refused scenario is not a pass (exit 3), docs/scenarios.md
    skips.add_argument("--strict", action="store_true", help="a scenario skipped because the engine refuses its board fails the run (exit 1; default: exit 3, not checked)")
    skips.add_argument("--allow-skips", action="store_true", help="scenarios the engine refuses are skipped and do not change the exit status (default: exit 3, not checked)")
    add_cards_db_argument(sc)
    add_ruleset_argument(sc)
    sc.set_defaults(fn=cmd_scenario)

    va = sub.add_parser("validate", help="validate board and scenario files")
    va.add_argument("files", nargs="+", metavar="FILE")
    add_cards_db_argument(va)
    add_ruleset_argument(va)
    va.set_defaults(fn=cmd_validate)

    ck = sub.add_parser("check", help="explore every reachable state of each board and check the invariants")
    ck.add_argument("paths", nargs="+", metavar="PATH", help="board files or folders")
    ck.add_argument("--engine", metavar="ENGINE", help=engine_help())
    add_cards_db_argument(ck)
    add_ruleset_argument(ck)
    ck.add_argument("--call-timeout", type=positive(float), metavar="S", help="cmd: engines: seconds per call before a timeout fault (default 10)")
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
    ck.add_argument("--max-states", type=positive(int), metavar="N", help="stop before storing more than N distinct states (inconclusive)")
    ck.add_argument("--max-depth", type=positive(int), metavar="N", help="do not expand states deeper than N (inconclusive)")
    ck.add_argument("--timeout", type=positive(float), metavar="S", help="stop after S seconds per board, its reading included (inconclusive)")
    ck.add_argument("--json", metavar="FILE", help="write the machine-readable result (docs/check-result.schema.json)")
    ck.add_argument("--cex-dir", metavar="DIR", help="write each counterexample as a replayable JSON file")
    ck.add_argument("--stats", action="store_true", help="also print and record timings (not byte-for-byte deterministic)")
    ck.add_argument("-v", "--verbose", action="store_true", help="list vacuous invariants, reached goals and collision estimates per board")

    add_quiet_argument(ck)  # progress, early verdicts and the first counterexample on stderr (docs/checking.md)
    skips = ck.add_mutually_exclusive_group()  # a refused board is not a pass (exit 3), docs/checking.md
    skips.add_argument("--allow-skips", action="store_true", help="boards the engine refuses are skipped and do not change the exit status (default: exit 3, not checked)")
    skips.add_argument("--strict", action="store_true", help="the default, kept for old command lines: a board the engine refuses (skipped) is not a pass, exit 3")
    ck.add_argument(
        "--memory-limit", type=_size, metavar="SIZE", help="stop a board as inconclusive before bpcheck's processes together (-j N workers and engines included) use SIZE of memory (e.g. 2G); a board whose reading could pass it is not read"
    )

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
        "--checkpoint-every", type=positive(float), default=300.0, metavar="S", help="with --checkpoint: also save every S seconds (default 300)"
    )

    add_report_arguments(ck)  # --report DIR, --graph-limit N, --github
    add_max_counterexamples(ck)
    ck.set_defaults(fn=cmd_check)

    rp = sub.add_parser("replay", help="replay a saved counterexample step by step and check it again")
    rp.add_argument("file", metavar="CEX.json", help="a counterexample file (--cex-dir) or a result file (--json)")
    rp.add_argument("-q", "--quiet", action="store_true")
    rp.add_argument(
        "--engine", metavar="ENGINE", help=engine_help("the engine to replay on, never the one the file names (docs/bad-input.md)")
    )
    rp.add_argument("--call-timeout", type=positive(float), metavar="S", help="cmd: engines: seconds per call before a timeout fault (default 10)")
    add_ruleset_argument(rp)  # the board's ruleset when it names none (docs/rulesets.md)
    rp.set_defaults(fn=cmd_replay)

    rc = sub.add_parser("record", help="record a trace of an engine on a board (docs/traces.md)")
    rc.add_argument("board", metavar="BOARD", help="a board file")
    rc.add_argument("--engine", metavar="ENGINE", help=engine_help("the engine to record"))
    how = rc.add_mutually_exclusive_group(required=True)
    how.add_argument("--actions", nargs="+", metavar="LABEL", help="the action labels to play, in order")
    how.add_argument("--random", type=positive(int), metavar="N", help="a random walk of at most N steps")
    rc.add_argument("--seed", type=int, default=0, metavar="S", help="the random walk's seed (default 0): same seed, same walk")
    rc.add_argument("--out", required=True, metavar="TRACE.jsonl", help="the trace file to write")
    add_ruleset_argument(rc)  # written into the trace's header (docs/traces.md)
    rc.set_defaults(fn=cmd_record)

    cf = sub.add_parser("conform", help="check recorded engine traces against the reference model and the invariants")
    cf.add_argument("traces", nargs="+", metavar="TRACE.jsonl", help="trace files (docs/traces.md)")
    cf.add_argument("--invariants", metavar="IDS", help="comma-separated invariant IDs or family names (default: all)")
    cf.add_argument("--json", metavar="FILE", help="write the results as JSON")
    cf.add_argument("-q", "--quiet", action="store_true", help="print the verdict and the divergence only")
    add_ruleset_argument(cf)  # for traces whose header and board name none (docs/traces.md)
    cf.set_defaults(fn=cmd_conform)

    mu = sub.add_parser("mutants", help="run the checker on every mutant engine: which invariant kills each")
    mu.add_argument("paths", nargs="*", metavar="PATH", help="board files or folders (default: boards/)")
    mu.add_argument("--only", metavar="NAMES", help="comma-separated mutant names (bpcheck mutants --list)")
    mu.add_argument("--list", action="store_true", help="list the mutants, one line each: its name and the rules bug it plants; run nothing")
    mu.add_argument("--max-states", type=positive(int), metavar="N", help="per board and mutant")
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
    add_ruleset_argument(mu)  # each mutant plays under it on boards that name none (docs/rulesets.md)
    mu.set_defaults(fn=_cmd_mutants)


    add_prove_parser(sub, positive)

    # `bpcheck fuzz` (issue 10): random boards, explored and shrunk; parser and command in cli/fuzz.py

    add_fuzz_parser(sub, positive)
    add_sweep_parser(sub, positive)  # `bpcheck sweep` (issue 30 item 4): cli/sweep.py, docs/sweep.md

    # `bpcheck diff-rulesets` (issue 31): two rulesets on one board, in lockstep (cli/diff_rulesets.py)
    add_diff_rulesets_parser(sub, positive)

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

    ca = sub.add_parser("cards", help="list the card pool, or show one card (with --cards-db: any card of a card database, and its profile)")
    ca.add_argument("name", nargs="?", metavar="NAME", help="a card name, or with --cards-db a name or a passcode")
    ca.add_argument("--json", action="store_true", help="print JSON")
    add_cards_db_argument(ca)
    ca.add_argument(
        "--profile", action="store_true", help="with --cards-db: the card's profile read from its data and text: per effect kind, speed, events, windows and Damage Step sub-steps, with the evidence (docs/profiles.md)"
    )
    ca.set_defaults(fn=cmd_cards)
    for command in sub.choices.values():  # `bpcheck COMMAND --version` answers as `bpcheck --version`
        command.add_argument("--version", action="version", version=f"bpcheck {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. The exit status is the CI contract (README, docs/checking.md): a closed
    stdout never changes it, a signal stops the run cleanly (128 + its number, after writing what
    was finished), and bpcheck's own bug is exit 4 with one line, never 1 and never a traceback.
    Control characters from files or engines never reach the terminal raw (docs/bad-input.md)."""
    global STARTED
    if argv is not None:  # called again in one process (tests): this command's start
        STARTED = time.monotonic()
    parser = build_parser()
    if "_ARGCOMPLETE" in os.environ:  # a shell asks for completions (docs/configuration.md)
        complete(parser)
    try:
        project_defaults(parser)  # [tool.bpcheck] of pyproject.toml (docs/configuration.md)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
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
                begin_run(args, STARTED)  # progress on stderr from the command's start (harness/feedback.py)
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
                close_all()  # no progress line outlives its command (explorers/progress.py)
                if guard is not None:
                    guard.flush()
                    sys.stdout = guard._s
        except lifecycle.Interrupted as e:  # a signal while finishing up
            print(f"bpcheck: interrupted by {e.name}", file=sys.stderr)
            return e.exit_status
        finally:
            sig.polling = False
            if argv is None:
                # the process's own command line: its status is decided and it exits next; a signal
                # from here on (Ray left, worker pools joined at exit) must not turn that status
                # into a death by the signal (issue 33: a second SIGTERM after `mutants -j 2`
                # wrote its result gave exit -15). A library call gets its handlers back.
                sig.ignore_rest()
            else:
                sig.restore()
            cl = sys.modules.get("bpcheck.explorers.cluster")
            if cl is not None:  # --cluster: leave the cluster (a local:N one stops)
                cl.disconnect()

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
