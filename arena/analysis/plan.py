"""Which positions of a stored game to solve, and the analysis rows their values make.

The move at ply ``k`` needs the value of the position before it (``k``
moves played) and of the one after it (``k + 1``), unless it ended the game,
whose value the rules give; and, so that a replay can put each candidate's
solved value beside the bot's search, the value after every other legal
move too (``candidates``). Positions are keyed so that transpositions and
mirror images (which have the same value) are solved once.

A move's verdict compares the mover's outcome (1 win, 0 draw, -1 loss)
before it and after it: a move that lowers it (a win into a draw or a loss,
a draw into a loss) is a blunder. Perfect play never raises it.

Whether the choice mattered (some legal move has another outcome than the
position) decides whether a move is judged at all: in a lost position, or
where every move keeps the value, any move is as good as the best. A blunder
shows that it mattered; a move that kept the value needs the other moves'
values too (``candidate_positions``, the second round of solves, which also
gives a replay each candidate's value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.analysis.values import UNKNOWN, Solved, line_score
from arena.store.analysis import AnalysisTarget, CandidateValue, MoveAnalysisRecord
from protocol.errors import GameError
from protocol.games import Connect4State

PositionKey = tuple[int, int]
"""A position up to mirror symmetry: the smaller of its and its mirror image's bitboards."""


@dataclass(frozen=True, slots=True)
class Position:
    """A position to solve: its ``key`` and its moves in Pons' notation (``"4453"``)."""

    key: PositionKey
    notation: str


def choice_matters(before: Solved, moves: Sequence[Solved]) -> bool | None:
    """Whether some of ``moves`` (the values of every legal move in a position worth ``before``,
    all from the mover's side) has a lower outcome than ``before``; None when not known."""
    if before.outcome is None:
        return None
    if before.outcome == -1:
        return False  # every move loses: none can lose more
    outcomes = [move.outcome for move in moves]
    if any(o is not None and o < before.outcome for o in outcomes):
        return True
    return None if None in outcomes else False


def verdict(
    ply: int,
    before: Solved,
    after: Solved,
    budget_ms: int,
    others: Sequence[Solved],
    candidates: tuple[CandidateValue, ...] = (),
) -> MoveAnalysisRecord:
    """The analysis row of the move at ``ply``; ``before`` and ``after`` from the mover's side,
    ``others`` the values of every move not played (``UNKNOWN`` where not solved),
    ``candidates`` every legal move's value for the replay (empty: not stored)."""
    blunder = None
    if before.outcome is not None and after.outcome is not None:
        blunder = after.outcome < before.outcome
    matters = choice_matters(before, [after, *others])
    return MoveAnalysisRecord(
        ply,
        before.score,
        after.score,
        before.outcome,
        after.outcome,
        blunder,
        budget_ms,
        choice_matters=matters,
        candidates=candidates,
    )


def _played_value(state: Connect4State, ply: int, solved: Solved | None) -> Solved:
    """The value, for the mover at ``ply``, of ``state`` reached by its move: from the rules
    when the move ended the game, else ``solved`` (the value for the side to move there)."""
    ended = state.outcome()
    if ended is None:
        return UNKNOWN if solved is None else solved.negated()
    if ended.winner is None:
        return Solved(0, 0)
    return Solved(1, line_score(ply))


Candidate = tuple[int, int]
"""A position after one candidate move: (the ply it answers, the move)."""


class GamePlan:
    """The positions one match's unsettled moves need, and their rows once solved.

    Stored moves are replayed with the game's rules; an illegal one (which
    the referee never stores) ends what can be analysed.
    """

    def __init__(self, target: AnalysisTarget) -> None:
        self.match_id = target.match_id
        states = [Connect4State.initial()]
        mirrors = [Connect4State.initial()]
        for move in target.moves:
            try:
                states.append(states[-1].play(move))
                mirrors.append(mirrors[-1].play(6 - move))
            except GameError:
                break
        self._states = states
        self._mirrors = mirrors
        self._played = target.moves
        self._keys = [min(s.boards, m.boards) for s, m in zip(states, mirrors, strict=True)]
        self.todo = [ply for ply in range(len(states) - 1) if ply not in target.settled]
        """The plies to (re)analyse."""

    def positions(self) -> dict[int, Position]:
        """The unfinished positions to solve, by the number of moves played before them."""
        wanted = {k for ply in self.todo for k in (ply, ply + 1)}
        return {
            k: Position(self._keys[k], self._states[k].notation())
            for k in sorted(wanted)
            if self._states[k].outcome() is None
        }

    def candidate_positions(self) -> dict[Candidate, Position]:
        """The unfinished positions after every other legal move of ``todo``'s plies: their
        values tell whether the choice mattered and stand beside the search in a replay."""
        out = {}
        for ply in self.todo:
            state, played = self._states[ply], self._played[ply]
            for move in state.legal_moves():
                after = state.play(move)
                if move != played and after.outcome() is None:
                    key = min(after.boards, self._mirrors[ply].play(6 - move).boards)
                    out[(ply, move)] = Position(key, after.notation())
        return out

    def rows(
        self,
        solved: Mapping[int, Solved],
        budget_ms: int,
        candidates: Mapping[Candidate, Solved] | None = None,
    ) -> list[MoveAnalysisRecord]:
        """The rows of ``todo`` from the values of ``positions()`` and, when given, of
        ``candidate_positions()`` (the side to move's)."""
        rows = []
        for ply in self.todo:
            after = _played_value(self._states[ply + 1], ply, solved.get(ply + 1))
            state, played = self._states[ply], self._played[ply]
            values = {
                move: after
                if move == played
                else _played_value(state.play(move), ply, (candidates or {}).get((ply, move)))
                for move in state.legal_moves()
            }
            others = [value for move, value in values.items() if move != played]
            stored: tuple[CandidateValue, ...] = ()
            if candidates is not None:
                stored = tuple(CandidateValue(m, v.outcome, v.score) for m, v in values.items())
            rows.append(verdict(ply, solved[ply], after, budget_ms, others, stored))
        return rows
