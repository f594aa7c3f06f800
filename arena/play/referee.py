"""The referee of one match: every rule of a match, synchronously, with no I/O.

``Referee`` is a state machine. Its inputs are method calls carrying the
time they happen at (``now``, seconds on the server's monotonic clock):
``start``, ``move``, ``resign``, ``attach``, ``detach``, ``abort``, and
``tick`` once ``deadline`` has passed. Its outputs go, synchronously, to an
injected ``Outlet``: messages for a player, the move to record, the move for
spectators, and (at most once) the ``Ending`` it decided. The ``match_end``
is made by ``close`` only after that ending has been committed: a result is
never told before it is stored. (The players' ratings follow in a ``rating``
report once the leaderboard is refitted: ``arena.leaderboard.notices``.)

A match may start from an ``opening``: its moves are played before the first
turn, recorded as the game's first plies (with no think time), and sent to
both players in ``match_start.moves`` (``position`` stays the game's initial
position, so replaying ``moves`` on it gives the current one).

A misbehaving bot produces a result, never an exception: an illegal or
malformed move, a move after its time ran out, a disconnect past the grace
window each end the match with the bot at fault. The only exceptions are
``ProtocolError``s for input that cannot be this turn's answer at all (the
wrong ply, out of turn, after the end); they change nothing, and the
connection layer answers them with an ``error``.

Who is blamed: a bot that never moved before it timed out or vanished is a
no-show, and the match is aborted without a winner or a rating change;
an abort by the arena itself (shutdown, an internal error) is the
infrastructure's fault and is never rated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.play.clock import GameClock
from arena.play.clock import Snapshot as ClockSnapshot
from protocol.errors import IllegalMoveError, ProtocolError
from protocol.games import Fault, GameState, Outcome, Termination, game_spec, new_game
from protocol.messages import (
    Analysis,
    Clocks,
    Error,
    ErrorCode,
    MatchEnd,
    MatchStart,
    Moved,
    ServerMessage,
    Snapshot,
    TimeControl,
    YourTurn,
)

DEFAULT_GRACE_S = 30.0
"""How long a disconnected bot may stay away before it loses (capped by its time left)."""


@dataclass(frozen=True, slots=True)
class Ending:
    """How a match ended, as decided by the referee: what the store records."""

    winner: int | None
    termination: Termination
    fault: Fault | None
    faulty_player: int | None
    rated: bool
    reason: str

    @property
    def result(self) -> str:
        """``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` for an aborted match (no result at all)."""
        if self.termination is Termination.ABORTED:
            return "*"
        return Outcome(self.winner, self.termination).result


class Outlet(Protocol):
    """Where the referee's decisions go (the match shell; a recording fake in tests)."""

    def send(self, player: int, message: ServerMessage) -> None:
        """Queue ``message`` for the bot in seat ``player`` (dropped while it is away)."""
        ...

    def rtt_ms(self, player: int) -> float:
        """The measured network round trip of ``player``'s connection (0 when away)."""
        ...

    def record_move(
        self,
        ply: int,
        player: int,
        move: int,
        think_ms: int,
        rtt_ms: int,
        analysis: Analysis | None = None,
    ) -> None:
        """Store an applied move and its mover's analysis (queued for the next group commit)."""
        ...

    def moved(self, moved: Moved, analysis: Analysis | None) -> None:
        """Tell spectators about an applied move, with the mover's analysis."""
        ...

    def ended(self, ending: Ending) -> None:
        """The match is decided; commit ``ending``, then call ``Referee.close``."""
        ...


class Referee:
    """The rules of one match between two seats; see the module docstring."""

    def __init__(
        self,
        match_id: str,
        game: str,
        players: tuple[str, str],
        time_control: TimeControl,
        outlet: Outlet,
        *,
        grace_s: float = DEFAULT_GRACE_S,
        rated: bool = True,
        ratings: tuple[float, float] = (1500.0, 1500.0),
        pace_s: float = 0.0,
        opening: Sequence[int] = (),
    ) -> None:
        if players[0] == players[1]:
            raise ValueError("a bot cannot play itself")
        self.match_id = match_id
        self.game = game
        self.players = players
        self.time_control = time_control
        self.rated = rated
        self.ratings = ratings
        self.grace_s = grace_s
        self.pace_s = pace_s
        """Pause between a move and the next ``your_turn`` so people can follow (0: none)."""
        initial = new_game(game)
        self.start_position = initial.encode()
        self.opening = tuple(opening)
        """Moves played before the first turn (both players see them in ``match_start``)."""
        # An illegal or game-ending opening is the caller's bug: raise before anything starts.
        state = initial
        self._opening_movers: list[int] = []
        for move in self.opening:
            self._opening_movers.append(state.to_move)
            state = state.play(move)
        self.state: GameState = state
        if self.state.outcome() is not None:
            raise ValueError(f"the opening {self.opening} ends the game")
        self.position = self.state.encode()
        """The current position's text, encoded once per move for ``moved`` and ``your_turn``."""
        self.last_analysis: Analysis | None = None
        self.ending: Ending | None = None
        """Set once the match is decided (it may still be being recorded)."""
        self.end: MatchEnd | None = None
        """Set by ``close``: the ``match_end`` that was sent."""
        self._out = outlet
        self._present = [False, False]
        self._gone_since: list[float | None] = [None, None]
        self._has_moved = [False, False]
        self._game_clock = GameClock.start(time_control.move_ms, time_control.bank_ms)
        self._clocks_of: ClockSnapshot | None = None
        self._clocks = self.clocks()
        self._turn_started = 0.0
        self._turn_rtt_ms = 0.0
        self._turn_deadline = math.inf
        self._paused_until: float | None = None
        self._started = False

    # Inputs ---------------------------------------------------------------------

    def start(self, present: tuple[bool, bool], now: float) -> None:
        """Begin: ``match_start`` to the players present; one absent starts its grace window."""
        self._started = True
        for ply, (mover, move) in enumerate(zip(self._opening_movers, self.opening, strict=True)):
            # The opening is part of the game's record: its first plies, thought over in 0 ms.
            self._out.record_move(ply, mover, move, 0, 0)
        for player in (0, 1):
            if present[player]:
                self._present[player] = True
                self._send_start(player)
            else:
                self._gone_since[player] = now
        self._begin_turn(now)

    def move(
        self,
        player: int,
        ply: int,
        move: object,
        analysis: Analysis | None,
        ref: str | None,
        now: float,
    ) -> None:
        """``player`` answers turn ``ply`` with ``move`` (any JSON value: it may be malformed).

        Raises ``ProtocolError`` (and changes nothing) when this cannot be the
        answer to the current turn. Otherwise the move is judged: applied,
        or the match ends (illegal move, time ran out).
        """
        self._check_turn(player, ply)
        think_ms = (now - self._turn_started) * 1000.0
        if think_ms < 0.0:
            think_ms = 0.0
        if not self._game_clock.charge(player, think_ms, self._turn_rtt_ms):
            self._flag(player)
            self._send(
                player,
                Error(
                    code=ErrorCode.MATCH_OVER,
                    message="your move arrived after your time ran out",
                    ref=ref,
                ),
            )
            return
        if type(move) is not int:
            self._illegal(player, f"the move must be an integer, not {move!r:.40}")
            return
        try:
            after = self.state.play(move)
        except IllegalMoveError as exc:
            self._illegal(player, str(exc))
            return
        ply = self.state.ply
        think = round(think_ms)
        self.state = after
        self.position = after.encode_after(self.position, move)
        self._has_moved[player] = True
        self.last_analysis = analysis
        self._out.record_move(ply, player, move, think, round(self._turn_rtt_ms), analysis)
        moved = Moved(
            match_id=self.match_id,
            ply=ply,
            player=player,
            move=move,
            position=self.position,
            think_ms=think,
            clocks=self.clocks(),
        )
        self._send(0, moved)
        self._send(1, moved)
        self._out.moved(moved, analysis)
        outcome = after.outcome()
        if outcome is not None:
            self._decide(self._ending_by_rules(outcome))
        elif self.pace_s > 0.0:
            # The pause comes before the turn begins, so it is on nobody's clock.
            self._paused_until = now + self.pace_s
        else:
            self._begin_turn(now)

    def resign(self, player: int, reason: str | None = None) -> None:
        """``player`` resigns (``reason``: the bot's own words, kept in the record); raises
        ``match_over`` once the match is decided."""
        if self.ending is not None:
            raise ProtocolError(ErrorCode.MATCH_OVER, f"match {self.match_id} is over")
        other = self.players[1 - player]
        why = f" ({reason})" if reason else ""
        self._decide(
            Ending(
                1 - player,
                Termination.RESIGN,
                None,
                None,
                self.rated,
                f"{self.players[player]} resigned{why}; {other} wins",
            )
        )

    def attach(self, player: int, now: float) -> None:
        """``player`` is (re)connected: it gets ``match_start`` again and, if due, its turn."""
        self._present[player] = True
        self._gone_since[player] = None
        if not self._started:
            return
        self._send_start(player)
        if self.ending is None and self._paused_until is None and self.state.to_move == player:
            self._send_your_turn(player, now)

    def detach(self, player: int, now: float) -> None:
        """``player``'s connection closed: its clock keeps running and its grace window starts."""
        if self._present[player]:
            self._present[player] = False
            self._gone_since[player] = now

    def abort(self, reason: str) -> None:
        """End the match as aborted by the arena itself (shutdown, internal error): unrated."""
        if self.ending is None:
            self._decide(
                Ending(None, Termination.ABORTED, Fault.INFRASTRUCTURE, None, False, reason)
            )

    @property
    def deadline(self) -> float:
        """When ``tick`` is next due (a turn's end, a grace window's end, a pause's end)."""
        if self.ending is not None:
            return math.inf
        due = self._turn_deadline if self._paused_until is None else self._paused_until
        for gone in self._gone_since:
            if gone is not None and gone + self.grace_s < due:
                due = gone + self.grace_s
        return due

    def tick(self, now: float) -> None:
        """Act on whatever is due at ``now``: a grace window or a turn that ran out, a pause."""
        if self.ending is not None:
            return
        for player in (0, 1):
            gone = self._gone_since[player]
            if gone is not None and now >= gone + self.grace_s:
                self._decide(self._no_show(player, Termination.DISCONNECT))
                return
        if self._paused_until is not None:
            if now >= self._paused_until:
                self._paused_until = None
                self._begin_turn(now)
        elif now >= self._turn_deadline:
            self._flag(self.state.to_move)

    def close(self) -> MatchEnd:
        """The decided ending is committed: send ``match_end`` to both."""
        ending = self.ending
        if ending is None or self.end is not None:
            raise RuntimeError("close() comes once, after the ending is decided")
        self.end = MatchEnd(
            match_id=self.match_id,
            winner=ending.winner,
            result=ending.result,
            termination=ending.termination.value,
            fault=None if ending.fault is None else ending.fault.value,
            faulty_player=ending.faulty_player,
            rated=ending.rated,
            reason=ending.reason,
        )
        self._send(0, self.end)
        self._send(1, self.end)
        return self.end

    def retire(self) -> None:
        """Drop the outlet once the match is over, so nothing keeps the shell alive by a cycle."""
        self._out = _RETIRED

    # Views ----------------------------------------------------------------------

    def clocks(self) -> Clocks:
        """Both players' time left and bank, as of the current turn's start."""
        snapshot = self._game_clock.snapshot()
        if snapshot is not self._clocks_of:  # a bank changed (rare): a new message value
            self._clocks_of = snapshot
            self._clocks = Clocks(time_left_ms=snapshot[0], bank_ms=snapshot[1])
        return self._clocks

    def snapshot(self, last_event: int) -> Snapshot:
        """The full state for a spectator who has seen events up to ``last_event``."""
        return Snapshot(
            match_id=self.match_id,
            game=self.game,
            players=self.players,
            # An unrated match (a guest's, for one) shows no ratings.
            ratings=(round(self.ratings[0], 1), round(self.ratings[1], 1)) if self.rated else None,
            time_control=self.time_control,
            moves=tuple(self.state.moves),
            position=self.position,
            clocks=self.clocks(),
            status="finished" if self.end is not None else "live",
            last_event=last_event,
            end=self.end,
            analysis=self.last_analysis,
        )

    # Rules ----------------------------------------------------------------------

    def _check_turn(self, player: int, ply: int) -> None:
        if self.ending is not None:
            raise ProtocolError(ErrorCode.MATCH_OVER, f"match {self.match_id} is over")
        if player != self.state.to_move or self._paused_until is not None:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, "wait for your_turn")
        if ply != self.state.ply:
            raise ProtocolError(
                ErrorCode.STALE_PLY, f"the move must answer ply {self.state.ply}, not {ply}"
            )

    def _begin_turn(self, now: float) -> None:
        mover = self.state.to_move
        self._turn_started = now
        self._turn_rtt_ms = self._out.rtt_ms(mover) if self._present[mover] else 0.0
        allowance_ms = self._game_clock.allowance_ms(mover, self._turn_rtt_ms)
        self._turn_deadline = now + allowance_ms / 1000.0
        self._send_your_turn(mover, now)

    def _illegal(self, player: int, why: str) -> None:
        self._decide(
            Ending(
                1 - player,
                Termination.ILLEGAL_MOVE,
                Fault.BOT,
                player,
                self.rated,
                f"{self.players[player]} played an illegal move: {why}",
            )
        )

    def _flag(self, player: int) -> None:
        """``player`` ran out of time; a bot that is away loses by disconnect instead."""
        away = not self._present[player]
        self._decide(self._no_show(player, Termination.DISCONNECT if away else Termination.TIMEOUT))

    def _no_show(self, player: int, termination: Termination) -> Ending:
        name = self.players[player]
        what = "disconnected" if termination is Termination.DISCONNECT else "ran out of time"
        if not self._has_moved[player]:
            # Never having moved is a no-show, not a game: nobody wins, no rating moves,
            # and the abort carries no fault (docs/protocol.md); the reason names the bot.
            return Ending(
                None,
                Termination.ABORTED,
                None,
                None,
                False,
                f"{name} {what} before its first move; match aborted",
            )
        return Ending(
            1 - player,
            termination,
            Fault.BOT,
            player,
            self.rated,
            f"{name} {what}; {self.players[1 - player]} wins",
        )

    def _ending_by_rules(self, outcome: Outcome) -> Ending:
        winner = None if outcome.winner is None else self.players[outcome.winner]
        reason = game_spec(self.game).reason(winner)
        return Ending(outcome.winner, outcome.termination, None, None, self.rated, reason)

    def _decide(self, ending: Ending) -> None:
        """The one place a match is decided; the first decision stands."""
        if self.ending is not None:
            return
        self.ending = ending
        self._out.ended(ending)

    # Messages -------------------------------------------------------------------

    def _send_your_turn(self, player: int, now: float) -> None:
        elapsed_ms = (now - self._turn_started) * 1000.0
        left_ms = round(self._game_clock.time_left_ms(player) - elapsed_ms)
        self._send(
            player,
            YourTurn(
                match_id=self.match_id,
                ply=self.state.ply,
                position=self.position,
                legal_moves=tuple(self.state.legal_moves()),
                time_left_ms=left_ms if left_ms > 0 else 0,
                bank_ms=round(self._game_clock.banks_ms[player]),
            ),
        )

    def _send_start(self, player: int) -> None:
        self._send(
            player,
            MatchStart(
                match_id=self.match_id,
                game=self.game,
                players=self.players,
                you=player,
                time_control=self.time_control,
                position=self.start_position,
                moves=tuple(self.state.moves),
                ply=self.state.ply,
                clocks=self.clocks(),
            ),
        )

    def _send(self, player: int, message: ServerMessage) -> None:
        if self._present[player]:
            self._out.send(player, message)


class _Retired:
    """The outlet of a finished referee: there is nothing left to tell anyone."""

    def send(self, player: int, message: ServerMessage) -> None:
        """Drop."""

    def rtt_ms(self, player: int) -> float:
        """Nobody is connected."""
        return 0.0

    def record_move(
        self,
        ply: int,
        player: int,
        move: int,
        think_ms: int,
        rtt_ms: int,
        analysis: Analysis | None = None,
    ) -> None:
        """Never called: a finished match takes no moves."""

    def moved(self, moved: Moved, analysis: Analysis | None) -> None:
        """Never called."""

    def ended(self, ending: Ending) -> None:
        """Never called: the ending was decided once."""


_RETIRED = _Retired()
