"""``arena leaderboard``, ``arena h2h`` and ``arena ratings``: ratings from the database.

The leaderboard and the head-to-head numbers are computed here from ``--db``
with the same code the server runs (``arena.leaderboard``), so they agree
with ``/api/leaderboard`` and ``/api/h2h`` on the same data; a running server
(``--server``, an ``http(s)://`` or ``ws(s)://`` address) is only asked who
is online. Given ``--server`` and no database (no ``--db``, no ``$ARENA_DB``),
they ask that server's ``/api/leaderboard`` and ``/api/h2h`` instead: a bot
author needs no database. Either way one renderer prints them, from the API's
JSON-shaped rows (``leaderboard_table``, ``head_to_head_text``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from arena.analysis.figures import (
    ACCURACY_HEADER,
    ACCURACY_LEGEND,
    AccuracyFigures,
    accuracy_cells,
    accuracy_figures,
)
from arena.cli import remote
from arena.cli.common import (
    DEFAULT_SERVER,
    Subparsers,
    default_db,
    open_store,
    remote_capable_parser,
    remote_only,
)
from arena.cli.tables import grouped_tables, rating_cell
from arena.errors import ArenaError
from arena.leaderboard import Board, build_board, head_to_head
from arena.stats.interval import interval_text
from arena.store import Store
from protocol.games import GAMES


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena leaderboard``, ``arena h2h`` and ``arena ratings rebuild``."""
    remote_capable = remote_capable_parser()
    board = commands.add_parser(
        "leaderboard", parents=[remote_capable], help="print a leaderboard"
    )
    board.add_argument("--game", default="connect4", choices=GAMES)
    board.add_argument(
        "--server",
        help="a running server (http://, https://, ws:// or wss://): without --db, read the "
        f"leaderboard from it; with --db, ask it who is online (default {DEFAULT_SERVER})",
    )
    board.add_argument(
        "--accuracy",
        action="store_true",
        help="add each bot's accuracy against perfect play and blunders per game "
        "(moves analysed by `arena analyse`)",
    )
    board.set_defaults(run=lambda args: asyncio.run(_leaderboard_command(args)))

    h2h = commands.add_parser(
        "h2h", parents=[remote_capable], help="two bots' rated games against each other"
    )
    h2h.add_argument("a", metavar="BOT")
    h2h.add_argument("b", metavar="OPPONENT")
    h2h.add_argument("--game", default="connect4", choices=GAMES)
    h2h.add_argument(
        "--server", help="without --db: ask this running server (http://, ws://, ...)"
    )
    h2h.set_defaults(run=lambda args: asyncio.run(_h2h_command(args)))

    ratings = commands.add_parser("ratings", help="rating maintenance")
    rating_commands = ratings.add_subparsers(dest="ratings_command", required=True)
    rating_commands.add_parser(
        "rebuild", parents=[common], help="recompute every rating from the match history"
    )
    rating_commands.choices["rebuild"].set_defaults(run=lambda args: asyncio.run(_rebuild(args.db)))


async def _rebuild(url: str) -> int:
    store = await open_store(url, create=False)
    try:
        count = await store.rebuild_ratings()
    finally:
        await store.close()
    print(f"rebuilt ratings from {count} rated matches")
    return 0


async def _read_board(store: Store, game: str) -> Board:
    rows, cells = await store.leaderboard_inputs(game)
    return await asyncio.to_thread(build_board, game, rows, cells)


def _fetch_online(server: str, game: str) -> dict[str, bool] | None:
    """Ask a running server who is online; None when it cannot be reached."""
    with contextlib.suppress(ArenaError):
        data = remote.call(server, "/api/leaderboard", {"game": game}, timeout=2)
        return {row["bot"]: bool(row["online"]) for row in data["entries"]}
    return None


def leaderboard_table(
    entries: Sequence[Mapping[str, Any]],
    show_online: bool,
    accuracy: dict[str, AccuracyFigures] | None = None,
) -> str:
    """The leaderboard as text, from ``/api/leaderboard``'s ``entries``: one table per group
    of bots connected by games (the main group first; any other under the line saying why),
    each with rank range, ``rating ± ci95``, ``?`` when provisional; with ``accuracy``, each
    bot's figures against perfect play too."""
    header = ["rank", "range", "bot", "rating ± 95%", "games", "W/D/L", "online"]
    if accuracy is not None:
        header.extend(ACCURACY_HEADER)

    def row(entry: Mapping[str, Any]) -> list[str]:
        low, high = entry["rank_low"], entry["rank_high"]
        cells = [
            str(entry["rank"]),
            str(low) if low == high else f"{low}-{high}",
            entry["bot"],
            rating_cell(entry["rating"], entry["ci95"], entry["provisional"]),
            str(entry["games"]),
            f"{entry['wins']}/{entry['draws']}/{entry['losses']}",
            "-" if not show_online else ("yes" if entry["online"] else "no"),
        ]
        if accuracy is not None:
            cells.extend(accuracy_cells(accuracy.get(entry["bot"])))
        return cells

    return grouped_tables(header, [dict(entry) for entry in entries], row)


async def _leaderboard_command(args: argparse.Namespace) -> int:
    server = remote_only(args)
    if server is not None:
        if args.accuracy:
            raise ArenaError("--accuracy reads the database's analysis: pass --db")
        data = await asyncio.to_thread(remote.call, server, "/api/leaderboard", {"game": args.game})
        print_leaderboard(args.game, data["entries"], True)
        return 0
    db = args.db or default_db()
    return await _leaderboard(db, args.game, args.server or DEFAULT_SERVER, args.accuracy)


async def _leaderboard(url: str, game: str, server: str, with_accuracy: bool = False) -> int:
    remote.http_base(server)  # a malformed address is refused before anything is read
    store = await open_store(url, create=False)
    accuracy = None
    try:
        board = await _read_board(store, game)
        if with_accuracy:
            counts = await store.accuracy_counts(game=game)
            accuracy = {c.bot: accuracy_figures(c) for c in counts}
    finally:
        await store.close()
    online = await asyncio.to_thread(_fetch_online, server, game)
    known = online or {}
    entries = [entry.to_dict() for entry in board.entries(lambda name: known.get(name, False))]
    print_leaderboard(game, entries, online is not None, accuracy)
    return 0


def print_leaderboard(
    game: str,
    entries: Sequence[Mapping[str, Any]],
    show_online: bool,
    accuracy: dict[str, AccuracyFigures] | None = None,
) -> None:
    """Print the title, the legend and the table of ``arena leaderboard``."""
    print(f"{game} leaderboard" + ("" if show_online else " (server not reachable)"))
    print(format_board_legend())
    if accuracy is not None:
        print(ACCURACY_LEGEND)
    print(leaderboard_table(entries, show_online, accuracy))


def format_board_legend() -> str:
    """The line under the title: what the columns mean."""
    from arena.stats.ranks import PROVISIONAL_HINT  # arena.stats is slow to import

    return (
        "rating: fitted over all rated games (1500 = the group's average game), ± its 95% "
        f"interval; range: the ranks the intervals allow; ? = {PROVISIONAL_HINT}"
    )


async def _h2h_command(args: argparse.Namespace) -> int:
    if args.a == args.b:
        raise ArenaError("name two different bots")
    server = remote_only(args)
    if server is not None:
        query = {"game": args.game, "a": args.a, "b": args.b}
        print(head_to_head_text(await asyncio.to_thread(remote.call, server, "/api/h2h", query)))
        return 0
    return await _h2h(args.db or default_db(), args.game, args.a, args.b)


async def _h2h(url: str, game: str, a: str, b: str) -> int:
    if a == b:
        raise ArenaError("name two different bots")
    store = await open_store(url, create=False)
    try:
        for name in (a, b):
            if await store.get_bot(name) is None:
                raise ArenaError(f"no bot named {name!r}")
        board = await _read_board(store, game)
    finally:
        await store.close()
    print(head_to_head_text(head_to_head(board, a, b).to_json()))
    return 0


def head_to_head_text(record: Mapping[str, Any]) -> str:
    """``arena h2h``'s report, from ``/api/h2h``'s JSON object."""
    a, b, games = record["a"], record["b"], record["games"]
    lines = [f"{record['game']}: {a} vs {b}, {games} rated games"]
    interval = record["elo_interval"]
    if interval is None:
        lines.append("they have not played a rated game against each other")
    else:
        lines.append(
            f"{a}: {record['wins']} W / {record['draws']} D / {record['losses']} L"
            f" (score {record['score']:.1%})"
        )
        lines.append(f"Elo difference (these games, 95%): {interval_text(interval, los=True)}")
    fitted = record["fitted"]
    if fitted is not None:
        lines.append(
            f"fitted rating difference (all games): {fitted['difference']:+.1f} ± "
            f"{fitted['ci95']:.1f}, LOS {fitted['los']:.1%}"
        )
    return "\n".join(lines)
