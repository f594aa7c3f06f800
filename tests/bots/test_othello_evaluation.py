"""Othello's evaluation: stable discs really stay, and the heuristic bots use it to win."""

from __future__ import annotations

import random

from bots.match import play_match
from bots.strategies.evaluation import evaluation_for
from bots.strategies.evaluation_othello import SQUARE_VALUES, stable_discs
from bots.strategies.heuristic import AlphaBetaSearch
from protocol.games import OthelloState, decode_state, new_game


def test_stable_discs_are_never_turned() -> None:
    rng = random.Random(5)
    found = 0
    for _ in range(150):
        state = new_game("othello")
        claims: list[tuple[int, int]] = []  # (player, discs claimed stable)
        while not state.is_over():
            assert isinstance(state, OthelloState)
            for player in (0, 1):
                stable = stable_discs(state.boards[player])
                claims.append((player, stable))
                found += stable.bit_count()
            state = state.play(rng.choice(state.legal_moves()))
        assert isinstance(state, OthelloState)
        for player, stable in claims:
            assert stable & state.boards[player] == stable
    assert found > 1000  # the claims were not all empty


def test_a_lone_corner_is_stable_and_its_edge_grows() -> None:
    state = decode_state(
        "othello", "xxo...../x......./......../...ox.../...xo.../......../......../........ o"
    )
    assert isinstance(state, OthelloState)
    # a1, b1, a2 hang on the corner; c1 is white's and the centre discs can still turn.
    assert stable_discs(state.boards[0]) == (1 << 0) | (1 << 1) | (1 << 8)
    assert stable_discs(state.boards[1]) == 0


def test_corners_weigh_most_in_the_evaluation_and_order() -> None:
    evaluation = evaluation_for("othello")
    base = "x......./......../......../...ox.../...xo.../......../......../........"
    with_corner = decode_state("othello", base + " x")
    without = decode_state("othello", "." + base[1:] + " x")
    assert evaluation.evaluate(with_corner) > evaluation.evaluate(without) + 20
    assert evaluation.order(new_game("othello"), [9, 0, 20])[0] == 0
    assert SQUARE_VALUES[63] == max(SQUARE_VALUES)


def test_alphabeta_sees_a_last_move_that_loses_on_discs() -> None:
    # Black's only move fills the board and leaves white, then to move, the winner.
    state = decode_state("othello", ".oxooooo/" + "/".join(["oooooooo"] * 7) + " x")
    assert state.legal_moves() == [0]
    final = state.play(0)
    assert final.outcome() is not None and final.outcome().winner == final.to_move == 1  # type: ignore[union-attr]
    move, score, _, _ = AlphaBetaSearch(evaluation_for("othello")).search(state, None, 3)
    assert move == 0 and score < -1000


def test_greedy_and_alphabeta_beat_random() -> None:
    for spec in ("greedy:seed=1", "alphabeta:depth=2"):
        result = play_match("othello", [spec, "random:seed=2"], games=6, seed=3)
        assert result.wins(0) >= 5, (spec, result.wins(0), result.draws())
