"""The rating routes of the JSON API: head-to-head records and bot pages.

    GET /api/h2h?game=connect4&a=X&b=Y   X against Y: W/D/L, elo_interval (95%) and LOS,
                                         and the fitted rating difference
    GET /api/bots/NAME                   ratings per game with intervals and history,
                                         opponents, the latest matches

Both read the cached boards of ``arena.leaderboard``; neither fits anything
per request (a bot page's history is cached per board).
"""

from __future__ import annotations

from typing import Protocol
from urllib.parse import unquote

from arena.leaderboard import BotProfiles, Leaderboards, head_to_head
from arena.net.http import HttpRequest, HttpResponse, Router, json_error, json_response
from arena.store import BotRecord
from protocol.errors import ProtocolError


class BotLookup(Protocol):
    """Tells whether a bot exists (``Store.get_bot``)."""

    async def get_bot(self, name: str) -> BotRecord | None:
        """The bot, active or removed, or None."""
        ...


class RatingsApi:
    """Answers ``/api/h2h`` and ``/api/bots/NAME``; see the module docstring."""

    def __init__(self, bots: BotLookup, leaderboards: Leaderboards, profiles: BotProfiles) -> None:
        self._bots = bots
        self._leaderboards = leaderboards
        self._profiles = profiles

    def add_routes(self, router: Router) -> None:
        """Register the module's routes on ``router``."""
        router.add(r"/api/h2h", self._h2h)
        router.add(r"/api/bots/(?P<name>[^/]+)", self._bot)

    async def _h2h(self, request: HttpRequest) -> HttpResponse:
        game, a, b = (request.query.get(key) for key in ("game", "a", "b"))
        if not (game and a and b):
            return json_error(400, "query parameters game, a and b are required")
        if a == b:
            return json_error(400, "a and b must be two different bots")
        try:
            board = await self._leaderboards.board(game)
        except ProtocolError as exc:
            return json_error(404, exc.message)
        rated = {line.name for line in board.fit.ratings}
        for name in (a, b):
            if name not in rated and await self._bots.get_bot(name) is None:
                return json_error(404, f"no such bot: {name}")
        return json_response(head_to_head(board, a, b).to_json())

    async def _bot(self, request: HttpRequest) -> HttpResponse:
        name = unquote(request.params["name"])
        profile = await self._profiles.profile(name)
        if profile is None:
            return json_error(404, f"no such bot: {name}")
        return json_response(profile)
