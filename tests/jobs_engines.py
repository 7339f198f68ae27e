"""In-process engines for tests/test_jobs.py (``--engine jobs_engines:NAME``, ``tests/`` on
PYTHONPATH): the reference model misbehaving in a way only a worker process can survive."""

from __future__ import annotations

import os
import signal

from bpcheck.engines.reference import ReferenceEngine


class DiesOnBoard(ReferenceEngine):
    """Kills its own process (SIGKILL, as the out-of-memory killer would) when it starts a board
    whose file name contains "flip": with -j N that is one worker, never the run."""

    def __init__(self) -> None:
        super().__init__(name="dies-on-board")

    def start(self, board):
        if "flip" in os.path.basename(board.path):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().start(board)


def dies_on_board():
    return DiesOnBoard()
