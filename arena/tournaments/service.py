"""Tournaments plugged into a server: the scheduler, its routes, its page.

The server's assembly (``arena.server.assemble``) calls ``attach_tournaments``
once the parts it needs exist, with those parts only: the store, the live
matches, the lobby, who has a free seat (``arena.net.presence.Seats``), the
router and the supervisor's ``spawn``. The scheduler starts matches through
the registry, offers games through the lobby, and sees who is online through
the seats; its loop is one of the server's supervised tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.net.http import Router
from arena.play.lobby import Lobby
from arena.play.match import Spawn
from arena.play.registry import MatchRegistry
from arena.store import Store
from arena.tournaments.admin import new_admin_token
from arena.tournaments.api import add_tournament_routes
from arena.tournaments.scheduler import Seats, TournamentScheduler


@dataclass(frozen=True, slots=True)
class TournamentService:
    """What ``attach_tournaments`` plugged in."""

    scheduler: TournamentScheduler
    admin_token: str
    """Authorizes the API's changing routes; ``arena serve`` writes it to the admin file."""


def attach_tournaments(
    store: Store,
    registry: MatchRegistry,
    lobby: Lobby,
    seats: Seats,
    *,
    router: Router,
    spawn: Spawn,
    accepting: Callable[[], bool],
    admin_token: str | None = None,
) -> TournamentService:
    """Create the scheduler, add its API routes to ``router`` and start it."""
    scheduler = TournamentScheduler(store, registry, lobby, seats, spawn=spawn, accepting=accepting)
    token = admin_token or new_admin_token()
    add_tournament_routes(router, scheduler, token)
    scheduler.start()
    return TournamentService(scheduler, token)
