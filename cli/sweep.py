"""`bpcheck sweep`: parse, run (:class:`bpcheck.harness.sweep.SweepRun`), print, exit (docs/sweep.md)."""

from __future__ import annotations

import argparse

from bpcheck.cli.args import add_jobs_argument, add_quiet_argument
from bpcheck.cli.args import invariants as select_invariants
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK
from bpcheck.engines.registry import spec_forms
from bpcheck.errors import InputError
from bpcheck.harness.check import report_error
from bpcheck.harness.sweep import SweepOptions, SweepRun


def cmd_sweep(args: argparse.Namespace) -> int:
    invariants = select_invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    opts = SweepOptions.from_namespace(args)
    run = SweepRun(opts, invariants)
    try:
        run.prepare()
        out = run.run()
    except InputError as e:
        report_error(e)
        return EXIT_BAD_INPUT
    finally:
        run.close()
    doc = out.doc
    v = doc["verdicts"]
    for g in doc["findings"]:
        sig = f" [{g['signature']}]" if g["signature"] else ""
        rules = f" ({', '.join(g['rules'])})" if g["rules"] else ""
        print(f"finding {g['invariant']}{sig}{rules}: {len(g['cards'])} card(s): {', '.join(str(c) for c in g['cards'])}")
    for g in doc.get("baseline_gone", ()):
        print(f"baseline: no longer occurs: {g['card']} {g['name']}: {g['finding']} ({g['reason']})")
    print(
        f"sweep: {doc['judged']} of {doc['selected']} cards judged: {v['finding']} with findings, {v['clean']} clean, "
        f"{v['not judged']} not judged, {v['no playable board']} without a playable board"
    )
    if doc["findings"] and not opts.boards:
        print("the generated boards were in a temporary folder: add --boards DIR to keep them and reproduce a finding with `bpcheck check`")
    if doc["findings"] and opts.boards:
        print(f"each finding's board is in {opts.boards}: bpcheck check {opts.boards}/BOARD --engine {opts.engine} --cards-db {opts.cards_db}")
    for e in out.errors:
        report_error(e)
    if out.interrupted:
        print(f"interrupted by {out.interrupted}: go on with --resume --json FILE")
        return run.exit_status or 130  # 129 / 130 / 143: the signal's, as `check`
    if out.errors:
        return EXIT_BAD_INPUT
    return EXIT_FAIL if out.new_findings else EXIT_OK


def add_sweep_parser(sub, positive) -> None:
    p = sub.add_parser("sweep", help="judge every card of a card database (or a query) on generated boards (docs/sweep.md)")
    p.add_argument("queries", nargs="*", metavar="QUERY", help="card names, passcodes or @FILE (passcodes or names, one a line); none: every card")
    p.add_argument("--engine", default="ocgcore", metavar="ENGINE", help=f"the engine under test: {spec_forms()} (default: ocgcore; docs/engines.md)")
    p.add_argument("--cards-db", default=None, metavar="FILE", help="the card database to sweep (required)")
    p.add_argument("--type", default=None, help="only cards of this type: monster, spell, trap, effect, flip, quick-play, ... (comma: all of them)")
    p.add_argument("--max-states", type=positive(int), default=2000, help="states explored per board (default: 2000)")
    p.add_argument("--timeout", type=positive(float), metavar="S",
                   help="stop a board after S seconds (inconclusive: its bound_hit says so); a board still inside one step S + 10 s after it "
                        "began has its worker killed (docs/sweep.md). Results then depend on the machine (default: none)")
    p.add_argument("--batch", type=positive(int), default=16, help="cards per batch (the --json file is written after each; default 16)")
    p.add_argument("--invariants", default=None, help="invariant IDs or families (default: every registered invariant)")
    p.add_argument("--baseline", default=None, metavar="FILE", help="known findings ([[known]] card, finding, reason): they do not fail the sweep")
    p.add_argument("--json", default=None, metavar="FILE", help="the result document (docs/sweep.md), written after each batch")
    p.add_argument("--resume", action="store_true", help="go on with the sweep whose --json FILE is given: judged cards are not judged again")
    p.add_argument("--report", default=None, metavar="DIR", help="an HTML table with a row per card")
    p.add_argument("--boards", default=None, metavar="DIR", help="where the generated boards are written (default: a temporary folder)")
    p.add_argument("--scripts-overlay", default=None, metavar="DIR", help="ocgcore: card scripts searched before OCG_SCRIPTS (shadows only the cards it holds)")
    add_jobs_argument(p, "check the boards")
    add_quiet_argument(p)
    p.set_defaults(fn=cmd_sweep)
