"""Othello (Reversi) on 8x8, the rules and move numbers of OpenSpiel's ``othello``.

A move is a cell 0-63, row-major from the top-left (``a1`` = 0, ``h1`` = 7,
``a8`` = 56), or ``PASS`` (64), which is legal only, and then the only legal
move, when the player to move has no placement. Black (``x``, player 0) moves
first from the standard centre (``d4``/``e5`` white, ``e4``/``d5`` black). The
game ends as soon as neither player can place a disc; the one with more discs
wins (``Termination.LINE`` stands for any win by the rules), equal counts draw.

The position is a bitboard per player with bit ``i`` = cell ``i``, so the move
number is the bit index. Moves and flips are computed a direction at a time by
shifting whole boards (no loop over cells).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Self

from protocol.errors import GameError, PositionDecodeError
from protocol.games.base import PLAYER_SYMBOLS, GameState, Outcome, Termination
from protocol.games.position_text import cell_bits, split_grid
from protocol.games.spec import GameSpec, SuiteRecipe, identity

SIZE = 8
CELLS = SIZE * SIZE
PASS = CELLS
"""The pass move: legal only when the player to move cannot place a disc."""

FULL = (1 << CELLS) - 1
_NOT_A = FULL & ~sum(1 << (8 * r) for r in range(SIZE))  # every cell but column a
_NOT_H = FULL & ~sum(1 << (8 * r + 7) for r in range(SIZE))  # every cell but column h
# (shift, mask applied after a left shift, mask applied after a right shift): a disc
# shifted over a board edge would wrap into the other side's column, so it is masked off.
_DIRECTIONS = (
    (1, _NOT_A, _NOT_H),  # east / west
    (8, FULL, FULL),  # south / north
    (9, _NOT_A, _NOT_H),  # south-east / north-west
    (7, _NOT_H, _NOT_A),  # south-west / north-east
)

INITIAL_BOARDS = ((1 << 28) | (1 << 35), (1 << 27) | (1 << 36))
"""Black's and white's discs at the start: e4, d5 black; d4, e5 white."""
_CENTRE = (1 << 27) | (1 << 28) | (1 << 35) | (1 << 36)

_WINS = (Outcome(0, Termination.LINE), Outcome(1, Termination.LINE))
_DRAW = Outcome(None, Termination.DRAW)


def placements(me: int, opp: int) -> int:
    """The cells (as a bitboard) where the owner of ``me`` may place a disc."""
    empty = FULL & ~(me | opp)
    moves = 0
    for shift, left_mask, right_mask in _DIRECTIONS:
        x = (me << shift) & left_mask & opp
        for _ in range(5):
            x |= (x << shift) & left_mask & opp
        moves |= (x << shift) & left_mask & empty
        x = (me >> shift) & right_mask & opp
        for _ in range(5):
            x |= (x >> shift) & right_mask & opp
        moves |= (x >> shift) & right_mask & empty
    return moves


def flips(me: int, opp: int, cell: int) -> int:
    """The opponent discs turned over when the owner of ``me`` places on ``cell``."""
    bit = 1 << cell
    turned = 0
    for shift, left_mask, right_mask in _DIRECTIONS:
        x = (bit << shift) & left_mask & opp
        for _ in range(5):
            x |= (x << shift) & left_mask & opp
        if (x << shift) & left_mask & me:
            turned |= x
        x = (bit >> shift) & right_mask & opp
        for _ in range(5):
            x |= (x >> shift) & right_mask & opp
        if (x >> shift) & right_mask & me:
            turned |= x
    return turned


def final_outcome(black: int, white: int) -> Outcome:
    """The outcome of a finished game by disc count."""
    b, w = black.bit_count(), white.bit_count()
    if b == w:
        return _DRAW
    return _WINS[0] if b > w else _WINS[1]


def _bits(cells: int) -> list[int]:
    out = []
    while cells:
        low = cells & -cells
        out.append(low.bit_length() - 1)
        cells ^= low
    return out


class OthelloState(GameState):
    """An immutable Othello position: ``boards`` are the 64-bit disc masks of black and white.

    ``_placements`` caches the cells the side to move may play (0: it must pass).
    """

    name: ClassVar[str] = "othello"
    num_moves: ClassVar[int] = CELLS + 1

    __slots__ = ("_placements", "boards")

    boards: tuple[int, int]
    _placements: int

    @classmethod
    def _make(cls, boards: tuple[int, int], to_move: int, moves: tuple[int, ...]) -> Self:
        state = object.__new__(cls)
        state.boards = boards
        state._to_move = to_move
        state._moves = moves
        me, opp = boards[to_move], boards[1 - to_move]
        own = placements(me, opp)
        state._placements = own
        if own == 0 and placements(opp, me) == 0:
            state._outcome = final_outcome(*boards)
        else:
            state._outcome = None
        return state

    @classmethod
    def initial(cls) -> Self:
        """The standard centre, black (x) to move."""
        return cls._make(INITIAL_BOARDS, 0, ())

    def legal_moves(self) -> list[int]:
        """The cells the side to move may place on, or ``[PASS]`` when there is none."""
        if self._outcome is not None:
            return []
        if self._placements == 0:
            return [PASS]
        return _bits(self._placements)

    def _in_range_is_legal(self, move: int) -> bool:
        if move == PASS:
            return self._placements == 0
        return bool(self._placements >> move & 1)

    def _why_illegal(self, move: int) -> str:
        if move == PASS:
            return "a pass is legal only when no disc can be placed"
        if (self.boards[0] | self.boards[1]) >> move & 1:
            return f"cell {move} is taken"
        if self._placements == 0:
            return "no disc can be placed: the only legal move is the pass (64)"
        return f"a disc on cell {move} would turn no opponent disc"

    def _play_unchecked(self, move: int) -> Self:
        player = self._to_move
        me, opp = self.boards[player], self.boards[1 - player]
        if move != PASS:
            turned = flips(me, opp, move)
            me |= turned | (1 << move)
            opp &= ~turned
        boards = (me, opp) if player == 0 else (opp, me)
        return self._make(boards, 1 - player, (*self._moves, move))

    # Text forms --------------------------------------------------------------

    def cell(self, index: int) -> int | None:
        """The player whose disc is on cell ``index`` (0-63), or None."""
        if self.boards[0] >> index & 1:
            return 0
        if self.boards[1] >> index & 1:
            return 1
        return None

    def _rows_text(self) -> list[str]:
        sx, so = PLAYER_SYMBOLS
        black, white = self.boards
        return [
            "".join(
                sx if black >> i & 1 else so if white >> i & 1 else "."
                for i in range(SIZE * r, SIZE * r + SIZE)
            )
            for r in range(SIZE)
        ]

    def render(self) -> str:
        """The board with cell numbers of each row's first cell on the left, files underneath.

        A move is ``8 * row + column`` (row 0 at the top), the pass is 64.
        """
        lines = [f"{SIZE * r:>2} " + " ".join(row) for r, row in enumerate(self._rows_text())]
        lines.append("   " + " ".join(str(c) for c in range(SIZE)))
        return "\n".join(lines)

    def encode(self) -> str:
        """Eight rows, top first, joined by ``/`` (cells ``.``/``x``/``o``), space, side to move.

        The start: ``......../......../......../...ox.../...xo.../......../......../........ x``.
        """
        return "/".join(self._rows_text()) + " " + PLAYER_SYMBOLS[self._to_move]

    @classmethod
    def decode(cls, text: str) -> Self:
        """Parse ``encode``'s format; the four centre cells must hold discs."""
        grid, to_move = split_grid("othello", text, SIZE, SIZE)
        boards = cell_bits("othello", "".join(grid))
        if (boards[0] | boards[1]) & _CENTRE != _CENTRE:
            raise PositionDecodeError("othello: the four centre cells always hold discs")
        return cls._make((boards[0], boards[1]), to_move, ())

    # Square names ----------------------------------------------------------------

    @staticmethod
    def move_name(move: int) -> str:
        """OpenSpiel's name of a move: ``a1``-``h8`` (file, then rank from the top) or ``pass``."""
        if move == PASS:
            return "pass"
        if not 0 <= move < CELLS:
            raise GameError(f"othello: no move {move}")
        return "abcdefgh"[move % SIZE] + str(move // SIZE + 1)


def _symmetry(transform: Callable[[int, int], tuple[int, int]]) -> Callable[[int], int]:
    def apply(move: int) -> int:
        if move == PASS:
            return PASS
        row, col = transform(*divmod(move, SIZE))
        return SIZE * row + col

    return apply


SYMMETRIES: tuple[Callable[[int], int], ...] = (
    identity,
    *(
        _symmetry(t)
        for t in (
            lambda r, c: (7 - r, 7 - c),  # half turn
            lambda r, c: (c, r),  # the a1-h8 diagonal
            lambda r, c: (7 - c, 7 - r),  # the h1-a8 diagonal
        )
    ),
)
"""The board symmetries that keep the starting position, as maps on move numbers."""

SPEC = GameSpec(
    OthelloState,
    move_help="a cell 0-63, 8 * row + column (row starts at the left, columns under the "
    "board), 64 to pass when you cannot place a disc",
    terminations={Termination.LINE: "more discs", Termination.DRAW: "equal discs"},
    board="othello",
    symmetries=SYMMETRIES,
    suites=(SuiteRecipe("othello-4ply", 4, True),),
    balanced_suite="othello-4ply",
    win_reason="no move left: {winner} has more discs",
    draw_reason="draw: no move left, equal discs",
)
"""Othello's registration (``protocol.games``)."""
