"""One owner for every background task of a server, so none is orphaned.

``Supervisor.spawn`` starts a task and keeps it until it ends; a task that
fails is logged (it never takes the server down with it, unlike a
``TaskGroup``: one match's failure must not end the others). ``close``
cancels what is still running and waits for it: shutdown is one path.
Periodic jobs (keepalive pings, the summary log line) are ``every`` tasks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Supervisor:
    """Starts, tracks, and finally cancels and awaits the server's tasks."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None] | None:
        """Run ``coro`` as a supervised task; None (and the coroutine closed) after ``close``."""
        if self._closed:
            coro.close()
            return None
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def every(self, interval_s: float, job: Callable[[], None], name: str) -> None:
        """Run ``job`` every ``interval_s`` seconds until ``close``."""

        async def repeat() -> None:
            while True:
                await asyncio.sleep(interval_s)
                job()

        self.spawn(repeat(), name)

    async def close(self, timeout: float | None = None) -> None:
        """Cancel every task still running and wait (at most ``timeout``) for them to end."""
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("task %s failed", task.get_name(), exc_info=exc)
