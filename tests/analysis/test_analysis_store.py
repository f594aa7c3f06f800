"""The store's side of move analysis on SQLite and PostgreSQL, without the solver.

Rows are written by hand through ``Store.save_analysis``; what is left to do,
what is replaced, and the per-bot sums are checked against the rows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arena.store import Store
from arena.store.analysis import AccuracyCounts, MoveAnalysisRecord
from protocol.games import Termination
from tests.analysis.stored_games import store_games
from tests.arena.test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

GAMES = [(3, 3, 2, 2, 1, 1, 0), (3, 4, 3, 4, 3, 4, 2, 4), (0, 1, 0, 1)]


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh SQLite file, or the suite's PostgreSQL database emptied."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    found: str = request.getfixturevalue("pg_url")
    reset(found)
    return found


@pytest.fixture
async def store(url: str) -> AsyncIterator[Store]:
    opened = await Store.open(url)
    try:
        yield opened
    finally:
        await opened.close()


def row(
    ply: int, before: int | None, after: int | None, budget_ms: int = 100
) -> MoveAnalysisRecord:
    """A row whose exact scores, when given, decide the outcomes; the choice mattered
    wherever the position is known and not lost."""

    def sign(score: int | None) -> int | None:
        return None if score is None else (score > 0) - (score < 0)

    low, high = sign(before), sign(after)
    blunder = None if low is None or high is None else high < low
    matters = None if low is None else low > -1
    return MoveAnalysisRecord(ply, before, after, low, high, blunder, budget_ms, matters)


async def test_what_is_left_saved_replaced_and_summed(store: Store) -> None:
    ids = await store_games(store, GAMES)
    other = await store.create_match("tictactoe", ("alpha", "beta"), 1000, 0)
    store.record_move(other, 0, 0, 4, 5, 1)
    await store.finish_match(other, 0, Termination.RESIGN, None, True)
    live = await store.create_match("connect4", ("beta", "alpha"), 1000, 0)
    store.record_move(live, 0, 0, 3, 5, 1)
    await store.flush()

    assert await store.analysis_todo("connect4", 100) == ids
    assert await store.count_moves("connect4") == sum(map(len, GAMES))
    assert await store.analysis_todo("connect4", 100, match_id=live) == []

    first = [row(0, 2, 2), row(1, -2, -2), row(2, 3, 3), row(3, 3, -3), row(4, 5, 5)]
    first += [row(5, -18, -18), row(6, 18, 18)]
    await store.save_analysis(ids[0], first)
    second = [row(0, None, None), *(row(p, 1, -1) for p in range(1, 8))]
    await store.save_analysis(ids[1], second)
    assert await store.match_analysis(ids[0]) == first
    assert await store.analysis_todo("connect4", 100) == [ids[2]]
    # A larger budget wants the unknown move again, and only that one.
    assert await store.analysis_todo("connect4", 200) == ids[1:]
    [target] = await store.analysis_targets([ids[1]], 200)
    assert target.moves == GAMES[1] and target.settled == frozenset(range(1, 8))

    replaced = row(0, 1, 1, budget_ms=200)
    await store.save_analysis(ids[1], [replaced])
    assert (await store.match_analysis(ids[1]))[0] == replaced
    assert len(await store.match_analysis(ids[1])) == len(GAMES[1])

    # Game 0 is alpha (even plies) vs beta, game 1 beta (even plies) vs gamma.
    expected = [
        AccuracyCounts("alpha", "connect4", 4, 4, 4, 4, 0, 1),
        # beta's two kept moves in lost positions are decided, not judged.
        AccuracyCounts("beta", "connect4", 7, 7, 5, 1, 4, 2),
        AccuracyCounts("gamma", "connect4", 4, 4, 4, 0, 4, 1),
    ]
    assert await store.accuracy_counts(game="connect4") == expected
    assert await store.accuracy_counts(bot="beta") == [expected[1]]
    assert await store.accuracy_counts(game="tictactoe") == []
