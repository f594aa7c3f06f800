"""A private Mosquitto broker for tests, on a free port, that can be killed and restarted.

Tests never use a system broker: each gets its own ``Mosquitto`` (config in
``tmp_path``, no persistence, anonymous access on 127.0.0.1 only). Plus
``Recorder``, a real aiomqtt subscriber that keeps every message it receives.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import aiomqtt

MOSQUITTO = shutil.which("mosquitto") or (
    "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
)
"""The broker binary, or None when it is not installed."""

START_TIMEOUT_S = 5.0


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Mosquitto:
    """One broker process on ``port``; ``start`` / ``kill`` may be repeated (same port)."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        if MOSQUITTO is None:
            raise RuntimeError("mosquitto is not installed")
        self.port = port or free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self._conf = workdir / f"mosquitto-{self.port}.conf"
        self._conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        )
        self._log = workdir / f"mosquitto-{self.port}.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the broker and wait until its port accepts connections."""
        assert MOSQUITTO is not None
        if self._proc is not None:
            raise RuntimeError("the broker is already running")
        with self._log.open("ab") as log:
            self._proc = subprocess.Popen(
                [MOSQUITTO, "-c", str(self._conf)], stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _accepts(self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"mosquitto did not start: {self._log.read_text()[-2000:]}")
            time.sleep(0.02)

    def kill(self) -> None:
        """Kill the broker abruptly (SIGKILL): clients see their connection drop."""
        if self._proc is None:
            return
        self._proc.kill()
        self._proc.wait(timeout=5)
        self._proc = None


@dataclass(frozen=True, slots=True)
class Received:
    """One message a ``Recorder`` got."""

    topic: str
    payload: bytes
    retain: bool


_ids = itertools.count(1)


class Recorder:
    """An aiomqtt subscriber that records every message on ``filters`` (QoS 1)."""

    def __init__(self, port: int, *filters: str) -> None:
        self._client = aiomqtt.Client("127.0.0.1", port, identifier=f"recorder-{next(_ids)}")
        self._filters = filters
        self.messages: list[Received] = []
        self._arrived = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Recorder:
        await self._client.__aenter__()
        for topic_filter in self._filters:
            await self._client.subscribe(topic_filter, qos=1)
        self._task = asyncio.create_task(self._record())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
        await self._client.__aexit__(exc_type, exc, tb)

    async def _record(self) -> None:
        async for message in self._client.messages:
            payload = message.payload
            assert isinstance(payload, bytes | bytearray)
            self.messages.append(Received(str(message.topic), bytes(payload), message.retain))
            self._arrived.set()

    def on(self, topic: str) -> list[Received]:
        """The messages received on exactly ``topic``, in arrival order."""
        return [m for m in self.messages if m.topic == topic]

    async def wait_for(
        self, done: Callable[[list[Received]], bool], timeout: float = 5.0
    ) -> list[Received]:
        """Wait until ``done(messages)`` holds; fail the test after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while not done(self.messages):
                self._arrived.clear()
                await self._arrived.wait()
        return self.messages

    async def quiet(self, seconds: float = 0.3) -> list[Received]:
        """Wait ``seconds`` (to show that nothing more arrives) and return everything."""
        await asyncio.sleep(seconds)
        return self.messages
