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

import json
from pathlib import Path
from typing import Any



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
    import copy

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
    from bpcheck.explorers.symbolic import pc_text

    out = []
    for k, pc in enumerate(res.terminal_pcs, 1):
        conds = pc_text(pc)
        out.append(f"case {k}: " + (" and ".join(conds) if conds else "any values (no number decides this path)"))
    return out


# -- the command --------------------------------------------------------------------------------


def _reproduce(board_path: Path, display: str, engine_spec: str | None, inv) -> Any:
    """Run `bpcheck check` on a witness board: its counterexample, or None if it holds there."""
    from bpcheck.engines import make_engine
    from bpcheck.explorers.run import check_board
    from bpcheck.model.board import load_board

    b = load_board(board_path, display)
    br = check_board(b, make_engine(engine_spec), [inv], "bfs", engine_name=engine_spec or "reference", progress=False)
    cex = [c for c in br.counterexamples if c.invariant == inv.id]
    return cex[0] if cex else None


