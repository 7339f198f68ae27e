"""`bpcheck sweep` memory over a slice of a card database (docs/performance.md, "bpcheck sweep:
memory").

    python benchmarks/sweep_memory.py [--cards N] [--skip K] [-j N] [--batch N] [--cards-db FILE]

Sweeps the passcodes K .. K+N of the database (by passcode order; default the first 320 of the
kit's cards-full.cdb) on the EDOPro core in a child process, and reads the resident memory
(``VmRSS`` in ``/proc/PID/status``) of that process and of each of its worker processes twice a
second. After each batch (the ``--json`` file rewritten) it prints the cards judged so far, the
main process's memory and the largest worker's: memory that keeps growing batch after batch is a
leak, memory that levels off is a cache at its bound. Linux only (``/proc``)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from bpcheck.engines.ocgcore import default_paths
from bpcheck.model.cdb import open_db


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def descendants(pid: int) -> list[int]:
    out, todo = [], children(pid)
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children(p)
    return out


def judged(path: str) -> int:
    # the result document's "judged" count, read without parsing the whole file
    try:
        with open(path, encoding="utf-8") as f:
            for _ in range(400):
                line = f.readline()
                if line.strip().startswith('"judged"'):
                    return int(line.split(":")[1].strip().rstrip(","))
    except (OSError, ValueError):
        pass
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", type=int, default=320)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--cards-db", default=os.path.join(os.path.dirname(default_paths()[2]), "cards-full.cdb"))
    ap.add_argument("--max-states", type=int, default=2000)
    a = ap.parse_args()
    codes = sorted(open_db(a.cards_db).codes())[a.skip : a.skip + a.cards]
    with tempfile.TemporaryDirectory() as tmp:
        lst = os.path.join(tmp, "slice.txt")
        with open(lst, "w", encoding="utf-8") as f:
            f.write("\n".join(str(c) for c in codes) + "\n")
        out = os.path.join(tmp, "sweep.json")
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-m", "bpcheck.cli.main", "sweep", "-q", "--cards-db", a.cards_db, f"@{lst}", "-j", str(a.jobs),
                              "--batch", str(a.batch), "--max-states", str(a.max_states), "--json", out], stdout=subprocess.DEVNULL)
        peak_main = peak_worker = 0.0
        last_mtime = None
        while p.poll() is None:
            main_mb = rss_mb(p.pid)
            workers = [rss_mb(c) for c in descendants(p.pid)]
            peak_main = max(peak_main, main_mb)
            peak_worker = max([peak_worker] + workers)
            try:
                m = os.stat(out).st_mtime_ns
            except OSError:
                m = None
            if m is not None and m != last_mtime:
                last_mtime = m
                print(f"{time.monotonic() - t0:7.0f} s  {judged(out):5} cards  main {main_mb:7.0f} MB  largest worker {max(workers, default=0):7.0f} MB"
                      f"  ({len(workers)} workers)", flush=True)
            time.sleep(0.5)
        wall = time.monotonic() - t0
    print(f"{len(codes)} cards, -j {a.jobs}, --batch {a.batch}: {wall:.0f} s, {3600 * len(codes) / wall:,.0f} cards/h;"
          f" peak main {peak_main:.0f} MB, peak worker {peak_worker:.0f} MB; exit {p.returncode}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
