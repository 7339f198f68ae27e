"""Breaks the observation schema once an attack is under way: P2's LP become a string."""

import copy

from faulty import Server, serve


class Schema(Server):
    def op_observe(self, req):
        out = super().op_observe(req)
        obs = out["observation"]
        if obs["attack"] is not None:
            obs = copy.deepcopy(obs)
            obs["players"][1]["lp"] = str(obs["players"][1]["lp"])
        return {"observation": obs}


serve(Schema())
