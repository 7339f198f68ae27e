"""Observes the same state differently each time it is asked: the opponent's LP drops by one at
every `observe` (issue 33: an engine whose observation of one state is not stable)."""

from faulty import Server, serve


class Unstable(Server):
    asked = 0

    def op_observe(self, req):
        out = super().op_observe(req)
        self.asked += 1
        out["observation"]["players"][1]["lp"] -= self.asked
        return out


serve(Unstable())
