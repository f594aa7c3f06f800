"""The leaderboard bench on a tiny database: its table, and the fit counts it asserts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.leaderboard import build_database, loop_held, measure

pytestmark = pytest.mark.bench


async def test_a_small_run_measures_every_row(tmp_path: Path) -> None:
    path = tmp_path / "bench.db"
    await build_database(path, bots=6, games=300, seed=3)
    # ``measure`` itself asserts that cached GETs fit nothing and each GET after a
    # result fits exactly once.
    rows = await measure(path, repeats=2)
    assert [what.strip() for what, _, _ in rows] == [
        "GET /api/leaderboard, cached",
        "GET /api/leaderboard after a result",
        "Store.leaderboard_inputs",
        "build_board (the fit)",
        "GET /api/bots/NAME after a result",
        "GET /api/bots/NAME again",
    ]
    assert all(ms > 0.0 for _, ms, _ in rows)
    assert rows[0][2] == "6 entries" and rows[2][2] == "30 pair cells"


async def test_the_loop_hold_rows_rebuild_in_the_child_and_in_a_thread(tmp_path: Path) -> None:
    path = tmp_path / "bench.db"
    await build_database(path, bots=6, games=300, seed=4)
    rows = await loop_held(path, repeats=2)
    assert [what for what, _, _ in rows] == [
        "rebuild in the fit process: loop held",
        "rebuild in the thread: loop held",
    ]
    assert all(held > 0.0 and note.startswith("rebuild ") for _, held, note in rows)
