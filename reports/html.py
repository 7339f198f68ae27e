"""The HTML report: an index (boards × invariants with verdicts, exercise counts, coverage) and a
page per counterexample (its pictures and a step-by-step board viewer).

Self-contained: inline CSS and JavaScript, the SVGs inlined, no network. Everything is read from
the runs (board results, invariant rows, counterexample objects); no verdict is re-derived.
"""

from __future__ import annotations

import json
import re

from bpcheck import __version__
from bpcheck.invariants.naming import TraceNames, event_text, unnamed_in_label
from bpcheck.reports.board import BoardView, Cell, board_view, player_of, trace_names
from bpcheck.reports.graphviz import violation_place
from bpcheck.reports.groups import group_runs
from bpcheck.reports.runs import Run, refused_unchecked
from bpcheck.reports.safe import html_text
from bpcheck.reports.text import decision_groups, forced_summary


def esc(s) -> str:
    """Every piece of text the page shows (reports/safe.py: hazardous characters as visible
    escapes, then HTML entities)."""
    return html_text(s)


CSS = """
:root { --fg:#1d2330; --muted:#6b7280; --line:#d7dbe2; --bad:#c92a2a; --bad-bg:#fff0f0; --ok:#2b8a3e; --ok-bg:#e9f7ee;
        --warn:#b26b00; --warn-bg:#fff6dc; --vac:#f1f3f5; --chg:#e8590c; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; color: var(--fg); margin: 0; background: #fafbfc; }
header.top { background: #1d2330; color: #fff; padding: 14px 24px; }
header.top a { color: #cfe0ff; }
header.top h1 { margin: 0 0 4px; font-size: 20px; }
main { padding: 16px 24px 40px; max-width: 1600px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
table.data { border-collapse: collapse; background: #fff; }
table.data th, table.data td { border: 1px solid var(--line); padding: 3px 7px; text-align: left; vertical-align: top; }
table.data th { background: #f3f5f8; font-weight: 600; }
table.data td.num, table.data th.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; }
.v-pass, .v-held { background: var(--ok-bg); color: var(--ok); }
.v-fail, .v-violated, .v-error { background: var(--bad-bg); color: var(--bad); }
.v-inconclusive, .v-held-so-far, .v-not-checked, .v-skipped { background: var(--warn-bg); color: var(--warn); }
.v-vacuous { background: var(--vac); color: var(--muted); }
.banner { padding: 10px 14px; border-radius: 6px; margin: 12px 0; font-size: 15px; }
.muted { color: var(--muted); }
code { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
.matrix-wrap { overflow: auto; max-height: 80vh; border: 1px solid var(--line); background: #fff; }
table.matrix { border-collapse: collapse; font-size: 11px; }
table.matrix th, table.matrix td { border: 1px solid #e3e6eb; padding: 1px 3px; text-align: center; min-width: 22px; }
table.matrix thead th { position: sticky; top: 0; background: #f3f5f8; z-index: 1; }
table.matrix th.rot { height: 190px; vertical-align: bottom; }
table.matrix th.rot div { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; font-weight: 500; }
table.matrix th.rowh { text-align: left; position: sticky; left: 0; background: #fff; white-space: nowrap; font-weight: 500; }
table.matrix td.m-held { background: #e9f7ee; color: #2b6a3a; }
table.matrix td.m-vacuous { background: #f6f7f9; color: #b0b6bf; }
table.matrix td.m-violated { background: #ffc9c9; font-weight: 700; }
table.matrix td.m-violated a { color: var(--bad); text-decoration: none; display: block; }
table.matrix td.m-held-so-far, table.matrix td.m-not-checked, table.matrix td.m-skipped { background: var(--warn-bg); color: var(--warn); }
.legend span { margin-right: 14px; }
.grid2 { display: flex; gap: 28px; flex-wrap: wrap; align-items: flex-start; }
.pic { overflow: auto; border: 1px solid var(--line); background: #fff; max-height: 75vh; }
.pic.fit svg { width: 100%; height: auto; }
.render-failed { background: var(--warn-bg); color: #6b4200; padding: 8px 12px; border-radius: 6px; }
/* the step viewer */
.viewer { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
.controls { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-bottom: 10px; }
.controls button { font: inherit; padding: 5px 12px; border: 1px solid #aab2bf; border-radius: 5px; background: #f5f7fa; cursor: pointer; }
.controls button:disabled { opacity: .45; cursor: default; }
#step-number { font-weight: 700; min-width: 110px; }
#action-label { font-family: ui-monospace, Menlo, Consolas, monospace; background: #eef1f5; padding: 3px 8px; border-radius: 4px; }
#events { color: var(--muted); margin: 4px 0 10px; min-height: 1.4em; }
#violation-banner { background: var(--bad-bg); border: 2px solid var(--bad); color: #7d1414; }
#violation-banner b { color: var(--bad); }
.viewer-body { display: flex; gap: 18px; align-items: flex-start; flex-wrap: wrap; }
ol.trace { margin: 0; padding-left: 26px; font-size: 13px; max-height: 520px; overflow: auto; min-width: 260px; }
ol.trace li { cursor: pointer; padding: 1px 4px; border-radius: 3px; }
ol.trace li.current { background: #ffe8cc; font-weight: 600; }
ol.trace li.bad { color: var(--bad); }
ol.trace li.forced-run { list-style: none; cursor: default; color: #666; } ol.trace li.forced-run summary { cursor: pointer; }
table.board { border-collapse: collapse; font-size: 12px; background: #fff; }
table.board td { border: 1px solid #c9ced6; padding: 3px 5px; text-align: center; vertical-align: middle; width: 112px; height: 30px; }
table.board td.wide { width: auto; }
table.board td.k-header { background: #eef1f5; font-weight: 600; }
table.board td.k-atk { background: #fbe3c8; } table.board td.k-def { background: #d3e6f8; } table.board td.k-set { background: #e2dced; }
table.board td.k-spell { background: #d2efdc; } table.board td.k-trap { background: #f6d5e8; } table.board td.k-spell-set { background: #e6e6e6; }
table.board td.k-empty, table.board td.k-attack-none { color: #a4a9b1; }
table.board td.k-gap { border: none; }
table.board td.k-info, table.board td.k-info-lp { background: #f7f7f7; }
table.board td.k-info-lp { font-weight: 700; }
table.board td.k-attack { background: #fff4c2; font-weight: 600; }
table.board td.k-chain { background: #e8f0ff; text-align: left; } table.board td.k-note { text-align: left; }
table.board td.changed { outline: 3px solid var(--chg); outline-offset: -3px; color: #a33a00; }
table.board .l0 { font-weight: 600; } table.board .ln { font-size: 11px; }
table.board.bad { box-shadow: 0 0 0 3px var(--bad); }
table.changes { margin-top: 8px; font-size: 12px; max-width: 900px; } table.changes td { word-break: break-word; }
tr.changed-row td { background: #fff4e6; }
pre.obs { font-size: 11px; max-height: 480px; overflow: auto; background: #fff; border: 1px solid var(--line); padding: 6px; }
.v-known { background: #e7f5ff; color: #1864ab; }
table.matrix td.m-known { background: #e7f5ff; color: #1864ab; }
"""

VIEWER_JS = """
(function () {
  var states = Array.prototype.slice.call(document.querySelectorAll('section.state'));
  var items = Array.prototype.slice.call(document.querySelectorAll('#trace-list li[value]'));
  var n = states.length - 1, bad = parseInt(document.body.getAttribute('data-violation-step'), 10), cur = 0;
  function show(k) {
    cur = Math.max(0, Math.min(n, k));
    states.forEach(function (s, i) { s.hidden = (i !== cur); });
    items.forEach(function (li, i) {
      li.classList.toggle('current', i === cur);
      var fold = li.parentNode.closest('details');  /* a run of forced passes: opened when its step is shown */
      if (i === cur && fold) { fold.open = true; }
    });
    var s = states[cur];
    document.getElementById('step-number').textContent = cur === 0 ? 'Initial state (step 0 of ' + n + ')' : 'Step ' + cur + ' of ' + n;
    document.getElementById('action-label').textContent = s.getAttribute('data-action');
    document.getElementById('events').textContent = s.getAttribute('data-events');
    document.getElementById('violation-banner').hidden = (cur !== bad);
    document.getElementById('prev').disabled = (cur === 0);
    document.getElementById('next').disabled = (cur === n);
    try { history.replaceState(null, '', '#step-' + cur); } catch (e) { /* a browser that refuses it on file: URLs */ }
  }
  document.getElementById('prev').addEventListener('click', function () { show(cur - 1); });
  document.getElementById('next').addEventListener('click', function () { show(cur + 1); });
  document.getElementById('first').addEventListener('click', function () { show(0); });
  document.getElementById('to-violation').addEventListener('click', function () { show(bad); });
  items.forEach(function (li, i) { li.addEventListener('click', function () { show(i); }); });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowLeft') { show(cur - 1); } else if (e.key === 'ArrowRight') { show(cur + 1); }
  });
  Array.prototype.slice.call(document.querySelectorAll('button.fit')).forEach(function (b) {
    b.addEventListener('click', function () {
      var pic = document.getElementById(b.getAttribute('data-target'));
      pic.classList.toggle('fit');
      b.textContent = pic.classList.contains('fit') ? 'actual size' : 'fit to width';
    });
  });
  var m = /^#step-(\\d+)$/.exec(location.hash);
  show(m ? parseInt(m[1], 10) : 0);
})();
"""


def page(title: str, body: str, script: str = "", body_attrs: str = "") -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body{body_attrs}>\n{body}\n" + (f"<script>{script}</script>\n" if script else "") + "</body>\n</html>\n"
    )


def _verdict(v: str) -> str:
    return f'<span class="verdict v-{esc(v.replace(" ", "-"))}">{esc(v)}</span>'


# -- boards as HTML -----------------------------------------------------------------------------


def _cell_html(c: Cell) -> str:
    cls = [f"k-{c.kind}"]
    if c.changed:
        cls.append("changed")
    if c.span > 1:
        cls.append("wide")
    lines = []
    for k, line in enumerate(c.lines):
        lines.append(f'<div class="{"l0" if k < c.strong and c.kind not in ("empty", "attack-none") else "ln"}">{esc(line) or "&nbsp;"}</div>')
    span = f' colspan="{c.span}"' if c.span > 1 else ""
    title = f' title="{esc(c.title)}"' if c.title else ""
    return f'<td class="{" ".join(cls)}"{span}{title} data-key="{esc(c.key)}">{"".join(lines)}</td>'


def board_html(view: BoardView, bad: bool = False) -> str:
    rows = [f"<tr>{_cell_html(view.header)}</tr>"]
    rows += ["<tr>" + "".join(_cell_html(c) for c in r) + "</tr>" for r in view.rows]
    rows += [f"<tr>{_cell_html(b)}</tr>" for b in view.bands]
    return f'<table class="board{" bad" if bad else ""}">' + "".join(rows) + "</table>"


def inline_svg(svg_text: str, prefix: str) -> str:
    """An SVG file's markup for inlining in HTML: the XML prolog dropped, ids made unique."""
    i = svg_text.find("<svg")
    body = svg_text[i:] if i >= 0 else svg_text
    body = re.sub(r'(\s)id="', rf'\1id="{prefix}-', body)
    body = body.replace('href="#', f'href="#{prefix}-')
    return body


# -- what a step changed, and what the invariant reads ---------------------------------------

CHANGES_SHOWN = 40  # rows of a step's "what changed" table; the rest are counted


def _segments(path: str) -> str:
    """The field a path ends in (``players[1].monsters[0].declared_at`` -> ``declared_at``)."""
    last = path.rsplit(".", 1)[-1]
    return last.split("[", 1)[0]


def leaf_diff(a, b, path: str = "", out: list | None = None) -> list[tuple[str, object, object]]:
    """Where two observations differ, leaf by leaf: ``(path, before, after)``; a side that lacks
    the path has :data:`ABSENT`. Lists of plain values (uid sets) are compared whole."""
    out = [] if out is None else out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            sub = f"{path}.{k}" if path else str(k)
            if k not in b:
                out.append((sub, a[k], ABSENT))
            elif k not in a:
                out.append((sub, ABSENT, b[k]))
            else:
                leaf_diff(a[k], b[k], sub, out)
        return out
    if isinstance(a, list) and isinstance(b, list) and any(isinstance(x, (dict, list)) for x in a + b):
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            leaf_diff(a[i] if i < len(a) else ABSENT, b[i] if i < len(b) else ABSENT, sub, out)
        return out
    if a != b or type(a) is not type(b):
        out.append((path or "(the observation)", a, b))
    return out


class _Absent:
    def __repr__(self) -> str:
        return "absent"


ABSENT = _Absent()


def _value(path: str, v, names: TraceNames, at: int) -> str:
    if v is ABSENT:
        return "(absent)"
    named = names.value(_segments(path), v, at)
    if named is not None:
        return named
    text = json.dumps(v, separators=(", ", ": "), ensure_ascii=False, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def changes_table(before: dict, after: dict, names: TraceNames, at: int) -> str:
    """Every value a step changed (the observation before and after it), uids named."""
    diff = leaf_diff(before if isinstance(before, dict) else {}, after if isinstance(after, dict) else {})
    if not diff:
        return '<p class="muted changes-none">The observation did not change.</p>'
    rows = [
        f"<tr><td><code>{esc(p)}</code></td><td>{esc(_value(p, x, names, at - 1))}</td><td>{esc(_value(p, y, names, at))}</td></tr>"
        for p, x, y in diff[:CHANGES_SHOWN]
    ]
    more = f'<p class="muted">... and {len(diff) - CHANGES_SHOWN} more changed values (the observations are below, in full).</p>' if len(diff) > CHANGES_SHOWN else ""
    return (
        '<table class="data changes"><tr><th>changed by this step</th><th>before</th><th>after</th></tr>' + "".join(rows) + "</table>" + more
    )


def resolve(obs, path: str) -> list[tuple[str, object]]:
    """The values at an observation path (``players[].monsters[].attacks_declared``): one per
    item of each ``[]`` (empty zones skipped), with its concrete path."""
    found: list[tuple[str, object]] = [("", obs)]
    for seg in path.split("."):
        many = seg.endswith("[]")
        name = seg[:-2] if many else seg
        nxt: list[tuple[str, object]] = []
        for where, v in found:
            if not isinstance(v, dict) or name not in v:
                nxt.append((f"{where}.{name}" if where else name, ABSENT))
                continue
            sub = v[name]
            here = f"{where}.{name}" if where else name
            if many and isinstance(sub, list):
                nxt += [(f"{here}[{i}]", x) for i, x in enumerate(sub) if x is not None]
            else:
                nxt.append((here, sub))
        found = [(w, v) for w, v in nxt if not (v is ABSENT and any(x is not ABSENT for _w, x in nxt))] or nxt
    return found


def reads_table(reads, before: dict, after: dict, names: TraceNames, at: int) -> str:
    """The fields the invariant declares it reads (``reads=``), before and after the violating
    step: every value it compared that the observation holds."""
    rows = []
    for path in sorted(reads or ()):
        b = dict(resolve(before, path)) if isinstance(before, dict) else {}
        a = dict(resolve(after, path)) if isinstance(after, dict) else {}
        for where in list(b) + [w for w in a if w not in b]:
            x, y = b.get(where, ABSENT), a.get(where, ABSENT)
            mark = ' class="changed-row"' if x != y else ""
            rows.append(f"<tr{mark}><td><code>{esc(where)}</code></td><td>{esc(_value(where, x, names, at - 1))}</td><td>{esc(_value(where, y, names, at))}</td></tr>")
    if not rows:
        return ""
    return (
        "<h3>What the invariant reads</h3><p class=\"muted\">The observation fields it declares it reads, before and after the "
        'violating step (its own history, from the events, is in the message).</p><table class="data" id="reads"><tr><th>field</th>'
        "<th>before</th><th>after</th></tr>" + "".join(rows) + "</table>"
    )


def _json_block(obs) -> str:
    return f"<pre class=\"obs\">{esc(json.dumps(obs, indent=1, ensure_ascii=False, default=str))}</pre>"


# -- the counterexample page --------------------------------------------------------------------


def cex_page(run: Run, cex, name: str, pictures: dict, index_href: str = "../index.html", group=None) -> str:
    """`pictures`: {"trace": (svg text | None, message), "graph": (svg text | None, message)}.
    With `group` (reports/groups.py), the page shows that root cause: `cex` is its first
    counterexample, and every counterexample of the group is listed."""
    n = len(cex.steps)
    obs = [cex.initial_observation] + [s.after for s in cex.steps]
    names = trace_names(cex)
    bad_step = n  # every kind shows on the last state or the last step
    sections = []
    for k, o in enumerate(obs):
        prev = obs[k - 1] if k else None
        view = board_view(o, prev, "initial state" if k == 0 else f"after step {k}", lambda uid, k=k: names.ref(uid, k))
        if k == 0:
            action, events, changes = "(the board as given)", "", ""
        else:
            st = cex.steps[k - 1]
            action = f"{player_of(st.player)}: {st.action.get('label', '?')}"
            cards = unnamed_in_label(st.action, names, k - 1)
            if cards:
                action += f" ({cards})"
            evs = [event_text(e, names, k) for e in st.events if not (isinstance(e, dict) and e.get("kind") == "passed")]
            events = "events: " + ("; ".join(evs) or "none")
            changes = changes_table(prev, o, names, k)
        changed = view.changed_keys()
        sections.append(
            f'<section class="state" data-step="{k}" data-action="{esc(action)}" data-events="{esc(events)}"'
            f' data-changed="{esc(" ".join(changed))}"{" hidden" if k else ""}>'
            + board_html(view, bad=(k == bad_step))
            + changes
            + "</section>"
        )
    trace_items = ['<li value="0">initial state</li>']

    def item(st) -> str:
        by = player_of(st.player)
        cls = ' class="bad"' if st.index == bad_step else ""
        return f'<li value="{st.index}"{cls}>{esc(by)}: {esc(st.action.get("label", "?"))}</li>'

    for decision, forced in decision_groups(cex.steps):  # forced passes (reduction) folded under their decision
        if decision is not None:
            trace_items.append(item(decision))
        if forced:
            inner = "".join(item(st) for st in forced)
            trace_items.append(
                f'<li class="forced-run"><details><summary>{"then " if decision is not None else ""}{esc(forced_summary(forced, forced[0].before))}</summary>'
                f'<ol start="{forced[0].index}">{inner}</ol></details></li>'
            )
    if n == 0:
        trace_items[0] = '<li value="0" class="bad">initial state</li>'
    rules = ", ".join(cex.rules) if cex.rules else "—"
    banner = (
        f'<div id="violation-banner" class="banner" hidden><b>✗ {esc(cex.invariant)} breaks here</b> '
        f"({esc(violation_place(cex))}): {esc(cex.message)}<br>"
        f"<b>Rule{'s' if len(cex.rules) != 1 else ''}:</b> <span id=\"violated-rules\">{esc(rules)}</span> — {esc(cex.statement)}</div>"
    )
    # the violating step in full: every value the invariant could have compared
    before_obs = obs[-2] if n else None
    inv = next((i for i in (getattr(run.result, "invariants", None) or []) if getattr(i, "id", None) == cex.invariant), None)
    full = reads_table(getattr(inv, "reads", None), before_obs or {}, obs[-1], names, n) if n else ""
    full += (
        "<details id=\"observations\"><summary>The observations "
        + ("before and after the violating step" if n else "of the initial state")
        + " (JSON, in full)</summary><div class=\"grid2\">"
        + (f"<div><h3>before step {n}</h3>{_json_block(before_obs)}</div>" if n else "")
        + f"<div><h3>{'after step ' + str(n) if n else 'initial state'}</h3>{_json_block(obs[-1])}</div></div></details>"
    )
    known = getattr(cex, "baselined", None)
    known_banner = (
        f'<div class="banner v-known" id="known"><b>Known disagreement (baseline):</b> {esc(known)}. It does not fail the board.</div>'
        if known is not None
        else ""
    )
    group_html = _group_section(group) if group is not None else ""
    heading = esc(f"{cex.invariant} violated") if group is None or group.count == 1 else esc(
        f"root cause #{group.number}: {cex.invariant} violated, and {group.count - 1} more like it"
    )

    def picture(key: str, heading: str, files: list[tuple[str, str]]) -> str:
        svg, msg = pictures.get(key, (None, "not drawn"))
        links = " · ".join(f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in files)
        if svg is None:
            inner = f'<p class="render-failed">The SVG was not rendered: {esc(msg)}. The DOT source is written: {links}.</p>'
            return f"<h2>{esc(heading)}</h2>{inner}"
        return (
            f'<h2>{esc(heading)} <button class="fit" data-target="pic-{key}">fit to width</button></h2>'
            f'<p class="muted">{links}</p><div class="pic" id="pic-{key}">{inline_svg(svg, key)}</div>'
        )

    body = f"""
<header class="top"><h1>{heading}</h1>
<div>{esc(cex.board)} · engine <code>{esc(cex.engine)}</code> · <a href="{esc(index_href)}">back to the report</a></div></header>
<main>
{known_banner}
<div class="banner v-fail"><b>{esc(cex.invariant)}</b>: {esc(cex.statement)}<br>
<b>Rules:</b> {esc(rules)} (docs/rules.md) · <b>found:</b> {esc(cex.message)} · {esc(violation_place(cex))} ·
{esc(_trace_title(cex))}: {n} step{"s" if n != 1 else ""}</div>
{_stderr_html(cex)}{group_html}
<h2>Step by step</h2>
<div class="viewer">
<div class="controls">
<button id="first" type="button">« start</button>
<button id="prev" type="button">◀ previous</button>
<span id="step-number">Initial state</span>
<button id="next" type="button">next ▶</button>
<button id="to-violation" type="button">go to the violation »</button>
<span class="muted">(← → keys)</span>
</div>
<div>Action: <span id="action-label">(the board as given)</span></div>
<div id="events"></div>
{banner}
<div class="viewer-body">
<div class="boards">{"".join(sections)}
<p class="muted">Orange outline: changed by the step. Hover a cell for details.</p></div>
<ol class="trace" id="trace-list" start="0">{"".join(trace_items)}</ol>
</div>
</div>
<h2>The violating step in full</h2>
{full}
{picture("trace", "The trace", [("DOT", f"{name}.dot"), ("SVG", f"{name}.svg"), ("ITF trace", f"{name}.itf.json")])}
{picture("graph", "The state graph", [("DOT", f"{name}.graph.dot"), ("SVG", f"{name}.graph.svg")])}
</main>"""
    return page(f"{cex.invariant} on {cex.board}", body, VIEWER_JS, f' data-violation-step="{bad_step}"')


def _group_section(group) -> str:
    """A root cause's page: what it hit, and every counterexample of it."""
    inv = ", ".join(f"{esc(i)} ({n})" for i, n in group.invariants().items())
    boards = group.boards()
    rows = []
    for m in group.members:
        c = m.cex
        labels = "".join(f"<li>{esc(x)}</li>" for x in c.labels)
        known = f"<br><span class=muted>known (baseline): {esc(c.baselined)}</span>" if getattr(c, "baselined", None) is not None else ""
        rows.append(
            f'<tr id="{esc(member_anchor(m))}"><td><code>{esc(m.board)}</code></td><td>{esc(c.invariant)}</td><td>{esc(c.message)}{known}</td>'
            f"<td class=num>{len(c.labels)}</td><td><details><summary>trace</summary><ol>{labels}</ol></details></td></tr>"
        )
    return (
        f'<h2>Root cause #{group.number}</h2><p id="group-summary"><b>{group.count} counterexample{"s" if group.count != 1 else ""}</b> '
        f"on <b>{len(boards)} board{'s' if len(boards) != 1 else ''}</b> ({inv}): family <i>{esc(group.family)}</i>, broken {esc(group.where)}. "
        "They share the invariant family and the violating step (docs/reports.md); the first is shown step by step below.</p>"
        '<details id="members"' + (" open" if group.count <= 12 else "") + f"><summary>all {group.count} counterexamples</summary>"
        '<table class="data"><tr><th>board</th><th>invariant</th><th>found</th><th class=num>steps</th><th>trace</th></tr>'
        + "".join(rows)
        + "</table></details>"
    )


def member_anchor(m) -> str:
    return f"cex-{m.run_index}-{m.cex_index}"


# -- the index ----------------------------------------------------------------------------------


def _stderr_html(cex) -> str:
    """A crashed engine's last stderr lines (its traceback), as the engine wrote them."""
    tail = getattr(cex, "engine_stderr", ())
    if not tail:
        return ""
    return f'<h2 id="engine-stderr">The engine\'s stderr when it crashed (its last {len(tail)} line{"s" if len(tail) != 1 else ""})</h2>\n<pre class="stderr">{esc(chr(10).join(tail))}</pre>\n'


def _properties_count(cols: list[dict]) -> str:
    """What was checked, counted as the command line counts it: the invariants (``check: ... (N
    boards, 52 invariants)``), then the structural checks every exploration makes (deadlock,
    cycle, engine fault), named apart so the two counts never disagree."""
    struct = [c["id"] for c in cols if c.get("family") == "structural"]
    n_inv = len(cols) - len(struct)
    text = f"{n_inv} invariant{'s' if n_inv != 1 else ''}"
    return text + (f" and {len(struct)} structural check{'s' if len(struct) != 1 else ''} ({', '.join(struct)})" if struct else "")


def index_page(
    runs: list[Run], names: dict, errors: list[dict] = (), title: str = "bpcheck check", meta: dict | None = None, groups=None, left_out: int = 0
) -> str:
    """`names`: (run index, counterexample index) -> the stem of the page that shows it (its
    group's page when `groups` are given: reports/groups.py). `left_out`: counterexamples a
    ``--max-counterexamples`` bound left out of the run's outputs."""
    meta = meta or {}
    if groups is None:
        groups = group_runs(runs)
    group_of = {(m.run_index, m.cex_index): g for g in groups for m in g.members}
    verdicts = [r.verdict for r in runs]
    n_fail, n_inc, n_pass = verdicts.count("fail"), verdicts.count("inconclusive"), verdicts.count("pass")
    n_skip = verdicts.count("skipped")
    overall = "error" if errors else ("fail" if n_fail else ("inconclusive" if n_inc or refused_unchecked(runs) else "pass"))
    several = len({r.engine for r in runs}) > 1
    n_cex = sum(len(r.counterexamples) for r in runs)

    # columns: every invariant in the order the runs list them
    cols: list[dict] = []
    seen: set[str] = set()
    for r in runs:
        for row in r.rows():
            if row["id"] not in seen:
                seen.add(row["id"])
                cols.append(row)
    rows_by_run = [{row["id"]: row for row in r.rows()} for r in runs]
    cex_link: dict[tuple[int, str], str] = {}
    cex_known: dict[tuple[int, str], str] = {}
    for ri, r in enumerate(runs):
        for ci, c in enumerate(r.counterexamples):
            href = f"counterexamples/{names[(ri, ci)]}.html#cex-{ri}-{ci}"
            if getattr(c, "baselined", None) is None:
                cex_link.setdefault((ri, c.invariant), href)
            else:
                cex_known.setdefault((ri, c.invariant), href)

    parts = [
        f'<header class="top"><h1>{esc(title)}</h1><div>bpcheck {esc(__version__)}'
        + "".join(f" · {esc(k)}: <code>{esc(v)}</code>" for k, v in meta.items())
        + "</div></header><main>"
    ]
    parts.append(
        f'<div class="banner v-{overall}" id="overall"><b>{overall.upper()}</b>: {n_pass} passed, {n_fail} failed, '
        f"{n_inc} inconclusive" + (f", {n_skip} skipped" if n_skip else "") + (f", {len(errors)} bad input" if errors else "") + f" · {len(runs)} run{'s' if len(runs) != 1 else ''}"
        f" · {_properties_count(cols)} · {n_cex} counterexample{'s' if n_cex != 1 else ''}"
        + (f" in {len(groups)} root cause{'s' if len(groups) != 1 else ''}" if n_cex else "")
        + (f" ({left_out} more left out)" if left_out else "")
        + "</div>"
    )
    if errors:
        parts.append("<h2>Bad input</h2><ul>")
        parts += [f"<li><code>{esc(e['file'])}</code>: {esc(e.get('field') or '')}: {esc(e['problem'])}</li>" for e in errors]
        parts.append("</ul>")

    if n_skip:
        parts.append('<h2>Skipped boards</h2><p class="muted">The engine refused these boards (a card or mechanic it lacks): nothing was checked on them.</p><ul id="skipped">')
        parts += [
            f"<li><code>{esc(r.board)}</code>" + (f" [{esc(r.engine)}]" if several else "") + f": {esc(r.skip_reason or '')}</li>"
            for r in runs
            if r.verdict == "skipped"
        ]
        parts.append("</ul>")

    # protocol v2: what the engine does not observe is never compared (text and JSON list it too)
    partial = [r for r in runs if r.not_compared]
    if partial:
        parts.append('<h2>Not compared</h2><p class="muted">The engine does not observe these parts of the observation: '
                     'they were not compared, fingerprinted or judged.</p><ul id="not-compared">')
        parts += [
            f"<li><code>{esc(r.board)}</code>" + (f" [{esc(r.engine)}]" if several else "") + ": "
            + ", ".join(f"<code>{esc(p)}</code>" for p in r.not_compared) + "</li>"
            for r in partial
        ]
        parts.append("</ul>")

    # counterexamples, by root cause (reports/groups.py): each group once, with its count and boards
    parts.append("<h2>Counterexamples by root cause</h2>")
    new = [g for g in groups if not g.known]
    known = [g for g in groups if g.known]
    if left_out:
        parts.append(
            f'<p class="banner v-inconclusive" id="left-out">{left_out} counterexample{"s" if left_out != 1 else ""} left out by '
            "--max-counterexamples: the verdicts count them (the matrix marks them ✗), the pages do not show them.</p>"
        )
    if new:
        parts.append(
            '<p class="muted">Counterexamples of one invariant family that break at the same step (the same kind of action, the same '
            "step of the turn before and after it) are one group: one bug is listed once, with the boards it hit (docs/reports.md).</p>"
        )
        parts.append(_groups_table(new, several, "counterexamples"))
    else:
        parts.append('<p class="muted">None: no invariant was violated.</p>')
    if known:
        parts.append(
            '<h2>Known disagreements (baseline)</h2><p class="muted">Listed in the baseline with their reason (--baseline): they do not fail a board.</p>'
        )
        parts.append(_groups_table(known, several, "known"))

    # coverage
    total_checks: dict[str, int] = {c["id"]: 0 for c in cols}
    tally: dict[str, dict[str, int]] = {c["id"]: {} for c in cols}
    for rows in rows_by_run:
        for pid, row in rows.items():
            total_checks[pid] += row["checked"]
            tally[pid][row["verdict"]] = tally[pid].get(row["verdict"], 0) + 1
    inv_cols = [c for c in cols if c.get("family") != "structural"]
    exercised = [c for c in inv_cols if total_checks[c["id"]] > 0]
    pct = (100 * len(exercised) // len(inv_cols)) if inv_cols else 0
    states = sum(r.explore.states for r in runs)
    transitions = sum(r.explore.transitions for r in runs)
    parts.append("<h2>Coverage</h2>")
    parts.append(
        f'<p id="coverage-summary"><b>{len(exercised)} of {len(inv_cols)} invariants ({pct}%)</b> were exercised on at least one board '
        f"(their situation arose); {states:,} states and {transitions:,} transitions explored in all.</p>"
    )
    fams: dict[str, list[dict]] = {}
    for c in inv_cols:
        fams.setdefault(c.get("family", "?"), []).append(c)
    parts.append('<div class="grid2"><table class="data"><tr><th>family</th><th class=num>invariants</th><th class=num>exercised</th><th class=num>checks</th></tr>')
    for fam, cs in fams.items():
        ex = sum(1 for c in cs if total_checks[c["id"]] > 0)
        parts.append(f"<tr><td>{esc(fam)}</td><td class=num>{len(cs)}</td><td class=num>{ex}</td><td class=num>{sum(total_checks[c['id']] for c in cs):,}</td></tr>")
    parts.append("</table>")
    actions: dict[str, int] = {}
    for r in runs:
        for k, v in r.explore.action_counts.items():
            actions[k] = actions.get(k, 0) + v
    parts.append('<table class="data"><tr><th>action kind</th><th class=num>transitions</th></tr>')
    parts += [f"<tr><td><code>{esc(k)}</code></td><td class=num>{v:,}</td></tr>" for k, v in sorted(actions.items())]
    parts.append("</table></div>")
    parts.append(
        '<h3>Per invariant</h3><table class="data" id="invariants"><tr><th>ID</th><th>family</th><th>kind</th><th class=num>checks</th>'
        "<th class=num>held</th><th class=num>violated</th><th class=num>vacuous</th><th class=num>held so far</th><th>rules</th><th>statement</th></tr>"
    )
    for c in cols:
        t = tally[c["id"]]
        parts.append(
            f"<tr><td><code>{esc(c['id'])}</code></td><td>{esc(c.get('family', ''))}</td><td>{esc(c.get('kind', ''))}</td>"
            f"<td class=num>{total_checks[c['id']]:,}</td><td class=num>{t.get('held', 0)}</td><td class=num>{t.get('violated', 0)}</td>"
            f"<td class=num>{t.get('vacuous', 0)}</td><td class=num>{t.get('held so far', 0)}</td>"
            f"<td>{esc(', '.join(c.get('rules') or []))}</td><td>{esc(c.get('statement', ''))}</td></tr>"
        )
    parts.append("</table>")

    # the matrix
    parts.append("<h2>Boards × invariants</h2>")
    parts.append(
        '<p class="legend"><span class="verdict v-held">held: exercise count</span><span class="verdict v-vacuous">· vacuous</span>'
        '<span class="verdict v-violated">✗ violated (link)</span><span class="verdict v-known">≈ known (baseline)</span>'
        '<span class="verdict v-held-so-far">held so far (bound hit)</span></p>'
    )
    parts.append('<div class="matrix-wrap"><table class="matrix" id="matrix"><thead><tr><th class="rowh">board</th>')
    parts += [f'<th class="rot" title="{esc(c.get("statement", ""))}"><div>{esc(c["id"])}</div></th>' for c in cols]
    parts.append("</tr></thead><tbody>")
    for ri, r in enumerate(runs):
        label = r.board + (f" [{r.engine}]" if several else "")
        parts.append(f'<tr><th class="rowh" title="{esc(r.verdict)}">{_verdict(r.verdict)} {esc(label)}</th>')
        for c in cols:
            row = rows_by_run[ri].get(c["id"])
            if row is None:
                parts.append("<td></td>")
                continue
            v = row["verdict"]
            tip = f"{c['id']} on {r.board}: {v}, situation arose {row['checked']} times"
            if v == "violated" and (ri, c["id"]) not in cex_link and (ri, c["id"]) in cex_known:
                v, tip = "known", tip + " (a known disagreement: baseline)"
                inner = f'<a href="{esc(cex_known[(ri, c["id"])])}">≈</a>'
            elif v == "violated":
                href = cex_link.get((ri, c["id"]), "")
                inner = f'<a href="{esc(href)}">✗</a>' if href else "✗"
            elif v == "vacuous":
                inner = "·"
            elif v == "skipped":
                inner = "–"
            else:
                inner = esc(_short(row["checked"]))
            parts.append(f'<td class="m-{esc(v.replace(" ", "-"))}" title="{esc(tip)}">{inner}</td>')
        parts.append("</tr>")
    parts.append("</tbody></table></div>")

    # boards
    parts.append(
        '<h2>Boards</h2><table class="data" id="boards"><tr><th>board</th>' + ("<th>engine</th>" if several else "")
        + "<th>verdict</th><th class=num>states</th><th class=num>transitions</th><th class=num>depth</th>"
        "<th class=num>terminal</th><th>bound hit</th><th>goals reached</th><th>counterexamples</th></tr>"
    )
    for ri, r in enumerate(runs):
        x = r.explore
        goals = r.goals()
        g = f"{sum(1 for g in goals if g['reached'])}/{len(goals)}" if goals else "—"
        links = ", ".join(
            f'<a href="counterexamples/{esc(names[(ri, ci)])}.html#cex-{ri}-{ci}">{esc(c.invariant)}</a>'
            + (f" (#{group_of[(ri, ci)].number})" if (ri, ci) in group_of else "")
            for ci, c in enumerate(r.counterexamples)
        )
        parts.append(
            f"<tr><td><code>{esc(r.board)}</code> <span class=muted>{esc(r.board_name)}</span></td>"
            + (f"<td><code>{esc(r.engine)}</code></td>" if several else "")
            + f"<td>{_verdict(r.verdict)}</td><td class=num>{x.states:,}</td><td class=num>{x.transitions:,}</td>"
            f"<td class=num>{x.max_depth}</td><td class=num>{x.terminal_states:,}</td><td>{esc(x.bound_hit or (r.skip_reason and 'skipped: ' + r.skip_reason) or '')}</td>"
            f"<td>{g}</td><td>{links or '—'}</td></tr>"
        )
    parts.append("</table>")
    parts.append(
        '<p class="muted">Also in this folder: <a href="junit.xml">junit.xml</a> · <a href="results.sarif">results.sarif</a> · '
        '<a href="summary.md">summary.md</a> · per counterexample: DOT, SVG and ITF trace (counterexamples/).</p></main>'
    )
    return page(title, "\n".join(parts))


def _groups_table(groups, several: bool, table_id: str) -> str:
    rows = []
    for g in groups:
        first = g.first
        page = f"counterexamples/{_page_stem(g)}.html"
        boards = g.boards()
        blist = "".join(f"<li><code>{esc(b)}</code></li>" for b in boards)
        board_cell = (
            f"<code>{esc(boards[0])}</code>" if len(boards) == 1 else f"<details><summary>{len(boards)} boards</summary><ul>{blist}</ul></details>"
        )
        inv = "<br>".join(f"{esc(i)}" + (f" ×{n}" if n > 1 else "") for i, n in g.invariants().items())
        reason = f"<br><span class=muted>{esc(first.cex.baselined)}</span>" if g.known else ""
        rows.append(
            f'<tr><td class=num>#{g.number}</td>' + (f"<td><code>{esc(g.engine)}</code></td>" if several else "")
            + f'<td><a class="cex-link" href="{esc(page)}">{inv}</a></td><td>{esc(g.family)}</td><td>{esc(g.where)}</td>'
            f"<td class=num>{g.count}</td><td>{board_cell}</td><td>{esc(first.cex.message)}{reason}</td></tr>"
        )
    return (
        f'<table class="data" id="{esc(table_id)}"><tr><th class=num>#</th>' + ("<th>engine</th>" if several else "")
        + "<th>invariants</th><th>family</th><th>where it breaks</th><th class=num>counterexamples</th><th>boards</th><th>first found</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _page_stem(group) -> str:
    return group.page or f"group-{group.number}"


def _short(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n // 1000}k"
    return str(n)


__all__ = ["board_html", "cex_page", "index_page", "inline_svg", "page"]


def _trace_title(cex) -> str:
    """'shortest trace' for a BFS counterexample; DFS ones are not known to be shortest."""
    return getattr(cex, "trace_title", "shortest trace")
