"""`bpcheck prove`: prove the invariants on symbolic boards for every value of their ranges
(docs/proving.md).

For every path of every board (bpcheck.explorers.symbolic), each invariant is proven for all
values or violated with a witness. A witness becomes a concrete board (TOML) and `bpcheck check`
is run on it with the same engine, so the counterexample printed is the concrete checker's own
shortest one: any engine can reproduce it. `--concretize DIR` writes one concrete board per
feasible numeric case (z3 picks the least values: boundaries first), for engines that cannot be
run symbolically (`cmd:`, ocgcore).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from bpcheck.engines import make_engine
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.errors import InputError
from bpcheck.explorers.run import check_board
from bpcheck.explorers.symbolic import Inconclusive, PathSolver, explore_symbolic, pc_text
from bpcheck.harness.check import report_error
from bpcheck.harness.feedback import run_progress
from bpcheck.model.board import load_board, parse_toml, read_text
from bpcheck.reports.text import counterexample_text, plural

# -- TOML out (boards only: tables, arrays, strings, integers, booleans) -----------------------


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }" if v else "{}"
    raise TypeError(f"cannot write {v!r} as TOML")


def _key(k: str) -> str:
    return k if k.replace("_", "a").replace("-", "a").isalnum() else json.dumps(k)


def to_toml(data: dict) -> str:
    lines = [f"{_key(k)} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append("")
            lines.append(f"[{_key(k)}]")
            lines.extend(f"{_key(kk)} = {_toml_value(vv)}" for kk, vv in v.items())
    return "\n".join(lines) + "\n"


def concrete_board(raw: dict, values: dict[str, int], note: str) -> dict:
    """The board's own dict with every range replaced by its value in `values`."""
    data = copy.deepcopy(raw)
    for n, side in enumerate(("p1", "p2"), 1):
        pd = data.get(side)
        if not isinstance(pd, dict):
            continue
        if isinstance(pd.get("lp"), dict):
            pd["lp"] = values[f"lp[P{n}]"]
        for m in pd.get("monsters", []):
            for key in ("atk", "def"):
                if isinstance(m.get(key), dict):
                    m[key] = values[f"{key}[{m['card']}]"]
    shown = ", ".join(f"{k} = {v}" for k, v in values.items())
    data["name"] = f"{raw.get('name', 'board')} [{shown}]"
    data["description"] = note
    return data


# -- words ------------------------------------------------------------------------------------


def ranges_text(board) -> str:
    rs = [r.describe() for r in board.symbols]
    if not rs:
        return "the board's own values (it has no range)"
    return "every " + (rs[0] if len(rs) == 1 else ", ".join(rs[:-1]) + " and " + rs[-1])


def _rules_of(cores: set[str]) -> list[str]:
    return sorted(c[len("rule ") :] for c in cores if c.startswith("rule "))


def board_words(res) -> list[str]:
    """What was proven, in sentences a rules engineer reads."""
    out = []
    cases = len(res.terminal_pcs)
    head = f"for {ranges_text(res.board)}, on all {res.paths} paths ({cases} numeric cases)"
    for inv in res.invariants:
        r = res.inv[inv.id]
        if r.inconclusive:
            out.append(f"{inv.id}: INCONCLUSIVE: {r.inconclusive}")
        elif r.violations:
            w = r.witness
            vals = ", ".join(f"{k} = {v}" for k, v in w.values.items())
            out.append(f"{inv.id}: VIOLATED for {vals or 'the board as given'}: {w.message}")
        elif r.checks:
            why = _rules_of(r.cores)
            out.append(
                f"{head}, {inv.id} holds ({r.checks} decisions): {inv.statement}"
                + (f" The proof rests on rules {', '.join(why)}." if why else "")
            )
    return out


def case_words(res) -> list[str]:
    out = []
    for k, pc in enumerate(res.terminal_pcs, 1):
        conds = pc_text(pc)
        out.append(f"case {k}: " + (" and ".join(conds) if conds else "any values (no number decides this path)"))
    return out


# -- the command --------------------------------------------------------------------------------


def _reproduce(board_path: Path, display: str, engine_spec: str | None, inv) -> Any:
    """Run `bpcheck check` on a witness board: its counterexample, or None if it holds there."""
    b = load_board(board_path, display)
    br = check_board(b, make_engine(engine_spec), [inv], "bfs", engine_name=engine_spec or "reference", progress=False)
    cex = [c for c in br.counterexamples if c.invariant == inv.id]
    return cex[0] if cex else None


@dataclass
class ProveOptions:
    """What `bpcheck prove` is given; the names are the command line's options."""

    engine: str | None = None
    invariants: str | None = None
    timeout: float | None = None
    max_states: int | None = None
    json: str | None = None
    report: str | None = None
    concretize: str | None = None
    stats: bool = False
    verbose: bool = False
    quiet: bool = False

    @classmethod
    def from_namespace(cls, ns: Any) -> "ProveOptions":
        return cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls) if hasattr(ns, f.name)})


@dataclass
class ProveOutcome:
    engine_name: str
    symbolic_engine: bool
    docs: list[dict]
    errors: list[dict]
    words: list[str]
    n: dict[str, int]


def prove(args: ProveOptions, files, invariants, symbolic_engine: bool, emit: Callable[[str], None] = print, error: Callable[[InputError], None] | None = None) -> ProveOutcome:
    """Prove ``invariants`` on the symbolic boards ``files`` (or, for an engine that cannot run
    symbolically, write their numeric cases as concrete boards: ``--concretize``); each board's
    verdict lines go to ``emit`` as they are known."""
    error = error or report_error
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
    progress = run_progress(args, "prove", total=len(files))
    try:
        for path, display in files:
            try:
                board = load_board(path, display, symbolic=True, ruleset=getattr(args, "ruleset", None))
                raw = parse_toml(read_text(path, display), display)
            except InputError as e:
                error(e)
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
                emit(f"CONCRETIZED  {display}: {plural(len(written), 'board')}, one per numeric case, in {conc}")
                for line in case_words(res):
                    emit(f"             {line}")
                if not symbolic_engine:
                    docs.append(doc)
                    progress.finish(task)
                    continue
            verdict = res.status
            emit(
                f"{verdict.upper():12} {display}: {plural(res.states, 'state')}, {plural(res.paths, 'path')}, {plural(len(res.terminal_pcs), 'numeric case')}"
                + (f", {res.solver.queries} solver queries, {res.elapsed:.2f} s" if args.stats else "")
            )
            if res.inconclusive:
                emit(f"             inconclusive: {res.inconclusive}")
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
                    with tempfile.TemporaryDirectory() as tmp:
                        tpath = Path(tmp) / wname
                        tpath.write_text(text, encoding="utf-8")
                        try:
                            cex = _reproduce(wpath or tpath, str(wpath or wname), args.engine, inv)
                        except InputError as e:
                            cex = None
                            error(e)
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
                    emit(f"             {inv.id} VIOLATED for {vals}: {w.message}")
                    if cex is not None:
                        if wpath:
                            (report / f"{stem}.{inv.id}.cex.json").write_text(
                                json.dumps({"bpcheck_counterexample": 1, **cex.to_dict(full=False)}, indent=1) + "\n"
                            )
                        emit("")
                        emit(counterexample_text(cex))
                        emit("")
                    else:
                        emit("             (bpcheck check does NOT reproduce it on the witness board: a bug in prove; inconclusive)")
                        verdict = "inconclusive" if verdict != "violated" else verdict
                        row["verdict"] = "inconclusive"
                    if not report:
                        emit("             the witness board (write it with --report DIR):\n" + "\n".join("               " + l for l in text.splitlines()))
                doc["invariants"].append(row)
            if args.verbose:
                for line in board_words(res) + case_words(res):
                    emit(f"             {line}")
            words.append(f"## {display}\n")
            words.extend(f"- {line}" for line in board_words(res) + case_words(res))
            words.append("")
            doc["verdict"] = verdict
            n[verdict] = n.get(verdict, 0) + 1
            docs.append(doc)
            progress.finish(task, failed=verdict == "violated")
    finally:
        progress.close()
    return ProveOutcome(engine_name, symbolic_engine, docs, errors, words, n)
