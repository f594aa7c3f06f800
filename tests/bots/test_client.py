"""The bot client against a scripted websocket server that speaks the protocol.

The scripted server is a neighbour fake: it parses every client frame with
``protocol.messages`` (so the client's output is validated), referees a real
game with ``protocol.games``, and can drop the socket or refuse the hello.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from bots import make_strategy_from_spec
from bots.budget import Budget
from bots.client import (
    Backoff,
    BotClient,
    ClientConfig,
    ClientSummary,
    Decision,
    RefusedError,
    StrategyChooser,
    analysis_from,
)
from bots.simple import FunctionChooser, play_bot
from bots.strategy import SearchInfo
from protocol.games import GameState, new_game
from protocol.messages import (
    PROTOCOL_VERSION,
    Accept,
    CancelSeek,
    Challenge,
    ChallengeDeclined,
    ChallengeReceived,
    ClientMessage,
    Clocks,
    CloseCode,
    Decline,
    Error,
    ErrorCode,
    Hello,
    MatchEnd,
    MatchStart,
    Message,
    Move,
    Moved,
    RatingChange,
    Seek,
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


# The scripted server ------------------------------------------------------------------


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

    def __init__(self, script: Script) -> None:
        self.script = script
        self.peers: list[Peer] = []
        self.failures: list[BaseException] = []
        self._running: list[asyncio.Event] = []

    async def __aenter__(self) -> ScriptedServer:
        self._server = await serve(self._handle, "127.0.0.1", 0, compression=None)
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


@pytest.fixture
async def scripted() -> AsyncIterator[Callable[[Script], Awaitable[ScriptedServer]]]:
    """``server = await scripted(script)``: a scripted server, closed after the test."""
    servers: list[ScriptedServer] = []

    async def start(script: Script) -> ScriptedServer:
        server = await ScriptedServer(script).__aenter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.__aexit__()


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
            await peer.send(YourTurn(match_id=match_id, ply=ply, position=state.encode(),
                                     legal_moves=tuple(legal), time_left_ms=1000, bank_ms=0))
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
    """Send a rated ``match_end``."""
    result = "1/2-1/2" if winner is None else ("1-0" if winner == 0 else "0-1")
    changes = (RatingChange(bot="alice", before=1500.0, after=1512.5),
               RatingChange(bot="bob", before=1500.0, after=1487.5))
    await peer.send(MatchEnd(match_id=match_id, winner=winner, result=result,
                             termination=termination, fault=None, faulty_player=None, rated=True,
                             rating_changes=changes, reason="scripted"))


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


# Playing -----------------------------------------------------------------------------


async def test_hello_seek_moves_with_ply_and_analysis_then_clean_exit(scripted: Any) -> None:
    seen: dict[str, Any] = {}

    async def script(peer: Peer) -> None:
        seen["hello"] = await peer.handshake()
        seen["seek"] = await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=0)
        seen["moves"], _ = await referee(peer, "m1", state, you=0)
        await end_match(peer, "m1", 0, "line")
        seen["close"] = await peer.client_close_code()

    server = await scripted(script)
    chooser = python_mcts()
    summary = await run_client(BotClient(config(server.url, max_matches=1), chooser))
    await server.check()

    hello = seen["hello"]
    assert (hello.role, hello.version, hello.name, hello.token, hello.max_matches) == (
        "bot", PROTOCOL_VERSION, "alice", TOKEN, 1)
    assert (seen["seek"].game, seen["seek"].time_control) == ("tictactoe", TC)
    moves: list[Move] = seen["moves"]
    assert [m.ply for m in moves] == list(range(0, 2 * len(moves), 2))
    for move in moves:
        assert move.analysis is not None
        assert move.analysis.simulations == 200
        assert move.analysis.sims_per_s is not None and move.analysis.sims_per_s > 0
        visits = [stat.visits for stat in move.analysis.moves]
        assert visits == sorted(visits, reverse=True) and 0 < sum(visits) <= 200
        assert move.move == move.analysis.moves[0].move  # the most visited move is played
    assert seen["close"] == CloseCode.NORMAL
    assert summary.connections == 1 and summary.fallback_moves == 0
    [report] = summary.reports
    assert (report.match_id, report.opponent, report.you, report.outcome) == (
        "m1", "bob", 0, "win")
    assert "rating 1500.0 -> 1512.5" in report.line("alice")


@pytest.mark.parametrize(
    ("spec", "analysis"),
    [("mcts:sims=50,workers=0,engine=python,seed=1", False), ("random:seed=1", True)],
)
async def test_no_analysis_when_disabled_or_strategy_does_not_search(
    scripted: Any, spec: str, analysis: bool
) -> None:
    answers: list[Move] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=1)
        answers.extend((await referee(peer, "m1", state, you=1))[0])
        await end_match(peer, "m1", None, "draw")
        await peer.client_close_code()

    server = await scripted(script)
    chooser = StrategyChooser(make_strategy_from_spec(spec, "tictactoe"), analysis=analysis)
    summary = await run_client(BotClient(config(server.url), chooser))
    await server.check()
    assert answers and all(m.analysis is None for m in answers)
    assert [m.ply for m in answers] == list(range(1, 2 * len(answers) + 1, 2))
    assert summary.reports[0].outcome == "draw"


async def test_seeks_again_after_each_match_until_games_reached(scripted: Any) -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        for number in (1, 2, 3):
            await peer.expect(Seek)
            state = await start_match(peer, f"m{number}", "tictactoe", you=number % 2)
            await referee(peer, f"m{number}", state, you=number % 2)
            await end_match(peer, f"m{number}", 1, "line")
        await peer.client_close_code()

    server = await scripted(script)
    summary = await run_client(BotClient(config(server.url, games=3), python_mcts()))
    await server.check()
    [peer] = server.peers
    assert sum(isinstance(m, Seek) for m in peer.received) == 3
    assert [r.outcome for r in summary.reports] == ["win", "loss", "win"]


async def test_reconnects_after_a_dropped_socket_and_resumes_the_match(scripted: Any) -> None:
    played: list[int] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        if peer.index == 0:
            await peer.expect(Seek)
            state = await start_match(peer, "m7", "tictactoe", you=0)
            _, state = await referee(peer, "m7", state, you=0, stop_at_ply=2)
            played.extend(state.moves)
            peer.ws.transport.abort()  # no close frame: a real network drop
            return
        # Like the arena: match_start again with the moves so far, then your_turn.
        state = await start_match(peer, "m7", "tictactoe", you=0, moves=played)
        answers, _ = await referee(peer, "m7", state, you=0)
        assert answers[0].ply == 2
        await end_match(peer, "m7", 0, "line")
        await peer.client_close_code()

    server = await scripted(script)
    summary = await run_client(BotClient(config(server.url), python_mcts()))
    await server.check()
    assert summary.connections == 2 and len(played) == 2
    second = server.peers[1].received
    assert [type(m) for m in second[:2]] == [Hello, Move]
    assert not any(isinstance(m, Seek) for m in second), "no seek while resuming"
    assert summary.reports[0].outcome == "win"


async def test_a_move_finished_while_disconnected_is_sent_when_asked_again(
    scripted: Any,
) -> None:
    release = asyncio.Event()

    class Gated:
        """Thinks until released, so the socket can drop mid-thought."""

        calls = 0

        async def choose(self, state: GameState, budget: Budget) -> Decision:
            self.calls += 1
            await release.wait()
            return Decision(state.legal_moves()[-1])

    gated = Gated()

    async def script(peer: Peer) -> None:
        await peer.handshake()
        if peer.index == 0:
            await peer.expect(Seek)
            state = await start_match(peer, "m1", "tictactoe", you=0)
            await peer.send(YourTurn(match_id="m1", ply=0, position=state.encode(),
                                     legal_moves=tuple(state.legal_moves()), time_left_ms=1000,
                                     bank_ms=0))
            await asyncio.sleep(0.1)
            peer.ws.transport.abort()
            release.set()
            return
        state = await start_match(peer, "m1", "tictactoe", you=0)
        await peer.send(YourTurn(match_id="m1", ply=0, position=state.encode(),
                                 legal_moves=tuple(state.legal_moves()), time_left_ms=1000,
                                 bank_ms=0))
        move = await peer.expect(Move)
        assert (move.ply, move.move) == (0, 8)
        await end_match(peer, "m1", None, "draw")
        await peer.client_close_code()

    server = await scripted(script)
    summary = await run_client(BotClient(config(server.url), gated))
    await server.check()
    assert gated.calls == 1, "the finished search is reused, not repeated"
    assert summary.connections == 2


async def test_trusts_the_server_position_and_replaces_an_illegal_choice(scripted: Any) -> None:
    seen: list[GameState] = []
    answers: list[Move] = []

    class Recorder:
        """Records what it is asked; answers an illegal move the second time."""

        async def choose(self, state: GameState, budget: Budget) -> Decision:
            seen.append(state)
            return Decision(99 if len(seen) == 2 else state.legal_moves()[0])

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=1)
        for opponent_move in (4, 8):  # never announced by moved: your_turn's position rules
            state = state.play(opponent_move)
            await peer.send(YourTurn(match_id="m1", ply=state.ply, position=state.encode(),
                                     legal_moves=tuple(state.legal_moves()), time_left_ms=1000,
                                     bank_ms=0))
            answers.append(await peer.expect(Move))
            state = state.play(answers[-1].move)
        await end_match(peer, "m1", None, "draw")
        await peer.client_close_code()

    server = await scripted(script)
    summary = await run_client(BotClient(config(server.url), Recorder()))
    await server.check()
    assert seen[0].encode() == new_game("tictactoe").play(4).encode()
    assert 4 not in seen[0].legal_moves()
    assert [(m.ply, m.move) for m in answers] == [(1, 0), (3, seen[1].legal_moves()[0])]
    assert summary.fallback_moves == 1


# Refusals and stopping -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "close_code"),
    [(ErrorCode.AUTH_FAILED, CloseCode.POLICY_VIOLATION),
     (ErrorCode.UNSUPPORTED_VERSION, CloseCode.UNSUPPORTED_VERSION)],
)
async def test_refusal_raises_without_retrying(scripted: Any, code: str, close_code: int) -> None:
    async def script(peer: Peer) -> None:
        await peer.expect(Hello)
        await peer.send(Error(code=code, message="no"))
        await peer.ws.close(close_code, "refused")

    server = await scripted(script)
    client = BotClient(config(server.url), python_mcts())
    with pytest.raises(RefusedError) as raised:
        await run_client(client)
    assert raised.value.code == code
    await asyncio.sleep(0.3)  # several retry delays: no second attempt may come
    assert len(server.peers) == 1


async def test_cli_exits_nonzero_on_auth_failure_without_echoing_the_token(
    scripted: Any,
) -> None:
    async def script(peer: Peer) -> None:
        await peer.expect(Hello)
        await peer.send(Error(code=ErrorCode.AUTH_FAILED, message="unknown bot or wrong token"))
        await peer.ws.close(CloseCode.POLICY_VIOLATION, "auth failed")

    server = await scripted(script)
    proc = await start_cli(server.url, "--strategy", "random", "--verbose")
    async with asyncio.timeout(30):
        _, stderr = await proc.communicate()
    text = stderr.decode()
    assert proc.returncode == 3, text
    assert "auth_failed" in text and "ARENA_BOT_TOKEN" in text
    assert TOKEN not in text
    assert len(server.peers) == 1


async def test_stop_interrupts_the_reconnect_wait() -> None:
    # Nothing listens on this port: every attempt fails and the client backs off.
    client = BotClient(config(f"ws://127.0.0.1:{_free_port()}", retry_initial_s=30.0),
                       python_mcts())
    task = asyncio.create_task(client.run())
    await asyncio.sleep(0.3)
    started = time.monotonic()
    client.stop()
    summary = await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 1.0
    assert summary.connections == 0 and not summary.reports


# Challenges ---------------------------------------------------------------------------------


async def test_accepts_challenges_for_its_game_and_declines_others(scripted: Any) -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        await peer.send(ChallengeReceived(challenge_id="c1", challenger="carol", game="connect4",
                                          time_control=TC))
        assert (await peer.expect(Decline)).challenge_id == "c1"
        await peer.send(ChallengeReceived(challenge_id="c2", challenger="bob", game="tictactoe",
                                          time_control=TC))
        # Taking its only seat, the bot withdraws its seek before accepting.
        assert (await peer.expect(CancelSeek)).game == "tictactoe"
        assert (await peer.expect(Accept)).challenge_id == "c2"
        state = await start_match(peer, "m1", "tictactoe", you=1)
        await referee(peer, "m1", state, you=1)
        await end_match(peer, "m1", 0, "line")
        await peer.client_close_code()

    server = await scripted(script)
    summary = await run_client(BotClient(config(server.url), python_mcts()))
    await server.check()
    assert summary.reports[0].outcome == "loss"


async def test_challenge_mode_challenges_and_retries_after_a_decline(scripted: Any) -> None:
    challenges: list[Challenge] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        challenges.append(await peer.expect(Challenge))
        await peer.send(ChallengeDeclined(challenge_id="c1", by="bob"))
        challenges.append(await peer.expect(Challenge))
        await peer.send(Error(code=ErrorCode.NO_SUCH_BOT, message="bob is not online",
                              ref=challenges[-1].id))
        challenges.append(await peer.expect(Challenge))
        state = await start_match(peer, "m1", "tictactoe", you=0)
        await referee(peer, "m1", state, you=0)
        await end_match(peer, "m1", 0, "line")
        await peer.client_close_code()

    server = await scripted(script)
    summary = await run_client(BotClient(config(server.url, challenge="bob"), python_mcts()))
    await server.check()
    assert [(c.opponent, c.game, c.time_control) for c in challenges] == [
        ("bob", "tictactoe", TC)] * 3
    assert not any(isinstance(m, Seek) for m in server.peers[0].received)
    assert summary.reports[0].outcome == "win"


# Responsiveness and clean shutdown ------------------------------------------------------


async def test_event_loop_stays_responsive_while_a_pooled_search_thinks(scripted: Any) -> None:
    think_s = 1.2
    measured: dict[str, float] = {}

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "connect4", you=0)
        await peer.send(YourTurn(match_id="m1", ply=0, position=state.encode(),
                                 legal_moves=tuple(state.legal_moves()), time_left_ms=5000,
                                 bank_ms=0))
        sent = time.monotonic()
        await asyncio.sleep(0.3)
        pong = await peer.ws.ping()
        async with asyncio.timeout(0.5):  # answered while the search runs
            measured["ping_s"] = await pong
        move = await peer.expect(Move)
        measured["think_s"] = time.monotonic() - sent
        assert move.analysis is not None and move.analysis.simulations is not None
        measured["simulations"] = move.analysis.simulations
        await end_match(peer, "m1", None, "draw")
        await peer.client_close_code()

    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    server = await scripted(script)
    strategy = make_strategy_from_spec(
        f"mcts:workers=1,engine=python,time_ms={think_s * 1000:.0f},seed=5", "connect4"
    )
    try:
        tick = asyncio.create_task(ticker())
        await run_client(BotClient(config(server.url, game="connect4"),
                                   StrategyChooser(strategy)))
        tick.cancel()
    finally:
        strategy.close()
    await server.check()
    assert measured["think_s"] >= think_s * 0.9, "the search really took its time"
    assert measured["simulations"] > 100
    assert measured["ping_s"] < 0.5
    assert max(gaps) < 0.25, f"event loop stalled for {max(gaps):.3f} s"


async def test_sigterm_closes_the_socket_and_leaves_no_child_process(scripted: Any) -> None:
    thinking = asyncio.Event()
    close_codes: list[int | None] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "connect4", you=0)
        await peer.send(YourTurn(match_id="m1", ply=0, position=state.encode(),
                                 legal_moves=tuple(state.legal_moves()), time_left_ms=60_000,
                                 bank_ms=0))
        thinking.set()
        close_codes.append(await peer.client_close_code(timeout=30))

    server = await scripted(script)
    proc = await start_cli(
        server.url, "--game", "connect4", "--strategy", "mcts:workers=2,engine=python,ms=60000"
    )
    try:
        async with asyncio.timeout(30):
            await thinking.wait()
        await asyncio.sleep(0.5)  # the workers are now searching
        children = _children(proc.pid)
        assert len(children) >= 2, children
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(20):
            _, stderr = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, stderr.decode()
    assert time.monotonic() - started < 10
    assert close_codes == [CloseCode.NORMAL]
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not [pid for pid in children if _alive(pid)], "worker processes outlived the bot"


# The simple API ------------------------------------------------------------------------------


async def test_play_bot_runs_a_plain_function_and_falls_back_on_its_errors(
    scripted: Any,
) -> None:
    answers: list[Move] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=0)
        answers.extend((await referee(peer, "m1", state, you=0))[0])
        await end_match(peer, "m1", None, "draw")
        await peer.client_close_code()

    def last_legal_but_buggy(state: GameState) -> int:
        if state.ply == 2:  # the client keeps the history, so this is the bot's second move
            raise RuntimeError("bug")
        return state.legal_moves()[-1]

    server = await scripted(script)
    async with asyncio.timeout(15):
        summary = await play_bot(last_legal_but_buggy, url=server.url, name="alice",
                                 token=TOKEN, game="tictactoe", games=1)
    await server.check()
    assert answers[0].move == 8
    assert answers[1].ply == 2 and answers[1].move == 1  # the first legal move after 8, 0
    assert summary.fallback_moves == 1
    assert summary.reports[0].outcome == "draw"


async def test_function_chooser_accepts_async_functions_and_decisions() -> None:
    async def think(state: GameState) -> Decision:
        return Decision(state.legal_moves()[1])

    assert await FunctionChooser(think).choose(new_game("connect4"), Budget.UNLIMITED) == Decision(1)
    with pytest.raises(TypeError):
        await FunctionChooser(lambda state: "3").choose(new_game("connect4"), Budget.UNLIMITED)  # type: ignore[arg-type, return-value]


# Pieces ----------------------------------------------------------------------------------------


def test_backoff_grows_to_its_cap_with_bounded_jitter_and_resets() -> None:
    import random

    backoff = Backoff(initial=0.5, maximum=10.0, factor=2.0, jitter=0.5, rng=random.Random(1))
    bases = [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]
    delays = [backoff.next_delay() for _ in bases]
    for delay, base in zip(delays, bases, strict=True):
        assert base * 0.5 <= delay <= base
    assert len(set(delays)) == len(delays), "jittered"
    backoff.reset()
    assert 0.25 <= backoff.next_delay() <= 0.5


def test_analysis_from_search_info() -> None:
    assert analysis_from(None) is None
    assert analysis_from(SearchInfo(simulations=0, elapsed_s=0.0)) is None
    info = SearchInfo(simulations=90, elapsed_s=0.5, value=0.123456,
                      moves=tuple((m, m, math.nan if m == 3 else 0.5) for m in range(90)))
    analysis = analysis_from(info)
    assert analysis is not None
    assert (analysis.simulations, analysis.sims_per_s, analysis.value) == (90, 180.0, 0.1235)
    assert len(analysis.moves) == 81 and analysis.moves[0].move == 89
    assert all(stat.value is None for stat in analysis.moves if stat.move == 3)
    Move(match_id="m", ply=0, move=89, analysis=analysis).to_json()  # fits the wire


# Helpers ------------------------------------------------------------------------------------


async def start_cli(url: str, *args: str) -> asyncio.subprocess.Process:
    """``arena-bot`` as a subprocess, the token in its environment."""
    env = {**os.environ, "ARENA_BOT_TOKEN": TOKEN, "PYTHONPATH": str(REPO)}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bots.client_cli", "--url", url, "--name", "alice",
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


def _children(pid: int) -> set[int]:
    """Live child processes of ``pid``."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(entry)
            if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port

