"""``arena-bot``: play as one bot on an arena server with any strategy.

::

    export ARENA_BOT_TOKEN=...        # printed by `arena bots add alice`
    arena-bot --url wss://arena.example:8765 --name alice --game connect4 \\
        --strategy "mcts:sims=5000" --games 10

``--url wss://a.example:8765,wss://b.example:8765`` names several nodes of one
arena: the bot fails over to the next when one fails, and follows the
``redirect`` a node sends when another hosts its match.

SIGINT/SIGTERM: the bot stops seeking, declines challenges, finishes its
live matches and exits; a second signal resigns them at once and exits.
SIGHUP (its terminal or the program that started it is gone: ``arena demo``
and ``arena tournament run --local`` have their bots sent SIGHUP when they
die) resigns the live matches at once and exits.

Exit status: 0 when the ``--games`` are played or a signal stopped the bot
(the socket is closed and the search workers are stopped either way), 2 for
a usage error (no token, a bad strategy spec or URL, a ``ws://`` URL to
another host without ``--insecure``) or a server certificate that fails
verification, 3 when the server refuses the bot for good (unknown name or
wrong token, unsupported protocol version, another connection took over the
name, a game it does not host).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
from collections.abc import Sequence

from bots.budget import MARGIN_MS
from bots.client.runtime import (
    DEFAULT_TIME_CONTROL,
    MAX_MATCHES,
    BotClient,
    ClientConfig,
    ClientError,
    ClientSummary,
    RefusedError,
    StrategyChooser,
)
from bots.client.signals import install_stop_signals
from bots.client.transport import connection_tls
from bots.strategy import StrategyError, make_strategy_from_spec
from protocol.games import GAMES
from protocol.messages import ErrorCode, TimeControl
from protocol.messages.values import BOT_NAME_PATTERN
from protocol.numbers import NumberError, parse_int

TOKEN_ENV = "ARENA_BOT_TOKEN"
"""The environment variable read when ``--token`` is not given (keeps it out of ``ps``)."""

EXIT_OK, EXIT_USAGE, EXIT_REFUSED = 0, 2, 3

DEFAULT_URL = "ws://127.0.0.1:8765"

log = logging.getLogger("bots.client.cli")

_REFUSAL_HINTS: dict[str, str] = {
    ErrorCode.AUTH_FAILED: f"check --name and the token (--token or ${TOKEN_ENV})",
    ErrorCode.UNSUPPORTED_VERSION: "upgrade this client to the server's protocol version",
    ErrorCode.REPLACED: "another process is playing under this name",
    ErrorCode.NO_SUCH_GAME: "the server does not host this game",
    ErrorCode.BAD_VALUE: "the server refuses this time control",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena-bot",
        description="Connect a bot to an arena server and play matches with a strategy.",
        epilog=(
            "SIGINT/SIGTERM (Ctrl-C): stop seeking, decline challenges, finish the live "
            "matches, then exit 0. A second signal resigns the live matches and exits at once; "
            "so does SIGHUP."
        ),
    )
    parser.add_argument(
        "--url", action="append", type=url_list, metavar="URL[,URL...]",
        help="server URL: wss://HOST:PORT (TLS), or ws:// to this machine (default "
        f"{DEFAULT_URL}); several (comma-separated or repeated): nodes of one arena, "
        "tried in turn when a connection fails or drops",
    )
    parser.add_argument(
        "--ca-file", metavar="FILE",
        help="wss://: trust only the CA certificates in this PEM file (default: the system's)",
    )
    parser.add_argument(
        "--insecure", action="store_true",
        help="allow a plain ws:// URL to another host (the token travels in clear text)",
    )
    parser.add_argument("--name", required=True, help="the bot's registered name")
    parser.add_argument(
        "--token", help=f"the bot's token (default: ${TOKEN_ENV}; prefer the variable)"
    )
    parser.add_argument("--game", default="connect4", choices=GAMES, help="game to play")
    parser.add_argument(
        "--strategy",
        default="mcts",
        help='strategy spec, e.g. "mcts:sims=5000,workers=2", or an engine: "ugi:./my-engine"',
    )
    parser.add_argument("--games", type=positive_int, help="stop after this many matches")
    parser.add_argument(
        "--max-matches", type=positive_int, default=1, help="matches played at once (default 1)"
    )
    parser.add_argument(
        "--move-ms", type=positive_int, default=DEFAULT_TIME_CONTROL.move_ms,
        help="time per move to seek or challenge with (ms)",
    )
    parser.add_argument(
        "--bank-ms", type=non_negative_int, default=DEFAULT_TIME_CONTROL.bank_ms,
        help="time bank to seek or challenge with (ms)",
    )
    parser.add_argument("--challenge", metavar="OPPONENT", help="challenge this bot, not seek")
    parser.add_argument(
        "--accept-challenges", action=argparse.BooleanOptionalAction, default=True,
        help="accept challenges for --game (default: yes)",
    )
    parser.add_argument(
        "--guests", action=argparse.BooleanOptionalAction, default=True,
        help="accept challenges from guests too: people playing the bot from the web viewer, "
        "unrated (default: yes)",
    )
    parser.add_argument(
        "--seek", action=argparse.BooleanOptionalAction, default=True,
        help="seek matches (default: yes; --no-seek waits for challenges, e.g. a tournament's)",
    )
    parser.add_argument(
        "--worker", action="store_true",
        help="serve the bot alongside its other --worker processes (on any machines), each "
        "with its own --max-matches, instead of replacing them (default: a new login replaces)",
    )
    parser.add_argument(
        "--no-analysis", action="store_true", help="do not send search statistics with moves"
    )
    parser.add_argument(
        "--margin-ms", type=non_negative_int, default=int(MARGIN_MS),
        help=f"fixed safety margin kept off each move's time (default {MARGIN_MS:g}; "
        "10%% of the move's time and the round trip's jitter come on top)",
    )
    parser.add_argument(
        "--retry-max", type=float, default=10.0, help="longest wait between reconnects (s)"
    )
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--quiet", action="store_true", help="log only warnings and errors")
    noise.add_argument("--verbose", action="store_true", help="log debugging details")
    return parser


def url_list(text: str) -> list[str]:
    """An argparse type: one URL or several, comma-separated."""
    urls = [url.strip() for url in text.split(",") if url.strip()]
    if not urls:
        raise argparse.ArgumentTypeError("no URL given")
    return urls


def _whole_number(text: str, low: int) -> int:
    try:
        return parse_int(text, "it", low=low)
    except NumberError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("it ")) from None


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (ASCII digits, ``parse_int``)."""
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0 (ASCII digits, ``parse_int``)."""
    return _whole_number(text, 0)


def configure_logging(name: str, quiet: bool = False, verbose: bool = False) -> None:
    """Log to stderr, one line per event, prefixed with the bot's name."""
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    logging.basicConfig(
        level=level,
        format=f"%(asctime)s {name} %(levelname)s %(message)s",
        datefmt="%H:%M:%S",
    )
    if not verbose:
        # websockets logs every failed handshake; the client reports them itself.
        logging.getLogger("websockets").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``arena-bot``; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    token = args.token or os.environ.get(TOKEN_ENV)
    if not token:
        parser.error(f"no token: set ${TOKEN_ENV} (or pass --token)")
    if not re.fullmatch(BOT_NAME_PATTERN, args.name):
        parser.error(f"--name must match {BOT_NAME_PATTERN}")
    if args.max_matches > MAX_MATCHES:
        parser.error(f"--max-matches is at most {MAX_MATCHES}")
    if args.challenge is not None and args.challenge == args.name:
        parser.error("a bot cannot challenge itself")
    configure_logging(args.name, args.quiet, args.verbose)
    urls = [url for group in args.url or [[DEFAULT_URL]] for url in group]
    config = ClientConfig(
        url=urls[0],
        fallback_urls=tuple(urls[1:]),
        name=args.name,
        token=token,
        game=args.game,
        time_control=TimeControl(move_ms=args.move_ms, bank_ms=args.bank_ms),
        games=args.games,
        max_matches=args.max_matches,
        accept_challenges=args.accept_challenges,
        guests=args.guests,
        challenge=args.challenge,
        seek=args.seek,
        worker=args.worker,
        retry_max_s=args.retry_max,
        ca_file=args.ca_file,
        insecure=args.insecure,
        margin_ms=args.margin_ms,
    )
    try:
        # Checked before the search workers start: a wrong URL should fail in a blink.
        for url in config.urls:
            connection_tls(url, config.ca_file, config.insecure)
    except ClientError as exc:
        log.error("%s", exc)
        return EXIT_USAGE
    try:
        return asyncio.run(_play(config, args.strategy, analysis=not args.no_analysis))
    except KeyboardInterrupt:  # only before the signal handlers are in place
        return EXIT_OK


async def _play(config: ClientConfig, spec: str, analysis: bool) -> int:
    client: BotClient | None = None
    stopped = False

    def on_signal() -> None:
        nonlocal stopped
        stopped = True
        if client is not None:
            client.on_signal()  # the first drains, the next forfeits

    def on_hangup() -> None:
        nonlocal stopped
        stopped = True
        if client is not None:
            client.forfeit()

    undo = install_stop_signals(on_signal, on_hangup)
    try:
        try:
            # Starting a warm pool can take seconds; a thread keeps signals handled meanwhile.
            strategy = await asyncio.to_thread(make_strategy_from_spec, spec, config.game)
        except StrategyError as exc:
            log.error("bad --strategy %r: %s", spec, exc)
            return EXIT_USAGE
        try:
            if stopped:
                return EXIT_OK
            log.info("playing %s with %s", config.game, strategy.describe())
            client = BotClient(config, StrategyChooser(strategy, analysis=analysis))
            summary = await client.run()
        except RefusedError as exc:
            hint = _REFUSAL_HINTS.get(exc.code, "giving up")
            log.error("the server refused bot %s: %s (%s); %s",
                      config.name, exc.message, exc.code, hint)
            return EXIT_REFUSED
        except ClientError as exc:
            log.error("%s", exc)
            return EXIT_USAGE
        finally:
            strategy.close()
    finally:
        undo()
    log.info("%s", describe_summary(summary))
    return EXIT_OK


def describe_summary(summary: ClientSummary) -> str:
    """One line totalling a run's results."""
    counts = {"win": 0, "draw": 0, "loss": 0, "aborted": 0}
    for report in summary.reports:
        counts[report.outcome] = counts.get(report.outcome, 0) + 1
    text = (
        f"{len(summary.reports)} matches: {counts['win']} won, {counts['draw']} drawn, "
        f"{counts['loss']} lost, {counts['aborted']} aborted"
    )
    if summary.forfeits:
        text += f"; {summary.forfeits} resigned after an engine fault"
    return text


if __name__ == "__main__":
    raise SystemExit(main())
