"""The bot client against a scripted websocket server that speaks the protocol
(``tests/bots/scripted.py``): seeking, playing, reconnecting, refusals, challenges."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import pytest

from bots import make_strategy, make_strategy_from_spec
from bots.budget import Budget
from bots.client import route as client_route
from bots.client.config import rating_line
from bots.client.runtime import (
    Backoff,
    BotClient,
    Decision,
    RefusedError,
    StrategyChooser,
    analysis_from,
)
from bots.client.simple import FunctionChooser, play_bot
from bots.strategy import SearchInfo
from protocol.games import GameState, new_game
from protocol.messages import (
    PROTOCOL_VERSION,
    Accept,
    CancelSeek,
    Challenge,
    ChallengeDeclined,
    ChallengeReceived,
    CloseCode,
    Decline,
    Error,
    ErrorCode,
    Hello,
    Move,
    Redirect,
    Seek,
)
from tests.bots.scripted import (
    TC,
    TOKEN,
    Peer,
    ScriptedServer,
    config,
    end_match,
    free_port,
    python_mcts,
    referee,
    run_client,
    start_cli,
    start_match,
    your_turn,
)

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
    assert "rating" not in report.line("alice").replace("rated (the rating follows", "")
    # The last rated match's rating report is awaited before closing, and logged.
    [rating] = summary.ratings
    assert rating.match_id == "m1"
    assert rating_line(rating, "alice") == (
        "match m1 tictactoe: leaderboard rating 1512.5 ± 1400.0 (95%) provisional, "
        "rank 1, 1 rated games"
    )


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
            await your_turn(peer, "m1", state)
            await asyncio.sleep(0.1)
            peer.ws.transport.abort()
            release.set()
            return
        state = await start_match(peer, "m1", "tictactoe", you=0)
        await your_turn(peer, "m1", state)
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
            await your_turn(peer, "m1", state)
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
    client = BotClient(config(f"ws://127.0.0.1:{free_port()}", retry_initial_s=30.0),
                       python_mcts())
    task = asyncio.create_task(client.run())
    await asyncio.sleep(0.3)
    started = time.monotonic()
    client.stop()
    summary = await asyncio.wait_for(task, 10)
    assert time.monotonic() - started < 10.0  # not the 30 s backoff (bounded generously)
    assert summary.connections == 0 and not summary.reports


class RecordedBackoff(Backoff):
    """A ``Backoff`` without jitter that records the delays it gave."""

    def __init__(self) -> None:
        super().__init__(initial=0.01, maximum=10.0, jitter=0.0)
        self.delays: list[float] = []

    def next_delay(self) -> float:
        delay = super().next_delay()
        self.delays.append(delay)
        return delay


async def test_a_redirect_resets_the_backoff(scripted: Any) -> None:
    # The node redirects to a node that is dead (as a node whose lease has not run out
    # yet): each redirect is an answer from a live server, so the wait after the failed
    # attempt starts from the initial delay again, rather than growing to its cap.
    dead = f"ws://127.0.0.1:{free_port()}"

    async def script(peer: Peer) -> None:
        await peer.expect(Hello)
        await peer.send(Redirect(url=dead, match_id=None, reason="scripted"))
        await peer.client_close_code()

    server = await scripted(script)
    backoff = RecordedBackoff()
    client = BotClient(config(server.url), python_mcts(), backoff=backoff)
    task = asyncio.create_task(client.run())
    async with asyncio.timeout(15):
        while len(server.peers) < 6:
            await asyncio.sleep(0.01)
    client.stop()
    await asyncio.wait_for(task, 10)
    assert len(backoff.delays) >= 5
    assert set(backoff.delays) == {0.01}, backoff.delays


async def test_a_bot_that_failed_over_goes_back_to_its_first_url_once_it_answers(
    scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_route, "HOME_PROBE_S", 0.05)
    home_port = free_port()  # the bot's first node: down when it starts
    home_up = asyncio.Event()

    async def fallback(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        await home_up.wait()  # the home node restarted while the bot played here
        await asyncio.sleep(0.3)  # a few probes' time
        state = await start_match(peer, "m1", "tictactoe", you=0)
        await referee(peer, "m1", state, you=0)
        await end_match(peer, "m1", 0, "line")
        await peer.client_close_code()

    async def home(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)  # it seeks here now
        await peer.client_close_code()

    other = await scripted(fallback)
    client = BotClient(
        config(f"ws://127.0.0.1:{home_port}", fallback_urls=(other.url,), games=2),
        python_mcts(),
    )
    task = asyncio.create_task(client.run())
    async with asyncio.timeout(10):
        while not other.peers:
            await asyncio.sleep(0.01)
    async with ScriptedServer(home, port=home_port) as restarted:
        home_up.set()
        async with asyncio.timeout(10):
            while not any(isinstance(m, Seek) for p in restarted.peers for m in p.received):
                await asyncio.sleep(0.01)
        client.stop()
        await asyncio.wait_for(task, 10)
    assert [r.match_id for r in client.summary.reports] == ["m1"]


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
        await your_turn(peer, "m1", state, 5000)
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

    start = new_game("connect4")
    assert await FunctionChooser(think).choose(start, Budget.UNLIMITED) == Decision(1)
    with pytest.raises(TypeError):
        await FunctionChooser(lambda state: "3").choose(start, Budget.UNLIMITED)  # type: ignore[arg-type, return-value]


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




def test_a_node_counting_search_is_reported_as_nodes() -> None:
    with make_strategy("alphabeta", game="connect4", time_ms=30) as bot:
        bot.choose_move(new_game("connect4"))
        analysis = analysis_from(bot.last_search)
    assert analysis is not None and analysis.nodes is not None and analysis.nodes > 0
    assert analysis.simulations is None and analysis.sims_per_s is None
    assert analysis.nodes_per_s is not None and analysis.depth is not None
