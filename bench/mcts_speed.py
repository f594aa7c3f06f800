"""MCTS speed: our compiled search vs OpenSpiel's C++ and Python MCTS, side by side.

    python bench/mcts_speed.py [--repeats 5] [--seconds 0.3]

Simulations per second from the initial position, one worker each, median of
``--repeats`` runs (UCT c = sqrt(2), one random rollout per simulation, no
solver), for connect4, tictactoe, uttt and othello; then the 1-vs-2-worker scaling of
the pooled ``mcts`` strategy, and the kernels' compile time (cold cache, in a
fresh process) apart from the search.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

from bots import make_strategy
from bots.kernels import kernel_search, warm_up
from protocol.games import new_game

OPENSPIEL_NAMES = {
    "connect4": "connect_four",
    "tictactoe": "tic_tac_toe",
    "uttt": "ultimate_tic_tac_toe",
    "othello": "othello",
}
C = math.sqrt(2)


def _median_rate(run: Callable[[], tuple[int, float]], repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        sims, elapsed = run()
        rates.append(sims / elapsed)
    return statistics.median(rates)


def ours(game: str, seconds: float, repeats: int) -> float:
    """Kernel search sims/s, in process."""
    warm_up(game)
    state = new_game(game)

    def run() -> tuple[int, float]:
        _, done, elapsed = kernel_search(state, None, seconds, C, seed=int(time.time_ns() % 2**31))
        return done, elapsed

    return _median_rate(run, repeats)


def ours_python(game: str, seconds: float, repeats: int) -> float:
    """Our generic Python UCT (the fallback engine)."""
    from bots.strategies.mcts import python_search

    state = new_game(game)

    def run() -> tuple[int, float]:
        r = python_search(state, None, seconds, C, seed=1)
        return r.simulations, r.elapsed_s

    return _median_rate(run, repeats)


def openspiel_cpp(game: str, seconds: float, repeats: int) -> float:
    """``pyspiel.MCTSBot`` with ``RandomRolloutEvaluator(1, seed)``."""
    import pyspiel

    g = pyspiel.load_game(OPENSPIEL_NAMES[game])
    # Size the simulation count to about ``seconds`` of search.
    probe = pyspiel.MCTSBot(
        g, pyspiel.RandomRolloutEvaluator(1, 1), C, 2000, 10**6, False, 1, False
    )
    start = time.perf_counter()
    probe.step(g.new_initial_state())
    sims = max(100, int(2000 / (time.perf_counter() - start) * seconds))

    def run() -> tuple[int, float]:
        bot = pyspiel.MCTSBot(
            g, pyspiel.RandomRolloutEvaluator(1, 7), C, sims, 10**6, False, 7, False
        )
        state = g.new_initial_state()
        t = time.perf_counter()
        bot.step(state)
        return sims, time.perf_counter() - t

    return _median_rate(run, repeats)


def openspiel_python(game: str, seconds: float, repeats: int) -> float:
    """``open_spiel.python.algorithms.mcts.MCTSBot``."""
    import pyspiel
    from open_spiel.python.algorithms import mcts

    g = pyspiel.load_game(OPENSPIEL_NAMES[game])
    rng = np.random.RandomState(3)
    evaluator = mcts.RandomRolloutEvaluator(1, rng)
    sims = 300

    def run() -> tuple[int, float]:
        bot = mcts.MCTSBot(g, C, sims, evaluator, solve=False, random_state=rng)
        t = time.perf_counter()
        bot.step(g.new_initial_state())
        return sims, time.perf_counter() - t

    return _median_rate(run, max(1, repeats // 2))


def scaling(game: str, ms: float, repeats: int) -> dict[int, float]:
    """Median simulations per move of the pooled strategy at 1 and 2 workers."""
    result = {}
    for workers in (1, 2):
        with make_strategy("mcts", game=game, time_ms=ms, workers=workers) as bot:
            sims = []
            for _ in range(repeats):
                bot.choose_move(new_game(game))
                assert bot.last_search is not None
                sims.append(bot.last_search.simulations)
            result[workers] = statistics.median(sims)
    return result


_COMPILE_PROBE = """
import time
t0 = time.perf_counter()
import bots.kernels as k
t1 = time.perf_counter()
for game in ("connect4", "tictactoe", "uttt", "othello"):
    k.warm_up(game, heavy=False)
    k.warm_up(game, heavy=True)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def compile_times() -> tuple[float, float, float]:
    """(import s, first search with a cold cache s, first search with a warm cache s)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        cold = subprocess.run(
            [sys.executable, "-c", _COMPILE_PROBE],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        warm = subprocess.run(
            [sys.executable, "-c", _COMPILE_PROBE],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    return float(cold[0]), float(cold[1]), float(warm[1])


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.3, help="search length per run")
    parser.add_argument("--games", nargs="*", default=list(OPENSPIEL_NAMES))
    args = parser.parse_args()

    print(f"cpus: {os.cpu_count()}  repeats: {args.repeats}  search: {args.seconds:g} s per run\n")
    imp, cold, warm = compile_times()
    print(
        f"kernels: import {imp:.2f} s, first search cold cache (compile) {cold:.1f} s, "
        f"warm cache {warm:.2f} s\n"
    )
    header = (
        f"{'game':<10} {'ours (numba)':>14} {'OpenSpiel C++':>14} {'OpenSpiel Py':>13} "
        f"{'ours (Python)':>14} {'ours/C++':>9}"
    )
    print("simulations per second, from the initial position, median")
    print(header)
    print("-" * len(header))
    for game in args.games:
        o = ours(game, args.seconds, args.repeats)
        c = openspiel_cpp(game, args.seconds, args.repeats)
        p = openspiel_python(game, args.seconds, args.repeats)
        op = ours_python(game, args.seconds, max(1, args.repeats // 2))
        print(
            f"{game:<10} {o:>14,.0f} {c:>14,.0f} {p:>13,.0f} {op:>14,.0f} {o / c:>8.1f}x",
            flush=True,
        )
    print("\nroot-parallel scaling (pooled mcts, 500 ms per move, median simulations per move)")
    for game in args.games:
        s = scaling(game, 500, args.repeats)
        print(
            f"{game:<10} 1 worker {s[1]:>12,.0f}   2 workers {s[2]:>12,.0f}   "
            f"ratio {s[2] / s[1]:.2f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
