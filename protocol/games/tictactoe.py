"""Tic-tac-toe: a move is a cell 0-8, row-major; three in a row wins, a full board draws."""

from __future__ import annotations

import random
from typing import ClassVar, Self

from protocol.errors import PositionDecodeError
from protocol.games.base import PLAYER_SYMBOLS, GameState, Outcome, Termination
from protocol.games.lines import FULL, SQUARE_SYMMETRIES, completes_line, has_line
from protocol.games.position_text import cell_bits, split_grid
from protocol.games.spec import GameSpec

_WINS = (Outcome(0, Termination.LINE), Outcome(1, Termination.LINE))
_DRAW = Outcome(None, Termination.DRAW)


class TicTacToeState(GameState):
    """An immutable tic-tac-toe position: ``boards`` are 9-bit masks of player 0 and 1."""

    name: ClassVar[str] = "tictactoe"
    num_moves: ClassVar[int] = 9

    __slots__ = ("boards",)

    boards: tuple[int, int]

    @classmethod
    def _make(
        cls, boards: tuple[int, int], to_move: int, moves: tuple[int, ...], outcome: Outcome | None
    ) -> Self:
        state = object.__new__(cls)
        state.boards = boards
        state._to_move = to_move
        state._moves = moves
        state._outcome = outcome
        return state

    @classmethod
    def initial(cls) -> Self:
        """The empty board, player 0 (x) to move."""
        return cls._make((0, 0), 0, (), None)

    def legal_moves(self) -> list[int]:
        """Empty cells, unless the game is over."""
        if self._outcome is not None:
            return []
        taken = self.boards[0] | self.boards[1]
        return [cell for cell in range(9) if not taken >> cell & 1]

    def _why_illegal(self, move: int) -> str:
        return f"cell {move} is taken"

    def _play_unchecked(self, move: int) -> Self:
        player = self._to_move
        mine = self.boards[player] | (1 << move)
        boards = (mine, self.boards[1]) if player == 0 else (self.boards[0], mine)
        if completes_line(mine, move):
            outcome: Outcome | None = _WINS[player]
        elif boards[0] | boards[1] == FULL:
            outcome = _DRAW
        else:
            outcome = None
        return self._make(boards, 1 - player, (*self._moves, move), outcome)

    def random_playout(self, rng: random.Random) -> Outcome:
        """Uniformly random moves to the end on local integers."""
        if self._outcome is not None:
            return self._outcome
        boards = list(self.boards)
        player = self._to_move
        free = self.legal_moves()
        rand = rng.random
        while True:
            cell = free.pop(int(rand() * len(free)))
            boards[player] |= 1 << cell
            if completes_line(boards[player], cell):
                return _WINS[player]
            if not free:
                return _DRAW
            player ^= 1

    def cell(self, index: int) -> int | None:
        """The player owning cell ``index``, or None."""
        for player in (0, 1):
            if self.boards[player] >> index & 1:
                return player
        return None

    def _rows_text(self) -> list[str]:
        symbols = ["." if p is None else PLAYER_SYMBOLS[p] for p in map(self.cell, range(9))]
        return ["".join(symbols[r * 3 : r * 3 + 3]) for r in range(3)]

    def render(self) -> str:
        """Three rows of cells."""
        return "\n".join(" ".join(row) for row in self._rows_text())

    def encode(self) -> str:
        """Three rows separated by ``/``, a space, the side to move: ``x.o/.x./... o``."""
        return "/".join(self._rows_text()) + " " + PLAYER_SYMBOLS[self._to_move]

    @classmethod
    def decode(cls, text: str) -> Self:
        """Parse ``encode``'s format, rejecting impossible positions."""
        grid, to_move = split_grid("tictactoe", text, 3, 3)
        boards = cell_bits("tictactoe", "".join(grid))
        outcome = decode_outcome("tictactoe", boards, to_move)
        if outcome is None and boards[0] | boards[1] == FULL:
            outcome = _DRAW
        return cls._make((boards[0], boards[1]), to_move, (), outcome)


def decode_outcome(game: str, boards: list[int], to_move: int) -> Outcome | None:
    """Check stone counts and lines of a decoded 3x3 position; return the win it shows, if any."""
    counts = [b.bit_count() for b in boards]
    if counts[0] - counts[1] != to_move:
        raise PositionDecodeError(
            f"{game}: {counts[0]} x and {counts[1]} o cannot have "
            f"{PLAYER_SYMBOLS[to_move]!r} to move (x moves first)"
        )
    wins = [has_line(b) for b in boards]
    if wins[0] and wins[1]:
        raise PositionDecodeError(f"{game}: both players have a line")
    for player in (0, 1):
        if wins[player]:
            if to_move == player:
                raise PositionDecodeError(
                    f"{game}: {PLAYER_SYMBOLS[player]!r} has a line but is to move again"
                )
            return _WINS[player]
    return None


SPEC = GameSpec(
    TicTacToeState,
    move_help="a cell 0-8, row by row: 0 1 2 / 3 4 5 / 6 7 8",
    terminations={Termination.LINE: "three in a row", Termination.DRAW: "board full"},
    board="tictactoe",
    symmetries=SQUARE_SYMMETRIES,
)
"""Tic-tac-toe's registration (``protocol.games``): no opening suite, it is too small."""
