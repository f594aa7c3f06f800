"""Warm search worker processes owned by one strategy.

``SearchPool`` starts ``workers`` processes once (``spawn`` context: the bot
client runs an event loop and threads, which ``fork`` would copy mid-flight),
runs a warm-up task in each (loading or compiling the Numba kernels) and
keeps them for every move. ``run_all`` sends one task to every worker (root
parallelisation needs exactly one search per worker, which a shared task
queue does not guarantee) and returns a ``concurrent.futures.Future`` of the
list of results, so async callers can ``await asyncio.wrap_future(...)``.
``close`` stops and joins every worker; none outlives the pool. Workers
ignore SIGINT: a Ctrl-C in a terminal reaches the whole process group, and
the owner, not the terminal, decides when its workers stop (a bot finishing
its live matches still needs them).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from bots.strategies.first_run import compile_notice
from bots.strategy import SearchError

Task = Callable[..., Any]

_START_TIMEOUT_S = 120.0  # a cold Numba cache compiles for tens of seconds on a busy machine
_JOIN_TIMEOUT_S = 3.0

PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal a process gets when its parent thread exits (linux/prctl.h)."""


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent (``parent_pid``) dies (Linux).

    For a search worker: a bot killed outright cannot stop its workers, which would
    otherwise finish a warm-up or search of seconds before finding their pipe closed.
    If the parent is already gone (it died before this call), exit now.
    """
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)


def _worker_main(
    conn: multiprocessing.connection.Connection,
    warmup: Task | None,
    warmup_args: tuple[Any, ...],
    parent_pid: int,
) -> None:
    """Worker loop: warm up, report, then run ``(task, args)`` messages until ``None``."""
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    start = time.perf_counter()
    try:
        if warmup is not None:
            warmup(*warmup_args)
        conn.send(("ready", time.perf_counter() - start))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        task, args = message
        try:
            conn.send(("ok", task(*args)))
        except BaseException:
            conn.send(("error", traceback.format_exc()))


class SearchPool:
    """A fixed set of warm worker processes running one task each per request."""

    def __init__(
        self,
        workers: int,
        warmup: Task | None = None,
        warmup_args: tuple[Any, ...] = (),
        start_method: str = "spawn",
    ) -> None:
        if workers < 1:
            raise ValueError(f"a pool needs at least one worker, got {workers}")
        context: Any = multiprocessing.get_context(start_method)
        self._conns: list[multiprocessing.connection.Connection] = []
        self._procs: list[multiprocessing.process.BaseProcess] = []
        for index in range(workers):
            parent, child = context.Pipe()
            proc = context.Process(
                target=_worker_main,
                args=(child, warmup, warmup_args, os.getpid()),
                name=f"search-worker-{index}",
                daemon=True,
            )
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        # One thread gathers results, which also serialises requests.
        self._gather = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="search-gather")
        self._lock = threading.Lock()
        self._closed = False
        self._finalizer = weakref.finalize(self, _shutdown, self._conns, self._procs, self._gather)
        self.warmup_s: list[float] = []
        try:
            with compile_notice():
                for conn in self._conns:
                    self.warmup_s.append(self._receive(conn, _START_TIMEOUT_S))
        except BaseException:
            self.close()
            raise

    @property
    def workers(self) -> int:
        """Number of worker processes."""
        return len(self._procs)

    @property
    def pids(self) -> list[int]:
        """Process ids of the workers (for tests and monitoring)."""
        return [p.pid for p in self._procs if p.pid is not None]

    def run_all(
        self, task: Task, args_per_worker: Sequence[tuple[Any, ...]]
    ) -> concurrent.futures.Future[list[Any]]:
        """Run ``task(*args)`` once in each worker (one args tuple per worker)."""
        if len(args_per_worker) != self.workers:
            raise ValueError(f"need {self.workers} argument tuples, got {len(args_per_worker)}")
        with self._lock:
            if self._closed:
                raise SearchError("the search pool is closed")
            return self._gather.submit(self._round_trip, task, list(args_per_worker))

    def _round_trip(self, task: Task, args_per_worker: list[tuple[Any, ...]]) -> list[Any]:
        for conn, args in zip(self._conns, args_per_worker, strict=True):
            try:
                conn.send((task, args))
            except (OSError, ValueError) as exc:
                raise SearchError(f"a search worker is gone: {exc}") from exc
        # Read every answer before raising, or a late one would be taken for the next request's.
        results: list[Any] = []
        failure: SearchError | None = None
        for conn in self._conns:
            try:
                results.append(self._receive(conn, None))
            except SearchError as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
        return results

    def _receive(self, conn: multiprocessing.connection.Connection, timeout: float | None) -> Any:
        try:
            if timeout is not None and not conn.poll(timeout):
                raise SearchError(f"a search worker did not answer within {timeout:.0f} s")
            status, payload = conn.recv()
        except (EOFError, OSError) as exc:
            raise SearchError("a search worker died") from exc
        if status == "error":
            raise SearchError(f"a search worker failed:\n{payload}")
        return payload

    def close(self) -> None:
        """Stop and join every worker; idempotent."""
        with self._lock:
            self._closed = True
        self._finalizer()

    def __enter__(self) -> SearchPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _shutdown(
    conns: list[multiprocessing.connection.Connection],
    procs: list[multiprocessing.process.BaseProcess],
    gather: concurrent.futures.ThreadPoolExecutor,
) -> None:
    """Ask workers to exit, then terminate (and finally kill) any that linger."""
    for conn in conns:
        with contextlib.suppress(OSError, ValueError):
            conn.send(None)
    deadline = time.monotonic() + _JOIN_TIMEOUT_S
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
            proc.join(_JOIN_TIMEOUT_S)
        if proc.is_alive():
            proc.kill()
            proc.join()
    for conn in conns:
        conn.close()
    gather.shutdown(wait=False, cancel_futures=True)
