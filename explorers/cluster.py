"""`--cluster ADDRESS`: the work of `-j N` on a Ray cluster (docs/cluster.md). Generic: nothing here
knows Yu-Gi-Oh!.

Two transports for the one algorithm each command already has:

- :class:`TaskPool`: independent tasks (a board, a mutant, a drawn fuzz board) as Ray tasks, with
  the methods of :class:`bpcheck.explorers.pool.Pool`, dispatched in the caller's order, at most
  one per worker CPU at a time; the callers put the outcomes back in their own fixed order, so
  no output depends on the order tasks complete in. A task whose worker dies is run again by Ray
  (:data:`TASK_RETRIES`); one that keeps dying is an outcome ``crashed``, naming the node it
  last ran on.
- :class:`ActorPool`: the worker transport of :func:`bpcheck.explorers.parallel.explore_parallel`
  (one big board): each worker is a Ray actor, spread over the nodes, answering the same requests
  as a worker process (``parallel.handle``). Replies are taken in worker order, never in
  completion order. A lost actor (its process killed, its node removed) raises ``WorkerLost``:
  the explorer takes the exploration back to the last committed chunk and new actors take over
  the shards.

Ray's own messages. Ray's driver prints the errors its nodes publish (a worker died, a task is
retried) on **stdout**, from a thread of its own (``ray._private.worker.listen_error_messages``
calls the module's ``print_to_stdstream``); stdout is bpcheck's result. :func:`connect` puts
:func:`_ray_said` in its place: a worker's death becomes bpcheck's note on stderr, naming the
task's board (``bpcheck: BOARD: worker lost (pid N on node IP, ...); Ray runs its task again``,
said by :class:`TaskPool` in the driver's main thread; a lost actor is said by the explorer's
caller), the notice of the retry it implies is dropped, any other message goes to stderr as one
line (``bpcheck: Ray: ...``). tests/test_cluster.py kills a task's worker and an actor and
compares stdout with the run without Ray.

What travels between nodes: pickles (Ray's serialization) of bpcheck's own objects, between
bpcheck's own processes (the driver, its tasks and actors) only: task arguments (a loaded board,
the engine spec, invariant IDs), states, fingerprints, results. Nothing read from a file is ever
unpickled: boards are parsed by the driver and travel as bpcheck's objects.

Ray is optional (``pip install 'bpcheck[cluster]'``); without it ``--cluster`` is bad usage
(exit 2) with the install line, and nothing else imports Ray: each function here that needs Ray
imports it itself (an optional dependency: importing this module never needs it).
"""

from __future__ import annotations

import os
import pickle
import queue
import re
import shlex
import shutil
import signal
import sys
import time
import traceback
from typing import Any, Callable, Iterator, Sequence

from bpcheck import __version__
from bpcheck import __version__ as here
from bpcheck.engines import make_engine
from bpcheck.engines.faults import check_stop
from bpcheck.errors import InputError
from bpcheck.explorers import pool as pool_mod
from bpcheck.explorers.parallel import WAIT_SLICE, WorkerError, WorkerLost, _Worker, handle
from bpcheck.explorers.pool import Outcome
from bpcheck.reports.safe import one_line

INSTALL = "pip install 'bpcheck[cluster]'"
TASK_RETRIES = 3  # Ray runs a task again this many times when its worker or node dies
STOP_POLL = 0.5  # seconds between a task's looks at the run's stop flag
MEASURE_BYTES = False  # ActorPool: count the pickled bytes of requests and replies through the driver (benchmarks)

ACTIVE: "Cluster | None" = None  # the cluster of this run (set by the command line)
RAY_LOST: "queue.SimpleQueue[tuple[str, str, str]]" = queue.SimpleQueue()  # (pid, node, exit type) of workers Ray said died (_ray_said)
_DIED = re.compile(r"A worker died or was killed while executing a task")
_RETRIED = re.compile(r"^Task \S+ failed\. There are \d+ retries remaining, so the task will be retried\.")


def _field(text: str, name: str) -> str:
    m = re.search(re.escape(name) + r": (\S+)", text)
    return m.group(1) if m else "?"


def _ray_said(data: Any, ignore_prefix: bool = False) -> None:
    """In place of Ray's ``print_to_stdstream`` (module doc, "Ray's own messages"): called from
    Ray's thread with what its nodes published. A worker's death is queued for :class:`TaskPool`
    (:data:`RAY_LOST`), the retry notice it implies dropped, anything else written to stderr as
    one line; nothing reaches stdout."""
    lines = data.get("lines", []) if isinstance(data, dict) else [data]
    for text in lines:
        text = str(text)
        if _DIED.search(text):
            RAY_LOST.put((_field(text, "Worker PID"), _field(text, "Worker IP address"), _field(text, "Worker exit type")))
        elif not _RETRIED.search(text.strip()):
            first = text.strip().splitlines()[0] if text.strip() else ""
            if first:
                try:
                    sys.stderr.write(one_line(f"bpcheck: Ray: {first[:500]}") + "\n")
                except (OSError, ValueError):
                    pass


def _capture_ray_messages() -> None:
    """Ray's driver thread prints through ``ray._private.worker.print_to_stdstream`` (looked up
    in its module at each message): :func:`_ray_said` takes its place. Ray's internal name; a Ray
    that renames it would print on stdout again, which tests/test_cluster.py catches (CI runs it)."""
    mod = sys.modules.get("ray._private.worker")
    if mod is not None and hasattr(mod, "print_to_stdstream"):
        mod.print_to_stdstream = _ray_said


def active() -> "Cluster | None":
    return ACTIVE


def _ray():
    try:
        import ray  # noqa: F401
    except ImportError as e:
        raise InputError("--cluster", "", f"Ray is not installed ({e}); install it with: {INSTALL}") from None
    return ray


def parse_address(text: str) -> tuple[str, int | None]:
    """``auto`` (RAY_ADDRESS), ``local:N`` (a local Ray with N worker CPUs) or an address
    (``HOST:PORT``): (address, N for local)."""
    t = text.strip()
    if t == "auto":
        addr = os.environ.get("RAY_ADDRESS", "").strip()
        if not addr:
            raise InputError("--cluster", "", "'auto' reads the cluster's address from RAY_ADDRESS, which is not set (or give HOST:PORT, or local:N)")
        return addr, None
    if t.startswith("local:"):
        n = t[len("local:") :]
        if not n.isdigit() or not 1 <= int(n) <= 4096:
            raise InputError("--cluster", "", f"local:N needs a number of workers from 1 to 4096, got {n!r}")
        return "local", int(n)
    if not t or any(c.isspace() for c in t) or ":" not in t:
        raise InputError("--cluster", "", f"expected auto, local:N or a Ray address HOST:PORT, got {text!r}")
    return t, None


class Cluster:
    """A connection to a Ray cluster for one run (:func:`connect`)."""

    def __init__(self, address: str, local_workers: int | None) -> None:
        self.address = address
        self.local_workers = local_workers
        self.started = 0.0  # seconds to connect (the start-up cost)

    def workers(self) -> int:
        """Worker CPUs of the cluster (``local:N``: N)."""
        ray = _ray()
        cpus = int(ray.cluster_resources().get("CPU", 0))
        return max(1, cpus)

    def nodes(self) -> list[dict]:
        ray = _ray()
        return [n for n in ray.nodes() if n.get("Alive")]

    def describe(self) -> str:
        nodes = self.nodes()
        return f"Ray cluster {self.address if self.local_workers is None else f'local:{self.local_workers}'}: {len(nodes)} node(s), {self.workers()} worker CPU(s)"

    def task_pool(self, n: int, on_note: Callable[[int, Any], None] | None = None, name: Callable[[int], str] | None = None) -> "TaskPool":
        return TaskPool(n, on_note=on_note, name=name)

    def check_engine(self, spec: str | None, engine_kw: dict) -> None:
        """Every node must be able to build the engine: one remote check per node (a cmd:
        engine's command found there, an in-process engine importable, the core kit present).
        Bad input (exit 2) naming the first node that cannot, with its reason. bpcheck itself must
        be there, in the driver's version."""
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        probe = ray.remote(num_cpus=0, max_retries=0)(_engine_probe)
        nodes = self.nodes()
        refs = [
            probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(spec, engine_kw, os.getcwd(), __version__)
            for n in nodes
        ]
        for n, ref in zip(nodes, refs):  # in the nodes' order
            try:
                problem = ray.get(ref, timeout=120)
            except Exception as e:  # noqa: BLE001 - the node could not even run the probe
                problem = f"the check could not run there: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if problem:
                raise InputError("--engine", "", f"node {n.get('NodeManagerAddress')} ({n['NodeID'][:12]}) cannot run engine {spec or 'reference'}: {problem}")


def _engine_probe(spec: str | None, engine_kw: dict, cwd: str, version: str) -> str | None:
    """On one node: why bpcheck or the engine cannot run there, or None."""
    if here != version:
        return f"bpcheck {here} is installed there, not {version} (the driver's): install the same version on every node"
    _enter(cwd)
    if spec and spec.startswith("cmd:"):
        try:
            argv = shlex.split(spec[len("cmd:") :])
        except ValueError as e:
            return f"the command does not parse: {e}"
        if not argv:
            return "the command is empty"
        exe = argv[0]
        found = shutil.which(exe) if os.sep not in exe else (exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None)
        if found is None:
            return f"command {exe!r} not found (working directory {os.getcwd()}, PATH {os.environ.get('PATH', '')})"
        return None
    try:
        make_engine(spec, **engine_kw)
    except InputError as e:
        return e.problem
    except Exception as e:  # noqa: BLE001 - reported as the node's problem
        return f"{type(e).__name__}: {e}"
    return None


def _enter(cwd: str) -> None:
    """Tasks and actors run in the driver's working directory where the node has it (a shared
    checkout, or the same path on every host), so relative paths (a cmd: engine, the core kit
    beside the project) mean what they mean to the driver; else in Ray's own."""
    try:
        if os.path.isdir(cwd) and os.getcwd() != cwd:
            os.chdir(cwd)
            if cwd not in sys.path:
                sys.path.insert(0, cwd)
    except OSError:
        pass


def connect(text: str) -> Cluster:
    """Connect to (or, for ``local:N``, start) the cluster and make it this run's
    (:data:`ACTIVE`). Bad usage (exit 2): no Ray, a malformed address, a cluster that cannot be
    reached."""
    global ACTIVE
    address, local = parse_address(text)
    ray = _ray()
    _capture_ray_messages()  # before ray.init starts the thread that prints them
    t0 = time.monotonic()
    env = {k: os.environ[k] for k in ("OCGCORE", "OCG_SCRIPTS", "OCG_CARDS", "PYTHONPATH") if os.environ.get(k)}
    kw: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False, "configure_logging": True}
    if env:
        kw["runtime_env"] = {"env_vars": env}
    try:
        if ray.is_initialized():
            pass
        elif local is not None:
            # one machine: Ray binds the loopback address only, no dashboard, a small object store.
            # Its processes start with SIGINT ignored (inherited across exec), so a Ctrl-C on the
            # terminal, which signals the whole process group, reaches bpcheck and not them: the
            # run stops as any run does (inconclusive, outputs written, exit 130)
            with _sigint_ignored():
                ray.init(num_cpus=local, include_dashboard=False, _node_ip_address="127.0.0.1", object_store_memory=_store_size(local), **kw)
        else:
            ray.init(address=address, **kw)
    except Exception as e:  # noqa: BLE001 - a cluster that cannot be reached is bad usage
        raise InputError("--cluster", "", f"cannot connect to the Ray cluster at {address}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    ACTIVE = Cluster(address, local)
    ACTIVE.started = time.monotonic() - t0
    return ACTIVE


class _sigint_ignored:
    def __enter__(self) -> None:
        try:
            self.old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread
            self.old = None

    def __exit__(self, *exc) -> None:
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


def _store_size(workers: int) -> int:
    return max(80, min(1024, 64 * workers)) * 2**20


def disconnect() -> None:
    global ACTIVE
    if ACTIVE is None:
        return
    ACTIVE = None
    try:
        import ray

        if ray.is_initialized():
            ray.shutdown()
    except Exception:  # noqa: BLE001 - shutting down is best effort
        pass


def _where() -> str:
    import ray

    ctx = ray.get_runtime_context()
    try:
        ip = ray.util.get_node_ip_address()
    except Exception:  # noqa: BLE001
        ip = "?"
    return f"node {ip} ({ctx.get_node_id()[:12]}), pid {os.getpid()}"


# ------------------------------------------------------------------------------- independent tasks


class _Flags:
    """The run's shared flags, as a Ray actor: the stop signal, the cancelled tasks, and where each
    task last started (to name the node of a task that keeps dying)."""

    def __init__(self) -> None:
        self.stop = 0
        self.cancelled: set[int] = set()
        self.where: dict[int, str] = {}
        self.pids: dict[str, int] = {}  # worker pid -> the task it ran last (a worker Ray says died: its task)
        self.notes: list[tuple[int, Any]] = []  # (task, payload) sent by the tasks, not yet taken

    def get(self, index: int) -> tuple[int, bool]:
        return self.stop, index in self.cancelled

    def note(self, index: int, payload: Any) -> None:
        self.notes.append((index, payload))

    def take_notes(self) -> list[tuple[int, Any]]:
        out, self.notes = self.notes, []
        return out

    def set_stop(self, signum: int) -> None:
        self.stop = signum

    def cancel(self, indices: list[int]) -> None:
        self.cancelled.update(indices)

    def started(self, index: int, where: str, pid: int | None = None) -> None:
        self.where[index] = where
        if pid is not None:
            self.pids[str(pid)] = index

    def task_of(self, pids: list[str]) -> list[int | None]:
        return [self.pids.get(p) for p in pids]

    def where_of(self, index: int) -> str | None:
        return self.where.get(index)


class _RemoteFlag:
    """``.value`` of the run's stop flag (or a task's cancel flag), as the worker-side poll of
    explorers/pool.py reads it, looked up at most every :data:`STOP_POLL` seconds."""

    def __init__(self, flags: Any, index: int, which: int) -> None:
        self.flags, self.index, self.which = flags, index, which
        self.last = 0.0
        self.cached = (0, False)

    @property
    def value(self) -> int:
        now = time.monotonic()
        if now - self.last >= STOP_POLL:
            import ray

            self.last = now
            try:
                self.cached = ray.get(self.flags.get.remote(self.index), timeout=10)
            except Exception:  # noqa: BLE001 - the driver is gone: stop
                self.cached = (int(signal.SIGTERM), True)
        return int(self.cached[self.which])


def _run_task(flags: Any, index: int, cwd: str, fn: Callable, args: tuple) -> tuple:
    """A task on a node: ``fn(*args)`` with the pool's stop and cancel flags polled as in a worker
    process; (ok, value, traceback), never an exception (a bug of the task is said as text)."""
    _enter(cwd)
    import ray

    try:  # waited for: a worker killed at once still names its task (Ray said it died: TaskPool._say_lost)
        ray.get(flags.started.remote(index, _where(), os.getpid()), timeout=30)
    except Exception:  # noqa: BLE001 - the flags actor is slow or gone: the task runs all the same
        pass
    pool_mod._STOP = _RemoteFlag(flags, index, 0)
    pool_mod._CANCEL = _RemoteFlag(flags, index, 1)
    pool_mod._CONN = None

    def note(payload: Any) -> bool:  # pool.notify in a Ray task: to the driver through the flags actor
        flags.note.remote(index, payload)
        return True

    pool_mod._REMOTE_NOTE = note
    try:
        return (True, fn(*args), None)
    except BaseException as e:  # noqa: BLE001 - everything goes back to the driver, as text
        what = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
        return (False, what, "".join(traceback.format_exception(type(e), e, e.__traceback__)))
    finally:
        pool_mod._STOP = pool_mod._CANCEL = pool_mod._REMOTE_NOTE = None


class TaskPool:
    """:class:`bpcheck.explorers.pool.Pool`'s methods over Ray tasks (``n`` at a time)."""

    def __init__(self, workers: int, on_note: Callable[[int, Any], None] | None = None, name: Callable[[int], str] | None = None) -> None:
        ray = _ray()
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.n = workers
        self.on_note = on_note  # (task index, payload): what a task sent with pool.notify
        self.name = name or (lambda i: f"task {i}")  # a task, in the note of its worker lost (a board)
        self.flags = ray.remote(num_cpus=0)(_Flags).remote()
        self.remote = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(_run_task)
        self.cwd = os.getcwd()
        self._queue: list[int] = []
        self._stream: dict[int, tuple] = {}
        self._refs: dict[Any, int] = {}  # ObjectRef -> task index
        self._cancelled: set[int] = set()
        self._stopped = False

    def __enter__(self) -> "TaskPool":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(kill=exc_type is not None)

    def stop_all(self, signum: int) -> None:
        self.flags.set_stop.remote(int(signum))
        self._stopped = True
        self._queue.clear()
        self._stream.clear()

    def cancel(self, indices) -> None:
        drop = set(indices)
        self._cancelled |= drop
        self._queue = [i for i in self._queue if i not in drop]
        for i in drop:
            self._stream.pop(i, None)
        running = [i for i in self._refs.values() if i in drop]
        if running:
            self.flags.cancel.remote(running)

    def pending(self) -> list[int]:
        return list(self._queue)

    def running(self) -> list[int]:
        return sorted(self._refs.values())

    def submit(self, index: int, fn: Callable, args: tuple) -> None:
        self._stream[index] = (fn, args)
        self._queue.append(index)
        self._dispatch()

    def in_flight(self) -> int:
        return len(self._queue) + len(self._refs)

    def collect(self, timeout: float = 0.0) -> list[Outcome]:
        self._dispatch()
        got = list(self._gather(timeout))
        self._dispatch()
        return got

    def _dispatch(self) -> None:
        while self._queue and len(self._refs) < self.n:
            i = self._queue.pop(0)
            fn, args = self._stream.pop(i)
            ref = self.remote.remote(self.flags, i, self.cwd, fn, args)
            self._refs[ref] = i

    def _take_notes(self) -> None:
        import ray

        if self.on_note is None:
            return
        running = set(self._refs.values())  # a note that arrives after its task's outcome is dropped
        for i, payload in ray.get(self.flags.take_notes.remote()):
            if i in running and i not in self._cancelled:
                self.on_note(i, payload)

    def _say_lost(self) -> None:
        """The workers Ray said died (:data:`RAY_LOST`), each said on stderr with the task it
        ran (docs/cluster.md, "Faults"); Ray runs that task again."""
        import ray

        lost = []
        while True:
            try:
                lost.append(RAY_LOST.get_nowait())
            except queue.Empty:
                break
        if not lost:
            return
        try:
            tasks = ray.get(self.flags.task_of.remote([pid for pid, _ip, _how in lost]), timeout=10)
        except Exception:  # noqa: BLE001 - the flags actor is gone: the tasks are not known
            tasks = [None] * len(lost)

        for (pid, ip, how), i in zip(lost, tasks):
            who = f"{self.name(i)}: " if i is not None else ""
            again = f"Ray runs its task again (at most {TASK_RETRIES} times; a task is deterministic: the result is the same)" if i is not None else "its work is done again"
            sys.stderr.write(one_line(f"bpcheck: {who}worker lost (pid {pid} on node {ip}, {how.lower().replace('_', ' ')}); {again}") + "\n")

    def _gather(self, timeout: float) -> Iterator[Outcome]:
        import ray

        self._take_notes()
        self._say_lost()
        if not self._refs:
            return
        # completion order here; every caller puts the outcomes back in its own fixed order
        ready, _ = ray.wait(list(self._refs), num_returns=len(self._refs), timeout=timeout)
        if not ready:
            ready, _ = ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        for ref in ready:
            i = self._refs.pop(ref)
            try:
                ok, value, tb = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - the task's worker or node died, TASK_RETRIES times
                if i in self._cancelled:
                    continue
                try:
                    where = ray.get(self.flags.where_of.remote(i), timeout=10)
                except Exception:  # noqa: BLE001
                    where = None
                why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                yield Outcome(i, False, error=f"the Ray task failed {TASK_RETRIES + 1} times ({type(e).__name__}: {why}); it last ran on {where or 'an unknown node'}", crashed=True)
                continue
            if i in self._cancelled:
                continue
            yield Outcome(i, True, value) if ok else Outcome(i, False, error=value, traceback=tb)

    def run(self, fn: Callable, tasks: Sequence[tuple], order: Sequence[int] | None = None, tick: Callable[[], None] | None = None, poll: float = 0.2) -> Iterator[Outcome]:
        for i in range(len(tasks)) if order is None else order:
            self._stream[i] = (fn, tasks[i])
            self._queue.append(i)
        while self._queue or self._refs:
            self._dispatch()
            if tick is not None:
                tick()
            yield from self._gather(poll)
        if tick is not None:
            tick()

    def close(self, kill: bool = False) -> None:
        import ray

        for ref in list(self._refs):
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001
                pass
        self._refs.clear()
        try:
            ray.kill(self.flags)
        except Exception:  # noqa: BLE001
            pass


# ------------------------------------------------------------------------------- one big board


class _ShardWorker:
    """A worker of explorers/parallel.py as a Ray actor: it owns the virtual shards given to it."""

    def __init__(self, wid: int, n: int, make_system, goals, finish, report_info: bool, cwd: str) -> None:
        _enter(cwd)
        self.finish = finish
        self.w = _Worker(make_system(), wid, n, goals)
        self.w.report_info = report_info

    def where(self) -> str:
        return _where()

    def handle(self, msg: tuple) -> tuple:
        """One request (parallel.handle). What one worker hands to others — the states it
        passes on (finalize, rebuild), what the reduction learned (expand's share) — goes into
        the object store, and only its reference travels through the driver: the bytes go from
        node to node, once, whatever the number of workers that read them."""
        import ray


        op = msg[0]
        try:
            if op == "expand":  # ("expand", hi, max_depth, inbox[, learned]): the states handed over, what to learn
                msg = (*msg[:3], *(_resolve(x) if x else x for x in msg[3:]))
            elif op == "decide":  # ("decide", children by discoverer, claims by discoverer, lo, hi, levels)
                msg = (op, _resolve(msg[1]), _resolve(msg[2]), *msg[3:])
            elif op == "rank":  # ("rank", winners by owner, levels)
                msg = (op, _resolve(msg[1]), *msg[2:])
            elif op == "finalize":  # ("finalize", offsets, numbers by ranker, winners found by ranker, claims won by owner, plan)
                msg = (op, msg[1], _resolve(msg[2]), _resolve(msg[3]), _resolve(msg[4]), msg[5])
        except (ray.exceptions.ObjectLostError, ray.exceptions.OwnerDiedError) as e:
            return ("lost", f"an object of a lost worker: {type(e).__name__}")
        except BaseException:  # noqa: BLE001 - a bug: back to the driver as text
            return ("error", traceback.format_exc())
        try:
            reply, _last = handle(self.w, msg, self.finish)
        except BaseException:  # noqa: BLE001 - a bug: back to the driver as text
            return ("error", traceback.format_exc())
        if op == "expand":
            if reply.get("share") is not None:
                reply["share"] = ray.put(reply["share"])
            reply["children"] = _put_parts(reply["children"])
            reply["claims"] = _put_parts(reply["claims"])
        elif op == "decide":
            reply["to_rankers"] = _put_parts(reply["to_rankers"])
        elif op == "rank":
            reply["to_owners"] = _put_parts(reply["to_owners"])
            reply["to_disc"] = _put_parts(reply["to_disc"])
        elif op == "finalize":
            out, blobs = reply
            reply = (out, {d: ray.put(b) for d, b in blobs.items()})
        elif op == "rebuild" and reply[0] == "ok":
            reply = ("ok", {d: ray.put(b) for d, b in reply[1].items()})
        return ("ok", reply)


PUT_BYTES = 16384  # a part for another actor this large goes into the object store (its reference through the driver)


def _put_parts(parts: dict) -> dict:
    """What one actor sends to others (arrays by recipient, routed by the driver as they are):
    each large part into the object store, so that only its reference passes through the
    driver; small ones travel inline (a reference costs more than they do)."""
    import ray

    out = {}
    for k, x in parts.items():
        size = sum(a.nbytes for a in x) if isinstance(x, tuple) else 0
        out[k] = ray.put(x) if size >= PUT_BYTES else x
    return out


def _resolve(items: list) -> list:
    """Object references among ``items`` replaced by their values (fetched together)."""
    import ray

    refs = [x for x in items if isinstance(x, ray.ObjectRef)]
    if not refs:
        return items
    got = iter(ray.get(refs))
    return [next(got) if isinstance(x, ray.ObjectRef) else x for x in items]


def _build_error(e: Exception) -> str:
    return "".join(traceback.format_exception_only(type(e), e)).strip()


class ActorPool:
    """The Ray transport of explore_parallel (``transport=``): the methods of
    ``parallel._Pool``; no work stealing (a chunk's states stay with their holder: who expands a
    state never changes a result, only the time)."""

    recovers = True
    kind = "Ray actors"

    def __init__(self, n: int, make_system, goals: Sequence[str], finish, report_info: bool = False) -> None:
        ray = _ray()

        # one CPU each; fewer left (a node lost, replacements being made): the n workers share them
        total = float(ray.cluster_resources().get("CPU", n))
        cpus = 1 if total >= n else max(0.01, round(total / n, 2))
        cls = ray.remote(num_cpus=cpus, max_restarts=0, max_task_retries=0)(_ShardWorker)
        self.bytes_out = self.bytes_in = 0  # pickled requests and replies (MEASURE_BYTES: references count, not what they name)
        self.measure_s = 0.0  # CPU spent measuring them (not the protocol's)
        self.refs: list[Any] = [None] * n
        self.actors = [cls.options(scheduling_strategy="SPREAD").remote(w, n, make_system, tuple(goals), finish, report_info, os.getcwd()) for w in range(n)]
        self.places: list[str] = [f"actor {w}" for w in range(n)]
        try:
            got = [a.where.remote() for a in self.actors]
            for w, ref in enumerate(got):
                try:
                    self.places[w] = f"actor {w} on {ray.get(ref)}"
                except ray.exceptions.RayActorError as e:
                    cause = getattr(e, "cause", None) or getattr(e, "error_msg", None)
                    if cause is not None and "Traceback" in str(cause):
                        raise WorkerError(f"worker {w} failed:\n{cause}") from None
                    raise WorkerLost(f"worker {w} could not start: {_build_error(e)}", self.places[w]) from None
        except BaseException:
            self.close(kill=True)
            raise

    def send(self, w: int, msg: tuple) -> None:
        if MEASURE_BYTES:
            c0 = time.process_time()
            self.bytes_out += len(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))
            self.measure_s += time.process_time() - c0
        self.refs[w] = self.actors[w].handle.remote(msg)

    def _message(self, w: int) -> tuple:
        import ray


        ref, self.refs[w] = self.refs[w], None
        try:
            while not ray.wait([ref], timeout=WAIT_SLICE)[0]:
                check_stop()  # a stop not acted on within faults.STOP_GRACE: the coordinator abandons the chunk
            msg = ray.get(ref)
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError) as e:
            raise WorkerLost(f"worker {w} was lost ({type(e).__name__})", self.places[w]) from None
        if MEASURE_BYTES:
            c0 = time.process_time()
            self.bytes_in += len(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))
            self.measure_s += time.process_time() - c0
        if msg[0] == "lost":
            raise WorkerLost(f"worker {w}: {msg[1]}", self.places[w])
        if msg[0] == "error":
            raise WorkerError(f"worker {w} ({self.places[w]}) failed:\n{msg[1]}")
        return msg

    def _recv(self, w: int) -> Any:
        return self._message(w)[1]

    def gather(self) -> list:
        return [self._recv(w) for w in range(len(self.actors))]  # in worker order

    def call(self, msgs: list[tuple]) -> list:
        for w, m in enumerate(msgs):
            self.send(w, m)
        return self.gather()

    def expand(self, msgs: list[tuple], max_depth: int | None) -> tuple[list[dict], list, int]:
        replies = self.call(msgs)
        shares = [[r["share"]] if r.get("share") is not None else [] for r in replies]
        return replies, shares, 0

    def alive(self) -> int:
        """Actors that answered their last request (a lost one raises WorkerLost at once)."""
        return len(self.actors)

    def close(self, kill: bool = False) -> None:
        import ray

        for a in self.actors:
            try:
                ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001
                pass
        self.actors = []


def explorer_transport(cluster: "Cluster | None") -> Callable[..., Any] | None:
    """What the caller of explore_parallel passes as its ``transport`` for a run on `cluster`:
    Ray actors; None (no cluster): worker processes."""
    return ActorPool if cluster is not None else None


__all__ = ["ACTIVE", "INSTALL", "ActorPool", "Cluster", "TaskPool", "active", "connect", "disconnect", "explorer_transport", "parse_address"]
