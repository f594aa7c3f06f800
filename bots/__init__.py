"""Bot strategies (random, MCTS, heuristic) with process-pool search, and offline matches.

    from bots import Budget, make_strategy
    with make_strategy("mcts", game="connect4", simulations=10_000) as bot:
        move = bot.choose_move(state)                       # no clock
        move = bot.choose_move(state, Budget.seconds(0.2))  # within 0.2 s

See ``bots.strategy`` for the interface and its exception tree, ``bots.budget``
for the time a move may take.
"""

from __future__ import annotations

from bots.budget import Budget
from bots.strategy import (
    STRATEGIES,
    Forfeit,
    SearchError,
    SearchInfo,
    Strategy,
    StrategyError,
    StrategyOptionError,
    UnknownStrategyError,
    make_strategy,
    make_strategy_from_spec,
    parse_spec,
)

__all__ = [
    "STRATEGIES",
    "Budget",
    "Forfeit",
    "SearchError",
    "SearchInfo",
    "Strategy",
    "StrategyError",
    "StrategyOptionError",
    "UnknownStrategyError",
    "make_strategy",
    "make_strategy_from_spec",
    "parse_spec",
]
