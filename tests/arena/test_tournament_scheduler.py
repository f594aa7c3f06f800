"""The tournament scheduler inside a real server (port 0, SQLite file) with scripted bots.

The bots are ``AutoBot``s (``tests.tournament_bots``): websocket clients in
this process that accept and play their first legal move, or decline, resign
or never move, to show how the scheduler waits, counts, replays and gives up.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
from http_schema import ROUTES, check_def, check_route

from arena.cli.main import main as arena_main
from arena.server import ArenaServer
from arena.store import Store
from arena.tournaments.api import create_body
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.scheduler import TournamentScheduler
from arena.tournaments.settings import TournamentSettings
from tests.tournament_bots import AutoBots, first_move_score

GAME = "tictactoe"


Bots = AutoBots


@pytest.fixture
async def autobots(server: ArenaServer, tokens: dict[str, str]) -> AsyncIterator[AutoBots]:
    bots = AutoBots(server.port, tokens)
    yield bots
    await bots.close()


def scheduler_of(server: ArenaServer) -> TournamentScheduler:
    assert server.tournaments is not None
    return server.tournaments.scheduler


async def wait_until(server: ArenaServer, tournament_id: int, status: str) -> dict[str, Any]:
    async with asyncio.timeout(30):
        while True:
            found = await scheduler_of(server).status(tournament_id)
            if found["status"] == status:
                # JSON-safe, as the API sends it, and as its schema says
                check_def("TournamentStatus", json.loads(json.dumps(found)))
                return found
            await asyncio.sleep(0.02)


def settings(bots: tuple[str, ...], **overrides: Any) -> TournamentSettings:
    values: dict[str, Any] = {
        "game": GAME, "format": "round-robin", "bots": bots, "games_per_pair": 2,
        "move_ms": 2000, "concurrency": 4, "openings": "test",
    }  # fmt: skip
    return TournamentSettings(**{**values, **overrides})


async def test_round_robin_with_two_openings_plays_every_pair_once(
    server: ArenaServer, autobots: Bots, store: Store
) -> None:
    names = ("alice", "bob", "carol")
    bots = [await autobots(name) for name in names]
    openings = ((4,), (0, 4))
    tid = await scheduler_of(server).create(
        settings(names, games_per_pair=4, concurrency=2), OpeningSuite("test", openings)
    )
    status = await wait_until(server, tid, "finished")
    assert status["progress"] == {
        "done": 12, "total": 12, "counted": 12, "forfeits": 0, "void": 0, "playing": 0,
        "pairs_complete": 6,
    }  # fmt: skip
    starts = [s for b in bots for s in b.starts]
    assert len({s.match_id for s in starts}) == 12 and len(starts) == 24
    # Both players of every game saw its opening in match_start, and game 2 of a pair
    # swaps the colours of game 1.
    assert {s.moves for s in starts} == set(openings)
    # First-legal-move bots: a game's result depends only on its opening, so in every
    # pair (colours swapped) each bot scores f + (1 - f) = 1, and two bots split 2-2.
    assert sorted(first_move_score(GAME, o) for o in openings) == [0.5, 1.0]
    cells = status["crosstable"]["cells"]
    for i in range(3):
        for j in range(3):
            if i != j:
                assert cells[i][j] == {"points": 2.0, "games": 4}
    assert all(m["pentanomial"] == [0, 0, 2, 0, 0] for m in status["meetings"])
    # The store knows each game's tournament, pair and opening; the opening is the
    # record's first moves, with no think time.
    record = await store.get_match(status["games"][0]["match_id"])
    assert record is not None and record.tournament_id == tid
    assert record.opening in openings
    assert [m.move for m in record.moves[: len(record.opening)]] == list(record.opening)
    assert all(m.think_ms == 0 for m in record.moves[: len(record.opening)])


async def test_a_bot_that_declines_or_is_offline_is_waited_for(
    server: ArenaServer, autobots: Bots
) -> None:
    await autobots("alice")
    bob = await autobots("bob", declines=2)
    scheduler = scheduler_of(server)
    scheduler._retry_s = 0.05  # the pause after a refusal, shortened for the test
    tid = await scheduler.create(
        settings(("alice", "bob", "carol")), OpeningSuite("test", ((),))
    )
    await asyncio.sleep(0.5)
    status = await scheduler.status(tid)
    # alice-bob is played once bob stops declining; carol is offline, so her games wait.
    assert bob.challenges >= 3
    assert status["progress"]["counted"] == 2 and status["status"] == "running"
    await autobots("carol")
    status = await wait_until(server, tid, "finished")
    assert status["progress"]["counted"] == 6


async def test_a_removed_bot_forfeits_its_remaining_games(
    server: ArenaServer, autobots: Bots, store: Store
) -> None:
    await autobots("alice")
    await autobots("bob")
    scheduler = scheduler_of(server)
    tid = await scheduler.create(
        settings(("alice", "bob", "carol"), games_per_pair=2), OpeningSuite("test", ((),))
    )
    await asyncio.sleep(0.3)  # alice-bob is played; carol never comes
    assert await store.remove_bot("carol")
    await scheduler.refresh()
    status = await wait_until(server, tid, "finished")
    assert status["progress"]["forfeits"] == 4
    assert status["progress"]["counted"] == 2
    cells = status["crosstable"]["cells"]
    assert cells[0][2] == {"points": 2.0, "games": 2}
    assert cells[2][0] == {"points": 0.0, "games": 2}


async def test_an_sprt_stops_at_h1_and_a_gauntlet_plays_the_challenger_only(
    server: ArenaServer, autobots: Bots, capsys: pytest.CaptureFixture[str]
) -> None:
    await autobots("alice")
    await autobots("bob", resign=True)
    await autobots("carol", resign=True)
    scheduler = scheduler_of(server)
    sprt = settings(
        ("alice", "bob"), format="sprt", elo0=0.0, elo1=100.0, alpha=0.05, beta=0.05,
        model="normalized", max_games=200, concurrency=1,
    )  # fmt: skip
    tid = await scheduler.create(sprt, OpeningSuite("test", ((),)))
    status = await wait_until(server, tid, "finished")
    assert status["sprt"]["verdict"] == "H1"
    assert status["sprt"]["llr"] >= status["sprt"]["upper"]
    assert status["progress"]["counted"] == status["sprt"]["verdict_games"] < 200
    played = status["progress"]["done"]
    assert status["progress"]["total"] == played  # it ended with its verdict, not at 200
    gauntlet = settings(("alice", "bob", "carol"), format="gauntlet", games_per_pair=4)
    gid = await scheduler.create(gauntlet, OpeningSuite("test", ((),)))
    status = await wait_until(server, gid, "finished")
    assert [m["bots"] for m in status["meetings"]] == [["alice", "bob"], ["alice", "carol"]]
    assert status["crosstable"]["totals"][0] == {"points": 8.0, "games": 8}
    leader = status["leader"]
    # The list (API and ``arena tournament list``) gives the games played, not "of 200",
    # and each one's verdict or leader.
    listed = {row["id"]: row for row in await scheduler.listing()}
    assert (listed[tid]["games"], listed[tid]["total"]) == (played, played)
    assert listed[tid]["sprt"]["verdict"] == "H1" and listed[gid]["leader"] == leader
    db = str(server.store.engine.url.database)
    code = await asyncio.to_thread(arena_main, ["tournament", "list", "--db", db])
    out = capsys.readouterr().out
    assert code == 0
    lines = {int(line.split()[0]): line for line in out.splitlines() if line[:1].isdigit()}
    assert "leader / verdict" in out.splitlines()[0]
    assert re.search(rf" {played} +H1 accepted after {played} games ", lines[tid])
    assert f"/{played}" not in lines[tid]
    said = re.escape(f"alice {leader['rating']:+.0f} ± {leader['ci95']:.0f} ")
    assert re.search(" 8 +" + said, lines[gid])


async def test_an_infrastructure_abort_is_replayed_and_no_shows_end_void(
    server: ArenaServer, autobots: Bots
) -> None:
    await autobots("alice")
    await autobots("bob")
    await autobots("carol", idle=True)
    scheduler = scheduler_of(server)
    tid = await scheduler.create(
        settings(("alice", "bob"), move_ms=2000, concurrency=1), OpeningSuite("test", ((),))
    )
    async with asyncio.timeout(10):
        while not list(server.registry):
            await asyncio.sleep(0.005)
    for match in server.registry:
        match.abort("a test aborts it")
    status = await wait_until(server, tid, "finished")
    assert status["progress"]["counted"] == 2
    assert status["progress"]["pairs_complete"] == 1
    # carol accepts and never moves: each game is aborted as a no-show, three times,
    # then given up as void.
    tid = await scheduler.create(
        settings(("alice", "carol"), move_ms=50, concurrency=2), OpeningSuite("test", ((),))
    )
    status = await wait_until(server, tid, "finished")
    assert status["progress"]["void"] == 2 and status["progress"]["counted"] == 0


def _http(server: ArenaServer, method: str, path: str, body: Any, token: str | None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers=headers,
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


async def test_the_api_creates_and_steers_with_the_admin_token_only(server: ArenaServer) -> None:
    assert server.tournaments is not None
    token = server.tournaments.admin_token
    body = create_body(settings(("alice", "bob")), OpeningSuite("test", ((4,),)))

    seen: set[tuple[str, int]] = set()

    async def call(method: str, path: str, data: Any = None, auth: str | None = token) -> Any:
        code, reply = await asyncio.to_thread(_http, server, method, path, data, auth)
        [route] = [r for r in ROUTES if re.fullmatch(route_pattern(r), f"{method} {path}")]
        check_route(route, code, reply)  # every answer is the documented body
        seen.add((route, code))
        return code, reply

    assert (await call("POST", "/api/tournaments", body, None))[0] == 401
    assert (await call("POST", "/api/tournaments", body, "wrong"))[0] == 401
    bad = {**body, "settings": {**body["settings"], "bots": ["alice", "zed"]}}
    code, reply = await call("POST", "/api/tournaments", bad)
    assert (code, reply["error"]) == (400, "unknown bot zed (register with `arena bots add`)")
    bad_opening = {**body, "openings": {"source": "x", "openings": [[4, 4]]}}
    code, reply = await call("POST", "/api/tournaments", bad_opening)
    assert code == 400 and "illegal move 4 at ply 1" in reply["error"]
    code, reply = await call("POST", "/api/tournaments", body)
    assert code == 201
    tid = reply["id"]
    assert (await call("GET", "/api/tournaments", None, None))[1]["tournaments"][0]["id"] == tid
    assert (await call("POST", f"/api/tournaments/{tid}/pause", {}, None))[0] == 401
    assert (await call("POST", f"/api/tournaments/{tid}/pause", {}))[1]["status"] == "paused"
    assert (await call("POST", f"/api/tournaments/{tid}/resume", {}))[1]["status"] == "running"
    assert (await call("POST", f"/api/tournaments/{tid}/cancel", {}))[1]["status"] == "cancelled"
    code, reply = await call("POST", f"/api/tournaments/{tid}/resume", {})
    assert (code, reply["error"]) == (400, f"tournament {tid} is cancelled: cannot resume it")
    assert (await call("GET", "/api/tournaments/999", None, None))[0] == 404
    assert (await call("POST", "/api/tournaments/999/pause", {}))[0] == 404
    code, status = await call("GET", f"/api/tournaments/{tid}", None, None)
    assert code == 200 and status["status"] == "cancelled" and status["bots"][1]["name"] == "bob"
    tournament_routes = {(r, int(c)) for r, codes in ROUTES.items() for c in codes if "/tourn" in r}
    assert seen == tournament_routes


def route_pattern(route: str) -> str:
    """``"GET /api/tournaments/{id}"`` -> a regex matching the requests it answers."""
    return re.sub(r"\\\{\w+\\\}", "[^/?]+", re.escape(route))


async def test_a_bot_that_stops_moving_loses_on_time_and_the_unrated_tournament_goes_on(
    server: ArenaServer, autobots: Bots, store: Store
) -> None:
    await autobots("alice")
    await autobots("bob", stall_after=1)  # one move, then silence: it loses on time
    tid = await scheduler_of(server).create(
        settings(("alice", "bob"), games_per_pair=4, move_ms=100, rated=False),
        OpeningSuite("test", ((),)),
    )
    status = await wait_until(server, tid, "finished")
    games = status["games"]
    assert status["progress"]["counted"] == 4
    assert sum(g["termination"] == "timeout" for g in games) == 1
    record = await store.get_match(games[0]["match_id"])
    assert record is not None and not record.rated
    assert await store.leaderboard(GAME) == []  # unrated: no rating moved
