#!/usr/bin/env python3
"""What a mypyc build of the reference model would buy, as the code is (issue 12).

Not a test, and not a build: it measures. Figures go into docs/performance.md. It needs mypy
(which ships mypyc) and a C compiler, neither of which bpcheck needs:

    python -m venv /tmp/mypycenv && /tmp/mypycenv/bin/pip install mypy setuptools
    python benchmarks/mypyc_trial.py --mypy-python /tmp/mypycenv/bin/python [--states N] [--repeat R]

It copies the package into a scratch directory laid out as ``bpcheck/`` (pyproject's
package-dir mapping), makes there the few changes mypyc needs to compile and run the model's hot
modules (:data:`PATCHES`: each must apply exactly once, or the trial stops and says which), compiles
:data:`MODULES` with mypyc, then times BFS over the first ``--states`` states of the seven-card
board in fresh processes, alternating the interpreted tree (this checkout) and the compiled copy:
with no invariants (the engine, observation, monitor, fingerprint and explorer) and with all of
them. Each run prints its states, transitions and violations, which must agree.

The changes are the least that make the compiled model run, not a port: no type declarations
were added. Two are semantic and would need care in a real build: ``Rules`` is compiled as a
native class without ``allow_interpreted_subclasses``, so the mutants (interpreted subclasses)
cannot load against it (the figures are an upper bound for a build that supports them), and
native classes have no slot descriptors, so ``replace`` copies through the constructor.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("state", "engine", "observe", "ops", "events", "cards")
LAYOUT = {"cli": "", "model": "model", "invariants": "invariants", "explorers": "explorers", "reports": "reports", "engines": "engines"}

# (file, old text, new text): the changes mypyc needs (type errors it refuses; attributes a
# native class must declare; object.__new__ and slot descriptors, which native classes lack)
PATCHES = [
    ("model/state.py", "\nclass Players(tuple):", "\nfrom mypy_extensions import mypyc_attr\n\n\n@mypyc_attr(native_class=False)\nclass Players(tuple):"),
    (
        "model/state.py",
        "    except TypeError:  # None: not a class we copy directly\n        return dataclasses.replace(obj, **changes)\n",
        "    except TypeError:  # None: a native class (no slots): through the constructor\n"
        "        names = _NAMES.get(cls)\n"
        "        if names is None:\n"
        "            names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))\n"
        "        return cls(*[changes[n] if n in changes else getattr(obj, n) for n in names])\n",
    ),
    ("model/state.py", "\ndef replace(obj: Any, /, **changes: Any) -> Any:", "\n_NAMES: dict = {}\n\n\ndef replace(obj: Any, /, **changes: Any) -> Any:"),
    (
        "model/engine.py",
        '        e = _new(Event)\n        _setattr(e, "kind", kind)\n        _setattr(e, "data", tuple(data.items()))\n        self.events.append(e)',
        "        self.events.append(Event(kind, tuple(data.items())))",
    ),
    ("model/engine.py", "        self._kinds_of: dict[str, frozenset[str]] = {}\n", "        self._kinds_of: dict[str, frozenset[str]] = {}\n        self._observe_cache: object = None\n"),
    ("model/engine.py", "        om = ps._m\n        if om is not None and om[0] is self:\n            return om[1]\n", "        om: object = ps._m\n        if om is not None and om[0] is self:  # type: ignore\n            return om[1]  # type: ignore\n"),
    ("model/engine.py", "        ps._m = (self, m)  # type: ignore[attr-defined]", "        ps._m = (self, m)  # type: ignore"),
    ("model/engine.py", "                    out.append((side, m.uid, m, st))\n", "                    out.append((side, m.uid, m, st))  # type: ignore\n"),
    ("model/engine.py", 'card=self.name_of(s, action.card_uid), card_uid=action.card_uid, player=action.player)\n', 'card=self.name_of(s, action.card_uid), card_uid=action.card_uid, player=action.player)  # type: ignore\n'),
    ("model/engine.py", "        side, i, m = w.s.find_monster(action.card_uid)  # type: ignore[misc]", "        side, i, m = w.s.find_monster(action.card_uid)  # type: ignore"),
    ("model/observe.py", '        r._observe_cache = c  # type: ignore[attr-defined]', '        r._observe_cache = c  # type: ignore'),
    ("model/observe.py", '        players = memo.get("observation")\n', '        players = memo.get("observation")  # type: ignore\n'),
]

RUN = """
import sys, time
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import Bounds, ExploreOptions, explore
from bpcheck.invariants import select
from bpcheck.model.board import load_board
board = load_board(sys.argv[1])
invs = select(None) if sys.argv[2] == "all" else []
t = time.process_time()
r = explore(EngineSystem(ReferenceEngine(), board, invs), ExploreOptions("bfs", bounds=Bounds(max_states=int(sys.argv[3]))))
import bpcheck.model.engine as E
print(r.states, r.transitions, len(r.violations), round(time.process_time() - t, 2), E.__file__.endswith(".so"))
"""


def build(scratch: Path, mypy_python: str) -> None:
    pkg = scratch / "bpcheck"
    for src, dst in LAYOUT.items():
        shutil.copytree(ROOT / src, pkg / dst if dst else pkg, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for rel, old, new in PATCHES:
        f = pkg / rel
        text = f.read_text()
        if text.count(old) != 1:
            sys.exit(f"mypyc_trial: the patch for {rel} does not apply (found {text.count(old)} times): {old.splitlines()[0].strip()!r}")
        f.write_text(text.replace(old, new))
    # the input layer (model/reading.py, fields.py, hazard.py) is imported by the model and
    # type-checked, not compiled: its "misc" errors are waved through, and mypyc takes mypy's
    # "annotation-unchecked" notes for errors
    setup = scratch / "setup.py"
    setup.write_text(
        "from setuptools import setup\nfrom mypyc.build import mypycify\n"
        "setup(name='trial', ext_modules=mypycify(['--ignore-missing-imports', '--disable-error-code', 'annotation-unchecked', '--disable-error-code', 'misc', "
        + ", ".join(repr(f"bpcheck/model/{m}.py") for m in MODULES)
        + "], opt_level='3'))\n"
    )
    r = subprocess.run([mypy_python, "setup.py", "build_ext", "--inplace"], cwd=scratch, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("mypyc_trial: mypyc failed:\n" + "\n".join(l for l in (r.stdout + r.stderr).splitlines() if not l.startswith("gcc"))[-3000:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mypy-python", required=True, help="an interpreter (same Python version) with mypy and setuptools installed")
    ap.add_argument("--states", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--board", default=str(ROOT / "boards" / "000-ds-spell-trap-list.toml"))
    args = ap.parse_args()
    ext = subprocess.run([args.mypy_python, "-c", "import mypy_extensions; print(mypy_extensions.__file__)"], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bpcheck-mypyc-") as tmp:
        scratch = Path(tmp)
        build(scratch, args.mypy_python)
        shutil.copy(ext, scratch)  # the compiled model imports mypy_extensions (one file) at run time
        compiled_env = dict(os.environ, PYTHONPATH=str(scratch))
        print(f"{Path(args.board).name}, first {args.states} states; CPU seconds per run, alternated")
        print(f"{'invariants':<11} {'build':<12} {'states':>7} {'trans.':>7} {'viol.':>5} {'CPU s':>7}")
        for invs in ("none", "all"):
            for _ in range(args.repeat):
                for name, env in (("interpreted", dict(os.environ)), ("mypyc", compiled_env)):
                    out = subprocess.run([sys.executable, "-c", RUN, args.board, invs, str(args.states)], env=env, capture_output=True, text=True, cwd=ROOT)  # not tmp: its bpcheck/ would shadow the installed one
                    if out.returncode != 0:
                        sys.exit(f"mypyc_trial: the {name} run failed (exit status {out.returncode}):\n{out.stderr[-3000:]}")
                    st, tr, vi, cpu, so = out.stdout.split()
                    if (so == "True") != (name == "mypyc"):
                        sys.exit(f"mypyc_trial: the {name} run loaded the wrong model ({'compiled' if so == 'True' else 'interpreted'})")
                    print(f"{invs:<11} {name:<12} {st:>7} {tr:>7} {vi:>5} {cpu:>7}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
