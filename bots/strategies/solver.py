"""Connect Four perfect play: ``solve`` a position, ``analyse`` every move.

::

    from bots.strategies.solver import solve, analyse
    solve("4455").score                      # 18: the side to move wins with its 4th stone
    solve(state, time_ms=50).score           # None when not proven in 50 ms
    solve(state, weak=True).score            # 1 win, 0 draw, -1 loss
    analyse("4455").scores                   # {column: score of playing it, or None}

Scores are Pascal Pons', from the side to move: ``22 - s`` when it wins with
its ``s``-th stone, ``s - 22`` when the opponent does, 0 for a draw, so the
larger a positive score the sooner the win. The search is the compiled
negamax of ``bots.kernels.c4solver``; this module checks positions, keeps one
transposition table per ``Solver`` (a process-wide one behind the module
functions) and enforces budgets: ``time_ms`` (a watchdog thread tells the
compiled search to stop; it looks every 4096 nodes, well under a
millisecond) and ``max_nodes`` (deterministic). A search out of budget
reports ``None`` as its score and the bounds it had proven.

Results are deterministic: scores never depend on the table's contents, and
node counts only through what earlier searches left in the table
(``Solver.reset`` clears it).

Errors: ``SolverError`` (a ``ValueError``) for a position that is not a
Connect Four game in progress, or notation that is not a legal game.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from bots.kernels import c4solver as k
from protocol.errors import GameError
from protocol.games import Connect4State, GameState

Position = GameState | str
"""A ``Connect4State``, or Pons' notation: the 1-based columns played, e.g. ``"4453"``."""

DEFAULT_TABLE_BITS = 19
"""Table size of a default ``Solver``: 2**19 entries, 4 MiB."""
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)
"""Columns, most central first."""


class SolverError(ValueError):
    """The position cannot be solved: not Connect Four, illegal, or already finished."""


@dataclass(frozen=True, slots=True)
class Solution:
    """What ``solve`` proved about a position.

    ``score`` is exact (weak: 1, 0, -1), or ``None`` when the budget ran out;
    the score is then known to lie in ``[low, high]``.
    """

    score: int | None
    nodes: int
    elapsed_s: float
    low: int
    high: int
    weak: bool = False

    @property
    def solved(self) -> bool:
        """Whether ``score`` is exact."""
        return self.score is not None

    @property
    def outcome(self) -> int | None:
        """1 win, 0 draw, -1 loss for the side to move, when the bounds decide it."""
        return outcome_of(self.low, self.high)


@dataclass(frozen=True, slots=True)
class Analysis:
    """The score of playing each legal move, from the side to move's point of view.

    ``scores[column]`` is exact (weak: 1, 0, -1) or ``None`` when its budget
    ran out; ``bounds[column]`` holds the proven ``(low, high)`` either way.
    """

    scores: dict[int, int | None]
    bounds: dict[int, tuple[int, int]]
    nodes: int
    elapsed_s: float
    weak: bool = False

    @property
    def complete(self) -> bool:
        """Whether every move's score is exact."""
        return all(s is not None for s in self.scores.values())

    @property
    def value(self) -> int | None:
        """The position's score, when the known scores and bounds settle it."""
        best = max(low for low, _ in self.bounds.values())
        if all(high <= best for _, high in self.bounds.values()):
            return best
        return None

    def best_moves(self) -> list[int]:
        """The columns proven to reach ``value`` (empty when it is unknown)."""
        value = self.value
        if value is None:
            return []
        return [c for c, s in self.scores.items() if s == value]


def outcome_of(low: int, high: int) -> int | None:
    """The win (1) / draw (0) / loss (-1) that the score bounds ``[low, high]`` imply."""
    if low > 0:
        return 1
    if high < 0:
        return -1
    if low == 0 and high == 0:
        return 0
    return None


def to_state(position: Position) -> Connect4State:
    """The ``Connect4State`` of a position, checked to be a game in progress."""
    if isinstance(position, str):
        try:
            state = Connect4State.from_notation(position.strip())
        except GameError as exc:
            raise SolverError(f"not a legal Connect Four game: {position!r}: {exc}") from None
    elif isinstance(position, Connect4State):
        state = position
    else:
        name = getattr(position, "name", type(position).__name__)
        raise SolverError(f"the solver plays Connect Four only, not {name!r}")
    if state.outcome() is not None:
        raise SolverError(f"the game is over ({state.outcome()}), there is nothing to solve")
    return state


def _bitboards(state: Connect4State) -> tuple[int, int, int]:
    """(stones of the side to move, all stones, stone count)."""
    boards = state.boards
    mask = boards[0] | boards[1]
    return boards[state.to_move], mask, mask.bit_count()


def _initial_bounds(stones: int) -> tuple[int, int]:
    """Every score possible when the side to move cannot win at once."""
    return -((k.CELLS - stones) // 2), (k.CELLS - 1 - stones) // 2


class _Watchdog:
    """One daemon thread per process that raises the stop flag of searches at their deadlines.

    ``arm(flags, deadline)`` registers a search's control array; at the
    deadline the thread sets ``flags[0] = 1``, which the compiled search
    reads every few thousand nodes. ``disarm`` forgets it and lowers the flag.
    """

    def __init__(self) -> None:
        self._armed: dict[int, tuple[float, np.ndarray]] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def renew(self) -> None:
        """Forget every deadline and the thread (in a forked child, which has no thread)."""
        self._armed = {}
        self._wake = threading.Condition()
        self._thread = None

    def arm(self, flags: np.ndarray, deadline: float) -> None:
        """Stop the search watching ``flags`` at ``deadline`` (a ``perf_counter`` time)."""
        with self._wake:
            flags[0] = 0
            self._armed[id(flags)] = (deadline, flags)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="solver-watchdog")
                self._thread.daemon = True
                self._thread.start()
            self._wake.notify()

    def disarm(self, flags: np.ndarray) -> None:
        """Forget ``flags`` and lower them."""
        with self._wake:
            self._armed.pop(id(flags), None)
            flags[0] = 0

    def _run(self) -> None:
        with self._wake:
            while True:
                now = time.perf_counter()
                for key, (deadline, flags) in list(self._armed.items()):
                    if deadline <= now:
                        flags[0] = 1
                        del self._armed[key]
                soonest = min((d for d, _ in self._armed.values()), default=None)
                self._wake.wait(None if soonest is None else soonest - now)


_WATCHDOG = _Watchdog()


def _after_fork_in_child() -> None:
    """A forked child has no watchdog thread and may copy locks held mid-search: renew both."""
    _WATCHDOG.renew()
    if _default is not None:
        _default._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Solver:
    """A solver with its own transposition table (``2**table_bits`` entries of 8 bytes).

    One search at a time per solver (calls are serialised by a lock); use one
    solver per process or thread for parallel work. Solvers may share one
    ``memory`` (from ``bots.kernels.c4solver.new_memory(table_bits, works)``,
    e.g. in shared memory: the table, then ``works`` work arrays), each using
    its own work array (``use_work``): each then reuses every bound the others
    proved (an entry is one aligned word holding its own key, so no lock is
    needed), and one can stop another's search by raising that work array's
    stop word. ``abort`` (an ``int8`` array, e.g. shared with other
    processes) tells this solver that another party has stopped it.
    """

    def __init__(
        self,
        table_bits: int = DEFAULT_TABLE_BITS,
        memory: np.ndarray | None = None,
        abort: np.ndarray | None = None,
    ) -> None:
        if memory is None:
            memory = k.new_memory(table_bits)
        extra = len(memory) - (1 << table_bits)
        if memory.dtype != np.int64 or extra < k.WORK_SIZE or extra % k.WORK_SIZE:
            raise ValueError("memory must be int64, from new_memory(table_bits, works)")
        self._memory = memory
        self.table = memory[: 1 << table_bits]
        self._works = extra // k.WORK_SIZE
        self._abort = np.zeros(1, dtype=np.int8) if abort is None else abort
        self._use_work(0)
        self._bounds = np.zeros(2, dtype=np.int64)
        self._shift = 64 - table_bits
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Empty the transposition table (for reproducible node counts)."""
        with self._lock:
            self.table[:] = 0

    def solve(
        self,
        position: Position,
        time_ms: float | None = None,
        weak: bool = False,
        max_nodes: int | None = None,
    ) -> Solution:
        """The score of ``position`` (see ``Solution``) within the budget, if any."""
        state = to_state(position)
        _check_budget(time_ms, max_nodes)
        start = time.perf_counter()
        deadline = None if time_ms is None else start + time_ms / 1000.0
        low, high = (-1, 1) if weak else (None, None)
        low, high = self.bounds_of(state, low, high, deadline, max_nodes)
        score = low if low == high else None
        return Solution(score, self.last_nodes, time.perf_counter() - start, low, high, weak)

    def analyse(
        self,
        position: Position,
        time_ms: float | None = None,
        weak: bool = False,
        max_nodes: int | None = None,
    ) -> Analysis:
        """The score of every legal move of ``position`` within the budget, if any.

        The budget covers the whole call: each move in turn (centre first)
        gets an equal share of what is left, so what a quick move leaves
        unused goes to the next ones.
        """
        state = to_state(position)
        _check_budget(time_ms, max_nodes)
        start = time.perf_counter()
        end = None if time_ms is None else start + time_ms / 1000.0
        moves = [c for c in CENTRE_FIRST if state.is_legal(c)]
        bounds: dict[int, tuple[int, int]] = {}
        nodes = 0
        for index, move in enumerate(moves):
            left = len(moves) - index
            deadline = None
            if end is not None:
                now = time.perf_counter()
                deadline = now + (end - now) / left
            share = None if max_nodes is None else max(1, (max_nodes - nodes) // left)
            child = state.play(move)
            known = _final_score(state, child, weak)
            if known is not None:
                bounds[move] = (known, known)
                continue
            low, high = _child_bounds(weak)
            child_low, child_high = self.bounds_of(child, -high, -low, deadline, share)
            nodes += self.last_nodes
            bounds[move] = (-child_high, -child_low)
        ordered = {c: bounds[c] for c in sorted(bounds)}
        return Analysis(
            {c: (lo if lo == hi else None) for c, (lo, hi) in ordered.items()},
            ordered,
            nodes,
            time.perf_counter() - start,
            weak,
        )

    def bounds_of(
        self,
        state: Connect4State,
        low: int | None = None,
        high: int | None = None,
        deadline: float | None = None,
        max_nodes: int | None = None,
    ) -> tuple[int, int]:
        """Narrow the score of the unfinished ``state`` from ``[low, high]`` until exact.

        ``low``/``high`` default to every score still possible; they may be
        true bounds already proven, or the artificial ``-1, 1`` of a weak
        search (the answer is then clamped to them: -1 means "a loss").
        Stops at ``deadline`` (a ``time.perf_counter()`` instant) or after
        ``max_nodes`` and returns the bounds proven so far.
        """
        cur, mask, stones = _bitboards(state)
        with self._lock:
            self._stats[0] = 0
            if k.can_win_next(cur, mask):
                won = (k.CELLS + 1 - stones) // 2
                return _clamp(won, low, high), _clamp(won, low, high)
            first, last = _initial_bounds(stones)
            low = first if low is None else max(low, first)
            high = last if high is None else min(high, last)
            if low < high:
                self._kernel(False, (cur, mask, stones), low, high, deadline, max_nodes)
                low, high = int(self._bounds[0]), int(self._bounds[1])
        return low, high

    def test_move(
        self,
        state: Connect4State,
        move: int,
        threshold: int,
        deadline: float | None = None,
        max_nodes: int | None = None,
    ) -> tuple[int, int] | None:
        """Whether playing ``move`` scores at least ``threshold``, with one null-window search.

        Returns proven bounds on the move's score (mover's view) with either
        ``low >= threshold`` or ``high < threshold``, or None when stopped
        first. The cheapest question a search can ask: use it to find a
        move that keeps a known value.
        """
        known = forced_score(state, move)
        if known is not None:
            with self._lock:
                self._stats[0] = 0
            return known, known
        child = state.play(move)
        cur, mask, stones = _bitboards(child)
        first, last = _initial_bounds(stones)
        # The child's score is <= -threshold exactly when the move scores >= threshold.
        med = min(max(-threshold, first), last - 1)
        with self._lock:
            self._stats[0] = 0
            self._kernel(True, (cur, mask, stones), med, med + 1, deadline, max_nodes)
            if self._stats[1]:
                return None
            r = int(self._bounds[0])
        if r <= med:
            return -r, -first  # child <= r
        return -last, -r  # child >= r

    def use_work(self, index: int) -> None:
        """Search with the memory's work array ``index`` (0 first), whose stop word is
        ``memory[work_offset(index) + k.STOP]``."""
        if not 0 <= index < self._works:
            raise ValueError(f"work array {index} of {self._works}")
        with self._lock:
            self._use_work(index)

    def work_offset(self, index: int) -> int:
        """Where the memory's work array ``index`` starts."""
        return len(self.table) + index * k.WORK_SIZE

    def _use_work(self, index: int) -> None:
        self._off = self.work_offset(index)
        work = self._memory[self._off : self._off + k.WORK_SIZE]
        self._stats = work[k.NODES : k.STOPPED + 1]  # nodes, stopped
        self._control = work[k.STOP : k.LIMIT + 1]  # stop request, node limit

    @property
    def aborted(self) -> bool:
        """Whether the shared ``abort`` flag is raised (searches stop at once)."""
        return bool(self._abort[0])

    @property
    def last_nodes(self) -> int:
        """Nodes searched by the last call."""
        return int(self._stats[0])

    def _kernel(
        self,
        probe: bool,
        position: tuple[int, int, int],
        low: int,
        high: int,
        deadline: float | None,
        max_nodes: int | None,
    ) -> None:
        """One kernel call under the budget (lock held): a ``negamax`` probe of the window
        ``[low, high]`` leaves its result in ``_bounds[0]``; otherwise ``null_window``
        narrows ``[low, high]`` and leaves the bounds in ``_bounds``."""
        cur, mask, stones = position
        self._stats[1] = 0
        self._control[1] = 0 if max_nodes is None else max_nodes
        self._bounds[0], self._bounds[1] = low, high
        if deadline is not None and time.perf_counter() >= deadline:
            self._stats[1] = 1
            return
        if deadline is not None:
            _WATCHDOG.arm(self._control, deadline)
        if self._abort[0]:
            # Raised before arm() lowered the stop word: stop as the aborting party meant.
            self._control[0] = 1
        try:
            if probe:
                self._bounds[0] = k.negamax(
                    cur,
                    mask,
                    stones,
                    low,
                    high,
                    self._memory,
                    self._shift,
                    self._off,
                )
            else:
                k.null_window(
                    cur,
                    mask,
                    stones,
                    low,
                    high,
                    self._memory,
                    self._shift,
                    self._off,
                    self._bounds,
                )
        finally:
            if deadline is not None:
                _WATCHDOG.disarm(self._control)


def _clamp(score: int, low: int | None, high: int | None) -> int:
    if low is not None:
        score = max(score, low)
    if high is not None:
        score = min(score, high)
    return score


def _final_score(state: Connect4State, child: Connect4State, weak: bool) -> int | None:
    """The score of the move from ``state`` to ``child`` when it ends the game, else None."""
    outcome = child.outcome()
    if outcome is None:
        return None
    if outcome.winner is None:
        return 0
    return 1 if weak else (k.CELLS + 1 - _bitboards(state)[2]) // 2


def forced_score(state: Connect4State, move: int) -> int | None:
    """The score of ``move`` when it ends the game or lets the opponent win at once, else None.

    Costs no search: use it to settle such moves before asking harder questions.
    """
    child = state.play(move)
    known = _final_score(state, child, weak=False)
    if known is not None:
        return known
    cur, mask, stones = _bitboards(child)
    if k.can_win_next(cur, mask):
        return -((k.CELLS + 1 - stones) // 2)
    return None


def search_order(state: Connect4State) -> list[int]:
    """The legal columns in the order the search tries them: most threats created first,
    then the most central."""
    cur, mask, _ = _bitboards(state)
    playable = k.possible(mask)

    def threats(column: int) -> int:
        move = playable & (0x3F << (7 * column))
        return int(k.popcount(k.winning_cells(cur | move, mask)))

    return sorted((c for c in CENTRE_FIRST if state.is_legal(c)), key=lambda c: -threats(c))


def _child_bounds(weak: bool) -> tuple[int, int]:
    """The window a move's score is searched in (weak: win/draw/loss only)."""
    return (-1, 1) if weak else (-k.CELLS, k.CELLS)


def _check_budget(time_ms: float | None, max_nodes: int | None) -> None:
    if time_ms is not None and not time_ms > 0:
        raise ValueError(f"time_ms must be > 0, got {time_ms}")
    if max_nodes is not None and max_nodes < 1:
        raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")


_default: Solver | None = None


def default_solver() -> Solver:
    """This process's shared solver (created on first use)."""
    global _default
    if _default is None:
        _default = Solver()
    return _default


def set_default_solver(solver: Solver) -> None:
    """Make ``solver`` this process's shared one (e.g. a pool worker's, on a shared table)."""
    global _default
    _default = solver


def solve(
    position: Position,
    time_ms: float | None = None,
    weak: bool = False,
    max_nodes: int | None = None,
) -> Solution:
    """Solve ``position`` with this process's solver; see ``Solver.solve``."""
    return default_solver().solve(position, time_ms, weak, max_nodes)


def analyse(
    position: Position,
    time_ms: float | None = None,
    weak: bool = False,
    max_nodes: int | None = None,
) -> Analysis:
    """Score every move of ``position`` with this process's solver; see ``Solver.analyse``."""
    return default_solver().analyse(position, time_ms, weak, max_nodes)


def warm_up() -> float:
    """Load (or compile) the solver's kernels; returns the seconds it took.

    A good ``initializer`` for a process pool that will call ``solve`` or ``analyse``.
    """
    start = time.perf_counter()
    Solver(table_bits=10).solve("4455")
    return time.perf_counter() - start
