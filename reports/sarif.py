"""SARIF 2.1.0 (OASIS): one result per counterexample, for code-scanning tools.

``ruleId`` is the invariant's ID (the rules list every invariant checked, with its statement and
the rules it enforces); the location is the board file; the trace is a ``codeFlow`` whose thread
flow has one location per step (the board file again, with the step's action as the message).
An unreachable goal is a result of the rule ``reachable``; a board that could not be read and a
bound that was hit are tool notifications of the invocation. One run per engine.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePath
from urllib.parse import quote

from bpcheck import __version__
from bpcheck.reports.board import player_of
from bpcheck.reports.groups import group_runs
from bpcheck.reports.runs import Run
from bpcheck.reports.safe import json_text, visible_tree

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
GOAL_RULE = "reachable"


def file_uri(path: str) -> str:
    p = PurePath(path)
    # a file name that is not UTF-8 (a lone surrogate in Python's str) keeps its own bytes
    if p.is_absolute():
        return "file://" + quote(p.as_posix(), errors="surrogateescape")
    return quote(p.as_posix(), errors="surrogateescape")


def _location(board: str, index: int, message: str | None = None) -> dict:
    loc: dict = {"physicalLocation": {"artifactLocation": {"uri": file_uri(board), "index": index}, "region": {"startLine": 1}}}
    if message is not None:
        loc["message"] = {"text": message}
    return loc


def _rule(row: dict) -> dict:
    rules = list(row.get("rules") or [])
    full = row["statement"] + (f" Rules: {', '.join(rules)} (docs/rules.md)." if rules else "")
    return {
        "id": row["id"],
        "name": row["id"],
        "shortDescription": {"text": row["statement"] or row["id"]},
        "fullDescription": {"text": full or row["id"]},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": [row.get("family", "structural")], "kind": row.get("kind", ""), "rules": rules},
    }


def sarif_document(runs: list[Run], errors: list[dict] = ()) -> dict:
    root_cause = {(id(m.run), m.cex_index): g.number for g in group_runs(runs) for m in g.members}
    by_engine: dict[str, list[Run]] = {}
    for run in runs:
        by_engine.setdefault(run.engine, []).append(run)
    if not by_engine:
        by_engine["reference"] = []
    out_runs = []
    for ei, (engine, eruns) in enumerate(by_engine.items()):
        rules: dict[str, dict] = {}
        for run in eruns:
            for row in run.rows():
                rules.setdefault(row["id"], _rule(row))
        if any(run.goals() for run in eruns):
            rules.setdefault(
                GOAL_RULE,
                _rule({"id": GOAL_RULE, "statement": "Every goal a board declares under [[reachable]] is reachable from it.", "rules": [], "family": "goals"}),
            )
        rule_ids = sorted(rules)
        rule_index = {rid: k for k, rid in enumerate(rule_ids)}
        artifacts: list[dict] = []
        art_index: dict[str, int] = {}

        def art(board: str) -> int:
            if board not in art_index:
                art_index[board] = len(artifacts)
                artifacts.append({"location": {"uri": file_uri(board)}, "roles": ["analysisTarget"]})
            return art_index[board]

        results = []
        notes = []
        for run in eruns:
            ai = art(run.board)
            for ci, cex in enumerate(run.counterexamples):
                steps = [
                    {
                        "location": _location(
                            run.board, ai, f"{s.index}. {player_of(s.player)}: {s.action.get('label', '?')}"
                        ),
                        "executionOrder": s.index,
                        "properties": {"events": [e.get("kind") for e in s.events]},
                    }
                    for s in cex.steps
                ]
                if not steps:
                    steps = [{"location": _location(run.board, ai, "the initial state"), "executionOrder": 0}]
                steps[-1]["importance"] = "essential"
                steps[-1]["kinds"] = ["violation"]
                labels = [s.action.get("label", "?") for s in cex.steps]
                fp = hashlib.sha256(json.dumps([engine, run.board, cex.invariant, labels]).encode()).hexdigest()[:32]
                results.append(
                    {
                        "ruleId": cex.invariant,
                        "ruleIndex": rule_index.get(cex.invariant, -1),
                        "level": "error",
                        "message": {
                            "text": f"{cex.invariant} violated: {cex.message} "
                            f"({_trace_title(cex)}: {len(cex.steps)} steps; rules {', '.join(cex.rules) or '-'})"
                        },
                        "locations": [_location(run.board, ai)],
                        "codeFlows": [
                            {
                                "message": {"text": f"the shortest line of play from the board that violates {cex.invariant}"},
                                "threadFlows": [{"locations": steps}],
                            }
                        ],
                        "partialFingerprints": {"bpcheckTrace/v1": fp},
                        "properties": {
                            "engine": engine,
                            "kind": cex.at,
                            "length": len(cex.steps),
                            "trace": labels,
                            "rootCause": root_cause.get((id(run), ci), 0),
                        },
                    }
                )
                if getattr(cex, "baselined", None) is not None:  # a known disagreement: reported, suppressed
                    results[-1]["suppressions"] = [{"kind": "external", "justification": f"known (baseline): {cex.baselined}"}]
            for g in run.goals():
                if not g["reached"]:
                    results.append(
                        {
                            "ruleId": GOAL_RULE,
                            "ruleIndex": rule_index[GOAL_RULE],
                            "level": "error",
                            "message": {"text": _goal_text(g, run)},
                            "locations": [_location(run.board, ai)],
                        }
                    )
            if run.skip_reason is not None:
                notes.append(
                    {
                        "level": "warning",
                        "message": {"text": f"{run.board}: skipped, the engine refused this board: {run.skip_reason}"},
                        "locations": [_location(run.board, ai)],
                    }
                )
            if run.not_compared:  # protocol v2: what the engine does not observe is never compared
                notes.append(
                    {
                        "level": "note",
                        "message": {"text": f"{run.board}: not compared (the engine does not observe them): {', '.join(run.not_compared)}"},
                        "locations": [_location(run.board, ai)],
                        "properties": {"not_compared": run.not_compared},
                    }
                )
            if run.explore.bound_hit:
                notes.append(
                    {
                        "level": "warning",
                        "message": {"text": f"{run.board}: inconclusive, bound hit: {run.explore.bound_hit} ({run.explore.states} states explored)"},
                        "locations": [_location(run.board, ai)],
                    }
                )
        if ei == 0:
            for e in errors:
                notes.append(
                    {
                        "level": "error",
                        "message": {"text": f"bad input: {e['file']}: {e.get('field', '')}: {e['problem']}"},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": file_uri(e["file"])}}}],
                    }
                )
        invocation = {"executionSuccessful": not (errors and ei == 0)}
        if notes:
            invocation["toolExecutionNotifications"] = notes
        out_runs.append(
            {
                "tool": {
                    "driver": {
                        "name": "bpcheck",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [rules[r] for r in rule_ids],
                    }
                },
                "automationDetails": {"id": f"bpcheck/{engine}/"},
                "invocations": [invocation],
                "artifacts": artifacts,
                "results": results,
                "properties": {"engine": engine},
            }
        )
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": out_runs}


def _goal_text(g: dict, run: Run) -> str:
    desc = f" ({g['description']})" if g.get("description") else ""
    if run.explore.bound_hit:
        return f"goal {g['id']!r} was not reached within the bound ({run.explore.bound_hit}){desc}"
    return f"goal {g['id']!r} is not reachable from the board{desc}"


def sarif_json(runs: list[Run], errors: list[dict] = ()) -> str:
    """The document as JSON; its message texts (what code-scanning tools show) with visible
    escapes, every string JSON-escaped where it must be (reports/safe.py)."""
    return json_text(visible_tree(sarif_document(runs, errors), SHOWN), indent=1) + "\n"


SHOWN = frozenset({"text", "markdown"})  # SARIF message strings: shown to people


__all__ = ["sarif_document", "sarif_json"]


def _trace_title(cex) -> str:
    """'shortest trace' for a BFS counterexample; DFS ones are not known to be shortest."""
    return getattr(cex, "trace_title", "shortest trace")
