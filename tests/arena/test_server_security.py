"""The server's door: failed logins throttled per address, TLS, and browser origins."""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from arena.net.limits import LoginThrottle
from arena.play.clock import ManualClock
from protocol.messages import PROTOCOL_VERSION


def hello(name: str, token: str) -> str:
    return json.dumps(
        {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION, "name": name, "token": token}
    )


async def try_login(port: int, name: str, token: str, **kwargs: Any) -> dict[str, Any]:
    async with connect(f"ws://127.0.0.1:{port}/", **kwargs) as ws:
        await ws.send(hello(name, token))
        reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 5))
        return reply


async def test_300_wrong_tokens_are_throttled_and_logged_without_the_token(
    make_server: Any, tokens: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    server = await make_server(clock=clock)
    caplog.set_level(logging.INFO, logger="arena.net.gateway")
    codes = [(await try_login(server.port, "alice", f"wrong-{n}"))["code"] for n in range(300)]
    assert codes[:5] == ["auth_failed"] * 5
    assert codes[5] == "auth_failed"  # the sixth is checked, fails, and starts the wait
    assert set(codes[6:]) == {"throttled"}  # unchecked from then on
    failures = [r for r in caplog.records if r.getMessage().startswith("failed login")]
    assert len(failures) == 6 and "127.0.0.1" in failures[0].getMessage()
    assert not any("wrong-" in r.getMessage() for r in caplog.records)  # never the token
    # Even the right token waits out the throttle ...
    assert (await try_login(server.port, "alice", tokens["alice"]))["code"] == "throttled"
    clock.advance(LoginThrottle(clock).base_delay_s + 0.01)
    # ... and is then accepted.
    assert (await try_login(server.port, "alice", tokens["alice"]))["type"] == "welcome"
    assert server.gateway.throttle.failed_total == 6


async def test_behind_a_trusted_proxy_each_forwarded_address_has_its_own_throttle(
    make_server: Any, tokens: dict[str, str]
) -> None:
    server = await make_server(clock=ManualClock(), trust_proxy=True)
    attacker = {"additional_headers": {"X-Forwarded-For": "203.0.113.9"}}
    for n in range(7):
        await try_login(server.port, "alice", f"wrong-{n}", **attacker)
    assert (await try_login(server.port, "alice", "x", **attacker))["code"] == "throttled"
    honest = {"additional_headers": {"X-Forwarded-For": "198.51.100.7, 203.0.113.200"}}
    assert (await try_login(server.port, "bob", tokens["bob"], **honest))["type"] == "welcome"


def test_the_throttle_doubles_the_wait_and_forgets_old_failures() -> None:
    clock = ManualClock()
    throttle = LoginThrottle(clock, free_failures=2, window_s=60, base_delay_s=1, max_delay_s=4)
    assert [throttle.failed("a", "x") for _ in range(5)] == [0, 0, 1, 2, 4]
    assert throttle.failed("a", "x") == 4  # capped
    assert throttle.wait_s("a", "y") == 4  # the address waits, whatever the name
    assert throttle.wait_s("b", "x") == 4  # the name waits, whatever the address
    assert throttle.wait_s("b", "y") == 0
    clock.advance(61)  # every failure is out of the window
    assert throttle.failed("a", "x") == 0
    throttle.succeeded("a", "x")
    assert throttle.wait_s("a", "x") == 0


async def test_tls_serves_wss_and_https_on_one_port(
    make_server: Any, tokens: dict[str, str], certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate
    server = await make_server(tls_cert=str(cert), tls_key=str(key))
    trusting = ssl.create_default_context(cafile=str(cert))
    async with connect(f"wss://127.0.0.1:{server.port}/", ssl=trusting) as ws:
        await ws.send(hello("alice", tokens["alice"]))
        assert json.loads(await ws.recv())["type"] == "welcome"

    def https_health() -> dict[str, Any]:
        url = f"https://127.0.0.1:{server.port}/healthz"
        with urllib.request.urlopen(url, context=trusting, timeout=5) as response:
            body: dict[str, Any] = json.load(response)
        return body

    assert (await asyncio.to_thread(https_health))["status"] == "ok"
    # A client that does not trust the certificate refuses to talk at all.
    with pytest.raises(ssl.SSLCertVerificationError):
        await connect(f"wss://127.0.0.1:{server.port}/", ssl=ssl.create_default_context())


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # bots and command-line tools send no Origin
        ("http://127.0.0.1:{port}", True),  # the server's own pages
        ("https://arena.example.org", True),  # configured
        ("http://evil.example", False),
        ("http://127.0.0.1:1", False),  # another port is another origin
    ],
)
async def test_websockets_from_foreign_origins_are_refused(
    make_server: Any, tokens: dict[str, str], origin: str | None, allowed: bool
) -> None:
    server = await make_server(allowed_origins=("https://arena.example.org/",))
    headers = {} if origin is None else {"Origin": origin.format(port=server.port)}
    if allowed:
        reply = await try_login(server.port, "alice", tokens["alice"], additional_headers=headers)
        assert reply["type"] == "welcome"
    else:
        with pytest.raises(InvalidStatus) as refused:
            await try_login(server.port, "alice", tokens["alice"], additional_headers=headers)
        assert refused.value.response.status_code == 403


def from_address(address: str) -> dict[str, Any]:
    return {"additional_headers": {"X-Forwarded-For": address}}


async def test_guesses_spread_over_50_addresses_meet_the_bot_names_throttle(
    make_server: Any, tokens: dict[str, str]
) -> None:
    server = await make_server(clock=ManualClock(), trust_proxy=True)
    codes = [
        (await try_login(server.port, "alice", f"wrong-{n}", **from_address(f"203.0.113.{n}")))[
            "code"
        ]
        for n in range(50)
    ]
    assert codes[:6] == ["auth_failed"] * 6 and set(codes[6:]) == {"throttled"}
    assert server.gateway.throttle.failed_total == 6


async def test_an_attackers_own_valid_logins_do_not_reset_its_address(
    make_server: Any, tokens: dict[str, str]
) -> None:
    server = await make_server(clock=ManualClock(), trust_proxy=True)
    attacker = from_address("203.0.113.9")
    codes = []
    for n in range(20):
        codes.append((await try_login(server.port, f"bot{n}", "wrong", **attacker))["code"])
        welcome = await try_login(server.port, "bob", tokens["bob"], **attacker)
        assert welcome["type"] == "welcome"  # bob logged in from here before: still let in
    assert set(codes[6:]) == {"throttled"}


async def test_a_bot_on_the_attackers_address_still_logs_in(
    make_server: Any, tokens: dict[str, str]
) -> None:
    server = await make_server(clock=ManualClock(), trust_proxy=True)
    shared = from_address("198.51.100.1")  # one NAT: the victim and the attacker
    assert (await try_login(server.port, "carol", tokens["carol"], **shared))["type"] == "welcome"
    for n in range(10):
        await try_login(server.port, f"guess{n}", "wrong", **shared)
    assert (await try_login(server.port, "dave", "x", **shared))["code"] == "throttled"
    assert (await try_login(server.port, "carol", tokens["carol"], **shared))["type"] == "welcome"
    # A guess at carol's own token from elsewhere never locks her out at home either.
    for n in range(10):
        await try_login(server.port, "carol", "wrong", **from_address(f"203.0.113.{n}"))
    assert (await try_login(server.port, "carol", tokens["carol"], **shared))["type"] == "welcome"
