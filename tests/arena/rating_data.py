"""Rated results written through the real store, and what the tests expect of them.

``seed_results`` plays nothing: it opens and finishes matches through the
store's public API (the same group commit a server uses), so the database
holds ordinary finished, rated matches with their Elo changes. ``expected_fit``
computes the leaderboard's fit from the same list without any server code:
``tally_pairs`` over the games, then ``fit_ratings``. ``bulk_results`` writes
many games at once for tests that need a large board: one insert of finished
matches, then the store's own ``rebuild_ratings`` gives them their ratings.
"""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime

from sqlalchemy import insert, select

from arena.stats import RatingFit, fit_ratings, tally_pairs
from arena.store import Store
from arena.store.models import Bot, Match
from protocol.games import Termination

Game = tuple[str, str, float]
"""``(player 0, player 1, player 0's score)``."""


def random_games(names: list[str], count: int, seed: int, skill: dict[str, float]) -> list[Game]:
    """``count`` games between random pairs, won by the stronger more often (draws too)."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        first, second = rng.sample(names, 2)
        edge = 1.0 / (1.0 + 10.0 ** ((skill[second] - skill[first]) / 400.0))
        roll = rng.random()
        draw = 0.2 * 4 * edge * (1 - edge)
        score = 1.0 if roll < edge - draw / 2 else 0.5 if roll < edge + draw / 2 else 0.0
        games.append((first, second, score))
    return games


def tally_games(tally: tuple[int, int, int], a: str, b: str) -> list[Game]:
    """Games that give ``a`` the ``(losses, draws, wins)`` tally against ``b``, both colours."""
    losses, draws, wins = tally
    return [(a, b, 1.0)] * wins + [(b, a, 0.5)] * draws + [(b, a, 1.0)] * losses


async def seed_results(store: Store, game: str, games: list[Game], chunk: int = 200) -> None:
    """Write ``games`` as finished rated matches, oldest first (a few group commits)."""
    for start in range(0, len(games), chunk):
        part = games[start : start + chunk]
        ids = [await store.open_match(game, (a, b), 1000, 0) for a, b, _ in part]
        await asyncio.gather(
            *(
                store.finish_match(
                    match_id,
                    {1.0: 0, 0.0: 1, 0.5: None}[score],
                    Termination.DRAW if score == 0.5 else Termination.LINE,
                    None,
                    True,
                )
                for match_id, (_, _, score) in zip(ids, part, strict=True)
            )
        )


async def bulk_results(store: Store, game: str, games: list[Game]) -> None:
    """Write ``games`` (between bots already added) as finished rated matches in one
    transaction, then rate them with ``rebuild_ratings``: thousands of games in a second."""
    async with store.engine.begin() as connection:
        ids = {name: id_ for name, id_ in await connection.execute(select(Bot.name, Bot.id))}
        now = datetime.now(UTC)
        rows = [
            {
                "id": f"bulk{number:08d}",
                "game": game,
                "player0_id": ids[a],
                "player1_id": ids[b],
                "move_ms": 1000,
                "bank_ms": 0,
                "rated": True,
                "status": "finished",
                "winner": {1.0: 0, 0.0: 1, 0.5: None}[score],
                "result": {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[score],
                "termination": "draw" if score == 0.5 else "line",
                "reason": "",
                "started_at": now,
                "ended_at": now,
            }
            for number, (a, b, score) in enumerate(games)
        ]
        await connection.execute(insert(Match), rows)
    await store.rebuild_ratings()


def expected_fit(games: list[Game], shown: list[str] | None = None) -> RatingFit:
    """The fit the leaderboard must show, from the games alone (ranked among ``shown``)."""
    fit = fit_ratings(tally_pairs(games), bots=shown or (), weights="games")
    return fit if shown is None else fit.only(shown)
