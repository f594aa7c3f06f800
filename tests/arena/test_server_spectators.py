"""Spectators over real sockets: snapshots, numbered events, resume, privacy, limits, drops."""

from __future__ import annotations

from typing import Any

from arena.server import ArenaServer
from protocol.messages import Event, MatchStart, Moved, Snapshot, YourTurn

ANALYSIS = {
    "simulations": 4321,
    "sims_per_s": 1000.5,
    "value": 0.4,
    "depth": 7,
    "moves": [{"move": 3, "visits": 4000, "value": 0.4}],
}


async def play(pair: Any, seat: int, move: int, **extra: Any) -> None:
    client = pair.seat(seat)
    turn = await client.expect(YourTurn)
    await client.move(turn, move, **extra)
    await client.expect(Moved)


async def test_watch_gets_a_snapshot_then_numbered_events_with_analysis(
    server: ArenaServer, start_match: Any, spectator: Any
) -> None:
    pair = await start_match()
    await play(pair, 0, 3)
    watcher = await spectator()
    await watcher.send(type="watch", match_id=pair.match_id)
    snapshot = await watcher.expect(Snapshot)
    assert (snapshot.status, snapshot.moves, snapshot.last_event) == ("live", (3,), 1)
    assert snapshot.players == pair.names and snapshot.end is None
    await play(pair, 1, 3, analysis=ANALYSIS)
    event = await watcher.expect(Event)
    assert (event.seq, event.kind, event.moved.move) == (2, "moved", 3)
    assert event.analysis is not None and event.analysis.simulations == 4321
    # The opponent bot never sees the analysis.
    assert all("simulations" not in m.to_json() for m in pair.x.seen)
    await pair.x.send(type="resign", match_id=pair.match_id)
    end = await watcher.expect(Event)
    assert (end.seq, end.kind, end.end.termination) == (3, "match_end", "resign")


async def test_resume_since_replays_missed_events_without_gaps(
    server: ArenaServer, start_match: Any, spectator: Any
) -> None:
    pair = await start_match()
    watcher = await spectator()
    await watcher.send(type="watch", match_id=pair.match_id)
    await watcher.expect(Snapshot)
    await play(pair, 0, 3)
    assert (await watcher.expect(Event)).seq == 1
    await watcher.close()
    for seat, move in [(1, 2), (0, 4), (1, 5)]:
        await play(pair, seat, move)
    again = await spectator()
    await again.send(type="watch", match_id=pair.match_id, since=1)
    replayed = [await again.expect(Event) for _ in range(3)]
    assert [e.seq for e in replayed] == [2, 3, 4]
    assert [e.moved.move for e in replayed] == [2, 4, 5]
    await play(pair, 0, 6)
    assert (await again.expect(Event)).seq == 5


async def test_resume_from_too_far_back_gets_a_fresh_snapshot(
    make_server: Any, tokens: Any, bot: Any, spectator: Any
) -> None:
    server = await make_server(spectator_buffer=2)
    alice, bob = await bot("alice", target=server), await bot("bob", target=server)
    for client in (alice, bob):
        await client.send(type="seek", game="connect4", time_control={"move_ms": 2000})
    start = await alice.expect(MatchStart)
    await bob.expect(MatchStart)
    seats = (alice, bob) if start.you == 0 else (bob, alice)
    for ply in range(4):
        mover = seats[ply % 2]
        await mover.move(await mover.expect(YourTurn), ply)
        await mover.expect(Moved)
    watcher = await spectator(server)
    match_id = start.match_id
    await watcher.send(type="watch", match_id=match_id, since=1)  # only events 3 and 4 are kept
    snapshot = await watcher.expect(Snapshot)
    assert snapshot.moves == (0, 1, 2, 3) and snapshot.last_event == 4
    again = await spectator(server)
    await again.send(type="watch", match_id=match_id, since=2)  # 3 and 4 are kept: no gap
    replayed = [await again.expect(Event) for _ in range(2)]
    assert [(e.seq, e.moved.move) for e in replayed] == [(3, 2), (4, 3)]


async def test_watch_all_follows_new_matches(
    server: ArenaServer, start_match: Any, spectator: Any
) -> None:
    watcher = await spectator()
    await watcher.send(type="watch")
    pair = await start_match(game="tictactoe")
    snapshot = await watcher.expect(Snapshot)
    assert snapshot.match_id == pair.match_id and snapshot.moves == ()
    await play(pair, 0, 4)
    event = await watcher.expect(Event)
    assert (event.match_id, event.seq) == (pair.match_id, 1)
    await watcher.send(type="unwatch")
    await watcher.send(type="games")
    assert (await watcher.recv()).type == "games"
    await play(pair, 1, 0)
    await watcher.send(type="games")
    assert (await watcher.recv()).type == "games"  # no event after unwatch


async def test_spectators_cannot_play_and_unknown_matches_are_errors(
    server: ArenaServer, start_match: Any, spectator: Any
) -> None:
    pair = await start_match()
    watcher = await spectator()
    for message in (
        {"type": "move", "match_id": pair.match_id, "ply": 0, "move": 3},
        {"type": "resign", "match_id": pair.match_id},
        {"type": "seek", "game": "connect4", "time_control": {"move_ms": 1000}},
    ):
        await watcher.send(**message)
        await watcher.expect_error("forbidden")
    await watcher.send(type="watch", match_id="nope")
    await watcher.expect_error("no_such_match")
    await watcher.send(type="games", id="x" * 60 + "!" * 2)
    assert (await watcher.recv()).type == "games"
    await watcher.send(type="games", padding="x" * 1100)
    await watcher.expect_error("too_large")
    # Bots may not watch: they would see their opponent's analysis.
    await pair.x.send(type="watch", match_id=pair.match_id)
    await pair.x.expect_error("forbidden")
    assert pair.start.ply == 0


async def test_a_spectator_whose_queue_overflows_is_dropped_and_play_goes_on(
    make_server: Any, tokens: Any, bot: Any, spectator: Any
) -> None:
    server = await make_server(spectator_queue_size=1)
    names = ("alice", "bob", "carol", "dave")
    clients = [await bot(name, target=server) for name in names]
    for client in clients:
        await client.send(type="seek", game="connect4", time_control={"move_ms": 2000})
    for client in clients:
        await client.expect(MatchStart)
    assert len(server.hub.live_matches()) == 2
    watcher = await spectator(server)
    await watcher.send(type="watch")  # two snapshots at once: more than the queue holds
    assert await watcher.closed() == 1008
    healthy = await spectator(server)
    await healthy.send(type="watch", match_id=server.hub.live_matches()[0].match_id)
    assert (await healthy.expect(Snapshot)).status == "live"
