#!/usr/bin/env python3
"""`--cluster` against `-j N`, side by side in one run (issue 23; figures in docs/performance.md).

Not a test: it measures.

    python benchmarks/cluster_bench.py                                  # small: validates the bench (minutes)
    python benchmarks/cluster_bench.py --seven --corpus                 # the issue's figures (a quiet machine: an hour or more)
    python benchmarks/cluster_bench.py --boards boards/rule-atk-cannot.toml --protocol boards/rule-ch-speed-counter.toml

Part 1, wall time: each target (a board, a folder) is checked by the command line with `-j 1`,
`-j N` and `--cluster local:N` (N = --workers, 2 by default), one after the other; the `--json`
of every run must be the same file, byte for byte (the bench says so or fails). Start-up cost:
`--cluster local:N` on a tiny board minus `-j 1` on it (Ray's start, the workers' imports).

Part 2, what one chunk costs (the one-board protocol, explorers/parallel.py), for one board
(--protocol) on worker processes and on Ray actors: the coordinator's CPU per chunk (this
process's own work: ranking winners, placing states, routing blobs; CPU seconds, which a shared
machine disturbs little), the bytes it sends and receives per chunk (load-independent), the
workers' CPU per chunk and state, each worker's idle share of the chunk rounds' wall time, and
Ray's round trip. From them, a projection (printed with its formula): the workers at which the
coordinator saturates, and the seven-card board's time on 8 and 32 workers.

Every Ray run happens inside a network namespace of its own (`unshare -n`, loopback only), so the
local cluster can reach no other address; without namespaces (not root) the bench refuses the
Ray runs unless --no-netns (then `local:N` still binds 127.0.0.1 only).
Output: the figures, then a markdown table ready to paste into docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEVEN = "boards/000-ds-spell-trap-list.toml"
TINY = "boards/000-replay-2.toml"
ROUNDS = 4  # requests to each worker per chunk of the one-board protocol (explorers/parallel.py: expand, decide, rank, finalize)


def netns_prefix(allowed: bool) -> list[str]:
    if not allowed:
        return []
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        sys.exit("cluster_bench: network namespaces are not available here (unshare -n, as root); --no-netns runs Ray on 127.0.0.1 without one")
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"']


def cli(prefix: list[str], args: list[str], out: Path) -> tuple[float, int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "RAY_ADDRESS")}
    t0 = time.monotonic()
    p = subprocess.run([*prefix, sys.executable, "-m", "bpcheck", "check", *args, "--json", str(out)], cwd=ROOT, capture_output=True, text=True, env=env)
    return time.monotonic() - t0, p.returncode, p.stderr


def part1(targets: list[str], workers: int, ns: list[str], tmp: Path) -> list[dict]:
    rows = []
    configs = [("-j 1", ["-j", "1"], []), (f"-j {workers}", ["-j", str(workers)], []), (f"--cluster local:{workers}", ["--cluster", f"local:{workers}"], ns)]
    for target in targets:
        got = {}
        files = {}
        for name, args, prefix in configs:
            out = tmp / f"{len(rows)}-{len(got)}.json"
            wall, code, err = cli(prefix, [target, *args], out)
            if code not in (0, 1, 3):
                sys.exit(f"cluster_bench: {target} {name}: exit {code}\n{err}")
            got[name] = wall
            files[name] = out.read_bytes()
            print(f"  {target:45} {name:20} {wall:8.1f} s (exit {code})", flush=True)
        same = len(set(files.values())) == 1
        if not same:
            sys.exit(f"cluster_bench: {target}: the --json outputs differ between {', '.join(files)}")
        base = got["-j 1"]
        rows.append({"target": target, "times": got, "speedup": {k: base / v for k, v in got.items()}, "identical": same})
    return rows


def startup(workers: int, ns: list[str], tmp: Path) -> float:
    a, _, _ = cli([], [TINY, "-j", "1"], tmp / "s1.json")
    b, _, _ = cli(ns, [TINY, "--cluster", f"local:{workers}"], tmp / "s2.json")
    return b - a


def protocol_run(board: str, workers: int, transport: str) -> dict:
    """In this process (a subprocess of the bench): one exploration by explore_parallel; its
    protocol figures (res.protocol) and wall time."""
    import functools

    from bpcheck.explorers import cluster
    from bpcheck.explorers.parallel import explore_parallel
    from bpcheck.explorers.run import reduced_system, system_factory
    from bpcheck.invariants import select
    from bpcheck.model.board import load_board

    b = load_board(board)
    make = functools.partial(reduced_system, system_factory(b, None, {}, [i.id for i in select(None)]))
    kw = {}
    connect_s = 0.0
    if transport == "ray":
        cluster.MEASURE_BYTES = True
        t0 = time.monotonic()
        cluster.connect(f"local:{workers}")
        connect_s = time.monotonic() - t0
        kw["transport"] = cluster.ActorPool
        # Ray's round trip to an actor, with nothing to do: the latency each round pays
        import ray

        a = ray.remote(num_cpus=0)(_Echo).remote()
        ray.get(a.ping.remote())
        t0 = time.perf_counter()
        for _ in range(50):
            ray.get(a.ping.remote())
        kw_rtt = (time.perf_counter() - t0) / 50
        ray.kill(a)
    t0 = time.monotonic()
    r = explore_parallel(make, workers, **kw)
    wall = time.monotonic() - t0
    out = dict(r.protocol)
    out.update(states=r.states, wall_s=wall, connect_s=connect_s, rtt_s=kw_rtt if transport == "ray" else None)
    if transport == "ray":
        cluster.disconnect()
    return out


class _Echo:
    def ping(self) -> int:
        return 1


def part2(board: str, workers: int, ns: list[str]) -> dict:
    res = {}
    for transport, prefix in (("processes", []), ("ray", ns)):
        p = subprocess.run([*prefix, sys.executable, __file__, "--_protocol", board, str(workers), transport], cwd=ROOT, capture_output=True, text=True)
        line = [x for x in p.stdout.splitlines() if x.startswith("{")]
        if p.returncode != 0 or not line:
            sys.exit(f"cluster_bench: protocol run ({transport}) failed:\n{p.stderr[-3000:]}")
        res[transport] = json.loads(line[-1])
    return res


def per_chunk(p: dict) -> dict:
    c = max(p["chunks"], 1)
    wk = sum(p["worker_cpu_s"])
    return {
        "coord_ms": 1000 * p["coordinator_cpu_s"] / c,
        "bytes": (p["bytes_out"] + p["bytes_in"]) / c,
        "worker_ms": 1000 * wk / c,
        "worker_ms_per_state": 1000 * wk / max(p["states"], 1),
        "coord_us_per_state": 1e6 * p["coordinator_cpu_s"] / max(p["states"], 1),
        "idle": [max(0.0, 1 - x / max(p["round_s"], 1e-9)) for x in p["worker_cpu_s"]],
        "round_ms": 1000 * p["round_s"] / c,
    }


def projection(proc: dict, ray_: dict, workers: int, rtt_s: float, states: int = 225_665, bandwidth: float = 125e6) -> dict:
    """The seven-card board (``states`` decisions) on n Ray workers, from the measured costs:

        T(n) = chunks(n) x serial(n) + W / n,   chunks(n) = states / chunk_size(n)
        serial(n) = R n x c_call + chunk_size(n) x (s + b / bandwidth) + R x rtt
        W = states x w,   R = ROUNDS (requests per worker per chunk: expand, decide, rank, finalize)

    w: the workers' CPU per state; s: the coordinator's CPU per state (worker processes, whose
    requests cost next to nothing); c_call: what one request and reply to an actor costs the
    driver (Ray's coordinator CPU per chunk less the processes', over the R x n requests of a
    chunk); b: the bytes through the driver per state. The serial part waits for the rounds,
    the workers' part divides by n (perfect balance: an optimistic bound on that side)."""
    from bpcheck.explorers.parallel import chunk_size

    w = ray_["worker_ms_per_state"] / 1000
    s = proc["coord_us_per_state"] * 1e-6
    c_call = max(0.0, (ray_["coord_ms"] - proc["coord_ms"]) / 1000 / (ROUNDS * workers))
    b = ray_["bytes"] / max(ray_["states_per_chunk"], 1)

    def serial(n: int) -> float:
        return ROUNDS * n * c_call + chunk_size(n) * (s + b / bandwidth) + ROUNDS * rtt_s

    work = w * states

    def T(n: int) -> float:
        return (0.0 if n == 1 else states / chunk_size(n) * serial(n)) + work / n

    speed = {n: T(1) / T(n) for n in range(1, 513)}
    best = max(speed, key=speed.get)
    half = next((n for n in range(2, 513) if speed[n] / n < 0.5), None)
    return {
        "T": {n: T(n) for n in (1, 8, 32)}, "speedup8": speed[8], "speedup32": speed[32], "best_n": best, "best_speedup": speed[best],
        "half_efficiency_n": half, "c_call_ms": 1000 * c_call, "s_us": 1e6 * s, "b": b, "w_ms": 1000 * w, "work_s": work,
        "serial8_ms": 1000 * serial(8), "serial32_ms": 1000 * serial(32),
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--_protocol":
        print(json.dumps(protocol_run(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--seven", action="store_true", help=f"part 1 on the seven-card board {SEVEN}")
    ap.add_argument("--corpus", action="store_true", help="part 1 on boards/ (every seed board)")
    ap.add_argument("--boards", nargs="*", default=None, help="part 1 on these (default without --seven/--corpus: two small boards)")
    ap.add_argument("--protocol", default="boards/rule-ch-speed-counter.toml", help="part 2's board (default: 5,383 decisions; the seven-card board on a quiet machine)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-netns", action="store_true")
    ap.add_argument("--protocol-only", action="store_true", help="part 2 only")
    args = ap.parse_args()
    ns = netns_prefix(not args.no_netns)
    targets = list(args.boards or [])
    if args.seven:
        targets.append(SEVEN)
    if args.corpus:
        targets.append("boards/")
    if not targets:
        targets = ["boards/rule-atk-cannot.toml", "boards/rule-ch-speed-counter.toml"]
    print(f"load average before: {os.getloadavg()}", flush=True)
    rows, start = [], float("nan")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.protocol_only:
            print("part 1: wall time, -j 1 / -j N / --cluster local:N (outputs compared byte for byte)", flush=True)
            rows = part1(targets, args.workers, ns, tmp)
            start = startup(args.workers, ns, tmp)
    print(f"  start-up cost of --cluster local:{args.workers} (a tiny board, against -j 1): {start:.1f} s", flush=True)
    print(f"part 2: per chunk, one board ({args.protocol}), {args.workers} workers", flush=True)
    p2 = part2(args.protocol, args.workers, ns)
    figs = {}
    for tr, p in p2.items():
        p["states_per_chunk"] = p["states"] / max(p["chunks"], 1)
        pc = per_chunk(p)
        pc["states_per_chunk"] = p["states_per_chunk"]
        figs[tr] = pc
        print(
            f"  {tr:10} {p['states']} states, {p['chunks']} chunks ({p['states_per_chunk']:.0f} states each), wall {p['wall_s']:.1f} s, workers started in {p['start_s']:.1f} s"
            + (f", Ray connected in {p['connect_s']:.1f} s, round trip {1000 * p['rtt_s']:.2f} ms" if p.get("rtt_s") else "")
        )
        print(
            f"  {'':10} coordinator {pc['coord_ms']:.2f} ms CPU/chunk ({pc['coord_us_per_state']:.1f} us/state), {pc['bytes'] / 1024:.1f} KiB/chunk,"
            f" workers {pc['worker_ms']:.0f} ms CPU/chunk ({pc['worker_ms_per_state']:.2f} ms/state), idle {', '.join(f'{x:.0%}' for x in pc['idle'])}"
        )
    rtt = p2["ray"].get("rtt_s") or 0.001
    pr = projection(figs["processes"], figs["ray"], args.workers, rtt)
    print("projection, the seven-card board (225,665 decisions) on n Ray workers (formula: benchmarks/cluster_bench.py, projection()):")
    print(
        f"  w = {pr['w_ms']:.2f} ms CPU/state (work {pr['work_s']:.0f} CPU s), s = {pr['s_us']:.1f} us/state at the coordinator,"
        f" c_call = {pr['c_call_ms']:.2f} ms per request to an actor, b = {pr['b']:.0f} bytes/state through the driver, round trip {1000 * rtt:.2f} ms"
    )
    print(
        f"  T(1) {pr['T'][1]:.0f} s; T(8) {pr['T'][8]:.0f} s ({pr['speedup8']:.1f}x; serial {pr['serial8_ms']:.0f} ms a chunk);"
        f" T(32) {pr['T'][32]:.0f} s ({pr['speedup32']:.1f}x; serial {pr['serial32_ms']:.0f} ms a chunk);"
        f" best {pr['best_speedup']:.0f}x at {pr['best_n']} workers; efficiency under 50 % from {pr['half_efficiency_n']} workers"
    )
    print(f"load average after: {os.getloadavg()}")
    print()
    print(f"| target | -j 1 | -j {args.workers} | --cluster local:{args.workers} | cluster / -j 1 | cluster / -j {args.workers} | identical |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        t = r["times"]
        names = list(t)
        print(f"| {r['target']} | {t[names[0]]:.1f} s | {t[names[1]]:.1f} s | {t[names[2]]:.1f} s | {t[names[0]] / t[names[2]]:.2f}x | {t[names[2]] / t[names[1]]:.2f} | {'yes' if r['identical'] else 'NO'} |")
    print(f"\nstart-up cost of `--cluster local:{args.workers}`: {start:.1f} s\n")
    print("| per chunk | worker processes | Ray actors |")
    print("|---|---:|---:|")
    for key, label, fmt in (
        ("coord_ms", "coordinator CPU (ms)", "{:.2f}"),
        ("coord_us_per_state", "coordinator CPU per state (us)", "{:.1f}"),
        ("bytes", "bytes to and from the workers (KiB)", None),
        ("worker_ms", "workers' CPU (ms, all workers)", "{:.0f}"),
        ("worker_ms_per_state", "workers' CPU per state (ms)", "{:.2f}"),
        ("round_ms", "chunk round, wall (ms)", "{:.0f}"),
    ):
        a, b = figs["processes"][key], figs["ray"][key]
        if fmt is None:
            print(f"| {label} | {a / 1024:.1f} | {b / 1024:.1f} |")
        else:
            print(f"| {label} | {fmt.format(a)} | {fmt.format(b)} |")
    print(f"| each worker's idle share of the rounds | {', '.join(f'{x:.0%}' for x in figs['processes']['idle'])} | {', '.join(f'{x:.0%}' for x in figs['ray']['idle'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
