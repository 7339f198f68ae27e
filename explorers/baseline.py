"""Baselines: known, explained disagreements between an engine and the reference model
(`bpcheck check --differential --baseline FILE`, docs/checking.md), and known violations of
invariants (which also apply without ``--differential``).

A baseline is a TOML file::

    version = 1

    [[known]]
    board = "boards/000-replay-5.toml"   # the board, as given to bpcheck (or its trailing part)
    kind = "observation"                 # the DIFF's kind, as in the counterexample's "diff"
    path = "players[1].graveyard"        # its first differing path, as in "diff"
    reason = "the core sends resolved Spells to the Graveyard after the whole chain"

An entry may instead name an invariant and the signature of its violation (invariants/signatures.py;
no kind or path)::

    [[known]]
    board = "boards/000-replay-5.toml"
    invariant = "replay.iff"
    signature = "replay-late"            # the counterexample's "signature" in --json
    reason = "the core asks the replay question one round of passes late (findings F19)"

a known violation of that invariant on that board, e.g. where an engine adapter cannot yet say
what the invariant needs (docs/ocgcore-findings.md). It accepts that signature only: the same
invariant failing another way (no replay at all, where the known quirk is a late one) is another
finding and fails the board. An invariant entry without a signature is refused.

Each DIFF counterexample is one distinct disagreement, ``(kind, path)`` on a board, and each
invariant counterexample one distinct failure, ``(invariant, signature)``. One the baseline lists
is *known*: it is reported with its reason and does not fail the board. Any other disagreement or
violation still fails it (counted as ``new``), and a listed one that no longer occurs on a board
that was checked is reported as gone (so the baseline can be trimmed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpcheck.errors import InputError
from bpcheck.invariants import REGISTRY
from bpcheck.invariants.signatures import signatures_of
from bpcheck.model.reading import read_baseline

KINDS = ("actions", "observation", "events", "event-order", "window", "terminal", "initial", "identity")
FIELDS = {"board": "the board file", "kind": "the DIFF kind", "path": "the first differing path", "reason": "why the disagreement is known"}
OPTIONAL = {"engine", "invariant", "signature"}


@dataclass
class Known:
    board: str
    kind: str
    path: str
    reason: str
    engine: str | None = None
    where: str = ""  # known[i], for messages
    invariant: str | None = None  # a known violation of this invariant (then kind and path are "")
    signature: str | None = None  # ... with this signature (invariants/signatures.py), the only one it accepts

    def what(self) -> str:
        """How reports name the entry: ``DIFF KIND PATH`` or ``INVARIANT [SIGNATURE]``."""
        return f"{self.invariant} [{self.signature}]" if self.invariant is not None else f"DIFF {self.kind} {self.path}"

    def matches_engine(self, engine: str) -> bool:
        """No engine named, the same spec, or ``ocgcore`` for ``ocgcore:LIB``: another build of the
        core (a patched library, a newer commit) is checked against the same known disagreements."""
        if self.engine is None or self.engine == engine:
            return True
        return self.engine == "ocgcore" and engine.startswith("ocgcore:")

    def matches_board(self, board_path: str) -> bool:
        b = Path(board_path).as_posix()
        mine = Path(self.board).as_posix()
        return b == mine or b.endswith("/" + mine.lstrip("./"))


@dataclass
class Baseline:
    file: str
    entries: list[Known] = field(default_factory=list)

    def entries_for(self, br, engine: str, differential: bool = True) -> list[Known]:
        """The entries that apply to one board result: its board, this engine, and without
        ``differential`` (a check of the invariants alone) only those naming an invariant."""
        return [
            k
            for k in self.entries
            if k.matches_board(br.board.path) and k.matches_engine(engine) and (differential or k.invariant is not None)
        ]

    def match(self, br, engine: str, differential: bool = True) -> tuple[list[Known], list[int | None]]:
        """The entries for `br` and, per counterexample, the index of the entry that lists it
        (None: not listed). Changes nothing."""
        mine = self.entries_for(br, engine, differential)
        hits: list[int | None] = []
        for cex in br.counterexamples:
            if cex.key is None:  # DEADLOCK, CYCLE, ENGINE-FAULT: no baseline lists them
                hits.append(None)
            elif cex.invariant == "DIFF":
                hits.append(next((i for i, k in enumerate(mine) if k.invariant is None and (k.kind, k.path) == tuple(cex.key)), None))
            else:  # an invariant's violation: its signature, never the invariant alone
                hits.append(next((i for i, k in enumerate(mine) if k.invariant == cex.invariant and k.signature == cex.key), None))
        return mine, hits

    def outcome(self, br, engine: str, differential: bool = True) -> dict:
        """Mark the known counterexamples of one board result (``cex.baselined``), fix its
        verdict, and return ``{"known", "new", "gone"}``. Without ``differential`` (a check of
        the invariants alone) only the entries naming an invariant apply: no DIFF can occur, so
        none is gone."""
        mine, hits = self.match(br, engine, differential)
        for cex, hit in zip(br.counterexamples, hits):
            if hit is not None:
                cex.baselined = mine[hit].reason
        known = sum(h is not None for h in hits)
        new = len(hits) - known
        used = {h for h in hits if h is not None}
        gone = [_gone(k) for i, k in enumerate(mine) if i not in used]
        r = br.result
        rest = [c for c in br.counterexamples if getattr(c, "baselined", None) is None]
        unmet = any(w is None for w in br.witnesses.values())
        if known and r.status == "fail" and not rest and not unmet:
            r.status = "inconclusive" if r.bound_hit is not None else "pass"
        br.baseline = {"known": known, "new": new, "gone": gone}
        return br.baseline


def _gone(k: Known) -> dict:
    if k.invariant is not None:
        return {"board": k.board, "kind": "invariant", "path": k.invariant, "signature": k.signature, "reason": k.reason}
    return {"board": k.board, "kind": k.kind, "path": k.path, "reason": k.reason}


def _str(v: Any, file: str, where: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise InputError(file, where, f"expected a non-empty string, got {v!r}")
    return v


def load_baseline(path: str) -> Baseline:
    """Read and validate a baseline file: bad input names the file, the field and the problem."""
    data = read_baseline(path)  # the input layer's file-level checks (model/reading.py): TOML, or JSON
    for k in data:
        if k not in ("version", "known"):
            raise InputError(path, k, "unknown field (allowed: version, known)")
    if data.get("version", 1) != 1:
        raise InputError(path, "version", f"unsupported baseline version {data.get('version')!r} (this bpcheck reads 1)")
    items = data.get("known", [])
    if not isinstance(items, list):
        raise InputError(path, "known", "expected an array of tables ([[known]])")
    out = Baseline(path)
    seen: dict[tuple, str] = {}
    for i, item in enumerate(items):
        where = f"known[{i}]"
        if not isinstance(item, dict):
            raise InputError(path, where, "expected a table")
        for k in item:
            if k not in FIELDS and k not in OPTIONAL:
                raise InputError(path, f"{where}.{k}", f"unknown field (allowed: {', '.join([*FIELDS, *sorted(OPTIONAL)])})")
        if "invariant" in item:  # a known invariant violation: board, invariant, reason
            for k in ("kind", "path"):
                if k in item:
                    raise InputError(path, f"{where}.{k}", "an entry names an invariant or a DIFF's kind and path, not both")
            inv = _str(item["invariant"], path, f"{where}.invariant")

            if inv not in REGISTRY:
                raise InputError(path, f"{where}.invariant", f"unknown invariant {inv!r}")
            names = list(signatures_of(inv))
            if "signature" not in item:
                raise InputError(
                    path,
                    f"{where}.signature",
                    f"missing: an invariant entry names the signature of the violation it accepts, so that the same invariant "
                    f"failing another way is not hidden behind it ({inv}: {', '.join(names)}); the counterexample's \"signature\" "
                    "in the --json result names it, and `bpcheck baseline RESULT.json` drafts entries with it",
                )
            sig = _str(item["signature"], path, f"{where}.signature")
            if sig not in names:
                raise InputError(path, f"{where}.signature", f"{inv} has no signature {sig!r} (its signatures: {', '.join(names)})")
            for k in ("board", "reason"):
                if k not in item:
                    raise InputError(path, f"{where}.{k}", f"missing: every known violation names {FIELDS[k]}")
            engine = _str(item["engine"], path, f"{where}.engine") if "engine" in item else None
            b, r = _str(item["board"], path, f"{where}.board"), _str(item["reason"], path, f"{where}.reason")
            key = (b, "invariant", inv, sig)
            if key in seen:
                raise InputError(path, f"{where}", f"lists the same violation as {seen[key]}")
            seen[key] = where
            out.entries.append(Known(b, "", "", r, engine, where, inv, sig))
            continue
        if "signature" in item:
            raise InputError(path, f"{where}.signature", "a signature goes with an invariant (a DIFF entry names its kind and path)")
        for k, what in FIELDS.items():
            if k not in item:
                raise InputError(path, f"{where}.{k}", f"missing: every known disagreement names {what}")
        vals = {k: _str(item[k], path, f"{where}.{k}") for k in FIELDS}
        if vals["kind"] not in KINDS:
            raise InputError(path, f"{where}.kind", f"unknown DIFF kind {vals['kind']!r} (known: {', '.join(KINDS)})")
        engine = _str(item["engine"], path, f"{where}.engine") if "engine" in item else None
        key = (vals["board"], vals["kind"], vals["path"])
        if key in seen:
            raise InputError(path, f"{where}", f"lists the same disagreement as {seen[key]}")
        seen[key] = where
        out.entries.append(Known(vals["board"], vals["kind"], vals["path"], vals["reason"], engine, where))
    return out


__all__ = ["Baseline", "KINDS", "Known", "load_baseline"]
