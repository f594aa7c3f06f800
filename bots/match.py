"""Offline matches: strategies play each other with no network.

``play_match`` plays ``games`` games, swapping colours every game, from
random openings (one per colour-swapped pair) drawn from ``seed``, and
returns a ``MatchResult`` with the score and the per-pair results. The Elo
difference and its interval are the arena's (``arena.stats.elo_interval``):
``bots`` imports only ``protocol``, so the ``bots`` command gets that line from
the arena's CLI layer (``arena.cli.bots_command``).

Without a time control every move is chosen with ``Budget.UNLIMITED`` (the
strategies' own limits alone). With one, each player has a clock as in the
arena (a per-move limit plus a bank that pays for overruns, no network):
every move gets ``Budget.for_turn`` from it, and a move that takes longer
than its time left loses the game by ``timeout``. A strategy that raises
``Forfeit`` (an engine fault) loses the game by ``resign``, its reason kept
in ``GameRecord.reason``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace

from bots.budget import Budget
from bots.strategy import Forfeit, Strategy, make_strategy_from_spec
from protocol.games import GameState, Outcome, Termination, new_game
from protocol.messages import TimeControl


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One finished game: who played which colour, the moves and the outcome."""

    first: int
    """Index (in the match) of the strategy that moved first."""
    moves: tuple[int, ...]
    outcome: Outcome
    final: GameState
    """The last position: the finished game, or where a player ran out of time."""
    reason: str | None = None
    """Why the game ended off the board: a forfeit's one-line reason (None: by the rules)."""

    def score(self, strategy: int) -> float:
        """Points of match strategy ``strategy`` (0 or 1) in this game."""
        colour = 0 if strategy == self.first else 1
        return self.outcome.score(colour)


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The games of a two-strategy match and their totals."""

    game: str
    names: tuple[str, str]
    games: tuple[GameRecord, ...]

    def wins(self, strategy: int) -> int:
        """Games won by ``strategy`` (0 or 1)."""
        return sum(1 for g in self.games if g.score(strategy) == 1.0)

    def draws(self) -> int:
        """Drawn games."""
        return sum(1 for g in self.games if g.outcome.winner is None)

    def points(self, strategy: int) -> float:
        """Total points of ``strategy``."""
        return sum(g.score(strategy) for g in self.games)

    def score_rate(self, strategy: int = 0) -> float:
        """Points per game of ``strategy``."""
        return self.points(strategy) / len(self.games) if self.games else 0.5

    def scores(self, strategy: int = 0) -> list[float]:
        """``strategy``'s score (1, 0.5 or 0) in each game, in order."""
        return [g.score(strategy) for g in self.games]

    def pair_scores(self, strategy: int = 0) -> list[float]:
        """``strategy``'s total (0 to 2) over each complete colour-swapped pair of games.

        Games ``2k`` and ``2k + 1`` share an opening with colours swapped; an odd
        last game belongs to no pair.
        """
        scores = self.scores(strategy)
        return [scores[i] + scores[i + 1] for i in range(0, len(scores) - 1, 2)]

    def summary(self) -> str:
        """A few lines: W/D/L and score per strategy."""
        lines = []
        for i in (0, 1):
            lines.append(
                f"{self.names[i]:<40} W {self.wins(i):>4}  D {self.draws():>4}  "
                f"L {self.wins(1 - i):>4}  score {self.score_rate(i):6.1%}"
            )
        return "\n".join(lines)


def random_opening(game: str, plies: int, rng: random.Random) -> tuple[int, ...]:
    """``plies`` uniformly random moves from the start that do not end the game."""
    for _ in range(100):
        state = new_game(game)
        moves = []
        for _ in range(plies):
            if state.is_over():
                break
            move = rng.choice(state.legal_moves())
            state = state.play(move)
            moves.append(move)
        if not state.is_over():
            return tuple(moves)
    return ()


class OfflineClock:
    """Both players' clocks under one time control, measured on ``time.monotonic()``."""

    def __init__(self, time_control: TimeControl) -> None:
        self.time_control = time_control
        self.bank_ms = [float(time_control.bank_ms)] * 2

    def budget(self, player: int, now: float) -> Budget:
        """The budget of ``player``'s move starting ``now``."""
        bank = self.bank_ms[player]
        return Budget.for_turn(
            self.time_control.move_ms + bank, bank, now, opponent_bank_ms=self.bank_ms[1 - player]
        )

    def charge(self, player: int, spent_ms: float) -> bool:
        """Take a move's overrun from the bank; False when the move ran out of time."""
        overrun = spent_ms - self.time_control.move_ms
        if overrun > self.bank_ms[player]:
            return False
        self.bank_ms[player] -= max(0.0, overrun)
        return True


def play_game(
    game: str,
    first: Strategy,
    second: Strategy,
    opening: Sequence[int] = (),
    time_control: TimeControl | None = None,
) -> GameRecord:
    """Play one game (``first`` moves first) after ``opening``, on a clock if ``time_control``."""
    state = new_game(game).play_all(tuple(opening))
    players = (first, second)
    clock = None if time_control is None else OfflineClock(time_control)
    outcome = state.outcome()
    reason = None
    while outcome is None:
        mover = state.to_move
        try:
            if clock is None:
                move = players[mover].choose_move(state)
            else:
                started = time.monotonic()
                move = players[mover].choose_move(state, clock.budget(mover, started))
                if not clock.charge(mover, (time.monotonic() - started) * 1000.0):
                    outcome = Outcome(1 - mover, Termination.TIMEOUT)
                    break
        except Forfeit as exc:
            # As in the arena: the forfeiting player resigns this game, saying why.
            outcome, reason = Outcome(1 - mover, Termination.RESIGN), str(exc)
            break
        state = state.play(move)
        outcome = state.outcome()
    return GameRecord(0, state.moves, outcome, state, reason)


def play_match(
    game: str,
    strategies: Sequence[Strategy | str],
    games: int = 2,
    seed: int | None = None,
    opening_plies: int = 0,
    progress: Callable[[int, int, GameRecord, MatchResult], None] | None = None,
    time_control: TimeControl | None = None,
) -> MatchResult:
    """Play ``games`` games between two strategies (objects or text specs), swapping colours.

    Strategy 0 moves first in even-numbered games. Each colour-swapped pair
    starts from the same random opening of ``opening_plies`` moves drawn from
    ``seed``. Strategies given as specs are created here and closed after.
    ``time_control`` puts both players on a clock (see the module docstring).
    """
    if len(strategies) != 2:
        raise ValueError(f"a match needs two strategies, got {len(strategies)}")
    rng = random.Random(seed)
    with ExitStack() as stack:
        players: list[Strategy] = []
        for item in strategies:
            if isinstance(item, str):
                players.append(stack.enter_context(make_strategy_from_spec(item, game)))
            else:
                players.append(item)
        names = (players[0].describe(), players[1].describe())
        if names[0] == names[1]:
            names = (names[0] + " #1", names[1] + " #2")
        records: list[GameRecord] = []
        opening: tuple[int, ...] = ()
        for index in range(games):
            if index % 2 == 0:
                opening = random_opening(game, opening_plies, rng) if opening_plies else ()
            first = index % 2
            record = play_game(game, players[first], players[1 - first], opening, time_control)
            records.append(replace(record, first=first))
            if progress is not None:
                progress(index + 1, games, records[-1], MatchResult(game, names, tuple(records)))
        return MatchResult(game, names, tuple(records))
