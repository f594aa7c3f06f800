"""Helpers shared by the viewer tests and their fixtures: scripted bots and fixture types.

(A module of its own because test modules cannot import ``conftest``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Page
from websockets.asyncio.client import ClientConnection

from arena.server import ArenaServer
from protocol.messages import MatchEnd, MatchStart, ServerMessage, YourTurn, parse_server_message


def fake_analysis(legal: tuple[int, ...], chosen: int, rng: random.Random) -> dict[str, Any]:
    """A plausible search report: most visits on the chosen move, the rest spread out, and
    a small tree: the chosen move, two answers to it and a reply to the first."""
    visits = {move: rng.randint(5, 60) for move in legal}
    visits[chosen] = max(visits.values()) + rng.randint(40, 120)
    total = sum(visits.values())
    answers = legal[:2]
    tree = [{"move": chosen, "visits": visits[chosen], "value": 0.25}]
    tree += [{"move": m, "visits": 30 - 10 * i, "parent": 0} for i, m in enumerate(answers)]
    tree += [{"move": legal[-1], "visits": 12, "value": 0.5, "parent": 1}]
    return {
        "tree": tree,
        "simulations": total,
        "sims_per_s": round(total / 0.25, 1),
        "value": round(rng.uniform(-0.5, 0.5), 3),
        "depth": rng.randint(4, 20),
        "moves": [
            {"move": move, "visits": n, "value": round(rng.uniform(-1, 1), 3)}
            for move, n in sorted(visits.items())
        ],
    }


Report = Callable[[tuple[int, ...], int, random.Random], dict[str, Any]]
"""``report(legal_moves, chosen, rng)``: the ``analysis`` a scripted bot sends."""


def node_analysis(legal: tuple[int, ...], chosen: int, rng: random.Random) -> dict[str, Any]:
    """What an alpha-beta search reports: positions searched, their rate, value, depth and
    the line it expects (the move played, then the first legal answer)."""
    nodes = rng.randint(20_000, 90_000)
    pv = [chosen, legal[0]]
    return {"nodes": nodes, "nodes_per_s": float(nodes * 4), "value": 0.25, "depth": 9, "pv": pv}


class ScriptedBot:
    """A bot over a real websocket that plays seeded random (or scripted) moves with analysis.

    ``scripts`` are the moves to play by seat (player 0's, player 1's); without them, or
    once its script runs out, the bot picks a seeded random legal move.

    In ``gated`` mode it waits for ``allow(n)`` before each of its moves, so a test can
    look at the page between moves; otherwise it plays as fast as the server lets it.
    """

    def __init__(
        self,
        ws: ClientConnection,
        name: str,
        seed: int,
        gated: bool,
        scripts: tuple[list[int], list[int]] | None,
    ) -> None:
        self.ws = ws
        self.name = name
        self.rng = random.Random(seed)
        self.gated = gated
        self.scripts = scripts
        self.script: list[int] = []
        self.permits: asyncio.Queue[None] = asyncio.Queue()
        self.started: asyncio.Future[MatchStart] = asyncio.get_running_loop().create_future()
        self.ended: asyncio.Future[MatchEnd] = asyncio.get_running_loop().create_future()
        self.played = 0
        self.task: asyncio.Task[None] | None = None
        self.report: Report = fake_analysis
        """What the bot says about its search with each move (a test may swap it)."""

    def allow(self, moves: int = 1) -> None:
        """Let a gated bot play ``moves`` more moves."""
        for _ in range(moves):
            self.permits.put_nowait(None)

    def release(self) -> None:
        """Stop gating: play every remaining move at once (waking a move that waits)."""
        self.gated = False
        self.allow(1)

    async def seek(self, game: str, move_ms: int) -> None:
        """Ask the lobby for a match."""
        await self.send(type="seek", game=game, time_control={"move_ms": move_ms, "bank_ms": 0})

    async def send(self, **fields: Any) -> None:
        """Send one JSON message."""
        await self.ws.send(json.dumps(fields))

    async def run(self) -> None:
        """Answer the server until the match ends."""
        async for frame in self.ws:
            message: ServerMessage = parse_server_message(frame)
            if isinstance(message, MatchStart) and not self.started.done():
                if self.scripts is not None and message.you is not None:
                    self.script = list(self.scripts[message.you])
                self.started.set_result(message)
            elif isinstance(message, YourTurn):
                await self._play(message)
            elif isinstance(message, MatchEnd):
                if not self.ended.done():
                    self.ended.set_result(message)
                return

    async def _play(self, turn: YourTurn) -> None:
        if self.gated:
            await self.permits.get()
        move = self.script.pop(0) if self.script else self.rng.choice(turn.legal_moves)
        analysis = self.report(turn.legal_moves, move, self.rng)
        await self.send(
            type="move", match_id=turn.match_id, ply=turn.ply, move=move, analysis=analysis
        )
        self.played += 1


PageFactory = Callable[..., Awaitable[Page]]
"""``await open_page(width=..., height=..., dark=...)``: a fresh page in its own context."""

BotsFactory = Callable[..., Awaitable[tuple[ScriptedBot, ScriptedBot]]]
"""``x, o = await start_match(game, names=..., gated=..., scripts=...)``: bots by seat."""


@contextlib.asynccontextmanager
async def guest_bot(
    arena: ArenaServer, token: str, log_path: Path, game: str, strategy: str, name: str = "alpha"
) -> AsyncIterator[str]:
    """A real ``arena-bot`` process taking challenges only (guests included) for ``game``."""
    argv = [
        sys.executable, "-m", "bots.client.cli",
        "--url", f"ws://127.0.0.1:{arena.port}",
        "--name", name,
        "--game", game,
        "--strategy", strategy,
        "--no-seek",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            argv,
            env={**os.environ, "ARENA_BOT_TOKEN": token},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            for _ in range(600):  # a cold Numba cache compiles the kernels first
                if name in arena.gateway.guest_games:
                    break
                assert proc.poll() is None, log_path.read_text()
                await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"arena-bot {name} never logged in")
            yield name
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                await asyncio.to_thread(proc.wait, 15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
