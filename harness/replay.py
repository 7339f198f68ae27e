"""`bpcheck replay`: re-run a saved counterexample step by step and check every invariant again.

Exit 1 when an invariant is violated along the trace (the counterexample still reproduces),
0 when the whole trace replays and every invariant holds (the bug is fixed), 2 when the file is
malformed, the trace no longer applies (an action it names is not legal any more), or the file
holds no counterexample (a result whose boards all passed: nothing was replayed, nothing fixed).

A counterexample file is untrusted input (someone may have sent it): it never chooses code. The
engine is the one named on the command line (``--engine``, default ``reference``); when the file
names another, replay says so and still uses the command line's. The file is read through the
input layer (:mod:`bpcheck.model.reading`, :mod:`bpcheck.model.fields`): size and depth limits, strict JSON, every field checked.

Trace entries are action labels, one per step, forced passes included (with reduction on, a
step the file lists in ``forced`` is shown as such); old files read the same. An entry ``#N`` (written when the engine could not replay its
own trace for the report, e.g. after an engine fault) stands for the N-th action (from 0) the
engine offers at that step.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from bpcheck.errors import InputError
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.differential import DIFF
from bpcheck.explorers.reduce import Reduced
from bpcheck.explorers.run import STRUCTURAL
from bpcheck.invariants import REGISTRY
from bpcheck.model import fields, reading
from bpcheck.model.board import load_board
from bpcheck.model.rulesets import RULESETS

CEX_VERSION = 1
_INDEX = re.compile(r"^#(0|[1-9][0-9]{0,5})$")
CEX_KEYS = {
    "bpcheck_counterexample",
    "board",
    "engine",
    "invariant",
    "statement",
    "rules",
    "message",
    "kind",
    "length",
    "trace",
    "cycle_start",
    "steps",
    "initial_observation",
    "diff",  # a DIFF's distinct kind and first differing path (protocol v2)
    "signature",  # an invariant's violation: which distinct failure (invariants/signatures.py)
    "baselined",  # a DIFF listed in a --baseline file, with its reason
    "forced",  # reduction: the steps (from 1) that were forced passes (shown, never needed to replay)
    "decisions",
    "group",  # its root cause: the id of its entry in the result's groups (informational)
    "folded",  # #N entries are decisions with the forced passes after them folded (explorers/run.py)
    "engine_stderr",  # a crash: the engine's last stderr lines (informational)
    "ruleset",  # the ruleset the board was played under (docs/rulesets.md; replay plays it again)
}


def known_invariants() -> set[str]:
    return set(REGISTRY) | set(STRUCTURAL) | {DIFF}


def check_counterexample(c, file: str, where: str) -> dict:
    """One counterexample object (a --cex-dir file, or an entry of a --json result)."""
    if not isinstance(c, dict):
        raise InputError(file, where, f"expected a counterexample object, got {fields.type_name(c)}")
    fields.check_keys(c, CEX_KEYS, file, where)
    if "diff" in c:  # informational: the DIFF's kind and first differing path
        d = c["diff"]
        if not isinstance(d, dict) or set(d) != {"kind", "path"} or not all(fields.is_type(d[k], str) for k in d):
            raise InputError(file, fields.field_path(where, "diff"), "expected a table of two strings, kind and path")
    if "signature" in c and not fields.is_type(c["signature"], str):
        raise InputError(file, fields.field_path(where, "signature"), f"expected the violation's signature (a string), got {fields.type_name(c['signature'])}")
    if "baselined" in c and not fields.is_type(c["baselined"], str):
        raise InputError(file, fields.field_path(where, "baselined"), f"expected the baseline's reason (a string), got {fields.type_name(c['baselined'])}")
    if "forced" in c:
        fz = c["forced"]
        if not isinstance(fz, list) or not all(fields.is_type(k, int) and k >= 1 for k in fz):
            raise InputError(file, fields.field_path(where, "forced"), "expected an array of step numbers (from 1)")
    if "group" in c and not (fields.is_type(c["group"], int) and c["group"] >= 1):
        raise InputError(file, fields.field_path(where, "group"), f"expected a group number (from 1), got {fields.show(c['group'])}")
    if "ruleset" in c and not (fields.is_type(c["ruleset"], str) and c["ruleset"] in RULESETS):
        raise InputError(file, fields.field_path(where, "ruleset"), f"unknown ruleset {fields.show(c['ruleset'])} (known: {', '.join(RULESETS)})")
    if "folded" in c and not isinstance(c["folded"], bool):
        raise InputError(file, fields.field_path(where, "folded"), f"expected a boolean, got {fields.type_name(c['folded'])}")
    if "engine_stderr" in c and not (isinstance(c["engine_stderr"], list) and all(fields.is_type(x, str) for x in c["engine_stderr"])):
        raise InputError(file, fields.field_path(where, "engine_stderr"), f"expected an array of strings (the engine's stderr lines), got {fields.type_name(c['engine_stderr'])}")
    if "decisions" in c and not (fields.is_type(c["decisions"], int) and c["decisions"] >= 0):
        raise InputError(file, fields.field_path(where, "decisions"), f"expected a number of steps, got {fields.show(c['decisions'])}")
    c = {**c, "_file": file, "_where": where}  # for messages about the trace later
    if "bpcheck_counterexample" in c:
        v = c["bpcheck_counterexample"]
        if not fields.is_type(v, int) or v != CEX_VERSION:
            raise InputError(file, fields.field_path(where, "bpcheck_counterexample"), f"unsupported version {fields.show(v)} (this bpcheck reads {CEX_VERSION})")
    board = fields.need(c, "board", str, file, where)
    if not board or "\x00" in board:
        raise InputError(file, fields.field_path(where, "board"), "expected a board file path")
    inv = fields.need(c, "invariant", str, file, where)
    if inv not in known_invariants():
        raise InputError(file, fields.field_path(where, "invariant"), f"unknown invariant {fields.show(inv)} (see `bpcheck invariants`)")
    if "engine" in c:
        fields.need(c, "engine", str, file, where)
    trace = fields.need(c, "trace", list, file, where)
    for k, label in enumerate(trace):
        f = fields.field_path(fields.field_path(where, "trace"), k)
        if not isinstance(label, str) or not label:
            raise InputError(file, f, f"expected an action label, got {fields.type_name(label)} {fields.show(label)}")
        if label.startswith("#") and not _INDEX.match(label):
            raise InputError(file, f, f"expected an action label or #N (an action index), got {fields.show(label)}")
    return c


def load_counterexamples(path: str) -> list[dict]:
    """The counterexamples in a --cex-dir file or a --json result file, every field checked."""
    data = reading.load_json(path, path, "counterexample")
    if not isinstance(data, dict):
        raise InputError(path, "", f"expected a JSON object, got {fields.type_name(data)}")
    if "boards" in data:
        boards = data["boards"]
        if not isinstance(boards, list):
            raise InputError(path, "boards", f"expected an array, got {fields.type_name(boards)}")
        cexs = []
        for i, b in enumerate(boards):
            if not isinstance(b, dict):
                raise InputError(path, f"boards[{i}]", f"expected a board result object, got {fields.type_name(b)}")
            cs = b.get("counterexamples", [])
            if not isinstance(cs, list):
                raise InputError(path, f"boards[{i}].counterexamples", f"expected an array, got {fields.type_name(cs)}")
            rs = b.get("ruleset")  # the ruleset the board was played under (check --json)
            if rs is not None and not (fields.is_type(rs, str) and rs in RULESETS):
                raise InputError(path, f"boards[{i}].ruleset", f"unknown ruleset {fields.show(rs)} (known: {', '.join(RULESETS)})")
            for j, c in enumerate(cs):
                if isinstance(c, dict) and rs is not None and "ruleset" not in c:
                    c = {**c, "ruleset": rs}
                cexs.append(check_counterexample(c, path, f"boards[{i}].counterexamples[{j}]"))
        return cexs
    if "trace" in data:
        return [check_counterexample(data, path, "")]
    raise InputError(path, "", "neither a counterexample (with 'trace') nor a check result (with 'boards')")


_load = load_counterexamples  # the name earlier code used


def resolve_board(cex_path: str, board: str) -> str:
    """The board as saved (relative to where check ran), else relative to the counterexample file."""
    p = Path(board)
    if p.exists() or p.is_absolute():
        return board
    alt = Path(cex_path).parent / p
    return str(alt) if alt.exists() else board


def cex_ruleset(cex: dict, ruleset: str | None) -> str | None:
    """The ruleset to replay a counterexample under when its board names none: the one the file
    says it was found under (its own field wins, as a board's does), else ``--ruleset``
    (`ruleset`), else None (tcg)."""
    return cex.get("ruleset") or ruleset


def ruleset_note(cex: dict, ruleset: str | None) -> str | None:
    """What replay says when ``--ruleset`` is not the ruleset the file names (the file's wins)."""
    named = cex.get("ruleset")
    if ruleset is not None and named is not None and named != ruleset:
        return f"note: the counterexample was found under ruleset {named}; replaying under it (a file's own ruleset wins over --ruleset {ruleset})"
    return None


def load_cex_board(path: str, cex: dict, ruleset: str | None = None):
    """The board a counterexample names, played under its own ruleset, else
    :func:`cex_ruleset`'s; a problem with it names the counterexample file too."""
    where = fields.field_path(cex.get("_where", ""), "board")
    file = resolve_board(path, cex["board"])
    if not Path(file).exists():
        raise InputError(path, where, f"no such board file {cex['board']!r}")
    try:
        return load_board(file, cex["board"], ruleset=cex_ruleset(cex, ruleset))
    except InputError as e:
        raise InputError(path, where, f"in board file {e.render()}") from None


def engine_note(cex: dict, engine_name: str) -> str | None:
    named = cex.get("engine")
    if named is not None and named != engine_name:
        return (
            f"note: the file names engine {fields.show(named, 80)}; replaying on {engine_name} "
            "(a file never chooses the engine: pass --engine to pick one)"
        )
    return None


def pick_action(acts, label: str):
    """The offered action a trace entry names: its exact label, or ``#N`` the N-th offered."""
    act = next((a for a in acts if a.label == label), None)
    if act is None and _INDEX.match(label):
        n = int(label[1:])
        if n < len(acts):
            act = acts[n]
    return act


def _forced(cex: dict, k: int) -> bool:
    """Whether the file marks step k (from 0) as forced (reduction: the only action, a pass,
    taken for the player). Only shown: the trace is replayed step by step either way."""
    return k + 1 in (cex.get("forced") or ())


# -- naming the files --cex-dir writes ------------------------------------------------------------


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._") or "board"


def cex_file_names(results) -> dict[tuple[str, int], str]:
    """``{(board path, k): file name}`` for every counterexample of `results` (k from 1), unique
    and deterministic: ``STEM.INVARIANT.json``; boards that share a file stem (same name in two
    folders) get their folders prepended (``a_x.INV.json``, ``b_x.INV.json``) until the names
    differ, then a counter."""
    boards: list[str] = []
    for br in results:
        if br.board.path not in boards:
            boards.append(br.board.path)
    label: dict[str, str] = {}
    parts = {b: [_safe(x) for x in Path(b).with_suffix("").parts if x not in ("", "/", ".", "..")] or ["board"] for b in boards}
    depth = {b: 1 for b in boards}
    while True:
        for b in boards:
            label[b] = "_".join(parts[b][-depth[b] :])
        groups: dict[str, list[str]] = {}
        for b in boards:
            groups.setdefault(label[b], []).append(b)
        grown = False
        for same in groups.values():
            if len(same) > 1:
                for b in same:
                    if depth[b] < len(parts[b]):
                        depth[b] += 1
                        grown = True
        if not grown:
            break
    out: dict[tuple[str, int], str] = {}
    used: set[str] = set()
    for br in results:
        for k, cex in enumerate(br.counterexamples, 1):
            base = f"{label[br.board.path]}.{_safe(cex.invariant)}"
            name, n = f"{base}.json", 1
            while name in used:
                n += 1
                name = f"{base}.{n}.json"
            used.add(name)
            out[(br.board.path, k)] = name
    return out


class TraceReplay:
    """A counterexample's trace replayed on an engine, every invariant judged on the way (as the
    explorer judged it): :meth:`steps` takes the steps one by one; ``found`` holds each violation
    ``(step, invariant, message, signature)``; ``state`` is the state after the last step."""

    def __init__(self, cex: dict, engine, board) -> None:
        self.cex = cex
        self.system = EngineSystem(engine, board, list(REGISTRY.values()))
        self.state = self.system.initial_states()[0]
        self.found: list[tuple[int, str, str, str | None]] = []
        self.folded = None
        if cex.get("folded"):
            # #N entries of a trace the engine could not replay for the report, with forced passes folded
            # (reduction): each is a decision, followed by the forced passes the explorer took after it,
            # which are re-executed here exactly as the explorer folded them (explorers/reduce.py)
            self.folded = Reduced(self.system)
            self.folded.finish(None)
            self.state = self.folded.initial_states()[0]
        self.what = "decisions, forced passes folded" if self.folded is not None else "steps"

    def _note(self, step: int, results) -> list[str]:
        new = []
        for pid, verdict in results:
            if verdict is not None and verdict is not True:
                self.found.append((step, pid, str(verdict), getattr(verdict, "key", None)))
                new.append(pid)
        return new

    def steps(self) -> Iterator[tuple[int, str, list[str]]]:
        """``(step number, the step as shown, the invariants it broke)`` for each step taken
        (forced passes included); :class:`InputError` when a label is not legal where the trace
        says (the trace no longer applies)."""
        system, cex, note = self.system, self.cex, self._note
        s = self.state
        n = 0  # steps taken (forced passes included)
        note(0, system.check_state(s))
        for k, label in enumerate(cex["trace"], 1):
            acts = system.actions(s)
            note(k - 1, system.check_actions(s, acts))
            act = pick_action(acts, label)
            if act is None:
                legal = ", ".join(a.label for a in acts) or "(none: the state is terminal)"
                where = fields.field_path(fields.field_path(cex.get("_where", ""), "trace"), k - 1)
                raise InputError(cex.get("_file", "<counterexample>"), where, f"step {k}: {label!r} is not legal here (the trace no longer applies); legal: {legal}")
            shown = label if act.label == label else f"{label} = {act.label}"
            if self.folded is not None:  # a decision, then the forced passes the explorer folded after it
                s2, macro = self.folded.step(s, act)
                for j, m in enumerate(macro.micro):
                    n += 1
                    new = []
                    if j:
                        new += note(n - 1, system.check_state(m.before))
                        new += note(n - 1, system.check_actions(m.before, [m.action]))
                    new += note(n, system.check_transition(m.before, m.action, m.info, m.after))
                    yield n, (shown if not j else f"{m.action.label} (forced)"), new
                note(n, system.check_state(s2))
            else:
                n += 1
                s2, events = system.step(s, act)
                new = note(k, system.check_transition(s, act, events, s2))
                new += note(k, system.check_state(s2))
                yield k, shown + (" (forced)" if _forced(cex, k - 1) else ""), new
            s = self.state = s2
        if not system.is_terminal(s):
            note(n, system.check_actions(s, system.actions(s)))
