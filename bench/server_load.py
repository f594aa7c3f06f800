"""Server load: N concurrent matches between instant-move bots, every move persisted.

The arena server runs in its own process (``ArenaServer`` on a free loopback
port, a fresh SQLite file in a temporary directory unless ``--db`` names one);
2N bots run in one or more separate client processes, each an asyncio loop
holding many websocket connections (``LeanSocket``: a minimal RFC 6455
client, so the bots take as little as possible of the two cores they share
with the server), at niceness +5 (``--client-niceness``): the load generator
yields the cores to the server it measures, as the server's own database
writer does. ``--cores split`` goes further: the server's event loop gets a
core to itself and the bots, the writer and the bench share the others
(``CoreSplit``), the nearest this machine comes to bots on other machines;
``--cores shared,split`` runs both side by side. Server and bots run on the
event loop ``arena serve`` uses (``arena.runtime``: uvloop unless
``ARENA_EVENT_LOOP=asyncio``), and the server manages its heap as ``arena
serve`` does (``settle_heap``). Bots first
seek at seeded random times over the first half of the warm-up; each
answers every ``your_turn`` at once (or after a think time drawn, seeded,
from ``--think-ms`` ±50%, ``--think-jitter``) with a seeded random legal
move (or the first one), and seeks again after ``match_end`` until the
measured window is over. Then the
bots finish the matches they are in, the server shuts down, and the database
is checked: it must hold exactly the moves the clients saw confirmed.

Reported: matches live at once, matches completed, moves/s over the measured
window (after a warm-up), and the latency a move sees through the server —
from the client sending ``move`` to the ``moved`` broadcast for that ply
reaching the same connection (parse, validate, apply, queue for the group
commit, serialize, send), twice:

- server-added: up to the time the kernel received the ``moved`` on the
  client's socket (``SO_TIMESTAMPNS``, read by ``StampedTransport``). Loopback
  round trips are tens of microseconds, so this is the server's delay,
  queueing on its busy loop included. The target is about this figure.
- as the client's loop handled it: the same plus however long the client
  process, busy with its other connections, took to get to that socket.

Beside them: the server's CPU time per move; the CPU of every process the
run measured (server, its SQLite writer, the bots) per move, against what the
machine's cores allow at the target rate (2 cores / 5,000 moves/s = 400 us):
the bots share the server's cores here, so above that budget the target
load does not fit the machine whatever the server does; how fast the machine
was just before the run (``machine_speed_ms``: an empty Python loop); how
late the server's own event loop runs (a 10 ms ticker) and its
garbage-collector passes in the window, the two things that stall every
move at once. Each run's last line says whether it met the target and, if
not, what it missed; the summary counts the runs that met it.

These machines are shared: the same code at the same settings has needed
from about 140 to 270 us of server CPU per move within one hour. Compare
configurations side by side in one invocation (comma lists) and with
``--repeat``, which runs them all round-robin and prints the medians. To
compare two versions of the server's code, ``--callgrind`` counts the
instructions the server executes per move in the window (valgrind; about 50
times slower, so use a small load): five runs of the same code at the same
settings agreed within 3%, while the same day's target runs needed from 194
to 251 us of server CPU per move. It
counts user-space instructions only, not the kernel's socket work, nor cache
misses.

Which run the target (500 concurrent matches, >= 5,000 moves/s, p99 <= 10 ms)
is about: with instant bots every live match always has one move in flight,
so by Little's law each match's turn cycle is live matches / moves per
second (500 / 5,000 = 100 ms), and bots that never think spend all of it
queued in the server or the client however fast either is; the closed loop
measures capacity, not latency. Latency at the target is measured with a fixed load
from 500 matches: ``--think-ms 80`` (about 5,000 moves/s offered) and
``--pairing-window 0.05`` (so bots between matches are paired again at
once, and close to all 500 matches are live at any moment).

    python bench/server_load.py --think-ms 80 --pairing-window 0.05   # the target run
    python bench/server_load.py --think-ms 80 --pairing-window 0.05 --cores shared,split --repeat 3
    python bench/server_load.py                    # 500 matches, 20 s window
    python bench/server_load.py --matches 50,200,500 --seconds 20
    python bench/server_load.py --think-ms 80,120,160,200 --pairing-window 0.05   # load sweep
    python bench/server_load.py --think-ms 80 --pairing-window 0.05 --think-jitter 0.5,0 --repeat 3
    python bench/server_load.py --matches 500 --client-procs 2 --game tictactoe
    python bench/server_load.py --db-writer inline,process   # SQLite writers side by side
    python bench/server_load.py --db postgresql+asyncpg://user:pw@127.0.0.1/arena
    python bench/server_load.py --profile /tmp/server.pstats   # cProfile the server
    python bench/server_load.py --matches 20 --seconds 10 --callgrind   # instructions per move

All traffic stays on 127.0.0.1; every phase has a deadline, so a run always
ends by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import cProfile
import functools
import gc
import json
import logging
import math
import multiprocessing
import multiprocessing.resource_tracker
import multiprocessing.spawn
import os
import random
import secrets
import shlex
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import timeit
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnContext, SpawnProcess
from multiprocessing.synchronize import Event as MpEvent
from pathlib import Path
from typing import Any, cast

from sqlalchemy import func, select
from websockets.utils import accept_key

try:
    from websockets.speedups import apply_mask
except ImportError:  # websockets built without its C extension
    from websockets.utils import apply_mask

from arena.inbound import payload_extent

from arena import runtime
from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from arena.store.engine import make_engine
from arena.store.models import Bot, Match, Move
from protocol.messages import PROTOCOL_VERSION, RATE_LIMIT_BURST, RATE_LIMIT_PER_S

TARGET_MATCHES = 500
TARGET_MOVES_PER_S = 5000.0
TARGET_P99_MS = 10.0

MOVE_MS = 30_000
"""A generous per-move time: instant bots never come near it, even on a saturated server."""

_CONNECT_CONCURRENCY = 50
"""Handshakes in flight per client process; more only overflows the listen backlog."""

_PROGRESS_SLOTS = 4
"""Per client process in the shared progress array: moves, matches ended, bots playing, errors."""

DEFAULT_PAIRING_WINDOW_S = ArenaConfig().pairing_window_s
DEFAULT_RATE_PER_S = RATE_LIMIT_PER_S
DEFAULT_CLIENT_NICENESS = 5
"""The bots run below the server's priority: on two shared cores, a client process that
preempts the server adds its own delay to the latency being measured. Measured at about
2,300 moves/s (``--think-ms 200``), five runs each: median p99 13.7 ms at +5, 17.0 ms at 0;
a small effect next to run-to-run noise (11.9-19.6 ms at +5)."""

DEFAULT_THINK_JITTER = 0.5
"""How far a bot's think time varies around ``--think-ms`` (a fraction of it). With one
fixed think time for all 1,000 bots the load phase-locks: a burst of moves that the server
answers in one turn of its loop comes back as a burst exactly ``think_ms`` later, again and
again, which no population of real bots does. Measured side by side, 500 matches,
alternating runs: at ``--think-ms 80`` while the server had headroom (5,620-5,780 moves/s,
80-82% of a core) p99 was 6.9 and 6.6 ms with 0.5 against 10.3 and 14.0 ms with 0. On a
busier machine (84-98% of a core), in five series of three runs each (``--think-ms`` 80,
80, 80, 85 and 100), the median p99 with 0.5 was lower in four, by 2.0 to 8.0 ms, and
0.2 ms higher in one: once the server is saturated, its queue dominates either way."""

_PROCESS_START_TIMEOUT_S = 60.0
_DRAIN_TIMEOUT_S = 15.0
"""After the window, how long bots may take to finish the matches they are in."""


# Configuration and results ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """One benchmark run."""

    matches: int = TARGET_MATCHES
    seconds: float = 20.0
    """Length of the measured window."""
    warmup: float = 3.0
    """Seconds of play before the window opens (connections are all up before it starts)."""
    game: str = "connect4"
    client_procs: int = 1
    db: str | None = None
    """A database URL; None means a fresh SQLite file in a temporary directory."""
    policy: str = "random"
    """``random`` (seeded, per bot) or ``first`` (always the first legal move)."""
    seed: int = 1
    think_ms: float = 0.0
    """How long each bot waits before answering a ``your_turn``, on average. Instant bots
    (0) are a closed loop: they answer as fast as the server replies, so the server is
    always saturated and its latency is its queue (Little's law: live matches / moves per
    second). A think time offers a fixed load instead, as real bots do."""
    think_jitter: float = DEFAULT_THINK_JITTER
    """Each think time is drawn uniformly from ``think_ms * (1 -+ think_jitter)`` (seeded
    per bot); 0 makes every think exactly ``think_ms``."""
    pairing_window_s: float = DEFAULT_PAIRING_WINDOW_S
    rate_per_s: float = DEFAULT_RATE_PER_S
    """The server's per-connection message rate limit; the protocol's own by default. Moves
    answering a turn are not counted against it, so instant bots stay within it."""
    progress_s: float = 2.0
    profile: str | None = None
    """Write a cProfile of the server process here (slows the server down)."""
    quiet: bool = False
    db_writer: str = "process"
    """SQLite group commits from a writer ``process`` (as ``arena serve``) or ``inline``."""
    client_niceness: int = DEFAULT_CLIENT_NICENESS
    """Added to the client processes' niceness: the load generator yields the shared cores
    to the server it measures (0: the same priority)."""
    callgrind: bool = False
    """Run the server under valgrind's callgrind and count its instructions in the window
    (``Callgrind``); some 50 times slower, so meant for small loads."""
    cores: str = "shared"
    """``shared``: every process may run on every core. ``split``: the server's event loop
    gets the first core to itself, and the bots, the database writer and the bench the
    others (``CoreSplit``), as when the bots play from other machines."""


@dataclass(slots=True)
class ClientStats:
    """What one client process measured; summed over processes by ``_merge``."""

    moves: int = 0
    """Own moves confirmed by a ``moved`` (each move counted once, by its mover)."""
    window_moves: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    """Move-to-moved latency of every move sent inside the window, as the client's loop
    saw it: up to the moment its ``moved`` was handled."""
    arrival_ms: list[float] = field(default_factory=list)
    """The same moves' latency up to the kernel's receive time of the ``moved`` on the
    client's socket: what the server (and the network) added, without the client loop's
    own delay. Empty where the kernel gives no receive times."""
    lag_ms: list[float] = field(default_factory=list)
    """How late a 20 ms ticker woke up inside the window: the client loop's own delay."""
    matches_ended: int = 0
    window_matches_ended: int = 0
    match_moves: dict[str, int] = field(default_factory=dict)
    """Per ended match (seen from seat 0): the number of ``moved`` received."""
    terminations: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    connect_s: float = 0.0
    cores: set[int] = field(default_factory=set)
    """The cores the client processes were allowed to run on."""


@dataclass(slots=True)
class LoadReport:
    """The outcome of one run, as printed by ``format_report``."""

    spec: LoadSpec
    db_kind: str
    window_s: float
    live_samples: list[float]
    stats: ClientStats
    db_moves: int
    db_matches: Counter[str]
    mismatched_matches: int
    server_cpu: float | None
    client_cpu: float | None
    writer_cpu: float | None = None
    """The server's child processes (the SQLite writer) in cores; None when it has none."""
    commits: dict[str, Any] | None = None
    """The server store's group-commit counts and durations (``CommitStats``), and the
    server loop's lateness and GC passes (``_ServerWatch``)."""
    window: tuple[float, float] = (0.0, 0.0)
    """The measured window, in ``perf_counter`` time (shared by all processes)."""
    server_instructions: int | None = None
    """Instructions the server process executed in the window (``--callgrind`` only)."""
    loop_ms: float = float("nan")
    """``machine_speed_ms()`` just before the run: how fast this shared machine was then."""

    @property
    def server_instructions_per_move(self) -> float:
        """Server instructions per confirmed move in the window (``--callgrind`` only)."""
        moves = self.stats.window_moves
        if self.server_instructions is None or moves <= 0:
            return float("nan")
        return self.server_instructions / moves

    @property
    def server_us_per_move(self) -> float:
        """Server CPU time per confirmed move in the window, in microseconds."""
        if self.server_cpu is None or self.moves_per_s <= 0:
            return float("nan")
        return self.server_cpu / self.moves_per_s * 1e6

    @property
    def machine_us_per_move(self) -> float:
        """CPU time of every process the run measured (server, writer, bots) per move, in us.

        On a machine whose cores the bots share with the server, this against
        ``cpu_budget_us`` says whether the target load fits the machine at all.
        """
        if self.server_cpu is None or self.client_cpu is None or self.moves_per_s <= 0:
            return float("nan")
        cores = self.server_cpu + self.client_cpu + (self.writer_cpu or 0.0)
        return cores / self.moves_per_s * 1e6

    @staticmethod
    def cpu_budget_us() -> float:
        """All of this machine's cores, per move at the target rate, in us."""
        return _machine_cores() / TARGET_MOVES_PER_S * 1e6

    @property
    def writer(self) -> str:
        """Where the server's group commits ran (``inline`` for PostgreSQL whatever was asked)."""
        return str((self.commits or {}).get("writer", f"{self.spec.db_writer}?"))

    def server_lag_ms(self) -> list[float]:
        """The server loop's lateness samples inside the window."""
        lo, hi = self.window
        return [ms for at, ms in (self.commits or {}).get("lag", []) if lo <= at < hi]

    def server_rss(self) -> tuple[float, float] | None:
        """The server's resident memory (MiB) when the window opened and when it closed."""
        lo, hi = self.window
        inside = [mib for at, mib in (self.commits or {}).get("rss", []) if lo <= at < hi]
        return (inside[0], inside[-1]) if inside else None

    def gc_passes(self, generation: int) -> list[float]:
        """Durations (ms) of the server's GC passes of ``generation`` inside the window."""
        lo, hi = self.window
        return [
            ms
            for at, gen, ms in (self.commits or {}).get("gc", [])
            if gen == generation and lo <= at < hi
        ]

    @property
    def moves_per_s(self) -> float:
        """Confirmed moves per second over the measured window."""
        return self.stats.window_moves / self.window_s if self.window_s > 0 else 0.0

    @property
    def persisted(self) -> bool:
        """Every confirmed move is in the database, and every ended match has all its moves."""
        return self.db_moves == self.stats.moves and self.mismatched_matches == 0

    def latency(self, q: float) -> float:
        """The ``q`` quantile (0-1) of the window's move latencies as the clients saw them, ms."""
        return _quantile(self.stats.latencies_ms, q)

    def server_added(self, q: float) -> float:
        """The ``q`` quantile (0-1) of the window's latencies to the kernel's receive time, ms."""
        return _quantile(self.stats.arrival_ms, q)

    def target_misses(self) -> list[str]:
        """What this run fell short of in the issue's target; empty when it met all of it.

        The p99 is the server-added one (to the kernel's receive time), or the
        clients' own where the kernel gives no receive times (which only adds
        the client loop's delay).
        """
        misses = []
        if self.spec.matches < TARGET_MATCHES:
            misses.append(f"{self.spec.matches} matches < {TARGET_MATCHES}")
        if self.moves_per_s < TARGET_MOVES_PER_S:
            misses.append(f"{self.moves_per_s:,.0f} moves/s < {TARGET_MOVES_PER_S:,.0f}")
        p99 = self.server_added(0.99)
        if math.isnan(p99):  # no kernel receive times
            p99 = self.latency(0.99)
        if not p99 <= TARGET_P99_MS:
            misses.append(f"p99 {p99:.2f} ms > {TARGET_P99_MS:g} ms")
        if not self.persisted:
            misses.append("not every move persisted")
        return misses

    @property
    def met_target(self) -> bool:
        """True when the run met every part of the issue's target (``target_misses``)."""
        return not self.target_misses()


def _quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# The bots -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ClientSpec:
    url: str
    game: str
    policy: str
    seed: int
    warmup: float
    seconds: float
    pairing_window_s: float
    think_ms: float
    think_jitter: float
    niceness: int


class _Clients:
    """All the bots of one client process, on one event loop."""

    def __init__(self, spec: _ClientSpec, progress: Any, slot: int) -> None:
        self.spec = spec
        self.stats = ClientStats()
        self.stopping = False
        self.window_start = float("inf")
        self.window_end = float("inf")
        self.in_match = 0
        self._progress = progress
        self._slot = slot * _PROGRESS_SLOTS
        self._connect_gate = asyncio.Semaphore(_CONNECT_CONCURRENCY)

    def publish(self) -> None:
        """Copy the counters the parent prints as progress into shared memory."""
        p, s = self._progress, self._slot
        p[s] = self.stats.moves
        p[s + 1] = self.stats.matches_ended
        p[s + 2] = self.in_match
        p[s + 3] = sum(self.stats.errors.values())

    async def connect(self, name: str, token: str) -> LeanSocket:
        """Open one bot's connection and say hello (a few handshakes at a time)."""
        async with self._connect_gate:
            host, port = _host_port(self.spec.url)
            sock = LeanSocket(host, port)
            await asyncio.wait_for(StampedTransport.connect(host, port, sock), 30)
            await asyncio.wait_for(sock.opened, 30)
            hello = {
                "type": "hello",
                "role": "bot",
                "version": PROTOCOL_VERSION,
                "name": name,
                "token": token,
                "max_matches": 1,
            }
            sock.send(json.dumps(hello))
            welcome = json.loads(await asyncio.wait_for(sock.next_message(), 30))
            if welcome.get("type") != "welcome":
                raise RuntimeError(f"{name}: expected welcome, got {welcome}")
            return sock


def _host_port(url: str) -> tuple[str, int]:
    netloc = url.split("://", 1)[1].split("/", 1)[0]
    host, _, port = netloc.rpartition(":")
    return host, int(port)


_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Linux's option (asm-generic value; Python does not name it) for nanosecond receive times."""
_ANCILLARY_BYTES = socket.CMSG_SPACE(struct.calcsize("@ll"))
_READ_BYTES = 1 << 16


class StampedTransport:
    """The client end of one TCP connection, read with ``recvmsg`` for the kernel's receive time.

    A loop's own transports read with ``recv`` and drop that time. With
    ``SO_TIMESTAMPNS`` on, each read carries the time (``CLOCK_REALTIME``)
    the kernel queued its last segment on the socket, so a latency measured to
    it leaves out how long this process's busy loop took to get to the socket.
    That is set on the protocol as ``received_ns`` before its
    ``data_received``; it stays None where the kernel sends no time.
    Writes go straight to the socket; what does not fit waits for it to drain.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, protocol: LeanSocket
    ) -> None:
        self._loop = loop
        self._sock = sock
        self._fd = sock.fileno()
        self._protocol = protocol
        self._pending = bytearray()
        self._closed = False
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(OSError):  # not Linux: no receive times
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        protocol.connection_made(cast(asyncio.Transport, self))
        loop.add_reader(self._fd, self._readable)

    @classmethod
    async def connect(cls, host: str, port: int, protocol: LeanSocket) -> StampedTransport:
        """Open a TCP connection to ``host:port`` driving ``protocol``."""
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, (host, port))
        except BaseException:
            sock.close()
            raise
        return cls(loop, sock, protocol)

    def _readable(self) -> None:
        try:
            data, ancillary, _, _ = self._sock.recvmsg(_READ_BYTES, _ANCILLARY_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lose(exc)
            return
        if not data:
            self._lose(None)
            return
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack_from("@ll", raw)
                self._protocol.received_ns = seconds * 1_000_000_000 + nanoseconds
        try:
            self._protocol.data_received(data)
        except Exception as exc:  # what a loop's transport does: report it, drop the line
            print(f"  client connection failed: {exc!r}", file=sys.stderr)
            self._lose(exc)

    def write(self, data: bytes) -> None:
        """Send now; queue what the socket does not take."""
        if self._closed:
            return
        if self._pending:
            self._pending += data
            return
        try:
            sent = self._sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            self._lose(exc)
            return
        if sent < len(data):
            self._pending += data[sent:]
            self._loop.add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        try:
            sent = self._sock.send(self._pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lose(exc)
            return
        del self._pending[:sent]
        if not self._pending:
            self._loop.remove_writer(self._fd)

    def is_closing(self) -> bool:
        """True once closed."""
        return self._closed

    def close(self) -> None:
        """Close the socket (what is still queued is dropped)."""
        self._lose(None)

    def _lose(self, exc: Exception | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._loop.remove_reader(self._fd)
        if self._pending:
            self._loop.remove_writer(self._fd)
        self._sock.close()
        self._protocol.connection_lost(exc)


class LeanSocket(asyncio.Protocol):
    """A minimal websocket client (RFC 6455) for the load bots.

    The bots share two cores with the server they measure, so their own cost
    per message is the benchmark's noise floor. A general client library pays
    for a reader task, an assembler and a lock per message; this one is a plain
    ``asyncio.Protocol``: an HTTP upgrade with its ``Sec-WebSocket-Accept``
    checked, masked frames out, unmasked frames in, pongs for pings and the
    closing handshake. The server never fragments or compresses (it negotiates
    no extension), so a data frame is a whole message; anything else it sends
    is a protocol error and fails the run.
    """

    def __init__(self, host: str, port: int) -> None:
        self.transport: asyncio.Transport | None = None
        self.on_message: Callable[[bytes], None] = self._keep
        self.received_ns: int | None = None
        """When the kernel received the latest data (``StampedTransport``), else None."""
        self._host = f"{host}:{port}"
        self._key = base64.b64encode(secrets.token_bytes(16)).decode()
        self._masks = random.Random(secrets.randbits(64))
        self._buffer = bytearray()
        self._handshaken = False
        self._closing = False
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self._kept: asyncio.Queue[bytes] = asyncio.Queue()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Send the upgrade request."""
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(
            (
                f"GET / HTTP/1.1\r\nHost: {self._host}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {self._key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def data_received(self, data: bytes) -> None:
        """Check the upgrade response, then hand each message to ``on_message``."""
        buffer = self._buffer
        buffer += data
        if not self._handshaken and not self._read_response():
            return
        start, size = 0, len(buffer)
        while size - start >= 2:
            first = buffer[start]
            if buffer[start + 1] & 0x80:
                raise ConnectionError("the server sent a masked frame")
            extent = payload_extent(buffer, start, size)
            if extent is None:
                break
            length, head = extent
            end = head + length
            if end > size:
                break
            payload = bytes(buffer[head:end])
            start = end
            if first in (0x81, 0x82):
                self.on_message(payload)
            elif first == 0x89:  # ping
                self._send_frame(0x8A, payload)
            elif first == 0x88:  # close: echo its code, then the server closes TCP
                if not self._closing:
                    self._closing = True
                    self._send_frame(0x88, payload[:2])
            elif first != 0x8A:  # an unsolicited pong is fine; nothing else is expected
                raise ConnectionError(f"unexpected frame byte {first:#x}")
        del buffer[:start]

    def _read_response(self) -> bool:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = bytes(self._buffer[:end]).decode("latin-1")
        del self._buffer[: end + 4]
        accept = f"sec-websocket-accept: {accept_key(self._key)}".lower()
        if not head.startswith("HTTP/1.1 101") or accept not in head.lower():
            error = ConnectionError(f"upgrade refused: {head.splitlines()[0]}")
            self.opened.set_exception(error)
            assert self.transport is not None
            self.transport.close()
            return False
        self._handshaken = True
        self.opened.set_result(None)
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        """Resolve the futures anyone may be waiting on."""
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the upgrade"))
        if not self.closed.done():
            self.closed.set_result(None)

    def send(self, text: str) -> None:
        """Send one text message (dropped once the connection is closing)."""
        if not self._closing:
            self._send_frame(0x81, text.encode())

    async def next_message(self) -> bytes:
        """The next message received before ``on_message`` was replaced (the welcome)."""
        return await self._kept.get()

    async def close(self, timeout: float = 5.0) -> None:
        """The closing handshake (1000), then the socket."""
        if not self._closing and not self.closed.done():
            self._closing = True
            self._send_frame(0x88, (1000).to_bytes(2, "big"))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.closed), timeout)
        if self.transport is not None:
            self.transport.close()

    def _keep(self, payload: bytes) -> None:
        self._kept.put_nowait(payload)

    def _send_frame(self, first: int, payload: bytes) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        size = len(payload)
        if size < 126:
            header = bytes((first, 0x80 | size))
        elif size < 1 << 16:
            header = struct.pack("!BBH", first, 0xFE, size)
        else:
            header = struct.pack("!BBQ", first, 0xFF, size)
        mask = self._masks.randbytes(4)
        transport.write(header + mask + apply_mask(payload, mask))


def think_delay(mean_s: float, jitter: float, rng: random.Random) -> float:
    """One think time: uniform on ``mean_s * (1 -+ jitter)``; exactly ``mean_s`` at 0."""
    if not jitter:
        return mean_s
    return mean_s * (1.0 + jitter * (2.0 * rng.random() - 1.0))


class _Bot:
    """One instant-move bot: seek, answer every turn at once, seek again."""

    def __init__(self, clients: _Clients, name: str, sock: LeanSocket, seed: int) -> None:
        self.clients = clients
        self.name = name
        self.sock = sock
        self.rng = random.Random(seed)
        self.match_id: str | None = None
        self.seat = -1
        self.seeking = False
        self.moved_seen = 0
        self.pending_ply = -1
        self.sent_at = 0.0
        self.sent_ns = 0
        self._move_prefix = ""
        self._first = clients.spec.policy == "first"
        self._think_s = clients.spec.think_ms / 1000.0
        self._jitter = clients.spec.think_jitter
        # Its own generator: the same bots play the same moves whatever the jitter.
        self._think_rng = random.Random(-1 - seed)
        self._loop = asyncio.get_running_loop()
        self._seek = json.dumps(
            {
                "type": "seek",
                "game": clients.spec.game,
                "time_control": {"move_ms": MOVE_MS, "bank_ms": 0},
            }
        )
        sock.on_message = self.on_message

    def seek(self) -> None:
        """Ask the lobby for a match (unless the run is winding down)."""
        if not self.clients.stopping:
            self.seeking = True
            self.sock.send(self._seek)

    def cancel_seek(self) -> None:
        """Withdraw a pending seek (the benchmark is winding down)."""
        if self.seeking:
            self.seeking = False
            self.sock.send('{"type":"cancel_seek"}')

    def on_message(self, frame: bytes) -> None:
        """React to one server message, on the spot."""
        clients, stats = self.clients, self.clients.stats
        msg = json.loads(frame)
        kind = msg["type"]
        if kind == "moved":
            self.moved_seen += 1
            if msg["player"] == self.seat and msg["ply"] == self.pending_ply:
                now = time.perf_counter()
                stats.moves += 1
                if clients.window_start <= self.sent_at < clients.window_end:
                    stats.window_moves += 1
                    stats.latencies_ms.append((now - self.sent_at) * 1000.0)
                    arrived = self.sock.received_ns
                    if arrived is not None:
                        stats.arrival_ms.append((arrived - self.sent_ns) / 1e6)
                self.pending_ply = -1
        elif kind == "your_turn":
            legal = msg["legal_moves"]
            move = legal[0] if self._first else legal[self.rng.randrange(len(legal))]
            ply = self.pending_ply = msg["ply"]
            reply = f'{self._move_prefix}{ply},"move":{move}}}'
            if self._think_s > 0:
                self._loop.call_later(
                    think_delay(self._think_s, self._jitter, self._think_rng),
                    self._send_move,
                    reply,
                )
            else:
                self._send_move(reply)
        elif kind == "match_start":
            self.match_id, self.seat, self.seeking = msg["match_id"], msg["you"], False
            self._move_prefix = f'{{"type":"move","match_id":{json.dumps(self.match_id)},"ply":'
            self.moved_seen = len(msg["moves"])
            clients.in_match += 1
        elif kind == "match_end":
            self._ended(msg)
        elif kind == "error":
            stats.errors[msg.get("code", "?")] += 1
            if sum(stats.errors.values()) <= 5:
                print(f"  {self.name}: error {msg}", file=sys.stderr)

    def _send_move(self, reply: str) -> None:
        self.sent_at = time.perf_counter()
        self.sent_ns = time.time_ns()  # the kernel's receive times are wall-clock
        self.sock.send(reply)

    def _ended(self, msg: dict[str, Any]) -> None:
        clients, stats = self.clients, self.clients.stats
        clients.in_match -= 1
        if self.seat == 0:
            # Counted once per match, by its first player.
            stats.matches_ended += 1
            if clients.window_start <= time.perf_counter() < clients.window_end:
                stats.window_matches_ended += 1
            stats.match_moves[msg["match_id"]] = self.moved_seen
            stats.terminations[msg["termination"]] += 1
        self.match_id, self.seat, self.moved_seen = None, -1, 0
        self.seek()


async def _run_clients(
    spec: _ClientSpec,
    bots: Sequence[tuple[str, str]],
    slot: int,
    progress: Any,
    ready: MpEvent,
    go: MpEvent,
    start_at: Any,
) -> ClientStats:
    clients = _Clients(spec, progress, slot)
    began = time.perf_counter()
    sockets = await asyncio.gather(*(clients.connect(name, token) for name, token in bots))
    clients.stats.connect_s = time.perf_counter() - began
    players = [
        _Bot(clients, name, ws, spec.seed * 1_000_003 + slot * 10_007 + i)
        for i, ((name, _), ws) in enumerate(zip(bots, sockets, strict=True))
    ]
    ready.set()
    # The parent opens the race once every process is connected; perf_counter is the
    # system-wide monotonic clock on Linux, so the processes agree on the window.
    await asyncio.to_thread(go.wait, _PROCESS_START_TIMEOUT_S)
    t0 = float(start_at.value)
    clients.window_start = t0 + spec.warmup
    clients.window_end = clients.window_start + spec.seconds
    ticker = asyncio.create_task(_tick(clients))
    try:
        # Bots arrive spread over the first half of the warm-up, as real ones do: had
        # they all sought at once, their matches would start and end in lockstep, and
        # the run would measure waves of pairing instead of steady play.
        arrivals = random.Random(spec.seed * 7919 + slot)
        spread = spec.warmup / 2
        loop = asyncio.get_running_loop()
        for bot in players:
            loop.call_later(arrivals.uniform(0.0, spread), bot.seek)
        await asyncio.sleep(max(0.0, clients.window_end - time.perf_counter()))
        clients.stopping = True
        for bot in players:
            bot.cancel_seek()
        # A seek the server paired before it read our cancel still yields a match_start
        # within a pairing window; wait that long, then until every match is over.
        quiet_at = time.perf_counter() + spec.pairing_window_s + 0.5
        drain_deadline = time.perf_counter() + _DRAIN_TIMEOUT_S
        while time.perf_counter() < drain_deadline and (
            clients.in_match > 0 or time.perf_counter() < quiet_at
        ):
            await asyncio.sleep(0.05)
        if clients.in_match > 0:
            print(f"  client {slot}: {clients.in_match} bots still in a match", file=sys.stderr)
    finally:
        ticker.cancel()
        await asyncio.gather(*(bot.sock.close() for bot in players), return_exceptions=True)
        clients.publish()
    return clients.stats


async def _tick(clients: _Clients) -> None:
    """Publish progress and measure this loop's own lateness (client-side latency)."""
    period = 0.02
    while True:
        before = time.perf_counter()
        await asyncio.sleep(period)
        after = time.perf_counter()
        if clients.window_start <= before < clients.window_end:
            clients.stats.lag_ms.append((after - before - period) * 1000.0)
        clients.publish()


def _client_process(
    spec: _ClientSpec,
    bots: Sequence[tuple[str, str]],
    slot: int,
    progress: Any,
    ready: MpEvent,
    go: MpEvent,
    start_at: Any,
    results: Connection,
) -> None:
    with contextlib.suppress(OSError):
        os.nice(spec.niceness)
    try:
        stats = runtime.run(_run_clients(spec, bots, slot, progress, ready, go, start_at))
        stats.cores = set(os.sched_getaffinity(0))
        results.send(stats)
    except BaseException as exc:
        results.send(exc)
        raise
    finally:
        results.close()


# The server -----------------------------------------------------------------------------


def _server_process(
    config: ArenaConfig, control: Connection, profile: str | None, split: CoreSplit | None
) -> None:
    logging.basicConfig(level=logging.WARNING, format="server %(levelname)s %(name)s: %(message)s")
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    try:
        runtime.run(_serve_until_told(config, control, split))
    finally:
        if profiler is not None and profile:
            profiler.disable()
            profiler.dump_stats(profile)
        control.close()


class _ServerWatch:
    """What stalls the server's event loop: its own lateness, and the GC passes.

    A 10 ms ticker records how late it wakes (every callback that ran in the
    meantime delays it), and ``gc.callbacks`` time every collection by
    generation. Samples carry ``perf_counter`` times, so the parent keeps
    those inside its window.
    """

    PERIOD_S = 0.01

    def __init__(self) -> None:
        self.lag: list[tuple[float, float]] = []
        self.gc: list[tuple[float, int, float]] = []
        self.rss: list[tuple[float, float]] = []
        """Resident memory (MiB), once a second: the collector is mostly off (``settle_heap``)."""
        self._gc_began = 0.0

    def __enter__(self) -> _ServerWatch:
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_began = time.perf_counter()
        else:
            now = time.perf_counter()
            self.gc.append((now, info["generation"], (now - self._gc_began) * 1000.0))

    async def tick(self) -> None:
        """Record the ticker's lateness until cancelled."""
        page_mib = os.sysconf("SC_PAGE_SIZE") / 2**20
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.PERIOD_S)
            after = time.perf_counter()
            self.lag.append((after, (after - before - self.PERIOD_S) * 1000.0))
            if len(self.lag) % 100 == 1:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    pages = int(Path("/proc/self/statm").read_text().split()[1])
                    self.rss.append((after, pages * page_mib))


async def _serve_until_told(
    config: ArenaConfig, control: Connection, split: CoreSplit | None
) -> None:
    async with ArenaServer(config) as server:
        runtime.settle_heap()  # as `arena serve` does
        if split is not None:
            split.move_server_loop()  # after the writer process started, so it stays on the rest
        control.send(server.port)
        with _ServerWatch() as watch:
            ticker = asyncio.get_running_loop().create_task(watch.tick())
            # Until the parent says stop, or dies (EOF): the server never outlives the bench.
            with contextlib.suppress(EOFError, OSError):
                await asyncio.to_thread(control.recv)
            ticker.cancel()
        # Read before the shutdown stops the writer process.
        cores = {
            "loop": sorted(os.sched_getaffinity(0)),
            "writer": _cores_of(server.store.writer_pid),
        }
        await server.shutdown("benchmark over")
        stats = server.store.commit_stats
        with contextlib.suppress(OSError):
            control.send(
                {
                    "writer": server.store.writer,
                    "commits": stats.commits,
                    "moves": stats.moves,
                    "finishes": stats.finishes,
                    "failures": stats.failures,
                    "largest": stats.largest,
                    "seconds": list(stats.recent_s),
                    "lag": watch.lag,
                    "gc": watch.gc,
                    "rss": watch.rss,
                    "cores": cores,
                }
            )


# Orchestration --------------------------------------------------------------------------


async def _register_bots(db_url: str, names: Sequence[str]) -> list[tuple[str, str]]:
    """Create the schema (migrations) and the bots; returns (name, token) pairs."""
    async with await Store.open(db_url) as store:
        return [(name, await store.add_bot(name)) for name in names]


async def _verify(
    db_url: str, prefix: str, match_moves: dict[str, int]
) -> tuple[int, Counter[str], int]:
    """Moves stored for this run's matches, their matches by status, and per-match mismatches."""
    engine = make_engine(db_url)
    try:
        async with engine.connect() as conn:
            ours = select(Bot.id).where(Bot.name.like(f"{prefix}%")).scalar_subquery()
            run_matches = select(Match.id).where(Match.player0_id.in_(ours))
            total = await conn.scalar(
                select(func.count()).select_from(Move).where(Move.match_id.in_(run_matches))
            )
            statuses: Counter[str] = Counter()
            rows = await conn.execute(
                select(Match.status, Match.termination, func.count())
                .where(Match.player0_id.in_(ours))
                .group_by(Match.status, Match.termination)
            )
            for status, termination, count in rows:
                statuses[f"{status}/{termination}"] += count
            stored = dict(
                (
                    await conn.execute(
                        select(Move.match_id, func.count())
                        .where(Move.match_id.in_(run_matches))
                        .group_by(Move.match_id)
                    )
                ).all()
            )
    finally:
        await engine.dispose()
    mismatched = sum(1 for m, n in match_moves.items() if stored.get(m, 0) != n)
    return int(total or 0), statuses, mismatched


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc); None where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_cores() -> int:
    return os.cpu_count() or 1


def _cpu_seconds_of(pids: Sequence[int]) -> float | None:
    """The summed CPU time of ``pids``; None when none of them could be read."""
    known = [t for t in map(_cpu_seconds, pids) if t is not None]
    return sum(known) if known else None


def _children_of(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux /proc; empty where unavailable)."""
    children: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                children += map(int, (task / "children").read_text().split())
    return children


def _merge(parts: Sequence[ClientStats]) -> ClientStats:
    total = ClientStats()
    for part in parts:
        total.moves += part.moves
        total.window_moves += part.window_moves
        total.latencies_ms += part.latencies_ms
        total.arrival_ms += part.arrival_ms
        total.lag_ms += part.lag_ms
        total.matches_ended += part.matches_ended
        total.window_matches_ended += part.window_matches_ended
        total.match_moves.update(part.match_moves)
        total.terminations += part.terminations
        total.errors += part.errors
        total.connect_s = max(total.connect_s, part.connect_s)
        total.cores |= part.cores
    return total


SPEED_LOOP_STEPS = 1_000_000


def machine_speed_ms(repeat: int = 5) -> float:
    """Milliseconds this machine takes for an empty Python loop of a million steps.

    The fastest of ``repeat`` tries: a yardstick printed beside every run,
    because the server's CPU per move follows the shared machine's speed more
    than anything in one version of the code.
    """
    loop = f"for _ in range({SPEED_LOOP_STEPS}): pass"
    return min(timeit.repeat(loop, number=1, repeat=repeat)) * 1000.0


class Callgrind:
    """Runs the server process under valgrind's callgrind, counting only the window.

    CPU seconds per move swing with whatever else this shared machine is doing;
    instructions executed do not, so they are the measure to compare two
    versions of the server's hot path (run both, side by side or not). The
    server runs some 50 times slower under valgrind: use a small load, e.g.
    ``--matches 20 --think-ms 0``. Instrumentation is off until the window
    opens and off again when it closes (``callgrind_control``); the server's
    own child processes (the database writer) run natively.
    """

    def __init__(self, tmp: Path) -> None:
        valgrind, control = shutil.which("valgrind"), shutil.which("callgrind_control")
        if valgrind is None or control is None:
            raise RuntimeError("--callgrind needs valgrind (e.g. apt-get install valgrind)")
        self._control = control
        self.out = tmp / "callgrind.out"
        self.wrapper = tmp / "python-under-callgrind"
        command = [valgrind, "--tool=callgrind", "--instr-atstart=no"]
        command += [f"--callgrind-out-file={self.out}", "-q", sys.executable]
        self.wrapper.write_text(f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n')
        self.wrapper.chmod(0o755)

    def start(self, ctx: SpawnContext, process: SpawnProcess) -> None:
        """Start ``process`` (the server) under callgrind; every later spawn runs natively."""
        python = multiprocessing.spawn.get_executable()
        # The resource tracker is started by the first spawn: start it natively first.
        multiprocessing.resource_tracker.ensure_running()
        ctx.set_executable(str(self.wrapper))
        try:
            process.start()
        finally:
            ctx.set_executable(os.fsdecode(python))  # get_executable() may give bytes

    def instrument(self, pid: int, on: bool) -> None:
        """Switch the server's instruction counting on or off."""
        subprocess.run(
            [self._control, f"--instr={'on' if on else 'off'}", str(pid)],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def instructions(self) -> int:
        """The instructions counted, from the profile written when the server exited."""
        # "totals:" sums the cost lines; the "summary:" header stays 0 when
        # instrumentation starts switched off.
        for line in self.out.read_text().splitlines():
            if line.startswith("totals:"):
                return int(line.split()[1])
        raise RuntimeError(f"no instruction total in {self.out}")


@dataclass(frozen=True, slots=True)
class CoreSplit:
    """The cores of ``--cores split``: the server's event loop on one, everything else on the rest.

    On a machine whose bots run on the server's own cores, every move the
    server sends wakes a bot process that then competes with it for a core,
    which real bots on other machines never do. Splitting the cores keeps the
    load generator off the server's core while it still runs on this machine.
    The bench process pins itself to ``rest`` before starting any child, so
    the children (bots, server, the server's database writer) inherit it; the
    server process then moves only its event loop's thread (and the threads
    it starts later) to ``server``.
    """

    server: frozenset[int]
    rest: frozenset[int]

    @classmethod
    def of_this_machine(cls) -> CoreSplit:
        """The first core this process may use for the server, the others for the rest."""
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < 2:
            raise RuntimeError(f"--cores split needs at least 2 usable cores, not {len(cores)}")
        return cls(frozenset(cores[:1]), frozenset(cores[1:]))

    @contextlib.contextmanager
    def bench_on_rest(self) -> Iterator[None]:
        """Keep this process (and so every child it starts meanwhile) on ``rest``."""
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, self.rest)
        try:
            yield
        finally:
            os.sched_setaffinity(0, before)

    def move_server_loop(self) -> None:
        """Move the calling thread, the server's event loop, onto ``server`` (Linux: per thread)."""
        os.sched_setaffinity(0, self.server)


def run_load(spec: LoadSpec) -> LoadReport:
    """Run one benchmark: server process, client processes, window, drain, DB check."""
    split = CoreSplit.of_this_machine() if spec.cores == "split" else None
    with split.bench_on_rest() if split is not None else contextlib.nullcontext():
        return _run_load(spec, split)


def _run_load(spec: LoadSpec, split: CoreSplit | None) -> LoadReport:
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="arena-load-") as tmp:
        db_url = spec.db or f"sqlite+aiosqlite:///{Path(tmp) / 'arena.db'}"
        # A fresh name prefix per run, so a shared (PostgreSQL) database can be reused.
        prefix = f"load{secrets.token_hex(3)}-"
        names = [f"{prefix}{i}" for i in range(2 * spec.matches)]
        began = time.perf_counter()
        bots = asyncio.run(_register_bots(db_url, names))
        _say(spec, f"registered {len(bots)} bots in {time.perf_counter() - began:.1f} s")
        config = ArenaConfig(
            host="127.0.0.1",
            port=0,
            db_url=db_url,
            move_ms=MOVE_MS,
            pairing_window_s=spec.pairing_window_s,
            rate_per_s=spec.rate_per_s,
            rate_burst=max(RATE_LIMIT_BURST, int(2 * spec.rate_per_s)),
            # A handful of matches per bot per second: keep outgoing queues roomy.
            bot_queue_size=4096,
            db_writer_process=spec.db_writer == "process",
        )
        control, server_end = ctx.Pipe()
        server = ctx.Process(
            target=_server_process,
            args=(config, server_end, spec.profile, split),
            name="arena-server",
        )
        loop_ms = machine_speed_ms()
        callgrind = Callgrind(Path(tmp)) if spec.callgrind else None
        if callgrind is not None:
            callgrind.start(ctx, server)
        else:
            server.start()
        server_end.close()
        try:
            if not control.poll(_PROCESS_START_TIMEOUT_S):
                raise RuntimeError("the server did not start")
            port = control.recv()
            report = _drive(ctx, spec, f"ws://127.0.0.1:{port}/", bots, server, callgrind)
        finally:
            with contextlib.suppress(OSError):
                control.send("stop")
            commits: dict[str, Any] | None = None
            with contextlib.suppress(OSError, EOFError):
                if control.poll(60):
                    commits = control.recv()
            server.join(60)
            if server.is_alive():
                server.kill()
                server.join()
            control.close()
        report.commits = commits
        report.loop_ms = loop_ms
        if callgrind is not None:
            report.server_instructions = callgrind.instructions()
        report.db_kind = db_url.split(":", 1)[0]
        report.db_moves, report.db_matches, report.mismatched_matches = asyncio.run(
            _verify(db_url, prefix, report.stats.match_moves)
        )
        return report


def _drive(
    ctx: SpawnContext,
    spec: LoadSpec,
    url: str,
    bots: Sequence[tuple[str, str]],
    server: SpawnProcess,
    callgrind: Callgrind | None,
) -> LoadReport:
    procs = max(1, min(spec.client_procs, len(bots)))
    client_spec = _ClientSpec(
        url=url,
        game=spec.game,
        policy=spec.policy,
        seed=spec.seed,
        think_ms=spec.think_ms,
        think_jitter=spec.think_jitter,
        warmup=spec.warmup,
        seconds=spec.seconds,
        pairing_window_s=spec.pairing_window_s,
        niceness=spec.client_niceness,
    )
    progress = ctx.Array("d", procs * _PROGRESS_SLOTS, lock=False)
    start_at = ctx.Value("d", 0.0, lock=False)
    go = ctx.Event()
    readies = [ctx.Event() for _ in range(procs)]
    pipes = [ctx.Pipe(duplex=False) for _ in range(procs)]
    clients = [
        ctx.Process(
            target=_client_process,
            args=(client_spec, bots[i::procs], i, progress, readies[i], go, start_at, pipes[i][1]),
            name=f"arena-load-client-{i}",
        )
        for i in range(procs)
    ]
    for proc in clients:
        proc.start()
    for _, sender in pipes:
        sender.close()
    try:
        connect_deadline = time.perf_counter() + _PROCESS_START_TIMEOUT_S
        for ready, proc in zip(readies, clients, strict=True):
            while not ready.wait(0.2):
                if not proc.is_alive() or time.perf_counter() > connect_deadline:
                    raise RuntimeError(
                        f"{proc.name} failed to connect its bots (exit code {proc.exitcode})"
                    )
        start_at.value = time.perf_counter()
        go.set()
        t0 = float(start_at.value)
        window = (t0 + spec.warmup, t0 + spec.warmup + spec.seconds)
        receivers = [receiver for receiver, _ in pipes]
        mark = None
        if callgrind is not None and server.pid is not None:
            mark = functools.partial(callgrind.instrument, server.pid)
        live_samples, cpu = _watch(
            spec, progress, procs, t0, window, server, clients, receivers, mark
        )
        results = []
        for receiver, _ in pipes:
            if not receiver.poll(_DRAIN_TIMEOUT_S + 30):
                raise RuntimeError("a client process sent no result")
            result = receiver.recv()
            if isinstance(result, BaseException):
                raise RuntimeError("a client process failed") from result
            results.append(result)
    finally:
        for proc in clients:
            proc.join(30)
            if proc.is_alive():
                proc.kill()
                proc.join()
    return LoadReport(
        spec=spec,
        db_kind="",
        window_s=spec.seconds,
        window=window,
        live_samples=live_samples,
        stats=_merge(results),
        db_moves=0,
        db_matches=Counter(),
        mismatched_matches=0,
        server_cpu=cpu[0],
        client_cpu=cpu[1],
        writer_cpu=cpu[2],
    )


def _watch(
    spec: LoadSpec,
    progress: Any,
    procs: int,
    t0: float,
    window: tuple[float, float],
    server: SpawnProcess,
    clients: Sequence[SpawnProcess],
    receivers: Sequence[Connection],
    mark: Callable[[bool], None] | None = None,
) -> tuple[list[float], tuple[float | None, float | None, float | None]]:
    """Sample concurrency, print progress, and measure CPU use over the window.

    ``mark`` is told when the window opens (True) and closes (False). Returns once
    every client process has its result ready (or died, or the drain deadline passed).
    """

    def total(offset: int) -> float:
        return float(sum(progress[p * _PROGRESS_SLOTS + offset] for p in range(procs)))

    def cpu_now() -> tuple[float | None, float | None, float | None]:
        pid = server.pid
        return (
            _cpu_seconds_of([] if pid is None else [pid]),
            _cpu_seconds_of([p.pid for p in clients if p.pid is not None]),
            _cpu_seconds_of([] if pid is None else _children_of(pid)),
        )

    live: list[float] = []
    cpu_start: tuple[float | None, ...] = (None, None, None)
    cpu_end: tuple[float | None, ...] = (None, None, None)
    in_window = False
    last_print, last_moves = t0, 0.0
    while True:
        time.sleep(0.25)
        now = time.perf_counter()
        if not in_window and now >= window[0]:
            in_window, cpu_start = True, cpu_now()
            if mark is not None:
                mark(True)
        if in_window and now < window[1]:
            live.append(total(2) / 2)
        if now >= window[1] and cpu_end == (None, None, None):
            cpu_end = cpu_now()
            if mark is not None:
                mark(False)
        if now - last_print >= spec.progress_s:
            moves = total(0)
            phase = "warm-up" if now < window[0] else "window" if now < window[1] else "drain"
            _say(
                spec,
                f"  {now - t0:6.1f} s {phase:7}  live {total(2) / 2:5.0f}  "
                f"moves {moves:9.0f}  {(moves - last_moves) / (now - last_print):8.0f}/s  "
                f"matches {total(1):7.0f}  errors {total(3):.0f}",
            )
            last_print, last_moves = now, moves
        if now >= window[1] and all(
            r.poll() or not p.is_alive() for r, p in zip(receivers, clients, strict=True)
        ):
            break
        if now >= window[1] + _DRAIN_TIMEOUT_S + 30:
            break

    def used(i: int) -> float | None:
        a, b = cpu_start[i], cpu_end[i]
        return None if a is None or b is None else (b - a) / (window[1] - window[0])

    return live, (used(0), used(1), used(2))


# Output ---------------------------------------------------------------------------------


def _say(spec: LoadSpec, text: str) -> None:
    if not spec.quiet:
        print(text, flush=True)


def _fmt_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}% of a core"


def _fmt_commits(commits: dict[str, Any] | None) -> str:
    if not commits or not commits["commits"]:
        return "n/a"
    ms = [1000 * s for s in commits["seconds"]]
    return (
        f"{commits['commits']} ({commits['moves'] / commits['commits']:.0f} moves, "
        f"{commits['finishes'] / commits['commits']:.1f} match ends each; largest "
        f"{commits['largest']} moves), took p50 {_quantile(ms, 0.5):.1f} ms, "
        f"p99 {_quantile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms"
        + (f", {commits['failures']} failed" if commits["failures"] else "")
    )


def _fmt_rss(rss: tuple[float, float] | None) -> str:
    if rss is None:
        return "n/a"
    return f"{rss[0]:.0f} MiB at the window's start, {rss[1]:.0f} at its end"


def _fmt_machine(report: LoadReport) -> str:
    if math.isnan(report.machine_us_per_move):
        return "n/a"
    return (
        f"{report.machine_us_per_move:.0f} us per move (server, writer and bots); "
        f"{_machine_cores()} cores at {TARGET_MOVES_PER_S:,.0f} moves/s allow "
        f"{report.cpu_budget_us():.0f}"
    )


def _fmt_spread(ms: Sequence[float]) -> str:
    if not ms:
        return "n/a"
    return (
        f"p50 {_quantile(ms, 0.5):.2f} ms, p99 {_quantile(ms, 0.99):.2f} ms, max {max(ms):.2f} ms"
    )


def _fmt_target(report: LoadReport) -> str:
    misses = report.target_misses()
    return "missed: " + "; ".join(misses) if misses else "met"


def _commit_p99(commits: dict[str, Any] | None) -> str:
    seconds = commits["seconds"] if commits else []
    return f"{1000 * _quantile(seconds, 0.99):.0f} ms" if seconds else "n/a"


def format_report(report: LoadReport) -> str:
    """The detailed table of one run."""
    spec, stats = report.spec, report.stats
    live = report.live_samples or [0.0]
    ended = ", ".join(f"{k} {v}" for k, v in sorted(stats.terminations.items()))
    stored = ", ".join(f"{k} {v}" for k, v in sorted(report.db_matches.items()))
    errors = ", ".join(f"{k} {v}" for k, v in sorted(stats.errors.items())) or "none"
    rows = [
        ("matches requested", f"{spec.matches} ({2 * spec.matches} bots, {spec.game})"),
        ("client processes", f"{max(1, spec.client_procs)} at niceness +{spec.client_niceness}"),
        ("cores", _cores_text(report)),
        ("database", f"{report.db_kind} ({report.writer} writer)"),
        ("window", f"{report.window_s:g} s after {spec.warmup:g} s warm-up"),
        (
            "concurrent matches",
            f"mean {statistics.fmean(live):.0f}, min {min(live):.0f}, max {max(live):.0f}",
        ),
        ("matches completed", f"{stats.window_matches_ended} in window, {stats.matches_ended} all"),
        ("moves", f"{stats.window_moves} in window, {stats.moves} all"),
        ("moves/s", f"{report.moves_per_s:.0f}"),
        (
            "server-added latency",
            _fmt_spread(stats.arrival_ms) + " (move sent -> moved in the client's socket)"
            if stats.arrival_ms
            else "n/a (no kernel receive times here)",
        ),
        (
            "move->moved latency",
            _fmt_spread(stats.latencies_ms) + " (as the client's loop handled it)",
        ),
        ("client loop lag p99", f"{_quantile(stats.lag_ms, 0.99):.2f} ms"),
        (
            "server CPU",
            _fmt_pct(report.server_cpu)
            + (
                ""
                if math.isnan(report.server_us_per_move)
                else f" ({report.server_us_per_move:.0f} us per move)"
            ),
        ),
        (
            "machine speed",
            f"{report.loop_ms:.1f} ms per million empty Python loop steps, just before the run"
            " (lower is faster)",
        ),
        *(
            [
                (
                    "server instructions",
                    f"{report.server_instructions_per_move:,.0f} per move "
                    f"({report.server_instructions:,} in the window; callgrind)",
                )
            ]
            if report.server_instructions is not None
            else []
        ),
        ("server loop lag", _fmt_spread(report.server_lag_ms())),
        (
            "server GC passes",
            "; ".join(
                f"gen{g} {len(p)}, max {max(p, default=0.0):.1f} ms"
                for g, p in ((g, report.gc_passes(g)) for g in range(3))
            ),
        ),
        ("server memory", _fmt_rss(report.server_rss())),
        ("group commits", _fmt_commits(report.commits)),
        ("client CPU", _fmt_pct(report.client_cpu)),
        ("writer CPU", _fmt_pct(report.writer_cpu)),
        ("machine CPU", _fmt_machine(report)),
        (
            "persisted",
            f"{report.db_moves} moves in DB / {stats.moves} confirmed: "
            + ("OK" if report.persisted else "MISMATCH")
            + f" ({len(stats.match_moves)} ended matches checked, "
            f"{report.mismatched_matches} differ)",
        ),
        ("match ends (clients)", ended or "none"),
        ("matches in DB", stored or "none"),
        ("errors", errors),
        ("connect time", f"{stats.connect_s:.1f} s"),
        ("target", _fmt_target(report)),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


_NUMBERS: tuple[tuple[str, Callable[[LoadReport], float], str], ...] = (
    ("live", lambda r: statistics.fmean(r.live_samples or [0.0]), ".0f"),
    ("done", lambda r: float(r.stats.window_matches_ended), ".0f"),
    ("moves/s", lambda r: r.moves_per_s, ".0f"),
    ("p50 ms", lambda r: r.server_added(0.5), ".2f"),
    ("p99 ms", lambda r: r.server_added(0.99), ".2f"),
    ("max ms", lambda r: max(r.stats.arrival_ms, default=float("nan")), ".2f"),
    ("client p99", lambda r: r.latency(0.99), ".2f"),
)
"""The summary's numeric columns: name, value of one run, format."""


def _cores_of(pid: int | None) -> list[int] | None:
    """The cores process ``pid`` may run on (None without a process)."""
    if pid is None:
        return None
    with contextlib.suppress(OSError):
        return sorted(os.sched_getaffinity(pid))
    return None


def _cores_text(report: LoadReport) -> str:
    """How ``--cores`` came out: the cores each part of the run was allowed."""
    seen = (report.commits or {}).get("cores", {})

    def show(cores: Any) -> str:
        return ",".join(map(str, cores)) if cores else "?"

    writer = seen.get("writer")
    return (
        f"{report.spec.cores}: server loop on {show(seen.get('loop'))}, "
        + (f"writer on {show(writer)}, " if writer is not None else "")
        + f"bots on {show(sorted(report.stats.cores))}"
    )


def _cell(values: Sequence[float], fmt: str) -> str:
    """One run's value as it is, or the median of several (runs without it left out)."""
    if len(values) == 1:
        return format(values[0], fmt)
    known = [v for v in values if v == v]  # NaN: e.g. a run without kernel receive times
    return format(statistics.median(known), fmt) if known else "n/a"


def _summary_row(label: str, runs: Sequence[LoadReport]) -> tuple[str, ...]:
    """The summary line of one run, or the medians of runs of one configuration."""
    spec = runs[0].spec
    cpus = [r.server_cpu for r in runs if r.server_cpu is not None]
    return (
        label,
        f"{spec.think_ms:g}",
        f"{spec.think_jitter:g}",
        runs[0].writer,
        spec.cores,
        *(_cell([value(r) for r in runs], fmt) for _, value, fmt in _NUMBERS),
        _commit_p99(runs[0].commits) if len(runs) == 1 else "",
        f"{100 * statistics.median(cpus):.0f}%" if cpus else "n/a",
        _cell([r.server_us_per_move for r in runs], ".0f"),
        _cell([r.machine_us_per_move for r in runs], ".0f"),
        _cell([r.loop_ms for r in runs], ".0f"),
        "OK" if all(r.persisted for r in runs) else "MISMATCH",
        _target_cell(runs),
    )


def _target_cell(runs: Sequence[LoadReport]) -> str:
    """``met`` or ``missed`` for one run; how many of several runs met the target."""
    met = _met_count(runs)
    if len(runs) == 1:
        return "met" if met else "missed"
    return f"{met}/{len(runs)} met"


def _met_count(runs: Sequence[LoadReport]) -> int:
    return sum(1 for r in runs if r.met_target)


def format_summary(reports: Sequence[LoadReport]) -> str:
    """One row per run (and the medians of repeated runs), with the issue's targets."""
    header = (
        "matches",
        "think ms",
        "jitter",
        "writer",
        "cores",
        *(name for name, _, _ in _NUMBERS),
        "commit p99",
        "srv CPU",
        "us/move",
        "all us",
        "loop ms",
        "DB",
        "target",
    )
    rows = [_summary_row(str(r.spec.matches), [r]) for r in reports]
    groups: dict[tuple[int, float, float, str, str], list[LoadReport]] = {}
    for r in reports:
        spec = r.spec  # what was measured, not which repetition it was
        key = (spec.matches, spec.think_ms, spec.think_jitter, spec.db_writer, spec.cores)
        groups.setdefault(key, []).append(r)
    medians = [
        _summary_row(f"median of {len(runs)}: {runs[0].spec.matches}", runs)
        for runs in groups.values()
        if len(runs) > 1
    ]
    widths = [max(len(row[i]) for row in [header, *rows, *medians]) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))

    rule = "  ".join("-" * w for w in widths)
    lines = [line(header), rule, *(line(row) for row in rows)]
    if medians:
        lines += [rule, *(line(row) for row in medians)]
    lines.append(
        "p50/p99/max: server-added latency (to the kernel's receive time); client p99: "
        "as the client's loop handled the moved; us/move: server CPU per move; all us: "
        "server, writer and bots' CPU per move; loop ms: "
        "this machine's speed then (machine speed in the detailed report; lower is faster)"
    )
    lines.append(
        f"target: {TARGET_MATCHES} matches, >= {TARGET_MOVES_PER_S:.0f} moves/s, "
        f"p99 <= {TARGET_P99_MS:g} ms, every move persisted; "
        f"met in {_met_count(reports)} of {len(reports)} runs"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark(s) and print the tables; non-zero when a move went unpersisted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--matches", default=str(TARGET_MATCHES), help="concurrent matches; a list runs each"
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=3.0, help="play before the window")
    parser.add_argument("--game", default="connect4")
    parser.add_argument("--client-procs", type=int, default=1, help="client processes")
    parser.add_argument("--db", default=None, help="database URL (default: fresh SQLite file)")
    parser.add_argument("--policy", choices=("random", "first"), default="random")
    parser.add_argument(
        "--think-ms",
        default="0",
        help="bots wait this long before each move; a comma list runs each (a load sweep)",
    )
    parser.add_argument(
        "--think-jitter",
        default=str(DEFAULT_THINK_JITTER),
        help="each think time is drawn from think-ms * (1 -+ this), seeded per bot; "
        "0: every think is exactly think-ms; a comma list runs each",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every configuration this many times, round-robin, and print medians",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--pairing-window", type=float, default=DEFAULT_PAIRING_WINDOW_S, help="seconds"
    )
    parser.add_argument("--rate-per-s", type=float, default=DEFAULT_RATE_PER_S)
    parser.add_argument("--progress", type=float, default=2.0, help="seconds between lines")
    parser.add_argument("--profile", default=None, help="write a cProfile of the server here")
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="run the server under valgrind's callgrind and report its instructions per "
        "move in the window (repeatable, ~50x slower: use e.g. --matches 20)",
    )
    parser.add_argument(
        "--client-niceness",
        type=int,
        default=DEFAULT_CLIENT_NICENESS,
        help="niceness added to the client processes (0: same priority as the server)",
    )
    parser.add_argument(
        "--db-writer",
        default="process",
        help="SQLite commits from a writer 'process' (arena serve's default) or 'inline'; "
        "a comma list runs each, side by side",
    )
    parser.add_argument(
        "--cores",
        default="shared",
        help="'shared': every process on every core; 'split': the server's event loop alone "
        "on the first core, bots, DB writer and bench on the others; a comma list runs each",
    )
    args = parser.parse_args(argv)
    writers = str(args.db_writer).split(",")
    if not set(writers) <= {"process", "inline"}:
        parser.error("--db-writer takes process, inline or both")
    core_modes = str(args.cores).split(",")
    if not set(core_modes) <= {"shared", "split"}:
        parser.error("--cores takes shared, split or both")
    if "split" in core_modes:
        try:
            CoreSplit.of_this_machine()
        except RuntimeError as exc:
            parser.error(str(exc))
    base = LoadSpec(
        seconds=args.seconds,
        warmup=args.warmup,
        game=args.game,
        client_procs=args.client_procs,
        db=args.db,
        policy=args.policy,
        seed=args.seed,
        pairing_window_s=args.pairing_window,
        rate_per_s=args.rate_per_s,
        progress_s=args.progress,
        profile=args.profile,
        client_niceness=args.client_niceness,
        callgrind=args.callgrind,
    )
    reports = []
    counts = [int(part) for part in str(args.matches).split(",")]
    try:
        thinks = [float(part) for part in str(args.think_ms).split(",")]
    except ValueError:
        parser.error(f"--think-ms takes numbers, got {args.think_ms!r}")
    try:
        jitters = [float(part) for part in str(args.think_jitter).split(",")]
    except ValueError:
        parser.error(f"--think-jitter takes numbers, got {args.think_jitter!r}")
    if not all(0.0 <= j <= 1.0 for j in jitters):
        parser.error("--think-jitter takes fractions from 0 to 1")
    if args.repeat < 1:
        parser.error("--repeat takes a positive count")
    configs = [
        (n, w, t, j, c)
        for n in counts
        for t in thinks
        for j in jitters
        for w in writers
        for c in core_modes
    ]
    # Round-robin, so slow drift of a shared machine spreads over every configuration.
    for _ in range(args.repeat):
        for n, writer, think, jitter, cores in configs:
            spec = replace(
                base,
                matches=n,
                db_writer=writer,
                think_ms=think,
                think_jitter=jitter,
                cores=cores,
            )
            print(
                f"== {n} matches, {spec.game}, think {think:g} ms"
                + (f" -+{100 * jitter:g}%" if think and jitter else "")
                + f", {spec.client_procs} client process(es), {writer} DB writer, "
                + f"{cores} cores",
                flush=True,
            )
            report = run_load(spec)
            print(format_report(report), flush=True)
            reports.append(report)
    if len(reports) > 1:
        print()
        print(format_summary(reports))
    return 0 if all(r.persisted for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
