"""`bpcheck fuzz`: its arguments, its summary and its exit status (the search and the shrink:
:mod:`bpcheck.harness.fuzz`)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Sequence

from bpcheck.cli.args import add_jobs_argument, add_quiet_argument, add_report_arguments, add_ruleset_argument
from bpcheck.cli.args import error as _err
from bpcheck.cli.args import invariants as _invariants
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK
from bpcheck.engines import make_engine
from bpcheck.engines.registry import engine_help
from bpcheck.errors import InputError
from bpcheck.explorers.baseline import load_baseline
from bpcheck.explorers.run import result_document
from bpcheck.harness import lifecycle
from bpcheck.harness.board_writer import board_size, board_toml
from bpcheck.harness.boards import check_cards_db
from bpcheck.harness.fuzz import DEFAULT_EXAMPLES, DEFAULT_MAX_STATES, FuzzOutcome, _close, check_options, fuzz_run, reproduce_prefix
from bpcheck.harness.jobs import setup_cluster
from bpcheck.harness.reporting import emit_check_reports
from bpcheck.reports.outputs import atomic_write_text, prepare_file
from bpcheck.reports.safe import one_line
from bpcheck.reports.text import counterexample_text
from bpcheck.reports.text import plural


def _replay_hint(args, out: FuzzOutcome) -> list[str]:
    parts = ["bpcheck fuzz"]
    if args.engine:
        parts.append(f"--engine {shlex.quote(args.engine)}")
    cards_db = getattr(args, "cards_db", None)
    for opt, val in (("--cards-db", cards_db), ("--invariants", args.invariants), ("--cards", args.cards), ("--baseline", args.baseline), ("--ruleset", getattr(args, "ruleset", None))):
        if val:
            parts.append(f"{opt} {shlex.quote(val)}")
    parts.append(f"--examples {args.examples} --seed {args.seed} --max-states {args.max_states}")
    if args.differential:
        parts.append("--differential")
    if args.database:
        parts.append(f"--database {shlex.quote(args.database)}")
    again = "(same seed, same boards, same shrink)" if out.stopped is None else f"(same seed, same boards; it shrinks to the end, which {out.stopped} cut short)"
    prefix = reproduce_prefix(args)  # the real core's scripts overlay, when the run had one
    lines = ["to replay this failure:", "  " + prefix + " ".join(parts) + "   " + again]
    if cards_db:
        check = f"{prefix}bpcheck check {check_options(args)}{' --differential' if args.differential else ''} --max-states {args.max_states}"
    else:
        check = f"bpcheck check{' --engine ' + shlex.quote(args.engine) if args.engine else ''}{' --differential' if args.differential else ''} --max-states {args.max_states}"
    if out.board_file:
        lines.append(f"  {check} {shlex.quote(out.board_file)}")
    else:
        lines.append(f"  or save the board with --cex-dir DIR and run: {check} DIR/fuzz-{out.invariant}.toml")
    if args.database:
        lines.append(f"  (the board is kept in the example database {args.database} and is tried first next time)")
    return lines


def _list(names: Sequence[str], limit: int = 12) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _summary(args, out: FuzzOutcome, signalled: bool = False) -> tuple[list[str], str]:
    """The run's summary lines (before the failure, if any) and its verdict: fail, pass or
    inconclusive. Every board drawn is accounted for: explored (fully or up to --max-states),
    refused by the engine, or not drawn because the run stopped. A search a signal stopped is
    no pass (a --timeout's is, unless --strict: the time given was spent)."""
    st = out.stats
    lines = [
        f"fuzz: {plural(st.search_examples, 'board')} drawn, {plural(st.states, 'state', fmt=',')} explored"
        + (f", {plural(st.bound_hits, 'board')} hit --max-states {args.max_states}" if st.bound_hits else "")
        + (f", {plural(st.skipped, 'board')} refused by the engine" if st.skipped else "")
        + (f", {plural(st.known, 'board')} with known violations only (baseline {args.baseline})" if st.known else "")
    ]
    if out.stopped is not None:
        what = {"probe": "before any board was drawn", "search": "during the search", "shrink": "during the shrink"}.get(out.stopped_during or "", "after the search")
        lines.append(f"stopped: {out.stopped} {what}; the figures above are of what was finished before it")
    for note in out.notes:
        lines.append(f"note: {one_line(note)}")  # may quote an engine
    if out.invariant is not None:
        return lines, "fail"
    partial = []
    if st.bound_hits:
        partial.append(f"{st.bound_hits} of them only in part, up to --max-states {args.max_states} (raise it, or fuzz with fewer --cards)")
    if st.skipped:
        partial.append(f"{st.skipped} more boards drawn were refused by the engine (the first because {st.first_refusal})")
    if out.stopped is not None and out.stopped_during == "search":
        partial.append(f"{out.stopped} stopped the search after {st.search_examples} of the {args.examples} boards to draw")
    if st.explored == 0:
        verdict, head = "inconclusive", "INCONCLUSIVE  no board was explored"
    elif signalled:
        verdict, head = "inconclusive", f"INCONCLUSIVE  no invariant broken on the {plural(st.explored, 'board')} explored before {out.stopped}"
    elif partial and args.strict:
        verdict, head = "inconclusive", f"INCONCLUSIVE  no invariant broken on the {plural(st.explored, 'board')} explored, but with --strict a partial search is no pass"
    else:
        verdict, head = "pass", f"PASS  no invariant broken on the {plural(st.explored, 'board')} explored"
    lines.append("; ".join([head, *partial]))
    if st.not_evaluated:
        lines.append(
            "not evaluated on the boards explored (the engine does not observe what they read): "
            + ", ".join(f"{k} ({why})" for k, why in sorted(st.not_evaluated.items()))
        )
    return lines, verdict


def cmd_fuzz(args) -> int:
    sig = lifecycle.CURRENT  # the run's signal handlers (set by bpcheck.cli.main)

    invariants = _invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    engine_kw = {"call_timeout": getattr(args, "call_timeout", None)}
    if getattr(args, "cards_db", None):
        engine_kw["cards_db"] = args.cards_db  # ocgcore loads the drawn cards from it (make_engine)
    baseline = None
    try:
        check_cards_db(getattr(args, "cards_db", None))  # a missing or unreadable database: exit 2, before the engine
        _close(make_engine(args.engine, **engine_kw))
        if args.json:
            prepare_file(args.json, "--json")  # now, not after the run: a missing folder is exit 2, a stale result is removed
        if args.baseline:  # known, explained violations (explorers/baseline.py): they do not stop the search
            baseline = load_baseline(args.baseline)
        setup_cluster(args, args.engine, engine_kw)  # --cluster: Ray, every node able to run the engine
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    try:
        run = fuzz_run(args, invariants, engine_kw, baseline, sig)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    results, bounds = run.results, run.bounds
    verdict = _print_run(args, run, engine_name := args.engine or "reference", sig)
    if args.json:
        try:
            with sig.held():  # a second signal waits until the file is whole (issue 33)
                atomic_write_text(args.json, json.dumps(_json_doc(args, run, engine_name, verdict), indent=1) + "\n")
        except OSError as e:
            _err(InputError(args.json, "--json", f"cannot write the result: {e.strerror or e}"))
            return EXIT_BAD_INPUT
    args.strategy = "bfs"  # what emit_check_reports records
    emit_check_reports(args, results, [], engine_name, bounds)
    if sig.signum is not None:  # 128 + the signal's number, after the summary and --json (as check)
        return sig.exit_status
    return {"fail": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}.get(verdict, EXIT_OK)


def _print_run(args, run, engine_name: str, sig) -> str:
    """What `bpcheck fuzz` prints after the search; returns the verdict."""
    out, st, probed, first = run.out, run.out.stats, run.probed, run.first
    if run.db is not None:
        db = run.db
        left = f"; {db['left_out']} rows left out: alternate artworks, Tokens, pool names" if db.get("left_out") else ""
        print(
            f"cards: drawn from the card database {db['path']}: {db['cards']} cards{left}; each card drawn from "
            f"plain Normal Monsters ({db['plain_normal']}) 1 time in 6, Battle Phase effects ({db['battle']}) 3 in 6, fast effects or triggers ({db['fast']}) 1 in 6, every card 1 in 6"
        )
    elif probed is not None:
        print(
            f"cards: the engine refused {len(probed['refused'])} of the pool's {len(probed['played']) + len(probed['refused'])} cards offered alone on a board; "
            f"boards are drawn from the other {len(probed['played'])} (--cards NAMES to choose): {_list(probed['played'])}"
        )
    lines, verdict = _summary(args, out, signalled=sig.signum is not None)
    if run.db is not None and st.skipped:
        lines.insert(1, f"note: {st.skipped} of the {st.search_examples} boards drawn were refused by the engine and not explored (counted as refused, not as passed)"
                     + ("; the reference model refuses every board with a database card it does not model (all but plain Normal Monsters): --engine ocgcore plays them" if not args.engine or args.engine == "reference" or args.engine.startswith("mutant:") else ""))
    for line in lines:
        print(line)
    if out.invariant is not None:
        br = out.result
        print(
            f"FAIL  {engine_name} breaks {out.invariant} on board {st.first_failure_example} of the search; "
            + (f"shrunk in {st.shrink_examples} tries" if out.stopped is None else f"shrunk in {st.shrink_examples} tries until {out.stopped} stopped it" if out.stopped_during == "shrink" else "not shrunk")
            + f" from {board_size(out.found_doc)} cards to {board_size(out.doc)}"
        )
        print()
        print("minimal board:" if out.stopped is None else "smallest board found:")
        for line in board_toml({k: v for k, v in out.doc.items() if k != "card"}).splitlines():
            print("  " + line)
        print()
        if first is not None:
            print(counterexample_text(first))
            others = [c.invariant for c in (br.counterexamples if br is not None else []) if c is not first and getattr(c, "baselined", None) is None]
            if others:
                print(f"(this board also breaks: {', '.join(others)})")
            known = [c for c in (br.counterexamples if br is not None else []) if getattr(c, "baselined", None) is not None]
            for c in known:
                what = f"DIFF {c.key[0]} {c.key[1]}" if c.invariant == "DIFF" and c.key else c.invariant
                print(f"(known, baseline: {what}: {c.baselined})")
        else:
            print(f"{out.invariant}: {out.message} (at step {out.depth}; the trace is not shown: the run was stopped)")
        print()
        for line in _replay_hint(args, out):
            print(line)
        if args.cex_dir and br is not None:
            cdir = Path(args.cex_dir)
            for cex in br.counterexamples:
                name = f"fuzz-{out.invariant}.{cex.invariant}.json"
                (cdir / name).write_text(json.dumps({"bpcheck_counterexample": 1, **cex.to_dict(full=False)}, indent=1) + "\n")
            print(f"wrote {out.board_file} and {len(br.counterexamples)} counterexample file(s) to {cdir}")
        elif args.cex_dir:
            print(f"wrote {out.board_file}")
    return verdict


def _json_doc(args, run, engine_name: str, verdict: str) -> dict:
    """--json: the search, its verdict and the failure found (the shrunk board)."""
    out, st, probed, cards, bounds = run.out, run.out.stats, run.probed, run.cards, run.bounds
    doc = {
            "bpcheck_fuzz": 1,
            "engine": engine_name,
            "ruleset": getattr(args, "ruleset", None) or "tcg",
            "seed": args.seed,
            "examples": args.examples,
            "max_states": args.max_states,
            "differential": bool(args.differential),
            "cards": cards,
            "cards_db": run.db,
            "cards_refused": None if probed is None else dict(sorted(probed["refused"].items())),
            "baseline": args.baseline,
            "strict": bool(args.strict),
            "timeout": args.timeout,
            "verdict": verdict,
            "stopped": None if out.stopped is None else {"reason": out.stopped, "during": out.stopped_during},
            "stats": st.to_dict(timings=args.stats),
            "failure": None
            if out.invariant is None
            else {
                "invariant": out.invariant,
                "message": out.message,
                "length": out.depth,
                "board_file": out.board_file,
                "cards_before_shrinking": board_size(out.found_doc),
                "cards": board_size(out.doc),
                "shrunk": out.stopped is None,
                "board": out.doc,
            },
            "check": result_document(run.results, engine_name, "bfs", bounds, []),
        }
    return doc


def add_fuzz_parser(sub, positive) -> None:
    """The `bpcheck fuzz` subcommand (cli/main.py adds it)."""
    fz = sub.add_parser("fuzz", help="draw random boards (Hypothesis), check each one, and shrink a violation to a minimal board")

    fz.add_argument("--engine", metavar="ENGINE", help=engine_help())
    fz.add_argument("--call-timeout", type=positive(float), metavar="S", help="cmd: engines: seconds per call before a timeout fault")
    fz.add_argument("--invariants", metavar="IDS", help="comma-separated invariant IDs or family names (default: all)")
    fz.add_argument("--examples", type=positive(int), default=DEFAULT_EXAMPLES, metavar="N", help=f"boards to draw (default {DEFAULT_EXAMPLES})")
    fz.add_argument("--seed", type=int, default=0, metavar="S", help="the random seed (default 0): same seed, same boards")
    fz.add_argument(
        "--max-states",
        type=positive(int),
        default=DEFAULT_MAX_STATES,
        metavar="N",
        help=f"explore at most N states per board (default {DEFAULT_MAX_STATES})",
    )
    fz.add_argument(
        "--cards",
        metavar="NAMES",
        help="comma-separated card names to draw boards from (default: the cards the engine plays, each offered to it alone on a board first); with --cards-db, names or passcodes of the database",
    )
    fz.add_argument(
        "--cards-db",
        metavar="FILE",
        help="draw boards from every card of this card database (cards.cdb), weighted to cards whose profile has Battle Phase effects; "
        "boards name them by passcode, and the engine loads them from it (--engine ocgcore; the reference model refuses boards with cards it does not model)",
    )
    fz.add_argument("--differential", action="store_true", help="also compare the engine with the reference model in lockstep (DIFF)")
    fz.add_argument(
        "--baseline",
        metavar="FILE",
        help="known, explained violations and disagreements (TOML, docs/checking.md): they do not stop the search, on any drawn board",
    )
    fz.add_argument(
        "--timeout",
        type=positive(float),
        metavar="S",
        help="stop the whole run after S seconds, with the summary of what was done (a failure found is reported as far as it was shrunk)",
    )
    fz.add_argument(
        "--strict",
        action="store_true",
        help="a partial search is no pass: exit 3 when boards were explored only in part or refused, or --timeout ended the search",
    )
    fz.add_argument("--json", metavar="FILE", help="write the fuzz result as JSON (with the minimal board's check result)")
    fz.add_argument("--cex-dir", metavar="DIR", help="write the minimal board as TOML and its counterexamples as JSON")
    fz.add_argument("--database", metavar="DIR", help="keep failing boards in this Hypothesis example database and replay them first")
    fz.add_argument("--stats", action="store_true", help="also record timings in the JSON (not byte-for-byte deterministic)")

    add_jobs_argument(fz, "explore the search's boards")

    add_quiet_argument(fz)
    add_ruleset_argument(fz)
    add_report_arguments(fz)
    fz.set_defaults(fn=_run)


def _run(args) -> int:
    return cmd_fuzz(args)
