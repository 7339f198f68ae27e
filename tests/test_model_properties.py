"""Properties of the reference model on every bundled board, explored by random play (Hypothesis).

These are sanity properties of the model as an engine (determinism, termination, card
conservation, serialisable observations); the rule invariants proper live in bpcheck.invariants.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpcheck.model.board import load_board
from bpcheck.model.engine import IllegalAction, Rules
from bpcheck.model.observe import observe

ROOT = Path(__file__).resolve().parent.parent
BOARDS = sorted((ROOT / "boards").glob("*.toml"))
MAX_STEPS = 600


def card_places(obs: dict) -> dict[int, int]:
    seen: dict[int, int] = {}
    for p in obs["players"]:
        for zone in ("monsters", "spells"):
            for c in p[zone]:
                if c:
                    seen[c["uid"]] = seen.get(c["uid"], 0) + 1
        if p["field_zone"]:
            seen[p["field_zone"]["uid"]] = seen.get(p["field_zone"]["uid"], 0) + 1
        for pile in ("hand", "graveyard", "banished", "deck"):
            for c in p[pile]:
                seen[c["uid"]] = seen.get(c["uid"], 0) + 1
    return seen


@pytest.mark.parametrize("board_path", BOARDS, ids=[b.stem for b in BOARDS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_play_terminates_deterministically(board_path, data):
    board = load_board(board_path)
    rules = Rules(board.pool)
    s = board.state
    obs0 = observe(rules, s)
    tokens = {m["uid"] for p in obs0["players"] for m in p["monsters"] if m and m["token"]}
    non_tokens = set(card_places(obs0)) - tokens  # tokens leave the field and go nowhere (CARD-TOKEN)
    for _ in range(MAX_STEPS):
        acts = rules.legal_actions(s)
        if rules.is_terminal(s):
            assert acts == []
            break
        assert acts, f"deadlock: no legal action in a non-terminal state ({s.step.value})"
        labels = [a.label for a in acts]
        assert len(set(labels)) == len(labels), f"ambiguous labels: {labels}"
        assert acts == rules.legal_actions(s), "legal_actions is not deterministic"
        act = data.draw(st.sampled_from(acts), label="action")
        s2, ev = rules.apply(s, act)
        s3, ev3 = rules.apply(s, act)
        assert s2 == s3 and ev == ev3, "apply is not deterministic"
        obs = observe(rules, s2)
        json.dumps(obs)
        json.dumps([e.to_dict() for e in ev])
        places = card_places(obs)
        assert all(n == 1 for n in places.values()), "a card is in two places"
        assert non_tokens <= set(places), "a card vanished"
        assert all(p["lp"] >= 0 for p in obs["players"])
        hash(s2)
        s = s2
    else:
        pytest.fail(f"no terminal state within {MAX_STEPS} steps")


def test_apply_refuses_an_action_not_offered():
    board = load_board(ROOT / "boards" / "000-replay-1.toml")
    rules = Rules(board.pool)
    s = board.state
    act = rules.legal_actions(s)[0]
    s2, _ = rules.apply(s, act)
    with pytest.raises(IllegalAction):
        rules.apply(s2, act)
