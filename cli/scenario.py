"""`bpcheck scenario`: run scenario files on an engine and print each verdict (the format, the matcher
and the runner: :mod:`bpcheck.harness.scenarios`)."""

from __future__ import annotations

from bpcheck.harness.check import boards_cards_db, check_cards_db
from bpcheck.harness.scenarios import _close, load_scenario, run_scenario, scenario_files
import sys
from typing import Any
from bpcheck.errors import InputError
from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK
from bpcheck.reports.safe import one_line as _line  # what an engine said, on one line


def cmd_scenario(args: Any) -> int:
    """Run scenario files against ``--engine`` (docs/scenarios.md). Exit 0 all passed (skipped
    scenarios do not fail the run unless ``--strict``), 1 some failed, 2 bad input."""
    import json

    from bpcheck.engines import make_engine

    def err(e: InputError) -> None:
        print(_line(f"bpcheck: error: {e.render()}"), file=sys.stderr)

    spec = getattr(args, "engine", None) or "reference"
    try:
        files = scenario_files(args.paths)
        if getattr(args, "json", None):  # checked before the run: a folder that is not there is exit 2 now
            from bpcheck.reports.outputs import prepare_file

            prepare_file(args.json, "--json", inputs=tuple(p for p, _d in files))
        cards_db = getattr(args, "cards_db", None)
        check_cards_db(cards_db)
        boards_db = boards_cards_db(spec, cards_db)  # the cards a board may name besides the pool's
        spare = [make_engine(spec, cards_db=cards_db)]  # a bad --engine is bad input before anything runs
    except InputError as e:
        err(e)
        return EXIT_BAD_INPUT
    passed = failed = skipped = bad = 0
    out: list[dict] = []
    from bpcheck.harness.feedback import run_progress  # progress on stderr while a long run goes on (cli/feedback.py)

    progress = run_progress(args, "scenario", total=len(files), unit="files")
    try:
        for path, display in files:
            engine = None
            task = progress.start(display.rsplit("/", 1)[-1])
            try:
                sc = load_scenario(path, display, cards_db=boards_db)
                engine = spare.pop() if spare else make_engine(spec, cards_db=cards_db)
                res = run_scenario(sc, engine)
            except InputError as e:
                err(e)
                bad += 1
                out.append({"path": display, "status": "bad_input", "error": e.render()})
                progress.finish(task, failed=True)
                continue
            finally:
                if engine is not None:
                    _close(engine)
            progress.finish(task, failed=res.status == "fail")
            if res.status == "pass":
                passed += 1
                if not args.quiet:
                    print(f"PASS  {display}  {res.name}")
            elif res.status == "skipped":
                skipped += 1
                print(f"SKIP  {display}  {res.name}: {_line(res.reason)}")
            else:
                failed += 1
                print(f"FAIL  {display}  {res.name}")
                for f in res.failures:
                    print(f"      {_line(f)}")  # what the engine did, quoted: on one line
                for c in res.context:
                    print(f"        {_line(c)}")
            for n in res.not_judged:
                print(f"      note: {_line(n)}")
            out.append(
                {
                    "path": display,
                    "name": res.name,
                    "status": res.status,
                    "rules": list(res.rules),
                    "steps_run": res.steps_run,
                    "failures": res.failures,
                    "context": res.context,
                    "not_judged": res.not_judged,
                    **({"reason": res.reason} if res.status == "skipped" else {}),
                }
            )
    finally:
        progress.close()
    for engine in spare:
        _close(engine)
    summary = f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "") + (f", {bad} bad input" if bad else "")
    print(f"scenarios: {summary} ({len(files)} files, engine {spec})")
    if getattr(args, "json", None):
        doc = {"engine": spec, "scenarios": out, "passed": passed, "failed": failed, "skipped": skipped, "bad_input": bad}
        from bpcheck.reports.outputs import atomic_write_text

        try:
            atomic_write_text(args.json, json.dumps(doc, indent=2) + "\n")
        except OSError as e:
            err(InputError(args.json, "--json", f"cannot write the results: {e.strerror or e}"))
            return EXIT_BAD_INPUT
    if bad:
        return EXIT_BAD_INPUT
    if failed or (skipped and getattr(args, "strict", False)):
        return EXIT_FAIL
    return EXIT_OK
