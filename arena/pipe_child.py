"""The loop of a helper process that answers its parent's requests over a pipe.

The store's writer process (``arena.store.writer_process``) and the
leaderboard's fit process (``arena.leaderboard.fit_process``) run it: the
child says ``ready`` once it has set itself up, then sends one answer per
request, in order, until the parent sends None or goes away.
"""

from __future__ import annotations

from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any


def answer_requests(conn: Connection, answer: Callable[[Any], object]) -> None:
    """Send ``ready``, then ``answer(request)`` for each request received, until None arrives
    or the pipe closes; the connection is closed at the end. ``answer`` returns what it
    cannot do as a value (an exception to pickle), so one bad request does not end it."""
    conn.send("ready")
    try:
        while True:
            try:
                request = conn.recv()
            except EOFError:  # the parent is gone
                return
            if request is None:
                return
            conn.send(answer(request))
    finally:
        conn.close()
