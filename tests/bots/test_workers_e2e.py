"""``arena-bot --worker``: several processes serve one bot on a real arena (tmp SQLite).

Two worker processes of alice (one seat each) and one bob process (two
seats) seek: alice's matches run on both workers, under one name and one
rating.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arena.server import ArenaConfig, ArenaServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ArenaServer]:
    """A real arena on a free port over a fresh SQLite file."""
    config = ArenaConfig(
        host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        move_ms=3000, grace_s=10.0, ping_interval_s=1.0, close_timeout_s=2.0, seed=5,
        pairing_window_s=0.01,
    )  # fmt: skip
    async with ArenaServer(config) as running:
        yield running


async def test_two_worker_processes_play_under_one_name(server: ArenaServer) -> None:
    tokens = {name: await server.store.add_bot(name) for name in ("alice", "bob")}

    async def arena_bot(name: str, seed: int, *options: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bots.client.cli", "--url", f"ws://127.0.0.1:{server.port}/",
            "--name", name, "--game", "tictactoe", "--strategy", f"random:seed={seed}",
            "--move-ms", "3000", *options,
            env={**os.environ, "ARENA_BOT_TOKEN": tokens[name], "PYTHONPATH": str(REPO)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip

    procs = [
        await arena_bot("alice", 1, "--worker", "--games", "3"),
        await arena_bot("alice", 2, "--worker", "--games", "3"),
        await arena_bot("bob", 3, "--max-matches", "2", "--games", "6"),
    ]
    try:
        async with asyncio.timeout(90):
            outputs = [await proc.communicate() for proc in procs]
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    for proc, (_, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, stderr.decode()
    # Each worker played its own three matches; bob played all six, against one alice.
    for _, stderr in outputs[:2]:
        assert "3 matches:" in stderr.decode(), stderr.decode()
    board = {row.bot: row for row in await server.store.leaderboard("tictactoe")}
    assert set(board) == {"alice", "bob"}
    assert board["alice"].games == board["bob"].games == 6
    assert len(await server.store.list_matches(status="finished", game="tictactoe")) == 6
