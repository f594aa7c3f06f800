"""Rating notices: the ends awaiting one refit are told from it, in slices, each once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from types import SimpleNamespace
from typing import Any, cast

from arena.leaderboard.board import Board
from arena.leaderboard.cache import Leaderboards
from arena.leaderboard.notices import SLICE, RatingNotices
from arena.play.match import Match
from protocol.messages import LeaderboardEntry, MatchEnd, RatingReport, ServerMessage

GAME = "connect4"


class Refits:
    """``Leaderboards.fresh`` whose boards the test hands out, one per call."""

    def __init__(self) -> None:
        self.calls: list[asyncio.Future[Board]] = []

    async def fresh(self, game: str) -> Board:
        assert game == GAME
        future: asyncio.Future[Board] = asyncio.get_running_loop().create_future()
        self.calls.append(future)
        return await future


class BoardAt:
    """A board on which every bot is rated ``rating`` (what ``entry`` reads off a board)."""

    def __init__(self, rating: float) -> None:
        self.rating = rating

    def entry(self, bot: str, is_online: Callable[[str], bool]) -> LeaderboardEntry:
        return LeaderboardEntry(1, bot, self.rating, 1, 1, 0, 0, is_online(bot))


def ended(notices: RatingNotices, number: int, rated: bool = True) -> None:
    match = SimpleNamespace(game=GAME, match_id=f"m{number}", players=(f"a{number}", f"b{number}"))
    end = SimpleNamespace(rated=rated)
    notices.match_ended(cast(Match, match), cast(MatchEnd, end))


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


async def test_ends_awaiting_a_refit_are_told_from_it_in_slices_later_ends_from_the_next() -> None:
    refits = Refits()
    told: list[tuple[str, RatingReport]] = []
    published: list[RatingReport] = []
    tasks: list[asyncio.Task[None]] = []

    def spawn(coro: Coroutine[Any, Any, None], name: str) -> object:
        tasks.append(asyncio.get_running_loop().create_task(coro, name=name))
        return tasks[-1]

    def tell(bot: str, message: ServerMessage) -> None:
        told.append((bot, cast(RatingReport, message)))

    notices = RatingNotices(
        cast(Leaderboards, refits), tell=tell, spawn=spawn, is_online=lambda bot: True
    )
    notices.listen(published.append)
    first = SLICE * 3 + 5
    for number in range(first):
        ended(notices, number)
    ended(notices, 9999, rated=False)  # an unrated end is told nothing
    await settle()
    assert len(tasks) == 1 and len(refits.calls) == 1  # one task, one refit for all of them
    for number in range(first, first + 4):  # ends while the refit is awaited: the next refit's
        ended(notices, number)
    await settle()
    assert len(tasks) == 1 and len(refits.calls) == 1

    refits.calls[0].set_result(cast(Board, BoardAt(1600.0)))
    await asyncio.sleep(0)  # the first turn after the board sends one slice, not all
    assert 0 < len(published) <= SLICE
    await settle()
    assert [report.match_id for report in published] == [f"m{n}" for n in range(first)]
    assert all(report.entries[0].rating == 1600.0 for report in published)
    assert told[:2] == [("a0", published[0]), ("b0", published[0])]
    assert len(told) == 2 * first
    assert len(refits.calls) == 2  # the later ends wait for a board read after them

    refits.calls[1].set_result(cast(Board, BoardAt(1610.0)))
    await settle()
    later = published[first:]
    assert [report.match_id for report in later] == [f"m{n}" for n in range(first, first + 4)]
    assert all(report.entries[0].rating == 1610.0 for report in later)
    assert len(told) == 2 * (first + 4)
    await asyncio.gather(*tasks)  # nothing left: the task ends
    ended(notices, 10_000)  # and the next end starts a new one
    await settle()
    assert len(tasks) == 2 and len(refits.calls) == 3
    tasks[1].cancel()
