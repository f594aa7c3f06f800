"""The bot client runtime: connect, authenticate, seek or answer challenges, play, reconnect.

::

    config = ClientConfig(url="wss://arena.example:8765", name="alice", token=token,
                          game="connect4")
    with make_strategy_from_spec("mcts:sims=5000", game="connect4") as strategy:
        summary = await BotClient(config, StrategyChooser(strategy)).run()

``run`` plays until ``config.games`` matches are finished or it is told to
stop (seeks and challenges go out through ``bots.client.seeking`` while a seat
is free): ``drain()`` finishes the live matches first (no more seeks, challenges
declined), ``forfeit()`` resigns them, ``stop()`` just closes the connection.
``bots.client.signals.install_stop_signals(client.on_signal, client.forfeit)``
makes SIGINT/SIGTERM drain, a second one forfeit, and SIGHUP forfeit. Moves
are chosen by a ``MoveChooser`` (``bots.client.choosing``): ``StrategyChooser``
wraps a ``bots`` strategy (searching in its own process pool, so this event
loop keeps answering pings), and ``bots.client.simple`` wraps a plain function.
Each move is asked for with its ``Budget``: the deadline from
``your_turn``'s clock, the measured round trip and the safety margin
(``bots.budget``).

A dropped connection is retried with capped, jittered exponential backoff
(with ``fallback_urls``, each URL in turn is tried at once first: the nodes
of one arena, so the bot fails over to another when one dies;
``bots.client.route``); the server re-sends ``match_start`` (with the moves
so far) and ``your_turn`` to a bot that comes back within its grace period,
and the bot plays on. A move computed while the socket was down is kept and
sent when the server asks for that ply again. ``wss://`` is verified
(``bots.client.transport``); a certificate that fails verification ends ``run``
with ``TLSVerifyError``. A ``redirect`` (another node hosts the bot's match)
is followed at once, under the same transport rules, and resets the
backoff; a target that cannot be reached sends the bot back to its own URLs,
and so does the end of the match it was redirected for (bots stay on the
nodes they were given, so the nodes keep their share).

The errors raised here are drawn in ``bots.client.errors``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from bots.budget import Budget, LagMeter, rtt_credit_ms
from bots.client.choosing import (
    Decision,
    MoveChooser,
    StrategyChooser,
    analysis_from,
    time_control_warning,
)
from bots.client.config import (
    DEFAULT_TIME_CONTROL,
    MAX_MATCHES,
    Backoff,
    ClientConfig,
    ClientSummary,
    MatchReport,
    rating_line,
)
from bots.client.errors import ClientError, InsecureURLError, RefusedError, TLSVerifyError
from bots.client.matches import MatchBook, Searches
from bots.client.route import Route
from bots.client.seeking import Seeking
from bots.client.transport import connection_tls, verify_failure
from protocol.errors import ProtocolError
from protocol.messages import (
    MAX_SERVER_MESSAGE_BYTES,
    Accept,
    ChallengeDeclined,
    ChallengeReceived,
    ClientMessage,
    CloseCode,
    Decline,
    Error,
    ErrorCode,
    MatchEnd,
    MatchStart,
    Moved,
    RatingReport,
    Redirect,
    Resign,
    ServerMessage,
    TimeControl,
    Welcome,
    YourTurn,
    parse_server_message,
)

__all__ = [
    "DEFAULT_TIME_CONTROL",
    "FATAL_CODES",
    "MAX_MATCHES",
    "Backoff",
    "BotClient",
    "ClientConfig",
    "ClientError",
    "ClientSummary",
    "Decision",
    "InsecureURLError",
    "MatchReport",
    "MoveChooser",
    "RefusedError",
    "StrategyChooser",
    "TLSVerifyError",
    "analysis_from",
]

log = logging.getLogger(__name__)

FATAL_CODES = frozenset({ErrorCode.AUTH_FAILED, ErrorCode.UNSUPPORTED_VERSION, ErrorCode.REPLACED})
"""Error codes after which reconnecting cannot help: ``run`` raises ``RefusedError``."""

_FATAL_REQUEST_CODES = frozenset({ErrorCode.NO_SUCH_GAME, ErrorCode.BAD_VALUE})
_FATAL_CLOSE_CODES = frozenset({CloseCode.UNSUPPORTED_VERSION, CloseCode.REPLACED})
_RESUME_WAIT_S = 1.0  # how long after a reconnect the server gets to re-send live matches
_SETTLE_S = 1.0  # how long a withdrawn seek may still turn into a match (pairing crossed it)
_FORFEIT_WAIT_S = 3.0  # how long resignations get to be confirmed before the socket closes
_RATING_WAIT_S = 5.0  # how long a bot done with its games waits for its last rating reports


class BotClient:
    """Plays as one bot on one server; see the module docstring.

    Raises ``ClientError`` at once for a URL it must not or cannot use
    (``bots.client.transport``).
    """

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
        self._tls = {
            url: connection_tls(url, config.ca_file, config.insecure) for url in config.urls
        }
        self._route = Route(
            config.urls, backoff or Backoff(config.retry_initial_s, config.retry_max_s)
        )
        self._quit = asyncio.Event()
        self._matches = MatchBook(config.game)
        self._searches = Searches(chooser, self._post, self.summary)
        # Per connection:
        self._outbox: asyncio.Queue[ClientMessage] | None = None
        self._ws: ClientConnection | None = None
        self._home_back = False  # on a fallback URL, the first one answers again
        self._welcomed = False
        self._received_at = 0.0
        self._rtt_floor_ms: float | None = None
        self._lag = LagMeter()
        self._timers: list[asyncio.TimerHandle] = []
        # Matchmaking and stopping:
        self._seeking = Seeking(config, self._post, self._matches.busy, lambda: self.finished)
        self._draining = False
        self._forfeiting = False
        self._settling = False
        self._warned: set[TimeControl] = set()
        self._ratings_due: set[str] = set()  # rated matches whose ``rating`` has not come
        self._done_playing = False

    @property
    def finished(self) -> int:
        """Matches finished so far."""
        return len(self.summary.reports)

    # Stopping -------------------------------------------------------------------------

    def stop(self) -> None:
        """Close the connection and return from ``run`` now; live matches are left running
        on the server (lost by ``disconnect`` unless the bot comes back in time)."""
        self._quit.set()

    def drain(self) -> None:
        """Finish the live matches, then return from ``run``; no new matches meanwhile.

        A pending seek is withdrawn (a match it was paired with just before is
        still played) and challenges are declined. Safe from a signal handler.
        """
        if self._draining:
            return
        self._draining = True
        live = self._matches.ids()
        if live:
            log.warning("finishing %s, then stopping; signal again to resign", ", ".join(live))
        if self._seeking.withdraw():
            self._settling = True
            self._later(_SETTLE_S, self._settled)
        self._check_drained()

    def forfeit(self) -> None:
        """Resign every live match, then close and return from ``run``.

        Matches of a connection that is down cannot be resigned: they end by
        ``disconnect`` at the server. Safe from a signal handler.
        """
        self._draining = self._forfeiting = True
        self._seeking.withdraw()
        live = sorted(self._matches.live)
        if not self._welcomed or not live:
            self._quit.set()
            return
        log.warning("resigning %s", ", ".join(live))
        for match_id in live:
            self._resign(match_id)
        self._later(_FORFEIT_WAIT_S, self._quit.set)

    def on_signal(self) -> None:
        """For SIGINT/SIGTERM: the first drains, any later one forfeits."""
        if self._draining:
            self.forfeit()
        else:
            self.drain()

    def _resign(self, match_id: str) -> None:
        self._searches.drop(match_id)
        self._post(Resign(match_id=match_id))

    def _settled(self) -> None:
        self._settling = False
        self._check_drained()

    def _check_drained(self) -> None:
        """End the run once a drain has no match left to play."""
        if self._draining and not (self._matches.busy() or self._settling or self._quit.is_set()):
            log.info("no live match left; stopping")
            self._quit.set()

    # Connections ----------------------------------------------------------------------

    async def run(self) -> ClientSummary:
        """Connect (again and again) and play until done or stopped.

        Raises ``RefusedError`` when the server refuses the bot for good,
        ``TLSVerifyError`` when its certificate cannot be verified.
        """
        try:
            while not self._quit.is_set():
                url = self._route.next_url()
                welcomed = False
                try:
                    async with self._connect(url) as ws:
                        self.summary.connections += 1
                        await self._session(ws)
                except InvalidURI as exc:
                    raise ClientError(f"cannot connect to {url!r}: {exc}") from exc
                except ssl.SSLCertVerificationError as exc:
                    raise verify_failure(url, exc, self.config.ca_file) from exc
                except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed) as exc:
                    log.warning("connection to %s failed or dropped: %s", url, exc)
                finally:
                    welcomed = self._welcomed
                    self._end_session()
                if self._forfeiting:  # what was not resigned cannot be any more
                    self._quit.set()
                self._check_drained()
                if self._quit.is_set():
                    break
                if self._route.redirect_to is not None:
                    continue  # another node hosts the match: go there now
                if not self._route.fail_over(welcomed):
                    continue
                delay = self._route.backoff.next_delay()
                log.info("reconnecting in %.1f s", delay)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._quit.wait()
        finally:
            await self._searches.cancel_all()
        return self.summary

    def _connect(self, url: str) -> connect:
        if url not in self._tls:  # a redirect's target, checked when it came
            self._tls[url] = connection_tls(url, self.config.ca_file, self.config.insecure)
        return connect(
            url,
            compression=None,
            open_timeout=self.config.open_timeout_s,
            ping_interval=self.config.ping_interval_s,
            ping_timeout=self.config.ping_timeout_s,
            close_timeout=5.0,
            max_size=MAX_SERVER_MESSAGE_BYTES,
            ssl=self._tls[url],
        )

    async def _session(self, ws: ClientConnection) -> None:
        """One connection: hello, then handle server messages until it closes."""
        await ws.send(self.config.hello().to_json())
        self._ws, self._rtt_floor_ms = ws, None
        # One writer per connection keeps messages in the order they were posted.
        self._outbox = asyncio.Queue()
        helpers = [
            asyncio.create_task(self._write(ws, self._outbox)),
            asyncio.create_task(self._close_on_quit(ws, self._outbox)),
            asyncio.create_task(self._measure_round_trip(ws)),
            asyncio.create_task(self._watch_home(ws)),
        ]
        try:
            async for frame in ws:
                self._received_at = time.monotonic()  # a move's clock runs from here
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
                if self._route.redirect_to is not None:
                    break  # closing this connection; run() connects to the target
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
                outbox.task_done()

    async def _close_on_quit(
        self, ws: ClientConnection, outbox: asyncio.Queue[ClientMessage]
    ) -> None:
        await self._quit.wait()
        # What was posted last (a withdrawn seek, a resignation) goes out before the close.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await outbox.join()
        await ws.close()

    @staticmethod
    async def _measure_round_trip(ws: ClientConnection) -> None:
        # The keepalive pings measure it every ping_interval; the first move needs it sooner.
        with contextlib.suppress(ConnectionClosed):
            await (await ws.ping())

    def _round_trip_ms(self) -> float:
        """The latest measured round trip (0 before any); keeps this connection's floor."""
        rtt_ms = self._ws.latency * 1000.0 if self._ws is not None else 0.0
        if rtt_ms > 0.0:
            floor = self._rtt_floor_ms
            self._rtt_floor_ms = rtt_ms if floor is None else min(floor, rtt_ms)
        return rtt_ms

    def _end_session(self) -> None:
        self._outbox = None
        self._ws = None
        self._welcomed = self._settling = False
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        # A move answered across a reconnect is timed from before the drop: no sample.
        self._lag.forget()
        # Remembered so a reconnect can wait for the server to resume them.
        self._matches.disconnected()

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
                if self._matches.moved(message):  # this bot's move: what did it cost?
                    self._lag.charged(message.match_id, message.ply, message.think_ms)
            case MatchEnd():
                self._on_match_end(message)
            case RatingReport():
                self._on_rating(message)
            case ChallengeReceived():
                self._on_challenge(message)
            case Redirect():
                self._on_redirect(message)
            case ChallengeDeclined():
                log.info("%s declined challenge %s", message.by, message.challenge_id)
                self._seeking.challenge_pending = False
                self._later(self.config.challenge_retry_s, self._look_for_match)
            case _:
                log.debug("ignoring %s", message.type)

    def _on_welcome(self, welcome: Welcome) -> None:
        log.info("connected to %s as %s", welcome.server, welcome.name)
        self._welcomed = True
        self._route.welcomed()
        self._seeking.forget()
        if self._matches.resumable:
            # The server re-sends match_start for every match still live; the rest
            # ended while we were away and must not hold a seat any longer.
            self._later(_RESUME_WAIT_S, self._forget_unresumed)
        else:
            self._look_for_match()

    def _on_redirect(self, redirect: Redirect) -> None:
        try:
            connection_tls(redirect.url, self.config.ca_file, self.config.insecure)
        except ClientError as exc:
            log.error("not following the redirect to %s: %s", redirect.url, exc)
            return
        log.info("redirected to %s: %s", redirect.url, redirect.reason or "another node")
        if redirect.match_id is not None:
            # Like a match of a dropped connection: resumed there, so no seek meanwhile.
            self._matches.resumable.add(redirect.match_id)
        self._route.redirected(redirect.url)

    def _forget_unresumed(self) -> None:
        gone = self._matches.forget_unresumed()
        if gone:
            log.info("matches %s ended while disconnected", ", ".join(sorted(gone)))
            for match_id in gone:
                self._searches.drop(match_id)
        self._look_for_match()
        self._check_drained()

    def _on_error(self, error: Error) -> None:
        ref = error.ref or ""
        if error.code in FATAL_CODES:
            raise RefusedError(error.code, error.message)
        if ref.startswith(("seek-", "challenge-")) and error.code in _FATAL_REQUEST_CODES:
            raise RefusedError(error.code, error.message)
        if ref.startswith("challenge-"):
            log.info("challenge refused: %s (%s); retrying later", error.message, error.code)
            self._seeking.challenge_pending = False
            self._later(self.config.challenge_retry_s, self._look_for_match)
        elif ref.startswith("seek-") and error.code == ErrorCode.ALREADY_SEEKING:
            log.debug("seek not needed: %s", error.message)
            if self.config.worker:
                # Another worker's seek is the bot's one seek: seek again once it is paired.
                self._seeking.seek_pending = False
                self._later(self.config.challenge_retry_s, self._look_for_match)
        elif error.code == ErrorCode.SERVER_SHUTDOWN:
            log.info("server shutting down: %s", error.message)
        else:
            log.warning("server error %s: %s", error.code, error.message)

    def _on_match_start(self, start: MatchStart) -> None:
        resumed = self._matches.start(start)
        if resumed is not False:  # resumed, or undecodable
            return
        tc = start.time_control
        warning = time_control_warning(self.chooser, tc, self.config.margin_ms)
        if warning and tc not in self._warned:  # once per time control
            self._warned.add(tc)
            log.warning("match %s: %s", start.match_id, warning)
        self._seeking.seek_pending = False
        if self._forfeiting:  # paired as the resignations went out
            self._resign(start.match_id)
        elif self._draining:
            log.info(
                "playing match %s: it was paired before the seek was withdrawn", start.match_id
            )
        else:
            self._look_for_match()

    def _on_your_turn(self, turn: YourTurn) -> None:
        if self._forfeiting:
            return  # resigned: no move will be played
        budget = Budget.for_turn(
            turn.time_left_ms,
            turn.bank_ms,
            self._received_at,
            self._round_trip_ms(),
            self._rtt_floor_ms,
            self.config.margin_ms,
            self._lag.lag_ms,
            self._matches.opponent_bank_ms(turn.match_id),
        )
        if self._searches.answer(turn, self._matches.position(turn), budget):
            assert budget.planned_ms is not None
            credit = rtt_credit_ms(self._rtt_floor_ms)
            self._lag.planned(turn.match_id, turn.ply, budget.planned_ms, credit)

    def _on_match_end(self, end: MatchEnd) -> None:
        self._searches.drop(end.match_id)
        self._lag.forget(end.match_id)
        report = self._matches.end(end)
        self.summary.reports.append(report)
        log.info("%s", report.line(self.config.name))
        if end.rated:
            self._ratings_due.add(end.match_id)
        self._check_drained()
        if self._seeking.games_left() <= 0 and not self._matches.live:
            log.info("played %d matches; done", self.finished)
            self._done_playing = True
            if not self._ratings_due:
                self._quit.set()
            else:  # the refit takes about a second: hear the last ratings, within reason
                self._later(_RATING_WAIT_S, self._quit.set)
            return
        self._seeking.forget()
        if (self._route.away or self._home_back) and not self._matches.busy():
            if self._home_back:
                self._route.go_home()  # ends this session; run() connects there
            else:
                self._route.redirect_to = self._route.home
            log.info("back to %s", self._route.redirect_to)
            return
        self._look_for_match()

    async def _watch_home(self, ws: ClientConnection) -> None:
        """On a fallback URL: once the first one answers again, go back to it (now if idle,
        else after the current match; ``bots.client.route``)."""
        self._home_back = False
        await self._route.home_is_back()
        self._home_back = True
        if not self._matches.busy() and not self._seeking.seek_pending:
            log.info("back to %s", self._route.urls[0])
            self._route.go_home()
            await ws.close()

    def _on_rating(self, report: RatingReport) -> None:
        self.summary.ratings.append(report)
        self._ratings_due.discard(report.match_id)
        line = rating_line(report, self.config.name)
        if line is not None:
            log.info("%s", line)
        if self._done_playing and not self._ratings_due:
            self._quit.set()

    def _on_challenge(self, challenge: ChallengeReceived) -> None:
        accept = (
            self.config.accept_challenges
            and not self._draining
            and challenge.game == self.config.game
            and self._seeking.free_seats() > 0
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
        if self._seeking.free_seats() <= 1:
            # This match takes the last seat: a seek paired as it ends would go unplayed.
            self._seeking.withdraw()
        self._post(Accept(challenge_id=challenge.challenge_id))

    # Seeking --------------------------------------------------------------------------

    def _look_for_match(self) -> None:
        """Seek or challenge (``bots.client.seeking``) unless draining, unwelcomed or quitting."""
        if self._draining or not self._welcomed or self._quit.is_set():
            return
        self._seeking.look()
