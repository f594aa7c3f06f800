"""Failover: how long bots of a killed node take to play again, when its lease decides.

    python bench/failover.py [--bots 8] [--runs 3] [--pg postgresql://postgres@127.0.0.1/postgres]
        [--code DIR]

Two real ``arena serve --allow-multi-node`` nodes share a fresh PostgreSQL
database. Node ``b`` runs in a pid namespace of its own (``unshare --pid``,
as root), so node ``a`` cannot see whether its process lives and judges it by
its lease alone, as it would a node on another machine. ``--bots`` real
``arena-bot`` processes (random moves, Connect Four, 300 ms a move, the nodes
pausing 200 ms between moves) are given the URLs ``b,a`` (half of them) or
``a,b``. Once ``b`` hosts live matches, it is killed (SIGKILL); the bots that
were playing there are timed from the kill to the start of their next match
(``matches.started_at``, the database's clock). Then ``b`` is started again,
and the bench counts the matches it hosts in the next 20 s: bots coming back.

One line per run and the median over the runs. The lease is 10 s
(``arena.store.nodes.LEASE_S``). ``--code DIR`` runs the nodes and bots from
another checkout (``PYTHONPATH=DIR``, working directory ``DIR``), to compare
with other code. Results are
noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg

LEASE_S = 10.0
SETTLE_S = 20.0


def _env(code: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DB"}
    env["PYTHONUNBUFFERED"] = "1"
    if code:
        env["PYTHONPATH"] = code
    return env


class Bench:
    """One database, two nodes and the bots; see the module docstring."""

    def __init__(self, admin_dsn: str, bots: int, code: str | None, work: Path) -> None:
        self.admin_dsn = admin_dsn
        self.names = [f"fo{i}" for i in range(bots)]
        self.env = _env(code)
        self.cwd = code  # ``python -m`` puts the working directory first on the path
        self.work = work
        self.db_name = f"arena_failover_{secrets.token_hex(4)}"
        base = admin_dsn.rsplit("/", 1)[0]
        self.dsn = f"{base}/{self.db_name}"
        self.url = self.dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
        self.nodes: dict[str, tuple[subprocess.Popen[str], str]] = {}
        self.bots: list[subprocess.Popen[bytes]] = []

    async def query(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(self.dsn, timeout=5)
        try:
            return list(await conn.fetch(sql, *args))
        finally:
            await conn.close()

    async def create(self) -> None:
        conn = await asyncpg.connect(self.admin_dsn, timeout=5)
        try:
            await conn.execute(f'CREATE DATABASE "{self.db_name}"')
        finally:
            await conn.close()
        tokens = self.work / "tokens"
        subprocess.run(
            [sys.executable, "-m", "arena", "bots", "add", "--db", self.url, "--token-dir",
             str(tokens), *self.names],
            check=True, capture_output=True, env=self.env, cwd=self.cwd,
        )  # fmt: skip

    async def drop(self) -> None:
        conn = await asyncpg.connect(self.admin_dsn, timeout=5)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        finally:
            await conn.close()

    def start_node(self, node: str, port: int, elsewhere: bool) -> None:
        command = [
            sys.executable, "-m", "arena", "serve", "--port", str(port), "--db", self.url,
            "--allow-multi-node", "--node-id", node, "--pairing-window", "0.05", "--pace-ms", "200",
        ]  # fmt: skip
        if elsewhere:  # its own pid namespace: judged by its lease, as on another machine
            command = ["unshare", "--pid", "--fork", "--kill-child", *command]
        log = (self.work / f"node-{node}.log").open("a")
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=log, text=True, env=self.env, cwd=self.cwd
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        self.nodes[node] = (proc, f"ws://127.0.0.1:{port}")

    def start_bots(self) -> None:
        a, b = self.nodes["a"][1], self.nodes["b"][1]
        for index, name in enumerate(self.names):
            urls = f"{b},{a}" if index % 2 == 0 else f"{a},{b}"
            token = (self.work / "tokens" / name).read_text().strip()
            self.bots.append(
                subprocess.Popen(
                    [sys.executable, "-m", "bots.client.cli", "--url", urls, "--name", name,
                     "--game", "connect4", "--strategy", "random", "--move-ms", "300",
                     "--games", "100000", "--quiet"],
                    env={**self.env, "ARENA_BOT_TOKEN": token},
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True, cwd=self.cwd,
                )
            )  # fmt: skip

    def kill_node(self, node: str) -> None:
        proc, _ = self.nodes.pop(node)
        proc.send_signal(signal.SIGKILL)  # unshare --kill-child takes the node with it
        proc.wait()

    def stop(self) -> None:
        for bot in self.bots:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(bot.pid, signal.SIGKILL)
            bot.wait()
        for proc, _ in self.nodes.values():
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def _until(check: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError("the arena did not get there")
        await asyncio.sleep(0.1)


async def one_run(admin_dsn: str, bots: int, code: str | None) -> tuple[float, float, int]:
    """Median and worst seconds from the kill to a bot's next match; matches on the
    restarted node in ``SETTLE_S``."""
    with tempfile.TemporaryDirectory() as work:
        bench = Bench(admin_dsn, bots, code, Path(work))
        await bench.create()
        try:
            bench.start_node("a", _free_port(), elsewhere=False)
            port_b = _free_port()
            bench.start_node("b", port_b, elsewhere=True)
            bench.start_bots()

            victims: set[str] = set()

            async def playing_on_b() -> bool:
                rows = await bench.query(
                    "SELECT b0.name AS x, b1.name AS o FROM matches m JOIN bots b0"
                    " ON b0.id = m.player0_id JOIN bots b1 ON b1.id = m.player1_id"
                    " WHERE m.status = 'live' AND m.node_id = 'b'"
                )
                victims.update(name for row in rows for name in (row["x"], row["o"]))
                return len(victims) >= 2

            await asyncio.sleep(5.0)  # every bot connected and playing
            await _until(playing_on_b, 60)
            killed_at = (await bench.query("SELECT clock_timestamp() AS t"))[0]["t"]
            bench.kill_node("b")
            waits: dict[str, float] = {}

            async def all_back() -> bool:
                rows = await bench.query(
                    "SELECT b.name, min(m.started_at) AS t FROM matches m JOIN bots b"
                    " ON b.id IN (m.player0_id, m.player1_id)"
                    " WHERE m.started_at > $1 GROUP BY b.name",
                    killed_at,
                )
                for row in rows:
                    if row["name"] in victims:
                        waits[row["name"]] = (row["t"] - killed_at).total_seconds()
                return victims <= waits.keys()

            await _until(all_back, 90)
            bench.start_node("b", port_b, elsewhere=True)
            await asyncio.sleep(SETTLE_S)
            back = await bench.query(
                "SELECT count(*) AS n FROM matches WHERE node_id = 'b' AND started_at >"
                " clock_timestamp() - make_interval(secs => $1)",
                SETTLE_S,
            )
            values = sorted(waits.values())
            return statistics.median(values), values[-1], int(back[0]["n"])
        finally:
            bench.stop()
            await bench.drop()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--code", help="run nodes and bots from this checkout")
    args = parser.parse_args()
    print(f"lease {LEASE_S:.0f} s; {args.bots} bots; seconds from the kill to the next match")
    print("run  median  worst  matches on the restarted node in 20 s")
    medians = []
    for run in range(1, args.runs + 1):
        median, worst, back = await one_run(args.pg, args.bots, args.code)
        medians.append(median)
        print(f"{run:>3}  {median:6.1f}  {worst:5.1f}  {back}", flush=True)
    print(f"median of the runs' medians: {statistics.median(medians):.1f} s")


if __name__ == "__main__":
    asyncio.run(main())
