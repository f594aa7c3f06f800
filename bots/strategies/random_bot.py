"""``random``: a uniformly random legal move."""

from __future__ import annotations

import random
import time
from typing import ClassVar

from bots.budget import Budget
from bots.strategy import SearchInfo, Strategy
from protocol.games import GameState


class RandomStrategy(Strategy):
    """Uniform over the legal moves; ``seed`` makes it reproducible. Answers at once."""

    kind: ClassVar[str] = "random"
    OPTIONS: ClassVar[dict[str, type]] = {"seed": int}

    def __init__(self, game: str, seed: int | None = None) -> None:
        super().__init__(game)
        self._rng = random.Random(seed)

    def _choose(self, state: GameState, budget: Budget) -> int:
        start = time.perf_counter()
        move = self._rng.choice(state.legal_moves())
        self.last_search = SearchInfo(simulations=0, elapsed_s=time.perf_counter() - start)
        return move
