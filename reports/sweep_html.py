"""`bpcheck sweep --report DIR`: one self-contained page, a table with a row per card (its
verdict, boards played, findings) and the findings grouped by signature (docs/sweep.md). It reads
the sweep's result document only; no verdict is re-derived."""

from __future__ import annotations

from bpcheck import __version__
from bpcheck.reports.html import CSS, esc

_CLASS = {"finding": "bad", "no playable board": "warn", "not judged": "vac", "clean": "ok"}


def sweep_html(doc: dict) -> str:
    v = doc["verdicts"]
    rows = []
    for c in doc["cards"]:
        cls = _CLASS.get(c["verdict"], "")
        found = "<br>".join(f"{esc(f['invariant'])} [{esc(f['signature'] or '')}] on {esc(f['board'])}: {esc(f['message'])}" for f in c["findings"])
        known = "<br>".join(f"{esc(f['invariant'])} [{esc(f['signature'] or '')}] (baseline: {esc(f['reason'])})" for f in c["known"])
        boards = "<br>".join(f"{esc(b['file'])}: {esc(b['verdict'])}, {b['states']} states" + (f" ({esc(b['refused'])})" if b.get("refused") else "") for b in c["boards"])
        unknown = "<br>".join(esc(x) for x in c["profile_unknown"])
        rows.append(
            f"<tr><td>{c['code']}</td><td>{esc(c['name'])}</td><td>{esc(c['kind'])} {esc(c['subtype'])}</td>"
            f"<td class='{cls}'>{esc(c['verdict'])}</td><td>{c['played']} / {len(c['boards'])}</td><td>{boards}</td>"
            f"<td>{found}{'<br>' if found and known else ''}{known}</td><td>{unknown}</td></tr>"
        )
    groups = "".join(
        f"<tr><td>{esc(g['invariant'])}</td><td>{esc(g['signature'] or '')}</td><td>{esc(', '.join(g['rules']))}</td>"
        f"<td>{len(g['cards'])}</td><td>{esc(', '.join(str(x) for x in g['cards']))}</td></tr>"
        for g in doc["findings"]
    )
    s = doc["settings"]
    extra = "td.bad{background:var(--bad-bg);color:var(--bad)} td.ok{background:var(--ok-bg);color:var(--ok)} td.warn{background:var(--warn-bg);color:var(--warn)} td.vac{background:var(--vac)}"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>bpcheck sweep</title>"
        f"<style>{CSS}\n{extra}</style></head><body><header class='top'><h1>bpcheck sweep</h1>"
        f"<div>bpcheck {esc(__version__)} · engine {esc(s['engine'])} · database {esc(s['cards_db'])} · at most {s['max_states']} states a board"
        f"{' · partial (not every card judged yet)' if not doc['complete'] else ''}</div></header><main>"
        f"<p>{doc['judged']} of {doc['selected']} cards judged: {v['finding']} with findings, {v['clean']} clean, "
        f"{v['not judged']} not judged, {v['no playable board']} without a playable board.</p>"
        "<h2>Findings by signature</h2><table class='data'><tr><th>invariant</th><th>signature</th><th>rules</th><th>cards</th><th>passcodes</th></tr>"
        f"{groups}</table><h2>Cards</h2><table class='data'><tr><th>passcode</th><th>name</th><th>card</th><th>verdict</th><th>played</th>"
        f"<th>boards</th><th>findings</th><th>profile unknown</th></tr>{''.join(rows)}</table></main></body></html>\n"
    )
