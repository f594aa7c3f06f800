"""``arena analyse`` throughput on Connect Four games played by real bots.

    python bench/analysis_speed.py [--games 60] [--budgets 100 300 1000] [--jobs 2]

Plays ``--games`` games offline between three built-in strategies (greedy,
alpha-beta to depth 4, MCTS with 2,000 simulations; seeded, every pairing,
colours swapped, from random 2-ply openings), writes them through the store
to a fresh SQLite file, then for each budget analyses a copy of it with
``arena analyse --all`` run as a process, timed from start to exit (worker
start-up included). Prints per budget: wall time and seconds per game,
positions solved (each distinct position once) and per second, the share of
them left unknown, the share of moves decided (win/draw/loss known before
and after) and judged (decided, where the choice mattered), and the blunders
found.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.store import Store
from bots.match import play_match
from protocol.games import Termination

STRATEGIES = {
    "greedy": "greedy:seed=1",
    "alphabeta": "alphabeta:depth=4,workers=0",
    "mcts": "mcts:simulations=2000,seed=1,workers=0",
}
SEED = 11
SUMMARY = re.compile(r"(\d+) positions solved \((\d+)/s\), (\d+) unknown")


def play_games(total: int) -> list[tuple[str, str, tuple[int, ...], int | None, Termination]]:
    """``total`` games (rounded up to whole pairings): players, moves, winner, termination."""
    pairs = list(itertools.combinations(STRATEGIES, 2))
    per_pair = -(-total // len(pairs))
    per_pair += per_pair % 2
    games = []
    for number, (a, b) in enumerate(pairs):
        played = play_match(
            "connect4",
            [STRATEGIES[a], STRATEGIES[b]],
            games=per_pair,
            seed=SEED + number,
            opening_plies=2,
        )
        for game in played.games:
            first, second = (a, b) if game.first == 0 else (b, a)
            outcome = game.outcome
            games.append((first, second, game.moves, outcome.winner, outcome.termination))
    return games


async def write_games(
    url: str, games: list[tuple[str, str, tuple[int, ...], int | None, Termination]]
) -> None:
    """Store every game as a finished rated match."""
    async with await Store.open(url) as store:
        for name in STRATEGIES:
            await store.add_bot(name)
        for first, second, moves, winner, termination in games:
            match_id = await store.open_match("connect4", (first, second), 1000, 0)
            for ply, move in enumerate(moves):
                store.record_move(match_id, ply, ply % 2, move, 10, 1)
            await store.finish_match(match_id, winner, termination, None, True)


def analyse(path: Path, budget_ms: int, jobs: int) -> dict[str, float]:
    """Run ``arena analyse --all`` on ``path``; the row's figures."""
    url = f"sqlite+aiosqlite:///{path}"
    command = [sys.executable, "-m", "arena", "analyse", "--db", url, "--all"]
    command += ["--budget-ms", str(budget_ms), "--jobs", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    found = SUMMARY.search(done.stdout)
    assert found is not None, done.stdout
    positions, _, unknown = (int(x) for x in found.groups())
    with sqlite3.connect(path) as db:
        moves, decided, judged, blunders, games = db.execute(
            "SELECT COUNT(*), SUM(blunder IS NOT NULL),"
            " SUM(blunder IS NOT NULL AND choice_matters = 1), SUM(blunder = 1),"
            " COUNT(DISTINCT match_id) FROM move_analysis"
        ).fetchone()
    return {
        "wall_s": wall,
        "s_per_game": wall / games,
        "positions": positions,
        "per_s": positions / wall,
        "unknown": unknown / positions,
        "decided": decided / moves,
        "judged": judged / moves,
        "blunders": blunders,
        "moves": moves,
        "games": games,
    }


def main() -> None:
    """Play, store, analyse at each budget, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--budgets", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    games = play_games(args.games)
    print(f"played {len(games)} games in {time.perf_counter() - start:.0f} s", flush=True)
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "games.db"
        asyncio.run(write_games(f"sqlite+aiosqlite:///{source}", games))
        moves = sum(len(game[2]) for game in games)
        print(f"{len(games)} games, {moves} moves; --jobs {args.jobs}")
        print(
            "| budget | wall | per game | positions | positions/s | unknown | decided moves"
            " | judged moves | blunders |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for budget in args.budgets:
            copy = Path(directory) / f"budget-{budget}.db"
            shutil.copy(source, copy)
            row = analyse(copy, budget, args.jobs)
            print(
                f"| {budget} ms | {row['wall_s']:.1f} s | {row['s_per_game']:.2f} s"
                f" | {row['positions']:.0f} | {row['per_s']:.0f} | {row['unknown']:.1%}"
                f" | {row['decided']:.1%} | {row['judged']:.1%} | {row['blunders']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
