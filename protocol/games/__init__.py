"""Pure game rules: one module per game plus the registry below.

Public API::

    from protocol.games import new_game, GAMES
    state = new_game("connect4")
    state = state.play(3)
    state.legal_moves(), state.to_move, state.outcome(), state.render()

Adding a game is one module defining a ``GameState`` subclass and one line in
``_REGISTRY``.
"""

from __future__ import annotations

from protocol.errors import IllegalMoveError, PositionDecodeError, UnknownGameError
from protocol.games.base import PLAYER_SYMBOLS, Fault, GameState, Outcome, Termination
from protocol.games.connect4 import Connect4State
from protocol.games.othello import OthelloState
from protocol.games.tictactoe import TicTacToeState
from protocol.games.uttt import QuickUltimateTicTacToeState, UltimateTicTacToeState

_REGISTRY: dict[str, type[GameState]] = {
    cls.name: cls
    for cls in (
        Connect4State,
        TicTacToeState,
        UltimateTicTacToeState,
        QuickUltimateTicTacToeState,
        OthelloState,
    )
}

GAMES: tuple[str, ...] = tuple(_REGISTRY)
"""Names of every registered game."""


def get_game_class(name: str) -> type[GameState]:
    """The ``GameState`` class called ``name``; ``UnknownGameError`` lists the valid names."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownGameError(f"unknown game {name!r}; valid games: {', '.join(GAMES)}") from None


def new_game(name: str) -> GameState:
    """The initial position of the game called ``name``."""
    return get_game_class(name).initial()


def decode_state(name: str, text: str) -> GameState:
    """Decode a position text of the game called ``name`` (see ``GameState.encode``)."""
    return get_game_class(name).decode(text)


__all__ = [
    "GAMES",
    "PLAYER_SYMBOLS",
    "Connect4State",
    "Fault",
    "GameState",
    "IllegalMoveError",
    "OthelloState",
    "Outcome",
    "PositionDecodeError",
    "QuickUltimateTicTacToeState",
    "Termination",
    "TicTacToeState",
    "UltimateTicTacToeState",
    "UnknownGameError",
    "decode_state",
    "get_game_class",
    "new_game",
]
