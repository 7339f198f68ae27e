"""What a command line names: files (folders expanded) and positive numbers.

These are command-line concerns, here until the command line has a package of its own (issue 32:
they move with it, whole): :func:`input_files` expands the paths given to ``check``, ``validate``,
``scenario`` and the other commands; :func:`positive_number` is an *argparse type*
(``type=positive_number(int)``) for options such as ``--timeout``. Both raise what the command
line reports: an :class:`~bpcheck.errors.InputError` (exit 2) or an ``argparse`` error.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
from pathlib import Path
from typing import Iterable

from bpcheck.errors import InputError
from bpcheck.model.reading import INT_MAX

# -- files named on a command line ----------------------------------------------------------------


def input_files(paths: Iterable[str], suffix: str = ".toml", what: str = "board or scenario") -> list[tuple[Path, str]]:
    """The files named on a command line, each folder expanded to the ``*suffix`` files under it
    (sorted, symlinked folders followed once). A missing path, an unreadable folder or a folder
    holding no such file is an error: a run never checks "0 boards" and passes."""
    out: list[tuple[Path, str]] = []
    for p in paths:
        path = Path(p)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise InputError(p, "", "no such file or directory") from None
        except OSError as e:
            raise InputError(p, "", f"cannot read: {e.strerror or e}") from None
        except ValueError:
            raise InputError(p, "", "not a valid file name") from None
        if not stat.S_ISDIR(st.st_mode):
            out.append((path, p))
            continue
        found: list[Path] = []
        seen: set[tuple[int, int]] = {(st.st_dev, st.st_ino)}
        todo = [path]
        while todo:
            folder = todo.pop()
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:
                raise InputError(str(folder), "", f"cannot read folder: {e.strerror or e}") from None
            for e in entries:
                try:
                    is_dir = e.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    try:
                        s2 = e.stat()
                    except OSError as err:
                        raise InputError(e.path, "", f"cannot read folder: {err.strerror or err}") from None
                    if (s2.st_dev, s2.st_ino) not in seen:  # a symlink loop is followed once
                        seen.add((s2.st_dev, s2.st_ino))
                        todo.append(Path(e.path))
                elif e.name.endswith(suffix):
                    found.append(Path(e.path))
        if not found:
            raise InputError(p, "", f"folder holds no {suffix} files (no {what} to read)")
        out.extend((f, str(f)) for f in sorted(found))
    return out


# -- command-line numbers -------------------------------------------------------------------------


def positive_number(kind=float):
    """An argparse type: a positive, finite number (``nan``, ``inf``, ``0``, ``-1`` are refused)."""
    def parse(text: str):
        try:
            v = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if isinstance(v, float) and not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        if isinstance(v, int) and v > INT_MAX:
            raise argparse.ArgumentTypeError(f"must be at most {INT_MAX}, got {text!r}")
        return v

    return parse


__all__ = ["input_files", "positive_number"]
