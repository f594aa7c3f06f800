"""Random playouts per second for each game, from the initial position, on one core.

Two columns per game: the fast ``random_playout`` path (what pure-Python search
uses) and a playout through the public immutable API (``legal_moves`` +
``play``), to show what the fast path buys. Medians over repeated timed runs.

    python bench/rules_speed.py [--seconds 1.0] [--repeats 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from protocol.games import GAMES, GameState, new_game


def api_playout(state: GameState, rng: random.Random) -> object:
    """A playout that uses only the public API: new state objects every ply."""
    while not state.is_over():
        moves = state.legal_moves()
        state = state.play(moves[rng.randrange(len(moves))])
    return state.outcome()


def rate(
    playout: Callable[[GameState, random.Random], object], name: str, seconds: float, seed: int
) -> float:
    """Playouts per second of ``playout`` from the initial position of ``name``."""
    start_state = new_game(name)
    rng = random.Random(seed)
    count = 0
    begin = time.perf_counter()
    deadline = begin + seconds
    while True:
        for _ in range(64):
            playout(start_state, rng)
        count += 64
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - begin)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one timed run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per cell (median)")
    args = parser.parse_args()

    def fast(state: GameState, rng: random.Random) -> object:
        return state.random_playout(rng)

    print(
        f"random playouts/s from the initial position, median of {args.repeats} x "
        f"{args.seconds:g} s, one core"
    )
    print(f"{'game':<12} {'random_playout':>15} {'play() API':>12} {'ratio':>7}")
    for name in GAMES:
        fast_rates = [rate(fast, name, args.seconds, seed) for seed in range(args.repeats)]
        api_rates = [rate(api_playout, name, args.seconds, seed) for seed in range(args.repeats)]
        f, a = statistics.median(fast_rates), statistics.median(api_rates)
        print(f"{name:<12} {f:>15,.0f} {a:>12,.0f} {f / a:>6.1f}x", flush=True)


if __name__ == "__main__":
    main()
