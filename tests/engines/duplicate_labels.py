"""An engine with a labelling bug: when several monsters can attack, every attack declaration is
labelled after the first attacker's ("attack Battle Ox -> direct" twice), so two legal actions
share one label. The label is how traces, counterexample files and replays name an action, so
this is an ENGINE-FAULT (schema) whether the engine runs in process
(``--engine duplicate_labels:make``) or over the protocol (``--engine cmd:"bpcheck serve
--engine duplicate_labels:make"``), with this folder on PYTHONPATH (tests/test_honest_summaries.py)."""

from __future__ import annotations

import dataclasses

from bpcheck.engines.reference import ReferenceEngine


class DuplicateLabels(ReferenceEngine):
    def __init__(self) -> None:
        super().__init__(name="duplicate-labels")

    def legal_actions(self, state):
        acts = list(super().legal_actions(state))
        attacks = [a for a in acts if a.kind == "attack"]
        if len({a.card_uid for a in attacks}) < 2:
            return acts
        first = attacks[0].label.split(" -> ")[0]
        return [dataclasses.replace(a, label=first + " -> " + a.label.split(" -> ")[1]) if a.kind == "attack" else a for a in acts]


def make():
    return DuplicateLabels()
