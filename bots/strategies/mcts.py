"""``mcts`` and ``mcts-heavy``: UCT with root parallelisation over a process pool.

Each worker searches the same root with its own seed; the root statistics
are merged by summing visits and values per move, and the most visited move
is played. The search itself is a Numba kernel for the built-in games
(``bots.kernels``) and the generic Python UCT below for any other game (or
with ``engine=python``, the reference implementation the kernels are
checked against).

Budgets: ``simulations`` is the total over all workers, ``time_ms`` the wall
time of each worker; with both, whichever is reached first stops the search.
The move's ``Budget`` stops it too: every search is also limited to the time
left before its deadline, so ``mcts:sims=100000`` answers in time in a fast
match (with fewer simulations).
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from bots.budget import Budget
from bots.strategies.first_run import compile_notice
from bots.strategies.pool import SearchPool
from bots.strategies.pooled import PooledStrategy
from bots.strategy import SearchInfo, StrategyOptionError
from protocol.games import GameState, Outcome

DEFAULT_EXPLORATION = math.sqrt(2)
DEFAULT_SIMULATIONS = 10_000
ENGINES = ("auto", "kernel", "python")
TREE_BREADTH = (3, 2, 2)
"""How many children of each node the reported tree keeps, per ply from the root (the most
visited ones): 3 moves, 2 answers to each, 2 replies to each."""
TREE_DEPTH = 6
"""Plies of the reported tree: past ``TREE_BREADTH`` only the principal line goes on."""

TreeStat = tuple[tuple[int, ...], int, float]
"""One node of a reported tree: its moves from the root, its visits and its value sum
(from the view of the player who made its last move)."""


@dataclass(frozen=True, slots=True)
class RootStats:
    """Root children after a search: per move its visits and value sum (mover's view).

    ``proven`` holds, per move, 1 for a proven win, -1 for a proven loss and 0
    otherwise (empty when the search does not prove, as the Python engine).
    """

    moves: tuple[int, ...]
    visits: tuple[int, ...]
    values: tuple[float, ...]
    simulations: int
    elapsed_s: float
    proven: tuple[int, ...] = ()
    tree: tuple[TreeStat, ...] = ()
    """The top of the search tree (``top_of_tree``), parents before children."""

    def best_move(self) -> int:
        """A proven win, else the most visited move that is not a proven loss.

        Ties: the higher value sum, then the lower move. When every move is a
        proven loss, the most visited one.
        """
        proven = self.proven or (0,) * len(self.moves)
        candidates = [i for i in range(len(self.moves)) if proven[i] == 1]
        if not candidates:
            candidates = [i for i in range(len(self.moves)) if proven[i] != -1]
        if not candidates:
            candidates = list(range(len(self.moves)))
        best = max(candidates, key=lambda i: (self.visits[i], self.values[i], -self.moves[i]))
        return self.moves[best]

    def root_value(self) -> float | None:
        """Mean value for the player to move over all child visits, or None without visits."""
        total = sum(self.visits)
        return sum(self.values) / total if total else None


def _combine_proofs(a: int, b: int) -> int:
    """One move's proof from two searches: a win if either proved one, else a loss if either did."""
    if a == 1 or b == 1:
        return 1
    return -1 if a == -1 or b == -1 else 0


def merge_root_stats(results: list[RootStats]) -> RootStats:
    """Sum visits and values per move over several searches of the same root.

    A proof found by any search holds for all of them: a proven win wins over
    anything, and a proven loss stays a loss.
    """
    visits: dict[int, int] = {}
    values: dict[int, float] = {}
    proven: dict[int, int] = {}
    for result in results:
        proofs = result.proven or (0,) * len(result.moves)
        for move, n, v, p in zip(result.moves, result.visits, result.values, proofs, strict=True):
            visits[move] = visits.get(move, 0) + n
            values[move] = values.get(move, 0.0) + v
            proven[move] = _combine_proofs(proven.get(move, 0), p)
    moves = tuple(sorted(visits))
    nodes: dict[tuple[int, ...], tuple[int, float]] = {}
    for result in results:
        for path, n, v in result.tree:
            before = nodes.get(path, (0, 0.0))
            nodes[path] = (before[0] + n, before[1] + v)
    return RootStats(
        moves=moves,
        visits=tuple(visits[m] for m in moves),
        values=tuple(values[m] for m in moves),
        simulations=sum(r.simulations for r in results),
        elapsed_s=max((r.elapsed_s for r in results), default=0.0),
        proven=tuple(proven[m] for m in moves),
        tree=top_of_tree((), lambda path: _merged_children(nodes, path)),
    )


Children = Callable[[Any], list[tuple[int, int, float, Any]]]
"""A tree's children of a node: (move, visits, value sum, the child) each."""


def top_of_tree(root: Any, children: Children) -> tuple[TreeStat, ...]:
    """The reported part of a search tree below ``root``, parents before their children.

    At each ply the ``TREE_BREADTH`` most visited children of every kept node
    (unvisited ones never), then the most visited child alone down the
    principal line to ``TREE_DEPTH`` plies. Reads a few dozen nodes, whatever
    the tree's size: the search is over before this runs.
    """
    out: list[TreeStat] = []

    def walk(node: Any, path: tuple[int, ...], principal: bool) -> None:
        depth = len(path)
        if depth >= TREE_DEPTH:
            return
        breadth = TREE_BREADTH[depth] if depth < len(TREE_BREADTH) else int(principal)
        ranked = sorted(children(node), key=lambda child: -child[1])[:breadth]
        for rank, (move, visits, value, child) in enumerate(ranked):
            if visits <= 0:
                break
            out.append(((*path, move), visits, value))
            walk(child, (*path, move), principal and rank == 0)

    walk(root, (), True)
    return tuple(out)


def _merged_children(
    nodes: dict[tuple[int, ...], tuple[int, float]], path: tuple[int, ...]
) -> list[tuple[int, int, float, Any]]:
    """``Children`` over merged tree statistics keyed by path."""
    return [
        (p[-1], n, v, p)
        for p, (n, v) in nodes.items()
        if len(p) == len(path) + 1 and p[:-1] == path
    ]


def _kernel_children(t: Any) -> Children:
    """``Children`` over a kernel tree's flat arrays (``bots.kernels.tree``)."""

    def children(node: int) -> list[tuple[int, int, float, Any]]:
        # Whole slices at once: reading the arrays element by element costs ten times as much.
        first = int(t.first_child[node])
        end = first + int(t.n_children[node])
        return list(
            zip(
                t.move[first:end].tolist(),
                [int(v) for v in t.visits[first:end].tolist()],
                t.value[first:end].tolist(),
                range(first, end),
                strict=True,
            )
        )

    return children


# Worker-side tasks (module-level so the pool can pickle them by reference) ---


def search_task(
    state: GameState,
    simulations: int | None,
    time_s: float | None,
    exploration: float,
    seed: int,
    heavy: bool,
    engine: str,
    max_nodes: int,
    stop: Callable[[], bool] | None = None,
) -> RootStats:
    """One search of ``state``; runs in a pool worker or in process (``stop``: see
    ``kernels.kernel_search``; the Python engine ignores it)."""
    if engine == "python":
        return python_search(state, simulations, time_s, exploration, seed, heavy)
    from bots import kernels

    t, done, elapsed = kernels.kernel_search(
        state, simulations, time_s, exploration, seed, heavy, max_nodes, stop
    )
    first, count = int(t.first_child[0]), int(t.n_children[0])
    order = sorted(range(first, first + count), key=lambda k: int(t.move[k]))
    return RootStats(
        moves=tuple(int(t.move[k]) for k in order),
        visits=tuple(int(t.visits[k]) for k in order),
        values=tuple(float(t.value[k]) for k in order),
        simulations=done,
        elapsed_s=elapsed,
        proven=tuple(int(t.proven[k]) for k in order),
        tree=top_of_tree(0, _kernel_children(t)),
    )


def warm_up_task(game: str, heavy: bool, engine: str) -> float:
    """Pool warm-up: load (or compile) the kernels this strategy will use."""
    if engine == "python":
        return 0.0
    from bots import kernels

    return kernels.warm_up(game, heavy)


# Generic Python UCT ------------------------------------------------------------


class _Node:
    """A node of the Python tree; ``value`` sums rewards for the player who moved into it."""

    __slots__ = ("children", "move", "state", "value", "visits")

    def __init__(self, state: GameState, move: int) -> None:
        self.state = state
        self.move = move
        self.children: list[_Node] = []
        self.visits = 0
        self.value = 0.0


def _reward(outcome: Outcome, player: int) -> float:
    if outcome.winner is None:
        return 0.0
    return 1.0 if outcome.winner == player else -1.0


def _heavy_playout(state: GameState, rng: random.Random) -> Outcome:
    """Win in one if possible, else block the opponent's win in one, else random."""
    outcome = state.outcome()
    while outcome is None:
        moves = state.legal_moves()
        me = state.to_move
        chosen = None
        for move in moves:
            after = state.play(move)
            result = after.outcome()
            if result is not None and result.winner == me:
                chosen = after
                break
        state = chosen or state.play(moves[rng.randrange(len(moves))])
        outcome = state.outcome()
    return outcome


def python_search(
    state: GameState,
    simulations: int | None,
    time_s: float | None,
    exploration: float,
    seed: int,
    heavy: bool = False,
) -> RootStats:
    """Reference UCT over the rules API, with the same tree policy as the kernels.

    Children are all added (shuffled) the second time a leaf is reached,
    unvisited children are tried first, one playout per simulation.
    """
    if simulations is None and time_s is None:
        raise ValueError("a search needs a simulation budget, a time budget, or both")
    rng = random.Random(seed)
    start = time.perf_counter()
    root = _Node(state, -1)
    root_moves = state.legal_moves()
    rng.shuffle(root_moves)
    root.children = [_Node(state.play(m), m) for m in root_moves]
    done = 0
    while (simulations is None or done < simulations) and root.children:
        if time_s is not None and done % 16 == 0 and time.perf_counter() - start >= time_s:
            break
        path = [root]
        node = root
        while node.children:
            log_n = math.log(node.visits) if node.visits else 0.0
            chosen = None
            best = -math.inf
            for child in node.children:
                if child.visits == 0:
                    chosen = child
                    break
                score = child.value / child.visits + exploration * math.sqrt(log_n / child.visits)
                if score > best:
                    best, chosen = score, child
            assert chosen is not None
            node = chosen
            path.append(node)
            if node.visits == 0:
                break
        if node.visits > 0 and node.state.outcome() is None:
            moves = node.state.legal_moves()
            rng.shuffle(moves)
            node.children = [_Node(node.state.play(m), m) for m in moves]
            node = node.children[0]
            path.append(node)
        playout = _heavy_playout if heavy else type(node.state).random_playout
        outcome = playout(node.state, rng)
        # The node at odd depth was entered by a move of the root player.
        reward = _reward(outcome, state.to_move)
        if len(path) % 2 == 1:  # deepest node at even depth
            reward = -reward
        for n in reversed(path):
            n.visits += 1
            n.value += reward
            reward = -reward
        done += 1
    children = sorted(root.children, key=lambda c: c.move)
    return RootStats(
        moves=tuple(c.move for c in children),
        visits=tuple(c.visits for c in children),
        values=tuple(c.value for c in children),
        simulations=done,
        elapsed_s=time.perf_counter() - start,
        tree=top_of_tree(
            root, lambda node: [(c.move, c.visits, c.value, c) for c in node.children]
        ),
    )


# The strategies ------------------------------------------------------------------


class MCTSStrategy(PooledStrategy):
    """UCT with uniformly random playouts, searched in a warm process pool.

    ``workers=0`` searches in the calling process (handy offline and in tests);
    ``seed`` makes a single-worker search reproducible.
    """

    kind: ClassVar[str] = "mcts"
    heavy: ClassVar[bool] = False
    OPTIONS: ClassVar[dict[str, type]] = {
        "simulations": int,
        "time_ms": float,
        "exploration": float,
        "workers": int,
        "seed": int,
        "engine": str,
        "max_nodes": int,
    }

    def __init__(
        self,
        game: str,
        simulations: int | None = None,
        time_ms: float | None = None,
        exploration: float = DEFAULT_EXPLORATION,
        workers: int | None = None,
        seed: int | None = None,
        engine: str = "auto",
        max_nodes: int | None = None,
    ) -> None:
        super().__init__(game)
        from bots.kernels import DEFAULT_MAX_NODES, KERNEL_GAMES

        if engine not in ENGINES:
            raise StrategyOptionError(f"{self.kind}: engine must be one of {', '.join(ENGINES)}")
        if engine == "kernel" and game not in KERNEL_GAMES:
            raise StrategyOptionError(f"{self.kind}: no compiled kernel for {game!r}")
        if simulations is not None and simulations < 1:
            raise StrategyOptionError(f"{self.kind}: simulations must be >= 1")
        if time_ms is not None and time_ms <= 0:
            raise StrategyOptionError(f"{self.kind}: time_ms must be > 0")
        if exploration < 0:
            raise StrategyOptionError(f"{self.kind}: exploration must be >= 0")
        workers = (os.cpu_count() or 1) if workers is None else workers
        if workers < 0:
            raise StrategyOptionError(f"{self.kind}: workers must be >= 0 (0 = in process)")
        if simulations is None and time_ms is None:
            simulations = DEFAULT_SIMULATIONS
        self.simulations = simulations
        self.time_ms = time_ms
        self.exploration = exploration
        self.workers = workers
        self.engine = "kernel" if engine == "auto" and game in KERNEL_GAMES else engine
        if self.engine == "auto":
            self.engine = "python"
        self.max_nodes = max_nodes or DEFAULT_MAX_NODES
        self._seeds = random.Random(seed)
        self._pool: SearchPool | None = None
        self.warmup_s: list[float] = []
        if workers > 0:
            self._pool = SearchPool(workers, warm_up_task, (game, self.heavy, self.engine))
            self.warmup_s = self._pool.warmup_s
        else:
            with compile_notice():
                self.warmup_s = [warm_up_task(game, self.heavy, self.engine)]

    def describe(self) -> str:
        """E.g. ``mcts(simulations=1000, workers=2)``."""
        parts = []
        if self.simulations is not None:
            parts.append(f"simulations={self.simulations}")
        if self.time_ms is not None:
            parts.append(f"time_ms={self.time_ms:g}")
        parts.append(f"workers={self.workers}")
        return f"{self.kind}({', '.join(parts)})"

    def _worker(self) -> Callable[..., Any]:
        return search_task

    def _task_args(self, state: GameState, budget: Budget) -> list[tuple[Any, ...]]:
        n = max(self.workers, 1)
        time_s = budget.cap_s(None if self.time_ms is None else self.time_ms / 1000.0)
        args = []
        for index in range(n):
            sims = None
            if self.simulations is not None:
                # Split the total budget; the first workers take the remainder.
                sims = self.simulations // n + (1 if index < self.simulations % n else 0)
                sims = max(sims, 1)
            seed = self._seeds.getrandbits(63)
            args.append(
                (
                    state,
                    sims,
                    time_s,
                    self.exploration,
                    seed,
                    self.heavy,
                    self.engine,
                    self.max_nodes,
                )
            )
        return args

    def _finish(self, results: list[RootStats], state: GameState, start: float) -> int:
        merged = merge_root_stats(results)
        elapsed = time.perf_counter() - start
        self.last_search = SearchInfo(
            simulations=merged.simulations,
            elapsed_s=elapsed,
            value=merged.root_value(),
            moves=tuple(
                (m, n, v / n if n else 0.0)
                for m, n, v in zip(merged.moves, merged.visits, merged.values, strict=True)
            ),
            workers=max(self.workers, 1),
            tree=tuple((path, n, v / n) for path, n, v in merged.tree),
        )
        return merged.best_move()


class HeavyMCTSStrategy(MCTSStrategy):
    """UCT whose playouts follow rules (win, block, avoid giving a win, prefer
    central cells) instead of uniform moves: fewer but more informative playouts."""

    kind: ClassVar[str] = "mcts-heavy"
    heavy: ClassVar[bool] = True
