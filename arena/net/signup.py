"""Self-service sign-up: ``POST /api/bots`` creates a bot and answers its token, once.

Off by default (``arena serve --registration open`` turns it on); while it is
closed the route answers 403. A request is JSON ``{"name": "NAME"}`` with
``Content-Type: application/json`` (so a page on another site cannot send
one from a visitor's browser without a preflight, which the server does not
answer). The answer is 201 ``{"name": NAME, "token": TOKEN}``; only the
token's hash is stored, so it is never shown again.

Abuse limits (``SignUpLimits``, documented in docs/operations.md): each
client address may try ``per_address`` times an hour (a refused name counts
too, so names cannot be probed in bulk) and the server creates at most
``per_hour`` bots an hour in all; beyond either the answer is 429 with
``Retry-After``. Refusals are logged once a minute with their count. The
operator lists bots and disables one with ``arena bots list`` and ``arena
bots remove``; a name once taken, even by a removed bot, is never given out
again.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from arena.errors import BotExistsError, InvalidBotNameError
from arena.net.http import HttpRequest, HttpResponse, Router, json_error, json_response

log = logging.getLogger(__name__)

WINDOW_S = 3600.0
"""The sign-up limits count requests over this window (an hour)."""


@dataclass(frozen=True, slots=True)
class SignUpLimits:
    """How much sign-up one address and the whole server allow; see the module docstring."""

    per_address: int = 5
    """Sign-up requests per client address an hour (refused names count)."""
    per_hour: int = 100
    """Bots created an hour, over all addresses."""
    max_addresses: int = 10_000
    """Addresses remembered at most (the oldest are forgotten first)."""


class Accounts(Protocol):
    """Where bots are created (``Store.add_bot``)."""

    async def add_bot(self, name: str) -> str:
        """Register ``name``; its token."""
        ...


class SignUp:
    """``POST /api/bots``; see the module docstring."""

    def __init__(
        self,
        accounts: Accounts,
        *,
        open_: bool,
        limits: SignUpLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._accounts = accounts
        self.open = open_
        self._limits = limits or SignUpLimits()
        self._clock = clock
        self._tries: OrderedDict[str, deque[float]] = OrderedDict()
        self._created: deque[float] = deque()
        self.created = 0
        """Bots created through sign-up since the server started."""
        self.refused = 0
        """Sign-up requests refused by the limits since the server started."""
        self._refused_logged = 0
        self._logged_at = -math.inf

    def add_routes(self, router: Router) -> None:
        """Register ``POST /api/bots``."""
        router.add(r"/api/bots", self._sign_up, ("POST",), body=True)

    async def _sign_up(self, request: HttpRequest) -> HttpResponse:
        if not self.open:
            return json_error(
                403, "sign-up is closed on this server: ask its operator to register your bot"
            )
        wait = self._admit(request.remote)
        if wait is not None:
            return json_error(
                429, "too many sign-ups: try again later", {"Retry-After": str(math.ceil(wait))}
            )
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return json_error(415, "send the request as Content-Type: application/json")
        try:
            body = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            return json_error(400, 'the body must be a JSON object {"name": "..."}')
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str) or set(body) != {"name"}:
            return json_error(400, 'the body must be a JSON object {"name": "..."}')
        try:
            token = await self._accounts.add_bot(name)
        except InvalidBotNameError as exc:
            return json_error(400, str(exc))
        except BotExistsError:
            return json_error(409, f"the name {name!r} is taken")
        self._created.append(self._clock())
        self.created += 1
        log.info("bot %s signed up from %s", name, request.remote)
        response = json_response({"name": name, "token": token}, 201)
        return HttpResponse(response.status, response.body, headers={"Cache-Control": "no-store"})

    def _admit(self, address: str) -> float | None:
        """Count one request from ``address``; None if allowed, else seconds to wait."""
        now = self._clock()
        since = now - WINDOW_S
        while self._created and self._created[0] <= since:
            self._created.popleft()
        tries = self._tries.pop(address, None) or deque()
        while tries and tries[0] <= since:
            tries.popleft()
        self._tries[address] = tries  # the most recent address last
        while len(self._tries) > self._limits.max_addresses:
            self._tries.popitem(last=False)
        wait = None
        if len(tries) >= self._limits.per_address:
            wait = tries[0] + WINDOW_S - now
        elif len(self._created) >= self._limits.per_hour:
            wait = self._created[0] + WINDOW_S - now
        if wait is None:
            tries.append(now)
            return None
        self.refused += 1
        if now - self._logged_at >= 60.0:
            log.warning(
                "sign-up refused %d times since the last such line (limits: %d an hour per"
                " address, %d bots an hour in all); the latest from %s",
                self.refused - self._refused_logged,
                self._limits.per_address,
                self._limits.per_hour,
                address,
            )
            self._logged_at, self._refused_logged = now, self.refused
        return max(wait, 1.0)
