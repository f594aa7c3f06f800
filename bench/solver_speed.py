"""Connect Four solver speed: nodes per second and time to solve, next to the MCTS kernels.

    python bench/solver_speed.py [--positions 30] [--plies 10 14 18] [--seconds 0.3]

For each ply count, a fixed seeded set of positions from uniformly random
play (finished games skipped) is solved from an empty transposition table,
strong (exact score) and weak (win/draw/loss), with no budget. Prints the
median and 90th percentile time to solve, the median nodes, and nodes per
second over the whole set (wall time and process CPU time, since the
machine may be shared). The last lines measure the compiled MCTS kernels
(uniform and heavy playouts) from the same positions for comparison: one
solver node is far cheaper than one MCTS simulation (a full playout).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time

from bots.kernels import kernel_search, warm_up
from bots.strategies.solver import Solver
from bots.strategies.solver import warm_up as warm_up_solver
from protocol.games import Connect4State

SEED = 7


def positions(plies: int, count: int, seed: int = SEED) -> list[Connect4State]:
    """``count`` unfinished positions after ``plies`` uniformly random moves."""
    rng = random.Random(seed * 1000 + plies)
    found: list[Connect4State] = []
    while len(found) < count:
        state = Connect4State.initial()
        while state.ply < plies and state.outcome() is None:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome() is None:
            found.append(state)
    return found


def solve_row(solver: Solver, states: list[Connect4State], weak: bool) -> dict[str, float]:
    """Solve every state from an empty table; the row's figures."""
    times: list[float] = []
    nodes: list[int] = []
    cpu = 0.0
    for state in states:
        solver.reset()
        cpu_start = time.process_time()
        result = solver.solve(state, weak=weak)
        cpu += time.process_time() - cpu_start
        assert result.score is not None
        times.append(result.elapsed_s)
        nodes.append(result.nodes)
    ordered = sorted(times)
    return {
        "median_ms": statistics.median(times) * 1000,
        "p90_ms": ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)] * 1000,
        "median_nodes": statistics.median(nodes),
        "rate": sum(nodes) / sum(times),
        "cpu_rate": sum(nodes) / cpu if cpu > 0 else 0.0,
    }


def mcts_rate(states: list[Connect4State], heavy: bool, seconds: float) -> float:
    """Median MCTS simulations per second over ``states`` (one worker, in process)."""
    warm_up("connect4", heavy=heavy)
    rates = []
    for index, state in enumerate(states):
        _, done, elapsed = kernel_search(state, None, seconds, math.sqrt(2), index, heavy)
        rates.append(done / elapsed)
    return statistics.median(rates)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=30, help="positions per ply count")
    parser.add_argument("--plies", type=int, nargs="*", default=[10, 14, 18])
    parser.add_argument("--seconds", type=float, default=0.3, help="MCTS search per position")
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f}")
    print(f"solver warm-up (kernels load or compile): {warm_up_solver():.2f} s")
    solver = Solver()
    print(
        f"\n{args.positions} seeded random positions per row, empty table each, "
        "medians (rate = all nodes / all time)"
    )
    header = (
        f"{'plies':>5} {'mode':<6} {'median':>9} {'p90':>9} {'median nodes':>13} "
        f"{'nodes/s':>11} {'nodes/CPU s':>12}"
    )
    print(header)
    print("-" * len(header))
    sets = {plies: positions(plies, args.positions) for plies in args.plies}
    for plies, states in sets.items():
        for weak in (False, True):
            row = solve_row(solver, states, weak)
            print(
                f"{plies:>5} {'weak' if weak else 'strong':<6} {row['median_ms']:>7.2f}ms "
                f"{row['p90_ms']:>7.1f}ms {row['median_nodes']:>13,.0f} "
                f"{row['rate'] / 1e6:>9.2f} M {row['cpu_rate'] / 1e6:>10.2f} M",
                flush=True,
            )
    sample = [s for states in sets.values() for s in states[:3]]
    print(f"\nMCTS kernels on {len(sample)} of these positions, {args.seconds:g} s each, median:")
    for heavy in (False, True):
        rate = mcts_rate(sample, heavy, args.seconds)
        name = "mcts-heavy" if heavy else "mcts"
        print(f"  {name:<11} {rate:>12,.0f} simulations/s")


if __name__ == "__main__":
    main()
