"""The ``arena`` command: run the server, a demo, watch a match, manage bots and ratings.

Every subcommand that touches the database takes ``--db URL`` (default:
``$ARENA_DB`` or ``sqlite+aiosqlite:///arena.db`` in the current directory; a
plain file path means a SQLite file)::

    arena serve --host 127.0.0.1 --port 8765 --move-ms 1000 --bank-ms 0 --grace-s 30 \\
        [--mqtt mqtt://127.0.0.1:1883]
    arena demo [--game connect4] [--bots random,mcts-200] [--duration 60] [--mqtt URL]
    arena watch [MATCH_ID] [--url ws://127.0.0.1:8765] [--follow]
    arena bots add NAME...        # prints each bot's token, once
    arena bots add --if-missing --token-dir DIR NAME...   # idempotent, tokens in DIR/NAME
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
import re
import signal
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena import runtime
from arena.demo import BOT_NAMES, DEFAULT_BOTS, DEMO_PACE_MS, DemoOptions, run_demo
from arena.errors import BotExistsError
from arena.provision import ensure_bot, read_token_file, write_private
from arena.server import ArenaConfig
from arena.serving import ArenaApp
from arena.store import DEFAULT_URL, Store
from arena.watch import run_watch
from protocol.games import GAMES
from protocol.messages.values import BOT_NAME_PATTERN

DEFAULT_SERVER = "http://127.0.0.1:8765"
DEFAULT_WS = "ws://127.0.0.1:8765"


def db_url(text: str) -> str:
    """A database URL from ``--db``: URLs pass through, a plain path names a SQLite file."""
    if "://" in text:
        return text
    return f"sqlite+aiosqlite:///{Path(text).expanduser().resolve()}"


def _db_default() -> str:
    return os.environ.get("ARENA_DB", DEFAULT_URL)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``arena`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        type=db_url,
        default=_db_default(),
        help="database URL or SQLite file path (env ARENA_DB; default %(default)s)",
    )
    parser = argparse.ArgumentParser(prog="arena", description="MCTS Arena server and admin.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", parents=[common], help="run the arena server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument("--move-ms", type=int, default=1000, help="default per-move time")
    serve.add_argument("--bank-ms", type=int, default=0, help="default time bank")
    serve.add_argument("--grace-s", type=float, default=30.0, help="reconnect grace window")
    serve.add_argument(
        "--pace-ms",
        type=int,
        default=0,
        help="pause between a move and the next turn, on nobody's clock (for spectators)",
    )
    serve.add_argument("--k-factor", type=float, default=32.0, help="Elo K factor")
    serve.add_argument(
        "--pairing-window",
        type=float,
        default=ArenaConfig().pairing_window_s,
        help="seconds seeks gather before a pairing pass (default %(default)s)",
    )
    serve.add_argument(
        "--db-writer",
        choices=("process", "inline"),
        default="process",
        help="SQLite: write moves and results from a separate process (default) or the server's",
    )
    serve.add_argument("--mqtt", metavar="URL", help="publish live events to this MQTT broker")
    serve.add_argument("-v", "--verbose", action="store_true", help="debug logging")

    _add_demo_parser(commands, common)
    _add_watch_parser(commands)

    bots = commands.add_parser("bots", help="manage registered bots")
    bot_commands = bots.add_subparsers(dest="bots_command", required=True)
    add = bot_commands.add_parser(
        "add", parents=[common], help="register bots, print (or store) their tokens"
    )
    add.add_argument("names", nargs="+", metavar="NAME")
    add.add_argument(
        "--token-dir",
        type=Path,
        help="write each token to DIR/NAME (mode 0600) instead of printing it",
    )
    add.add_argument(
        "--if-missing",
        action="store_true",
        help="a registered bot is fine: keep its token if DIR/NAME still works, else reissue one",
    )
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


def _add_demo_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    demo = commands.add_parser(
        "demo",
        parents=[common],
        help="run the server with built-in bots playing rated matches; live leaderboard",
    )
    demo.add_argument("--game", default="connect4", choices=GAMES)
    demo.add_argument(
        "--bots",
        default=",".join(DEFAULT_BOTS),
        help=f"comma-separated subset of {','.join(BOT_NAMES)} (default: all)",
    )
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    demo.add_argument("--mqtt", metavar="URL", help="publish live events to this MQTT broker")
    demo.add_argument("--move-ms", type=int, default=1000, help="time per move (ms)")
    demo.add_argument(
        "--pace-ms",
        type=int,
        default=DEMO_PACE_MS,
        help=f"pause between moves, so people can follow (default {DEMO_PACE_MS}; 0: none)",
    )
    demo.add_argument(
        "--duration", type=float, metavar="SECONDS", help="stop by itself after this long"
    )
    demo.add_argument(
        "--refresh", type=float, default=2.0, metavar="SECONDS", help="leaderboard redraw period"
    )
    demo.add_argument("--quiet", action="store_true", help="no live leaderboard, just a summary")


def _add_watch_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``arena`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "serve":
            return runtime.run(_serve(args))
        if args.command == "demo":
            try:
                options = DemoOptions.from_args(args)
            except ValueError as exc:
                parser.error(str(exc))
            return runtime.run(run_demo(options))
        if args.command == "watch":
            return asyncio.run(run_watch(args.url, args.match_id, follow=args.follow))
        return asyncio.run(_admin(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` or similar that stopped reading; cleanup has run.
        # Point stdout at /dev/null so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


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
        pace_ms=args.pace_ms,
        pairing_window_s=args.pairing_window,
        db_writer_process=args.db_writer == "process",
    )
    try:
        app = ArenaApp(config, mqtt_url=args.mqtt)
    except ValueError as exc:
        print(f"error: --mqtt: {exc}", file=sys.stderr)
        return 2
    await app.start()
    runtime.settle_heap()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal(signame: str) -> None:
        if not stop.is_set():
            logging.getLogger(__name__).info("%s received, shutting down", signame)
            stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig.name)
    print(f"arena listening on ws://{config.host}:{app.server.port}", flush=True)
    await stop.wait()
    await app.stop("server shutting down")
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
        return await _add_bots(store, args.names, args.token_dir, args.if_missing)
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


async def _add_bots(
    store: Store, names: list[str], token_dir: Path | None, if_missing: bool
) -> int:
    """``bots add``: print fresh tokens, or keep them in ``token_dir`` (idempotently)."""
    status = 0
    for name in names:
        file = token_dir / name if token_dir is not None else None
        if file is not None and not _is_file_safe_name(name):
            # The name becomes a file name: no path separators, no hidden files, no "..".
            print(f"error: {name!r} is not a valid bot name", file=sys.stderr)
            status = 1
            continue
        try:
            if if_missing and file is not None:
                token, action = await ensure_bot(store, name, read_token_file(file))
            else:
                token, action = await store.add_bot(name), "added"
        except BotExistsError:
            if if_missing:  # no token file to fix: an existing bot is left as it is
                print(f"bot {name} is already registered")
                continue
            print(f"error: bot {name!r} already exists", file=sys.stderr)
            status = 1
            continue
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 1
            continue
        if file is None:
            print(f"added bot {name}; its token (shown only once):")
            print(token)
            continue
        if action != "kept":
            write_private(file, token + "\n")
        print(f"bot {name}: {action}, token in {file}")
    return status


def _is_file_safe_name(name: str) -> bool:
    return re.fullmatch(BOT_NAME_PATTERN, name) is not None and not name.startswith(".")


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
