"""Profile every card of a card database and report what the reader decided (docs/profiles.md).

    .venv/bin/python benchmarks/profile_bench.py [CDB]

CDB defaults to $OCG_CARDS_FULL, else ../shared/ocgcore/cards-full.cdb. Prints the time to read
the database and to profile every card, the share of cards with every effect decided, the share
with at least one Battle-Phase-relevant effect (a trigger, a Quick Effect, a Flip effect or a
Spell Speed 2/3 activation), and the counts per effect kind and per Damage Step rule.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from bpcheck.model.cdb import CardDB
from bpcheck.model.profile import profile

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OCG_CARDS_FULL") or str(ROOT.parent / "shared" / "ocgcore" / "cards-full.cdb")
    t0 = time.perf_counter()
    db = CardDB(path)
    cards = list(db)
    t1 = time.perf_counter()
    profiles = [profile(c) for c in cards]
    t2 = time.perf_counter()
    digest = hashlib.sha256(json.dumps([p.to_dict() for p in profiles], sort_keys=True).encode()).hexdigest()
    t3 = time.perf_counter()
    n = len(profiles)
    decided = sum(p.decided for p in profiles)
    relevant = sum(p.battle_relevant for p in profiles)
    kinds = collections.Counter(e.kind.value for p in profiles for e in p.effects)
    effects = sum(kinds.values())
    ds_rules = collections.Counter(e.damage_step["tcg"]["start"].rule for p in profiles for e in p.effects if e.damage_step)
    speeds = collections.Counter(str(e.speed.value) for p in profiles for e in p.effects)
    print(f"database: {path}")
    print(f"cards: {n}; effects: {effects}")
    print(f"read the database: {t1 - t0:.2f} s; profile every card: {t2 - t1:.2f} s ({(t2 - t1) / n * 1e6:.0f} us a card); to JSON: {t3 - t2:.2f} s")
    print(f"cards with every effect decided: {decided} ({decided / n:.1%})")
    print(f"cards with at least one Battle-Phase-relevant effect: {relevant} ({relevant / n:.1%})")
    print("effects per kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])))
    print("effects per Spell Speed: " + ", ".join(f"{k} {v}" for k, v in sorted(speeds.items())))
    print("Damage Step rule (tcg, start): " + ", ".join(f"{k} {v}" for k, v in sorted(ds_rules.items(), key=lambda kv: -kv[1])))
    print(f"profiles sha256: {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
