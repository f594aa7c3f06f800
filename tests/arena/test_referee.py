"""Every rule of a match, on the synchronous referee alone: no event loop, no sockets, no sleep.

The referee's outlet is a recording fake; time is whatever ``now`` the test passes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from arena.play.clock import GameClock
from arena.play.referee import Ending, Referee
from protocol.errors import ProtocolError
from protocol.games import Fault, Termination
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

T0 = 1000.0


@dataclass
class Outlet:
    """Records everything the referee decides."""

    rtt: tuple[float, float] = (0.0, 0.0)
    sent: tuple[list[ServerMessage], list[ServerMessage]] = field(default_factory=lambda: ([], []))
    moves: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    spectated: list[tuple[Moved, Analysis | None]] = field(default_factory=list)
    analyses: list[Analysis | None] = field(default_factory=list)
    """The analysis recorded with each of ``moves``."""
    endings: list[Ending] = field(default_factory=list)

    def send(self, player: int, message: ServerMessage) -> None:
        self.sent[player].append(message)

    def rtt_ms(self, player: int) -> float:
        return self.rtt[player]

    def record_move(
        self,
        ply: int,
        player: int,
        move: int,
        think_ms: int,
        rtt_ms: int,
        analysis: Analysis | None = None,
    ) -> None:
        self.moves.append((ply, player, move, think_ms, rtt_ms))
        self.analyses.append(analysis)

    def moved(self, moved: Moved, analysis: Analysis | None) -> None:
        self.spectated.append((moved, analysis))

    def ended(self, ending: Ending) -> None:
        self.endings.append(ending)

    def of(self, player: int, kind: type) -> list:
        return [m for m in self.sent[player] if isinstance(m, kind)]


class Game:
    """A referee, its outlet and a clock the test moves by hand."""

    def __init__(
        self,
        game: str = "tictactoe",
        move_ms: int = 1000,
        bank_ms: int = 0,
        grace_s: float = 5.0,
        rtt_ms: float = 0.0,
        pace_s: float = 0.0,
        present: tuple[bool, bool] = (True, True),
    ) -> None:
        self.out = Outlet(rtt=(rtt_ms, rtt_ms))
        self.now = T0
        self.ref = Referee(
            "m1",
            game,
            ("a", "b"),
            TimeControl(move_ms, bank_ms),
            self.out,
            grace_s=grace_s,
            pace_s=pace_s,
        )
        self.ref.start(present, self.now)

    def play(self, seat: int, move: object, think_s: float = 0.1, ref: str | None = None) -> None:
        self.now += think_s
        self.ref.move(seat, self.ref.state.ply, move, None, ref, self.now)

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass, ticking whenever the referee's deadline falls due."""
        target = self.now + seconds
        while self.ref.deadline <= target:
            self.now = max(self.now, self.ref.deadline)
            self.ref.tick(self.now)
        self.now = target

    @property
    def ending(self) -> Ending:
        assert len(self.out.endings) == 1, self.out.endings
        return self.out.endings[0]


def test_a_game_by_the_rules_ends_once_with_the_line() -> None:
    g = Game()
    assert [type(m) for m in g.out.sent[0]] == [MatchStart, YourTurn]
    assert [type(m) for m in g.out.sent[1]] == [MatchStart]
    for seat, move in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        g.play(seat, move)
    assert g.ending == Ending(0, Termination.LINE, None, None, True, "a completed a line")
    assert [m[:3] for m in g.out.moves] == [(0, 0, 0), (1, 1, 3), (2, 0, 1), (3, 1, 4), (4, 0, 2)]
    assert all(m[3] == 100 for m in g.out.moves)  # think time measured on the clock
    assert len(g.out.of(1, Moved)) == 5 and [t.ply for t in g.out.of(1, YourTurn)] == [1, 3]
    assert g.ref.deadline == float("inf")
    # Nothing is told until the ending is committed; then both get the same match_end.
    assert not g.out.of(0, MatchEnd)
    end = g.ref.close()
    assert (end.winner, end.result, end.termination, end.fault, end.rated) == (
        0,
        "1-0",
        "line",
        None,
        True,
    )
    assert g.out.of(0, MatchEnd) == [end] == g.out.of(1, MatchEnd)
    with pytest.raises(RuntimeError):
        g.ref.close()


def test_a_move_is_recorded_before_it_is_announced() -> None:
    g = Game(game="connect4")
    g.play(0, 3, think_s=0.25)
    assert g.out.moves == [(0, 0, 3, 250, 0)]
    assert [m.move for m in g.out.of(1, Moved)] == [3]
    assert g.out.sent[1][-1] == YourTurn(
        match_id="m1",
        ply=1,
        position=g.ref.state.encode(),
        legal_moves=(0, 1, 2, 3, 4, 5, 6),
        time_left_ms=1000,
        bank_ms=0,
    )


def test_no_move_in_time_loses_on_time() -> None:
    g = Game(move_ms=1000)
    g.play(0, 4)
    g.play(1, 0)
    g.wait(0.999)
    assert not g.out.endings
    g.wait(0.002)
    assert g.ending == Ending(
        1, Termination.TIMEOUT, Fault.BOT, 0, True, "a ran out of time; b wins"
    )


@pytest.mark.parametrize("missing_seat", [0, 1])
def test_a_missing_first_move_aborts_unrated_without_fault(missing_seat: int) -> None:
    g = Game()
    if missing_seat == 1:
        g.play(0, 4)
    g.wait(1.1)
    ending = g.ending
    assert (ending.winner, ending.termination, ending.fault, ending.rated) == (
        None,
        Termination.ABORTED,
        None,
        False,
    )
    assert f"{'ab'[missing_seat]} ran out of time before its first move" in ending.reason
    assert ending.result == "*"


def test_overage_comes_out_of_the_bank_and_flags_when_empty() -> None:
    g = Game(move_ms=100, bank_ms=500)
    g.play(0, 4, think_s=0.4)  # 300 ms over: bank 500 -> 200
    assert g.ref.clocks().bank_ms == (200, 500)
    assert g.out.of(1, Moved)[-1].clocks.time_left_ms == (300, 600)
    g.play(1, 0, think_s=0.05)
    assert g.out.of(0, YourTurn)[-1].time_left_ms == 300
    g.wait(0.299)
    assert not g.out.endings
    g.wait(0.002)
    assert (g.ending.termination, g.ending.faulty_player) == (Termination.TIMEOUT, 0)


def test_the_round_trip_is_credited_but_capped() -> None:
    clock = GameClock.start(move_ms=1000, bank_ms=0)
    assert clock.charge(0, think_ms=1150, rtt_ms=200)
    assert not clock.charge(0, think_ms=1250, rtt_ms=200)
    assert clock.allowance_ms(0, rtt_ms=5000) == 2000  # at most 1 s credited
    assert not clock.charge(1, think_ms=2100, rtt_ms=5000)


def test_rtt_extends_the_deadline() -> None:
    g = Game(move_ms=1000, rtt_ms=150)
    assert g.ref.deadline == pytest.approx(T0 + 1.15)
    g.play(0, 4, think_s=1.1)  # over move_ms, within move_ms + rtt
    assert g.out.moves[0][3:] == (1100, 150)
    assert not g.out.endings


def test_a_move_after_the_flag_loses_on_time_with_an_error_to_the_mover() -> None:
    g = Game(move_ms=1000)
    g.play(0, 4)
    g.play(1, 0)
    # The final legal move arrives a hair after the deadline, before any tick.
    g.play(0, 1, think_s=1.001, ref="late")
    assert g.ending.termination is Termination.TIMEOUT
    error = g.out.of(0, Error)[-1]
    assert (error.code, error.ref) == ("match_over", "late")
    assert len(g.out.moves) == 2
    with pytest.raises(ProtocolError) as late:
        g.play(0, 1)
    assert late.value.code == "match_over"


def test_the_first_ending_stands() -> None:
    g = Game()
    for seat, move in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        g.play(seat, move)
    with pytest.raises(ProtocolError):
        g.ref.resign(1)
    g.ref.abort("shutdown")
    g.wait(10)
    assert g.ending.termination is Termination.LINE


@pytest.mark.parametrize("bad", [99, -1, "4", 4.0, None, True])
def test_an_illegal_or_malformed_move_loses(bad: object) -> None:
    g = Game()
    g.play(0, 4)
    g.play(1, bad)
    assert (g.ending.winner, g.ending.termination, g.ending.fault, g.ending.faulty_player) == (
        0,
        Termination.ILLEGAL_MOVE,
        Fault.BOT,
        1,
    )
    assert g.ending.rated and len(g.out.moves) == 1


def test_an_occupied_cell_loses() -> None:
    g = Game()
    g.play(0, 4)
    g.play(1, 4)
    assert g.ending.termination is Termination.ILLEGAL_MOVE


def test_out_of_turn_or_stale_moves_change_nothing() -> None:
    g = Game()
    for seat, ply, code in [(1, 0, "not_your_turn"), (0, 1, "stale_ply")]:
        with pytest.raises(ProtocolError) as refused:
            g.ref.move(seat, ply, 4, None, None, g.now)
        assert refused.value.code == code
    assert g.ref.state.ply == 0 and not g.out.endings and not g.out.moves
    g.play(0, 4)
    assert g.ref.state.moves == (4,)


def test_resign_loses_without_fault() -> None:
    g = Game()
    g.play(0, 4)
    g.ref.resign(0)
    assert (g.ending.winner, g.ending.termination, g.ending.fault, g.ending.rated) == (
        1,
        Termination.RESIGN,
        None,
        True,
    )


def test_abort_is_the_infrastructures_fault_and_unrated() -> None:
    g = Game()
    g.play(0, 4)
    g.ref.abort("server shutting down")
    assert g.ending == Ending(
        None, Termination.ABORTED, Fault.INFRASTRUCTURE, None, False, "server shutting down"
    )
    end = g.ref.close()
    assert (end.result, end.fault, end.rated) == ("*", "infrastructure", False)


def test_reconnect_within_grace_resumes_with_full_position() -> None:
    g = Game(move_ms=10_000, grace_s=5.0)
    g.play(0, 4)
    g.play(1, 0)
    g.ref.detach(0, g.now)
    before = len(g.out.sent[0])
    g.wait(3.0)  # the clock keeps running while away
    g.ref.attach(0, g.now)
    start, turn = g.out.sent[0][before:]
    assert isinstance(start, MatchStart) and start.moves == (4, 0) and start.you == 0
    assert isinstance(turn, YourTurn) and turn.ply == 2
    assert turn.time_left_ms == 7_000  # 10 s - 3 s away: the clock ran on
    g.play(0, 1)
    assert g.ref.state.moves == (4, 0, 1) and not g.out.endings


def test_nothing_is_sent_to_a_seat_that_is_away() -> None:
    g = Game()
    g.ref.detach(1, g.now)
    g.play(0, 4)
    assert [type(m) for m in g.out.sent[1]] == [MatchStart]


@pytest.mark.parametrize(("away_seat", "has_moved"), [(1, True), (0, True), (1, False)])
def test_staying_away_past_grace_loses_by_disconnect(away_seat: int, has_moved: bool) -> None:
    g = Game(move_ms=60_000, grace_s=5.0)
    if has_moved:
        g.play(0, 4)
        g.play(1, 0)
    g.ref.detach(away_seat, g.now)
    g.wait(4.9)
    assert not g.out.endings
    g.wait(0.2)
    if has_moved:
        assert (g.ending.winner, g.ending.termination, g.ending.fault) == (
            1 - away_seat,
            Termination.DISCONNECT,
            Fault.BOT,
        )
        assert g.ending.faulty_player == away_seat and g.ending.rated
    else:
        assert (g.ending.termination, g.ending.rated) == (Termination.ABORTED, False)


def test_a_bot_absent_at_the_start_has_its_grace_window_running() -> None:
    g = Game(move_ms=60_000, grace_s=2.0, present=(True, False))
    g.play(0, 4)
    g.wait(2.01)
    assert g.ending.termination is Termination.ABORTED  # b never moved: a no-show


def test_analysis_goes_to_spectators_and_the_record_not_to_bots() -> None:
    g = Game()
    g.now += 0.1
    g.ref.move(0, 0, 4, Analysis(simulations=1000, value=0.25), None, g.now)
    assert g.out.spectated[0][1] == Analysis(simulations=1000, value=0.25)
    assert "simulations" not in g.out.of(1, Moved)[0].to_json()
    assert g.ref.snapshot(1).analysis == Analysis(simulations=1000, value=0.25)
    g.play(1, 3)
    assert g.out.analyses == [Analysis(simulations=1000, value=0.25), None]


def test_a_pause_between_moves_is_on_nobodys_clock() -> None:
    g = Game(move_ms=1000, pace_s=0.5)
    g.play(0, 4, think_s=0.2)
    assert not g.out.of(1, YourTurn)
    with pytest.raises(ProtocolError) as early:
        g.ref.move(1, 1, 0, None, None, g.now)
    assert early.value.code == "not_your_turn"
    g.wait(0.5)  # the pause ends: b's turn begins with its full time
    assert g.out.of(1, YourTurn)[-1].time_left_ms == 1000
    g.play(1, 0, think_s=0.9)
    assert not g.out.endings and g.out.moves[-1][3] == 900


def test_a_match_from_an_opening_records_it_and_shows_it_to_both() -> None:
    out = Outlet()
    ref = Referee("m1", "tictactoe", ("a", "b"), TimeControl(1000, 0), out, opening=(4, 0, 8))
    ref.start((True, True), T0)
    # The opening is the record's first plies (no think time), and the second seat moves now.
    assert out.moves == [(0, 0, 4, 0, 0), (1, 1, 0, 0, 0), (2, 0, 8, 0, 0)]
    for seat in (0, 1):
        start = out.of(seat, MatchStart)[0]
        assert (start.moves, start.ply) == ((4, 0, 8), 3)
        assert start.position == Referee("x", "tictactoe", ("a", "b"), TimeControl(1000, 0),
                                         Outlet()).start_position  # fmt: skip
    assert [t.ply for t in out.of(1, YourTurn)] == [3] and not out.of(0, YourTurn)
    ref.move(1, 3, 1, None, None, T0 + 0.1)
    assert out.moves[-1][:3] == (3, 1, 1)
    with pytest.raises(ValueError, match="not legal"):
        Referee("m2", "tictactoe", ("a", "b"), TimeControl(1000, 0), Outlet(), opening=(4, 4))
    with pytest.raises(ValueError, match="ends the game"):
        Referee("m3", "tictactoe", ("a", "b"), TimeControl(1000, 0), Outlet(),
                opening=(0, 3, 1, 4, 2))  # fmt: skip
