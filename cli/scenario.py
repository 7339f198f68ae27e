"""`bpcheck scenario`: run scenario files on an engine and print each verdict (the format, the matcher
and the runner: :mod:`bpcheck.harness.scenarios`)."""

from __future__ import annotations

import json
from typing import Any

from bpcheck.cli.args import error as _err
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK
from bpcheck.engines import make_engine
from bpcheck.errors import InputError
from bpcheck.harness.boards import boards_cards_db, check_cards_db
from bpcheck.harness.feedback import run_progress
from bpcheck.harness.scenarios import run_scenario_files, scenario_files
from bpcheck.model.rulesets import DEFAULT_RULESET
from bpcheck.reports.outputs import atomic_write_text, prepare_file
from bpcheck.reports.safe import one_line as _line  # what an engine said, on one line
from bpcheck.reports.text import plural


def cmd_scenario(args: Any) -> int:
    """Run scenario files against ``--engine`` (docs/scenarios.md). Exit 0 every scenario given
    was run and passed, 1 some failed (with ``--strict`` also a scenario the engine refused), 2 bad
    input, 3 the engine refused some (skipped: not checked; ``--allow-skips`` lets them keep a pass)."""
    spec = getattr(args, "engine", None) or "reference"
    try:
        files = scenario_files(args.paths)
        if getattr(args, "json", None):  # checked before the run: a folder that is not there is exit 2 now
            prepare_file(args.json, "--json", inputs=tuple(p for p, _d in files))
        cards_db = getattr(args, "cards_db", None)
        check_cards_db(cards_db)
        boards_db = boards_cards_db(spec, cards_db)  # the cards a board may name besides the pool's
        spare = make_engine(spec, cards_db=cards_db)  # a bad --engine is bad input before anything runs
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    n = {"pass": 0, "fail": 0, "skipped": 0, "bad_input": 0}
    out: list[dict] = []
    progress = run_progress(args, "scenario", total=len(files), unit="files")  # stderr while a long run goes on
    for display, res, e in run_scenario_files(files, spec, spare, progress, cards_db, boards_db, getattr(args, "ruleset", None)):
        if e is not None:
            _err(e)
            n["bad_input"] += 1
            out.append({"path": display, "status": "bad_input", "error": e.render()})
            continue
        n[res.status] += 1
        for line in result_lines(display, res, args.quiet):
            print(line)
        out.append(result_doc(display, res))
    passed, failed, skipped, bad = n["pass"], n["fail"], n["skipped"], n["bad_input"]
    summary = f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "") + (f", {bad} bad input" if bad else "")
    rulesets = sorted({d["ruleset"] for d in out if "ruleset" in d}) or [getattr(args, "ruleset", None) or DEFAULT_RULESET]
    print(f"scenarios: {summary} ({plural(len(files), 'file')}, engine {spec}, ruleset {', '.join(rulesets)})")
    strict = getattr(args, "strict", False)
    allow = getattr(args, "allow_skips", False) and not strict  # --strict wins over [tool.bpcheck] allow_skips
    if skipped and not allow:  # skipped is not passed: named (the SKIP lines above say why)
        names = ", ".join(d["path"] for d in out if d.get("status") == "skipped")
        print(f"not checked: the engine refused {skipped} scenario{'s' if skipped != 1 else ''} "
              + ("(--strict: a failure, exit 1): " if strict else "(exit 3; --allow-skips accepts them): ") + names)
    if getattr(args, "json", None):
        doc = {"engine": spec, "ruleset": getattr(args, "ruleset", None) or DEFAULT_RULESET, "scenarios": out, "passed": passed, "failed": failed, "skipped": skipped, "bad_input": bad}
        try:
            atomic_write_text(args.json, json.dumps(doc, indent=2) + "\n")
        except OSError as e:
            _err(InputError(args.json, "--json", f"cannot write the results: {e.strerror or e}"))
            return EXIT_BAD_INPUT
    if bad:
        return EXIT_BAD_INPUT
    if failed or (skipped and strict):
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if skipped and not allow else EXIT_OK


def result_lines(display: str, res: Any, quiet: bool) -> list[str]:
    """A scenario's verdict as printed: PASS (not with -q), SKIP with why, FAIL with what the
    engine did (quoted, on one line each), and the notes on what was not judged."""
    if res.status == "pass":
        lines = [] if quiet else [f"PASS  {display}  {res.name}"]
    elif res.status == "skipped":
        lines = [f"SKIP  {display}  {res.name}: {_line(res.reason)}"]
    else:
        lines = [f"FAIL  {display}  {res.name}", *(f"      {_line(f)}" for f in res.failures), *(f"        {_line(c)}" for c in res.context)]
    return lines + [f"      note: {_line(n)}" for n in res.not_judged]


def result_doc(display: str, res: Any) -> dict:
    """A scenario's entry in --json."""
    return {
        "path": display,
        "name": res.name,
        "status": res.status,
        "ruleset": res.ruleset,
        "rules": list(res.rules),
        "steps_run": res.steps_run,
        "failures": res.failures,
        "context": res.context,
        "not_judged": res.not_judged,
        **({"reason": res.reason} if res.status == "skipped" else {}),
    }
