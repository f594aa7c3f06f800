"""What ``arena analyse`` refuses: each case one line on stderr and exit status 2, as a process.

Unknown matches, other games, live matches, matches without moves, a
database without moves, a missing database, and malformed arguments.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena.store import Store
from protocol.games import Termination
from tests.analysis.stored_games import run_analyse, store_games


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A database with a tic-tac-toe match, a live and a move-less Connect Four match."""
    path = tmp_path_factory.mktemp("errors") / "arena.db"
    url = f"sqlite+aiosqlite:///{path}"

    async def seed() -> dict[str, str]:
        async with await Store.open(url) as store:
            await store_games(store, [])
            tictactoe = await store.create_match("tictactoe", ("alpha", "beta"), 1000, 0)
            store.record_move(tictactoe, 0, 0, 4, 5, 1)
            await store.finish_match(tictactoe, None, Termination.ABORTED, None, False)
            live = await store.create_match("connect4", ("alpha", "beta"), 1000, 0)
            store.record_move(live, 0, 0, 3, 5, 1)
            empty = await store.create_match("connect4", ("beta", "alpha"), 1000, 0)
            await store.finish_match(empty, None, Termination.ABORTED, None, False)
            await store.flush()
        return {"url": url, "tictactoe": tictactoe, "live": live, "empty": empty}

    return asyncio.run(seed())


def refused(url: str, *args: str) -> str:
    """Run the command, expect exit 2, return its one line of stderr."""
    done = run_analyse(url, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 or lines[0].startswith("usage:"), done.stderr
    return lines[-1]


def test_matches_that_cannot_be_analysed(database: dict[str, str]) -> None:
    url = database["url"]
    assert refused(url, "nosuchid") == "error: no match with id 'nosuchid'"
    assert refused(url, database["tictactoe"]) == (
        f"error: match {database['tictactoe']} is a tictactoe game;"
        " only connect4 games can be analysed"
    )
    assert refused(url, database["live"]) == (
        f"error: match {database['live']} is still being played; analyse it once it ends"
    )
    assert refused(url, database["empty"]) == (
        f"error: match {database['empty']} has no moves to analyse"
    )


def test_a_database_without_moves_or_without_a_file(
    database: dict[str, str], tmp_path: Path
) -> None:
    url = database["url"]
    assert refused(url, "--all") == (
        "error: no moves of finished connect4 matches are stored: nothing to analyse"
    )
    assert refused(url, "--all", "--since", "2020-01-01") == (
        "error: no moves of finished connect4 matches started since"
        " 2020-01-01T00:00:00+00:00: nothing to analyse"
    )
    missing = refused(f"sqlite+aiosqlite:///{tmp_path / 'none.db'}", "--all")
    assert missing.startswith("error: cannot open database") and "does not exist" in missing


def test_malformed_arguments(database: dict[str, str]) -> None:
    url = database["url"]
    assert refused(url) == "error: name one MATCH_ID, or pass --all"
    assert refused(url, "someid", "--all") == "error: name one MATCH_ID, or pass --all"
    assert refused(url, "someid", "--since", "2026-01-01") == "error: --since goes with --all"
    assert refused(url, "--all", "--game", "tictactoe") == (
        "error: only connect4 games can be analysed, not tictactoe"
    )
    assert "a whole number of at least 1, not 0" in refused(url, "--all", "--budget-ms", "0")
    assert "must be a whole number of at least 1" in refused(url, "--all", "--jobs", "two")
