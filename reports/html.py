"""The HTML report: an index (boards × invariants with verdicts, exercise counts, coverage) and a
page per counterexample (its pictures and a step-by-step board viewer).

Self-contained: inline CSS and JavaScript, the SVGs inlined, no network. Everything is read from
the runs (board results, invariant rows, counterexample objects); no verdict is re-derived.
"""

from __future__ import annotations

import re

from bpcheck import __version__
from bpcheck.reports.board import PN, BoardView, Cell, board_view, event_summary
from bpcheck.reports.graphviz import violation_place
from bpcheck.reports.runs import Run
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


# -- the counterexample page --------------------------------------------------------------------


def cex_page(run: Run, cex, name: str, pictures: dict, index_href: str = "../index.html") -> str:
    """`pictures`: {"trace": (svg text | None, message), "graph": (svg text | None, message)}."""
    n = len(cex.steps)
    obs = [cex.initial_observation] + [s.after for s in cex.steps]
    bad_step = n  # every kind shows on the last state or the last step
    sections = []
    for k, o in enumerate(obs):
        prev = obs[k - 1] if k else None
        view = board_view(o, prev, "initial state" if k == 0 else f"after step {k}")
        if k == 0:
            action, events = "(the board as given)", ""
        else:
            st = cex.steps[k - 1]
            who = PN[st.player] if st.player is not None else "--"
            action = f"{who}: {st.action.get('label', '?')}"
            events = "events: " + (event_summary(st.events, 12) or "none")
        changed = view.changed_keys()
        sections.append(
            f'<section class="state" data-step="{k}" data-action="{esc(action)}" data-events="{esc(events)}"'
            f' data-changed="{esc(" ".join(changed))}"{" hidden" if k else ""}>'
            + board_html(view, bad=(k == bad_step))
            + "</section>"
        )
    trace_items = ['<li value="0">initial state</li>']

    def item(st) -> str:
        who = PN[st.player] if st.player is not None else "--"
        cls = ' class="bad"' if st.index == bad_step else ""
        return f'<li value="{st.index}"{cls}>{esc(who)}: {esc(st.action.get("label", "?"))}</li>'

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
<header class="top"><h1>{esc(cex.invariant)} violated</h1>
<div>{esc(cex.board)} · engine <code>{esc(cex.engine)}</code> · <a href="{esc(index_href)}">back to the report</a></div></header>
<main>
<div class="banner v-fail"><b>{esc(cex.invariant)}</b>: {esc(cex.statement)}<br>
<b>Rules:</b> {esc(rules)} (docs/rules.md) · <b>found:</b> {esc(cex.message)} · {esc(violation_place(cex))} ·
{esc(_trace_title(cex))}: {n} step{"s" if n != 1 else ""}</div>
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
{picture("trace", "The trace", [("DOT", f"{name}.dot"), ("SVG", f"{name}.svg"), ("ITF trace", f"{name}.itf.json")])}
{picture("graph", "The state graph", [("DOT", f"{name}.graph.dot"), ("SVG", f"{name}.graph.svg")])}
</main>"""
    return page(f"{cex.invariant} on {cex.board}", body, VIEWER_JS, f' data-violation-step="{bad_step}"')


# -- the index ----------------------------------------------------------------------------------


def index_page(runs: list[Run], names: dict, errors: list[dict] = (), title: str = "bpcheck check", meta: dict | None = None) -> str:
    meta = meta or {}
    verdicts = [r.verdict for r in runs]
    n_fail, n_inc, n_pass = verdicts.count("fail"), verdicts.count("inconclusive"), verdicts.count("pass")
    n_skip = verdicts.count("skipped")
    overall = "error" if errors else ("fail" if n_fail else ("inconclusive" if n_inc else "pass"))
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
    for ri, r in enumerate(runs):
        for ci, c in enumerate(r.counterexamples):
            cex_link.setdefault((ri, c.invariant), f"counterexamples/{names[(ri, ci)]}.html")

    parts = [
        f'<header class="top"><h1>{esc(title)}</h1><div>bpcheck {esc(__version__)}'
        + "".join(f" · {esc(k)}: <code>{esc(v)}</code>" for k, v in meta.items())
        + "</div></header><main>"
    ]
    parts.append(
        f'<div class="banner v-{overall}" id="overall"><b>{overall.upper()}</b>: {n_pass} passed, {n_fail} failed, '
        f"{n_inc} inconclusive" + (f", {n_skip} skipped" if n_skip else "") + (f", {len(errors)} bad input" if errors else "") + f" · {len(runs)} run{'s' if len(runs) != 1 else ''}"
        f" · {len(cols)} properties · {n_cex} counterexample{'s' if n_cex != 1 else ''}</div>"
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

    # counterexamples
    parts.append("<h2>Counterexamples</h2>")
    if n_cex:
        parts.append('<table class="data" id="counterexamples"><tr><th>board</th>' + ("<th>engine</th>" if several else "")
                     + "<th>invariant</th><th>where</th><th class=num>steps</th><th>found</th></tr>")
        for ri, r in enumerate(runs):
            for ci, c in enumerate(r.counterexamples):
                href = f"counterexamples/{names[(ri, ci)]}.html"
                parts.append(
                    f"<tr><td><code>{esc(r.board)}</code></td>" + (f"<td><code>{esc(r.engine)}</code></td>" if several else "")
                    + f'<td><a class="cex-link" href="{esc(href)}">{esc(c.invariant)}</a></td><td>{esc(c.at)}</td>'
                    f"<td class=num>{len(c.steps)}</td><td>{esc(c.message)}</td></tr>"
                )
        parts.append("</table>")
    else:
        parts.append('<p class="muted">None: no invariant was violated.</p>')

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
        '<span class="verdict v-violated">✗ violated (link)</span><span class="verdict v-held-so-far">held so far (bound hit)</span></p>'
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
            if v == "violated":
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
            f'<a href="counterexamples/{esc(names[(ri, ci)])}.html">{esc(c.invariant)}</a>' for ci, c in enumerate(r.counterexamples)
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
