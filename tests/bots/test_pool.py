"""Process pools: root-parallel merging, async search, and no process left behind."""

from __future__ import annotations

import asyncio
import multiprocessing
import time

import pytest

from bots import SearchError, make_strategy
from bots.budget import Budget
from bots.strategies.mcts import RootStats, merge_root_stats, search_task
from bots.strategies.pool import SearchPool
from protocol.games import new_game


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _square(x: int) -> int:
    return x * x


def _fail() -> None:
    raise RuntimeError("boom")


def test_merge_sums_visits_and_values_per_move() -> None:
    a = RootStats((0, 1, 2), (10, 5, 1), (2.0, -1.0, 0.5), 16, 0.1)
    b = RootStats((0, 2, 3), (1, 7, 2), (1.0, 3.0, -2.0), 10, 0.2)
    merged = merge_root_stats([a, b])
    assert merged.moves == (0, 1, 2, 3)
    assert merged.visits == (11, 5, 8, 2)
    assert merged.values == (3.0, -1.0, 3.5, -2.0)
    assert merged.simulations == 26
    assert merged.elapsed_s == 0.2
    assert merged.best_move() == 0


def test_root_parallel_search_merges_worker_results() -> None:
    state = new_game("connect4").play(3)
    parts = [search_task(state, 700, None, 1.4, seed, False, "kernel", 100_000) for seed in (1, 2)]
    merged = merge_root_stats(parts)
    assert merged.simulations == 1400
    for i, move in enumerate(merged.moves):
        assert merged.visits[i] == sum(p.visits[p.moves.index(move)] for p in parts)
    assert sum(merged.visits) == 1400
    # Different seeds really searched differently.
    assert parts[0].visits != parts[1].visits


def test_pool_runs_one_task_per_worker_and_reports_errors() -> None:
    with SearchPool(2) as pool:
        assert pool.run_all(_square, [(3,), (4,)]).result() == [9, 16]
        with pytest.raises(SearchError, match="boom"):
            pool.run_all(_fail, [(), ()]).result()
        # Still usable after a failed task.
        assert pool.run_all(_square, [(5,), (6,)]).result() == [25, 36]


def test_two_workers_split_the_simulation_budget_and_count_honestly() -> None:
    with make_strategy("mcts", game="connect4", simulations=3001, workers=2, seed=1) as bot:
        assert len(set(bot._pool.pids)) == 2  # type: ignore[attr-defined]
        bot.choose_move(new_game("connect4"))
        info = bot.last_search
    assert info is not None
    assert info.workers == 2
    assert info.simulations == 3001
    assert sum(n for _, n, _ in info.moves) == 3001


def test_close_leaves_no_child_process() -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    bot = make_strategy("mcts", game="connect4", simulations=500, workers=2)
    alpha = make_strategy("alphabeta", game="connect4", time_ms=10)
    pids = bot._pool.pids + alpha._pool.pids  # type: ignore[attr-defined]
    assert len(pids) == 3 and all(_alive(pid) for pid in pids)
    bot.choose_move(new_game("connect4"))
    alpha.choose_move(new_game("connect4"))
    bot.close()
    alpha.close()
    bot.close()  # idempotent
    assert not any(_alive(pid) for pid in pids)
    assert {p.pid for p in multiprocessing.active_children()} <= before
    with pytest.raises(SearchError, match="closed"):
        bot.choose_move(new_game("connect4"))


def test_close_during_a_search_stops_the_workers() -> None:
    bot = make_strategy("mcts", game="connect4", time_ms=5000, workers=1)
    pids = bot._pool.pids  # type: ignore[attr-defined]
    args = bot._task_args(new_game("connect4"), Budget.UNLIMITED)  # type: ignore[attr-defined]
    future = bot._pool.run_all(search_task, args)  # type: ignore[attr-defined]
    time.sleep(0.2)
    start = time.perf_counter()
    bot.close()
    assert time.perf_counter() - start < 8
    assert not any(_alive(pid) for pid in pids)
    with pytest.raises(SearchError):
        future.result(timeout=5)


def test_async_search_does_not_block_the_event_loop() -> None:
    async def main() -> tuple[int, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        with make_strategy("mcts", game="connect4", time_ms=300, workers=1) as bot:
            task = asyncio.create_task(ticker())
            move = await bot.choose_move_async(new_game("connect4"))
            task.cancel()
        return move, ticks

    move, ticks = asyncio.run(main())
    assert move in range(7)
    assert ticks >= 15  # the loop kept running during the 300 ms search


def test_workers_are_warm_before_the_first_move() -> None:
    with make_strategy("mcts", game="connect4", time_ms=50, workers=1) as bot:
        assert len(bot.warmup_s) == 1  # type: ignore[attr-defined]
        start = time.perf_counter()
        bot.choose_move(new_game("connect4"))
        # No compilation on the first move: 50 ms of search plus IPC, bounded generously
        # (a busy machine) yet below what compiling the kernels in the move would take.
        assert time.perf_counter() - start < 2.0
