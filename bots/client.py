"""The bot client runtime: connect, authenticate, seek or answer challenges, play, reconnect.

::

    config = ClientConfig(url="ws://127.0.0.1:8765", name="alice", token=token, game="connect4")
    with make_strategy_from_spec("mcts:sims=5000", game="connect4") as strategy:
        summary = await BotClient(config, StrategyChooser(strategy)).run()

``run`` plays until ``config.games`` matches are finished or ``stop()`` is
called (``install_stop_signals`` wires SIGINT/SIGTERM to it). Moves are chosen
by a ``MoveChooser``: ``StrategyChooser`` wraps a ``bots`` strategy (searching
in its own process pool, so this event loop keeps answering pings), and
``bots.simple`` wraps a plain function.

A dropped connection is retried with capped, jittered exponential backoff; the
server re-sends ``match_start`` (with the moves so far) and ``your_turn`` to a
bot that comes back within its grace period, and the bot plays on. A move
computed while the socket was down is kept and sent when the server asks for
that ply again.

Errors raised here::

    ClientError                 root of the client errors (e.g. a malformed URL)
    └── RefusedError            the server refused this bot for good: auth_failed,
                                unsupported_version, replaced, or a seek it can
                                never accept (no_such_game, bad_value); carries
                                ``code``. Retrying cannot help, so ``run`` raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import random
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from bots.strategy import SearchInfo, Strategy
from protocol.errors import GameError, ProtocolError
from protocol.games import GameState, decode_state
from protocol.messages import (
    MAX_SERVER_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    Accept,
    Analysis,
    CancelSeek,
    Challenge,
    ChallengeDeclined,
    ChallengeReceived,
    ClientMessage,
    CloseCode,
    Decline,
    Error,
    ErrorCode,
    Hello,
    MatchEnd,
    MatchStart,
    Move,
    Moved,
    MoveStat,
    Seek,
    ServerMessage,
    TimeControl,
    Welcome,
    YourTurn,
    parse_server_message,
)
from protocol.messages.codes import MAX_ANALYSIS_MOVES
from protocol.messages.values import BOT_NAME_PATTERN

log = logging.getLogger(__name__)

FATAL_CODES = frozenset({ErrorCode.AUTH_FAILED, ErrorCode.UNSUPPORTED_VERSION, ErrorCode.REPLACED})
"""Error codes after which reconnecting cannot help: ``run`` raises ``RefusedError``."""

DEFAULT_TIME_CONTROL = TimeControl(move_ms=1000, bank_ms=0)
"""What a bot seeks unless told otherwise: one second per move, no bank."""

MAX_MATCHES = 64
"""The protocol's limit on ``hello.max_matches``."""

_FATAL_REQUEST_CODES = frozenset({ErrorCode.NO_SUCH_GAME, ErrorCode.BAD_VALUE})
_FATAL_CLOSE_CODES = frozenset({CloseCode.UNSUPPORTED_VERSION, CloseCode.REPLACED})
_RESUME_WAIT_S = 1.0  # how long after a reconnect the server gets to re-send live matches


class ClientError(Exception):
    """Root of the bot client's errors."""


class RefusedError(ClientError):
    """The server refused this bot in a way retrying cannot fix; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# Choosing moves ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decision:
    """A chosen move and, optionally, the search report sent with it."""

    move: int
    analysis: Analysis | None = None


class MoveChooser(Protocol):
    """What the client asks for a move; must not block the event loop while it thinks."""

    async def choose(self, state: GameState) -> Decision:
        """A legal move for ``state`` (a game in progress)."""
        ...


def analysis_from(info: SearchInfo | None) -> Analysis | None:
    """The wire ``Analysis`` for a search report, or None when the strategy did not search."""
    if info is None or (info.simulations == 0 and info.value is None and not info.moves):
        return None
    # Most visited first, so the cut to the protocol's limit keeps what matters.
    ranked = sorted(info.moves, key=lambda stat: -stat[1])[:MAX_ANALYSIS_MOVES]
    return Analysis(
        simulations=info.simulations,
        sims_per_s=_finite(info.sims_per_s, 1),
        value=_finite(info.value, 4),
        depth=info.depth,
        moves=tuple(
            MoveStat(move=move, visits=visits, value=_finite(value, 4))
            for move, visits, value in ranked
        ),
    )


def _finite(value: float | None, digits: int) -> float | None:
    # The protocol refuses NaN and infinities; rounding keeps each move frame small.
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


class StrategyChooser:
    """A ``MoveChooser`` over a ``bots`` strategy, reporting its search unless ``analysis=False``.

    The strategy is not closed here: its owner closes it (``strategy.close()``).
    """

    def __init__(self, strategy: Strategy, analysis: bool = True) -> None:
        self.strategy = strategy
        self.analysis = analysis
        # One search at a time, so ``last_search`` belongs to the move just chosen.
        self._lock = asyncio.Lock()

    async def choose(self, state: GameState) -> Decision:
        """Search in the strategy's pool (or a thread) without blocking the loop."""
        async with self._lock:
            move = await self.strategy.choose_move_async(state)
            info = self.strategy.last_search
        return Decision(move, analysis_from(info) if self.analysis else None)


# Configuration and results ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """How a bot connects and what it asks to play.

    ``games=None`` plays forever; ``challenge`` names a bot to challenge
    instead of seeking. The token is left out of ``repr`` so it never reaches a log.
    """

    url: str
    name: str
    token: str = field(repr=False)
    game: str
    time_control: TimeControl = DEFAULT_TIME_CONTROL
    games: int | None = None
    max_matches: int = 1
    accept_challenges: bool = True
    challenge: str | None = None
    seek: bool = True
    """False: never seek; play only the challenges accepted (a tournament's bots)."""
    retry_initial_s: float = 0.5
    retry_max_s: float = 10.0
    challenge_retry_s: float = 2.0
    open_timeout_s: float = 10.0
    ping_interval_s: float | None = 20.0
    ping_timeout_s: float | None = 20.0

    def __post_init__(self) -> None:
        # Caught here: the server would only answer a bad hello by timing it out.
        if not 1 <= self.max_matches <= MAX_MATCHES:
            raise ValueError(f"max_matches must be within 1-{MAX_MATCHES}")
        if self.games is not None and self.games < 1:
            raise ValueError("games must be at least 1 (or None to play forever)")
        if not re.fullmatch(BOT_NAME_PATTERN, self.name):
            raise ValueError(f"a bot name must match {BOT_NAME_PATTERN}")


@dataclass(frozen=True, slots=True)
class MatchReport:
    """How one match ended, from this bot's side."""

    match_id: str
    game: str
    opponent: str | None
    you: int | None
    outcome: str
    """``win``, ``loss``, ``draw`` or ``aborted``."""
    end: MatchEnd

    def line(self, name: str) -> str:
        """The one log line for this result."""
        seat = {0: " as first", 1: " as second"}.get(self.you if self.you is not None else -1, "")
        text = (
            f"match {self.match_id} {self.game} vs {self.opponent or '?'}{seat}: "
            f"{self.outcome} {self.end.result} ({self.end.termination}) - {self.end.reason}"
        )
        for change in self.end.rating_changes:
            if change.bot == name:
                text += f"; rating {change.before:.1f} -> {change.after:.1f}"
        return text


@dataclass(slots=True)
class ClientSummary:
    """What a run did: every finished match, connections opened, fallback moves played."""

    reports: list[MatchReport] = field(default_factory=list)
    connections: int = 0
    fallback_moves: int = 0
    """Moves the chooser failed to give (error, or an illegal move) replaced by a legal one."""


class Backoff:
    """Reconnection delays: ``initial`` growing by ``factor`` up to ``maximum``, with jitter.

    Each delay is drawn from ``[base * (1 - jitter), base]`` so many bots
    dropped by one server restart do not all return at the same instant.
    """

    def __init__(
        self,
        initial: float = 0.5,
        maximum: float = 10.0,
        factor: float = 2.0,
        jitter: float = 0.5,
        rng: random.Random | None = None,
    ) -> None:
        self.initial, self.maximum, self.factor, self.jitter = initial, maximum, factor, jitter
        self._rng = rng or random.Random()
        self._base = initial

    def next_delay(self) -> float:
        """The delay before the next attempt; each call grows the next one."""
        base = min(self._base, self.maximum)
        self._base = min(self._base * self.factor, self.maximum)
        return base * (1.0 - self.jitter * self._rng.random())

    def reset(self) -> None:
        """Start again from ``initial`` (after a connection the server accepted)."""
        self._base = self.initial


# The client -------------------------------------------------------------------------


@dataclass(slots=True)
class _Match:
    """A match this bot plays; ``ply`` is absolute (decoded states count from their position)."""

    match_id: str
    game: str
    players: tuple[str, str]
    you: int | None
    state: GameState | None
    ply: int


@dataclass(slots=True)
class _Search:
    """The move being chosen for one ply; ``result`` is kept to resend after a reconnect."""

    ply: int
    task: asyncio.Task[None] | None = None
    result: Move | None = None


class BotClient:
    """Plays as one bot on one server; see the module docstring."""

    def __init__(
        self,
        config: ClientConfig,
        chooser: MoveChooser,
        *,
        backoff: Backoff | None = None,
    ) -> None:
        self.config = config
        self.chooser = chooser
        self.summary = ClientSummary()
        self._backoff = backoff or Backoff(config.retry_initial_s, config.retry_max_s)
        self._quit = asyncio.Event()
        self._outbox: asyncio.Queue[ClientMessage] | None = None
        self._welcomed = False
        self._matches: dict[str, _Match] = {}
        self._resumable: set[str] = set()
        self._searches: dict[str, _Search] = {}
        self._seek_pending = False
        self._challenge_pending = False
        self._timers: list[asyncio.TimerHandle] = []
        self._ids = itertools.count(1)

    # Lifecycle ------------------------------------------------------------------------

    def stop(self) -> None:
        """Ask ``run`` to close the connection and return; safe from a signal handler."""
        self._quit.set()

    @property
    def finished(self) -> int:
        """Matches finished so far."""
        return len(self.summary.reports)

    async def run(self) -> ClientSummary:
        """Connect (again and again) and play until done or stopped; raises ``RefusedError``."""
        try:
            while not self._quit.is_set():
                try:
                    async with self._connect() as ws:
                        self.summary.connections += 1
                        await self._session(ws)
                except InvalidURI as exc:
                    raise ClientError(f"cannot connect to {self.config.url!r}: {exc}") from exc
                except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed) as exc:
                    log.warning("connection to %s failed or dropped: %s", self.config.url, exc)
                finally:
                    self._end_session()
                if self._quit.is_set():
                    break
                delay = self._backoff.next_delay()
                log.info("reconnecting in %.1f s", delay)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._quit.wait()
        finally:
            await self._cancel_searches()
        return self.summary

    def _connect(self) -> connect:
        return connect(
            self.config.url,
            compression=None,
            open_timeout=self.config.open_timeout_s,
            ping_interval=self.config.ping_interval_s,
            ping_timeout=self.config.ping_timeout_s,
            close_timeout=5.0,
            max_size=MAX_SERVER_MESSAGE_BYTES,
        )

    async def _session(self, ws: ClientConnection) -> None:
        """One connection: hello, then handle server messages until it closes."""
        hello = Hello(
            role="bot",
            version=PROTOCOL_VERSION,
            name=self.config.name,
            token=self.config.token,
            max_matches=self.config.max_matches,
        )
        await ws.send(hello.to_json())
        # One writer per connection keeps messages in the order they were posted.
        self._outbox = asyncio.Queue()
        helpers = [
            asyncio.create_task(self._write(ws, self._outbox)),
            asyncio.create_task(self._close_on_quit(ws)),
        ]
        try:
            async for frame in ws:
                try:
                    message = parse_server_message(frame)
                except ProtocolError as exc:
                    log.warning("ignoring a malformed server message: %s", exc)
                    continue
                try:
                    self._dispatch(message)
                except RefusedError:
                    raise
                except Exception:
                    # A client bug on one message must not forfeit every live match.
                    log.exception("failed to handle a %s message", message.type)
        finally:
            for helper in helpers:
                helper.cancel()
        code = ws.close_code
        if code in _FATAL_CLOSE_CODES and not self._quit.is_set():
            raise RefusedError(str(code), f"the server closed the connection with code {code}")

    @staticmethod
    async def _write(ws: ClientConnection, outbox: asyncio.Queue[ClientMessage]) -> None:
        with contextlib.suppress(ConnectionClosed):  # the reader sees the close and ends
            while True:
                message = await outbox.get()
                await ws.send(message.to_json())

    async def _close_on_quit(self, ws: ClientConnection) -> None:
        await self._quit.wait()
        await ws.close()

    def _end_session(self) -> None:
        self._outbox = None
        self._welcomed = False
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        # Remembered so a reconnect can wait for the server to resume them.
        self._resumable.update(self._matches)
        self._matches.clear()

    async def _cancel_searches(self) -> None:
        tasks = [s.task for s in self._searches.values() if s.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._searches.clear()

    def _post(self, message: ClientMessage) -> None:
        """Queue a message for the live connection; dropped when there is none.

        Nothing is lost that matters: seeks are sent again after the next
        welcome, and a move is resent when the server asks for its ply again.
        """
        if self._outbox is not None:
            self._outbox.put_nowait(message)

    def _later(self, delay: float, callback: Callable[[], None]) -> None:
        self._timers.append(asyncio.get_running_loop().call_later(delay, callback))

    # Dispatch -------------------------------------------------------------------------

    def _dispatch(self, message: ServerMessage) -> None:
        match message:
            case Welcome():
                self._on_welcome(message)
            case Error():
                self._on_error(message)
            case MatchStart():
                self._on_match_start(message)
            case YourTurn():
                self._on_your_turn(message)
            case Moved():
                self._on_moved(message)
            case MatchEnd():
                self._on_match_end(message)
            case ChallengeReceived():
                self._on_challenge(message)
            case ChallengeDeclined():
                log.info("%s declined challenge %s", message.by, message.challenge_id)
                self._challenge_pending = False
                self._later(self.config.challenge_retry_s, self._look_for_match)
            case _:
                log.debug("ignoring %s", message.type)

    def _on_welcome(self, welcome: Welcome) -> None:
        log.info("connected to %s as %s", welcome.server, welcome.name)
        self._welcomed = True
        self._backoff.reset()
        self._seek_pending = self._challenge_pending = False
        if self._resumable:
            # The server re-sends match_start for every match still live; the rest
            # ended while we were away and must not hold a seat any longer.
            self._later(_RESUME_WAIT_S, self._forget_unresumed)
        else:
            self._look_for_match()

    def _forget_unresumed(self) -> None:
        if self._resumable:
            log.info("matches %s ended while disconnected", ", ".join(sorted(self._resumable)))
            for match_id in self._resumable:
                self._drop_search(match_id)
            self._resumable.clear()
        self._look_for_match()

    def _on_error(self, error: Error) -> None:
        ref = error.ref or ""
        if error.code in FATAL_CODES:
            raise RefusedError(error.code, error.message)
        if ref.startswith(("seek-", "challenge-")) and error.code in _FATAL_REQUEST_CODES:
            raise RefusedError(error.code, error.message)
        if ref.startswith("challenge-"):
            log.info("challenge refused: %s (%s); retrying later", error.message, error.code)
            self._challenge_pending = False
            self._later(self.config.challenge_retry_s, self._look_for_match)
        elif ref.startswith("seek-") and error.code == ErrorCode.ALREADY_SEEKING:
            log.debug("seek not needed: %s", error.message)
        elif error.code == ErrorCode.SERVER_SHUTDOWN:
            log.info("server shutting down: %s", error.message)
        else:
            log.warning("server error %s: %s", error.code, error.message)

    def _on_match_start(self, start: MatchStart) -> None:
        try:
            state = decode_state(start.game, start.position).play_all(start.moves)
        except GameError as exc:
            log.error("cannot follow match %s: %s", start.match_id, exc)
            return
        resumed = start.match_id in self._resumable or start.match_id in self._matches
        self._resumable.discard(start.match_id)
        self._matches[start.match_id] = _Match(
            start.match_id, start.game, start.players, start.you, state, start.ply
        )
        # Results get an INFO line each; a start only matters when it is a resumption.
        log.log(
            logging.INFO if resumed else logging.DEBUG,
            "%s match %s (%s) vs %s at ply %d",
            "resumed" if resumed else "started",
            start.match_id,
            start.game,
            _opponent(start.players, start.you),
            start.ply,
        )
        if not resumed:
            self._seek_pending = False
            self._look_for_match()

    def _on_moved(self, moved: Moved) -> None:
        match = self._matches.get(moved.match_id)
        if match is None:
            return
        if match.state is not None and moved.ply == match.ply:
            with contextlib.suppress(GameError):
                match.state = match.state.play(moved.move)
                match.ply += 1
        if (
            match.state is None
            or moved.ply + 1 != match.ply
            or match.state.encode() != moved.position
        ):
            self._resync(match, moved.position, moved.ply + 1)

    def _resync(self, match: _Match, position: str, ply: int) -> bool:
        """Adopt the server's position (it is the referee); False if it cannot be decoded."""
        try:
            match.state = decode_state(match.game, position)
        except GameError as exc:
            log.error("match %s: undecodable position %r: %s", match.match_id, position, exc)
            return False
        match.ply = ply
        return True

    def _on_your_turn(self, turn: YourTurn) -> None:
        search = self._searches.get(turn.match_id)
        if search is not None and search.ply == turn.ply:
            # Asked again after a reconnect: resend a finished move, or let the search finish.
            if search.result is not None:
                self._post(search.result)
            return
        self._drop_search(turn.match_id)
        match = self._matches.get(turn.match_id)
        if match is None:  # a your_turn without match_start: its position is all we need
            match = _Match(turn.match_id, self.config.game, ("?", "?"), None, None, -1)
            self._matches[turn.match_id] = match
        in_step = (
            match.state is not None
            and match.ply == turn.ply
            and match.state.encode() == turn.position
        )
        if not in_step and not self._resync(match, turn.position, turn.ply):
            match.state = None  # better the fallback move than a search of a wrong position
        state = match.state
        search = _Search(turn.ply)
        self._searches[turn.match_id] = search
        search.task = asyncio.create_task(
            self._think(turn, state, search), name=f"think-{turn.match_id}-{turn.ply}"
        )

    async def _think(self, turn: YourTurn, state: GameState | None, search: _Search) -> None:
        move, analysis = turn.legal_moves[0], None
        try:
            if state is None:
                raise ClientError("no position to search")
            decision = await self.chooser.choose(state)
            if decision.move in turn.legal_moves:
                move, analysis = decision.move, decision.analysis
            else:
                self.summary.fallback_moves += 1
                log.error(
                    "match %s ply %d: the chooser picked illegal move %r; playing %d",
                    turn.match_id,
                    turn.ply,
                    decision.move,
                    move,
                )
        except asyncio.CancelledError:
            raise
        except Exception:
            self.summary.fallback_moves += 1
            log.exception(
                "match %s ply %d: choosing failed; playing %d", turn.match_id, turn.ply, move
            )
        search.result = Move(
            match_id=turn.match_id,
            ply=turn.ply,
            move=move,
            analysis=analysis,
            id=f"move-{next(self._ids)}",
        )
        self._post(search.result)

    def _drop_search(self, match_id: str) -> None:
        search = self._searches.pop(match_id, None)
        if search is not None and search.task is not None:
            search.task.cancel()

    def _on_match_end(self, end: MatchEnd) -> None:
        match = self._matches.pop(end.match_id, None)
        self._resumable.discard(end.match_id)
        self._drop_search(end.match_id)
        you = match.you if match else None
        report = MatchReport(
            match_id=end.match_id,
            game=match.game if match else self.config.game,
            opponent=_opponent(match.players, you) if match else None,
            you=you,
            outcome=_outcome(end, you),
            end=end,
        )
        self.summary.reports.append(report)
        log.info("%s", report.line(self.config.name))
        if self._games_left() <= 0 and not self._matches:
            log.info("played %d matches; done", self.finished)
            self._quit.set()
            return
        self._seek_pending = self._challenge_pending = False
        self._look_for_match()

    def _on_challenge(self, challenge: ChallengeReceived) -> None:
        accept = (
            self.config.accept_challenges
            and challenge.game == self.config.game
            and self._free_seats() > 0
        )
        log.info(
            "%s challenge %s from %s (%s)",
            "accepting" if accept else "declining",
            challenge.challenge_id,
            challenge.challenger,
            challenge.game,
        )
        if not accept:
            self._post(Decline(challenge_id=challenge.challenge_id))
            return
        if self._seek_pending and self._free_seats() <= 1:
            # This match takes the last seat: a seek paired as it ends would go unplayed.
            self._post(CancelSeek(game=self.config.game))
            self._seek_pending = False
        self._post(Accept(challenge_id=challenge.challenge_id))

    # Seeking --------------------------------------------------------------------------

    def _games_left(self) -> float:
        games = math.inf if self.config.games is None else self.config.games
        return games - self.finished

    def _free_seats(self) -> int:
        """Matches this bot may still start: limited by max_matches and the games left."""
        busy = len(self._matches) + len(self._resumable)
        left = self._games_left() - busy
        return int(max(0, min(self.config.max_matches - busy, left)))

    def _look_for_match(self) -> None:
        """Seek, or challenge ``config.challenge``, when a seat is free and nothing is pending."""
        if not self._welcomed or self._quit.is_set() or self._free_seats() <= 0:
            return
        config = self.config
        if config.challenge is not None:
            if not self._challenge_pending:
                self._challenge_pending = True
                self._post(
                    Challenge(
                        opponent=config.challenge,
                        game=config.game,
                        time_control=config.time_control,
                        id=f"challenge-{next(self._ids)}",
                    )
                )
        elif config.seek and not self._seek_pending:
            self._seek_pending = True
            self._post(
                Seek(
                    game=config.game, time_control=config.time_control, id=f"seek-{next(self._ids)}"
                )
            )


def _opponent(players: tuple[str, str], you: int | None) -> str | None:
    return players[1 - you] if you is not None else None


def _outcome(end: MatchEnd, you: int | None) -> str:
    if end.result == "*":
        return "aborted"
    if end.winner is None:
        return "draw"
    if you is None:
        return f"player {end.winner} won"
    return "win" if end.winner == you else "loss"


def install_stop_signals(callback: Callable[[], None]) -> Callable[[], None]:
    """Call ``callback`` on SIGINT and SIGTERM in the running loop; returns an undo function."""
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on Windows loops
            loop.add_signal_handler(sig, callback)
            installed.append(sig)

    def undo() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return undo
