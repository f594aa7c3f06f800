"""The ``solver`` strategy: perfect moves when solved, pruned MCTS otherwise, in its pool."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from bots import StrategyOptionError, make_strategy, make_strategy_from_spec
from bots.budget import Budget
from bots.strategies.mcts import RootStats
from bots.strategies.solver import Solver, analyse, forced_score, search_order
from bots.strategies.solver_strategy import (
    QUICK_CAP,
    SEARCH_ONLY_BELOW,
    SECOND_SOLVES_FROM,
    RootSolve,
    decide,
    merge_solves,
    solve_root,
    solver_task,
    worker_roles,
)
from protocol.games import Connect4State


def _positions_where_the_choice_matters(seed: int, count: int) -> list[Connect4State]:
    """Seeded random-play positions (24-34 stones) where some move loses the value."""
    rng = random.Random(seed)
    found: list[Connect4State] = []
    while len(found) < count:
        state = Connect4State.initial()
        target = rng.randint(24, 34)
        while state.ply < target and state.outcome() is None:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome() is None:
            signs = {(s > 0) - (s < 0) for s in analyse(state, weak=True).scores.values()}  # type: ignore[operator]
            if len(signs) > 1:
                found.append(state)
    return found


def test_solved_positions_get_the_best_move_in_process() -> None:
    with make_strategy("solver", game="connect4", time_ms=2000, workers=0) as bot:
        for state in _positions_where_the_choice_matters(seed=3, count=12):
            scores = analyse(state).scores
            move = bot.choose_move(state)
            assert scores[move] == max(scores.values()), (state.moves, scores, move)  # type: ignore[type-var]
            assert bot.last_search is not None and bot.last_search.moves == ()  # no MCTS needed


def test_lost_positions_get_the_slowest_loss() -> None:
    rng = random.Random(9)
    lost: list[Connect4State] = []
    while len(lost) < 4:
        state = Connect4State.initial()
        target = rng.randint(24, 34)
        while state.ply < target and state.outcome() is None:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome() is None:
            scores = analyse(state).scores
            if max(scores.values()) < 0 and len(set(scores.values())) > 1:  # type: ignore[type-var]
                lost.append(state)
    # o to move can block only one end of x's open three: every move hands over a win.
    hopeless = Connect4State.from_notation("44553")
    with make_strategy("solver", game="connect4", time_ms=2000, workers=0) as bot:
        for state in lost:
            scores = analyse(state).scores
            assert scores[bot.choose_move(state)] == max(scores.values())  # type: ignore[type-var]
        assert bot.choose_move(hopeless) in hopeless.legal_moves()
        assert bot.last_search is not None and bot.last_search.value == -1.0


def test_the_pooled_strategy_plays_the_same_solved_moves() -> None:
    states = _positions_where_the_choice_matters(seed=4, count=4)
    with make_strategy_from_spec("solver:time_ms=300,workers=2", "connect4") as pooled:
        assert pooled.describe() == "solver(time_ms=300, workers=2)"
        for state in states:
            scores = analyse(state).scores
            move = asyncio.run(pooled.choose_move_async(state))
            assert scores[move] == max(scores.values())  # type: ignore[type-var]


def test_an_unsolved_position_falls_back_to_mcts_without_losing_moves() -> None:
    # o to move; column 4 would put o under x's winning cell. Found by seeded random play.
    state = Connect4State.from_notation("7576576")
    losing = {m for m in state.legal_moves() if (forced_score(state, m) or 0) < 0}
    assert losing == {3}
    with make_strategy("solver", game="connect4", time_ms=80, workers=0, max_nodes=1) as bot:
        for _ in range(3):
            assert bot.choose_move(state) not in losing
            assert bot.last_search is not None and bot.last_search.moves  # MCTS decided


def test_decide_never_plays_a_move_proven_worse() -> None:
    state = Connect4State.initial()
    moves = tuple(range(7))
    # The search likes column 0 best, but the solver proved it loses while column 3 draws.
    stats = RootStats(moves, (900, 10, 10, 50, 10, 10, 10), (0.0,) * 7, 1000, 0.1)
    bounds = dict.fromkeys(moves, (-100, 100))
    bounds[0] = (-18, -1)
    bounds[3] = (0, 18)
    solved = RootSolve(bounds)
    move, _ = decide(state, solved, stats)
    assert move != 0
    assert decide(state, None, stats)[0] == 0  # without the proof it would have played it


def test_a_timed_move_returns_in_time() -> None:
    with make_strategy("solver", game="connect4", time_ms=50, workers=0) as bot:
        bot.choose_move(Connect4State.initial())  # kernels and tree warm
        start = time.perf_counter()
        bot.choose_move(Connect4State.from_notation("44"))
        # Generous for a busy machine; a search that ignored its 50 ms would run for minutes.
        assert time.perf_counter() - start < 3.0


def test_options_are_checked() -> None:
    with pytest.raises(StrategyOptionError, match="connect4 only"):
        make_strategy("solver", game="tictactoe")
    with pytest.raises(StrategyOptionError, match="workers"):
        make_strategy("solver", game="connect4", workers=3)
    with pytest.raises(StrategyOptionError, match="solve_share"):
        make_strategy("solver", game="connect4", workers=0, solve_share=0)


def test_a_cheap_win_late_in_the_order_is_found_before_an_expensive_first_move() -> None:
    # x to move, no immediate win; found by seeded random play (random.Random(11),
    # 8-12 plies). Among the moves not settled for free the search order puts column
    # 2 first: it does not win and takes some 300k nodes to refute from an empty
    # table, while column 3 wins within a few hundred.
    state = Connect4State.from_notation("7655545746")
    solver = Solver()
    assert all((forced_score(state, m) or 0) <= 0 for m in state.legal_moves())
    assert next(m for m in search_order(state) if forced_score(state, m) is None) == 2
    assert solver.test_move(state, 2, 1, max_nodes=100_000) is None  # too dear alone
    solver.reset()
    found = solver.test_move(state, 3, 1, max_nodes=QUICK_CAP)
    assert found is not None and found[0] >= 1
    solver.reset()
    solved = solve_root(state, time.perf_counter() + 3600, max_nodes=100_000, solver=solver)
    assert solved.move is not None and solved.outcome == 1
    assert analyse(state, weak=True).scores[solved.move] == 1


def test_the_fallback_prunes_moves_proven_short_of_what_another_may_reach() -> None:
    unknown = (-100, 100)
    # Some move may still win: a move proven not to win is pruned, even a sure draw.
    bounds = {0: (0, 0), 1: (-15, 0), 2: unknown, 3: (-15, 5)}
    assert RootSolve(bounds).proofs() == {0: -1, 1: -1, 2: 0, 3: 0}
    # No move can win any more: the moves proven to lose are pruned.
    bounds = {0: (-15, -1), 1: (-15, 0), 2: (-3, 0), 3: (-15, -4)}
    assert RootSolve(bounds).proofs() == {0: -1, 1: 0, 2: 0, 3: -1}
    # Every move loses: only those proven to lose faster than another move surely does.
    bounds = {0: (-15, -9), 1: (-8, -2), 2: (-15, -1)}
    assert RootSolve(bounds).proofs() == {0: -1, 1: 0, 2: 0}


def test_the_workers_solves_merge_into_one() -> None:
    moves = tuple(range(3))
    a = RootSolve(dict.fromkeys(moves, (-100, 100)) | {0: (-18, -1)}, nodes=10)
    b = RootSolve(dict.fromkeys(moves, (-100, 100)) | {1: (0, 18)}, nodes=5)
    merged = merge_solves([a, b])
    assert merged is not None and merged.move is None and merged.nodes == 15
    assert merged.bounds == {0: (-18, -1), 1: (0, 18), 2: (-100, 100)}
    won = RootSolve(dict.fromkeys(moves, (-100, 100)) | {2: (3, 3)}, move=2, score=3, outcome=1)
    chosen = merge_solves([a, won])
    assert chosen is not None and (chosen.move, chosen.score, chosen.nodes) == (2, 3, 10)
    assert merge_solves([]) is None


def test_a_second_worker_solves_with_the_uncapped_round_rotated() -> None:
    state = Connect4State.from_notation("4455")
    straight = solve_root(state, time.perf_counter() + 60, solver=Solver())
    rotated = solve_root(state, time.perf_counter() + 60, solver=Solver(), rotate=1)
    assert straight.outcome == rotated.outcome and rotated.move is not None
    scores = analyse(state).scores
    assert scores[rotated.move] == max(scores.values())  # type: ignore[type-var]


def test_two_solving_workers_answer_in_time_after_a_proof() -> None:
    # 8 stones, both workers solve; no proof within 50 ms (millions of nodes).
    solved, hard = Connect4State.from_notation("4455"), Connect4State.from_notation("52112522")
    early = Connect4State.from_notation("44")
    with make_strategy_from_spec("solver:time_ms=50,workers=2,seed=1", "connect4") as pooled:
        for state in (solved, hard, solved, early, hard):
            start = time.perf_counter()
            move = pooled.choose_move(state)
            assert time.perf_counter() - start < 3.0  # 50 ms asked; generous, as above
            assert move in state.legal_moves()
        assert pooled.last_search is not None and pooled.last_search.moves  # MCTS decided
        assert pooled.choose_move(solved) in (2, 5)  # the proven wins, after the stopped ones
        tasks = pooled._task_args(early, Budget.UNLIMITED)
        assert [t[0] for t in tasks] == ["mcts", "mcts"]
        assert tasks[0][3] != tasks[1][3]  # two searches of one root need their own seeds


def test_a_searching_worker_still_settles_the_moves_that_need_no_search() -> None:
    hopeless = Connect4State.from_notation("44553")  # every move hands over a win
    solved, stats = solver_task("mcts", hopeless, 0.02, 1, 1.0)
    assert solved is not None and solved.outcome == -1 and solved.move is not None
    assert stats is None and solved.nodes == 0
    solved, stats = solver_task("mcts", Connect4State.from_notation("44"), 0.02, 1, 1.0)
    assert solved is not None and solved.move is None and solved.nodes == 0
    assert stats is not None and stats.simulations > 0


def test_the_workers_solve_only_where_a_proof_can_fit() -> None:
    early, middle, late = SEARCH_ONLY_BELOW - 1, SECOND_SOLVES_FROM - 1, SECOND_SOLVES_FROM
    assert worker_roles(early, 2) == ["mcts", "mcts"]
    assert worker_roles(middle, 2) == ["both", "mcts"]
    assert worker_roles(late, 2) == ["both", "second"]
    assert worker_roles(early, 1) == worker_roles(early, 0) == ["mcts"]
    assert worker_roles(middle, 1) == worker_roles(late, 0) == ["both"]
