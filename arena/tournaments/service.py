"""Tournaments plugged into a running ``ArenaServer``: the scheduler, its routes, its page.

``ArenaServer`` calls ``attach_tournaments(self)`` once its parts exist; that
is the whole wiring. The scheduler starts matches through the server's
registry, offers games through its lobby, and sees who is online through
its gateway; its loop is one of the server's supervised tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.net.gateway import Gateway
from arena.play.registry import MatchRegistry
from arena.tournaments.admin import new_admin_token
from arena.tournaments.api import add_tournament_routes
from arena.tournaments.scheduler import TournamentScheduler
from protocol.messages import ServerMessage

if TYPE_CHECKING:
    from arena.server import ArenaServer


class ServerSeats:
    """``Seats`` from the gateway (who is online, their ``max_matches``) and the registry."""

    def __init__(self, gateway: Gateway, registry: MatchRegistry) -> None:
        self._gateway = gateway
        self._registry = registry

    def free_seats(self, bot: str) -> int:
        """Matches ``bot`` may still start (0 offline)."""
        if bot not in self._gateway.bots:
            return 0
        return self._gateway.max_matches.get(bot, 1) - self._registry.playing(bot)

    def tell(self, bot: str, message: ServerMessage) -> None:
        """Send ``message`` to ``bot`` if it is online."""
        self._gateway.tell(bot, message)


@dataclass(frozen=True, slots=True)
class TournamentService:
    """What ``attach_tournaments`` plugged in."""

    scheduler: TournamentScheduler
    admin_token: str
    """Authorizes the API's changing routes; ``arena serve`` writes it to the admin file."""


def attach_tournaments(server: ArenaServer, admin_token: str | None = None) -> TournamentService:
    """Create the scheduler for ``server``, add its API routes and start it."""
    scheduler = TournamentScheduler(
        server.store,
        server.registry,
        server.lobby,
        ServerSeats(server.gateway, server.registry),
        spawn=server.supervisor.spawn,
        accepting=lambda: server.gateway.accepting,
    )
    token = admin_token or new_admin_token()
    add_tournament_routes(server.router, scheduler, token)
    scheduler.start()
    return TournamentService(scheduler, token)
