"""Stopping a bot: the first SIGINT/SIGTERM finishes the live matches, a second resigns them.

The client's rules against the scripted server (withdrawn seek, declined
challenge, resignation); then real ``arena-bot`` processes against a real
``arena serve``, signalled as a terminal's Ctrl-C does (the whole process
group, search workers included) or as a service manager does (SIGTERM).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

from bots.budget import Budget
from bots.client.runtime import BotClient, Decision
from protocol.games import GameState
from protocol.messages import (
    CancelSeek,
    ChallengeReceived,
    CloseCode,
    Decline,
    Move,
    Resign,
    Seek,
)
from tests.bots.arena_process import ArenaProcess, start_bot, stop_processes
from tests.bots.scripted import (
    TC,
    Peer,
    alive,
    children,
    config,
    end_match,
    python_mcts,
    referee,
    run_client,
    start_match,
    your_turn,
)

# The client's rules (scripted server) ------------------------------------------------


async def test_drain_withdraws_the_seek_declines_challenges_and_finishes_the_match(
    scripted: Any,
) -> None:
    seeking_again = asyncio.Event()
    drained = asyncio.Event()
    seen: dict[str, Any] = {}

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=0)
        await peer.expect(Seek)  # a second seat is free: it seeks again
        seeking_again.set()
        await drained.wait()
        seen["cancel"] = await peer.expect(CancelSeek)
        await peer.send(ChallengeReceived(challenge_id="c1", challenger="bob", game="tictactoe",
                                          time_control=TC))
        seen["decline"] = await peer.expect(Decline)
        seen["moves"], _ = await referee(peer, "m1", state, you=0)
        await end_match(peer, "m1", 0, "line")
        seen["close"] = await peer.client_close_code()

    server = await scripted(script)
    client = BotClient(config(server.url, games=None, max_matches=2), python_mcts())
    run = asyncio.create_task(run_client(client))
    async with asyncio.timeout(10):
        await seeking_again.wait()
    client.drain()
    drained.set()
    summary = await run
    await server.check()
    assert seen["cancel"].game == "tictactoe"
    assert seen["decline"].challenge_id == "c1"
    assert seen["moves"] and seen["close"] == CloseCode.NORMAL
    assert [r.outcome for r in summary.reports] == ["win"]
    received = server.peers[0].received
    assert not any(isinstance(m, Seek) for m in received[received.index(seen["cancel"]):])


async def test_a_second_stop_resigns_the_live_match_and_closes(scripted: Any) -> None:
    thinking = asyncio.Event()
    seen: dict[str, Any] = {}

    class Endless:
        """Thinks until cancelled."""

        async def choose(self, state: GameState, budget: Budget) -> Decision:
            thinking.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=0)
        await your_turn(peer, "m1", state, 60_000)
        seen["resign"] = await peer.expect(Resign, timeout=10)
        await end_match(peer, "m1", 1, "resign")
        seen["close"] = await peer.client_close_code()

    server = await scripted(script)
    client = BotClient(config(server.url, games=None), Endless())  # type: ignore[arg-type]
    run = asyncio.create_task(run_client(client))
    async with asyncio.timeout(10):
        await thinking.wait()
    client.on_signal()  # drains: the match goes on
    await asyncio.sleep(0.2)
    assert not run.done()
    started = time.monotonic()
    client.on_signal()  # forfeits
    summary = await run
    await server.check()
    assert time.monotonic() - started < 10.0  # at once, not after the 60 s move (generous)
    assert seen["resign"].match_id == "m1" and seen["close"] == CloseCode.NORMAL
    assert [r.end.termination for r in summary.reports] == ["resign"]
    assert not any(isinstance(m, Move) for m in server.peers[0].received)


async def test_drain_with_nothing_live_stops_at_once(scripted: Any) -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        await peer.expect(CancelSeek)
        await peer.client_close_code()

    server = await scripted(script)
    client = BotClient(config(server.url, games=None), python_mcts())
    run = asyncio.create_task(run_client(client))
    async with asyncio.timeout(10):
        while not server.peers or not server.peers[0].received[1:]:
            await asyncio.sleep(0.01)
    client.drain()
    summary = await run  # after the settle wait for a pairing that crossed the withdrawal
    await server.check()
    assert summary.reports == []


# Real processes against a real server -------------------------------------------------

BOTS = ("alice", "bob")
PLAY = ("--game", "connect4", "--move-ms", "300")


async def start_pair(
    arena: ArenaProcess, alice_strategy: str
) -> tuple[asyncio.subprocess.Process, asyncio.subprocess.Process]:
    """alice (the bot under test) and bob, seeking connect4 at 300 ms a move."""
    alice = await start_bot(arena.url, "alice", arena.tokens["alice"], *PLAY,
                            "--strategy", alice_strategy)
    bob = await start_bot(arena.url, "bob", arena.tokens["bob"], *PLAY,
                          "--strategy", "alphabeta:time_ms=100")
    return alice, bob


async def live_match(arena: ArenaProcess, min_moves: int) -> dict[str, Any]:
    """Wait for a live match with at least ``min_moves`` played; returns it."""
    async with asyncio.timeout(30):
        while True:
            for match in await arena.matches("live"):
                if len(match["moves"]) >= min_moves:
                    return match
            await asyncio.sleep(0.1)


async def test_ctrl_c_finishes_the_live_match_then_exits_without_seeking(
    tmp_path: Path,
) -> None:
    async with ArenaProcess(tmp_path, BOTS, "--move-ms", "300") as arena:
        alice, bob = await start_pair(arena, "mcts:time_ms=5000,workers=1,seed=1")
        try:
            match = await live_match(arena, min_moves=2)
            workers = children(alice.pid)
            os.killpg(alice.pid, signal.SIGINT)  # Ctrl-C reaches the search workers too
            async with asyncio.timeout(60):
                _, stderr = await alice.communicate()
            finished = {m["id"]: m for m in await arena.matches("finished")}
        finally:
            await stop_processes(alice, bob)
    log = stderr.decode()
    assert alice.returncode == 0, log
    assert f"finishing {match['id']}, then stopping" in log
    assert "choosing failed" not in log, "the search workers must survive the Ctrl-C"
    assert finished[match["id"]]["termination"] in ("line", "draw"), finished[match["id"]]
    assert [m for m in finished.values() if "alice" in m["players"]] == [finished[match["id"]]]
    assert workers and not any(alive(pid) for pid in workers)


async def test_a_second_sigterm_resigns_the_live_match_and_exits_at_once(
    tmp_path: Path,
) -> None:
    async with ArenaProcess(tmp_path, BOTS, "--move-ms", "300") as arena:
        alice, bob = await start_pair(arena, "mcts:time_ms=5000,workers=2,seed=1")
        try:
            match = await live_match(arena, min_moves=2)
            workers = children(alice.pid)
            alice.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.5)
            assert alice.returncode is None, "the first SIGTERM lets the match go on"
            started = time.monotonic()
            alice.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                _, stderr = await alice.communicate()
            took = time.monotonic() - started
            ended = await arena.get(f"/api/matches/{match['id']}")
        finally:
            await stop_processes(alice, bob)
    log = stderr.decode()
    assert alice.returncode == 0, log
    assert took < 5, log
    assert f"resigning {match['id']}" in log
    alice_seat = ended["players"].index("alice")
    assert (ended["status"], ended["termination"], ended["winner"]) == (
        "finished", "resign", 1 - alice_seat)
    assert len(workers) >= 2 and not any(alive(pid) for pid in workers)  # + resource tracker
