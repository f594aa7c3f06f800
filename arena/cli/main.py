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

Each command lives in its own module with a ``register`` function
(``COMMAND_MODULES``); a run imports only the module of the command it was
given (the others pull in SciPy, the analysis runner and the demo's bots:
about a second of start-up), ``arena --help`` all of them.
A failure a person can act on (``ArenaError``) is one line on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from arena.cli.common import Register, common_parser
from arena.errors import ArenaError

COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "serve": ("serve",),
    "demo": ("demo",),
    "watch": ("watch",),
    "play": ("play",),
    "bots": ("bots",),
    "ratings": ("leaderboard", "h2h", "ratings"),
    "export": ("export",),
    "tournament": ("tournament",),
    "ladder": ("ladder",),
    "analyse": ("analyse",),
}
"""Every module of ``arena.cli`` that registers commands, in the order ``--help`` lists
them, and the commands it registers (a test holds this to what each one registers)."""


def register_of(module: str) -> Register:
    """The ``register`` function of ``arena.cli.<module>`` (importing it)."""
    register: Register = importlib.import_module(f"arena.cli.{module}").register
    return register


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``arena`` command: every command, or only ``command``'s
    module when it names one (what a run needs)."""
    common = common_parser()
    parser = argparse.ArgumentParser(prog="arena", description="MCTS Arena server and admin.")
    commands = parser.add_subparsers(dest="command", required=True)
    modules = [m for m, names in COMMAND_MODULES.items() if command is None or command in names]
    for module in modules or COMMAND_MODULES:
        register_of(module)(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``arena`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
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
