"""The position text the board games share: rows of cells, top first, then the side to move.

Tic-tac-toe, Connect Four and Othello write a position as ``"row/row/... x"``
(``.`` empty, ``x`` and ``o`` the players' stones); Ultimate Tic-Tac-Toe
writes its nine local boards the same way before its own fields. Each game's
``decode`` parses that part here, so a malformed text is refused with the
same words in every game, and then checks what only its rules know.
"""

from __future__ import annotations

from protocol.errors import PositionDecodeError
from protocol.games.base import PLAYER_SYMBOLS

_GRID_CHARACTERS = frozenset(("/", ".", *PLAYER_SYMBOLS))


def require_text(game: str, text: object) -> str:
    """``text`` when it is a string; ``PositionDecodeError`` naming ``game`` otherwise."""
    if not isinstance(text, str):
        raise PositionDecodeError(f"{game}: a position must be a string")
    return text


def side_to_move(game: str, side: str) -> int:
    """The player (0 for ``x``, 1 for ``o``) that ``side`` names."""
    if side not in PLAYER_SYMBOLS:
        raise PositionDecodeError(f"{game}: side to move must be 'x' or 'o', got {side!r}")
    return PLAYER_SYMBOLS.index(side)


def cell_bits(game: str, cells: str) -> list[int]:
    """Both players' stones in ``cells`` as bitboards (bit ``i``: the ``i``-th cell)."""
    boards = [0, 0]
    for index, char in enumerate(cells):
        if char == ".":
            continue
        if char not in PLAYER_SYMBOLS:
            raise PositionDecodeError(f"{game}: unknown cell {char!r}")
        boards[PLAYER_SYMBOLS.index(char)] |= 1 << index
    return boards


def split_grid(game: str, text: object, rows: int, columns: int) -> tuple[list[str], int]:
    """The rows (top first) of a ``"row/row/... side"`` text and the player to move.

    Checks the shape and the side; every cell of the rows is ``.``, ``x`` or ``o``.
    """
    board_text, _, side = require_text(game, text).partition(" ")
    grid = board_text.split("/")
    if len(grid) != rows or any(len(row) != columns for row in grid):
        raise PositionDecodeError(
            f"{game}: expected {rows} rows of {columns} cells separated by '/', got {text!r}"
        )
    to_move = side_to_move(game, side)
    for char in board_text:
        if char not in _GRID_CHARACTERS:
            raise PositionDecodeError(f"{game}: unknown cell {char!r}")
    return grid, to_move
