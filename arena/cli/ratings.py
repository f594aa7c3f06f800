"""``arena leaderboard`` and ``arena ratings``: ratings as stored."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import urllib.error
import urllib.request
from typing import Any

from arena.cli.common import DEFAULT_SERVER, Subparsers, open_store
from arena.cli.tables import format_table
from protocol.games import GAMES


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena leaderboard`` and ``arena ratings rebuild``."""
    board = commands.add_parser("leaderboard", parents=[common], help="print a leaderboard")
    board.add_argument("--game", default="connect4", choices=GAMES)
    board.add_argument(
        "--server", default=DEFAULT_SERVER, help="a running server to ask who is online"
    )

    ratings = commands.add_parser("ratings", help="rating maintenance")
    rating_commands = ratings.add_subparsers(dest="ratings_command", required=True)
    rating_commands.add_parser(
        "rebuild", parents=[common], help="recompute every rating from the match history"
    )
    board.set_defaults(run=lambda args: asyncio.run(_leaderboard(args.db, args.game, args.server)))
    rating_commands.choices["rebuild"].set_defaults(run=lambda args: asyncio.run(_rebuild(args.db)))


async def _rebuild(url: str) -> int:
    store = await open_store(url, create=False)
    try:
        count = await store.rebuild_ratings()
    finally:
        await store.close()
    print(f"rebuilt ratings from {count} rated matches")
    return 0


def _fetch_online(server: str, game: str) -> dict[str, bool] | None:
    """Ask a running server who is online; None when it cannot be reached."""
    url = f"{server.rstrip('/')}/api/leaderboard?game={game}"
    with contextlib.suppress(OSError, ValueError, urllib.error.URLError):
        with urllib.request.urlopen(url, timeout=2) as response:
            data: dict[str, Any] = json.load(response)
        return {row["bot"]: bool(row["online"]) for row in data["entries"]}
    return None


async def _leaderboard(url: str, game: str, server: str) -> int:
    store = await open_store(url, create=False)
    try:
        rows = await store.leaderboard(game)
    finally:
        await store.close()
    online = await asyncio.to_thread(_fetch_online, server, game)
    table = [
        [
            str(row.rank),
            row.bot,
            f"{row.rating:.0f}",
            str(row.games),
            f"{row.wins}/{row.draws}/{row.losses}",
            "-" if online is None else ("yes" if online.get(row.bot) else "no"),
        ]
        for row in rows
    ]
    print(f"{game} leaderboard" + ("" if online is not None else " (server not reachable)"))
    print(format_table(["rank", "bot", "rating", "games", "W/D/L", "online"], table))
    return 0
