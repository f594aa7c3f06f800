"""Tic-tac-toe rules on 9-bit masks for the compiled search.

Kernel state (int64 array of 4): ``[mask of player 0, mask of player 1,
player to move, stones]``; bit = cell, as in ``protocol.games.tictactoe``.
``LINE9`` and ``POP9`` are shared with the ultimate tic-tac-toe kernel.
"""

from __future__ import annotations

import numba
import numpy as np

from bots.kernels.rng import below
from protocol.games.base import GameState
from protocol.games.lines import LINE_MASKS

ONGOING = -1
DRAW = 2
STATE_SIZE = 4
TO_MOVE = 2
"""Index of the player to move in the kernel state."""
NUM_MOVES = 9
FULL9 = 0x1FF

LINE9 = np.array([any(m & mask == mask for mask in LINE_MASKS) for m in range(512)], dtype=np.bool_)
"""``LINE9[mask]``: the 9-bit mask holds three in a row."""
POP9 = np.array([m.bit_count() for m in range(512)], dtype=np.int64)
"""``POP9[mask]``: number of set bits."""


def from_state(state: GameState) -> np.ndarray:
    """The kernel state of a ``TicTacToeState``."""
    boards: tuple[int, int] = state.boards  # type: ignore[attr-defined]
    stones = boards[0].bit_count() + boards[1].bit_count()
    return np.array([boards[0], boards[1], state.to_move, stones], dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def nth_bit(mask: int, k: int) -> int:
    """Index of the ``k``-th (from 0) set bit of ``mask``."""
    i = 0
    while True:
        if mask & 1:
            if k == 0:
                return i
            k -= 1
        mask >>= 1
        i += 1


@numba.njit(cache=True, nogil=True)
def status(st: np.ndarray) -> int:
    """The status code of a kernel state."""
    if LINE9[st[0]]:
        return 0
    if LINE9[st[1]]:
        return 1
    if st[0] | st[1] == FULL9:
        return DRAW
    return ONGOING


@numba.njit(cache=True, nogil=True)
def legal_moves(st: np.ndarray, out: np.ndarray) -> int:
    """Write the empty cells into ``out``; return how many."""
    taken = st[0] | st[1]
    n = 0
    for c in range(9):
        if not (taken >> c) & 1:
            out[n] = c
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def play(st: np.ndarray, move: int) -> int:
    """Mark cell ``move`` (must be empty); return the new status."""
    p = st[TO_MOVE]
    bits = st[p] | (1 << move)
    st[p] = bits
    st[TO_MOVE] = 1 - p
    st[3] += 1
    if LINE9[bits]:
        return p
    if st[3] == 9:
        return DRAW
    return ONGOING


@numba.njit(cache=True, nogil=True)
def playout(st: np.ndarray, rng: np.ndarray) -> int:
    """Uniformly random moves to the end (mutates ``st``); return the final status."""
    while True:
        empty = FULL9 ^ (st[0] | st[1])
        cell = nth_bit(empty, below(rng, POP9[empty]))
        result = play(st, cell)
        if result != ONGOING:
            return result


@numba.njit(cache=True, nogil=True)
def winning_cells(bits: int, empty: int) -> int:
    """Empty cells that would complete a line for ``bits``."""
    wins = 0
    e = empty
    while e:
        low = e & -e
        if LINE9[bits | low]:
            wins |= low
        e ^= low
    return wins


@numba.njit(cache=True, nogil=True)
def playout_heavy(st: np.ndarray, rng: np.ndarray) -> int:
    """A playout by rules: win if possible, else block, else random."""
    while True:
        p = st[TO_MOVE]
        empty = FULL9 ^ (st[0] | st[1])
        choice = winning_cells(st[p], empty)
        if choice == 0:
            choice = winning_cells(st[1 - p], empty)
        if choice == 0:
            choice = empty
        cell = nth_bit(choice, below(rng, POP9[choice]))
        result = play(st, cell)
        if result != ONGOING:
            return result
