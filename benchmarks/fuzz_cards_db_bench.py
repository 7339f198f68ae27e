#!/usr/bin/env python3
"""What `bpcheck fuzz --cards-db` draws, against the built-in pool (issue 30 item 5).

Not a test: it measures. Figures go into docs/performance.md ("Fuzzing from a card database")
and docs/fuzzing.md. Run it niced:
    nice python benchmarks/fuzz_cards_db_bench.py [--boards N] [--seed S] [--cards-db FILE] [--out FILE.json]

For each way of drawing (the pool's 59 cards; the pool's cards the core plays alone, what
`bpcheck fuzz --engine ocgcore` draws from without --cards-db; the full database), with the
strategies of `bpcheck fuzz` and the same seed:
- refused / started: each drawn board started on a fresh engine (the EDOPro core, and the
  reference model), as the search does before exploring it: the share the engine refuses;
- the ATK-difference spread of the battles a board offers: for every pair (a monster of the turn
  player, a monster of the other player) with known ATK, |ATK difference|: pairs, pairs of two
  different cards closer than 100 ATK (equal ATK included), distinct differences, the smallest
  non-zero one; the same over Normal Monsters only (the issue's complaint);
- distinct cards drawn, and the share of drawn monsters whose profile has a Battle Phase effect
  (tier 2 of bpcheck.harness.strategies.battle_tier);
- the CPU seconds to index the database (profiles of every card, once per run) and per board drawn.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

from hypothesis import HealthCheck, Phase, given, seed, settings

from bpcheck import __version__
from bpcheck.engines import make_engine
from bpcheck.engines.interface import EngineRefusal
from bpcheck.engines.ocgcore import default_paths
from bpcheck.harness.board_writer import document_board
from bpcheck.harness.fuzz import _close, cards_the_engine_plays
from bpcheck.harness.strategies import battle_tier, board_documents, db_index
from bpcheck.model.cards import builtin_pool
from bpcheck.model.cdb import TYPE_MONSTER, TYPE_NORMAL, open_db
from bpcheck.model.profile import profile


def draw(strategy, n: int, seed_value: int) -> tuple[list[dict], float]:
    docs: list[dict] = []

    @settings(max_examples=n, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck), deadline=None)
    @seed(seed_value)
    @given(strategy)
    def collect(doc):
        docs.append(doc)

    t = time.process_time()
    collect()
    return docs, time.process_time() - t


def started(docs: list[dict], engine: str, cards_db: str | None) -> dict:
    refused, reasons, t = 0, {}, time.process_time()
    for doc in docs:
        board = document_board(doc, cards_db=cards_db)
        eng = make_engine(engine, cards_db=cards_db)
        try:
            eng.start(board)
        except EngineRefusal as r:
            refused += 1
            key = r.reason.split("(")[0].split(":")[0][:60]
            reasons[key] = reasons.get(key, 0) + 1
        finally:
            _close(eng)
    return {"boards": len(docs), "refused": refused, "started": len(docs) - refused, "refused_share": round(refused / max(1, len(docs)), 3),
            "reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])[:5]), "cpu_s": round(time.process_time() - t, 2)}


def spread(docs: list[dict], facts) -> dict:
    """facts(ref) -> (atk, is_plain_normal, tier, key)."""
    out = {}
    for label, only_normal in (("all monsters", False), ("Normal Monsters", True)):
        diffs, close = [], 0
        for doc in docs:
            tp = doc["turn_player"]
            sides = [[facts(m["card"]) for m in doc.get(f"p{s}", {}).get("monsters", ())] for s in (1, 2)]
            mine, theirs = sides[tp - 1], sides[2 - tp]
            for a in mine:
                for b in theirs:
                    if a[0] is None or b[0] is None or (only_normal and not (a[1] and b[1])):
                        continue
                    d = abs(a[0] - b[0])
                    diffs.append(d)
                    if d < 100 and a[3] != b[3]:
                        close += 1
        nonzero = [d for d in diffs if d]
        out[label] = {"pairs": len(diffs), "different_cards_under_100": close, "distinct_differences": len(set(diffs)),
                      "smallest_nonzero": min(nonzero) if nonzero else None}
    monsters = [facts(m["card"]) for doc in docs for s in ("p1", "p2") for m in doc.get(s, {}).get("monsters", ())]
    out["monsters_drawn"] = len(monsters)
    out["battle_tier_share"] = round(sum(1 for m in monsters if m[2] == 2) / max(1, len(monsters)), 3)
    out["plain_normal_share"] = round(sum(1 for m in monsters if m[1]) / max(1, len(monsters)), 3)
    refs = {x["card"] if isinstance(x, dict) else x for doc in docs for s in ("p1", "p2") for k in ("monsters", "spells", "hand", "graveyard", "banished", "deck") for x in doc.get(s, {}).get(k, ())}
    out["distinct_cards"] = len(refs)
    return out


def main() -> int:
    lib, scripts, cards = default_paths()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cards-db", default=os.path.join(os.path.dirname(cards), "cards-full.cdb"))
    ap.add_argument("--out")
    args = ap.parse_args()
    db = open_db(args.cards_db)
    t = time.process_time()
    index = db_index(args.cards_db)
    index_s = time.process_time() - t
    pool = builtin_pool()
    pool_db = open_db(cards)

    def pool_facts(name):
        c = pool[name]
        row = pool_db.get(int(c.passcode)) if c.passcode.isdigit() else None
        return (c.atk, c.kind == "monster" and c.subtype == "normal", battle_tier(profile(row)) if row is not None else 0, name)

    def db_facts(code):
        e = index.by_code[code]
        return (e.card.atk, db.get(code).type == TYPE_MONSTER | TYPE_NORMAL, e.tier, code)

    played, _refused = cards_the_engine_plays(lambda: make_engine("ocgcore"))
    runs = {
        "pool (59 cards)": (board_documents(), None, pool_facts),
        f"pool, cards the core plays alone ({len(played)})": (board_documents(played), None, pool_facts),
        f"--cards-db {os.path.basename(args.cards_db)} ({len(index.entries)} cards)": (board_documents(cards_db=args.cards_db), args.cards_db, db_facts),
    }
    result = {"version": __version__, "python": platform.python_version(), "seed": args.seed, "boards": args.boards,
              "index_cpu_s": round(index_s, 2), "runs": {}}
    for label, (strategy, cards_db, facts) in runs.items():
        docs, draw_s = draw(strategy, args.boards, args.seed)
        r = {"draw_cpu_s_per_board": round(draw_s / max(1, len(docs)), 4), **spread(docs, facts)}
        r["ocgcore"] = started(docs, "ocgcore", cards_db)
        r["reference"] = started(docs, "reference", cards_db)
        result["runs"][label] = r
        print(label, json.dumps(r), file=sys.stderr, flush=True)
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
