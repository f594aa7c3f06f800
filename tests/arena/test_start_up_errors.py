"""Start-up errors a person can act on: one line on stderr, exit status 2, no traceback,
for ``arena serve`` and ``arena bots add`` run as real processes."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.arena.serve_process import arena


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port some other program listens on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The one ``error: ...`` line of a refused command (exit status 2, no traceback)."""
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"


def test_a_port_in_use_says_so_and_how_to_pick_another(tmp_path: Path, busy_port: int) -> None:
    done = arena("serve", "--port", str(busy_port), "--db", db_url(tmp_path))
    assert (
        one_line_error(done)
        == f"error: port {busy_port} is in use; pass --port (0 picks a free one)"
    )


def test_a_port_in_use_fails_before_the_database_is_created(
    tmp_path: Path, busy_port: int
) -> None:
    done = arena("serve", "--port", str(busy_port), "--db", db_url(tmp_path))
    assert done.returncode == 2, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_host_that_cannot_be_listened_on(tmp_path: Path) -> None:
    done = arena("serve", "--port", "0", "--host", "256.1.1.1", "--db", db_url(tmp_path))
    line = one_line_error(done)
    assert line.startswith("error: cannot listen on 256.1.1.1:0: ")
    assert line.endswith("; check --host and --port")


def test_a_bad_broker_url(tmp_path: Path) -> None:
    done = arena("serve", "--port", "0", "--mqtt", "http://nope", "--db", db_url(tmp_path))
    assert one_line_error(done) == (
        "error: --mqtt: bad MQTT broker URL 'http://nope': the scheme must be mqtt:// (got 'http')"
    )


@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_a_token_dir_that_cannot_hold_tokens_registers_nobody(tmp_path: Path, kind: str) -> None:
    assert arena("bots", "add", "--db", db_url(tmp_path), "bob").returncode == 0
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    token_dir = blocker if kind == "a file" else blocker / "tokens"
    done = arena("bots", "add", "--db", db_url(tmp_path), "--token-dir", str(token_dir), "alice")
    line = one_line_error(done)
    assert line.startswith(f"error: --token-dir {token_dir}: ")
    assert line.endswith("; pass a directory this user can write")
    # Refused before a token was made: no bot whose token nobody has.
    listed = arena("bots", "list", "--db", db_url(tmp_path))
    assert "bob" in listed.stdout and "alice" not in listed.stdout
