"""Answers an attack declaration with a reply whose object holds "id" twice: first another
request's id, then the right one (a reader keeping the last one would accept it)."""

import orjson
from faulty import Server, is_attack, serve


class DuplicateKey(Server):
    def reply_line(self, line):
        out = super().reply_line(line)
        if is_attack(orjson.loads(line)):
            return b'{"id": 999999, ' + out[1:]
        return out


serve(DuplicateKey())
