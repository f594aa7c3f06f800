"""A real ``arena serve`` started with a soft open-files limit of 1024 (a common default).

It raises the limit to the hard one and logs both; and however many idle
spectators one address opens, another address still logs in: the address's
cap (``arena.net.crowd``) refuses the excess with 429.
"""

from __future__ import annotations

import json
import resource
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_process import Bot, ServeProcess, add_bots
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from arena.net.crowd import MAX_CONNECTIONS_PER_ADDRESS

CROWD = 1_100


@pytest.fixture
def many_open_files() -> Iterator[None]:
    """This test process opens over a thousand sockets: its own soft limit goes up."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4 * CROWD:
        pytest.skip(f"the hard open-files limit {hard} is too low for this test")
    wanted = 4 * CROWD if soft != resource.RLIM_INFINITY and soft < 4 * CROWD else soft
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_1100_idle_spectators_from_one_address_lock_nobody_out(
    tmp_path: Path, many_open_files: None
) -> None:
    db = str(tmp_path / "arena.db")
    tokens = add_bots(db, tmp_path / "tokens", "alice")
    server = ServeProcess(db, "--db-writer", "inline", open_files=1024).start()
    crowd: list[ClientConnection] = []
    refused = 0
    try:
        for _ in range(CROWD):
            try:
                ws = await connect(server.url, local_addr=("127.0.0.2", 0), open_timeout=30)
            except InvalidStatus as exc:
                assert exc.response.status_code == 429
                refused += 1
                continue
            await ws.send(json.dumps({"type": "hello", "role": "spectator", "version": 1}))
            crowd.append(ws)
        assert len(crowd) == MAX_CONNECTIONS_PER_ADDRESS and refused == CROWD - len(crowd)
        # Another address (127.0.0.1) is served as if nothing happened.
        bot = await Bot.login(server.url, "alice", tokens["alice"])
        await bot.ws.close()
        status, health = server.health()
        assert status == 200 and health["refused"]["address_cap"] == refused
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=30) as r:
            assert f'arena_refusals_total{{reason="address_cap"}} {refused}.0' in r.read().decode()
    finally:
        for ws in crowd:
            await ws.close()
        assert server.stop() == 0
    assert server.process is not None and server.process.stderr is not None
    log = server.process.stderr.read()
    assert "open files: limit raised from 1024 to" in log
