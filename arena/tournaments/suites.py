"""How the shipped opening suites are made: ``python -m arena.tournaments.suites`` writes them.

A suite after ``n`` plies holds one opening per class of positions reachable
in ``n`` plies, where positions that are the same up to the board's symmetry
(Connect Four's mirror; the square's eight symmetries in Ultimate
Tic-Tac-Toe, applied to the boards and to the cells alike) or reached by
transposed moves form one class: they test exactly the same thing. Each class
is written as the smallest move sequence (in lexicographic order) reaching
one of its positions. ``connect4-2ply`` keeps every position after 2 plies
as the task of playing both sides of each asks (mirror images included: 49).

An opening whose result is foregone would add a pair that says nothing about
strength, so a position in which either side can force a win within
``FORCED_DEPTH`` plies is left out (none is, after so few plies of these
games, and the generator checks it). The pure rules are all this uses.

Each game's registration (``protocol.games.GameSpec``) lists its suites with
their recipes (plies, whether symmetric positions merge) and its symmetries.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterator, Sequence

from arena.tournaments.openings import SUITE_DIR, SUITES, Opening, format_opening
from protocol.games import GameState, Symmetry, game_spec, new_game
from protocol.games.spec import identity

FORCED_DEPTH = 3
"""A position decided by force within this many plies is not an opening."""


def sequences(state: GameState, plies: int) -> Iterator[tuple[Opening, GameState]]:
    """Every legal move sequence of ``plies`` moves from ``state`` (ascending order)."""
    if plies == 0:
        yield (), state
        return
    for move in state.legal_moves():
        after = state.play(move)
        if after.outcome() is not None:
            continue
        for rest, final in sequences(after, plies - 1):
            yield (move, *rest), final


def forced_result(state: GameState, depth: int) -> int:
    """+1 if the side to move forces a win within ``depth`` plies, -1 a loss, else 0."""
    outcome = state.outcome()
    if outcome is not None:
        return 0 if outcome.winner is None else -1  # the previous mover has just won
    if depth == 0:
        return 0
    best = -1
    for move in state.legal_moves():
        value = -forced_result(state.play(move), depth - 1)
        if value == 1:
            return 1
        best = max(best, value)
    return best


def position_key(game: str, opening: Opening, symmetries: Sequence[Symmetry]) -> str:
    """The position after ``opening``, the same for every symmetric image of it."""
    start = new_game(game)
    return min(start.play_all([sym(m) for m in opening]).encode() for sym in symmetries)


def make_suite(game: str, plies: int, merge_symmetric: bool) -> list[Opening]:
    """The openings of the suite recipe (see the module docstring)."""
    symmetries = game_spec(game).symmetries if merge_symmetric else (identity,)
    seen: set[str] = set()
    suite: list[Opening] = []
    for opening, state in sequences(new_game(game), plies):
        key = position_key(game, opening, symmetries)
        if key in seen:
            continue
        seen.add(key)
        if forced_result(state, FORCED_DEPTH) == 0:
            suite.append(opening)
    return suite


def suite_text(name: str) -> str:
    """The shipped file ``suites/NAME.txt`` as this module makes it."""
    game = SUITES[name]
    recipe = game_spec(game).suite(name)
    plies, merge = recipe.plies, recipe.merge_symmetric
    suite = make_suite(game, plies, merge)
    how = "up to symmetry and transposition" if merge else "every one"
    header = [
        f"# {name}: {game} openings after {plies} plies, {how}; {len(suite)} openings.",
        "# Made by `python -m arena.tournaments.suites` (see docs/tournaments.md).",
    ]
    return "\n".join(itertools.chain(header, map(format_opening, suite))) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write every shipped suite (``SUITES``) into ``SUITE_DIR`` (or ``--out``)."""
    parser = argparse.ArgumentParser(description="Write the shipped opening suites.")
    parser.add_argument("--out", default=str(SUITE_DIR), help="directory to write into")
    args = parser.parse_args(argv)
    for name in SUITES:
        path = f"{args.out}/{name}.txt"
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(suite_text(name))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
