"""`bpcheck baseline RESULT.json`: parse, draft, write (the entries: :mod:`bpcheck.harness.baseline`)."""

from __future__ import annotations

import sys
from pathlib import Path

from bpcheck.cli.exits import EXIT_OK
from bpcheck.errors import InputError
from bpcheck.harness.baseline import baseline_entries
from bpcheck.reports.outputs import atomic_write_text, prepare_file


def cmd_baseline(args) -> int:
    if args.out:  # checked before the result is read: a folder that is not there is exit 2
        prepare_file(args.out, "--out", inputs=(Path(args.result),))
    text, written, unlisted = baseline_entries(args.result)
    if args.out:
        try:
            atomic_write_text(args.out, text)
        except OSError as e:
            raise InputError(args.out, "--out", f"cannot write: {e.strerror or e}") from None
    else:
        sys.stdout.write(text)
    print(f"baseline: {written} entries drafted (reasons empty: write them before use)"
          + (f"; {unlisted} counterexamples cannot be listed (see the comments)" if unlisted else ""), file=sys.stderr)
    return EXIT_OK
