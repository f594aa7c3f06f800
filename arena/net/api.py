"""The arena's read side: the JSON API over HTTP, and the queries websockets and MQTT share.

Routes (all ``GET``, answered as JSON; other methods get ``405``)::

    GET /healthz                    server status; 503 while results cannot be stored
    GET /api/leaderboard?game=NAME  fitted ratings with intervals and online flags
    GET /api/matches?status=&game=&bot=&limit=&before=
                                    matches newest first, a page at a time (``paging``)
    GET /api/matches/ID             one match with its moves and their solved values, if analysed
    GET /api/h2h?game=G&a=X&b=Y     two bots' record, Elo interval and LOS (``ratings_api``)
    GET /api/bots/NAME              a bot's ratings, history, opponents, matches (``ratings_api``)
    GET /api/play                   the bots online that accept guest challenges

Leaderboards come from the cached boards of ``arena.leaderboard`` (refitted
when results commit, never per request). Every response body is described
by ``protocol/http-schema.json`` (see ``docs/http.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from arena.leaderboard import Board, BotProfiles, Leaderboards
from arena.net.http import HttpRequest, HttpResponse, Router, json_error, json_response, to_jsonable
from arena.net.paging import BadQuery, MatchQuery, encode_cursor
from arena.net.ratings_api import RatingsApi
from arena.play.registry import MatchRegistry
from arena.store import Store
from protocol.errors import ProtocolError
from protocol.messages import LeaderboardEntry


class Health(Protocol):
    """The server's status for ``/healthz``: an HTTP status and the body."""

    def __call__(self) -> tuple[int, dict[str, Any]]:
        """``(200, {...})`` when healthy, ``(503, {...})`` when degraded or stopping."""
        ...


class ArenaApi:
    """Answers the read-only questions about the arena; see the module docstring."""

    def __init__(
        self,
        store: Store,
        registry: MatchRegistry,
        leaderboards: Leaderboards,
        *,
        is_online: Callable[[str], bool],
        health: Health,
        guest_opponents: Callable[[], list[dict[str, object]]] = list,
    ) -> None:
        self._store = store
        self._registry = registry
        self.leaderboards = leaderboards
        """The cached fitted boards (``arena.leaderboard``)."""
        self._is_online = is_online
        self._health = health
        self._guest_opponents = guest_opponents
        self._ratings = RatingsApi(store, leaderboards, BotProfiles(store, leaderboards, is_online))

    async def leaderboard_entries(self, game: str) -> list[LeaderboardEntry]:
        """``game``'s leaderboard with online flags; raises ``no_such_game``."""
        return (await self.leaderboards.board(game)).entries(self._is_online)

    async def leaderboard_json(self, game: str) -> list[dict[str, Any]]:
        """Leaderboard rows as JSON objects (``/api/leaderboard``, MQTT)."""
        return self.board_json(await self.leaderboards.board(game))

    def board_json(self, board: Board) -> list[dict[str, Any]]:
        """A built board's rows as JSON objects, with online flags as of now."""
        return [entry.to_dict() for entry in board.entries(self._is_online)]

    async def matches_json(self, query: MatchQuery) -> dict[str, Any]:
        """One page of matches, newest first, and the cursor of the next page (or None).

        Live matches this server runs also show their ``ply`` and ``position``.
        """
        found = await self._store.list_matches(
            query.status, query.game, query.limit + 1, bot=query.bot, before=query.before
        )
        page = found[: query.limit]
        live = (
            {m.match_id: m for m in self._registry} if any(m.status == "live" for m in page) else {}
        )
        matches: list[dict[str, Any]] = []
        for summary in page:
            item: dict[str, Any] = to_jsonable(summary)
            match = live.get(summary.id)
            if match is not None:
                item.update(ply=match.ply, position=match.position)
            matches.append(item)
        last = page[-1] if len(found) > query.limit else None
        return {
            "matches": matches,
            "next": None if last is None else encode_cursor(last.started_at, last.id),
        }

    async def match_json(self, match_id: str) -> dict[str, Any] | None:
        """One stored match with its moves (those still in the group-commit buffer too) and
        the solved values of those ``arena analyse`` analysed."""
        record = await self._store.get_match(match_id)
        if record is None:
            return None
        data: dict[str, Any] = to_jsonable(record)
        data["solved"] = to_jsonable(await self._store.match_analysis(match_id))
        return data

    def add_routes(self, router: Router) -> None:
        """Register the routes of the module docstring on ``router``."""
        router.add(r"/healthz", self._healthz)
        router.add(r"/api/leaderboard", self._leaderboard)
        router.add(r"/api/matches", self._matches)
        router.add(r"/api/matches/(?P<match_id>[A-Za-z0-9_.:-]+)", self._one_match)
        router.add(r"/api/play", self._play)
        self._ratings.add_routes(router)

    async def _healthz(self, request: HttpRequest) -> HttpResponse:
        status, body = self._health()
        return json_response(body, status)

    async def _play(self, request: HttpRequest) -> HttpResponse:
        return json_response({"bots": self._guest_opponents()})

    async def _leaderboard(self, request: HttpRequest) -> HttpResponse:
        game = request.query.get("game")
        if not game:
            return json_error(400, "missing query parameter: game")
        try:
            board = await self.leaderboards.board(game)
        except ProtocolError as exc:
            return json_error(404, exc.message)
        return json_response(
            {"game": game, "entries": self.board_json(board), "groups": board.groups()}
        )

    async def _matches(self, request: HttpRequest) -> HttpResponse:
        try:
            query = MatchQuery.parse(request.query)
        except BadQuery as exc:
            return json_error(400, str(exc))
        return json_response(await self.matches_json(query))

    async def _one_match(self, request: HttpRequest) -> HttpResponse:
        record = await self.match_json(request.params["match_id"])
        if record is None:
            return json_error(404, "no such match")
        return json_response(record)
