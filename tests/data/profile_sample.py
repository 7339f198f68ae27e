"""The stratified sample of cards-full.cdb that tests/data/profile_labels.toml labels by hand.

``python tests/data/profile_sample.py [CDB]`` prints the sample (passcode, stratum, name, text),
the same on every run: strata are tried in the order below (a card falls in the first that
matches), each stratum's cards are sorted by passcode and drawn with random.Random(30).
Alternate artworks (alias set) and Tokens are left out.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))  # noqa: E402 (run from a checkout without install)

from bpcheck.model import cdb as C  # noqa: E402

SEED = 30
# (stratum, how many, predicate on a Card), most specific first
STRATA = [
    ("piercing", 5, lambda c: c.kind == "monster" and re.search(r"piercing", c.text)),
    ("pendulum", 5, lambda c: c.has(C.TYPE_PENDULUM)),
    ("link", 5, lambda c: c.has(C.TYPE_LINK)),
    ("xyz", 5, lambda c: c.has(C.TYPE_XYZ)),
    ("damage-step-text", 10, lambda c: re.search(r"Damage Step|damage calculation", c.text)),
    ("hand-trap", 8, lambda c: c.kind == "monster" and "from your hand" in c.text
     and re.search(r"\(Quick Effect\)|declares an attack|opponent's turn", c.text)),
    ("battle-destruction-trigger", 8, lambda c: re.search(r"destroyed by battle|destroys[^.:;]{0,60}by battle", c.text)
     and ":" in c.text),
    ("atk-modifier", 8, lambda c: re.search(r"\b(?:gains?|loses?)\b[^.;:]{0,40}\bATK\b", c.text)),
    ("counter-trap", 8, lambda c: c.kind == "trap" and c.subtype == "Counter"),
    ("quick-play-spell", 12, lambda c: c.kind == "spell" and c.subtype == "Quick-Play"),
    ("continuous-trap", 8, lambda c: c.kind == "trap" and c.subtype == "Continuous"),
    ("normal-trap", 12, lambda c: c.kind == "trap" and c.subtype == "Normal"),
    ("continuous-spell", 5, lambda c: c.kind == "spell" and c.subtype == "Continuous"),
    ("normal-spell", 10, lambda c: c.kind == "spell" and c.subtype == "Normal"),
    ("effect-monster", 30, lambda c: c.kind == "monster" and c.has(C.TYPE_EFFECT)),
    ("normal-monster", 12, lambda c: c.kind == "monster" and c.has(C.TYPE_NORMAL)),
]


def sample(db: C.CardDB) -> list[tuple[str, C.Card]]:
    pools: dict[str, list[C.Card]] = {name: [] for name, _, _ in STRATA}
    for c in sorted(db, key=lambda c: c.code):
        if c.alias or c.has(C.TYPE_TOKEN):
            continue
        for name, _, pred in STRATA:
            if pred(c):
                pools[name].append(c)
                break
    rng = random.Random(SEED)
    out = []
    for name, n, _ in STRATA:
        for c in sorted(rng.sample(pools[name], n), key=lambda c: c.code):
            out.append((name, c))
    return out


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else str(HERE.parents[3] / "shared" / "ocgcore" / "cards-full.cdb")
    for stratum, c in sample(C.CardDB(path)):
        print(f"## {c.code} [{stratum}] {c.name} ({'/'.join(c.type_names)})")
        print(c.text.replace("\r\n", "\n"))
        print()
