"""A `cmd:` engine explored by several worker processes (explorers/parallel.py, `check -j 2` on
one board): each worker runs its own engine process, whose handles mean nothing to the others,
so a state that crosses to another worker travels as its path and is replayed there
(engines/jsonl.py, JState.__reduce__). Before that, a handed-over state kept its handle and
the receiving engine refused it ("unknown state handle 4": a false ENGINE-FAULT)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from bpcheck.engines.jsonl import JState, make_jsonl_engine
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
BOARD = ROOT / "boards" / "000-replay-2.toml"
SERVE = f"cmd:{sys.executable} -m bpcheck.engines.serve"
NOCLONING = f"cmd:{sys.executable} {ROOT / 'tests' / 'engines' / 'v2_nocloning.py'}"


@pytest.mark.parametrize("engine", [SERVE, NOCLONING], ids=["cloning", "no-cloning"])
def test_one_board_on_two_workers_gives_the_output_of_one(tmp_path, engine):
    outs = []
    for j in ("1", "2"):
        js = tmp_path / f"r{j}.json"
        p = subprocess.run(
            [sys.executable, "-m", "bpcheck", "check", str(BOARD), "-j", j, "--engine", engine, "--json", str(js), "-q"],
            capture_output=True, text=True, cwd=tmp_path, timeout=600,
        )
        outs.append((p.returncode, p.stdout, p.stderr, js.read_bytes()))
    assert outs[0][0] == 0, outs[0][1] + outs[0][2]  # the reference model holds every invariant here
    assert "ENGINE-FAULT" not in outs[1][1], outs[1][1]
    assert outs[1] == outs[0]
    assert "109 states, 137 transitions" in outs[0][1]


def _walk(engine, state, labels):
    for label in labels:
        action = next(a for a in engine.legal_actions(state) if a.label == label)
        state, _ = engine.apply(state, action)
    return state


def test_a_state_pickled_from_one_engine_process_is_the_same_state_in_another():
    """The handle of a state of engine A is not used by engine B: B replays its path. B has
    given out handles of its own first, so a handle carried over would name another state."""
    board = load_board(BOARD)
    a, b = make_jsonl_engine(SERVE), make_jsonl_engine(SERVE)
    try:
        ra, rb = a.start(board), b.start(board)
        acts = [x.label for x in a.legal_actions(ra)]
        deep = _walk(a, ra, [acts[0]])
        more = [x.label for x in a.legal_actions(deep)]
        deep = _walk(a, deep, [more[-1]])
        # B explores another line first: its handles 1, 2, ... name other states than A's
        other = _walk(b, rb, [acts[-1]])
        b.legal_actions(other)
        moved = pickle.loads(pickle.dumps(deep))
        assert moved.handle is None and moved.path() == deep.path()
        want = [x.label for x in a.legal_actions(deep)]
        assert [x.label for x in b.legal_actions(moved)] == want
        assert b.observe(moved) == a.observe(deep)
        # the initial state too (worker 0 gives it; its owner may be another worker)
        assert [x.label for x in b.legal_actions(pickle.loads(pickle.dumps(ra)))] == acts
    finally:
        a.close()
        b.close()


def test_a_deep_state_pickles_without_recursion():
    """A state pickles as its path, not its chain of ancestors (pickle recurses per object)."""
    board = load_board(BOARD)
    e = make_jsonl_engine(SERVE)
    try:
        s = e.start(board)
        for k in range(5000):  # a chain deeper than pickle's recursion allows (not applied: path only)
            s = JState(e.gen, None, s, f"step {k}", False, 0, None)
        moved = pickle.loads(pickle.dumps(s))
        assert moved.path() == s.path() and moved.depth == 5000
    finally:
        e.close()
