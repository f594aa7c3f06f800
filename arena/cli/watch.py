"""``arena watch``: follow a live match in the terminal."""

from __future__ import annotations

import argparse
import asyncio

from arena.cli.common import DEFAULT_WS, Subparsers
from arena.live.watch import run_watch


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena watch`` (it talks to a server, not the database)."""
    watch = commands.add_parser(
        "watch", help="follow a live match (or the next to start) in the terminal"
    )
    watch.add_argument(
        "match_id",
        nargs="?",
        help="the match to follow (default: any live one); an old id that starts with '-' "
        "goes after '--': arena watch -- -Ab3x",
    )
    watch.add_argument("--url", default=DEFAULT_WS, help="server websocket URL")
    watch.add_argument(
        "--follow", action="store_true", help="after the end, go on with the next match"
    )
    watch.set_defaults(
        run=lambda args: asyncio.run(run_watch(args.url, args.match_id, follow=args.follow))
    )
