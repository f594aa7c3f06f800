"""Speed of the leaderboard rating fit (Bradley–Terry over all rated games of a game).

    python bench/rating_fit.py [--repeats 7] [--seed 1]

For each size, games between uniformly drawn ordered pairs of bots with known
ratings (normal, sd 200) are simulated and tallied per ordered pair — as the
server's SQL ``GROUP BY`` delivers them — and ``fit_ratings`` is timed on those
cells: median of ``--repeats`` runs. ``tally`` is the pure-Python
``tally_pairs`` over the per-game list, once (the server should aggregate in
SQL instead). ``rms err`` is the RMS distance of the fitted ratings from the
true ones, shifted to the same mean, next to the mean reported ci95 / 1.96 —
the two should be comparable if the intervals are honest. ``hold ms`` is the
longest the fit kept another thread from running (the server fits in a worker
thread beside its event loop): the longest gap of a 1 ms sleep loop in the main
thread while one fit runs in a thread, so a step that holds the GIL shows.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import threading
import time
from collections.abc import Callable

import numpy as np

from arena.stats.rating_fit import PairResult, fit_ratings, tally_pairs
from arena.stats.simulation import simulate_pair_results

SIZES = (
    (10, 2_000),
    (30, 20_000),
    (100, 20_000),
    (100, 200_000),
    (300, 200_000),
    (1_000, 20_000),
    (2_000, 20_000),
)


def _games_list(cells: list[PairResult]) -> list[tuple[str, str, float]]:
    games: list[tuple[str, str, float]] = []
    for cell in cells:
        games += [(cell.bot, cell.opponent, 1.0)] * cell.wins
        games += [(cell.bot, cell.opponent, 0.5)] * cell.draws
        games += [(cell.bot, cell.opponent, 0.0)] * cell.losses
    return games


def longest_hold(work: Callable[[], object]) -> float:
    """Seconds of the longest pause a 1 ms sleep loop saw while ``work`` ran in a thread."""
    done = threading.Event()

    def run() -> None:
        work()
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    longest, last = 0.0, time.perf_counter()
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    return longest


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed fits per size (median)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"fit_ratings from pair cells, median of {args.repeats}; tally_pairs once")
    print(
        f"{'bots':>5} {'games':>8} {'cells':>6} {'fit ms':>8} {'iter':>5} "
        f"{'tally ms':>9} {'rms err':>8} {'sd est':>7} {'hold ms':>8}"
    )
    rng = np.random.default_rng(args.seed)
    for bots, games in SIZES:
        truth = rng.normal(1500.0, 200.0, bots)
        cells = simulate_pair_results(truth, games, rng)
        times = []
        for _ in range(args.repeats):
            begin = time.perf_counter()
            fit = fit_ratings(cells)
            times.append(time.perf_counter() - begin)
        game_list = _games_list(cells)
        begin = time.perf_counter()
        tally_pairs(game_list)
        tally = time.perf_counter() - begin
        fitted = np.array([fit.get(f"bot{i}").rating for i in range(bots)])
        error = (fitted - fitted.mean()) - (truth - truth.mean())
        rms = float(np.sqrt(np.mean(error**2)))
        sd = float(np.mean([r.ci95 for r in fit.ratings])) / 1.96
        hold = longest_hold(functools.partial(fit_ratings, cells))
        print(
            f"{bots:>5} {games:>8,} {len(cells):>6,} {statistics.median(times) * 1e3:>8.1f} "
            f"{fit.iterations:>5} {tally * 1e3:>9.1f} {rms:>8.2f} {sd:>7.2f} {hold * 1e3:>8.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
