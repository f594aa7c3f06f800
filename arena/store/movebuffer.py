"""Group commit: buffer new matches, moves and match ends in memory, write them in batches.

A new match row, a move or a finished match is appended to the buffer and
written by a background task: moves and new matches at most ``interval``
seconds later (sooner once ``batch_size`` moves are pending), a finished
match within ``finish_delay`` seconds, since its players wait for the
result. One transaction per batch instead of one per move or per match is
what lets one SQLite file absorb thousands of moves a second; a crash
loses only the last interval.

Everything pending goes out in one transaction, in dependency order: new
match rows, then moves, then match ends, so a match's moves and its end
commit together (or with an earlier batch).

A batch that fails to be written (the database is briefly unavailable, the
writer process died under it) is kept and retried at the next tick: new
matches and moves always, match ends for up to ``finish_retry_s`` while the
flusher runs, their callers still waiting. Only an end that cannot be
written for that long, or one flushed without the background task, fails
with the error.

``lock`` is held while a batch is written, and must be held by anyone who
looks at the buffer expecting a consistent view, so nobody sees a batch
half-written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from arena.store.batch_sql import MoveRow, PlainBatch

log = logging.getLogger(__name__)

MatchRow = dict[str, Any]
"""One pending new match as the column values of a ``matches`` row."""


@dataclass(slots=True)
class Finish:
    """A request to end a live match, and the future its caller awaits."""

    match_id: str
    values: dict[str, Any]
    """The ``matches`` columns to set (status, winner, result, ...)."""
    done: asyncio.Future[Any]
    """Resolved with the rating changes, or failed with the reason the end was refused."""
    failed_at: float | None = None
    """When a batch holding this end first failed to be written (``time.monotonic``)."""


@dataclass(slots=True)
class Batch:
    """Everything one group commit writes, in the order it must be written."""

    matches: dict[str, MatchRow] = field(default_factory=dict)
    moves: dict[str, list[MoveRow]] = field(default_factory=dict)
    """Pending moves grouped by match id, each list in the order recorded."""
    finishes: list[Finish] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.matches or self.moves or self.finishes)

    def plain(self) -> PlainBatch:
        """The rows to write, without the futures: what ``BatchSql`` (or a process) takes."""
        return PlainBatch(
            list(self.matches.values()),
            list(self.moves.items()),
            [(finish.match_id, finish.values) for finish in self.finishes],
        )


@dataclass(slots=True)
class CommitStats:
    """What the group commits have cost so far: for benchmarks and diagnosis."""

    commits: int = 0
    moves: int = 0
    finishes: int = 0
    failures: int = 0
    largest: int = 0
    """The most moves one commit wrote."""
    recent_s: deque[float] = field(default_factory=lambda: deque(maxlen=4096))
    """How long the latest commits took, in seconds, oldest first."""

    def record(self, batch: Batch, seconds: float) -> None:
        """Count one successful commit of ``batch``."""
        moves = sum(len(rows) for rows in batch.moves.values())
        self.commits += 1
        self.moves += moves
        self.finishes += len(batch.finishes)
        self.largest = max(self.largest, moves)
        self.recent_s.append(seconds)


DEFAULT_FINISH_RETRY_S = 10.0
"""How long a match end that failed to be written is retried before its caller gets the error:
long enough for a new writer process or a brief database outage, short enough that the
players (who wait for ``match_end``) are not held for long."""

Writer = Callable[[Batch], Awaitable[None]]
"""Writes a batch. It settles every ``Finish`` future itself; raising means nothing was
written, and the new matches and moves are kept for the next attempt."""


class MoveBuffer:
    """Pending writes plus the background task that flushes them with ``write``."""

    def __init__(
        self,
        write: Writer,
        *,
        interval: float = 0.05,
        batch_size: int = 512,
        finish_delay: float = 0.02,
        finish_retry_s: float = DEFAULT_FINISH_RETRY_S,
    ) -> None:
        self._write = write
        self.interval = interval
        self.batch_size = batch_size
        self.finish_delay = finish_delay
        self.finish_retry_s = finish_retry_s
        self.lock = asyncio.Lock()
        self._pending = Batch()
        self._count = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.stats = CommitStats()

    def __len__(self) -> int:
        """Pending moves (the figure the batch size and back-pressure are about)."""
        return self._count

    @property
    def running(self) -> bool:
        """True while the background flusher runs."""
        return self._task is not None

    def add_match(self, row: MatchRow) -> None:
        """Queue a new match row; it is written before any move or end of that match."""
        self._pending.matches[row["id"]] = row

    def has_match(self, match_id: str) -> bool:
        """True while ``match_id``'s own row is still waiting to be written."""
        return match_id in self._pending.matches

    def add(self, match_id: str, row: MoveRow) -> None:
        """Queue one move of ``match_id``; wakes the flusher once a full batch is pending."""
        self._pending.moves.setdefault(match_id, []).append(row)
        self._count += 1
        if self._count >= self.batch_size:
            self._wake.set()

    def add_finish(self, finish: Finish) -> None:
        """Queue a match end; the flusher writes it within ``finish_delay``."""
        self._pending.finishes.append(finish)
        self._wake.set()

    def peek(self, match_id: str) -> list[MoveRow]:
        """The moves of ``match_id`` still waiting to be written (a copy)."""
        return list(self._pending.moves.get(match_id, ()))

    def restore(self, batch: Batch, finishes: list[Finish] | None = None) -> None:
        """Put matches, moves and ``finishes`` that failed to be written back in front."""
        self._pending.matches = {**batch.matches, **self._pending.matches}
        for match_id, rows in batch.moves.items():
            self._pending.moves[match_id] = rows + self._pending.moves.get(match_id, [])
            self._count += len(rows)
        if finishes:
            self._pending.finishes[:0] = finishes

    async def flush(self) -> None:
        """Write everything pending now; on failure matches and moves stay pending.

        The error propagates. The match ends of the failed batch stay pending
        too while the flusher runs and they are younger than ``finish_retry_s``
        (see the module docstring); the others get the error.
        """
        async with self.lock:
            if not self._pending:
                return
            batch, self._pending, self._count = self._pending, Batch(), 0
            started = time.perf_counter()
            try:
                await self._write(batch)
            except BaseException as exc:
                self.stats.failures += 1
                self.restore(batch, self._retried(batch.finishes, exc))
                raise
            self.stats.record(batch, time.perf_counter() - started)

    def _retried(self, finishes: list[Finish], exc: BaseException) -> list[Finish]:
        """The ends of a failed batch to write again; the others are failed with ``exc``."""
        now = time.monotonic()
        kept = []
        for finish in finishes:
            if finish.done.done():
                continue
            if finish.failed_at is None:
                finish.failed_at = now
            if (
                self.running
                and isinstance(exc, Exception)
                and now - finish.failed_at < self.finish_retry_s
            ):
                kept.append(finish)
            else:
                finish.done.set_exception(exc)
        return kept

    def start(self) -> None:
        """Start the background flusher on the running loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="arena-move-flusher"
            )

    async def stop(self) -> None:
        """Stop the flusher, then write what is still pending."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.flush()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):
                    await self._wake.wait()
            self._wake.clear()
            if self._count < self.batch_size:
                # Woken by a match end: let a few more ends (and moves) join the batch,
                # since each transaction has a fixed cost on the event loop.
                gap = last + self.finish_delay - loop.time()
                if gap > 0:
                    await asyncio.sleep(gap)
            last = loop.time()
            try:
                await self.flush()
            except Exception:
                # Keep the moves and retry next tick: the database may be
                # briefly unavailable, and giving up would lose them.
                log.exception(
                    "writing %d buffered moves and %d match ends failed; will retry",
                    self._count,
                    len(self._pending.finishes),
                )
