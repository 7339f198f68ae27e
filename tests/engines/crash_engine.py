"""Crashes (exits with status 3) when asked to apply an attack declaration."""

import os
import sys

from faulty import Server, is_attack, serve


class Crash(Server):
    def handle(self, req):
        if is_attack(req):
            sys.stderr.write("crash_engine: giving up on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        return super().handle(req)


serve(Crash())
