"""Searches take a win in one and block a loss in one at small budgets."""

from __future__ import annotations

import pytest

from bots import make_strategy
from protocol.games import new_game

# (game, moves so far, the only good move)
WIN_IN_ONE = [
    ("connect4", [0, 1, 0, 1, 0, 1], 0),  # x: vertical in column 0 (o also threatens 1)
    ("connect4", [0, 0, 1, 1, 2, 6], 3),  # x: horizontal 0-1-2 -> 3
    ("tictactoe", [0, 3, 1, 4], 2),  # x: top row (o threatens 5)
]
BLOCK_IN_ONE = [
    ("connect4", [0, 1, 0, 1, 5, 1], 1),  # o threatens column 1
    ("connect4", [6, 0, 6, 1, 5, 2], 3),  # o threatens the bottom row at 3
    ("tictactoe", [0, 4, 8, 2], 6),  # o threatens the 2-4-6 diagonal
]
SEARCHERS = [
    ("mcts", {"simulations": 1000, "workers": 0}),
    ("mcts", {"simulations": 1000, "workers": 0, "engine": "python"}),
    ("mcts-heavy", {"simulations": 300, "workers": 0}),
    ("alphabeta", {"depth": 3, "workers": 0}),
    ("alphabeta", {"time_ms": 20, "workers": 0}),
    ("greedy", {}),
]


@pytest.mark.parametrize(("kind", "options"), SEARCHERS)
@pytest.mark.parametrize(("game", "moves", "best"), WIN_IN_ONE + BLOCK_IN_ONE)
def test_takes_win_and_blocks_loss(
    kind: str, options: dict[str, object], game: str, moves: list[int], best: int
) -> None:
    state = new_game(game).play_all(moves)
    for seed in range(3):
        seeded = {**options, "seed": seed} if kind.startswith("mcts") else options
        with make_strategy(kind, game=game, **seeded) as bot:
            assert bot.choose_move(state) == best
