"""Guests over real sockets: people who play a bot from the viewer, with no account or token.

A guest may only challenge an online bot whose hello accepts guests in that
game, its matches are never rated (nor shown a rating), it can only move in
its own match, and its challenges are rate-limited per address.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Client, ClientFactory
from http_schema import check_route
from test_server_http import http_get

from arena.errors import InvalidBotNameError
from arena.play.clock import ManualClock
from arena.play.guests import GUEST_ACCOUNT, GUEST_PREFIX, GuestLimits
from arena.server import ArenaServer
from arena.store import Store
from protocol.messages import (
    PROTOCOL_VERSION,
    ChallengeDeclined,
    ChallengeReceived,
    MatchEnd,
    MatchStart,
    Snapshot,
    Welcome,
    YourTurn,
)

TC = {"move_ms": 5000, "bank_ms": 0}
GuestFactory = Callable[[], Awaitable[tuple[Client, str]]]


@pytest.fixture
async def guest(connect_client: ClientFactory) -> GuestFactory:
    """Connect a guest and complete its hello: ``client, name = await guest()``."""

    async def factory() -> tuple[Client, str]:
        client = await connect_client()
        await client.send(type="hello", role="guest", version=PROTOCOL_VERSION)
        welcome = await client.expect(Welcome)
        assert welcome.role == "guest" and welcome.name is not None
        return client, welcome.name

    return factory


@pytest.fixture
async def host_bot(
    connect_client: ClientFactory, tokens: dict[str, str]
) -> Callable[..., Awaitable[Client]]:
    """Connect a registered bot whose hello accepts guests in ``guests``."""

    async def factory(name: str, guests: tuple[str, ...] = ("tictactoe",)) -> Client:
        client = await connect_client()
        await client.send(
            type="hello",
            role="bot",
            version=PROTOCOL_VERSION,
            name=name,
            token=tokens[name],
            guests=list(guests),
        )
        await client.expect(Welcome)
        return client

    return factory


async def guest_match(guest: GuestFactory, host: Client) -> tuple[Client, str, MatchStart]:
    """A guest challenges ``host``, which accepts; returns the guest, its name and its start."""
    client, name = await guest()
    await client.send(type="challenge", opponent="alice", game="tictactoe", time_control=TC)
    challenge = await host.expect(ChallengeReceived)
    assert challenge.challenger == name
    await host.send(type="accept", challenge_id=challenge.challenge_id)
    start = await client.expect(MatchStart)
    await host.expect(MatchStart)
    return client, name, start


async def test_a_guest_is_named_by_the_server_and_needs_no_token(guest: GuestFactory) -> None:
    _, first = await guest()
    _, second = await guest()
    assert first.startswith(GUEST_PREFIX) and second.startswith(GUEST_PREFIX)
    assert first != second


async def test_a_guest_hello_with_a_token_is_refused(connect_client: ClientFactory) -> None:
    client = await connect_client()
    await client.send(type="hello", role="guest", version=PROTOCOL_VERSION, token="a" * 32)
    error = await client.expect_error("bad_value")
    assert "a guest hello has no token" in error.message


async def test_api_play_lists_the_bots_online_that_accept_guests(
    server: ArenaServer, host_bot: Any, bot: Any
) -> None:
    await host_bot("alice", ("tictactoe", "connect4"))
    await bot("bob")  # accepts no guests: not listed
    status, _, body = await http_get(server.port, "/api/play")
    assert status == 200
    check_route("/api/play", 200, body)
    assert body == {"bots": [{"bot": "alice", "games": ["connect4", "tictactoe"], "busy": False}]}


async def test_a_guest_plays_an_unrated_match_stored_under_the_guest_account(
    server: ArenaServer,
    store: Store,
    host_bot: Any,
    guest: GuestFactory,
    spectator: Any,
    tmp_path: Path,
) -> None:
    alice = await host_bot("alice")
    client, name, start = await guest_match(guest, alice)
    assert name in start.players and "alice" in start.players
    watcher = await spectator()
    await watcher.send(type="watch", match_id=start.match_id)
    snapshot = await watcher.expect(Snapshot)
    assert snapshot.ratings is None  # a guest is never shown a rating
    _, _, body = await http_get(server.port, "/api/play")
    assert body["bots"] == [{"bot": "alice", "games": ["tictactoe"], "busy": True}]
    # Both play the lowest legal cell until the game ends.
    players = {name: client, "alice": alice}
    end: MatchEnd | None = None
    while end is None:
        for player in players.values():
            message = await player.recv()
            if isinstance(message, YourTurn):
                await player.move(message, min(message.legal_moves))
            elif isinstance(message, MatchEnd):
                end = message
    assert end.rated is False
    record = await store.get_match(start.match_id)
    assert record is not None
    assert sorted(record.players) == sorted(("alice", GUEST_ACCOUNT))
    assert record.rated is False and record.status == "finished"
    assert await store.rating("alice", "tictactoe") is None
    # The guest account is not a bot an operator manages: `bots list` leaves it out.
    listing = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena", "bots", "list", "--db", str(tmp_path / "arena.db"),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out = (await listing.communicate())[0].decode()
    assert listing.returncode == 0 and "alice" in out
    assert GUEST_ACCOUNT not in out.split()


async def test_a_guest_can_move_only_in_its_own_match(
    server: ArenaServer, host_bot: Any, guest: GuestFactory, start_match: Any
) -> None:
    pair = await start_match(game="tictactoe")
    intruder, _ = await guest()
    await intruder.send(type="move", match_id=pair.match_id, ply=0, move=4)
    assert "does not play in match" in (await intruder.expect_error("not_a_player")).message
    await intruder.send(type="resign", match_id=pair.match_id)
    await intruder.expect_error("not_a_player")
    # Nor in another guest's match, though both are guests.
    carol = await host_bot("carol")
    _, _, start = await guest_match_with(guest, carol, "carol")
    await intruder.send(type="move", match_id=start.match_id, ply=0, move=4)
    await intruder.expect_error("not_a_player")


async def guest_match_with(
    guest: GuestFactory, host: Client, host_name: str
) -> tuple[Client, str, MatchStart]:
    """``guest_match`` against a host other than alice."""
    client, name = await guest()
    await client.send(type="challenge", opponent=host_name, game="tictactoe", time_control=TC)
    challenge = await host.expect(ChallengeReceived)
    await host.send(type="accept", challenge_id=challenge.challenge_id)
    return client, name, await client.expect(MatchStart)


async def test_a_guest_cannot_play_rated_or_challenge_a_bot_that_does_not_accept_guests(
    server: ArenaServer, host_bot: Any, bot: Any, guest: GuestFactory
) -> None:
    await host_bot("alice", ("connect4",))
    await bot("bob")
    client, _ = await guest()
    await client.send(type="seek", game="tictactoe", time_control=TC, id="s1")
    error = await client.expect_error("forbidden")
    assert error.ref == "s1" and "a guest may not send seek" in error.message
    await client.send(type="challenge", opponent="bob", game="tictactoe", time_control=TC)
    assert "bob does not accept guest" in (await client.expect_error("forbidden")).message
    await client.send(type="challenge", opponent="alice", game="tictactoe", time_control=TC)
    assert "alice does not accept guest" in (await client.expect_error("forbidden")).message
    await client.send(type="challenge", opponent="nobody", game="tictactoe", time_control=TC)
    await client.expect_error("no_such_bot")
    await client.send(type="watch")
    await client.expect_error("forbidden")


async def test_a_declined_guest_challenge_is_told(
    server: ArenaServer, host_bot: Any, guest: GuestFactory
) -> None:
    alice = await host_bot("alice")
    client, _ = await guest()
    await client.send(type="challenge", opponent="alice", game="tictactoe", time_control=TC)
    challenge = await alice.expect(ChallengeReceived)
    await alice.send(type="decline", challenge_id=challenge.challenge_id)
    declined = await client.expect(ChallengeDeclined)
    assert (declined.challenge_id, declined.by) == (challenge.challenge_id, "alice")


async def test_guest_challenges_are_rate_limited_per_address(
    server: ArenaServer, guest: GuestFactory
) -> None:
    burst = server.gateway.limits.guests.games_burst
    first, _ = await guest()
    for _ in range(burst):
        await first.send(type="challenge", opponent="nobody", game="tictactoe", time_control=TC)
        await first.expect_error("no_such_bot")
    # A new connection from the same address does not start afresh.
    second, _ = await guest()
    await second.send(type="challenge", opponent="nobody", game="tictactoe", time_control=TC)
    error = await second.expect_error("rate_limited")
    assert "too many guest games from your address; retry in" in error.message


async def test_no_bot_can_be_registered_or_log_in_as_the_guest_account(store: Store) -> None:
    for name in (GUEST_ACCOUNT, GUEST_ACCOUNT.upper()):
        with pytest.raises(InvalidBotNameError, match="where guests' matches are recorded"):
            await store.add_bot(name)
    with pytest.raises(InvalidBotNameError, match="where guests' matches are recorded"):
        await store.reset_token(GUEST_ACCOUNT, reactivate=True)


@pytest.mark.parametrize(
    ("time_control", "refused"),
    [
        ({"move_ms": 600_000, "bank_ms": 0}, "move_ms must be within 50-60000"),
        ({"move_ms": 5_000, "bank_ms": 3_600_000}, "bank_ms must be within 0-300000"),
    ],
)
async def test_a_guest_cannot_hold_a_bot_for_an_hour(
    server: ArenaServer,
    host_bot: Any,
    guest: GuestFactory,
    time_control: dict[str, int],
    refused: str,
) -> None:
    await host_bot("alice")
    client, _ = await guest()
    await client.send(
        type="challenge", opponent="alice", game="tictactoe", time_control=time_control
    )
    assert refused in (await client.expect_error("bad_value")).message


async def test_guest_games_are_capped_per_bot_and_per_server(
    make_server: Any, tokens: dict[str, str], connect_client: ClientFactory
) -> None:
    server = await make_server(guests=GuestLimits(max_games=2, max_games_per_bot=1, games_burst=10))

    async def host(name: str) -> Client:
        client = await connect_client(server)
        await client.send(
            type="hello", role="bot", version=PROTOCOL_VERSION, name=name,
            token=tokens[name], max_matches=5, guests=["tictactoe"],
        )  # fmt: skip
        await client.expect(Welcome)
        return client

    async def a_guest() -> Client:
        client = await connect_client(server)
        await client.send(type="hello", role="guest", version=PROTOCOL_VERSION)
        await client.expect(Welcome)
        return client

    async def play(opponent: Client, name: str) -> None:
        client = await a_guest()
        await client.send(type="challenge", opponent=name, game="tictactoe", time_control=TC)
        challenge = await opponent.expect(ChallengeReceived)
        await opponent.send(type="accept", challenge_id=challenge.challenge_id)
        await client.expect(MatchStart)

    alice, bob, carol = await host("alice"), await host("bob"), await host("carol")
    await play(alice, "alice")
    client = await a_guest()
    await client.send(type="challenge", opponent="alice", game="tictactoe", time_control=TC)
    assert (
        "alice already plays 1 guest games" in (await client.expect_error("rate_limited")).message
    )
    await play(bob, "bob")
    await client.send(type="challenge", opponent="carol", game="tictactoe", time_control=TC)
    error = await client.expect_error("rate_limited")
    assert "the server plays 2 guest games, its most" in error.message
    assert server.refusals.totals["guest_cap"] == 2
    del carol


async def test_an_idle_guest_is_closed_but_one_playing_is_not(
    make_server: Any, tokens: dict[str, str], connect_client: ClientFactory
) -> None:
    clock = ManualClock()
    server = await make_server(clock=clock)
    alice = await connect_client(server)
    await alice.send(
        type="hello", role="bot", version=PROTOCOL_VERSION, name="alice",
        token=tokens["alice"], guests=["tictactoe"],
    )  # fmt: skip
    await alice.expect(Welcome)
    idle, playing = await connect_client(server), await connect_client(server)
    for client in (idle, playing):
        await client.send(type="hello", role="guest", version=PROTOCOL_VERSION)
        await client.expect(Welcome)
    await playing.send(type="challenge", opponent="alice", game="tictactoe", time_control=TC)
    challenge = await alice.expect(ChallengeReceived)
    await alice.send(type="accept", challenge_id=challenge.challenge_id)
    await playing.expect(MatchStart)
    clock.advance(server.config.guests.idle_s + 1)
    server.gateway.close_idle()
    assert "no game for 120 s" in (await idle.expect_error("idle")).message
    assert await idle.closed() == 1008
    assert len(server.gateway.guests) == 1 and server.refusals.totals["idle_guest"] == 1
