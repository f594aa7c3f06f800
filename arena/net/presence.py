"""Who is online: the bots and guests connected, and what each may still take on.

``Presence`` is the table of who is online, created before the parts that
ask about it (the match registry, the rating notices, the API) and before
the gateway, which fills it as bots and guests say hello and leave. So the
server's parts are built in dependency order, none reaching back to a
gateway that does not exist yet (``arena.server.assemble``).

``Seats`` adds the live matches to it: whether a bot has room for another
match (pairing, tournaments, guests' choice of opponents).
"""

from __future__ import annotations

from typing import Protocol

from arena.net.websocket import WebSocketConnection
from protocol.messages import ServerMessage


class Playing(Protocol):
    """How many live matches a bot plays (``MatchRegistry``)."""

    def playing(self, bot: str) -> int:
        """Live matches of ``bot``."""


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
        """Each bot online's ``max_matches`` (its hello's)."""

    def is_online(self, bot: str) -> bool:
        """True while ``bot`` (a bot, not a guest) is logged in."""
        return bot in self.bots

    def link_of(self, bot: str) -> WebSocketConnection | None:
        """The connection of ``bot`` (or of a guest) while it is online."""
        return self.bots.get(bot) or self.guests.get(bot)

    def tell(self, bot: str, message: ServerMessage) -> None:
        """Send ``message`` to ``bot`` (or a guest) if it is online."""
        conn = self.bots.get(bot) or self.guests.get(bot)
        if conn is not None:
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
        """Send ``message`` to ``bot`` if it is online."""
        self._presence.tell(bot, message)

    def guest_opponents(self) -> list[dict[str, object]]:
        """The bots online that accept guests: name, games, and whether a seat is free now."""
        presence = self._presence
        return [
            {"bot": bot, "games": sorted(games), "busy": not self.has_capacity(bot)}
            for bot, games in sorted(presence.guest_games.items())
            if games and bot in presence.bots
        ]
