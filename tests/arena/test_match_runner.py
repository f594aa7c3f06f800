"""The match runner on its own: a manual clock (no sleeping), in-memory links and recorder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from arena.clock import GameClock, ManualClock
from arena.match import MatchRunner
from arena.store import RatingChange
from protocol.errors import ProtocolError
from protocol.messages import (
    Analysis,
    Error,
    MatchEnd,
    MatchStart,
    Moved,
    ServerMessage,
    TimeControl,
    YourTurn,
)


@dataclass
class FakeLink:
    """Records what the runner sends to one bot."""

    rtt_ms: float = 0.0
    inbox: list[ServerMessage] = field(default_factory=list)

    def send(self, message: ServerMessage) -> None:
        self.inbox.append(message)

    def of(self, kind: type) -> list:
        return [m for m in self.inbox if isinstance(m, kind)]


@dataclass
class Recorder:
    """Stands in for the store: remembers moves and results, refuses a second result."""

    moves: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    finishes: list[tuple[int | None, str, str | None, bool]] = field(default_factory=list)
    fail: bool = False
    behind: bool = False
    """Like a store whose buffer is full: moves must be awaited, not queued on the spot."""

    async def record_move(
        self, match_id: str, ply: int, player: int, move: int, think_ms: int, rtt_ms: int
    ) -> None:
        self.moves.append((ply, player, move, think_ms, rtt_ms))

    def record_move_now(
        self, match_id: str, ply: int, player: int, move: int, think_ms: int, rtt_ms: int
    ) -> bool:
        if self.behind:
            return False
        self.moves.append((ply, player, move, think_ms, rtt_ms))
        return True

    async def finish_match(
        self,
        match_id: str,
        winner: int | None,
        termination: str,
        fault: str | None,
        rated: bool,
        reason: str = "",
    ) -> list[RatingChange]:
        if self.fail:
            raise RuntimeError("database is down")
        assert not self.finishes, "finished twice"
        self.finishes.append((winner, termination, fault, rated))
        return (
            [RatingChange("a", 1500.0, 1516.0), RatingChange("b", 1500.0, 1484.0)] if rated else []
        )


async def settle() -> None:
    """Let the runner task process everything queued (no time passes on the manual clock)."""
    for _ in range(20):
        await asyncio.sleep(0)


@dataclass
class Harness:
    runner: MatchRunner
    clock: ManualClock
    links: tuple[FakeLink, FakeLink]
    recorder: Recorder
    task: asyncio.Task[MatchEnd]

    async def play(self, seat: int, move: object, think_s: float = 0.1) -> None:
        self.clock.advance(think_s)
        self.runner.submit_move("ab"[seat], self.runner.state.ply, move)
        await settle()

    async def end(self) -> MatchEnd:
        return await asyncio.wait_for(self.task, 1)


@pytest.fixture
async def make_runner() -> AsyncIterator:
    tasks: list[asyncio.Task[MatchEnd]] = []

    async def factory(
        game: str = "tictactoe",
        move_ms: int = 1000,
        bank_ms: int = 0,
        grace_s: float = 5.0,
        rtt_ms: float = 0.0,
        recorder: Recorder | None = None,
    ) -> Harness:
        clock = ManualClock()
        links = (FakeLink(rtt_ms), FakeLink(rtt_ms))
        recorder = recorder or Recorder()
        runner = MatchRunner(
            "m1",
            game,
            ("a", "b"),
            TimeControl(move_ms, bank_ms),
            links,
            recorder=recorder,
            clock=clock,
            grace_s=grace_s,
        )
        task = asyncio.create_task(runner.run())
        tasks.append(task)
        await settle()
        return Harness(runner, clock, links, recorder, task)

    yield factory
    for task in tasks:
        task.cancel()


async def test_a_game_by_the_rules_ends_once_with_the_line(make_runner) -> None:
    h = await make_runner()
    assert [type(m) for m in h.links[0].inbox] == [MatchStart, YourTurn]
    assert [type(m) for m in h.links[1].inbox] == [MatchStart]
    for seat, move in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        await h.play(seat, move)
    end = await h.end()
    assert (end.winner, end.termination, end.fault, end.rated) == (0, "line", None, True)
    assert h.recorder.finishes == [(0, "line", None, True)]
    assert [m[:3] for m in h.recorder.moves] == [
        (0, 0, 0),
        (1, 1, 3),
        (2, 0, 1),
        (3, 1, 4),
        (4, 0, 2),
    ]
    assert all(m[3] == 100 for m in h.recorder.moves)  # think time measured on the clock
    assert len(end.rating_changes) == 2
    # Both bots see every move and the end; only the mover gets your_turn.
    assert len(h.links[1].of(Moved)) == 5 and h.links[1].of(MatchEnd) == [end]
    assert [t.ply for t in h.links[1].of(YourTurn)] == [1, 3]


async def test_an_ordinary_move_is_refereed_on_the_spot(make_runner) -> None:
    h = await make_runner(game="connect4")
    h.clock.advance(0.25)
    assert h.runner.submit_move("a", 0, 3)
    # No task switch: by the time submit_move returns, the move is applied and announced.
    assert h.runner.state.moves == (3,)
    assert [m.move for m in h.links[1].of(Moved)] == [3]
    assert h.links[1].inbox[-1] == YourTurn(
        match_id="m1",
        ply=1,
        position=h.runner.state.encode(),
        legal_moves=(0, 1, 2, 3, 4, 5, 6),
        time_left_ms=1000,
        bank_ms=0,
    )
    assert h.recorder.moves == [(0, 0, 3, 250, 0)]


async def test_a_wakeup_left_from_an_earlier_turn_flags_nobody(make_runner) -> None:
    h = await make_runner(move_ms=1000)
    await h.play(0, 4, think_s=0.5)  # on the spot: the runner still waits for turn 0's deadline
    h.clock.advance(0.6)  # turn 0's deadline passes; turn 1 has 0.4 s left
    await settle()
    assert not h.task.done()
    assert h.runner.state.ply == 1
    await h.play(1, 0, think_s=0.3)
    assert h.recorder.moves[1][3] == 900
    h.clock.advance(1.001)
    end = await h.end()
    assert (end.termination, end.faulty_player) == ("timeout", 0)


async def test_a_store_that_is_behind_gets_the_move_through_the_runner_task(make_runner) -> None:
    h = await make_runner(recorder=Recorder(behind=True))
    h.clock.advance(0.1)
    h.runner.submit_move("a", 0, 4)
    assert h.runner.state.ply == 0  # queued, not applied on the spot
    await settle()
    assert h.runner.state.moves == (4,)
    assert h.recorder.moves == [(0, 0, 4, 100, 0)]
    assert [m.ply for m in h.links[1].of(YourTurn)] == [1]


async def test_no_move_in_time_loses_on_time(make_runner) -> None:
    h = await make_runner(move_ms=1000)
    await h.play(0, 4)
    await h.play(1, 0)
    h.clock.advance(0.999)
    await settle()
    assert not h.task.done()
    h.clock.advance(0.002)
    end = await h.end()
    assert (end.winner, end.termination, end.fault, end.faulty_player) == (1, "timeout", "bot", 0)
    assert end.rated


@pytest.mark.parametrize("missing_seat", [0, 1])
async def test_a_missing_first_move_aborts_unrated(make_runner, missing_seat: int) -> None:
    h = await make_runner()
    if missing_seat == 1:
        await h.play(0, 4)
    h.clock.advance(1.1)
    end = await h.end()
    assert (end.winner, end.result, end.termination) == (None, "*", "aborted")
    assert (end.fault, end.faulty_player, end.rated) == (None, None, False)
    assert f"{'ab'[missing_seat]} ran out of time before its first move" in end.reason
    assert end.rating_changes == ()


async def test_overage_comes_out_of_the_bank_and_flags_when_empty(make_runner) -> None:
    h = await make_runner(move_ms=100, bank_ms=500)
    await h.play(0, 4, think_s=0.4)  # 300 ms over: bank 500 -> 200
    assert h.runner.clocks().bank_ms == (200, 500)
    assert h.links[1].of(Moved)[-1].clocks.time_left_ms == (300, 600)
    await h.play(1, 0, think_s=0.05)
    assert h.links[0].of(YourTurn)[-1].time_left_ms == 300
    h.clock.advance(0.299)
    await settle()
    assert not h.task.done()
    h.clock.advance(0.002)
    end = await h.end()
    assert (end.termination, end.faulty_player) == ("timeout", 0)


async def test_the_round_trip_is_credited_but_capped() -> None:
    clock = GameClock.start(move_ms=1000, bank_ms=0)
    assert clock.charge(0, think_ms=1150, rtt_ms=200)
    assert not clock.charge(0, think_ms=1250, rtt_ms=200)
    assert clock.allowance_ms(0, rtt_ms=5000) == 2000  # at most 1 s credited
    assert not clock.charge(1, think_ms=2100, rtt_ms=5000)


async def test_rtt_extends_the_deadline(make_runner) -> None:
    h = await make_runner(move_ms=1000, rtt_ms=150)
    await h.play(0, 4, think_s=1.1)  # over move_ms, within move_ms + rtt
    assert h.recorder.moves[0][3:] == (1100, 150)
    assert not h.task.done()


async def test_a_move_after_the_flag_is_refused_and_time_wins_the_race(make_runner) -> None:
    h = await make_runner(move_ms=1000)
    await h.play(0, 4)
    await h.play(1, 0)
    # The final legal move arrives a hair after the deadline, before the timer task ran.
    h.clock._now += 1.001  # no advance(): the timeout does not fire on its own
    h.runner.submit_move("a", 2, 1)
    await settle()
    end = await h.end()
    assert end.termination == "timeout"
    assert h.recorder.finishes == [(1, "timeout", "bot", True)]
    assert h.links[0].of(Error)[-1].code == "match_over"
    with pytest.raises(ProtocolError) as late:
        h.runner.submit_move("a", 2, 1)
    assert late.value.code == "match_over"


async def test_endings_racing_in_one_batch_give_one_result(make_runner) -> None:
    h = await make_runner()
    for seat, move in [(0, 0), (1, 3), (0, 1), (1, 4)]:
        await h.play(seat, move)
    h.runner.submit_move("a", 4, 2)  # the winning move
    h.runner.resign("b")  # queued behind it
    h.runner.abort("shutdown")
    h.clock.advance(10)  # and the flag would fall too
    end = await h.end()
    assert end.termination == "line"
    assert len(h.recorder.finishes) == 1
    assert len(h.links[0].of(MatchEnd)) == 1


@pytest.mark.parametrize("bad", [99, -1, "4", 4.0, None, True])
async def test_an_illegal_or_malformed_move_loses(make_runner, bad: object) -> None:
    h = await make_runner()
    await h.play(0, 4)
    await h.play(1, bad)
    end = await h.end()
    assert (end.winner, end.termination, end.fault, end.faulty_player) == (
        0,
        "illegal_move",
        "bot",
        1,
    )
    assert end.rated


async def test_an_occupied_cell_loses(make_runner) -> None:
    h = await make_runner()
    await h.play(0, 4)
    await h.play(1, 4)
    assert (await h.end()).termination == "illegal_move"


async def test_out_of_turn_stale_or_foreign_moves_change_nothing(make_runner) -> None:
    h = await make_runner()
    cases = [("b", 0, "not_your_turn"), ("a", 1, "stale_ply"), ("zed", 0, "not_a_player")]
    for bot, ply, code in cases:
        with pytest.raises(ProtocolError) as refused:
            h.runner.submit_move(bot, ply, 4)
        assert refused.value.code == code
    await settle()
    assert h.runner.state.ply == 0 and not h.task.done()
    await h.play(0, 4)
    assert h.runner.state.moves == (4,)


async def test_resign_loses_without_fault(make_runner) -> None:
    h = await make_runner()
    await h.play(0, 4)
    h.runner.resign("a")
    end = await h.end()
    assert (end.winner, end.termination, end.fault, end.rated) == (1, "resign", None, True)


async def test_abort_is_the_infrastructures_fault_and_unrated(make_runner) -> None:
    h = await make_runner()
    await h.play(0, 4)
    h.runner.abort("server shutting down")
    end = await h.end()
    assert (end.termination, end.fault, end.rated, end.result) == (
        "aborted",
        "infrastructure",
        False,
        "*",
    )
    assert h.recorder.finishes == [(None, "aborted", "infrastructure", False)]


async def test_reconnect_within_grace_resumes_with_full_position(make_runner) -> None:
    h = await make_runner(move_ms=10_000, grace_s=5.0)
    await h.play(0, 4)
    await h.play(1, 0)
    old = h.links[0]
    h.runner.detach("a", old)
    await settle()
    h.clock.advance(3.0)  # the clock keeps running while away
    await settle()
    new = FakeLink()
    h.runner.attach("a", new)
    await settle()
    start, turn = new.inbox
    assert isinstance(start, MatchStart) and start.moves == (4, 0) and start.you == 0
    assert isinstance(turn, YourTurn) and turn.ply == 2
    assert turn.time_left_ms == 7_000  # 10 s - 3 s away: the clock ran on
    await h.play(0, 1)
    assert h.runner.state.moves == (4, 0, 1) and new.of(Moved)
    assert not old.of(Moved)[2:]


async def test_a_stale_detach_after_replacement_is_ignored(make_runner) -> None:
    h = await make_runner(grace_s=1.0)
    old, new = h.links[0], FakeLink()
    h.runner.attach("a", new)  # the new connection arrives first ...
    h.runner.detach("a", old)  # ... then the replaced one reports its close
    await settle()
    h.clock.advance(0.5)
    await h.play(0, 4)
    h.clock.advance(0.3)
    await h.play(1, 0)
    h.clock.advance(0.5)  # past the grace a detach would have started
    await settle()
    assert not h.task.done()


@pytest.mark.parametrize(("away_seat", "has_moved"), [(1, True), (0, True), (1, False)])
async def test_staying_away_past_grace_loses_by_disconnect(
    make_runner, away_seat: int, has_moved: bool
) -> None:
    h = await make_runner(move_ms=60_000, grace_s=5.0)
    if has_moved:
        await h.play(0, 4)
        await h.play(1, 0)
    h.runner.detach("ab"[away_seat], h.links[away_seat])
    await settle()
    h.clock.advance(4.9)
    await settle()
    assert not h.task.done()
    h.clock.advance(0.2)
    end = await h.end()
    if has_moved:
        assert (end.winner, end.termination, end.fault) == (1 - away_seat, "disconnect", "bot")
        assert end.faulty_player == away_seat and end.rated
    else:
        assert (end.termination, end.rated) == ("aborted", False)


async def test_analysis_is_kept_for_spectators_not_sent_to_bots(make_runner) -> None:
    h = await make_runner()
    h.clock.advance(0.1)
    h.runner.submit_move("a", 0, 4, Analysis(simulations=1000, value=0.25))
    await settle()
    assert h.runner.last_analysis == Analysis(simulations=1000, value=0.25)
    assert "simulations" not in h.links[1].of(Moved)[0].to_json()
    assert h.runner.snapshot(1).analysis == h.runner.last_analysis


async def test_a_store_failure_still_ends_the_match(make_runner) -> None:
    h = await make_runner(recorder=Recorder(fail=True))
    await h.play(0, 4)
    h.runner.resign("b")
    end = await h.end()
    assert end.termination == "resign" and end.rating_changes == ()
    assert h.links[1].of(MatchEnd) == [end]
