"""replay.choices judges whether a replay is pending by the monitor's own `replay` history (a
`replay` event not yet answered by a replay choice), never by the engine's
attack.replay_pending, which it only compares where an engine reports it (RPL-REWIND)."""

from __future__ import annotations

import copy
from pathlib import Path

from bpcheck.engines.reference import ReferenceEngine
from bpcheck.explorers.checking import EngineSystem
from bpcheck.invariants import REGISTRY
from bpcheck.invariants.base import Context
from bpcheck.model.board import load_board

ROOT = Path(__file__).resolve().parent.parent
BOARD = ROOT / "boards" / "000-replay-1.toml"  # a direct attack, then Scapegoat's tokens: a replay


def _states():
    es = EngineSystem(ReferenceEngine(), load_board(BOARD), [])
    seen, todo, out = set(), list(es.initial_states()), []
    while todo:
        s = todo.pop(0)
        acts = [] if es.is_terminal(s) else list(es.actions(s))
        out.append((s, acts))
        for a in acts:
            s2, _info = es.step(s, a)
            fp = es.fingerprint(s2)
            if fp not in seen:
                seen.add(fp)
                todo.append(s2)
    return es, out


def _pending(es, states):
    for s, acts in states:
        if s[2]["replay"] is not None:
            return s, acts
    raise AssertionError("no replay on the board")


def _choices(es, obs, acts, mon):
    return REGISTRY["replay.choices"].check(obs, acts, Context(mon, es.cards))


def _without_replay_pending(obs):
    out = copy.deepcopy(obs)
    if out["attack"] is not None:
        out["attack"].pop("replay_pending")
    return out


def test_the_history_is_the_model_s_replay_pending_on_every_state():
    es, states = _states()
    pending = [(s[1]["attack"] or {}).get("replay_pending", False) for s, _a in states]
    assert any(pending)
    assert [s[2]["replay"] is not None for s, _a in states] == pending
    for s, _a in states:
        if s[2]["replay"] is not None:
            assert s[2]["replay"] == s[1]["attack"]["attacker"]


def test_a_wrong_claim_and_a_missing_call_off_are_violations():
    es, states = _states()
    s, acts = _pending(es, states)
    records = [a.to_dict() for a in acts]
    assert _choices(es, s[1], records, s[2]) is True
    told = copy.deepcopy(s[1])
    told["attack"]["replay_pending"] = False  # the engine forgot it is asking for a replay
    got = _choices(es, told, records, s[2])
    assert isinstance(got, str) and "the engine reports attack.replay_pending = false" in got, got
    no_call_off = [r for r in records if r.get("option") != "call_off"]
    got = _choices(es, s[1], no_call_off, s[2])
    assert got == "calling the attack off is not offered in a replay"


def test_an_engine_that_does_not_report_replay_pending_is_still_judged():
    es, states = _states()
    s, acts = _pending(es, states)
    records = [a.to_dict() for a in acts]
    obs = _without_replay_pending(s[1])
    assert _choices(es, obs, records, s[2]) is True
    got = _choices(es, obs, [*records, {"kind": "pass", "player": 0, "label": "pass"}], s[2])
    assert got == "other actions are offered while a replay is pending"
    # and where no replay is pending, a claim of one is a violation
    calm = next(x for x, _a in states if x[1]["attack"] is not None and x[2]["replay"] is None)
    told = copy.deepcopy(calm[1])
    told["attack"]["replay_pending"] = True
    got = _choices(es, told, [], calm[2])
    assert isinstance(got, str) and "= true, but no replay happened" in got, got
