"""The bot client against the real arena server (tmp SQLite): whole rated matches.

Two ``arena-bot`` processes seek and play; a spectator checks that the MCTS
bot's analysis reaches the event stream; and a bot whose TCP connection is cut
mid-match (through a proxy) reconnects and finishes the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from arena.server import ArenaConfig, ArenaServer
from bots import make_strategy_from_spec
from bots.budget import Budget
from bots.client.runtime import BotClient, ClientConfig, Decision, StrategyChooser
from protocol.games import GameState
from protocol.messages import (
    PROTOCOL_VERSION,
    Event,
    Hello,
    TimeControl,
    Watch,
    parse_server_message,
)
from tests.relay import TcpRelay

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ArenaServer]:
    """A real arena on a free port over a fresh SQLite file."""
    config = ArenaConfig(
        host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        move_ms=3000, grace_s=10.0, ping_interval_s=1.0, close_timeout_s=2.0, seed=11,
        db_writer_process=True,  # as `arena serve` writes
    )
    async with ArenaServer(config) as running:
        yield running


def url_of(server: ArenaServer) -> str:
    """The server's websocket URL."""
    return f"ws://127.0.0.1:{server.port}/"


async def spectate(url: str, events: list[Event]) -> None:
    """Watch every live match, collecting events until cancelled."""
    async with connect(url, compression=None) as ws:
        await ws.send(Hello(role="spectator", version=PROTOCOL_VERSION).to_json())
        await ws.recv()  # welcome
        await ws.send(Watch().to_json())
        async for frame in ws:
            message = parse_server_message(frame)
            if isinstance(message, Event):
                events.append(message)


async def test_two_arena_bot_processes_play_rated_matches(server: ArenaServer) -> None:
    tokens = {name: await server.store.add_bot(name) for name in ("alice", "bob")}
    strategies = {"alice": "mcts:sims=300,workers=1,engine=python,seed=1", "bob": "random:seed=2"}
    events: list[Event] = []
    watcher = asyncio.create_task(spectate(url_of(server), events))
    await asyncio.sleep(0.2)  # watching before the first match starts
    procs = {
        name: await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bots.client.cli", "--url", url_of(server), "--name", name,
            "--game", "connect4", "--strategy", strategies[name], "--games", "2",
            "--move-ms", "3000",
            env={**os.environ, "ARENA_BOT_TOKEN": tokens[name], "PYTHONPATH": str(REPO)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        for name in ("alice", "bob")
    }
    try:
        async with asyncio.timeout(60):
            outputs = {name: await proc.communicate() for name, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher

    for name, proc in procs.items():
        stderr = outputs[name][1].decode()
        assert proc.returncode == 0, stderr
        assert stderr.count("match ") >= 2 and "2 matches:" in stderr, stderr
        assert tokens[name] not in stderr
    board = {row.bot: row for row in await server.store.leaderboard("connect4")}
    assert set(board) == {"alice", "bob"}
    assert board["alice"].games == board["bob"].games == 2
    assert board["alice"].wins == board["bob"].losses
    finished = await server.store.list_matches(status="finished", game="connect4")
    assert len(finished) == 2
    analysed = [e.analysis for e in events if e.kind == "moved" and e.analysis is not None]
    assert analysed and all(a.simulations == 300 for a in analysed)


async def test_a_bot_cut_off_mid_match_reconnects_and_finishes_it(server: ArenaServer) -> None:
    tokens = {name: await server.store.add_bot(name) for name in ("alice", "bob")}
    proxy = TcpRelay(server.port)
    proxy_port = await proxy.start()
    cut_now = asyncio.Event()

    class CutOnSecondMove:
        """Plays the first legal move; asks for the cut while choosing its second."""

        moves = 0

        async def choose(self, state: GameState, budget: Budget) -> Decision:
            self.moves += 1
            if self.moves == 2:
                cut_now.set()
                await asyncio.sleep(0.3)  # the answer is ready only after the drop
            return Decision(state.legal_moves()[0])

    def client(name: str, port: int, chooser: object) -> BotClient:
        config = ClientConfig(
            url=f"ws://127.0.0.1:{port}/", name=name, token=tokens[name], game="tictactoe",
            time_control=TimeControl(move_ms=3000), games=1, retry_initial_s=0.1,
            retry_max_s=0.5,
        )
        return BotClient(config, chooser)  # type: ignore[arg-type]

    alice = client("alice", proxy_port, CutOnSecondMove())
    with make_strategy_from_spec("random:seed=4", "tictactoe") as random_strategy:
        bob = client("bob", server.port, StrategyChooser(random_strategy))
        runs = [asyncio.create_task(alice.run()), asyncio.create_task(bob.run())]
        try:
            async with asyncio.timeout(30):
                await cut_now.wait()
                proxy.cut()
                alice_summary, bob_summary = await asyncio.gather(*runs)
        finally:
            for run in runs:
                run.cancel()
            await proxy.close()

    assert alice_summary.connections == 2
    [report] = alice_summary.reports
    assert report.end.termination in ("line", "draw"), report.end
    assert report.end.rated
    assert bob_summary.reports[0].end == report.end
    record = await server.store.get_match(report.match_id)
    assert record is not None and record.status == "finished"
