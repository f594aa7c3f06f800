"""Cost of the fitted leaderboard on a real server: cached GETs, GETs after a result, bot pages.

    python bench/leaderboard.py [--bots 100] [--games 200000] [--repeats 9] [--db FILE]

Builds a SQLite file with ``--bots`` bots and ``--games`` finished rated
Connect Four matches (outcomes drawn from known ratings, seeded; the incremental
Elo and its history rebuilt by ``Store.rebuild_ratings``), or reuses ``--db``
when it already exists. Then, against a real ``ArenaServer`` on port 0 over that
file, it times (median of ``--repeats``, milliseconds):

- ``GET /api/leaderboard`` served from the cached board;
- the same GET right after a new rated result committed (the store's finish,
  then ``result_committed`` as a match end calls it; ``leaderboard_refresh_s=0``
  so every such GET rebuilds): the read of the pair cells plus the fit;
- the two parts of that rebuild alone: ``Store.leaderboard_inputs`` (one
  ``GROUP BY`` over every rated match) and ``build_board`` (the fit);
- ``GET /api/bots/NAME`` of one bot, first after a rebuild (history path computed)
  and then again (cached path; the store queries still run);
- how long a whole rebuild (read and fit) holds the event loop, in the server's
  fit process (``FitProcess``: the child reads and fits) and in a worker thread
  (``ThreadFit``: the read on the loop, the fit in the thread): the longest gap
  of a 1 ms sleep loop during the rebuild (``held``), and the rebuild's time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from arena.leaderboard import build_board
from arena.leaderboard.cache import FIT_SHARE
from arena.leaderboard.fit_process import FitProcess, Fitter, ThreadFit
from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from protocol.games import Termination

GAME = "connect4"


async def http_get(port: int, path: str) -> dict[str, Any]:
    """One HTTP/1.1 GET over a fresh connection; the parsed JSON body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
    raw = await reader.read()
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split()[1] == b"200", head[:80]
    data: dict[str, Any] = json.loads(body)
    return data


async def build_database(path: Path, bots: int, games: int, seed: int) -> None:
    """``games`` rated finished matches between ``bots`` bots, written in bulk."""
    store = await Store.open(f"sqlite+aiosqlite:///{path}")
    try:
        for i in range(bots):
            await store.add_bot(f"bot{i:03d}")
    finally:
        await store.close()
    rng = np.random.default_rng(seed)
    truth = rng.normal(1500.0, 200.0, bots)
    first = rng.integers(0, bots, games)
    second = (first + rng.integers(1, bots, games)) % bots
    expected = 1.0 / (1.0 + 10.0 ** ((truth[second] - truth[first]) / 400.0))
    draw = 0.4 * 4.0 * expected * (1.0 - expected)
    roll = rng.random(games)
    winner = np.where(roll < expected - draw / 2, 0, np.where(roll < expected + draw / 2, -1, 1))
    start = datetime(2025, 1, 1, tzinfo=UTC)
    with sqlite3.connect(path) as db:
        ids = dict(db.execute("SELECT name, id FROM bots"))
        rows = []
        for n in range(games):
            at = (start + timedelta(seconds=30 * n)).isoformat(sep=" ")
            won = int(winner[n])
            rows.append(
                (
                    f"m{n:09d}",
                    GAME,
                    ids[f"bot{first[n]:03d}"],
                    ids[f"bot{second[n]:03d}"],
                    1000,
                    0,
                    True,
                    "finished",
                    None if won < 0 else won,
                    {0: "1-0", 1: "0-1", -1: "1/2-1/2"}[won],
                    "draw" if won < 0 else "line",
                    None,
                    "",
                    at,
                    at,
                )
            )
        db.executemany(
            "INSERT INTO matches (id, game, player0_id, player1_id, move_ms, bank_ms, rated,"
            " status, winner, result, termination, fault, reason, started_at, ended_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    store = await Store.open(f"sqlite+aiosqlite:///{path}")
    try:
        await store.rebuild_ratings()
    finally:
        await store.close()


async def median_ms(
    repeats: int, run: Callable[[], Awaitable[object]], before: Callable[[], Awaitable[None]]
) -> float:
    """The median wall time of ``run`` over ``repeats`` runs, each after ``before``."""
    times = []
    for _ in range(repeats):
        await before()
        begin = time.perf_counter()
        await run()
        times.append(time.perf_counter() - begin)
    return statistics.median(times) * 1000.0


async def measure(path: Path, repeats: int) -> list[tuple[str, float, str]]:
    """Every row of the table: (what, median ms, note)."""
    store = await Store.open(f"sqlite+aiosqlite:///{path}")
    config = ArenaConfig(port=0, leaderboard_refresh_s=0.0)
    server = ArenaServer(config, store=store)
    await server.start()
    rows: list[tuple[str, float, str]] = []
    try:
        port = server.port
        board = await http_get(port, f"/api/leaderboard?game={GAME}")
        entries = board["entries"]
        bot = entries[len(entries) // 2]["bot"]
        opponent = entries[0]["bot"]

        async def nothing() -> None:
            return None

        async def new_result() -> None:
            match_id = await store.open_match(GAME, (bot, opponent), 1000, 0)
            await store.finish_match(match_id, 1, Termination.LINE, None, True)
            server.leaderboards.result_committed(GAME)

        def get(path: str) -> Callable[[], Awaitable[object]]:
            return lambda: http_get(port, path)

        board_path = f"/api/leaderboard?game={GAME}"
        fits = server.leaderboards.fits
        cached = await median_ms(max(repeats, 25), get(board_path), nothing)
        assert server.leaderboards.fits == fits, "a cached GET fitted"
        rows.append(("GET /api/leaderboard, cached", cached, f"{len(entries)} entries"))
        rebuilt = [0.0]  # how long the last GET after a result took (its read and fit)

        async def rested_result() -> None:
            # The board is rebuilt only once the last fit has rested (FIT_SHARE), which
            # after a rebuild of d seconds takes 3d: wait that out, or the GET is cached.
            await asyncio.sleep(rebuilt[0] * (1.0 / FIT_SHARE - 1.0) + 0.01)
            await new_result()

        async def get_rebuilt() -> None:
            begin = time.perf_counter()
            await http_get(port, board_path)
            rebuilt[0] = time.perf_counter() - begin

        fresh = await median_ms(repeats, get_rebuilt, rested_result)
        assert server.leaderboards.fits == fits + repeats, "each GET after a result fits once"
        rows.append(("GET /api/leaderboard after a result", fresh, "read + fit in the GET"))

        async def read() -> object:
            return await store.leaderboard_inputs(GAME)

        inputs = await store.leaderboard_inputs(GAME)
        rows.append(("  Store.leaderboard_inputs", await median_ms(repeats, read, nothing),
                     f"{len(inputs[1])} pair cells"))  # fmt: skip

        async def fit() -> object:
            return await asyncio.to_thread(build_board, GAME, *inputs)

        rows.append(("  build_board (the fit)", await median_ms(repeats, fit, nothing), ""))
        page = f"/api/bots/{bot}"
        first = await median_ms(repeats, get(page), rested_result)
        rows.append(("GET /api/bots/NAME after a result", first, "history path computed"))
        again = await median_ms(repeats, get(page), nothing)
        games = (await http_get(port, page))["ratings"][0]["games"]
        rows.append(("GET /api/bots/NAME again", again, f"{games} games, path cached"))
    finally:
        await server.shutdown()
        await store.close()
    return rows


async def longest_gap(work: Awaitable[object]) -> tuple[float, float]:
    """``work``'s time and the longest gap between the turns of a 1 ms sleep loop while it
    runs (seconds): how long ``work`` kept the event loop from running anything else."""
    gaps: list[float] = []

    async def tick() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.01)
    begin = time.perf_counter()
    await work
    took = time.perf_counter() - begin
    ticker.cancel()
    return took, max(gaps)


async def loop_held(path: Path, repeats: int) -> list[tuple[str, float, str]]:
    """The rows of a whole rebuild's hold on the event loop, by where the fit runs."""
    store = await Store.open(f"sqlite+aiosqlite:///{path}")
    process = FitProcess()
    rows = []
    try:
        fitters: list[tuple[str, Fitter]] = [("fit process", process), ("thread", ThreadFit())]
        for label, fitter in fitters:
            await fitter.build(store, GAME, 0, None)  # the child started, the modules imported
            runs = [await longest_gap(fitter.build(store, GAME, 0, None)) for _ in range(repeats)]
            took = statistics.median(t for t, _ in runs) * 1000.0
            held = statistics.median(g for _, g in runs) * 1000.0
            rows.append((f"rebuild in the {label}: loop held", held, f"rebuild {took:.0f} ms"))
    finally:
        await process.close()
        await store.close()
    return rows


async def run(args: argparse.Namespace) -> None:
    """Build (or reuse) the database, measure, print the table."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(args.db) if args.db else Path(scratch) / "bench.db"
        if not path.exists():
            begin = time.perf_counter()
            await build_database(path, args.bots, args.games, args.seed)
            print(f"built {path} in {time.perf_counter() - begin:.1f} s")
        rows = await measure(path, args.repeats) + await loop_held(path, args.repeats)
    print(f"{args.bots} bots, {args.games:,} rated games; median of {args.repeats} (cached: ≥25)")
    print(f"{'what':<40} {'ms':>9}  note")
    for what, ms, note in rows:
        print(f"{what:<40} {ms:>9.2f}  {note}")


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", help="SQLite file to build once and reuse")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
