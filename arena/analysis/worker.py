"""The process-pool side of ``arena analyse``: solve one position with ``bots.strategies.solver``.

Outside ``arena.cli``, this is the one arena module that imports ``bots``
(``tests/test_import_contracts.py``), because the analysis's yardstick is the
project's own Connect Four solver. It is imported only by the ``arena analyse``
command, and the solver (Numba) only inside the worker processes, so no other
command and never the server pays for it.
"""

from __future__ import annotations

import signal
import time

from arena.analysis.values import Solved


def init_worker() -> None:
    """A worker's start: ignore Ctrl-C (the parent stops the pool), load the kernels."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from bots.strategies import warm_up_solver

    warm_up_solver()


def solve_position(notation: str, budget_ms: float) -> Solved:
    """The value of the unfinished position ``notation`` for the side to move, within
    ``budget_ms`` of wall time: first win/draw/loss (a weak search, much the cheaper),
    then, with what is left, the exact score."""
    from bots.strategies import default_solver, to_state

    solver = default_solver()
    state = to_state(notation)
    deadline = time.perf_counter() + budget_ms / 1000
    # A weak search: bounds clamped to [-1, 1], so -1 and 1 mean a loss and a win.
    low, high = solver.bounds_of(state, -1, 1, deadline)
    nodes = solver.last_nodes
    if low != high:
        return Solved(None, None, nodes)
    if low == 0:
        return Solved(0, 0, nodes)
    # Only the exact length of the win (or loss) is left to find.
    if low > 0:
        low, high = solver.bounds_of(state, 1, None, deadline)
    else:
        low, high = solver.bounds_of(state, None, -1, deadline)
    nodes += solver.last_nodes
    return Solved(1 if low > 0 else -1, low if low == high else None, nodes)
