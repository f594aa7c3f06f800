"""``arena ladder``: Elo against MCTS simulations, measured by the arena (``docs/ladder.md``).

::

    arena ladder --game connect4 [--sims 50,100,...,12800] [--games-per-pair 40] \\
        [--anchors random,greedy,alphabeta] [--engine "ugi:./my-engine"] [--reference BOT] \\
        [--out ladder-report] [--resume]

Runs the ladder tournament locally (``arena.cli.local_tournament``), then
writes the plot, the table and the status into ``--out``
(``arena.tournaments.ladder``), with ``--reference`` at Elo 0.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from arena.cli.common import PORT, Subparsers, whole_number
from arena.errors import TournamentError
from arena.tournaments.ladder import ANCHORS, DEFAULT_SIMS, ladder_specs, rungs, write_report
from arena.tournaments.openings import BALANCED_SUITES, NONE, load_openings
from arena.tournaments.settings import TournamentSettings
from protocol.games import GAMES


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena ladder``."""
    ladder = commands.add_parser(
        "ladder", parents=[common], help="Elo of MCTS at doubling budgets, with a plot"
    )
    ladder.add_argument("--game", default="connect4", choices=GAMES)
    ladder.add_argument(
        "--sims", default=",".join(map(str, DEFAULT_SIMS)), help="comma-separated budgets"
    )
    ladder.add_argument("--anchors", default=",".join(ANCHORS), help="fixed bots to compare")
    ladder.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="SPEC",
        help='a strategy spec to place on the ladder after the anchors, e.g. "ugi:./my-engine"'
        " (repeatable): it plays the two seats before it and the two smallest budgets, and is"
        " drawn like an anchor",
    )
    ladder.add_argument(
        "--reference", help="the bot whose Elo is 0 in the report (default: the smallest budget)"
    )
    ladder.add_argument("--games-per-pair", type=whole_number(), default=40)
    ladder.add_argument(
        "--move-ms", type=whole_number(), default=10_000, help="a safety limit per move"
    )
    ladder.add_argument("--openings", help="default: the game's balanced suite, if any")
    ladder.add_argument(
        "--concurrency", type=whole_number(), default=1, help="games at once (default 1)"
    )
    ladder.add_argument("--out", type=Path, default=Path("ladder-report"), help="report folder")
    ladder.add_argument("--resume", action="store_true", help="continue an interrupted ladder")
    ladder.add_argument(
        "--report-only",
        action="store_true",
        help="play nothing: write the report of this ladder, finished earlier on --db",
    )
    ladder.add_argument("--port", type=PORT, default=0)
    ladder.add_argument("--quiet", action="store_true", help="no progress bar")
    ladder.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from arena import runtime  # the runner and its statistics load only when a ladder runs
    from arena.cli.local_tournament import (
        LocalOptions,
        LocalResult,
        bot_name,
        local_settings,
        run_local,
    )

    try:
        sims = sorted({int(s) for s in args.sims.split(",") if s.strip()})
    except ValueError:
        raise TournamentError(f"--sims must be integers, not {args.sims!r}") from None
    if not sims or sims[0] < 1:
        raise TournamentError("--sims needs at least one budget of 1 or more")
    anchors = [a.strip() for a in args.anchors.split(",") if a.strip()]
    anchors += [engine.strip() for engine in args.engine if engine.strip()]
    specs = tuple(ladder_specs(sims, anchors, args.move_ms))
    reference = args.reference or bot_name(specs[len(anchors)])
    if reference not in {bot_name(spec) for spec in specs}:
        raise TournamentError(f"--reference {reference} is not on the ladder")
    openings = args.openings or BALANCED_SUITES.get(args.game, NONE)
    settings = local_settings(
        TournamentSettings(
            game=args.game,
            format="ladder",
            bots=specs,
            games_per_pair=args.games_per_pair,
            move_ms=args.move_ms,
            concurrency=args.concurrency,
            openings=openings,
            name=f"ladder {args.game} {sims[0]}-{sims[-1]} x{args.games_per_pair}",
        ),
        specs,
    )
    if args.report_only:
        status = runtime.run(_finished_status(args.db, settings.name))
    else:
        options = LocalOptions(
            settings=settings,
            specs=specs,
            suite=load_openings(openings, args.game),
            db_url=args.db,
            resume=args.resume,
            port=args.port,
            quiet=args.quiet,
        )
        result: LocalResult = runtime.run(run_local(options))
        if result.exit_status != 0 or result.status is None:
            return result.exit_status
        status = result.status
    sims_of = {bot_name(spec): n for spec, n in zip(specs[len(anchors) :], sims, strict=True)}
    # The command that plays these games (a --report-only run only rewrites the report).
    command = "arena " + " ".join(shlex.quote(a) for a in sys.argv[1:] if a != "--report-only")
    lines = rungs(status, sims_of, reference)
    for path in write_report(args.out, status, lines, reference, command):
        print(f"wrote {path}")
    return 0


async def _finished_status(db: str, name: str) -> dict[str, Any]:
    """The status of the latest finished ladder called ``name`` on ``db``."""
    from arena.cli.common import open_store
    from arena.tournaments import storage
    from arena.tournaments.standings import build_status

    store = await open_store(db, create=False)
    try:
        found = [
            row
            for row in await storage.list_tournaments(store.tournaments)
            if row["name"] == name and row["status"] == "finished"
        ]
        if not found:
            raise TournamentError(f"no finished ladder {name!r} on this database")
        # A second read: a finished tournament does not change.
        return build_status(await storage.load_state(store.tournaments, found[0]["id"]))
    finally:
        await store.close()
