"""The reference model over the protocol, which holds one board back: asked to start the board
whose path ends with $BPCHECK_GATE_BOARD, it waits until the file $BPCHECK_GATE_GO exists (the
test creates it once it has read the boards before it on bpcheck's stdout). If that file has not
come after 120 s it goes on and leaves the file $BPCHECK_GATE_GO.late, so a test that was never
let through fails instead of hanging. tests/test_feedback.py uses it: stdout must stream each
board's line as soon as board order allows."""

import os
import time

from faulty import Server, serve


class Gated(Server):
    def handle(self, req):
        path = req.get("path")
        if req.get("op") == "start" and isinstance(path, str) and path.endswith(os.environ["BPCHECK_GATE_BOARD"]):
            go = os.environ["BPCHECK_GATE_GO"]
            deadline = time.monotonic() + 120
            while not os.path.exists(go):
                if time.monotonic() > deadline:
                    open(go + ".late", "w").close()
                    break
                time.sleep(0.05)
        return super().handle(req)


serve(Gated())
