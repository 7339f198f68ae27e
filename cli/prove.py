"""`bpcheck prove`: its arguments, what it prints and its exit status (the proof: :mod:`bpcheck.explorers.symbolic`;
concrete boards: :mod:`bpcheck.harness.prove`)."""

from __future__ import annotations

from bpcheck.harness.prove import _reproduce, board_words, case_words, concrete_board, to_toml
import json
import sys
from pathlib import Path
from typing import Any
from bpcheck.errors import InputError
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK


def _err(e: InputError) -> None:
    print(f"bpcheck: error: {e.render()}", file=sys.stderr)


def cmd_prove(args) -> int:
    from bpcheck.engines import make_engine
    from bpcheck.engines.reference import ReferenceEngine
    from bpcheck.explorers.symbolic import explore_symbolic, pc_text
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board, parse_toml, read_text
    from bpcheck.reports.text import counterexample_text
    from bpcheck.harness.scenarios import scenario_files

    try:
        invariants = select(args.invariants)
    except KeyError as e:
        _err(InputError("--invariants", "", f"unknown invariant or family {e.args[0]!r} (see `bpcheck invariants`)"))
        return EXIT_BAD_INPUT
    try:
        files = scenario_files(args.paths)
        engine = make_engine(args.engine)
        if args.json:  # checked before the proofs: a folder that is not there is exit 2 now
            from bpcheck.reports.outputs import prepare_file

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
    engine_name = args.engine or "reference"
    report = Path(args.report) if args.report else None
    if report:
        report.mkdir(parents=True, exist_ok=True)
    conc = Path(args.concretize) if args.concretize else None
    if conc:
        conc.mkdir(parents=True, exist_ok=True)
    docs: list[dict] = []
    errors: list[dict] = []
    words: list[str] = []
    n = {"proven": 0, "violated": 0, "inconclusive": 0}
    from bpcheck.harness.feedback import run_progress

    progress = run_progress(args, "prove", total=len(files))
    try:
        for path, display in files:
            try:
                board = load_board(path, display, symbolic=True)
                raw = parse_toml(read_text(path, display), display)
            except InputError as e:
                _err(e)
                errors.append({"file": e.file, "field": e.field, "problem": e.problem})
                progress.finish(progress.start(display))
                continue
            # The numeric cases are the reference rules' cases; --concretize alone needs no engine.
            eng = make_engine(args.engine) if symbolic_engine else ReferenceEngine()
            task = progress.start(display.rsplit("/", 1)[-1])
            res = explore_symbolic(eng, board, invariants, engine_name if symbolic_engine else "reference", args.timeout, args.max_states, task)
            stem = Path(display).stem
            doc: dict[str, Any] = {
                "board": display,
                "name": board.name,
                "ranges": [{"name": r.name, "label": r.label, "field": r.field, "min": r.min, "max": r.max, "step": r.step} for r in board.symbols],
                "verdict": res.status if symbolic_engine else "concretized",
                "states": res.states,
                "transitions": res.transitions,
                "paths": res.paths,
                "numeric_cases": [pc_text(pc) for pc in res.terminal_pcs],
                "inconclusive": res.inconclusive,
                "invariants": [],
            }
            if args.stats:
                doc["elapsed_s"] = round(res.elapsed, 3)
                doc["solver"] = {"queries": res.solver.queries, "seconds": round(res.solver.seconds, 3), "cache_hits": res.solver.cache_hits}
            if conc:
                from bpcheck.explorers.symbolic import Inconclusive, PathSolver

                solver = PathSolver(board.symbols, args.timeout)
                written = []
                for k, pc in enumerate(res.terminal_pcs, 1):
                    try:
                        values = solver.least_model(pc)
                    except Inconclusive as e:
                        doc["inconclusive"] = doc["inconclusive"] or str(e)
                        continue
                    note = f"numeric case {k} of {display}: " + (" and ".join(pc_text(pc)) or "any values")
                    out = conc / f"{stem}.case-{k:02d}.toml"
                    out.write_text(to_toml(concrete_board(raw, values, note)), encoding="utf-8")
                    written.append(str(out))
                doc["concretized"] = written
                print(f"CONCRETIZED  {display}: {len(written)} boards, one per numeric case, in {conc}")
                for line in case_words(res):
                    print(f"             {line}")
                if not symbolic_engine:
                    docs.append(doc)
                    progress.finish(task)
                    continue
            verdict = res.status
            print(
                f"{verdict.upper():12} {display}: {res.states} states, {res.paths} paths, {len(res.terminal_pcs)} numeric cases"
                + (f", {res.solver.queries} solver queries, {res.elapsed:.2f} s" if args.stats else "")
            )
            if res.inconclusive:
                print(f"             inconclusive: {res.inconclusive}")
            for inv in invariants:
                r = res.inv[inv.id]
                row: dict[str, Any] = {
                    "id": inv.id,
                    "statement": inv.statement,
                    "rules": list(inv.rules),
                    "decisions": r.checks,
                    "verdict": "inconclusive" if r.inconclusive else ("violated" if r.violations else ("proven" if r.checks else "vacuous")),
                    "proof_rests_on": sorted(r.cores),
                }
                if r.inconclusive:
                    row["reason"] = r.inconclusive
                if r.witness is not None:
                    w = r.witness
                    wname = f"{stem}.{inv.id}.witness.toml"
                    note = f"witness of {inv.id} from {display} ({engine_name}): {w.message}"
                    text = to_toml(concrete_board(raw, w.values, note))
                    wpath = (report / wname) if report else None
                    if wpath:
                        wpath.write_text(text, encoding="utf-8")
                    import tempfile

                    with tempfile.TemporaryDirectory() as tmp:
                        tpath = Path(tmp) / wname
                        tpath.write_text(text, encoding="utf-8")
                        try:
                            cex = _reproduce(wpath or tpath, str(wpath or wname), args.engine, inv)
                        except InputError as e:
                            cex = None
                            _err(e)
                    row["witness"] = {
                        "values": w.values,
                        "message": w.message,
                        "path_condition": w.pc,
                        "symbolic_trace": w.labels,
                        "board": str(wpath) if wpath else None,
                        "reproduced_by_check": cex is not None,
                        "counterexample": cex.to_dict(full=False) if cex else None,
                    }
                    vals = ", ".join(f"{k} = {v}" for k, v in w.values.items())
                    print(f"             {inv.id} VIOLATED for {vals}: {w.message}")
                    if cex is not None:
                        if wpath:
                            (report / f"{stem}.{inv.id}.cex.json").write_text(
                                json.dumps({"bpcheck_counterexample": 1, **cex.to_dict(full=False)}, indent=1) + "\n"
                            )
                        print()
                        print(counterexample_text(cex))
                        print()
                    else:
                        print("             (bpcheck check does NOT reproduce it on the witness board: a bug in prove; inconclusive)")
                        verdict = "inconclusive" if verdict != "violated" else verdict
                        row["verdict"] = "inconclusive"
                    if not report:
                        print("             the witness board (write it with --report DIR):\n" + "\n".join("               " + l for l in text.splitlines()))
                doc["invariants"].append(row)
            if args.verbose:
                for line in board_words(res) + case_words(res):
                    print(f"             {line}")
            words.append(f"## {display}\n")
            words.extend(f"- {line}" for line in board_words(res) + case_words(res))
            words.append("")
            doc["verdict"] = verdict
            n[verdict] = n.get(verdict, 0) + 1
            docs.append(doc)
            progress.finish(task, failed=verdict == "violated")
    finally:
        progress.close()
    print(
        f"prove: {n['proven']} proven, {n['violated']} violated, {n['inconclusive']} inconclusive"
        + (f", {len(errors)} bad input" if errors else "")
        + f" ({len(files)} boards, {len(invariants)} invariants, engine {engine_name})"
    )
    result = {"engine": engine_name, "boards": docs, "errors": errors}
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
    from bpcheck.engines.registry import engine_help

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
    from bpcheck.cli.args import add_quiet_argument

    add_quiet_argument(pv)
    pv.set_defaults(fn=cmd_prove)
