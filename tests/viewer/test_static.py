"""Serving the viewer's files: URL mapping, content types, caching, and path safety."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from arena.live.viewer import (
    CONTENT_TYPES,
    GAMES_MODULE,
    STATIC_DIR,
    resolve_static_path,
    static_response,
)
from arena.server import ArenaServer
from protocol.games import GAMES, game_spec


def test_pages_map_to_their_html() -> None:
    index = static_response("/")
    assert index is not None and index.status == 200
    assert index.content_type == "text/html; charset=utf-8"
    assert b"<title>MCTS Arena</title>" in index.body
    match = static_response("/matches/m-17_a.b:c")
    assert match is not None and match.status == 200
    assert b'src="/static/js/match.js"' in match.body
    bot = static_response("/bots/mcts%20v2.1")  # any percent-encoded name: the API decides
    assert bot is not None and bot.status == 200
    assert b'src="/static/js/bot.js"' in bot.body


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/static/js/api.js", "text/javascript; charset=utf-8"),
        ("/static/js/boards/connect4.js", "text/javascript; charset=utf-8"),
        ("/static/css/viewer.css", "text/css; charset=utf-8"),
        ("/static/favicon.svg", "image/svg+xml"),
        ("/static/index.html", "text/html; charset=utf-8"),
    ],
)
def test_static_files_have_their_content_type(path: str, content_type: str) -> None:
    found = static_response(path)
    assert found is not None and found.status == 200
    assert found.content_type == content_type
    assert found.body == (STATIC_DIR / path.removeprefix("/static/")).read_bytes()
    assert found.headers["X-Content-Type-Options"] == "nosniff"


def test_every_shipped_file_is_servable() -> None:
    files = [p for p in STATIC_DIR.rglob("*") if p.is_file()]
    assert len(files) >= 10
    for file in files:
        url = "/static/" + file.relative_to(STATIC_DIR).as_posix()
        found = static_response(url)
        assert found is not None, url
        assert found.content_type == CONTENT_TYPES[file.suffix]


def test_javascript_imports_point_at_shipped_modules() -> None:
    """No build step: every relative import must name a file that is really there
    (or the one module the server makes, the registered games)."""
    pattern = re.compile(r"""from\s+["'](\.{1,2}/[^"']+)["']""")
    generated = STATIC_DIR / GAMES_MODULE.removeprefix("/static/")
    for module in STATIC_DIR.rglob("*.js"):
        for target in pattern.findall(module.read_text()):
            path = (module.parent / target).resolve()
            assert path.is_file() or path == generated, f"{module.name}: {target}"
    assert not generated.exists(), "games.js is made from the registry, not shipped"


def test_the_games_module_is_the_registry_with_a_board_module_for_each_game() -> None:
    served = static_response(GAMES_MODULE)
    assert served is not None and served.status == 200
    assert served.content_type == "text/javascript; charset=utf-8"
    head, _, rest = served.body.decode().partition("export const GAMES = ")
    assert head.startswith("//") and rest.endswith(";\n")
    games = json.loads(rest.removesuffix(";\n"))
    assert [g["name"] for g in games] == list(GAMES)
    for entry in games:
        spec = game_spec(entry["name"])
        board = STATIC_DIR / "js" / "boards" / f"{entry['board']}.js"
        assert board.is_file(), f"{spec.name}: no viewer board module {board.name}"
        assert f'"{spec.name}"' in board.read_text(), f"{board.name} draws no {spec.name}"
        assert entry["terminations"] == {t.value: w for t, w in spec.terminations.items()}
    again = static_response(GAMES_MODULE, if_none_match=served.headers["ETag"])
    assert again is not None and again.status == 304


@pytest.mark.parametrize(
    "path",
    [
        "/static/../viewer.py",
        "/static/%2e%2e/viewer.py",
        "/static/js/../../viewer.py",
        "/static/..%2fviewer.py",
        "/static/%2e%2e%2f%2e%2e%2fserver.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/js\\..\\..\\viewer.py",
        "/static/js/%5c..%5c..%5cviewer.py",
        "/static/./index.html",
        "/static/.hidden.css",
        "/static/js/",
        "/static/",
        "/static/index.html%00.css",
        "/static/%ff.js",
        "/static/C:/Windows/win.ini",
        "/static/missing.js",
        "/matches/",
        "/matches/a/b",
        "/bots/",
        "/bots/a/b",
        "/viewer.py",
        "/api/leaderboard",
    ],
)
def test_unsafe_or_unknown_paths_are_not_served(path: str) -> None:
    assert static_response(path) is None


def test_symlinks_out_of_the_root_and_unknown_types_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "static"
    (root / "js").mkdir(parents=True)
    (root / "js" / "ok.js").write_text("export {};\n")
    secret = tmp_path / "secret.js"
    secret.write_text("the token\n")
    (root / "js" / "escape.js").symlink_to(secret)
    (root / "notes.md").write_text("# not served\n")
    assert resolve_static_path("js/ok.js", root) == (root / "js" / "ok.js").resolve()
    assert resolve_static_path("js/escape.js", root) is None
    assert resolve_static_path("notes.md", root) is None
    assert resolve_static_path("js", root) is None


def test_etag_revalidation_answers_304() -> None:
    first = static_response("/static/css/viewer.css")
    assert first is not None
    etag = first.headers["ETag"]
    assert re.fullmatch(r'"[0-9a-f]{20}"', etag)
    assert first.headers["Cache-Control"] == "no-cache"
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = static_response("/static/css/viewer.css", if_none_match=header)
        assert again is not None and (again.status, again.body) == (304, b""), header
    changed = static_response("/static/css/viewer.css", if_none_match='"stale"')
    assert changed is not None and changed.status == 200


def test_html_pages_carry_a_content_security_policy() -> None:
    page = static_response("/")
    script = static_response("/static/js/api.js")
    assert page is not None and script is not None
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert "Content-Security-Policy" not in script.headers


async def raw_get(
    port: int, target: str, etag: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Send a GET with ``target`` exactly as given (no client-side normalisation)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = f"If-None-Match: {etag}\r\n" if etag else ""
    writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


async def test_the_server_serves_the_viewer_beside_its_api(arena: ArenaServer) -> None:
    status, headers, body = await raw_get(arena.port, "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert b"MCTS Arena" in body
    status, headers, _ = await raw_get(arena.port, "/static/js/match.js")
    assert status == 200 and headers["content-type"] == "text/javascript; charset=utf-8"
    status, headers, _ = await raw_get(arena.port, "/matches/some-id")
    assert status == 200 and headers["content-type"].startswith("text/html")
    for target in ("/static/../viewer.py", "/static/%2e%2e/viewer.py", "/static/js/../../http.py"):
        status, _, body = await raw_get(arena.port, target)
        assert status == 404, target
        assert b"import" not in body
    status, headers, _ = await raw_get(arena.port, "/api/leaderboard?game=connect4")
    assert status == 200 and headers["content-type"] == "application/json"


async def test_the_server_sends_caching_and_security_headers(arena: ArenaServer) -> None:
    status, headers, _ = await raw_get(arena.port, "/")
    assert status == 200
    assert headers["cache-control"] == "no-cache"
    assert "default-src 'self'" in headers["content-security-policy"]
    etag = headers["etag"]
    status, headers, body = await raw_get(arena.port, "/static/js/api.js", etag=etag)
    assert status == 200, "another file's ETag must not match"
    script_etag = headers["etag"]
    status, headers, body = await raw_get(arena.port, "/static/js/api.js", etag=script_etag)
    assert (status, body) == (304, b"")
    assert headers["etag"] == script_etag
