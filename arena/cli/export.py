"""``arena export``: stored games, streamed to standard output for analysis elsewhere.

Two formats (``docs/export.md`` describes both):

- ``jsonl``: one finished match per line, the object ``GET /api/matches/ID``
  answers (players, time control, result, termination, moves with think
  times, rating changes) plus ``ratings_before``, both players' ratings
  going into the match (null when it was unrated);
- ``moves``: one Connect Four game per line in column notation, the
  1-based columns of its moves from the empty board (``4453...``).

Matches come oldest first, read a page at a time, so an export of any size
runs in constant memory and can be piped (``| head`` stops it cleanly). It
only reads: it works while a server runs on the same database.

With ``--server URL`` and no ``--db`` it reads a running server's HTTP API
instead (``GET /api/matches`` pages, then ``GET /api/matches/ID`` each;
``arena.cli.remote``), for a bot author without the database; the lines are
the same, written by the same functions from the same JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, TextIO
from urllib.parse import quote

from arena.cli import remote
from arena.cli.common import (
    Subparsers,
    default_db,
    open_store,
    remote_capable_parser,
    remote_only,
)
from arena.errors import ArenaError
from arena.net.http import to_jsonable
from protocol.games import GAMES

FORMATS = ("jsonl", "moves")
COLUMN_GAMES = ("connect4",)
"""Games with a column notation (``--format moves``)."""


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena export``."""
    export = commands.add_parser(
        "export",
        parents=[remote_capable_parser()],
        help="write stored games to standard output (JSON lines or move strings)",
        description="Write the finished matches of one game to standard output, oldest "
        "first. See docs/export.md for both formats.",
    )
    export.add_argument("--game", required=True, choices=GAMES)
    export.add_argument("--bot", metavar="NAME", help="only matches this bot played")
    export.add_argument(
        "--since",
        metavar="DATE",
        type=since_date,
        help="only matches started at or after this ISO date or time (UTC unless it says)",
    )
    export.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl: a JSON object per match (default); moves: Connect Four column strings",
    )
    export.add_argument(
        "--server",
        help="without --db: read a running server's HTTP API (http://, https://, ws://, wss://)",
    )
    export.set_defaults(run=lambda args: asyncio.run(_export(args, sys.stdout)))


def since_date(text: str) -> datetime:
    """An ISO date (``2026-11-01``) or time; a time without an offset is UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO date like 2026-11-01 or 2026-11-01T12:00, not {text!r}"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def export_record(data: dict[str, Any]) -> dict[str, Any]:
    """The ``jsonl`` object of one match, from its ``GET /api/matches/ID`` object."""
    data = {key: value for key, value in data.items() if key != "solved"}
    before = {change["bot"]: change["before"] for change in data["rating_changes"]}
    rated = data["rated"] and all(player in before for player in data["players"])
    data["ratings_before"] = [before[p] for p in data["players"]] if rated else None
    return data


def column_string(data: dict[str, Any]) -> str:
    """The match's moves as 1-based column digits (Connect Four), from its JSON object."""
    return "".join(str(move["move"] + 1) for move in data["moves"])


def export_line(data: dict[str, Any], fmt: str) -> str:
    """One output line (``fmt``: ``jsonl`` or ``moves``) of a match's JSON object."""
    if fmt == "moves":
        return column_string(data)
    return json.dumps(export_record(data), separators=(",", ":"))


def remote_matches(
    server: str, game: str, bot: str | None, since: datetime | None
) -> Iterator[dict[str, Any]]:
    """The finished matches of ``game`` (of ``bot``), oldest first, from ``server``'s API.

    The pages come newest first: their ids are gathered (a few bytes each), then each
    match is fetched in turn.
    """
    ids: list[str] = []
    before: str | None = None
    while True:
        query = {"game": game, "bot": bot, "status": "finished", "limit": 500, "before": before}
        page = remote.call(server, "/api/matches", query)
        for summary in page["matches"]:
            if since is not None and datetime.fromisoformat(summary["started_at"]) < since:
                page["next"] = None  # older ones follow: done
                break
            ids.append(summary["id"])
        before = page["next"]
        if before is None:
            break
    for match_id in reversed(ids):
        yield remote.call(server, f"/api/matches/{quote(match_id)}")


async def _export(args: argparse.Namespace, out: TextIO) -> int:
    if args.format == "moves" and args.game not in COLUMN_GAMES:
        raise ArenaError(
            f"--format moves is Connect Four's column notation; use --format jsonl for {args.game}"
        )
    server = remote_only(args)
    if server is not None:
        await asyncio.to_thread(_export_remote, server, args, out)
        return 0
    store = await open_store(args.db or default_db(), create=False)
    try:
        async for record in store.finished_matches(args.game, bot=args.bot, since=args.since):
            out.write(export_line(to_jsonable(record), args.format) + "\n")
    finally:
        await store.close()
    out.flush()
    return 0


def _export_remote(server: str, args: argparse.Namespace, out: TextIO) -> None:
    for data in remote_matches(server, args.game, args.bot, args.since):
        out.write(export_line(data, args.format) + "\n")
    out.flush()
