"""The load bots, all on one event loop in a client process that also times the window."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvloop

from bench.load.report import Config, Run
from bench.load.wire import Wire
from protocol.messages import PROTOCOL_VERSION

DRAIN_S = 15.0  # after the window, how long bots may take to finish their matches


@dataclass(frozen=True, slots=True)
class Server:
    """A running server as the client process watches it (Linux /proc): address and pid."""

    address: str  # host:port
    pid: int

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU time so far of the server process, and of its children (the SQLite writer)."""
        tasks = Path(f"/proc/{self.pid}/task").glob("*/children")  # the writer's is a worker's
        children = [int(pid) for task in tasks for pid in task.read_text().split()]
        return cpu_seconds(self.pid), sum(cpu_seconds(child) for child in children)

    def rss_mib(self) -> float:
        """The server process's resident memory (``VmRSS``), in MiB."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0]) / 1024

    def health(self) -> dict[str, Any]:
        """``GET /healthz`` (blocking); empty when the server does not answer within 5 s."""
        try:
            with urllib.request.urlopen(f"http://{self.address}/healthz", timeout=5) as reply:
                return dict(json.load(reply))
        except (OSError, ValueError):
            return {}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


class _Bot:
    """One bot: a seeded random legal move after its think time; a new seek after each match."""

    def __init__(self, crowd: _Crowd, name: str, seed: int) -> None:
        self.crowd, self.name, self.run = crowd, name, crowd.run
        self.wire: Wire  # set by connect(), before anything else happens
        self.rng, self.think_rng = random.Random(seed), random.Random(-1 - seed)
        self.seat, self.seeking, self.moved_seen, self.pending_ply = -1, False, 0, -1
        self.sent_at, self.sent_ns, self.move_prefix = 0.0, 0, ""
        control = {"move_ms": 30_000, "bank_ms": 0}  # far more than a load bot ever takes
        self.seek_text = json.dumps({"type": "seek", "game": "connect4", "time_control": control})

    async def connect(self, url: str, token: str) -> None:
        async with self.crowd.gate:  # more handshakes at once only overflow the listen backlog
            self.wire = await Wire.open(url, self.on_text, timeout=30.0)
        hello = {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION, "name": self.name}
        self.wire.send(json.dumps({**hello, "token": token, "max_matches": 1}))

    def seek(self) -> None:
        if not self.crowd.stopping:
            self.seeking = True
            self.wire.send(self.seek_text)

    def on_text(self, frame: bytes) -> None:
        crowd, run, msg = self.crowd, self.run, json.loads(frame)
        kind = msg["type"]
        if kind == "moved":
            self.moved_seen += 1
            if msg["player"] == self.seat and msg["ply"] == self.pending_ply:
                run.moves += 1
                self.pending_ply = -1
                if crowd.window[0] <= self.sent_at < crowd.window[1]:
                    run.window_moves += 1
                    run.client_ms.append((time.perf_counter() - self.sent_at) * 1000.0)
                    run.server_ms.append((self.wire.received_ns - self.sent_ns) / 1e6)
        elif kind == "your_turn":
            self.pending_ply, move = msg["ply"], self.rng.choice(msg["legal_moves"])
            reply = f'{self.move_prefix}{self.pending_ply},"move":{move}}}'
            if crowd.think_s:
                # Uniform on think_ms -+ jitter: one think time for all bots phase-locks them.
                jitter = crowd.config.think_jitter * (2.0 * self.think_rng.random() - 1.0)
                crowd.loop.call_later(crowd.think_s * (1.0 + jitter), self.send_move, reply)
            else:
                self.send_move(reply)
        elif kind == "match_start":
            self.seat, self.seeking, self.moved_seen = msg["you"], False, 0
            self.move_prefix = f'{{"type":"move","match_id":{json.dumps(msg["match_id"])},"ply":'
            crowd.in_match += 1
        elif kind == "match_end":
            crowd.in_match -= 1
            if self.seat == 0:  # each match counted once, by its first player
                run.match_moves[msg["match_id"]] = self.moved_seen
                run.window_ended += crowd.window[0] <= time.perf_counter() < crowd.window[1]
            self.seat = -1
            self.seek()
        elif kind == "error":
            run.errors[msg.get("code", "?")] += 1

    def send_move(self, reply: str) -> None:
        self.sent_at, self.sent_ns = time.perf_counter(), time.time_ns()  # wall-clock: the kernel's
        self.wire.send(reply)


class _Crowd:
    """All the bots on one event loop; what they and the server did in the window."""

    def __init__(self, config: Config, server: Server) -> None:
        self.config, self.server, self.run = config, server, Run(config)
        self.loop, self.think_s = asyncio.get_running_loop(), config.think_ms / 1e3
        self.window, self.stopping, self.in_match = (float("inf"),) * 2, False, 0
        self.gate = asyncio.Semaphore(50)

    async def play(self, bots: Sequence[tuple[str, str]]) -> Run:
        config, run, url = self.config, self.run, f"ws://{self.server.address}/"
        players = [_Bot(self, name, config.seed * 100_003 + i) for i, (name, _) in enumerate(bots)]
        await asyncio.gather(*(bot.connect(url, bots[i][1]) for i, bot in enumerate(players)))
        t0 = time.perf_counter()
        self.window = (t0 + config.warmup, t0 + config.warmup + config.seconds)
        # Bots arrive spread over the first half of the warm-up, as real ones do: had they
        # all sought at once, their matches would start and end in lockstep.
        arrivals = random.Random(config.seed)
        for bot in players:
            self.loop.call_later(arrivals.uniform(0.0, config.warmup / 2), bot.seek)
        await asyncio.sleep(config.warmup)
        opened, live = (*self.server.cpu_seconds(), time.process_time()), []
        while time.perf_counter() < self.window[1]:
            live.append(self.in_match / 2)
            if 0 < (done := config.soak_every * (len(run.soak) + 1)) <= len(run.match_moves):
                health = await asyncio.to_thread(self.server.health)
                minutes, rss = (time.perf_counter() - t0) / 60, self.server.rss_mib()
                run.soak.append((done, minutes, rss, health))
                print(f"  {done:,} matches finished: server RSS {rss:.1f} MiB", flush=True)
            await asyncio.sleep(0.1)
        closed = (*self.server.cpu_seconds(), time.process_time())
        run.cpu = tuple((b - a) / config.seconds for a, b in zip(opened, closed, strict=True))
        run.live, self.stopping = sum(live) / len(live), True
        for bot in (bot for bot in players if bot.seeking):
            bot.wire.send('{"type":"cancel_seek"}')
        # A seek paired before the server read its cancel still starts a match within a
        # pairing window; wait that long, then until every match is over.
        now = time.perf_counter()
        quiet_at, deadline = now + config.pairing_window_s + 0.5, now + DRAIN_S
        while time.perf_counter() < deadline and (self.in_match or time.perf_counter() < quiet_at):
            await asyncio.sleep(0.05)
        lost = sum(bot.wire.lost.done() for bot in players)
        run.errors += Counter({"bots still in a match": self.in_match, "connection lost": lost})
        for bot in players:
            bot.wire.close()
        return run


def client_main(config: Config, server: Server, bots: Sequence[Any], out: Any) -> None:
    """The client process: play ``bots``; send back their ``Run`` (or the failure)."""
    os.nice(5)  # the load generator yields the shared cores to the server it measures

    async def main() -> Run:
        return await _Crowd(config, server).play(bots)

    out.send(uvloop.run(main()))  # the event loop `arena serve` runs on; a failure: EOF
