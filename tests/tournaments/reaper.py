"""Run a command as a child subreaper, kill it once it has bots, report how its orphans ended.

``python reaper.py DB_FILE COMMAND...``: this process becomes a child subreaper
(Linux ``PR_SET_CHILD_SUBREAPER``), so the bots of ``COMMAND`` come to it when
their launcher dies and their exit statuses can be read. It starts ``COMMAND``
(``arena tournament run --local ...``), waits for its first line and for a
live game in ``DB_FILE``, kills it with SIGKILL, then waits for every orphan
and prints one JSON object: ``{"orphans": n, "signals": [signal numbers, or null
for a normal exit]}`` (its bots, their search workers, multiprocessing's resource
trackers).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def _live_game(db: str) -> bool:
    try:
        with contextlib.closing(sqlite3.connect(db, timeout=0.05)) as conn:
            row = conn.execute("SELECT count(*) FROM matches WHERE status = 'live'").fetchone()
    except sqlite3.Error:  # no table yet, or a write lock: look again
        return False
    return bool(row[0])


def main() -> int:
    db, command = sys.argv[1], sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert runner.stdout is not None
    runner.stdout.readline()  # the server is up and the bots are starting
    deadline = time.monotonic() + 120
    while not _live_game(db) and time.monotonic() < deadline:
        time.sleep(0.05)
    runner.kill()
    runner.wait()
    signals: list[int | None] = []
    while True:
        try:
            _pid, status = os.wait()
        except ChildProcessError:
            break
        signals.append(os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)
    print(json.dumps({"orphans": len(signals), "signals": signals}))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise SystemExit(main())
