"""A scripted websocket server that speaks the protocol, for testing the bot client.

The scripted server is a neighbour fake: it parses every client frame with
``protocol.messages`` (so the client's output is validated), referees a real
game with ``protocol.games``, and can drop the socket or refuse the hello.
The ``scripted`` fixture (``tests/bots/conftest.py``) starts one per script.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from bots import make_strategy_from_spec
from bots.client.runtime import BotClient, ClientConfig, ClientSummary, StrategyChooser
from protocol.games import GameState, new_game
from protocol.messages import (
    PROTOCOL_VERSION,
    ClientMessage,
    Clocks,
    Hello,
    LeaderboardEntry,
    MatchEnd,
    MatchStart,
    Message,
    Move,
    Moved,
    RatingReport,
    ServerMessage,
    TimeControl,
    Welcome,
    YourTurn,
    parse_client_message,
)

M = TypeVar("M", bound=Message)

TOKEN = "s3cret-Token-42"
TC = TimeControl(move_ms=1000, bank_ms=0)
CLOCKS = Clocks(time_left_ms=(1000, 1000), bank_ms=(0, 0))
REPO = Path(__file__).resolve().parents[2]


class Peer:
    """One bot connection as the scripted server sees it."""

    def __init__(self, ws: ServerConnection, index: int) -> None:
        self.ws = ws
        self.index = index
        self.received: list[ClientMessage] = []

    async def recv(self, timeout: float = 5.0) -> ClientMessage:
        """The next client message, parsed (a malformed one fails the test)."""
        async with asyncio.timeout(timeout):
            message = parse_client_message(await self.ws.recv())
        self.received.append(message)
        return message

    async def expect(self, kind: type[M], timeout: float = 5.0) -> M:
        """The next message, which must be a ``kind``."""
        message = await self.recv(timeout)
        assert isinstance(message, kind), f"expected {kind.type}, got {message}"
        return message

    async def send(self, message: ServerMessage) -> None:
        """Send one server message."""
        await self.ws.send(message.to_json())

    async def handshake(self) -> Hello:
        """Read the hello and welcome the bot."""
        hello = await self.expect(Hello)
        await self.send(Welcome(version=PROTOCOL_VERSION, role="bot", name=hello.name,
                                server="scripted"))
        return hello

    async def client_close_code(self, timeout: float = 10.0) -> int | None:
        """Wait for the client to close; the close code it sent."""
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(timeout):
                while True:
                    self.received.append(parse_client_message(await self.ws.recv()))
        return self.ws.close_code


Script = Callable[[Peer], Awaitable[None]]


class ScriptedServer:
    """Runs ``script(peer)`` for each connection; ``peers`` lists them in order."""

    def __init__(self, script: Script, port: int = 0) -> None:
        self.script = script
        self.port = port
        self.peers: list[Peer] = []
        self.failures: list[BaseException] = []
        self._running: list[asyncio.Event] = []

    async def __aenter__(self) -> ScriptedServer:
        self._server = await serve(self._handle, "127.0.0.1", self.port, compression=None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        """Where the client connects."""
        return f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _handle(self, ws: ServerConnection) -> None:
        peer = Peer(ws, len(self.peers))
        self.peers.append(peer)
        done = asyncio.Event()
        self._running.append(done)
        try:
            await self.script(peer)
        except ConnectionClosed:
            pass
        except BaseException as exc:  # surfaced by check(), not lost in websockets' log
            self.failures.append(exc)
            raise
        finally:
            done.set()

    async def check(self, timeout: float = 5.0) -> None:
        """Wait for every script to finish; re-raise the first failure."""
        async with asyncio.timeout(timeout):
            for done in self._running:
                await done.wait()
        if self.failures:
            raise self.failures[0]


def moved(match_id: str, ply: int, player: int, move: int, after: GameState) -> Moved:
    """The ``moved`` broadcast for ``move``."""
    return Moved(match_id=match_id, ply=ply, player=player, move=move, position=after.encode(),
                 think_ms=1, clocks=CLOCKS)


async def start_match(
    peer: Peer, match_id: str, game: str, you: int, moves: Sequence[int] = ()
) -> GameState:
    """Send ``match_start`` (with ``moves`` already played) and return the current state."""
    players = ("alice", "bob") if you == 0 else ("bob", "alice")
    start = new_game(game)
    await peer.send(
        MatchStart(match_id=match_id, game=game, players=players, you=you, time_control=TC,
                   position=start.encode(), moves=tuple(moves), ply=len(moves), clocks=CLOCKS)
    )
    return start.play_all(tuple(moves))


async def your_turn(
    peer: Peer, match_id: str, state: GameState, time_left_ms: int = 1000, bank_ms: int = 0
) -> None:
    """Ask the bot to move in ``state`` (its ply is ``state.ply``)."""
    await peer.send(YourTurn(match_id=match_id, ply=state.ply, position=state.encode(),
                             legal_moves=tuple(state.legal_moves()), time_left_ms=time_left_ms,
                             bank_ms=bank_ms))


async def referee(
    peer: Peer, match_id: str, state: GameState, you: int, *, stop_at_ply: int | None = None
) -> tuple[list[Move], GameState]:
    """Play ``state`` to the end (or ``stop_at_ply``): ``your_turn`` to the bot, whose moves
    must echo the ply and be legal; the opponent plays its first legal move. Returns the
    bot's moves and the final state."""
    answers = []
    while state.outcome() is None and state.ply != stop_at_ply:
        ply, legal = state.ply, state.legal_moves()
        if state.to_move == you:
            await your_turn(peer, match_id, state)
            move = await peer.expect(Move)
            assert (move.match_id, move.ply) == (match_id, ply)
            assert move.move in legal
            answers.append(move)
            chosen = move.move
        else:
            chosen = legal[0]
        player = state.to_move
        state = state.play(chosen)
        await peer.send(moved(match_id, ply, player, chosen, state))
    return answers, state


async def end_match(peer: Peer, match_id: str, winner: int | None, termination: str) -> None:
    """Send a rated ``match_end``, then the ``rating`` report a refit would give."""
    result = "1/2-1/2" if winner is None else ("1-0" if winner == 0 else "0-1")
    await peer.send(MatchEnd(match_id=match_id, winner=winner, result=result,
                             termination=termination, fault=None, faulty_player=None, rated=True,
                             reason="scripted"))
    rows = [LeaderboardEntry(rank=1 if seat == (winner or 0) else 2, bot=bot, rating=rating,
                             games=1, wins=int(seat == winner), draws=int(winner is None),
                             losses=int(winner is not None and seat != winner), online=True,
                             ci95=1400.0, provisional=True, rank_low=1, rank_high=2, group=0)
            for seat, (bot, rating) in enumerate((("alice", 1512.5), ("bob", 1487.5)))]
    await peer.send(RatingReport(match_id=match_id, game="tictactoe", entries=tuple(rows)))


def config(url: str, **overrides: Any) -> ClientConfig:
    """A client config for alice playing tic-tac-toe with quick retries."""
    fields: dict[str, Any] = dict(url=url, name="alice", token=TOKEN, game="tictactoe", games=1,
                                  retry_initial_s=0.05, retry_max_s=0.2, challenge_retry_s=0.05)
    fields.update(overrides)
    return ClientConfig(**fields)


async def run_client(client: BotClient, timeout: float = 15.0) -> ClientSummary:
    """``client.run()`` with a deadline."""
    async with asyncio.timeout(timeout):
        return await client.run()


def python_mcts(game: str = "tictactoe", **options: Any) -> StrategyChooser:
    """A seeded in-process MCTS (no pool start-up cost)."""
    spec = "mcts:sims=200,workers=0,engine=python,seed=3"
    for name, value in options.items():
        spec += f",{name}={value}"
    return StrategyChooser(make_strategy_from_spec(spec, game))


async def start_cli(url: str, *args: str) -> asyncio.subprocess.Process:
    """``arena-bot`` as a subprocess, the token in its environment."""
    env = {**os.environ, "ARENA_BOT_TOKEN": TOKEN, "PYTHONPATH": str(REPO)}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bots.client.cli", "--url", url, "--name", "alice",
        "--game", "tictactoe", "--retry-max", "0.2", *args,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


def _stat_fields(pid: int | str) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # the command name may contain spaces


def children(pid: int) -> set[int]:
    """Live child processes of ``pid``."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(entry)
            if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port

