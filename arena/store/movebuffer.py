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

A batch that fails to be written (the disk is full, the database is down,
the writer process died under it) is kept whole, in front of what arrived
since, and retried with exponential backoff (from ``interval`` up to
``backoff_cap_s``) for as long as the flusher runs; the callers of its match
ends keep waiting, because a result is only ever returned once committed.
The ``HealthMonitor`` hears of every failure and success.

Memory stays bounded because the store opens no new match while it is
degraded or ``full`` (``max_pending`` moves wait): only the live matches add
moves, and each has a bounded number. The moves' search reports are bounded
too: while ``max_analysis_bytes`` of report text wait unwritten (pending or
in a batch on its way), a further move is kept without its report, which
is logged once when it starts and once, with the count, when a commit
makes room again. So the recovery journal's reserve can hold everything
pending (``arena.store.journal``). Whatever is still pending when the
flusher stops is handed to the caller of ``stop`` (the store journals it).

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

from arena.histogram import COMMIT_BUCKETS_S, LatencyHistogram
from arena.store.batch_sql import MoveRow, PlainBatch
from arena.store.health import WRITES, HealthMonitor, Pending

log = logging.getLogger("arena.store")

MatchRow = dict[str, Any]
"""One pending new match as the column values of a ``matches`` row."""


@dataclass(slots=True)
class Finish:
    """A request to end a live match, and the future its caller awaits."""

    match_id: str
    values: dict[str, Any]
    """The ``matches`` columns to set (status, winner, result, ...)."""
    done: asyncio.Future[Any]
    """Resolved with the rating changes once committed, or failed with why the end was refused."""


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
    reports_dropped: int = 0
    """Moves kept without their search report: too much report text waited unwritten."""
    recent_s: deque[float] = field(default_factory=lambda: deque(maxlen=4096))
    """How long the latest commits took, in seconds, oldest first."""
    seconds: LatencyHistogram = field(default_factory=lambda: LatencyHistogram(COMMIT_BUCKETS_S))
    """Every commit's duration, for ``/metrics``."""

    def record(self, batch: Batch, seconds: float) -> None:
        """Count one successful commit of ``batch``."""
        moves = sum(len(rows) for rows in batch.moves.values())
        self.commits += 1
        self.moves += moves
        self.finishes += len(batch.finishes)
        self.largest = max(self.largest, moves)
        self.recent_s.append(seconds)
        self.seconds.observe(seconds)


BACKOFF_CAP_S = 5.0
"""The longest wait between two attempts to write a failed batch."""

DEFAULT_MAX_PENDING = 100_000
"""Pending moves past which the store opens no new match: about 15 MB of rows, and at
some 45 bytes a move in the recovery journal, under its default reservation."""

DEFAULT_MAX_ANALYSIS_BYTES = 64 * 1024 * 1024
"""Search-report text (characters of JSON) that may wait unwritten; moves past it are kept
without their report. At the bench's 1.5 KB report, some 44,000 analysed moves: at 5,000
moves a second, about 9 s of a database that does not answer."""

Writer = Callable[[Batch], Awaitable[None]]
"""Writes a batch. It settles every ``Finish`` future itself; raising means nothing was
written (or nothing for certain: a retry of a batch that did commit changes nothing)."""


class MoveBuffer:
    """Pending writes plus the background task that flushes them with ``write``."""

    def __init__(
        self,
        write: Writer,
        *,
        interval: float = 0.05,
        batch_size: int = 512,
        finish_delay: float = 0.02,
        max_pending: int = DEFAULT_MAX_PENDING,
        max_analysis_bytes: int = DEFAULT_MAX_ANALYSIS_BYTES,
        backoff_cap_s: float = BACKOFF_CAP_S,
        monitor: HealthMonitor | None = None,
    ) -> None:
        self._write = write
        self.interval = interval
        self.batch_size = batch_size
        self.finish_delay = finish_delay
        self.max_pending = max_pending
        self.max_analysis_bytes = max_analysis_bytes
        self.analysis_bytes = 0
        """Report text not yet committed: pending, and in the batch being written."""
        self._dropped_since = 0
        """Of those, the ones since the last commit that made room (for the log)."""
        self.backoff_cap_s = backoff_cap_s
        self.monitor = monitor if monitor is not None else HealthMonitor(self.pending)
        self.lock = asyncio.Lock()
        self._pending = Batch()
        self._writing: Batch | None = None
        """The batch on its way to the database (taken from ``_pending``, not yet committed)."""
        self._count = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._retry_in = 0.0
        self.stats = CommitStats()

    def __len__(self) -> int:
        """Pending moves (the figure the batch size and back-pressure are about)."""
        return self._count

    def pending(self) -> Pending:
        """How many new matches, moves and match ends wait to be written."""
        return Pending(len(self._pending.matches), self._count, len(self._pending.finishes))

    @property
    def running(self) -> bool:
        """True while the background flusher runs."""
        return self._task is not None

    def add_match(self, row: MatchRow) -> None:
        """Queue a new match row; it is written before any move or end of that match."""
        self._pending.matches[row["id"]] = row

    def unwritten_matches(self) -> bool:
        """True while a new match's row waits to be written or is being written now."""
        writing = self._writing
        return bool(self._pending.matches) or (writing is not None and bool(writing.matches))

    def has_match(self, match_id: str) -> bool:
        """True while ``match_id``'s own row is still waiting to be written."""
        return match_id in self._pending.matches

    def add(self, match_id: str, row: MoveRow) -> None:
        """Queue one move of ``match_id``; wakes the flusher once a full batch is pending.

        Its report is dropped if it would take the report text waiting past
        ``max_analysis_bytes``."""
        text = row[6]  # the report as stored (``MoveRow``)
        if text is not None:
            if self.analysis_bytes + len(text) > self.max_analysis_bytes:
                row = (row[0], row[1], row[2], row[3], row[4], row[5], None)
                self._dropped(match_id)
            else:
                self.analysis_bytes += len(text)
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

    @property
    def full(self) -> bool:
        """True while ``max_pending`` or more moves wait to be written."""
        return self._count >= self.max_pending

    def _restore(self, batch: Batch) -> None:
        """Put a batch that failed to be written back in front of what arrived since."""
        self._pending.matches = {**batch.matches, **self._pending.matches}
        for match_id, rows in batch.moves.items():
            self._pending.moves[match_id] = rows + self._pending.moves.get(match_id, [])
            self._count += len(rows)
        self._pending.finishes[:0] = batch.finishes

    def take(self) -> Batch:
        """Remove and return everything pending (for the recovery journal)."""
        batch, self._pending, self._count = self._pending, Batch(), 0
        return batch

    def _dropped(self, match_id: str) -> None:
        self.stats.reports_dropped += 1
        self._dropped_since += 1
        if self._dropped_since == 1:
            log.warning(
                "search reports of %d bytes wait unwritten (the cap): moves are stored without"
                " their report until a commit makes room (first: match %s)",
                self.analysis_bytes,
                match_id,
            )

    def _made_room(self, written: int) -> None:
        self.analysis_bytes -= written
        if self._dropped_since:
            log.warning(
                "search reports are stored again; %d moves were stored without theirs",
                self._dropped_since,
            )
            self._dropped_since = 0

    async def flush(self) -> None:
        """Write everything pending now; on failure all of it stays pending, and the error rises."""
        async with self.lock:
            if not self._pending:
                return
            # The batch's reports count against the cap until they are committed.
            in_flight = self.analysis_bytes
            batch = self._writing = self.take()
            started = time.perf_counter()
            try:
                await self._write(batch)
            except BaseException as exc:
                self.stats.failures += 1
                self._restore(batch)
                if isinstance(exc, Exception):
                    self.monitor.failed(WRITES, exc)
                raise
            finally:
                self._writing = None
            self.stats.record(batch, time.perf_counter() - started)
            self._made_room(in_flight)
            if self.monitor.health.ok:
                self.monitor.succeeded(WRITES)  # the usual case: nothing to count
            else:
                moves = sum(len(rows) for rows in batch.moves.values())
                written = Pending(len(batch.matches), moves, len(batch.finishes))
                self.monitor.succeeded(WRITES, written)

    def start(self) -> None:
        """Start the background flusher on the running loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="arena-move-flusher"
            )

    async def stop(self, timeout_s: float) -> Batch:
        """Stop the flusher, try once more for up to ``timeout_s``; return what is left unwritten.

        The futures of the returned match ends are still unsettled: the caller decides.
        """
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        with contextlib.suppress(Exception):
            async with asyncio.timeout(timeout_s):
                await self.flush()
        async with self.lock:
            self.analysis_bytes = 0  # handed over: the caller journals it
            return self.take()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            if self._retry_in:
                # Failing: back off, whatever arrives meanwhile (it joins the retry).
                await asyncio.sleep(self._retry_in)
            else:
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
                # Kept for the next attempt; the monitor has logged it.
                self._retry_in = min(self.backoff_cap_s, max(self.interval, 2 * self._retry_in))
            else:
                self._retry_in = 0.0
