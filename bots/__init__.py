"""Bot strategies (random, MCTS, heuristic) with process-pool search, and offline matches.

    from bots import Budget, make_strategy
    with make_strategy("mcts", game="connect4", simulations=10_000) as bot:
        move = bot.choose_move(state)                       # no clock
        move = bot.choose_move(state, Budget.seconds(0.2))  # within 0.2 s

See ``bots.strategy`` for the interface and its exception tree, ``bots.budget``
for the time a move may take. The subpackages: ``bots.client`` (play on an arena
server), ``bots.strategies`` (the built-in strategies), ``bots.kernels`` (compiled
search), ``bots.ugi`` (external engines). Names here and in those packages'
``__init__`` are the public API (``tests/test_import_contracts.py`` holds the arena
to it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bots.budget import Budget
from bots.exports import lazy_exports
from bots.match import GameRecord, MatchResult, play_match
from bots.strategy import (
    ALIASES,
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
    strategy_class,
)

if TYPE_CHECKING:
    from bots.cli import main as cli_main

# The ``bots`` command imports the client's option parsers: loaded on first use.
__getattr__ = lazy_exports(__name__, {"cli_main": "bots.cli:main"})

__all__ = [
    "ALIASES",
    "STRATEGIES",
    "Budget",
    "Forfeit",
    "GameRecord",
    "MatchResult",
    "SearchError",
    "SearchInfo",
    "Strategy",
    "StrategyError",
    "StrategyOptionError",
    "UnknownStrategyError",
    "cli_main",
    "make_strategy",
    "make_strategy_from_spec",
    "parse_spec",
    "play_match",
    "strategy_class",
]
