"""The arena server: websocket connections, hello/auth, routing by role, matches, shutdown.

Usage, in-process (tests, ``arena demo``) or from ``arena serve``::

    async with ArenaServer(ArenaConfig(port=0)) as server:
        print(server.port)
        await server.wait_stopped()     # until shutdown() (e.g. on SIGTERM)

One listening port serves bots, spectators and plain HTTP (``arena.http``).
A connection must send a valid ``hello`` within ``hello_timeout_s``; a bot
proves its token, a spectator needs none. A second connection of the same bot
replaces the first and takes over its live matches (a reconnect). Each match
is refereed by its own ``MatchRunner`` task; the server only routes.

Shutdown (``shutdown`` / leaving the ``async with``) aborts live matches as
the infrastructure's fault (unrated), tells every client ``server_shutdown``
and closes with 1001.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import random
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from arena.clock import Clock, MonotonicClock
from arena.connections import ClientConnection, TokenBucket
from arena.http import Router, add_api_routes, make_process_request, to_jsonable
from arena.inbound import InOrder, MessageSocket
from arena.lobby import Lobby, Pairing, TimeLimits, check_game
from arena.match import DEFAULT_GRACE_S, MatchRunner
from arena.spectators import EventSink, SpectatorHub
from arena.store import DEFAULT_URL, Store
from arena.viewer import add_viewer_routes
from protocol.errors import ProtocolError
from protocol.games import GAMES
from protocol.messages import (
    HELLO_TIMEOUT_S,
    MAX_BOT_MESSAGE_BYTES,
    MAX_SPECTATOR_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    RATE_LIMIT_BURST,
    RATE_LIMIT_PER_S,
    SPECTATOR_MESSAGE_TYPES,
    Accept,
    CancelSeek,
    Challenge,
    ChallengeDeclined,
    ChallengeReceived,
    ClientMessage,
    CloseCode,
    Decline,
    Error,
    ErrorCode,
    GamesQuery,
    GamesReply,
    Hello,
    LeaderboardEntry,
    LeaderboardQuery,
    LeaderboardReply,
    Move,
    Resign,
    Seek,
    TimeControl,
    Unwatch,
    Watch,
    Welcome,
    parse_client_message,
)
from protocol.messages.codes import MAX_MOVE

log = logging.getLogger(__name__)

SERVER_NAME = "mcts-arena/0.1"
DEFAULT_RATING = 1500.0

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
class ArenaConfig:
    """Everything ``ArenaServer`` can be told; defaults suit ``arena serve``."""

    host: str = "127.0.0.1"
    port: int = 8765
    db_url: str = DEFAULT_URL
    move_ms: int = 1000
    """Default per-move time for seeks and challenges (a request may name its own)."""
    bank_ms: int = 0
    grace_s: float = DEFAULT_GRACE_S
    k_factor: float = 32.0
    hello_timeout_s: float = HELLO_TIMEOUT_S
    ping_interval_s: float = 5.0
    """Websocket pings measure each bot's round trip, credited back on its clock."""
    ping_timeout_s: float = 20.0
    rate_per_s: float = RATE_LIMIT_PER_S
    rate_burst: int = RATE_LIMIT_BURST
    max_protocol_errors: int = 20
    bot_queue_size: int = 1024
    spectator_queue_size: int = 256
    spectator_buffer: int = 256
    close_timeout_s: float = 5.0
    pairing_window_s: float = 0.5
    pace_ms: int = 0
    """How long seeks gather before a pairing pass, so close ratings can find each other."""
    seed: int | None = None
    """Seeds colour assignment, for reproducible tests."""
    db_writer_process: bool = False
    """SQLite: write the group commits from a separate process (``arena serve`` does)."""

    @property
    def time_limits(self) -> TimeLimits:
        """The accepted time controls, with this config's default."""
        return TimeLimits(TimeControl(move_ms=self.move_ms, bank_ms=self.bank_ms))


class _Close(Exception):
    """Internal: the connection must be closed with ``code`` after an ``error``."""

    def __init__(self, code: ErrorCode, message: str, close_code: int) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.close_code = close_code


class ArenaServer:
    """The whole server; see the module docstring. Side effects are injectable."""

    def __init__(
        self,
        config: ArenaConfig | None = None,
        *,
        store: Store | None = None,
        sink: EventSink | None = None,
        clock: Clock | None = None,
        router: Router | None = None,
    ) -> None:
        self.config = config or ArenaConfig()
        self._store = store
        self._owns_store = store is None
        self._clock: Clock = clock or MonotonicClock()
        self.hub = SpectatorHub(sink, self.config.spectator_buffer)
        self.router = router or Router()
        add_api_routes(self.router, self)
        add_viewer_routes(self.router)
        self.lobby = Lobby(has_capacity=self._has_capacity, rng=random.Random(self.config.seed))
        self._limits = self.config.time_limits
        self._bots: dict[str, ClientConnection] = {}
        self._max_matches: dict[str, int] = {}
        self._connections: set[ClientConnection] = set()
        self._matches: dict[str, MatchRunner] = {}
        # Live matches per bot, so a capacity check is not a scan of every match.
        self._playing: Counter[str] = Counter()
        self._match_tasks: set[asyncio.Task[None]] = set()
        self._recently_finished: deque[str] = deque(maxlen=1024)
        self._ws_server: Server | None = None
        self._pairing_task: asyncio.Task[None] | None = None
        self._stopping = False
        self._stopped = asyncio.Event()
        self._started_at = time.time()
        self.health_extras: dict[str, Any] = {}
        """Extra ``/healthz`` fields (e.g. the MQTT publisher's status) set by plug-ins."""

    # Lifecycle ----------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The store; available once started."""
        if self._store is None:
            raise RuntimeError("the server is not started")
        return self._store

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        if self._ws_server is None:
            raise RuntimeError("the server is not started")
        port: int = self._ws_server.sockets[0].getsockname()[1]
        return port

    async def start(self) -> None:
        """Open the store (unless injected), abort matches a crash left live, start listening."""
        if self._store is None:
            self._store = await Store.open(
                self.config.db_url,
                k_factor=self.config.k_factor,
                writer_process=self.config.db_writer_process,
            )
        aborted = await self._store.abort_unfinished()
        if aborted:
            log.warning("aborted %d matches left live by a previous run", aborted)
        self._ws_server = await serve(
            self._handle,
            self.config.host,
            self.config.port,
            process_request=make_process_request(self.router),
            create_connection=MessageSocket,
            compression=None,
            max_size=MAX_BOT_MESSAGE_BYTES,
            ping_interval=self.config.ping_interval_s,
            ping_timeout=self.config.ping_timeout_s,
            close_timeout=self.config.close_timeout_s,
        )
        log.info("arena listening on %s:%d", self.config.host, self.port)

    async def __aenter__(self) -> ArenaServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    async def wait_stopped(self) -> None:
        """Return once ``shutdown`` has completed."""
        await self._stopped.wait()

    async def shutdown(self, reason: str = "server shutting down") -> None:
        """Abort live matches (unrated), tell every client why, close with 1001. Idempotent."""
        if self._stopping:
            await self._stopped.wait()
            return
        self._stopping = True
        if self._pairing_task is not None:
            self._pairing_task.cancel()
        for runner in list(self._matches.values()):
            runner.abort(reason)
        if self._match_tasks:
            await asyncio.wait(self._match_tasks, timeout=self.config.close_timeout_s)
        for conn in list(self._connections):
            conn.send(Error(code=ErrorCode.SERVER_SHUTDOWN, message=reason))
            conn.close(CloseCode.GOING_AWAY, "server shutting down")
        for conn in list(self._connections):
            await conn.wait_closed(self.config.close_timeout_s)
        if self._ws_server is not None:
            self._ws_server.close()
            await self._ws_server.wait_closed()
        if self._store is not None:
            await self._store.flush()
            if self._owns_store:
                await self._store.close()
        self._stopped.set()

    # Connections ----------------------------------------------------------------------

    async def _handle(self, websocket: ServerConnection) -> None:
        assert isinstance(websocket, MessageSocket)
        conn = ClientConnection(websocket, self.config.bot_queue_size)
        # One bucket for the connection's whole life: the hello phase counts too.
        bucket = TokenBucket(self.config.rate_per_s, self.config.rate_burst, self._clock)
        hello: asyncio.Future[Hello] = asyncio.get_running_loop().create_future()
        transport = websocket.transport
        inbox = InOrder(
            functools.partial(self._receive, conn, bucket, hello),  # partial: no extra frame
            transport.pause_reading,
            transport.resume_reading,
        )
        self._connections.add(conn)
        websocket.deliver_to(inbox.put, conn.outbox.flush)
        try:
            try:
                async with asyncio.timeout(self.config.hello_timeout_s):
                    await asyncio.shield(hello)
            except TimeoutError:
                raise _Close(
                    ErrorCode.HELLO_TIMEOUT,
                    f"no valid hello within {self.config.hello_timeout_s:g} s",
                    CloseCode.POLICY_VIOLATION,
                ) from None
            await websocket.wait_closed()
        except _Close as close:
            conn.send(Error(code=close.code, message=close.message))
            conn.close(close.close_code, close.message[:100])
        except ConnectionClosed:
            pass
        except Exception:
            log.exception("connection handler failed for %r", conn)
            conn.send(Error(code=ErrorCode.INTERNAL, message="internal server error"))
            conn.close(CloseCode.INTERNAL_ERROR, "internal error")
        finally:
            inbox.stop()
            if not hello.done():
                hello.cancel()
            self._connections.discard(conn)
            self._forget(conn)
            if conn.closing:
                # Let the error and our close code go out before websockets closes
                # the socket itself (it would say 1000) when this handler returns.
                await conn.wait_closed(self.config.close_timeout_s)
            await conn.stop()

    def _receive(
        self,
        conn: ClientConnection,
        bucket: TokenBucket,
        hello: asyncio.Future[Hello],
        frame: str | bytes,
    ) -> Coroutine[Any, Any, None] | None:
        """Handle one incoming message now, or return the coroutine that will (``InOrder``)."""
        if conn.closing:
            return None
        spectator = conn.role == "spectator"
        max_bytes = MAX_SPECTATOR_MESSAGE_BYTES if spectator else MAX_BOT_MESSAGE_BYTES
        message = self._parse(conn, bucket, frame, max_bytes)
        if message is None:
            return None
        if conn.role is None:
            if isinstance(message, Hello):
                return self._say_hello(conn, bucket, hello, message)
            self._reply_error(
                conn, ProtocolError(ErrorCode.NOT_AUTHENTICATED, "send hello first", message.id)
            )
            return None
        if type(message) is Move and not spectator:
            # The hot path: a move is refereed before anything else happens on the loop.
            assert conn.name is not None
            try:
                runner = self._runner(message.match_id)
                if runner.submit_move(
                    conn.name, message.ply, message.move, message.analysis, message.id
                ):
                    # The answer to the bot's own turn: paced by the server, not a flood.
                    bucket.refund()
            except ProtocolError as exc:
                self._reply_error(conn, exc, message.id)
            return None
        if type(message) is Seek and not spectator:
            # Also on the spot once the bot's rating is cached (every seek after its
            # first): no task, and the seek joins the lobby before the next message.
            assert conn.name is not None
            known, rating = self.store.cached_rating(conn.name, message.game)
            if known:
                try:
                    self._seek(conn.name, message, rating)
                except Exception as exc:
                    self._handling_failed(conn, message, exc)
                return None
        if spectator:
            return self._answer(conn, message, self._on_spectator_message(conn, message))
        return self._answer(conn, message, self._on_bot_message(conn, message))

    async def _say_hello(
        self,
        conn: ClientConnection,
        bucket: TokenBucket,
        hello: asyncio.Future[Hello],
        message: Hello,
    ) -> None:
        try:
            await self._accept_hello(conn, message)
        except Exception as exc:
            # _handle answers (a _Close says how) and closes the connection.
            if not hello.done():
                hello.set_exception(exc)
            return
        if message.role == "bot":
            # A bot playing n matches at once legitimately sends n times the seeks.
            bucket.scale(message.max_matches)
        if not hello.done():
            hello.set_result(message)

    async def _answer(
        self,
        conn: ClientConnection,
        message: ClientMessage,
        handling: Coroutine[Any, Any, None],
    ) -> None:
        """Await a message's handling; a ``ProtocolError`` becomes an ``error`` reply."""
        try:
            await handling
        except Exception as exc:
            self._handling_failed(conn, message, exc)

    def _handling_failed(
        self, conn: ClientConnection, message: ClientMessage, exc: Exception
    ) -> None:
        """A ``ProtocolError`` is the client's: an ``error`` reply. Anything else is ours."""
        if isinstance(exc, ProtocolError):
            self._reply_error(conn, exc, message.id)
            return
        log.error("handling %s from %r failed", message.type, conn, exc_info=exc)
        conn.send(Error(code=ErrorCode.INTERNAL, message="internal server error"))
        conn.close(CloseCode.INTERNAL_ERROR, "internal error")

    async def _accept_hello(self, conn: ClientConnection, hello: Hello) -> None:
        if self._stopping:
            raise _Close(ErrorCode.SERVER_SHUTDOWN, "server shutting down", CloseCode.GOING_AWAY)
        if hello.version != PROTOCOL_VERSION:
            raise _Close(
                ErrorCode.UNSUPPORTED_VERSION,
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {hello.version}",
                CloseCode.UNSUPPORTED_VERSION,
            )
        if hello.role == "bot":
            if hello.name is None or hello.token is None:
                raise _Close(
                    ErrorCode.AUTH_FAILED,
                    "a bot needs a name and a token",
                    CloseCode.POLICY_VIOLATION,
                )
            if await self.store.authenticate(hello.name, hello.token) is None:
                raise _Close(
                    ErrorCode.AUTH_FAILED, "unknown bot or wrong token", CloseCode.POLICY_VIOLATION
                )
            self._register_bot(conn, hello.name, hello.max_matches)
        conn.role = hello.role
        conn.name = hello.name if hello.role == "bot" else None
        if hello.role == "spectator":
            conn.queue_size = self.config.spectator_queue_size
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
            assert hello.name is not None
            await conn.measure_rtt()
            for runner in self._matches.values():
                if hello.name in runner.players:
                    runner.attach(hello.name, conn)

    def _register_bot(self, conn: ClientConnection, name: str, max_matches: int) -> None:
        previous = self._bots.get(name)
        self._bots[name] = conn
        self._max_matches[name] = max_matches
        if previous is not None:
            previous.send(
                Error(code=ErrorCode.REPLACED, message="a newer connection took over this bot")
            )
            previous.close(CloseCode.REPLACED, "replaced by a newer connection")

    def _forget(self, conn: ClientConnection) -> None:
        """Clean up after a connection: spectating, and for a bot its seat and lobby entries."""
        self.hub.unwatch(conn)
        if conn.role != "bot" or conn.name is None:
            return
        name = conn.name
        for runner in self._matches.values():
            if name in runner.players:
                runner.detach(name, conn)
        if self._bots.get(name) is conn:  # not replaced by a newer connection
            del self._bots[name]
            for dropped in self.lobby.forget(name):
                if dropped.opponent == name and dropped.challenger in self._bots:
                    self._bots[dropped.challenger].send(
                        ChallengeDeclined(challenge_id=dropped.challenge_id, by=name)
                    )

    def _parse(
        self, conn: ClientConnection, bucket: TokenBucket, frame: str | bytes, max_bytes: int
    ) -> ClientMessage | None:
        """Rate-limit and parse one frame; errors are answered here and None returned."""
        if not bucket.take():
            self._reply_error(conn, ProtocolError(ErrorCode.RATE_LIMITED, "slow down"))
            return None
        try:
            return parse_client_message(frame, max_bytes=max_bytes)
        except ProtocolError as exc:
            if conn.role == "bot" and self._adjudicate_malformed_move(conn, frame):
                return None
            self._reply_error(conn, exc)
            return None

    def _adjudicate_malformed_move(self, conn: ClientConnection, frame: str | bytes) -> bool:
        """A ``move`` whose move is not a move number still answers the turn: it loses.

        Returns True when the frame was handed to the match runner that way.
        """
        try:
            data = json.loads(frame)
        except ValueError:
            return False
        if not (isinstance(data, dict) and data.get("type") == "move"):
            return False
        match_id, ply, move = data.get("match_id"), data.get("ply"), data.get("move")
        if type(move) is int and 0 <= move <= MAX_MOVE:
            return False  # the move itself is fine; something else is malformed
        runner = self._matches.get(match_id) if isinstance(match_id, str) else None
        if runner is None or type(ply) is not int:
            return False
        assert conn.name is not None
        ref = data.get("id") if isinstance(data.get("id"), str) else None
        try:
            runner.submit_move(conn.name, ply, move, None, ref)
        except ProtocolError as exc:
            self._reply_error(conn, exc, ref)
        return True

    def _reply_error(
        self, conn: ClientConnection, exc: ProtocolError, ref: str | None = None
    ) -> None:
        conn.send(Error(code=exc.code, message=exc.message, ref=exc.ref or ref))
        if exc.code in _ABUSE_CODES:
            conn.protocol_errors += 1
            if conn.protocol_errors >= self.config.max_protocol_errors:
                conn.send(Error(code=exc.code, message="too many bad messages; goodbye"))
                conn.close(CloseCode.POLICY_VIOLATION, "too many bad messages")

    # Spectators ---------------------------------------------------------------------

    async def _on_spectator_message(self, conn: ClientConnection, message: ClientMessage) -> None:
        if type(message) not in SPECTATOR_MESSAGE_TYPES:
            raise ProtocolError(
                ErrorCode.FORBIDDEN, f"a spectator may not send {message.type}", message.id
            )
        match message:
            case Watch(match_id=match_id, since=since):
                self.hub.watch(conn, match_id, since)
            case Unwatch(match_id=match_id):
                self.hub.unwatch(conn, match_id)
            case _:
                await self._on_query(conn, message)

    async def _on_query(self, conn: ClientConnection, message: ClientMessage) -> None:
        match message:
            case LeaderboardQuery(game=game, id=ref):
                entries = await self._leaderboard_entries(game)
                conn.send(LeaderboardReply(game=game, entries=tuple(entries), id=ref))
            case GamesQuery(id=ref):
                conn.send(GamesReply(games=GAMES, id=ref))
            case _:
                raise ProtocolError(ErrorCode.BAD_MESSAGE, f"unexpected {message.type}")

    # Bots -----------------------------------------------------------------------------

    async def _on_bot_message(self, conn: ClientConnection, message: ClientMessage) -> None:
        """Act on a bot's message other than a move (``_receive`` referees those)."""
        bot = conn.name
        assert bot is not None
        match message:
            case Resign(match_id=match_id):
                self._runner(match_id).resign(bot)
            case Seek(game=game):
                self._seek(bot, message, await self.store.rating_hint(bot, game))
            case CancelSeek(game=game):
                self.lobby.cancel_seek(bot, game)
            case Challenge(opponent=opponent, game=game, time_control=tc):
                tc = self._limits.check(tc)
                target = self._bots.get(opponent)
                if target is None:
                    raise ProtocolError(ErrorCode.NO_SUCH_BOT, f"{opponent} is not online")
                pending = self.lobby.challenge(bot, opponent, game, tc)
                target.send(
                    ChallengeReceived(
                        challenge_id=pending.challenge_id,
                        challenger=bot,
                        game=game,
                        time_control=tc,
                    )
                )
            case Accept(challenge_id=challenge_id):
                await self._start_match(self.lobby.accept(bot, challenge_id))
            case Decline(challenge_id=challenge_id):
                pending = self.lobby.decline(bot, challenge_id)
                challenger = self._bots.get(pending.challenger)
                if challenger is not None:
                    challenger.send(ChallengeDeclined(challenge_id=challenge_id, by=bot))
            case Watch() | Unwatch():
                # A bot watching its own match would see its opponent's analysis.
                raise ProtocolError(ErrorCode.FORBIDDEN, "bots cannot watch; connect as spectator")
            case Hello():
                raise ProtocolError(ErrorCode.BAD_MESSAGE, "already said hello")
            case _:
                await self._on_query(conn, message)

    def _seek(self, bot: str, seek: Seek, rating: float | None) -> None:
        """Queue ``bot`` in the lobby (``rating`` None: not rated yet) and schedule pairing."""
        tc = self._limits.check(seek.time_control)
        self.lobby.seek(bot, seek.game, tc, _or_default(rating))
        self._schedule_pairing()

    def _runner(self, match_id: str) -> MatchRunner:
        runner = self._matches.get(match_id)
        if runner is not None:
            return runner
        if match_id in self._recently_finished:
            raise ProtocolError(ErrorCode.MATCH_OVER, f"match {match_id} is over")
        raise ProtocolError(ErrorCode.NO_SUCH_MATCH, f"no live match {match_id}")

    def _has_capacity(self, bot: str) -> bool:
        return bot in self._bots and self._playing[bot] < self._max_matches.get(bot, 1)

    async def _rating(self, bot: str, game: str) -> float:
        # The store's cache: no database read per seek and match start once a bot is known.
        return _or_default(await self.store.rating_hint(bot, game))

    # Matches --------------------------------------------------------------------------

    async def _start_match(self, pairing: Pairing) -> None:
        if self._stopping:
            return
        tc = pairing.time_control
        ratings = (
            await self._rating(pairing.players[0], pairing.game),
            await self._rating(pairing.players[1], pairing.game),
        )
        # Written with the next group commit, ahead of the match's moves: no
        # transaction between a pairing and its match_start.
        match_id = await self.store.open_match(
            pairing.game, pairing.players, tc.move_ms, tc.bank_ms, rated=True
        )
        if self._stopping:  # shutdown began while the match was being created
            await self.store.finish_match(
                match_id, None, "aborted", "infrastructure", False, "server shutting down"
            )
            return
        runner = MatchRunner(
            match_id,
            pairing.game,
            pairing.players,
            tc,
            (self._bots.get(pairing.players[0]), self._bots.get(pairing.players[1])),
            recorder=self.store,
            clock=self._clock,
            observer=self.hub,
            grace_s=self.config.grace_s,
            ratings=ratings,
            pace_s=self.config.pace_ms / 1000.0,
        )
        self._matches[match_id] = runner
        self._playing.update(pairing.players)
        task = asyncio.create_task(self._run_match(runner), name=f"match-{match_id}")
        self._match_tasks.add(task)
        task.add_done_callback(self._match_tasks.discard)

    async def _run_match(self, runner: MatchRunner) -> None:
        try:
            await runner.run()
        except Exception:
            log.exception("match %s crashed", runner.match_id)
        finally:
            if self._matches.pop(runner.match_id, None) is not None:
                self._playing.subtract(runner.players)
                for bot in runner.players:
                    if self._playing[bot] <= 0:
                        del self._playing[bot]
            self._recently_finished.append(runner.match_id)
        self._schedule_pairing()

    def _schedule_pairing(self) -> None:
        """Run a pairing pass after the pairing window, unless one is already due."""
        if self._stopping or self._pairing_task is not None:
            return
        self._pairing_task = asyncio.create_task(self._pair_after_window(), name="pairing")

    async def _pair_after_window(self) -> None:
        try:
            await asyncio.sleep(self.config.pairing_window_s)
        finally:
            self._pairing_task = None
        for pairing in self.lobby.pair():
            try:
                await self._start_match(pairing)
            except Exception:
                log.exception("could not start a match for %s", pairing)
            # A pass can start a hundred matches: let the moves that arrive meanwhile
            # in between, instead of holding them all for one long turn of the loop.
            await asyncio.sleep(0)

    # Queries shared by the websocket and HTTP -------------------------------------------

    async def _leaderboard_entries(self, game: str) -> list[LeaderboardEntry]:
        check_game(game)
        return [
            LeaderboardEntry(
                rank=row.rank,
                bot=row.bot,
                rating=row.rating,
                games=row.games,
                wins=row.wins,
                draws=row.draws,
                losses=row.losses,
                online=row.bot in self._bots,
            )
            for row in await self.store.leaderboard(game)
        ]

    async def leaderboard_json(self, game: str) -> list[dict[str, Any]]:
        """Leaderboard rows with an ``online`` flag, for ``/api/leaderboard``."""
        return [e.to_dict() for e in await self._leaderboard_entries(game)]

    def live_matches_json(self) -> list[dict[str, Any]]:
        """One summary per live match, for ``/api/matches?status=live``."""
        return [
            {
                "id": r.match_id,
                "game": r.game,
                "players": list(r.players),
                "move_ms": r.time_control.move_ms,
                "bank_ms": r.time_control.bank_ms,
                "ply": r.state.ply,
                "position": r.state.encode(),
                "status": "live",
            }
            for r in self._matches.values()
        ]

    async def matches_json(self, status: str | None, game: str | None) -> list[dict[str, Any]]:
        """Stored matches, for ``/api/matches``."""
        found = await self.store.list_matches(status=status, game=game)
        return [to_jsonable(m) for m in found]

    async def match_json(self, match_id: str) -> dict[str, Any] | None:
        """One stored match with its moves, for ``/api/matches/ID``."""
        await self.store.flush()  # include the moves still in the group-commit buffer
        record = await self.store.get_match(match_id)
        if record is None:
            return None
        data: dict[str, Any] = to_jsonable(record)
        return data

    def health(self) -> dict[str, Any]:
        """Counters for ``/healthz``."""
        return {
            "status": "stopping" if self._stopping else "ok",
            "protocol_version": PROTOCOL_VERSION,
            "server": SERVER_NAME,
            "uptime_s": round(time.time() - self._started_at, 1),
            "bots_online": len(self._bots),
            "connections": len(self._connections),
            "live_matches": len(self._matches),
            "spectators": sum(1 for c in self._connections if c.role == "spectator"),
            "seeks": len(self.lobby.seeks),
            **{k: v() if callable(v) else v for k, v in self.health_extras.items()},
        }


def _or_default(rating: float | None) -> float:
    """A bot's rating for pairing and display: the starting rating before its first game."""
    return DEFAULT_RATING if rating is None else rating


@contextlib.asynccontextmanager
async def run_server(config: ArenaConfig, **injected: Any) -> AsyncIterator[ArenaServer]:
    """``async with run_server(config) as server`` — the same as ``async with ArenaServer(...)``."""
    async with ArenaServer(config, **injected) as server:
        yield server
