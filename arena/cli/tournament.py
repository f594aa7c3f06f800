"""``arena tournament``: create, follow and steer tournaments; run one locally in one command.

::

    arena tournament create --game connect4 --format round-robin --bots a,b,c,d \\
        --games-per-pair 40 --move-ms 100 --bank-ms 2000 --openings builtin:connect4-2ply
    arena tournament create --game connect4 --format gauntlet --challenger new --bots a,b,c
    arena tournament create --game connect4 --format sprt --bots new,old --elo0 0 --elo1 10
    arena tournament list | status ID | pause ID | resume ID | cancel ID
    arena tournament export ID [--format jsonl|moves] [--output FILE]
    arena tournament run --game connect4 --format round-robin --local "mcts:sims=200" random

``create``, ``pause``, ``resume`` and ``cancel`` go to the running ``arena
serve`` over its API (the admin file next to the database says where and
with which token, see ``arena.tournaments.admin``); with no server running
they change the database directly, and the next server picks it up.
``list``, ``status`` and ``export`` read the database (``list`` and ``status``
ask the server first, which also knows the games in flight).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from arena.cli.common import PORT, Subparsers, open_store, whole_number
from arena.errors import TournamentError
from arena.tournaments.admin import ServerUnreachable, running_server
from arena.tournaments.openings import NONE, SUITES, load_openings
from arena.tournaments.report import format_listing, format_status
from arena.tournaments.settings import FORMATS, MODELS, TournamentSettings
from protocol.games import GAMES

if TYPE_CHECKING:
    from arena.store.tournaments import TournamentTables

T = TypeVar("T")

# ``storage``, ``standings`` and the local runner are imported by the commands that
# use them: they pull in the statistics (SciPy), which every ``arena`` command would
# otherwise wait for at start.


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena tournament ...``."""
    tournament = commands.add_parser("tournament", help="run and follow tournaments")
    sub = tournament.add_subparsers(dest="tournament_command", required=True)
    create = sub.add_parser("create", parents=[common], help="create a tournament")
    _add_settings(create)
    create.add_argument("--bots", required=True, help="comma-separated registered bots")
    create.set_defaults(run=lambda args: asyncio.run(_create(args)))

    run = sub.add_parser(
        "run", parents=[common], help="run a tournament of built-in strategies here and now"
    )
    _add_settings(run)
    run.add_argument(
        "--local", nargs="+", required=True, metavar="SPEC",
        help='strategy specs, e.g. "mcts:sims=200" random "ugi:./my-engine"',
    )  # fmt: skip
    run.add_argument("--resume", action="store_true", help="continue the unfinished run")
    run.add_argument("--port", type=PORT, default=0, help="the embedded server's port (0: free)")
    run.add_argument(
        "--max-matches",
        type=whole_number(),
        default=1,
        help="games each bot plays at once (default 1)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(run=_run_local)

    sub.add_parser("list", parents=[common], help="list tournaments").set_defaults(
        run=lambda args: asyncio.run(_list(args.db))
    )
    status = sub.add_parser("status", parents=[common], help="progress, tables, statistics")
    status.add_argument("id", type=whole_number())
    status.add_argument("--json", action="store_true", help="the API's JSON object")
    status.set_defaults(run=lambda args: asyncio.run(_status(args)))
    for action in ("pause", "resume", "cancel"):
        change = sub.add_parser(action, parents=[common], help=f"{action} a tournament")
        change.add_argument("id", type=whole_number())
        change.set_defaults(run=lambda args, a=action: asyncio.run(_change(args.db, args.id, a)))
    export = sub.add_parser("export", parents=[common], help="every counted game, with moves")
    export.add_argument("id", type=whole_number())
    export.add_argument(
        "--format", dest="export_format", choices=("jsonl", "moves"), default="jsonl"
    )
    export.add_argument("--output", type=Path, help="write here instead of stdout")
    export.set_defaults(run=lambda args: asyncio.run(_export(args)))


def _add_settings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", default="connect4", choices=GAMES)
    parser.add_argument(
        "--format", dest="tournament_format", default="round-robin", choices=FORMATS
    )
    parser.add_argument("--challenger", help="gauntlet: the bot that plays all the others")
    parser.add_argument(
        "--games-per-pair", type=whole_number(), default=2, help="games two bots play"
    )
    parser.add_argument("--move-ms", type=whole_number(), default=1000, help="time per move (ms)")
    parser.add_argument("--bank-ms", type=whole_number(), default=0, help="time bank per game (ms)")
    parser.add_argument(
        "--openings", default=NONE,
        help="builtin:NAME (" + ", ".join(SUITES) + "), a file with one move list a line, "
        "or none (default)",
    )  # fmt: skip
    parser.add_argument(
        "--concurrency", type=whole_number(), default=1, help="games at once (default 1)"
    )
    parser.add_argument("--name", default="", help="a name to show")
    parser.add_argument("--unrated", action="store_true", help="keep its games off the ratings")
    parser.add_argument("--seed", type=whole_number(), default=1, help="seeds the opening order")
    parser.add_argument("--elo0", type=float, help="SPRT: H0's Elo difference")
    parser.add_argument("--elo1", type=float, help="SPRT: H1's Elo difference")
    parser.add_argument("--alpha", type=float, default=0.05, help="SPRT: false positive rate")
    parser.add_argument("--beta", type=float, default=0.05, help="SPRT: false negative rate")
    parser.add_argument("--model", choices=MODELS, default="normalized", help="SPRT's Elo model")
    parser.add_argument(
        "--max-games", type=whole_number(), default=20_000, help="SPRT: stop after this"
    )


def settings_from(args: argparse.Namespace, bots: tuple[str, ...]) -> TournamentSettings:
    """The settings the command line asks for (not yet checked)."""
    sprt = args.tournament_format == "sprt"
    return TournamentSettings(
        game=args.game,
        format=args.tournament_format,
        bots=bots,
        games_per_pair=2 if sprt else args.games_per_pair,
        move_ms=args.move_ms,
        bank_ms=args.bank_ms,
        concurrency=args.concurrency,
        rated=not args.unrated,
        openings=args.openings,
        name=args.name,
        seed=args.seed,
        elo0=args.elo0 if sprt else None,
        elo1=args.elo1 if sprt else None,
        alpha=args.alpha if sprt else None,
        beta=args.beta if sprt else None,
        model=args.model if sprt else None,
        max_games=args.max_games if sprt else None,
    )


def _seats(args: argparse.Namespace, bots: list[str]) -> tuple[str, ...]:
    """Seat order: a gauntlet's challenger first."""
    if args.tournament_format == "gauntlet":
        if not args.challenger:
            raise TournamentError("a gauntlet needs --challenger")
        if args.challenger in bots:
            raise TournamentError(f"bot {args.challenger} is both the challenger and in --bots")
        return (args.challenger, *bots)
    if args.challenger:
        raise TournamentError("--challenger is for --format gauntlet")
    return tuple(bots)


async def _create(args: argparse.Namespace) -> int:
    from arena.tournaments import storage
    from arena.tournaments.api import create_body

    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    settings = settings_from(args, _seats(args, bots)).check()
    suite = load_openings(args.openings, settings.game)
    answer = await _ask_server(args.db, "POST", "/api/tournaments", create_body(settings, suite))
    if answer is not None:
        reply, url = answer
        print(f"created tournament {reply['id']} on the server at {url}")
        return 0
    tournament_id = await _on_database(
        args.db, lambda tables: storage.insert_tournament(tables, settings, suite)
    )
    print(f"created tournament {tournament_id}; it starts when `arena serve` runs on this database")
    return 0


async def _ask_server(db: str, method: str, path: str, body: Any = None) -> tuple[Any, str] | None:
    """The answer of the server running on ``db`` and its URL; None when none answers."""
    client = await asyncio.to_thread(running_server, db)
    if client is None:
        return None
    try:
        return await asyncio.to_thread(client.call, method, path, body), client.admin.url
    except ServerUnreachable:
        return None  # a stale admin file: that server is gone


async def _on_database(db: str, work: Callable[[TournamentTables], Awaitable[T]]) -> T:
    """Run ``work`` on the tournament tables of ``db`` (which must exist)."""
    store = await open_store(db, create=False)
    try:
        return await work(store.tournaments)
    finally:
        await store.close()


async def _change(db: str, tournament_id: int, action: str) -> int:

    answer = await _ask_server(db, "POST", f"/api/tournaments/{tournament_id}/{action}", {})
    if answer is not None:
        status = answer[0]["status"]
    else:
        status = await _on_database(db, lambda tables: tables.change_status(tournament_id, action))
    print(f"tournament {tournament_id} is {status}")
    return 0


async def _list(db: str) -> int:
    from arena.tournaments import storage
    from arena.tournaments.standings import build_status, headline

    async def listing(tables: TournamentTables) -> list[dict[str, Any]]:
        # As ``GET /api/tournaments`` lists them: each row with its leader or SPRT verdict.
        rows = await storage.list_tournaments(tables)
        for row in rows:
            row.update(headline(build_status(await storage.load_state(tables, row["id"]))))
        return rows

    answer = await _ask_server(db, "GET", "/api/tournaments")
    if answer is not None:
        rows = answer[0]["tournaments"]
    else:
        rows = await _on_database(db, listing)
    print(format_listing(rows) if rows else "no tournaments")
    return 0


async def _status(args: argparse.Namespace) -> int:
    from arena.tournaments import storage
    from arena.tournaments.standings import build_status

    answer = await _ask_server(args.db, "GET", f"/api/tournaments/{args.id}")
    if answer is not None:
        status = answer[0]
    else:
        state = await _on_database(args.db, lambda tables: storage.load_state(tables, args.id))
        status = build_status(state)
    print(json.dumps(status, indent=2) if args.json else format_status(status))
    return 0


async def _export(args: argparse.Namespace) -> int:
    from arena.tournaments import storage

    rows = await _on_database(args.db, lambda tables: storage.export_games(tables, args.id))
    if args.export_format == "jsonl":
        text = "".join(json.dumps(row) + "\n" for row in rows)
    else:
        text = "".join(
            f"{row['match_id']} {row['players'][0]} {row['players'][1]} {row['result']} "
            f"[{row['opening']}] {' '.join(map(str, row['moves']))}\n"
            for row in rows
        )
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {len(rows)} games to {args.output}")
    return 0


def _run_local(args: argparse.Namespace) -> int:
    from arena import runtime
    from arena.cli.local_tournament import LocalOptions, LocalResult, local_settings, run_local

    specs = tuple(args.local)
    if args.challenger:
        raise TournamentError("run --local: the first --local spec is a gauntlet's challenger")
    settings = local_settings(settings_from(args, specs), specs)
    if args.max_matches < 1:
        raise TournamentError("--max-matches must be at least 1")
    options = LocalOptions(
        settings=settings,
        specs=specs,
        suite=load_openings(args.openings, settings.game),
        db_url=args.db,
        resume=args.resume,
        port=args.port,
        max_matches=args.max_matches,
        quiet=args.quiet,
    )
    result: LocalResult = runtime.run(run_local(options))
    return result.exit_status
