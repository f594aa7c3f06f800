"""The match shell around the referee: timers, links, and a result told only once committed.

A manual clock (no sleeping), in-memory links and a recorder whose commits the test releases.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from arena.play.clock import ManualClock
from arena.play.match import Match
from arena.store import RatingChange
from protocol.errors import ProtocolError
from protocol.games import Fault, Termination
from protocol.messages import (
    Analysis,
    MatchEnd,
    MatchStart,
    Moved,
    ServerMessage,
    TimeControl,
    YourTurn,
)


@dataclass
class FakeLink:
    """Records what the match sends to one bot."""

    rtt_ms: float = 0.0
    inbox: list[ServerMessage] = field(default_factory=list)

    def send(self, message: ServerMessage) -> None:
        self.inbox.append(message)

    def of(self, kind: type) -> list:
        return [m for m in self.inbox if isinstance(m, kind)]


@dataclass
class Recorder:
    """Stands in for the store: moves at once, ends committed when the test says so."""

    moves: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    finishes: list[tuple[int | None, Termination, Fault | None, bool]] = field(default_factory=list)
    commit: asyncio.Event = field(default_factory=asyncio.Event)
    refuse: bool = False

    def record_move(
        self,
        match_id: str,
        ply: int,
        player: int,
        move: int,
        think_ms: int,
        rtt_ms: int,
        analysis: Analysis | None = None,
    ) -> None:
        self.moves.append((ply, player, move, think_ms, rtt_ms))

    async def finish_match(
        self,
        match_id: str,
        winner: int | None,
        termination: Termination,
        fault: Fault | None,
        rated: bool,
        reason: str = "",
    ) -> list[RatingChange]:
        self.finishes.append((winner, termination, fault, rated))
        await self.commit.wait()
        if self.refuse:
            raise RuntimeError("the match is no longer live in the database")
        return [RatingChange("a", 1500.0, 1516.0)] if rated else []


@dataclass
class Observer:
    events: list[str] = field(default_factory=list)

    def match_started(self, match: Match) -> None:
        self.events.append("started")

    def moved(self, match: Match, moved: Moved, analysis: object) -> None:
        self.events.append(f"moved {moved.move}")

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        self.events.append(f"ended {end.termination}")


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


class Harness:
    def __init__(self, move_ms: int = 1000, grace_s: float = 5.0) -> None:
        self.clock = ManualClock()
        self.links = (FakeLink(), FakeLink())
        self.recorder = Recorder()
        self.observer = Observer()
        self.finished: list[Match] = []
        self.match = Match(
            "m1",
            "tictactoe",
            ("a", "b"),
            TimeControl(move_ms, 0),
            self.links,
            recorder=self.recorder,
            clock=self.clock,
            observer=self.observer,
            on_finished=self.finished.append,
            grace_s=grace_s,
        )
        self.match.start()

    def play(self, bot: str, move: object, think_s: float = 0.1) -> None:
        self.clock.advance(think_s)
        self.match.move(bot, self.match.referee.state.ply, move, None, None)


async def test_a_result_is_told_only_once_committed_and_the_match_let_go_then() -> None:
    h = Harness()
    for bot, move in [("a", 0), ("b", 3), ("a", 1), ("b", 4), ("a", 2)]:
        h.play(bot, move)
    await settle()
    assert h.recorder.finishes == [(0, Termination.LINE, None, True)]
    assert not h.links[0].of(MatchEnd) and not h.finished  # waiting for the commit
    h.recorder.commit.set()
    await asyncio.wait_for(h.match.done.wait(), 1)
    (end,) = h.links[1].of(MatchEnd)
    assert end.rated and "rating_changes" not in end.to_dict()  # the rating follows the refit
    assert h.finished == [h.match]
    assert h.observer.events[0] == "started" and h.observer.events[-1] == "ended line"


async def test_an_end_the_store_refuses_is_never_told() -> None:
    h = Harness()
    h.recorder.refuse = True
    h.recorder.commit.set()
    h.play("a", 4)
    h.match.resign("b")
    await asyncio.wait_for(h.match.done.wait(), 1)
    assert not h.links[0].of(MatchEnd) and not h.links[1].of(MatchEnd)
    assert h.finished == [h.match]


async def test_a_commit_cancelled_at_shutdown_tells_nothing() -> None:
    h = Harness()
    h.match.abort("shutting down")
    await settle()
    (task,) = [t for t in asyncio.all_tasks() if t.get_name() == "match-end-m1"]
    task.cancel()
    await asyncio.wait_for(h.match.done.wait(), 1)
    assert not h.links[0].of(MatchEnd)


async def test_the_timer_fires_at_the_deadline_and_an_early_one_flags_nobody() -> None:
    h = Harness(move_ms=1000)
    h.play("a", 4, think_s=0.5)  # the timer armed for turn 0 stays; it fires early for turn 1
    h.clock.advance(0.6)
    assert not h.match.decided and h.clock.waiting == 1
    h.play("b", 0, think_s=0.3)
    assert h.recorder.moves[1][3] == 900
    h.clock.advance(0.999)
    assert not h.match.decided
    h.clock.advance(0.002)
    assert h.match.decided
    await settle()
    assert h.recorder.finishes == [(1, Termination.TIMEOUT, Fault.BOT, True)]
    assert h.clock.waiting == 0  # nothing left armed once decided


async def test_a_stale_detach_after_replacement_is_ignored() -> None:
    h = Harness(grace_s=1.0)
    old, new = h.links[0], FakeLink()
    h.match.attach("a", new)  # the new connection arrives first ...
    h.match.detach("a", old)  # ... then the replaced one reports its close
    assert [type(m) for m in new.inbox] == [MatchStart, YourTurn]
    h.play("a", 4, think_s=0.5)
    h.play("b", 0, think_s=0.3)
    h.clock.advance(0.5)  # past the grace a detach would have started
    assert not h.match.decided and new.of(Moved)


async def test_a_foreign_bot_is_refused() -> None:
    h = Harness()
    with pytest.raises(ProtocolError) as refused:
        h.match.move("zed", 0, 4, None, None)
    assert refused.value.code == "not_a_player"


async def test_a_referee_bug_aborts_the_match_as_the_infrastructures_fault() -> None:
    h = Harness()

    def broken(*args: object) -> None:
        raise ZeroDivisionError("a bug")

    h.recorder.record_move = broken  # type: ignore[method-assign]
    h.play("a", 4)  # no exception reaches the connection that sent the move
    await settle()
    assert h.recorder.finishes == [(None, Termination.ABORTED, Fault.INFRASTRUCTURE, False)]
