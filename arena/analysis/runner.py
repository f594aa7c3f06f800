"""``Analyser``: solve the positions of stored matches in a process pool, commit game by game.

Matches are read a chunk at a time and analysed a few at once (so the pool
always has work); each match's positions (those the moves played reach, then
those every other legal move would have reached) go to the pool, one task per
position (``worker.solve_position``; the second round's values also tell
whether the choice mattered, ``GamePlan.rows``), and when all are back its rows commit
in one transaction. An interrupted run therefore leaves whole matches, and
the next run skips them. Positions are shared between games through a cache
keyed up to mirror symmetry, which is where the expensive ones are: every
game starts from the same few openings.

Workers are started with ``spawn`` (a fork of a process running an event
loop and database threads is unsafe) and ignore Ctrl-C: the parent cancels
its tasks, drops queued positions and waits for the running ones, at most
one budget each.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from arena.analysis.plan import GamePlan, Position, PositionKey
from arena.analysis.progress import Progress
from arena.analysis.values import Solved
from arena.analysis.worker import init_worker, solve_position
from arena.errors import ArenaError
from arena.store.analysis import AnalysisStore, AnalysisTarget

DEFAULT_BUDGET_MS = 100
"""Wall time the solver gets per position. Ends of games are exact in microseconds;
openings take far longer, and three times the budget solves few more of them
(``docs/analysis.md`` has the measurements)."""

GAMES_PER_JOB = 2
"""Matches analysed at once per worker, so a worker never waits for the next match."""

READ_CHUNK = 64
"""Matches whose moves are read per database read."""

CACHE_POSITIONS = 200_000
"""Solved positions kept for reuse (least recently used first out): about 40 MB."""


@dataclass
class Summary:
    """What one run did: matches and moves written, positions the pool solved."""

    games: int = 0
    moves: int = 0
    decided: int = 0
    """Moves whose win/draw/loss before and after are both known."""
    judged: int = 0
    """Of those, the moves where the choice mattered (the ones accuracy counts)."""
    blunders: int = 0
    positions: int = 0
    """Positions the solver was asked about (a cached position counts once)."""
    unknown: int = 0
    """Of those, the ones whose win/draw/loss was not proven within the budget."""
    nodes: int = 0


class Analyser:
    """Analyses matches of a store with ``jobs`` solver processes; see the module docstring."""

    def __init__(
        self, store: AnalysisStore, budget_ms: int, jobs: int, progress: Progress | None = None
    ) -> None:
        if budget_ms <= 0 or jobs <= 0:
            raise ValueError("budget_ms and jobs must be positive")
        self.store = store
        self.budget_ms = budget_ms
        self.jobs = jobs
        self.progress = progress
        self.summary = Summary()
        self._cache: OrderedDict[PositionKey, asyncio.Future[Solved]] = OrderedDict()

    async def run(self, match_ids: Sequence[str]) -> Summary:
        """Analyse the unsettled moves of ``match_ids`` (in that order); returns the totals.

        Raises ``ArenaError`` when a solver process dies.
        """
        pool = ProcessPoolExecutor(
            self.jobs, mp_context=multiprocessing.get_context("spawn"), initializer=init_worker
        )
        try:
            await self._run(pool, match_ids)
        except BrokenProcessPool as exc:
            raise ArenaError(f"a solver process died: {exc}") from None
        finally:
            # Queued positions are dropped; running ones finish within their budget.
            pool.shutdown(wait=True, cancel_futures=True)
        return self.summary

    async def _run(self, pool: Executor, match_ids: Sequence[str]) -> None:
        window = asyncio.Semaphore(self.jobs * GAMES_PER_JOB)
        async with asyncio.TaskGroup() as group:
            for start in range(0, len(match_ids), READ_CHUNK):
                chunk = match_ids[start : start + READ_CHUNK]
                for target in await self.store.analysis_targets(chunk, self.budget_ms):
                    await window.acquire()
                    task = group.create_task(self._game(pool, target))
                    task.add_done_callback(lambda _: window.release())

    async def _game(self, pool: Executor, target: AnalysisTarget) -> None:
        plan = GamePlan(target)
        positions, candidates = plan.positions(), plan.candidate_positions()
        values = await asyncio.gather(*(self._value(pool, p) for p in positions.values()))
        others = await asyncio.gather(*(self._value(pool, p) for p in candidates.values()))
        rows = plan.rows(
            dict(zip(positions, values, strict=True)),
            self.budget_ms,
            dict(zip(candidates, others, strict=True)),
        )
        await self.store.save_analysis(target.match_id, rows)
        summary = self.summary
        summary.games += 1
        summary.moves += len(rows)
        summary.decided += sum(row.blunder is not None for row in rows)
        summary.judged += sum(
            row.blunder is not None and row.choice_matters is True for row in rows
        )
        summary.blunders += sum(bool(row.blunder) for row in rows)
        if self.progress is not None:
            self.progress.game_done()

    async def _value(self, pool: Executor, position: Position) -> Solved:
        future = self._cache.get(position.key)
        if future is None:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(pool, solve_position, position.notation, self.budget_ms)
            future.add_done_callback(self._solved)
            self._cache[position.key] = future
            if len(self._cache) > CACHE_POSITIONS:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(position.key)
        # Shielded: one game cancelled must not cancel a position other games wait for.
        return await asyncio.shield(future)

    def _solved(self, future: asyncio.Future[Solved]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        solved = future.result()
        self.summary.positions += 1
        self.summary.unknown += solved.outcome is None
        self.summary.nodes += solved.nodes
        if self.progress is not None:
            self.progress.solved()
