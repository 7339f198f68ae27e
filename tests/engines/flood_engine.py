"""A hostile engine that floods (issue 33): `flood_engine.py N DELAY [SPEC]` serves SPEC (the
reference model by default) but every state whose actions include an attack declaration offers N
more actions, copies of its first one labelled "<label> #k", each applied like that first action
(so they all lead to states met before); applying one sleeps DELAY seconds first. With
FLOOD_MARK set, the file it names is created when the first copy is applied; with FLOOD_SKIP=n
the first n such listings are not flooded."""

from __future__ import annotations

import os
import sys
import time

from faulty import Server, serve

from bpcheck.engines.serve import engine_factory

N, DELAY = int(sys.argv[1]), float(sys.argv[2])
SPEC = sys.argv[3] if len(sys.argv) > 3 else None


class Flood(Server):
    skip = int(os.environ.get("FLOOD_SKIP", "0"))

    def op_legal_actions(self, req):
        out = super().op_legal_actions(req)
        acts = out["actions"]
        if any(a["label"].startswith("attack ") for a in acts):
            self.skip -= 1
        if self.skip < 0 and any(a["label"].startswith("attack ") for a in acts):
            first = acts[0]
            acts.extend(dict(first, label=f"{first['label']} #{k}") for k in range(N))
        return out

    def op_apply(self, req):
        label = req.get("action")
        label = label.get("label") if isinstance(label, dict) else label
        if isinstance(label, str) and " #" in label:
            mark = os.environ.get("FLOOD_MARK")
            if mark and not os.path.exists(mark):
                open(mark, "w").close()
            time.sleep(DELAY)
            req = dict(req, action=label.rsplit(" #", 1)[0])
        return super().op_apply(req)


serve(Flood(engine_factory(SPEC)))
