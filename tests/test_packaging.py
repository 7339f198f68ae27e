"""The wheel builds without setuptools warnings (issue 25: they scrolled past in every set-up:
123 lines from `pip wheel --quiet` with pip 26, before pyproject.toml's include-package-data =
false), and still ships every data file bpcheck reads at run time."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What setuptools prints when the package configuration is ambiguous or deprecated: a Python
# warning (`_Warning:`, `BuildBackendWarning:`, `SetuptoolsDeprecationWarning:`, ... as pip and
# setuptools versions name it) and its banner. pip's own "WARNING: ..." lines (an index location
# of this machine's pip configuration) are not the build's.
WARNING = re.compile(r"\w*Warning:|Package would be ignored|is absent from the `packages` configuration")
DATA = {
    "bpcheck/rules.md",
    "bpcheck/model/cards/monsters.toml",
    "bpcheck/model/cards/spells.toml",
    "bpcheck/model/cards/traps.toml",
    "bpcheck/model/schemas/board.schema.json",
    "bpcheck/engines/schemas/protocol.schema.json",
}


def test_the_wheel_builds_quietly_and_ships_its_data(tmp_path):
    # Built from a copy of what the wheel is made of: setuptools writes build/ and *.egg-info
    # beside the sources, and a test leaves the checkout alone.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for folder in ("api", "cli", "harness", "model", "invariants", "explorers", "reports", "engines"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "dist"
    # -v: pip passes on all of the build backend's output, whatever the pip version would show
    # by default.
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", str(out), str(src)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-4000:]
    warned = [line for line in log.splitlines() if WARNING.search(line)]
    assert not warned, "setuptools warns while building the wheel:\n" + "\n".join(warned)
    (wheel,) = out.glob("bpcheck-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert DATA <= names, sorted(DATA - names)
    assert {"bpcheck/model/cards.py", "bpcheck/harness/pytest_plugin.py", "bpcheck/cli/main.py", "bpcheck/errors.py"} <= names
