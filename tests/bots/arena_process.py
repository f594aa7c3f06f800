"""A real arena server and real ``arena-bot`` processes, started through their command lines.

``ArenaProcess`` runs ``arena serve --port 0`` over a SQLite file (bots
registered first with ``arena bots add --token-dir``), reads the port from its
first line, and answers JSON API reads; ``start_bot`` runs ``arena-bot`` with
the bot's token in its environment, in a session of its own so a test can
signal its whole process group the way a terminal's Ctrl-C does.

Where the test may (as root), these processes run at a higher scheduling
priority (``PRIORITY``; their search workers and the server's writer inherit
it). On a machine shared with other CPU-bound jobs, those jobs otherwise
stall the bots and the server for 100 ms and more at a time, and at 200 ms a
move such a stall loses a match whatever the bot does; the tests here
measure the bots, not the neighbours.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
PRIORITY = -10
"""The nice value of the started processes, when the test may raise their priority."""


def prioritise(proc: asyncio.subprocess.Process) -> None:
    """Raise ``proc``'s scheduling priority if permitted (children started later inherit it)."""
    with contextlib.suppress(PermissionError, ProcessLookupError):
        os.setpriority(os.PRIO_PROCESS, proc.pid, PRIORITY)


class ArenaProcess:
    """``arena serve`` in a subprocess; use as ``async with ArenaProcess(tmp_path, names)``."""

    def __init__(self, directory: Path, bots: tuple[str, ...], *serve_args: str) -> None:
        self.directory = directory
        self.bots = bots
        self.serve_args = serve_args
        self.db = f"sqlite+aiosqlite:///{directory / 'arena.db'}"
        self.tokens: dict[str, str] = {}
        self.port = 0
        self._proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> ArenaProcess:
        token_dir = self.directory / "tokens"
        add = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena", "bots", "add", "--db", self.db,
            "--token-dir", str(token_dir), *self.bots,
            env=ENV, stdout=asyncio.subprocess.DEVNULL,
        )
        assert await add.wait() == 0
        self.tokens = {name: (token_dir / name).read_text().strip() for name in self.bots}
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena", "serve", "--db", self.db, "--port", "0",
            *self.serve_args,
            env=ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        prioritise(self._proc)
        assert self._proc.stdout is not None
        line = (await asyncio.wait_for(self._proc.stdout.readline(), 30)).decode()
        assert "listening on" in line, line
        self.port = int(line.rsplit(":", 1)[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._proc is not None:
            await terminate(self._proc)

    @property
    def url(self) -> str:
        """The websocket URL."""
        return f"ws://127.0.0.1:{self.port}"

    async def get(self, path: str) -> Any:
        """GET a JSON API path."""

        def fetch() -> Any:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as r:
                return json.loads(r.read())

        return await asyncio.to_thread(fetch)

    async def matches(self, status: str) -> list[dict[str, Any]]:
        """Matches with ``status``, each with its moves."""
        listed = await self.get(f"/api/matches?status={status}")
        rows = listed["matches"] if isinstance(listed, dict) else listed
        return [await self.get(f"/api/matches/{row['id']}") for row in rows]


async def terminate(proc: asyncio.subprocess.Process, timeout: float = 20.0) -> int:
    """SIGTERM ``proc`` unless it has ended, and wait (SIGKILL after ``timeout`` s); its status."""
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode


async def start_bot(
    url: str, name: str, token: str, *args: str
) -> asyncio.subprocess.Process:
    """``arena-bot --url URL --name NAME ARGS`` with its token in the environment."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bots.client.cli", "--url", url, "--name", name, *args,
        env={**ENV, "ARENA_BOT_TOKEN": token},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group, as in a terminal of its own
    )
    prioritise(proc)
    return proc


async def stop_processes(*procs: asyncio.subprocess.Process) -> None:
    """Kill whatever is still running of ``procs`` (process groups included)."""
    for proc in procs:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
