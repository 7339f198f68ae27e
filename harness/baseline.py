"""`bpcheck baseline RESULT.json`: the baseline entries (docs/checking.md, Baselines) for every
disagreement and invariant violation of a `check --json` result that no baseline lists yet: a
DIFF by its kind and path, an invariant's violation by its signature (invariants/signatures.py).

Each entry is written with an empty ``reason``, which ``--baseline`` refuses (``known[i].reason:
expected a non-empty string``) until someone has written down why the disagreement is known: the
command saves typing out boards, kinds and paths, never the explaining. The counterexample's
message and length go above each entry as a comment. Counterexamples a baseline cannot list (a
DIFF without a kind and path, the structural DEADLOCK, CYCLE, ENGINE-FAULT, ...) are listed as
comments and counted on standard error. Entries come in the result's order, so the same result
gives the same text."""

from __future__ import annotations

import tomli_w

from bpcheck.harness.replay import load_counterexamples
from bpcheck.invariants import REGISTRY
from bpcheck.invariants.signatures import UNCLASSIFIED, signature_of
from bpcheck.reports.text import plural


def _steps(c: dict) -> str:
    """A counterexample's length in words: ``1 step``, ``4 steps``, ``? steps`` (unknown)."""
    n = c.get("length")
    return plural(n, "step") if isinstance(n, int) else f"{n if n is not None else '?'} steps"


def _comment(text: str, width: int = 300) -> str:
    """One TOML comment line: whitespace folded, and the control characters TOML does not allow
    in a comment (a message may quote anything an engine sent) written as \\xNN."""
    one = " ".join(str(text).split())
    one = "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in one)
    return "# " + (one if len(one) <= width else one[: width - 3] + "...")


def baseline_entries(path: str) -> tuple[str, int, int]:
    """(TOML text, entries written, counterexamples that cannot be listed)."""
    cexs = load_counterexamples(path)
    out: list[str] = []
    written = unlisted = 0
    board = None
    seen: set[tuple] = set()
    for c in cexs:
        if "baselined" in c:
            continue  # listed already
        if c["board"] != board:
            board = c["board"]
            out.append(_comment(f"-- {board} " + "-" * max(3, 92 - len(board))))
            out.append("")
        inv = c["invariant"]
        entry: dict = {"board": c["board"]}
        if c.get("engine") not in (None, "reference"):
            entry["engine"] = c["engine"]
        sig = None
        if inv in REGISTRY:  # the violation's signature (a result written before signatures: read from its message)
            sig = c.get("signature") or signature_of(inv, c.get("message", ""))
        if inv == "DIFF" and "diff" in c:
            entry |= {"kind": c["diff"]["kind"], "path": c["diff"]["path"]}
        elif inv in REGISTRY and sig != UNCLASSIFIED:
            entry |= {"invariant": inv, "signature": sig}
        else:
            unlisted += 1
            why = "no signature: its message names no distinct failure of the invariant" if inv in REGISTRY else inv
            out += [_comment(f"not listable ({why}, {_steps(c)}): {c.get('message', '')}"), ""]
            continue
        key = tuple(sorted(entry.items()))
        if key in seen:
            continue  # one entry stands for every counterexample of the same (board, kind, path) or (board, invariant, signature)
        seen.add(key)
        entry["reason"] = ""
        what = f"{inv} [{sig}]" if "signature" in entry else inv
        out.append(_comment(f"{what} ({_steps(c)}): {c.get('message', '')}"))
        out.append("[[known]]")  # (tomli_w would write a short entry as an inline table)
        out += [tomli_w.dumps({k: v}).rstrip("\n") for k, v in entry.items()]
        out.append("")
        written += 1
    head = [
        _comment(f"Drafted by `bpcheck baseline {path}`: {written} entries, each with an empty reason."),
        "# Write why each disagreement is known (a finding, its class) before using the file:",
        "# `--baseline` refuses an empty reason.",
        "version = 1",
        "",
    ]
    return "\n".join(head + out).rstrip("\n") + "\n", written, unlisted


