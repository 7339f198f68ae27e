"""`bpcheck export-puzzle`: parse, build, write (the puzzle: :mod:`bpcheck.harness.export_puzzle`)."""

from __future__ import annotations

import sys
from pathlib import Path

from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from bpcheck.errors import InputError
from bpcheck.harness.export_puzzle import export_puzzle
from bpcheck.reports.outputs import atomic_write_text, prepare_file
from bpcheck.reports.safe import one_line


def cmd_export_puzzle(args) -> int:
    try:
        if args.out:  # checked before anything is read (a missing folder is exit 2, not a traceback)
            prepare_file(args.out, "--out", inputs=(Path(args.file),))
        text = export_puzzle(args.file, args.index)
        if args.out:
            try:
                atomic_write_text(args.out, text)
            except OSError as e:
                raise InputError(args.out, "--out", f"cannot write the script: {e.strerror or e}") from None
    except InputError as e:
        print(one_line(f"bpcheck: error: {e.render()}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    if not args.out:
        print(text, end="")
    return EXIT_OK
