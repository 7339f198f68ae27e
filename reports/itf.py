"""Counterexamples in the Informal Trace Format (ITF) of Apalache and Quint (ADR-015).

A trace is ``{"#meta": {...}, "vars": [...], "states": [{"#meta": {"index": k}, var: value, ...}]}``
(plus ``"loop"`` for a cycle: the index of the state the last one returns to). One state per
observation of the counterexample: the initial one, then the one after each step. The variables
are the observation's top-level fields (docs/model.md) plus:

* ``action``: the label of the action that led to the state (``"init"`` for the first state;
  Quint's MBT convention), and ``player``: who took it (an Option, ``None`` for the first state);
* ``events``: the events the action produced (a list of records).

Values follow the ITF expression forms: every integer is ``{"#bigint": "N"}`` (the form Quint
writes, exact for any size), strings and booleans are JSON's, lists stay lists, records stay
objects, and the fields the observation documents as sets of uids (``declared_at``,
``potential_targets``, ``once_per_turn_used``, ``equipped_with``) are ``{"#set": [...]}``. ITF has
no null: a field that can be empty is written as Quint writes an ``Option``, ``{"tag": "None",
"value": {"#tup": []}}`` or ``{"tag": "Some", "value": v}``; the fields the observation documents
as nullable are always written that way, so a reader sees one type per field.
"""

from __future__ import annotations

import json
from typing import Any

from bpcheck import __version__
from bpcheck.reports.safe import json_text

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
SET_FIELDS = frozenset({"declared_at", "potential_targets", "once_per_turn_used", "equipped_with"})
# Fields documented as nullable (docs/model.md), written as Options whether empty or not.
OPTION_FIELDS = frozenset(
    {"winner", "to_act", "attack", "choice", "field_zone", "target", "target_uid", "equipped_to", "attached_to", "linked_monster"}
)
OPTION_ITEMS = frozenset({"monsters", "spells"})  # zone lists: each slot is an Option
NONE = {"tag": "None", "value": {"#tup": []}}


def some(v: Any) -> dict:
    return {"tag": "Some", "value": v}


def encode(v: Any, key: str | None = None) -> Any:
    """One JSON value as an ITF expression (`key`: the record field it sits in)."""
    if key in OPTION_FIELDS:
        return NONE if v is None else some(_plain(v, key))
    return _plain(v, key)


def _plain(v: Any, key: str | None) -> Any:
    if v is None:
        return NONE
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, int):
        return {"#bigint": str(v)}
    if isinstance(v, float):
        if v.is_integer():
            return {"#bigint": str(int(v))}
        return str(v)  # ITF has no fractions; none occur in observations
    if isinstance(v, (list, tuple)):
        if key in SET_FIELDS:
            return {"#set": [encode(x) for x in v]}  # observations list set members sorted
        if key in OPTION_ITEMS:
            return [NONE if x is None else some(encode(x)) for x in v]
        return [encode(x) for x in v]
    if isinstance(v, dict):
        return {_field(k): encode(x, k) for k, x in v.items()}
    return str(v)


def _field(k: Any) -> str:
    k = str(k)
    return "_" + k if k.startswith("#") else k  # ITF record fields never start with '#'


def trace_document(cex) -> dict:
    """The ITF trace of a counterexample (a JSON-serialisable dict)."""
    observations = [cex.initial_observation] + [s.after for s in cex.steps]
    obs_vars = list(cex.initial_observation.keys())
    variables = ["action", "player", "events"] + [v for v in obs_vars if v not in ("action", "player", "events")]
    states = []
    for k, obs in enumerate(observations):
        st = cex.steps[k - 1] if k else None
        state: dict[str, Any] = {"#meta": {"index": k}}
        if st is not None:
            state["#meta"]["step"] = st.index
            state["#meta"]["action"] = st.action
        state["action"] = "init" if st is None else st.action.get("label", "?")
        state["player"] = NONE if st is None or st.player is None else some(encode(st.player))
        state["events"] = [] if st is None else [encode(e) for e in st.events]
        for v in obs_vars:
            if v in ("action", "player", "events"):
                continue
            state[v] = encode(obs.get(v), v)
        if k == len(observations) - 1:
            state["#meta"]["violation"] = {"invariant": cex.invariant, "kind": cex.at, "message": cex.message}
        states.append(state)
    doc: dict[str, Any] = {
        "#meta": {
            "format": "ITF",
            "format-description": FORMAT_DESCRIPTION,
            "source": cex.board,
            "description": f"bpcheck {__version__} counterexample: {cex.invariant} violated ({cex.message})",
            "status": "violation",
            "invariant": cex.invariant,
            "statement": cex.statement,
            "rules": list(cex.rules),
            "kind": cex.at,
            "engine": cex.engine,
            "tool": f"bpcheck {__version__}",
        },
        "vars": variables,
        "states": states,
    }
    if cex.at == "cycle" and cex.cycle_start is not None:
        doc["loop"] = cex.cycle_start
    return doc


def trace_json(cex) -> str:
    return json_text(trace_document(cex), indent=1) + "\n"  # the engine's strings exactly, as JSON escapes where needed


def decode(v: Any) -> Any:
    """ITF expression -> plain JSON value (Options unwrapped, sets as sorted lists): the inverse
    of :func:`encode` up to set order, used by the tests and by tools that want plain JSON."""
    if isinstance(v, list):
        return [decode(x) for x in v]
    if isinstance(v, dict):
        if "#bigint" in v:
            return int(v["#bigint"])
        if "#set" in v:
            return [decode(x) for x in v["#set"]]
        if "#tup" in v:
            return [decode(x) for x in v["#tup"]]
        if "#map" in v:
            return {json.dumps(decode(k)): decode(x) for k, x in v["#map"]}
        if set(v) == {"tag", "value"} and v["tag"] in ("None", "Some"):
            return None if v["tag"] == "None" else decode(v["value"])
        return {k: decode(x) for k, x in v.items()}
    return v


__all__ = ["decode", "encode", "trace_document", "trace_json"]
