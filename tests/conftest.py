from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def run_cli(capsys):
    """Run the CLI in-process; return (exit status, stdout, stderr)."""
    from bpcheck.main import main

    def run(*argv: str):
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse usage errors
            code = e.code
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
