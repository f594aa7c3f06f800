"""Plain HTTP on the arena's port: requests, responses and the route table.

The listener (``arena.net.listener``) parses each HTTP request with h11; a
websocket upgrade goes to the websocket layer, anything else is answered by
``Router.dispatch``. A route names its path (a regex, named groups become
``params``), its methods and whether it takes a request body:

- no route's path matches: ``404``;
- a route's path matches but not the method: ``405`` with an ``Allow`` header
  (``HEAD`` is allowed wherever ``GET`` is, and answered without the body);
- a body sent to a route that takes none: ``400`` (nothing is silently ignored).

``add_api_routes`` (``arena.net.api``) registers the JSON API on it, and the
viewer its pages.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted (``413`` beyond)."""


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A parsed HTTP request: method, path, query parameters, the route's groups, the body."""

    path: str
    query: Mapping[str, str]
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    """Header names in lower case."""
    method: str = "GET"
    body: bytes = b""
    remote: str = ""
    """The client's address (``X-Forwarded-For`` behind a trusted proxy)."""


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """What a route handler returns."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers (ETag, Cache-Control, Allow, ...); they override the defaults."""


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


def json_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> HttpResponse:
    """A JSON ``{"error": message}`` response."""
    return dataclasses.replace(json_response({"error": message}, status), headers=headers or {})


@dataclass(frozen=True, slots=True)
class _Route:
    pattern: re.Pattern[str]
    methods: frozenset[str]
    handler: Handler
    takes_body: bool


class Router:
    """A route table; see the module docstring."""

    def __init__(self) -> None:
        self._routes: list[_Route] = []

    def add(
        self,
        pattern: str,
        handler: Handler,
        methods: tuple[str, ...] = ("GET",),
        *,
        body: bool = False,
    ) -> None:
        """Route requests whose path fully matches regex ``pattern`` and whose method is listed."""
        allowed = frozenset(methods) | ({"HEAD"} if "GET" in methods else set())
        self._routes.append(_Route(re.compile(pattern), allowed, handler, body))

    def routes(self) -> list[tuple[str, str]]:
        """Every (method, path pattern) answered, ``HEAD`` left out, in the order added."""
        return [
            (method, route.pattern.pattern)
            for route in self._routes
            for method in sorted(route.methods - {"HEAD"})
        ]

    async def dispatch(self, request: HttpRequest) -> HttpResponse:
        """Answer one request (``path`` may carry a query string, which is parsed here)."""
        parts = urlsplit(request.path)
        allowed: set[str] = set()
        for route in self._routes:
            found = route.pattern.fullmatch(parts.path)
            if not found:
                continue
            if request.method not in route.methods:
                allowed |= route.methods
                continue
            if request.body and not route.takes_body:
                return json_error(400, "this endpoint takes no request body")
            routed = dataclasses.replace(
                request,
                path=parts.path,
                query=dict(parse_qsl(parts.query)),
                params=found.groupdict(),
            )
            try:
                return await route.handler(routed)
            except Exception:
                log.exception("HTTP handler failed for %s %s", request.method, request.path)
                return json_error(500, "internal error")
        if allowed:
            return json_error(
                405,
                f"{request.method} is not allowed here",
                {"Allow": ", ".join(sorted(allowed))},
            )
        return json_error(404, f"no such page: {parts.path}")
