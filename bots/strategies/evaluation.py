"""Static evaluations for the heuristic strategies, one per game.

``EVALUATIONS`` is the bots side of a game's registration for the heuristic
strategies (``protocol.games`` holds the rest; ``bots.kernels.KERNELS`` the
compiled rules): one line per game, keyed by its registered name.

``evaluate(state)`` scores an unfinished position for the player to move
(positive = good for them); the search handles finished positions itself.
Each game's ``Evaluation`` also gives a transposition key and a move order
(centre first), which alpha-beta needs and which only the game knows.

Connect Four: every stone scores the number of four-lines through its cell
(3 4 5 7 5 4 3 on the bottom row ... 5 8 11 13 11 8 5 in the middle), and
every line of four that the opponent has not blocked scores by how many of
our stones it holds (2 -> 2, 3 -> 5, 4 -> 10). The tic-tac-toe family uses the
same two ideas on lines of three.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from bots.strategies.evaluation_othello import evaluate_othello, order_othello, othello_key
from bots.strategy import StrategyOptionError
from protocol.games import GameState
from protocol.games.lines import LINE_MASKS

# Connect Four ----------------------------------------------------------------------

_C4_ROWS = ((3, 4, 5, 7, 5, 4, 3), (4, 6, 8, 10, 8, 6, 4), (5, 8, 11, 13, 11, 8, 5))
C4_CELL_WEIGHTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(_C4_ROWS[min(row, 5 - row)][col] for col in range(7)) for row in range(6)
)
"""``C4_CELL_WEIGHTS[row][column]``: four-lines through the cell (row 0 at the bottom)."""
C4_CHAIN_VALUES = (0, 0, 2, 5, 10)
"""Value of an unblocked line of four holding 0..4 of a player's stones."""
C4_ORDER = (3, 2, 4, 1, 5, 0, 6)


def _c4_windows() -> tuple[int, ...]:
    windows = []
    for col in range(7):
        for row in range(6):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(col + i * dc, row + i * dr) for i in range(4)]
                if all(0 <= c < 7 and 0 <= r < 6 for c, r in cells):
                    windows.append(sum(1 << (7 * c + r) for c, r in cells))
    return tuple(windows)


C4_WINDOWS = _c4_windows()
"""The 69 lines of four as bitboards."""
# _C4_COLUMN_SUM[c][bits]: cell weight of the stones ``bits`` (6 bits) in column c.
_C4_COLUMN_SUM = tuple(
    tuple(sum(C4_CELL_WEIGHTS[r][c] for r in range(6) if bits >> r & 1) for bits in range(64))
    for c in range(7)
)


def c4_cell_score(bits: int) -> int:
    """Sum of the cell weights of the stones in a Connect Four bitboard."""
    return sum(_C4_COLUMN_SUM[c][(bits >> (7 * c)) & 0x3F] for c in range(7))


def c4_chain_score(mine: int, theirs: int) -> int:
    """Chain values of ``mine`` over the lines ``theirs`` has not blocked."""
    values = C4_CHAIN_VALUES
    return sum(values[(w & mine).bit_count()] for w in C4_WINDOWS if not w & theirs)


def evaluate_connect4(state: GameState) -> float:
    """Cell weights plus chain values, mover's minus opponent's."""
    boards: tuple[int, int] = state.boards  # type: ignore[attr-defined]
    mine, theirs = boards[state.to_move], boards[1 - state.to_move]
    return float(
        c4_cell_score(mine)
        - c4_cell_score(theirs)
        + c4_chain_score(mine, theirs)
        - c4_chain_score(theirs, mine)
    )


# Tic-tac-toe family -------------------------------------------------------------------

TTT_CELL_WEIGHTS = (3, 2, 3, 2, 4, 2, 3, 2, 3)
"""Lines through each cell of a 3x3 grid."""
TTT_ORDER = (4, 0, 2, 6, 8, 1, 3, 5, 7)
_TTT_CHAIN_VALUES = (0, 1, 5, 10)


def grid_score(mine: int, theirs: int) -> int:
    """Cell weights plus open-line values of ``mine`` on a 3x3 grid, minus ``theirs``'s."""
    score = 0
    for cell in range(9):
        if mine >> cell & 1:
            score += TTT_CELL_WEIGHTS[cell]
        elif theirs >> cell & 1:
            score -= TTT_CELL_WEIGHTS[cell]
    for line in LINE_MASKS:
        if not line & theirs:
            score += _TTT_CHAIN_VALUES[(line & mine).bit_count()]
        elif not line & mine:
            score -= _TTT_CHAIN_VALUES[(line & theirs).bit_count()]
    return score


def evaluate_tictactoe(state: GameState) -> float:
    """Cell weights plus open lines, for the player to move."""
    boards: tuple[int, int] = state.boards  # type: ignore[attr-defined]
    return float(grid_score(boards[state.to_move], boards[1 - state.to_move]))


def evaluate_uttt(state: GameState) -> float:
    """The macro board (won local boards) weighs ten times each open local board."""
    me = state.to_move
    won: tuple[int, int] = state.won  # type: ignore[attr-defined]
    bits: tuple[int, int] = state.bits  # type: ignore[attr-defined]
    closed: int = state.closed  # type: ignore[attr-defined]
    score = 10 * grid_score(won[me], won[1 - me])
    for board in range(9):
        if not closed >> board & 1:
            mine = bits[me] >> (9 * board) & 0x1FF
            theirs = bits[1 - me] >> (9 * board) & 0x1FF
            score += grid_score(mine, theirs) * TTT_CELL_WEIGHTS[board] // 3
    if state.forced == -1:  # type: ignore[attr-defined]
        score += 3  # choosing the board is worth a little
    return float(score)


# Registry -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What the heuristic searches need to know about one game."""

    evaluate: Callable[[GameState], float]
    """Score of an unfinished position for the player to move."""
    key: Callable[[GameState], Hashable]
    """A transposition key: equal for positions with the same future."""
    order: Callable[[GameState, list[int]], list[int]]
    """The legal moves, most promising first."""


def _ordered(preference: tuple[int, ...]) -> Callable[[GameState, list[int]], list[int]]:
    rank = {m: i for i, m in enumerate(preference)}
    return lambda _state, moves: sorted(moves, key=lambda m: rank.get(m, len(rank)))


def _uttt_order(state: GameState, moves: list[int]) -> list[int]:
    return sorted(moves, key=lambda m: (TTT_ORDER.index(m % 9), TTT_ORDER.index(m // 9)))


_UTTT = Evaluation(
    evaluate_uttt,
    lambda s: (s.bits, s.forced, s.to_move),  # type: ignore[attr-defined]
    _uttt_order,
)

EVALUATIONS: dict[str, Evaluation] = {
    "connect4": Evaluation(
        evaluate_connect4,
        lambda s: (s.boards, s.to_move),  # type: ignore[attr-defined]
        _ordered(C4_ORDER),
    ),
    "tictactoe": Evaluation(
        evaluate_tictactoe,
        lambda s: (s.boards, s.to_move),  # type: ignore[attr-defined]
        _ordered(TTT_ORDER),
    ),
    "uttt": _UTTT,
    "uttt-quick": _UTTT,
    "othello": Evaluation(evaluate_othello, othello_key, order_othello),
}
"""Each game's evaluation, by its registered name: one line per game."""


def evaluation_for(game: str) -> Evaluation:
    """The evaluation of ``game``; ``StrategyOptionError`` for a game without one."""
    found = EVALUATIONS.get(game)
    if found is None:
        raise StrategyOptionError(
            f"no heuristic evaluation for {game!r}; games with one: {', '.join(EVALUATIONS)}"
        )
    return found
