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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from arena.cli.common import Subparsers, open_store
from arena.errors import ArenaError
from arena.net.http import to_jsonable
from arena.store import MatchRecord
from protocol.games import GAMES

FORMATS = ("jsonl", "moves")
COLUMN_GAMES = ("connect4",)
"""Games with a column notation (``--format moves``)."""


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena export``."""
    export = commands.add_parser(
        "export",
        parents=[common],
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


def export_record(record: MatchRecord) -> dict[str, Any]:
    """The ``jsonl`` object of one match."""
    data: dict[str, Any] = to_jsonable(record)
    before = {change.bot: change.before for change in record.rating_changes}
    rated = record.rated and all(player in before for player in record.players)
    data["ratings_before"] = [before[p] for p in record.players] if rated else None
    return data


def column_string(record: MatchRecord) -> str:
    """The match's moves as 1-based column digits (Connect Four)."""
    return "".join(str(move.move + 1) for move in record.moves)


async def _export(args: argparse.Namespace, out: TextIO) -> int:
    if args.format == "moves" and args.game not in COLUMN_GAMES:
        raise ArenaError(
            f"--format moves is Connect Four's column notation; use --format jsonl for {args.game}"
        )
    store = await open_store(args.db, create=False)
    try:
        async for record in store.finished_matches(args.game, bot=args.bot, since=args.since):
            if args.format == "moves":
                out.write(column_string(record) + "\n")
            else:
                out.write(json.dumps(export_record(record), separators=(",", ":")) + "\n")
    finally:
        await store.close()
    out.flush()
    return 0
