"""Connect Four rules on int64 bitboards for the compiled search.

Kernel state (int64 array of 4): ``[bits of player 0, bits of player 1,
player to move, stones on the board]``, with the bit layout of
``protocol.games.connect4`` (bit ``7 * column + row``, a sentinel bit on top of
each column), so conversion is a copy.

Status codes shared by every kernel: ``ONGOING`` (-1), the winner (0 or 1),
``DRAW`` (2).
"""

from __future__ import annotations

import numba
import numpy as np

from bots.kernels.rng import below
from protocol.games.base import GameState

ONGOING = -1
DRAW = 2
STATE_SIZE = 4
TO_MOVE = 2
"""Index of the player to move in the kernel state."""
NUM_MOVES = 7
CELLS = 42

_BOTTOM = np.array([1 << (7 * c) for c in range(7)], dtype=np.int64)
_COLUMN = np.array([0x3F << (7 * c) for c in range(7)], dtype=np.int64)
_TOP = np.array([1 << (7 * c + 5) for c in range(7)], dtype=np.int64)
_BOARD = 0
for _c in range(7):
    _BOARD |= 0x3F << (7 * _c)
BOARD_MASK = _BOARD
"""Every playable cell (no sentinel bits)."""
BOTTOM_ROW = sum(1 << (7 * c) for c in range(7))

# Cell weights (number of four-lines through each cell), in bit layout.
_CELL_ROWS = (
    (3, 4, 5, 7, 5, 4, 3),
    (4, 6, 8, 10, 8, 6, 4),
    (5, 8, 11, 13, 11, 8, 5),
)
CELL_WEIGHT = np.zeros(49, dtype=np.int64)
for _c in range(7):
    for _r in range(6):
        CELL_WEIGHT[7 * _c + _r] = _CELL_ROWS[min(_r, 5 - _r)][_c]


def from_state(state: GameState) -> np.ndarray:
    """The kernel state of a ``Connect4State``."""
    boards: tuple[int, int] = state.boards  # type: ignore[attr-defined]
    stones = boards[0].bit_count() + boards[1].bit_count()
    return np.array([boards[0], boards[1], state.to_move, stones], dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def has_four(bits: int) -> bool:
    """Four in a row anywhere in ``bits``."""
    m = bits & (bits >> 7)
    if m & (m >> 14):
        return True
    m = bits & (bits >> 6)
    if m & (m >> 12):
        return True
    m = bits & (bits >> 8)
    if m & (m >> 16):
        return True
    m = bits & (bits >> 1)
    return (m & (m >> 2)) != 0


@numba.njit(cache=True, nogil=True)
def winning_cells(bits: int, mask: int) -> int:
    """Empty cells (possibly unreachable yet) that would complete four for ``bits``."""
    # Vertical: three stacked stones, the cell above.
    r = (bits << 1) & (bits << 2) & (bits << 3)
    for shift in (7, 6, 8):
        p = (bits << shift) & (bits << (2 * shift))
        r |= p & (bits << (3 * shift))
        r |= p & (bits >> shift)
        p = (bits >> shift) & (bits >> (2 * shift))
        r |= p & (bits >> (3 * shift))
        r |= p & (bits << shift)
    return r & (BOARD_MASK ^ mask)


@numba.njit(cache=True, nogil=True)
def status(st: np.ndarray) -> int:
    """The status code of a kernel state."""
    if has_four(st[0]):
        return 0
    if has_four(st[1]):
        return 1
    if st[3] == CELLS:
        return DRAW
    return ONGOING


@numba.njit(cache=True, nogil=True)
def legal_moves(st: np.ndarray, out: np.ndarray) -> int:
    """Write the open columns into ``out``; return how many."""
    mask = st[0] | st[1]
    n = 0
    for c in range(7):
        if mask & _TOP[c] == 0:
            out[n] = c
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def play(st: np.ndarray, move: int) -> int:
    """Drop a stone in column ``move`` (must be open); return the new status."""
    p = st[TO_MOVE]
    mask = st[0] | st[1]
    bits = st[p] | ((mask + _BOTTOM[move]) & _COLUMN[move])
    st[p] = bits
    st[TO_MOVE] = 1 - p
    st[3] += 1
    if has_four(bits):
        return p
    if st[3] == CELLS:
        return DRAW
    return ONGOING


@numba.njit(cache=True, nogil=True)
def playout(st: np.ndarray, rng: np.ndarray) -> int:
    """Uniformly random moves to the end on local copies (``st`` is left as it was);
    return the final status."""
    p = st[TO_MOVE]
    mine = st[p]
    theirs = st[1 - p]
    stones = st[3]
    while True:
        mask = mine | theirs
        c = below(rng, 7)
        while mask & _TOP[c]:
            c = below(rng, 7)
        mine |= (mask + _BOTTOM[c]) & _COLUMN[c]
        stones += 1
        if has_four(mine):
            return p
        if stones == CELLS:
            return DRAW
        mine, theirs = theirs, mine
        p = 1 - p


@numba.njit(cache=True, nogil=True)
def playout_heavy(st: np.ndarray, rng: np.ndarray) -> int:
    """A playout by rules (``st`` is left as it was): win if possible, else block,
    else avoid cells under an opponent threat, else a random move weighted by cell value."""
    p = st[TO_MOVE]
    mine = st[p]
    theirs = st[1 - p]
    stones = st[3]
    weights = np.zeros(7, dtype=np.int64)
    while True:
        mask = mine | theirs
        playable = (mask + BOTTOM_ROW) & BOARD_MASK
        wins = winning_cells(mine, mask) & playable
        move_bit = 0
        if wins:
            move_bit = wins & -wins
        else:
            threats = winning_cells(theirs, mask)
            blocks = threats & playable
            if blocks:
                move_bit = blocks & -blocks
            else:
                # Cells directly under an opponent threat would hand it the win.
                safe = playable & ~(threats >> 1)
                if safe == 0:
                    safe = playable
                total = 0
                for c in range(7):
                    b = safe & _COLUMN[c]
                    w = 0
                    if b:
                        w = CELL_WEIGHT[_trailing(b)]
                    weights[c] = w
                    total += w
                r = below(rng, total)
                for c in range(7):
                    if r < weights[c]:
                        move_bit = safe & _COLUMN[c]
                        break
                    r -= weights[c]
        mine |= move_bit
        stones += 1
        if has_four(mine):
            return p
        if stones == CELLS:
            return DRAW
        mine, theirs = theirs, mine
        p = 1 - p


@numba.njit(cache=True, nogil=True)
def _trailing(b: int) -> int:
    """Index of the lowest set bit of a non-zero ``b``."""
    n = 0
    while (b & 1) == 0:
        b >>= 1
        n += 1
    return n
