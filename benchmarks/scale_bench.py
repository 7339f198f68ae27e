#!/usr/bin/env python3
"""States, time and memory against board size, one fresh `bpcheck check` process per board.

Not a test: it measures. Figures go into docs/performance.md.

    python benchmarks/scale_bench.py run LABEL [--boards GLOB] [--args "..."]   # -> benchmarks/results/scale-LABEL.json
    python benchmarks/scale_bench.py plot OUT.svg LABEL [LABEL ...]             # states and CPU time against cards
    python benchmarks/scale_bench.py table LABEL [LABEL ...]                     # a Markdown table, per board and total

Each board is checked exactly as a user runs it (`bpcheck check BOARD --json` plus the extra
`--args`), so the figures follow whatever the command does by default in the version measured
(reduction, workers, ...). CPU seconds and peak RSS are the child's (getrusage of the waited-for
child: every worker process it starts is counted too); *cards* is the number of cards on the
board (monsters, Spell/Trap and Field cards, hand, Graveyard, banished and Deck).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def cards_on(path: Path) -> int:
    data = tomllib.loads(path.read_text())
    n = 0
    for side in ("p1", "p2"):
        p = data.get(side, {})
        n += len(p.get("monsters", [])) + len(p.get("spells", [])) + (1 if p.get("field_spell") else 0)
        for pile in ("hand", "graveyard", "banished", "deck"):
            n += len(p.get(pile, []))
    return n


# The child reports its own peak RSS and CPU (and those of any worker processes it waited for)
# on stderr's last line when it exits.
WRAP = (
    "import atexit, json, resource, sys\n"
    "def _r():\n"
    "    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "    sys.stderr.write('\\nBENCH ' + json.dumps({'cpu': s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime, 'rss_kb': max(s.ru_maxrss, c.ru_maxrss)}) + '\\n')\n"
    "atexit.register(_r)\n"
    "from bpcheck.cli.main import main\n"
    "sys.argv = ['bpcheck'] + sys.argv[1:]\n"
    "sys.exit(main())\n"
)


def run(args: argparse.Namespace) -> int:
    boards = [b for b in sorted((ROOT / "boards").glob(args.boards)) if b.name not in args.exclude]
    extra = shlex.split(args.args)
    rows = []
    for b in boards:
        jpath = RESULTS / f".{args.label}-{b.stem}.json"
        RESULTS.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", WRAP, "check", str(b), "--json", str(jpath), *extra],
            capture_output=True, env=dict(os.environ, CI="1"), cwd=ROOT,
        )
        wall = time.perf_counter() - t0
        usage = json.loads(proc.stderr.decode().rsplit("BENCH ", 1)[1])
        doc = json.loads(jpath.read_text())
        jpath.unlink()
        br = doc["boards"][0]
        row = {
            "board": b.name,
            "cards": cards_on(b),
            "verdict": br.get("verdict"),
            "states": br.get("states"),
            "transitions": br.get("transitions"),
            "cpu_s": round(usage["cpu"], 3),
            "wall_s": round(wall, 3),
            "peak_mb": round(usage["rss_kb"] / 1024, 1),
            "exit": proc.returncode,
        }
        rows.append(row)
        print(f"{b.name:50} {row['cards']:>3} cards {row['states']:>9} states {row['cpu_s']:>8.2f} s CPU {row['wall_s']:>8.2f} s wall {row['verdict']}", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"scale-{args.label}.json"
    meta = {"label": args.label, "args": extra, "python": sys.version.split()[0], "cpus": os.cpu_count(), "load": os.getloadavg()}
    out.write_text(json.dumps({"meta": meta, "boards": rows}, indent=1) + "\n")
    tot_cpu = sum(r["cpu_s"] for r in rows)
    tot_wall = sum(r["wall_s"] for r in rows)
    print(f"total: {sum(r['states'] or 0 for r in rows)} states, {tot_cpu:.1f} s CPU, {tot_wall:.1f} s wall -> {out}")
    return 0


def load(label: str) -> dict:
    return json.loads((RESULTS / f"scale-{label}.json").read_text())


def table(args: argparse.Namespace) -> int:
    docs = [load(lb) for lb in args.labels]
    by = [{r["board"]: r for r in d["boards"]} for d in docs]
    names = sorted(set().union(*by), key=lambda n: (by[0].get(n, {}).get("cpu_s", 0)), reverse=True)
    head = "| board | cards | " + " | ".join(f"{lb}: states / CPU s" for lb in args.labels) + " |"
    print(head)
    print("|---|---:|" + "---:|" * len(args.labels))
    for n in names[: args.top]:
        cells = []
        for b in by:
            r = b.get(n)
            cells.append("—" if r is None else f"{r['states']:,} / {r['cpu_s']:.2f}")
        cards = next(b[n]["cards"] for b in by if n in b)
        print(f"| `{n}` | {cards} | " + " | ".join(cells) + " |")
    tots = []
    for b in by:
        tots.append(f"{sum(r['states'] or 0 for r in b.values()):,} / {sum(r['cpu_s'] for r in b.values()):.1f}")
    print(f"| **all {len(names)} boards** | | " + " | ".join(tots) + " |")
    return 0


COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def plot(args: argparse.Namespace) -> int:
    """Two log-scale scatter panels: states against cards, CPU seconds against cards."""
    docs = [load(lb) for lb in args.labels]
    W, H, M = 420, 300, 55
    panels = (("states", "distinct states (log)"), ("cpu_s", "CPU seconds (log)"))
    xs = [r["cards"] for d in docs for r in d["boards"]]
    x0, x1 = 0, max(xs) + 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W + 20}" height="{H + 40}" font-family="sans-serif" font-size="11">']
    for pi, (key, title) in enumerate(panels):
        ox = pi * (W + 20)
        vals = [r[key] for d in docs for r in d["boards"] if r[key]]
        lo = math.floor(math.log10(max(min(vals), 1e-3)))
        hi = math.ceil(math.log10(max(vals)))
        hi = max(hi, lo + 1)

        def px(x: float) -> float:
            return ox + M + (x - x0) / (x1 - x0) * (W - M - 10)

        def py(v: float) -> float:
            return 10 + (hi - math.log10(max(v, 10.0**lo))) / (hi - lo) * (H - M)

        parts.append(f'<rect x="{ox + M}" y="10" width="{W - M - 10}" height="{H - M}" fill="none" stroke="#888"/>')
        for e in range(lo, hi + 1):
            y = py(10.0**e)
            parts.append(f'<line x1="{ox + M}" x2="{ox + W - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
            parts.append(f'<text x="{ox + M - 4}" y="{y + 4:.1f}" text-anchor="end">1e{e}</text>')
        for x in range(0, x1 + 1, 2):
            parts.append(f'<text x="{px(x):.1f}" y="{H - M + 24}" text-anchor="middle">{x}</text>')
        parts.append(f'<text x="{ox + M + (W - M) / 2:.0f}" y="{H - M + 40}" text-anchor="middle">cards on the board</text>')
        parts.append(f'<text x="{ox + 12}" y="{10 + (H - M) / 2:.0f}" transform="rotate(-90 {ox + 12} {10 + (H - M) / 2:.0f})" text-anchor="middle">{title}</text>')
        for di, d in enumerate(docs):
            c = COLORS[di % len(COLORS)]
            for r in d["boards"]:
                if r[key]:
                    parts.append(f'<circle cx="{px(r["cards"]):.1f}" cy="{py(r[key]):.1f}" r="3" fill="{c}" fill-opacity="0.6"><title>{r["board"]}: {r[key]}</title></circle>')
    for di, lb in enumerate(args.labels):
        parts.append(f'<circle cx="{M + 10}" cy="{H + 22}" r="4" fill="{COLORS[di % len(COLORS)]}" transform="translate({di * 160},0)"/>')
        parts.append(f'<text x="{M + 20 + di * 160}" y="{H + 26}">{lb}</text>')
    parts.append("</svg>")
    Path(args.out).write_text("\n".join(parts) + "\n")
    print(f"wrote {args.out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("label")
    r.add_argument("--boards", default="*.toml")
    r.add_argument("--exclude", nargs="*", default=[], metavar="NAME", help="board file names to leave out")
    r.add_argument("--args", default="", help="extra `bpcheck check` arguments, one string")
    p = sub.add_parser("plot")
    p.add_argument("out")
    p.add_argument("labels", nargs="+")
    t = sub.add_parser("table")
    t.add_argument("labels", nargs="+")
    t.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    return {"run": run, "plot": plot, "table": table}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
