"""A board's packed pair cells: the same cells back, and the same records a plain loop gives."""

from __future__ import annotations

import pickle
import random

from arena.leaderboard.board import Cell, PairCells
from arena.stats import PairResult

NAMES = [f"bot{i}" for i in range(12)]


def random_cells(seed: int, count: int) -> list[Cell]:
    rng = random.Random(seed)
    cells: list[Cell] = []
    for _ in range(count):
        bot, opponent = rng.sample(NAMES, 2)
        cells.append((bot, opponent, rng.randrange(5), rng.randrange(3), rng.randrange(5)))
    return cells


def plain_record(cells: list[Cell], bot: str, opponent: str) -> tuple[int, int, int]:
    """What a board's record was before the cells were packed: a loop over the cells."""
    wins = draws = losses = 0
    for a, b, w, d, lost in cells:
        if (a, b) == (bot, opponent):
            wins, draws, losses = wins + w, draws + d, losses + lost
        elif (a, b) == (opponent, bot):
            wins, draws, losses = wins + lost, draws + d, losses + w
    return wins, draws, losses


def plain_opponents(cells: list[Cell], bot: str) -> dict[str, tuple[int, int, int]]:
    met: dict[str, tuple[int, int, int]] = {}
    for a, b, _, _, _ in cells:
        if bot in (a, b):
            other = b if a == bot else a
            met.setdefault(other, plain_record(cells, bot, other))
    return met


def test_packed_cells_iterate_as_the_cells_given_in_their_order() -> None:
    cells = random_cells(seed=1, count=200)
    packed = PairCells.pack(cells)
    assert len(packed) == 200
    assert list(packed) == [PairResult(*cell) for cell in cells]
    assert PairCells.pack([]) == PairCells.pack([]) and list(PairCells.pack([])) == []


def test_records_and_opponents_equal_a_loop_over_the_cells_both_seat_orders() -> None:
    cells = random_cells(seed=2, count=300)
    packed = PairCells.pack(cells)
    for bot in NAMES:
        for opponent in NAMES:
            assert packed.record(bot, opponent) == plain_record(cells, bot, opponent)
        assert packed.opponents(bot) == plain_opponents(cells, bot)
        # In the order they were first met, as the bot page lists them.
        assert list(packed.opponents(bot)) == list(plain_opponents(cells, bot))
    assert packed.record("bot0", "nobody") == (0, 0, 0) and packed.opponents("nobody") == {}


def test_the_digest_follows_the_cells_and_survives_a_pickle() -> None:
    cells = random_cells(seed=3, count=50)
    packed = PairCells.pack(cells)
    assert PairCells.pack(list(cells)).digest() == packed.digest()
    changed = [*cells[:-1], (*cells[-1][:2], cells[-1][2] + 1, *cells[-1][3:])]
    assert PairCells.pack(changed).digest() != packed.digest()
    assert PairCells.pack(cells[::-1]).digest() != packed.digest()
    again = pickle.loads(pickle.dumps(packed))
    assert again == packed and again.digest() == packed.digest()
