"""Connect Four values by brute force, and seeded games with known blunders, for the tests.

``perfect_value`` is plain negamax over the protocol's rules, no pruning,
memoised per position: slow but obviously right, so only endgames (28 or
more stones) are given to it. It measures a position in plies to the end
(``Perfect``), not in Pons' scores, so the tests derive the scores from their
definition (``pons_score``) instead of from the code under test.

``endgame_games`` makes games that reach 28 stones by seeded quiet random
play (no move that wins or hands the opponent a win at once, so the games
last), from a position where some move loses value, and then go on with, at
each move, the best move or a random one: the random ones lose value often
enough to give blunders and kept moves alike.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from protocol.games import Connect4State

ENDGAME_STONES = 28


@dataclass(frozen=True, slots=True)
class Perfect:
    """A position's value for the side to move: 1 win, 0 draw, -1 loss, and for a win or a
    loss the plies until the winning move with perfect play (1: the side to move wins now)."""

    outcome: int
    plies: int


def _goodness(value: Perfect) -> int:
    """Order values as a player prefers them: quick wins, wins, draws, slow losses, losses."""
    return 0 if value.outcome == 0 else value.outcome * (100 - value.plies)


def move_value(state: Connect4State, move: int, memo: dict[tuple[int, int], Perfect]) -> Perfect:
    """The value of playing ``move`` for the side to move in ``state``."""
    child = state.play(move)
    ended = child.outcome()
    if ended is not None:
        return Perfect(0, 0) if ended.winner is None else Perfect(1, 1)
    reply = perfect_value(child, memo)
    return Perfect(-reply.outcome, reply.plies + 1 if reply.outcome else 0)


def perfect_value(state: Connect4State, memo: dict[tuple[int, int], Perfect]) -> Perfect:
    """The value of the unfinished ``state`` for its side to move, by full-width negamax."""
    found = memo.get(state.boards)
    if found is None:
        found = max((move_value(state, move, memo) for move in state.legal_moves()), key=_goodness)
        memo[state.boards] = found
    return found


def pons_score(value: Perfect, stones: int) -> int:
    """Pons' score of ``value`` in a position with ``stones`` stones, from its definition:
    the winner's stone count when the winning stone drops decides it."""
    if value.outcome == 0:
        return 0
    winning_ply = stones + value.plies - 1
    winner_stones = winning_ply // 2 + 1
    return value.outcome * (22 - winner_stones)


def _quiet(state: Connect4State, move: int) -> bool:
    """Whether ``move`` neither ends the game nor lets the opponent win with the next move."""
    child = state.play(move)
    if child.outcome() is not None:
        return False
    return all(child.play(reply).outcome() is None for reply in child.legal_moves())


def endgame_games(seed: int, count: int, best_share: float = 0.5) -> list[tuple[int, ...]]:
    """``count`` finished games: random play to ``ENDGAME_STONES`` stones, then at each move
    the best move with probability ``best_share``, else a random one."""
    rng = random.Random(seed)
    games: list[tuple[int, ...]] = []
    while len(games) < count:
        state = Connect4State.initial()
        while state.ply < ENDGAME_STONES and state.outcome() is None:
            quiet = [m for m in state.legal_moves() if _quiet(state, m)]
            state = state.play(rng.choice(quiet or state.legal_moves()))
        if state.outcome() is not None:
            continue
        memo: dict[tuple[int, int], Perfect] = {}
        best = perfect_value(state, memo)
        if all(move_value(state, m, memo).outcome == best.outcome for m in state.legal_moves()):
            continue  # the choice must matter at least once
        while state.outcome() is None:
            moves = state.legal_moves()
            if rng.random() < best_share:
                best = perfect_value(state, memo)
                moves = [m for m in moves if move_value(state, m, memo) == best]
            state = state.play(rng.choice(moves))
        games.append(state.moves)
    return games
