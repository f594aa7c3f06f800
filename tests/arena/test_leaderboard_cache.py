"""``Leaderboards`` over a real SQLite store: one fit per change, never one per request."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from arena.leaderboard import Board, Leaderboards
from arena.leaderboard.board import UNRATED
from arena.leaderboard.cache import FIT_SHARE
from arena.leaderboard.fit_process import Fitted, ThreadFit
from arena.store import Store
from protocol.errors import ProtocolError
from tests.arena.rating_data import expected_fit, random_games, seed_results

GAME = "connect4"
NAMES = ["alpha", "beta", "gamma"]
SKILL = {"alpha": 1650.0, "beta": 1500.0, "gamma": 1350.0}


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def seeded(store: Store) -> list[tuple[str, str, float]]:
    for name in NAMES:
        await store.add_bot(name)
    games = random_games(NAMES, 120, seed=5, skill=SKILL)
    await seed_results(store, GAME, games)
    return games


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def boards(store: Store, clock: FakeClock) -> Leaderboards:
    """Boards refreshed at most every second, re-read after 30 s, on the fake clock."""
    return Leaderboards(store, refresh_s=1.0, max_age_s=30.0, clock=clock)


def ratings_of(board: Board) -> dict[str, tuple[float, float, int]]:
    return {line.name: (line.rating, line.ci95, line.games) for line in board.shown.ratings}


def assert_matches_games(board: Board, games: list[tuple[str, str, float]]) -> None:
    expected = expected_fit(games, shown=NAMES)
    assert [line.name for line in board.shown.ratings] == [r.name for r in expected.ratings]
    for line, want in zip(board.shown.ratings, expected.ratings, strict=True):
        assert line.rating == pytest.approx(want.rating, abs=1e-9)
        assert line.ci95 == pytest.approx(want.ci95, abs=1e-9)
        assert (line.games, line.wins, line.draws, line.losses) == (
            want.games,
            want.wins,
            want.draws,
            want.losses,
        )


async def test_reads_are_cached_and_a_result_costs_one_fit(
    store: Store, seeded: list[tuple[str, str, float]], boards: Leaderboards, clock: FakeClock
) -> None:
    first = await boards.board(GAME)
    assert_matches_games(first, seeded)
    for _ in range(50):
        assert await boards.board(GAME) is first
    assert boards.fits == 1

    # A committed result, inside the refresh interval: the cached board still answers.
    late = [("gamma", "alpha", 1.0)]
    await seed_results(store, GAME, late)
    boards.result_committed(GAME)
    clock.now += 0.5
    assert await boards.board(GAME) is first
    assert boards.fits == 1
    # Once the interval has passed, the next read rebuilds, once, for every caller.
    clock.now += 0.6
    rebuilt = await asyncio.gather(*(boards.board(GAME) for _ in range(20)))
    assert all(board is rebuilt[0] for board in rebuilt)
    assert boards.fits == 2 and rebuilt[0].version > first.version
    assert_matches_games(rebuilt[0], seeded + late)

    # A result of another game does not touch this one.
    boards.result_committed("tictactoe")
    clock.now += 5.0
    assert await boards.board(GAME) is rebuilt[0]
    assert boards.fits == 2


async def test_the_first_result_after_the_start_up_build_is_on_the_next_read(
    store: Store, seeded: list[tuple[str, str, float]], boards: Leaderboards, clock: FakeClock
) -> None:
    await boards.refresh_all([GAME])
    first = boards.cached(GAME)
    assert first is not None and boards.fits == 1
    # A result within refresh_s of the start-up build: the start does not pace reads.
    late = [("gamma", "alpha", 1.0)]
    await seed_results(store, GAME, late)
    boards.result_committed(GAME)
    clock.now += 0.1
    after = await boards.board(GAME)
    assert boards.fits == 2 and after.version > first.version
    assert_matches_games(after, seeded + late)
    # That read's build paces the next one as usual.
    await seed_results(store, GAME, [("alpha", "beta", 0.0)])
    boards.result_committed(GAME)
    clock.now += 0.1
    assert await boards.board(GAME) is after and boards.fits == 2


async def test_an_old_board_is_reread_but_refitted_only_when_the_data_changed(
    store: Store, seeded: list[tuple[str, str, float]], boards: Leaderboards, clock: FakeClock
) -> None:
    first = await boards.board(GAME)
    clock.now += 31.0  # old, but nothing changed: read again, keep the board
    assert await boards.board(GAME) is first
    assert boards.fits == 1
    # Results another process committed (nobody told this one) show after max_age_s.
    other = [("beta", "gamma", 0.5), ("alpha", "beta", 0.0)]
    await seed_results(store, GAME, other)
    clock.now += 10.0
    assert await boards.board(GAME) is first
    clock.now += 21.0
    assert_matches_games(await boards.board(GAME), seeded + other)
    assert boards.fits == 2


async def test_listeners_get_each_new_board_without_anyone_asking(
    store: Store, seeded: list[tuple[str, str, float]]
) -> None:
    boards = Leaderboards(store, refresh_s=0.05)
    heard: list[Board] = []
    arrived = asyncio.Event()

    def listener(board: Board) -> None:
        heard.append(board)
        arrived.set()

    await boards.board(GAME)
    boards.listen(listener)  # the cached board at once
    assert [board.game for board in heard] == [GAME]
    arrived.clear()
    # A burst of results: each marks the board, the rebuilds follow the interval.
    burst: list[tuple[str, str, float]] = []
    for score in (1.0, 0.0, 0.5):
        burst.append(("alpha", "gamma", score))
        await seed_results(store, GAME, burst[-1:])
        boards.result_committed(GAME)
    async with asyncio.timeout(5):
        while ratings_of(heard[-1])["alpha"][2] != ratings_of(heard[0])["alpha"][2] + 3:
            arrived.clear()
            await arrived.wait()
    assert_matches_games(heard[-1], seeded + burst)
    # At most one build per result (fewer when they land within one interval).
    assert 2 <= boards.fits <= 1 + len(burst)
    assert boards.cached(GAME) is heard[-1]


async def test_unknown_games_and_empty_boards(store: Store) -> None:
    boards = Leaderboards(store)
    with pytest.raises(ProtocolError):
        await boards.board("chess")
    empty = await boards.board("uttt")
    assert empty.shown.ratings == () and empty.entries(lambda bot: False) == []


async def test_fresh_waits_for_a_board_read_after_the_call_and_callers_share_it(
    store: Store, seeded: list[tuple[str, str, float]], boards: Leaderboards, clock: FakeClock
) -> None:
    first = await boards.board(GAME)
    # A result commits; within the refresh interval ``board`` still answers the old board,
    # but ``fresh`` (what a bot's rating report waits for) gets one that holds the result.
    late = [("gamma", "alpha", 1.0)]
    await seed_results(store, GAME, late)
    clock.now += 0.5
    assert await boards.board(GAME) is first
    clock.now += 1.0  # the scheduled rebuild is due at once
    told = await asyncio.gather(*(boards.fresh(GAME) for _ in range(3)))
    assert told[0] is told[1] is told[2] is not first
    assert_matches_games(told[0], [*seeded, *late])
    assert boards.fits == 2  # three reports, one fit
    assert await boards.board(GAME) is told[0]
    # Nothing new: a fresh read keeps the cached board and fits nothing.
    clock.now += 2.0
    assert await boards.fresh(GAME) is told[0]
    assert boards.fits == 2
    assert boards.rating_now("gamma", GAME) == told[0].shown.get("gamma").rating
    assert boards.rating_now("nobody", GAME) == UNRATED  # not on the board: no rated game


async def test_a_rating_waits_for_the_first_board_then_never_and_old_boards_are_reread(
    store: Store, seeded: list[tuple[str, str, float]], clock: FakeClock
) -> None:
    rebuilds: list[asyncio.Task[None]] = []

    def spawn(coro: Coroutine[Any, Any, None], name: str) -> None:
        rebuilds.append(asyncio.get_running_loop().create_task(coro, name=name))

    boards = Leaderboards(store, refresh_s=1.0, max_age_s=30.0, clock=clock, spawn=spawn)
    # Before the first build there is no rating to give without waiting...
    assert boards.rating_now("alpha", GAME) is None
    # ...and the first lookup waits for it: the fitted rating, never the incremental Elo.
    fitted = expected_fit(seeded, shown=NAMES).get("alpha").rating
    assert await boards.rating("alpha", GAME) == pytest.approx(fitted, abs=1e-9)
    assert await store.rating("alpha", GAME) != pytest.approx(fitted, abs=1.0)
    assert boards.fits == 1
    # From then on lookups read the cached board, even with a result waiting...
    late = [("gamma", "alpha", 1.0)] * 5
    await seed_results(store, GAME, late)
    clock.now += 10.0
    assert boards.rating_now("alpha", GAME) == pytest.approx(fitted, abs=1e-9)
    assert await boards.rating("alpha", GAME) == pytest.approx(fitted, abs=1e-9)
    assert boards.fits == 1
    # ...until the board is older than max_age_s: a lookup then schedules a re-read.
    clock.now += 30.0
    assert rebuilds == []
    assert boards.rating_now("alpha", GAME) == pytest.approx(fitted, abs=1e-9)
    assert len(rebuilds) == 1
    await rebuilds[0]
    assert boards.fits == 2
    refitted = expected_fit([*seeded, *late], shown=NAMES).get("alpha").rating
    assert boards.rating_now("alpha", GAME) == pytest.approx(refitted, abs=1e-9) != fitted


class ClockedFit(ThreadFit):
    """``ThreadFit``, each fit taking ``takes_s`` of the fake clock."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.takes_s = 0.0

    async def build(self, *args: Any) -> Fitted | None:
        self.clock.now += self.takes_s
        return await super().build(*args)


async def test_a_slow_fit_rests_before_the_next_so_fitting_takes_at_most_its_share(
    store: Store, seeded: list[tuple[str, str, float]], clock: FakeClock
) -> None:
    fit = ClockedFit(clock)
    boards = Leaderboards(store, refresh_s=1.0, max_age_s=30.0, clock=clock, fitter=fit)
    first = await boards.board(GAME)
    fit.takes_s = 3.0  # the fit of a large board takes 3 s of the clock
    await seed_results(store, GAME, [("gamma", "alpha", 1.0)])
    boards.result_committed(GAME)
    clock.now += 1.0
    second = await boards.board(GAME)  # due: refresh_s passed, and the quick fit has rested
    assert boards.fits == 2 and second.version > first.version
    rest = 3.0 * (1.0 / FIT_SHARE - 1.0)
    await seed_results(store, GAME, [("alpha", "beta", 0.0)])
    boards.result_committed(GAME)
    # refresh_s has long passed, but the 3 s fit has not rested yet: the cached board answers.
    clock.now += rest - 0.5
    assert await boards.board(GAME) is second and boards.fits == 2
    clock.now += 0.5
    third = await boards.board(GAME)
    assert boards.fits == 3 and third.version > second.version
