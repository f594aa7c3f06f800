"""Where the leaderboard's fits run: a child process of the server, or a thread of its own.

Why a process: a fit of a 1,000-bot board is half a second of numpy (Newton
steps and a dense inverse). In a worker thread of the server it competes
with the event loop's thread for the GIL between its LAPACK calls and for
the machine's cores, and under load it cost the server about a sixth of
its CPU per move. ``FitProcess`` owns one long-lived child process (spawn
context: nothing of the server's state is forked), started on the first
fit, at the lowest priority (``yield_to_the_server``: Linux's ``SCHED_IDLE``)
and with one BLAS/OpenMP thread, so a fit takes at most one core and yields
it to the event loop at once. The child
also reads the board's inputs itself, from the server's database
(``arena.store.reader``): the server sends the game, the database URL and
the digest of the inputs of the board it holds, and gets back a new
``Board`` (its pair cells packed in arrays, ``PairCells``) or None when the
inputs are unchanged. A long-running arena's board holds a cell per pair of
bots that have met; read and unpickled in the server, 100,000 cells held
its event loop for a quarter of a second per refit (bench.load ``--soak``).
A read that fails in the child (the database unreachable) reaches the
caller as ``BoardReadError``, described as the store describes failures.

A child that dies (killed, out of memory) or stops answering is killed and
replaced: the fit it was given is retried once in a fresh child. When that
fails too, the board is read and fitted in the server's process
(``ThreadFit``), and so are those of the next ``RETRY_AFTER_S``
seconds; then a fresh child is tried again. Failures are logged as an
outage (``arena.outages``): a line when they start, one a minute while they
last, one when a child works again; never a traceback per attempt. An
error raised by the fit itself (not by the process) reaches the caller as
it would from a thread. ``close`` stops the child; a fit under way then,
or asked for later, raises ``RuntimeError`` (no child is started again).

``ThreadFit`` reads through the server's store and fits in a worker thread
of the server, for where a child process is not wanted (``arena serve
--leaderboard-fit thread``, in-process servers in tests). Both give the same
boards: the same read, the same function on the same inputs, with one BLAS
thread either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from typing import Any, Protocol, cast

from arena.leaderboard.board import Board, fit_if_new
from arena.outages import Outage
from arena.pipe_child import answer_requests
from arena.store import LeaderboardRow
from arena.store.health import DescribedFailure, describe_failure
from arena.store.queries import PairCell
from arena.store.reader import BoardInputsReader

log = logging.getLogger(__name__)

FIT_NICENESS = 5
"""The child's priority where ``SCHED_IDLE`` is refused (not Linux): below the server's."""

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Set to 1 in the child: its linear algebra runs on one thread, so a fit takes one core."""

START_TIMEOUT_S = 60.0
"""How long the child may take to start (it imports the server's modules and numpy)."""

ANSWER_TIMEOUT_S = 300.0
"""How long one fit may take before the child counts as hung (2,000 bots: a few seconds)."""

RETRY_AFTER_S = 60.0
"""After a fit failed in two children running, fits run in the server's process this long."""

Request = tuple[str, str, int, bytes | None]
"""One fit as the child gets it: the database URL, the game, the new board's version and
the digest of the inputs of the board the server holds."""

Fitted = tuple[Board, bytes]
"""A new board and the digest of the inputs it was fitted from."""


class BoardSource(Protocol):
    """Where a board's inputs are read (``Store``): in this process, or by URL in another."""

    async def leaderboard_inputs(self, game: str) -> tuple[list[LeaderboardRow], list[PairCell]]:
        """The active rated bots' rows and the rated games per ordered pair of seats."""
        ...

    @property
    def database_url(self) -> str | None:
        """The database's URL (with its password) for a child process to read it; None
        when it cannot (the board is then read and fitted in this process)."""
        ...


class BoardReadError(DescribedFailure):
    """Reading a board's inputs failed (the database unreachable): its message is the
    store's description of the failure (``describe_failure``)."""


class Fitter(Protocol):
    """Reads a board's inputs and fits them, off the event loop."""

    async def build(
        self, source: BoardSource, game: str, version: int, known: bytes | None
    ) -> Fitted | None:
        """``game``'s board (numbered ``version``) from a fresh read of ``source``, and its
        inputs' digest; None when that digest is ``known`` (nothing new to fit). A failed
        read raises ``BoardReadError``."""
        ...


class ThreadFit:
    """The read through ``source`` in this process, the fit in a worker thread."""

    async def build(
        self, source: BoardSource, game: str, version: int, known: bytes | None
    ) -> Fitted | None:
        """``Fitter.build`` here."""
        try:
            rows, cells = await source.leaderboard_inputs(game)
        except Exception as error:
            raise BoardReadError(describe_failure(error)) from error
        names = [row.bot for row in rows]
        return await asyncio.to_thread(fit_if_new, game, names, cells, version, known)


_HERE = object()
"""``FitProcess._fit``'s answer when no child works: the fit runs in this process."""


class _ChildFailed(Exception):
    """The child died, would not start, or stopped answering (not the fit's own error)."""


class _FitOutage(Outage):
    """The fit process's outage: its first line says where fits run meanwhile."""

    def started(self, error: BaseException, source: str) -> None:
        self.log.error(
            "%s failed: %s; retrying in a fresh process, fitting in the server's thread "
            "if that fails too",
            self.what,
            self.reason,
        )


def yield_to_the_server() -> None:
    """Let this thread, and the threads it starts, run only on a core nothing else wants:
    Linux's ``SCHED_IDLE`` (or, where refused, nice ``FIT_NICENESS``).

    Why idle and not only nice: at nice +5 a running fit kept a core for whole
    time slices while the event loop's thread waited for it, and on a busy
    two-core machine the loop's p99 rose by a few ms (bench.load, 500
    matches: p99 9.8-12.1 ms at nice +5, 6.7-8.3 ms idle, three alternated
    runs each). An idle thread gives way the moment another thread wakes.
    The fits still run as often as ``FIT_SHARE`` lets them wherever a core is
    free; on a machine with no core free they wait, and the board with them.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux, or refused
        with contextlib.suppress(OSError):
            os.nice(FIT_NICENESS)


def _serve(conn: Connection) -> None:
    """The child's main loop: fit each request received, answer with the board."""
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"  # for libraries loaded from now on
    yield_to_the_server()
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)  # for those the spawned interpreter loaded already
    loop = asyncio.new_event_loop()  # the reader's connections live on it
    readers: dict[str, BoardInputsReader] = {}

    def fit(received: Request) -> Fitted | BaseException | None:
        url, game, version, known = received
        try:
            reader = readers.get(url) or readers.setdefault(url, BoardInputsReader(url))
            rows, cells = loop.run_until_complete(reader.leaderboard_inputs(game))
        except Exception as error:
            return BoardReadError(describe_failure(error))
        try:
            return fit_if_new(game, [row.bot for row in rows], cells, version, known)
        except Exception as error:  # the fit's own error, for the caller
            return error

    try:
        answer_requests(conn, fit)
    finally:
        for reader in readers.values():
            loop.run_until_complete(reader.close())
        loop.close()


class FitProcess:
    """The server's side of the fit process: start it on the first fit, fit, replace, stop.

    See the module docstring. ``build`` may be called from several tasks at once:
    their fits take turns in the one child.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._process: SpawnProcess | None = None
        self._conn: Connection | None = None
        self._closed = False
        self._retry_at = -1e18
        self._outage = _FitOutage(log, "the leaderboard fit process", describe=str, clock=clock)
        # One fit on the pipe at a time; held for the whole fit.
        self._lock = threading.Lock()
        self._here = ThreadFit()
        self.started = 0
        """Children started so far."""

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        process = self._process
        return process.pid if process is not None and process.is_alive() else None

    async def build(
        self, source: BoardSource, game: str, version: int, known: bytes | None
    ) -> Fitted | None:
        """``Fitter.build`` in the child; here, through ``ThreadFit``, while children fail
        (or when ``source`` has no URL a child could open)."""
        url = source.database_url
        if url is not None:
            reply = await asyncio.to_thread(self._fit, (url, game, version, known))
            if reply is not _HERE:
                if isinstance(reply, BaseException):
                    raise reply
                return cast("Fitted | None", reply)
        return await self._here.build(source, game, version, known)

    async def close(self) -> None:
        """Stop the child and wait for it; a fit under way is cut short. Idempotent."""
        self._closed = True
        await asyncio.to_thread(self._stop)

    def _fit(self, fit: Request) -> object:
        """The child's reply (an exception to raise, a board, None), or ``_HERE``: no
        child works, fit in this process."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the leaderboard fit process is closed")
            if self._clock() >= self._retry_at:
                for _ in range(2):
                    try:
                        reply = self._round_trip(fit)
                    except _ChildFailed as error:
                        self._kill()
                        if self._closed:
                            raise RuntimeError("the leaderboard fit process is closed") from error
                        self._outage.failed(error)
                        continue
                    self._outage.succeeded()
                    return reply
                self._retry_at = self._clock() + RETRY_AFTER_S
            return _HERE

    def _round_trip(self, fit: Request) -> Any:
        if self._process is None:
            self._start()
        process, conn = self._process, self._conn
        assert process is not None and conn is not None
        if not process.is_alive():
            raise _ChildFailed(f"process {process.pid} had exited with code {process.exitcode}")
        try:
            conn.send(fit)
            if not conn.poll(ANSWER_TIMEOUT_S):
                raise _ChildFailed(
                    f"process {process.pid} did not answer in {ANSWER_TIMEOUT_S:g} s"
                )
            return conn.recv()
        except (EOFError, OSError) as error:
            process.join(1.0)
            raise _ChildFailed(
                f"process {process.pid} died during a fit (exit code {process.exitcode})"
            ) from error

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        mine, theirs = ctx.Pipe()
        process = ctx.Process(
            target=_serve, args=(theirs,), name="arena-leaderboard-fit", daemon=True
        )
        try:
            process.start()
        except OSError as error:
            mine.close()
            raise _ChildFailed(f"the process did not start: {error}") from error
        finally:
            theirs.close()
        self._process, self._conn = process, mine
        self.started += 1
        try:
            ready = mine.poll(START_TIMEOUT_S) and mine.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            raise _ChildFailed(f"process {process.pid} did not start")
        log.debug("leaderboard fit process %d started", process.pid)

    def _stop(self) -> None:
        if not self._lock.acquire(blocking=False):
            # A fit is under way: end it (its caller gets RuntimeError), then wait for its thread.
            process = self._process
            if process is not None:
                with contextlib.suppress(ValueError):  # the fit's thread closed it just now
                    process.kill()
            self._lock.acquire()
        try:
            conn = self._conn
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.send(None)
            if self._process is not None:
                self._process.join(5.0)
            self._kill()
        finally:
            self._lock.release()

    def _kill(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is not None:
            if process.is_alive():
                process.kill()
            process.join(5.0)
            process.close()
