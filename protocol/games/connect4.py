"""Connect Four: 7 columns x 6 rows, a move is a column 0-6, four in a row wins.

The position is a bitboard per player in the usual layout: bit ``7 * column + row``
(row 0 at the bottom), with a seventh, always-empty sentinel bit on top of each
column so that shifted copies of a board never carry a stone from one column
into the next. Four in a row is then four shifts and masks, with no loops over
cells — this module is the hot path of every pure-Python search.
"""

from __future__ import annotations

import random
from typing import ClassVar, Self

from protocol.errors import GameError, PositionDecodeError
from protocol.games.base import PLAYER_SYMBOLS, GameState, Outcome, Termination
from protocol.games.position_text import split_grid
from protocol.games.spec import GameSpec, SuiteRecipe, identity

COLUMNS = 7
ROWS = 6
_STRIDE = ROWS + 1
_CELLS = COLUMNS * ROWS

# _BIT[c][r] is the bit of the cell at column c, row r (row 0 at the bottom).
_BIT = tuple(tuple(1 << (c * _STRIDE + r) for r in range(ROWS + 1)) for c in range(COLUMNS))

# Row ``r`` of a board, gathered into 7 bits (bit c = column c): shift the row down to
# bit 0 of every column, keep those bits (``_ROW_MASK``), and multiply by ``_GATHER``,
# which moves column c's bit to 36 + c; no two partial products collide, so nothing
# carries. The server encodes the position after every move it referees.
_ROW_MASK = sum(1 << (c * _STRIDE) for c in range(COLUMNS))
_GATHER = sum(1 << (6 * k) for k in range(COLUMNS))
_GATHER_SHIFT = 36
_TOP_FIRST = tuple(reversed(range(ROWS)))


def _row_text(x_row: int, o_row: int) -> str:
    sx, so = PLAYER_SYMBOLS
    return "".join(
        sx if x_row >> c & 1 else so if o_row >> c & 1 else "." for c in range(COLUMNS)
    )


# The text of a row, indexed by its x bits << 7 | its o bits (None where both overlap).
_ROW_TEXT = [
    _row_text(i >> COLUMNS, i & 0x7F) if not (i >> COLUMNS) & i else None
    for i in range(1 << (2 * COLUMNS))
]

_WINS = (Outcome(0, Termination.LINE), Outcome(1, Termination.LINE))
_DRAW = Outcome(None, Termination.DRAW)


def has_four(bits: int) -> bool:
    """True when the stones in ``bits`` contain four in a row in any direction."""
    m = bits & (bits >> 7)  # horizontal
    if m & (m >> 14):
        return True
    m = bits & (bits >> 6)  # diagonal, down to the right
    if m & (m >> 12):
        return True
    m = bits & (bits >> 8)  # diagonal, up to the right
    if m & (m >> 16):
        return True
    m = bits & (bits >> 1)  # vertical
    return bool(m & (m >> 2))


class Connect4State(GameState):
    """An immutable Connect Four position.

    ``boards`` holds the bitboards of player 0 and player 1, ``heights`` the
    number of stones in each column.
    """

    name: ClassVar[str] = "connect4"
    num_moves: ClassVar[int] = COLUMNS

    __slots__ = ("_base", "boards", "heights")

    boards: tuple[int, int]
    heights: tuple[int, ...]
    _base: int

    @classmethod
    def _make(
        cls,
        boards: tuple[int, int],
        heights: tuple[int, ...],
        to_move: int,
        moves: tuple[int, ...],
        outcome: Outcome | None,
        base: int,
    ) -> Self:
        # object.__new__ skips __init__: play() is hot and its inputs are already valid.
        state = object.__new__(cls)
        state.boards = boards
        state.heights = heights
        state._to_move = to_move
        state._moves = moves
        state._outcome = outcome
        state._base = base
        return state

    @classmethod
    def initial(cls) -> Self:
        """The empty board, player 0 (x) to move."""
        return cls._make((0, 0), (0,) * COLUMNS, 0, (), None, 0)

    def legal_moves(self) -> list[int]:
        """Columns that are not full, unless the game is over."""
        if self._outcome is not None:
            return []
        heights = self.heights
        return [c for c in range(COLUMNS) if heights[c] < ROWS]

    def _in_range_is_legal(self, move: int) -> bool:
        return self.heights[move] < ROWS

    def _why_illegal(self, move: int) -> str:
        return f"column {move} is full"

    def _play_unchecked(self, move: int) -> Self:
        player = self._to_move
        heights = self.heights
        bit = _BIT[move][heights[move]]
        mine = self.boards[player] | bit
        boards = (mine, self.boards[1]) if player == 0 else (self.boards[0], mine)
        new_heights = (*heights[:move], heights[move] + 1, *heights[move + 1 :])
        stones = self._base + len(self._moves) + 1
        if has_four(mine):
            outcome: Outcome | None = _WINS[player]
        elif stones == _CELLS:
            outcome = _DRAW
        else:
            outcome = None
        return self._make(
            boards, new_heights, 1 - player, (*self._moves, move), outcome, self._base
        )

    def random_playout(self, rng: random.Random) -> Outcome:
        """Uniformly random moves to the end, on local integers (no state objects)."""
        if self._outcome is not None:
            return self._outcome
        heights = list(self.heights)
        player = self._to_move
        # ``me`` is always the side to move: swapping two locals is cheaper than indexing.
        me, other = self.boards if player == 0 else (self.boards[1], self.boards[0])
        free = [c for c in range(COLUMNS) if heights[c] < ROWS]
        count = len(free)
        rand = rng.random
        bit_table = _BIT
        stones = me.bit_count() + other.bit_count()
        # Nobody can have four before the seventh stone, so the opening skips the line tests.
        # int(random() * n) is uniform to within 2**-50 and cheaper than randrange.
        while stones < 6:
            column = free[int(rand() * count)]
            row = heights[column]
            me |= bit_table[column][row]
            if row == ROWS - 1:
                free.remove(column)
                count -= 1
            heights[column] = row + 1
            me, other = other, me
            player ^= 1
            stones += 1
        while True:
            column = free[int(rand() * count)]
            row = heights[column]
            me |= bit_table[column][row]
            m = me & (me >> 7)
            if m & (m >> 14):
                return _WINS[player]
            m = me & (me >> 6)
            if m & (m >> 12):
                return _WINS[player]
            m = me & (me >> 8)
            if m & (m >> 16):
                return _WINS[player]
            if row >= 3:
                m = me & (me >> 1)
                if m & (m >> 2):
                    return _WINS[player]
            if row == ROWS - 1:
                free.remove(column)
                count -= 1
                if not count:
                    return _DRAW
            heights[column] = row + 1
            me, other = other, me
            player ^= 1

    # Text forms --------------------------------------------------------------

    def cell(self, column: int, row: int) -> int | None:
        """The player whose stone is at (column, row from the bottom), or None."""
        bit = _BIT[column][row]
        if self.boards[0] & bit:
            return 0
        if self.boards[1] & bit:
            return 1
        return None

    def _rows_text(self) -> list[str]:
        x, o = self.boards
        mask, gather, shift, table = _ROW_MASK, _GATHER, _GATHER_SHIFT, _ROW_TEXT
        return [
            table[  # type: ignore[misc]  # x and o never overlap: no None is read
                ((((x >> r) & mask) * gather >> shift) & 0x7F) << COLUMNS
                | ((((o >> r) & mask) * gather >> shift) & 0x7F)
            ]
            for r in _TOP_FIRST
        ]

    def render(self) -> str:
        """The board top row first, with the column numbers underneath: the moves 0-6."""
        lines = [" ".join(row) for row in self._rows_text()]
        lines.append(" ".join(str(c) for c in range(COLUMNS)))
        return "\n".join(lines)

    def encode(self) -> str:
        """Six rows, top first, joined by ``/`` (cells ``.``/``x``/``o``), space, side to move.

        Example: ``......./......./......./......./......./...x... o``.
        """
        return "/".join(self._rows_text()) + " " + PLAYER_SYMBOLS[self._to_move]

    def encode_after(self, before: str, move: int) -> str:
        """``encode()`` from the previous text: one cell and the side to move change."""
        row = self.heights[move] - 1
        cell = (ROWS - 1 - row) * (COLUMNS + 1) + move
        mover = PLAYER_SYMBOLS[1 - self._to_move]
        return before[:cell] + mover + before[cell + 1 : -1] + PLAYER_SYMBOLS[self._to_move]

    @classmethod
    def decode(cls, text: str) -> Self:
        """Parse ``encode``'s format, rejecting impossible positions."""
        rows, to_move = split_grid("connect4", text, ROWS, COLUMNS)
        boards = [0, 0]
        heights = [0] * COLUMNS
        for top_index, row_text in enumerate(rows):
            row = ROWS - 1 - top_index
            for column, char in enumerate(row_text):
                if char == ".":
                    if heights[column] > row:
                        raise PositionDecodeError(
                            f"connect4: floating stone in column {column} above row {row}"
                        )
                    continue
                if heights[column] == 0:
                    heights[column] = row + 1
                boards[PLAYER_SYMBOLS.index(char)] |= _BIT[column][row]
        counts = [b.bit_count() for b in boards]
        if counts[0] - counts[1] != to_move:
            raise PositionDecodeError(
                f"connect4: {counts[0]} x and {counts[1]} o stones cannot have "
                f"{PLAYER_SYMBOLS[to_move]!r} to move (x moves first)"
            )
        wins = [has_four(b) for b in boards]
        if wins[0] and wins[1]:
            raise PositionDecodeError("connect4: both players have four in a row")
        outcome: Outcome | None = None
        for player in (0, 1):
            if wins[player]:
                if to_move == player:
                    raise PositionDecodeError(
                        f"connect4: {PLAYER_SYMBOLS[player]!r} has four in a row "
                        "but is to move again"
                    )
                outcome = _WINS[player]
        stones = counts[0] + counts[1]
        if outcome is None and stones == _CELLS:
            outcome = _DRAW
        return cls._make((boards[0], boards[1]), tuple(heights), to_move, (), outcome, stones)

    # Column-digit notation ---------------------------------------------------

    def notation(self) -> str:
        """The moves from the empty board as 1-based column digits, e.g. ``"4453"``."""
        if self._base:
            raise GameError("connect4: a decoded position has no move history to write")
        return "".join(str(m + 1) for m in self._moves)

    @classmethod
    def from_notation(cls, digits: str) -> Self:
        """Play 1-based column digits from the empty board; raises on bad digits or moves."""
        state = cls.initial()
        for index, char in enumerate(digits):
            if char not in "1234567":
                raise PositionDecodeError(
                    f"connect4: notation character {index} is {char!r}, expected a digit 1-7"
                )
            state = state.play(int(char) - 1)
        return state


def mirror(move: int) -> int:
    """The column a move takes in the board's mirror image (left and right swapped)."""
    return COLUMNS - 1 - move


SPEC = GameSpec(
    Connect4State,
    move_help="a column 0-6 (the numbers under the board)",
    terminations={Termination.LINE: "four in a row", Termination.DRAW: "board full"},
    board="connect4",
    symmetries=(identity, mirror),
    suites=(SuiteRecipe("connect4-2ply", 2, False), SuiteRecipe("connect4-4ply", 4, True)),
    balanced_suite="connect4-2ply",
)
"""Connect Four's registration (``protocol.games``)."""
