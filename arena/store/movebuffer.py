"""Group commit for moves: buffer them in memory, write them in batches.

A move is appended to the buffer and written by a background task at most
``interval`` seconds later, or sooner once ``batch_size`` moves are
pending. One transaction per batch instead of per move is what lets one
SQLite file absorb thousands of moves a second; a crash loses only the
moves of the last interval.

``lock`` is held while a batch is written, and must be held by anyone
who takes a match's moves out of the buffer, so nobody sees a batch
half-written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

MoveRow = dict[str, Any]
"""One pending move as the column values of a ``moves`` row."""

Batch = dict[str, list[MoveRow]]
"""Pending moves grouped by match id, each list in the order recorded."""

Writer = Callable[[Batch], Awaitable[None]]


class MoveBuffer:
    """Pending moves plus the background task that flushes them with ``write``."""

    def __init__(self, write: Writer, *, interval: float = 0.05, batch_size: int = 512) -> None:
        self._write = write
        self.interval = interval
        self.batch_size = batch_size
        self.lock = asyncio.Lock()
        self._pending: Batch = {}
        self._count = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return self._count

    def add(self, row: MoveRow) -> None:
        """Queue one move; wakes the flusher once a full batch is pending."""
        self._pending.setdefault(row["match_id"], []).append(row)
        self._count += 1
        if self._count >= self.batch_size:
            self._wake.set()

    def peek(self, match_id: str) -> list[MoveRow]:
        """The moves of ``match_id`` still waiting to be written (a copy)."""
        return list(self._pending.get(match_id, ()))

    def pop(self, match_id: str) -> list[MoveRow]:
        """Take the pending moves of one match out of the buffer; hold ``lock`` to call it."""
        rows = self._pending.pop(match_id, [])
        self._count -= len(rows)
        return rows

    def restore(self, batch: Batch) -> None:
        """Put moves that failed to be written back in front of newer ones."""
        for match_id, rows in batch.items():
            self._pending[match_id] = rows + self._pending.get(match_id, [])
            self._count += len(rows)

    async def flush(self) -> None:
        """Write every pending move now; on failure they stay pending and the error propagates."""
        async with self.lock:
            if not self._pending:
                return
            batch, self._pending, self._count = self._pending, {}, 0
            try:
                await self._write(batch)
            except BaseException:
                self.restore(batch)
                raise

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
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self.flush()
            except Exception:
                # Keep the moves and retry next tick: the database may be
                # briefly unavailable, and giving up would lose them.
                log.exception("writing %d buffered moves failed; will retry", self._count)
