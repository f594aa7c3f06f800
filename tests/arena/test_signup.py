"""Self-service sign-up (``POST /api/bots``, ``arena bots register``): off by default, names
checked, limited per address and in all, the token told once and working."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from serve_process import arena
from test_server_http import http_get

from arena.cli import remote
from arena.errors import ArenaError
from arena.net.signup import SignUpLimits
from arena.server import ArenaServer
from arena.store import Store


def sign_up(server: ArenaServer, name: Any) -> Any:
    """``POST /api/bots`` as ``arena bots register`` sends it; the answer (or ArenaError)."""
    return remote.call(f"http://127.0.0.1:{server.port}", "/api/bots", body={"name": name})


async def test_sign_up_is_closed_unless_the_operator_opens_it(server: ArenaServer) -> None:
    with pytest.raises(ArenaError, match="sign-up is closed on this server"):
        await asyncio.to_thread(sign_up, server, "newbie")


async def test_a_bot_signed_up_logs_in_with_the_token_it_was_told(
    make_server: Any, bot: Any, tokens: dict[str, str], store: Store
) -> None:
    server = await make_server(registration="open", signup_limits=SignUpLimits(per_address=50))
    answer = await asyncio.to_thread(sign_up, server, "newbie")
    assert answer["name"] == "newbie" and len(answer["token"]) >= 20
    tokens["newbie"] = answer["token"]
    await bot("newbie", target=server)  # the hello is welcomed
    # Taken names are refused, a removed bot's too (nobody takes over its history).
    await store.remove_bot("carol")
    for taken in ("newbie", "alice", "carol"):
        with pytest.raises(ArenaError, match="is taken"):
            await asyncio.to_thread(sign_up, server, taken)
    for bad in ("no spaces", "", "x" * 200, 5, None):
        with pytest.raises(ArenaError, match=r"name|body"):
            await asyncio.to_thread(sign_up, server, bad)
    status, _, body = await http_get(server.port, "/api/bots", "POST", b'{"name": "plain"}')
    assert status == 415, body  # no Content-Type: a browser form on another site cannot post


async def test_sign_up_is_limited_per_address_and_in_all(
    make_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="arena.net.signup")
    server = await make_server(
        registration="open", signup_limits=SignUpLimits(per_address=3, per_hour=100)
    )
    await asyncio.to_thread(sign_up, server, "first")
    with pytest.raises(ArenaError, match="is taken"):  # a refused name counts too
        await asyncio.to_thread(sign_up, server, "first")
    await asyncio.to_thread(sign_up, server, "second")
    for _ in range(3):
        with pytest.raises(ArenaError, match="too many sign-ups"):
            await asyncio.to_thread(sign_up, server, "third")
    refusals = [r for r in caplog.records if "sign-up refused" in r.getMessage()]
    assert len(refusals) == 1  # one line a minute, not one per refusal

    capped = await make_server(
        registration="open", signup_limits=SignUpLimits(per_address=10, per_hour=1)
    )
    await asyncio.to_thread(sign_up, capped, "fourth")
    status, headers, body = await http_get(capped.port, "/api/bots", "POST", b"{}")
    assert status == 429 and int(headers["retry-after"]) > 0, body


async def test_arena_bots_register_needs_only_the_server(
    make_server: Any, bot: Any, tokens: dict[str, str]
) -> None:
    server = await make_server(registration="open")
    url = f"ws://127.0.0.1:{server.port}"
    done = await asyncio.to_thread(arena, "bots", "register", "--server", url, "remote")
    assert done.returncode == 0, done.stderr
    assert "shown only once" in done.stdout
    tokens["remote"] = done.stdout.strip().splitlines()[-1]
    await bot("remote", target=server)
    again = await asyncio.to_thread(arena, "bots", "register", "--server", url, "remote")
    assert again.returncode == 2 and "'remote' is taken" in again.stderr
    assert "Traceback" not in again.stderr
