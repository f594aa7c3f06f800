"""``arena serve``: run the arena server until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from arena import runtime
from arena.app import ArenaApp
from arena.cli.common import Subparsers
from arena.server import ArenaConfig


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena serve``."""
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
    serve.add_argument(
        "--tls-cert", metavar="FILE", help="PEM certificate chain: serve wss:// and https://"
    )
    serve.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert")
    serve.add_argument(
        "--allowed-origins",
        metavar="ORIGINS",
        default="",
        help="comma-separated browser origins (besides the server's own) allowed to open a "
        "websocket, e.g. https://arena.example.org",
    )
    serve.add_argument(
        "--trust-proxy",
        action="store_true",
        help="take client addresses from X-Forwarded-For (only behind your own reverse proxy)",
    )
    serve.add_argument(
        "--node-id", help="this server's node id in the database (default: host-pid-random)"
    )
    serve.add_argument(
        "--allow-multi-node",
        action="store_true",
        help="PostgreSQL only: serve one arena from several nodes sharing the database "
        "(docs/scaling.md)",
    )
    serve.add_argument(
        "--public-url",
        metavar="URL",
        help="with --allow-multi-node: where bots reach this node, for redirects from the "
        "others (default ws://HOST:PORT, wss:// with TLS)",
    )
    serve.add_argument(
        "--journal",
        metavar="FILE",
        help="recovery journal for results not stored at shutdown (default: next to the "
        "SQLite file; see docs/operations.md)",
    )
    serve.add_argument("-v", "--verbose", action="store_true", help="debug logging")

    serve.set_defaults(run=lambda args: runtime.run(_serve(args)))


async def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # Migrations say what they do only when asked: every start runs them.
    logging.getLogger("alembic").setLevel(logging.DEBUG if args.verbose else logging.WARNING)
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
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        allowed_origins=tuple(o.strip() for o in args.allowed_origins.split(",") if o.strip()),
        trust_proxy=args.trust_proxy,
        node_id=args.node_id,
        allow_multi_node=args.allow_multi_node,
        journal_path=args.journal,
        public_url=args.public_url,
    )
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
    print(f"arena listening on {scheme}://{config.host}:{app.server.port}", flush=True)
    stopped = asyncio.ensure_future(app.server.wait_stopped())
    signalled = asyncio.ensure_future(stop.wait())
    await asyncio.wait((stopped, signalled), return_when=asyncio.FIRST_COMPLETED)
    signalled.cancel()
    lost_lease = stopped.done()  # the server stopped by itself: its lease was lost
    await app.stop("server shutting down")
    return 2 if lost_lease else 0
