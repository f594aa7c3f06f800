"""Ultimate tic-tac-toe (``uttt``) and its quick variant (``uttt-quick``).

Nine local tic-tac-toe boards in a 3x3 grid; a move is ``9 * local_board + cell``
(both 0-8, row-major). The cell played sends the opponent to the local board
with that index. A local board that is won or full is closed; when the target
board is closed the opponent may play in any open board.

- ``uttt``: three won local boards in a line win; every board closed without
  such a line is a draw.
- ``uttt-quick``: whoever first wins any local board wins the game.

Stones are two 81-bit masks (bit = move index), so a local board is a 9-bit
slice and the line tests are shared with tic-tac-toe.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import ClassVar, Self

from protocol.errors import PositionDecodeError
from protocol.games.base import PLAYER_SYMBOLS, GameState, Outcome, Termination
from protocol.games.lines import FULL, SQUARE_SYMMETRIES, completes_line, has_line
from protocol.games.position_text import cell_bits, require_text, side_to_move
from protocol.games.spec import GameSpec, SuiteRecipe, Symmetry, identity

_WINS = (Outcome(0, Termination.LINE), Outcome(1, Termination.LINE))
_DRAW = Outcome(None, Termination.DRAW)
FREE = -1
"""Value of ``forced`` when the side to move may choose any open local board."""

_DRAWN_LOCAL = 2
_OPEN_LOCAL = -1


class UltimateTicTacToeState(GameState):
    """An immutable ultimate tic-tac-toe position.

    ``bits`` are the 81-bit stone masks of player 0 and 1; ``won`` the 9-bit
    masks of local boards each player has won; ``closed`` the 9-bit mask of
    local boards that are won or full; ``forced`` the local board the side to
    move must play in, or ``FREE`` (-1).
    """

    name: ClassVar[str] = "uttt"
    num_moves: ClassVar[int] = 81
    quick: ClassVar[bool] = False
    """True for the variant where the first local board won wins the game."""

    __slots__ = ("bits", "closed", "forced", "won")

    bits: tuple[int, int]
    won: tuple[int, int]
    closed: int
    forced: int

    @classmethod
    def _make(
        cls,
        bits: tuple[int, int],
        won: tuple[int, int],
        closed: int,
        forced: int,
        to_move: int,
        moves: tuple[int, ...],
        outcome: Outcome | None,
    ) -> Self:
        state = object.__new__(cls)
        state.bits = bits
        state.won = won
        state.closed = closed
        state.forced = forced
        state._to_move = to_move
        state._moves = moves
        state._outcome = outcome
        return state

    @classmethod
    def initial(cls) -> Self:
        """The empty board, player 0 (x) to move anywhere."""
        return cls._make((0, 0), (0, 0), 0, FREE, 0, (), None)

    @property
    def cells(self) -> tuple[int, ...]:
        """81 entries indexed by move: -1 empty, else the owning player."""
        b0, b1 = self.bits
        return tuple(0 if b0 >> i & 1 else 1 if b1 >> i & 1 else -1 for i in range(81))

    @property
    def local_winners(self) -> tuple[int, ...]:
        """Per local board: -1 open, 0 or 1 won by that player, 2 full without a winner."""
        result = []
        for board in range(9):
            if self.won[0] >> board & 1:
                result.append(0)
            elif self.won[1] >> board & 1:
                result.append(1)
            elif self.closed >> board & 1:
                result.append(_DRAWN_LOCAL)
            else:
                result.append(_OPEN_LOCAL)
        return tuple(result)

    def legal_moves(self) -> list[int]:
        """Empty cells of the forced board, or of every open board when free."""
        if self._outcome is not None:
            return []
        taken = self.bits[0] | self.bits[1]
        boards = (self.forced,) if self.forced != FREE else range(9)
        moves: list[int] = []
        for board in boards:
            if self.closed >> board & 1:
                continue
            local = taken >> (9 * board) & FULL
            base = 9 * board
            moves.extend(base + cell for cell in range(9) if not local >> cell & 1)
        return moves

    def _why_illegal(self, move: int) -> str:
        board, cell = divmod(move, 9)
        if self.forced != FREE and board != self.forced:
            return f"the move must be in local board {self.forced}, not {board}"
        if self.closed >> board & 1:
            return f"local board {board} is closed"
        return f"cell {cell} of local board {board} is taken"

    def _play_unchecked(self, move: int) -> Self:
        player = self._to_move
        board, cell = divmod(move, 9)
        mine = self.bits[player] | (1 << move)
        bits = (mine, self.bits[1]) if player == 0 else (self.bits[0], mine)
        won = self.won
        closed = self.closed
        outcome: Outcome | None = None
        if completes_line(mine >> (9 * board) & FULL, cell):
            my_won = won[player] | (1 << board)
            won = (my_won, won[1]) if player == 0 else (won[0], my_won)
            closed |= 1 << board
            if self.quick or completes_line(my_won, board):
                outcome = _WINS[player]
        elif (bits[0] | bits[1]) >> (9 * board) & FULL == FULL:
            closed |= 1 << board
        if outcome is None and closed == FULL:
            outcome = _DRAW
        forced = FREE if (outcome is not None or closed >> cell & 1) else cell
        return self._make(bits, won, closed, forced, 1 - player, (*self._moves, move), outcome)

    def random_playout(self, rng: random.Random) -> Outcome:
        """Uniformly random moves to the end on local integers."""
        if self._outcome is not None:
            return self._outcome
        bits = list(self.bits)
        won = list(self.won)
        closed = self.closed
        forced = self.forced
        player = self._to_move
        quick = self.quick
        rand = rng.random
        taken = bits[0] | bits[1]
        # Empty cells per local board, kept in step with the stones.
        empties = [
            [] if closed >> b & 1 else [c for c in range(9) if not taken >> (9 * b + c) & 1]
            for b in range(9)
        ]
        while True:
            if forced != FREE:
                board = forced
                choices = empties[board]
                cell = choices.pop(int(rand() * len(choices)))
            else:
                total = sum(len(e) for e in empties)
                pick = int(rand() * total)
                board = 0
                while pick >= len(empties[board]):
                    pick -= len(empties[board])
                    board += 1
                cell = empties[board].pop(pick)
            mine = bits[player] | (1 << (9 * board + cell))
            bits[player] = mine
            if completes_line(mine >> (9 * board) & FULL, cell):
                won[player] |= 1 << board
                closed |= 1 << board
                empties[board] = []
                if quick or completes_line(won[player], board):
                    return _WINS[player]
            elif not empties[board]:
                closed |= 1 << board
            if closed == FULL:
                return _DRAW
            forced = FREE if closed >> cell & 1 else cell
            player ^= 1

    # Text forms --------------------------------------------------------------

    def _symbol(self, index: int) -> str:
        if self.bits[0] >> index & 1:
            return PLAYER_SYMBOLS[0]
        if self.bits[1] >> index & 1:
            return PLAYER_SYMBOLS[1]
        return "."

    def render(self) -> str:
        """The 9x9 grid with local boards separated by lines, and where the next move must go."""
        lines = []
        for big_row in range(3):
            if big_row:
                lines.append("------+-------+------")
            for small_row in range(3):
                parts = []
                for big_col in range(3):
                    board = 3 * big_row + big_col
                    cells = range(9 * board + 3 * small_row, 9 * board + 3 * small_row + 3)
                    parts.append(" ".join(self._symbol(i) for i in cells))
                lines.append(" | ".join(parts))
        if self._outcome is None:
            where = "any open board" if self.forced == FREE else f"board {self.forced}"
            lines.append(f"{PLAYER_SYMBOLS[self._to_move]} to move in {where}")
        return "\n".join(lines)

    def encode(self) -> str:
        """Nine local boards (9 cells each) separated by ``/``, side to move, forced board or ``-``.

        Example after the first move in the centre: ``..../....x..../... o 4`` (abridged).
        """
        boards = "/".join(
            "".join(self._symbol(9 * b + c) for c in range(9)) for b in range(9)
        )
        forced = "-" if self.forced == FREE else str(self.forced)
        return f"{boards} {PLAYER_SYMBOLS[self._to_move]} {forced}"

    @classmethod
    def decode(cls, text: str) -> Self:
        """Parse ``encode``'s format, rejecting impossible positions."""
        game = cls.name
        parts = require_text(game, text).split(" ")
        if len(parts) != 3:
            raise PositionDecodeError(
                f"{game}: expected '<boards> <side> <forced>', got {text!r}"
            )
        board_text, side, forced_text = parts
        locals_text = board_text.split("/")
        if len(locals_text) != 9 or any(len(b) != 9 for b in locals_text):
            raise PositionDecodeError(f"{game}: expected 9 local boards of 9 cells joined by '/'")
        to_move = side_to_move(game, side)
        bits = cell_bits(game, "".join(locals_text))
        counts = [b.bit_count() for b in bits]
        if counts[0] - counts[1] != to_move:
            raise PositionDecodeError(
                f"{game}: {counts[0]} x and {counts[1]} o cannot have {side!r} to move"
            )
        won = [0, 0]
        closed = 0
        for board in range(9):
            local = [b >> (9 * board) & FULL for b in bits]
            lines = [has_line(m) for m in local]
            if lines[0] and lines[1]:
                raise PositionDecodeError(f"{game}: local board {board} has lines for both players")
            for player in (0, 1):
                if lines[player]:
                    won[player] |= 1 << board
            if lines[0] or lines[1] or local[0] | local[1] == FULL:
                closed |= 1 << board
        outcome: Outcome | None = None
        winners = [p for p in (0, 1) if (won[p] if cls.quick else has_line(won[p]))]
        if len(winners) == 2:
            raise PositionDecodeError(f"{game}: both players have won")
        if winners:
            if winners[0] == to_move:
                raise PositionDecodeError(f"{game}: the winner cannot be to move again")
            outcome = _WINS[winners[0]]
        elif closed == FULL:
            outcome = _DRAW
        if forced_text == "-":
            forced = FREE
        elif forced_text in tuple("012345678"):
            forced = int(forced_text)
            if outcome is not None or closed >> forced & 1:
                raise PositionDecodeError(f"{game}: forced board {forced} is closed")
        else:
            raise PositionDecodeError(
                f"{game}: forced board must be 0-8 or '-', got {forced_text!r}"
            )
        return cls._make((bits[0], bits[1]), (won[0], won[1]), closed, forced, to_move, (), outcome)


class QuickUltimateTicTacToeState(UltimateTicTacToeState):
    """``uttt-quick``: the same board and moves; the first local board won wins the game."""

    name: ClassVar[str] = "uttt-quick"
    quick: ClassVar[bool] = True

    __slots__ = ()


def _on_both_levels(cell_map: Symmetry) -> Symmetry:
    """A symmetry of the square applied to the local boards and to their cells alike."""
    return lambda move: 9 * cell_map(move // 9) + cell_map(move % 9)


SYMMETRIES: tuple[Symmetry, ...] = (
    identity,
    *(_on_both_levels(cell_map) for cell_map in SQUARE_SYMMETRIES[1:]),
)
"""The eight symmetries of the square, as maps on ``9 * board + cell`` moves."""

SPEC = GameSpec(
    UltimateTicTacToeState,
    move_help="9 * board + cell, boards and cells 0-8 row by row",
    terminations={Termination.LINE: "three boards in a row", Termination.DRAW: "board full"},
    board="uttt",
    symmetries=SYMMETRIES,
    suites=(SuiteRecipe("uttt-2ply", 2, True),),
    balanced_suite="uttt-2ply",
)
"""Ultimate tic-tac-toe's registration (``protocol.games``)."""

QUICK_SPEC = replace(
    SPEC,
    rules=QuickUltimateTicTacToeState,
    terminations={Termination.LINE: "first local board won", Termination.DRAW: "board full"},
    suites=(),
    balanced_suite=None,
)
"""The quick variant's registration: the same board and numbering, no suite of its own."""
