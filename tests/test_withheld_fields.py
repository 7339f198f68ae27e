"""Nothing is judged through a field the engine does not report (issue 24, item 2).

An engine may withhold (declare unobserved, protocol v2) every field of
``WITHHOLDABLE_PATHS`` (engines/observation_paths.py): its counters, marks, windows, priority,
effects in force, pending triggers and choices. Each invariant then judges from the monitor's own
history or the card data, or one of its checks is "not evaluated" with the reason; it never drops
the transitions it cannot read and reports ``held``.

- the declarations (``reads=`` / ``fields=``) are what the code reads: every check and history
  update runs on traced observations (tests/field_reads.py) and every path it touches is declared;
- the reference model passes with every withholdable field withheld, and no invariant trips
  over a missing field;
- every engine of the engine-that-lies suite (tests/engines/) and every shipped mutant runs with
  all fields observed and with none: the table TABLE below is the verdict of each, both ways.
  A behaviour bug is caught both ways; a lie told only in a withheld field cannot be seen once the
  field is withheld (the engine is the reference model otherwise), so it passes there.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import orjson
import pytest
import xxhash

from bpcheck.engines.interface import Capabilities
from bpcheck.engines.mutants import MUTANTS
from bpcheck.engines.observation_paths import OPTIONAL_PATHS, WITHHOLDABLE_PATHS, names, overlaps, strip, within
from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import ExploreOptions, explore
from bpcheck.invariants import REGISTRY, select
from bpcheck.invariants.base import WITHOUT_HOW
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "boards"
DATA = ROOT / "tests" / "data"
ENGINES = ROOT / "tests" / "engines"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from field_reads import BOARDS as TRACE_BOARDS, field_reads  # noqa: E402


class Withholding:
    """Any engine, withholding every field of WITHHOLDABLE_PATHS (as a real engine that keeps no
    such bookkeeping would): it declares them unobserved and leaves them out; its ``hidden`` key
    (protocol v2) tells apart the states that differ only there, so the state space is the same."""

    capabilities = Capabilities(unobserved=WITHHOLDABLE_PATHS)

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = f"{getattr(inner, 'name', 'engine')} (withholding)"

    def start(self, board):
        return self.inner.start(board)

    def legal_actions(self, state):
        return self.inner.legal_actions(state)

    def apply(self, state, action):
        return self.inner.apply(state, action)

    def is_terminal(self, state):
        return self.inner.is_terminal(state)

    def observe(self, state):
        full = self.inner.observe(state)
        key = f"{xxhash.xxh3_64_intdigest(orjson.dumps(full, option=orjson.OPT_SORT_KEYS)):016x}"
        return {**strip(full, WITHHOLDABLE_PATHS), "hidden": key}


# -- the declarations are what the code reads ---------------------------------------------------


@pytest.fixture(scope="module")
def traced():
    return field_reads([BOARDS / b for b in TRACE_BOARDS])


def _declared(inv) -> set[str]:
    return set(inv.reads or ()) | {p for p, _w in inv.fields}


def _covered(path: str, declared: set[str]) -> bool:
    # a container read (``attack``, ``players[].monsters``) is covered by any declared path inside it
    return any(path == d or overlaps(path, d) for d in declared)


def test_every_invariant_declares_the_fields_it_reads(traced):
    missing = {}
    for inv_id, inv in REGISTRY.items():
        got = traced.get(inv_id, set())
        undeclared = sorted(p for p in got if not _covered(p, _declared(inv)))
        if undeclared:
            missing[inv_id] = undeclared
    assert not missing, f"invariants read observation fields they do not declare (reads= / fields=): {missing}"


def test_every_invariant_declares_what_it_reads_and_what_it_does_without_each_withholdable_field():
    for inv in REGISTRY.values():
        assert inv.reads is not None, f"{inv.id} declares no reads="
        for p, w in inv.fields:
            assert any(within(p, w) for w in WITHHOLDABLE_PATHS | OPTIONAL_PATHS), (
                f"{inv.id}: {p} is not a field an engine may withhold: put it in reads="
            )
            assert w.how in WITHOUT_HOW and w.note, (inv.id, p, w)


def test_the_histories_read_no_withholdable_field(traced):
    for who, got in sorted(traced.items()):
        if who.startswith("history:"):
            hidden = sorted(p for p in got if any(names(p)[: len(names(w))] == names(w) for w in WITHHOLDABLE_PATHS))
            assert not hidden, f"{who} reads {hidden}: the monitor must keep its history from events, actions and visible fields"


def test_the_ocgcore_adapter_withholds_only_withholdable_fields():
    from bpcheck.engines.ocgcore.engine import UNOBSERVED

    assert UNOBSERVED <= WITHHOLDABLE_PATHS


# -- the reference with every withholdable field withheld -----------------------------------------

REFERENCE_BOARDS = [
    "000-replay-1.toml", "000-replay-2.toml", "000-replay-dark-elf.toml", "000-not-replay-1.toml", "000-flip-man-eater-bug.toml",
    "000-facedown-flip-destroyed.toml", "003-004-example-1.toml", "003-004-example-3.toml", "002-fiendish-chain-stops.toml",
    "rule-ch-lifo-ring.toml", "rule-ds-lily.toml", "rule-ds-kuriboh.toml", "003-004-shining-angel-torrential.toml",
    "000-replay-6.toml", "rule-ch-cost-discard.toml", "rule-lp-zero-effect.toml", "002-berserk-gorilla.toml",
]  # fmt: skip


@pytest.mark.parametrize("board", REFERENCE_BOARDS)
def test_the_reference_passes_with_every_withholdable_field_withheld(board):
    b = load_board(BOARDS / board)
    full = EngineSystem(ReferenceEngine(), b, select(None))
    r_full = explore(full)
    es = EngineSystem(Withholding(ReferenceEngine()), b, select(None))
    r = explore(es)
    assert r.status == "pass", [(v.prop, v.message) for v in r.violations]
    # the same state space: the monitor's histories tell apart what the withheld fields did
    assert (r.states, r.transitions) == (r_full.states, r_full.transitions)
    # not evaluated only where declared (reads=), never by tripping over a missing field
    for inv_id, why in es.not_evaluated.items():
        inv = REGISTRY[inv_id]
        assert any(within(p, w) for p in inv.reads for w in WITHHOLDABLE_PATHS), (inv_id, why)
    # and every invariant the reference judged with all fields is judged (or declared not
    # evaluated, or not evaluated in part) without them
    judged = {k for k, st in r_full.props.items() if st.checked}
    lost = {k for k in judged if k not in es.not_evaluated and not (r.props.get(k) and r.props[k].checked)}
    assert not lost, f"judged with every field, silently vacuous without them: {sorted(lost)}"


# -- the engine-that-lies suite and the mutants, with all fields observed and with none -----------


def _lying(module, factory):
    def make():
        sys.path.insert(0, str(ENGINES))
        try:
            mod = importlib.import_module(module)
        finally:
            sys.path.remove(str(ENGINES))
        obj = getattr(mod, factory)
        # a Rules variant runs through the reference engine; a factory returns an engine
        return ReferenceEngine(obj) if isinstance(obj, type) else obj()

    return make


def _mutant(name):
    return lambda: ReferenceEngine(MUTANTS[name].rules, name=name)


BEHAVIOUR, LIE, CORRECT = "behaviour bug", "lie in a withheld field", "correct"

# The mutants whose bug is only in a field an engine may withhold, on their own board:
# replay-is-second-attack counts the continuation of a replayed attack as a second declaration
# (attacks_declared 2), and a monster that may attack once has no second attack either way: its
# behaviour is the reference's, only its count lies.
_MUTANT_KIND = {"replay-is-second-attack": (LIE, "fail", "pass")}

# engine, how it is built, its board, what it is, verdict with every field observed, with none withheld
TABLE = [
    # tests/engines/lying_bookkeeping.py: the reference model, lying in one field of its observation
    ("lying:attacks-zero", _lying("lying_bookkeeping", "attacks_zero"), "000-replay-1.toml", LIE, "fail", "pass"),
    ("lying:stop-forgotten", _lying("lying_bookkeeping", "stop_forgotten"), "002-fiendish-chain-stops.toml", LIE, "fail", "pass"),
    ("lying:drops-declared-at", _lying("lying_bookkeeping", "drops_declared_at"), "000-replay-1.toml", LIE, "fail", "pass"),
    ("lying:direct-forgotten", _lying("lying_bookkeeping", "direct_forgotten"), "rule-calc-direct.toml", LIE, "fail", "pass"),
    ("lying:hides-destroyed-mark", _lying("lying_bookkeeping", "hides_destroyed_mark"), "000-facedown-flip-destroyed-by-bug.toml", LIE, "fail", "pass"),
    ("lying:hides-flip", _lying("lying_bookkeeping", "hides_flip"), "000-flip-man-eater-bug.toml", LIE, "fail", "pass"),
    ("lying:hides-damage-calculated", _lying("lying_bookkeeping", "hides_damage_calculated"), "000-facedown-flip-destroyed-by-bug.toml", LIE, "fail", "pass"),
    ("lying:hides-windows", _lying("lying_bookkeeping", "hides_windows"), "003-004-example-3.toml", LIE, "fail", "pass"),
    # lies in fields no engine may withhold: caught both ways
    ("lying:drops-chain-links", _lying("lying_bookkeeping", "drops_chain_links"), "rule-ch-lifo-ring.toml", BEHAVIOUR, "fail", "fail"),
    ("lying:lp-unchanged", _lying("lying_bookkeeping", "lp_unchanged"), "rule-calc-direct.toml", BEHAVIOUR, "fail", "fail"),
    # tests/engines/lying_direct.py: forgets to count direct attacks (and attacks again), its twin counts
    ("ForgetsDirectAttacks", _lying("lying_direct", "ForgetsDirectAttacks"), DATA / "direct-attacker.toml", BEHAVIOUR, "fail", "fail"),
    ("CountsDirectAttacks", _lying("lying_direct", "CountsDirectAttacks"), DATA / "direct-attacker.toml", CORRECT, "pass", "pass"),
    # tests/engines/lying_damage_step.py: Damage-Step bugs inside one transition
    ("SendsAtCalculation", _lying("lying_damage_step", "SendsAtCalculation"), "000-facedown-flip-destroyed-by-bug.toml", BEHAVIOUR, "fail", "fail"),
    ("CalculatesOnEntering", _lying("lying_damage_step", "CalculatesOnEntering"), "000-facedown-flip-destroyed-by-bug.toml", BEHAVIOUR, "fail", "fail"),
    ("NoBattleGraveyardTriggers", _lying("lying_damage_step", "NoBattleGraveyardTriggers"), "003-004-shining-angel-torrential.toml", BEHAVIOUR, "fail", "fail"),
    ("FlipTriggersAtCalculation", _lying("lying_damage_step", "FlipTriggersAtCalculation"), "000-flip-man-eater-bug.toml", BEHAVIOUR, "fail", "fail"),
    # tests/engines/lying_destroyed_mark.py: a monster destroyed by battle leaves by an effect first
    ("DestroysMarkedByEffect", _lying("lying_destroyed_mark", "DestroysMarkedByEffect"), "000-facedown-flip-destroyed-by-bug.toml", BEHAVIOUR, "fail", "fail"),
    ("BanishesMarkedByEffect", _lying("lying_destroyed_mark", "BanishesMarkedByEffect"), "000-facedown-flip-destroyed-by-bug.toml", BEHAVIOUR, "fail", "fail"),
    ("SelfDestroysAfterBattle", _lying("lying_destroyed_mark", "SelfDestroysAfterBattle"), "rule-ds-reflect-bounder.toml", BEHAVIOUR, "fail", "fail"),
    # the reference model itself
    ("reference", ReferenceEngine, "000-replay-1.toml", CORRECT, "pass", "pass"),
] + [
    # engines/mutants.py: the reference with one rules bug each, on its own seed board
    (f"mutant:{name}", _mutant(name), m.board, *_MUTANT_KIND.get(name, (BEHAVIOUR, "fail", "fail")))
    for name, m in sorted(MUTANTS.items())
]  # fmt: skip


def _verdict(engine, board: Path) -> tuple[str, list[str], dict]:
    es = EngineSystem(engine, load_board(board), select(None))
    r = explore(es, ExploreOptions("bfs", stop_on_violation=True))
    return r.status, sorted({v.prop for v in r.violations}), es


@pytest.mark.parametrize("name,make,board,what,all_observed,none_observed", TABLE, ids=[e[0] for e in TABLE])
def test_a_behaviour_bug_is_caught_whatever_the_engine_withholds(name, make, board, what, all_observed, none_observed):
    board = board if isinstance(board, Path) else BOARDS / board
    v_all, by_all, _ = _verdict(make(), board)
    v_none, by_none, es = _verdict(Withholding(make()), board)
    got = (v_all, v_none)
    print(f"{name} ({what}): every field observed: {v_all} {by_all}; none of the withholdable: {v_none} {by_none}")
    assert got == (all_observed, none_observed), (
        f"{name} ({what}): expected {all_observed} / {none_observed}, got {v_all} {by_all} / {v_none} {by_none}; "
        f"not evaluated without the fields: {sorted(es.not_evaluated)}"
    )


def test_the_table_covers_the_whole_suite():
    """Every mutant and every lying engine of tests/engines/ is in the table (unknown_card is no
    bug: its unknown card is "not judged", tests/test_invariants_monitor.py)."""
    names = {e[0] for e in TABLE}
    assert {f"mutant:{m}" for m in MUTANTS} <= names
    built = {(mk.__closure__[0].cell_contents, mk.__closure__[1].cell_contents) for _n, mk, *_ in TABLE if getattr(mk, "__closure__", None) and len(mk.__closure__) == 2}
    sys.path.insert(0, str(ENGINES))
    try:
        for module in ("lying_bookkeeping", "lying_direct", "lying_damage_step", "lying_destroyed_mark"):
            mod = importlib.import_module(module)
            for attr, obj in vars(mod).items():
                if attr.startswith("_") or attr == "unknown_card" or getattr(obj, "__module__", None) != module:
                    continue
                if module == "lying_bookkeeping" and isinstance(obj, type):
                    continue  # (the Lying wrapper itself)
                assert (attr, module) in built or (module, attr) in built, f"{module}.{attr} is not in TABLE"
    finally:
        sys.path.remove(str(ENGINES))
