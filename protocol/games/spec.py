"""A game's registration: its rules and everything else that is particular to it.

Each game module defines one ``GameSpec`` next to its rules, and
``protocol.games`` lists it once in ``_REGISTRY`` (as python-chess lists a
variant class in ``VARIANTS``). Every other part reads the game from there
instead of keeping its own list: the JSON Schemas' game names, the move help
of ``arena play``, the words the viewer and the CLI use for an ending, the
opening suites and the symmetries they are built with, the viewer's board
module. What needs NumPy or Numba (the compiled kernel, the heuristic
evaluation) is registered by the same name on the ``bots`` side, which may
import ``protocol`` but not the other way round. See ``docs/architecture.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from protocol.games.base import GameState, Termination

Symmetry = Callable[[int], int]
"""A board symmetry as a map on move numbers: applied to every move of a line of play,
it gives the line that reaches the symmetric position."""

_BOARD_MODULE = re.compile(r"[a-z][a-z0-9_]*")
REFEREE_TERMINATIONS = frozenset(
    {
        Termination.TIMEOUT,
        Termination.ILLEGAL_MOVE,
        Termination.DISCONNECT,
        Termination.RESIGN,
        Termination.ABORTED,
    }
)
"""The endings the referee decides, the same words in every game; the rules decide the rest."""


def identity(move: int) -> int:
    """The symmetry every board has: each move is itself."""
    return move


@dataclass(frozen=True, slots=True)
class SuiteRecipe:
    """A shipped opening suite of the game, and how ``arena.tournaments.suites`` makes it."""

    name: str
    """Tournaments name it ``builtin:NAME``; the file is ``arena/tournaments/suites/NAME.txt``."""
    plies: int
    """Every opening is this many moves from the initial position."""
    merge_symmetric: bool
    """Keep one opening per class of positions equal up to the game's ``symmetries``."""


@dataclass(frozen=True, slots=True, eq=False)
class GameSpec:
    """Everything game-specific that lives in ``protocol``: register one per game."""

    rules: type[GameState]
    """The ``GameState`` subclass; its ``name`` is the game's name everywhere."""
    move_help: str
    """What a move is in the protocol's numbering, for people typing one (``arena play``)."""
    terminations: Mapping[Termination, str]
    """Words for each ending this game's rules can reach: ``{Termination.LINE: "four in a
    row", Termination.DRAW: "board full"}`` (a test plays random games to check them)."""
    board: str
    """The viewer's board module: ``arena/live/static/js/boards/BOARD.js``."""
    symmetries: tuple[Symmetry, ...] = (identity,)
    """The board's symmetries as maps on move numbers, ``identity`` first."""
    suites: tuple[SuiteRecipe, ...] = ()
    """The opening suites shipped for this game."""
    balanced_suite: str | None = None
    """The suite (one of ``suites``) that ``arena ladder`` and rated ladder games start
    from; None: they start from the initial position."""
    win_reason: str = "{winner} completed a line"
    """The match record's reason for a win by the rules; ``{winner}`` is the winner's name."""
    draw_reason: str = "draw: the board is full"
    """The match record's reason for a draw by the rules."""

    def __post_init__(self) -> None:
        if not self.terminations:
            raise ValueError(f"{self.name}: no words for the endings of its rules")
        refereed = sorted(t.value for t in self.terminations if t in REFEREE_TERMINATIONS)
        if refereed:
            raise ValueError(f"{self.name}: the referee words its endings {', '.join(refereed)}")
        if not _BOARD_MODULE.fullmatch(self.board):
            raise ValueError(f"{self.name}: board module {self.board!r} is not a plain name")
        if not self.symmetries or self.symmetries[0] is not identity:
            raise ValueError(f"{self.name}: the first symmetry must be identity")
        if self.balanced_suite is not None and self.balanced_suite not in self.suite_names:
            raise ValueError(f"{self.name}: balanced suite {self.balanced_suite!r} is not shipped")

    @property
    def name(self) -> str:
        """The game's registry name, e.g. ``"connect4"``."""
        return self.rules.name

    @property
    def suite_names(self) -> tuple[str, ...]:
        """The names of the shipped suites."""
        return tuple(recipe.name for recipe in self.suites)

    def suite(self, name: str) -> SuiteRecipe:
        """The recipe of the shipped suite ``name`` (``KeyError`` when there is none)."""
        for recipe in self.suites:
            if recipe.name == name:
                return recipe
        raise KeyError(f"{self.name} ships no opening suite {name!r}")

    def reason(self, winner: str | None) -> str:
        """The match record's one-line reason for an ending by the rules; ``winner`` is the
        winning player's name, None for a draw."""
        return self.draw_reason if winner is None else self.win_reason.format(winner=winner)

    def termination_text(self, termination: Termination) -> str:
        """How an ending reads in this game: the rules' own words, else the referee's."""
        return self.terminations.get(termination) or termination.value.replace("_", " ")
