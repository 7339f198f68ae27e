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
