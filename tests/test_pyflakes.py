"""pyflakes is clean on every module the wheel installs (issue 32): no unused import left behind
by a move, no undefined name, no shadowed import. Run in the suite, so CI fails on a new one."""

from __future__ import annotations

import io
from pathlib import Path

from pyflakes.api import checkPath
from pyflakes.reporter import Reporter

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("api", "cli", "harness", "model", "engines", "explorers", "invariants", "reports")


def test_pyflakes_is_clean():
    out, err = io.StringIO(), io.StringIO()
    files = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py") if "examples" not in p.parts)
    assert len(files) > 100, len(files)
    warnings = sum(checkPath(str(p), Reporter(out, err)) for p in files)
    assert warnings == 0 and not err.getvalue(), out.getvalue() + err.getvalue()


def test_pyflakes_sees_a_planted_warning(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("import os\n")
    out = io.StringIO()
    assert checkPath(str(f), Reporter(out, io.StringIO())) == 1 and "imported but unused" in out.getvalue()
