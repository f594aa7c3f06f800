"""What the ``arena`` subcommands share: the ``--db`` option, default addresses, the store.

``Command`` is what each subcommand module registers: it adds its parser and
sets ``run`` (``args -> exit status``) as the parser's default.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from arena.store import DEFAULT_URL, Store
from protocol.numbers import NumberError, parse_int

DEFAULT_SERVER = "http://127.0.0.1:8765"
DEFAULT_WS = "ws://127.0.0.1:8765"

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # argparse's private class is not subscriptable at run time
    Subparsers = argparse._SubParsersAction
Register = Callable[[Subparsers, argparse.ArgumentParser], None]
"""A subcommand module's ``register(commands, common)``: ``common`` carries ``--db``."""


def db_url(text: str) -> str:
    """A database URL from ``--db``: URLs pass through, a plain path names a SQLite file."""
    if "://" in text:
        return text
    return f"sqlite+aiosqlite:///{Path(text).expanduser().resolve()}"


def whole_number(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` type: a whole number in ``[low, high]``, parsed strictly
    (``protocol.numbers.parse_int``: ASCII digits, bounded length)."""

    def parse(text: str) -> int:
        try:
            return parse_int(text, "the value", low=low, high=high)
        except NumberError as exc:
            raise argparse.ArgumentTypeError(f"{exc.args[0].removeprefix('the value ')}") from None

    return parse


PORT = whole_number(0, 65535)
"""The ``argparse`` type of a ``--port`` (0 picks a free one)."""


def default_db() -> str:
    """The database of a command given no ``--db``: ``$ARENA_DB`` or ``arena.db`` here."""
    return os.environ.get("ARENA_DB", DEFAULT_URL)


def remote_only(args: argparse.Namespace) -> str | None:
    """The ``--server`` of a read-only command to answer from that server's HTTP API: given
    ``--server`` and neither ``--db`` nor ``$ARENA_DB`` (its parser's ``db`` default is None)."""
    server: str | None = getattr(args, "server", None)
    if server is None or args.db is not None or "ARENA_DB" in os.environ:
        return None
    return server


def remote_capable_parser() -> argparse.ArgumentParser:
    """``common_parser`` for a read-only command that can also ask a server (``--server``):
    its ``--db`` defaults to None, so that ``remote_only`` tells whether it was given."""
    parser = common_parser()
    parser.set_defaults(db=None)  # this parser's own --db action: other commands keep theirs
    return parser


def common_parser() -> argparse.ArgumentParser:
    """The parent parser of every subcommand that touches the database (``--db``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        type=db_url,
        default=default_db(),
        help="database URL or SQLite file path (env ARENA_DB; default %(default)s)",
    )
    return common


async def open_store(url: str, *, create: bool) -> Store:
    """Open the store at ``url`` for a command; ``create`` is False for read-only commands.

    Raises ``DatabaseOpenError`` (one line, masked password) when it cannot.
    """
    return await Store.open(url, create=create)
