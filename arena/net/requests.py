"""What a connection may ask for besides a move, by role: the gateway routes it here.

A spectator watches and stops watching matches and asks queries. A bot
seeks, cancels a seek, challenges, accepts, declines and resigns. A guest
(``arena.play.guests``) may only challenge an online bot that accepts guests
in that game, with a time control within ``GuestLimits`` (at most 60 s a
move by default), while fewer than ``GuestLimits.max_games`` guest games are
played on the server and ``max_games_per_bot`` against that bot; an address
may start ``games_burst`` games at once and one every ``1 / games_per_s``
seconds after that. A guest may resign its own match; its matches are never
rated. Anything a role may not send is ``forbidden``. A
``ProtocolError`` raised here becomes the connection's ``error`` reply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from arena.live.spectators import SpectatorHub
from arena.net.limits import AddressBuckets
from arena.net.presence import Presence, Seats
from arena.net.refusals import Refusals
from arena.net.websocket import WebSocketConnection
from arena.play.guests import GuestLimits, is_guest
from arena.play.lobby import Lobby, PendingChallenge, TimeLimits
from arena.play.matchmaker import Matchmaker
from arena.play.registry import DEFAULT_RATING, MatchRegistry
from protocol.errors import ProtocolError
from protocol.games import GAMES
from protocol.messages import (
    SPECTATOR_MESSAGE_TYPES,
    Accept,
    CancelSeek,
    Challenge,
    ChallengeDeclined,
    ChallengeReceived,
    ClientMessage,
    Decline,
    ErrorCode,
    GamesQuery,
    GamesReply,
    Hello,
    LeaderboardEntry,
    LeaderboardQuery,
    LeaderboardReply,
    Resign,
    Seek,
    TimeControl,
    Unwatch,
    Watch,
)


class Queries(Protocol):
    """Read-only questions a connection may ask (the server answers them)."""

    async def leaderboard_entries(self, game: str) -> list[LeaderboardEntry]:
        """One game's leaderboard."""
        ...


class Requests:
    """Spectators', bots' and guests' requests other than moves; see the module docstring.

    ``presence`` owns who is online (the bots, the games each accepts guests in,
    the guests) and tells a player online; it is read here, never changed.
    ``accepting`` is False once the server is shutting down.
    """

    def __init__(
        self,
        *,
        presence: Presence,
        seats: Seats,
        accepting: Callable[[], bool],
        queries: Queries,
        lobby: Lobby,
        matchmaker: Matchmaker,
        registry: MatchRegistry,
        hub: SpectatorHub,
        time_limits: TimeLimits,
        guest_limits: GuestLimits,
        guest_limit: AddressBuckets,
        refusals: Refusals,
    ) -> None:
        self._presence = presence
        self._seats = seats
        self._accepting = accepting
        self._queries = queries
        self._lobby = lobby
        self._matchmaker = matchmaker
        self._registry = registry
        self._hub = hub
        self._time_limits = time_limits
        self._guest_limits = guest_limits
        self._guest_time_limits = guest_limits.time_limits(time_limits)
        self._refusals = refusals
        self.guest_limit = guest_limit
        """Guest challenges per remote address."""

    # Spectators and queries -------------------------------------------------------

    async def from_spectator(self, conn: WebSocketConnection, message: ClientMessage) -> None:
        """Watch, unwatch, or a query."""
        if type(message) not in SPECTATOR_MESSAGE_TYPES:
            raise ProtocolError(
                ErrorCode.FORBIDDEN, f"a spectator may not send {message.type}", message.id
            )
        match message:
            case Watch(match_id=match_id, since=since):
                self._hub.watch(conn, match_id, since)
            case Unwatch(match_id=match_id):
                self._hub.unwatch(conn, match_id)
            case _:
                await self._query(conn, message)

    async def _query(self, conn: WebSocketConnection, message: ClientMessage) -> None:
        match message:
            case LeaderboardQuery(game=game, id=ref):
                entries = await self._queries.leaderboard_entries(game)
                conn.send(LeaderboardReply(game=game, entries=tuple(entries), id=ref))
            case GamesQuery(id=ref):
                conn.send(GamesReply(games=GAMES, id=ref))
            case Hello():
                raise ProtocolError(ErrorCode.BAD_MESSAGE, "already said hello")
            case _:
                raise ProtocolError(ErrorCode.BAD_MESSAGE, f"unexpected {message.type}")

    # Bots -------------------------------------------------------------------------

    async def from_bot(self, conn: WebSocketConnection, message: ClientMessage) -> None:
        """Act on a bot's message other than a move (the gateway referees those)."""
        bot = conn.name
        assert bot is not None
        match message:
            case Resign(match_id=match_id, reason=reason):
                self._registry.get(match_id).resign(bot, reason)
            case Seek(game=game):
                self.seek(bot, message, await self._registry.rating(bot, game))
            case CancelSeek(game=game):
                self._lobby.cancel_seek(bot, game)
            case Challenge(opponent=opponent, game=game, time_control=tc):
                tc = self._time_limits.check(tc)
                self._online(opponent)
                self._send_challenge(opponent, self._lobby.challenge(bot, opponent, game, tc))
            case Accept(challenge_id=challenge_id):
                pairing = self._lobby.accept(bot, challenge_id)
                if pairing is not None and self._accepting():  # None: the arena's own invite
                    await self._registry.start(pairing)
            case Decline(challenge_id=challenge_id):
                declined = self._lobby.decline(bot, challenge_id)
                if declined is not None:  # None: the arena's own invite
                    self._presence.tell(
                        declined.challenger, ChallengeDeclined(challenge_id=challenge_id, by=bot)
                    )
            case Watch() | Unwatch():
                # A bot watching its own match would see its opponent's analysis.
                raise ProtocolError(ErrorCode.FORBIDDEN, "bots cannot watch; connect as spectator")
            case _:
                await self._query(conn, message)

    def seek(self, bot: str, seek: Seek, rating: float | None) -> None:
        """Queue ``bot`` in the lobby (``rating`` None: not rated yet) and schedule pairing."""
        tc = self._time_limits.check(seek.time_control)
        self._lobby.seek(bot, seek.game, tc, DEFAULT_RATING if rating is None else rating)
        self._matchmaker.schedule()

    def _online(self, opponent: str) -> None:
        if opponent not in self._presence.bots:
            raise ProtocolError(ErrorCode.NO_SUCH_BOT, f"{opponent} is not online")

    def _send_challenge(self, opponent: str, pending: PendingChallenge) -> None:
        # Through the seats: a bot served by workers hears it on the worker with the most
        # room, as a tournament's invitation does (``Seats.tell``).
        self._seats.tell(
            opponent,
            ChallengeReceived(
                challenge_id=pending.challenge_id,
                challenger=pending.challenger,
                game=pending.game,
                time_control=pending.time_control,
            ),
        )

    # Guests -----------------------------------------------------------------------

    async def from_guest(self, conn: WebSocketConnection, message: ClientMessage) -> None:
        """Act on a guest's message other than a move: a challenge, a resignation, a query."""
        guest = conn.name
        assert guest is not None
        match message:
            case Challenge(opponent=opponent, game=game, time_control=tc):
                self._guest_challenge(conn, guest, opponent, game, tc)
            case Resign(match_id=match_id, reason=reason):
                self._registry.get(match_id).resign(guest, reason)
            case Seek() | CancelSeek() | Accept() | Decline():
                raise ProtocolError(
                    ErrorCode.FORBIDDEN,
                    f"a guest may not send {message.type}: challenge a bot that accepts guests",
                    message.id,
                )
            case Watch() | Unwatch():
                raise ProtocolError(
                    ErrorCode.FORBIDDEN, "guests cannot watch; connect as spectator", message.id
                )
            case _:
                await self._query(conn, message)

    def _guest_challenge(
        self,
        conn: WebSocketConnection,
        guest: str,
        opponent: str,
        game: str,
        tc: TimeControl | None,
    ) -> None:
        """A guest challenges ``opponent``: checked, rate-limited per address, then sent on."""
        if not self.guest_limit.take(conn.remote):
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                "too many guest games from your address; "
                f"retry in {self.guest_limit.wait_s():.0f} s",
            )
        tc = self._guest_time_limits.check(tc)
        self._online(opponent)
        if game not in self._presence.guest_games.get(opponent, ()):
            raise ProtocolError(
                ErrorCode.FORBIDDEN, f"{opponent} does not accept guest challenges in {game}"
            )
        if self._registry.playing(guest) or self._lobby.challenges_from(guest):
            raise ProtocolError(
                ErrorCode.ALREADY_SEEKING, "you already play, or wait for an answer to, a game"
            )
        self._check_guest_caps(conn, opponent)
        self._send_challenge(opponent, self._lobby.challenge(guest, opponent, game, tc))

    def _check_guest_caps(self, conn: WebSocketConnection, opponent: str) -> None:
        """Refuse a guest game over the server's or the bot's cap of guest games at once."""
        limits = self._guest_limits
        against_bot = sum(
            1 for match in self._registry.of_bot(opponent) if any(map(is_guest, match.players))
        )
        if against_bot >= limits.max_games_per_bot:
            self._refusals.count("guest_cap", conn.remote)
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                f"{opponent} already plays {against_bot} guest games; try again later",
            )
        playing = sum(1 for name in self._presence.guests if self._registry.playing(name))
        if playing >= limits.max_games:
            self._refusals.count("guest_cap", conn.remote)
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                f"the server plays {playing} guest games, its most; try again later",
            )
