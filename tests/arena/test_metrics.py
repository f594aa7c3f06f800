"""``GET /metrics`` scraped over HTTP from real servers and read with prometheus_client's own
text parser: the figures follow play, logins and the store, one registry per server."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from test_server_http import http_get

from arena.server import ArenaServer
from protocol.messages import PROTOCOL_VERSION, MatchEnd, Moved, YourTurn

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(server: ArenaServer) -> Samples:
    """Every sample of ``/metrics``, by name and sorted labels."""
    status, headers, text = await http_get(server.port, "/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[name, tuple(sorted(labels.items()))]


async def test_metrics_follow_play_logins_and_the_store(
    server: ArenaServer, start_match: Any, connect_client: Any, spectator: Any
) -> None:
    pair = await start_match(game="connect4")
    await spectator()
    moves = 0
    for seat, column in ((pair.x, 3), (pair.o, 3), (pair.x, 4)):
        await seat.move(await seat.expect(YourTurn), column)
        await pair.x.expect(Moved)
        moves += 1
    intruder = await connect_client()
    await intruder.send(type="hello", role="bot", version=PROTOCOL_VERSION, name="alice", token="x")
    await intruder.expect_error("auth_failed")

    live = await scrape(server)
    assert value(live, "arena_live_matches") == 1
    assert value(live, "arena_bots_connected") == 2
    assert value(live, "arena_spectators_connected") == 1
    assert value(live, "arena_moves_total") == moves == 3
    assert value(live, "arena_matches_started_total") == 1
    assert value(live, "arena_move_handling_seconds_count") == 3
    assert 0 < value(live, "arena_move_handling_seconds_sum") < 1
    assert value(live, "arena_move_handling_seconds_bucket", le="+Inf") == 3
    assert value(live, "arena_failed_logins_total") == 1
    assert value(live, "arena_store_health", state="ok") == 1
    assert value(live, "arena_store_health", state="degraded") == 0
    assert ("process_resident_memory_bytes", ()) in live

    await pair.o.send(type="resign", match_id=pair.match_id)
    await pair.x.expect(MatchEnd)
    await server.store.flush()
    done = await scrape(server)
    assert value(done, "arena_live_matches") == 0
    assert value(done, "arena_matches_ended_total", game="connect4", termination="resign") == 1
    commits = value(done, "arena_store_commit_seconds_count")
    assert commits >= 1 and value(done, "arena_store_commit_seconds_bucket", le="+Inf") == commits
    buckets = sorted(
        (float(dict(labels)["le"]), n)
        for (name, labels), n in done.items()
        if name == "arena_store_commit_seconds_bucket"
    )
    assert [n for _, n in buckets] == sorted(n for _, n in buckets)  # cumulative
    assert value(done, "arena_store_write_queue", kind="moves") == 0


async def test_each_server_has_its_own_registry(
    server: ArenaServer, make_server: Any, start_match: Any
) -> None:
    other = await make_server()
    pair = await start_match(game="tictactoe")
    await pair.x.move(await pair.x.expect(YourTurn), 4)
    await pair.x.expect(Moved)
    mine, theirs = await asyncio.gather(scrape(server), scrape(other))
    assert value(mine, "arena_moves_total") == 1 and value(theirs, "arena_moves_total") == 0
    assert value(mine, "arena_live_matches") == 1 and value(theirs, "arena_live_matches") == 0


async def test_openmetrics_is_served_when_asked_for(server: ArenaServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; "
        b"version=1.0.0\r\n\r\n"
    )
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"content-type: application/openmetrics-text" in head.lower()
    assert body.rstrip().endswith(b"# EOF")
