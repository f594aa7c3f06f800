"""The web viewer's files: HTML pages, CSS and JavaScript modules shipped in ``arena/static``.

``static_response(path)`` maps a URL path to a file and answers like a tiny
static file server; ``add_viewer_routes(router)`` registers it on the HTTP
router of ``arena.http``::

    /                   index.html  (live matches, leaderboards, recent results)
    /matches/<id>       match.html  (one match: live board, telemetry, replay)
    /bots/<name>        bot.html    (one bot: ratings with intervals, history chart, opponents)
    /play/<name>        match.html  (play that bot as a guest: the match page, whose script
                                     loads play.js on this path, plus your moves)
    /tournaments[/<id>] tournament.html (the tournaments; one live: tables, SPRT chart)
    /static/<path>      any file below arena/static with a known type
    /static/js/games.js the registered games, their board modules and ending words:
                        made from ``protocol.games`` (``games_module``), not a file

The pages are plain HTML with ES modules, no build step; everything dynamic
comes from the JSON API and the spectator websocket on the same port.

Path safety: a request path is percent-decoded once, split on ``/`` and
refused when any segment is empty, ``.``/``..``, hidden (starts with a dot),
or holds a backslash or NUL; the joined path must still resolve inside the
static directory (so a symlink cannot lead out) and name a regular file with
an allowed extension. Anything else is "not found" (``None``), never an error.

Caching: files are not fingerprinted (no build step), so every response
carries an ``ETag`` and ``Cache-Control: no-cache``: browsers keep their copy
and revalidate it, getting ``304 Not Modified`` while the file is unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from arena.net.http import HttpRequest, HttpResponse, Router
from protocol.games import game_specs

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""Where the viewer's files live (inside the installed package)."""

CONTENT_TYPES: dict[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}
"""The extensions served, with their content types; other files are never served."""

MATCH_ID_PATTERN = r"[A-Za-z0-9_.:-]{1,64}"
"""Match ids as the server makes them (``protocol.messages.values.SERVER_ID_PATTERN``)."""

CACHE_CONTROL = "no-cache"
"""Keep, but revalidate with the ETag before use: file names carry no content hash."""

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
"""For HTML pages: only this origin's scripts, styles and connections (the websocket too)."""

_PAGES = {"/": "index.html", "/index.html": "index.html"}
_MATCH_PAGE = re.compile(r"/matches/" + MATCH_ID_PATTERN)
BOT_PAGE_PATTERN = r"/bots/[^/]{1,256}"
"""A bot's page; the name is percent-encoded, and the page asks the API whether it exists."""
_BOT_PAGE = re.compile(BOT_PAGE_PATTERN)
PLAY_PAGE_PATTERN = r"/play/[^/]{1,256}"
"""The page to play a bot as a guest (``?game=NAME`` picks the game)."""
_PLAY_PAGE = re.compile(PLAY_PAGE_PATTERN)
_TOURNAMENT_PAGE = re.compile(r"/tournaments(?:/[0-9]{1,9})?")
_STATIC_PREFIX = "/static/"
GAMES_MODULE = "/static/js/games.js"
"""The generated module of the registered games (``games_module``)."""


@dataclass(frozen=True, slots=True)
class StaticResponse:
    """A file (or ``304``) to send: status, content type, body and the headers to add."""

    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Cached:
    mtime_ns: int
    size: int
    body: bytes
    etag: str


_cache: dict[Path, _Cached] = {}


def resolve_static_path(relative: str, root: Path = STATIC_DIR) -> Path | None:
    """The file below ``root`` that URL path ``relative`` names, or None if it is not servable.

    ``relative`` is the part after ``/static/``, still percent-encoded.
    """
    decoded = unquote(relative, errors="strict") if "%" in relative else relative
    segments = decoded.split("/")
    for segment in segments:
        if (
            not segment
            or segment.startswith(".")  # also rejects "." and ".."
            or "\\" in segment
            or "\x00" in segment
            or ":" in segment  # a Windows drive or stream name
        ):
            return None
    candidate = root.joinpath(*segments)
    if candidate.suffix.lower() not in CONTENT_TYPES:
        return None
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, or a symlink loop
        return None
    if not resolved.is_relative_to(root.resolve()) or not resolved.is_file():
        return None
    return resolved


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:20] + '"'


def _read(path: Path) -> _Cached:
    """The file's bytes and ETag, re-read only when its size or modification time changed."""
    stat = path.stat()
    cached = _cache.get(path)
    if cached is None or (cached.mtime_ns, cached.size) != (stat.st_mtime_ns, stat.st_size):
        body = path.read_bytes()
        cached = _Cached(stat.st_mtime_ns, stat.st_size, body, _etag(body))
        _cache[path] = cached
    return cached


def games_module() -> str:
    """The JavaScript module ``GAMES_MODULE``: each registered game's name, board module
    (``boards/BOARD.js``) and words for the endings its rules decide, in registry order.

    The viewer's game list is the registry's, so a new game needs no list edited
    in JavaScript: only its board module.
    """
    games = [
        {
            "name": spec.name,
            "board": spec.board,
            "terminations": {end.value: words for end, words in spec.terminations.items()},
        }
        for spec in game_specs()
    ]
    return (
        "// The registered games (protocol.games): made by the arena's viewer.py, not a file.\n"
        f"export const GAMES = {json.dumps(games, indent=2)};\n"
    )


@functools.cache
def _games_module() -> _Cached:
    body = games_module().encode()
    return _Cached(0, len(body), body, _etag(body))


def _etag_matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return etag in candidates or "*" in candidates


def static_response(path: str, if_none_match: str | None = None) -> StaticResponse | None:
    """Answer URL ``path`` (no query string) from the viewer's files; None when not ours.

    ``if_none_match`` is the request's ``If-None-Match`` header: when it names
    the current ETag the answer is an empty ``304``.
    """
    if path == GAMES_MODULE:
        return _answer(_games_module(), ".js", if_none_match)
    if path in _PAGES:
        file: Path | None = STATIC_DIR / _PAGES[path]
    elif _MATCH_PAGE.fullmatch(path) or _PLAY_PAGE.fullmatch(path):
        file = STATIC_DIR / "match.html"
    elif _BOT_PAGE.fullmatch(path):
        file = STATIC_DIR / "bot.html"
    elif _TOURNAMENT_PAGE.fullmatch(path):
        file = STATIC_DIR / "tournament.html"
    elif path.startswith(_STATIC_PREFIX):
        try:
            file = resolve_static_path(path[len(_STATIC_PREFIX) :])
        except UnicodeDecodeError:
            return None
    else:
        return None
    if file is None or not file.is_file():
        return None
    return _answer(_read(file), file.suffix.lower(), if_none_match)


def _answer(cached: _Cached, suffix: str, if_none_match: str | None) -> StaticResponse:
    """The response with ``cached``'s body, or ``304`` when ``if_none_match`` names it."""
    content_type = CONTENT_TYPES[suffix]
    headers = {
        "Cache-Control": CACHE_CONTROL,
        "ETag": cached.etag,
        "X-Content-Type-Options": "nosniff",
    }
    if suffix == ".html":
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        headers["Referrer-Policy"] = "same-origin"
    if _etag_matches(if_none_match, cached.etag):
        return StaticResponse(304, content_type, b"", headers)
    return StaticResponse(200, content_type, cached.body, headers)


def add_viewer_routes(router: Router) -> None:
    """Register ``/``, ``/matches/<id>``, ``/bots/<name>``, ``/play/<name>``, ``/tournaments``
    and ``/static/...`` on ``router``."""

    async def serve(request: HttpRequest) -> HttpResponse:
        found = static_response(request.path, request.headers.get("if-none-match"))
        if found is None:
            return HttpResponse(404, b"not found\n", "text/plain; charset=utf-8")
        return HttpResponse(found.status, found.body, found.content_type, found.headers)

    router.add(r"/(?:index\.html)?", serve)
    router.add(r"/matches/" + MATCH_ID_PATTERN, serve)
    router.add(BOT_PAGE_PATTERN, serve)
    router.add(PLAY_PAGE_PATTERN, serve)
    router.add(_TOURNAMENT_PAGE.pattern, serve)
    router.add(r"/static/.+", serve)
