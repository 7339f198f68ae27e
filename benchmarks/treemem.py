#!/usr/bin/env python3
"""Run a command and report the peak memory of its whole process tree (Linux /proc).

Not a test: it measures. ``/usr/bin/time -v`` reports one process's peak, while ``bpcheck check
-j N`` and the sharded explorer run worker processes (forkserver children), so the peak that
matters is the sum over the tree. Usage:
    python benchmarks/treemem.py [--every S] -- COMMAND ARG...
Prints, after the command ends: wall seconds, the peak of the summed RSS of the tree, and the
largest peaks of single processes (sampled every S seconds, default 0.25: a peak shorter than
that can be missed). The command's exit status is returned.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(p))
    return kids


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=float, default=0.25)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    peak_sum = 0
    peak: dict[int, int] = {}
    while proc.poll() is None:
        kids = _children()
        todo, tree = [proc.pid], []
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += kids.get(p, [])
        sizes = {p: _rss(p) for p in tree}
        peak_sum = max(peak_sum, sum(sizes.values()))
        for p, r in sizes.items():
            peak[p] = max(peak.get(p, 0), r)
        time.sleep(args.every)
    wall = time.monotonic() - t0
    top = sorted(peak.values(), reverse=True)[:6]
    print(f"treemem: {wall:.1f} s wall; peak of the tree {peak_sum / 2**20:.0f} MB; largest processes "
          + ", ".join(f"{r / 2**20:.0f}" for r in top) + " MB", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
