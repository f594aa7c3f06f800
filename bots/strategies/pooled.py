"""Strategies whose search runs as tasks in warm worker processes (``bots.strategies.pool``)."""

from __future__ import annotations

import asyncio
import time
from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from bots.budget import Budget
from bots.strategies.pool import SearchPool
from bots.strategy import Strategy
from protocol.games import GameState


class PooledStrategy(Strategy):
    """A strategy whose move is one task per worker, then a merge of their results.

    Subclasses name the task (``_worker``, a module-level function, so that it
    reaches the worker processes), give one argument tuple per task
    (``_task_args``) and make the move of the results (``_finish``). With a
    ``SearchPool`` in ``_pool`` the tasks run there, side by side; without one
    (``workers=0``) they run one after the other in this process (in a
    thread, for ``choose_move_async``).
    """

    _pool: SearchPool | None = None

    @abstractmethod
    def _worker(self) -> Callable[..., Any]:
        """The task each worker runs (a module-level function)."""

    @abstractmethod
    def _task_args(self, state: GameState, budget: Budget) -> list[tuple[Any, ...]]:
        """The arguments of each task for one move."""

    @abstractmethod
    def _finish(self, results: list[Any], state: GameState, start: float) -> int:
        """The move, from the tasks' results (``start``: the ``perf_counter`` at the ask)."""

    def _choose(self, state: GameState, budget: Budget) -> int:
        start = time.perf_counter()
        args = self._task_args(state, budget)
        task = self._worker()
        if self._pool is None:
            results = [task(*a) for a in args]
        else:
            results = self._pool.run_all(task, args).result()
        return self._finish(results, state, start)

    async def choose_move_async(self, state: GameState, budget: Budget | None = None) -> int:
        """Search in the workers while the event loop keeps running."""
        self._check_state(state)
        budget = budget or Budget.UNLIMITED
        if self._pool is None:
            return await asyncio.to_thread(self._choose, state, budget)
        start = time.perf_counter()
        future = self._pool.run_all(self._worker(), self._task_args(state, budget))
        return self._finish(await asyncio.wrap_future(future), state, start)

    def close(self) -> None:
        """Stop the worker processes."""
        super().close()
        if self._pool is not None:
            self._pool.close()
