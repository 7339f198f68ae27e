"""Graphviz pictures of a counterexample: its trace, and the state graph around it.

* :func:`trace_dot`: the trace left to right, one node per state drawn as a compact board (both
  players' zones, LP, phase and step, the attack in progress, the chain), the cells that changed
  since the previous state emphasised, the edges labelled with the actions, the violating step
  highlighted with the invariant's ID, statement and rule citation.
* :func:`state_graph_dot`: for a small exploration (at most ``--graph-limit`` states, 200 by
  default), the whole state graph with the counterexample's path highlighted; for a larger one a
  summary (states per depth), never an unreadable drawing.
* :func:`render_svg`: DOT -> SVG with the ``graphviz-pure`` program (a self-contained port of
  Graphviz's ``dot`` shipped as a wheel, a dependency of bpcheck), or with a Graphviz ``dot`` if
  ``BPCHECK_DOT`` names one. The DOT is always written first; a failure to render is reported in
  plain words and never loses the DOT.

Everything is read from the counterexample object (observations, actions, events) and the
explorer's recorded graph: no rule is known here.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bpcheck.invariants.naming import event_text
from bpcheck.reports.board import BoardView, Cell, _get, _pn, board_view, event_summary, trace_names, wrap
from bpcheck.reports.safe import xml_safe

FONT = "Arial"  # graphviz-pure measures it with its bundled metric-compatible Arimo
KIND_FILL = {
    "atk": "#fbe3c8",
    "def": "#d3e6f8",
    "set": "#e2dced",
    "spell": "#d2efdc",
    "trap": "#f6d5e8",
    "spell-set": "#e6e6e6",
    "empty": "#ffffff",
    "gap": "#ffffff",
    "info": "#f7f7f7",
    "info-lp": "#f7f7f7",
    "header": "#eef1f5",
    "attack": "#fff4c2",
    "attack-none": "#ffffff",
    "chain": "#e8f0ff",
    "note": "#f7f7f7",
}
CHANGED = "#e8590c"  # border of a cell that changed
VIOLATION = "#c92a2a"
PATH = "#e8590c"


def _esc(s: str) -> str:
    """Text inside an HTML-like label: entities, and a backslash as &#92; (Graphviz would read
    a backslash as the start of an escape such as \\N or \\l)."""
    return html.escape(xml_safe(str(s)), quote=True).replace("\\", "&#92;")


def _dq(s: str) -> str:
    """Text inside a double-quoted DOT string (a tooltip): a trailing backslash must not escape
    the closing quote, a quote must not end the string, a newline must not split the line."""
    return xml_safe(str(s)).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " ")


def _cell_td(c: Cell) -> str:
    fill = KIND_FILL.get(c.kind, "#ffffff")
    attrs = [f'BGCOLOR="{fill}"']
    if c.span > 1:
        attrs.append(f'COLSPAN="{c.span}"')
    if c.kind in ("header", "attack", "attack-none", "chain", "note", "info-lp"):
        attrs.append('ALIGN="LEFT"' if c.kind in ("chain", "note") else 'ALIGN="CENTER"')
    if c.kind not in ("header", "attack", "attack-none", "chain", "note", "info", "info-lp"):
        attrs.append('WIDTH="96"')
    if c.kind == "gap":
        attrs.append('BORDER="0"')
    if c.changed:
        attrs.append(f'BORDER="3" COLOR="{CHANGED}"')
    if c.title:
        attrs.append(f'TITLE="{_esc(c.title)}" TOOLTIP="{_esc(c.title)}"')
    grey = c.kind in ("empty", "attack-none")
    parts = []
    for k, line in enumerate(c.lines):
        t = _esc(line) if line else " "
        if k < c.strong and c.kind not in ("empty", "attack-none", "gap"):
            t = f"<B>{t}</B>"
        elif k > 0:
            t = f'<FONT POINT-SIZE="9">{t}</FONT>'
        parts.append(t)
    body = "<BR/>".join(parts)
    if grey:
        body = f'<FONT COLOR="#9a9a9a">{body}</FONT>'
    elif c.changed:
        body = f'<FONT COLOR="#a33a00">{body}</FONT>'
    return f"<TD {' '.join(attrs)}>{body}</TD>"


def board_label(view: BoardView, border_color: str = "#555555", border: int = 1) -> str:
    rows = [f"<TR>{_cell_td(view.header)}</TR>"]
    for r in view.rows:
        rows.append("<TR>" + "".join(_cell_td(c) for c in r) + "</TR>")
    for b in view.bands:
        rows.append(f"<TR>{_cell_td(b)}</TR>")
    return (
        f'<<TABLE BORDER="{border}" COLOR="{border_color}" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" BGCOLOR="white">'
        + "".join(rows)
        + "</TABLE>>"
    )


def _note_label(cex) -> str:
    rows = [
        f'<TR><TD ALIGN="LEFT" BGCOLOR="{VIOLATION}"><FONT COLOR="white"><B>VIOLATED: {_esc(cex.invariant)}</B></FONT></TD></TR>',
    ]
    for line in wrap(cex.statement or "", 48, 6):
        rows.append(f'<TR><TD ALIGN="LEFT" BORDER="0">{_esc(line)}</TD></TR>')
    if cex.rules:
        rows.append(f'<TR><TD ALIGN="LEFT" BORDER="0"><B>rules:</B> {_esc(", ".join(cex.rules))} (docs/rules.md)</TD></TR>')
    for k, line in enumerate(wrap(cex.message or "", 48, 6)):
        pre = "<B>found:</B> " if k == 0 else ""
        rows.append(f'<TR><TD ALIGN="LEFT" BORDER="0"><FONT COLOR="{VIOLATION}">{pre}{_esc(line)}</FONT></TD></TR>')
    where = violation_place(cex)
    rows.append(f'<TR><TD ALIGN="LEFT" BORDER="0"><I>{_esc(where)}</I></TD></TR>')
    return (
        f'<<TABLE BORDER="3" COLOR="{VIOLATION}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2" BGCOLOR="#fff5f5">'
        + "".join(rows)
        + "</TABLE>>"
    )


def violation_place(cex) -> str:
    """Where the violation shows, in words (from the counterexample's kind)."""
    n = len(cex.steps)
    at = cex.at
    if n == 0:
        return "in the initial state"
    if at == "transition":
        return f"at step {n}: the action itself breaks it"
    if at == "fault":
        return f"at step {n}: the engine failed"
    if at == "actions":
        return f"in the actions offered after step {n}"
    if at == "deadlock":
        return f"after step {n}: no action is offered"
    if at == "cycle":
        back = cex.cycle_start if cex.cycle_start is not None else 0
        return f"after step {n} the play returns to the state after step {back}: it never ends"
    return f"in the state after step {n}"


def _edge_label(step, bad: bool) -> str:
    who = _pn(step.player) if step.player is not None else "--"
    head = f"{step.index}. {who}"
    lines = [f"<B>{_esc(head)}</B>"]
    for l in wrap(step.action.get("label", "?"), 26, 3):
        lines.append(_esc(l))
    ev = event_summary(step.events, 4)
    if ev:
        for l in wrap(ev, 30, 2):
            lines.append(f'<FONT POINT-SIZE="8" COLOR="#555555">{_esc(l)}</FONT>')
    if bad:
        lines.insert(0, f'<FONT COLOR="{VIOLATION}"><B>VIOLATION</B></FONT>')
    return "<" + "<BR/>".join(lines) + ">"


def _graph_header(title_lines: list[str]) -> str:
    label = "<BR ALIGN=\"LEFT\"/>".join(_esc(t) for t in title_lines) + '<BR ALIGN="LEFT"/>'
    return (
        f'  graph [rankdir=LR, fontname="{FONT}", fontsize=13, bgcolor="white", pad=0.3, nodesep=0.35, ranksep=0.45, '
        f"labelloc=t, labeljust=l, label=<{label}>];\n"
        f'  node [fontname="{FONT}", fontsize=10];\n'
        f'  edge [fontname="{FONT}", fontsize=10, color="#666666"];\n'
    )


def _title(cex) -> list[str]:
    return [
        f"{cex.invariant} violated on {cex.board}",
        f"engine {cex.engine} · {_trace_title(cex)}: {len(cex.steps)} step{'s' if len(cex.steps) != 1 else ''} · orange borders: what changed",
    ]


ROW_STATES = 4  # states drawn side by side in one row of a trace picture; a longer trace wraps into rows


def trace_dot(cex, last: int | None = None, rankdir: str = "LR", per_row: int = ROW_STATES) -> str:
    """The counterexample's trace as DOT: every state, left to right, in rows of at most
    `per_row` states read like lines of text (a long trace wraps: its picture grows down, not
    across; a 13-step trace drew 9,783 pt wide on one row, about 2,700 pt in rows of 4). With
    `last`, only the states of the last `last` steps are drawn as boards and the steps before
    them are listed in one node (for pictures that must stay small, e.g. the README's);
    `rankdir="TB"` stacks them one under the other."""
    obs = [cex.initial_observation] + [s.after for s in cex.steps]
    n = len(cex.steps)
    first = 0 if last is None else max(0, n - last)
    state_bad = cex.at in ("state", "actions", "deadlock", "cycle") or n == 0
    edge_bad = cex.at in ("transition", "fault") and n > 0
    drawn = list(range(first, n + 1))
    ranks = [drawn[i : i + per_row] for i in range(0, len(drawn), per_row)] if rankdir == "LR" and per_row >= 1 and len(drawn) > per_row else []
    if ranks:  # wrapped: ranks run down the page, each row one rank (rank=same), read left to right
        rankdir = "TB, newrank=true"
    out = ["digraph counterexample {\n", _graph_header(_title(cex)).replace("rankdir=LR", f"rankdir={rankdir}")]
    if first:
        rows = [f'<TR><TD ALIGN="LEFT"><B>{_esc(f"steps 1–{first} from the board")}</B></TD></TR>']
        for st in cex.steps[:first]:
            who = _pn(st.player) if st.player is not None else "--"
            text = f"{st.index}. {who}: {st.action.get('label', '?')}"
            rows.append(f'<TR><TD ALIGN="LEFT">{_esc(text)}</TD></TR>')
        out.append(
            '  prelude [shape=plain, label=<<TABLE BORDER="1" COLOR="#555555" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2" '
            f'BGCOLOR="#f7f7f7">{"".join(rows)}</TABLE>>];\n'
        )
        out.append(f'  prelude -> s{first} [style=dashed, label=<<I>board after step {first}</I>>];\n')
    names = trace_names(cex)
    for k in range(first, n + 1):
        prev = obs[k - 1] if k else None
        label = "initial state" if k == 0 else f"after step {k}"
        view = board_view(obs[k], prev, label, lambda uid, k=k: names.ref(uid, k))
        bad = state_bad and k == n
        lab = board_label(view, VIOLATION if bad else "#555555", 3 if bad else 1)
        out.append(f"  s{k} [shape=plain, label={lab}];\n")
    for k, st in enumerate(cex.steps):
        if k < first:
            continue
        bad = edge_bad and k == n - 1
        color = f'color="{VIOLATION}", fontcolor="{VIOLATION}", penwidth=3' if bad else "penwidth=1.5"
        evs = [event_text(e, names, k + 1) for e in st.events if not (isinstance(e, dict) and e.get("kind") == "passed")]
        tip = f"{st.index}. {st.action.get('label', '?')}" + (": " + "; ".join(evs) if evs else "")
        out.append(f'  s{k} -> s{k + 1} [label={_edge_label(st, bad)}, {color}, tooltip="{_dq(tip)}"];\n')
    if cex.at == "cycle" and cex.cycle_start is not None and n and cex.cycle_start >= first:
        out.append(
            f'  s{n} -> s{cex.cycle_start} [label=<<B>back to the state after step {cex.cycle_start}</B>>, '
            f'style=dashed, color="{VIOLATION}", fontcolor="{VIOLATION}", penwidth=2, constraint=false];\n'
        )
    for row in ranks:
        out.append("  { rank=same; " + "; ".join(f"s{k}" for k in row) + "; }\n")
    for above, below in zip(ranks, ranks[1:]):  # each row starts under the one before it
        out.append(f"  s{above[0]} -> s{below[0]} [style=invis, weight=10];\n")
    out.append(f"  violation [shape=plain, label={_note_label(cex)}];\n")
    out.append(f'  s{n} -> violation [style=dashed, color="{VIOLATION}", arrowhead=none, penwidth=2];\n')
    out.append("}\n")
    return "".join(out)


# -- the state graph ----------------------------------------------------------------------------


def _short_step(obs: dict) -> str:
    s = str(obs.get("step", "?")) if isinstance(obs, dict) else "?"
    for a, b in (("damage_step_", "DS "), ("battle_", "BP "), ("_step", ""), ("_", " ")):
        s = s.replace(a, b)
    return s


def state_graph_dot(cex, graph, limit_note: str = "") -> str:
    """The whole recorded state graph with the counterexample's path in orange (complete
    records only), or a summary (states per depth) when the exploration was larger."""
    if graph is None:
        return summary_dot(cex, None, "the state graph was not recorded")
    if not graph.complete:
        why = f"{graph.total_states} states, {graph.total_edges} transitions: more than the limit of {graph.limit} states drawn"
        return summary_dot(cex, graph, why)
    # With reduction the graph's edges are decisions: forced passes are folded into them
    decisions = [s for s in cex.steps if not getattr(s, "forced", False)]
    labels = [s.action.get("label", "?") for s in decisions]
    path = graph.path(labels) or [0]
    on_path = set(path)
    path_edges = {(path[k], path[k + 1], labels[k]): decisions[k].index for k in range(len(path) - 1)}
    cycle_start = cex.cycle_start
    if cycle_start is not None and len(decisions) != len(cex.steps):
        cycle_start = sum(1 for s in cex.steps[:cycle_start] if not getattr(s, "forced", False))
    last = path[-1]
    out = [
        "digraph state_graph {\n",
        _graph_header(
            [
                f"state graph of {cex.board}: {len(graph.states)} states, {len(graph.edges)} transitions"
                + ("" if graph.exhaustive else " (exploration cut by a bound)"),
                f"orange: the counterexample to {cex.invariant} ({len(cex.steps)} steps"
                + (f", {len(labels)} decisions" if len(labels) != len(cex.steps) else "")
                + "); red: where it is violated;"
                " double border: duel over or no action left",
            ]
        ),
    ]
    out.append('  node [shape=box, style="rounded,filled", fillcolor="#f4f4f4", color="#999999", fontsize=9, margin="0.05,0.02"];\n')
    out.append('  edge [color="#bbbbbb", arrowsize=0.5];\n')
    outdeg = [0] * len(graph.states)
    for src, _dst, _n in graph.edges:
        outdeg[src] += 1
    for i, o in enumerate(graph.states):
        lp = "/".join("?" if _get(o, ("players", side, "lp")) is None else str(_get(o, ("players", side, "lp"))) for side in (0, 1))
        text = f"{i}\\n{_dq(_short_step(o))}\\n{_dq(lp)}"
        turn, step = _get(o, ("turn",)), _get(o, ("step",))
        attrs = [f'label="{text}"', f'tooltip="state {i}: turn {_dq("?" if turn is None else turn)}, {_dq("?" if step is None else step)}, LP {_dq(lp)}"']
        if i in on_path:
            attrs.append(f'fillcolor="#ffd8a8", color="{PATH}", penwidth=2')
        if i == last:
            attrs.append(f'fillcolor="#ffc9c9", color="{VIOLATION}", penwidth=3')
        if i == 0:
            attrs.append("penwidth=2")
        if outdeg[i] == 0:
            attrs.append("peripheries=2")
        out.append(f"  n{i} [{', '.join(attrs)}];\n")
    back = None
    if cex.at == "cycle" and cycle_start is not None and len(path) == len(labels) + 1 and cycle_start < len(path):
        back = (last, path[cycle_start])
    for src, dst, name in graph.edges:
        k = path_edges.get((src, dst, name))
        if back is not None and (src, dst) == back:
            back = None
            lab = "<BR/>".join(_esc(l) for l in wrap(f"{name}: back to the state after step {cex.cycle_start}", 24, 3))
            out.append(
                f'  n{src} -> n{dst} [color="{VIOLATION}", style=dashed, penwidth=2.5, fontsize=8, fontcolor="{VIOLATION}", label=<{lab}>];\n'
            )
        elif k is not None:
            lab = "<BR/>".join(_esc(l) for l in wrap(f"{k}. {name}", 24, 2))
            out.append(f'  n{src} -> n{dst} [color="{PATH}", penwidth=2.5, arrowsize=0.8, fontsize=8, fontcolor="#a33a00", label=<{lab}>];\n')
        else:
            out.append(f'  n{src} -> n{dst} [tooltip="{_dq(name)}"];\n')
    out.append("}\n")
    return "".join(out)


def summary_dot(cex, graph, why: str) -> str:
    """A larger exploration, summarised: how many states were first reached at each depth."""
    rows = [f'<TR><TD COLSPAN="4" ALIGN="LEFT"><B>{_esc("state graph not drawn: " + why)}</B></TD></TR>']
    if graph is not None and graph.depth_counts:
        counts = graph.depth_counts
        # at most 40 rows: group depths into bands
        band = max(1, -(-len(counts) // 40))
        bands = [(start, counts[start : start + band]) for start in range(0, len(counts), band)]
        top = max(sum(chunk) for _s, chunk in bands) or 1
        rows.append('<TR><TD ALIGN="LEFT"><B>depth</B></TD><TD ALIGN="RIGHT"><B>states</B></TD><TD COLSPAN="2"> </TD></TR>')
        path_len = sum(1 for s in cex.steps if not getattr(s, "forced", False))  # depth counts decisions (reduction)
        for start, chunk in bands:
            n = sum(chunk)
            name = f"{start}" if band == 1 else f"{start}–{start + len(chunk) - 1}"
            width = min(239, max(1, round(240 * n / top)))
            here = start <= path_len < start + band
            mark = "◀ the violation" if here else " "
            # every bar is a fixed 240-point strip (bar + blank) so that the bars line up on the left
            rows.append(
                f'<TR><TD ALIGN="LEFT">{name}</TD><TD ALIGN="RIGHT">{n}</TD>'
                f'<TD><TABLE BORDER="0" CELLPADDING="0" CELLSPACING="0"><TR>'
                f'<TD FIXEDSIZE="TRUE" WIDTH="{width}" HEIGHT="10" BGCOLOR="{PATH if here else "#8ca0b3"}"> </TD>'
                f'<TD FIXEDSIZE="TRUE" WIDTH="{240 - width}" HEIGHT="10"> </TD>'
                f'</TR></TABLE></TD><TD ALIGN="LEFT"><FONT POINT-SIZE="9">{_esc(mark)}</FONT></TD></TR>'
            )
    label = '<<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" BGCOLOR="white">' + "".join(rows) + "</TABLE>>"
    return (
        "digraph state_graph {\n"
        + _graph_header([f"state graph of {cex.board}: summary", f"the counterexample to {cex.invariant} is drawn in its trace picture"])
        + f"  summary [shape=plain, label={label}];\n}}\n"
    )


# -- rendering ----------------------------------------------------------------------------------


@dataclass
class Rendered:
    ok: bool
    message: str  # what happened, in words (the reason when not ok)
    program: str | None = None


def find_renderer() -> list[str] | None:
    """The command that renders DOT: $BPCHECK_DOT, else graphviz-pure (installed with bpcheck,
    next to this Python or on PATH), else a system Graphviz `dot`."""
    env = os.environ.get("BPCHECK_DOT")
    if env:
        return [env]
    here = Path(sys.executable).parent
    for name in ("graphviz-pure", "graphviz-pure.exe"):
        cand = here / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return [str(cand)]
    for name in ("graphviz-pure", "dot"):
        found = shutil.which(name)
        if found:
            return [found]
    return None


def render_svg(dot_path: Path, svg_path: Path, timeout: float = 120.0) -> Rendered:
    """Render `dot_path` to `svg_path`. Never raises for a renderer problem: says what it was."""
    cmd = find_renderer()
    if cmd is None:
        return Rendered(
            False,
            "no Graphviz renderer found: bpcheck renders with the `graphviz-pure` program from the "
            "graphviz-pure wheel (pip install graphviz-pure), or with the program named by BPCHECK_DOT",
        )
    tmp = svg_path.with_name(svg_path.name + ".tmp")
    try:
        proc = subprocess.run([*cmd, "-Tsvg", str(dot_path), "-o", str(tmp)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        tmp.unlink(missing_ok=True)
        return Rendered(False, f"{cmd[0]} did not finish within {timeout:g} s", cmd[0])
    except OSError as e:
        return Rendered(False, f"cannot run {cmd[0]}: {e}", cmd[0])
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        err = " / ".join(l.strip() for l in (proc.stderr or proc.stdout or "").strip().splitlines()[:4])
        return Rendered(False, f"{Path(cmd[0]).name} failed (exit {proc.returncode})" + (f": {err}" if err else ""), cmd[0])
    tmp.replace(svg_path)
    return Rendered(True, f"rendered with {Path(cmd[0]).name}", cmd[0])


def write_dot_and_svg(dot_text: str, dot_path: Path, svg_path: Path) -> Rendered:
    """Write the DOT (always), then try to render it."""
    dot_path.parent.mkdir(parents=True, exist_ok=True)
    dot_path.write_text(dot_text, encoding="utf-8")
    svg_path.unlink(missing_ok=True)
    return render_svg(dot_path, svg_path)


__all__ = [
    "Rendered",
    "board_label",
    "find_renderer",
    "render_svg",
    "state_graph_dot",
    "summary_dot",
    "trace_dot",
    "violation_place",
    "write_dot_and_svg",
]


def _trace_title(cex) -> str:
    """'shortest trace' for a BFS counterexample; DFS ones are not known to be shortest."""
    return getattr(cex, "trace_title", "shortest trace")
