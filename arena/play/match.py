"""A live match: its ``Referee`` wired to the players' connections, the store, spectators, time.

``Match`` is the thin asynchronous shell around the synchronous referee. The
connection layer calls ``move``, ``resign``, ``attach``, ``detach`` and
``abort``; each hands the input to the referee at once, with the clock's
time, and re-arms one timer for the referee's next deadline. The referee's
outputs come back through the ``Outlet`` methods below: messages go to the
players' links (which never block), moves to the recorder's group commit,
events to the observer (spectators, MQTT). When the referee decides the
match, the ending is committed by a task the shell starts, and only then is
``match_end`` sent and the match let go (``on_finished``): a result is told
only once it is stored, and a bot counts as playing until then.

Side effects are injected: ``MatchRecorder`` (the store), ``MatchObserver``
(spectators and the event sink), ``Clock`` (time), ``PlayerLink`` (a bot's
connection).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

from arena.errors import StoreError
from arena.play.clock import Clock, TimerHandle
from arena.play.referee import Ending, Referee
from protocol.errors import ProtocolError
from protocol.games import Fault, Termination
from protocol.messages import (
    Analysis,
    ErrorCode,
    MatchEnd,
    Moved,
    ServerMessage,
    Snapshot,
    TimeControl,
)

log = logging.getLogger(__name__)


class PlayerLink(Protocol):
    """The match's view of a bot's connection: a non-blocking send and the measured round trip."""

    def send(self, message: ServerMessage) -> None:
        """Queue ``message`` for the bot; must never block or raise on a slow client."""
        ...

    @property
    def rtt_ms(self) -> float:
        """The measured network round trip in milliseconds (0 before any ping)."""
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
    """The persistence a match needs (``arena.store.Store`` satisfies it)."""

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
        """Queue one applied move, with its mover's analysis, for the next group commit;
        ``player`` is the seat."""
        ...

    async def finish_match(
        self,
        match_id: str,
        winner: int | None,
        termination: Termination,
        fault: Fault | None,
        rated: bool,
        reason: str = "",
    ) -> Sequence[RatingChangeLike]:
        """Commit the result and rating changes; returns once they are committed."""
        ...


class MatchObserver(Protocol):
    """Who else hears about the match: spectators and the event sink (``SpectatorHub``)."""

    def match_started(self, match: Match) -> None:
        """The match began (its players have been sent ``match_start``)."""

    def moved(self, match: Match, moved: Moved, analysis: Analysis | None) -> None:
        """A move was applied; ``analysis`` is the mover's, for spectators only."""

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        """The match is over and its result committed."""


class NullObserver:
    """An observer that ignores everything (unit tests, matches nobody watches)."""

    def match_started(self, match: Match) -> None:
        """Ignore."""

    def moved(self, match: Match, moved: Moved, analysis: Analysis | None) -> None:
        """Ignore."""

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        """Ignore."""


class ObserverGroup:
    """Several observers heard as one, in the order given (spectators, then leaderboards)."""

    def __init__(self, *observers: MatchObserver) -> None:
        self._observers = observers

    def match_started(self, match: Match) -> None:
        """Tell each observer."""
        for observer in self._observers:
            observer.match_started(match)

    def moved(self, match: Match, moved: Moved, analysis: Analysis | None) -> None:
        """Tell each observer."""
        for observer in self._observers:
            observer.moved(match, moved, analysis)

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        """Tell each observer."""
        for observer in self._observers:
            observer.match_ended(match, end)


Spawn = Callable[[Coroutine[Any, Any, None], str], object]
"""Runs a coroutine as a supervised task (``Supervisor.spawn``)."""


def _spawn_plain(coro: Coroutine[Any, Any, None], name: str) -> object:
    return asyncio.get_running_loop().create_task(coro, name=name)


class Match:
    """One live match: see the module docstring. ``start()`` begins it."""

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
        on_finished: Callable[[Match], None] | None = None,
        spawn: Spawn | None = None,
        **referee_options: Any,
    ) -> None:
        self.match_id = match_id
        self.game = game
        self.players = players
        self.time_control = time_control
        self.referee = Referee(match_id, game, players, time_control, self, **referee_options)
        self._links: list[PlayerLink | None] = list(links)
        self._recorder = recorder
        self._clock = clock
        self._observer: MatchObserver = observer or NullObserver()
        self._on_finished = on_finished
        self._spawn = spawn or _spawn_plain
        self._timer: TimerHandle | None = None
        self._timer_at = math.inf
        self.done = asyncio.Event()
        """Set once the match is over: its end committed and ``match_end`` sent."""

    # Inputs from the connection layer -------------------------------------------

    def start(self) -> None:
        """Send ``match_start``, tell the observer, begin the first turn."""
        present = (self._links[0] is not None, self._links[1] is not None)
        self._guarded(self.referee.start, present, self._clock.now())
        self._observer.match_started(self)

    def seat_of(self, bot: str) -> int:
        """The seat of ``bot``; ``not_a_player`` when it does not play here."""
        if bot == self.players[0]:
            return 0
        if bot == self.players[1]:
            return 1
        raise ProtocolError(ErrorCode.NOT_A_PLAYER, f"{bot} does not play in match {self.match_id}")

    def move(
        self, bot: str, ply: int, move: object, analysis: Analysis | None, ref: str | None
    ) -> None:
        """``bot``'s answer to turn ``ply``; raises ``ProtocolError`` when it cannot be one."""
        seat = self.seat_of(bot)
        self._guarded(self.referee.move, seat, ply, move, analysis, ref, self._clock.now())

    def resign(self, bot: str, reason: str | None = None) -> None:
        """``bot`` resigns, saying why when ``reason`` is given."""
        self._guarded(self.referee.resign, self.seat_of(bot), reason)

    def link(self, bot: str) -> PlayerLink | None:
        """The connection ``bot`` plays this match on (None while it is away)."""
        return self._links[self.seat_of(bot)]

    def attach(self, bot: str, link: PlayerLink) -> None:
        """``bot`` is (re)connected on ``link``; it gets ``match_start`` again and plays on."""
        seat = self.seat_of(bot)
        self._links[seat] = link
        self._guarded(self.referee.attach, seat, self._clock.now())

    def detach(self, bot: str, link: PlayerLink) -> None:
        """``link`` of ``bot`` closed (unless a newer connection replaced it meanwhile)."""
        seat = self.seat_of(bot)
        if self._links[seat] is link:
            self._links[seat] = None
            self._guarded(self.referee.detach, seat, self._clock.now())

    def abort(self, reason: str) -> None:
        """End the match as aborted by the arena (unrated)."""
        self._guarded(self.referee.abort, reason)

    def snapshot(self, last_event: int) -> Snapshot:
        """The full state for a spectator who has seen events up to ``last_event``."""
        return self.referee.snapshot(last_event)

    @property
    def decided(self) -> bool:
        """True once the referee has decided the ending (it may still be being committed)."""
        return self.referee.ending is not None

    @property
    def rated(self) -> bool:
        """Whether the match counts for ratings (as the referee was told at the start)."""
        return self.referee.rated

    @property
    def ply(self) -> int:
        """How many moves have been played."""
        return self.referee.state.ply

    @property
    def position(self) -> str:
        """The current position in the game's wire encoding."""
        return self.referee.position

    @property
    def ending(self) -> Ending | None:
        """The referee's decided ending (None while the match is being played)."""
        return self.referee.ending

    @property
    def end(self) -> MatchEnd | None:
        """The committed ``match_end`` (None until the ending is committed)."""
        return self.referee.end

    # The referee's outlet -------------------------------------------------------

    def send(self, player: int, message: ServerMessage) -> None:
        """Queue ``message`` for seat ``player`` if it is connected."""
        link = self._links[player]
        if link is not None:
            link.send(message)

    def rtt_ms(self, player: int) -> float:
        """Seat ``player``'s measured round trip (0 while it is away)."""
        link = self._links[player]
        return link.rtt_ms if link is not None else 0.0

    def record_move(
        self,
        ply: int,
        player: int,
        move: int,
        think_ms: int,
        rtt_ms: int,
        analysis: Analysis | None = None,
    ) -> None:
        """Queue the move, with its analysis, for the group commit."""
        self._recorder.record_move(self.match_id, ply, player, move, think_ms, rtt_ms, analysis)

    def moved(self, moved: Moved, analysis: Analysis | None) -> None:
        """Hand the move to spectators."""
        self._observer.moved(self, moved, analysis)

    def ended(self, ending: Ending) -> None:
        """Commit ``ending`` in the background; ``match_end`` follows the commit."""
        self._cancel_timer()
        self._spawn(self._commit(ending), f"match-end-{self.match_id}")

    # Internals ------------------------------------------------------------------

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        """Run one referee step, then re-arm the timer; a referee bug aborts the match."""
        try:
            step(*args)
        except ProtocolError:
            raise
        except Exception:
            log.exception("match %s: the referee failed", self.match_id)
            if not self.decided:
                self.referee.abort("internal server error")
        finally:
            self._arm()

    def _arm(self) -> None:
        due = self.referee.deadline
        # A timer due later than needed is moved; one due earlier is kept (it finds
        # nothing to do and re-arms), which saves a cancel and a schedule per move.
        if due < self._timer_at:
            self._cancel_timer()
            if due != math.inf:
                self._timer_at = due
                self._timer = self._clock.call_at(due, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = math.inf
        self._guarded(self.referee.tick, self._clock.now())

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = math.inf

    async def _commit(self, ending: Ending) -> None:
        try:
            # The incremental Elo it returns stays inside: a bot's rating is the
            # leaderboard's fit, told after the refit (``arena.leaderboard.notices``).
            await self._recorder.finish_match(
                self.match_id,
                ending.winner,
                ending.termination,
                ending.fault,
                ending.rated,
                ending.reason,
            )
        except asyncio.CancelledError:
            # Shutdown gave up waiting for the store: nothing is told that is not stored.
            log.warning("match %s: end not committed; its players are not told", self.match_id)
            self._let_go()
            raise
        except StoreError as exc:
            # Not committed (journaled at shutdown), or refused for good (the match is no
            # longer live there): the players are not told a result the database lacks.
            log.warning("match %s: its end was not committed: %s", self.match_id, exc)
            self._let_go()
            return
        except Exception:
            log.exception("match %s: recording its end failed", self.match_id)
            self._let_go()
            return
        end = self.referee.close()
        self._observer.match_ended(self, end)
        self._let_go()

    def _let_go(self) -> None:
        self.referee.retire()
        self._links = [None, None]
        self.done.set()
        if self._on_finished is not None:
            self._on_finished(self)
