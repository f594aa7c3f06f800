"""``arena serve``: run the arena server until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from dataclasses import replace

from arena import logs, runtime
from arena.app import ArenaApp
from arena.cli.common import Subparsers, db_url
from arena.cli.config import Option, add_options, resolve
from arena.cli.demo import client_host
from arena.play.referee import DEFAULT_GRACE_S
from arena.server import ArenaConfig
from arena.store import DEFAULT_URL
from arena.tournaments.admin import AdminFile, admin_file_path

DEFAULTS = ArenaConfig()

OPTIONS: tuple[Option, ...] = (
    Option(
        "db",
        str,
        DEFAULT_URL,
        "database URL or SQLite file path",
        metavar="URL",
        path=True,
        convert=db_url,
    ),
    Option("host", str, DEFAULTS.host, "address to listen on"),
    Option("port", int, DEFAULTS.port, "port to listen on; 0 picks a free port"),
    Option("move-ms", int, DEFAULTS.move_ms, "default per-move time of seeks and challenges"),
    Option("bank-ms", int, DEFAULTS.bank_ms, "default time bank"),
    Option("grace-s", float, DEFAULT_GRACE_S, "reconnect grace window in seconds"),
    Option(
        "pace-ms",
        int,
        DEFAULTS.pace_ms,
        "pause between a move and the next turn, on nobody's clock (for spectators)",
    ),
    Option("k-factor", float, DEFAULTS.k_factor, "Elo K factor"),
    Option(
        "pairing-window",
        float,
        DEFAULTS.pairing_window_s,
        "seconds seeks gather before a pairing pass",
        metavar="SECONDS",
    ),
    Option(
        "rated-openings",
        bool,
        DEFAULTS.rated_openings,
        "rated ladder games start from the game's balanced openings, the return game of "
        "two bots with colours swapped (--no-rated-openings: from the initial position)",
    ),
    Option(
        "db-writer",
        str,
        "process",
        "SQLite: write moves and results from a separate process or the server's own",
        choices=("process", "inline"),
    ),
    Option(
        "leaderboard-fit",
        str,
        "process",
        "fit the leaderboards in a child process or in a thread of the server's own",
        choices=("process", "thread"),
    ),
    Option("mqtt", str, None, "publish live events to this MQTT broker", metavar="URL"),
    Option(
        "tls-cert",
        str,
        None,
        "PEM certificate chain: serve wss:// and https://",
        metavar="FILE",
        path=True,
    ),
    Option("tls-key", str, None, "PEM private key of --tls-cert", metavar="FILE", path=True),
    Option(
        "allowed-origins",
        str,
        "",
        "comma-separated browser origins (besides the server's own) allowed to open a "
        "websocket, e.g. https://arena.example.org",
        metavar="ORIGINS",
        items=True,
    ),
    Option(
        "trust-proxy",
        bool,
        False,
        "take client addresses from X-Forwarded-For (only behind your own reverse proxy)",
    ),
    Option("node-id", str, None, "this server's node id in the database (default host-pid-random)"),
    Option(
        "allow-multi-node",
        bool,
        False,
        "PostgreSQL only: serve one arena from several nodes sharing the database "
        "(docs/scaling.md)",
    ),
    Option(
        "public-url",
        str,
        None,
        "where bots and browsers reach this server: redirects from other nodes, and the "
        "browser origin accepted (default ws://HOST:PORT, wss:// with TLS)",
        metavar="URL",
    ),
    Option(
        "journal",
        str,
        None,
        "recovery journal for results not stored at shutdown (default: next to the SQLite "
        "file; see docs/operations.md)",
        metavar="FILE",
        path=True,
    ),
    Option(
        "max-connections-per-address",
        int,
        DEFAULTS.crowd.max_per_address,
        "connections one client address may hold open at once (docs/operations.md, Limits)",
        metavar="N",
    ),
    Option(
        "spectator-idle",
        float,
        DEFAULTS.crowd.spectator_idle_s,
        "seconds a spectator watching nothing may stay without a request",
        metavar="SECONDS",
    ),
    Option(
        "guest-max-games",
        int,
        DEFAULTS.guests.max_games,
        "guest games at once on this server",
        metavar="N",
    ),
    Option(
        "guest-max-games-per-bot",
        int,
        DEFAULTS.guests.max_games_per_bot,
        "guest games at once against one bot",
        metavar="N",
    ),
    Option(
        "registration",
        str,
        DEFAULTS.registration,
        "open: anyone may create a bot (POST /api/bots, arena bots register); closed: only "
        "the operator (arena bots add)",
        choices=("closed", "open"),
    ),
    Option("log-level", str, "info", "least severe log records shown", choices=logs.LEVELS),
    Option(
        "log-format",
        str,
        "text",
        "log lines for people (text) or one JSON object per line (json)",
        choices=logs.FORMATS,
    ),
    Option(
        "summary-interval",
        float,
        DEFAULTS.summary_interval_s,
        "seconds between the log's summary lines; 0 for none",
        metavar="SECONDS",
    ),
)
"""Every option of ``arena serve``; each also has an ``ARENA_*`` variable and a file key."""


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena serve`` (its own ``--db``: it follows the config precedence too)."""
    serve = commands.add_parser(
        "serve",
        help="run the arena server",
        description="Run the arena server until SIGINT or SIGTERM. Every option can also be "
        "set in a TOML file (--config) or an ARENA_* environment variable; see "
        "docs/operations.md.",
    )
    add_options(serve, OPTIONS)
    serve.add_argument(
        "-v",
        "--verbose",
        dest="log_level",
        action="store_const",
        const="debug",
        help="the same as --log-level debug",
    )
    serve.set_defaults(run=lambda args: runtime.run(_serve(resolve(args, OPTIONS))))


def server_config(args: argparse.Namespace) -> ArenaConfig:
    """The ``ArenaConfig`` of resolved ``arena serve`` arguments."""
    return ArenaConfig(
        host=args.host,
        port=args.port,
        db_url=args.db,
        move_ms=args.move_ms,
        bank_ms=args.bank_ms,
        grace_s=args.grace_s,
        k_factor=args.k_factor,
        pace_ms=args.pace_ms,
        pairing_window_s=args.pairing_window,
        rated_openings=args.rated_openings,
        db_writer_process=args.db_writer == "process",
        fit_process=args.leaderboard_fit == "process",
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        allowed_origins=tuple(o.strip() for o in args.allowed_origins.split(",") if o.strip()),
        trust_proxy=args.trust_proxy,
        node_id=args.node_id,
        allow_multi_node=args.allow_multi_node,
        journal_path=args.journal,
        public_url=args.public_url,
        summary_interval_s=args.summary_interval,
        crowd=replace(
            DEFAULTS.crowd,
            max_per_address=args.max_connections_per_address,
            spectator_idle_s=args.spectator_idle,
        ),
        guests=replace(
            DEFAULTS.guests,
            max_games=args.guest_max_games,
            max_games_per_bot=args.guest_max_games_per_bot,
        ),
        registration=args.registration,
    )


async def _serve(args: argparse.Namespace) -> int:
    logs.configure(args.log_level, args.log_format)
    config = server_config(args)
    try:
        app = ArenaApp(config, mqtt_url=args.mqtt)
    except ValueError as exc:
        print(f"error: --mqtt: {exc}", file=sys.stderr)
        return 2
    await app.start()  # a StartupError becomes one line and exit status 2 (arena.cli.main)
    runtime.settle_heap()
    app.server.serving()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal(signame: str) -> None:
        if not stop.is_set():
            logging.getLogger(__name__).info("%s received, shutting down", signame)
            stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig.name)
    scheme = "wss" if config.tls_cert else "ws"
    admin = _write_admin_file(app, config, "https" if config.tls_cert else "http")
    print(f"arena listening on {scheme}://{config.host}:{app.server.port}", flush=True)
    stopped = asyncio.ensure_future(app.server.wait_stopped())
    signalled = asyncio.ensure_future(stop.wait())
    await asyncio.wait((stopped, signalled), return_when=asyncio.FIRST_COMPLETED)
    signalled.cancel()
    lost_lease = stopped.done()  # the server stopped by itself: its lease was lost
    try:
        await app.stop("server shutting down")
    finally:
        admin.remove(admin_file_path(config.db_url))
    return 2 if lost_lease else 0


def _write_admin_file(app: ArenaApp, config: ArenaConfig, scheme: str) -> AdminFile:
    """Write the admin file ``arena tournament`` commands find (``arena.tournaments.admin``)."""
    service = app.server.tournaments
    assert service is not None
    url = f"{scheme}://{client_host(config.host)}:{app.server.port}"
    admin = AdminFile(service.admin_token, url, os.getpid())
    path = admin_file_path(config.db_url)
    try:
        admin.write(path)
    except OSError as exc:
        logging.getLogger(__name__).warning("cannot write the admin file %s: %s", path, exc)
    return admin
