"""Compiled Connect Four solver: negamax alpha-beta on bitboards (after Pascal Pons).

The position is ``cur`` (the stones of the player to move) and ``mask`` (all
stones), in the bit layout of ``bots.kernels.connect4`` (bit ``7 * column +
row``, a sentinel bit above each column). Playing a move bit is
``cur ^= mask; mask |= move``, and ``cur + mask`` is a unique key for the
position (it equals the layout's classic ``cur + mask + bottom`` code minus a
constant).

Scores follow Pons' convention, from the side to move: ``22 - s`` when it
wins with its ``s``-th stone, ``s - 22`` when the opponent wins with its
``s``-th stone, 0 for a draw. A score therefore depends on the position only,
which lets the transposition table store absolute bounds.

``negamax(alpha, beta)`` returns ``r`` with the usual fail-soft contract:
``r <= alpha`` means the score is ``<= r``, ``r >= beta`` means it is
``>= r``, otherwise ``r`` is the score. It never explores a move that lets
the opponent win at once, knows that the side to move cannot win at once (the
caller checked, or the parent only played non-losing moves), and tightens the
window from the number of stones left and the table before searching.

Transposition table: one ``int64`` array of a power-of-two size, each entry
``key << 8 | code`` (a key fits in 49 bits). The slot is the top bits of
``key * 0x9E3779B97F4A7C15`` (Fibonacci hashing, so keys that differ only in
high columns still spread). ``code`` 0 is an empty slot;
``1 .. UPPER_SPAN`` an upper bound ``code + MIN_SCORE - 1``; above that a
lower bound ``code - UPPER_SPAN + MIN_SCORE - 1``. Replacement is
always-replace: a new result overwrites whatever held the slot. The newest
entry is the one most likely to be probed again by the null-window
re-searches that follow, and with positions this cheap to re-derive a depth
preference did not pay for its extra compare.

Moves are tried in order of the number of winning cells (threats) they
create, ties broken centre first (3, 2, 4, 1, 5, 0, 6). Before that, far
from the end (fewer than ``ETC_BELOW`` stones), the children are looked up
in the table first (enhanced transposition cutoff): a child already proven
to score low enough cuts the node without a search, about a fifth fewer
nodes on mid-game positions.

Memory: one ``int64`` array holds the table (its first ``2**bits``
entries), then one or more work arrays of ``WORK_SIZE`` entries each: the
move lists of every depth (the first ``WORK`` entries) and then the control
words: ``work[NODES]`` counts nodes; the search checks ``work[STOP]`` (a
stop request, set from another thread at a deadline, or from another
process when the array is in shared memory) and ``work[LIMIT]`` (a node
limit, 0 for none) every ``CHECK_EVERY`` nodes and, when told to stop, sets
``work[STOPPED] = 1`` and unwinds without writing anything to the table, so
the table only ever holds proven bounds. One array (and an offset into it)
rather than four keeps the recursive call small: each array argument is
several machine words to pass, and dropping three made the search about
half again as fast. A search uses one work array; several searches (threads
or processes) may share one memory, each with its own work array.

Every table entry is one aligned 64-bit word holding its own key, so
searches in several threads or processes may share one table (in shared
memory) without locks: a read sees a whole entry or misses.
"""

from __future__ import annotations

import numba
import numpy as np

from bots.kernels.connect4 import BOARD_MASK, BOTTOM_ROW, winning_cells

WIDTH = 7
HEIGHT = 6
CELLS = WIDTH * HEIGHT
MIN_SCORE = -(CELLS // 2) + 3
"""Lowest possible score (a loss to the opponent's fourth stone)."""
MAX_SCORE = (CELLS + 1) // 2 - 3
"""Highest possible score (a win with one's fourth stone)."""
UPPER_SPAN = MAX_SCORE - MIN_SCORE + 1
"""Table codes ``1 .. UPPER_SPAN`` are upper bounds; larger codes lower bounds."""
ETC_BELOW = 34
"""Positions with fewer stones look their children up in the table before searching."""
CHECK_EVERY = 4095
"""Nodes between two looks at the stop request and node limit (a mask: 2**k - 1)."""
WORK = 2 * WIDTH * (CELLS + 1)
"""Entries of the work array that hold move lists (two per move, ``WIDTH`` per depth)."""
NODES, STOPPED, STOP, LIMIT = WORK, WORK + 1, WORK + 2, WORK + 3
"""Indices of the control words in the work array."""
WORK_SIZE = WORK + 4
_HASH = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as a signed int64
_COLUMN_ORDER = np.array([3, 2, 4, 1, 5, 0, 6], dtype=np.int64)
_COLUMN_MASK = np.array([0x3F << (7 * c) for c in range(WIDTH)], dtype=np.int64)


def new_memory(bits: int, works: int = 1) -> np.ndarray:
    """Empty solver memory: a table of ``2**bits`` entries then ``works`` work arrays (8 bytes
    an entry), its pages already mapped."""
    if not 10 <= bits <= 30:
        raise ValueError(f"table bits must be in 10..30, got {bits}")
    memory = np.empty(memory_size(bits, works), dtype=np.int64)
    # Writing every page now keeps first-touch page faults out of the first timed searches.
    memory.fill(0)
    return memory


def memory_size(bits: int, works: int = 1) -> int:
    """Entries of a solver memory with a table of ``2**bits`` entries and ``works`` work arrays."""
    return (1 << bits) + works * WORK_SIZE


@numba.njit(cache=True, nogil=True)
def popcount(x: int) -> int:
    """Set bits of a non-negative ``x``."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@numba.njit(cache=True, nogil=True)
def possible(mask: int) -> int:
    """The playable cell of every open column."""
    return (mask + BOTTOM_ROW) & BOARD_MASK


@numba.njit(cache=True, nogil=True)
def can_win_next(cur: int, mask: int) -> bool:
    """Whether the side to move wins with one stone."""
    return (winning_cells(cur, mask) & possible(mask)) != 0


@numba.njit(cache=True, nogil=True)
def non_losing_moves(cur: int, mask: int) -> int:
    """Playable cells after which the opponent cannot win at once (0: none).

    A cell where the opponent would win must be taken; two such cells lose;
    a cell just below an opponent's winning cell hands it over.
    """
    moves = possible(mask)
    threats = winning_cells(cur ^ mask, mask)
    forced = moves & threats
    if forced:
        if forced & (forced - 1):
            return 0
        moves = forced
    return moves & ~(threats >> 1)


@numba.njit(cache=True, nogil=True)
def _probe(table: np.ndarray, shift: int, key: int) -> int:
    """The code stored for ``key``, 0 if none."""
    entry = table[((key * _HASH) >> shift) & ((1 << (64 - shift)) - 1)]
    if (entry >> 8) == key:
        return entry & 0xFF
    return 0


@numba.njit(cache=True, nogil=True)
def _store(table: np.ndarray, shift: int, key: int, code: int) -> None:
    table[((key * _HASH) >> shift) & ((1 << (64 - shift)) - 1)] = (key << 8) | code


@numba.njit(cache=True, nogil=True)
def _div(a: int, b: int) -> int:
    """Integer division rounding toward zero (Pons' bounds are written that way)."""
    q = abs(a) // b
    return q if a >= 0 else -q


@numba.njit(cache=True, nogil=True)
def negamax(
    cur: int,
    mask: int,
    stones: int,
    alpha: int,
    beta: int,
    memory: np.ndarray,
    shift: int,
    off: int,
) -> int:
    """Fail-soft alpha-beta score of a position whose side to move cannot win at once.

    ``memory`` is the solver memory (see the module docstring): the table is its first
    ``2**(64 - shift)`` entries, the work array starts at ``off``.
    """
    nodes = memory[off + NODES] + 1
    memory[off + NODES] = nodes
    if (nodes & CHECK_EVERY) == 0 and (
        memory[off + STOP] != 0 or (memory[off + LIMIT] > 0 and nodes >= memory[off + LIMIT])
    ):
        memory[off + STOPPED] = 1
    if memory[off + STOPPED]:
        return 0
    moves = non_losing_moves(cur, mask)
    if moves == 0:
        return -_div(CELLS - stones, 2)
    if stones >= CELLS - 2:
        return 0
    low = -_div(CELLS - 2 - stones, 2)  # the opponent cannot win with its next stone
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = _div(CELLS - 1 - stones, 2)  # we cannot win with this stone
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta
    key = cur + mask
    code = _probe(memory, shift, key)
    if code > UPPER_SPAN:
        low = code - UPPER_SPAN + MIN_SCORE - 1
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
    elif code > 0:
        high = code + MIN_SCORE - 1
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
    # Enhanced transposition cutoff: a child already known to score low enough cuts at once.
    if stones < ETC_BELOW:
        for i in range(WIDTH):
            move = moves & _COLUMN_MASK[i]
            if move:
                child_code = _probe(memory, shift, (cur ^ mask) + (mask | move))
                if 0 < child_code <= UPPER_SPAN:
                    bound = -(child_code + MIN_SCORE - 1)
                    if bound >= beta:
                        return bound
    # Sort the moves by threats created (insertion sort, stable: centre first on ties).
    base = 2 * WIDTH * stones
    count = 0
    for i in range(WIDTH):
        move = moves & _COLUMN_MASK[_COLUMN_ORDER[i]]
        if move:
            score = popcount(winning_cells(cur | move, mask))
            j = count
            while j > 0 and memory[off + base + 2 * (j - 1) + 1] < score:
                memory[off + base + 2 * j] = memory[off + base + 2 * (j - 1)]
                memory[off + base + 2 * j + 1] = memory[off + base + 2 * (j - 1) + 1]
                j -= 1
            memory[off + base + 2 * j] = move
            memory[off + base + 2 * j + 1] = score
            count += 1
    for i in range(count):
        move = memory[off + base + 2 * i]
        score = -negamax(cur ^ mask, mask | move, stones + 1, -beta, -alpha, memory, shift, off)
        if memory[off + STOPPED]:
            return 0
        if score >= beta:
            _store(memory, shift, key, score + UPPER_SPAN - MIN_SCORE + 1)
            return score
        if score > alpha:
            alpha = score
    _store(memory, shift, key, alpha - MIN_SCORE + 1)
    return alpha


@numba.njit(cache=True, nogil=True)
def null_window(
    cur: int,
    mask: int,
    stones: int,
    low: int,
    high: int,
    memory: np.ndarray,
    shift: int,
    off: int,
    bounds: np.ndarray,
) -> bool:
    """Narrow the score bounds ``[low, high]`` by null-window searches until they meet.

    Each probe asks whether the score exceeds a middle value; the first
    probes lean towards the extremes (half of the bound) so that short wins
    and losses, which are cheap to prove, are found first. The last bounds
    reached are written to ``bounds`` (``[low, high]``) even when the search
    is stopped; returns whether they met.
    """
    while low < high:
        med = low + (high - low) // 2
        if med <= 0 and _div(low, 2) < med:
            med = _div(low, 2)
        elif med >= 0 and _div(high, 2) > med:
            med = _div(high, 2)
        r = negamax(cur, mask, stones, med, med + 1, memory, shift, off)
        if memory[off + STOPPED]:
            break
        # Fail-soft results may overshoot a weak search's artificial [-1, 1] window.
        if r <= med:
            high = max(r, low)
        else:
            low = min(r, high)
    bounds[0] = low
    bounds[1] = high
    return low == high
