"""One connection's messages, handled in arrival order, synchronously whenever possible.

Most messages are handled on the spot. A message whose handling must wait
(a ``hello`` that checks a token in the database, a first ``seek`` that
looks up a rating) becomes a coroutine, and the messages that arrive
meanwhile wait behind it, so each connection's messages still take effect in
the order they were sent. While too many wait, the socket stops being read
(TCP pushes back on the client) instead of the backlog growing.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from arena.net.websocket import Data

MAX_WAITING = 32
"""Messages that may wait behind a slow one before the socket stops being read."""

Handler = Callable[[Data], Coroutine[Any, Any, None] | None]
"""Handles one message now (returns None) or returns the coroutine that will."""


class InOrder:
    """Runs one connection's messages in arrival order, synchronously whenever possible."""

    def __init__(
        self,
        handle: Handler,
        pause: Callable[[], None],
        resume: Callable[[], None],
        limit: int = MAX_WAITING,
    ) -> None:
        self._handle = handle
        self._pause = pause
        self._resume = resume
        self._limit = limit
        self._waiting: deque[Data] = deque()
        self._busy: asyncio.Task[None] | None = None
        self._paused = False
        self._stopped = False

    def put(self, message: Data) -> None:
        """Handle ``message`` now, or after the messages ahead of it."""
        if self._stopped:
            return
        if self._busy is not None:
            self._waiting.append(message)
            if len(self._waiting) > self._limit and not self._paused:
                self._paused = True
                self._pause()
            return
        self._run(message)

    def stop(self) -> None:
        """Drop what waits and cancel the message being handled (the connection is gone)."""
        self._stopped = True
        self._waiting.clear()
        if self._busy is not None:
            self._busy.cancel()

    def _run(self, message: Data) -> None:
        coro = self._handle(message)
        if coro is not None:
            self._busy = asyncio.get_running_loop().create_task(self._finish(coro))

    async def _finish(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            await coro
        finally:
            self._busy = None
            if not self._stopped:
                while self._waiting and self._busy is None:
                    self._run(self._waiting.popleft())
                if self._paused and len(self._waiting) <= self._limit // 2:
                    self._paused = False
                    self._resume()
