"""The built-in strategies and the search machinery they share.

``random_bot``, ``mcts``, ``heuristic`` (over ``evaluation``) and
``solver_strategy`` (over the Connect Four ``solver``) are the strategies
``bots.make_strategy`` builds by name; ``pool`` and ``pooled`` run their
searches in warm worker processes; ``first_run`` says so while the kernels
compile. The solver's names load Numba only when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bots.exports import lazy_exports
from bots.strategies.first_run import compile_notice

if TYPE_CHECKING:
    from bots.strategies.solver import (
        Solver,
        SolverError,
        analyse,
        default_solver,
        solve,
        to_state,
    )
    from bots.strategies.solver import warm_up as warm_up_solver

__all__ = [
    "Solver",
    "SolverError",
    "analyse",
    "compile_notice",
    "default_solver",
    "solve",
    "to_state",
    "warm_up_solver",
]

_SOLVER = "bots.strategies.solver"
__getattr__ = lazy_exports(
    __name__,
    {
        "Solver": _SOLVER,
        "SolverError": _SOLVER,
        "analyse": _SOLVER,
        "default_solver": _SOLVER,
        "solve": _SOLVER,
        "to_state": _SOLVER,
        "warm_up_solver": f"{_SOLVER}:warm_up",
    },
)
