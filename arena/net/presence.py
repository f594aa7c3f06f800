"""Who is online: the bots and guests connected, and what each may still take on.

``Presence`` is the table of who is online, created before the parts that
ask about it (the match registry, the rating notices, the API) and before
the gateway, which fills it as bots and guests say hello and leave. So the
server's parts are built in dependency order, none reaching back to a
gateway that does not exist yet (``arena.server.assemble``).

``Seats`` adds the live matches to it: whether a bot has room for another
match (pairing, tournaments, guests' choice of opponents).

A bot is served by one connection, or by several *workers* at once (hello
``worker``: ``arena-bot --worker`` on as many machines as its author has),
all under its one name and rating. Each worker brings its own
``max_matches`` seats; the bot's ``max_matches`` is their sum, so the lobby
and tournaments count every seat. Which worker plays a new match
(``link_of``): the oldest worker that asked for one (a seek, or a challenge
offered to it) and still has a seat free, else the one with the most seats
free. A challenge to a worker-served bot goes to the worker with the most
room (``Seats.tell``).

A worker names itself (hello ``worker_id``) the same on every connection it
opens, so a worker that reconnects while the server still holds its old
connection (half-open: the network dropped it without a close) replaces
that connection, as a plain bot's second login replaces its first: its
seats are counted once, and its matches move to the new connection.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

from arena.net.websocket import WebSocketConnection
from protocol.messages import ChallengeReceived, ServerMessage

WANTS_KEPT = 64
"""The most requests for a match remembered per bot: an offer left unanswered stays
until a match start consumes it, so the queue is bounded (a hint, not a promise)."""

Load = Callable[[WebSocketConnection], int]
"""How many live matches a connection of a bot plays (``MatchRegistry.on_link``)."""


class Playing(Protocol):
    """How many live matches a bot plays (``MatchRegistry``)."""

    def playing(self, bot: str) -> int:
        """Live matches of ``bot``."""

    def on_link(self, bot: str, link: object) -> int:
        """Live matches of ``bot`` played on connection ``link``."""


class Presence:
    """The bots and guests online, by name; the gateway keeps it current."""

    def __init__(self) -> None:
        self.bots: dict[str, WebSocketConnection] = {}
        """The bots online, by name."""
        self.guests: dict[str, WebSocketConnection] = {}
        """The guests connected, by the name the gateway gave them."""
        self.guest_games: dict[str, frozenset[str]] = {}
        """The games each bot online accepts guest challenges in (absent: none)."""
        self.max_matches: dict[str, int] = {}
        """Each bot online's ``max_matches`` (its hello's; served by workers: their sum)."""
        self.workers: dict[str, list[WebSocketConnection]] = {}
        """The worker connections of each bot served by workers, oldest first (``bots``
        holds the newest)."""
        self.seats: dict[WebSocketConnection, int] = {}
        """Each worker connection's own ``max_matches``."""
        self.worker_ids: dict[WebSocketConnection, str] = {}
        """Each worker connection's ``worker_id``, for those that gave one."""
        self._wants: dict[str, deque[WebSocketConnection]] = {}
        """The workers of a bot that asked for a match (a seek, a challenge offered to
        it), oldest first: the next match of the bot goes to the first with a seat free."""

    def is_online(self, bot: str) -> bool:
        """True while ``bot`` (a bot, not a guest) is logged in."""
        return bot in self.bots

    def join(
        self,
        bot: str,
        conn: WebSocketConnection,
        max_matches: int,
        worker: bool,
        worker_id: str | None = None,
    ) -> list[WebSocketConnection]:
        """``conn`` logged in as ``bot``; returns the connections it replaces.

        A worker joins the bot's other workers and replaces a plain connection
        and its own older connection (the same ``worker_id``); a plain
        connection replaces every connection of the bot.
        """
        previous = self.bots.get(bot)
        workers = self.workers.get(bot, [])
        replaced = [previous] if previous is not None and previous not in workers else []
        if worker:
            workers = self.workers.setdefault(bot, workers)
            if worker_id is not None:
                for old in [w for w in workers if self.worker_ids.get(w) == worker_id]:
                    self._drop_worker(bot, old)
                    replaced.append(old)
                self.worker_ids[conn] = worker_id
            workers.append(conn)
            self.seats[conn] = max_matches
            self._wants.setdefault(bot, deque(maxlen=WANTS_KEPT))
            max_matches = sum(self.seats[w] for w in workers)
        else:
            replaced += workers
            self._forget_workers(bot)
        self.bots[bot] = conn
        self.max_matches[bot] = max_matches
        return replaced

    def leave(self, bot: str, conn: WebSocketConnection) -> bool:
        """``conn`` of ``bot`` closed; True when that leaves ``bot`` offline."""
        workers = self.workers.get(bot)
        if workers is not None and conn in workers:
            self._drop_worker(bot, conn)
            if workers:
                self.bots[bot] = workers[-1]
                self.max_matches[bot] = sum(self.seats[w] for w in workers)
                return False
            self._forget_workers(bot)
        if self.bots.get(bot) is not conn:  # replaced by a newer connection
            return False
        del self.bots[bot]
        self.max_matches.pop(bot, None)
        return True

    def _drop_worker(self, bot: str, conn: WebSocketConnection) -> None:
        """Take worker ``conn`` out of ``bot``'s workers (the bot may be left without any)."""
        self.workers[bot].remove(conn)
        del self.seats[conn]
        self.worker_ids.pop(conn, None)

    def _forget_workers(self, bot: str) -> None:
        for conn in self.workers.pop(bot, ()):
            self.seats.pop(conn, None)
            self.worker_ids.pop(conn, None)
        self._wants.pop(bot, None)

    def connections_of(self, bot: str) -> list[WebSocketConnection]:
        """Every connection serving ``bot`` (its workers, or its one connection)."""
        workers = self.workers.get(bot)
        if workers:
            return list(workers)
        conn = self.bots.get(bot)
        return [] if conn is None else [conn]

    def want(self, bot: str, conn: WebSocketConnection) -> None:
        """Worker ``conn`` of ``bot`` asked for a match (no-op for a plain connection)."""
        wants = self._wants.get(bot)
        if wants is not None and conn in self.seats:
            wants.append(conn)

    def unwant(self, bot: str, conn: WebSocketConnection) -> None:
        """Worker ``conn`` of ``bot`` no longer asks for a match (it declined a challenge,
        or withdrew its seek)."""
        wants = self._wants.get(bot)
        if wants is not None and conn in wants:
            wants.remove(conn)

    def link_of(self, bot: str, load: Load | None = None) -> WebSocketConnection | None:
        """The connection to play ``bot``'s next match on (or a guest's) while it is online.

        For a bot served by workers, ``load`` counts each worker's live matches:
        the first worker that asked for a match and has a seat free plays it,
        else the one with the most seats free (see the module docstring).
        """
        workers = self.workers.get(bot)
        if not workers or load is None:
            return self.bots.get(bot) or self.guests.get(bot)
        wants = self._wants[bot]
        while wants:
            conn = wants.popleft()
            if conn in self.seats and load(conn) < self.seats[conn]:
                return conn
        return self.roomiest(bot, load)

    def roomiest(self, bot: str, load: Load) -> WebSocketConnection:
        """The worker of ``bot`` with the most seats free, counting those it asked to fill."""
        wants = self._wants[bot]
        return max(self.workers[bot], key=lambda c: self.seats[c] - load(c) - wants.count(c))

    def tell(self, bot: str, message: ServerMessage) -> None:
        """Send ``message`` to ``bot`` (or a guest) if it is online (a bot served by
        workers: to the newest)."""
        conn = self.bots.get(bot) or self.guests.get(bot)
        if conn is not None:
            conn.send(message)

    def tell_all(self, bot: str, message: ServerMessage) -> None:
        """Send ``message`` to every connection of ``bot`` (each of its workers), or to
        the guest ``bot``: news about the bot as a whole, such as its rating."""
        workers = self.workers.get(bot)
        if not workers:
            self.tell(bot, message)
            return
        for conn in workers:
            conn.send(message)


class Seats:
    """Who online has room for another match: ``Presence`` and the live matches."""

    def __init__(self, presence: Presence, matches: Playing) -> None:
        self._presence = presence
        self._matches = matches

    def free_seats(self, bot: str) -> int:
        """Matches bot ``bot`` may still start (0 offline, and for guests)."""
        if bot not in self._presence.bots:
            return 0
        return self._presence.max_matches.get(bot, 1) - self._matches.playing(bot)

    def has_capacity(self, bot: str) -> bool:
        """True when ``bot`` is online and plays fewer than its ``max_matches`` (a guest: 1)."""
        if bot in self._presence.bots:
            return self._matches.playing(bot) < self._presence.max_matches.get(bot, 1)
        return bot in self._presence.guests and self._matches.playing(bot) == 0

    def tell(self, bot: str, message: ServerMessage) -> None:
        """Send ``message`` to ``bot`` if it is online; a challenge to a bot served by
        workers goes to the worker with the most room, which is then asked to play."""
        presence = self._presence
        if type(message) is ChallengeReceived and presence.workers.get(bot):
            conn = presence.roomiest(bot, lambda link: self._matches.on_link(bot, link))
            presence.want(bot, conn)
            conn.send(message)
            return
        presence.tell(bot, message)

    def guest_opponents(self) -> list[dict[str, object]]:
        """The bots online that accept guests: name, games, and whether a seat is free now."""
        presence = self._presence
        return [
            {"bot": bot, "games": sorted(games), "busy": not self.has_capacity(bot)}
            for bot, games in sorted(presence.guest_games.items())
            if games and bot in presence.bots
        ]
