"""Heuristic strategies over ``bots.strategies.evaluation``: ``greedy`` and ``alphabeta``.

``greedy`` looks one ply ahead: it takes an immediate win, avoids moves that
let the opponent win at once (so it blocks), and otherwise plays the move
with the best static evaluation.

``alphabeta`` is negamax with alpha-beta pruning, iterative deepening within
``time_ms``, a transposition table (kept between moves in its worker) and move
ordering (the table's best move first, then centre first). It searches in a
one-process pool so the caller's event loop stays free (``workers=0``: in
the calling process).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any, ClassVar

from bots.budget import Budget
from bots.strategies.evaluation import Evaluation, evaluation_for
from bots.strategies.pool import SearchPool
from bots.strategies.pooled import PooledStrategy
from bots.strategy import SearchInfo, Strategy, StrategyOptionError
from protocol.games import GameState

WIN_SCORE = 1_000_000.0
"""Score of a won position; wins nearer the root score higher."""
_EXACT, _LOWER, _UPPER = 0, 1, 2
_TT_LIMIT = 2_000_000
_CLOCK_EVERY = 512


def _to_value(score: float) -> float:
    """Squash a search score into [-1, 1] for ``SearchInfo.value``."""
    if abs(score) >= WIN_SCORE - 1000:
        return math.copysign(1.0, score)
    return math.tanh(score / 100.0)


class GreedyStrategy(Strategy):
    """Best one-ply evaluation; wins now, never leaves an immediate loss it can avoid.

    One ply takes well under a millisecond, so it answers at once, whatever the budget.
    """

    kind: ClassVar[str] = "greedy"
    OPTIONS: ClassVar[dict[str, type]] = {"seed": int}

    def __init__(self, game: str, seed: int | None = None) -> None:
        super().__init__(game)
        self._evaluation = evaluation_for(game)
        self._rng = random.Random(seed)

    def _choose(self, state: GameState, budget: Budget) -> int:
        start = time.perf_counter()
        me = state.to_move
        scored: list[tuple[float, int]] = []
        for move in state.legal_moves():
            after = state.play(move)
            outcome = after.outcome()
            if outcome is not None:
                score = (
                    0.0
                    if outcome.winner is None
                    else (WIN_SCORE if outcome.winner == me else -WIN_SCORE)
                )
            elif _has_winning_reply(after):
                score = -WIN_SCORE
            else:
                score = -self._evaluation.evaluate(after)
            scored.append((score, move))
        best = max(score for score, _ in scored)
        move = self._rng.choice([m for score, m in scored if score == best])
        self.last_search = SearchInfo(
            simulations=len(scored),
            elapsed_s=time.perf_counter() - start,
            value=_to_value(best),
            depth=1,
            counts="nodes",
        )
        return move


def _has_winning_reply(state: GameState) -> bool:
    me = state.to_move
    for move in state.legal_moves():
        outcome = state.play(move).outcome()
        if outcome is not None and outcome.winner == me:
            return True
    return False


class _Timeout(Exception):
    """Raised inside the search when the clock runs out."""


class AlphaBetaSearch:
    """Negamax alpha-beta with iterative deepening and a transposition table."""

    def __init__(self, evaluation: Evaluation) -> None:
        self.evaluation = evaluation
        self.table: dict[Any, tuple[int, float, int, int, bool]] = {}
        self.nodes = 0
        self._deadline = math.inf
        self._horizon = False

    def search(
        self, state: GameState, time_s: float | None, max_depth: int | None
    ) -> tuple[int, float, int, int]:
        """Best move, its score, the deepest completed depth, and nodes searched."""
        if len(self.table) > _TT_LIMIT:
            self.table.clear()
        start = time.perf_counter()
        self._deadline = math.inf if time_s is None else start + time_s
        self.nodes = 0
        moves = self.evaluation.order(state, state.legal_moves())
        best_move, best_score, depth_done = moves[0], 0.0, 0
        limit = max_depth if max_depth is not None else 1000
        for depth in range(1, limit + 1):
            self._horizon = False
            try:
                score, move = self._root(state, depth)
            except _Timeout:
                break
            best_move, best_score, depth_done = move, score, depth
            if not self._horizon or abs(score) >= WIN_SCORE - 1000:
                break  # the tree was searched to the end: deeper cannot change it
        return best_move, best_score, depth_done, self.nodes

    def _root(self, state: GameState, depth: int) -> tuple[float, int]:
        moves = self._ordered(state)
        alpha, beta = -math.inf, math.inf
        best_move = moves[0]
        for move in moves:
            score = -self._negamax(state.play(move), depth - 1, -beta, -alpha, 1)
            if score > alpha:
                alpha, best_move = score, move
        self.table[self.evaluation.key(state)] = (depth, alpha, _EXACT, best_move, False)
        return alpha, best_move

    def _ordered(self, state: GameState) -> list[int]:
        moves = self.evaluation.order(state, state.legal_moves())
        entry = self.table.get(self.evaluation.key(state))
        if entry is not None and entry[3] in moves:
            moves.remove(entry[3])
            moves.insert(0, entry[3])
        return moves

    def _negamax(self, state: GameState, depth: int, alpha: float, beta: float, ply: int) -> float:
        self.nodes += 1
        if self.nodes % _CLOCK_EVERY == 0 and time.perf_counter() > self._deadline:
            raise _Timeout
        outcome = state.outcome()
        if outcome is not None:
            if outcome.winner is None:
                return 0.0
            # Othello's side to move can have won (on discs); elsewhere a decided game is a loss.
            won = WIN_SCORE - ply
            return won if outcome.winner == state.to_move else -won
        if depth == 0:
            self._horizon = True
            return self.evaluation.evaluate(state)
        key = self.evaluation.key(state)
        entry = self.table.get(key)
        alpha_orig = alpha
        if entry is not None and entry[0] >= depth:
            _, value, flag, _, exact = entry
            if not exact:
                self._horizon = True
            if flag == _EXACT:
                return value
            if flag == _LOWER:
                alpha = max(alpha, value)
            elif flag == _UPPER:
                beta = min(beta, value)
            if alpha >= beta:
                return value
        # Track whether this subtree reached the depth horizon, for the table.
        outer_horizon = self._horizon
        self._horizon = False
        best = -math.inf
        best_move = -1
        for move in self._ordered(state):
            score = -self._negamax(state.play(move), depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best, best_move = score, move
            if score > alpha:
                alpha = score
            if alpha >= beta:
                break
        flag = _UPPER if best <= alpha_orig else _LOWER if best >= beta else _EXACT
        self.table[key] = (depth, best, flag, best_move, not self._horizon)
        self._horizon = self._horizon or outer_horizon
        return best


_worker_searches: dict[str, AlphaBetaSearch] = {}


def alphabeta_task(
    state: GameState, time_s: float | None, max_depth: int | None
) -> tuple[int, float, int, int, float]:
    """One alpha-beta search (the table persists per game in this process)."""
    search = _worker_searches.get(state.name)
    if search is None:
        search = _worker_searches[state.name] = AlphaBetaSearch(evaluation_for(state.name))
    start = time.perf_counter()
    move, score, depth, nodes = search.search(state, time_s, max_depth)
    return move, score, depth, nodes, time.perf_counter() - start


class AlphaBetaStrategy(PooledStrategy):
    """Iterative-deepening alpha-beta within ``time_ms`` (and/or to ``depth``).

    The budget's deadline stops the deepening too; the deepest completed depth's move is played.
    """

    kind: ClassVar[str] = "alphabeta"
    OPTIONS: ClassVar[dict[str, type]] = {"time_ms": float, "depth": int, "workers": int}

    def __init__(
        self,
        game: str,
        time_ms: float | None = None,
        depth: int | None = None,
        workers: int = 1,
    ) -> None:
        super().__init__(game)
        evaluation_for(game)  # a game without one is refused here, not in the search worker
        if time_ms is None and depth is None:
            time_ms = 100.0
        if time_ms is not None and time_ms <= 0:
            raise StrategyOptionError("alphabeta: time_ms must be > 0")
        if depth is not None and depth < 1:
            raise StrategyOptionError("alphabeta: depth must be >= 1")
        if workers not in (0, 1):
            raise StrategyOptionError("alphabeta: workers must be 0 (in process) or 1")
        self.time_ms = time_ms
        self.depth = depth
        self.workers = workers
        self._pool = SearchPool(1) if workers == 1 else None

    def describe(self) -> str:
        """E.g. ``alphabeta(time_ms=100)``."""
        budget = f"time_ms={self.time_ms:g}" if self.time_ms is not None else f"depth={self.depth}"
        return f"alphabeta({budget})"

    def _worker(self) -> Callable[..., Any]:
        return alphabeta_task

    def _task_args(self, state: GameState, budget: Budget) -> list[tuple[Any, ...]]:
        configured = None if self.time_ms is None else self.time_ms / 1000.0
        return [(state, budget.cap_s(configured), self.depth)]

    def _finish(
        self, results: list[tuple[int, float, int, int, float]], state: GameState, start: float
    ) -> int:
        move, score, depth, nodes, _ = results[0]
        self.last_search = SearchInfo(
            simulations=nodes,
            elapsed_s=time.perf_counter() - start,
            value=_to_value(score),
            depth=depth,
            counts="nodes",
        )
        return move

