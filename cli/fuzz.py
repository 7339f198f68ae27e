"""`bpcheck fuzz`: Hypothesis draws boards, the explicit-state explorer checks each one, and a
violation is shrunk to a minimal board (docs/fuzzing.md).

Two Hypothesis runs over one test function, both deterministic for a seed:

1. *Search*: boards are drawn (:mod:`bpcheck.strategies`) and each is explored by BFS with
   the engine under test and the invariants (an :class:`~bpcheck.explorers.checking.EngineSystem`,
   or a :class:`~bpcheck.explorers.differential.DifferentialSystem` with ``--differential``),
   at most ``--max-states`` states per board. The first board with a violation stops the search;
   its shortest violation names the invariant ``X`` (the smallest invariant ID among those at
   the smallest depth).
2. *Shrink*: the same test now fails only when a board's shortest violation is ``X``; Hypothesis
   replays the failing board from its example database and shrinks it, so the minimal board's
   shortest counterexample still breaks the same invariant (a shrink that only breaks another
   invariant is not taken).

The minimal board is then checked exactly as `bpcheck check --max-states N` would, which gives
the counterexample and every report format of `check`; ``--cex-dir`` writes the board as TOML
(and the counterexample as JSON) so that `bpcheck check` and `bpcheck replay` reproduce it.
Hypothesis' ``ci`` profile is the base settings under ``CI``; ``--database DIR`` keeps failing
boards in a directory example database and replays them first on the next run.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, InMemoryExampleDatabase, ReadOnlyDatabase
from hypothesis.errors import Unsatisfiable
from unittest import SkipTest

from bpcheck.board_writer import board_size, board_toml, document_board, write_board
from bpcheck.engines.interface import EngineRefusal
from bpcheck.errors import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, InputError
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import FAULT, Bounds, SystemFault, explore
from bpcheck.explorers.run import BoardResult, check_board, result_document
from bpcheck.strategies import board_documents

DEFAULT_EXAMPLES = 1000  # with seed 0, every shipped mutant dies within these (docs/performance.md)
DEFAULT_MAX_STATES = 3000


class FuzzViolation(Exception):
    """Raised inside the Hypothesis test when a drawn board breaks an invariant."""

    def __init__(self, doc: dict, prop: str, message: str, depth: int) -> None:
        super().__init__(f"{prop} at depth {depth}: {message}")
        self.doc = doc
        self.prop = prop
        self.message = message
        self.depth = depth


class _Scoped(ExampleDatabase):
    """An example database whose keys are prefixed with the run's configuration (engine,
    invariants, cards, bounds), so that failures kept for one engine are replayed for that
    engine; the examples of other configurations are left alone."""

    def __init__(self, inner: ExampleDatabase, scope: bytes) -> None:
        super().__init__()
        self.inner = inner
        self.scope = scope
        self.saved: list[tuple[bytes, bytes]] = []  # what this run saved, to hand on to the shrink run

    def _k(self, key: bytes) -> bytes:
        return self.scope + b"/" + key

    def save(self, key: bytes, value: bytes) -> None:
        self.saved.append((key, value))
        self.inner.save(self._k(key), value)

    def fetch(self, key: bytes):
        return self.inner.fetch(self._k(key))

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self._k(key), value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self._k(src), self._k(dest), value)


@dataclass
class FuzzStats:
    examples: int = 0  # boards drawn and explored (search and shrink)
    search_examples: int = 0
    shrink_examples: int = 0
    skipped: int = 0  # boards the engine refused (EngineRefusal)
    states: int = 0  # explored in the search
    transitions: int = 0
    shrink_states: int = 0  # explored while shrinking
    bound_hits: int = 0  # search boards whose exploration hit --max-states
    first_failure_example: int | None = None  # search example that first broke an invariant
    first_failure_s: float | None = None  # seconds from the start to that example
    search_s: float = 0.0
    shrink_s: float = 0.0

    def to_dict(self, timings: bool) -> dict:
        d = {
            "examples": self.examples,
            "search_examples": self.search_examples,
            "shrink_examples": self.shrink_examples,
            "skipped": self.skipped,
            "states": self.states,
            "transitions": self.transitions,
            "shrink_states": self.shrink_states,
            "bound_hits": self.bound_hits,
            "first_failure_example": self.first_failure_example,
        }
        if timings:
            d.update(first_failure_s=_r(self.first_failure_s), search_s=_r(self.search_s), shrink_s=_r(self.shrink_s))
        return d


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


@dataclass
class FuzzOutcome:
    stats: FuzzStats
    invariant: str | None = None  # the invariant broken (None: no violation found)
    found_doc: dict | None = None  # the first failing board, before shrinking
    doc: dict | None = None  # the minimal board
    depth: int | None = None  # its shortest counterexample's length
    message: str = ""
    result: BoardResult | None = None  # the minimal board checked as `bpcheck check` does
    board_file: str | None = None
    notes: list[str] = field(default_factory=list)


class _Ticker:
    """The search's progress on stderr (bpcheck.explorers.progress): a line in place on a
    terminal, plain lines at a steady interval elsewhere (CI). ``enabled``: None on a terminal
    only (library calls), True wherever stderr goes (the command), False nothing."""

    def __init__(self, enabled: bool | None) -> None:
        from bpcheck.explorers.progress import Progress, mode_for

        if enabled is True:  # the command's run, begun by bpcheck.main (cli/feedback.py)
            from bpcheck.feedback import run_progress

            self.progress = run_progress(None, "fuzz", unit=None)
        else:
            mode = "off" if enabled is False or mode_for(sys.stderr) != "live" else "live"
            self.progress = Progress("fuzz", unit=None, mode=mode)
        self.task = self.progress.start("")  # the search's states (the line says what it is doing)

    def show(self, text: str, force: bool = False, states: int | None = None) -> None:
        self.progress.extra("fuzz", text)
        if states is not None:
            self.task.update(states)

    def note(self, lines: list[str]) -> None:
        self.progress.note(lines)

    def done(self) -> None:
        self.progress.close()


def base_settings() -> settings:
    """Hypothesis' ``ci`` profile under ``CI`` (derandomised, no database, no deadline),
    else its ``default`` profile."""
    return settings.get_profile("ci" if os.environ.get("CI") else "default")


def fuzz(
    engine_factory: Callable[[], Any],
    invariants: Sequence,
    *,
    engine_name: str = "reference",
    examples: int = DEFAULT_EXAMPLES,
    seed_value: int = 0,
    max_states: int = DEFAULT_MAX_STATES,
    cards: Sequence[str] | None = None,
    differential: bool = False,
    database: str | None = None,
    progress: bool | None = None,
    shrink: bool = True,
    jobs: int = 1,
    engine_spec: tuple[str | None, dict] | None = None,
) -> FuzzOutcome:
    """Search for a board on which the engine breaks an invariant, then shrink it. With
    ``jobs`` > 1 and ``engine_spec`` (the ``--engine`` spec and its keyword arguments: each worker
    builds its own engine), the search's boards are explored by worker processes; the outcome
    is the same as with one."""
    system_cls = EngineSystem
    invs = list(invariants)
    if differential:  # lockstep with the reference model: explorers/differential.py
        from bpcheck.explorers.differential import DIFF_INVARIANT, DifferentialSystem

        system_cls = DifferentialSystem
        invs = [*invs, DIFF_INVARIANT]
    strategy = board_documents(cards)  # InputError on unknown --cards
    bounds = Bounds(max_states=max_states)
    stats = FuzzStats()
    from bpcheck.explorers.progress import count

    ticker = _Ticker(progress)
    t0 = time.monotonic()
    phase: dict[str, Any] = {"name": "search", "target": None, "depth": None}

    def probe(doc: dict, known: tuple | None = None) -> None:
        """Explore one drawn board (or take ``known``, its result from a worker: -j N)."""
        stats.examples += 1
        searching = phase["name"] == "search"
        if searching:
            stats.search_examples += 1
        else:
            stats.shrink_examples += 1
        if known is None:
            # While shrinking, a board whose counterexample would be longer than the one found
            # is not taken anyway: exploring one step past that depth is enough, and much faster
            # on the large boards the shrinker tries first.
            b = bounds if searching else Bounds(max_states=bounds.max_states, max_depth=phase["depth"] + 1)
            known = explore_document(doc, system_cls, engine_factory, invs, b)
        refused, found, states, transitions, bounded = known
        if refused:
            stats.skipped += 1
            return
        if searching:
            stats.states += states
            stats.transitions += transitions
            if bounded and found is None:
                stats.bound_hits += 1
        else:
            stats.shrink_states += states
        if searching:
            ticker.show(
                f"board {count(stats.search_examples)} of {count(examples)} drawn, {count(stats.states)} states explored"
                + (f", {count(stats.bound_hits)} cut by --max-states" if stats.bound_hits else ""),
                states=stats.states,
            )
        else:
            ticker.show(f"shrinking a board that breaks {phase['target']}: {count(stats.shrink_examples)} boards tried", states=stats.states + stats.shrink_states)
        if found is None:
            return
        prop, message, depth = found
        if searching and stats.first_failure_example is None:
            stats.first_failure_example = stats.search_examples
            stats.first_failure_s = time.monotonic() - t0
            if phase["target"] is None:
                ticker.note(
                    [
                        f"board {count(stats.search_examples)} of the search breaks {prop} ({depth} steps deep); shrinking it to a minimal board",
                        f"  violation: {' '.join(message.split())[:300]}",
                    ]
                )
        if phase["target"] is None or prop == phase["target"]:
            raise FuzzViolation(doc, prop, message, depth)

    known_results: list = []  # -j N: the search's results, in draw order, up to the first failure
    drawn: list[dict] = []

    def fuzz_board(doc: dict, data) -> None:  # one function for both runs
        if phase["name"] == "shrink":
            data.draw(st.booleans())  # see the shrink run below
        k = stats.search_examples
        if phase["name"] == "search" and k < len(known_results) and doc == drawn[k]:
            probe(doc, known_results[k])  # explored by a worker already (-j N)
            return
        known_results.clear()  # not the board the workers saw: explore from here on, as -j 1 does
        probe(doc)

    scope = json.dumps(
        {"engine": engine_name, "invariants": [i.id for i in invs], "cards": list(cards) if cards else None, "max_states": max_states},
        sort_keys=True,
    ).encode()
    inner_db = DirectoryBasedExampleDatabase(database) if database else InMemoryExampleDatabase()
    search_db = _Scoped(inner_db, scope + b"/search")
    common = dict(
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
        derandomize=False,  # the seed decides (seed() overrides the ci profile's derandomize)
    )
    out = FuzzOutcome(stats)
    # settings() goes outside seed(): seed() alone turns the example database off, and the
    # shrink run needs the database to start from the board the search found.
    run = settings(
        base_settings(), max_examples=examples, phases=(Phase.explicit, Phase.reuse, Phase.generate), database=search_db, **common
    )(
        seed(seed_value)(given(doc=strategy, data=st.data())(fuzz_board))
    )
    if jobs > 1 and engine_spec is not None:
        # -j N: the boards are drawn in this process, exactly as -j 1 draws them, and explored
        # by N workers; then the search below replays the draws up to the first failure with
        # the workers' results, so everything after it (the database, the shrink) is as -j 1.
        drawn[:], known_results[:] = _parallel_search(
            strategy, seed_value, examples, settings(base_settings(), max_examples=examples, phases=(Phase.explicit, Phase.reuse, Phase.generate), database=ReadOnlyDatabase(search_db), **common),
            jobs, engine_spec, [i.id for i in invs], differential, bounds, ticker,
        )
    try:
        run()
    except FuzzViolation as e:
        out.invariant, out.found_doc, out.doc, out.depth, out.message = e.prop, e.doc, e.doc, e.depth, e.message
    except Unsatisfiable:  # pragma: no cover - the strategies never reject
        out.notes.append("Hypothesis could not draw a board")
    finally:
        stats.search_s = time.monotonic() - t0
    if out.invariant is not None and shrink:
        phase.update(name="shrink", target=out.invariant, depth=out.depth)
        t1 = time.monotonic()
        # The shrink run has a database of its own per invariant, seeded with what the search
        # saved. It draws one more value than the search did, so Hypothesis does
        # not take the replayed board for one it has shrunk already (its database fast path).
        shrink_db = _Scoped(inner_db, scope + b"/shrink/" + out.invariant.encode())
        for key, value in search_db.saved:
            shrink_db.save(key, value)
        run = settings(
            base_settings(), max_examples=max(examples, 1), phases=(Phase.reuse, Phase.shrink), database=shrink_db, **common
        )(seed(seed_value)(given(doc=strategy, data=st.data())(fuzz_board)))
        try:
            run()
            out.notes.append(f"the board that broke {out.invariant} did not fail again when replayed: it is reported unshrunk")
        except SkipTest:
            out.notes.append("the example database did not give the failing board back: it is reported unshrunk")
        except FuzzViolation as e:
            out.doc, out.depth, out.message = e.doc, e.depth, e.message
        finally:
            stats.shrink_s = time.monotonic() - t1
    ticker.done()
    return out


def explore_document(doc: dict, system_cls, engine_factory: Callable[[], Any], invs: Sequence, bounds: Bounds) -> tuple:
    """Explore one drawn board: (refused, (invariant, message, depth) or None, states,
    transitions, bound hit)."""
    board = document_board(doc, "<drawn board>")
    try:
        system = system_cls(engine_factory(), board, invs)
    except EngineRefusal:
        return (True, None, 0, 0, False)
    except SystemFault as f:  # the engine failed before giving the initial state
        return (False, (FAULT, f"{f.kind}: {f.message} (starting the board)", 0), 0, 0, False)
    r = explore(system, "bfs", bounds, stop_on_violation=True)
    found = None
    if r.violations:
        v = min(r.violations, key=lambda v: (v.depth, v.prop))
        found = (v.prop, v.message, v.depth)
    return (False, found, r.states, r.transitions, r.bound_hit is not None)


def explore_document_task(doc: dict, engine_spec: tuple, inv_ids: list[str], differential: bool, bounds: Bounds) -> tuple:
    """:func:`explore_document` in a worker process (plain data in and out)."""
    from bpcheck.engines import make_engine
    from bpcheck.explorers.run import invariants_by_id

    system_cls = EngineSystem
    if differential:
        from bpcheck.explorers.differential import DifferentialSystem

        system_cls = DifferentialSystem
    spec, kw = engine_spec
    return explore_document(doc, system_cls, lambda: make_engine(spec, **kw), invariants_by_id(inv_ids), bounds)


class _Enough(Exception):
    """Ends the drawing run of a parallel search: the first failure is known."""


def _parallel_search(strategy, seed_value: int, examples: int, run_settings, jobs: int, engine_spec, inv_ids, differential: bool, bounds: Bounds, ticker) -> tuple[list, list]:
    """Draw the search's boards with Hypothesis (the same draws as the sequential search: every
    board drawn before the first failure passes in both) and explore them in ``jobs`` workers, at
    most 2 x ``jobs`` ahead. Returns the boards and their results in draw order, up to and
    including the first that breaks an invariant (all of them when none does). The drawing run
    reads the example database but never writes to it."""
    from bpcheck.explorers.pool import Pool

    docs: list[dict] = []
    results: dict[int, tuple] = {}
    first_fail: list[int] = []

    def absorb(outcomes) -> None:
        for o in outcomes:
            if not o.ok:  # a bug in bpcheck, or a dead worker: said as such (exit 4)
                raise RuntimeError(f"fuzz: exploring drawn board {o.index + 1}: {o.error}" + (f"\n{o.traceback}" if o.traceback else ""))
            results[o.index] = o.value
            if o.value[1] is not None and (not first_fail or o.index < first_fail[0]):
                first_fail[:] = [o.index]
                pool.cancel([i for i in range(o.index + 1, len(docs))])
        ticker.show(f"{len(results):,} of {len(docs):,} boards drawn explored ({jobs} workers)")

    def decided() -> bool:
        return bool(first_fail) and all(i in results for i in range(first_fail[0]))

    def draw(doc: dict, data) -> None:
        if decided():
            raise _Enough()
        docs.append(doc)
        pool.submit(len(docs) - 1, explore_document_task, (doc, engine_spec, inv_ids, differential, bounds))
        while pool.in_flight() >= 2 * jobs:
            absorb(pool.collect(0.2))
        absorb(pool.collect(0))
        if decided():
            raise _Enough()

    with Pool(jobs) as pool:
        try:
            run_settings(seed(seed_value)(given(doc=strategy, data=st.data())(draw)))()
        except _Enough:
            pass
        except Exception as e:  # Hypothesis wraps a test's repeated exception in its own
            if not any(isinstance(x, _Enough) for x in getattr(e, "exceptions", ())) and "_Enough" not in repr(e):
                raise
        while not decided() and pool.in_flight():
            absorb(pool.collect(0.2))
    last = first_fail[0] + 1 if first_fail else len(docs)
    return docs[:last], [results[i] for i in range(last)]


# ---------------------------------------------------------------------------------------------
# The command


def _replay_hint(args, out: FuzzOutcome) -> list[str]:
    parts = ["bpcheck fuzz"]
    if args.engine:
        parts.append(f"--engine {args.engine}")
    for opt, val in (("--invariants", args.invariants), ("--cards", args.cards)):
        if val:
            parts.append(f"{opt} '{val}'")
    parts.append(f"--examples {args.examples} --seed {args.seed} --max-states {args.max_states}")
    if args.differential:
        parts.append("--differential")
    if args.database:
        parts.append(f"--database {args.database}")
    lines = ["to replay this failure:", "  " + " ".join(parts) + "   (same seed, same boards, same shrink)"]
    check = f"bpcheck check{' --engine ' + args.engine if args.engine else ''}{' --differential' if args.differential else ''} --max-states {args.max_states}"
    if out.board_file:
        lines.append(f"  {check} {out.board_file}")
    else:
        lines.append(f"  or save the board with --cex-dir DIR and run: {check} DIR/fuzz-{out.invariant}.toml")
    if args.database:
        lines.append(f"  (the board is kept in the example database {args.database} and is tried first next time)")
    return lines


def _header(args, out: FuzzOutcome) -> str:
    eng = args.engine or "reference"
    return (
        f"Found by `bpcheck fuzz --seed {args.seed}`: engine {eng} breaks {out.invariant} on this board\n"
        f"(shrunk from a board of {board_size(out.found_doc or {})} cards to {board_size(out.doc or {})}; "
        f"shortest counterexample: {out.depth} steps).\n"
        f"Reproduce: bpcheck check --engine {eng} --max-states {args.max_states} THIS_FILE"
    )


def cmd_fuzz(args) -> int:
    from bpcheck.engines import make_engine
    from bpcheck.jobs import resolve_jobs
    from bpcheck.main import _err, _invariants
    from bpcheck.reporting import emit_check_reports, graph_limit
    from bpcheck.reports.text import counterexample_text

    invariants = _invariants(args)
    if invariants is None:
        return EXIT_BAD_INPUT
    engine_kw = {"call_timeout": getattr(args, "call_timeout", None)}
    try:
        make_engine(args.engine, **engine_kw)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    cards = [c.strip() for c in args.cards.split(",") if c.strip()] if args.cards else None
    engine_name = args.engine or "reference"
    try:
        out = fuzz(
            lambda: make_engine(args.engine, **engine_kw),
            invariants,
            engine_name=engine_name,
            examples=args.examples,
            seed_value=args.seed,
            max_states=args.max_states,
            cards=cards,
            differential=args.differential,
            database=args.database,
            jobs=resolve_jobs(args.jobs),
            engine_spec=(args.engine, engine_kw),
            progress=not args.quiet,  # stderr: a line on a terminal, plain lines in CI (-q: none)
        )
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT
    st = out.stats
    bounds = Bounds(max_states=args.max_states)
    results: list[BoardResult] = []
    if out.invariant is not None:
        doc = dict(out.doc)
        doc["name"] = f"fuzz: {engine_name} breaks {out.invariant}"
        doc["description"] = f"Drawn and shrunk by bpcheck fuzz --seed {args.seed} (docs/fuzzing.md)."
        display = "<fuzzed board>"
        if args.cex_dir:
            path = write_board(doc, Path(args.cex_dir) / f"fuzz-{out.invariant}.toml", _header(args, out))
            out.board_file = display = str(path)
        from bpcheck.model.board import board_from_dict

        board = board_from_dict(doc, display)
        system_kw: dict = {}
        invs = list(invariants)
        if args.differential:
            from bpcheck.explorers.differential import DIFF_INVARIANT, DifferentialSystem

            invs.append(DIFF_INVARIANT)
            system_kw["system_cls"] = DifferentialSystem
        if graph_limit(args):
            system_kw["graph_limit"] = graph_limit(args)
        br = check_board(board, make_engine(args.engine, **engine_kw), invs, "bfs", bounds, engine_name, progress=False, **system_kw)
        br.counterexamples.sort(key=lambda c: (c.invariant != out.invariant, len(c.labels), c.invariant))
        out.result = br
        results.append(br)
    print(
        f"fuzz: {st.search_examples} boards drawn, {st.states:,} states explored"
        + (f", {st.bound_hits} boards hit --max-states {args.max_states}" if st.bound_hits else "")
        + (f", {st.skipped} boards refused by the engine" if st.skipped else "")
    )
    for note in out.notes:
        print(f"note: {note}")
    if out.invariant is not None:
        br = out.result
        print(
            f"FAIL  {engine_name} breaks {out.invariant} on board {st.first_failure_example} of the search; "
            f"shrunk in {st.shrink_examples} tries from {board_size(out.found_doc)} cards to {board_size(out.doc)}"
        )
        print()
        print("minimal board:")
        for line in board_toml({k: v for k, v in out.doc.items() if k != "card"}).splitlines():
            print("  " + line)
        print()
        if br is not None and br.counterexamples:
            print(counterexample_text(br.counterexamples[0]))
            others = [c.invariant for c in br.counterexamples[1:]]
            if others:
                print(f"(this board also breaks: {', '.join(others)})")
        print()
        for line in _replay_hint(args, out):
            print(line)
        if args.cex_dir and br is not None:
            cdir = Path(args.cex_dir)
            for cex in br.counterexamples:
                name = f"fuzz-{out.invariant}.{cex.invariant}.json"
                (cdir / name).write_text(json.dumps({"bpcheck_counterexample": 1, **cex.to_dict(full=False)}, indent=1) + "\n")
            print(f"wrote {out.board_file} and {len(br.counterexamples)} counterexample file(s) to {cdir}")
    else:
        verdict = "INCONCLUSIVE" if st.bound_hits else "PASS"
        print(f"{verdict}  no invariant broken on {st.search_examples} boards" + (" (some boards were explored only in part)" if st.bound_hits else ""))
    verdict = "fail" if out.invariant else ("inconclusive" if st.bound_hits else "pass")
    if args.json:
        doc = {
            "bpcheck_fuzz": 1,
            "engine": engine_name,
            "seed": args.seed,
            "examples": args.examples,
            "max_states": args.max_states,
            "differential": bool(args.differential),
            "cards": cards,
            "verdict": verdict,
            "stats": st.to_dict(timings=args.stats),
            "failure": None
            if out.invariant is None
            else {
                "invariant": out.invariant,
                "message": out.message,
                "length": out.depth,
                "board_file": out.board_file,
                "cards_before_shrinking": board_size(out.found_doc),
                "cards": board_size(out.doc),
                "board": out.doc,
            },
            "check": result_document(results, engine_name, "bfs", bounds, []),
        }
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    args.strategy = "bfs"  # what emit_check_reports records
    emit_check_reports(args, results, [], engine_name, bounds)
    if out.invariant is not None:
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if st.bound_hits else EXIT_OK


def add_fuzz_parser(sub, positive) -> None:
    """The `bpcheck fuzz` subcommand (cli/main.py adds it)."""
    from bpcheck.reporting import add_report_arguments

    fz = sub.add_parser("fuzz", help="draw random boards (Hypothesis), check each one, and shrink a violation to a minimal board")
    fz.add_argument("--engine", metavar="ENGINE", help="the engine under test: reference (default), mutant:NAME, cmd:COMMAND or package.module:factory")
    fz.add_argument("--call-timeout", type=positive(float), metavar="S", help="cmd: engines: seconds per call before a timeout fault")
    fz.add_argument("--invariants", metavar="IDS", help="comma-separated invariant IDs or family names (default: all)")
    fz.add_argument("--examples", type=positive(int), default=DEFAULT_EXAMPLES, metavar="N", help=f"boards to draw (default {DEFAULT_EXAMPLES})")
    fz.add_argument("--seed", type=int, default=0, metavar="S", help="the random seed (default 0): same seed, same boards")
    fz.add_argument(
        "--max-states",
        type=positive(int),
        default=DEFAULT_MAX_STATES,
        metavar="N",
        help=f"explore at most N states per board (default {DEFAULT_MAX_STATES})",
    )
    fz.add_argument("--cards", metavar="NAMES", help="comma-separated card names to draw boards from (default: the whole pool)")
    fz.add_argument("--differential", action="store_true", help="also compare the engine with the reference model in lockstep (DIFF)")
    fz.add_argument("--json", metavar="FILE", help="write the fuzz result as JSON (with the minimal board's check result)")
    fz.add_argument("--cex-dir", metavar="DIR", help="write the minimal board as TOML and its counterexamples as JSON")
    fz.add_argument("--database", metavar="DIR", help="keep failing boards in this Hypothesis example database and replay them first")
    fz.add_argument("--stats", action="store_true", help="also record timings in the JSON (not byte-for-byte deterministic)")
    from bpcheck.jobs import add_jobs_argument

    add_jobs_argument(fz, "explore the search's boards")
    from bpcheck.feedback import add_quiet_argument

    add_quiet_argument(fz)
    add_report_arguments(fz)
    fz.set_defaults(fn=_run)


def _run(args) -> int:
    return cmd_fuzz(args)


__all__ = ["FuzzOutcome", "FuzzStats", "FuzzViolation", "add_fuzz_parser", "base_settings", "cmd_fuzz", "fuzz"]
