"""Which fields of an observation, an event or an action record hold card uids, and the cards
they name (``Sheep Token [P2 M2]``), for every text a person reads: reports, DIFF messages.

No rules live here: the fields are those of the documented observation and events
(docs/observation.md, docs/model.md), and a uid is named from the observations given, with
:func:`bpcheck.invariants.view.card_ref`, the form invariant messages use.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from bpcheck.invariants.view import card_ref

# A field holding one uid (an int; ``None`` where the documentation allows none). In events,
# ``attacker`` and ``target`` are card names (strings) beside ``attacker_uid`` and ``target_uid``:
# only an int is read as a uid.
UID_KEYS = frozenset({"uid", "attacker", "target", "card_uid", "source_uid", "equipped_to", "attached_to", "linked_monster"})
# A field holding a list of uids.
UID_LIST_KEYS = frozenset({"declared_at", "potential_targets", "equipped_with", "targets"})
# A field holding a player (0 or 1).
PLAYER_KEYS = frozenset({"player", "controller", "owner", "from_player", "to_player", "turn_player", "to_act", "priority", "winner"})
PLAYER_NAMES = ("P1", "P2")


def is_uid(key: Any, value: Any) -> bool:
    """Whether `value`, found under `key`, is a card's uid."""
    return isinstance(key, str) and (key in UID_KEYS or key.endswith("_uid")) and isinstance(value, int) and not isinstance(value, bool)


def is_uid_list(key: Any, value: Any) -> bool:
    return (
        isinstance(key, str)
        and key in UID_LIST_KEYS
        and isinstance(value, (list, tuple))
        and all(isinstance(u, int) and not isinstance(u, bool) for u in value)
    )


def player_name(value: Any) -> str:
    return PLAYER_NAMES[value] if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1) else str(value)


class TraceNames:
    """Names the cards of one trace: a uid seen at state `at` is looked up in that state's
    observation first, then in the states after it (a card about to appear: a Token), then in
    the states before it (a card that left), so a card is named by uid alone only when no
    observation of the trace holds it."""

    def __init__(self, observations: Sequence[Any]) -> None:
        self.obs = [o if isinstance(o, dict) else {} for o in observations]
        self._memo: dict[tuple[int, Any], str] = {}

    def ref(self, uid: Any, at: int = 0) -> str:
        if uid is None:
            return "direct"
        if not isinstance(uid, int) or isinstance(uid, bool):
            return str(uid)
        if not self.obs:
            return f"#{uid}"
        at = max(0, min(at, len(self.obs) - 1))
        key = (at, uid)
        got = self._memo.get(key)
        if got is None:
            order = [self.obs[at], *self.obs[at + 1 :], *reversed(self.obs[:at])]
            got = self._memo[key] = card_ref(order[0], uid, *order[1:])
        return got

    def refs(self, uids: Sequence[Any], at: int = 0) -> str:
        return "[" + ", ".join(self.ref(u, at) for u in uids) + "]"

    def value(self, key: Any, value: Any, at: int = 0) -> str | None:
        """The value under `key` named, when it holds uids; else None."""
        if is_uid(key, value):
            return self.ref(value, at)
        if is_uid_list(key, value):
            return self.refs(value, at)
        return None


def event_text(event: Any, names: TraceNames, at: int) -> str:
    """One event as a line, its cards named: ``attack declared: attacker Asura Priest [P1 M1],
    target Mokey Mokey [P2 M1], player P1``. Generic over the fields an event carries (an
    engine may send more)."""
    if not isinstance(event, dict):
        return str(event)
    kind = str(event.get("kind", "?")).replace("_", " ")
    named = {k[: -len("_uid")] for k, v in event.items() if isinstance(k, str) and k.endswith("_uid")}
    parts = []
    for k, v in event.items():
        if k == "kind" or (isinstance(k, str) and (k == "passcode" or k.endswith("_passcode"))):
            continue
        if k in named and not is_uid(k, v):  # the card's name beside its uid: the uid names it with its zone
            continue
        shown = names.value(k, v, at)
        base = k[: -len("_uid")] if isinstance(k, str) and k.endswith("_uid") else str(k)
        if v is None and isinstance(k, str) and k.endswith("_uid"):  # no card (a direct attack, an attack called off)
            parts.append(f"{base} none")
        elif shown is not None:
            parts.append(shown if base == "card" else f"{base} {shown}")
        elif k in PLAYER_KEYS:
            parts.append(f"{k} {player_name(v)}")
        elif isinstance(v, (dict, list)):
            parts.append(f"{k} {_compact(v)}")
        elif v is None:  # a field the engine left empty (a chain link naming no effect): never Python's "None"
            parts.append(f"{k} not given")
        else:
            parts.append(f"{k} {v}")
    return kind + (": " + ", ".join(parts) if parts else "")


def _compact(v: Any) -> str:
    text = json.dumps(v, separators=(", ", ": "), ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def action_refs(action: Any, names: TraceNames, at: int) -> tuple[list[str], list[str]]:
    """The cards an action record names: (the acting cards: ``card_uid``, ``attacker``; the
    others: ``target``, ``targets``, any other ``*_uid``), each as ``Name [zone]``."""
    first: list[str] = []
    rest: list[str] = []
    if not isinstance(action, dict):
        return first, rest
    for k, v in action.items():
        if k in ("kind", "player", "label"):
            continue
        if is_uid(k, v):
            (first if k in ("card_uid", "attacker", "attacker_uid") else rest).append(names.ref(v, at))
        elif is_uid_list(k, v):
            rest += [names.ref(u, at) for u in v]
    return first, rest


def action_cards(action: Any, names: TraceNames, at: int) -> str:
    """The cards an action record names, ``Asura Priest [P1 M1] -> Mokey Mokey [P2 M1]``, or ""
    when it names none."""
    first, rest = action_refs(action, names, at)
    return " -> ".join(x for x in (", ".join(first), ", ".join(rest)) if x)


def unnamed_in_label(action: Any, names: TraceNames, at: int) -> str:
    """The cards of an action record that its label does not name (an engine's label may give
    uids or nothing): "" when the label names them all."""
    if not isinstance(action, dict):
        return ""
    label = str(action.get("label", ""))
    first, rest = action_refs(action, names, at)
    if all(r.split(" [", 1)[0] in label for r in first + rest):
        return ""
    return action_cards(action, names, at)


__all__ = ["PLAYER_KEYS", "UID_KEYS", "UID_LIST_KEYS", "TraceNames", "action_cards", "action_refs", "unnamed_in_label", "event_text", "is_uid", "is_uid_list", "player_name"]
