"""Hangs (never answers) when asked to apply an attack declaration."""

import time

from faulty import Server, is_attack, serve


class Hang(Server):
    def handle(self, req):
        if is_attack(req):
            time.sleep(3600)
        return super().handle(req)


serve(Hang())
