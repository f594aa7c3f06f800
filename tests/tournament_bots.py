"""Scripted bots for tournament tests: real websocket clients in the test's process.

By default an ``AutoBot`` accepts every challenge and plays its first legal
move, so every result is fixed by the opening and the seating; it can also
decline a few challenges first, resign at its first turn, or never move.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from protocol.games import new_game
from protocol.messages import (
    PROTOCOL_VERSION,
    ChallengeReceived,
    MatchEnd,
    MatchStart,
    YourTurn,
    parse_server_message,
)


@dataclass
class AutoBot:
    """One scripted bot: its behaviour and what it saw."""

    ws: ClientConnection
    declines: int = 0
    """Challenges to decline before accepting."""
    resign: bool = False
    idle: bool = False
    """Accept, then never move."""
    stall_after: int | None = None
    """Stop answering after this many moves, until that match ends (lost on time)."""
    gate: asyncio.Event | None = None
    """Set: turns are answered only once it is set."""
    starts: list[MatchStart] = field(default_factory=list)
    ends: list[MatchEnd] = field(default_factory=list)
    challenges: int = 0
    task: asyncio.Task[None] | None = None

    @classmethod
    async def login(
        cls, port: int, name: str, token: str, hello: dict[str, Any] | None = None, **behaviour: Any
    ) -> AutoBot:
        """Connect, say hello (with the fields of ``hello`` added, e.g. ``worker``) and start
        answering (``close`` stops it)."""
        ws = await connect(f"ws://127.0.0.1:{port}/", compression=None)
        fields = {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION, "name": name}
        await ws.send(json.dumps({**fields, "token": token, **(hello or {})}))
        welcome = parse_server_message(await asyncio.wait_for(ws.recv(), 5))
        assert welcome.type == "welcome", welcome
        bot = cls(ws, **behaviour)
        bot.task = asyncio.create_task(bot._run(), name=f"autobot-{name}")
        return bot

    async def close(self) -> None:
        """Stop answering and close the connection."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        await self.ws.close()

    async def _send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))

    async def _run(self) -> None:
        async for frame in self.ws:
            message = parse_server_message(frame)
            if isinstance(message, ChallengeReceived):
                self.challenges += 1
                answer = "decline" if self.declines > 0 else "accept"
                self.declines -= 1
                await self._send(type=answer, challenge_id=message.challenge_id)
            elif isinstance(message, MatchStart):
                self.starts.append(message)
            elif isinstance(message, YourTurn) and not self.idle:
                if self.gate is not None:
                    await self.gate.wait()
                if self.stall_after is not None:
                    if self.stall_after <= 0:
                        continue
                    self.stall_after -= 1
                if self.resign:
                    await self._send(type="resign", match_id=message.match_id)
                else:
                    move = message.legal_moves[0]
                    await self._send(
                        type="move", match_id=message.match_id, ply=message.ply, move=move
                    )
            elif isinstance(message, MatchEnd):
                self.ends.append(message)
                if self.stall_after == 0:
                    self.stall_after = None  # stalled once: plays normally from now on


class AutoBots:
    """Logs ``AutoBot``s in to one server; ``close`` stops them all (a fixture's teardown)."""

    def __init__(self, port: int, tokens: dict[str, str]) -> None:
        self.port, self.tokens = port, tokens
        self.opened: list[AutoBot] = []

    async def __call__(
        self, name: str, hello: dict[str, Any] | None = None, **behaviour: Any
    ) -> AutoBot:
        self.opened.append(
            await AutoBot.login(self.port, name, self.tokens[name], hello, **behaviour)
        )
        return self.opened[-1]

    async def close(self) -> None:
        for bot in self.opened:
            await bot.close()


def first_move_score(game: str, opening: tuple[int, ...]) -> float:
    """The first player's score when both sides play their first legal move from ``opening``."""
    state = new_game(game).play_all(opening)
    while state.outcome() is None:
        state = state.play(state.legal_moves()[0])
    outcome = state.outcome()
    assert outcome is not None
    return 0.5 if outcome.winner is None else 1.0 - outcome.winner
