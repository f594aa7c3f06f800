"""The strategy interface, its search report, the registry and ``make_strategy``.

A strategy chooses a move for a ``GameState`` within a ``Budget`` (the
move's deadline and clock, ``bots.budget``)::

    with make_strategy("mcts", game="connect4", simulations=10_000) as bot:
        move = bot.choose_move(state)                       # no clock
        move = bot.choose_move(state, Budget.seconds(0.2))  # done within 0.2 s
        bot.last_search.sims_per_s

Errors raised here::

    StrategyError                 root of the strategy errors
    ├── UnknownStrategyError      (also ValueError) no strategy of that kind
    ├── StrategyOptionError       (also ValueError) unknown or malformed option
    ├── SearchError               a search worker failed or the pool is closed
    └── Forfeit                   the strategy gives up the game (an engine fault), with
                                  a one-line reason; the player loses that game

Adding a strategy is one module defining a ``Strategy`` subclass and one line
in ``_REGISTRY`` (imported lazily, so ``random`` never loads Numba).
"""

from __future__ import annotations

import asyncio
import importlib
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Literal, Self

from bots.budget import Budget
from protocol.games import GAMES, GameState


class StrategyError(Exception):
    """Root of the errors raised by strategies."""


class UnknownStrategyError(StrategyError, ValueError):
    """No strategy is registered under that kind."""


class StrategyOptionError(StrategyError, ValueError):
    """An option is unknown for the strategy, or its value is malformed."""


class SearchError(StrategyError):
    """A search could not run: a worker died, or the strategy was closed."""


class Forfeit(StrategyError):
    """The strategy cannot play on in this game: it loses it (``str(exc)`` says why, one line).

    Raised by external engines (``bots.ugi``) that crash, hang, write garbage
    or choose an illegal move. The client resigns the match with the reason;
    offline play records the loss. The next game gets a working strategy again.
    """


@dataclass(frozen=True, slots=True)
class SearchInfo:
    """What the last search saw.

    ``simulations`` counts MCTS simulations (playouts) or, when ``counts`` is
    ``"nodes"``, the positions a node-counting search visited (alpha-beta, the solver);
    ``value`` is the root value for the player to move in [-1, 1] (None when
    the strategy has none); ``depth`` the completed alpha-beta depth;
    ``moves`` the MCTS root children as ``(move, visits, mean value)``, the
    value from the mover's point of view.
    """

    simulations: int
    elapsed_s: float
    value: float | None = None
    depth: int | None = None
    moves: tuple[tuple[int, int, float], ...] = ()
    workers: int = 1
    counts: Literal["simulations", "nodes"] = "simulations"
    """What ``simulations`` counts, so the report is labelled truly."""
    pv: tuple[int, ...] = ()
    """The principal variation, when the search reports one (UGI engines' ``info pv``)."""
    tree: tuple[tuple[tuple[int, ...], int, float], ...] = ()
    """The top of an MCTS tree: per node its moves from the root, visits and mean value
    (for the player who made its last move), parents before children."""

    @property
    def sims_per_s(self) -> float:
        """Simulations (or nodes) per second of wall time."""
        return self.simulations / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def nodes(self) -> int:
        """Alias of ``simulations`` for node-counting searches."""
        return self.simulations


class Strategy(ABC):
    """Chooses moves. Subclasses set ``kind`` and ``OPTIONS`` and implement ``_choose``.

    ``OPTIONS`` maps each keyword option to its type, so text specs can be
    converted and checked. A strategy holding workers must be closed (or used
    as a context manager). ``time_ms`` is the strategy's own per-move time
    limit when it has one (``arena-bot`` warns when it exceeds a match's
    time control); the budget's deadline cuts it short either way.
    """

    kind: ClassVar[str]
    OPTIONS: ClassVar[dict[str, type]] = {}
    time_ms: float | None = None

    def __init__(self, game: str) -> None:
        if game not in GAMES:
            raise StrategyOptionError(f"unknown game {game!r}; valid games: {', '.join(GAMES)}")
        self.game = game
        self.last_search: SearchInfo | None = None
        self._closed = False

    def choose_move(self, state: GameState, budget: Budget | None = None) -> int:
        """A legal move for ``state`` (a game in progress), chosen by ``budget.deadline``.

        ``budget`` None: no clock, the strategy's own limits alone.
        """
        self._check_state(state)
        return self._choose(state, budget or Budget.UNLIMITED)

    async def choose_move_async(self, state: GameState, budget: Budget | None = None) -> int:
        """``choose_move`` without blocking the running event loop."""
        self._check_state(state)
        return await asyncio.to_thread(self._choose, state, budget or Budget.UNLIMITED)

    @abstractmethod
    def _choose(self, state: GameState, budget: Budget) -> int:
        """Choose a move for a checked, unfinished state by ``budget.deadline``; set
        ``last_search``. A search runs for ``budget.cap_s(its own limit)`` seconds."""

    def close(self) -> None:
        """Release workers; idempotent."""
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def describe(self) -> str:
        """A one-line name for tables, e.g. ``mcts(simulations=1000)``."""
        return self.kind

    def _check_state(self, state: GameState) -> None:
        if self._closed:
            raise SearchError(f"{self.kind}: the strategy is closed")
        if state.name != self.game:
            raise StrategyOptionError(
                f"{self.kind}: made for {self.game!r}, asked to play {state.name!r}"
            )
        if state.outcome() is not None:
            raise StrategyError(f"{self.kind}: the game is over, there is no move to choose")


def timed_info(start: float, simulations: int, **fields: Any) -> SearchInfo:
    """A ``SearchInfo`` whose elapsed time runs from ``start`` (a ``perf_counter``)."""
    return SearchInfo(simulations=simulations, elapsed_s=time.perf_counter() - start, **fields)


_REGISTRY: dict[str, str] = {
    "random": "bots.strategies.random_bot:RandomStrategy",
    "mcts": "bots.strategies.mcts:MCTSStrategy",
    "mcts-heavy": "bots.strategies.mcts:HeavyMCTSStrategy",
    "greedy": "bots.strategies.heuristic:GreedyStrategy",
    "alphabeta": "bots.strategies.heuristic:AlphaBetaStrategy",
    "solver": "bots.strategies.solver_strategy:SolverStrategy",
    "ugi": "bots.ugi.strategy:UGIStrategy",
}

STRATEGIES: tuple[str, ...] = tuple(_REGISTRY)
"""Every strategy kind ``make_strategy`` accepts."""

ALIASES: dict[str, str] = {"sims": "simulations", "c": "exploration", "ms": "time_ms"}
"""Short option names accepted by ``make_strategy`` and in specs."""


def strategy_class(kind: str) -> type[Strategy]:
    """The class registered as ``kind``; raises ``UnknownStrategyError`` listing the kinds."""
    try:
        target = _REGISTRY[kind]
    except (KeyError, TypeError):
        raise UnknownStrategyError(
            f"unknown strategy {kind!r}; valid strategies: {', '.join(STRATEGIES)}"
        ) from None
    module_name, _, class_name = target.partition(":")
    cls: type[Strategy] = getattr(importlib.import_module(module_name), class_name)
    return cls


def make_strategy(kind: str, game: str, **options: Any) -> Strategy:
    """Build a strategy: ``make_strategy("mcts", game="connect4", simulations=10_000)``."""
    cls = strategy_class(kind)
    checked: dict[str, Any] = {}
    for name, value in options.items():
        full = ALIASES.get(name, name)
        if full not in cls.OPTIONS:
            valid = ", ".join(sorted(cls.OPTIONS)) or "none"
            raise StrategyOptionError(f"{kind}: unknown option {name!r}; valid options: {valid}")
        if full in checked:
            raise StrategyOptionError(f"{kind}: option {full!r} given twice")
        checked[full] = _convert(kind, full, value, cls.OPTIONS[full])
    return cls(game, **checked)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``"mcts:sims=2000,workers=2"`` into ``("mcts", {"sims": "2000", "workers": "2"})``.

    ``"ugi:CMD"`` is an engine's command line, kept whole: ``("ugi", {"command": "CMD"})``.
    """
    kind, _, rest = spec.strip().partition(":")
    if kind.strip() == "ugi":
        return "ugi", {"command": rest.strip()}
    options: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or not value.strip():
            raise StrategyOptionError(f"bad option {item!r} in spec {spec!r}: expected name=value")
        if name.strip() in options:
            raise StrategyOptionError(f"option {name.strip()!r} repeated in spec {spec!r}")
        options[name.strip()] = value.strip()
    return kind.strip(), options


def make_strategy_from_spec(spec: str, game: str) -> Strategy:
    """Build a strategy from a text spec such as ``"mcts:sims=10000,workers=2"``."""
    kind, options = parse_spec(spec)
    return make_strategy(kind, game=game, **options)


_TYPE_WORDS: dict[type, str] = {
    int: "an integer",
    float: "a number",
    bool: "true or false",
    str: "a text",
}
"""How an option's type reads in an error message."""


def _convert(kind: str, name: str, value: Any, typ: type) -> Any:
    """Coerce a (possibly text) option value to its declared type."""
    if isinstance(value, str):
        text = value.strip()
        try:
            if typ is bool:
                if text.lower() not in ("1", "0", "true", "false", "yes", "no"):
                    raise ValueError(text)
                return text.lower() in ("1", "true", "yes")
            if typ is int:
                return int(text.replace("_", ""))
            return typ(text)
        except ValueError:
            raise StrategyOptionError(
                f"{kind}: option {name!r} needs {_TYPE_WORDS.get(typ, typ.__name__)}, got {value!r}"
            ) from None
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, typ) or (typ is not bool and isinstance(value, bool)):
        raise StrategyOptionError(
            f"{kind}: option {name!r} needs {_TYPE_WORDS.get(typ, typ.__name__)}, got {value!r}"
        )
    return value
