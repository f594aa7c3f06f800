"""The compiled kernels agree with protocol.games on random positions."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bots.kernels import (
    KERNEL_GAMES,
    KERNELS,
    connect4,
    kernel_search,
    process_tree,
    tictactoe,
    to_kernel,
    tree,
    uttt,
)
from bots.kernels.rng import below, new_rng
from bots.strategies.evaluation import EVALUATIONS, evaluation_for
from bots.strategy import StrategyOptionError, make_strategy
from protocol.games import GAMES, GameState, TicTacToeState, new_game


def _expected_status(state: GameState) -> int:
    outcome = state.outcome()
    if outcome is None:
        return tree.ONGOING
    return tree.DRAW if outcome.winner is None else outcome.winner


def _check_same(game_id: int, st: np.ndarray, state: GameState) -> None:
    buf = np.empty(tree.MAX_MOVES, dtype=np.int64)
    status = tree.game_status(game_id, st)
    assert status == _expected_status(state)
    assert tree.game_to_move(game_id, st) == state.to_move
    if status == tree.ONGOING:
        n = tree.game_legal_moves(game_id, st, buf)
        assert sorted(buf[:n].tolist()) == state.legal_moves()
    if state.name.startswith("uttt"):
        if status == tree.ONGOING:
            assert st[uttt.FORCED] == state.forced  # type: ignore[attr-defined]
        assert st[uttt.CLOSED] == state.closed  # type: ignore[attr-defined]
        assert (st[uttt.WON0], st[uttt.WON1]) == state.won  # type: ignore[attr-defined]


@pytest.mark.parametrize("game", KERNEL_GAMES)
def test_kernel_rules_match_protocol_on_random_games(game: str) -> None:
    game_id, from_state = KERNELS[game].game_id, KERNELS[game].from_state
    rng = random.Random(f"kernel-{game}")
    positions = 0
    endings: set[int] = set()
    while positions < 4000:
        state = new_game(game)
        st = from_state(state)
        while True:
            _check_same(game_id, st, state)
            # The conversion of an arbitrary mid-game state agrees too.
            assert np.array_equal(from_state(state), st)
            positions += 1
            if state.outcome() is not None:
                endings.add(_expected_status(state))
                break
            move = rng.choice(state.legal_moves())
            status = tree.game_play(game_id, st, move)
            state = state.play(move)
            assert status == _expected_status(state)
    assert {0, 1} <= endings  # both players won some games


@pytest.mark.parametrize("game", KERNEL_GAMES)
@pytest.mark.parametrize("heavy", [False, True])
def test_kernel_playouts_end_in_a_legal_result(game: str, heavy: bool) -> None:
    game_id, from_state = KERNELS[game].game_id, KERNELS[game].from_state
    rng = new_rng(11)
    seen = set()
    for _ in range(300):
        st = from_state(new_game(game))
        result = tree.game_playout(game_id, heavy, st, rng)
        assert result in (0, 1, tree.DRAW)
        if game not in ("connect4", "othello"):  # these play out on local copies
            assert tree.game_status(game_id, st) == result
        seen.add(result)
    assert {0, 1} <= seen


@pytest.mark.parametrize("game", KERNEL_GAMES)
def test_kernel_playout_results_match_protocol_random_playouts(game: str) -> None:
    # Same distribution of results as the rules' own uniform playouts, from a midgame.
    game_id, from_state = KERNELS[game].game_id, KERNELS[game].from_state
    rng = random.Random(2)
    state = new_game(game)
    for _ in range(4):
        state = state.play(rng.choice(state.legal_moves()))
    n = 4000
    kernel_rng = new_rng(9)
    ours = [tree.game_playout(game_id, False, from_state(state), kernel_rng) for _ in range(n)]
    theirs = [_expected_status_of(state.random_playout(rng)) for _ in range(n)]
    for result in (0, 1, tree.DRAW):
        p_ours, p_theirs = ours.count(result) / n, theirs.count(result) / n
        # ~4.5 standard errors of a difference of two proportions at n=4000.
        assert abs(p_ours - p_theirs) < 0.05, (result, p_ours, p_theirs)


def _expected_status_of(outcome: object) -> int:
    winner = outcome.winner  # type: ignore[attr-defined]
    return tree.DRAW if winner is None else int(winner)


def test_connect4_random_playout_moves_are_uniform() -> None:
    # From the empty board the first column of a playout is uniform over 7.
    rng = new_rng(5)
    counts = np.zeros(7)
    for _ in range(7000):
        counts[below(rng, 7)] += 1
    assert counts.min() > 850 and counts.max() < 1150


def test_rng_is_seeded() -> None:
    a, b = new_rng(3), new_rng(3)
    assert [below(a, 100) for _ in range(5)] == [below(b, 100) for _ in range(5)]
    assert [below(new_rng(4), 1000) for _ in range(1)] != [below(new_rng(3), 1000)]


def test_connect4_winning_cells_finds_threats() -> None:
    state = new_game("connect4").play_all([0, 6, 1, 6, 2])  # x threatens column 3
    boards = state.boards  # type: ignore[attr-defined]
    mask = boards[0] | boards[1]
    assert connect4.winning_cells(boards[0], mask) == 1 << (7 * 3)


class _Unregistered(TicTacToeState):
    """Tic-tac-toe under a name no kernel or evaluation is registered for."""

    name = "no-such-game"
    __slots__ = ()


def test_kernel_and_evaluation_tables_name_registered_games_only() -> None:
    assert set(KERNELS) <= set(GAMES) and set(EVALUATIONS) <= set(GAMES)


def test_a_game_without_a_kernel_or_evaluation_raises() -> None:
    state = _Unregistered.initial()
    with pytest.raises(ValueError, match="no compiled kernel for 'no-such-game'"):
        to_kernel(state)
    with pytest.raises(ValueError, match="no compiled kernel"):
        kernel_search(state, 10, None, 1.4, seed=1)
    with pytest.raises(StrategyOptionError, match="no heuristic evaluation for 'no-such-game'"):
        evaluation_for(state.name)


@pytest.mark.parametrize("kind", ["greedy", "alphabeta"])
def test_heuristic_strategies_refuse_a_registered_game_without_an_evaluation(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(EVALUATIONS, "tictactoe")  # as a new game registered without one
    with pytest.raises(StrategyOptionError, match="no heuristic evaluation for 'tictactoe'"):
        make_strategy(kind, game="tictactoe")


def test_an_unknown_kernel_id_raises_in_compiled_code() -> None:
    """No dispatcher falls through to another game's rules."""
    unknown = 1 + max(kernel.game_id for kernel in KERNELS.values())
    st = tictactoe.from_state(new_game("tictactoe"))
    buf = np.empty(tree.MAX_MOVES, dtype=np.int64)
    rng = new_rng(1)
    calls = (
        lambda: tree.game_status(unknown, st),
        lambda: tree.game_to_move(unknown, st),
        lambda: tree.game_legal_moves(unknown, st, buf),
        lambda: tree.game_play(unknown, st.copy(), 4),
        lambda: tree.game_playout(unknown, False, st.copy(), rng),
        lambda: tree.game_playout(unknown, True, st.copy(), rng),
        lambda: tree.run(unknown, False, st, 10, 1.4, *process_tree(1000), rng),
    )
    for call in calls:
        with pytest.raises(ValueError, match="unknown kernel game"):
            call()
