"""What the client asks for a move: ``MoveChooser``, and ``StrategyChooser`` over a strategy.

A chooser gets the position and the move's ``Budget`` (its deadline and the
clock it came from) and answers with a ``Decision``: the move and, when the
chooser searched, the ``Analysis`` shown to spectators.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bots.budget import Budget, think_ms
from bots.strategy import SearchInfo, Strategy
from protocol.games import GameState
from protocol.messages import MAX_TREE_NODES, Analysis, MoveStat, TimeControl, TreeNode
from protocol.messages.codes import MAX_ANALYSIS_MOVES


@dataclass(frozen=True, slots=True)
class Decision:
    """A chosen move and, optionally, the search report sent with it."""

    move: int
    analysis: Analysis | None = None


class MoveChooser(Protocol):
    """What the client asks for a move; must not block the event loop while it thinks."""

    async def choose(self, state: GameState, budget: Budget) -> Decision:
        """A legal move for ``state`` (a game in progress), by ``budget.deadline``."""
        ...


@runtime_checkable
class TimedChooser(Protocol):
    """A chooser with a per-move time limit of its own, checked against each match's clock."""

    @property
    def time_ms(self) -> float | None:
        """The configured time per move in ms, or None when it has no time limit."""
        ...

    def describe(self) -> str:
        """A one-line name for log lines."""
        ...


def time_control_warning(chooser: object, tc: TimeControl, margin_ms: float) -> str | None:
    """Why ``chooser``'s own time limit does not fit ``tc`` (None when it fits or it has none)."""
    if not isinstance(chooser, TimedChooser) or chooser.time_ms is None:
        return None
    allowed_ms = think_ms(tc.move_ms + tc.bank_ms, tc.bank_ms, margin_ms=margin_ms)
    if chooser.time_ms <= allowed_ms:
        return None
    return (
        f"{chooser.describe()} takes {chooser.time_ms:g} ms a move but the match gives "
        f"{tc.move_ms} ms (bank {tc.bank_ms} ms): each search stops at its deadline instead, "
        f"after about {allowed_ms:.0f} ms on the first move"
    )


def analysis_from(info: SearchInfo | None) -> Analysis | None:
    """The wire ``Analysis`` for a search report, or None when the strategy did not search."""
    if info is None or (
        info.simulations == 0 and info.value is None and not info.moves and not info.pv
    ):
        return None
    # Most visited first, so the cut to the protocol's limit keeps what matters.
    ranked = sorted(info.moves, key=lambda stat: -stat[1])[:MAX_ANALYSIS_MOVES]
    nodes = info.counts == "nodes"
    return Analysis(
        simulations=None if nodes else info.simulations,
        sims_per_s=None if nodes else _finite(info.sims_per_s, 1),
        nodes=info.simulations if nodes else None,
        nodes_per_s=_finite(info.sims_per_s, 1) if nodes else None,
        value=_finite(info.value, 4),
        depth=info.depth,
        moves=tuple(
            MoveStat(move=move, visits=visits, value=_finite(value, 4))
            for move, visits, value in ranked
        ),
        pv=info.pv[:MAX_ANALYSIS_MOVES] or None,
        tree=_tree(info.tree),
    )


def _tree(stats: tuple[tuple[tuple[int, ...], int, float], ...]) -> tuple[TreeNode, ...] | None:
    """The wire tree of a search's tree statistics (parents first), cut to the protocol's bound."""
    if not stats:
        return None
    index: dict[tuple[int, ...], int] = {}
    nodes: list[TreeNode] = []
    for path, visits, value in stats:
        parent = index.get(path[:-1]) if len(path) > 1 else None
        if len(path) > 1 and parent is None:
            continue  # its parent was cut
        if len(nodes) == MAX_TREE_NODES:
            break
        index[path] = len(nodes)
        nodes.append(TreeNode(path[-1], visits, _finite(value, 4), parent))
    return tuple(nodes)


def _finite(value: float | None, digits: int) -> float | None:
    # The protocol refuses NaN and infinities; rounding keeps each move frame small.
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


class StrategyChooser:
    """A ``MoveChooser`` over a ``bots`` strategy, reporting its search unless ``analysis=False``.

    The strategy is not closed here: its owner closes it (``strategy.close()``).
    """

    def __init__(self, strategy: Strategy, analysis: bool = True) -> None:
        self.strategy = strategy
        self.analysis = analysis
        # One search at a time, so ``last_search`` belongs to the move just chosen.
        # A move waiting here spends its own clock: its deadline was fixed on arrival.
        self._lock = asyncio.Lock()

    @property
    def time_ms(self) -> float | None:
        """The strategy's own time per move, if it has one."""
        return self.strategy.time_ms

    def describe(self) -> str:
        """The strategy's one-line name."""
        return self.strategy.describe()

    async def choose(self, state: GameState, budget: Budget) -> Decision:
        """Search in the strategy's pool (or a thread) without blocking the loop."""
        async with self._lock:
            move = await self.strategy.choose_move_async(state, budget)
            info = self.strategy.last_search
        return Decision(move, analysis_from(info) if self.analysis else None)
