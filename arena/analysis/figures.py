"""A bot's accuracy against perfect play, and its blunders per game, each with its interval.

``accuracy`` is the share of the bot's judged moves that kept the value,
with Wilson's 95% score interval. A move is judged when its position and the
move are solved and the choice mattered there (some legal move had another
outcome): in a lost position, or where every move keeps the value, any move
is as good as the best and says nothing about the player. Every figure
travels with how many moves it judged;
``blunders_per_game`` is its blunders over its analysed games, with
Garwood's exact 95% interval for a Poisson count divided by the games (blunders
cluster in some games, so read it as a guide rather than a guarantee).
Both are None before there is anything to count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.store.analysis import AccuracyCounts

DIGITS = 4
"""Fractions go out rounded to four decimals (a hundredth of a percent)."""


@dataclass(frozen=True, slots=True)
class AccuracyFigures:
    """``AccuracyCounts`` with the two figures and their 95% intervals."""

    counts: AccuracyCounts
    accuracy: float | None
    accuracy_ci95: tuple[float, float] | None
    blunders_per_game: float | None
    blunders_per_game_ci95: tuple[float, float] | None

    def to_json(self) -> dict[str, Any]:
        """The object of ``GET /api/bots/NAME``'s ``accuracy`` list."""
        c = self.counts
        return {
            "game": c.game,
            "moves": c.moves,
            "decided": c.decided,
            "judged": c.judged,
            "kept": c.kept,
            "accuracy": _round(self.accuracy),
            "accuracy_ci95": _round_pair(self.accuracy_ci95),
            "blunders": c.blunders,
            "games": c.games,
            "blunders_per_game": _round(self.blunders_per_game),
            "blunders_per_game_ci95": _round_pair(self.blunders_per_game_ci95),
        }


def accuracy_figures(counts: AccuracyCounts) -> AccuracyFigures:
    """The figures of one bot in one game from its counts."""
    # Imported here: arena.stats pulls in scipy, which most arena commands never need.
    from arena.stats.proportions import garwood_interval, wilson_interval

    accuracy = ci = per_game = per_game_ci = None
    if counts.judged:
        accuracy = counts.kept / counts.judged
        ci = wilson_interval(counts.kept, counts.judged)
    if counts.games:
        per_game = counts.blunders / counts.games
        low, high = garwood_interval(counts.blunders)
        per_game_ci = (low / counts.games, high / counts.games)
    return AccuracyFigures(counts, accuracy, ci, per_game, per_game_ci)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _round_pair(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [round(pair[0], DIGITS), round(pair[1], DIGITS)]


ACCURACY_HEADER = ["accuracy (95%)", "blunders/game (95%)", "games analysed"]
"""The columns ``arena leaderboard --accuracy`` adds."""

ACCURACY_LEGEND = (
    "accuracy: the share of judged moves (solved, where some legal move would have changed "
    "the win/draw/loss value) that kept the value, Wilson 95% interval; blunders/game: "
    "moves that lost value, Garwood 95% interval; from `arena analyse` (docs/analysis.md)"
)
"""The legend line of those columns."""


def accuracy_cells(figures: AccuracyFigures | None) -> list[str]:
    """A bot's ``ACCURACY_HEADER`` cells: ``93.1% of 412 judged (91.0-94.8)``,
    ``0.42 (0.31-0.56)``, its analysed games; dashes without analysed moves."""
    if figures is None:
        return ["-", "-", "0"]
    counts = figures.counts
    accuracy = "-"
    if figures.accuracy is not None and figures.accuracy_ci95 is not None:
        low, high = figures.accuracy_ci95
        accuracy = (
            f"{figures.accuracy:.1%} of {counts.judged} judged ({100 * low:.1f}-{100 * high:.1f})"
        )
    elif counts.moves:
        accuracy = "- (0 judged)"
    per_game = "-"
    if figures.blunders_per_game is not None and figures.blunders_per_game_ci95 is not None:
        low, high = figures.blunders_per_game_ci95
        per_game = f"{figures.blunders_per_game:.2f} ({low:.2f}-{high:.2f})"
    return [accuracy, per_game, str(counts.games)]
