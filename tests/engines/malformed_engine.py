"""Answers an attack declaration with a line that is not JSON."""

from faulty import Server, is_attack, serve


class Malformed(Server):
    def reply_line(self, line):
        import orjson

        if is_attack(orjson.loads(line)):
            return b"{'state': 7, events: oops\n"
        return super().reply_line(line)


serve(Malformed())
