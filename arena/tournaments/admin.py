"""The admin token: how ``arena tournament`` commands reach a running ``arena serve``.

``arena serve`` makes a fresh random token at every start and writes it, with
the server's URL, to the **admin file** (mode 0600, owner only) kept with the
database: ``<SQLite file>.admin.json`` (``/srv/arena.db.admin.json``), or for
PostgreSQL ``$XDG_STATE_HOME/arena/<host>_<port>_<database>.admin.json``. It
removes the file when it stops. The tournament API's changing routes
(``POST /api/tournaments`` ...) want ``Authorization: Bearer <token>``.

A command finds the file from ``--db``; when the file is missing or the
server it names does not answer (stopped, or killed), the command works on
the database directly, and a server started later picks the change up.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

from arena.errors import TournamentError
from arena.provision import write_private
from arena.store.journal import database_side_path

ADMIN_SUFFIX = ".admin.json"
REQUEST_TIMEOUT_S = 30.0


def new_admin_token() -> str:
    """A fresh random admin token."""
    return secrets.token_urlsafe(32)


def token_matches(expected: str, header: str | None) -> bool:
    """Whether an ``Authorization`` header carries ``expected`` (constant-time compare)."""
    given = (header or "").removeprefix("Bearer ").strip()
    return bool(expected) and hmac.compare_digest(expected.encode(), given.encode())


def admin_file_path(db_url: str) -> Path:
    """Where the admin file of the database at ``db_url`` is (see the module docstring)."""
    return database_side_path(make_url(db_url), ADMIN_SUFFIX)


@dataclass(frozen=True, slots=True)
class AdminFile:
    """What the admin file holds."""

    token: str
    url: str
    """The server's HTTP address, e.g. ``http://127.0.0.1:8765``."""
    pid: int

    def write(self, path: Path) -> None:
        """Write it, owner-only (0600), atomically."""
        write_private(path, json.dumps({"token": self.token, "url": self.url, "pid": self.pid}))

    @classmethod
    def read(cls, path: Path) -> AdminFile | None:
        """The admin file at ``path``; None when it is missing or unreadable."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(str(data["token"]), str(data["url"]), int(data["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def remove(self, path: Path) -> None:
        """Delete the file if it is still this server's (a newer server may have replaced it)."""
        with contextlib.suppress(OSError):
            if AdminFile.read(path) == self:
                path.unlink()


class ServerUnreachable(Exception):
    """No server answered at the admin file's URL."""


class AdminClient:
    """Calls the tournament API of the server an admin file names."""

    def __init__(self, admin: AdminFile) -> None:
        self.admin = admin

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """The JSON answer; ``TournamentError`` with the server's message on a 4xx/5xx,
        ``ServerUnreachable`` when nothing answers."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.admin.url.rstrip("/") + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.admin.token}",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            try:
                message = json.load(error).get("error", str(error))
            except ValueError:
                message = str(error)
            raise TournamentError(message) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            raise ServerUnreachable(str(exc)) from None


def running_server(db_url: str) -> AdminClient | None:
    """A client for the server serving ``db_url`` now, or None when none answers."""
    admin = AdminFile.read(admin_file_path(db_url))
    if admin is None:
        return None
    try:
        os.kill(admin.pid, 0)
    except ProcessLookupError:
        return None  # the server was killed: its file is stale
    except PermissionError:
        pass  # it runs, as another user
    return AdminClient(admin)
