"""One match, refereed by one asyncio task: turns, clocks and adjudication.

``MatchRunner.run`` is the only code that changes a match. Connections feed
it through ``submit_move`` / ``resign`` / ``attach`` / ``detach`` / ``abort``,
which only pre-check and queue; the runner task applies events in arrival
order and every ending goes through ``_finish``, guarded by a single
"finished" transition, so a timeout racing a final move still yields exactly
one result and one rating update.

Side effects are injected: ``MatchRecorder`` (the store), ``MatchObserver``
(spectators and the event sink), ``Clock`` (time), ``PlayerLink`` (a bot's
connection, which must never block the runner).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.clock import Clock, GameClock
from arena.clock import Snapshot as ClockSnapshot
from protocol.errors import IllegalMoveError, ProtocolError
from protocol.games import GameState, Outcome, Termination, new_game
from protocol.messages import (
    Analysis,
    Clocks,
    Error,
    ErrorCode,
    MatchEnd,
    MatchStart,
    Moved,
    RatingChange,
    ServerMessage,
    Snapshot,
    TimeControl,
    YourTurn,
)

log = logging.getLogger(__name__)

DEFAULT_GRACE_S = 30.0
"""How long a disconnected bot may stay away before it loses (capped by its time left)."""


class PlayerLink(Protocol):
    """The runner's view of a bot's connection: a non-blocking send and the measured round trip."""

    def send(self, message: ServerMessage) -> None:
        """Queue ``message`` for the bot; must never block or raise on a slow client."""
        ...

    @property
    def rtt_ms(self) -> float:
        """The latest measured network round trip in milliseconds (0 before any ping)."""
        ...


class RatingChangeLike(Protocol):
    """A rating change as the store reports it."""

    @property
    def bot(self) -> str:
        """The bot's name."""
        ...

    @property
    def before(self) -> float:
        """Rating before the match."""
        ...

    @property
    def after(self) -> float:
        """Rating after the match."""
        ...


class MatchRecorder(Protocol):
    """The persistence the runner needs (``arena.store.Store`` satisfies it)."""

    async def record_move(
        self, match_id: str, ply: int, player: int, move: int, think_ms: int, rtt_ms: int
    ) -> None:
        """Store one applied move; ``player`` is the seat (0 or 1)."""
        ...

    def record_move_now(
        self, match_id: str, ply: int, player: int, move: int, think_ms: int, rtt_ms: int
    ) -> bool:
        """Store the move like ``record_move`` if that needs no waiting, and say True.

        False means nothing was stored (the store is behind): await ``record_move``.
        """
        ...

    async def finish_match(
        self,
        match_id: str,
        winner: int | None,
        termination: str,
        fault: str | None,
        rated: bool,
        reason: str = "",
    ) -> Sequence[RatingChangeLike]:
        """Store the result (``winner`` is a seat) and rating changes in one transaction."""
        ...


class MatchObserver(Protocol):
    """Who else hears about the match: spectators, the event sink (``SpectatorHub``)."""

    def match_started(self, runner: MatchRunner) -> None:
        """The match began (players have been sent ``match_start``)."""

    def moved(self, runner: MatchRunner, moved: Moved, analysis: Analysis | None) -> None:
        """A move was applied; ``analysis`` is the mover's, for spectators only."""

    def match_ended(self, runner: MatchRunner, end: MatchEnd) -> None:
        """The match is over and recorded."""


class NullObserver:
    """An observer that ignores everything (unit tests, matches nobody watches)."""

    def match_started(self, runner: MatchRunner) -> None:
        """Ignore."""

    def moved(self, runner: MatchRunner, moved: Moved, analysis: Analysis | None) -> None:
        """Ignore."""

    def match_ended(self, runner: MatchRunner, end: MatchEnd) -> None:
        """Ignore."""


# Inbox events -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _MoveIn:
    player: int
    ply: int
    move: object
    analysis: Analysis | None
    at: float
    ref: str | None


@dataclass(frozen=True, slots=True)
class _ResignIn:
    player: int


@dataclass(frozen=True, slots=True)
class _Attach:
    player: int
    link: PlayerLink


@dataclass(frozen=True, slots=True)
class _Detach:
    player: int
    link: PlayerLink
    at: float


@dataclass(frozen=True, slots=True)
class _Abort:
    reason: str


_InboxEvent = _MoveIn | _ResignIn | _Attach | _Detach | _Abort


@dataclass(frozen=True, slots=True)
class _Ending:
    """Everything ``_finish`` needs to know about how the match ended."""

    winner: int | None
    termination: Termination
    fault: str | None
    faulty_player: int | None
    rated: bool
    reason: str


class MatchRunner:
    """Referee of one match between two named bots; run it with ``await runner.run()``."""

    def __init__(
        self,
        match_id: str,
        game: str,
        players: tuple[str, str],
        time_control: TimeControl,
        links: tuple[PlayerLink | None, PlayerLink | None],
        *,
        recorder: MatchRecorder,
        clock: Clock,
        observer: MatchObserver | None = None,
        grace_s: float = DEFAULT_GRACE_S,
        rated: bool = True,
        ratings: tuple[float, float] = (1500.0, 1500.0),
        pace_s: float = 0.0,
    ) -> None:
        if players[0] == players[1]:
            raise ValueError("a bot cannot play itself")
        self.match_id = match_id
        self.game = game
        self.players = players
        self.time_control = time_control
        self.ratings = ratings
        self.rated = rated
        self.grace_s = grace_s
        self.pace_s = pace_s
        """Pause between a move and the next ``your_turn`` so people can follow (0: none)."""
        self.state: GameState = new_game(game)
        self.start_position = self.state.encode()
        # The current position's text: encoded once per move, sent in moved and your_turn.
        self._position = self.start_position
        self.last_analysis: Analysis | None = None
        self.end: MatchEnd | None = None
        self._recorder = recorder
        self._clock = clock
        self._observer: MatchObserver = observer or NullObserver()
        self._links: list[PlayerLink | None] = list(links)
        # A player who vanished while being paired starts its grace window right away.
        self._gone_since = [None if link else clock.now() for link in links]
        self._has_moved = [False, False]
        self._game_clock = GameClock.start(time_control.move_ms, time_control.bank_ms)
        self._clocks_of: ClockSnapshot | None = None  # what ``_clocks`` was made from
        self._clocks = self.clocks()
        self._turn_started = 0.0
        self._turn_rtt_ms = 0.0
        self._turn_deadline = 0.0
        self._inbox: asyncio.Queue[_InboxEvent] = asyncio.Queue()
        # True while the runner task waits for its inbox with nothing queued: then an
        # ordinary move may be refereed on the spot (``_move_now``).
        self._idle = False
        self._finished = False
        # The ply a move was last queued for: only the first answer to a turn is "expected".
        self._answered_ply = -1

    # Public, synchronous entry points for the connection layer -------------------

    @property
    def finished(self) -> bool:
        """True once an ending has been decided (it may still be being recorded)."""
        return self._finished

    def seat_of(self, bot: str) -> int:
        """The player index of ``bot``; ``not_a_player`` when it does not play here."""
        try:
            return self.players.index(bot)
        except ValueError:
            raise ProtocolError(
                ErrorCode.NOT_A_PLAYER, f"{bot} does not play in match {self.match_id}"
            ) from None

    def submit_move(
        self,
        bot: str,
        ply: int,
        move: object,
        analysis: Analysis | None = None,
        ref: str | None = None,
    ) -> bool:
        """Queue ``bot``'s move; raises ``ProtocolError`` when it cannot be this turn's answer.

        The move's legality is judged by the runner (an illegal move loses), but a
        move for the wrong ply, out of turn or after the end is refused here and
        changes nothing. Returns True for the first move queued for this turn (the
        answer the runner asked for), False for a repeat, which the runner refuses.
        """
        player = self.seat_of(bot)
        self._check_turn(player, ply)
        first = self._answered_ply != ply
        self._answered_ply = ply
        at = self._clock.now()
        if not self._move_now(player, move, analysis, at):
            self._inbox.put_nowait(_MoveIn(player, ply, move, analysis, at, ref))
        return first

    def resign(self, bot: str) -> None:
        """Queue ``bot``'s resignation."""
        player = self.seat_of(bot)
        if self._finished:
            raise ProtocolError(ErrorCode.MATCH_OVER, f"match {self.match_id} is over")
        self._inbox.put_nowait(_ResignIn(player))

    def attach(self, bot: str, link: PlayerLink) -> None:
        """``bot`` is (re)connected on ``link``; it gets ``match_start`` again and plays on."""
        self._inbox.put_nowait(_Attach(self.seat_of(bot), link))

    def detach(self, bot: str, link: PlayerLink) -> None:
        """``link`` of ``bot`` closed; its clock keeps running and its grace window starts."""
        self._inbox.put_nowait(_Detach(self.seat_of(bot), link, self._clock.now()))

    def abort(self, reason: str) -> None:
        """End the match as aborted by the infrastructure (server shutdown): unrated."""
        self._inbox.put_nowait(_Abort(reason))

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
            ratings=(round(self.ratings[0], 1), round(self.ratings[1], 1)),
            time_control=self.time_control,
            moves=tuple(self.state.moves),
            position=self._position,
            clocks=self.clocks(),
            status="finished" if self.end is not None else "live",
            last_event=last_event,
            end=self.end,
            analysis=self.last_analysis,
        )

    # The referee task -------------------------------------------------------------

    async def run(self) -> MatchEnd:
        """Referee the match to its end and return the ``match_end`` that was sent."""
        for player in (0, 1):
            self._send_start(player)
        self._observer.match_started(self)
        self._begin_turn()
        try:
            while not self._finished:
                event = await self._next_event()
                if event is None:
                    await self._on_deadline()
                else:
                    await self._handle(event)
        except Exception:
            # A referee bug must still end the match, as the infrastructure's fault.
            log.exception("match %s: runner failed", self.match_id)
            await self._finish(
                _Ending(
                    None,
                    Termination.ABORTED,
                    "infrastructure",
                    None,
                    False,
                    "internal server error",
                )
            )
        # Anything still queued (a late move, a duplicate resign) gets its answer.
        while not self._inbox.empty():
            self._reject_after_end(self._inbox.get_nowait())
        assert self.end is not None
        return self.end

    async def _next_event(self) -> _InboxEvent | None:
        """The next queued event, or None when a deadline (turn or grace) passed first."""
        if not self._inbox.empty():
            return self._inbox.get_nowait()
        try:
            async with self._clock.timeout(self._next_deadline() - self._clock.now()):
                self._idle = True
                try:
                    return await self._inbox.get()
                finally:
                    self._idle = False
        except TimeoutError:
            return None

    def _next_deadline(self) -> float:
        deadlines = [self._turn_deadline]
        deadlines += [gone + self.grace_s for gone in self._gone_since if gone is not None]
        return min(deadlines)

    async def _handle(self, event: _InboxEvent) -> None:
        match event:
            case _MoveIn():
                await self._on_move(event)
            case _ResignIn(player):
                other = self.players[1 - player]
                await self._finish(
                    _Ending(
                        1 - player,
                        Termination.RESIGN,
                        None,
                        None,
                        self.rated,
                        f"{self.players[player]} resigned; {other} wins",
                    )
                )
            case _Attach(player, link):
                self._links[player] = link
                self._gone_since[player] = None
                self._send_start(player)
                if self.state.to_move == player:
                    self._send_your_turn(player)
            case _Detach(player, link, at):
                if self._links[player] is link:
                    self._links[player] = None
                    self._gone_since[player] = at
            case _Abort(reason):
                await self._finish(
                    _Ending(None, Termination.ABORTED, "infrastructure", None, False, reason)
                )

    async def _on_move(self, event: _MoveIn) -> None:
        player = event.player
        try:
            self._check_turn(player, event.ply)
        except ProtocolError as exc:
            self._send_error(player, exc, event.ref)
            return
        think_ms = max(0.0, (event.at - self._turn_started) * 1000.0)
        if not self._game_clock.charge(player, think_ms, self._turn_rtt_ms):
            await self._flag(player)
            self._send_error(
                player,
                ProtocolError(ErrorCode.MATCH_OVER, "your move arrived after your time ran out"),
                event.ref,
            )
            return
        try:
            self.state.check_move(event.move)
        except IllegalMoveError as exc:
            await self._finish(
                _Ending(
                    1 - player,
                    Termination.ILLEGAL_MOVE,
                    "bot",
                    player,
                    self.rated,
                    f"{self.players[player]} played an illegal move: {exc}",
                )
            )
            return
        assert isinstance(event.move, int)  # check_move accepts ints only
        await self._apply(player, event.move, think_ms, event.analysis)

    async def _apply(
        self, player: int, move: int, think_ms: float, analysis: Analysis | None
    ) -> None:
        ply = self.state.ply
        self._play(player, move, self.state.play(move), analysis)
        think = round(think_ms)
        await self._recorder.record_move(
            self.match_id, ply, player, move, think, round(self._turn_rtt_ms)
        )
        self._announce(player, ply, move, think, analysis)
        outcome = self.state.outcome()
        if outcome is not None:
            await self._finish(self._ending_by_rules(outcome))
        else:
            if self.pace_s > 0:
                # Before the turn begins, so the pause is on nobody's clock.
                await asyncio.sleep(self.pace_s)
            self._begin_turn()

    def _move_now(
        self, player: int, move: object, analysis: Analysis | None, at: float
    ) -> bool:
        """Referee an ordinary move at once, without a trip through the runner task.

        Only while the runner waits idle, and only for a legal move, in time,
        that does not end the game (an ending awaits the store) and needs no
        pause: exactly what ``_on_move`` would do with it, minus the task
        switch. False (nothing changed) leaves the move to the runner task.
        The runner's pending wake-up keeps the previous turn's deadline; when
        it fires early, ``_on_deadline`` finds nothing due and waits again.
        """
        if not self._idle or not self._inbox.empty() or self.pace_s > 0:
            return False
        if type(move) is not int:
            return False
        try:
            after = self.state.play(move)  # play() checks legality: once, not twice
        except IllegalMoveError:
            return False  # the runner task adjudicates it (a loss)
        if after.outcome() is not None:
            return False
        think_ms = (at - self._turn_started) * 1000.0
        if think_ms < 0.0:
            think_ms = 0.0
        if not self._game_clock.fits(player, think_ms, self._turn_rtt_ms):
            return False
        ply = self.state.ply
        think = round(think_ms)
        if not self._recorder.record_move_now(
            self.match_id, ply, player, move, think, round(self._turn_rtt_ms)
        ):
            return False
        self._game_clock.charge(player, think_ms, self._turn_rtt_ms)
        self._play(player, move, after, analysis)
        self._announce(player, ply, move, think, analysis)
        self._begin_turn()
        return True

    def _play(self, player: int, move: int, after: GameState, analysis: Analysis | None) -> None:
        self.state = after
        self._position = after.encode_after(self._position, move)
        self._has_moved[player] = True
        self.last_analysis = analysis

    def _announce(
        self, player: int, ply: int, move: int, think_ms: int, analysis: Analysis | None
    ) -> None:
        moved = Moved(
            match_id=self.match_id,
            ply=ply,
            player=player,
            move=move,
            position=self._position,
            think_ms=think_ms,
            clocks=self.clocks(),
        )
        self._broadcast(moved)
        self._observer.moved(self, moved, analysis)

    def _ending_by_rules(self, outcome: Outcome) -> _Ending:
        if outcome.winner is None:
            reason = "draw: the board is full"
        else:
            reason = f"{self.players[outcome.winner]} completed a line"
        return _Ending(outcome.winner, outcome.termination, None, None, self.rated, reason)

    async def _on_deadline(self) -> None:
        now = self._clock.now()
        for player in (0, 1):
            gone = self._gone_since[player]
            if gone is not None and now >= gone + self.grace_s:
                await self._finish(self._no_show(player, Termination.DISCONNECT))
                return
        if now >= self._turn_deadline:
            await self._flag(self.state.to_move)

    async def _flag(self, player: int) -> None:
        """``player`` ran out of time; a bot that is away loses by disconnect instead."""
        away = self._links[player] is None
        await self._finish(
            self._no_show(player, Termination.DISCONNECT if away else Termination.TIMEOUT)
        )

    def _no_show(self, player: int, termination: Termination) -> _Ending:
        name = self.players[player]
        what = "disconnected" if termination is Termination.DISCONNECT else "ran out of time"
        if not self._has_moved[player]:
            # Never having moved is a no-show, not a game: nobody wins, nobody's rating moves,
            # and (docs/protocol.md) an abort carries no bot fault; the reason names the bot.
            return _Ending(
                None,
                Termination.ABORTED,
                None,
                None,
                False,
                f"{name} {what} before its first move; match aborted",
            )
        return _Ending(
            1 - player,
            termination,
            "bot",
            player,
            self.rated,
            f"{name} {what}; {self.players[1 - player]} wins",
        )

    async def _finish(self, ending: _Ending) -> None:
        """The one place a match ends: record, rate, tell everyone. Runs at most once."""
        if self._finished:
            return
        self._finished = True
        rated = ending.rated and ending.fault != "infrastructure"
        changes: list[RatingChange] = []
        try:
            stored = await self._recorder.finish_match(
                self.match_id,
                ending.winner,
                ending.termination.value,
                ending.fault,
                rated,
                ending.reason,
            )
            changes = [RatingChange(bot=c.bot, before=c.before, after=c.after) for c in stored]
        except Exception:
            # The players still deserve a result; the store logs its own failure.
            log.exception("could not record the end of match %s", self.match_id)
        # An aborted match has no result at all ("*"), not a draw.
        aborted = ending.termination is Termination.ABORTED
        result = "*" if aborted else Outcome(ending.winner, ending.termination).result
        self.end = MatchEnd(
            match_id=self.match_id,
            winner=ending.winner,
            result=result,
            termination=ending.termination.value,
            fault=ending.fault,
            faulty_player=ending.faulty_player,
            rated=rated,
            rating_changes=tuple(changes),
            reason=ending.reason,
        )
        self._broadcast(self.end)
        self._observer.match_ended(self, self.end)

    # Helpers ------------------------------------------------------------------------

    def _check_turn(self, player: int, ply: int) -> None:
        if self._finished:
            raise ProtocolError(ErrorCode.MATCH_OVER, f"match {self.match_id} is over")
        if player != self.state.to_move:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, "it is your opponent's move")
        if ply != self.state.ply:
            raise ProtocolError(
                ErrorCode.STALE_PLY, f"the move must answer ply {self.state.ply}, not {ply}"
            )

    def _begin_turn(self) -> None:
        mover = self.state.to_move
        link = self._links[mover]
        self._turn_started = self._clock.now()
        self._turn_rtt_ms = link.rtt_ms if link is not None else 0.0
        allowance_ms = self._game_clock.allowance_ms(mover, self._turn_rtt_ms)
        self._turn_deadline = self._turn_started + allowance_ms / 1000.0
        self._send_your_turn(mover)

    def _send_your_turn(self, player: int) -> None:
        elapsed_ms = (self._clock.now() - self._turn_started) * 1000.0
        left_ms = round(self._game_clock.time_left_ms(player) - elapsed_ms)
        if left_ms < 0:
            left_ms = 0
        self._send(
            player,
            YourTurn(
                match_id=self.match_id,
                ply=self.state.ply,
                position=self._position,
                legal_moves=tuple(self.state.legal_moves()),
                time_left_ms=left_ms,
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

    def _reject_after_end(self, event: _InboxEvent) -> None:
        if isinstance(event, _MoveIn):
            self._send_error(
                event.player,
                ProtocolError(ErrorCode.MATCH_OVER, f"match {self.match_id} is over"),
                event.ref,
            )

    def _send_error(self, player: int, exc: ProtocolError, ref: str | None) -> None:
        self._send(player, Error(code=exc.code, message=exc.message, ref=ref or exc.ref))

    def _send(self, player: int, message: ServerMessage) -> None:
        link = self._links[player]
        if link is not None:
            link.send(message)

    def _broadcast(self, message: ServerMessage) -> None:
        for player in (0, 1):
            self._send(player, message)
