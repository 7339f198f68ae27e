"""`bpcheck fuzz`: Hypothesis draws boards, the explicit-state explorer checks each one, and a
violation is shrunk to a minimal board (docs/fuzzing.md).

Two Hypothesis runs over one test function, both deterministic for a seed:

1. *Search*: boards are drawn (:mod:`bpcheck.harness.strategies`) and each is explored by BFS with
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

Around them: any engine is fuzzed (a drawn board reaches it as a board document, never a file);
without ``--cards`` each card of the pool is first offered to the engine alone on a board, and
the boards are drawn from those it plays (:func:`cards_the_engine_plays`); ``--baseline``
judges each board's counterexamples in one place (:func:`judge_with_baseline`), so a known one
does not stop the search; ``--timeout`` and SIGINT / SIGTERM / SIGHUP stop the run cleanly
(:class:`FuzzStopped`), with the summary and ``--json`` of what was done. A bounded search is a
pass (exit 0): boards explored only in part or refused are counted and said; ``--strict`` makes
that exit 3 (docs/fuzzing.md, "Exit statuses").
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence
from unittest import SkipTest

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, InMemoryExampleDatabase, ReadOnlyDatabase
from hypothesis.errors import Unsatisfiable

from bpcheck.engines import make_engine
from bpcheck.engines.faults import SystemFault
from bpcheck.engines.guard import guard_engine
from bpcheck.engines.interface import EngineRefusal
from bpcheck.errors import InputError
from bpcheck.explorers.baseline import Baseline
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import FAULT, Bounds, ExploreOptions, explore
from bpcheck.explorers.differential import DIFF_INVARIANT, DifferentialSystem
from bpcheck.explorers.pool import open_pool, stop_reason
from bpcheck.explorers.progress import Progress, count, mode_for
from bpcheck.explorers.run import BoardResult, check_board, invariants_by_id
from bpcheck.harness.board_writer import board_size, document_board, write_board
from bpcheck.harness.feedback import run_progress
from bpcheck.harness.jobs import resolve_jobs
from bpcheck.harness.reporting import graph_limit
from bpcheck.harness.strategies import board_documents, card_choice, db_card_choice, db_choice_summary, db_index
from bpcheck.model.board import board_from_dict

DEFAULT_EXAMPLES = 1000  # with seed 0, every shipped mutant dies within these (docs/performance.md)
DEFAULT_MAX_STATES = 3000


DRAWN = "<drawn board>"  # a drawn board's path (it has no file): what engines and messages see


class FuzzViolation(Exception):
    """Raised inside the Hypothesis test when a drawn board breaks an invariant."""

    def __init__(self, doc: dict, prop: str, message: str, depth: int) -> None:
        super().__init__(f"{prop} at depth {depth}: {message}")
        self.doc = doc
        self.prop = prop
        self.message = message
        self.depth = depth


class FuzzStopped(BaseException):
    """A signal or ``--timeout`` stopped the run. A BaseException: Hypothesis lets it through
    (as it does KeyboardInterrupt) instead of taking it for a failure to shrink."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
    skipped: int = 0  # search boards the engine refused (EngineRefusal)
    states: int = 0  # explored in the search
    transitions: int = 0
    shrink_states: int = 0  # explored while shrinking
    bound_hits: int = 0  # search boards whose exploration hit --max-states
    known: int = 0  # search boards whose violations the baseline all lists (--baseline)
    first_refusal: str | None = None  # the engine's reason for the first search board it refused
    first_failure_example: int | None = None  # search example that first broke an invariant
    first_failure_s: float | None = None  # seconds from the start to that example
    search_s: float = 0.0
    shrink_s: float = 0.0
    # invariant -> why it was not evaluated (the engine does not observe what it reads), on the
    # search boards where it was not
    not_evaluated: dict[str, str] = field(default_factory=dict)

    @property
    def explored(self) -> int:
        """Search boards explored (drawn and not refused)."""
        return self.search_examples - self.skipped

    def to_dict(self, timings: bool) -> dict:
        d = {
            "examples": self.examples,
            "search_examples": self.search_examples,
            "shrink_examples": self.shrink_examples,
            "skipped": self.skipped,
            "first_refusal": self.first_refusal,
            "explored": self.explored,
            "states": self.states,
            "transitions": self.transitions,
            "shrink_states": self.shrink_states,
            "bound_hits": self.bound_hits,
            "known": self.known,
            "first_failure_example": self.first_failure_example,
            "not_evaluated": dict(sorted(self.not_evaluated.items())),
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
    stopped: str | None = None  # why the run stopped early: "timeout (60 s)", "interrupted (SIGINT)"
    stopped_during: str | None = None  # "probe" (the cards offered), "search" or "shrink"


@dataclass
class Explored:
    """What exploring one drawn board gave (plain data: it comes back from worker processes)."""

    refused: bool = False  # the engine refused the board (EngineRefusal)
    reason: str = ""  # its reason
    found: tuple | None = None  # (invariant, message, depth): the shortest violation no baseline lists
    states: int = 0
    transitions: int = 0
    bounded: bool = False  # cut short by --max-states
    known: int = 0  # violations the baseline lists (--baseline)
    not_evaluated: dict = field(default_factory=dict)  # invariant -> why (what the engine does not observe)
    stopped: str | None = None  # a signal or --timeout cut the exploration short: no verdict


class _Ticker:
    """The search's progress on stderr (bpcheck.explorers.progress): a line in place on a
    terminal, plain lines at a steady interval elsewhere (CI). ``enabled``: None on a terminal
    only (library calls), True wherever stderr goes (the command), False nothing."""

    def __init__(self, enabled: bool | None) -> None:
        if enabled is True:  # the command's run, begun by bpcheck.cli.main (cli/feedback.py)

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


def _halting(stop: Callable[[], str | None] | None, timeout: float | None, t0: float) -> Callable[[], str | None]:
    """One question for every place that may stop the run: a reason (the signal's, or the
    ``--timeout``'s once it has passed), or None."""
    deadline = None if timeout is None else t0 + timeout

    def halt() -> str | None:
        why = stop() if stop is not None else None
        if why is None and deadline is not None and time.monotonic() >= deadline:
            why = f"timeout ({timeout:g} s)"
        return why

    return halt


# -- the cards an engine plays ------------------------------------------------------------------


def probe_document(card) -> dict:
    """The smallest board that holds `card`: alone on P1's side, where a card of its kind goes
    (a monster in a Monster Zone, a Spell or Trap Set in a Spell & Trap Zone, a Field Spell in the
    Field Zone), on turn 2."""
    side: dict[str, Any] = {"lp": 8000}
    if card.is_monster:
        side["monsters"] = [{"zone": 1, "card": card.name, "position": "attack"}]
    elif card.kind == "spell" and card.subtype == "field":
        side["field_spell"] = {"card": card.name}
    else:
        side["spells"] = [{"zone": 1, "card": card.name}]
    return {"name": f"card probe: {card.name}", "turn": 2, "turn_player": 1, "p1": side, "p2": {"lp": 8000}}


def cards_the_engine_plays(
    engine_factory: Callable[[], Any], names: Sequence[str] | None = None, halt: Callable[[], str | None] | None = None, ticker: _Ticker | None = None
) -> tuple[list[str], dict[str, str]]:
    """Offer each card of the pool (or of ``names``) to the engine alone on a board
    (:func:`probe_document`): ``(the cards it starts a board with, {card: its reason} for those it
    refuses)``. An engine that fails on a card (an exception, a crash) keeps the card: the search
    will show what goes wrong. Deterministic for a deterministic engine; :class:`FuzzStopped`
    when ``halt`` says so."""
    pool = card_choice(names).pool
    wanted = [c for c in pool if names is None or c.name in names]
    played: list[str] = []
    refused: dict[str, str] = {}
    for k, card in enumerate(wanted):
        why = halt() if halt is not None else None
        if why is not None:
            raise FuzzStopped(why)
        if ticker is not None:
            ticker.show(f"offering the engine each card alone on a board: {k + 1} of {len(wanted)}")
        board = document_board(probe_document(card), f"<card probe: {card.name}>")
        engine = guard_engine(engine_factory())
        try:
            engine.start(board)
        except EngineRefusal as r:
            refused[card.name] = r.reason
            continue
        except SystemFault:
            pass
        finally:
            _close(engine)
        played.append(card.name)
    return played, refused


def _close(engine: Any) -> None:
    close = getattr(engine, "close", None)
    if callable(close):
        close()


# -- the search and the shrink ------------------------------------------------------------------


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
    baseline: Any = None,
    timeout: float | None = None,
    stop: Callable[[], str | None] | None = None,
    ruleset: str | None = None,
    cards_db: str | None = None,
) -> FuzzOutcome:
    """Search for a board on which the engine breaks an invariant, then shrink it. With
    ``jobs`` > 1 and ``engine_spec`` (the ``--engine`` spec and its keyword arguments: each worker
    builds its own engine), the search's boards are explored by worker processes; the outcome
    is the same as with one.

    ``baseline`` (:class:`~bpcheck.explorers.baseline.Baseline`): violations it lists are known
    and do not stop the search (:func:`judge_with_baseline`). ``timeout`` (seconds, the whole
    run) and ``stop`` (polled: a reason to stop, e.g. a signal's) end the run early and cleanly:
    the outcome then says why (``stopped``) and holds what was done, a board that was being
    explored not counted, and a failure found so far reported as far as it was shrunk.

    ``cards_db`` (``--cards-db``): the boards are drawn from the cards of this card database
    (``cards``: names or passcodes of it), weighted by their profiles
    (:func:`bpcheck.harness.strategies.db_card_choice`), and load with it; the engine is given it
    by ``engine_factory`` (``make_engine(spec, cards_db=...)``)."""
    system_cls = EngineSystem
    invs = list(invariants)
    if differential:  # lockstep with the reference model: explorers/differential.py

        system_cls = DifferentialSystem
        invs = [*invs, DIFF_INVARIANT]
    strategy = board_documents(cards, cards_db=cards_db)  # InputError on unknown --cards
    if ruleset is not None:  # --ruleset: every drawn board names it, so the shrunk board file does too
        strategy = strategy.map(lambda d: {**d, "ruleset": ruleset})
    bounds = Bounds(max_states=max_states)
    stats = FuzzStats()

    ticker = _Ticker(progress)
    t0 = time.monotonic()
    halt = _halting(stop, timeout, t0)
    phase: dict[str, Any] = {"name": "search", "target": None, "depth": None, "best": None}
    explore_kw = dict(baseline=baseline, engine_name=engine_name, differential=differential, cards_db=cards_db)

    def probe(doc: dict, known: Explored | None = None) -> None:
        """Explore one drawn board (or take ``known``, its result from a worker: -j N)."""
        searching = phase["name"] == "search"
        if known is None:
            why = halt()
            if why is not None:
                raise FuzzStopped(why)
            # While shrinking, a board whose counterexample would be longer than the one found
            # is not taken anyway: exploring one step past that depth is enough, and much faster
            # on the large boards the shrinker tries first.
            b = bounds if searching else Bounds(max_states=bounds.max_states, max_depth=phase["depth"] + 1)
            known = explore_document(doc, system_cls, engine_factory, invs, b, stop=halt, **explore_kw)
        if known.stopped is not None and known.found is None:  # cut short: no verdict, not counted
            raise FuzzStopped(known.stopped)
        stats.examples += 1
        if searching:
            stats.search_examples += 1
        else:
            stats.shrink_examples += 1
        if known.refused:
            if searching:
                stats.skipped += 1
                if stats.first_refusal is None:
                    stats.first_refusal = known.reason
            return
        if searching:
            stats.states += known.states
            stats.transitions += known.transitions
            if known.bounded and known.found is None:
                stats.bound_hits += 1
            if known.known:
                stats.known += 1
            for inv_id, why in known.not_evaluated.items():
                stats.not_evaluated.setdefault(inv_id, why)
        else:
            stats.shrink_states += known.states
        if searching:
            ticker.show(
                f"board {count(stats.search_examples)} of {count(examples)} drawn, {count(stats.states)} states explored"
                + (f", {count(stats.bound_hits)} cut by --max-states" if stats.bound_hits else "")
                + (f", {count(stats.skipped)} refused by the engine" if stats.skipped else ""),
                states=stats.states,
            )
        else:
            ticker.show(f"shrinking a board that breaks {phase['target']}: {count(stats.shrink_examples)} boards tried", states=stats.states + stats.shrink_states)
        if known.found is None:
            return
        prop, message, depth = known.found
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
            if not searching:  # the shrinker only tries boards smaller than its best: this is the new best
                phase["best"] = (doc, prop, message, depth)
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
        {"engine": engine_name, "invariants": [i.id for i in invs], "cards": list(cards) if cards else None, "max_states": max_states,
         **({"cards_db": os.path.abspath(cards_db)} if cards_db else {})},
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
    try:
        if jobs > 1 and engine_spec is not None:
            # -j N: the boards are drawn in this process, exactly as -j 1 draws them, and explored
            # by N workers; then the search below replays the draws up to the first failure with
            # the workers' results, so everything after it (the database, the shrink) is as -j 1.
            drawn[:], known_results[:] = _parallel_search(
                strategy, seed_value, examples, settings(base_settings(), max_examples=examples, phases=(Phase.explicit, Phase.reuse, Phase.generate), database=ReadOnlyDatabase(search_db), **common),
                jobs, engine_spec, [i.id for i in invs], differential, bounds, ticker, halt, baseline, engine_name, cards_db,
            )
        run()
    except FuzzViolation as e:
        out.invariant, out.found_doc, out.doc, out.depth, out.message = e.prop, e.doc, e.doc, e.depth, e.message
    except FuzzStopped as e:
        out.stopped, out.stopped_during = e.reason, "search"
    except Unsatisfiable:  # pragma: no cover - the strategies never reject
        out.notes.append("Hypothesis could not draw a board")
    finally:
        stats.search_s = time.monotonic() - t0
    if out.invariant is not None and shrink and out.stopped is None:
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
        except FuzzStopped as e:  # the smallest failing board the shrinker had reached
            out.stopped, out.stopped_during = e.reason, "shrink"
            if phase["best"] is not None:
                out.doc, _prop, out.message, out.depth = phase["best"]
        finally:
            stats.shrink_s = time.monotonic() - t1
    ticker.done()
    return out


def judge_with_baseline(br: BoardResult, baseline: Any, engine_name: str, differential: bool) -> list:
    """The counterexamples of a checked board that the baseline does not list, shortest first
    (and the known ones marked ``baselined``). The one place `bpcheck fuzz` consults a baseline:
    a drawn board has no file, so an entry's ``board`` is not compared, only what the entry says
    the finding is (its engine, invariant or DIFF kind and path); every entry is offered to every
    drawn board through :meth:`Baseline.outcome`, which decides the match."""
    entries = [dataclasses.replace(k, board=br.board.path) for k in baseline.entries]
    Baseline(baseline.file, entries).outcome(br, engine_name, differential)
    rest = [c for c in br.counterexamples if getattr(c, "baselined", None) is None]
    return sorted(rest, key=lambda c: (len(c.labels), c.invariant))


def explore_document(
    doc: dict,
    system_cls,
    engine_factory: Callable[[], Any],
    invs: Sequence,
    bounds: Bounds,
    *,
    baseline: Any = None,
    engine_name: str = "engine",
    differential: bool = False,
    stop: Callable[[], str | None] | None = None,
    cards_db: str | None = None,
) -> Explored:
    """Explore one drawn board on a fresh engine (closed after it). Without a baseline the
    exploration stops at the first violation; with one, the board is checked as `bpcheck check`
    checks it and its counterexamples judged by the baseline, so that known ones do not stop
    the search (:func:`judge_with_baseline`). ``stop`` is polled at every state. ``cards_db``:
    the card database the board's cards may come from (``--cards-db``)."""
    board = document_board(doc, DRAWN, cards_db)
    halted: list[str] = []

    def stop_here() -> str | None:
        why = stop() if stop is not None else None
        if why is not None and not halted:
            halted.append(why)
        return why

    engine = engine_factory()
    try:
        if baseline is not None:
            br = check_board(board, engine, invs, "bfs", bounds, engine_name, progress=False, system_cls=system_cls, reduce=False, stop=stop_here)
            if br.verdict == "skipped":
                return Explored(refused=True, reason=br.skip_reason or "")
            new = judge_with_baseline(br, baseline, engine_name, differential)
            r = br.result
            found = (new[0].invariant, new[0].message, len(new[0].labels)) if new else None
            return Explored(
                found=found, states=r.states, transitions=r.transitions, bounded=r.bound_hit is not None and not halted,
                known=len(br.counterexamples) - len(new), not_evaluated=dict(br.not_evaluated), stopped=halted[0] if halted else None,
            )
        try:
            system = system_cls(engine, board, invs)
        except EngineRefusal as r:
            return Explored(refused=True, reason=r.reason)
        except SystemFault as f:  # the engine failed before giving the initial state
            return Explored(found=(FAULT, f"{f.kind}: {f.message} (starting the board)", 0))
        r = explore(system, ExploreOptions("bfs", bounds, stop_on_violation=True, stop=stop_here))
        found = None
        if r.violations:
            v = min(r.violations, key=lambda v: (v.depth, v.prop))
            found = (v.prop, v.message, v.depth)
        return Explored(
            found=found, states=r.states, transitions=r.transitions, bounded=r.bound_hit is not None and not halted,
            not_evaluated=dict(getattr(system, "not_evaluated", {})), stopped=halted[0] if halted else None,
        )
    finally:
        _close(engine)


def explore_document_task(
    doc: dict, engine_spec: tuple, inv_ids: list[str], differential: bool, bounds: Bounds, baseline: Any = None, engine_name: str = "engine", cards_db: str | None = None
) -> Explored:
    """:func:`explore_document` in a worker process (plain data in and out)."""
    system_cls = EngineSystem
    if differential:
        system_cls = DifferentialSystem
    spec, kw = engine_spec
    return explore_document(
        doc, system_cls, lambda: make_engine(spec, **kw), invariants_by_id(inv_ids), bounds,
        baseline=baseline, engine_name=engine_name, differential=differential, stop=stop_reason, cards_db=cards_db,
    )


class _Enough(Exception):
    """Ends the drawing run of a parallel search: the first failure is known, or the run stops."""


def _parallel_search(
    strategy, seed_value: int, examples: int, run_settings, jobs: int, engine_spec, inv_ids, differential: bool, bounds: Bounds, ticker,
    halt: Callable[[], str | None] = lambda: None, baseline: Any = None, engine_name: str = "engine", cards_db: str | None = None,
) -> tuple[list, list]:
    """Draw the search's boards with Hypothesis (the same draws as the sequential search: every
    board drawn before the first failure passes in both) and explore them in ``jobs`` workers, at
    most 2 x ``jobs`` ahead. Returns the boards and their results in draw order, up to and
    including the first that breaks an invariant (all of them when none does). When ``halt``
    stops the run, the boards still being explored are cancelled and the results end at the
    first board without one. The drawing run reads the example database but never writes to it."""
    docs: list[dict] = []
    results: dict[int, Explored] = {}
    first_fail: list[int] = []
    halted: list[str] = []

    def absorb(outcomes) -> None:
        for o in outcomes:
            if not o.ok:  # a bug in bpcheck, or a dead worker: said as such (exit 4)
                raise RuntimeError(f"fuzz: exploring drawn board {o.index + 1}: {o.error}" + (f"\n{o.traceback}" if o.traceback else ""))
            if o.value.stopped is not None and o.value.found is None:
                continue  # cut short: no verdict
            results[o.index] = o.value
            if o.value.found is not None and (not first_fail or o.index < first_fail[0]):
                first_fail[:] = [o.index]
                pool.cancel([i for i in range(o.index + 1, len(docs))])
        ticker.show(f"{len(results):,} of {len(docs):,} boards drawn explored ({jobs} workers)")

    def decided() -> bool:
        if not halted and (why := halt()) is not None:
            halted.append(why)
            pool.cancel(list(range(len(docs))))  # running tasks stop at their next state, unreported
        return bool(halted) or (bool(first_fail) and all(i in results for i in range(first_fail[0])))

    def draw(doc: dict, data) -> None:
        if decided():
            raise _Enough()
        docs.append(doc)
        pool.submit(len(docs) - 1, explore_document_task, (doc, engine_spec, inv_ids, differential, bounds, baseline, engine_name, cards_db))
        while pool.in_flight() >= 2 * jobs and not decided():
            absorb(pool.collect(0.2))
        absorb(pool.collect(0))
        if decided():
            raise _Enough()

    with open_pool(jobs) as pool:  # worker processes, or Ray tasks with --cluster
        try:
            run_settings(seed(seed_value)(given(doc=strategy, data=st.data())(draw)))()
        except _Enough:
            pass
        except Exception as e:  # Hypothesis wraps a test's repeated exception in its own
            if not any(isinstance(x, _Enough) for x in getattr(e, "exceptions", ())) and "_Enough" not in repr(e):
                raise
        while not decided() and pool.in_flight():
            absorb(pool.collect(0.2))
    last = len(docs)
    if first_fail and all(i in results for i in range(first_fail[0])):
        last = first_fail[0] + 1
    last = next((i for i in range(last) if i not in results), last)  # halted: up to the first board without a result
    return docs[:last], [results[i] for i in range(last)]


__all__ = [
    "FuzzOutcome",
    "FuzzStats",
    "FuzzStopped",
    "FuzzViolation",
    "Explored",
    "base_settings",
    "cards_the_engine_plays",
    "explore_document",
    "fuzz",
    "judge_with_baseline",
    "reproduce_prefix",
]


@dataclass
class FuzzRun:
    """What `bpcheck fuzz` found: the search's outcome, the cards it drew from (and those the
    engine refused), and the shrunk board checked again (its result and the counterexample to show)."""

    out: FuzzOutcome
    cards: list[str] | None
    probed: dict | None
    bounds: Bounds
    results: list
    first: Any
    db: dict | None = None  # --cards-db: the database drawn from and its groups (db_choice_summary)


def fuzz_run(args: Any, invariants, engine_kw: dict, baseline, sig) -> FuzzRun:
    """The search of `bpcheck fuzz` with the options ``args`` (the command line's names): the
    cards the engine plays (each offered alone first), the search and its shrink, then the shrunk
    board checked again (its shortest counterexample). Raises :class:`InputError`."""
    cards = [c.strip() for c in args.cards.split(",") if c.strip()] if args.cards else None
    cards_db = getattr(args, "cards_db", None)
    engine_name = args.engine or "reference"
    sig.polling = True  # the first SIGINT / SIGTERM / SIGHUP stops the run cleanly (lifecycle.py)
    t0 = time.monotonic()
    halt = _halting(sig.stop_reason, args.timeout, t0)
    probed: dict | None = None
    db: dict | None = None
    out = FuzzOutcome(FuzzStats())
    try:
        if cards_db is not None:  # draw from the card database, weighted by profile (docs/fuzzing.md, "Cards of a card database")
            indexing = _Ticker(not args.quiet)
            try:
                indexing.show(f"indexing the card database {cards_db} (each card's profile, once per run)")
                db = db_choice_summary(db_card_choice(cards_db, cards))  # InputError: the database, --cards
            finally:
                indexing.done()
            db["path"] = cards_db
            db["left_out"] = db_index(cards_db).left_out if cards is None else 0
        elif cards is None:  # draw from the cards the engine plays (docs/fuzzing.md, "Which cards")
            probing = _Ticker(not args.quiet)  # stderr: a line on a terminal, plain lines in CI (-q: none)
            try:
                played, refused = cards_the_engine_plays(lambda: make_engine(args.engine, **engine_kw), None, halt, probing)
            finally:
                probing.done()
            if not played:
                first = next(iter(refused.items()))
                raise InputError(
                    "--engine", "", f"{engine_name} refused every card of the pool offered alone on a board (e.g. {first[0]}: {first[1]}): no board can be drawn for it"
                )
            if refused:
                cards = played
                probed = {"played": played, "refused": refused}
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
            baseline=baseline,
            stop=halt,  # a signal, or --timeout counted from the start of the run (the cards offered included)
            ruleset=getattr(args, "ruleset", None),
            progress=not args.quiet,  # stderr: a line on a terminal, plain lines in CI (-q: none)
            cards_db=cards_db,
        )
    except FuzzStopped as e:  # while offering the cards
        out.stopped, out.stopped_during = e.reason, "probe"
    if out.stopped is None and sig.signum is not None:  # a signal that came after the search
        out.stopped = sig.stop_reason()
    bounds = Bounds(max_states=args.max_states)
    results: list[BoardResult] = []
    first = None  # the counterexample to show: the first one the baseline does not list
    if out.invariant is not None:
        doc = dict(out.doc)
        doc["name"] = f"fuzz: {engine_name} breaks {out.invariant}"
        doc["description"] = f"Drawn and shrunk by bpcheck fuzz --seed {args.seed} (docs/fuzzing.md)."
        display = "<fuzzed board>"
        if args.cex_dir:
            path = write_board(doc, Path(args.cex_dir) / f"fuzz-{out.invariant}.toml", header(args, out))
            out.board_file = display = str(path)
        if sig.signum is None:  # after a signal the run ends now: the board, not its trace

            board = board_from_dict(doc, display, cards_db=cards_db)
            system_kw: dict = {}
            invs = list(invariants)
            if args.differential:
                invs.append(DIFF_INVARIANT)
                system_kw["system_cls"] = DifferentialSystem
            if graph_limit(args):
                system_kw["graph_limit"] = graph_limit(args)
            engine = make_engine(args.engine, **engine_kw)
            try:
                br = check_board(board, engine, invs, "bfs", bounds, engine_name, progress=False, stop=sig.stop_reason, **system_kw)
            finally:
                _close(engine)
            br.counterexamples.sort(key=lambda c: (c.invariant != out.invariant, len(c.labels), c.invariant))
            new = br.counterexamples if baseline is None else judge_with_baseline(br, baseline, engine_name, bool(args.differential))
            first = next((c for c in new if c.invariant == out.invariant), new[0] if new else None)
            out.result = br
            results.append(br)
    return FuzzRun(out, cards, probed, bounds, results, first, db)


def reproduce_prefix(args) -> str:
    """What goes before ``bpcheck check`` to reproduce a drawn board: the scripts overlay of the
    real core when the run had one (``OCG_SCRIPTS_OVERLAY``, docs/ocgcore.md)."""
    overlay = os.environ.get("OCG_SCRIPTS_OVERLAY")
    return f"OCG_SCRIPTS_OVERLAY={shlex.quote(overlay)} " if overlay and (args.engine or "").startswith("ocgcore") else ""


def check_options(args) -> str:
    """The options of `bpcheck check` that reproduce a drawn board: its engine, ``--cards-db``."""
    eng = shlex.quote(args.engine or "reference")
    db = getattr(args, "cards_db", None)
    return f"--engine {eng}" + (f" --cards-db {shlex.quote(db)}" if db else "")


def header(args, out: FuzzOutcome) -> str:
    eng = shlex.quote(args.engine or "reference")
    shrunk = "shrunk" if out.stopped is None else f"shrunk until {out.stopped} stopped the run"
    return (
        f"Found by `bpcheck fuzz --seed {args.seed}`: engine {eng} breaks {out.invariant} on this board\n"
        f"({shrunk}, from a board of {board_size(out.found_doc or {})} cards to {board_size(out.doc or {})}; "
        f"shortest counterexample: {out.depth} steps).\n"
        f"Reproduce: {reproduce_prefix(args)}bpcheck check {check_options(args)} --max-states {args.max_states} THIS_FILE"
    )
