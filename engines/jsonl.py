"""Engines in any language: the client side of the JSON-lines protocol (docs/protocol.md).

``--engine cmd:"COMMAND"`` runs COMMAND (split like a shell would, run without one) and talks to
it over stdin/stdout, one JSON object per line. :class:`JsonlEngine` implements the engine
interface (:mod:`bpcheck.engines.interface`) on top of it, so the explorer, the invariants and the
reports treat it like any other engine.

Every way the engine can misbehave is a :class:`~bpcheck.engines.faults.SystemFault`, which the
explorer records as an ENGINE-FAULT counterexample with the trace that led to it, then goes on
with the other branches:

``crash``            the process exited or closed its output
``timeout``          no reply within the per-call timeout (``--call-timeout``)
``malformed``        a reply that is not one JSON object, or that answers another request
``schema``           a reply that breaks engines/schemas/protocol.schema.json (an observation must
                     match docs/model.md's shape), or two actions with one label
``refused``          an error reply to a call the engine must answer, e.g. ``apply`` of an action
                     its ``legal_actions`` offered
``nondeterministic`` the same state and action gave two results (asked twice with
                     ``--check-determinism``; always checked when a state is met again),
                     or the initial state, observed twice, gave two observations

After a crash, a timeout or a malformed reply the process is killed; the next call starts a new
one (hello, start) and rebuilds the state it needs by re-applying the actions that led to it.
After :data:`MAX_RESTARTS` restarts on one board every further call fails at once (a ``crash``
fault), so the board ends quickly with what it gathered. An engine that cannot be run, speaks
another protocol version or refuses the board at ``start`` is bad input (exit 2).
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections import deque
from importlib import resources
from typing import Any

import jsonschema
import orjson
import xxhash

from bpcheck import __version__
from bpcheck.engines import observation_paths
from bpcheck.engines.faults import Abandoned, SystemFault, check_stop
from bpcheck.engines.guard import duplicate_label, duplicate_label_fault
from bpcheck.engines.interface import DEFAULT_CAPABILITIES, Capabilities, EngineRefusal, card_record, start_document
from bpcheck.errors import InputError
from bpcheck.model.board import Board
from bpcheck.model.canonical import fingerprint
from bpcheck.model.events import Event

PROTOCOL_VERSION = 2  # the newest version bpcheck speaks; version 1 engines work unchanged
PROTOCOL_VERSIONS = (1, 2)
DEFAULT_CALL_TIMEOUT = 10.0  # seconds per call
MAX_REPLY_BYTES = 16 << 20  # a longer reply line is a `malformed` ENGINE-FAULT (docs/protocol.md)
STDERR_LINE_KEEP = 4096  # bytes kept of each stderr line (its end) for crash reports
STDERR_TAIL_LINES = 40  # a crash report shows at most the engine's last 40 stderr lines ...
STDERR_TAIL_BYTES = 4096  # ... and at most 4 KiB of them (the last ones kept whole where they fit)
RELEASE_BATCH = 32  # no-cloning engines: handles released per `release` request
HANDSHAKE_TIMEOUT = 10.0  # at least this long for process start-up, hello and start
MAX_RESTARTS = 5  # per board
POLL_SLICE = 0.1  # seconds: a read waits at most this long before it looks for an overdue stop
MAX_ACTIONS = 10_000  # legal actions one state may offer; more is a `schema` ENGINE-FAULT naming the limit
FAULT_KINDS = ("crash", "timeout", "malformed", "schema", "refused", "nondeterministic")

_SCHEMA: dict | None = None


def protocol_schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = json.loads((resources.files("bpcheck.engines") / "schemas" / "protocol.schema.json").read_text("utf-8"))
    return _SCHEMA


# =============================================================================================
# Reply validation
# =============================================================================================


def _pairs_unique(pairs: list) -> dict:
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise _DuplicateKey(k)
        seen[k] = v
    return seen


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def duplicate_key(line: bytes, parsed: Any) -> str | None:
    """A key that occurs twice in one object of the JSON text `line` (`parsed` is what orjson
    made of it, the last of each key kept), or None. Cheap for every reply: a key lost to a
    duplicate leaves fewer key separators in `parsed` written back than in `line` (string
    contents are written back with the same separators); only then is the text parsed again,
    by a reader that names the key."""
    again = orjson.dumps(parsed)
    if line.count(b'":') + line.count(b'" :') <= again.count(b'":'):
        return None
    try:
        json.loads(line, object_pairs_hook=_pairs_unique)
    except _DuplicateKey as e:
        return e.key
    except ValueError:
        return None
    return None


def _where(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "(the reply)"


class ReplyValidator:
    """Validates replies against the protocol schema, fast enough for every call.

    The schema's ``$ref``s are inlined once (jsonschema's reference lookups dominate its time
    otherwise). A reply's envelope is validated with its big pieces (actions, events,
    observation) stubbed to ``true``; the observation is validated with its cards stubbed;
    then each piece (action, event, monster, spell, card) is validated with its own definition,
    and a piece already seen valid (by its canonical JSON) is not validated again: the
    observations of neighbouring states share most of their cards and events.
    """

    CACHE_LIMIT = 200_000

    def __init__(self, schema: dict | None = None, passcodes: bool = False) -> None:
        schema = protocol_schema() if schema is None else schema
        self._defs: dict = schema["$defs"]
        self.passcodes = passcodes  # protocol 2: a passcode beside every card name
        self._validators: dict[tuple[str, frozenset], jsonschema.Draft202012Validator] = {}
        self._seen: dict[str, set[bytes]] = {}
        self.event_kinds = set(self._defs["event"]["properties"]["kind"]["enum"])

    def _inline(self, node: Any, stub: frozenset) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/") :]
                target = True if name in stub else self._inline(self._defs[name], stub)
                rest = {k: self._inline(v, stub) for k, v in node.items() if k != "$ref"}
                return {"allOf": [target], **rest} if rest else target
            out = {k: (v if k in ("const", "enum") else self._inline(v, stub)) for k, v in node.items()}
            if out.get("items") is True:  # arrays of stubbed pieces: the items are checked one by one later
                del out["items"]
            if len(out) == 1 and "anyOf" in out and True in out["anyOf"]:
                return True  # "a stubbed piece or null": the piece (if any) is checked later
            return out
        if isinstance(node, list):
            return [self._inline(x, stub) for x in node]
        return node

    def _validator(self, name: str, stub: frozenset = frozenset()) -> jsonschema.Draft202012Validator:
        key = (name, stub)
        v = self._validators.get(key)
        if v is None:
            v = jsonschema.Draft202012Validator(self._inline(self._defs[name], stub))
            self._validators[key] = v
        return v

    def _check(self, name: str, value: Any, where: str, stub: frozenset = frozenset()) -> str | None:
        errors = list(self._validator(name, stub).iter_errors(value))
        if not errors:
            return None
        e = jsonschema.exceptions.best_match(errors) or errors[0]
        path = _where(list(e.absolute_path))
        if where:
            path = where if path == "(the reply)" else f"{where}{'' if path.startswith('[') else '.'}{path}"
        return f"{path}: {e.message}"

    def _piece(self, name: str, value: Any, where: str) -> str | None:
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        seen = self._seen.setdefault(name, set())
        if key in seen:
            return None
        problem = self._check(name, value, where)
        if problem is None and self.passcodes:
            problem = _passcode_problem(value, where)
        if problem is None:
            if len(seen) > self.CACHE_LIMIT:
                seen.clear()
            seen.add(key)
        return problem

    def reply(self, op: str, reply: dict) -> str | None:
        """None if `reply` is a valid reply to `op`, else the first problem found."""
        problem = self._check(f"{op}_reply", reply, "", _ENVELOPE)
        if problem is not None:
            return problem
        if op == "legal_actions":
            if len(reply["actions"]) > MAX_ACTIONS:  # before any per-action work (issue 33)
                return f"actions: {len(reply['actions']):,} legal actions, more than the {MAX_ACTIONS:,} one state may offer (the limit, MAX_ACTIONS)"
            for i, a in enumerate(reply["actions"]):
                p = self._piece("action", a, f"actions[{i}]")
                if p:
                    return p
        elif op == "apply":
            for i, e in enumerate(reply["events"]):
                p = self._event(e, f"events[{i}]")
                if p:
                    return p
        elif op == "observe":
            return self.observation(reply["observation"], "observation")
        return None

    def _event(self, e: Any, where: str) -> str | None:
        if not isinstance(e, dict) or e.get("kind") not in self.event_kinds:
            return self._check("event", e, where)  # the general definition names the problem
        return self._piece(f"event_{e['kind']}", e, where)

    def observation(self, obs: Any, where: str = "observation") -> str | None:
        problem = self._check("observation", obs, where, _CARDS)
        if problem is not None:
            return problem
        if self.passcodes:
            for i, link in enumerate(obs.get("chain", ())):
                if q := _passcode_problem(link, f"{where}.chain[{i}]"):
                    return q
        for side, p in enumerate(obs["players"]):
            at = f"{where}.players[{side}]"
            for i, m in enumerate(p["monsters"]):
                if m is not None and (q := self._piece("monster", m, f"{at}.monsters[{i}]")):
                    return q
            for i, c in enumerate(p["spells"]):
                if c is not None and (q := self._piece("spell", c, f"{at}.spells[{i}]")):
                    return q
            if p["field_zone"] is not None and (q := self._piece("spell", p["field_zone"], f"{at}.field_zone")):
                return q
            for pile in ("hand", "graveyard", "banished", "deck"):
                for i, c in enumerate(p[pile]):
                    if q := self._piece("card_ref", c, f"{at}.{pile}[{i}]"):
                        return q
        return None


def _passcode_problem(value: Any, where: str) -> str | None:
    """Protocol 2 ``passcodes``: every ``card`` (a card name) has a ``passcode`` beside it, and
    every other card-name field ``X`` that has one calls it ``X_passcode``."""
    if isinstance(value, dict) and isinstance(value.get("card"), str) and "passcode" not in value:
        return f"{where}.passcode: missing beside card {value['card']!r} (the engine declared passcodes)"
    return None


def parse_capabilities(reply: dict) -> Capabilities:
    """The Capabilities of a hello reply (schema-checked already); ValueError ("field:
    problem") for a capability a version 1 reply carries or a path that names no part of the
    observation."""
    caps = reply.get("capabilities")
    if caps is None:
        return DEFAULT_CAPABILITIES
    if reply.get("protocol") != 2:
        raise ValueError("capabilities: only a protocol 2 reply declares capabilities")
    unobserved = caps.get("unobserved", [])
    for i, path in enumerate(unobserved):
        problem = observation_paths.schema_problem(path, protocol_schema())
        if problem is not None:
            raise ValueError(f"capabilities.unobserved[{i}]: {path!r}: {problem}")
    return Capabilities(
        unobserved=frozenset(unobserved),
        implicit_passes=bool(caps.get("implicit_passes", False)),
        cloning=bool(caps.get("cloning", True)),
        passcodes=bool(caps.get("passcodes", False)),
    )


# =============================================================================================
# The engine process
# =============================================================================================


_ENVELOPE = frozenset({"action", "event", "observation"})
_CARDS = frozenset({"monster", "spell", "card_ref"})


class _Timeout(Exception):
    pass


class _TooLarge(Exception):
    pass


class _Process:
    """One run of the engine command, in its own session and process group (every process it
    starts is killed with it). Replies are read from its stdout with poll(), so every read has a
    timeout, and a reply longer than ``max_reply`` bytes is refused without being kept; a
    thread drains its stderr in large reads (kept: the ends of its last lines, for crash
    reports)."""

    def __init__(self, argv: list[str], max_reply: int = MAX_REPLY_BYTES, cwd: str | None = None) -> None:
        self.argv = argv
        self.max_reply = max_reply
        self.p = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,  # its own process group: a hung engine is killed with its children
            cwd=cwd,
        )
        self._fd = self.p.stdout.fileno()  # type: ignore[union-attr]
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._buf = bytearray()
        self._eof = False
        self.stderr_tail: deque[bytes] = deque(maxlen=STDERR_TAIL_LINES)
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._err.start()

    def _read_err(self) -> None:
        # Large reads (not readline on an unbuffered pipe, which costs one system call per byte):
        # an engine that logs megabytes per reply must not slow its own replies down.
        fd = self.p.stderr.fileno()  # type: ignore[union-attr]
        part = b""
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                lines = (part + chunk).split(b"\n")
                part = lines.pop()[-STDERR_LINE_KEEP:]
                for ln in lines[-self.stderr_tail.maxlen :]:  # type: ignore[misc]
                    self.stderr_tail.append(ln[-STDERR_LINE_KEEP:])
        except (OSError, ValueError):
            pass
        if part:
            self.stderr_tail.append(part)

    def send(self, data: bytes) -> bool:
        try:
            self.p.stdin.write(data)  # type: ignore[union-attr]
            self.p.stdin.flush()  # type: ignore[union-attr]
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def receive(self, timeout: float) -> bytes | None:
        """The next line (None at end of output); _Timeout if none comes in time, _TooLarge
        if it is longer than ``max_reply`` bytes (it is not kept)."""
        deadline = time.monotonic() + timeout
        scanned = 0
        while True:
            i = self._buf.find(b"\n", scanned)
            if i >= 0:
                if i > self.max_reply:
                    raise _TooLarge
                line = bytes(self._buf[: i + 1])
                del self._buf[: i + 1]
                return line
            scanned = len(self._buf)
            if scanned > self.max_reply:
                raise _TooLarge
            if self._eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout
            # in slices, so a stop is acted on whatever the engine does (engines/faults.py)
            while not self._poll.poll(min(left, POLL_SLICE) * 1000):
                check_stop()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Timeout
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                chunk = b""
            if chunk:
                self._buf += chunk
            else:
                self._eof = True  # a last line without its newline is not a reply

    def exit_note(self) -> tuple[str, str]:
        """How the process ended, and the last line it wrote to stderr (as " (stderr: ...)")."""
        try:
            code = self.p.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.kill()
            return "closed its output", ""
        self._err.join(timeout=1.0)
        note = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
        tail = [ln.decode("utf-8", "replace").strip() for ln in self.stderr_tail]
        tail = [ln for ln in tail if ln]
        if not tail:
            return note, ""
        last = tail[-1] if len(tail[-1]) <= 200 else tail[-1][:200] + "..."
        return note, f" (stderr: {last})"

    def stderr_lines(self) -> tuple[str, ...]:
        """The end of what the engine wrote to stderr, for a crash report: its last
        :data:`STDERR_TAIL_LINES` lines, at most :data:`STDERR_TAIL_BYTES` bytes (a line longer
        than that keeps its end), trailing blank lines left out (call after :meth:`exit_note`)."""
        lines = [ln.decode("utf-8", "replace").rstrip() for ln in self.stderr_tail]
        while lines and not lines[-1]:
            lines.pop()
        out: list[str] = []
        size = 0
        for ln in reversed(lines):
            if size + len(ln) + 1 > STDERR_TAIL_BYTES:
                if not out:
                    out.append("..." + ln[-(STDERR_TAIL_BYTES - 4) :])
                break
            out.append(ln)
            size += len(ln) + 1
        return tuple(reversed(out))

    def kill(self) -> None:
        # The whole process group, even when the engine itself has exited: the processes it
        # started (a shell wrapper's child, a helper) must not outlive the session.
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if self.p.poll() is None:
                self.p.kill()
        try:
            self.p.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not wait
            pass
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass

    def close(self) -> None:
        """End the session politely (end of input), then make sure the process is gone."""
        if self.p.poll() is None:
            try:
                self.p.stdin.close()  # type: ignore[union-attr]
                self.p.wait(timeout=1.0)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def _close_process(holder: list) -> None:
    if holder and holder[0] is not None:
        holder[0].close()
        holder[0] = None


# =============================================================================================
# The engine
# =============================================================================================


class _EngineError(Exception):
    """The engine answered with {"error": ...}."""


class JAction:
    """An action of an out-of-process engine: its record as the engine sent it."""

    __slots__ = ("label", "kind", "player", "record")

    def __init__(self, record: dict) -> None:
        self.record = record
        self.label: str = record["label"]
        self.kind: str = record["kind"]
        self.player: int = record["player"]

    def to_dict(self) -> dict:
        return dict(self.record)

    def __repr__(self) -> str:
        return f"JAction({self.label!r})"


class JState:
    """An engine state: the engine's handle, valid in one run of the process (``gen``), and
    the way to it (parent and action label), to rebuild it in a later run after a restart."""

    __slots__ = ("gen", "handle", "parent", "label", "terminal", "fp", "obs", "depth", "n_actions", "applied", "live", "__weakref__")

    def __init__(
        self,
        gen: int,
        handle: Any,
        parent: "JState | None",
        label: str | None,
        terminal: bool,
        fp: int,
        obs: dict | None,
        live: "_Live | None" = None,
    ):
        self.gen = gen
        self.handle = handle
        self.parent = parent
        self.label = label
        self.terminal = terminal
        self.fp = fp  # the fingerprint of its observation
        self.obs = obs  # handed out once by observe() (kept for the initial state)
        self.depth = 0 if parent is None else parent.depth + 1
        self.n_actions = -1  # how many actions legal_actions listed (-1: not asked yet)
        self.applied: set[str] | None = None  # the labels applied from it so far (no-cloning engines)
        self.live = live  # no-cloning engines: the handle book-keeping that releases it
        if live is not None:
            live.hold(gen, handle)

    def __reduce__(self):
        """A state that crosses to another process (the workers of the parallel explorer, Ray
        actors: explorers/parallel.py) is its path: its handle names a state of this process's
        engine only (another worker's engine may have given the same number to another state,
        or none). The receiving engine replays the path from its own initial state when the
        state is first used (``JsonlEngine._handle``; a no-cloning engine is sent the path).
        Flat, so that a deep state does not pickle its ancestors recursively."""
        return (_foreign_state, (tuple(self.path()), self.terminal, self.fp, self.obs))

    def path(self) -> list[str]:
        """The action labels from the initial state to this one."""
        out: list[str] = []
        n: JState | None = self
        while n is not None and n.label is not None:
            out.append(n.label)
            n = n.parent
        out.reverse()
        return out

    def release(self) -> None:
        """bpcheck no longer needs this state's handle (no-cloning engines): it is named by its
        path from now on."""
        if self.live is not None and self.handle is not None and self.parent is not None:
            self.live.drop(self.gen, self.handle)
            self.handle = None

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


FOREIGN = -1  # the `gen` of a state made in another process: never a run of this one's engine


def _foreign_state(path: tuple, terminal: bool, fp: int, obs: dict | None) -> JState:
    """A state pickled in another process (JState.__reduce__): a chain of handle-less states
    from an initial state, whose handles this process's engine gives when the state is used."""
    node = JState(FOREIGN, None, None, None, False, 0, None)
    for label in path:
        node = JState(FOREIGN, None, node, label, False, 0, None)
    node.terminal, node.fp, node.obs = terminal, fp, obs
    return node


class _Live:
    """The handles a no-cloning engine gave out that bpcheck still holds (counted: an engine
    may give one handle twice); a handle no longer held is queued for a `release` request."""

    def __init__(self) -> None:
        self.count: dict[tuple[int, bool, Any], int] = {}
        self.queue: list[tuple[int, Any]] = []

    def hold(self, gen: int, handle: Any) -> None:
        if handle is not None:
            k = (gen, isinstance(handle, str), handle)
            self.count[k] = self.count.get(k, 0) + 1

    def drop(self, gen: int, handle: Any) -> None:
        k = (gen, isinstance(handle, str), handle)
        n = self.count.get(k, 0) - 1
        if n > 0:
            self.count[k] = n
            return
        self.count.pop(k, None)
        self.queue.append((gen, handle))


def _freeze(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    return v


def _event(d: dict) -> Event:
    return Event(d["kind"], tuple((k, _freeze(v)) for k, v in d.items() if k != "kind"))


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two JSON values first differ, e.g. ``players[1].lp: 7000 vs 6500``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path + '.' if path else ''}{k}: {'missing' if k not in a else _short(a[k])} vs {'missing' if k not in b else _short(b[k])}"
            if a[k] != b[k]:
                return _first_difference(a[k], b[k], f"{path + '.' if path else ''}{k}")
    elif isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
    return f"{path or 'value'}: {_short(a)} vs {_short(b)}"


def _short(v: Any) -> str:
    s = orjson.dumps(v).decode()
    return s if len(s) <= 120 else s[:117] + "..."


def _digest(v: Any) -> int:
    return xxhash.xxh3_64_intdigest(orjson.dumps(v, option=orjson.OPT_SORT_KEYS))


def parse_command(spec_cmd: str) -> list[str]:
    """The argv of a cmd: engine; bad input when it cannot be run."""
    try:
        argv = shlex.split(spec_cmd)
    except ValueError as e:
        raise InputError("--engine", "", f"cannot split the command {spec_cmd!r}: {e}") from None
    if not argv:
        raise InputError("--engine", "", "cmd: needs a command, e.g. cmd:\"node engines/examples/node/vanilla-engine.js\"")
    if shutil.which(argv[0]) is None:
        raise InputError("--engine", "", f"cannot run {argv[0]!r}: not found or not executable")
    return argv


class JsonlEngine:
    """The engine interface over a subprocess that speaks the JSON-lines protocol."""

    def __init__(
        self,
        command: str,
        call_timeout: float | None = None,
        check_determinism: bool = False,
        name: str | None = None,
        cwd: str | None = None,
    ) -> None:
        self.argv = parse_command(command)
        self.cwd = cwd  # where the command runs (None: the current directory; the pytest plugin: the rootdir)
        self.name = name or f"cmd:{command}"
        self.call_timeout = float(call_timeout) if call_timeout else DEFAULT_CALL_TIMEOUT
        self.check_determinism = check_determinism
        self.engine_name: str | None = None  # what the engine calls itself (hello)
        self.restarts = 0
        self.gen = 0
        self._holder: list[_Process | None] = [None]
        self._finalizer = weakref.finalize(self, _close_process, self._holder)
        self._id = 0
        self._start_msg: dict | None = None
        self._root: JState | None = None
        self._validator = ReplyValidator()
        self.capabilities: Capabilities = DEFAULT_CAPABILITIES  # protocol 2: declared in the hello reply
        self.protocol: int | None = None
        self._live: _Live | None = None  # no-cloning engines: handles held, releases queued
        self.released = 0  # handles released (no-cloning engines)
        self._actions_seen: dict[int, int] = {}  # observation fingerprint -> digest of its actions
        self._steps_seen: dict[tuple[int, str], tuple[int, int]] = {}  # (fp, label) -> (events digest, next fp)
        self._unstable: str | None = None  # the initial state observed twice differently: the fault its expansion raises

    # -- process life ---------------------------------------------------------------------------

    @property
    def _proc(self) -> _Process | None:
        return self._holder[0]

    def close(self) -> None:
        _close_process(self._holder)

    def _kill(self) -> None:
        p = self._proc
        if p is not None:
            p.kill()
        self._holder[0] = None

    def _spawn(self, first: bool) -> Any:
        """Start the process, say hello, start the board; the initial state's handle."""
        try:
            self._holder[0] = _Process(self.argv, cwd=self.cwd)
        except OSError as e:
            if first:
                raise InputError("--engine", "", f"cannot run {self.argv[0]!r}: {e.strerror or e}") from None
            raise SystemFault("crash", f"the engine could not be started again: {e.strerror or e}") from None
        self.gen += 1
        try:
            return self._handshake(first)
        except BaseException:
            self._kill()  # a half-started engine is never used: the next call starts a new one
            raise

    def _handshake(self, first: bool) -> Any:
        t = max(self.call_timeout, HANDSHAKE_TIMEOUT)
        try:
            hello = self._call("hello", timeout=t, protocol=PROTOCOL_VERSIONS[0], versions=list(PROTOCOL_VERSIONS), client=f"bpcheck {__version__}")
        except _EngineError as e:
            if first:
                raise InputError("--engine", "", f"{self.name} refused the protocol handshake: {e}") from None
            raise SystemFault("refused", f"the restarted engine refused 'hello': {e}") from None
        if hello["protocol"] not in PROTOCOL_VERSIONS:
            msg = f"{self.name} speaks protocol version {hello['protocol']}; bpcheck speaks {', '.join(map(str, PROTOCOL_VERSIONS))}"
            if first:
                raise InputError("--engine", "", msg)
            raise SystemFault("schema", msg)
        try:
            caps = parse_capabilities(hello)
        except ValueError as e:
            raise SystemFault("schema", f"the reply to 'hello': {e}") from None
        if first:
            self.protocol = hello["protocol"]
            self.capabilities = caps
            schema = protocol_schema()
            if caps.unobserved:  # the engine may leave these parts out of its observations
                schema = observation_paths.relax_schema(schema, caps.unobserved)
            self._validator = ReplyValidator(schema, passcodes=caps.passcodes)
            self._live = None if caps.cloning else _Live()
        elif caps != self.capabilities or hello["protocol"] != self.protocol:
            raise SystemFault("schema", "the restarted engine declared other capabilities (or another protocol version) than before")
        self.engine_name = hello["engine"]
        assert self._start_msg is not None
        try:
            reply = self._call("start", timeout=t, **self._start_msg)
        except _EngineError as e:
            if first:  # an engine that cannot play this board: the board is skipped (docs/checking.md)
                raise EngineRefusal(f"the engine {self.engine_name!r} cannot start this board: {e}") from None
            raise SystemFault("refused", f"the restarted engine refused to start the board: {e}") from None
        return reply["state"]

    def _ensure(self) -> None:
        """A live process; restarts it (and rebuilds the initial state) after a fault."""
        if self._proc is not None:
            return
        if self.restarts >= MAX_RESTARTS:
            raise SystemFault("crash", f"the engine was restarted {MAX_RESTARTS} times on this board; no more calls are made")
        self.restarts += 1
        handle = self._spawn(first=False)
        assert self._root is not None
        self._root.gen, self._root.handle = self.gen, handle

    # -- one call -------------------------------------------------------------------------------

    def _ended(self, proc: _Process, op: str) -> SystemFault:
        """The ``crash`` fault of an engine that ended before answering ``op`` (the process is
        killed). One message whether the request could still be written or its input was already
        closed: which of the two an engine that dies at once hits depends on the machine's load
        alone, never on the engine, and the same run must report the same fault (issue 34)."""
        note, err = proc.exit_note()
        tail = proc.stderr_lines()
        self._kill()
        return SystemFault("crash", f"the engine {note} before answering {op!r}{err}", stderr=tail)

    def _call(self, op: str, timeout: float | None = None, **fields: Any) -> dict:
        """Send one request and read its reply: the reply, or _EngineError for an error reply,
        or a SystemFault."""
        proc = self._proc
        assert proc is not None
        self._id += 1
        rid = self._id
        t = self.call_timeout if timeout is None else timeout
        if not proc.send(orjson.dumps({"id": rid, "op": op, **fields}) + b"\n"):
            raise self._ended(proc, op)
        try:
            check_stop()
            line = proc.receive(t)
        except Abandoned:  # the reply, if it comes, is not read: this run of the engine ends
            self._kill()
            raise
        except _Timeout:
            self._kill()
            raise SystemFault("timeout", f"no reply to {op!r} within {t:g} s") from None
        except _TooLarge:
            self._kill()
            raise SystemFault("malformed", f"the reply to {op!r} is longer than {proc.max_reply:,} bytes (the limit for one reply)") from None
        if line is None:
            raise self._ended(proc, op)
        try:
            reply = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._kill()
            raise SystemFault("malformed", f"the reply to {op!r} is not JSON: {_short(line.decode('utf-8', 'replace').rstrip())}") from None
        if not isinstance(reply, dict):
            self._kill()
            raise SystemFault("malformed", f"the reply to {op!r} is not a JSON object: {_short(reply)}")
        dup = duplicate_key(line, reply)
        if dup is not None:  # the last one would win silently, and a fault would blame the wrong call
            self._kill()
            raise SystemFault("malformed", f"the reply to {op!r} has the key {_short(dup)} twice in one object")
        if reply.get("id") != rid and not ("error" in reply and reply.get("id") is None):
            self._kill()
            raise SystemFault("malformed", f"the reply to {op!r} (request {rid}) carries id {_short(reply.get('id'))}")
        if "error" in reply:
            problem = self._validator._check("error_reply", reply, "")
            if problem is not None:
                raise SystemFault("schema", f"the error reply to {op!r}: {problem}")
            raise _EngineError(reply["error"])
        problem = self._validator.reply(op, reply)
        if problem is not None:
            raise SystemFault("schema", f"the reply to {op!r}: {problem}")
        return reply

    def _ask(self, op: str, **fields: Any) -> dict:
        """A call the engine must answer: an error reply is a refusal."""
        try:
            return self._call(op, **fields)
        except _EngineError as e:
            raise SystemFault("refused", f"the engine refused {op!r}: {e}") from None

    def _at(self, node: JState, extra: str | None = None) -> dict:
        """The fields that name `node` (or its child by `extra`, just given out) in a request:
        its handle; for a no-cloning engine also its path, and the handle of the initial state
        when bpcheck no longer holds one for it."""
        if self._live is None:
            return {"state": self._handle(node)}
        self._ensure()
        self._flush_releases()
        path = node.path()
        if extra is not None:
            path.append(extra)
        handle = node.handle if node.gen == self.gen and node.handle is not None else None
        if handle is None:
            assert self._root is not None
            handle = self._root.handle
        return {"state": handle, "path": path}

    def _flush_releases(self, force: bool = False) -> None:
        live = self._live
        if live is None or not live.queue or (len(live.queue) < RELEASE_BATCH and not force):
            return
        handles = [h for g, h in live.queue if g == self.gen]
        live.queue.clear()
        if handles and self._proc is not None:
            try:
                self._call("release", states=handles)
            except _EngineError as e:
                raise SystemFault("refused", f"the engine refused to release handles it gave out: {e}") from None
            self.released += len(handles)

    def _handle(self, node: JState) -> Any:
        """`node`'s handle in the current run of the process, rebuilding it if need be."""
        self._ensure()
        if node.gen == self.gen:
            return node.handle
        path: list[JState] = []
        n: JState | None = node
        while n is not None and n.gen != self.gen:
            path.append(n)
            n = n.parent
        if n is None:
            # A state made in another process (FOREIGN, JState.__reduce__): its initial state is
            # this engine's, the rest of its path is applied again here.
            first = path.pop()
            assert first.parent is None and self._root is not None
            first.gen, first.handle = self.gen, self._root.handle
        for n in reversed(path):
            assert n.parent is not None and n.label is not None
            try:
                reply = self._call("apply", state=n.parent.handle, action=n.label)
            except _EngineError as e:
                why = "after a restart" if n.gen != FOREIGN else "replaying a state explored in another worker process"
                raise SystemFault(
                    "nondeterministic", f"{why} the engine refused {n.label!r}, which it had applied before: {e}"
                ) from None
            n.gen, n.handle = self.gen, reply["state"]
        return node.handle

    # -- the engine interface -------------------------------------------------------------------

    def start(self, board: Board) -> JState:
        self._start_msg = start_document(board)
        self.close()
        self.restarts = 0
        handle = self._spawn(first=True)
        at = {"state": handle} if self._live is None else {"state": handle, "path": []}
        terminal = self._terminal(at)
        obs = self._observe(at)
        # The initial state observed twice (one call a board): an engine whose observation of a
        # state changes each time would otherwise be judged on observations that never were
        # (invariant violations instead of an ENGINE-FAULT, issue 33). Told at its expansion.
        again = self._observe(at)
        self._unstable = None
        if again != obs:
            self._unstable = f"observed twice, the initial state gave different observations ({_first_difference(obs, again, 'observation')})"
        self._root = JState(self.gen, handle, None, None, terminal, fingerprint(obs), obs)
        return self._root

    def _terminal(self, at: dict) -> bool:
        return self._ask("terminal", **at)["terminal"]

    def _observe(self, at: dict) -> dict:
        return self._ask("observe", **at)["observation"]

    def legal_actions(self, node: JState) -> list[JAction]:
        if self._unstable is not None and node.parent is None:  # the initial state (or its copy from another worker)
            raise SystemFault("nondeterministic", self._unstable)
        records = self._ask("legal_actions", **self._at(node))["actions"]
        dup = duplicate_label(r["label"] for r in records)
        if dup is not None:  # the same fault as an in-process engine's (engines/guard.py)
            raise duplicate_label_fault(dup)
        if self.check_determinism:
            again = self._ask("legal_actions", **self._at(node))["actions"]
            if again != records:
                raise SystemFault(
                    "nondeterministic", f"asked twice, the same state listed different legal actions ({_first_difference(records, again, 'actions')})"
                )
        d = _digest(records)
        before = self._actions_seen.setdefault(node.fp, d)
        if before != d:
            raise SystemFault("nondeterministic", "a state with the same observation as one met before lists different legal actions")
        node.n_actions = len(records)
        return [JAction(r) for r in records]

    def apply(self, node: JState, action: JAction) -> tuple[JState, list[Event]]:
        label = action.label
        try:
            reply = self._call("apply", **self._at(node), action=label)
        except _EngineError as e:
            raise SystemFault("refused", f"the engine offered {label!r}, then refused to apply it: {e}") from None
        handle, events = reply["state"], reply["events"]
        child_at = {"state": handle} if self._live is None else {"state": handle, "path": [*node.path(), label]}
        terminal = self._terminal(child_at)
        obs = self._observe(child_at)
        if self.check_determinism:
            try:
                again = self._call("apply", **self._at(node), action=label)
            except _EngineError as e:
                raise SystemFault("nondeterministic", f"{label!r} was applied once, then refused in the same state: {e}") from None
            if again["events"] != events:
                raise SystemFault(
                    "nondeterministic",
                    f"applying {label!r} twice to the same state gave different events ({_first_difference(events, again['events'], 'events')})",
                )
            again_at = {"state": again["state"]} if self._live is None else {"state": again["state"], "path": child_at["path"]}
            obs2 = self._observe(again_at)
            if obs2 != obs:
                raise SystemFault(
                    "nondeterministic",
                    f"applying {label!r} twice to the same state gave different observations ({_first_difference(obs, obs2, 'observation')})",
                )
            if self._terminal(again_at) != terminal:
                raise SystemFault("nondeterministic", f"applying {label!r} twice to the same state gave one terminal state and one not")
        fp = fingerprint(obs)
        key = (node.fp, label)
        seen = (_digest(events), fp)
        before = self._steps_seen.setdefault(key, seen)
        if before != seen:
            what = "different events" if before[0] != seen[0] else "a different next state"
            raise SystemFault("nondeterministic", f"applying {label!r} to a state met before (same observation) gave {what} this time")
        child = JState(self.gen, handle, node, label, terminal, fp, obs, self._live)
        if self.check_determinism and self._live is not None and again["state"] != handle:
            self._live.queue.append((self.gen, again["state"]))  # the second copy is not kept
        if self._live is not None and node.n_actions >= 0:
            # Every action of `node` applied: its handle is not needed any more (BFS and DFS
            # never come back to an expanded state; a later replay names it by its path).
            if node.applied is None:
                node.applied = set()
            node.applied.add(label)
            if len(node.applied) >= node.n_actions:
                node.release()
        return child, [_event(e) for e in events]

    def observe(self, node: JState) -> dict:
        obs = node.obs
        if obs is not None:
            if node.parent is not None:
                node.obs = None  # handed out once: frontier states do not keep observations alive
            return obs
        return self._observe(self._at(node))

    def is_terminal(self, node: JState) -> bool:
        return node.terminal


def make_jsonl_engine(spec: str, call_timeout: float | None = None, check_determinism: bool = False, cwd: str | None = None) -> JsonlEngine:
    """The engine for ``cmd:COMMAND`` (the process is started by ``start``, in ``cwd`` when given:
    relative paths of the command are then taken from there)."""
    return JsonlEngine(spec[len("cmd:"):], call_timeout=call_timeout, check_determinism=check_determinism, name=spec, cwd=cwd)


__all__ = ["FAULT_KINDS", "JAction", "JState", "JsonlEngine", "ReplyValidator", "card_record", "make_jsonl_engine", "protocol_schema"]
