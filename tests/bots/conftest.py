"""Fixtures of the bot client tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from tests.bots.scripted import Script, ScriptedServer


@pytest.fixture
async def scripted() -> AsyncIterator[Callable[[Script], Awaitable[ScriptedServer]]]:
    """``server = await scripted(script)``: a scripted server, closed after the test."""
    servers: list[ScriptedServer] = []

    async def start(script: Script) -> ScriptedServer:
        server = await ScriptedServer(script).__aenter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.__aexit__()
