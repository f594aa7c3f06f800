"""The Connect Four solver against a plain minimax, symmetry, published scores and bad input.

Test positions come from seeded uniformly random play (``_random_positions``)
and are solved by ``_minimax`` below: plain negamax over the protocol's own
rules (no pruning, no bitboard tricks), memoised per position, slow but
obviously right, so only endgames (28+ stones) are given to it. Two more
scores come from Pascal Pons' article "Part 2 - Benchmarking solvers"
(blog.gamesolver.org): "4455" scores 18 and "44455554221" scores -15.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from bots.kernels.c4solver import STOP, new_memory
from bots.strategies.solver import Solver, SolverError, analyse, solve, warm_up
from protocol.games import Connect4State, new_game

CELLS = 42


def _minimax(state: Connect4State, memo: dict[tuple[int, int], int]) -> int:
    """Pons' score of an unfinished position by full-width negamax."""
    found = memo.get(state.boards)
    if found is not None:
        return found
    best = -CELLS
    for move in state.legal_moves():
        best = max(best, _move_score(state, move, memo))
    memo[state.boards] = best
    return best


def _move_score(state: Connect4State, move: int, memo: dict[tuple[int, int], int]) -> int:
    child = state.play(move)
    outcome = child.outcome()
    if outcome is None:
        return -_minimax(child, memo)
    if outcome.winner is None:
        return 0
    stones = child.boards[0].bit_count() + child.boards[1].bit_count()
    return 22 - (stones + 1) // 2  # the winner's stone count is ceil(stones / 2)


def _random_positions(seed: int, count: int, low: int, high: int) -> list[Connect4State]:
    """Unfinished positions after ``low``..``high`` uniformly random moves."""
    rng = random.Random(seed)
    found: list[Connect4State] = []
    while len(found) < count:
        state = Connect4State.initial()
        target = rng.randint(low, high)
        while state.ply < target and state.outcome() is None:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome() is None:
            found.append(state)
    return found


def _mirror(state: Connect4State) -> Connect4State:
    return Connect4State.initial().play_all([6 - m for m in state.moves])


@pytest.fixture(scope="module")
def endgames() -> list[tuple[Connect4State, dict[int, int]]]:
    """Seeded endgames with the reference score of every legal move."""
    cases = []
    for state in _random_positions(seed=11, count=60, low=28, high=38):
        memo: dict[tuple[int, int], int] = {}
        cases.append((state, {m: _move_score(state, m, memo) for m in state.legal_moves()}))
    return cases


def test_scores_match_plain_minimax(endgames: list[tuple[Connect4State, dict[int, int]]]) -> None:
    values = set()
    for state, moves in endgames:
        expected = max(moves.values())
        values.add((expected > 0) - (expected < 0))
        result = solve(state)
        assert result.score == expected, state.moves
        assert result.low == result.high == expected
        assert analyse(state).scores == moves, state.moves
    assert values == {-1, 0, 1}  # the set covers wins, draws and losses


def test_weak_mode_gives_the_sign(endgames: list[tuple[Connect4State, dict[int, int]]]) -> None:
    for state, moves in endgames:
        expected = max(moves.values())
        assert solve(state, weak=True).score == (expected > 0) - (expected < 0)
        signs = {m: (s > 0) - (s < 0) for m, s in moves.items()}
        assert analyse(state, weak=True).scores == signs


def test_a_tiny_table_changes_the_work_not_the_scores(
    endgames: list[tuple[Connect4State, dict[int, int]]],
) -> None:
    tiny = Solver(table_bits=10)  # 1024 slots: constant replacement
    for state, moves in endgames[:30]:
        assert tiny.solve(state).score == max(moves.values())


def test_published_scores() -> None:
    assert solve("4455").score == 18
    assert solve("44455554221").score == -15
    assert solve(Connect4State.from_notation("112233")).score == 18  # x wins with its 4th stone


def test_mirror_positions_have_mirrored_scores() -> None:
    solver = Solver()
    for state in _random_positions(seed=5, count=12, low=14, high=22):
        a = solver.analyse(state)
        b = solver.analyse(_mirror(state))
        assert b.scores == {6 - m: s for m, s in a.scores.items()}
        assert solver.solve(state).score == solver.solve(_mirror(state)).score == a.value


def test_node_budgets_are_deterministic_and_bounded() -> None:
    solver = Solver()
    results = []
    for _ in range(2):
        solver.reset()
        results.append(solver.solve(Connect4State.initial(), max_nodes=50_000))
    first, second = results
    assert first.score is None and first.low < first.high
    assert (first.low, first.high, first.nodes) == (second.low, second.high, second.nodes)
    assert first.nodes < 50_000 + 4096  # the limit is looked at every 4096 nodes


def test_a_time_budget_returns_unknown_in_time() -> None:
    solve("4455")  # kernels loaded
    start = time.perf_counter()
    result = solve(Connect4State.initial(), time_ms=30)
    # Generous for a busy machine; a solve that ignored its 30 ms would run for minutes.
    assert time.perf_counter() - start < 3.0
    assert result.score is None and result.outcome is None
    analysis = analyse(Connect4State.initial(), time_ms=30)
    assert set(analysis.scores) == set(range(7)) and not analysis.complete
    assert analysis.value is None and analysis.best_moves() == []


def test_a_budgeted_analysis_keeps_what_it_proved() -> None:
    unknown = 0
    for state in _random_positions(seed=8, count=6, low=16, high=20):
        exact = analyse(state)
        partial = Solver().analyse(state, max_nodes=300)
        unknown += list(partial.scores.values()).count(None)
        for move, (low, high) in partial.bounds.items():
            assert low <= exact.scores[move] <= high  # type: ignore[operator]
            assert partial.scores[move] in (None, exact.scores[move])
        assert exact.value == max(exact.scores.values())  # type: ignore[type-var]
        assert exact.best_moves() == [m for m, s in exact.scores.items() if s == exact.value]
    assert unknown > 0  # the budget did cut some searches short


def test_analyse_runs_in_a_process_pool_with_a_budget_per_position() -> None:
    game = "".join(str(m + 1) for m in _random_positions(seed=2, count=1, low=24, high=24)[0].moves)
    prefixes = [game[:ply] for ply in (0, 12, 20, 24)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context, initializer=warm_up) as pool:
        results = list(pool.map(analyse, prefixes, [300] * len(prefixes)))
    assert not results[0].complete  # the empty board is far beyond 300 ms
    for prefix, result in zip(prefixes[2:], results[2:], strict=True):
        assert result.complete
        assert result.scores == analyse(prefix).scores


def test_time_budgets_hold_in_a_forked_child() -> None:
    warm_up()
    solve("", time_ms=20)  # this process's watchdog thread is running now
    with multiprocessing.get_context("fork").Pool(1) as pool:
        try:
            # Without a watchdog of its own the child would search the empty board for hours.
            result = pool.apply_async(solve, ("", 100)).get(timeout=30)
        finally:
            pool.terminate()
    assert result.score is None and result.nodes > 0


def test_bad_positions_are_refused_clearly() -> None:
    with pytest.raises(SolverError, match="game is over"):
        solve("1212121")  # x has four in column 1
    with pytest.raises(SolverError, match="not a legal Connect Four game"):
        solve("1111111")  # a seventh stone in column 1
    with pytest.raises(SolverError, match="not a legal Connect Four game"):
        solve("48")
    with pytest.raises(SolverError, match="Connect Four only"):
        analyse(new_game("tictactoe"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="time_ms"):
        solve("44", time_ms=0)


def test_solvers_sharing_a_memory_reuse_each_others_proofs() -> None:
    shared = new_memory(16, works=2)
    first = Solver(16, memory=shared)
    second = Solver(16, memory=shared)
    second.use_work(1)  # its own move lists and control words
    state = next(
        s
        for s in _random_positions(seed=8, count=20, low=16, high=20)
        if Solver().solve(s).nodes > 10_000
    )
    cold = first.solve(state)
    warm = second.solve(state)
    assert warm.score == cold.score
    assert warm.nodes < cold.nodes  # the proof is in the shared table already
    shared[second.work_offset(1) + STOP] = 1  # another party stops the second one's search
    second.reset()
    stopped = second.solve(state, max_nodes=10**9)
    assert stopped.score is None and stopped.nodes <= 4096
    assert first.solve(state).score == cold.score  # its own work array: not stopped
    with pytest.raises(ValueError, match="new_memory"):
        Solver(16, memory=np.zeros(1000, dtype=np.int64))
    with pytest.raises(ValueError, match="work array 2 of 2"):
        second.use_work(2)


def test_a_raised_abort_flag_stops_the_search() -> None:
    abort = np.zeros(1, dtype=np.int8)
    solver = Solver(abort=abort)
    abort[0] = 1
    assert solver.aborted
    result = solver.solve(Connect4State.initial(), max_nodes=1_000_000)
    assert result.score is None and result.nodes <= 4096  # stopped at its first look
    abort[0] = 0
    solver.reset()
    assert solver.solve("4455").score == 18
