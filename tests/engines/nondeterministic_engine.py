"""Gives a different result each time it applies an attack declaration: the attack's events
carry a counter of how often it was asked."""

from faulty import Server, is_attack, serve


class Nondeterministic(Server):
    asked = 0

    def handle(self, req):
        out = super().handle(req)
        if is_attack(req):
            self.asked += 1
            out["events"] = [dict(e, asked=self.asked) if e["kind"] == "attack_declared" else e for e in out["events"]]
        return out


serve(Nondeterministic())
