"""Our rules against a reference nobody here wrote: OpenSpiel's C++ games.

For each game, thousands of seeded random games are played through both
implementations at once; at every ply the legal moves and the player to move
must agree, and at the end so must the result.

OpenSpiel's ultimate tic-tac-toe splits a free choice into two actions by the
same player (first the local board, then the cell); it is mapped onto our
single ``9 * board + cell`` move.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from protocol.games import GameState, new_game

pyspiel = pytest.importorskip("pyspiel")

GAMES_PER_RULESET = 2000

REFERENCE = {
    "connect4": "connect_four",
    "tictactoe": "tic_tac_toe",
    "uttt": "ultimate_tic_tac_toe",
}


def reference_legal_moves(name: str, ref: Any) -> list[int]:
    """The reference's legal moves in our numbering."""
    if name != "uttt":
        return sorted(ref.legal_actions())
    if not _choosing_board(ref):
        board = _forced_board(ref)
        return sorted(9 * board + cell for cell in ref.legal_actions())
    moves = []
    for board in ref.legal_actions():
        child = ref.clone()
        child.apply_action(board)
        moves.extend(9 * board + cell for cell in child.legal_actions())
    return sorted(moves)


def _forced_board(ref: Any) -> int:
    for line in str(ref).splitlines():
        if line.startswith("Forced board:"):
            return int(line.split(":")[1])
    raise AssertionError("reference state shows no forced board")


def _choosing_board(ref: Any) -> bool:
    # OpenSpiel prints "Forced board: any" while the side to move picks a local board.
    return str(ref).rstrip().endswith("Forced board: any")


def reference_apply(name: str, ref: Any, move: int) -> None:
    """Apply our move to the reference state, as one or two actions."""
    if name == "uttt":
        board, cell = divmod(move, 9)
        if _choosing_board(ref):
            ref.apply_action(board)
        ref.apply_action(cell)
    else:
        ref.apply_action(move)


def reference_winner(ref: Any) -> int | None:
    returns = ref.returns()
    if returns[0] > 0:
        return 0
    if returns[1] > 0:
        return 1
    return None


def play_both(name: str, seed: int, game: Any) -> GameState:
    rng = random.Random(seed)
    ours = new_game(name)
    ref = game.new_initial_state()
    while not ours.is_over():
        assert not ref.is_terminal(), f"seed {seed}: reference ended first at ply {ours.ply}"
        assert ours.to_move == ref.current_player(), f"seed {seed} ply {ours.ply}"
        legal = ours.legal_moves()
        assert legal == reference_legal_moves(name, ref), f"seed {seed} ply {ours.ply}"
        move = legal[rng.randrange(len(legal))]
        ours = ours.play(move)
        reference_apply(name, ref, move)
    assert ref.is_terminal(), f"seed {seed}: we ended at ply {ours.ply}, the reference did not"
    outcome = ours.outcome()
    assert outcome is not None
    assert outcome.winner == reference_winner(ref), f"seed {seed}"
    assert ours.legal_moves() == []
    return ours


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_random_games_agree_with_openspiel(name: str) -> None:
    game = pyspiel.load_game(REFERENCE[name])
    results: dict[int | None, int] = {0: 0, 1: 0, None: 0}
    for seed in range(GAMES_PER_RULESET):
        final = play_both(name, seed, game)
        outcome = final.outcome()
        assert outcome is not None
        results[outcome.winner] += 1
    # The comparison must have exercised wins for both sides (and, but for
    # connect4 whose random draws are rare, draws too).
    assert results[0] > 0 and results[1] > 0
    if name != "connect4":
        assert results[None] > 0


def test_uttt_comparison_covers_freed_choices() -> None:
    """The random uttt games must include many plies where a closed target freed the choice."""
    game = pyspiel.load_game("ultimate_tic_tac_toe")
    freed = 0
    for seed in range(200):
        rng = random.Random(seed)
        ours = new_game("uttt")
        ref = game.new_initial_state()
        while not ours.is_over():
            if ours.ply > 0 and _choosing_board(ref):
                freed += 1
                assert ours.legal_moves() == reference_legal_moves("uttt", ref)
            move = rng.choice(ours.legal_moves())
            ours = ours.play(move)
            reference_apply("uttt", ref, move)
    assert freed > 200
