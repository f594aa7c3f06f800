"""rating_path and the games-weighted reference, against game-by-game brute force."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from arena.stats.rating_fit import PairResult, fit_ratings
from arena.stats.rating_path import rating_path
from tests.stats.brute_force import (
    bradley_terry_by_optimizer,
    covariance_at,
    negative_log_posterior,
)
from tests.stats.test_rating_fit import SMALL

Z95 = 1.959963984540054

CELLS = [*SMALL, PairResult("e", "b", 0, 1, 2)]  # plus a newcomer with three games
NAMES = ["a", "b", "c", "d", "e"]


def games_of(cells: list[PairResult]) -> list[tuple[int, int, float]]:
    """Every game as ``(i, j, score of i)`` over ``NAMES`` indices."""
    index = {name: i for i, name in enumerate(NAMES)}
    games: list[tuple[int, int, float]] = []
    for c in cells:
        i, j = index[c.bot], index[c.opponent]
        games += [(i, j, 1.0)] * c.wins + [(i, j, 0.5)] * c.draws + [(i, j, 0.0)] * c.losses
    return games


def bot_games(bot: str, seed: int) -> list[tuple[str, float]]:
    """``bot``'s games from its side, in a shuffled order."""
    found = []
    for c in CELLS:
        if c.bot == bot:
            found += [(c.opponent, 1.0)] * c.wins + [(c.opponent, 0.5)] * c.draws
            found += [(c.opponent, 0.0)] * c.losses
        elif c.opponent == bot:
            found += [(c.bot, 0.0)] * c.wins + [(c.bot, 0.5)] * c.draws
            found += [(c.bot, 1.0)] * c.losses
    random.Random(seed).shuffle(found)
    return found


def reference(weights: str, games: list[tuple[int, int, float]]) -> np.ndarray:
    """The mean the level is fixed by: over the bots that played, or over their games.

    (In these games every bot that played is connected to every other: one group.)
    """
    played = np.zeros(len(NAMES))
    for i, j, _ in games:
        played[i] += 1
        played[j] += 1
    if weights == "equal":
        played = (played > 0).astype(float)
    return played / played.sum()


@pytest.mark.parametrize("weights", ["equal", "games"])
def test_the_fit_is_centred_on_the_chosen_mean(weights: str) -> None:
    games = games_of(CELLS)
    raw, covariance = bradley_terry_by_optimizer(games, len(NAMES), 1000.0)
    mean = reference(weights, games)
    contrast = np.eye(len(NAMES)) - mean[None, :]
    fit = fit_ratings(CELLS, weights=weights)  # type: ignore[arg-type]
    for i, name in enumerate(NAMES):
        assert fit.get(name).rating == pytest.approx(1500.0 + raw[i] - mean @ raw, abs=1e-3)
        ci = Z95 * np.sqrt((contrast @ covariance @ contrast.T)[i, i])
        assert fit.get(name).ci95 == pytest.approx(ci, rel=1e-3)


def test_games_weights_keep_a_newcomer_from_widening_everyone() -> None:
    equal, weighted = fit_ratings(CELLS), fit_ratings(CELLS, weights="games")
    for name in "abcd":
        assert weighted.get(name).ci95 < equal.get(name).ci95 - 20.0
    # Differences, and so the ranks and their ranges, do not depend on the level.
    assert weighted.get("a").rating - weighted.get("d").rating == pytest.approx(
        equal.get("a").rating - equal.get("d").rating, abs=1e-9
    )
    assert [(r.name, r.rank_low, r.rank_high) for r in weighted.ratings] == [
        (r.name, r.rank_low, r.rank_high) for r in equal.ratings
    ]
    with pytest.raises(ValueError, match="weights"):
        fit_ratings(CELLS, weights="bots")  # type: ignore[arg-type]


@pytest.mark.parametrize(("weights", "anchor"), [("equal", None), ("games", None), ("equal", "c")])
def test_each_point_is_the_bots_estimate_from_its_first_games(
    weights: str, anchor: str | None
) -> None:
    bot = "b"
    fit = fit_ratings(CELLS, weights=weights, anchor=anchor)  # type: ignore[arg-type]
    played = bot_games(bot, seed=3)
    path = rating_path(fit, CELLS, bot, played, [5, 12, 20, len(played)])
    assert [p.games for p in path] == [5, 12, 20, len(played)]

    # Independently: the others' raw ratings as the fit has them (they sum to zero,
    # the prior being centred on zero), the bot's from a scalar optimizer over its
    # first k games, the covariance from a numerical Hessian of all the games then.
    me = NAMES.index(bot)
    shown = np.array([fit.get(name).rating for name in NAMES])
    raw = shown - shown.mean()
    others = [g for g in games_of(CELLS) if me not in (g[0], g[1])]
    for point in path:
        mine = [(me, NAMES.index(opponent), score) for opponent, score in played[: point.games]]
        objective = negative_log_posterior(others + mine, 1000.0)

        def alone(rating: float, objective: Callable[[np.ndarray], float] = objective) -> float:
            moved = raw.copy()
            moved[me] = rating
            return objective(moved)

        best = minimize_scalar(
            alone, bounds=(-3000, 3000), method="bounded", options={"xatol": 1e-9}
        )
        at = raw.copy()
        at[me] = best.x
        covariance = covariance_at(objective, at)
        if anchor is None:
            mean = reference(weights, others + mine)
        else:
            mean = np.eye(len(NAMES))[NAMES.index(anchor)]
        level = fit.anchor_rating if anchor is None else fit.get(anchor).rating
        contrast = np.eye(len(NAMES)) - mean[None, :]
        assert point.rating == pytest.approx(level + at[me] - mean @ at, abs=1e-3)
        ci = Z95 * np.sqrt((contrast @ covariance @ contrast.T)[me, me])
        assert point.ci95 == pytest.approx(ci, rel=1e-3)

    # All games: exactly the fit's own line.
    assert path[-1].rating == pytest.approx(fit.get(bot).rating, abs=1e-6)
    assert path[-1].ci95 == pytest.approx(fit.get(bot).ci95, abs=1e-6)
    # The evidence grows: the interval narrows as games accumulate.
    assert path[0].ci95 > path[1].ci95 > path[-1].ci95


def test_an_undefeated_start_is_finite_and_wide() -> None:
    cells = [PairResult("new", "old", 6, 0, 2), PairResult("old", "mid", 40, 20, 40)]
    fit = fit_ratings(cells)
    played = [("old", 1.0)] * 6 + [("old", 0.0)] * 2
    first, *_, last = rating_path(fit, cells, "new", played, range(1, 9))
    assert np.isfinite(first.rating) and first.ci95 > 500.0
    assert last.rating == pytest.approx(fit.get("new").rating, abs=1e-6)


def test_bad_arguments_are_refused() -> None:
    fit = fit_ratings(CELLS)
    played = bot_games("e", seed=0)
    with pytest.raises(ValueError, match="not in the fit"):
        rating_path(fit, CELLS, "zed", played, [1])
    with pytest.raises(ValueError, match="opponent"):
        rating_path(fit, CELLS, "e", [("zed", 1.0)], [1])
    with pytest.raises(ValueError, match="checkpoints"):
        rating_path(fit, CELLS, "e", played, [0])
    with pytest.raises(ValueError, match="checkpoints"):
        rating_path(fit, CELLS, "e", played, [len(played) + 1])
    with pytest.raises(ValueError, match="score"):
        rating_path(fit, CELLS, "e", [("b", 0.7)], [1])
    assert rating_path(fit, CELLS, "e", played, []) == []
