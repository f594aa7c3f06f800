"""``arena bots``: register, list and remove bots."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path

from arena.cli.common import Subparsers, open_store
from arena.cli.tables import format_table
from arena.errors import BotExistsError
from arena.provision import ensure_bot, read_token_file, write_private
from arena.store import Store
from protocol.messages.values import BOT_NAME_PATTERN


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena bots add|list|remove``."""
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
    bots.set_defaults(run=lambda args: asyncio.run(_run(args)))


async def _run(args: argparse.Namespace) -> int:
    store = await open_store(args.db, create=args.bots_command == "add")
    try:
        return await _bots(store, args)
    finally:
        await store.close()


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
