"""The ``arena`` command: run the server, manage bots, show the leaderboard, rebuild ratings.

Every subcommand takes ``--db URL`` (default: ``$ARENA_DB`` or
``sqlite+aiosqlite:///arena.db`` in the current directory)::

    arena serve --host 127.0.0.1 --port 8765 --move-ms 1000 --bank-ms 0 --grace-s 30
    arena bots add NAME          # prints the bot's token, once
    arena bots list
    arena bots remove NAME
    arena leaderboard --game connect4 [--server http://127.0.0.1:8765]
    arena ratings rebuild
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from arena.errors import BotExistsError
from arena.server import ArenaConfig, ArenaServer
from arena.store import DEFAULT_URL, Store
from protocol.games import GAMES

DEFAULT_SERVER = "http://127.0.0.1:8765"


def _db_default() -> str:
    return os.environ.get("ARENA_DB", DEFAULT_URL)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``arena`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db", default=_db_default(), help="database URL (env ARENA_DB; default %(default)s)"
    )
    parser = argparse.ArgumentParser(prog="arena", description="MCTS Arena server and admin.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", parents=[common], help="run the arena server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument("--move-ms", type=int, default=1000, help="default per-move time")
    serve.add_argument("--bank-ms", type=int, default=0, help="default time bank")
    serve.add_argument("--grace-s", type=float, default=30.0, help="reconnect grace window")
    serve.add_argument("--k-factor", type=float, default=32.0, help="Elo K factor")
    serve.add_argument("-v", "--verbose", action="store_true", help="debug logging")

    bots = commands.add_parser("bots", help="manage registered bots")
    bot_commands = bots.add_subparsers(dest="bots_command", required=True)
    add = bot_commands.add_parser("add", parents=[common], help="register a bot, print its token")
    add.add_argument("name")
    bot_commands.add_parser("list", parents=[common], help="list registered bots")
    remove = bot_commands.add_parser("remove", parents=[common], help="deactivate a bot")
    remove.add_argument("name")

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``arena`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "serve":
            return asyncio.run(_serve(args))
        return asyncio.run(_admin(args))
    except KeyboardInterrupt:
        return 130


async def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    config = ArenaConfig(
        host=args.host,
        port=args.port,
        db_url=args.db,
        move_ms=args.move_ms,
        bank_ms=args.bank_ms,
        grace_s=args.grace_s,
        k_factor=args.k_factor,
    )
    server = ArenaServer(config)
    await server.start()
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    def stop(signame: str) -> None:
        if not stopping:
            logging.getLogger(__name__).info("%s received, shutting down", signame)
            stopping.append(loop.create_task(server.shutdown(f"server shutting down ({signame})")))

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop, sig.name)
    print(f"arena listening on ws://{config.host}:{server.port}", flush=True)
    await server.wait_stopped()
    return 0


async def _admin(args: argparse.Namespace) -> int:
    store = await Store.open(args.db)
    try:
        if args.command == "bots":
            return await _bots(store, args)
        if args.command == "leaderboard":
            return await _leaderboard(store, args.game, args.server)
        if args.command == "ratings":
            count = await store.rebuild_ratings()
            print(f"rebuilt ratings from {count} rated matches")
            return 0
    finally:
        await store.close()
    return 2


async def _bots(store: Store, args: argparse.Namespace) -> int:
    if args.bots_command == "add":
        try:
            token = await store.add_bot(args.name)
        except (BotExistsError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"added bot {args.name}; its token (shown only once):")
        print(token)
        return 0
    if args.bots_command == "list":
        rows = [
            [bot.name, bot.created_at.strftime("%Y-%m-%d %H:%M"), "yes" if bot.active else "no"]
            for bot in await store.list_bots(include_inactive=True)
        ]
        print(format_table(["bot", "created", "active"], rows))
        return 0
    if await store.remove_bot(args.name):
        print(f"removed bot {args.name}")
        return 0
    print(f"error: no active bot named {args.name!r}", file=sys.stderr)
    return 1


def _fetch_online(server: str, game: str) -> dict[str, bool] | None:
    """Ask a running server who is online; None when it cannot be reached."""
    url = f"{server.rstrip('/')}/api/leaderboard?game={game}"
    with contextlib.suppress(OSError, ValueError, urllib.error.URLError):
        with urllib.request.urlopen(url, timeout=2) as response:
            data: dict[str, Any] = json.load(response)
        return {row["bot"]: bool(row["online"]) for row in data["entries"]}
    return None


async def _leaderboard(store: Store, game: str, server: str) -> int:
    rows = await store.leaderboard(game)
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


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """A plain left-aligned text table."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


if __name__ == "__main__":
    sys.exit(main())
