"""`bpcheck sweep` cost on a fixed slice of a card database (docs/performance.md, "bpcheck sweep").

    python benchmarks/sweep_bench.py [--cards N] [-j N] [--cards-db FILE] [--max-states N]

Sweeps the first N passcodes (default 200) of the database (default the kit's cards-full.cdb) on
the EDOPro core and prints the wall time, the cost per card, cards per hour, the verdicts and the
projection for the whole database."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from bpcheck.engines.ocgcore import default_paths
from bpcheck.model.cdb import open_db


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", type=int, default=200)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--cards-db", default=os.path.join(os.path.dirname(default_paths()[2]), "cards-full.cdb"))
    ap.add_argument("--max-states", type=int, default=2000)
    a = ap.parse_args()
    db = open_db(a.cards_db)
    codes = sorted(db.codes())
    with tempfile.TemporaryDirectory() as tmp:
        lst = os.path.join(tmp, "slice.txt")
        with open(lst, "w", encoding="utf-8") as f:
            f.write("\n".join(str(c) for c in codes[: a.cards]) + "\n")
        out = os.path.join(tmp, "sweep.json")
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "bpcheck.cli.main", "sweep", "-q", "--cards-db", a.cards_db, f"@{lst}", "-j", str(a.jobs),
                        "--max-states", str(a.max_states), "--json", out], stdout=subprocess.DEVNULL, check=False)
        wall = time.monotonic() - t0
        doc = json.load(open(out, encoding="utf-8"))
    n = doc["judged"]
    per = wall / max(n, 1)
    boards = [b for c in doc["cards"] for b in c["boards"]]
    print(f"{n} cards, -j {a.jobs}: {wall:.0f} s, {per:.2f} s a card, {3600 / per:,.0f} cards/h; verdicts {doc['verdicts']}")
    print(f"boards {len(boards)}, refused {sum(b['verdict'] == 'skipped' for b in boards)}, states {sum(b['states'] for b in boards)}, bound hit {sum(bool(b['bound_hit']) for b in boards)}")
    print(f"whole database ({len(codes)} cards): {len(codes) * per / 3600:.1f} h here; Ray at this per-card cost of a worker ({per * a.jobs:.2f} s): 8 workers {len(codes) * per * a.jobs / 8 / 60:.0f} min, 32 workers {len(codes) * per * a.jobs / 32 / 60:.0f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
