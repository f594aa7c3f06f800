"""The server's door: request-head limits, websocket paths, TLS, per-address caps, idle closes."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import ssl
from pathlib import Path
from typing import Any

import pytest
from conftest import ClientFactory
from test_server_http import http_get
from test_server_security import try_login
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

import arena.net.listener
from arena.net.crowd import CrowdLimits
from arena.play.clock import ManualClock
from arena.server import ArenaServer
from protocol.messages import PROTOCOL_VERSION, Welcome


async def raw_exchange(port: int, data: bytes, *, host: str = "127.0.0.1") -> bytes:
    """Send ``data`` and read until the server closes (a generous bound, not a timing)."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer else 0


async def test_a_request_head_over_16_kb_gets_431(server: ArenaServer) -> None:
    big = "X-Filler: " + "a" * 100_000
    answer = await raw_exchange(
        server.port, f"GET /healthz HTTP/1.1\r\nHost: x\r\n{big}\r\n\r\n".encode()
    )
    assert status_of(answer) == 431 and b"request head over 16384 bytes" in answer
    assert server.refusals.totals["head_too_large"] == 1
    # Just under the limit is fine.
    fits = "X-Filler: " + "a" * 15_000
    answer = await raw_exchange(
        server.port, f"GET /healthz HTTP/1.1\r\nHost: x\r\n{fits}\r\n\r\n".encode()
    )
    assert status_of(answer) == 200


async def test_a_body_announced_too_large_gets_413_before_it_is_sent(server: ArenaServer) -> None:
    head = b"POST /api/tournaments HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"
    answer = await raw_exchange(server.port, head)  # no body follows: only the head decides
    assert status_of(answer) == 413 and server.refusals.totals["body_too_large"] == 1


@pytest.mark.parametrize("path", ["/api/matches", "/healthz", "/x/"])
async def test_a_websocket_upgrade_off_the_documented_path_gets_404(
    server: ArenaServer, path: str
) -> None:
    with pytest.raises(InvalidStatus) as refused:
        await connect(f"ws://127.0.0.1:{server.port}{path}")
    assert refused.value.response.status_code == 404
    assert server.refusals.totals["websocket_path"] == 1
    async with connect(f"ws://127.0.0.1:{server.port}/?anything") as ws:
        await ws.send(json.dumps({"type": "hello", "role": "spectator", "version": 1}))
        assert json.loads(await ws.recv())["type"] in ("welcome", "error")


async def test_plain_http_on_the_tls_port_gets_a_400_naming_https(
    make_server: Any, certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate
    server = await make_server(tls_cert=str(cert), tls_key=str(key))
    answer = await raw_exchange(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(answer) == 400 and b"use https:// or wss://" in answer
    assert server.refusals.totals["plain_http_on_tls"] == 1
    # TLS still works on the same port.
    trusting = ssl.create_default_context(cafile=str(cert))
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port, ssl=trusting)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert (await asyncio.wait_for(reader.read(), 30)).startswith(b"HTTP/1.1 200")
    writer.close()


async def test_a_connection_that_never_starts_tls_is_closed(
    make_server: Any, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena.net.listener, "TLS_HANDSHAKE_TIMEOUT_S", 0.2)
    cert, key = certificate
    server = await make_server(tls_cert=str(cert), tls_key=str(key))
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    # Sends nothing: closed by the handshake deadline (here 0.2 s; 30 s is only a bound).
    assert await asyncio.wait_for(reader.read(), 30) == b""
    writer.close()
    assert server.refusals.totals["tls_handshake"] == 1
    assert server.crowd.open_total == 0


async def test_dns_rebinding_cannot_open_a_websocket(
    make_server: Any, tokens: dict[str, str]
) -> None:
    server = await make_server(public_url="ws://arena.example.org:8765")
    # The page's name resolves to the arena: its Origin and the Host sent agree.
    evil = f"evil.example:{server.port}"
    with pytest.raises(InvalidStatus) as refused:
        await connect(f"ws://{evil}/", host="127.0.0.1", port=server.port, origin=f"http://{evil}")
    assert refused.value.response.status_code == 403
    # The public URL's origin, and the address the server was reached at, are its own.
    for origin in ("http://arena.example.org:8765", f"http://127.0.0.1:{server.port}"):
        reply = await try_login(
            server.port, "alice", tokens["alice"], additional_headers={"Origin": origin}
        )
        assert reply["type"] == "welcome"


async def test_an_idle_spectator_is_closed_and_a_watching_one_is_not(
    make_server: Any, tokens: dict[str, str], connect_client: ClientFactory
) -> None:
    clock = ManualClock()
    server = await make_server(clock=clock)
    idle, watching = await connect_client(server), await connect_client(server)
    for client in (idle, watching):
        await client.send(type="hello", role="spectator", version=PROTOCOL_VERSION)
        await client.expect(Welcome)
    await watching.send(type="watch")
    await asyncio.sleep(0)  # let the server take the watch
    for _ in range(20):
        if server.hub.watcher_count:
            break
        await asyncio.sleep(0.05)
    clock.advance(server.config.crowd.spectator_idle_s + 1)
    server.gateway.close_idle()
    assert "watching nothing for 60 s" in (await idle.expect_error("idle")).message
    assert await idle.closed() == 1008
    assert server.refusals.totals["idle_spectator"] == 1
    assert sum(1 for c in server.gateway.connections if c.role == "spectator") == 1


async def open_spectators(port: int, count: int, address: str) -> list[Any]:
    """``count`` websocket connections from ``address`` (a loopback alias), hello sent."""
    opened = []
    for _ in range(count):
        try:
            ws = await connect(f"ws://127.0.0.1:{port}/", local_addr=(address, 0))
        except (InvalidStatus, OSError):
            continue
        await ws.send(json.dumps({"type": "hello", "role": "spectator", "version": 1}))
        opened.append(ws)
    return opened


async def test_one_address_over_its_cap_does_not_lock_out_another(
    make_server: Any, tokens: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    server = await make_server(crowd=CrowdLimits(max_per_address=20))
    crowd = await open_spectators(server.port, 30, "127.0.0.2")
    try:
        assert len(crowd) == 20 and server.crowd.of("127.0.0.2") == 20
        assert server.refusals.totals["address_cap"] == 10
        status, _, health = await http_get(server.port, "/healthz")  # from 127.0.0.1
        assert status == 200 and health["refused"]["address_cap"] == 10
        assert health["open_connections"] >= 21
        assert (await try_login(server.port, "alice", tokens["alice"]))["type"] == "welcome"
        _, _, metrics = await http_get(server.port, "/metrics")
        assert 'arena_refusals_total{reason="address_cap"} 10.0' in metrics
        caplog.set_level(logging.WARNING, logger="arena.refusals")
        server.refusals.log_summary()
        [line] = [r.getMessage() for r in caplog.records if r.name == "arena.refusals"]
        assert "address_cap 10" in line and "most from 127.0.0.2 (10)" in line
        server.refusals.log_summary()  # nothing new: no line
        assert len([r for r in caplog.records if r.name == "arena.refusals"]) == 1
    finally:
        for ws in crowd:
            await ws.close()


def test_loopback_aliases_work_here() -> None:
    """The tests above need 127.0.0.2 (Linux routes all of 127/8 to loopback)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.2", 0))
