"""Every game refuses a malformed position text in the same words (games.position_text)."""

from __future__ import annotations

import pytest

from protocol.errors import PositionDecodeError
from protocol.games import get_game_class as game_class

GRID_GAMES = {"tictactoe": (3, 3), "connect4": (6, 7), "othello": (8, 8)}


def _empty(rows: int, columns: int) -> str:
    return "/".join("." * columns for _ in range(rows))


@pytest.mark.parametrize("game", [*GRID_GAMES, "uttt"])
def test_a_position_that_is_not_text_is_refused(game: str) -> None:
    with pytest.raises(PositionDecodeError, match=f"^{game}: a position must be a string$"):
        game_class(game).decode(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("game", GRID_GAMES)
def test_a_grid_of_the_wrong_shape_is_refused(game: str) -> None:
    rows, columns = GRID_GAMES[game]
    text = _empty(rows - 1, columns) + " x"
    with pytest.raises(PositionDecodeError, match=f"^{game}: expected {rows} rows of {columns}"):
        game_class(game).decode(text)


@pytest.mark.parametrize("game", GRID_GAMES)
def test_an_unknown_side_or_cell_is_refused(game: str) -> None:
    initial = game_class(game).initial().encode()
    board, _, _ = initial.partition(" ")
    with pytest.raises(PositionDecodeError, match=f"^{game}: side to move must be 'x' or 'o'"):
        game_class(game).decode(board + " z")
    with pytest.raises(PositionDecodeError, match=f"^{game}: unknown cell '#'"):
        game_class(game).decode("#" + board[1:] + " x")
    assert game_class(game).decode(initial).encode() == initial


def test_uttt_refuses_an_unknown_side_or_cell_in_the_same_words() -> None:
    board, side, forced = game_class("uttt").initial().encode().split(" ")
    with pytest.raises(PositionDecodeError, match=r"^uttt: side to move must be 'x' or 'o'"):
        game_class("uttt").decode(f"{board} z {forced}")
    with pytest.raises(PositionDecodeError, match=r"^uttt: unknown cell '#'"):
        game_class("uttt").decode(f"#{board[1:]} {side} {forced}")
