"""The JSON API as documented: every route's answers against protocol/http-schema.json, and
``/api/matches`` paging (filters, limit, the ``before`` cursor) over a real store."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from http_schema import ROUTES, check_route
from test_server_http import http_get

from arena.server import ArenaServer
from arena.store import Store
from protocol.games import Termination
from protocol.messages import MatchEnd, Moved, YourTurn

DOCS = Path(__file__).parents[2] / "docs" / "http.md"


async def stored_matches(store: Store) -> list[str]:
    """Seven stored matches over three games and four bots, one left live; their ids."""
    plan = [
        ("connect4", ("alice", "bob"), "finished"),
        ("connect4", ("bob", "carol"), "finished"),
        ("tictactoe", ("alice", "carol"), "finished"),
        ("connect4", ("carol", "dave"), "aborted"),
        ("uttt", ("dave", "alice"), "finished"),
        ("connect4", ("alice", "dave"), "finished"),
        ("connect4", ("bob", "dave"), "live"),
    ]
    ids = []
    for game, players, status in plan:
        match_id = await store.create_match(game, players, 1000, 0)
        if status == "finished":
            await store.finish_match(match_id, 0, Termination.RESIGN, None, True, "resigned")
        elif status == "aborted":
            await store.finish_match(match_id, None, Termination.ABORTED, None, False, "no-show")
        ids.append(match_id)
    return ids


async def pages(port: int, query: str) -> list[list[dict[str, Any]]]:
    """Follow ``next`` from the first page to the last; every page is checked on the way."""
    out: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        path = f"/api/matches?{query}" + (f"&before={cursor}" if cursor else "")
        status, _, body = await http_get(port, path)
        assert status == 200, body
        check_route("/api/matches", 200, body)
        out.append(body["matches"])
        cursor = body["next"]
        if cursor is None:
            return out


async def test_paging_walks_every_match_newest_first_once(
    server: ArenaServer, store: Store
) -> None:
    ids = await stored_matches(store)
    walked = await pages(server.port, "limit=3")
    assert [len(page) for page in walked] == [3, 3, 1]
    assert [m["id"] for page in walked for m in page] == ids[::-1]
    # Exactly full last page: no empty page after it, next is null at once.
    assert [len(page) for page in await pages(server.port, "limit=7")] == [7]
    # A match started after the first page was read does not shift the later pages.
    _, _, first = await http_get(server.port, "/api/matches?limit=3")
    await store.create_match("connect4", ("carol", "alice"), 1000, 0)
    _, _, second = await http_get(server.port, f"/api/matches?limit=3&before={first['next']}")
    assert [m["id"] for m in second["matches"]] == ids[::-1][3:6]


async def test_filters_combine(server: ArenaServer, store: Store) -> None:
    ids = await stored_matches(store)

    async def listed(query: str) -> list[str]:
        return [m["id"] for page in await pages(server.port, query) for m in page]

    assert await listed("game=connect4&limit=2") == [ids[6], ids[5], ids[3], ids[1], ids[0]]
    assert await listed("bot=alice") == [ids[5], ids[4], ids[2], ids[0]]
    assert await listed("bot=alice&game=connect4&status=finished") == [ids[5], ids[0]]
    assert await listed("status=aborted") == [ids[3]]
    assert await listed("status=live&bot=dave") == [ids[6]]
    assert await listed("bot=nobody") == []
    _, _, body = await http_get(server.port, "/api/matches")
    assert len(body["matches"]) == 7 and body["next"] is None  # the default limit is 50
    finished = {m["id"]: m for m in body["matches"]}
    assert finished[ids[0]]["players"] == ["alice", "bob"] and finished[ids[0]]["result"] == "1-0"


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("limit=0", "limit must be a whole number from 1 to 500"),
        ("limit=501", "limit must be a whole number from 1 to 500"),
        ("limit=ten", "limit must be"),
        ("status=bogus", "status must be live, finished or aborted"),
        ("game=chess", "no such game: chess"),
        ("bot=a%20b", "bot must be a bot name"),
        ("before=not-a-cursor", "before must be a cursor"),
        ("sort=rating", "unknown query parameter: sort"),
    ],
)
async def test_bad_queries_are_400_saying_what_is_wrong(
    server: ArenaServer, query: str, words: str
) -> None:
    status, _, body = await http_get(server.port, f"/api/matches?{query}")
    assert status == 400 and words in body["error"], body
    check_route("/api/matches", 400, body)


async def test_limit_500_is_accepted(server: ArenaServer, store: Store) -> None:
    await stored_matches(store)
    status, _, body = await http_get(server.port, "/api/matches?limit=500")
    assert status == 200 and len(body["matches"]) == 7


async def test_every_route_answers_as_its_schema_says(
    server: ArenaServer, start_match: Any
) -> None:
    pair = await start_match(game="connect4")
    await pair.x.move(await pair.x.expect(YourTurn), 3)
    await pair.o.expect(Moved)
    _, _, live = await http_get(server.port, "/api/matches?status=live")
    assert live["matches"][0]["ply"] == 1 and live["matches"][0]["position"].endswith(" o")
    unfinished = f"/api/matches/{pair.match_id}"
    check_route("/api/matches/{match_id}", 200, (await http_get(server.port, unfinished))[2])
    await pair.o.send(type="resign", match_id=pair.match_id)
    await pair.x.expect(MatchEnd)
    a, b = pair.names
    answers = [
        ("/healthz", "/healthz"),
        ("/api/leaderboard", "/api/leaderboard?game=connect4"),
        ("/api/leaderboard", "/api/leaderboard"),
        ("/api/leaderboard", "/api/leaderboard?game=chess"),
        ("/api/matches", "/api/matches?status=live"),
        ("/api/matches", "/api/matches?limit=-1"),
        ("/api/matches/{match_id}", f"/api/matches/{pair.match_id}"),
        ("/api/matches/{match_id}", "/api/matches/nope"),
        ("/api/h2h", f"/api/h2h?game=connect4&a={a}&b={b}"),
        ("/api/h2h", f"/api/h2h?game=connect4&a={a}&b={a}"),
        ("/api/h2h", f"/api/h2h?game=connect4&a={a}&b=nobody"),
        ("/api/bots/{name}", f"/api/bots/{a}"),
        ("/api/bots/{name}", "/api/bots/nobody"),
        ("/api/play", "/api/play"),  # its rows: test_server_guests.py
    ]
    seen: set[tuple[str, int]] = set()
    for route, path in answers:
        status, _, body = await http_get(server.port, path)
        check_route(route, status, body)
        seen.add((route, status))
    gets = {(r.removeprefix("GET "), int(c)) for r, codes in ROUTES.items() for c in codes}
    # /healthz 503: see the next test; the tournament routes: test_tournament_scheduler.py
    assert seen == {(r, c) for r, c in gets if not r.startswith(("POST", "/api/tournaments"))} - {
        ("/healthz", 503)
    }
    _, _, page = await http_get(server.port, f"/api/bots/{a}")
    assert page["ratings"][0]["games"] == 1 and page["recent_matches"][0]["id"] == pair.match_id


async def test_a_degraded_health_answer_matches_its_schema(server: ArenaServer) -> None:
    await server.shutdown()
    status, body = server.health()
    assert status == 503 and body["status"] == "stopping"
    check_route("/healthz", 503, body)


def test_every_json_route_has_a_schema_and_a_doc_section(server: ArenaServer) -> None:
    text = DOCS.read_text("utf-8")
    json_routes = [
        f"{method} " + re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", path)
        for method, path in server.router.routes()
        if path.startswith(("/api", "/healthz"))
    ]
    assert sorted(json_routes) == sorted(ROUTES)
    for route in ROUTES:
        # As the doc writes parameters: /api/matches/{match_id} -> /api/matches/ID, {name} -> NAME
        documented = re.sub(r"\{(\w+)\}", lambda m: m[1].upper().removeprefix("MATCH_"), route)
        assert f"## `{documented}" in text, f"docs/http.md does not describe {route}"
        assert f"| `{documented}" in text, f"docs/http.md's table does not list {route}"
