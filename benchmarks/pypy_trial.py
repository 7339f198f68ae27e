#!/usr/bin/env python3
"""Would PyPy run the checker faster? A trial, not a build (issue 12, fifth round).

Not a test: it measures. Figures go into docs/performance.md. It needs the network (Debian's
mirror and PyPI) the first time, and a scratch folder (``--cache``, default /tmp/bpcheck-pypy):

    python benchmarks/pypy_trial.py [--cache DIR] [--states N] [--board PATH]

What it does:

- PyPy for Python 3.11 is Debian trixie's ``pypy3`` (7.3.19); this machine's bookworm has only
  PyPy for 3.9, which the project's code (3.11) does not run on. Trixie's build needs glibc 2.38,
  so the trial unpacks trixie's libc and the libraries PyPy links beside it (``dpkg -x``, nothing
  is installed) and starts PyPy through that libc's loader.
- numpy, xxhash and jsonschema come from PyPI (they have PyPy wheels; they go through PyPy's
  C-API emulation). orjson has no PyPy build: a stand-in over the standard ``json`` module gives
  the same bytes for bpcheck's observations (sorted keys, compact, UTF-8). PyPy has no
  ``gc.freeze``: a no-op stands in (the explorer calls it).
- The same workload runs under this interpreter and under PyPy, from this checkout (a tree of
  links maps the folders to the ``bpcheck`` package): BFS over the first ``--states`` states of the
  board, unreduced, the reference engine, once with no invariant and once with all of them. It
  prints CPU seconds and CPU microseconds per transition.
"""

from __future__ import annotations

import argparse
import lzma
import os
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRROR = "http://deb.debian.org/debian"
DEBS = ["pypy3", "pypy3-lib", "libc6", "libffi8", "libexpat1", "zlib1g", "libbz2-1.0", "liblzma5", "libssl3t64", "libsqlite3-0", "libzstd1", "libtinfo6", "libncursesw6"]
SUBPACKAGES = ("model", "invariants", "explorers", "reports", "engines")  # bpcheck.<name> is the folder <name>; bpcheck is cli/

ORJSON = '''\
"""Stand-in for orjson under PyPy (a trial: benchmarks/pypy_trial.py), over the json module."""
import json
OPT_SORT_KEYS = 1
JSONDecodeError = json.JSONDecodeError
_plain = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_sorted = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, sort_keys=True)
def dumps(obj, default=None, option=0):
    return (_sorted if option & OPT_SORT_KEYS else _plain).encode(obj).encode()
def loads(s):
    return json.loads(s)
'''
SITECUSTOMIZE = "import gc\nif not hasattr(gc, 'freeze'):\n    gc.freeze = gc.unfreeze = lambda: None\n"

WORKLOAD = '''\
import sys, time
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, ExploreOptions, explore
from bpcheck.invariants import select
from bpcheck.model.board import load_board
board = load_board(sys.argv[1])
for label, invs in (("no invariants", []), ("all invariants", select(None))):
    t0 = time.process_time()
    r = explore(EngineSystem(ReferenceEngine(), board, invs), ExploreOptions("bfs", Bounds(max_states=int(sys.argv[2]))))
    dt = time.process_time() - t0
    print(f"  {label:15} {r.states:,} states, {r.transitions:,} transitions: {dt:7.2f} CPU s, {1e6 * dt / r.transitions:6.1f} us a transition")
'''


def _packages_index(cache: Path) -> dict[str, str]:
    idx = cache / "Packages-trixie"
    if not idx.exists():
        with urllib.request.urlopen(f"{MIRROR}/dists/trixie/main/binary-amd64/Packages.xz", timeout=300) as r:
            idx.write_bytes(lzma.decompress(r.read()))
    out: dict[str, str] = {}
    name = None
    for line in idx.read_text().splitlines():
        if line.startswith("Package: "):
            name = line[9:]
        elif line.startswith("Filename: ") and name is not None and name not in out:
            out[name] = line[10:]
    return out


def _pypy(cache: Path) -> list[str]:
    root = cache / "root"
    if not (root / "usr/bin/pypy3.11").exists():
        files = _packages_index(cache)
        for deb in DEBS:
            target = cache / Path(files[deb]).name
            if not target.exists():
                urllib.request.urlretrieve(f"{MIRROR}/{files[deb]}", target)
            subprocess.run(["dpkg", "-x", str(target), str(root)], check=True)
    lib = root / "usr/lib/x86_64-linux-gnu"
    return [str(lib / "ld-linux-x86-64.so.2"), "--library-path", str(lib), str(root / "usr/bin/pypy3.11")]


def _site(cache: Path, pypy: list[str]) -> Path:
    site = cache / "site"
    if not (site / "numpy").exists():
        wheels = cache / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "pip", "-d", str(wheels)], check=True)
        pip = next(wheels.glob("pip-*.whl"))
        subprocess.run(pypy + [f"{pip}/pip", "install", "-q", "--target", str(site), "pip"], check=True)
        env = dict(os.environ, PYTHONPATH=str(site))
        subprocess.run(pypy + ["-m", "pip", "install", "-q", "--only-binary=:all:", "--target", str(site), "numpy", "xxhash", "jsonschema"], check=True, env=env)
    shim = cache / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "orjson.py").write_text(ORJSON)
    (shim / "sitecustomize.py").write_text(SITECUSTOMIZE)
    src = cache / "src" / "bpcheck"
    src.mkdir(parents=True, exist_ok=True)
    for f in (ROOT / "cli").iterdir():
        if f.name != "__pycache__" and not (src / f.name).is_symlink():
            (src / f.name).symlink_to(f)
    for pkg in SUBPACKAGES:
        if not (src / pkg).is_symlink():
            (src / pkg).symlink_to(ROOT / pkg)
    return site


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/bpcheck-pypy"))
    ap.add_argument("--states", type=int, default=20_000)
    ap.add_argument("--board", type=Path, default=ROOT / "boards" / "000-ds-spell-trap-list.toml")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    try:
        pypy = _pypy(args.cache)
        site = _site(args.cache, pypy)
    except (OSError, subprocess.CalledProcessError, KeyError) as e:
        print(f"pypy_trial: could not set up PyPy in {args.cache}: {e}", file=sys.stderr)
        return 2
    work = args.cache / "workload.py"
    work.write_text(WORKLOAD)
    runs = [
        ("CPython " + sys.version.split()[0], [sys.executable], {}),
        ("PyPy", pypy, {"PYTHONPATH": os.pathsep.join(str(args.cache / p) for p in ("src", "shim")) + os.pathsep + str(site)}),
    ]
    print(f"workload: the first {args.states:,} states of {args.board.name}, BFS, unreduced, the reference engine")
    for name, cmd, env in runs:
        print(name)
        proc = subprocess.run(cmd + [str(work), str(args.board), str(args.states)], env={**os.environ, **env}, capture_output=True, text=True)
        if proc.returncode != 0:
            print(textwrap.indent(proc.stderr.strip()[-2000:], "  "))
            return 1
        print(proc.stdout.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
