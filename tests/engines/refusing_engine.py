"""Offers attack declarations in its legal actions, then refuses to apply them."""

from faulty import RequestError, Server, is_attack, serve


class Refusing(Server):
    def handle(self, req):
        if is_attack(req):
            raise RequestError("attacks are not implemented yet")
        return super().handle(req)


serve(Refusing())
