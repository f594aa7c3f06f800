"""The gateway: what each websocket connection may say, from its hello to its close.

The gateway owns the connections, and keeps the table of who is online
(``arena.net.presence``) current. A connection must
send a valid ``hello`` within ``hello_timeout_s``; a bot proves its token
(failed logins are logged and throttled per address, ``LoginThrottle``), a
spectator needs none. A second connection of the same bot replaces the
first and takes over its live matches (a reconnect), unless both are
workers (hello ``worker``): then both serve the bot, each its own matches
and seats (``Presence.join``). ``recheck_logins``
(every couple of seconds, from the server) closes the connections of bots
removed, or whose token was reset, since they logged in.

Every message is rate-limited (``TokenBucket``) and parsed once by
``parse_client_message``. A move goes to its live match (``MatchRegistry``)
and is refereed on the spot, inside ``data_received``; everything else goes,
by the sender's role, to ``Requests`` (``arena.net.requests``: seeks,
challenges, resignations, spectating, queries). A ``ProtocolError`` from any
of them becomes an ``error`` reply; repeated abuse closes the connection.

Each connection's messages take effect in the order they were sent, even
when one must wait for the database (``arena.net.inorder``).

Guests (``hello`` role ``guest``, no token; ``arena.play.guests``) are
people playing from the web viewer. The gateway names each one and keeps
the games each bot online accepts guests in (its hello's ``guests``); a
guest moves through the same path as a bot, so only in its own match, and
``Requests`` decides what else it may do.

When several nodes serve one arena (``placement``, ``arena.cluster``), a bot
whose live match another node hosts is sent a ``redirect`` there instead of
``welcome``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.histogram import MOVE_BUCKETS_S, LatencyHistogram
from arena.live.spectators import SpectatorHub
from arena.net.connection_log import log_closed
from arena.net.crowd import SPECTATOR_IDLE_S, idle
from arena.net.inorder import InOrder
from arena.net.limits import AddressBuckets, LoginThrottle, TokenBucket
from arena.net.logins import Logins, Revoker
from arena.net.presence import Presence, Seats
from arena.net.refusals import Refusals
from arena.net.requests import Queries, Requests
from arena.net.rota import Rota
from arena.net.websocket import Data, WebSocketConnection
from arena.play.clock import Clock
from arena.play.guests import GuestLimits, new_guest_name
from arena.play.lobby import Lobby, TimeLimits
from arena.play.matchmaker import Matchmaker
from arena.play.registry import MatchRegistry
from protocol.errors import MalformedMoveError, ProtocolError
from protocol.games import GAMES
from protocol.messages import (
    MAX_BOT_MESSAGE_BYTES,
    MAX_SPECTATOR_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    Accept,
    CancelSeek,
    ChallengeDeclined,
    ClientMessage,
    CloseCode,
    Decline,
    Error,
    ErrorCode,
    Hello,
    Move,
    Redirect,
    Seek,
    ServerMessage,
    Welcome,
    parse_client_message,
)
from protocol.messages.values import BOT_NAME_RULE, NEW_BOT_NAME_PATTERN

log = logging.getLogger(__name__)

SERVER_NAME = "mcts-arena/0.2"

PING_SLICES = 20
"""The keepalive's turns per ping interval, each pinging a slice of the connections
(``arena.net.rota``): one turn for all would hold the loop for every ping at once."""

# Errors that say the client speaks the protocol badly; enough of them and it is cut off.
_ABUSE_CODES = frozenset(
    {
        ErrorCode.BAD_JSON,
        ErrorCode.TOO_LARGE,
        ErrorCode.BAD_MESSAGE,
        ErrorCode.UNKNOWN_TYPE,
        ErrorCode.MISSING_FIELD,
        ErrorCode.UNKNOWN_FIELD,
        ErrorCode.BAD_TYPE,
        ErrorCode.BAD_VALUE,
        ErrorCode.NOT_AUTHENTICATED,
        ErrorCode.FORBIDDEN,
        ErrorCode.RATE_LIMITED,
    }
)


@dataclass(frozen=True, slots=True)
class GatewayLimits:
    """The gateway's limits (``ArenaConfig`` carries them)."""

    hello_timeout_s: float
    rate_per_s: float
    rate_burst: int
    max_protocol_errors: int
    spectator_queue_size: int
    close_timeout_s: float
    spectator_idle_s: float = SPECTATOR_IDLE_S
    """A spectator subscribed to nothing is closed after this long without a request."""
    guests: GuestLimits = field(default_factory=GuestLimits)


class Authenticator(Revoker, Protocol):
    """Checks a bot's token (``Store.authenticate``); truthy when it is the bot's token."""

    async def authenticate(self, name: str, token: str) -> object | None:
        """The bot's record when ``token`` is its token and it is active, else None."""
        ...


class _Close(Exception):
    """The connection must be closed with ``close_code`` after an ``error``."""

    def __init__(self, code: ErrorCode, message: str, close_code: int) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.close_code = close_code


class _Session:
    """The gateway's state for one connection."""

    __slots__ = ("active_at", "bucket", "conn", "hello_timer", "inbox", "max_bytes", "opened_at",
                 "spectator")  # fmt: skip

    def __init__(self, conn: WebSocketConnection, bucket: TokenBucket, now: float) -> None:
        self.conn = conn
        self.opened_at = time.monotonic()
        self.active_at = now
        """When a spectator or guest last asked for something (the injected clock)."""
        self.bucket = bucket
        self.inbox: InOrder | None = None
        self.hello_timer: asyncio.TimerHandle | None = None
        self.max_bytes = MAX_BOT_MESSAGE_BYTES
        self.spectator = False


class Gateway:
    """Connections, hellos and message routing; see the module docstring."""

    def __init__(
        self,
        limits: GatewayLimits,
        *,
        auth: Authenticator,
        queries: Queries,
        lobby: Lobby,
        matchmaker: Matchmaker,
        registry: MatchRegistry,
        hub: SpectatorHub,
        time_limits: TimeLimits,
        clock: Clock,
        throttle: LoginThrottle,
        refusals: Refusals,
        presence: Presence,
        seats: Seats,
        placement: Callable[[str], Awaitable[Redirect | None]] | None = None,
    ) -> None:
        self.limits = limits
        self._auth = auth
        self._lobby = lobby
        self._registry = registry
        self._hub = hub
        self._clock = clock
        self.throttle = throttle
        self._refusals = refusals
        self._placement = placement
        """Several nodes: a bot whose match another node hosts is redirected there."""
        self.presence = presence
        """Who is online: the tables below are its own, kept current here."""
        self.bots = presence.bots
        """The bots online, by name."""
        self.guest_games = presence.guest_games
        """The games each bot online accepts guest challenges in (absent: none)."""
        self.guests = presence.guests
        """The guests connected, by the name the gateway gave them."""
        self.max_matches = presence.max_matches
        self.logins = Logins(auth)
        """What each bot online logged in with, to close those no longer allowed."""
        self.connections: set[WebSocketConnection] = set()
        self._keepalive_rota: Rota[WebSocketConnection] = Rota(PING_SLICES)
        self._sessions: dict[WebSocketConnection, _Session] = {}
        self.accepting = True
        """False once shutting down: new hellos are refused."""
        self.move_latency = LatencyHistogram(MOVE_BUCKETS_S)
        """Per move: from the gateway's receipt of the frame to its ``moved`` queued."""
        self.requests = Requests(
            presence=presence,
            seats=seats,
            accepting=lambda: self.accepting,
            queries=queries,
            lobby=lobby,
            matchmaker=matchmaker,
            registry=registry,
            hub=hub,
            time_limits=time_limits,
            guest_limits=limits.guests,
            guest_limit=AddressBuckets(limits.guests.games_per_s, limits.guests.games_burst, clock),
            refusals=refusals,
        )
        """Everything but moves, once a connection said hello."""

    # Connections ------------------------------------------------------------------

    def opened(self, conn: WebSocketConnection) -> None:
        """A websocket was accepted: expect its hello."""
        session = _Session(
            conn,
            TokenBucket(self.limits.rate_per_s, self.limits.rate_burst, self._clock),
            self._clock.now(),
        )
        transport = conn.transport
        session.inbox = InOrder(
            lambda frame: self._receive(session, frame),
            transport.pause_reading,
            transport.resume_reading,
        )
        session.hello_timer = asyncio.get_running_loop().call_later(
            self.limits.hello_timeout_s, self._hello_timeout, session
        )
        self.connections.add(conn)
        self._keepalive_rota.add(conn)
        self._sessions[conn] = session
        conn.on_closed = lambda: self._closed(session)
        conn.deliver_to(session.inbox.put)
        log.debug("connection from %s", conn.remote)

    def tell(self, bot: str, message: ServerMessage) -> None:
        """Send ``message`` to ``bot`` (or a guest) if it is online."""
        self.presence.tell(bot, message)

    def keepalive(self, timeout_s: float) -> None:
        """One turn of the keepalive (the server runs ``PING_SLICES`` a ping interval): ping
        the next slice of the connections, closing those whose last ping went unanswered
        for ``timeout_s``. Every connection is pinged once per interval."""
        for conn in self._keepalive_rota.turn():
            if conn.oldest_unanswered_ping_s() > timeout_s:
                conn.send(Error(code=ErrorCode.INTERNAL, message="keepalive ping timeout"))
                conn.close(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
            else:
                conn.ping()

    def close_idle(self) -> None:
        """Close the spectators and guests idle too long (``arena.net.crowd.idle``)."""
        sessions = [(conn, session.active_at) for conn, session in self._sessions.items()]
        for conn, reason, what in idle(
            sessions,
            self._clock.now(),
            self.limits.spectator_idle_s,
            self.limits.guests.idle_s,
            subscribed=self._hub.subscribed,
            busy=lambda name: bool(
                self._registry.playing(name) or self._lobby.challenges_from(name)
            ),
        ):
            self._refusals.count(reason, conn.remote)
            self._refuse(conn, _Close(ErrorCode.IDLE, what, CloseCode.POLICY_VIOLATION))

    async def close_all(self, reason: str) -> None:
        """Tell every connection the server is going away, close them and wait."""
        self.accepting = False
        for conn in list(self.connections):
            conn.send(Error(code=ErrorCode.SERVER_SHUTDOWN, message=reason))
            conn.close(CloseCode.GOING_AWAY, "server shutting down")
        await asyncio.gather(
            *(c.wait_closed(self.limits.close_timeout_s) for c in list(self.connections))
        )

    def _closed(self, session: _Session) -> None:
        conn = session.conn
        if session.inbox is not None:
            session.inbox.stop()
            session.inbox = None  # its handler refers to the session: no cycle left behind
        if session.hello_timer is not None:
            session.hello_timer.cancel()
        self.connections.discard(conn)
        self._keepalive_rota.discard(conn)
        self._sessions.pop(conn, None)
        self._hub.unwatch(conn)
        log_closed(conn, session.opened_at)
        if conn.role not in ("bot", "guest") or conn.name is None:
            return
        name = conn.name
        for match in self._registry.of_bot(name):
            match.detach(name, conn)
        if conn.role == "guest":
            self.guests.pop(name, None)
            self._lobby.forget(name)  # its challenge, if unanswered, is void
            return
        if self.presence.leave(name, conn):  # not replaced, and no other worker serves it
            self.guest_games.pop(name, None)
            self.logins.left(name)
            for dropped in self._lobby.forget(name):
                if dropped.opponent == name:
                    self.tell(
                        dropped.challenger,
                        ChallengeDeclined(challenge_id=dropped.challenge_id, by=name),
                    )

    def _hello_timeout(self, session: _Session) -> None:
        session.hello_timer = None
        if session.conn.role is None:
            self._refuse(
                session.conn,
                _Close(
                    ErrorCode.HELLO_TIMEOUT,
                    f"no valid hello within {self.limits.hello_timeout_s:g} s",
                    CloseCode.POLICY_VIOLATION,
                ),
            )

    # Messages -------------------------------------------------------------------

    def _receive(self, session: _Session, frame: Data) -> Coroutine[Any, Any, None] | None:
        """Handle one incoming message now, or return the coroutine that will (``InOrder``)."""
        received = time.perf_counter()
        conn = session.conn
        if conn.closing:
            return None
        if not session.bucket.take():
            self._reply_error(conn, ProtocolError(ErrorCode.RATE_LIMITED, "slow down"))
            return None
        try:
            message = parse_client_message(frame, max_bytes=session.max_bytes)
        except MalformedMoveError as exc:
            if conn.role == "bot":
                self._judge_malformed_move(session, exc)
            else:
                self._reply_error(conn, exc)
            return None
        except ProtocolError as exc:
            self._reply_error(conn, exc)
            return None
        if conn.role is None:
            if type(message) is Hello:
                return self._hello(session, message)
            self._reply_error(
                conn, ProtocolError(ErrorCode.NOT_AUTHENTICATED, "send hello first", message.id)
            )
            return None
        if session.spectator:
            session.active_at = self._clock.now()
            return self._answer(conn, message, self.requests.from_spectator(conn, message))
        if type(message) is Move:
            # The hot path: a move is refereed before anything else happens on the loop.
            assert conn.name is not None
            try:
                self._registry.get(message.match_id).move(
                    conn.name, message.ply, message.move, message.analysis, message.id
                )
                # The answer to the bot's own turn: paced by the server, not a flood.
                session.bucket.refund()
            except ProtocolError as exc:
                self._reply_error(conn, exc, message.id)
            self.move_latency.observe(time.perf_counter() - received)
            return None
        if conn.role == "guest":
            session.active_at = self._clock.now()
            return self._answer(conn, message, self.requests.from_guest(conn, message))
        if type(message) is Accept and self._lobby.is_invite(message.challenge_id):
            # The answer to the arena's own challenge (a tournament game): paced by the
            # server like a move, so it must never be refused as a flood.
            session.bucket.refund()
        if type(message) is Seek:
            # On the spot once the game's board is built (the server builds it at start).
            assert conn.name is not None
            rating = self._registry.rating_now(conn.name, message.game)
            if rating is None:
                return self._answer(conn, message, self._seek_later(conn, message))
            try:
                self.requests.seek(conn.name, message, rating)
                # A worker's seek queued: the bot's match it pairs goes to this worker
                # (a second worker's seek meanwhile gets ``already_seeking``).
                self.presence.want(conn.name, conn)
            except ProtocolError as exc:
                self._reply_error(conn, exc, message.id)
            return None
        if type(message) is Decline or type(message) is CancelSeek:
            self.presence.unwant(conn.name or "", conn)
        return self._answer(conn, message, self.requests.from_bot(conn, message))

    async def _seek_later(self, conn: WebSocketConnection, seek: Seek) -> None:
        """A seek sent before its game's ratings are loaded: queued once they are."""
        await self.requests.from_bot(conn, seek)
        self.presence.want(conn.name or "", conn)

    def _judge_malformed_move(self, session: _Session, exc: MalformedMoveError) -> None:
        """A ``move`` whose move is not a move number still answers its turn: it loses."""
        conn = session.conn
        assert conn.name is not None
        try:
            self._registry.get(exc.match_id).move(conn.name, exc.ply, exc.move, None, exc.ref)
        except ProtocolError as error:
            self._reply_error(conn, error, exc.ref)

    async def _answer(
        self, conn: WebSocketConnection, message: ClientMessage, handling: Coroutine[Any, Any, None]
    ) -> None:
        """Await a message's handling; a ``ProtocolError`` becomes an ``error`` reply."""
        try:
            await handling
        except ProtocolError as exc:
            self._reply_error(conn, exc, message.id)
        except Exception:
            log.exception("handling %s from %r failed", message.type, conn)
            conn.send(Error(code=ErrorCode.INTERNAL, message="internal server error"))
            conn.close(CloseCode.INTERNAL_ERROR, "internal error")

    def _reply_error(
        self, conn: WebSocketConnection, exc: ProtocolError, ref: str | None = None
    ) -> None:
        conn.send(Error(code=exc.code, message=exc.message, ref=exc.ref or ref))
        if exc.code in _ABUSE_CODES:
            conn.protocol_errors += 1
            if conn.protocol_errors >= self.limits.max_protocol_errors:
                conn.send(Error(code=exc.code, message="too many bad messages; goodbye"))
                conn.close(CloseCode.POLICY_VIOLATION, "too many bad messages")

    def _refuse(self, conn: WebSocketConnection, close: _Close) -> None:
        conn.send(Error(code=close.code, message=close.message))
        conn.close(close.close_code, close.message)

    # Hello ------------------------------------------------------------------------

    async def _hello(self, session: _Session, hello: Hello) -> None:
        conn = session.conn
        try:
            await self._check_hello(conn, hello)
        except _Close as close:
            self._refuse(conn, close)
            return
        if session.hello_timer is not None:
            session.hello_timer.cancel()
            session.hello_timer = None
        if hello.role == "bot" and self._placement is not None:
            redirect = await self._placement(hello.name or "")
            if redirect is not None:
                conn.send(redirect)
                conn.close(CloseCode.REDIRECTED, "redirected to another node")
                return
        conn.role = hello.role
        session.active_at = self._clock.now()
        replaced: list[WebSocketConnection] = []
        if hello.role == "spectator":
            session.spectator = True
            session.max_bytes = MAX_SPECTATOR_MESSAGE_BYTES
            conn.queue_size = self.limits.spectator_queue_size
            log.info(
                "spectator connected from %s",
                conn.remote,
                extra={"event": "login", "role": "spectator", "remote": conn.remote},
            )
        elif hello.role == "guest":
            conn.name = new_guest_name()
            self.guests[conn.name] = conn
            log.info(
                "guest %s connected from %s",
                conn.name,
                conn.remote,
                extra={"event": "login", "role": "guest", "bot": conn.name, "remote": conn.remote},
            )
        else:
            assert hello.name is not None
            conn.name = hello.name
            # A bot playing n matches at once legitimately sends n times the seeks.
            session.bucket.scale(hello.max_matches)
            replaced = self._register_bot(conn, hello)
            self.guest_games[hello.name] = frozenset(g for g in hello.guests if g in GAMES)
            assert hello.token is not None
            self.logins.logged_in(hello.name, hello.token)
            log.info(
                "bot %s logged in from %s (max_matches %d%s)",
                hello.name,
                conn.remote,
                hello.max_matches,
                ", worker" if hello.worker else "",
                extra={
                    "event": "login",
                    "role": "bot",
                    "bot": hello.name,
                    "remote": conn.remote,
                    "max_matches": hello.max_matches,
                    "worker": hello.worker,
                },
            )
        conn.send(
            Welcome(
                version=PROTOCOL_VERSION,
                role=hello.role,
                name=conn.name,
                server=SERVER_NAME,
                id=hello.id,
            )
        )
        if hello.role == "bot":
            # Measure the round trip now, so it is credited from the first move on.
            conn.ping()
            name = conn.name or ""
            for match in self._registry.of_bot(name):
                # A worker takes over only the matches no other worker plays on.
                if not hello.worker or match.link(name) is None or match.link(name) in replaced:
                    match.attach(name, conn)

    async def _check_hello(self, conn: WebSocketConnection, hello: Hello) -> None:
        if not self.accepting:
            raise _Close(ErrorCode.SERVER_SHUTDOWN, "server shutting down", CloseCode.GOING_AWAY)
        if hello.version != PROTOCOL_VERSION:
            raise _Close(
                ErrorCode.UNSUPPORTED_VERSION,
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {hello.version}",
                CloseCode.UNSUPPORTED_VERSION,
            )
        if hello.role != "bot":
            return
        if hello.name is None or hello.token is None:
            raise _Close(
                ErrorCode.AUTH_FAILED, "a bot needs a name and a token", CloseCode.POLICY_VIOLATION
            )
        wait = self.throttle.wait_s(conn.remote, hello.name)
        if wait > 0.0:
            self.throttle.refused()
            raise _Close(
                ErrorCode.THROTTLED,
                f"too many failed logins from your address or for this bot; retry in {wait:.0f} s",
                CloseCode.POLICY_VIOLATION,
            )
        if await self._auth.authenticate(hello.name, hello.token) is None:
            delay = self.throttle.failed(conn.remote, hello.name)
            log.warning(
                "failed login for bot %r from %s%s",
                hello.name,
                conn.remote,
                f"; throttled for {delay:.0f} s" if delay else "",
                extra={
                    "event": "login_failed",
                    "bot": hello.name,
                    "remote": conn.remote,
                    "throttled_s": delay,
                },
            )
            raise _Close(
                ErrorCode.AUTH_FAILED,
                "unknown bot or wrong token"
                if re.fullmatch(NEW_BOT_NAME_PATTERN, hello.name)
                else f"unknown bot: {hello.name!r} is not a valid bot name ({BOT_NAME_RULE})",
                CloseCode.POLICY_VIOLATION,
            )
        self.throttle.succeeded(conn.remote, hello.name)

    def _register_bot(self, conn: WebSocketConnection, hello: Hello) -> list[WebSocketConnection]:
        """Put ``conn`` online; close and return the connections it replaces."""
        assert hello.name is not None
        replaced = self.presence.join(
            hello.name, conn, hello.max_matches, hello.worker, hello.worker_id
        )
        for previous in replaced:
            previous.send(
                Error(code=ErrorCode.REPLACED, message="a newer connection took over this bot")
            )
            previous.close(CloseCode.REPLACED, "replaced by a newer connection")
        return replaced

    async def recheck_logins(self) -> None:
        """Close the connections of bots removed, or whose token was reset, since their
        login (``arena.net.logins``)."""
        revoked = await self.logins.revoked(self.bots)
        # A bot served by workers: every one of them logged in with the revoked token.
        every = [c for r in revoked for c in self.presence.connections_of(r.name or "")]
        for conn in every:
            if conn.closing:
                continue
            log.warning(
                "bot %s was removed or its token reset: closing its connection from %s",
                conn.name,
                conn.remote,
                extra={"event": "login_revoked", "bot": conn.name, "remote": conn.remote},
            )
            self._refuse(
                conn,
                _Close(
                    ErrorCode.AUTH_FAILED,
                    "this bot was removed or its token was reset; log in with its new token",
                    CloseCode.POLICY_VIOLATION,
                ),
            )
