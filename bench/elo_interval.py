"""Coverage of the 95% Elo interval by simulation: how often it holds the true difference.

    python bench/elo_interval.py [--samples 2000] [--seed 1] [--method interval|estimate]

For each true difference (0 to 400 Elo) and sample size, ``--samples`` tallies
are drawn from the draw model of ``arena.stats.simulation`` (20% draws between
equals, fewer when lopsided): single games (2 to 256), then colour-swapped
pairs (1 to 128) whose first mover gains 100 Elo. Each cell is the share of
tallies whose interval held the truth. ``--method estimate`` measures
``elo_estimate``'s normal-approximation interval (fishtest's figure) instead.
The target: at least 93% in every cell, at most 99% from 64 games on.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from arena.stats import elo_estimate
from arena.stats.simulation import interval_coverage

ELOS = (0, 100, 200, 300, 400)
GAMES = (2, 4, 8, 16, 32, 64, 128, 256)
PAIRS = (1, 2, 4, 8, 16, 32, 64, 128)


def estimate_bounds(counts: Sequence[int]) -> tuple[float, float]:
    """``elo_estimate``'s interval as ``(low, high)``."""
    estimate = elo_estimate(counts)
    return estimate.elo - estimate.elo95, estimate.elo + estimate.elo95


def main() -> None:
    """Print the two tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="tallies per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--method", choices=("interval", "estimate"), default="interval")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    method = estimate_bounds if args.method == "estimate" else None
    name = "elo_estimate ± elo95" if method else "elo_interval"
    print(f"{name}: share of {args.samples} samples whose 95% interval held the truth")
    for pentanomial, sizes, unit in ((False, GAMES, "games"), (True, PAIRS, "pairs")):
        print()
        print(f"| {unit} | " + " | ".join(f"{e} Elo" for e in ELOS) + " | too few games |")
        print("|---:|" + "---:|" * (len(ELOS) + 1))
        for size in sizes:
            cells = [
                interval_coverage(elo, size, pentanomial, args.samples, rng, method)
                for elo in ELOS
            ]
            shown = " | ".join(f"{100 * c.covered:.1f}%" for c in cells)
            few = "yes" if cells[0].too_few else ""
            print(f"| {size} | {shown} | {few} |", flush=True)


if __name__ == "__main__":
    main()
