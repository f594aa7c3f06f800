"""Playing strength against OpenSpiel's C++ MCTS at equal wall time per move (connect4).

    python bench/strength.py [--games 200] [--ms 100] [--bots mcts alphabeta mcts-heavy]

OpenSpiel's ``pyspiel.MCTSBot`` (UCT c = sqrt(2), one random rollout) gets the
simulation count that takes ``--ms`` here (calibrated at start); each of our
strategies gets ``time_ms=--ms`` with one worker. Games come in colour-swapped
pairs from random 2-ply openings. Prints score and Elo difference (95% interval).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

import pyspiel

from bots import make_strategy
from bots.match import elo_interval, random_opening
from protocol.games import new_game

C = math.sqrt(2)


def calibrate(ms: float) -> int:
    """OpenSpiel simulations that take ``ms`` from a few early positions (median)."""
    game = pyspiel.load_game("connect_four")
    rates = []
    rng = random.Random(0)
    for _ in range(5):
        state = game.new_initial_state()
        for _ in range(rng.randrange(0, 6)):
            state.apply_action(rng.choice(state.legal_actions()))
        bot = pyspiel.MCTSBot(
            game, pyspiel.RandomRolloutEvaluator(1, 1), C, 3000, 10**6, False, 1, False
        )
        start = time.perf_counter()
        bot.step(state)
        rates.append(3000 / (time.perf_counter() - start))
    return max(1, int(statistics.median(rates) * ms / 1000))


def play_one(
    spec: str, ms: float, os_sims: int, opening: tuple[int, ...], ours_first: bool, seed: int
) -> float:
    """One game; our score (1, 0.5, 0)."""
    game = pyspiel.load_game("connect_four")
    os_bot = pyspiel.MCTSBot(
        game, pyspiel.RandomRolloutEvaluator(1, seed), C, os_sims, 10**6, False, seed, False
    )
    state = new_game("connect4").play_all(opening)
    os_state = game.new_initial_state()
    for move in opening:
        os_state.apply_action(move)
    ours_colour = 0 if ours_first else 1
    with make_strategy(
        spec,
        game="connect4",
        time_ms=ms,
        workers=1,
        **({"seed": seed} if spec.startswith("mcts") else {}),
    ) as bot:
        while state.outcome() is None:
            ours_turn = state.to_move == ours_colour
            move = bot.choose_move(state) if ours_turn else os_bot.step(os_state)
            state = state.play(move)
            os_state.apply_action(move)
    outcome = state.outcome()
    assert outcome is not None
    return outcome.score(ours_colour)


def main() -> None:
    """Run the matches and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per strategy (even)")
    parser.add_argument("--ms", type=float, default=100.0, help="wall time per move")
    parser.add_argument("--bots", nargs="*", default=["mcts", "alphabeta", "mcts-heavy"])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    os_sims = calibrate(args.ms)
    print(
        f"OpenSpiel C++ MCTS: {os_sims} simulations (~{args.ms:g} ms here); "
        f"ours: time_ms={args.ms:g}, 1 worker"
    )
    rows = []
    for spec in args.bots:
        rng = random.Random(args.seed)
        scores: list[float] = []
        start = time.perf_counter()
        for pair in range(args.games // 2):
            opening = random_opening("connect4", 2, rng)
            for ours_first in (True, False):
                scores.append(
                    play_one(spec, args.ms, os_sims, opening, ours_first, 1000 * pair + len(scores))
                )
            done = len(scores)
            if done % 10 == 0 or done == args.games:
                print(
                    f"  {spec}: {done}/{args.games} games, score {sum(scores) / done:.1%}, "
                    f"{time.perf_counter() - start:.0f} s",
                    flush=True,
                )
        elo, low, high = elo_interval(scores)
        wins = scores.count(1.0)
        draws = scores.count(0.5)
        rows.append(
            (
                spec,
                len(scores),
                wins,
                draws,
                len(scores) - wins - draws,
                sum(scores) / len(scores),
                elo,
                low,
                high,
            )
        )
    print(
        f"\n{'strategy':<12} {'games':>5} {'W':>4} {'D':>4} {'L':>4} {'score':>7} {'Elo':>6}"
        "  95% interval"
    )
    for spec, n, w, d, lo, score, elo, low, high in rows:
        print(
            f"{spec:<12} {n:>5} {w:>4} {d:>4} {lo:>4} {score:>7.1%} {_f(elo):>6}"
            f"  [{_f(low)}, {_f(high)}]"
        )


def _f(x: float) -> str:
    return f"{x:+.0f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


if __name__ == "__main__":
    main()
