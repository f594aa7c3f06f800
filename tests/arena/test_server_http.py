"""Plain HTTP on the websocket port: health, leaderboard, live and stored matches, routing."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from arena.net.http import HttpRequest, HttpResponse, json_response
from arena.server import ArenaServer
from protocol.messages import LeaderboardReply, MatchEnd, Moved, YourTurn


async def http_get(
    port: int, path: str, method: str = "GET", body: bytes = b""
) -> tuple[int, dict[str, str], Any]:
    """A minimal HTTP/1.1 request over a raw socket (the server closes after answering)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    length = f"Content-Length: {len(body)}\r\n" if body or method in ("POST", "PUT") else ""
    head = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\n{length}\r\n"
    writer.write(head.encode() + body)
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if headers.get("content-type", "").startswith("application/json"):
        return status, headers, json.loads(body)
    return status, headers, body.decode()


async def test_healthz(server: ArenaServer, bot: Any) -> None:
    await bot("alice")
    status, headers, body = await http_get(server.port, "/healthz")
    assert status == 200 and headers["content-type"] == "application/json"
    assert body["status"] == "ok" and body["bots_online"] == 1 and body["live_matches"] == 0
    server.health_extras["mqtt"] = lambda: {"connected": False}
    assert (await http_get(server.port, "/healthz"))[2]["mqtt"] == {"connected": False}


async def test_leaderboard_live_and_finished_matches(
    server: ArenaServer, start_match: Any, bot: Any
) -> None:
    pair = await start_match(game="tictactoe")
    await pair.x.move(await pair.x.expect(YourTurn), 4)
    await pair.x.expect(Moved)
    _, _, live = await http_get(server.port, "/api/matches?status=live")
    [summary] = live["matches"]
    assert summary["id"] == pair.match_id and summary["ply"] == 1
    await pair.o.send(type="resign", match_id=pair.match_id)
    await pair.x.expect(MatchEnd)
    status, _, record = await http_get(server.port, f"/api/matches/{pair.match_id}")
    assert status == 200 and record["status"] == "finished" and record["termination"] == "resign"
    assert [m["move"] for m in record["moves"]] == [4]
    assert (await http_get(server.port, "/api/matches?status=live"))[2]["matches"] == []
    _, _, finished = await http_get(server.port, "/api/matches?status=finished")
    assert [m["id"] for m in finished["matches"]] == [pair.match_id]
    status, _, board = await http_get(server.port, "/api/leaderboard?game=tictactoe")
    assert status == 200 and board["game"] == "tictactoe"
    rows = {row["bot"]: row for row in board["entries"]}
    x_name = pair.names[0]
    assert rows[x_name]["wins"] == 1 and rows[x_name]["rank"] == 1 and rows[x_name]["online"]
    # The same table over the websocket.
    await pair.x.send(type="leaderboard", game="tictactoe", id="lb")
    reply = await pair.x.expect(LeaderboardReply)
    assert reply.id == "lb" and reply.entries[0].bot == x_name and reply.entries[0].online


async def test_http_errors(server: ArenaServer) -> None:
    assert (await http_get(server.port, "/api/matches/nope"))[0] == 404
    assert (await http_get(server.port, "/api/leaderboard"))[0] == 400
    assert (await http_get(server.port, "/api/leaderboard?game=chess"))[0] == 404
    assert (await http_get(server.port, "/nowhere"))[0] == 404
    assert (await http_get(server.port, "/api/matches?status=bogus"))[0] == 400


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("path", ["/healthz", "/api/leaderboard?game=connect4", "/api/matches"])
async def test_other_methods_get_405_with_allow(server: ArenaServer, method: str, path: str) -> None:
    status, headers, body = await http_get(server.port, path, method, b'{"x": 1}')
    assert status == 405 and headers["allow"] == "GET, HEAD"
    assert method in body["error"]


async def test_a_body_on_a_get_is_refused_not_ignored(server: ArenaServer) -> None:
    status, _, body = await http_get(server.port, "/healthz", "GET", b"surprise")
    assert status == 400 and "body" in body["error"]


async def test_head_is_get_without_the_body(server: ArenaServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"HEAD /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"content-length: " in head.lower()
    assert rest == b""


async def test_malformed_requests_are_answered_400(server: ArenaServer) -> None:
    for raw in (b"NOT HTTP AT ALL\r\n\r\n", b"GET / HTTP/1.1\r\nBad Header\r\n\r\n"):
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(raw)
        answer = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 400"), answer


async def test_the_route_table_takes_extra_routes(server: ArenaServer) -> None:
    async def page(request: HttpRequest) -> HttpResponse:
        body = f"<h1>{request.params['match_id']}</h1>".encode()
        return HttpResponse(200, body, "text/html", {"ETag": '"v1"', "Cache-Control": "max-age=60"})

    async def broken(request: HttpRequest) -> HttpResponse:
        raise RuntimeError("bug")

    server.router.add(r"/extra/(?P<match_id>\w+)", page)
    server.router.add(r"/broken", broken)
    status, headers, body = await http_get(server.port, "/extra/abc")
    assert (status, headers["content-type"], body) == (200, "text/html", "<h1>abc</h1>")
    assert (headers["etag"], headers["cache-control"]) == ('"v1"', "max-age=60")
    assert (await http_get(server.port, "/broken"))[0] == 500
    assert json.loads(json_response({"a": (1, 2)}).body) == {"a": [1, 2]}
