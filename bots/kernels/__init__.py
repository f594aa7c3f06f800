"""Numba-compiled rules and search for the built-in games.

``KERNELS`` is the bots side of a game's registration (``protocol.games``
holds the rest): the compiled-rules id of each game with a kernel and how
its ``GameState`` becomes a kernel state. ``KERNEL_GAMES`` names those games;
``kernel_search`` runs UCT on one of them from a ``GameState`` and reports the
root statistics. Compiled code is cached on disk (``cache=True``), so only the
first run on a machine pays for compilation; ``warm_up`` loads (or compiles)
everything a search needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bots.kernels import connect4, othello, tictactoe, tree, uttt
from bots.kernels.rng import new_rng
from protocol.games import GAMES, GameState, new_game


@dataclass(frozen=True, slots=True)
class Kernel:
    """A game's compiled rules: its id in ``tree``'s dispatch and its state converter."""

    game_id: int
    """The constant ``bots.kernels.tree`` dispatches on (``tree.CONNECT4``, ...)."""
    from_state: Callable[[GameState], np.ndarray]
    """The kernel state (an int64 array) of a ``GameState`` of the game."""


KERNELS: dict[str, Kernel] = {
    "connect4": Kernel(tree.CONNECT4, connect4.from_state),
    "tictactoe": Kernel(tree.TICTACTOE, tictactoe.from_state),
    "uttt": Kernel(tree.UTTT, uttt.from_state),
    "uttt-quick": Kernel(tree.UTTT, uttt.from_state),
    "othello": Kernel(tree.OTHELLO, othello.from_state),
}
"""Games with a compiled kernel, by their registered name: one line per game."""

KERNEL_GAMES: tuple[str, ...] = tuple(game for game in GAMES if game in KERNELS)
"""Games with a compiled kernel, in registry order; others fall back to the Python search."""

DEFAULT_MAX_NODES = 4_000_000
"""Default tree capacity per process (32 bytes a node; pages are touched only when used)."""

_tree_cache: dict[int, tree.Tree] = {}


def to_kernel(state: GameState) -> tuple[int, np.ndarray]:
    """The kernel game id and kernel state of ``state``; ``ValueError`` without a kernel."""
    kernel = KERNELS.get(state.name)
    if kernel is None:
        raise ValueError(
            f"no compiled kernel for {state.name!r}; kernel games: {', '.join(KERNEL_GAMES)}"
        )
    return kernel.game_id, kernel.from_state(state)


def process_tree(max_nodes: int) -> tree.Tree:
    """This process's reusable tree of ``max_nodes`` nodes (allocated on first use)."""
    found = _tree_cache.get(max_nodes)
    if found is None:
        _tree_cache.clear()  # keep one tree per process
        found = _tree_cache[max_nodes] = tree.new_tree(max_nodes)
    return found


def kernel_search(
    state: GameState,
    simulations: int | None,
    time_s: float | None,
    exploration: float,
    seed: int,
    heavy: bool = False,
    max_nodes: int = DEFAULT_MAX_NODES,
    stop: Callable[[], bool] | None = None,
) -> tuple[tree.Tree, int, float]:
    """UCT from ``state`` until ``simulations`` ran or ``time_s`` passed (whichever first),
    or ``stop()`` (asked between chunks) says so.

    Returns the tree (root = node 0), the simulations run and the elapsed
    seconds. With a time budget the kernel runs in chunks of about 2 ms and
    the clock is checked between them (compiled code cannot read the clock).
    """
    if simulations is None and time_s is None:
        raise ValueError("a search needs a simulation budget, a time budget, or both")
    game_id, root = to_kernel(state)
    t = process_tree(max_nodes)
    rng = new_rng(seed)
    start = time.perf_counter()
    tree.reset(*t)
    done = 0
    chunk = 64
    while True:
        todo = chunk if simulations is None else min(chunk, simulations - done)
        if todo <= 0:
            break
        chunk_start = time.perf_counter()
        ran = tree.run(game_id, heavy, root, todo, exploration, *t, rng)
        if ran == 0:
            break
        done += ran
        now = time.perf_counter()
        if stop is not None and stop():
            break
        if time_s is not None:
            if now - start >= time_s:
                break
            rate = ran / max(now - chunk_start, 1e-7)
            remaining = time_s - (now - start)
            chunk = max(1, int(rate * min(remaining, 0.002)))
        else:
            chunk = 1 << 30
    return t, done, time.perf_counter() - start


def warm_up(game: str = "connect4", heavy: bool = False) -> float:
    """Load or compile the kernels (a tiny search); returns the seconds it took."""
    start = time.perf_counter()
    kernel_search(new_game(game), 32, None, 1.4, seed=1, heavy=heavy, max_nodes=10_000)
    return time.perf_counter() - start
