"""Whatever a client puts in a path or a query parameter, the HTTP API answers below 500.

One server runs in a thread of its own for the whole module, so hypothesis
(which is synchronous) can send it hundreds of real requests over loopback.
Every answer must be a 2xx, 3xx or 4xx, and the server must log no error.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.server import ArenaConfig, ArenaServer
from protocol.numbers import NumberError, parse_int

ROUTES = (
    "/healthz",
    "/metrics",
    "/api/leaderboard",
    "/api/matches",
    "/api/matches/{}",
    "/api/h2h",
    "/api/bots/{}",
    "/api/play",
    "/api/tournaments",
    "/api/tournaments/{}",
    "/matches/{}",
    "/bots/{}",
    "/static/{}",
    "/{}",
)
PARAMETERS = ("limit", "before", "status", "game", "bot", "a", "b", "since", "id")
NUMBERS = ("²", "٣", "３", "1_0", " 5", "-1", "0", "500", "501", "9" * 5000, "1e3", "0x10", "")
text = st.one_of(st.sampled_from(NUMBERS), st.text(max_size=40), st.sampled_from(("connect4",)))


class ServerThread:
    """An ``ArenaServer`` on port 0 in its own thread and event loop."""

    def __init__(self, db: Path) -> None:
        self.config = ArenaConfig(port=0, db_url=f"sqlite+aiosqlite:///{db}", seed=1)
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        assert self._ready.wait(30), "the server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with ArenaServer(self.config) as server:
            self.port = server.port
            self._ready.set()
            await self._stop.wait()


class ErrorLog(logging.Handler):
    """Collects every record at ERROR or above."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerThread, ErrorLog]]:
    errors = ErrorLog()
    logging.getLogger().addHandler(errors)
    try:
        with ServerThread(tmp_path_factory.mktemp("fuzz") / "arena.db") as server:
            yield server, errors
    finally:
        logging.getLogger().removeHandler(errors)


def status_of(port: int, target: str, method: str = "GET", body: bytes = b"") -> int:
    """The status code of ``method target`` (raw bytes, not checked by any client)."""
    length = f"Content-Length: {len(body)}\r\n" if body else ""
    head = f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n{length}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + body)
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1])


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    route=st.sampled_from(ROUTES),
    segment=text,
    query=st.lists(st.tuples(st.sampled_from(PARAMETERS) | st.text(max_size=8), text), max_size=4),
)
def test_no_5xx_from_any_path_or_parameter(
    running: tuple[ServerThread, ErrorLog],
    route: str,
    segment: str,
    query: list[tuple[str, str]],
) -> None:
    server, errors = running
    path = route.format(quote(segment, safe=""))
    pairs = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in query)
    status = status_of(server.port, f"{path}?{pairs}" if pairs else path)
    assert 200 <= status < 500, (path, query, status)
    assert not errors.records, errors.records[0].getMessage()


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    route=st.sampled_from(ROUTES),
    segment=text,
    method=st.sampled_from(("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH")),
    body=st.one_of(st.just(b""), st.binary(max_size=200), st.just(b'{"settings": {}}')),
)
def test_no_5xx_from_any_method_or_body(
    running: tuple[ServerThread, ErrorLog], route: str, segment: str, method: str, body: bytes
) -> None:
    server, errors = running
    errors.records.clear()
    path = route.format(quote(segment, safe=""))
    status = status_of(server.port, path, method, body)
    assert 200 <= status < 500, (method, path, body, status)
    assert not errors.records, errors.records[0].getMessage()


@pytest.mark.parametrize("limit", ["%C2%B2", "9" * 5000, "%D9%A3", "%EF%BC%93", "1_0", "+5"])
def test_a_limit_that_is_not_ascii_digits_is_a_400_without_a_traceback(
    running: tuple[ServerThread, ErrorLog], limit: str
) -> None:
    server, errors = running
    errors.records.clear()
    assert status_of(server.port, f"/api/matches?limit={limit}") == 400
    assert not errors.records


def test_parse_int_takes_ascii_digits_only() -> None:
    assert parse_int("42", "n", low=1, high=50) == 42
    assert parse_int("-3", "n") == -3
    for bad in ("²", "٣", "３", "1_0", " 5", "+5", "", "-", "9" * 19, "-2"):
        with pytest.raises(NumberError):
            parse_int(bad, "n", low=0)
    with pytest.raises(NumberError, match="n must be a whole number from 1 to 50, not 51"):
        parse_int("51", "n", low=1, high=50)
