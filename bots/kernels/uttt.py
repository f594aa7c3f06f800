"""Ultimate tic-tac-toe rules (both variants) on 9-bit masks for the compiled search.

Kernel state (int64 array of 24)::

    [0:9]   stones of player 0 per local board (9-bit masks)
    [9:18]  stones of player 1 per local board
    18, 19  local boards won by player 0 / player 1 (9-bit masks)
    20      closed local boards (won or full)
    21      forced local board, or -1 when the mover may choose
    22      player to move
    23      1 for ``uttt-quick`` (first local board won wins the game)
"""

from __future__ import annotations

import numba
import numpy as np

from bots.kernels.rng import below
from bots.kernels.tictactoe import FULL9, LINE9, POP9, nth_bit, winning_cells
from protocol.games.base import GameState

ONGOING = -1
DRAW = 2
STATE_SIZE = 24
NUM_MOVES = 81
WON0 = 18
WON1 = 19
CLOSED = 20
FORCED = 21
TO_MOVE = 22
QUICK = 23


def from_state(state: GameState) -> np.ndarray:
    """The kernel state of an ``UltimateTicTacToeState`` (either variant)."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    bits: tuple[int, int] = state.bits  # type: ignore[attr-defined]
    for b in range(9):
        st[b] = (bits[0] >> (9 * b)) & FULL9
        st[9 + b] = (bits[1] >> (9 * b)) & FULL9
    won: tuple[int, int] = state.won  # type: ignore[attr-defined]
    st[WON0], st[WON1] = won
    st[CLOSED] = state.closed  # type: ignore[attr-defined]
    st[FORCED] = state.forced  # type: ignore[attr-defined]
    st[TO_MOVE] = state.to_move
    st[QUICK] = 1 if state.quick else 0  # type: ignore[attr-defined]
    return st


@numba.njit(cache=True, nogil=True)
def status(st: np.ndarray) -> int:
    """The status code of a kernel state."""
    quick = st[QUICK] != 0
    for p in range(2):
        won = st[WON0 + p]
        if LINE9[won] or (quick and won != 0):
            return p
    if st[CLOSED] == FULL9:
        return DRAW
    return ONGOING


@numba.njit(cache=True, nogil=True)
def legal_moves(st: np.ndarray, out: np.ndarray) -> int:
    """Write the legal moves (ascending) into ``out``; return how many."""
    n = 0
    forced = st[FORCED]
    lo = 0 if forced < 0 else forced
    hi = 9 if forced < 0 else forced + 1
    closed = st[CLOSED]
    for b in range(lo, hi):
        if (closed >> b) & 1:
            continue
        empty = FULL9 ^ (st[b] | st[9 + b])
        for c in range(9):
            if (empty >> c) & 1:
                out[n] = 9 * b + c
                n += 1
    return n


@numba.njit(cache=True, nogil=True)
def play(st: np.ndarray, move: int) -> int:
    """Apply a legal move; return the new status."""
    p = st[TO_MOVE]
    board = move // 9
    cell = move - 9 * board
    local = st[9 * p + board] | (1 << cell)
    st[9 * p + board] = local
    st[TO_MOVE] = 1 - p
    result = ONGOING
    if LINE9[local]:
        won = st[WON0 + p] | (1 << board)
        st[WON0 + p] = won
        st[CLOSED] |= 1 << board
        if st[QUICK] != 0 or LINE9[won]:
            result = p
    elif (local | st[9 * (1 - p) + board]) == FULL9:
        st[CLOSED] |= 1 << board
    if result == ONGOING and st[CLOSED] == FULL9:
        result = DRAW
    if result != ONGOING or (st[CLOSED] >> cell) & 1:
        st[FORCED] = -1
    else:
        st[FORCED] = cell
    return result


@numba.njit(cache=True, nogil=True)
def _random_move(st: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random legal move without listing them all."""
    forced = st[FORCED]
    if forced >= 0:
        empty = FULL9 ^ (st[forced] | st[9 + forced])
        return 9 * forced + nth_bit(empty, below(rng, POP9[empty]))
    closed = st[CLOSED]
    total = 0
    for b in range(9):
        if not (closed >> b) & 1:
            total += POP9[FULL9 ^ (st[b] | st[9 + b])]
    k = below(rng, total)
    for b in range(9):
        if not (closed >> b) & 1:
            empty = FULL9 ^ (st[b] | st[9 + b])
            n = POP9[empty]
            if k < n:
                return 9 * b + nth_bit(empty, k)
            k -= n
    return -1  # unreachable while the game is on


@numba.njit(cache=True, nogil=True)
def playout(st: np.ndarray, rng: np.ndarray) -> int:
    """Uniformly random moves to the end (mutates ``st``); return the final status."""
    while True:
        result = play(st, _random_move(st, rng))
        if result != ONGOING:
            return result


@numba.njit(cache=True, nogil=True)
def playout_heavy(st: np.ndarray, rng: np.ndarray) -> int:
    """A playout by rules: win a local board when the forced board allows it,
    else block the opponent's local win there, else random."""
    while True:
        p = st[TO_MOVE]
        forced = st[FORCED]
        move = -1
        if forced >= 0:
            empty = FULL9 ^ (st[forced] | st[9 + forced])
            choice = winning_cells(st[9 * p + forced], empty)
            if choice == 0:
                choice = winning_cells(st[9 * (1 - p) + forced], empty)
            if choice != 0:
                move = 9 * forced + nth_bit(choice, below(rng, POP9[choice]))
        if move < 0:
            move = _random_move(st, rng)
        result = play(st, move)
        if result != ONGOING:
            return result
