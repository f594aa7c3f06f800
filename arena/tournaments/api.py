"""The tournament routes of the JSON API.

::

    GET  /api/tournaments               every tournament, newest first, with its leader
                                        or SPRT verdict (``standings.headline``)
    GET  /api/tournaments/ID            its status (``arena.tournaments.standings``)
    POST /api/tournaments               create one (admin), with the body
                                        {"settings": {...}, "openings": {"source":
                                        "builtin:connect4-2ply", "openings": [[3, 3], ...]}}
    POST /api/tournaments/ID/pause      pause, resume or cancel it (admin)
    POST /api/tournaments/ID/resume
    POST /api/tournaments/ID/cancel

The ``POST`` routes want ``Authorization: Bearer <admin token>`` (``admin``);
without it they answer ``401``. A request the tournament rules refuse gets
``400`` with ``{"error": "<one line>"}``; an unknown tournament ``404``.
"""

from __future__ import annotations

import json

from arena.errors import TournamentError
from arena.net.http import HttpRequest, HttpResponse, Router, json_error, json_response
from arena.tournaments.admin import token_matches
from arena.tournaments.openings import OpeningSuite, check_opening
from arena.tournaments.scheduler import TournamentScheduler
from arena.tournaments.settings import TournamentSettings


def add_tournament_routes(router: Router, scheduler: TournamentScheduler, admin_token: str) -> None:
    """Register the routes of the module docstring on ``router``."""

    def authorized(request: HttpRequest) -> bool:
        return token_matches(admin_token, request.headers.get("authorization"))

    async def listing(request: HttpRequest) -> HttpResponse:
        return json_response({"tournaments": await scheduler.listing()})

    async def one(request: HttpRequest) -> HttpResponse:
        try:
            return json_response(await scheduler.status(int(request.params["id"])))
        except TournamentError as exc:
            return json_error(404, str(exc))

    async def create(request: HttpRequest) -> HttpResponse:
        if not authorized(request):
            return json_error(401, "this needs the admin token (see docs/tournaments.md)")
        try:
            settings, suite = parse_create_body(request.body)
            tournament_id = await scheduler.create(settings, suite)
        except TournamentError as exc:
            return json_error(400, str(exc))
        return json_response({"id": tournament_id}, 201)

    async def change(request: HttpRequest) -> HttpResponse:
        if not authorized(request):
            return json_error(401, "this needs the admin token (see docs/tournaments.md)")
        tournament_id = int(request.params["id"])
        try:
            status = await scheduler.change(tournament_id, request.params["action"])
        except TournamentError as exc:
            return json_error(404 if str(exc).startswith("no tournament") else 400, str(exc))
        return json_response({"id": tournament_id, "status": status})

    router.add(r"/api/tournaments", listing)
    router.add(r"/api/tournaments", create, ("POST",), body=True)
    router.add(r"/api/tournaments/(?P<id>[0-9]{1,9})", one)
    router.add(
        r"/api/tournaments/(?P<id>[0-9]{1,9})/(?P<action>pause|resume|cancel)",
        change,
        ("POST",),
        body=True,
    )


def create_body(settings: TournamentSettings, suite: OpeningSuite) -> dict[str, object]:
    """The ``POST /api/tournaments`` body for ``settings`` played on ``suite``."""
    return {
        "settings": settings.to_json(),
        "openings": {"source": suite.source, "openings": [list(o) for o in suite.openings]},
    }


def parse_create_body(body: bytes) -> tuple[TournamentSettings, OpeningSuite]:
    """``create_body``'s object back, checked; ``TournamentError`` when it is not one."""
    try:
        data = json.loads(body or b"null")
    except ValueError:
        raise TournamentError("the body must be JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("openings"), dict):
        raise TournamentError('the body must be {"settings": {...}, "openings": {...}}')
    settings = TournamentSettings.from_json(data.get("settings")).check()
    raw = data["openings"]
    sequences = raw.get("openings")
    if not isinstance(sequences, list) or not sequences:
        raise TournamentError("openings must hold a non-empty list of move lists")
    openings: list[tuple[int, ...]] = []
    for number, sequence in enumerate(sequences, 1):
        if not isinstance(sequence, list) or not all(
            type(move) is int for move in sequence
        ):
            raise TournamentError(f"opening {number} is not a list of moves")
        check_opening(tuple(sequence), settings.game, f"opening {number}")
        openings.append(tuple(sequence))
    return settings, OpeningSuite(str(raw.get("source", "request"))[:255], tuple(openings))
