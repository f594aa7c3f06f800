"""Fixtures for arena server tests: a real server on 127.0.0.1 port 0 over a tmp SQLite file,
and scripted websocket clients (well-behaved or deliberately not).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from disk_fixture import small_disk  # noqa: F401  (a fixture for every test here)
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from arena.play.clock import Clock
from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from protocol.messages import (
    PROTOCOL_VERSION,
    MatchStart,
    Message,
    ServerMessage,
    YourTurn,
    parse_server_message,
)

M = TypeVar("M", bound=Message)

RECV_TIMEOUT_S = 5.0
BOT_NAMES = ("alice", "bob", "carol", "dave")

TEST_CONFIG = ArenaConfig(
    host="127.0.0.1",
    port=0,
    move_ms=2000,
    grace_s=5.0,
    hello_timeout_s=1.0,
    ping_interval_s=1.0,
    close_timeout_s=2.0,
    pairing_window_s=0.01,
    seed=7,
    # Off: these tests script moves from the initial position with the colours the seed draws;
    # tests/arena/test_rated_openings.py turns it on.
    rated_openings=False,
)


@pytest.fixture
async def tokens(store: Store) -> dict[str, str]:
    """Registered bots: name -> token."""
    return {name: await store.add_bot(name) for name in BOT_NAMES}


ServerFactory = Callable[..., Awaitable[ArenaServer]]


@pytest.fixture
async def make_server(store: Store) -> AsyncIterator[ServerFactory]:
    """Start servers on port 0 sharing ``store``; ``await make_server(move_ms=200)`` overrides.

    ``clock=`` injects a clock (e.g. ``ManualClock``); every other keyword is a config field.
    """
    started: list[ArenaServer] = []

    async def factory(clock: Clock | None = None, **overrides: Any) -> ArenaServer:
        server = ArenaServer(replace(TEST_CONFIG, **overrides), store=store, clock=clock)
        await server.start()
        started.append(server)
        return server

    yield factory
    for server in started:
        await server.shutdown()


@pytest.fixture
async def server(make_server: ServerFactory, tokens: dict[str, str]) -> ArenaServer:
    """A server with the default test config and registered bots."""
    return await make_server()


class Client:
    """A scripted websocket client: send dicts or raw frames, read typed server messages."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[ServerMessage] = []

    async def send(self, **fields: Any) -> None:
        """Send one JSON message built from ``fields``."""
        await self.ws.send(json.dumps(fields))

    async def send_raw(self, frame: str | bytes) -> None:
        """Send a frame as is (malformed on purpose)."""
        await self.ws.send(frame)

    async def recv(self, timeout: float = RECV_TIMEOUT_S) -> ServerMessage:
        """The next server message (parsed, so the server's output is validated too)."""
        async with asyncio.timeout(timeout):
            frame = await self.ws.recv()
        message = parse_server_message(frame)
        self.seen.append(message)
        return message

    async def expect(self, kind: type[M], timeout: float = RECV_TIMEOUT_S) -> M:
        """Skip messages until one of class ``kind`` arrives."""
        async with asyncio.timeout(timeout):
            while True:
                message = await self.recv(timeout=timeout)
                if isinstance(message, kind):
                    return message

    async def expect_error(self, code: str, timeout: float = RECV_TIMEOUT_S) -> Any:
        """Skip messages until an ``error``, and check its code."""
        from protocol.messages import Error

        error = await self.expect(Error, timeout)
        assert error.code == code, error
        return error

    async def closed(self, timeout: float = RECV_TIMEOUT_S) -> int | None:
        """Drain until the server closes; returns the close code it sent."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    frame = await self.ws.recv()
                    self.seen.append(parse_server_message(frame))
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None

    async def move(self, turn: YourTurn, move: object, **extra: Any) -> None:
        """Answer ``turn`` with ``move``."""
        await self.send(type="move", match_id=turn.match_id, ply=turn.ply, move=move, **extra)

    async def close(self) -> None:
        """Close from the client side."""
        await self.ws.close()


ClientFactory = Callable[..., Awaitable[Client]]


@pytest.fixture
async def connect_client(server: ArenaServer) -> AsyncIterator[ClientFactory]:
    """Open raw clients to ``server`` (no hello sent); ``port`` reaches it through a relay."""
    opened: list[Client] = []

    async def factory(
        target: ArenaServer | None = None, port: int | None = None, **kwargs: Any
    ) -> Client:
        port = port or (target or server).port
        ws = await connect(f"ws://127.0.0.1:{port}/", compression=None, **kwargs)
        client = Client(ws)
        opened.append(client)
        return client

    yield factory
    for client in opened:
        await client.ws.close()


@pytest.fixture
async def bot(
    connect_client: ClientFactory, tokens: dict[str, str]
) -> Callable[..., Awaitable[Client]]:
    """Connect a registered bot and complete its hello: ``await bot("alice")``."""

    async def factory(
        name: str,
        max_matches: int = 1,
        target: ArenaServer | None = None,
        port: int | None = None,
        worker: bool = False,
        worker_id: str | None = None,
    ) -> Client:
        client = await connect_client(target, port)
        await client.send(
            type="hello",
            role="bot",
            version=PROTOCOL_VERSION,
            name=name,
            token=tokens[name],
            max_matches=max_matches,
            **({"worker": True} if worker else {}),
            **({"worker_id": worker_id} if worker_id is not None else {}),
        )
        welcome = await client.recv()
        assert welcome.type == "welcome", welcome
        return client

    return factory


@pytest.fixture
async def spectator(connect_client: ClientFactory) -> Callable[..., Awaitable[Client]]:
    """Connect a spectator and complete its hello."""

    async def factory(target: ArenaServer | None = None) -> Client:
        client = await connect_client(target)
        await client.send(type="hello", role="spectator", version=PROTOCOL_VERSION)
        welcome = await client.recv()
        assert welcome.type == "welcome", welcome
        return client

    return factory


BotFactory = Callable[..., Awaitable[Client]]


class Pair:
    """Two bots in one match, by seat: ``x`` moves first, ``o`` second."""

    def __init__(self, x: Client, o: Client, start: MatchStart, names: tuple[str, str]) -> None:
        self.x, self.o, self.start = x, o, start
        self.match_id = start.match_id
        self.names = names
        """Bot names by seat."""

    def seat(self, index: int) -> Client:
        """The client playing seat ``index``."""
        return self.x if index == 0 else self.o


StartMatch = Callable[..., Awaitable[Pair]]


@pytest.fixture
def start_match(bot: BotFactory) -> StartMatch:
    """``await start_match(game=..., move_ms=..., bank_ms=...)``: alice and bob seek and pair."""

    async def factory(a: str = "alice", b: str = "bob", game: str = "connect4", **tc: int) -> Pair:
        time_control = {"move_ms": tc.get("move_ms", 2000), "bank_ms": tc.get("bank_ms", 0)}
        first, second = await bot(a), await bot(b)
        await first.send(type="seek", game=game, time_control=time_control)
        await second.send(type="seek", game=game, time_control=time_control)
        start_a = await first.expect(MatchStart)
        start_b = await second.expect(MatchStart)
        assert start_a.match_id == start_b.match_id
        if start_a.you == 0:
            return Pair(first, second, start_a, start_a.players)
        return Pair(second, first, start_b, start_b.players)

    return factory


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    command = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1"
    extension = "subjectAltName=IP:127.0.0.1"
    subprocess.run(
        [*command.split(), "-keyout", str(key), "-out", str(cert), "-addext", extension],
        check=True,
        capture_output=True,
    )
    return cert, key
