"""The leaderboard's fit process: fits in a real child, the same boards, replaced, stopped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from arena.leaderboard import fit_process
from arena.leaderboard.board import Board, build_board
from arena.leaderboard.fit_process import RETRY_AFTER_S, FitProcess
from arena.outages import SUMMARY_EVERY_S
from arena.play.clock import ManualClock
from arena.stats.simulation import simulate_pair_results
from arena.store import LeaderboardRow
from arena.store.queries import PairCell
from tests.arena.conftest import ServerFactory
from tests.arena.rating_data import random_games, seed_results

GAME = "connect4"


def board_inputs(bots: int, games: int, seed: int) -> tuple[list[LeaderboardRow], list[PairCell]]:
    """The store's rows and pair cells of ``games`` simulated games between ``bots`` bots."""
    rng = np.random.default_rng(seed)
    cells = [
        PairCell(*cell) for cell in simulate_pair_results(rng.normal(1500, 200, bots), games, rng)
    ]
    # One bot without games: it is on the board with a prior-wide rating.
    rows = [LeaderboardRow(i + 1, f"bot{i}", 1500.0, 0, 0, 0, 0) for i in range(bots + 1)]
    return rows, cells


def assert_identical(board: Board, expected: Board) -> None:
    """Every number of ``board`` is ``expected``'s, to the bit."""
    assert board.version == expected.version and board.game == expected.game
    assert board.cells == expected.cells
    for mine, theirs in ((board.fit, expected.fit), (board.shown, expected.shown)):
        assert mine.ratings == theirs.ratings
        assert mine.covariance.tobytes() == theirs.covariance.tobytes()
        assert (mine.iterations, mine.groups, mine.weights) == (
            theirs.iterations,
            theirs.groups,
            theirs.weights,
        )


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
async def fits() -> AsyncIterator[FitProcess]:
    process = FitProcess()
    yield process
    await process.close()


def fit_here_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fit run in this process raises: a board built anyway was fitted in the child."""

    def refuse(*args: Any) -> Board:
        raise AssertionError("fitted in the server's process")

    monkeypatch.setattr(fit_process, "fit_board", refuse)


async def test_a_board_fitted_in_the_child_is_the_one_build_board_makes(
    fits: FitProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, cells = board_inputs(60, 3000, seed=3)
    expected = build_board(GAME, rows, cells, 7)
    fit_here_fails(monkeypatch)
    board = await fits.build(GAME, rows, cells, 7)
    assert fits.pid is not None and fits.pid != os.getpid()
    assert_identical(board, expected)
    # The child stays: the next board comes from the same process.
    pid = fits.pid
    again = await fits.build(GAME, rows[:10], cells, 8)
    assert fits.pid == pid and fits.started == 1
    assert_identical(again, build_board(GAME, rows[:10], cells, 8))


async def test_the_fit_s_own_error_reaches_the_caller_and_the_child_stays(
    fits: FitProcess,
) -> None:
    rows, cells = board_inputs(5, 50, seed=4)
    await fits.build(GAME, rows, cells, 1)
    pid = fits.pid
    bad = [PairCell("bot0", "bot1", -5, 0, 0)]  # a negative count: the fit refuses it
    with pytest.raises(ValueError):
        build_board(GAME, rows, bad, 2)
    with pytest.raises(ValueError):
        await fits.build(GAME, rows, bad, 2)
    assert fits.pid == pid and fits.started == 1


async def test_a_killed_child_is_replaced_and_the_next_board_builds(
    fits: FitProcess, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    rows, cells = board_inputs(40, 2000, seed=5)
    await fits.build(GAME, rows, cells, 1)
    first = fits.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    while fits.pid is not None:  # the child dies while idle (bounded by the test's timeout)
        await asyncio.sleep(0.01)
    fit_here_fails(monkeypatch)
    caplog.set_level(logging.INFO, logger=fit_process.log.name)
    board = await fits.build(GAME, rows, cells, 2)
    assert_identical(board, build_board(GAME, rows, cells, 2))
    assert fits.pid not in (None, first) and fits.started == 2 and gone(first)
    # One line when the child was found dead, one when its successor fitted: no tracebacks.
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == ["ERROR", "WARNING"], lines
    assert f"process {first} had exited" in lines[0][1] and "works again" in lines[1][1]
    assert all(record.exc_info is None for record in caplog.records)


async def test_a_child_killed_during_a_fit_is_replaced_and_the_fit_retried(
    fits: FitProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, cells = board_inputs(400, 20000, seed=6)
    await fits.build(GAME, rows[:5], cells[:10], 1)  # started, so the kill lands in the fit
    first = fits.pid
    assert first is not None
    fit_here_fails(monkeypatch)
    building = asyncio.create_task(fits.build(GAME, rows, cells, 2))
    await asyncio.sleep(0.05)
    os.kill(first, signal.SIGKILL)
    board = await building
    assert_identical(board, build_board(GAME, rows, cells, 2))
    assert fits.pid not in (None, first) and fits.started == 2


class NoProcesses:
    """A multiprocessing context whose processes cannot start (a sandbox without fork)."""

    def __init__(self) -> None:
        self.attempts = 0
        self._real = multiprocessing.get_context("spawn")

    def Pipe(self) -> Any:
        return self._real.Pipe()

    def Process(self, **options: Any) -> Any:
        outer = self

        class Refused:
            def start(self) -> None:
                outer.attempts += 1
                raise OSError(11, "Resource temporarily unavailable")

        return Refused()


async def test_without_a_child_boards_are_fitted_in_the_thread_and_the_outage_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    refused = NoProcesses()
    monkeypatch.setattr(fit_process.multiprocessing, "get_context", lambda method: refused)
    clock = ManualClock()
    fits = FitProcess(clock=clock.now)
    rows, cells = board_inputs(20, 500, seed=7)
    caplog.set_level(logging.INFO, logger=fit_process.log.name)
    try:
        board = await fits.build(GAME, rows, cells, 1)
        assert_identical(board, build_board(GAME, rows, cells, 1))
        assert refused.attempts == 2  # the fit, then its retry in a fresh child
        # Within RETRY_AFTER_S no child is tried: the boards are fitted in the thread.
        for version in range(2, 6):
            clock.advance(RETRY_AFTER_S / 5)
            assert_identical(
                await fits.build(GAME, rows, cells, version),
                build_board(GAME, rows, cells, version),
            )
        assert refused.attempts == 2
        clock.advance(SUMMARY_EVERY_S)
        await fits.build(GAME, rows, cells, 6)
        assert refused.attempts == 4
    finally:
        await fits.close()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    # The start of the outage, then one summary line a minute; never a traceback.
    assert [level for level, _ in lines] == ["ERROR", "WARNING"], lines
    assert "Resource temporarily unavailable" in lines[0][1] and "still failing" in lines[1][1]
    assert all(record.exc_info is None for record in caplog.records)


async def test_close_leaves_no_child_and_starts_none_again() -> None:
    fits = FitProcess()
    rows, cells = board_inputs(10, 200, seed=8)
    await fits.build(GAME, rows, cells, 1)
    pid = fits.pid
    assert pid is not None
    await fits.close()
    assert fits.pid is None and gone(pid)
    with pytest.raises(RuntimeError):
        await fits.build(GAME, rows, cells, 2)
    assert fits.started == 1
    await fits.close()  # idempotent


async def test_close_during_a_fit_cuts_it_short() -> None:
    fits = FitProcess()
    rows, cells = board_inputs(400, 20000, seed=9)
    await fits.build(GAME, rows[:5], cells[:10], 1)
    pid = fits.pid
    assert pid is not None
    building = asyncio.create_task(fits.build(GAME, rows, cells, 2))
    await asyncio.sleep(0.05)
    await fits.close()
    with contextlib.suppress(RuntimeError):
        await building  # finished before the close, or cut short by it
    assert fits.pid is None and gone(pid) and fits.started == 1


def fit_children() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name == "arena-leaderboard-fit"]


async def test_a_server_fits_in_its_child_and_stops_it_on_shutdown(
    make_server: ServerFactory, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["alpha", "beta", "gamma"]
    for name in names:
        await store.add_bot(name)
    skill = {"alpha": 1650.0, "beta": 1500.0, "gamma": 1350.0}
    await seed_results(store, GAME, random_games(names, 60, seed=10, skill=skill))
    fit_here_fails(monkeypatch)
    server = await make_server(fit_process=True)
    children = fit_children()
    assert len(children) == 1 and children[0].pid not in (None, os.getpid())
    pid = children[0].pid
    rows, cells = await store.leaderboard_inputs(GAME)
    board = await server.leaderboards.board(GAME)
    assert_identical(board, build_board(GAME, rows, cells, board.version))
    await server.shutdown()
    assert fit_children() == [] and gone(pid)
