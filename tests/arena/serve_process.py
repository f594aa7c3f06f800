"""A real ``arena serve`` process for tests, and scripted bots that speak to it over websockets."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from protocol.messages import PROTOCOL_VERSION

START_TIMEOUT_S = 30.0


def arena(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run ``python -m arena ARGS`` to its end; its output as text."""
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def add_bots(db: str, token_dir: Path, *names: str) -> dict[str, str]:
    """Register ``names`` through the command line; their tokens."""
    done = arena("bots", "add", "--db", db, "--if-missing", "--token-dir", str(token_dir), *names)
    assert done.returncode == 0, done.stderr
    return {name: (token_dir / name).read_text().strip() for name in names}


class ServeProcess:
    """``python -m arena serve --port 0`` with the given options, stopped by ``stop``."""

    def __init__(self, db: str, *options: str, open_files: int | None = None) -> None:
        self.open_files = open_files
        """Start the server with this soft open-files limit (``ulimit -Sn``), if given."""
        self.command = [
            sys.executable, "-m", "arena", "serve", "--port", "0", "--db", db,
            "--pairing-window", "0.02", *options,
        ]  # fmt: skip
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self) -> ServeProcess:
        """Start and wait for the listening line; raises with the output if it exits first."""
        self.process = subprocess.Popen(
            self.command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=None if self.open_files is None else self._limit_open_files,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening on" not in line:
            self.process.wait(START_TIMEOUT_S)
            raise RuntimeError(f"arena serve did not start: {line}{self.stderr()}")
        self.port = int(line.rsplit(":", 1)[1])
        return self

    def _limit_open_files(self) -> None:
        """In the child before exec: the soft limit of ``ulimit -Sn N`` (the hard one kept)."""
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, hard))

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def health(self) -> tuple[int, dict[str, Any]]:
        """``GET /healthz``: the status and the body."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then wait; the exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def stderr(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        return self.process.stderr.read() if self.process.poll() is not None else ""


class Bot:
    """A scripted bot: hello, then JSON messages both ways."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def login(cls, url: str, name: str, token: str) -> Bot:
        ws = await connect(url)
        bot = cls(ws)
        await bot.send(type="hello", role="bot", version=PROTOCOL_VERSION, name=name, token=token)
        assert (await bot.expect("welcome"))["name"] == name
        return bot

    async def send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))

    async def expect(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        """Skip messages until one of type ``kind``."""
        async with asyncio.timeout(timeout):
            while True:
                message: dict[str, Any] = json.loads(await self.ws.recv())
                if message["type"] == kind:
                    return message

    async def nothing_of(self, kind: str, seconds: float) -> None:
        """Assert no message of type ``kind`` arrives for ``seconds``."""
        try:
            message = await self.expect(kind, timeout=seconds)
        except TimeoutError:
            return
        raise AssertionError(f"unexpected {kind}: {message}")


async def pair_up(
    x: Bot, o: Bot, game: str = "tictactoe", move_ms: int = 60_000
) -> tuple[Bot, Bot, dict[str, Any]]:
    """Both seek; the two in seat order (first to move first) and the first ``your_turn``."""
    time_control = {"move_ms": move_ms, "bank_ms": 0}
    await x.send(type="seek", game=game, time_control=time_control)
    await o.send(type="seek", game=game, time_control=time_control)
    start = await x.expect("match_start")
    await o.expect("match_start")
    first, second = (x, o) if start["you"] == 0 else (o, x)
    return first, second, await first.expect("your_turn")
