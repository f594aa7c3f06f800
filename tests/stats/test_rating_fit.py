"""fit_ratings against a game-by-game brute-force fit, closed forms and a simulated truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.stats.elo import elo_estimate
from arena.stats.rating_fit import PairResult, fit_ratings, tally_pairs
from arena.stats.simulation import simulate_pair_results
from tests.stats.brute_force import bradley_terry_by_optimizer

Z95 = 1.959963984540054

SMALL = [
    PairResult("a", "b", 7, 3, 4),
    PairResult("b", "a", 2, 1, 5),
    PairResult("a", "c", 9, 2, 1),
    PairResult("c", "d", 3, 4, 6),
    PairResult("b", "d", 2, 2, 8),
    PairResult("d", "a", 1, 0, 6),
]


def _games(cells: list[PairResult], names: list[str]) -> list[tuple[int, int, float]]:
    index = {name: i for i, name in enumerate(names)}
    games: list[tuple[int, int, float]] = []
    for cell in cells:
        i, j = index[cell.bot], index[cell.opponent]
        games += (
            [(i, j, 1.0)] * cell.wins + [(i, j, 0.5)] * cell.draws + [(i, j, 0.0)] * cell.losses
        )
    return games


STRAY = [PairResult("x", "y", 5, 0, 1)]


@pytest.mark.parametrize(
    ("cells", "extra_bots", "prior_sd"),
    [
        (SMALL, [], None),  # the default prior, 1000 Elo
        (SMALL, [], 150.0),
        ([*SMALL, *STRAY], ["newcomer"], 300.0),  # three separate groups
    ],
)
def test_matches_a_brute_force_fit_game_by_game(
    cells: list[PairResult], extra_bots: list[str], prior_sd: float | None
) -> None:
    names = sorted({*extra_bots, *(c.bot for c in cells), *(c.opponent for c in cells)})
    size = len(names)
    ratings, covariance = bradley_terry_by_optimizer(_games(cells, names), size, prior_sd or 1000.0)
    if prior_sd is None:
        fit = fit_ratings(cells, bots=extra_bots)
    else:
        fit = fit_ratings(cells, bots=extra_bots, prior_sd=prior_sd)
    # Each group is referred to its own mean (x, y to theirs); the newcomer, without
    # games, to the largest group's (a, b, c, d).
    main = np.array([name in "abcd" for name in names], dtype=float) / 4
    stray = np.array([name in "xy" for name in names], dtype=float) / 2
    reference = np.array([stray if name in "xy" else main for name in names])
    centred = 1500.0 + ratings - reference @ ratings
    contrast = np.eye(size) - reference
    ci = Z95 * np.sqrt(np.diag(contrast @ covariance @ contrast.T))
    for i, name in enumerate(names):
        assert fit.get(name).rating == pytest.approx(centred[i], abs=1e-3)
        assert fit.get(name).ci95 == pytest.approx(ci[i], rel=1e-3)


def test_two_bots_reproduce_the_score_and_its_binomial_interval() -> None:
    # Without a prior to speak of, the fitted difference is exactly the Elo of the
    # score, and the difference's interval is the binomial (draws = ½) Fisher one:
    # 1.96 · scale / √(n·s·(1 − s)).
    fit = fit_ratings([PairResult("a", "b", 60, 10, 30)], prior_sd=1e9)
    a, b = fit.get("a"), fit.get("b")
    assert a.rating - b.rating == pytest.approx(elo_estimate((30, 10, 60)).elo, abs=1e-6)
    assert a.rating + b.rating == pytest.approx(3000.0, abs=1e-9)
    difference_ci = Z95 * 400 / math.log(10) / math.sqrt(100 * 0.65 * 0.35)
    assert a.ci95 == pytest.approx(difference_ci / 2, rel=1e-9)  # each is half the difference
    assert (a.wins, a.draws, a.losses, a.games) == (60, 10, 30, 100)
    assert (b.wins, b.draws, b.losses, b.games) == (30, 10, 60, 100)


def test_recovers_a_simulated_truth() -> None:
    rng = np.random.default_rng(7)
    truth = rng.normal(1500.0, 250.0, 12)
    fit = fit_ratings(simulate_pair_results(truth, 30_000, rng))
    fitted = np.array([fit.get(f"bot{i}").rating for i in range(12)])
    sd = np.array([fit.get(f"bot{i}").ci95 for i in range(12)]) / Z95
    error = (fitted - fitted.mean()) - (truth - truth.mean())
    assert np.all(np.abs(error) < 4 * sd)
    assert np.count_nonzero(np.abs(error) < Z95 * sd) >= 10  # 95% intervals cover the truth
    assert float(np.sqrt(np.mean(error**2))) < 15.0
    assert fit.groups == 1 and fit.iterations < 20
    assert [r.rank for r in fit.ratings] == list(range(1, 13))


def test_undefeated_and_winless_bots_get_finite_wide_intervals() -> None:
    cells = [
        PairResult("champion", "mid", 25, 0, 0),
        PairResult("mid", "low", 30, 20, 30),
        PairResult("doormat", "low", 0, 0, 25),
    ]
    fit = fit_ratings(cells)
    champion, doormat, mid = fit.get("champion"), fit.get("doormat"), fit.get("mid")
    for line in (champion, doormat):
        assert math.isfinite(line.rating) and math.isfinite(line.ci95)
        assert line.ci95 > 300.0 and line.provisional
    assert champion.rating > mid.rating + 300.0
    assert doormat.rating < fit.get("low").rating - 300.0
    # Relative to the pool mean every interval carries the two unknowns' share of
    # that mean; relative to a well-measured bot the middle one is narrow.
    assert mid.ci95 > 150.0
    assert fit_ratings(cells, anchor="low").get("mid").ci95 < 100.0
    assert fit.ratings[0].name == "champion" and fit.ratings[-1].name == "doormat"


def test_anchor_bot_takes_the_anchor_rating_and_differences_do_not_move() -> None:
    pooled = fit_ratings(SMALL)
    anchored = fit_ratings(SMALL, anchor="c", anchor_rating=2000.0)
    assert anchored.get("c").rating == 2000.0
    assert anchored.get("c").ci95 == 0.0
    assert anchored.anchor == "c" and pooled.anchor is None
    for name in "abd":
        assert anchored.get(name).rating - anchored.get("c").rating == pytest.approx(
            pooled.get(name).rating - pooled.get("c").rating, abs=1e-9
        )
        # Relative to one bot rather than the mean, an interval can only widen.
        assert anchored.get(name).ci95 > pooled.get(name).ci95
    assert np.mean([r.rating for r in pooled.ratings]) == pytest.approx(1500.0, abs=1e-9)
    with pytest.raises(ValueError, match="anchor"):
        fit_ratings(SMALL, anchor="nobody")


def test_a_separate_group_does_not_disturb_the_main_one() -> None:
    alone = fit_ratings(SMALL)
    stray = [PairResult("x", "y", 5, 0, 1)]
    together = fit_ratings([*SMALL, *stray], bots=["newcomer"])
    assert together.groups == 3
    for name in "abcd":
        assert together.get(name).rating == pytest.approx(alone.get(name).rating, abs=1e-9)
        assert together.get(name).ci95 == pytest.approx(alone.get(name).ci95, abs=1e-9)
        assert together.get(name).group == 0
    x, y, newcomer = together.get("x"), together.get("y"), together.get("newcomer")
    assert (x.rating + y.rating) / 2 == pytest.approx(1500.0, abs=1e-9)
    assert x.group == y.group == 1 and newcomer.group == 2
    # The stray pair is referred to its own mean and ranked on its own: its
    # intervals are what its six games say, the same as with no other bots.
    by_itself = fit_ratings(stray)
    for line in (x, y):
        assert line.rating == pytest.approx(by_itself.get(line.name).rating, abs=1e-6)
        assert line.ci95 == pytest.approx(by_itself.get(line.name).ci95, rel=1e-6)
    assert x.ci95 < 300.0 and (x.rank, y.rank) == (1, 2)
    assert (x.rank_low, x.rank_high) == (1, 2)
    assert newcomer.ci95 > 1000.0 and newcomer.rank == 1
    assert newcomer.games == 0 and newcomer.provisional
    assert [[line.name for line in group] for group in together.by_group()] == [
        [line.name for line in alone.ratings],
        ["x", "y"],
        ["newcomer"],
    ]


def test_both_orders_of_a_pair_add_up() -> None:
    split = fit_ratings([PairResult("a", "b", 5, 2, 1), PairResult("b", "a", 3, 0, 4)])
    merged = fit_ratings([PairResult("a", "b", 9, 2, 4)])
    for name in "ab":
        assert split.get(name) == merged.get(name)


def test_provisional_rule_and_rank_ranges_in_a_fit() -> None:
    rng = np.random.default_rng(3)
    truth = np.array([1000.0, 1500.0, 1505.0, 1510.0, 2000.0])
    fit = fit_ratings(simulate_pair_results(truth, 4000, rng))
    by_name = {f"bot{i}": fit.get(f"bot{i}") for i in range(5)}
    assert (by_name["bot4"].rank_low, by_name["bot4"].rank_high) == (1, 1)
    assert (by_name["bot0"].rank_low, by_name["bot0"].rank_high) == (5, 5)
    for middle in ("bot1", "bot2", "bot3"):
        assert (by_name[middle].rank_low, by_name[middle].rank_high) == (2, 4)
    assert not any(r.provisional for r in fit.ratings)
    strict = fit_ratings(simulate_pair_results(truth, 4000, rng), min_games=2000)
    assert all(r.provisional for r in strict.ratings)


def test_tally_pairs_counts_per_ordered_pair() -> None:
    cells = tally_pairs([("a", "b", 1.0), ("a", "b", 0.5), ("b", "a", 1), ("a", "b", 0.0)])
    assert sorted(cells) == [PairResult("a", "b", 1, 1, 1), PairResult("b", "a", 1, 0, 0)]
    with pytest.raises(ValueError, match="score"):
        tally_pairs([("a", "b", 0.7)])


def test_simulated_results_follow_the_elo_curve() -> None:
    rng = np.random.default_rng(11)
    cells = simulate_pair_results(np.array([1500.0, 1700.0]), 40_000, rng, draw_share=0.5)
    assert sum(c.wins + c.draws + c.losses for c in cells) == 40_000
    weaker = next(c for c in cells if c.bot == "bot0")
    n = weaker.wins + weaker.draws + weaker.losses
    assert (weaker.wins + weaker.draws / 2) / n == pytest.approx(1 / (1 + 10**0.5), abs=0.01)
    assert weaker.draws / n == pytest.approx(0.5 * 4 * 0.2402 * 0.7598, abs=0.01)


@pytest.mark.parametrize(
    ("cells", "options", "message"),
    [
        ([PairResult("a", "a", 1, 0, 0)], {}, "pair result"),
        ([PairResult("a", "b", -1, 0, 0)], {}, "pair result"),
        ([PairResult("a", "b", 1, 0, 0)], {"prior_sd": 0.0}, "prior_sd"),
    ],
)
def test_bad_input_is_refused(
    cells: list[PairResult], options: dict[str, float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        fit_ratings(cells, **options)  # type: ignore[arg-type]


def test_only_reranks_a_subset_without_refitting() -> None:
    rng = np.random.default_rng(5)
    truth = np.array([1000.0, 1500.0, 1505.0, 1510.0, 2000.0])
    fit = fit_ratings(simulate_pair_results(truth, 4000, rng))
    shown = fit.only(["bot0", "bot2", "bot4"])
    assert [r.name for r in shown.ratings] == ["bot4", "bot2", "bot0"]
    assert [(r.rank, r.rank_low, r.rank_high) for r in shown.ratings] == [
        (1, 1, 1),
        (2, 2, 2),
        (3, 3, 3),
    ]
    assert shown.get("bot2").rating == fit.get("bot2").rating
    assert shown.get("bot2").ci95 == fit.get("bot2").ci95
    assert shown.covariance.shape == (3, 3)


def test_no_games_at_all() -> None:
    assert fit_ratings([]).ratings == ()
    lone = fit_ratings([], bots=["a"]).get("a")
    assert (lone.rating, lone.ci95, lone.rank_low, lone.rank_high) == (1500.0, 0.0, 1, 1)
    pair = fit_ratings([], bots=["a", "b"])
    assert [r.rating for r in pair.ratings] == [1500.0, 1500.0]
    assert all(r.ci95 > 1000.0 and r.provisional and r.games == 0 for r in pair.ratings)
    assert pair.groups == 1  # bots without games are shown as one group


def test_a_bot_that_beats_everyone_settles_after_a_hundred_games_against_three() -> None:
    # "champ" wins every game: its interval stays wide (a one-sided score bounds it
    # from one side only), yet 102 games against three opponents establish it.
    rng = np.random.default_rng(7)
    weak = simulate_pair_results(np.array([1400.0, 1500.0, 1600.0]), 300, rng)
    sweep = [PairResult("champ", f"bot{i}", 34, 0, 0) for i in range(3)]
    fit = fit_ratings([*weak, *sweep])
    champ = fit.get("champ")
    assert champ.games == 102 and champ.ci95 > 100.0
    assert not champ.provisional
    two = fit_ratings([*weak, *(PairResult("champ", f"bot{i}", 51, 0, 0) for i in range(2))])
    assert two.get("champ").provisional  # two opponents are not enough
    short = fit_ratings([*weak, *(PairResult("champ", f"bot{i}", 33, 0, 0) for i in range(3))])
    assert short.get("champ").provisional  # 99 games are not enough
