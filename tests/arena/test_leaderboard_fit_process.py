"""The leaderboard's fit process: reads and fits in a real child, the same boards, replaced,
stopped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import random
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from arena.leaderboard import fit_process
from arena.leaderboard.board import Board, build_board
from arena.leaderboard.fit_process import RETRY_AFTER_S, BoardReadError, FitProcess, Fitted
from arena.outages import SUMMARY_EVERY_S
from arena.play.clock import ManualClock
from arena.store import Store
from tests.arena.conftest import ServerFactory
from tests.arena.rating_data import bulk_results, random_games, seed_results

GAME = "connect4"


async def seeded(store: Store, bots: int, games: int, seed: int) -> Store:
    """``store`` with ``bots`` bots and ``games`` rated games between them."""
    names = [f"bot{i}" for i in range(bots)]
    for name in names:
        await store.add_bot(name)
    rng = random.Random(seed)
    skill = {name: rng.gauss(1500.0, 200.0) for name in names}
    await bulk_results(store, GAME, random_games(names, games, seed, skill))
    return store


async def expected(store: Store, version: int) -> Board:
    """The board ``build_board`` makes in this process from a read of ``store`` now."""
    return build_board(GAME, *(await store.leaderboard_inputs(GAME)), version)


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


def new_board(fitted: Fitted | None) -> Board:
    assert fitted is not None
    return fitted[0]


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
    """A board read and fitted in this process raises: one built anyway came from the child."""

    async def refuse(*args: Any) -> Fitted:
        raise AssertionError("fitted in the server's process")

    monkeypatch.setattr(fit_process.ThreadFit, "build", refuse)


async def test_the_child_reads_the_database_itself_and_fits_the_board_build_board_makes(
    fits: FitProcess, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seeded(store, 60, 3000, seed=3)
    fit_here_fails(monkeypatch)
    fitted = await fits.build(store, GAME, 7, None)
    assert fits.pid is not None and fits.pid != os.getpid()
    # It runs only where a core is free: the event loop never waits for a fit.
    assert os.sched_getscheduler(fits.pid) == os.SCHED_IDLE
    assert os.sched_getscheduler(0) != os.SCHED_IDLE
    assert fitted is not None
    board, digest = fitted
    assert_identical(board, await expected(store, 7))
    assert len(board.cells) > 1000 and len(board.shown.ratings) == 60
    # The child stays. A read that finds the same bots and games sends no board back.
    pid = fits.pid
    assert await fits.build(store, GAME, 8, digest) is None
    # A new result is a new board, and a new digest.
    await seed_results(store, GAME, [("bot1", "bot2", 1.0)])
    again = await fits.build(store, GAME, 9, digest)
    assert again is not None and again[1] != digest
    assert_identical(again[0], await expected(store, 9))
    assert fits.pid == pid and fits.started == 1


async def test_a_read_that_fails_in_the_child_is_described_and_the_child_stays(
    fits: FitProcess, store: Store, tmp_path: Path
) -> None:
    await seeded(store, 5, 50, seed=4)
    await fits.build(store, GAME, 1, None)
    pid = fits.pid

    class Unreadable:
        """A source whose database file cannot be opened (its directory does not exist)."""

        database_url = f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'arena.db'}"

        async def leaderboard_inputs(self, game: str) -> Any:
            raise AssertionError("read in the server's process")

    with pytest.raises(BoardReadError, match="cannot open the database file"):
        await fits.build(Unreadable(), GAME, 2, None)
    assert fits.pid == pid and fits.started == 1
    assert_identical(new_board(await fits.build(store, GAME, 3, None)), await expected(store, 3))


async def test_a_killed_child_is_replaced_and_the_next_board_builds(
    fits: FitProcess,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await seeded(store, 40, 2000, seed=5)
    await fits.build(store, GAME, 1, None)
    first = fits.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    while fits.pid is not None:  # the child dies while idle (bounded by the test's timeout)
        await asyncio.sleep(0.01)
    fit_here_fails(monkeypatch)
    caplog.set_level(logging.INFO, logger=fit_process.log.name)
    board = new_board(await fits.build(store, GAME, 2, None))
    assert_identical(board, await expected(store, 2))
    assert fits.pid not in (None, first) and fits.started == 2 and gone(first)
    # One line when the child was found dead, one when its successor fitted: no tracebacks.
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == ["ERROR", "WARNING"], lines
    assert f"process {first} had exited" in lines[0][1] and "works again" in lines[1][1]
    assert all(record.exc_info is None for record in caplog.records)


async def test_a_child_killed_during_a_fit_is_replaced_and_the_fit_retried(
    fits: FitProcess, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seeded(store, 400, 20000, seed=6)
    fit_here_fails(monkeypatch)
    await fits.build(store, "tictactoe", 1, None)  # started (an empty board), so the kill
    first = fits.pid  # lands in the fit
    assert first is not None
    building = asyncio.create_task(fits.build(store, GAME, 2, None))
    await asyncio.sleep(0.05)
    os.kill(first, signal.SIGKILL)
    board = new_board(await building)
    assert_identical(board, await expected(store, 2))
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
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    refused = NoProcesses()
    monkeypatch.setattr(fit_process.multiprocessing, "get_context", lambda method: refused)
    clock = ManualClock()
    fits = FitProcess(clock=clock.now)
    await seeded(store, 20, 500, seed=7)
    caplog.set_level(logging.INFO, logger=fit_process.log.name)
    try:
        board = new_board(await fits.build(store, GAME, 1, None))
        assert_identical(board, await expected(store, 1))
        assert refused.attempts == 2  # the fit, then its retry in a fresh child
        # Within RETRY_AFTER_S no child is tried: the boards are fitted in the thread.
        for version in range(2, 6):
            clock.advance(RETRY_AFTER_S / 5)
            assert_identical(
                new_board(await fits.build(store, GAME, version, None)),
                await expected(store, version),
            )
        assert refused.attempts == 2
        clock.advance(SUMMARY_EVERY_S)
        await fits.build(store, GAME, 6, None)
        assert refused.attempts == 4
    finally:
        await fits.close()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    # The start of the outage, then one summary line a minute; never a traceback.
    assert [level for level, _ in lines] == ["ERROR", "WARNING"], lines
    assert "Resource temporarily unavailable" in lines[0][1] and "still failing" in lines[1][1]
    assert all(record.exc_info is None for record in caplog.records)


async def test_close_leaves_no_child_and_starts_none_again(store: Store) -> None:
    fits = FitProcess()
    await seeded(store, 10, 200, seed=8)
    await fits.build(store, GAME, 1, None)
    pid = fits.pid
    assert pid is not None
    await fits.close()
    assert fits.pid is None and gone(pid)
    with pytest.raises(RuntimeError):
        await fits.build(store, GAME, 2, None)
    assert fits.started == 1
    await fits.close()  # idempotent


async def test_close_during_a_fit_cuts_it_short(store: Store) -> None:
    fits = FitProcess()
    await seeded(store, 400, 20000, seed=9)
    await fits.build(store, "tictactoe", 1, None)
    pid = fits.pid
    assert pid is not None
    building = asyncio.create_task(fits.build(store, GAME, 2, None))
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
