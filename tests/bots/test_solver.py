"""The MCTS kernels prove wins and losses (MCTS-Solver) and stop searching decided roots."""

from __future__ import annotations

import math

from bots.kernels import DEFAULT_MAX_NODES
from bots.strategies.mcts import RootStats, merge_root_stats, search_task
from protocol.games import Connect4State, new_game

C = math.sqrt(2)


def kernel_root(state: object, simulations: int, seed: int = 3) -> RootStats:
    return search_task(state, simulations, None, C, seed, False, "kernel", DEFAULT_MAX_NODES)  # type: ignore[arg-type]


def test_a_win_in_one_is_proven_and_ends_the_search() -> None:
    state = Connect4State.from_notation("112233")  # x has three on the bottom row: column 4 wins
    stats = kernel_root(state, 20_000)
    proofs = dict(zip(stats.moves, stats.proven, strict=True))
    assert proofs[3] == 1
    assert stats.best_move() == 3
    assert stats.simulations < 100  # the root was proven long before the budget ran out


def test_a_lost_position_is_proven_lost_in_every_move() -> None:
    # o has an open three (columns 3-5) on the bottom row: x cannot block both ends.
    state = Connect4State.from_notation("737415")
    stats = kernel_root(state, 200_000)
    assert stats.proven == (-1,) * 7
    assert stats.simulations < 200_000


def test_tictactoe_solver_never_proves_a_draw_lost() -> None:
    # From the empty board tic-tac-toe is a draw: no root move may be proven lost or won.
    stats = kernel_root(new_game("tictactoe"), 300_000)
    assert set(stats.proven) == {0}
    # After a corner opening, the edge replies lose for o, and the solver finds that out.
    stats = kernel_root(new_game("tictactoe").play(0), 300_000)
    proofs = dict(zip(stats.moves, stats.proven, strict=True))
    assert proofs[4] == 0  # the centre reply holds the draw
    assert any(p == -1 for p in proofs.values())
    assert stats.best_move() == 4


def test_proofs_survive_merging_in_any_order() -> None:
    found = RootStats((0, 1, 2), (5, 50, 5), (0.0, 10.0, 0.0), 60, 0.1, (1, 0, -1))
    unaware = RootStats((0, 1, 2), (5, 500, 5), (0.0, 100.0, 0.0), 510, 0.1, (0, 0, 0))
    python = RootStats((0, 1, 2), (1, 1, 1), (0.0, 0.0, 0.0), 3, 0.1)
    for order in ([found, unaware, python], [python, unaware, found], [unaware, found]):
        merged = merge_root_stats(order)
        assert merged.proven == (1, 0, -1)
        assert merged.best_move() == 0


def test_a_proven_loss_is_never_played_while_an_alternative_exists() -> None:
    stats = RootStats((0, 1, 2), (900, 50, 40), (0.0, 1.0, 2.0), 990, 0.1, (-1, 0, 0))
    assert stats.best_move() == 1
    all_lost = RootStats((0, 1), (10, 20), (0.0, 0.0), 30, 0.1, (-1, -1))
    assert all_lost.best_move() == 1
