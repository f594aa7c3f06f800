"""Abuse limits: message size, rate, repeated bad messages; and the clean shutdown."""

from __future__ import annotations

from typing import Any

from arena.server import ArenaServer
from protocol.messages import MAX_BOT_MESSAGE_BYTES, Error, Event, MatchEnd, Snapshot, YourTurn


async def test_a_message_over_16_kib_closes_with_1009(server: ArenaServer, bot: Any) -> None:
    alice = await bot("alice")
    await alice.send(type="games", padding="x" * (MAX_BOT_MESSAGE_BYTES + 1))
    assert await alice.closed() == 1009


async def test_a_bad_message_gets_a_coded_error_and_the_socket_stays_open(
    server: ArenaServer, bot: Any
) -> None:
    alice = await bot("alice")
    cases = [
        ("not json", "bad_json"),
        ("[1, 2]", "bad_message"),
        ('{"type": "dance"}', "unknown_type"),
        ('{"type": "seek", "game": "connect4"}', "missing_field"),
        ('{"type": "games", "colour": "red"}', "unknown_field"),
    ]
    for frame, code in cases:
        await alice.send_raw(frame)
        await alice.expect_error(code)
    await alice.send(type="games", id="still-here")
    assert (await alice.recv()).id == "still-here"


async def test_repeated_abuse_closes_with_1008(server: ArenaServer, bot: Any) -> None:
    alice = await bot("alice")
    for _ in range(25):
        await alice.send_raw("{")
    assert await alice.closed() == 1008
    codes = [m.code for m in alice.seen if isinstance(m, Error)]
    assert codes.count("bad_json") == 21  # 20 answers, then the goodbye


async def test_flooding_is_rate_limited(make_server: Any, tokens: Any, bot: Any) -> None:
    server = await make_server(rate_per_s=0.001, rate_burst=5)
    alice = await bot("alice", target=server)  # the hello took one token
    for _ in range(8):
        await alice.send(type="games")
    kinds = [(await alice.recv()).type for _ in range(8)]
    assert kinds == ["games"] * 4 + ["error"] * 4
    assert alice.seen[-1].code == "rate_limited"


async def test_shutdown_aborts_matches_unrated_and_tells_everyone(
    server: ArenaServer, start_match: Any, spectator: Any
) -> None:
    pair = await start_match()
    await pair.x.move(await pair.x.expect(YourTurn), 3)
    watcher = await spectator()
    await watcher.send(type="watch", match_id=pair.match_id)
    await watcher.expect(Snapshot)
    await server.shutdown()
    for client in (pair.x, pair.o):
        end = await client.expect(MatchEnd)
        assert (end.termination, end.fault, end.rated, end.result) == (
            "aborted",
            "infrastructure",
            False,
            "*",
        )
        await client.expect_error("server_shutdown")
        assert await client.closed() == 1001
    event = await watcher.expect(Event)
    assert event.kind == "match_end" and event.end.fault == "infrastructure"
    await watcher.expect_error("server_shutdown")
    assert await watcher.closed() == 1001
    record = await server.store.get_match(pair.match_id)
    assert record is not None and record.status == "aborted" and not record.rating_changes
