"""The import layers (issue 32): model <- invariants <- explorers -> reports (an arrow points at
what a layer imports: the explorers write checkpoints with the reports' atomic writer, the reports
read the model and the invariants' naming, never the explorers), engines on the model, the library
of runs (harness) on all of those, and the command line on top, which nothing else imports. Read from the source with ast, every import
counted, at the top of a module or inside a function: a function-local import is an edge too.

A failure names the module, the line and the edge; docs/architecture.md has the picture."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# layer -> the layers it may import (itself always). "root" is the package root's own module
# (bpcheck/__init__.py: the version and the lazily exported names), "errors" bpcheck.errors.
ALLOWED = {
    "errors": set(),
    "root": {"errors"},
    "model": {"errors", "root"},
    "engines": {"errors", "root", "model"},
    "invariants": {"errors", "root", "model"},
    "explorers": {"errors", "root", "model", "invariants", "engines", "reports"},
    "reports": {"errors", "root", "model", "invariants"},
    "harness": {"errors", "root", "model", "invariants", "engines", "explorers", "reports"},
    "public": {"errors", "root", "harness"},  # bpcheck.strategies, bpcheck.testing: names of the harness's
    "entry": {"cli"},  # bpcheck/__main__.py: `python -m bpcheck` is the command line
    "cli": {"errors", "root", "model", "invariants", "engines", "explorers", "reports", "harness"},
}
SUBPACKAGES = ("model", "engines", "invariants", "explorers", "reports", "harness", "cli")


def layer_of(module: str) -> str:
    parts = module.split(".")
    assert parts[0] == "bpcheck", module
    if len(parts) == 1:
        return "root"
    if parts[1] in SUBPACKAGES:
        return parts[1]
    return {"errors": "errors", "__main__": "entry", "strategies": "public", "testing": "public"}.get(parts[1], "root")


def package_modules() -> dict[str, Path]:
    """module name -> source file, from pyproject.toml's package-dir (what the wheel installs)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = conf["package-dir"]
    out: dict[str, Path] = {}
    for pkg in conf["packages"]:
        top = max((p for p in dirs if pkg == p or pkg.startswith(p + ".")), key=len)
        folder = ROOT / dirs[top] / Path(*pkg[len(top) :].strip(".").split(".")) if pkg != top else ROOT / dirs[top]
        for f in sorted(folder.glob("*.py")):
            out[pkg if f.name == "__init__.py" else f"{pkg}.{f.stem}"] = f
    return out


def imports_of(module: str, path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    pkg = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] if node.module or not node.level else []
            # `from bpcheck import x`: x may be a submodule
            if target == "bpcheck" or (node.level and not node.module):
                names = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
            found += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, t) for line, t in found if t == "bpcheck" or t.startswith("bpcheck.")]


MODULES = package_modules()


def test_every_package_is_seen():
    layers = {layer_of(m) for m in MODULES}
    assert {"root", "errors", "entry", "public", *SUBPACKAGES} <= layers, layers
    assert len(MODULES) > 100, len(MODULES)


def test_imports_follow_the_layers():
    bad = []
    for module, path in MODULES.items():
        src = layer_of(module)
        for line, target in imports_of(module, path):
            dst = layer_of(target)
            if dst != src and dst not in ALLOWED[src]:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} ({src}) imports {target} ({dst})")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_nothing_outside_the_command_line_imports_it():
    users = sorted({m for m, p in MODULES.items() if layer_of(m) not in ("cli", "entry") for _l, t in imports_of(m, p) if layer_of(t) == "cli"})
    assert users == []


@pytest.mark.parametrize("bad", ["bpcheck.cli.main", "bpcheck.harness.check"])
def test_the_check_fails_on_a_wrong_edge(tmp_path, bad):
    # the checker itself: an engine module importing the CLI or the harness is caught
    f = tmp_path / "x.py"
    f.write_text(f"def f():\n    from {bad} import main\n")
    (line, target), = imports_of("bpcheck.engines.x", f)
    assert line == 2 and target == bad and layer_of(target) not in ALLOWED["engines"]
