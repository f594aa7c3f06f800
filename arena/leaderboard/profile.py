"""A bot's page: its rating in every game with the interval and history, opponents, last matches.

``BotProfiles.profile(name)`` gathers, per game the bot has rated games in:

- its line on the cached board (``rating`` ± ``ci95``, ranks within its
  ``group`` of ``bots``, W/D/L, and the ``group_note`` when the group is not the
  main one);
- ``history``: the fitted rating and interval after its first k games, at up
  to ``HISTORY_POINTS`` k spread over its games (``arena.stats.rating_path``;
  the last point is the board's own line);
- ``opponents``: the record against each, with ``elo_interval`` and the
  opponent's fitted rating;

plus its most recent matches in any game, and ``accuracy``: per game in which
moves of it were analysed (``arena analyse``), its accuracy against perfect
play and blunders per game with their intervals (``arena.analysis.figures``).
Values are plain data (datetimes included) for ``arena.net.http.json_response``.
The history is computed in a worker thread and kept per bot, game and board
version, so reloading a page costs four small queries and no fit.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from arena.analysis.figures import accuracy_figures
from arena.leaderboard.board import DECIMALS, Board, group_note
from arena.leaderboard.cache import Leaderboards
from arena.store import BotRecord, MatchSummary
from arena.store.analysis import AccuracyCounts
from arena.store.queries import BotResult
from protocol.games import GAMES
from protocol.games.base import winner_score

if TYPE_CHECKING:
    from arena.stats.rating_path import PathPoint

HISTORY_POINTS = 40
"""Most points of fitted-rating history per game."""

RECENT_MATCHES = 20
"""How many of the bot's latest matches the page lists."""

_CACHED_PATHS = 128


class ProfileSource(Protocol):
    """What a bot page reads from the store."""

    async def get_bot(self, name: str) -> BotRecord | None:
        """The bot, active or removed, or None."""
        ...

    async def bot_results(self, name: str) -> list[BotResult]:
        """Its rated finished games in every game, oldest first."""
        ...

    async def bot_matches(self, name: str, limit: int = RECENT_MATCHES) -> list[MatchSummary]:
        """Its latest matches, newest first."""
        ...

    async def accuracy_counts(
        self, game: str | None = None, bot: str | None = None
    ) -> list[AccuracyCounts]:
        """Its analysed moves per game (``Store.accuracy_counts``)."""
        ...


def checkpoints(games: int, points: int = HISTORY_POINTS) -> list[int]:
    """Up to ``points`` game counts spread evenly over ``1..games``, always ending at ``games``."""
    return sorted({-(-games * step // points) for step in range(1, points + 1)} - {0})


class BotProfiles:
    """Builds bot pages from the store and the cached boards; see the module docstring."""

    def __init__(
        self, source: ProfileSource, boards: Leaderboards, is_online: Callable[[str], bool]
    ) -> None:
        self._source = source
        self._boards = boards
        self._is_online = is_online
        self._paths: OrderedDict[tuple[str, str, int], list[PathPoint]] = OrderedDict()

    async def profile(self, name: str) -> dict[str, Any] | None:
        """The ``/api/bots/NAME`` body, or None when no bot has that name."""
        record = await self._source.get_bot(name)
        if record is None:
            return None
        results = await self._source.bot_results(name)
        recent = await self._source.bot_matches(name, RECENT_MATCHES)
        ratings = []
        for game in GAMES:
            played = [result for result in results if result.game == game]
            if played:
                board = await self._boards.board(game)
                ratings.append(await self._game_json(board, name, played))
        return {
            "bot": record.name,
            "active": record.active,
            "created_at": record.created_at,
            "online": self._is_online(record.name),
            "ratings": ratings,
            "recent_matches": [_match_json(match, name) for match in recent],
            "accuracy": [
                accuracy_figures(counts).to_json()
                for counts in await self._source.accuracy_counts(bot=name)
            ],
        }

    async def _game_json(
        self,
        board: Board,
        name: str,
        played: Sequence[BotResult],
    ) -> dict[str, Any]:
        line = board.fit.get(name) if _in_fit(board, name) else None
        shown = next((row for row in board.shown.ratings if row.name == name), None)
        # Ranked within its group: "3 of 5" counts the bots it can be compared with.
        group = [r for r in board.shown.ratings if shown is not None and r.group == shown.group]
        path = await self._path(board, name, played) if line is not None else []
        # The board may be a moment older than the game list: its point is the last.
        stamps = [result.ended_at for result in played]
        return {
            "game": board.game,
            "rating": None if line is None else round(line.rating, DECIMALS),
            "ci95": None if line is None else round(line.ci95, DECIMALS),
            "provisional": None if line is None else line.provisional,
            "games": len(played) if line is None else line.games,
            "wins": sum(r.score == 1.0 for r in played) if line is None else line.wins,
            "draws": sum(r.score == 0.5 for r in played) if line is None else line.draws,
            "losses": sum(r.score == 0.0 for r in played) if line is None else line.losses,
            "group": None if line is None else line.group,
            "rank": None if shown is None else shown.rank,
            "rank_low": None if shown is None else shown.rank_low,
            "rank_high": None if shown is None else shown.rank_high,
            "bots": len(group),
            "group_note": None if shown is None else group_note(shown.group, shown.games),
            "history": [_point_json(point, stamps) for point in path],
            "opponents": _opponents_json(board, name),
        }

    async def _path(self, board: Board, name: str, played: Sequence[BotResult]) -> list[PathPoint]:
        fitted_games = board.fit.get(name).games
        known = {line.name for line in board.fit.ratings}
        games = [(r.opponent, r.score) for r in played if r.opponent in known][:fitted_games]
        key = (board.game, name, board.version)
        path = self._paths.get(key)
        if path is None:
            if not games:
                return []
            from arena.stats.rating_path import rating_path  # see arena.leaderboard.board

            path = await asyncio.to_thread(
                rating_path, board.fit, board.cells, name, games, checkpoints(len(games))
            )
            self._paths[key] = path
            while len(self._paths) > _CACHED_PATHS:
                self._paths.popitem(last=False)
        self._paths.move_to_end(key)
        return path


def _in_fit(board: Board, name: str) -> bool:
    return any(line.name == name for line in board.fit.ratings)


def _point_json(point: PathPoint, stamps: Sequence[datetime]) -> dict[str, Any]:
    return {
        "at": stamps[min(point.games, len(stamps)) - 1],
        "games": point.games,
        "rating": round(point.rating, DECIMALS),
        "ci95": round(point.ci95, DECIMALS),
    }


def _opponents_json(board: Board, name: str) -> list[dict[str, Any]]:
    from arena.stats import elo_interval  # see arena.leaderboard.board

    fitted = {line.name: line for line in board.fit.ratings}
    rows = []
    met = sorted(board.opponents(name).items(), key=lambda item: (-sum(item[1]), item[0]))
    for opponent, (wins, draws, losses) in met:
        line = fitted.get(opponent)
        rows.append(
            {
                "bot": opponent,
                "games": wins + draws + losses,
                "wins": wins,
                "draws": draws,
                "losses": losses,
                "elo_interval": elo_interval((losses, draws, wins)).to_json(),
                "rating": None if line is None else round(line.rating, DECIMALS),
                "ci95": None if line is None else round(line.ci95, DECIMALS),
            }
        )
    return rows


def _match_json(match: MatchSummary, name: str) -> dict[str, Any]:
    """A match summary from ``name``'s side: its opponent and score (None without a result)."""
    seat = 0 if match.players[0] == name else 1
    score = None
    if match.status == "finished":
        score = winner_score(match.winner, seat)
    data = dataclasses.asdict(match)
    data["opponent"] = match.players[1 - seat]
    data["score"] = score
    return data
