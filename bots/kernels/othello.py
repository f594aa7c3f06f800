"""Othello rules on uint64 bitboards for the compiled search.

Kernel state (int64 array of 3): ``[black's discs, white's discs, player to
move]``, the discs with bit ``i`` = cell ``i`` as in ``protocol.games.othello``
(the int64 slots hold the uint64 bit patterns; the kernels reinterpret them).
Move 64 is the pass. Status codes are those of every kernel: ``ONGOING`` (-1),
the winner (0 or 1), ``DRAW`` (2).
"""

from __future__ import annotations

import numba
import numpy as np

from bots.kernels.rng import below
from protocol.games.base import GameState

ONGOING = -1
DRAW = 2
STATE_SIZE = 3
TO_MOVE = 2
"""The kernel state's slot of the player to move."""
PASS = 64

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_FULL = np.uint64(0xFFFFFFFFFFFFFFFF)
_NOT_A = np.uint64(0xFEFEFEFEFEFEFEFE)  # every cell but column a
_NOT_H = np.uint64(0x7F7F7F7F7F7F7F7F)  # every cell but column h
_S1 = np.uint64(1)
_S7 = np.uint64(7)
_S8 = np.uint64(8)
_S9 = np.uint64(9)
CORNERS = np.uint64((1 << 0) | (1 << 7) | (1 << 56) | (1 << 63))
# The cells next to a corner (X- and C-squares): taking one while its corner is
# empty usually hands the corner over.
_NEAR_CORNER = (
    (np.uint64(1 << 0), np.uint64((1 << 1) | (1 << 8) | (1 << 9))),
    (np.uint64(1 << 7), np.uint64((1 << 6) | (1 << 15) | (1 << 14))),
    (np.uint64(1 << 56), np.uint64((1 << 57) | (1 << 48) | (1 << 49))),
    (np.uint64(1 << 63), np.uint64((1 << 62) | (1 << 55) | (1 << 54))),
)


def from_state(state: GameState) -> np.ndarray:
    """The kernel state of an ``OthelloState``."""
    boards: tuple[int, int] = state.boards  # type: ignore[attr-defined]
    discs = np.array(boards, dtype=np.uint64).view(np.int64)
    return np.array([discs[0], discs[1], state.to_move], dtype=np.int64)


@numba.njit(cache=True, nogil=True, inline="always")
def _spread(me: np.uint64, opp: np.uint64, mask: np.uint64, shift: np.uint64) -> np.uint64:
    """Runs of ``opp`` discs adjacent to ``me`` along one left-shift direction."""
    o = opp & mask
    x = (me << shift) & o
    x |= (x << shift) & o
    x |= (x << shift) & o
    x |= (x << shift) & o
    x |= (x << shift) & o
    x |= (x << shift) & o
    return x


@numba.njit(cache=True, nogil=True, inline="always")
def _spread_r(me: np.uint64, opp: np.uint64, mask: np.uint64, shift: np.uint64) -> np.uint64:
    """As ``_spread`` along the opposite (right-shift) direction."""
    o = opp & mask
    x = (me >> shift) & o
    x |= (x >> shift) & o
    x |= (x >> shift) & o
    x |= (x >> shift) & o
    x |= (x >> shift) & o
    x |= (x >> shift) & o
    return x


@numba.njit(cache=True, nogil=True)
def placements(me: np.uint64, opp: np.uint64) -> np.uint64:
    """The cells where the owner of ``me`` may place a disc."""
    empty = ~(me | opp)
    m = (_spread(me, opp, _NOT_A, _S1) << _S1) & _NOT_A
    m |= (_spread_r(me, opp, _NOT_H, _S1) >> _S1) & _NOT_H
    m |= _spread(me, opp, _FULL, _S8) << _S8
    m |= _spread_r(me, opp, _FULL, _S8) >> _S8
    m |= (_spread(me, opp, _NOT_A, _S9) << _S9) & _NOT_A
    m |= (_spread_r(me, opp, _NOT_H, _S9) >> _S9) & _NOT_H
    m |= (_spread(me, opp, _NOT_H, _S7) << _S7) & _NOT_H
    m |= (_spread_r(me, opp, _NOT_A, _S7) >> _S7) & _NOT_A
    return m & empty


@numba.njit(cache=True, nogil=True)
def flips(me: np.uint64, opp: np.uint64, bit: np.uint64) -> np.uint64:
    """The ``opp`` discs turned when the owner of ``me`` places the disc ``bit``."""
    turned = _ZERO
    x = _spread(bit, opp, _NOT_A, _S1)
    if (x << _S1) & _NOT_A & me:
        turned |= x
    x = _spread_r(bit, opp, _NOT_H, _S1)
    if (x >> _S1) & _NOT_H & me:
        turned |= x
    x = _spread(bit, opp, _FULL, _S8)
    if (x << _S8) & me:
        turned |= x
    x = _spread_r(bit, opp, _FULL, _S8)
    if (x >> _S8) & me:
        turned |= x
    x = _spread(bit, opp, _NOT_A, _S9)
    if (x << _S9) & _NOT_A & me:
        turned |= x
    x = _spread_r(bit, opp, _NOT_H, _S9)
    if (x >> _S9) & _NOT_H & me:
        turned |= x
    x = _spread(bit, opp, _NOT_H, _S7)
    if (x << _S7) & _NOT_H & me:
        turned |= x
    x = _spread_r(bit, opp, _NOT_A, _S7)
    if (x >> _S7) & _NOT_A & me:
        turned |= x
    return turned


@numba.njit(cache=True, nogil=True)
def popcount(x: np.uint64) -> int:
    """The number of set bits of ``x`` (SWAR)."""
    x = x - ((x >> _S1) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True)
def _nth_bit(x: np.uint64, k: int) -> np.uint64:
    """The ``k``-th lowest set bit of ``x`` (as a one-bit mask)."""
    for _ in range(k):
        x &= x - _ONE
    return x & (~x + _ONE)


@numba.njit(cache=True, nogil=True)
def _final(black: np.uint64, white: np.uint64) -> int:
    b = popcount(black)
    w = popcount(white)
    if b > w:
        return 0
    if w > b:
        return 1
    return DRAW


@numba.njit(cache=True, nogil=True)
def _status_of(me: np.uint64, opp: np.uint64, black: np.uint64, white: np.uint64) -> int:
    if placements(me, opp) != _ZERO or placements(opp, me) != _ZERO:
        return ONGOING
    return _final(black, white)


@numba.njit(cache=True, nogil=True)
def status(st: np.ndarray) -> int:
    """The status code of a kernel state."""
    black = np.uint64(st[0])
    white = np.uint64(st[1])
    if st[2] == 0:
        return _status_of(black, white, black, white)
    return _status_of(white, black, black, white)


@numba.njit(cache=True, nogil=True)
def legal_moves(st: np.ndarray, out: np.ndarray) -> int:
    """Write the legal moves (cells ascending, or the pass alone) into ``out``; return how many."""
    p = st[2]
    me = np.uint64(st[p])
    opp = np.uint64(st[1 - p])
    m = placements(me, opp)
    if m == _ZERO:
        out[0] = PASS
        return 1
    n = 0
    for cell in range(64):
        if (m >> np.uint64(cell)) & _ONE:
            out[n] = cell
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def play(st: np.ndarray, move: int) -> int:
    """Apply a legal ``move`` (a cell or the pass) in place; return the new status."""
    p = st[2]
    me = np.uint64(st[p])
    opp = np.uint64(st[1 - p])
    if move != PASS:
        bit = _ONE << np.uint64(move)
        turned = flips(me, opp, bit)
        me |= turned | bit
        opp &= ~turned
        st[p] = np.int64(me)
        st[1 - p] = np.int64(opp)
    st[2] = 1 - p
    if p == 0:
        return _status_of(opp, me, me, opp)
    return _status_of(opp, me, opp, me)


@numba.njit(cache=True, nogil=True)
def playout(st: np.ndarray, rng: np.ndarray) -> int:
    """Uniformly random legal moves to the end on local copies (``st`` is left as it was);
    return the final status."""
    return _play_out(st, rng, False)


@numba.njit(cache=True, nogil=True)
def playout_heavy(st: np.ndarray, rng: np.ndarray) -> int:
    """A playout by rules (``st`` is left as it was): take a corner when one is open,
    else avoid the cells next to an empty corner, else any move, at random among them."""
    return _play_out(st, rng, True)


@numba.njit(cache=True, nogil=True)
def _preferred(m: np.uint64, me: np.uint64, opp: np.uint64) -> np.uint64:
    """The moves a heavy playout picks among: corners, else moves off the corners' neighbours."""
    corners = m & CORNERS
    if corners:
        return corners
    taken = me | opp
    safe = m
    for corner, near in _NEAR_CORNER:
        if taken & corner == _ZERO:
            safe &= ~near
    if safe:
        return safe
    return m


@numba.njit(cache=True, nogil=True, inline="always")
def _play_out(st: np.ndarray, rng: np.ndarray, heavy: bool) -> int:
    p = st[2]
    me = np.uint64(st[p])
    opp = np.uint64(st[1 - p])
    while True:
        m = placements(me, opp)
        if m == _ZERO:
            if placements(opp, me) == _ZERO:
                break
        else:
            choice = _preferred(m, me, opp) if heavy else m
            bit = _nth_bit(choice, below(rng, popcount(choice)))
            turned = flips(me, opp, bit)
            me |= turned | bit
            opp &= ~turned
        me, opp = opp, me
        p = 1 - p
    if p == 0:
        return _final(me, opp)
    return _final(opp, me)
