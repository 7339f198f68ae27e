"""`bpcheck diff-rulesets BOARD --a tcg --b ocg`: parse, search (:mod:`bpcheck.harness.diff_rulesets`),
print, exit. Exit 0: no difference; 1: a difference found (printed); 2: bad input; 3: the bound was
hit first (inconclusive)."""

from __future__ import annotations

import json

from bpcheck.cli.args import error as _err
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK
from bpcheck.errors import InputError
from bpcheck.harness.diff_rulesets import result_lines, run_diff_rulesets
from bpcheck.model.rulesets import RULESETS
from bpcheck.reports.outputs import atomic_write_text, prepare_file


def cmd_diff_rulesets(args) -> int:
    try:
        if args.json:
            prepare_file(args.json, "--json", inputs=(args.board,))
        r = run_diff_rulesets(args.board, args.a, args.b, args.max_states, getattr(args, "cards_db", None))
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    for line in result_lines(r):
        print(line)
    if args.json:
        try:
            atomic_write_text(args.json, json.dumps(r.to_dict(), indent=2) + "\n")
        except OSError as e:
            _err(InputError(args.json, "--json", f"cannot write the result: {e.strerror or e}"))
            return EXIT_BAD_INPUT
    if r.found:
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if r.bound_hit else EXIT_OK


def add_diff_rulesets_parser(sub, positive) -> None:
    p = sub.add_parser(
        "diff-rulesets",
        help="the shortest line of play on a board after which two rulesets offer different actions or reach different states (docs/rulesets.md)",
    )
    p.add_argument("board", metavar="BOARD", help="a board file")
    p.add_argument("--a", default="tcg", choices=list(RULESETS), help="the first ruleset (default: tcg)")
    p.add_argument("--b", default="ocg", choices=list(RULESETS), help="the second ruleset (default: ocg)")
    p.add_argument("--max-states", type=positive(int), default=200_000, metavar="N", help="stop after N pairs of states (inconclusive; default 200000)")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON")
    p.set_defaults(fn=cmd_diff_rulesets)
