"""``arena analyse``: the solved value of every move of stored Connect Four games.

::

    arena analyse MATCH_ID [--budget-ms 100] [--jobs N]
    arena analyse --all [--game connect4] [--since DATE] [--budget-ms 100] [--jobs N]

Writes only the ``move_analysis`` table (``arena.store.analysis``), one
match per transaction, so it may run beside a server on the same database
and be interrupted at any time; a rerun skips what is settled. See
``docs/analysis.md``.

Its worker processes run the project's Connect Four solver
(``arena.analysis.worker``, the one module outside ``arena.cli`` that may import
``bots``), which is the yardstick the analysis measures against. The server
never runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from arena.analysis.progress import Progress, format_duration
from arena.analysis.runner import DEFAULT_BUDGET_MS, Analyser
from arena.analysis.values import describe
from arena.cli.common import Subparsers, open_store, whole_number
from arena.cli.export import since_date
from arena.cli.tables import format_table
from arena.errors import ArenaError
from arena.store import MatchRecord, Store
from protocol.games import GAMES

ANALYSED_GAMES = ("connect4",)
"""Games the solver can analyse."""


positive_int = whole_number(1)
"""An ``argparse`` type: a whole number above zero."""


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena analyse``."""
    analyse = commands.add_parser(
        "analyse",
        parents=[common],
        help="solve every move of stored Connect Four games; find the blunders",
        description="Give every move of stored Connect Four matches its solved value before "
        "and after it, and mark the blunders. Resumable; see docs/analysis.md.",
    )
    analyse.add_argument("match_id", nargs="?", metavar="MATCH_ID", help="one match to analyse")
    analyse.add_argument(
        "--all", action="store_true", help="every finished match of --game not analysed yet"
    )
    analyse.add_argument("--game", default="connect4", choices=GAMES)
    analyse.add_argument(
        "--since",
        metavar="DATE",
        type=since_date,
        help="with --all: only matches started at or after this ISO date or time (UTC)",
    )
    analyse.add_argument(
        "--budget-ms",
        type=positive_int,
        default=DEFAULT_BUDGET_MS,
        help="solver time per position; unsolved positions stay unknown, and a rerun with "
        "a larger budget retries them (default %(default)s)",
    )
    analyse.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        help="solver processes (default: the number of cores, %(default)s)",
    )
    analyse.set_defaults(run=lambda args: asyncio.run(_analyse(args)))


async def _analyse(args: argparse.Namespace) -> int:
    if (args.match_id is None) == (not args.all):
        raise ArenaError("name one MATCH_ID, or pass --all")
    if args.since is not None and not args.all:
        raise ArenaError("--since goes with --all")
    if args.game not in ANALYSED_GAMES:
        raise ArenaError(f"only connect4 games can be analysed, not {args.game}")
    store = await open_store(args.db, create=False)
    try:
        if args.match_id is not None:
            record = await _analysable(store, args.match_id)
            todo = await store.analysis_todo(record.game, args.budget_ms, match_id=record.id)
        else:
            if not await store.count_moves(args.game, args.since):
                which = "are stored"
                if args.since is not None:
                    which = f"started since {args.since.isoformat()}"
                raise ArenaError(
                    f"no moves of finished {args.game} matches {which}: nothing to analyse"
                )
            todo = await store.analysis_todo(args.game, args.budget_ms, since=args.since)
        if todo:
            await _run(store, todo, args.budget_ms, args.jobs)
        else:
            print(f"nothing left to analyse at --budget-ms {args.budget_ms}")
        if args.match_id is not None:
            print(await _match_table(store, record))
    finally:
        await store.close()
    return 0


async def _analysable(store: Store, match_id: str) -> MatchRecord:
    """The match, or ``ArenaError`` saying why it cannot be analysed."""
    record = await store.get_match(match_id)
    if record is None:
        raise ArenaError(f"no match with id {match_id!r}")
    if record.game not in ANALYSED_GAMES:
        raise ArenaError(
            f"match {match_id} is a {record.game} game; only connect4 games can be analysed"
        )
    if record.status == "live":
        raise ArenaError(f"match {match_id} is still being played; analyse it once it ends")
    if not record.moves:
        raise ArenaError(f"match {match_id} has no moves to analyse")
    return record


async def _run(store: Store, todo: list[str], budget_ms: int, jobs: int) -> None:
    progress = Progress(len(todo), sys.stderr)
    try:
        summary = await Analyser(store, budget_ms, jobs, progress).run(todo)
    finally:
        progress.close()
    elapsed = progress.elapsed_s
    rate = summary.positions / elapsed if elapsed > 0 else 0.0
    print(
        f"analysed {summary.games} matches ({summary.moves} moves) in"
        f" {format_duration(elapsed)}: {summary.positions} positions solved"
        f" ({rate:.0f}/s), {summary.unknown} unknown within {budget_ms} ms;"
        f" {summary.decided} moves decided, {summary.judged} judged (the choice mattered),"
        f" {summary.blunders} blunders"
    )


def _verdict_word(blunder: bool | None, choice_matters: bool | None) -> str:
    """``blunder``; ``any move`` where no move changed the value (not judged); ``?`` unknown."""
    if blunder:
        return "blunder"
    if choice_matters is False:
        return "any move"
    return "?" if blunder is None or choice_matters is None else ""


async def _match_table(store: Store, record: MatchRecord) -> str:
    """The analysed moves of one match as a table, from each mover's side."""
    rows = {row.ply: row for row in await store.match_analysis(record.id)}
    lines = []
    for move in record.moves:
        line = [str(move.ply), record.players[move.player], str(move.move)]
        row = rows.get(move.ply)
        if row is None:
            line.extend(["", "", ""])
        else:
            line.extend(
                [
                    describe(row.outcome_before, row.score_before, move.ply),
                    describe(row.outcome_after, row.score_after, move.ply),
                    _verdict_word(row.blunder, row.choice_matters),
                ]
            )
        lines.append(line)
    players = " vs ".join(record.players)
    title = f"match {record.id}: {players}, {record.result or record.status} ({record.game})"
    header = ["ply", "mover", "column", "before", "after", ""]
    return title + "\n" + format_table(header, lines)
