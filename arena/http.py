"""Plain HTTP on the websocket port, answered from websockets' ``process_request`` hook.

A request carrying ``Upgrade: websocket`` proceeds to the websocket
handshake; any other request is looked up in a ``Router`` (a table of
method + path regex -> async handler). ``add_api_routes`` registers the JSON
API::

    GET /healthz                    server status (and later MQTT status)
    GET /api/leaderboard?game=NAME  ratings table with online flags
    GET /api/matches?status=live    live matches (other statuses from the store)
    GET /api/matches/ID             one match with its moves

A static viewer later registers ``/`` and ``/matches/<id>`` on the same router.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import enum
import http
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from arena.lobby import check_game
from protocol.errors import ProtocolError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A parsed plain-HTTP GET: path, query parameters and the route's named groups."""

    path: str
    query: Mapping[str, str]
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """What a route handler returns."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers (ETag, Cache-Control, ...); they override the defaults."""


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


def to_jsonable(value: Any) -> Any:
    """Turn records (dataclasses, enums, datetimes, plain objects) into JSON-ready data."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "__dict__"):
        return {k: to_jsonable(v) for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)


def json_response(data: Any, status: int = 200) -> HttpResponse:
    """A JSON response of ``data`` (records are converted with ``to_jsonable``)."""
    body = json.dumps(to_jsonable(data), separators=(",", ":")).encode()
    return HttpResponse(status, body)


def json_error(status: int, message: str) -> HttpResponse:
    """A JSON ``{"error": message}`` response."""
    return json_response({"error": message}, status)


class Router:
    """A route table: the first route whose method and full path match handles the request."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []

    def add(self, pattern: str, handler: Handler, method: str = "GET") -> None:
        """Route requests whose path fully matches regex ``pattern`` (named groups -> params)."""
        self._routes.append((method, re.compile(pattern), handler))

    async def dispatch(self, method: str, target: str, headers: Mapping[str, str]) -> HttpResponse:
        """Answer one request; 404 when no route matches, 500 when the handler fails."""
        parts = urlsplit(target)
        query = dict(parse_qsl(parts.query))
        for route_method, pattern, handler in self._routes:
            found = pattern.fullmatch(parts.path)
            if found and route_method == method:
                request = HttpRequest(parts.path, query, found.groupdict(), headers)
                try:
                    return await handler(request)
                except Exception:
                    log.exception("HTTP handler failed for %s", target)
                    return json_error(500, "internal error")
        return json_error(404, f"no such page: {parts.path}")


def to_websockets_response(response: HttpResponse) -> Response:
    """Convert a handler's answer to the ``Response`` websockets sends instead of upgrading."""
    status = http.HTTPStatus(response.status)
    fields = {
        "Date": email.utils.formatdate(usegmt=True),
        "Connection": "close",
        "Content-Length": str(len(response.body)),
        "Content-Type": response.content_type,
        "Cache-Control": "no-store",
    }
    fields.update(response.headers)
    return Response(status.value, status.phrase, Headers(fields.items()), response.body)


def make_process_request(
    router: Router,
) -> Callable[[ServerConnection, Request], Awaitable[Response | None]]:
    """A ``process_request`` for ``serve``: websocket upgrades pass, other requests are routed."""

    async def process_request(connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        headers = {k.lower(): v for k, v in request.headers.raw_items()}
        # websockets only parses GET requests, so the method is always GET here.
        return to_websockets_response(await router.dispatch("GET", request.path, headers))

    return process_request


class ApiBackend(Protocol):
    """What the JSON API reads from the running server."""

    async def leaderboard_json(self, game: str) -> list[dict[str, Any]]:
        """Leaderboard rows with an ``online`` flag."""
        ...

    def live_matches_json(self) -> list[dict[str, Any]]:
        """One summary per live match."""
        ...

    async def matches_json(self, status: str | None, game: str | None) -> list[dict[str, Any]]:
        """Stored matches, newest first."""
        ...

    async def match_json(self, match_id: str) -> dict[str, Any] | None:
        """One match with its moves, or None."""
        ...

    def health(self) -> dict[str, Any]:
        """Status counters for ``/healthz``."""
        ...


def add_api_routes(router: Router, backend: ApiBackend) -> None:
    """Register the JSON API of the module docstring on ``router``."""

    async def healthz(request: HttpRequest) -> HttpResponse:
        return json_response(backend.health())

    async def leaderboard(request: HttpRequest) -> HttpResponse:
        game = request.query.get("game")
        if not game:
            return json_error(400, "missing query parameter: game")
        try:
            check_game(game)
        except ProtocolError as exc:
            return json_error(404, exc.message)
        return json_response({"game": game, "entries": await backend.leaderboard_json(game)})

    async def matches(request: HttpRequest) -> HttpResponse:
        status = request.query.get("status")
        if status == "live":
            return json_response({"matches": backend.live_matches_json()})
        if status not in (None, "finished", "aborted"):
            return json_error(400, "status must be live, finished or aborted")
        found = await backend.matches_json(status, request.query.get("game"))
        return json_response({"matches": found})

    async def one_match(request: HttpRequest) -> HttpResponse:
        record = await backend.match_json(request.params["match_id"])
        if record is None:
            return json_error(404, "no such match")
        return json_response(record)

    router.add(r"/healthz", healthz)
    router.add(r"/api/leaderboard", leaderboard)
    router.add(r"/api/matches", matches)
    router.add(r"/api/matches/(?P<match_id>[A-Za-z0-9_.:-]+)", one_match)
