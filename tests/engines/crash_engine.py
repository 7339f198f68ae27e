"""Crashes (exits with status 3) when asked to apply an attack declaration, after writing a
Python traceback to stderr, as a real engine's uncaught error does: several lines, the cause in
the middle, its last line a plain farewell (a report that kept only the last line would hide the
cause)."""

import os
import sys
import traceback

from faulty import Server, is_attack, serve


def resolve_attack(req):
    return damage_of(req["action"])


def damage_of(action):
    raise KeyError("attacker_atk: the attack record has no ATK (crash_engine's planted bug)")


class Crash(Server):
    def handle(self, req):
        if is_attack(req):
            try:
                resolve_attack(req)
            except KeyError:
                sys.stderr.write(traceback.format_exc())
            sys.stderr.write("crash_engine: giving up on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        return super().handle(req)


serve(Crash())
