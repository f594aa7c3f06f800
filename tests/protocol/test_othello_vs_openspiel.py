"""Othello against OpenSpiel's C++ ``othello``: same moves, boards and results on random games.

At every ply of seeded random games: the side to move, the legal moves (our
move numbers are OpenSpiel's action ids, the pass included), the move names
and the board must agree; at the end, the winner. The random games must have
gone through passes and through every kind of ending for the test to count.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_rules_vs_openspiel import reference_winner

from protocol.errors import IllegalMoveError, PositionDecodeError
from protocol.games import OthelloState, Termination, decode_state, new_game
from protocol.games.othello import PASS

pyspiel = pytest.importorskip("pyspiel")

GAMES = 600


def reference_board(ref: Any) -> str:
    """OpenSpiel's printed board as our ``encode`` board text (``-`` is an empty cell)."""
    rows = str(ref).splitlines()[2:10]
    return "/".join("".join(row.split()[1:9]).replace("-", ".") for row in rows)


def play_both(seed: int, game: Any) -> tuple[OthelloState, int]:
    """Play one random game through both; return our final state and how many passes it had."""
    rng = random.Random(seed)
    ours = new_game("othello")
    assert isinstance(ours, OthelloState)
    ref = game.new_initial_state()
    passes = 0
    while True:
        where = f"seed {seed} ply {ours.ply}"
        assert ours.encode().split()[0] == reference_board(ref), where
        if ours.is_over():
            break
        assert not ref.is_terminal(), f"{where}: the reference ended first"
        assert ours.to_move == ref.current_player(), where
        legal = ours.legal_moves()
        assert legal == sorted(ref.legal_actions()), where
        move = legal[rng.randrange(len(legal))]
        assert OthelloState.move_name(move) == ref.action_to_string(ref.current_player(), move)
        passes += move == PASS
        ours = ours.play(move)
        ref.apply_action(move)
        # Every position survives its own text.
        again = decode_state("othello", ours.encode())
        assert again.boards == ours.boards and again.outcome() == ours.outcome(), where
    assert ref.is_terminal(), f"seed {seed}: we ended at ply {ours.ply}, the reference did not"
    outcome = ours.outcome()
    assert outcome is not None and ours.legal_moves() == []
    assert outcome.winner == reference_winner(ref), f"seed {seed}"
    return ours, passes


def test_random_games_agree_with_openspiel() -> None:
    game = pyspiel.load_game("othello")
    winners: dict[int | None, int] = {0: 0, 1: 0, None: 0}
    passes = 0
    unfilled = 0
    for seed in range(GAMES):
        final, game_passes = play_both(seed, game)
        outcome = final.outcome()
        assert outcome is not None
        winners[outcome.winner] += 1
        passes += game_passes
        unfilled += (final.boards[0] | final.boards[1]).bit_count() < 64
    assert winners[0] > 0 and winners[1] > 0 and winners[None] > 0, winners
    # Passes and games that end with empty cells (nobody can move) were exercised.
    assert passes > 20 and unfilled > 5, (passes, unfilled)


def test_start_and_move_errors() -> None:
    start = new_game("othello")
    assert start.encode() == (
        "......../......../......../...ox.../...xo.../......../......../........ x"
    )
    assert start.legal_moves() == [19, 26, 37, 44]
    with pytest.raises(IllegalMoveError, match="turn no opponent disc"):
        start.play(0)
    with pytest.raises(IllegalMoveError, match="taken"):
        start.play(27)
    with pytest.raises(IllegalMoveError, match="pass"):
        start.play(PASS)


def test_a_wiped_out_side_ends_the_game() -> None:
    # Black takes white's last disc: neither side can move, black wins on discs.
    state = decode_state(
        "othello", "......../......../......../...xx.../...xo.../......../......../........ x"
    )
    assert state.legal_moves() == [37, 44, 45]
    final = state.play(45)
    assert final.outcome() is not None and final.outcome().winner == 0  # type: ignore[union-attr]
    assert final.outcome().termination is Termination.LINE  # type: ignore[union-attr]


def test_decode_rejects_impossible_positions() -> None:
    with pytest.raises(PositionDecodeError, match="centre"):
        decode_state("othello", "/".join(["........"] * 8) + " x")
    with pytest.raises(PositionDecodeError, match="rows"):
        decode_state("othello", "........ x")
    with pytest.raises(PositionDecodeError, match="side"):
        decode_state("othello", new_game("othello").encode()[:-1] + "z")
