"""Commands that ask a running server (``--server URL``) over its HTTP API, not a database.

A remote bot author has no database: ``arena leaderboard``, ``arena h2h``,
``arena export`` and ``arena bots register`` given ``--server`` alone read (or
sign up) through the JSON API, and print with the same renderers as the
local commands, which take the API's JSON-shaped data.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from arena.errors import ArenaError

REQUEST_TIMEOUT_S = 10.0

_HTTP_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def http_base(server: str) -> str:
    """The HTTP address of a server given as ``http(s)://`` or ``ws(s)://`` (no trailing ``/``)."""
    parts = urlsplit(server)
    scheme = _HTTP_SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.netloc:
        raise ArenaError(f"--server {server!r}: expected http://, https://, ws:// or wss://HOST")
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def call(
    server: str,
    path: str,
    query: dict[str, Any] | None = None,
    *,
    body: Any = None,
    timeout: float = REQUEST_TIMEOUT_S,
) -> Any:
    """The JSON answer of ``GET`` (or, with ``body``, ``POST``) ``path`` on ``server``.

    ``ArenaError`` with the server's own message on a 4xx/5xx, or saying that
    nothing answered.
    """
    url = http_base(server) + path
    params = {k: v for k, v in (query or {}).items() if v is not None}
    if params:
        url += "?" + urlencode(params)
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        try:
            message = json.load(error).get("error", str(error))
        except (ValueError, AttributeError):
            message = str(error)
        raise ArenaError(f"{http_base(server)}: {message}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ArenaError(f"cannot reach the server at {http_base(server)}: {reason}") from None
