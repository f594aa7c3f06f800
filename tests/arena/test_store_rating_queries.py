"""The store's rating queries on SQLite and PostgreSQL: pair cells, a bot's games and matches."""

from __future__ import annotations

from collections import Counter

import pytest
from test_store import db_url, store  # noqa: F401  (fixtures: every test runs on both databases)
from test_store_postgres import pg_url  # noqa: F401  (the PostgreSQL database they use)

from arena.errors import NoSuchBotError
from arena.store import Store
from protocol.games import Fault, Termination
from tests.arena.rating_data import Game, random_games, seed_results

GAME = "connect4"
SKILL = {"alpha": 1600.0, "beta": 1500.0, "gamma": 1400.0, "omega": 1500.0}


@pytest.fixture
async def games(store: Store) -> list[Game]:  # noqa: F811
    for name in SKILL:
        await store.add_bot(name)
    played = random_games(list(SKILL), 80, seed=9, skill=SKILL)
    await seed_results(store, GAME, played)
    await seed_results(store, "tictactoe", [("alpha", "beta", 1.0)])
    await store.remove_bot("omega")
    return played


def by_seats(games: list[Game]) -> dict[tuple[str, str], tuple[int, int, int]]:
    """Wins, draws and losses of player 0 per (player 0, player 1), counted from the list."""
    cells: dict[tuple[str, str], Counter[float]] = {}
    for first, second, score in games:
        cells.setdefault((first, second), Counter())[score] += 1
    return {pair: (c[1.0], c[0.5], c[0.0]) for pair, c in cells.items()}


async def test_pair_cells_count_every_rated_game_by_seats(
    store: Store,  # noqa: F811
    games: list[Game],
) -> None:
    # Unrated, aborted and live matches count for nothing.
    unrated = await store.open_match(GAME, ("alpha", "beta"), 1000, 0, rated=False)
    await store.finish_match(unrated, 0, Termination.LINE, None, False)
    aborted = await store.open_match(GAME, ("alpha", "gamma"), 1000, 0)
    await store.finish_match(aborted, None, Termination.ABORTED, Fault.INFRASTRUCTURE, True)
    await store.create_match(GAME, ("beta", "gamma"), 1000, 0)
    rows, cells = await store.leaderboard_inputs(GAME)
    assert {(c.bot, c.opponent): (c.wins, c.draws, c.losses) for c in cells} == by_seats(games)
    # The removed bot's games stay in the cells; its row leaves the board.
    assert sorted(row.bot for row in rows) == ["alpha", "beta", "gamma"]
    assert any("omega" in (c.bot, c.opponent) for c in cells)


async def test_a_bots_games_matches_and_record(store: Store, games: list[Game]) -> None:  # noqa: F811
    results = await store.bot_results("alpha")
    mine = Counter(
        (GAME, b if a == "alpha" else a, s if a == "alpha" else 1.0 - s)
        for a, b, s in games
        if "alpha" in (a, b)
    )
    mine[("tictactoe", "beta", 1.0)] += 1
    assert Counter((r.game, r.opponent, r.score) for r in results) == mine
    assert [r.ended_at for r in results] == sorted(r.ended_at for r in results)

    live = await store.create_match(GAME, ("gamma", "alpha"), 1000, 0)
    recent = await store.bot_matches("alpha", 5)
    assert len(recent) == 5 and recent[0].id == live and recent[0].status == "live"
    assert all("alpha" in match.players for match in recent)
    assert [m.started_at for m in recent] == sorted((m.started_at for m in recent), reverse=True)

    removed = await store.get_bot("omega")
    assert removed is not None and not removed.active
    assert await store.get_bot("nobody") is None
    assert len(await store.bot_results("omega")) > 0  # removed bots keep their history
    with pytest.raises(NoSuchBotError):
        await store.bot_results("nobody")
    with pytest.raises(NoSuchBotError):
        await store.bot_matches("nobody")
