"""The client's clock: each move's ``Budget`` comes from ``your_turn`` and the measured round
trip, and bots whose own budget is ten times the match's move time never lose on time."""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from bots import make_strategy_from_spec
from bots.budget import Budget, think_ms
from bots.client.runtime import BotClient, Decision, StrategyChooser
from protocol.games import GameState
from protocol.messages import Move, Seek
from tests.bots.arena_process import ArenaProcess, start_bot, stop_processes
from tests.bots.scripted import Peer, config, end_match, run_client, start_match, your_turn
from tests.relay import TcpRelay

MOVE_MS = 1000
"""The match's time a move in the end-to-end test: generous, so a busy machine is no loss."""


class Recorder:
    """Answers the first legal move; records each budget and when it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[float, Budget]] = []

    async def choose(self, state: GameState, budget: Budget) -> Decision:
        self.asked.append((time.monotonic(), budget))
        return Decision(state.legal_moves()[0])


async def test_each_move_gets_its_budget_from_your_turn_and_the_round_trip(
    scripted: Any,
) -> None:
    delay_s = 0.05  # the relay holds back what the bot sends: its pongs come back late
    turns = [(900, 0), (5400, 5000)]

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=0)
        await asyncio.sleep(3 * delay_s)  # the client's first ping has come back
        for time_left, bank in turns:
            await your_turn(peer, "m1", state, time_left, bank)
            move = await peer.expect(Move)
            state = state.play(move.move).play(state.play(move.move).legal_moves()[0])
        await end_match(peer, "m1", None, "draw")
        await peer.client_close_code()

    server = await scripted(script)
    port = int(server.url.rsplit(":", 1)[1])
    relay = TcpRelay(port, uplink_delay_s=delay_s)
    recorder = Recorder()
    try:
        relay_port = await relay.start()
        await run_client(BotClient(config(f"ws://127.0.0.1:{relay_port}"), recorder))
    finally:
        await relay.close()
    await server.check()
    assert len(recorder.asked) == 2
    for (asked_at, budget), (time_left, bank) in zip(recorder.asked, turns, strict=True):
        assert (budget.time_left_ms, budget.bank_ms) == (time_left, bank)
        assert budget.rtt_ms >= delay_s * 1000
        planned = think_ms(time_left, bank, budget.rtt_ms, budget.rtt_ms) / 1000
        remaining = budget.remaining_s(asked_at)
        assert remaining is not None and planned - 0.05 < remaining <= planned


async def test_a_search_that_does_not_answer_in_time_is_replaced_before_the_time_runs_out(
    scripted: Any,
) -> None:
    class Stalled:
        """Never answers: a search whose machine stalled."""

        async def choose(self, state: GameState, budget: Budget) -> Decision:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    took: list[float] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        state = await start_match(peer, "m1", "tictactoe", you=0)
        sent = time.monotonic()
        await your_turn(peer, "m1", state, 300)
        move = await peer.expect(Move)
        took.append(time.monotonic() - sent)
        assert move.move == 0
        await end_match(peer, "m1", None, "draw")
        await peer.client_close_code()

    server = await scripted(script)
    summary = await run_client(BotClient(config(server.url), Stalled()))  # type: ignore[arg-type]
    await server.check()
    assert summary.fallback_moves == 1
    # At the last moment (280 ms), not before; the upper bound is generous (a busy machine):
    # when the fallback is due is Budget's arithmetic, tested without a clock in test_budget.
    assert 0.25 < took[0] < 3.0


async def test_a_move_waiting_for_the_other_matchs_search_keeps_its_own_deadline(
    scripted: Any,
) -> None:
    answered: dict[str, float] = {}

    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        states = [await start_match(peer, "m1", "connect4", you=0)]
        await peer.expect(Seek)  # a second seat is free
        states.append(await start_match(peer, "m2", "connect4", you=0))
        sent = time.monotonic()
        for match_id, state in zip(("m1", "m2"), states, strict=True):
            await your_turn(peer, match_id, state, 600)
        for _ in range(2):
            move = await peer.expect(Move)
            answered[move.match_id] = time.monotonic() - sent
        for match_id in ("m1", "m2"):
            await end_match(peer, match_id, None, "draw")
        await peer.client_close_code()

    server = await scripted(script)
    # One worker: m2's search starts only when m1's is over, whatever its own time_ms says.
    with make_strategy_from_spec("mcts:time_ms=2000,workers=1,seed=1", "connect4") as strategy:
        client = BotClient(config(server.url, game="connect4", games=2, max_matches=2),
                           StrategyChooser(strategy))
        await run_client(client)
    await server.check()
    assert client.summary.fallback_moves == 0
    # Both by their own deadline, not after m1's full 2 s search: bounded below 2 s, generously.
    assert max(answered.values()) < 1.9, answered


async def test_a_budget_larger_than_the_time_control_is_warned_about_once(
    scripted: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.expect(Seek)
        for match_id in ("m1", "m2"):
            await start_match(peer, match_id, "tictactoe", you=0)
            await end_match(peer, match_id, None, "draw")
            await peer.expect(Seek)
        await peer.ws.close()

    server = await scripted(script)
    caplog.set_level(logging.WARNING, logger="bots.client")
    with make_strategy_from_spec("mcts:time_ms=2000,workers=0", "tictactoe") as strategy:
        client = BotClient(config(server.url, games=2), StrategyChooser(strategy))
        await run_client(client)
    await server.check()
    warnings = [r.getMessage() for r in caplog.records if "takes 2000 ms a move" in r.getMessage()]
    assert len(warnings) == 1, caplog.text
    assert "gives 1000 ms (bank 0 ms)" in warnings[0] and "about 870 ms" in warnings[0]


async def test_bots_set_for_10_s_a_move_never_lose_on_time_in_a_1_s_match(
    tmp_path: Path,
) -> None:
    # One match keeps the machine's load to one search (queued searches are tested above):
    # what is tested is the bots' time management, not a saturated CPU. A 1 s move leaves a
    # busy machine room; the bots' own budgets are ten times that.
    play = ("--game", "connect4", "--move-ms", str(MOVE_MS), "--games", "1")
    specs = {"alice": f"mcts:time_ms={10 * MOVE_MS},workers=1,seed=1",
             "bob": "mcts-heavy:sims=100000000,workers=1,seed=2"}
    async with ArenaProcess(tmp_path, tuple(specs), "--move-ms", str(MOVE_MS)) as arena:
        bots = [await start_bot(arena.url, name, arena.tokens[name], *play, "--strategy", spec)
                for name, spec in specs.items()]
        try:
            async with asyncio.timeout(600):
                outputs = await asyncio.gather(*(bot.communicate() for bot in bots))
            logs = [stderr.decode() for _, stderr in outputs]
            matches = await arena.matches("finished") + await arena.matches("aborted")
        finally:
            await stop_processes(*bots)
    for bot, log in zip(bots, logs, strict=True):
        assert bot.returncode == 0, log
    assert f"takes {10 * MOVE_MS} ms a move but the match gives {MOVE_MS} ms" in logs[0]
    # A timeout on a bot's first move aborts the match; on any later one, it loses it.
    ended = [(m["termination"], m["reason"]) for m in matches]
    assert len(ended) == 1 and all(how in ("line", "draw") for how, _ in ended), (ended, logs)
    finished = matches
    think = [move["think_ms"] for match in finished for move in match["moves"]]
    assert max(think) < MOVE_MS
    # The bots used their time: the opening moves (before any proof) search to the deadline.
    opening = [move["think_ms"] for match in finished for move in match["moves"][:8]]
    assert statistics.median(opening) > MOVE_MS / 2, opening
