"""The query of ``GET /api/matches``: filters, page size and the ``before`` cursor.

Matches are listed newest first. A page that may have more after it carries
``next``, an opaque cursor; passing it back as ``?before=`` gives the page
after (keyset paging: stable while new matches start, and as cheap on the
thousandth page as on the first). A cursor is the base64url text of the last
listed match's start time and id; clients should not build their own.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from protocol.games import GAMES
from protocol.numbers import NumberError, parse_int

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
STATUSES = ("live", "finished", "aborted")
PARAMETERS = ("status", "game", "bot", "limit", "before")
_BOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class BadQuery(ValueError):
    """A query parameter is unknown or has a bad value (an HTTP 400)."""


@dataclass(frozen=True, slots=True)
class MatchQuery:
    """A parsed ``/api/matches`` query."""

    status: str | None = None
    game: str | None = None
    bot: str | None = None
    limit: int = DEFAULT_LIMIT
    before: tuple[datetime, str] | None = None

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> MatchQuery:
        """Check every parameter; ``BadQuery`` names the first bad one."""
        unknown = sorted(set(query) - set(PARAMETERS))
        if unknown:
            raise BadQuery(
                f"unknown query parameter: {unknown[0]} (known: {', '.join(PARAMETERS)})"
            )
        status = query.get("status") or None
        if status is not None and status not in STATUSES:
            raise BadQuery(f"status must be {', '.join(STATUSES[:-1])} or {STATUSES[-1]}")
        game = query.get("game") or None
        if game is not None and game not in GAMES:
            raise BadQuery(f"no such game: {game} (games: {', '.join(GAMES)})")
        bot = query.get("bot") or None
        if bot is not None and not _BOT_NAME.fullmatch(bot):
            raise BadQuery("bot must be a bot name")
        try:
            limit = parse_int(
                query.get("limit", str(DEFAULT_LIMIT)), "limit", low=1, high=MAX_LIMIT
            )
        except NumberError as exc:
            raise BadQuery(str(exc)) from None
        before = decode_cursor(query["before"]) if query.get("before") else None
        return cls(status, game, bot, limit, before)


def encode_cursor(started_at: datetime, match_id: str) -> str:
    """The cursor after the match that started at ``started_at`` with id ``match_id``."""
    raw = f"{started_at.isoformat()}|{match_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The ``(started_at, id)`` a cursor stands for; ``BadQuery`` if it is not one."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        when, match_id = raw.split("|", 1)
        started_at = datetime.fromisoformat(when)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadQuery("before must be a cursor from a previous page's next") from None
    if started_at.tzinfo is None or not match_id:
        raise BadQuery("before must be a cursor from a previous page's next")
    return started_at, match_id
