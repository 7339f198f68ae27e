"""Output files and folders: checked before a run starts, stale ones removed, new ones written
atomically, folders replaced whole (docs/checking.md, "Output files").

- :func:`prepare_file` checks that a ``--json`` (or similar) file can be written *before* the run
  (exit 2 up front, never a traceback after it) and removes the file an earlier run left there,
  so a CI job can never read a stale result;
- :func:`atomic_write_text` writes a temporary file in the same folder, flushes it to disk and
  renames it over the target: a reader sees the old file or the new one, never half of one;
- :func:`prepare_dir` / :func:`replace_dir` do the same for output folders (``--report``,
  ``--cex-dir``). bpcheck marks each folder it writes with a manifest file (:data:`MARKER`,
  listing every file it wrote). A folder is accepted only when it does not exist, is empty, or
  holds a bpcheck manifest that lists every file in it: bpcheck never deletes a file it did not
  write. The new folder is built beside the old one and renamed into place when complete.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable, Sequence

from bpcheck import __version__
from bpcheck.errors import InputError

MARKER = ".bpcheck-output.json"


def _parent(p: Path) -> Path:
    return p.parent if str(p.parent) else Path(".")


def _probe(folder: Path, shown: str, option: str) -> None:
    """Can a file be created in `folder`? (os.access says yes to root on a read-only disk.)"""
    probe = folder / f".bpcheck-probe-{os.getpid()}"
    try:
        with open(probe, "wb"):
            pass
        probe.unlink()
    except OSError as e:
        raise InputError(shown, option, f"cannot write in the folder {str(folder)!r}: {e.strerror or e}") from None


def prepare_file(path: str, option: str, keep: bool = False, inputs: tuple[Path, ...] = ()) -> Path:
    """Check that `path` can be written; remove a file an earlier run left there (unless `keep`)."""
    p = Path(path)
    if p.is_dir():
        raise InputError(path, option, "is a folder; expected a file name")
    folder = _parent(p)
    if not folder.exists():
        raise InputError(path, option, f"the folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise InputError(path, option, f"{str(folder)!r} is not a folder")
    try:
        rp = p.resolve()
        if any(rp == Path(i).resolve() for i in inputs):
            raise InputError(path, option, "is one of the input files; it would be overwritten")
    except OSError:
        pass
    _probe(folder, path, option)
    if p.exists() and not p.is_symlink() and not p.is_file():  # a device, a FIFO, a socket: never removed
        raise InputError(path, option, "exists and is not a regular file")
    if not keep and (p.exists() or p.is_symlink()):
        try:
            p.unlink()  # a result from an earlier run must not stay in place
        except OSError as e:
            raise InputError(path, option, f"cannot remove the result an earlier run left here: {e.strerror or e}") from None
    return p


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    atomic_write(path, [data])


def _manifest(folder: Path) -> dict | None:
    m = folder / MARKER
    if not m.is_file():
        return None
    try:
        data = json.loads(m.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list) or not all(isinstance(f, str) for f in data["files"]):
        return None
    return data


def _all_files(folder: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        rel = Path(dirpath).relative_to(folder)
        for f in filenames:
            out.append((rel / f).as_posix())
        for d in dirnames:
            full = Path(dirpath) / d
            if full.is_symlink():
                out.append((rel / d).as_posix())
    return sorted(out)


def _tmp_dirs(p: Path) -> list[Path]:
    folder = _parent(p)
    try:
        return [q for q in folder.iterdir() if q.name.startswith(f".{p.name}.bpcheck-tmp-") and q.is_dir()]
    except OSError:
        return []


def prepare_dir(path: str, option: str, kind: str) -> Path:
    """Check that the output folder `path` can be (re)written and remove what an earlier bpcheck
    run wrote there. A non-empty folder that is not a bpcheck `kind` folder, or that holds files
    bpcheck did not write, is refused (InputError, exit 2): nothing of the user's is deleted."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(path, option, "exists and is not a folder")
    folder = _parent(p.resolve()) if p.exists() else _parent(p)
    if not p.exists():
        q = folder
        while not q.exists():
            q = _parent(q)
            if q == _parent(q):
                break
        if q.exists() and not q.is_dir():
            raise InputError(path, option, f"{str(q)!r} is not a folder")
        folder = q
    _probe(folder, path, option)
    if p.is_dir():
        files = _all_files(p)
        if files:
            man = _manifest(p)
            if man is None:
                raise InputError(
                    path, option, f"the folder is not empty and was not written by bpcheck (no {MARKER}): name a new or an empty folder"
                )
            if man.get("kind") != kind:
                raise InputError(path, option, f"the folder holds a bpcheck {man.get('kind')!r} output, not {kind!r}")
            foreign = [f for f in files if f != MARKER and f not in set(man["files"])]
            if foreign:
                shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
                raise InputError(path, option, f"the folder holds files bpcheck did not write ({shown}): move them, or name another folder")
            try:
                shutil.rmtree(p)  # a report from an earlier run must not stay in place
            except OSError as e:
                raise InputError(path, option, f"cannot remove the output an earlier run left here: {e.strerror or e}") from None
    for old in _tmp_dirs(p):  # left by a run that was killed while writing
        shutil.rmtree(old, ignore_errors=True)
    return p


def replace_dir(path: str | Path, kind: str, build: Callable[[Path], None]) -> None:
    """Build the folder with `build(tmp)` beside `path`, write its manifest, and rename it into
    place (the folder `path`, if any, must be empty or one bpcheck wrote: see prepare_dir)."""
    p = Path(path)
    parent = _parent(p)
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{p.name}.bpcheck-tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        build(tmp)
        files = [f for f in _all_files(tmp) if f != MARKER]
        (tmp / MARKER).write_text(json.dumps({"bpcheck": __version__, "kind": kind, "files": files}, indent=1) + "\n", encoding="utf-8")
        if p.is_dir():
            left = [f for f in _all_files(p) if f != MARKER]
            man = _manifest(p)
            if left and (man is None or any(f not in set(man["files"]) for f in left)):
                raise InputError(str(path), "", "files appeared in the output folder during the run; it was not replaced (the new output is not written)")
            shutil.rmtree(p)
        os.replace(tmp, p)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


__all__ = ["MARKER", "atomic_write", "atomic_write_bytes", "atomic_write_text", "prepare_dir", "prepare_file", "remove_stale_temporaries", "replace_dir"]


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files :func:`atomic_write` left beside `path` when its writer was
    killed (``.NAME.tmp-PID`` whose process is gone; a live process's is left alone). Returns the
    files removed. Called before a file written again and again (a checkpoint) is written."""
    path = Path(path)
    prefix = f".{path.name}.tmp-"
    gone = []
    try:
        names = [q for q in _parent(path).iterdir() if q.name.startswith(prefix) and q.name[len(prefix) :].isdigit()]
    except OSError:
        return gone
    for q in names:
        pid = int(q.name[len(prefix) :])
        if pid == os.getpid():
            continue  # ours: atomic_write replaces or removes it
        try:
            os.kill(pid, 0)
            continue  # a live process (maybe a writer at work): not ours to remove
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, OSError):
            continue
        try:
            if q.is_file() and not q.is_symlink():
                q.unlink()
                gone.append(q)
        except OSError:
            pass
    return gone


def atomic_write(path: str | Path, chunks: Sequence[bytes]) -> None:
    """Write `chunks` to `path` atomically: a temporary file beside it, fsync, then rename, so a
    reader (or a run killed half-way) sees the old file or the new one, never a part (every output
    file of bpcheck is written this way: bpcheck.reports.outputs)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            for b in chunks:
                f.write(b)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
