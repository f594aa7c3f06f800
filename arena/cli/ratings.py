"""``arena leaderboard``, ``arena h2h`` and ``arena ratings``: ratings from the database.

The leaderboard and the head-to-head numbers are computed here from ``--db``
with the same code the server runs (``arena.leaderboard``), so they agree
with ``/api/leaderboard`` and ``/api/h2h`` on the same data; a running server
(``--server``, an ``http(s)://`` or ``ws(s)://`` address) is only asked who
is online.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from arena.analysis.figures import (
    ACCURACY_HEADER,
    ACCURACY_LEGEND,
    AccuracyFigures,
    accuracy_cells,
    accuracy_figures,
)
from arena.cli.common import DEFAULT_SERVER, Subparsers, open_store
from arena.cli.tables import grouped_tables, rating_cell
from arena.errors import ArenaError
from arena.leaderboard import Board, HeadToHead, build_board, head_to_head
from arena.store import Store
from protocol.games import GAMES

_HTTP_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena leaderboard``, ``arena h2h`` and ``arena ratings rebuild``."""
    board = commands.add_parser("leaderboard", parents=[common], help="print a leaderboard")
    board.add_argument("--game", default="connect4", choices=GAMES)
    board.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help="a running server (http://, https://, ws:// or wss://) to ask who is online",
    )
    board.add_argument(
        "--accuracy",
        action="store_true",
        help="add each bot's accuracy against perfect play and blunders per game "
        "(moves analysed by `arena analyse`)",
    )
    board.set_defaults(
        run=lambda args: asyncio.run(_leaderboard(args.db, args.game, args.server, args.accuracy))
    )

    h2h = commands.add_parser(
        "h2h", parents=[common], help="two bots' rated games against each other"
    )
    h2h.add_argument("a", metavar="BOT")
    h2h.add_argument("b", metavar="OPPONENT")
    h2h.add_argument("--game", default="connect4", choices=GAMES)
    h2h.set_defaults(run=lambda args: asyncio.run(_h2h(args.db, args.game, args.a, args.b)))

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


def http_base(server: str) -> str:
    """The HTTP address of a server given as ``http(s)://`` or ``ws(s)://`` (no trailing ``/``)."""
    parts = urlsplit(server)
    scheme = _HTTP_SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.netloc:
        raise ArenaError(f"--server {server!r}: expected http://, https://, ws:// or wss://HOST")
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def _fetch_online(server: str, game: str) -> dict[str, bool] | None:
    """Ask a running server who is online; None when it cannot be reached."""
    url = f"{http_base(server)}/api/leaderboard?game={quote(game)}"
    with contextlib.suppress(OSError, ValueError, urllib.error.URLError):
        with urllib.request.urlopen(url, timeout=2) as response:
            data: dict[str, Any] = json.load(response)
        return {row["bot"]: bool(row["online"]) for row in data["entries"]}
    return None


def leaderboard_table(
    board: Board, online: dict[str, bool] | None, accuracy: dict[str, AccuracyFigures] | None = None
) -> str:
    """The leaderboard as text: one table per group of bots connected by games (the main
    group first; any other under the line saying why), each with rank range,
    ``rating ± ci95``, ``?`` when provisional; with ``accuracy``, each bot's figures
    against perfect play too."""
    header = ["rank", "range", "bot", "rating ± 95%", "games", "W/D/L", "online"]
    if accuracy is not None:
        header.extend(ACCURACY_HEADER)

    def row(entry: dict[str, Any]) -> list[str]:
        low, high = entry["rank_low"], entry["rank_high"]
        cells = [
            str(entry["rank"]),
            str(low) if low == high else f"{low}-{high}",
            entry["bot"],
            rating_cell(entry["rating"], entry["ci95"], entry["provisional"]),
            str(entry["games"]),
            f"{entry['wins']}/{entry['draws']}/{entry['losses']}",
            "-" if online is None else ("yes" if entry["online"] else "no"),
        ]
        if accuracy is not None:
            cells.extend(accuracy_cells(accuracy.get(entry["bot"])))
        return cells

    is_online = (lambda _: False) if online is None else (lambda bot: online.get(bot, False))
    entries = [entry.to_dict() for entry in board.entries(is_online)]
    return grouped_tables(header, entries, row)


async def _leaderboard(url: str, game: str, server: str, with_accuracy: bool = False) -> int:
    http_base(server)  # a malformed address is refused before anything is read
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
    print(f"{game} leaderboard" + ("" if online is not None else " (server not reachable)"))
    print(format_board_legend(board))
    if accuracy is not None:
        print(ACCURACY_LEGEND)
    print(leaderboard_table(board, online, accuracy))
    return 0


def format_board_legend(board: Board) -> str:
    """The line under the title: what the columns mean."""
    from arena.stats.ranks import PROVISIONAL_HINT  # arena.stats is slow to import

    return (
        "rating: fitted over all rated games (1500 = the group's average game), ± its 95% "
        f"interval; range: the ranks the intervals allow; ? = {PROVISIONAL_HINT}"
    )


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
    print(head_to_head_text(head_to_head(board, a, b)))
    return 0


def head_to_head_text(record: HeadToHead) -> str:
    """``arena h2h``'s report."""
    games = record.wins + record.draws + record.losses
    lines = [f"{record.game}: {record.a} vs {record.b}, {games} rated games"]
    if record.estimate is None:
        lines.append("they have not played a rated game against each other")
    else:
        score = (record.wins + 0.5 * record.draws) / games
        lines.append(
            f"{record.a}: {record.wins} W / {record.draws} D / {record.losses} L"
            f" (score {score:.1%})"
        )
        est = record.estimate
        lines.append(f"Elo difference (these games): {est.elo:+.1f} ± {est.elo95:.1f}")
        lines.append(f"LOS (these games): {est.los:.1%}")
    if record.fitted is not None:
        fitted = record.fitted
        lines.append(
            f"fitted rating difference (all games): {fitted.difference:+.1f} ± "
            f"{fitted.ci95:.1f}, LOS {fitted.los:.1%}"
        )
    return "\n".join(lines)
