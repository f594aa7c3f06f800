"""Bot strategies (random, MCTS, heuristic) with process-pool search, and offline matches.

    from bots import make_strategy
    with make_strategy("mcts", game="connect4", simulations=10_000) as bot:
        move = bot.choose_move(state)

See ``bots.strategy`` for the interface and its exception tree.
"""

from __future__ import annotations

from bots.strategy import (
    STRATEGIES,
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
