"""The eight three-in-a-row lines of a 3x3 grid, shared by tic-tac-toe and ultimate tic-tac-toe."""

from __future__ import annotations

from collections.abc import Callable

from protocol.games.spec import Symmetry, identity

LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)
"""Cell indices (row-major 0-8) of every line."""

LINE_MASKS: tuple[int, ...] = tuple((1 << a) | (1 << b) | (1 << c) for a, b, c in LINES)
"""Each line as a 9-bit mask (bit = cell index)."""

MASKS_THROUGH: tuple[tuple[int, ...], ...] = tuple(
    tuple(mask for mask in LINE_MASKS if mask >> cell & 1) for cell in range(9)
)
"""For each cell, the masks of the lines passing through it (2 to 4 of them)."""

FULL = 0x1FF
"""All nine cells."""


def has_line(bits: int) -> bool:
    """True when the 9-bit mask ``bits`` contains a complete line."""
    return any(bits & mask == mask for mask in LINE_MASKS)


def completes_line(bits: int, cell: int) -> bool:
    """True when ``bits`` has a line through ``cell``: the cheap test right after a move there."""
    return any(bits & mask == mask for mask in MASKS_THROUGH[cell])


# The square's seven other symmetries, as maps of (row, column) in a 3x3 grid.
_SQUARE_TRANSFORMS: tuple[Callable[[int, int], tuple[int, int]], ...] = (
    lambda r, c: (c, 2 - r),
    lambda r, c: (2 - r, 2 - c),
    lambda r, c: (2 - c, r),
    lambda r, c: (r, 2 - c),
    lambda r, c: (2 - r, c),
    lambda r, c: (c, r),
    lambda r, c: (2 - c, 2 - r),
)


def _cell_map(transform: Callable[[int, int], tuple[int, int]]) -> Symmetry:
    def apply(cell: int) -> int:
        row, col = transform(*divmod(cell, 3))
        return 3 * row + col

    return apply


SQUARE_SYMMETRIES: tuple[Symmetry, ...] = (identity, *map(_cell_map, _SQUARE_TRANSFORMS))
"""The eight symmetries of the square (rotations and reflections) as maps on cells 0-8."""
