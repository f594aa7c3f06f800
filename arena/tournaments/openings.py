"""Opening suites: the positions a tournament's game pairs start from.

A suite is a text file, one opening per line: the moves from the initial
position, separated by spaces or commas (``3 4`` is Connect Four's centre
column, then the column to its right). ``#`` starts a comment; blank lines
are skipped; an empty opening is written ``-``. The suites shipped with the
arena are named ``builtin:NAME`` (``SUITES``); ``docs/tournaments.md`` says
how each was chosen, and ``arena.tournaments.suites`` generates them::

    suite = load_openings("builtin:connect4-2ply", "connect4")
    suite = load_openings("my-book.txt", "connect4")     # any file of that form
    suite = load_openings("none", "tictactoe")           # one opening: the initial position
    suite = balanced_suite("connect4")                   # the game's own suite (BALANCED_SUITES)

Which suites ship, and which one is a game's balanced suite, is part of the
game's registration (``protocol.games.GameSpec.suites`` and ``balanced_suite``).

Every line is checked: a move that is not legal there, or an opening that
ends the game, is a ``TournamentError`` naming the file and line.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from arena.errors import TournamentError
from protocol.errors import GameError
from protocol.games import game_specs, new_game

SUITE_DIR = Path(__file__).resolve().parent / "suites"
"""Where the shipped suites live (``NAME.txt``)."""
BUILTIN = "builtin:"
NONE = "none"

SUITES: dict[str, str] = {recipe.name: spec.name for spec in game_specs() for recipe in spec.suites}
"""The shipped suites and the game each is for (from the game registry)."""

BALANCED_SUITES: dict[str, str] = {
    spec.name: BUILTIN + spec.balanced_suite
    for spec in game_specs()
    if spec.balanced_suite is not None
}
"""Each game's balanced suite: what ``arena ladder`` and rated ladder matches
(``arena.play.rated_openings``) start from; a game not named starts from its
initial position."""

MAX_OPENINGS = 100_000
_SEPARATORS = re.compile(r"[\s,]+")

Opening = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class OpeningSuite:
    """Checked openings and where they came from."""

    source: str
    """``builtin:NAME``, the file's name, or ``none``."""
    openings: tuple[Opening, ...]


def load_openings(source: str, game: str) -> OpeningSuite:
    """The suite named by ``source`` (see the module docstring), checked for ``game``."""
    if source == NONE:
        return OpeningSuite(NONE, ((),))
    if source.startswith(BUILTIN):
        name = source.removeprefix(BUILTIN)
        suite_game = SUITES.get(name)
        if suite_game is None:
            raise TournamentError(
                f"no built-in opening suite {name!r}; suites: "
                + ", ".join(f"builtin:{n}" for n in SUITES)
            )
        if suite_game != game:
            raise TournamentError(f"opening suite {source} is for {suite_game}, not {game}")
        path = SUITE_DIR / f"{name}.txt"
    else:
        path = Path(source).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TournamentError(f"cannot read opening file {source}: {exc}") from None
    return OpeningSuite(source, parse_openings(text, game, source))


@functools.cache
def balanced_suite(game: str) -> OpeningSuite:
    """The suite of ``BALANCED_SUITES`` for ``game`` (``none`` when it has none), read once."""
    return load_openings(BALANCED_SUITES.get(game, NONE), game)


def parse_openings(text: str, game: str, where: str = "openings") -> tuple[Opening, ...]:
    """The openings in ``text`` (one per line), each checked for ``game``."""
    openings: list[Opening] = []
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        opening = _parse_line(content, f"{where}:{number}")
        check_opening(opening, game, f"{where}:{number}")
        openings.append(opening)
        if len(openings) > MAX_OPENINGS:
            raise TournamentError(f"{where}: more than {MAX_OPENINGS} openings")
    if not openings:
        raise TournamentError(f"{where}: no openings in the file")
    return tuple(openings)


def _parse_line(content: str, where: str) -> Opening:
    if content == "-":
        return ()
    try:
        return tuple(int(token) for token in _SEPARATORS.split(content) if token)
    except ValueError:
        raise TournamentError(f"{where}: not a list of moves: {content!r}") from None


def check_opening(opening: Opening, game: str, where: str) -> None:
    """Raise ``TournamentError`` unless ``opening`` is legal in ``game`` and leaves it open."""
    state = new_game(game)
    for ply, move in enumerate(opening):
        try:
            state = state.play(move)
        except GameError as exc:
            raise TournamentError(f"{where}: illegal move {move} at ply {ply}: {exc}") from None
    if state.outcome() is not None:
        raise TournamentError(f"{where}: the opening ends the game")


def format_opening(opening: Opening) -> str:
    """One line of a suite file (``-`` for the initial position)."""
    return " ".join(map(str, opening)) if opening else "-"
