"""The load bots, all on one event loop in a client process that also times the window."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
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
from protocol.messages import PROTOCOL_VERSION, Analysis, MoveStat, TreeNode

DRAIN_S = 15.0  # after the window, how long bots may take to finish their matches


def _analysis() -> str:
    """The search report ``--analysis tree`` sends with every move: the size of a built-in
    MCTS's on Connect Four (7 candidates and a tree of 3x2x2 nodes plus the principal line
    to 6 plies: 24 nodes, some 1.5 KB). The server checks its form, not its moves."""
    moves = tuple(MoveStat(m, 6959 - 900 * m, round(0.2158 - 0.07 * m, 4)) for m in range(7))
    tree = [TreeNode(m, 6959 - 900 * m, 0.2158) for m in range(3)]
    for parent in range(3):
        tree += [TreeNode(m, 2100 - 400 * m, -0.1034, parent) for m in range(2)]
    for parent in range(3, 9):
        tree += [TreeNode(m, 810 - 300 * m, 0.0521, parent) for m in range(2)]
    for depth in range(3):  # the principal line goes on
        tree.append(TreeNode(3, 250 - 60 * depth, -0.0312, len(tree) - 1 if depth else 9))
    report = Analysis(10_000, 1118022.1, 0.1809, None, moves, tree=tuple(tree))
    return json.dumps(report.to_dict(), separators=(",", ":"))  # compact, as bots write it


ANALYSIS = _analysis()


@dataclass(frozen=True, slots=True)
class Server:
    """A running server as the client process watches it (Linux /proc): address and pid."""

    address: str  # host:port
    pid: int

    def sample(self) -> tuple[float, dict[str, Any]]:
        """Its RSS in MiB, and ``GET /healthz`` (blocking; empty without an answer in 5 s)."""
        status, url = Path(f"/proc/{self.pid}/status").read_text(), f"http://{self.address}/healthz"
        rss = int(status.split("VmRSS:")[1].split()[0]) / 1024
        with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(url, timeout=5) as r:
            return rss, dict(json.load(r))
        return rss, {}


def cpu_seconds(pid: int, command: str = "") -> float:
    """User + system CPU time of a process (0 once it is gone, or unless it runs ``command``)."""
    try:
        name, stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)
    except OSError:
        return 0.0
    fields = stat.split()
    ticks = int(fields[11]) + int(fields[12]) if name.endswith(f"({command}") or not command else 0
    return ticks / os.sysconf("SC_CLK_TCK")


class _Bot:
    """One bot: a seeded random legal move after its think time; a new seek after each match.
    A ``redirect`` (another node hosts its match) is followed at once."""

    def __init__(self, crowd: _Crowd, name: str, token: str, home: str, seed: int) -> None:
        self.crowd, self.name, self.run, self.home = crowd, name, crowd.run, home
        self.rng, self.think_rng = random.Random(seed), random.Random(-1 - seed)
        self.seat, self.seeking, self.moved_seen, self.pending_ply = -1, False, 0, -1
        self.sent_at, self.sent_ns, self.move_prefix = 0.0, 0, ""
        self.sought_at, self.moved_node, self.away = 0.0, False, False  # redirected to a match?
        control = {"move_ms": 30_000, "bank_ms": 0}  # far more than a load bot ever takes
        self.seek_text = json.dumps({"type": "seek", "game": "connect4", "time_control": control})
        hello = {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION, "name": name}
        self.hello = json.dumps({**hello, "token": token, "max_matches": 1})

    async def connect(self, url: str) -> None:
        async with self.crowd.gate:  # more handshakes at once only overflow the listen backlog
            self.wire = await Wire.open(url, self.on_text, timeout=30.0)
        self.wire.send(self.hello)

    def seek(self, _connected: object = None) -> None:
        if not self.crowd.stopping:
            self.seeking, self.sought_at = True, time.perf_counter()
            self.wire.send(self.seek_text)

    def on_text(self, frame: bytes) -> None:
        crowd, run, msg = self.crowd, self.run, json.loads(frame)
        kind = msg["type"]
        if kind == "moved":
            self.moved_seen += 1
            if msg["player"] == self.seat and msg["ply"] == self.pending_ply:
                run.moves, self.pending_ply = run.moves + 1, -1
                if crowd.window[0] <= self.sent_at < crowd.window[1]:
                    run.window_moves += 1
                    run.client_ms.append((time.perf_counter() - self.sent_at) * 1000.0)
                    run.server_ms.append((self.wire.received_ns - self.sent_ns) / 1e6)
        elif kind == "your_turn":
            self.pending_ply, move = msg["ply"], self.rng.choice(msg["legal_moves"])
            reply = f'{self.move_prefix}{self.pending_ply},"move":{move}{crowd.analysis}}}'
            if crowd.think_s:
                # Uniform on think_ms -+ jitter: one think time for all bots phase-locks them.
                jitter = crowd.config.think_jitter * (2.0 * self.think_rng.random() - 1.0)
                crowd.loop.call_later(crowd.think_s * (1.0 + jitter), self.send_move, reply)
            else:
                self.send_move(reply)
        elif kind == "match_start":
            self.seat, self.seeking, self.moved_seen = msg["you"], False, len(msg["moves"])
            self.move_prefix = f'{{"type":"move","match_id":{json.dumps(msg["match_id"])},"ply":'
            crowd.in_match += 1
            crowd.started(msg["match_id"], self.sought_at, self.moved_node)
            self.moved_node, run.moves = False, run.moves + (0 if self.seat else self.moved_seen)
        elif kind == "redirect":  # its match is on another node: it goes there
            self.moved_node = self.away = True
            self.wire.close()
            crowd.loop.create_task(self.connect(msg["url"]))
        elif kind == "match_end":
            crowd.in_match -= 1
            if self.seat == 0:  # each match counted once, by its first player
                run.match_moves[msg["match_id"]] = self.moved_seen
                run.window_ended += crowd.window[0] <= time.perf_counter() < crowd.window[1]
            self.seat, away, self.away = -1, self.away, False
            if not away:
                self.seek()
            else:  # back to its own node to seek, as arena-bot goes
                self.wire.close()
                crowd.loop.create_task(self.connect(self.home)).add_done_callback(self.seek)
        elif kind == "error":
            run.errors[msg.get("code", "?")] += 1

    def send_move(self, reply: str) -> None:
        self.sent_at, self.sent_ns = time.perf_counter(), time.time_ns()  # wall-clock: the kernel's
        self.wire.send(reply)


class _Crowd:
    """All the bots on one event loop; what they and the server did in the window."""

    def __init__(self, config: Config, servers: Sequence[Server]) -> None:
        self.config, self.servers, self.run = config, servers, Run(config)
        self.server, self.think_s = servers[0], config.think_ms / 1e3  # the soak samples servers[0]
        self.analysis = f',"analysis":{ANALYSIS}' if config.analysis == "tree" else ""
        self.window, self.stopping, self.in_match = (float("inf"),) * 2, False, 0
        self.gate = asyncio.Semaphore(50)
        self.halves: dict[str, tuple[float, bool]] = {}  # match -> its first start's seek, moved

    def started(self, match_id: str, sought_at: float, moved: bool) -> None:
        """A bot's match_start: the second one of a match gives the match's pairing delay."""
        if (first := self.halves.pop(match_id, None)) is None:
            self.halves[match_id] = (sought_at, moved)
        elif self.window[0] <= (now := time.perf_counter()) < self.window[1]:
            self.run.pair_ms[first[1] or moved].append((now - max(first[0], sought_at)) * 1e3)

    def cpu(self) -> tuple[float, ...]:
        """CPU seconds so far: servers, their children (writer, fit), bots, PostgreSQL."""
        tasks = [t for s in self.servers for t in Path(f"/proc/{s.pid}/task").glob("*/children")]
        children = [int(pid) for task in tasks for pid in task.read_text().split()]
        pg = sum(cpu_seconds(int(p.name), "postgres") for p in Path("/proc").glob("[0-9]*"))
        servers = sum(cpu_seconds(s.pid) for s in self.servers)
        return servers, sum(map(cpu_seconds, children)), time.process_time(), pg

    async def count_instructions(self, on: bool) -> None:
        """``--callgrind``: turn the server's instruction count on or off; the moves confirmed
        while it was on are the ones it counted (up to the toggles' own delay)."""
        if not self.config.callgrind:
            return
        if not on:
            self.run.counted_moves = self.run.moves - self.run.counted_moves
        command = ["callgrind_control", "-i", "on" if on else "off", str(self.server.pid)]
        await asyncio.to_thread(subprocess.run, command, check=True, stdout=subprocess.DEVNULL)
        if on:
            self.run.counted_moves = self.run.moves

    async def play(self, bots: Sequence[tuple[str, str]]) -> Run:
        self.loop, config, run, n = asyncio.get_running_loop(), self.config, self.run, len(bots)
        homes = [f"ws://{self.servers[i % len(self.servers)].address}/" for i in range(n)]
        players = [_Bot(self, name, token, homes[i], config.seed * 100_003 + i)
                   for i, (name, token) in enumerate(bots)]  # fmt: skip
        await asyncio.gather(*(bot.connect(bot.home) for bot in players))
        t0 = time.perf_counter()
        self.window = (t0 + config.warmup, t0 + config.warmup + config.seconds)
        # Bots arrive spread over the warm-up's first half: seeking at once, they would lockstep.
        arrivals = random.Random(config.seed)
        for bot in players:
            self.loop.call_later(arrivals.uniform(0.0, config.warmup / 2), bot.seek)
        await asyncio.sleep(config.warmup)
        await self.count_instructions(True)
        opened, live = self.cpu(), []
        while time.perf_counter() < self.window[1]:
            live.append(self.in_match / 2)
            if 0 < (done := config.soak_every * (len(run.soak) + 1)) <= len(run.match_moves):
                rss, health = await asyncio.to_thread(self.server.sample)
                run.soak.append((done, (time.perf_counter() - t0) / 60, rss, health))
                print(f"  {done:,} matches finished: server RSS {rss:.1f} MiB", flush=True)
            await asyncio.sleep(0.1)
        run.cpu = tuple((b - a) / config.seconds for a, b in zip(opened, self.cpu(), strict=True))
        await self.count_instructions(False)
        run.live, self.stopping = sum(live) / len(live), True
        for bot in (bot for bot in players if bot.seeking):
            bot.wire.send('{"type":"cancel_seek"}')
        # A seek paired before its cancel still starts a match: wait a window, then the matches.
        quiet_at, deadline = (t := time.perf_counter()) + config.pairing_window_s + 0.5, t + DRAIN_S
        while time.perf_counter() < deadline and (self.in_match or time.perf_counter() < quiet_at):
            await asyncio.sleep(0.05)
        lost = sum(bot.wire.lost.done() for bot in players)
        run.errors += Counter({"bots still in a match": self.in_match, "connection lost": lost})
        for bot in players:
            bot.wire.close()
        return run


def client_main(config: Config, servers: Sequence[Server], bots: Sequence[Any]) -> Run:
    """The client process: play ``bots``; their ``Run``."""
    os.nice(5)  # the load generator yields the shared cores to the server it measures
    return uvloop.run(_Crowd(config, servers).play(bots))  # the loop `arena serve` runs on
