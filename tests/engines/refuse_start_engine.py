"""Refuses to start every board whose path contains "replay" (an error reply to `start`): the
board is skipped (bpcheck.engines.interface.EngineRefusal), other boards are played normally."""

from faulty import RequestError, Server, serve


class RefuseStart(Server):
    def handle(self, req):
        if isinstance(req, dict) and req.get("op") == "start" and "replay" in str(req.get("path", "")):
            raise RequestError("this engine has no replay rules")
        return super().handle(req)


serve(RefuseStart())
