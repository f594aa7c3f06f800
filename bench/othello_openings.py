"""Othello's opening suite: regenerate it and check that no opening decides the game.

    python bench/othello_openings.py [--simulations 200000] [--write]

``builtin:othello-4ply`` holds one opening per position reachable in 4 plies
up to the board's symmetries (``arena.tournaments.suites``, recipe
``othello-4ply``); ladder games play each opening twice, colours swapped. This
checks the shipped file is what the generator makes (``--write`` rewrites it)
and scores every opening with the compiled MCTS (``--simulations`` per
opening, one worker): the value for Black, the side to move after 4 plies
being Black again. A suite is balanced when no opening is far from even;
the table ends with the spread and the openings beyond ``--limit``.
"""

from __future__ import annotations

import argparse
import math
import statistics

from arena.tournaments import suites
from arena.tournaments.openings import SUITE_DIR, load_openings
from bots.kernels import kernel_search, warm_up
from protocol.games import new_game

SUITE = "othello-4ply"


def black_value(opening: tuple[int, ...], simulations: int, seed: int) -> float:
    """MCTS's mean result for Black after ``opening`` (-1 lost .. +1 won)."""
    state = new_game("othello").play_all(opening)
    tree, _, _ = kernel_search(state, simulations, None, math.sqrt(2), seed=seed)
    start, count = int(tree.first_child[0]), int(tree.n_children[0])
    children = slice(start, start + count)
    value = float(tree.value[children].sum() / max(tree.visits[children].sum(), 1.0))
    return value if state.to_move == 0 else -value


def main() -> None:
    """Check (or write) the suite file and print each opening's value for Black."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=200_000)
    parser.add_argument("--limit", type=float, default=0.35, help="|value| called lopsided")
    parser.add_argument("--write", action="store_true", help="rewrite the shipped suite file")
    args = parser.parse_args()

    path = SUITE_DIR / f"{SUITE}.txt"
    made = suites.suite_text(SUITE)
    if args.write:
        path.write_text(made)
        print(f"wrote {path}")
    elif path.read_text() != made:
        raise SystemExit(f"{path} is not what the generator makes: run with --write")
    openings = load_openings(f"builtin:{SUITE}", "othello").openings
    print(f"{SUITE}: {len(openings)} openings, {args.simulations:,} MCTS simulations each\n")
    warm_up("othello")
    values = []
    for index, opening in enumerate(openings):
        value = black_value(opening, args.simulations, seed=index + 1)
        values.append(value)
        print(f"{' '.join(map(str, opening)):<14} {value:+.3f}", flush=True)
    lopsided = [o for o, v in zip(openings, values, strict=True) if abs(v) > args.limit]
    print(
        f"\nvalue for Black: mean {statistics.mean(values):+.3f}, "
        f"min {min(values):+.3f}, max {max(values):+.3f}, "
        f"stdev {statistics.stdev(values):.3f}; beyond ±{args.limit}: {len(lopsided)}"
    )


if __name__ == "__main__":
    main()
