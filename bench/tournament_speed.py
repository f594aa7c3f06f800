"""Tournament throughput and the scheduler's delay between matches; scaling over workers.

    python bench/tournament_speed.py [--concurrency 1,8,64] [--seconds 15] [--game connect4]
        [--serve-options "--db-writer inline"]
    python bench/tournament_speed.py --workers 1,2,4 [--strategy "mcts:sims=20000,workers=1"]

For each concurrency ``c`` a fresh ``arena serve`` (a real process, SQLite
file, the writer process as in production) runs a round robin of ``2c`` bots
(at least 2), created over the HTTP API with the admin token, at ``c`` games
at once. The bots live in this process: websocket clients that accept every
challenge and answer each turn with a seeded random legal move at once, so
the arena's own costs are all that is measured. After a warm-up of 2 s, games
are counted for ``--seconds``.

``delay`` is the scheduler's added delay between matches as a bot sees it:
from receiving a ``match_end`` to receiving its next ``match_start``: the
scheduler's pass, the challenge, the bot's ``accept`` coming back, and the
match's start. Median and 90th percentile over every bot's gaps in the window.
Results are noisy on a shared machine: compare rows of one run.

``--workers 1,2,4`` measures instead how an SPRT-style match of one bot pair
scales with worker processes (``arena-bot --worker``, one seat each): for
each count ``w`` a fresh server runs a round robin of two bots, ``alpha``
and ``beta``, at ``w`` games at once, each bot served by ``w`` real
``arena-bot`` processes playing ``--strategy``. Games are counted from the
tournament's progress over ``--seconds`` once every seat plays. The
processes share this machine's cores with the server: scaling stops where
the cores run out, or the server does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from arena.store import Store
from arena.tournaments.admin import AdminFile, admin_file_path
from protocol.messages import PROTOCOL_VERSION

WARM_UP_S = 2.0


class InstantBot:
    """Accepts every challenge; plays a seeded random legal move at once; notes gaps."""

    def __init__(self, ws: ClientConnection, seed: int) -> None:
        self.ws = ws
        self.rng = random.Random(seed)
        self.ended_at: float | None = None
        self.gaps: list[tuple[float, float]] = []
        """(when the next match started, seconds since the previous match_end)."""
        self.finished: list[float] = []

    async def run(self) -> None:
        async for frame in self.ws:
            message: dict[str, Any] = json.loads(frame)
            kind = message["type"]
            if kind == "your_turn":
                move = self.rng.choice(message["legal_moves"])
                reply = {"type": "move", "match_id": message["match_id"], "ply": message["ply"]}
                await self.ws.send(json.dumps({**reply, "move": move}))
            elif kind == "challenge":
                await self.ws.send(
                    json.dumps({"type": "accept", "challenge_id": message["challenge_id"]})
                )
            elif kind == "match_start":
                now = time.perf_counter()
                if self.ended_at is not None:
                    self.gaps.append((now, now - self.ended_at))
                    self.ended_at = None
            elif kind == "match_end":
                self.ended_at = time.perf_counter()
                self.finished.append(self.ended_at)


def start_server(db: Path, options: list[str]) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "arena", "serve", "--port", "0", "--db", str(db), *options]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    line = server.stdout.readline()
    if "listening on" not in line:
        raise RuntimeError(f"arena serve did not start: {line!r}")
    return server, int(line.rsplit(":", 1)[1])


def post(admin: AdminFile, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        admin.url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {admin.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


async def register(db: Path, names: list[str]) -> dict[str, str]:
    """Create the database ``db`` with bots ``names``; their tokens."""
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        return {name: await store.add_bot(name) for name in names}
    finally:
        await store.close()


async def measure(
    concurrency: int, seconds: float, game: str, folder: Path, options: list[str]
) -> dict[str, Any]:
    """One row of the table: a fresh server, 2c bots, games counted in the window."""
    db = folder / f"bench-{concurrency}.db"
    names = [f"b{k:03d}" for k in range(max(2, 2 * concurrency))]
    tokens = await register(db, names)
    server, port = start_server(db, options)
    bots: list[InstantBot] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        for k, name in enumerate(names):
            ws = await connect(f"ws://127.0.0.1:{port}/", compression=None, max_queue=None)
            hello = {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION, "name": name}
            await ws.send(json.dumps({**hello, "token": tokens[name]}))
            await ws.recv()
            bots.append(InstantBot(ws, seed=k))
            tasks.append(asyncio.create_task(bots[-1].run()))
        admin = AdminFile.read(admin_file_path(f"sqlite+aiosqlite:///{db}"))
        assert admin is not None, "no admin file"
        rounds = 20_000 if len(names) == 2 else max(1, 200_000 // (len(names) ** 2))
        settings = {
            "game": game, "format": "round-robin", "bots": names, "games_per_pair": 2 * rounds,
            "move_ms": 30_000, "bank_ms": 0, "concurrency": concurrency, "rated": True,
            "openings": "none", "name": f"bench c={concurrency}", "seed": 1, "elo0": None,
            "elo1": None, "alpha": None, "beta": None, "model": None, "max_games": None,
        }  # fmt: skip
        body = {"settings": settings, "openings": {"source": "none", "openings": [[]]}}
        created = await asyncio.to_thread(post, admin, "/api/tournaments", body)
        await asyncio.sleep(WARM_UP_S)
        start = time.perf_counter()
        await asyncio.sleep(seconds)
        end = time.perf_counter()
        await asyncio.to_thread(post, admin, f"/api/tournaments/{created['id']}/cancel", {})
    finally:
        for task in tasks:
            task.cancel()
        for bot in bots:
            await bot.ws.close()
        server.terminate()
        server.wait(30)
    games = sum(1 for bot in bots for t in bot.finished if start <= t < end) / 2
    gaps = sorted(1000 * gap for bot in bots for at, gap in bot.gaps if start <= at < end)
    return {
        "concurrency": concurrency,
        "bots": len(names),
        "games_per_min": games / (end - start) * 60,
        "delay_median_ms": statistics.median(gaps) if gaps else float("nan"),
        "delay_p90_ms": gaps[int(0.9 * (len(gaps) - 1))] if gaps else float("nan"),
        "gaps": len(gaps),
    }


def get(admin: AdminFile, path: str) -> Any:
    with urllib.request.urlopen(admin.url + path, timeout=30) as response:
        return json.load(response)


def arena_bot(
    port: int, name: str, token: str, strategy: str, game: str
) -> subprocess.Popen[bytes]:
    """One ``arena-bot --worker`` process of ``name`` with one seat, waiting for challenges."""
    command = [
        sys.executable, "-m", "bots.client.cli", "--url", f"ws://127.0.0.1:{port}/", "--name",
        name, "--game", game, "--strategy", strategy, "--worker", "--no-seek", "--quiet",
        "--move-ms", "30000",
    ]  # fmt: skip
    env = {**os.environ, "ARENA_BOT_TOKEN": token}
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def measure_workers(
    workers: int, seconds: float, game: str, strategy: str, folder: Path, options: list[str]
) -> dict[str, Any]:
    """One row of the workers table: a fresh server, two bots of ``workers`` processes each."""
    db = folder / f"workers-{workers}.db"
    names = ["alpha", "beta"]
    tokens = await register(db, names)
    server, port = start_server(db, options)
    procs = [
        arena_bot(port, name, tokens[name], strategy, game)
        for name in names
        for _ in range(workers)
    ]
    try:
        admin = AdminFile.read(admin_file_path(f"sqlite+aiosqlite:///{db}"))
        assert admin is not None, "no admin file"
        settings = {
            "game": game, "format": "round-robin", "bots": names, "games_per_pair": 20_000,
            "move_ms": 30_000, "bank_ms": 0, "concurrency": workers, "rated": True,
            "openings": "none", "name": f"bench workers={workers}", "seed": 1, "elo0": None,
            "elo1": None, "alpha": None, "beta": None, "model": None, "max_games": None,
        }  # fmt: skip
        body = {"settings": settings, "openings": {"source": "none", "openings": [[]]}}
        created = await asyncio.to_thread(post, admin, "/api/tournaments", body)
        path = f"/api/tournaments/{created['id']}"
        deadline = time.monotonic() + 120  # the workers start (and warm their search) meanwhile
        while (await asyncio.to_thread(get, admin, path))["progress"]["playing"] < workers:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers did not all start playing within 120 s")
            await asyncio.sleep(0.5)
        await asyncio.sleep(WARM_UP_S)
        start, done_before = time.perf_counter(), (await asyncio.to_thread(get, admin, path))
        await asyncio.sleep(seconds)
        end, done_after = time.perf_counter(), (await asyncio.to_thread(get, admin, path))
        await asyncio.to_thread(post, admin, f"{path}/cancel", {})
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(30)
        server.terminate()
        server.wait(30)
    games = done_after["progress"]["done"] - done_before["progress"]["done"]
    return {
        "workers": workers,
        "games_per_min": games / (end - start) * 60,
        "games": games,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", default="1,8,64")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--game", default="connect4")
    parser.add_argument(
        "--serve-options", default="", help='more `arena serve` options, e.g. "--db-writer inline"'
    )
    parser.add_argument(
        "--workers", help="measure scaling over worker processes instead, e.g. 1,2,4"
    )
    parser.add_argument(
        "--strategy",
        default="mcts:sims=20000,workers=1,seed=1",
        help="--workers: the strategy every worker process plays",
    )
    args = parser.parse_args()
    if args.workers:
        print(
            f"one bot pair over worker processes, {args.game}, {args.strategy}, "
            f"{args.seconds:g} s windows, {os.cpu_count()} CPUs"
        )
        print(f"{'workers':>7} {'processes':>9} {'games':>6} {'games/min':>10} {'load 1m':>8}")
        with tempfile.TemporaryDirectory() as folder:
            for count in (int(w) for w in args.workers.split(",")):
                row = asyncio.run(
                    measure_workers(
                        count, args.seconds, args.game, args.strategy, Path(folder),
                        args.serve_options.split(),
                    )
                )  # fmt: skip
                print(
                    f"{row['workers']:>7} {2 * count:>9} {row['games']:>6} "
                    f"{row['games_per_min']:>10.1f} {row['load']:>8.2f}",
                    flush=True,
                )
        return
    levels = [int(c) for c in args.concurrency.split(",")]
    print(
        f"tournament throughput, {args.game}, instant random bots, {args.seconds:g} s windows"
        + (f", arena serve {args.serve_options}" if args.serve_options else "")
    )
    print(f"{'concurrency':>11} {'bots':>5} {'games/min':>10} {'delay med':>10} {'delay p90':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for level in levels:
            options = args.serve_options.split()
            row = asyncio.run(measure(level, args.seconds, args.game, Path(folder), options))
            print(
                f"{row['concurrency']:>11} {row['bots']:>5} {row['games_per_min']:>10.0f} "
                f"{row['delay_median_ms']:>8.1f}ms {row['delay_p90_ms']:>8.1f}ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
