"""Checkpoint files: an exploration saved so that `bpcheck check --resume` goes on where it stopped.

No pickle, nothing executable: a checkpoint is a documented binary (docs/checking.md,
"Checkpoint and resume"):

    offset 0   8 bytes   magic  b"BPCKPT" + format version (2 bytes, big-endian: 1)
    offset 8   8 bytes   H, the header's length (unsigned, little-endian)
    offset 16  H bytes   the header: UTF-8 JSON (below)
    then                 the arrays, one after the other, little-endian, as the header lists them
    last       32 bytes  the digest: BLAKE2b-256 of every byte before it, keyed by the run's key

The header holds ``format``, ``bpcheck`` (the version that wrote it), ``key`` (what the
exploration was of: the board file's SHA-256 and path, the engine spec, the invariant IDs, the
strategy, ``--max-depth``, ``--differential``), ``arrays`` (name, item type ``u8``/``i8``/``u4``
and count of each), ``payload_sha256`` (of the arrays' bytes) and ``results`` (counts, per
property exercise counts, the violations found with their action-index traces, goals reached).
The arrays are the visited set: ``fps`` (each state's 64-bit fingerprint), ``parent``, ``via``
(the action index from the parent), ``depth``, the non-tree edges ``extra_src`` / ``extra_dst`` /
``extra_act``, and ``frontier`` (the state indices still to expand, in order). Frontier states
themselves are not stored: resuming re-executes the tree paths to them and checks that each
gives its recorded fingerprint.

Integrity (issue 33): the digest is keyed by the SHA-256 of the run's key (the canonical JSON of
``key``), so it verifies only for the run the checkpoint belongs to and only if no byte was
changed, header included. A checkpoint that does not verify, or whose header holds a field of the
wrong type or a value that cannot be (a frontier entry twice, a count below zero), is refused
(exit 2, naming the field): it is never resumed. The digest guards against edits and damage, not
against someone who knows the run's key and means to forge one.

A checkpoint is written atomically (a temporary file in the same folder, flushed to disk, then
renamed over the old one), so a crash or a signal while writing leaves the previous one intact.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
from array import array
from pathlib import Path

import orjson

from bpcheck import __version__
from bpcheck.errors import InputError
from bpcheck.explorers.core import Snapshot
from bpcheck.reports.outputs import atomic_write, remove_stale_temporaries

MAGIC = b"BPCKPT"
FORMAT = 2  # 2: the keyed digest at the end (issue 33)
DIGEST_BYTES = 32
ARRAYS = (  # name, array typecode, item type in the file
    ("fps", "Q", "u8"),
    ("parent", "q", "i8"),
    ("via", "I", "u4"),
    ("depth", "I", "u4"),
    ("extra_src", "I", "u4"),
    ("extra_dst", "I", "u4"),
    ("extra_act", "I", "u4"),
    ("frontier", "Q", "u8"),
)
MAX_HEADER = 256 * 2**20  # a header larger than this is not one bpcheck wrote


def _attr(name: str) -> str:
    return {"depth": "depth_of"}.get(name, name)


def _le(a: array) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover - the file is little-endian everywhere
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def checkpoint_key(board_path: str, engine: str, invariants: list[str], strategy: str, max_depth: int | None, differential: bool) -> dict:
    """What a checkpoint is of; a resume must match it exactly."""
    try:
        digest = hashlib.sha256(Path(board_path).read_bytes()).hexdigest()
    except OSError as e:
        raise InputError(board_path, "", f"cannot read the board to key the checkpoint: {e.strerror or e}") from None
    return {
        "board": board_path,
        "board_sha256": digest,
        "engine": engine,
        "invariants": sorted(invariants),
        "strategy": strategy,
        "max_depth": max_depth,
        "differential": differential,
    }


def _run_key(key: dict) -> bytes:
    """The digest's key: the SHA-256 of the run's key, canonical JSON."""
    return hashlib.sha256(json.dumps(key, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()).digest()


def _digest(key: dict, parts: list[bytes]) -> bytes:
    h = hashlib.blake2b(key=_run_key(key), digest_size=DIGEST_BYTES)
    for b in parts:
        h.update(b)
    return h.digest()


def write_checkpoint(path: str | Path, snap: Snapshot, key: dict) -> None:
    """Write `snap` to `path` atomically (temporary file + fsync + rename)."""
    path = Path(path)
    blobs = []
    arrays = []
    h = hashlib.sha256()
    for name, typecode, kind in ARRAYS:
        a = getattr(snap, _attr(name))
        if a.typecode != typecode:
            a = array(typecode, a)
        b = _le(a)
        blobs.append(b)
        h.update(b)
        arrays.append({"name": name, "type": kind, "count": len(a)})
    doc = {"format": FORMAT, "bpcheck": __version__, "key": key, "arrays": arrays, "payload_sha256": h.hexdigest(), "results": snap.results}
    try:
        header = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a lone surrogate in a message (an in-process engine's text): JSON escapes
        header = json.dumps(doc, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()
    parts = [MAGIC + FORMAT.to_bytes(2, "big"), len(header).to_bytes(8, "little"), header, *blobs]
    remove_stale_temporaries(path)  # a writer killed half-way (kill -9) left its temporary file
    atomic_write(path, [*parts, _digest(key, parts)])


def read_checkpoint(path: str | Path, key: dict) -> Snapshot:
    """Read and check a checkpoint; every problem is an InputError naming the file and field."""
    where = str(path)
    p = Path(path)
    try:
        if not p.is_file():
            raise InputError(where, "--resume", "no checkpoint file here (is it a regular file? was the exploration finished?)")
        data = p.read_bytes()
    except OSError as e:
        raise InputError(where, "--resume", f"cannot read the checkpoint: {e.strerror or e}") from None
    if len(data) < 16 or data[:6] != MAGIC:
        raise InputError(where, "", "not a bpcheck checkpoint (bad magic bytes)")
    fmt = int.from_bytes(data[6:8], "big")
    if fmt != FORMAT:
        raise InputError(where, "format", f"checkpoint format {fmt}; this bpcheck reads format {FORMAT}")
    data, digest = data[:-DIGEST_BYTES], data[-DIGEST_BYTES:]
    hlen = int.from_bytes(data[8:16], "little")
    if len(data) < 16 or hlen > min(MAX_HEADER, len(data) - 16):
        raise InputError(where, "header", f"the header length {hlen} runs past the end of the file")
    try:
        header = orjson.loads(data[16 : 16 + hlen])
    except orjson.JSONDecodeError as e:
        try:  # a header holding a lone surrogate's escape (which orjson refuses)
            header = json.loads(data[16 : 16 + hlen])
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise InputError(where, "header", f"not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise InputError(where, "header", "not a JSON object")
    if header.get("bpcheck") != __version__:
        raise InputError(where, "bpcheck", f"written by bpcheck {header.get('bpcheck')!r}; this is bpcheck {__version__} (fingerprints may differ)")
    saved = header.get("key")
    if not isinstance(saved, dict):
        raise InputError(where, "key", "missing")
    for k, v in key.items():
        if saved.get(k) != v:
            if k == "board_sha256":
                problem = "the board file has changed since the checkpoint was written"
            else:
                problem = f"the checkpoint is of {saved.get(k)!r}; this run's is {v!r}"
            raise InputError(where, f"key.{k}", problem)
    if not hmac.compare_digest(_digest(key, [data]), digest):
        raise InputError(where, "digest", "the checkpoint does not verify (an edited or damaged file, or one written for another run): it is not resumed")
    specs = header.get("arrays")
    if not isinstance(specs, list) or [s.get("name") if isinstance(s, dict) else None for s in specs] != [a[0] for a in ARRAYS]:
        raise InputError(where, "arrays", f"expected the arrays {', '.join(a[0] for a in ARRAYS)} in this order")
    off = 16 + hlen
    payload = data[off:]
    if hashlib.sha256(payload).hexdigest() != header.get("payload_sha256"):
        raise InputError(where, "payload_sha256", "the arrays do not match their hash (a truncated or damaged file)")
    out = {}
    pos = 0
    for spec, (name, typecode, kind) in zip(specs, ARRAYS):
        count = spec.get("count")
        if spec.get("type") != kind or not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise InputError(where, f"arrays.{name}", f"expected type {kind} and a count")
        a = array(typecode)
        n = count * a.itemsize
        if pos + n > len(payload):
            raise InputError(where, f"arrays.{name}", "runs past the end of the file")
        a.frombytes(payload[pos : pos + n])
        if sys.byteorder == "big":  # pragma: no cover
            a.byteswap()
        out[name] = a
        pos += n
    if pos != len(payload):
        raise InputError(where, "arrays", f"{len(payload) - pos} bytes after the last array")
    n = len(out["fps"])
    if any(len(out[k]) != n for k in ("parent", "via", "depth")) or not (len(out["extra_src"]) == len(out["extra_dst"]) == len(out["extra_act"])):
        raise InputError(where, "arrays", "the arrays' lengths do not agree")
    if any(i >= n for i in out["frontier"]) or any(p >= n for p in out["parent"]):
        raise InputError(where, "arrays", "a state index is out of range")
    if len(set(out["frontier"])) != len(out["frontier"]):
        raise InputError(where, "arrays.frontier", "a state is in the frontier twice")
    results = header.get("results")
    need = ("transitions", "max_depth", "terminal_states", "depth_bound_hit", "action_counts", "props", "violations", "goals", "goal_initial")
    if not isinstance(results, dict) or any(k not in results for k in need):
        raise InputError(where, "results", f"expected the fields {', '.join(need)}")
    _check_results(where, results)
    kept = results.get("system", {})
    nj = kept.get("not_judged", {}) if isinstance(kept, dict) else None
    if not isinstance(nj, dict) or not all(isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in nj.items()):
        raise InputError(where, "results.system", "expected {\"not_judged\": {invariant: [reasons]}}")
    return Snapshot(
        key["strategy"],
        out["fps"],
        out["parent"],
        out["via"],
        out["depth"],
        out["extra_src"],
        out["extra_dst"],
        out["extra_act"],
        out["frontier"],
        results,
    )


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_results(where: str, r: dict) -> None:
    """Every field the resume reads has its type (explorers/core.py _restore_results); else an
    InputError naming it (a bpcheck bug or an edit; the digest catches edits first)."""

    def bad(field: str, want: str) -> InputError:
        return InputError(where, f"results.{field}", f"expected {want}")

    for f in ("transitions", "max_depth", "terminal_states"):
        if not _count(r[f]):
            raise bad(f, "a count (an integer, 0 or more)")
    if not isinstance(r["depth_bound_hit"], bool):
        raise bad("depth_bound_hit", "true or false")
    ac = r["action_counts"]
    if not isinstance(ac, dict) or not all(_count(v) for v in ac.values()):
        raise bad("action_counts", "an object of counts")
    props = r["props"]
    if not isinstance(props, dict) or not all(isinstance(v, list) and len(v) == 2 and all(_count(x) for x in v) for v in props.values()):
        raise bad("props", "an object of [checked, violations] count pairs")
    vs = r["violations"]
    if not isinstance(vs, list):
        raise bad("violations", "a list")
    for i, v in enumerate(vs):
        if not isinstance(v, dict):
            raise bad(f"violations[{i}]", "an object")
        for f, ok, want in (
            ("prop", lambda x: isinstance(x, str), "a string"),
            ("message", lambda x: isinstance(x, str), "a string"),
            ("trace", lambda x: isinstance(x, list) and all(_count(a) for a in x), "a list of action indices"),
            ("initial", _count, "a state index"),
            ("depth", _count, "a count"),
            ("at", lambda x: isinstance(x, str), "a string"),
        ):
            if not ok(v.get(f)):
                raise bad(f"violations[{i}].{f}", want)
    goals, gi = r["goals"], r["goal_initial"]
    if not isinstance(goals, dict) or not all(t is None or (isinstance(t, list) and all(_count(a) for a in t)) for t in goals.values()):
        raise bad("goals", "an object of traces (lists of action indices) or null")
    if not isinstance(gi, dict) or not all(x is None or _count(x) for x in gi.values()):
        raise bad("goal_initial", "an object of state indices")


__all__ = ["FORMAT", "MAGIC", "checkpoint_key", "read_checkpoint", "write_checkpoint"]
