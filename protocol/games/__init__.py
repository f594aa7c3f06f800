"""Pure game rules: one module per game plus the registry below.

Public API::

    from protocol.games import new_game, GAMES, game_spec
    state = new_game("connect4")
    state = state.play(3)
    state.legal_moves(), state.to_move, state.outcome(), state.render()
    game_spec("connect4").move_help          # everything else about a game

A game is one registration: its module defines a ``GameState`` subclass and
a ``GameSpec`` (``protocol.games.spec``) and adds that spec to ``_REGISTRY``
below; ``docs/architecture.md`` says what else a new game brings (its kernel,
evaluation, viewer board). Asking for a game that is not registered raises
``UnknownGameError`` everywhere.
"""

from __future__ import annotations

from protocol.errors import IllegalMoveError, PositionDecodeError, UnknownGameError
from protocol.games import connect4, othello, tictactoe, uttt
from protocol.games.base import PLAYER_SYMBOLS, Fault, GameState, Outcome, Termination
from protocol.games.connect4 import Connect4State
from protocol.games.othello import OthelloState
from protocol.games.spec import GameSpec, SuiteRecipe, Symmetry
from protocol.games.tictactoe import TicTacToeState
from protocol.games.uttt import QuickUltimateTicTacToeState, UltimateTicTacToeState


def _registry(*specs: GameSpec) -> dict[str, GameSpec]:
    """``specs`` by name; two games or two opening suites of one name are a mistake."""
    registry: dict[str, GameSpec] = {}
    suites: set[str] = set()
    for spec in specs:
        if spec.name in registry:
            raise ValueError(f"game {spec.name!r} is registered twice")
        if suites & set(spec.suite_names):
            raise ValueError(f"{spec.name}: an opening suite name is taken by another game")
        registry[spec.name] = spec
        suites.update(spec.suite_names)
    return registry


_REGISTRY: dict[str, GameSpec] = _registry(
    connect4.SPEC,
    tictactoe.SPEC,
    uttt.SPEC,
    uttt.QUICK_SPEC,
    othello.SPEC,
)
"""Every game, in the order lists show them: one line per game."""

GAMES: tuple[str, ...] = tuple(_REGISTRY)
"""Names of every registered game."""


def game_spec(name: str) -> GameSpec:
    """The registration of the game called ``name``; ``UnknownGameError`` lists the valid names."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownGameError(f"unknown game {name!r}; valid games: {', '.join(GAMES)}") from None


def game_specs() -> tuple[GameSpec, ...]:
    """Every registered game's spec, in ``GAMES`` order."""
    return tuple(_REGISTRY.values())


def get_game_class(name: str) -> type[GameState]:
    """The ``GameState`` class called ``name``; ``UnknownGameError`` lists the valid names."""
    return game_spec(name).rules


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
    "GameSpec",
    "GameState",
    "IllegalMoveError",
    "OthelloState",
    "Outcome",
    "PositionDecodeError",
    "QuickUltimateTicTacToeState",
    "SuiteRecipe",
    "Symmetry",
    "Termination",
    "TicTacToeState",
    "UltimateTicTacToeState",
    "UnknownGameError",
    "decode_state",
    "game_spec",
    "game_specs",
    "get_game_class",
    "new_game",
]
