"""The ``arena`` command: run the server, a demo, watch a match, manage bots and ratings.

Every subcommand that touches the database takes ``--db URL`` (default:
``$ARENA_DB`` or ``sqlite+aiosqlite:///arena.db`` in the current directory; a
plain file path means a SQLite file)::

    arena serve --host 127.0.0.1 --port 8765 --move-ms 1000 --bank-ms 0 --grace-s 30 \\
        [--mqtt mqtt://127.0.0.1:1883] [--tls-cert FILE --tls-key FILE] [--config arena.toml]
    arena demo [--game connect4] [--bots random,mcts-200] [--duration 60] [--mqtt URL]
    arena watch [MATCH_ID] [--url ws://127.0.0.1:8765] [--follow]
    arena play connect4 --vs "mcts:sims=2000" [--second] [--seed N]   # you against a bot
    arena bots add NAME...        # prints each bot's token, once
    arena bots add --if-missing --token-dir DIR NAME...   # idempotent, tokens in DIR/NAME
    arena bots list
    arena bots remove NAME        # it can no longer log in; `bots add NAME` brings it back
    arena bots token NAME --reset # a new token, printed once; the old one stops working
    arena leaderboard --game connect4 [--server http://127.0.0.1:8765 | ws://...]
    arena h2h BOT OPPONENT --game connect4
    arena ratings rebuild
    arena export --game connect4 [--bot NAME] [--since DATE] [--format jsonl|moves]
    arena tournament create|list|status|pause|resume|cancel|export|run ...
    arena ladder --game connect4 [--sims 50,100,...] [--games-per-pair 40]
    arena analyse MATCH_ID | --all [--since DATE] [--budget-ms 100] [--jobs N]

Each command lives in its own module with a ``register`` function (``COMMANDS``).
A failure a person can act on (``ArenaError``) is one line on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from arena.cli import (
    analyse,
    bots,
    demo,
    export,
    ladder,
    play,
    ratings,
    serve,
    tournament,
    watch,
)
from arena.cli.common import Register, common_parser
from arena.errors import ArenaError

COMMANDS: tuple[Register, ...] = (
    serve.register,
    demo.register,
    watch.register,
    play.register,
    bots.register,
    ratings.register,
    export.register,
    tournament.register,
    ladder.register,
    analyse.register,
)
"""Every subcommand, in the order ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``arena`` command."""
    common = common_parser()
    parser = argparse.ArgumentParser(prog="arena", description="MCTS Arena server and admin.")
    commands = parser.add_subparsers(dest="command", required=True)
    for register in COMMANDS:
        register(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``arena`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except ArenaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` or similar that stopped reading; cleanup has run.
        # Point stdout at /dev/null so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
