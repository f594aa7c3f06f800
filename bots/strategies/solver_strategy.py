"""``solver``: perfect Connect Four play when the solver proves it in time, MCTS otherwise.

Each move, within ``time_ms`` (and ``max_nodes`` solver nodes, if given):

1. **Keep the value** (weak). Moves that end the game or hand the opponent
   an immediate win are settled without a search; an immediate win is
   played, and a move that is the only one not handing over a win is
   played at once (it keeps whatever the value is). Otherwise the moves
   race to be proven winning, one null-window search per question: a first
   round asks each move (in the solver's order: most threats created, then
   central) with a cap of ``QUICK_CAP`` nodes, which settles the cheap ones
   wherever they stand, then the moves left are asked in order without a
   cap. A winning move gives a won position; when none wins, the moves race
   the same way to be proven to hold a draw; none gives a loss.
2. **Best score** (strong). In a won or lost position the exact score is
   narrowed from the proven side and the first move reaching it is played:
   the fastest win, the slowest loss (a draw-keeping move is already
   optimal). If the budget runs out here, the step-1 move is played.
3. **Fallback**. If step 1 does not finish, the move comes from
   ``mcts-heavy`` (MCTS-Solver with heavy playouts), never one the partial
   solve proved worse than another move, nor one proven short of the best
   outcome another move may still reach (not winning while another may
   win, losing while another may draw).

The workers solve only where a proof can fit (``worker_roles``): with
fewer than ``SEARCH_ONLY_BELOW`` stones every worker runs the fallback
search for the whole move, after only the free settling of step 1. With
``workers=2`` (the default on machines with two or more cores) the first
warm process then solves for the whole ``time_ms``; the second searches
for the whole move below ``SECOND_SOLVES_FROM`` stones, and from there on
solves too, on one transposition table in shared memory (its uncapped
round rotated by one move), for ``SECOND_SHARE`` of the move before it
runs the MCTS fallback for the rest. The first to prove its move raises a
shared flag that stops the other at once. Sharing the table makes the
two solves help each other (a fixed budget of 900k nodes per process
proves 263-269 bench moves, against 255 for one process and 262 for two
with separate tables). With one
worker (or ``workers=0``, in process) solve and search run one after the
other, the MCTS getting what is left once the solver has used its
``solve_share`` of the move (0.6 by default), from ``SEARCH_ONLY_BELOW``
stones on. The table stays warm between moves.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from bots.budget import Budget
from bots.kernels import DEFAULT_MAX_NODES
from bots.kernels.c4solver import STOP, WORK_SIZE, memory_size
from bots.strategies.first_run import compile_notice
from bots.strategies.mcts import RootStats, merge_root_stats, search_task
from bots.strategies.pool import SearchPool
from bots.strategies.pooled import PooledStrategy
from bots.strategies.solver import (
    DEFAULT_TABLE_BITS,
    Solver,
    default_solver,
    forced_score,
    outcome_of,
    search_order,
    set_default_solver,
)
from bots.strategies.solver import warm_up as warm_up_solver
from bots.strategy import SearchInfo, StrategyOptionError
from protocol.games import Connect4State, GameState

DEFAULT_TIME_MS = 100.0
SOLVE_SHARE = {1: 0.6, 2: 1.0}
"""Default share of the move spent solving before the MCTS fallback, by worker count: with
two workers the other one searches all along, so the solver can keep the whole move."""
_EXPLORATION = math.sqrt(2)
_UNKNOWN = (-100, 100)
SECOND_SHARE = 0.85
"""With two workers: share of the move the second worker solves (on the shared table, its
uncapped round starting one move later) before it runs the MCTS fallback."""
SEARCH_ONLY_BELOW = 7
"""With fewer stones than this a proof rarely fits in a move of 100 ms (in positions from
``mcts-heavy`` self-play with 5 to 6 stones, one solver proves 3 in 60 within 90 ms): every
worker runs the MCTS fallback for the whole move."""
SECOND_SOLVES_FROM = 8
"""With two workers, the second solves only from this many stones on (with 7, one solver
proves no self-play position within 90 ms and 8 in 30 within 250 ms); below, it runs the
MCTS fallback for the whole move."""
QUICK_CAP = 16384
"""Node cap of the first round of ``_Root.race`` (every move asked once, cheaply)."""


@dataclass
class RootSolve:
    """What the solver proved about each move of the root (scores from the mover's view)."""

    bounds: dict[int, tuple[int, int]]
    move: int | None = None
    """The move to play when the solve kept the value (None: fall back)."""
    score: int | None = None
    """The root's exact score, when found."""
    outcome: int | None = None
    """1 win, 0 draw, -1 loss for the mover, when proven."""
    nodes: int = 0
    elapsed_s: float = 0.0

    def proofs(self) -> dict[int, int]:
        """-1 for every move to be pruned, 0 otherwise.

        Pruned: a move proven worse than another, and a move proven not to reach
        the best outcome another move still may: not to win while another may
        win, or to lose while another may draw. Where the choice matters the
        position is far more often won than drawn (a lost one offers no
        choice), so the search is best spent among the moves that can still win.
        """
        best_low = max(low for low, _ in self.bounds.values())
        best_high = max(high for _, high in self.bounds.values())
        floor = best_low if best_high < 0 else max(best_low, min(best_high, 1))
        return {m: (-1 if high < floor else 0) for m, (_, high) in self.bounds.items()}


class _Root:
    """The step-1 and step-2 searches of one position (see the module docstring)."""

    def __init__(
        self, solver: Solver, state: Connect4State, deadline: float, max_nodes: int | None
    ) -> None:
        self.solver = solver
        self.state = state
        self.deadline = deadline
        self.nodes_left = max_nodes
        self.moves = search_order(state)
        self.bounds = dict.fromkeys(self.moves, _UNKNOWN)
        self.nodes = 0
        self.rotate = 0
        self.caps: tuple[int | None, ...] = (QUICK_CAP, None)
        for move in self.moves:  # settle the moves that end the game or hand it over
            forced = forced_score(state, move)
            if forced is not None:
                self.bounds[move] = (forced, forced)

    def ask(self, move: int, threshold: int, cap: int | None = None) -> bool | None:
        """Whether ``move`` scores at least ``threshold`` (None: not answered within
        ``cap`` nodes or the budget)."""
        low, high = self.bounds[move]
        if low >= threshold:
            return True
        if high < threshold:
            return False
        limit = self.nodes_left
        if cap is not None:
            limit = cap if limit is None else min(cap, limit)
        if limit is not None and limit <= 0:
            return None
        found = self.solver.test_move(self.state, move, threshold, self.deadline, limit)
        self._spent(self.solver.last_nodes)
        if found is None:
            return None
        self.bounds[move] = (max(low, found[0]), min(high, found[1]))
        return found[0] >= threshold

    def out_of_budget(self) -> bool:
        """Whether the deadline has passed or the node budget is spent."""
        if self.nodes_left is not None and self.nodes_left <= 0:
            return True
        return self.solver.aborted or time.perf_counter() >= self.deadline

    def race(self, moves: list[int], threshold: int) -> int | bool | None:
        """The first of ``moves`` proven to score at least ``threshold``, False when every
        one is proven not to, None when the budget ran out first.

        One move's proof can cost a thousand times another's. A first round asks
        every move with a cap of ``QUICK_CAP`` nodes, which settles the cheap
        ones (quick wins, quick refutations) wherever they stand in the order;
        the moves left are then asked in order without a cap. A capped search
        that stops keeps the subtrees it finished in the table, so the second
        round does not start from nothing.
        """
        pending = list(moves)
        for cap in self.caps:
            if cap is None and self.rotate and pending:
                # Rotated: a second solving worker starts the uncapped round elsewhere.
                shift = self.rotate % len(pending)
                pending = pending[shift:] + pending[:shift]
            for move in list(pending):
                answer = self.ask(move, threshold, cap)
                if answer is None:
                    if self.out_of_budget() or cap is None:
                        return None
                    continue
                if answer:
                    return move
                pending.remove(move)
        return False

    def keep_value(self) -> tuple[int | None, int | None, bool]:
        """Step 1: a move, the value it is proven to keep (1, 0, -1, or None), and whether
        the move is certain to keep the value even when that value is unknown.

        An immediate win is taken at once, and a move that is the only one not
        handing the opponent an immediate win keeps the value whatever it is.
        Otherwise the moves race (``race``) to be proven winning; when none
        wins, they race to be proven to hold a draw.
        """
        lows = {m: low for m, (low, _) in self.bounds.items()}
        best = max(self.moves, key=lambda m: lows[m])
        if lows[best] > 0:
            return best, 1, True
        open_moves = [m for m in self.moves if self.bounds[m][1] >= 0]
        if not open_moves:
            return self.moves[0], -1, True  # every move hands over a win: all equally lost
        if len(open_moves) == 1:
            return open_moves[0], None, True
        winner = self.race(open_moves, 1)
        if winner is None:
            return None, None, False
        if winner is not False:
            return winner, 1, True
        safe = self.race(open_moves, 0)
        if safe is None:
            return None, None, False
        if safe is False:
            return self.moves[0], -1, True  # every move loses: step 2 finds the slowest loss
        return safe, 0, True

    def best_score(self, keeper: int, value: int) -> tuple[int, int | None]:
        """Step 2: the optimal move and the root's exact score (keeper, None if out of budget)."""
        if value == 0:
            return keeper, 0
        low = max(low for low, _ in self.bounds.values())
        if self.nodes_left is not None and self.nodes_left <= 0:
            return keeper, None
        if value > 0:
            low, high = self.solver.bounds_of(
                self.state, max(low, 1), None, self.deadline, self.nodes_left
            )
        else:
            low, high = self.solver.bounds_of(self.state, low, -1, self.deadline, self.nodes_left)
        self._spent(self.solver.last_nodes)
        if low != high:
            return keeper, None
        for move in [keeper] + [m for m in self.moves if m != keeper]:
            answer = self.ask(move, low)
            if answer:
                return move, low
            if answer is None:
                break
        return keeper, None

    def _spent(self, nodes: int) -> None:
        self.nodes += nodes
        if self.nodes_left is not None:
            self.nodes_left -= nodes


def solve_root(
    state: Connect4State,
    deadline: float,
    max_nodes: int | None = None,
    solver: Solver | None = None,
    rotate: int = 0,
    caps: tuple[int | None, ...] | None = None,
) -> RootSolve:
    """Steps 1 and 2 for ``state`` until ``deadline`` (a ``time.perf_counter()`` instant)
    or ``max_nodes``, whichever comes first."""
    start = time.perf_counter()
    root = _Root(solver or default_solver(), state, deadline, max_nodes)
    root.rotate = rotate
    if caps is not None:
        root.caps = caps
    keeper, value, certain = root.keep_value()
    move = score = None
    if keeper is not None and value is not None:
        move, score = root.best_score(keeper, value)
    elif certain:
        move = keeper
    lows = [low for low, _ in root.bounds.values()]
    highs = [high for _, high in root.bounds.values()]
    outcome = value if value is not None else outcome_of(max(lows), max(highs))
    return RootSolve(
        dict(root.bounds),
        move,
        score,
        outcome,
        root.nodes,
        time.perf_counter() - start,
    )


# Worker-side task ------------------------------------------------------------------


_solved_flag: Any = None
"""In a pool worker: the strategy's shared one-byte flag, raised when the solve succeeds."""
_memory: np.ndarray | None = None
"""In a pool worker of two: the solver memory shared by both (``bots.kernels.c4solver``): the
table, then one work array per role, so that each process can stop the other's search."""


def solver_task(
    role: str,
    state: Connect4State,
    time_s: float,
    seed: int,
    solve_share: float,
    max_nodes: int | None = None,
) -> tuple[RootSolve | None, RootStats | None]:
    """One worker's part of a move.

    ``"both"`` solves for ``solve_share`` of the time, then searches for the
    rest (if any) when the solve failed; ``"second"`` (the other of two
    workers) solves for ``SECOND_SHARE`` of the time with its uncapped round
    rotated by one move, then searches for the rest; ``"mcts"`` only settles
    the moves that need no search node (step 1's immediate win, lone move
    not handing over a win, or all moves lost) and searches otherwise.
    A successful solve raises the shared flag, which stops the other
    worker's solve and search.
    """
    start = time.perf_counter()
    stats = None
    share = SECOND_SHARE if role == "second" else solve_share
    if role == "mcts":
        solved = solve_root(state, start + time_s, 0)
        done = solved.move is not None
    else:
        rotate = 1 if role == "second" else 0
        if _memory is not None:
            default_solver().use_work(rotate)
        solved = solve_root(state, start + time_s * share, max_nodes, rotate=rotate)
        if solved.move is not None and _solved_flag is not None:
            _solved_flag[0] = 1
            if _memory is not None:
                # Stop the other worker's search now, not at its deadline.
                _memory[default_solver().work_offset(0) + STOP :: WORK_SIZE] = 1
        done = solved.move is not None or share >= 1
    if not done and not (_solved_flag is not None and _solved_flag[0] != 0):
        flag = _solved_flag if role != "both" or solve_share >= 1 else None
        left = max(time_s - (time.perf_counter() - start), 0.001)
        stats = search_task(
            state,
            None,
            left,
            _EXPLORATION,
            seed,
            True,
            "kernel",
            DEFAULT_MAX_NODES,
            None if flag is None else (lambda: flag[0] != 0),
        )
    return solved, stats


def merge_solves(solves: list[RootSolve]) -> RootSolve | None:
    """One ``RootSolve`` from the workers': the first that chose a move, else every move's
    bounds intersected (each worker's are proven), nodes summed."""
    if not solves:
        return None
    nodes = sum(s.nodes for s in solves)
    elapsed = max(s.elapsed_s for s in solves)
    chosen = next((s for s in solves if s.move is not None), None)
    if chosen is not None:
        return RootSolve(chosen.bounds, chosen.move, chosen.score, chosen.outcome, nodes, elapsed)
    bounds = dict(solves[0].bounds)
    for other in solves[1:]:
        for m, (low, high) in other.bounds.items():
            old_low, old_high = bounds.get(m, _UNKNOWN)
            bounds[m] = (max(low, old_low), min(high, old_high))
    lows = [low for low, _ in bounds.values()]
    highs = [high for _, high in bounds.values()]
    outcomes = [s.outcome for s in solves if s.outcome is not None]
    outcome = outcomes[0] if outcomes else outcome_of(max(lows), max(highs))
    return RootSolve(bounds, None, None, outcome, nodes, elapsed)


def warm_up_task(flag: Any = None, memory: Any = None) -> float:
    """Pool warm-up: keep the shared flag, load (or compile) the solver and the heavy MCTS
    kernels, and allocate the solver's table (or map the solver ``memory`` shared between
    the two workers, whose solver then also stops when the flag rises) and the search
    tree, so that the first move is no slower than the others."""
    from bots import kernels

    global _solved_flag, _memory
    _solved_flag = flag
    start = time.perf_counter()
    warm_up_solver()
    if memory is not None and flag is not None:
        _memory = np.frombuffer(memory, dtype=np.int64)
        abort = np.frombuffer(flag, dtype=np.int8)
        set_default_solver(Solver(memory=_memory, abort=abort))
    default_solver()
    kernels.warm_up("connect4", heavy=True)
    kernels.process_tree(DEFAULT_MAX_NODES)
    return time.perf_counter() - start


def worker_roles(stones: int, workers: int) -> list[str]:
    """Each worker's role in ``solver_task`` for a position with ``stones`` stones.

    A proof that does not fit in the move is worth nothing, while the search
    time it takes weakens the fallback: early in a game every worker searches
    (fewer than ``SEARCH_ONLY_BELOW`` stones), then one worker solves while the
    other searches, and from ``SECOND_SOLVES_FROM`` stones on, where proofs of
    about one to two moves' worth of a solver's nodes are common, both solve.
    """
    count = max(workers, 1)
    if stones < SEARCH_ONLY_BELOW:
        return ["mcts"] * count
    if count == 1:
        return ["both"]
    return ["both", "second" if stones >= SECOND_SOLVES_FROM else "mcts"]


def decide(
    state: GameState, solved: RootSolve | None, stats: RootStats | None
) -> tuple[int, float | None]:
    """The move to play and the root value in [-1, 1] (None when unknown)."""
    if solved is not None and solved.move is not None:
        return solved.move, float(solved.outcome) if solved.outcome is not None else None
    moves = tuple(state.legal_moves())
    proofs = solved.proofs() if solved is not None else {}
    pruning = RootStats(
        moves,
        (0,) * len(moves),
        (0.0,) * len(moves),
        0,
        0.0,
        tuple(proofs.get(m, 0) for m in moves),
    )
    merged = merge_root_stats([pruning] + ([stats] if stats is not None else []))
    value = merged.root_value()
    if solved is not None and solved.outcome is not None:
        value = float(solved.outcome)
    return merged.best_move(), value


class SolverStrategy(PooledStrategy):
    """Connect Four: the solver's move when proven within ``time_ms``, else heavy MCTS.

    ``last_search`` reports what chose the move: the solver's nodes (``counts="nodes"``)
    or the search's simulations;
    ``value`` is 1, 0 or -1 once the solver proved the win/draw/loss; ``moves``
    holds the MCTS root statistics only when the search chose the move (empty
    when the solver did).
    """

    kind: ClassVar[str] = "solver"
    OPTIONS: ClassVar[dict[str, type]] = {
        "time_ms": float,
        "workers": int,
        "seed": int,
        "solve_share": float,
        "max_nodes": int,
    }

    def __init__(
        self,
        game: str,
        time_ms: float = DEFAULT_TIME_MS,
        workers: int | None = None,
        seed: int | None = None,
        solve_share: float | None = None,
        max_nodes: int | None = None,
    ) -> None:
        super().__init__(game)
        if game != "connect4":
            raise StrategyOptionError(f"solver: plays connect4 only, not {game!r}")
        if time_ms <= 0:
            raise StrategyOptionError("solver: time_ms must be > 0")
        workers = min(os.cpu_count() or 1, 2) if workers is None else workers
        if workers not in (0, 1, 2):
            raise StrategyOptionError("solver: workers must be 0 (in process), 1 or 2")
        if solve_share is None:
            solve_share = SOLVE_SHARE[max(1, workers)]
        if not 0 < solve_share <= 1:
            raise StrategyOptionError("solver: solve_share must be in (0, 1]")
        if max_nodes is not None and max_nodes < 1:
            raise StrategyOptionError("solver: max_nodes must be >= 1")
        self.max_nodes = max_nodes
        self.time_ms = time_ms
        self.workers = workers
        self.solve_share = solve_share
        self._seeds = random.Random(seed)
        self._pool: SearchPool | None = None
        # Raised by the solving worker so the searching one stops early (two workers only).
        context = multiprocessing.get_context("spawn")
        self._flag: Any = context.RawArray("b", 1)
        if workers == 2:
            # Both workers solve, on one table in shared memory (zeroed by the allocation).
            self._memory: Any = context.RawArray("q", memory_size(DEFAULT_TABLE_BITS, 2))
            self._pool = SearchPool(workers, warm_up_task, (self._flag, self._memory))
        elif workers > 0:
            self._pool = SearchPool(workers, warm_up_task, (self._flag,))
        else:
            with compile_notice():
                warm_up_task()

    def describe(self) -> str:
        """E.g. ``solver(time_ms=100, workers=2)``."""
        return f"solver(time_ms={self.time_ms:g}, workers={self.workers})"

    def _worker(self) -> Callable[..., Any]:
        return solver_task

    def _task_args(self, state: GameState, budget: Budget) -> list[tuple[Any, ...]]:
        self._flag[0] = 0
        if self.workers == 2:
            for role in range(2):
                self._memory[(1 << DEFAULT_TABLE_BITS) + role * WORK_SIZE + STOP] = 0
        # The strategy's own limit, cut to what the match's clock leaves (bots.budget).
        time_s = budget.cap_s(None if self.time_ms is None else self.time_ms / 1000.0)
        return [
            (role, state, time_s, self._seeds.getrandbits(63), self.solve_share, self.max_nodes)
            for role in worker_roles(state.ply, self.workers)
        ]

    def _finish(
        self,
        results: list[tuple[RootSolve | None, RootStats | None]],
        state: GameState,
        start: float,
    ) -> int:
        solved = merge_solves([r[0] for r in results if r[0] is not None])
        searched = [r[1] for r in results if r[1] is not None]
        stats = merge_root_stats(searched) if searched else None
        move, value = decide(state, solved, stats)
        # Reported is what chose the move: the search's simulations and per-move
        # statistics, or the solver's nodes.
        decided_by_search = stats is not None and (solved is None or solved.move is None)
        counts: Literal["simulations", "nodes"] = "nodes"
        count = solved.nodes if solved else 0
        if decided_by_search and stats is not None:
            count, counts = stats.simulations, "simulations"
        self.last_search = SearchInfo(
            simulations=count,
            counts=counts,
            elapsed_s=time.perf_counter() - start,
            value=value,
            moves=tuple(
                (m, n, v / n if n else 0.0)
                for m, n, v in zip(stats.moves, stats.visits, stats.values, strict=True)
            )
            if stats is not None and decided_by_search
            else (),
            workers=max(self.workers, 1),
        )
        return move
