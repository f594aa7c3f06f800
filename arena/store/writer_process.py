"""The SQLite writer process: the group commit, written outside the server's process.

Why a process: on a busy server the event loop runs thousands of callbacks
per turn, and every ``aiosqlite`` call waits a full turn for its result. A
group commit is some thirty such calls (a cursor, an execute, a fetch and a
close per statement, plus begin and commit), so under load a commit took
from a quarter of a second to over two seconds; matches waited at their
end, then restarted together, and the server ran in waves. A thread does
not help: ``sqlite3`` releases the GIL around every row it steps, and
getting it back from a busy loop costs up to the interpreter's switch
interval (5 ms) per row. The writer process has its own interpreter and
its own synchronous engine on the same file (WAL): one pipe round trip per
batch, and the batch's SQLAlchemy work runs on the machine's other core.

The server sends ``PlainBatch``es; the process writes each with
``BatchSql`` in one ``BEGIN IMMEDIATE`` transaction and answers with the
outcomes. Requests carry a sequence number, so an answer that arrives after
its caller gave up is never taken for the next batch's. A process that dies
or stops answering is killed and replaced on the next batch; the store keeps
the batch's moves and retries them, as after any failed commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from typing import Any

from sqlalchemy.orm import sessionmaker

from arena.errors import StoreError
from arena.pipe_child import answer_requests
from arena.ratings import RatingModel
from arena.store.batch_sql import BatchSql, Outcome, PlainBatch
from arena.store.engine import make_sync_engine

log = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0
"""How long the process may take to start (it imports SQLAlchemy and opens the file)."""

WRITER_NICENESS = 10
"""The process's scheduling priority, below the server's: on a machine with few cores a
commit may wait a little, the event loop (every move's latency) should not."""

ANSWER_TIMEOUT_S = 60.0
"""How long one batch may take before the process counts as hung."""


def _serve(url: str, rating_model: RatingModel, conn: Connection) -> None:
    """The process's main loop: write each batch received, answer with its outcomes."""
    with contextlib.suppress(OSError):
        os.nice(WRITER_NICENESS)
    engine = make_sync_engine(url)
    sql = BatchSql("sqlite", rating_model)
    sessions = sessionmaker(engine, expire_on_commit=False)

    def write(request: tuple[int, PlainBatch]) -> tuple[int, Any]:
        number, batch = request
        reply: Any
        try:
            with sessions() as session, session.begin():
                reply = sql.write(session, batch)
        except Exception as error:
            # Sent as a StoreError: not every driver exception survives pickling.
            reply = StoreError(f"writing a batch failed: {type(error).__name__}: {error}")
        return number, reply

    try:
        answer_requests(conn, write)
    finally:
        engine.dispose()


class WriterProcess:
    """The server's side of the writer process: start it, send it batches, stop it."""

    def __init__(self, url: str, rating_model: RatingModel) -> None:
        self.url = url
        self.rating_model = rating_model
        self._process: SpawnProcess | None = None
        self._conn: Connection | None = None
        self._number = 0
        # One batch on the pipe at a time, even when a cancelled caller's thread still waits.
        self._pipe_lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The process id while the process runs."""
        process = self._process
        return process.pid if process is not None and process.is_alive() else None

    async def start(self) -> None:
        """Start the process and wait until it has opened the database."""
        await asyncio.to_thread(self._start)

    async def write(self, batch: PlainBatch) -> list[Outcome]:
        """Write ``batch``; raises ``StoreError`` when nothing could be written."""
        self._number += 1
        reply = await asyncio.to_thread(self._round_trip, self._number, batch)
        if isinstance(reply, BaseException):
            raise reply
        outcomes: list[Outcome] = reply
        return outcomes

    async def stop(self) -> None:
        """Ask the process to finish and wait for it (killing it if it will not)."""
        await asyncio.to_thread(self._stop)

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        mine, theirs = ctx.Pipe()
        process = ctx.Process(
            target=_serve,
            args=(self.url, self.rating_model, theirs),
            name="arena-db-writer",
            daemon=True,  # never outlives the server
        )
        process.start()
        theirs.close()
        if not mine.poll(START_TIMEOUT_S) or mine.recv() != "ready":
            process.kill()
            mine.close()
            raise StoreError("the database writer process did not start")
        self._process, self._conn = process, mine
        log.debug("database writer process %d started", process.pid)

    def _round_trip(self, number: int, batch: PlainBatch) -> Any:
        with self._pipe_lock:
            try:
                if self._conn is None or self._process is None or not self._process.is_alive():
                    self._kill()
                    self._start()
                conn = self._conn
                assert conn is not None
                conn.send((number, batch))
                while True:
                    if not conn.poll(ANSWER_TIMEOUT_S):
                        raise TimeoutError(f"no answer in {ANSWER_TIMEOUT_S:g} s")
                    answered, reply = conn.recv()
                    if answered == number:
                        return reply
                    # A late answer to a batch whose caller gave up: already written.
            except (EOFError, OSError, TimeoutError) as error:
                self._kill()
                raise StoreError(f"the database writer process failed: {error}") from error

    def _stop(self) -> None:
        with self._pipe_lock:
            process, conn = self._process, self._conn
            if process is None or conn is None:
                return
            with contextlib.suppress(OSError):
                conn.send(None)
            process.join(10)
            self._kill()

    def _kill(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is not None:
            if process.is_alive():
                log.error("killing the database writer process %d", process.pid)
                process.kill()
            process.join(10)
