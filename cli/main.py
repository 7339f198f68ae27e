"""The `bpcheck` command line.

Exit statuses (the CI contract, also in the README):
  0  everything checked passed
  1  a check failed (a scenario expectation, later an invariant)
  2  bad input or usage (the message names the file, the field and the problem)
  3  inconclusive (a bound was hit; used by `bpcheck check`)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from bpcheck import __version__
from bpcheck.errors import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK, InputError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, no traceback
        self.print_usage(sys.stderr)
        print(f"bpcheck: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _err(e: InputError) -> None:
    print(f"bpcheck: error: {e.render()}", file=sys.stderr)


def cmd_scenario(args: argparse.Namespace) -> int:
    from bpcheck.scenarios import load_scenario, run_scenario, scenario_files

    try:
        files = scenario_files(args.paths)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    passed = failed = bad = 0
    out: list[dict] = []
    for path, display in files:
        try:
            sc = load_scenario(path, display)
            res = run_scenario(sc)
        except InputError as e:
            _err(e)
            bad += 1
            out.append({"path": display, "status": "bad_input", "error": e.render()})
            continue
        if res.passed:
            passed += 1
            if not args.quiet:
                print(f"PASS  {display}  {res.name}")
        else:
            failed += 1
            print(f"FAIL  {display}  {res.name}")
            for f in res.failures:
                print(f"      {f}")
        out.append(
            {
                "path": display,
                "name": res.name,
                "status": "pass" if res.passed else "fail",
                "rules": list(res.rules),
                "steps_run": res.steps_run,
                "failures": res.failures,
            }
        )
    summary = f"{passed} passed, {failed} failed" + (f", {bad} bad input" if bad else "")
    print(f"scenarios: {summary} ({len(files)} files)")
    if args.json:
        Path(args.json).write_text(json.dumps({"scenarios": out, "passed": passed, "failed": failed, "bad_input": bad}, indent=2) + "\n")
    if bad:
        return EXIT_BAD_INPUT
    return EXIT_FAIL if failed else EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from bpcheck.model.board import load_board, parse_toml, read_text
    from bpcheck.scenarios import load_scenario, scenario_files

    try:
        files = scenario_files(args.files)
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
                b = load_board(path, display)
                n = sum(1 for _ in b.state.monsters())
                print(f"ok    {display}  board {b.name!r}: turn {b.state.turn}, {n} monsters on the field")
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
    from bpcheck.scenarios import scenario_files

    return scenario_files(paths)


def _positive(kind):
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return v

    return parse


def _invariants(args: argparse.Namespace):
    """The invariants named by --invariants (all by default), or None after reporting bad input."""
    from bpcheck.invariants import select

    try:
        return select(args.invariants)
    except KeyError as e:
        _err(InputError("--invariants", "", f"unknown invariant or family {e.args[0]!r} (see `bpcheck invariants`)"))
        return None


def cmd_check(args: argparse.Namespace) -> int:
    from bpcheck.errors import EXIT_INCONCLUSIVE
    from bpcheck.explorers.core import Bounds
    from bpcheck.explorers.run import check_board, result_document
    from bpcheck.model.board import load_board
    from bpcheck.reports.text import counterexample_text

    invariants = _invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    try:
        files = _board_files(args.paths)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    from bpcheck.engines import make_engine

    engine_kw = {"call_timeout": args.call_timeout, "check_determinism": args.check_determinism}
    try:
        make_engine(args.engine, **engine_kw)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    engine_name = args.engine or "reference"
    system_kw: dict = {}
    if args.differential:  # lockstep with the reference model: explorers/differential.py
        from bpcheck.explorers.differential import DIFF_INVARIANT, DifferentialSystem

        invariants = [*invariants, DIFF_INVARIANT]
        system_kw["system_cls"] = DifferentialSystem
    bounds = Bounds(args.max_states, args.max_depth, args.timeout)
    from bpcheck.reporting import emit_check_reports, graph_limit

    if graph_limit(args):  # --report draws small state graphs: record them (bounded)
        system_kw["graph_limit"] = graph_limit(args)
    results = []
    errors: list[dict] = []
    for path, display in files:
        try:
            board = load_board(path, display)
            br = check_board(board, make_engine(args.engine, **engine_kw), invariants, args.strategy, bounds, engine_name, progress=None, **system_kw)
        except InputError as e:
            _err(e)
            errors.append({"file": e.file, "field": e.field, "problem": e.problem})
            continue
        results.append(br)
        r = br.result
        vac = [row["id"] for row in br.invariant_rows() if row["verdict"] == "vacuous"]
        line = f"{r.status.upper():12} {display}: {r.states} states, {r.transitions} transitions, depth {r.max_depth}"
        if args.stats:
            line += f", {r.elapsed:.2f} s ({r.states / max(r.elapsed, 1e-9):,.0f} states/s)"
        if r.bound_hit:
            line += f"; bound hit: {r.bound_hit}"
        print(line)
        if vac and args.verbose:
            print(f"             vacuous here: {', '.join(vac)}")
        for g in br.goals:
            if br.witnesses.get(g.id) is None:
                print(f"             goal {g.id!r} is not reachable{' (' + g.description + ')' if g.description else ''}")
            elif args.verbose:
                print(f"             goal {g.id!r} reached in {len(br.witnesses[g.id])} steps")
        for cex in br.counterexamples:
            print()
            print(counterexample_text(cex))
            print()
    doc = result_document(results, engine_name, args.strategy, bounds, errors, timings=args.stats)
    inv_total = {inv.id: 0 for inv in invariants}
    for br in results:
        for row in br.invariant_rows():
            if row["id"] in inv_total:
                inv_total[row["id"]] += row["checked"]
    never = [k for k, v in inv_total.items() if v == 0]
    n_pass = sum(1 for r in results if r.verdict == "pass")
    n_fail = sum(1 for r in results if r.verdict == "fail")
    n_inc = sum(1 for r in results if r.verdict == "inconclusive")
    print(
        f"check: {n_pass} passed, {n_fail} failed, {n_inc} inconclusive"
        + (f", {len(errors)} bad input" if errors else "")
        + f" ({len(files)} boards, {len(invariants)} invariants)"
    )
    if never:
        print(f"vacuous on every board (their situation never arose): {', '.join(never)}")
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    if args.cex_dir:
        out = Path(args.cex_dir)
        out.mkdir(parents=True, exist_ok=True)
        for br in results:
            for k, cex in enumerate(br.counterexamples, 1):
                name = f"{Path(br.board.path).stem}.{cex.invariant}.json"
                (out / name).write_text(json.dumps({"bpcheck_counterexample": 1, **cex.to_dict(full=False)}, indent=1) + "\n")
    emit_check_reports(args, results, errors, engine_name, bounds)  # --report DIR, --github
    if errors:
        return EXIT_BAD_INPUT
    if n_fail:
        return EXIT_FAIL
    if n_inc:
        return EXIT_INCONCLUSIVE
    return EXIT_OK


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

    return replay_file(args.file, verbose=not args.quiet)


def invariants_markdown() -> str:
    from bpcheck.invariants import REGISTRY
    from bpcheck.invariants.base import FAMILIES

    out = [
        "# Invariants",
        "",
        "Generated by `bpcheck invariants --markdown` (a test keeps this file in step with the code).",
        "Each invariant reads observations, action records and events only (docs/model.md), never an",
        "engine's internals; card facts it needs are restated in `invariants/facts.py`. Kinds: `state`",
        "(checked on every state), `transition` (before, action, events, after), `actions` (the set a",
        "state offers). An invariant whose situation never arose on a board is reported as *vacuous*",
        "there, not as passed. `DEADLOCK` and `CYCLE` are checked structurally by the explorer.",
        "",
    ]
    for fam in FAMILIES:
        out.append(f"## {fam.capitalize()}")
        out.append("")
        out.append("| ID | kind | statement | rules |")
        out.append("|---|---|---|---|")
        for inv in sorted((i for i in REGISTRY.values() if i.family == fam), key=lambda i: i.id):
            out.append(f"| `{inv.id}` | {inv.kind} | {inv.statement} | {', '.join(inv.rules)} |")
        out.append("")
    return "\n".join(out)


def cmd_invariants(args: argparse.Namespace) -> int:
    from bpcheck.invariants import REGISTRY

    if args.markdown:
        print(invariants_markdown())
        return EXIT_OK
    if args.json:
        print(json.dumps([i.to_dict() for i in sorted(REGISTRY.values(), key=lambda i: i.id)], indent=2))
        return EXIT_OK
    for inv in sorted(REGISTRY.values(), key=lambda i: (i.family, i.id)):
        print(f"{inv.id:32} {inv.kind:10} {inv.family:18} {', '.join(inv.rules)}")
        print(f"{'':32} {inv.statement}")
    return EXIT_OK


def _cmd_mutants(args: argparse.Namespace) -> int:
    from bpcheck.mutants import cmd_mutants

    return cmd_mutants(args)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bpcheck", description="Model checker and property-test harness for the Yu-Gi-Oh! TCG Battle Phase.")
    p.add_argument("--version", action="version", version=f"bpcheck {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sc = sub.add_parser("scenario", help="run scenario files (executable rulings)")
    sc.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders")
    sc.add_argument("--json", metavar="FILE", help="write results as JSON")
    sc.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")
    sc.set_defaults(fn=cmd_scenario)

    va = sub.add_parser("validate", help="validate board and scenario files")
    va.add_argument("files", nargs="+", metavar="FILE")
    va.set_defaults(fn=cmd_validate)

    ck = sub.add_parser("check", help="explore every reachable state of each board and check the invariants")
    ck.add_argument("paths", nargs="+", metavar="PATH", help="board files or folders")
    ck.add_argument(
        "--engine", metavar="ENGINE", help="the engine under test: reference (default), cmd:COMMAND (docs/protocol.md) or package.module:factory"
    )
    ck.add_argument("--call-timeout", type=_positive(float), metavar="S", help="cmd: engines: seconds per call before a timeout fault (default 10)")
    ck.add_argument(
        "--check-determinism", action="store_true", help="cmd: engines: ask every legal_actions and apply twice and compare the replies"
    )
    ck.add_argument("--invariants", metavar="IDS", help="comma-separated invariant IDs or family names (default: all)")
    ck.add_argument(
        "--differential", action="store_true", help="also compare the engine with the reference model in lockstep (invariant DIFF)"
    )
    ck.add_argument("--strategy", choices=("bfs", "dfs"), default="bfs", help="bfs (default: shortest counterexamples) or dfs")
    ck.add_argument("--max-states", type=_positive(int), metavar="N", help="stop after N distinct states (inconclusive)")
    ck.add_argument("--max-depth", type=_positive(int), metavar="N", help="do not expand states deeper than N (inconclusive)")
    ck.add_argument("--timeout", type=_positive(float), metavar="S", help="stop after S seconds per board (inconclusive)")
    ck.add_argument("--json", metavar="FILE", help="write the machine-readable result (docs/check-result.schema.json)")
    ck.add_argument("--cex-dir", metavar="DIR", help="write each counterexample as a replayable JSON file")
    ck.add_argument("--stats", action="store_true", help="also print and record timings (not byte-for-byte deterministic)")
    ck.add_argument("-v", "--verbose", action="store_true", help="list vacuous invariants and reached goals per board")
    from bpcheck.reporting import add_report_arguments

    add_report_arguments(ck)  # --report DIR, --graph-limit N, --github
    ck.set_defaults(fn=cmd_check)

    rp = sub.add_parser("replay", help="replay a saved counterexample step by step and check it again")
    rp.add_argument("file", metavar="CEX.json", help="a counterexample file (--cex-dir) or a result file (--json)")
    rp.add_argument("-q", "--quiet", action="store_true")
    rp.set_defaults(fn=cmd_replay)

    rc = sub.add_parser("record", help="record a trace of an engine on a board (docs/traces.md)")
    rc.add_argument("board", metavar="BOARD", help="a board file")
    rc.add_argument("--engine", metavar="ENGINE", help="the engine to record (default: reference)")
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
    add_report_arguments(mu)
    mu.set_defaults(fn=_cmd_mutants)

    # `bpcheck fuzz` (issue 10): random boards, explored and shrunk; parser and command in cli/fuzz.py
    from bpcheck.fuzz import add_fuzz_parser

    add_fuzz_parser(sub, _positive)

    sv = sub.add_parser("serve", help="serve an in-process engine over the JSON-lines protocol on stdin/stdout (docs/protocol.md)")
    sv.add_argument("--engine", metavar="ENGINE", help="the engine to serve: reference (default), mutant:NAME or package.module:factory")
    sv.set_defaults(fn=cmd_serve)

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
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.fn(args))
    except InputError as e:  # any bad input not caught closer to its file
        _err(e)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `bpcheck cards | head`
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
