"""JUnit XML: one test suite per board (and engine), one test case per invariant.

* held -> a passing case (``system-out`` says how often its situation arose);
* vacuous (its situation never arose on the board) -> a passing case with the property
  ``vacuous`` (nothing broke it; a green run is not a wall of skips);
* violated -> ``<failure>`` with the violation as the message and the counterexample's trace
  (the text report) as the body, and the property ``root_cause`` (its group's number,
  reports/groups.py); violated only by known disagreements of a baseline -> a passing case with
  the property ``known`` giving the baseline's reason;
* "held so far" (a bound was hit), "not checked", "not judged" (card data the invariant cannot
  classify) and "not evaluated" (the engine does not observe what it reads) -> ``<skipped>``
  with the reason: none of them is a pass;
* each reachability goal of the board is a case too (``reachable: ID``), failing when the goal
  cannot be reached; a board that could not be read is a suite with one ``<error>`` case;
* a board the engine refused is one case ``board``: an ``<error>`` of type ``refused`` with the
  engine's reason (nothing was checked: `check` exits 3), or with ``--allow-skips`` a ``<skipped>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from bpcheck.reports.groups import group_runs
from bpcheck.reports.runs import Run
from bpcheck.reports.safe import xml_safe, xml_safe_tree
from bpcheck.reports.text import counterexample_text

_xml_safe_tree = xml_safe_tree  # every text and attribute, at the document's boundary (reports/safe.py)


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", {"classname": classname, "name": name})


def _properties(case: ET.Element, items: list[tuple[str, str]]) -> None:
    props = ET.SubElement(case, "properties")
    for k, v in items:
        ET.SubElement(props, "property", {"name": k, "value": v})


def junit_xml(runs: list[Run], errors: list[dict] = (), name: str = "bpcheck", timings: bool = False) -> str:
    root = ET.Element("testsuites", {"name": name})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    several = len({r.engine for r in runs}) > 1
    group_of = {(m.run_index, m.cex_index): g.number for g in group_runs(runs) for m in g.members}
    for ri, run in enumerate(runs):
        r = run.explore
        suite_name = f"{run.engine}: {run.board}" if several else run.board
        suite = ET.Element("testsuite", {"name": suite_name})
        props = ET.SubElement(suite, "properties")
        for k, v in (
            ("engine", run.engine),
            ("board", run.board),
            ("verdict", r.status),
            ("states", r.states),
            ("transitions", r.transitions),
            ("max_depth", r.max_depth),
            ("bound_hit", r.bound_hit or ""),
        ):
            ET.SubElement(props, "property", {"name": k, "value": str(v)})
        if run.not_compared:  # protocol v2: what the engine does not observe is never compared
            ET.SubElement(props, "property", {"name": "not_compared", "value": ", ".join(run.not_compared)})
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        new_of: dict[str, list] = {}
        known_of: dict[str, list] = {}
        for ci, c in enumerate(run.counterexamples):
            (known_of if getattr(c, "baselined", None) is not None else new_of).setdefault(c.invariant, []).append((ci, c))
        left = getattr(run.result, "left_out", 0)
        classname = run.board if not several else f"{run.engine}.{run.board}"
        if run.skip_reason is not None and run.skips_fail:  # refused, and a skip is not a pass: an error case says why
            case = _case(suite, classname, "board")
            err = ET.SubElement(case, "error", {"message": f"not checked: the engine refused this board: {run.skip_reason}", "type": "refused"})
            err.text = "The engine refused this board, so nothing was checked on it: the run is inconclusive (exit 3). --allow-skips makes a refused board a skipped case."
            counts["tests"] += 1
            counts["errors"] += 1
        elif run.skip_reason is not None:  # --allow-skips: the engine refused the board, one skipped case says why
            case = _case(suite, classname, "board")
            ET.SubElement(case, "skipped", {"message": f"skipped: the engine refused this board: {run.skip_reason}"})
            counts["tests"] += 1
            counts["skipped"] += 1
        for row in (run.rows() if run.skip_reason is None else []):
            case = _case(suite, classname, row["id"])
            counts["tests"] += 1
            verdict = row["verdict"]
            new, known = new_of.get(row["id"], []), known_of.get(row["id"], [])
            if verdict == "violated" and known and not new:  # every violation is a known one: not a failure
                _properties(case, [("known", getattr(c, "baselined", "")) for _ci, c in known])
                out = ET.SubElement(case, "system-out")
                out.text = f"known disagreement (baseline), {len(known)} counterexample{'s' if len(known) != 1 else ''}; checked {row['checked']} times"
            elif verdict == "violated":
                counts["failures"] += 1
                if new:
                    _properties(case, [("root_cause", f"#{group_of[(ri, ci)]}") for ci, _c in new if (ri, ci) in group_of])
                    msg = new[0][1].message + (f" (and {len(new) - 1} more)" if len(new) > 1 else "")
                    body = "\n\n".join(counterexample_text(c) for _ci, c in new)
                else:  # its counterexample was left out of the outputs (--max-counterexamples)
                    msg = f"violated {row['violations']} times"
                    body = msg + (f" (its counterexample is one of the {left} that --max-counterexamples left out)" if left else "")
                f = ET.SubElement(case, "failure", {"message": msg, "type": row["id"]})
                f.text = body
            elif verdict == "not judged":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", {"message": "not judged: " + "; ".join(row.get("not_judged", []))})
            elif verdict == "not evaluated":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", {"message": "not evaluated: " + str(row.get("reason", ""))})
            elif verdict == "vacuous":  # nothing broke it: a pass, marked, not a skip (a green run is green)
                _properties(case, [("vacuous", "its situation never arose on this board")])
                out = ET.SubElement(case, "system-out")
                out.text = "vacuous: its situation never arose on this board"
            elif verdict == "held so far":
                counts["skipped"] += 1
                ET.SubElement(
                    case,
                    "skipped",
                    {"message": f"inconclusive: held on the {r.states} states explored before the bound ({r.bound_hit}) was hit"},
                )
            elif verdict == "not checked":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", {"message": "not checked: the exploration was not exhaustive"})
            else:
                out = ET.SubElement(case, "system-out")
                out.text = f"{verdict}; checked {row['checked']} times"
        for g in (run.goals() if run.skip_reason is None else []):
            case = _case(suite, classname, f"reachable: {g['id']}")
            counts["tests"] += 1
            desc = f" ({g['description']})" if g.get("description") else ""
            if not g["reached"] and r.bound_hit:  # inconclusive: not reached within the bound, not "unreachable"
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", {"message": f"inconclusive: goal {g['id']!r} was not reached within the bound ({r.bound_hit}){desc}"})
            elif not g["reached"]:
                counts["failures"] += 1
                ET.SubElement(case, "failure", {"message": f"goal {g['id']!r} is not reachable from the board{desc}", "type": "reachable"})
            else:
                out = ET.SubElement(case, "system-out")
                out.text = "witness: " + " -> ".join(g["witness"] or [])
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        if timings:
            suite.set("time", f"{r.elapsed:.3f}")
        root.append(suite)
    for e in errors:
        suite = ET.SubElement(root, "testsuite", {"name": e["file"], "tests": "1", "failures": "0", "errors": "1", "skipped": "0"})
        case = _case(suite, e["file"], "load")
        err = ET.SubElement(case, "error", {"message": f"{e['field']}: {e['problem']}" if e.get("field") else e["problem"], "type": "InputError"})
        err.text = f"{e['file']}: {e.get('field', '')}: {e['problem']}"
        totals["tests"] += 1
        totals["errors"] += 1
    for k, v in totals.items():
        root.set(k, str(v))
    _xml_safe_tree(root)
    ET.indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


__all__ = ["junit_xml", "xml_safe"]
