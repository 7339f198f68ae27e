"""`bpcheck prove`: its arguments, what it prints and its exit status (the proof: :mod:`bpcheck.explorers.symbolic`;
concrete boards: :mod:`bpcheck.harness.prove`)."""

from __future__ import annotations

import json
from pathlib import Path

from bpcheck.cli.args import add_quiet_argument, add_ruleset_argument
from bpcheck.cli.args import error as _err
from bpcheck.cli.args import invariants as _invariants
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK
from bpcheck.engines import make_engine
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.engines.registry import engine_help
from bpcheck.errors import InputError
from bpcheck.harness.prove import ProveOptions, prove
from bpcheck.harness.scenarios import scenario_files
from bpcheck.reports.outputs import prepare_file
from bpcheck.reports.text import plural


def cmd_prove(args) -> int:
    invariants = _invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    try:
        files = scenario_files(args.paths)
        engine = make_engine(args.engine)
        if args.json:  # checked before the proofs: a folder that is not there is exit 2 now
            prepare_file(args.json, "--json", inputs=tuple(p for p, _d in files))
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    symbolic_engine = isinstance(engine, ReferenceEngine)
    if not symbolic_engine and not args.concretize:
        _err(
            InputError(
                "--engine",
                "",
                f"{args.engine!r} cannot run on symbolic numbers: prove runs the reference model and engines built on its rules "
                "(mutant:NAME, a Rules subclass); for any other engine write the numeric cases with `bpcheck prove --concretize DIR` "
                "and run `bpcheck check --engine ... DIR`",
            )
        )
        return EXIT_BAD_INPUT
    out = prove(ProveOptions.from_namespace(args), files, invariants, symbolic_engine)
    n, errors, docs, words, engine_name = out.n, out.errors, out.docs, out.words, out.engine_name
    report = Path(args.report) if args.report else None
    print(
        f"prove: {n['proven']} proven, {n['violated']} violated, {n['inconclusive']} inconclusive"
        + (f", {len(errors)} bad input" if errors else "")
        + f" ({plural(len(files), 'board')}, {plural(len(invariants), 'invariant')}, engine {engine_name}"
        + (f", ruleset {args.ruleset}" if getattr(args, "ruleset", None) else "")  # --ruleset: boards naming none (docs/rulesets.md)
        + ")"
    )
    result = {"engine": engine_name, "ruleset": getattr(args, "ruleset", None) or "tcg", "boards": docs, "errors": errors}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if report:
        (report / "prove.md").write_text(f"# bpcheck prove ({engine_name})\n\n" + "\n".join(words) + "\n", encoding="utf-8")
    if errors:
        return EXIT_BAD_INPUT
    if not symbolic_engine:
        return EXIT_OK
    if n["violated"]:
        return EXIT_FAIL
    if n["inconclusive"]:
        return EXIT_INCONCLUSIVE
    return EXIT_OK


def add_prove_parser(sub, positive) -> None:
    pv = sub.add_parser("prove", help="prove the invariants on symbolic boards for every value of their ranges (docs/proving.md)")
    pv.add_argument("paths", nargs="+", metavar="PATH", help="board files or folders (boards with ranges: docs/boards.md)")

    pv.add_argument(
        "--engine",
        metavar="ENGINE",
        help=engine_help("the engine (on symbolic numbers only the reference model's rules run: reference, mutant:NAME or a Rules subclass; any engine with --concretize)"),
    )
    pv.add_argument("--invariants", metavar="IDS", help="comma-separated invariant IDs or family names (default: all)")
    pv.add_argument("--timeout", type=positive(float), default=10.0, metavar="S", help="seconds per solver query (default 10); a timeout is inconclusive")
    pv.add_argument("--max-states", type=positive(int), metavar="N", help="stop after N states per board (inconclusive)")
    pv.add_argument("--json", metavar="FILE", help="write the results as JSON")
    pv.add_argument("--report", metavar="DIR", help="write prove.md (what was proven, in words), witness boards and counterexamples")
    pv.add_argument("--concretize", metavar="DIR", help="write one concrete board per feasible numeric case (least values first)")
    pv.add_argument("--stats", action="store_true", help="also print and record timings and solver queries (not deterministic)")
    pv.add_argument("-v", "--verbose", action="store_true", help="print what was proven, in words, and every numeric case")

    add_quiet_argument(pv)
    add_ruleset_argument(pv)
    pv.set_defaults(fn=cmd_prove)
