"""One rating from the first game on: a freshly started server pairs and shows the fit.

A real server (port 0, the SQLite file of ``store``) over a database seeded with
rated results, with no MQTT and before anything has asked for a leaderboard over
HTTP: the rating a seek is paired by and the ratings beside the live match are the
leaderboard fit's, computed here from the game list alone, not the incremental Elo
the store keeps.
"""

from __future__ import annotations

import pytest

from arena.server import ArenaServer
from arena.store import Store
from protocol.messages import GamesReply, MatchStart, Snapshot
from tests.arena.conftest import BotFactory, ServerFactory
from tests.arena.rating_data import expected_fit, random_games, seed_results

GAME = "connect4"
SKILL = {"alice": 1700.0, "bob": 1500.0, "carol": 1300.0}
TC = {"move_ms": 2000, "bank_ms": 0}


async def test_a_new_server_pairs_and_shows_the_fitted_rating_before_any_request(
    store: Store,
    tokens: dict[str, str],
    make_server: ServerFactory,
    bot: BotFactory,
    spectator: BotFactory,
) -> None:
    games = random_games(list(SKILL), 150, seed=31, skill=SKILL)
    await seed_results(store, GAME, games)
    fit = expected_fit(games, shown=[*SKILL, "dave"])
    fitted = {name: fit.get(name).rating for name in SKILL}
    # The test can fail: the store's incremental Elo is another number for each bot.
    for name, rating in fitted.items():
        incremental = await store.rating(name, GAME)
        assert incremental is not None and abs(incremental - rating) > 1.0

    # (The ``bot`` fixture's own server started before the games were written.)
    server: ArenaServer = await make_server()
    alice = await bot("alice", target=server)
    await alice.send(type="seek", game=GAME, time_control=TC)
    await alice.send(type="games")
    assert isinstance(await alice.recv(), GamesReply)  # round trip: the seek is queued
    [seek] = server.lobby.seeks
    assert seek.bot == "alice" and seek.rating == pytest.approx(fitted["alice"], abs=1e-9)

    carol = await bot("carol", target=server)
    await carol.send(type="seek", game=GAME, time_control=TC)
    start = await alice.expect(MatchStart)
    await carol.expect(MatchStart)
    watcher = await spectator(server)
    await watcher.send(type="watch", match_id=start.match_id)
    snapshot = await watcher.expect(Snapshot)
    assert snapshot.ratings == tuple(round(fitted[name], 1) for name in start.players)
