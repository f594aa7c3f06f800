"""Playing strength against OpenSpiel's C++ MCTS at equal wall time per move (connect4).

    python bench/strength.py [--games 200] [--ms 100] [--bots mcts alphabeta mcts-heavy]
                             [--budget sims|time] [--jobs 2]

Equal wall time, made robust to a shared machine. With ``--budget sims`` (the
default) the simulations each side runs in ``--ms`` are measured side by side
first — OpenSpiel's ``pyspiel.MCTSBot`` (UCT c = sqrt(2), one random rollout)
and each of our MCTS strategies, interleaved over several rounds, medians —
and then every game is played at those fixed counts. Load that comes and goes
during the games then slows both sides alike instead of taking search from
whichever side happens to be thinking, and games can run in parallel
(``--jobs``). ``alphabeta`` has no simulation count and always plays by time
(``time_ms=--ms``), so its row is sensitive to load. ``--budget time`` plays
ours by wall time against the calibrated OpenSpiel count, one game at a time.

Games come in colour-swapped pairs from random 2-ply openings. Prints score and
Elo difference with its 95% interval (``arena.stats.elo_interval`` of the pairs).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

import pyspiel

from arena.stats import elo_interval, match_counts
from bots import make_strategy
from bots.match import random_opening
from protocol.games import GameState, new_game

C = math.sqrt(2)
SEARCHED = ("mcts", "mcts-heavy")
"""Our strategies with a simulation budget; the others play by time."""


def _early_positions(count: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    return [tuple(rng.randrange(7) for _ in range(rng.randrange(0, 6))) for _ in range(count)]


def _openspiel_rate(moves: tuple[int, ...], probe: int = 3000) -> float:
    game = pyspiel.load_game("connect_four")
    state = game.new_initial_state()
    for move in moves:
        state.apply_action(move)
    bot = pyspiel.MCTSBot(
        game, pyspiel.RandomRolloutEvaluator(1, 1), C, probe, 10**6, False, 1, False
    )
    start = time.perf_counter()
    bot.step(state)
    return probe / (time.perf_counter() - start)


def _our_rate(spec: str, moves: tuple[int, ...], ms: float) -> float:
    state: GameState = new_game("connect4").play_all(moves)
    with make_strategy(spec, game="connect4", time_ms=ms, workers=0, seed=1) as bot:
        bot.choose_move(state)  # compiled kernels load on the first search
        bot.choose_move(state)
        info = bot.last_search
        assert info is not None
        return info.simulations / info.elapsed_s


def calibrate(specs: list[str], ms: float, rounds: int = 7) -> dict[str, int]:
    """Simulations in ``ms`` for OpenSpiel and each spec, measured interleaved (medians)."""
    rates: dict[str, list[float]] = {name: [] for name in ["openspiel", *specs]}
    for moves in _early_positions(rounds, seed=0):
        rates["openspiel"].append(_openspiel_rate(moves))
        for spec in specs:
            rates[spec].append(_our_rate(spec, moves, ms))
    return {name: max(1, int(statistics.median(r) * ms / 1000)) for name, r in rates.items()}


@dataclass(frozen=True)
class Game:
    """One game to play: who, at what budget, from which opening, which colour."""

    spec: str
    ms: float
    ours_sims: int | None
    os_sims: int
    opening: tuple[int, ...]
    ours_first: bool
    seed: int


def play_one(game: Game) -> float:
    """Play one game; our score (1, 0.5, 0)."""
    os_game = pyspiel.load_game("connect_four")
    os_bot = pyspiel.MCTSBot(
        os_game,
        pyspiel.RandomRolloutEvaluator(1, game.seed),
        C,
        game.os_sims,
        10**6,
        False,
        game.seed,
        False,
    )
    state: GameState = new_game("connect4").play_all(game.opening)
    os_state = os_game.new_initial_state()
    for move in game.opening:
        os_state.apply_action(move)
    ours_colour = 0 if game.ours_first else 1
    options: dict[str, object] = {"workers": 1}
    if game.ours_sims is not None:
        options = {"simulations": game.ours_sims, "workers": 0}
    else:
        options["time_ms"] = game.ms
    if game.spec in SEARCHED:
        options["seed"] = game.seed
    with make_strategy(game.spec, game="connect4", **options) as bot:
        while state.outcome() is None:
            ours_turn = state.to_move == ours_colour
            move = bot.choose_move(state) if ours_turn else os_bot.step(os_state)
            state = state.play(move)
            os_state.apply_action(move)
    outcome = state.outcome()
    assert outcome is not None
    return outcome.score(ours_colour)


def schedule(
    spec: str, count: int, ms: float, budgets: dict[str, int], use_sims: bool, seed: int
) -> list[Game]:
    """Colour-swapped pairs of games from seeded 2-ply openings."""
    rng = random.Random(seed)
    ours_sims = budgets[spec] if use_sims and spec in SEARCHED else None
    games = []
    for pair in range(count // 2):
        opening = random_opening("connect4", 2, rng)
        for ours_first in (True, False):
            games.append(
                Game(
                    spec,
                    ms,
                    ours_sims,
                    budgets["openspiel"],
                    opening,
                    ours_first,
                    1000 * pair + len(games),
                )
            )
    return games


def main() -> None:
    """Calibrate, run the matches with progress lines, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per strategy (even)")
    parser.add_argument("--ms", type=float, default=100.0, help="wall time per move")
    parser.add_argument("--bots", nargs="*", default=["mcts", "alphabeta", "mcts-heavy"])
    parser.add_argument(
        "--budget",
        choices=("sims", "time"),
        default="sims",
        help="play ours at calibrated simulation counts, or by wall time",
    )
    parser.add_argument("--jobs", type=int, default=2, help="games in parallel (sims budget)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    use_sims = args.budget == "sims"
    searched = [b for b in args.bots if b in SEARCHED] if use_sims else []
    budgets = calibrate(searched, args.ms)
    print(f"equal wall time per move: {args.ms:g} ms, measured side by side (medians):")
    print(f"  OpenSpiel C++ MCTSBot  {budgets['openspiel']:>9,} simulations")
    for spec in args.bots:
        if spec in budgets:
            ratio = budgets[spec] / budgets["openspiel"]
            print(f"  ours {spec:<17} {budgets[spec]:>9,} simulations ({ratio:.1f}x)")
        else:
            print(f"  ours {spec:<17} time_ms={args.ms:g}, 1 worker")
    jobs = args.jobs if use_sims else 1
    rows = []
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        for spec in args.bots:
            games = schedule(spec, args.games, args.ms, budgets, use_sims, args.seed)
            # A time-budgeted player must not share the cores with another game.
            parallel = jobs if spec in searched else 1
            start = time.perf_counter()
            scores: list[float] = []
            runner = (
                pool.map(play_one, games, chunksize=1) if parallel > 1 else map(play_one, games)
            )
            for score in runner:
                scores.append(score)
                done = len(scores)
                if done % 10 == 0 or done == len(games):
                    print(
                        f"  {spec}: {done}/{len(games)} games, score "
                        f"{sum(scores) / done:.1%}, {time.perf_counter() - start:.0f} s",
                        flush=True,
                    )
            pairs = [scores[i] + scores[i + 1] for i in range(0, len(scores) - 1, 2)]
            interval = elo_interval(match_counts(scores, pairs))
            elo, low, high = interval.elo, interval.low, interval.high
            wins, draws = scores.count(1.0), scores.count(0.5)
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
