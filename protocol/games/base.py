"""The rules API every game implements: an immutable ``GameState`` and a typed ``Outcome``.

A game is a pure state machine: no I/O, no clocks, no hidden randomness.
``play`` returns a new state and never changes the old one; the only
randomness, in ``random_playout``, comes from the generator the caller passes.
"""

from __future__ import annotations

import enum
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Self

from protocol.errors import IllegalMoveError

PLAYER_SYMBOLS = ("x", "o")
"""Symbols of player 0 (moves first) and player 1 in renders and encodings."""


class Termination(enum.Enum):
    """Why a game ended. The first two come from the rules, the rest from the referee."""

    LINE = "line"
    """A player completed a winning line (four in a row, three local boards, ...)."""
    DRAW = "draw"
    """The board filled (or every local board closed) without a winning line."""
    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    DISCONNECT = "disconnect"
    RESIGN = "resign"
    ABORTED = "aborted"


class Fault(enum.Enum):
    """Who is to blame for an ending the rules did not decide."""

    BOT = "bot"
    """The bot broke a rule of the arena (illegal move, timeout, disconnect)."""
    INFRASTRUCTURE = "infrastructure"
    """The arena itself ended the match (shutdown, lost node, internal error): never rated."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game: ``winner`` is 0, 1, or None for a draw."""

    winner: int | None
    termination: Termination

    @property
    def result(self) -> str:
        """The conventional score string: ``1-0``, ``0-1`` or ``1/2-1/2``."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner == 0 else "0-1"

    def score(self, player: int) -> float:
        """Points for ``player``: 1 for a win, 0.5 for a draw, 0 for a loss."""
        return winner_score(self.winner, player)


def winner_score(winner: int | None, player: int) -> float:
    """``Outcome.score`` from the winner alone (what a stored match keeps): 1, 0.5 or 0."""
    if winner is None:
        return 0.5
    return 1.0 if winner == player else 0.0


class GameState(ABC):
    """An immutable position of a two-player, alternating-move game.

    Player 0 moves first. Subclasses implement the rules; everything here is
    derived from their primitives.
    """

    name: ClassVar[str]
    """The registry name of the game, e.g. ``"connect4"``."""
    num_moves: ClassVar[int]
    """Moves are integers in ``range(num_moves)``."""

    # Every game keeps these three; subclasses add their board's slots.
    __slots__ = ("_moves", "_outcome", "_to_move")

    _moves: tuple[int, ...]
    _outcome: Outcome | None
    _to_move: int

    @property
    def to_move(self) -> int:
        """The player whose turn it is (0 or 1); meaningless once the game is over."""
        return self._to_move

    @property
    def moves(self) -> tuple[int, ...]:
        """The moves played from the position this state was created or decoded from."""
        return self._moves

    def outcome(self) -> Outcome | None:
        """The outcome by the rules, or None while the game is in progress."""
        return self._outcome

    @abstractmethod
    def legal_moves(self) -> list[int]:
        """The legal moves in ascending order; empty once the game is over."""

    @abstractmethod
    def _play_unchecked(self, move: int) -> Self:
        """Apply a move already known to be legal."""

    @abstractmethod
    def render(self) -> str:
        """A readable multi-line text board."""

    @abstractmethod
    def encode(self) -> str:
        """The compact one-line text encoding of this position (see ``docs/protocol.md``)."""

    def encode_after(self, before: str, move: int) -> str:
        """``encode()``, given the encoding of the position this one came from by ``move``.

        For a caller that keeps the text of every position it plays through
        (the match runner): a game whose text changes in a few places per
        move derives it from ``before`` instead of writing the whole board.
        ``before`` must be exactly the previous position's ``encode()``.
        """
        return self.encode()

    @classmethod
    @abstractmethod
    def decode(cls, text: str) -> Self:
        """Parse ``encode``'s text; raises ``PositionDecodeError`` when malformed or impossible."""

    @classmethod
    @abstractmethod
    def initial(cls) -> Self:
        """The starting position."""

    # Derived behaviour -------------------------------------------------------

    @property
    def ply(self) -> int:
        """How many moves have been played in this game's history."""
        return len(self._moves)  # not self.moves: the referee asks several times a move

    def is_over(self) -> bool:
        """True once the game has an outcome."""
        return self.outcome() is not None

    def is_legal(self, move: object) -> bool:
        """True when ``move`` is an int that is legal here (bools are not moves)."""
        return type(move) is int and move in self.legal_moves()

    def play(self, move: int) -> Self:
        """Return the state after ``move``; raises ``IllegalMoveError`` saying why it is illegal."""
        self.check_move(move)
        return self._play_unchecked(move)

    def check_move(self, move: object) -> None:
        """Raise ``IllegalMoveError`` with the reason when ``move`` is not legal here."""
        if type(move) is not int:
            raise IllegalMoveError(
                f"{self.name}: a move must be an integer, got {type(move).__name__} {move!r}"
            )
        if self.outcome() is not None:
            raise IllegalMoveError(f"{self.name}: the game is over, no move is legal")
        if not 0 <= move < self.num_moves:
            raise IllegalMoveError(
                f"{self.name}: move {move} is out of range 0-{self.num_moves - 1}"
            )
        if not self._in_range_is_legal(move):
            reason = self._why_illegal(move)
            raise IllegalMoveError(f"{self.name}: move {move} is not legal: {reason}")

    def _in_range_is_legal(self, move: int) -> bool:
        """Whether a move in ``range(num_moves)`` is legal here (the game is not over).

        Every ``play`` asks; a game that can tell without listing every legal
        move says so faster.
        """
        return move in self.legal_moves()

    def _why_illegal(self, move: int) -> str:
        """A human reason an in-range move is illegal; subclasses say more."""
        return "not among the legal moves"

    def play_all(self, moves: list[int] | tuple[int, ...]) -> Self:
        """Play a sequence of moves, checking each."""
        state = self
        for move in moves:
            state = state.play(move)
        return state

    def random_playout(self, rng: random.Random) -> Outcome:
        """Play uniformly random moves to the end and return the outcome.

        Games override this with a fast, allocation-light version; the
        distribution must stay uniform over legal moves at every ply.
        """
        state = self
        outcome = state.outcome()
        rand = rng.random
        while outcome is None:
            moves = state.legal_moves()
            # The same draw as the fast overrides, so both give the same game for one seed.
            state = state._play_unchecked(moves[int(rand() * len(moves))])
            outcome = state.outcome()
        return outcome

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.encode()!r}>"
