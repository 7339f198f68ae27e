"""The engines do not import the explorers (issue 32, item 3): the explorers drive engines, so the
edge goes explorers -> engines -> model only. Read from the source with ast, every import in a
module (at its top or inside a function), so a function-local import cannot hide an edge."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "engines"
FORBIDDEN = "bpcheck.explorers"


def _package_of(path: Path) -> str:
    """The dotted package a file under engines/ belongs to (engines/ is ``bpcheck.engines``)."""
    parts = path.relative_to(ENGINES).parent.parts
    return ".".join(("bpcheck", "engines", *parts))


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """Every module an import statement in `source` names, as (line, dotted name): ``import a.b``
    gives ``a.b``, ``from a import b`` gives ``a`` and ``a.b`` (b may be a submodule), a relative
    import is resolved against `package`."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            out.extend((node.lineno, f"{mod}.{a.name}") for a in node.names)
    return out


def _is_forbidden(name: str) -> bool:
    return name == FORBIDDEN or name.startswith(FORBIDDEN + ".")


def test_the_check_sees_every_way_to_import_the_explorers():
    pkg = "bpcheck.engines.ocgcore"
    for src in (
        "import bpcheck.explorers.core",
        "from bpcheck.explorers.core import explore",
        "from bpcheck import explorers",
        "from ...explorers import checking",
        "def f():\n    from bpcheck.explorers.guard import guard_engine\n",
    ):
        assert any(_is_forbidden(m) for _l, m in imported_modules(src, pkg)), src
    for src in (
        "from bpcheck.engines.faults import SystemFault",
        "from .. import guard",
        "from bpcheck.model.canonical import fingerprint",
        "import bpcheck.explorersx",
    ):
        assert not any(_is_forbidden(m) for _l, m in imported_modules(src, pkg)), src


def test_no_module_under_engines_imports_the_explorers():
    files = sorted(ENGINES.rglob("*.py"))
    names = {p.relative_to(ENGINES).as_posix() for p in files}
    # the modules that used to import the explorers are among those read
    assert {"jsonl.py", "guard.py", "faults.py", "ocgcore/engine.py"} <= names
    edges = [
        f"engines/{p.relative_to(ENGINES).as_posix()}:{line}: {mod}"
        for p in files
        for line, mod in imported_modules(p.read_text(encoding="utf-8"), _package_of(p))
        if _is_forbidden(mod)
    ]
    assert edges == []
