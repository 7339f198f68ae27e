#!/usr/bin/env python3
"""What reading a hostile input costs: peak memory and time of `bpcheck validate` on the worst
files each limit lets through, or refuses (docs/bad-input.md, "Bounded cost").

Each file is as large as its reader takes (a board: 4 MiB) and built to cost the parser the most
for its size: the most values, the longest dotted keys, the deepest nesting, the longest strings,
the most escapes. Each is read as a board in a fresh process, whose Python heap is traced while
it reads (tracemalloc's peak). The target: at most twice the file's size plus 20 MiB (what the
100,000 values a document may hold cost).

    python benchmarks/input_cost.py [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20
LIMIT = 4 * MiB  # a board file


def fill(head: str, size: int = LIMIT - 64) -> str:
    """`head`, then a comment that brings the file to `size` bytes (comments are skipped by the
    scan and the parser at the cost of reading them)."""
    n = size - len(head.encode()) - 3
    return head + ("#" + "c" * max(0, n) + "\n" if n > 0 else "")


def families() -> dict[str, str]:
    out: dict[str, str] = {}
    out["small board (the constant)"] = (ROOT / "boards" / "000-replay-1.toml").read_text()
    # refused by the scan before the parser: the case and its neighbours, at the size limit
    out["one dotted key of 2 M parts (refused)"] = "x" + ".x" * (LIMIT // 2 - 4) + " = 1\n"
    out["dotted keys past 10,000 parts (refused)"] = fill("".join(f"k{i}.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o = 1\n" for i in range(700)))
    out["an array past 100,000 items (refused)"] = "x = [" + "0," * (LIMIT // 2 - 8) + "]\n"
    # within every limit: the costliest a board file can be
    keys = "".join(f"k{i:06d} = {i}\n" for i in range(99_990))
    out["100,000 keys"] = fill(keys)
    dotted = "".join(f"d{i}.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o = 1\n" for i in range(666))
    out["10,000 dotted-key parts (keys of 16)"] = fill(dotted)
    out["100,000 array items of 40-byte strings"] = "x = [" + ",".join(f'"{i:040d}"' for i in range(LIMIT // 43 - 10)) + "]\n"
    out["100,000 one-digit items"] = fill("x = [" + "1," * 99_990 + "]\n")
    out["one 4 MiB string"] = 'x = "' + "a" * (LIMIT - 16) + '"\n'
    out["one 4 MiB string of escapes"] = 'x = "' + "\\u00e9" * ((LIMIT - 16) // 6) + '"\n'
    out["one 4 MiB string of 4-byte characters"] = 'x = "' + "\U0001F600" * ((LIMIT - 16) // 4) + '"\n'
    out["nesting 63 deep, repeated"] = fill("".join(f"n{i} = " + "[" * 62 + "1" + "]" * 62 + "\n" for i in range(1500)))
    out["inline tables 63 deep, repeated"] = fill("".join(f"t{i} = " + "{a = " * 62 + "1" + "}" * 62 + "\n" for i in range(300)))
    out["1,600 table headers of 16 parts (refused)"] = fill("".join("[" + ".".join(f"h{i}" for _ in range(16)) + f"]\nk = {i}\n" for i in range(1600)))
    out["666 table headers of 16 parts"] = fill("".join("[" + ".".join(f"h{i}" for _ in range(16)) + f"]\nk = {i}\n" for i in range(666)))
    return out


PROBE = """
import sys, time, tracemalloc
from bpcheck.errors import InputError
from bpcheck.model.board import load_board
tracemalloc.start()
t0 = time.process_time()
try:
    load_board(sys.argv[1])
    msg = "ok"
except InputError as e:
    msg = e.render()
took = time.process_time() - t0
print(tracemalloc.get_traced_memory()[1], took)
print(msg[:160])
"""


def measure(path: Path) -> tuple[int, float, str]:
    """(the peak of the Python heap while reading, in bytes; CPU seconds; the outcome) of reading
    PATH as a board (bpcheck.model.board.load_board: the input layer, the scan, the parser, the
    board's own checks), in a fresh process. tracemalloc counts every allocation of the read
    itself, whatever the allocator had left over from start-up."""
    p = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, cwd=ROOT, check=True)
    first, msg = p.stdout.splitlines()[:2]
    peak, took = first.split()
    return int(peak), float(took), msg


CONSTANT = 20 * MiB  # what MAX_VALUES values cost at most beyond their text (~200 bytes each: an object, a slot, the parser's own)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", metavar="FILE.json")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in families().items():
            f = Path(tmp) / "b.toml"
            f.write_text(text, encoding="utf-8")
            size = f.stat().st_size
            peak, took, msg = measure(f)
            ok = peak <= 2 * size + CONSTANT
            rows.append({"file": name, "bytes": size, "peak_heap": peak, "ratio": round(peak / max(size, 1), 2), "cpu_seconds": round(took, 2), "within": ok, "outcome": msg})
            print(f"{name:42} {size / MiB:6.2f} MiB  peak {peak / MiB:7.1f} MiB ({peak / max(size, 1):5.2f}x)  {took:6.2f} s CPU  {'ok' if ok else 'OVER 2x + 20 MiB'}  {msg[-70:]}")
    if args.out:
        Path(args.out).write_text(json.dumps({"constant": CONSTANT, "rows": rows}, indent=1) + "\n")
    return 0 if all(r["within"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
