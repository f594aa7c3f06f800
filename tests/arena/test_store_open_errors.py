"""A bad or unreachable database at start: one ``DatabaseOpenError`` line, within 10 s.

Each case checks the exact line the operator reads: the URL (password
masked) and the cause.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from test_store_postgres import pg_url  # noqa: F401  (a fixture)

from arena.errors import DatabaseOpenError, StoreStartError
from arena.store import Store
from arena.store.opening import OPEN_TIMEOUT_S

EXPECTED = "use sqlite+aiosqlite:///FILE or postgresql+asyncpg://USER@HOST/DATABASE"


async def refused(url: str, *, create: bool = True) -> str:
    """The one line ``Store.open`` refuses ``url`` with (checked to come within the limit)."""
    started = time.monotonic()
    with pytest.raises(DatabaseOpenError) as error:
        await Store.open(url, create=create)
    assert time.monotonic() - started < OPEN_TIMEOUT_S
    assert isinstance(error.value, StoreStartError)
    line = str(error.value)
    assert "\n" not in line
    return line


def free_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_an_unknown_scheme_names_the_url_with_its_password_masked() -> None:
    line = await refused("mysql+aiomysql://arena:s3cret@db.example/arena")
    assert line == (
        "cannot open database mysql+aiomysql://arena:***@db.example/arena:"
        f" unsupported database scheme 'mysql+aiomysql' ({EXPECTED})"
    )


async def test_a_bare_path_is_not_a_url() -> None:
    line = await refused("arena.db")
    assert line == f"cannot open database arena.db: not a database URL ({EXPECTED})"


async def test_a_sqlite_path_in_a_missing_directory(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/missing/arena.db"
    assert await refused(url) == (
        f"cannot open database {url}: directory {tmp_path}/missing does not exist"
    )


async def test_a_missing_file_is_not_created_for_a_read_only_command(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/arena.db"
    assert await refused(url, create=False) == (
        f"cannot open database {url}: the file does not exist"
        " (only a command that serves creates a database)"
    )
    assert list(tmp_path.iterdir()) == []


async def test_an_empty_or_foreign_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    url = f"sqlite+aiosqlite:///{empty}"
    assert await refused(url, create=False) == (
        f"cannot open database {url}: it holds no arena tables (not an arena database)"
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database, just some notes\n" * 100)
    url = f"sqlite+aiosqlite:///{notes}"
    assert await refused(url) == f"cannot open database {url}: the file is not a SQLite database"


async def test_creating_a_database_file_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="arena.store")
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path}/arena.db", create=True)
    await store.close()
    assert f"created the database file {tmp_path}/arena.db" in caplog.messages
    caplog.clear()
    store = await Store.open(f"sqlite:///{tmp_path}/arena.db", create=False)  # the plain scheme
    await store.close()
    assert not [m for m in caplog.messages if m.startswith("created")]


@pytest.fixture
def read_only_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs holding an arena database, remounted read-only."""
    mount = tmp_path / "disk"
    mount.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, check=False)

    mounted = run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:

        async def create() -> None:
            store = await Store.open(f"sqlite+aiosqlite:///{mount}/arena.db")
            await store.close()

        asyncio.run(create())
        assert run("mount", "-o", "remount,ro", str(mount)).returncode == 0
        yield mount
    finally:
        if run("umount", str(mount)).returncode != 0:
            run("umount", "-l", str(mount))


def test_an_unwritable_file_is_refused(read_only_disk: Path) -> None:
    url = f"sqlite+aiosqlite:///{read_only_disk}/arena.db"
    line = asyncio.run(refused(url, create=False))
    assert line == f"cannot open database {url}: the file is not writable (read-only file system)"


# PostgreSQL ------------------------------------------------------------------------


async def test_a_postgresql_server_that_refuses() -> None:
    url = f"postgresql+asyncpg://arena:s3cret@127.0.0.1:{free_port()}/arena"
    masked = url.replace("s3cret", "***")
    assert await refused(url) == (
        f"cannot open database {masked}: connection refused (is the database server running?)"
    )


async def test_a_postgresql_host_that_does_not_exist() -> None:
    line = await refused("postgresql://arena@nohost.invalid/arena")
    assert line.startswith(
        "cannot open database postgresql://arena@nohost.invalid/arena: host not found ("
    )


@pytest.fixture
async def silent_server() -> AsyncIterator[int]:
    """A port that accepts connections and never answers (a hung database server)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    for writer in held:
        writer.close()


async def test_a_postgresql_server_that_never_answers(silent_server: int) -> None:
    url = f"postgresql+asyncpg://arena@127.0.0.1:{silent_server}/arena"
    assert await refused(url) == f"cannot open database {url}: no answer within 5 s"


async def test_a_postgresql_database_that_does_not_exist(pg_url: str) -> None:  # noqa: F811
    url = make_url(pg_url).set(database="arena_no_such_database").render_as_string(False)
    assert await refused(url) == (
        f'cannot open database {url}: database "arena_no_such_database" does not exist'
    )
