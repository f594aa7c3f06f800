"""Opening a database at start-up: a usable engine, or one ``DatabaseOpenError`` line.

Every way a ``--db`` URL can be wrong ends as ``DatabaseOpenError``, whose
text names the URL (password masked) and the cause, within
``OPEN_TIMEOUT_S``: an unknown scheme or driver, a SQLite path in a missing
or unwritable directory, an unwritable or non-SQLite file, a missing file
when ``create`` is False (and an empty database: no arena tables), a
PostgreSQL server that refuses, does not resolve, does not answer, or has
no such database or role. ``sqlite://`` and ``postgresql://`` (or
``postgres://``) URLs are taken to mean the asyncio drivers the store uses.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import make_url, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine

from arena.errors import DatabaseOpenError
from arena.store.engine import CONNECT_TIMEOUT_S, current_revision, make_engine, migrate
from arena.store.health import describe_failure, one_line

log = logging.getLogger("arena.store")

OPEN_TIMEOUT_S = 10.0
"""How long connecting and the first query may take before the open fails."""

_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}
_EXPECTED = "use sqlite+aiosqlite:///FILE or postgresql+asyncpg://USER@HOST/DATABASE"


def mask_url(url: str | URL) -> str:
    """``url`` with its password replaced by ``***`` (also when it does not parse)."""
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    # On the text as given, so the operator recognizes it: user:password@ -> user:***@
    return re.sub(r"(://[^:/@]*:)[^/]*@", r"\1***@", url)


def parse_url(url: str) -> URL:
    """``url`` parsed, with the store's asyncio driver; ``DatabaseOpenError`` when unusable."""
    try:
        parsed = make_url(url)
    except ArgumentError as error:
        raise DatabaseOpenError(mask_url(url), f"not a database URL ({_EXPECTED})") from error
    driver = _DRIVERS.get(parsed.drivername)
    if driver is None:
        raise DatabaseOpenError(
            mask_url(url), f"unsupported database scheme {parsed.drivername!r} ({_EXPECTED})"
        )
    parsed = parsed.set(drivername=driver)
    if driver.startswith("sqlite") and parsed.database in (None, "", ":memory:"):
        raise DatabaseOpenError(mask_url(url), "the store needs a SQLite file, not memory")
    return parsed


def _check_sqlite_file(url: URL, masked: str, create: bool) -> bool:
    """Refuse a SQLite path that cannot work; True when the file will be created."""
    path = Path(url.database or "")
    directory = path.absolute().parent
    reason = None
    if not directory.is_dir():
        reason = f"directory {directory} does not exist"
    elif path.is_dir():
        reason = f"{path} is a directory"
    elif not path.exists() and not create:
        reason = "the file does not exist (only a command that serves creates a database)"
    elif path.exists() and not os.access(path, os.R_OK | os.W_OK):
        reason = "the file is not writable" + _read_only(directory)
    elif not os.access(directory, os.W_OK):
        # SQLite creates the file, and its -wal and -shm files, in the directory.
        reason = f"directory {directory} is not writable" + _read_only(directory)
    if reason is not None:
        raise DatabaseOpenError(masked, reason)
    return not path.exists()


def _read_only(directory: Path) -> str:
    try:
        return " (read-only file system)" if os.statvfs(directory).f_flag & os.ST_RDONLY else ""
    except OSError:
        return ""


def open_reason(error: BaseException) -> str:
    """Why opening failed, in a few words (the driver's own text where it is clear)."""
    chain: list[BaseException] = []
    item: BaseException | None = error
    while item is not None and item not in chain:
        chain.append(item)
        orig = getattr(item, "orig", None)
        item = orig if isinstance(orig, BaseException) else item.__cause__ or item.__context__
    for item in chain:
        if isinstance(item, socket.gaierror):
            return f"host not found ({item.strerror or item})"
        if isinstance(item, TimeoutError):
            return f"no answer within {CONNECT_TIMEOUT_S:g} s"
        if isinstance(item, ConnectionRefusedError) or "connect call failed" in str(item).lower():
            return "connection refused (is the database server running?)"
        name = type(item).__name__
        if name in (
            "InvalidCatalogNameError",
            "InvalidAuthorizationSpecificationError",
            "InvalidPasswordError",
            "CannotConnectNowError",
        ):
            return str(item)  # asyncpg's own words: 'database "x" does not exist', ...
        if "file is not a database" in str(item):
            return "the file is not a SQLite database"
    reason = describe_failure(error)
    return reason if reason != "database unreachable" else one_line(error)


@dataclass(frozen=True, slots=True)
class Opened:
    """A migrated database, ready for a store."""

    engine: AsyncEngine
    url: URL
    """The URL with the store's driver (and the password, for the writer process)."""


async def open_database(url: str, *, create: bool) -> Opened:
    """Connect, check, and migrate the database at ``url``; ``DatabaseOpenError`` when it fails.

    ``create``: a missing SQLite file, or a database without the arena's
    tables, is created (and the new file logged) rather than refused.
    """
    parsed = parse_url(url)
    masked = mask_url(url)
    sqlite = parsed.get_backend_name() == "sqlite"
    created = _check_sqlite_file(parsed, masked, create) if sqlite else False
    engine = make_engine(parsed)
    try:
        try:
            async with asyncio.timeout(OPEN_TIMEOUT_S) as deadline:
                async with engine.connect() as connection:
                    await connection.execute(text("SELECT 1"))
                revision = await current_revision(engine)
        except TimeoutError as error:
            if not deadline.expired():
                raise  # the driver's own connect timeout: see open_reason
            raise DatabaseOpenError(masked, f"no answer within {OPEN_TIMEOUT_S:g} s") from error
        if revision is None and not create:
            raise DatabaseOpenError(masked, "it holds no arena tables (not an arena database)")
        await migrate(engine)
    except DatabaseOpenError:
        await engine.dispose()
        raise
    except Exception as error:
        await engine.dispose()
        raise DatabaseOpenError(masked, open_reason(error)) from error
    except BaseException:
        await engine.dispose()
        raise
    if created:
        log.info("created the database file %s", Path(parsed.database or "").absolute())
    return Opened(engine, parsed)
