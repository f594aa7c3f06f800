"""The store rates with the model it is given, on every path: a finish, a rebuild, the writer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from test_store import add_bots, db_url  # noqa: F401  (db_url is a fixture)
from test_store_postgres import pg_url  # noqa: F401  (used by db_url)

from arena.ratings import EloModel, RatingModel, elo_update
from arena.store import RatingChange, Store
from protocol.games import Termination

GAME = "connect4"


@dataclass(frozen=True)
class FixedStep:
    """Not Elo: the winner takes ``step`` points from the loser; a draw changes nothing."""

    step: float = 10.0
    name: ClassVar[str] = "fixed-step"

    @property
    def initial(self) -> float:
        return 1000.0

    @property
    def parameters(self) -> dict[str, float]:
        return {"step": self.step}

    def update(self, ratings: tuple[float, float], score0: float) -> tuple[float, float]:
        delta = self.step * (2.0 * score0 - 1.0)
        return ratings[0] + delta, ratings[1] - delta


def test_elo_model_is_elo_update_with_its_k() -> None:
    model: RatingModel = EloModel(k=16.0)
    assert model.name == "elo" and model.parameters == {"k": 16.0}
    assert model.update((1600.0, 1450.0), 0.5) == elo_update(1600.0, 1450.0, 0.5, 16.0)
    assert EloModel().update((1500.0, 1500.0), 1.0) == (1516.0, 1484.0)


async def finish(store: Store, winner: int | None, players: tuple[str, str]) -> list[RatingChange]:
    match_id = await store.create_match(GAME, players, 1000, 10_000)
    termination = Termination.DRAW if winner is None else Termination.LINE
    return await store.finish_match(match_id, winner, termination, None, True)


async def test_the_store_rates_and_rebuilds_with_the_model_it_is_given(db_url: str) -> None:  # noqa: F811
    store = await Store.open(db_url, rating_model=FixedStep(10.0))
    try:
        await add_bots(store, "alpha", "beta")
        assert await finish(store, 0, ("alpha", "beta")) == [
            RatingChange("alpha", 1000.0, 1010.0),
            RatingChange("beta", 1000.0, 990.0),
        ]
        assert await finish(store, None, ("beta", "alpha")) == [
            RatingChange("beta", 990.0, 990.0),
            RatingChange("alpha", 1010.0, 1010.0),
        ]
        board = [(r.bot, r.rating, r.games) for r in await store.leaderboard(GAME)]
        assert board == [("alpha", 1010.0, 2), ("beta", 990.0, 2)]
        assert await store.rebuild_ratings() == 2
        assert [(r.bot, r.rating, r.games) for r in await store.leaderboard(GAME)] == board
    finally:
        await store.close()


async def test_the_writer_process_is_given_the_same_model(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    store = await Store.open(url, rating_model=EloModel(k=8.0), writer_process=True)
    try:
        await add_bots(store, "alpha", "beta")
        changes = await finish(store, 1, ("alpha", "beta"))
        assert [(c.bot, c.after) for c in changes] == [("alpha", 1496.0), ("beta", 1504.0)]
    finally:
        await store.close()

