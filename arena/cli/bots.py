"""``arena bots``: register, list and remove bots, and give one a new token; and sign up.

``bots register --server URL NAME`` is the one command here that needs no
database: it signs a bot up on a server whose operator opened sign-up
(``arena serve --registration open``, ``arena.net.signup``).

A token is shown once: only its hash is stored. A lost token is replaced with
``bots token NAME --reset``; ``bots add`` of a removed bot brings it back
(its matches and ratings kept) with a new token. A running server notices a
reset or a removal within ``ArenaConfig.login_recheck_s`` (2 s) and closes
the bot's connection.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from arena.cli import remote
from arena.cli.common import Subparsers, open_store
from arena.cli.tables import format_table
from arena.errors import ArenaError, BotExistsError, NoSuchBotError
from arena.provision import ensure_bot, read_token_file, write_private
from arena.store import BotRecord, Store
from arena.store.accounts import GUEST_ACCOUNT, check_bot_name
from protocol.messages.values import BOT_NAME_RULE

NAME_HELP = f"a bot name: {BOT_NAME_RULE}"


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena bots add|list|remove|token``."""
    bots = commands.add_parser(
        "bots",
        help="manage registered bots and their tokens",
        description="Register bots, list them, remove them, and replace a lost token. "
        f"Bot names: {BOT_NAME_RULE}. Tokens are shown once; only their hash is stored.",
    )
    bot_commands = bots.add_subparsers(dest="bots_command", required=True, metavar="COMMAND")
    add = bot_commands.add_parser(
        "add",
        parents=[common],
        help="register bots and print their tokens (once)",
        description="Register each NAME and print its token, which is shown only this once. "
        "A removed bot is brought back, with its matches and ratings, and a new token.",
    )
    add.add_argument("names", nargs="+", metavar="NAME", help=NAME_HELP)
    add.add_argument(
        "--token-dir",
        type=Path,
        metavar="DIR",
        help="write each token to the file DIR/NAME (mode 0600) instead of printing it",
    )
    add.add_argument(
        "--if-missing",
        action="store_true",
        help="with --token-dir, for scripts run again and again: keep a bot whose token in "
        "DIR/NAME still works, give it a new one otherwise (no error for a registered bot)",
    )
    bot_commands.add_parser(
        "list",
        parents=[common],
        help="list registered bots, removed ones too",
        description="Every registered bot: name, registration time (UTC) and whether it is "
        "active (removed bots are not).",
    )
    remove = bot_commands.add_parser(
        "remove",
        parents=[common],
        help="remove a bot: it can no longer log in (its history is kept)",
        description="Deactivate a bot: its token stops working and a running server closes "
        "its connection within a few seconds. Its matches and ratings are kept, and its name "
        "stays taken; 'arena bots add NAME' brings it back with a new token.",
    )
    remove.add_argument("name", metavar="NAME", help="the bot to remove")
    token = bot_commands.add_parser(
        "token",
        parents=[common],
        help="replace a bot's token (--reset)",
        description="Tokens are stored as hashes and cannot be shown again. With --reset, "
        "print a new token (once); the old one stops working, and a running server closes a "
        "connection logged in with it within a few seconds.",
    )
    token.add_argument("name", metavar="NAME", help="the bot whose token to replace")
    token.add_argument(
        "--reset", action="store_true", help="issue a new token; the old one stops working"
    )
    sign_up = bot_commands.add_parser(
        "register",
        help="sign a bot up on a running server (no database needed) and print its token",
        description="Create bot NAME on the server at --server, if its operator opened "
        "sign-up (arena serve --registration open), and print its token, shown only once.",
    )
    sign_up.add_argument("name", metavar="NAME", help=NAME_HELP)
    sign_up.add_argument(
        "--server", required=True, help="the server (http://, https://, ws:// or wss://)"
    )
    sign_up.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="write the token to FILE (mode 0600) instead of printing it",
    )
    bots.set_defaults(run=lambda args: asyncio.run(_run(args)))


def _register(server: str, name: str, token_file: Path | None) -> int:
    """``bots register``: sign ``name`` up on ``server`` through ``POST /api/bots``."""
    check_bot_name(name)  # refused here already, before the request
    answer = remote.call(server, "/api/bots", body={"name": name})
    token = str(answer["token"])
    if token_file is None:
        print(f"signed up bot {name} on {remote.http_base(server)}; its token (shown only once):")
        print(token)
        return 0
    try:
        write_private(token_file, token + "\n")
    except OSError as exc:  # the bot exists now: show the token rather than lose it
        print(f"signed up bot {name}; its token (shown only once):\n{token}")
        raise ArenaError(f"cannot write {token_file}: {exc.strerror or exc}") from None
    print(f"signed up bot {name} on {remote.http_base(server)}; token in {token_file}")
    return 0


async def _run(args: argparse.Namespace) -> int:
    if args.bots_command == "register":
        return await asyncio.to_thread(_register, args.server, args.name, args.token_file)
    if args.bots_command == "token" and not args.reset:
        raise ArenaError(
            "a token cannot be shown again (only its hash is stored); "
            f"'arena bots token {args.name} --reset' issues a new one"
        )
    if args.bots_command == "add" and args.token_dir is not None:
        prepare_token_dir(args.token_dir)  # before any token is made that could not be kept
    store = await open_store(args.db, create=args.bots_command == "add")
    try:
        if args.bots_command == "add":
            return await _add_bots(store, args.names, args.token_dir, args.if_missing)
        if args.bots_command == "list":
            _list(await store.list_bots(include_inactive=True))
        elif args.bots_command == "remove":
            await _remove(store, args.name)
        else:
            await _reset(store, args.name)
        return 0
    finally:
        await store.close()


def _list(bots: list[BotRecord]) -> None:
    # The guest account is not a bot: no one logs in as it (docs/play.md).
    rows = [
        [bot.name, bot.created_at.strftime("%Y-%m-%d %H:%M"), "yes" if bot.active else "no"]
        for bot in bots
        if bot.name != GUEST_ACCOUNT
    ]
    print(format_table(["bot", "registered (UTC)", "active"], rows))


async def _remove(store: Store, name: str) -> None:
    if not await store.remove_bot(name):
        raise NoSuchBotError(name)
    print(f"removed bot {name}; 'arena bots add {name}' brings it back with a new token")


async def _reset(store: Store, name: str) -> None:
    try:
        token = await store.reset_token(name)
    except NoSuchBotError:
        if await store.get_bot(name) is None:
            raise
        raise ArenaError(
            f"bot {name!r} was removed; 'arena bots add {name}' brings it back with a new token"
        ) from None
    print(f"new token for bot {name} (shown only once; the old one no longer works):")
    print(token)


async def _add_bots(
    store: Store, names: list[str], token_dir: Path | None, if_missing: bool
) -> int:
    """``bots add``: print fresh tokens, or keep them in ``token_dir`` (idempotently).

    Every name is tried; one line per refused name, and exit status 2 if any was.
    """
    status = 0
    for name in names:
        try:
            message = await _add_bot(store, name, token_dir, if_missing)
        except ArenaError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
            continue
        print(message)
    return status


async def _add_bot(store: Store, name: str, token_dir: Path | None, if_missing: bool) -> str:
    """Register (or bring back) one bot; what to print. Raises ``ArenaError`` to refuse."""
    check_bot_name(name)  # before the name becomes a file name in token_dir
    file = token_dir / name if token_dir is not None else None
    action: str
    if if_missing and file is not None:
        token, action = await ensure_bot(store, name, read_token_file(file))
    else:
        try:
            token, action = await store.add_bot(name), "added"
        except BotExistsError:
            if if_missing:  # no token file to fix: an existing bot is left as it is
                return f"bot {name} is already registered"
            token, action = await _bring_back(store, name), "reactivated"
    if file is None:
        kept = " (its matches and ratings are kept)" if action == "reactivated" else ""
        return f"{action} bot {name}{kept}; its token (shown only once):\n{token}"
    if action != "kept":
        try:
            write_private(file, token + "\n")
        except OSError as exc:  # the directory changed since it was checked: keep the token
            print(f"bot {name}: {action}; its token (shown only once):\n{token}")
            raise ArenaError(f"cannot write {file}: {exc.strerror or exc}") from None
    return f"bot {name}: {action}, token in {file}"


def prepare_token_dir(token_dir: Path) -> None:
    """Create ``token_dir`` if needed and make sure a token file can be written in it."""
    try:
        token_dir.mkdir(parents=True, exist_ok=True)
        probe = token_dir / f".write-test.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = "not a directory" if token_dir.exists() and not token_dir.is_dir() else None
        raise ArenaError(
            f"--token-dir {token_dir}: {reason or exc.strerror or exc}; "
            "pass a directory this user can write"
        ) from None


async def _bring_back(store: Store, name: str) -> str:
    """A new token for the removed bot ``name``; refuses an active one with what to do."""
    bot = await store.get_bot(name)
    if bot is not None and bot.active:
        raise BotExistsError(name, f"'arena bots token {name} --reset' gives it a new token")
    return await store.reset_token(name, reactivate=True)
