"""``arena analyse`` interrupted with Ctrl-C, rerun, and rerun with a larger budget.

Matches commit whole: after the interrupt every match has all its rows or
none; a rerun adds the missing ones and leaves the committed ones alone; a
larger budget redoes exactly the moves that had an unknown value.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.analysis.perfect_play import endgame_games
from tests.analysis.stored_games import analyse_command, run_analyse, seed_database

Row = tuple[str, int, int | None, int | None, int | None, int | None, int, int, str, bool | None]


def rows(path: Path) -> dict[tuple[str, int], Row]:
    with sqlite3.connect(path) as db:
        found = db.execute(
            "SELECT match_id, ply, score_before, score_after, outcome_before, outcome_after,"
            " blunder, budget_ms, analysed_at, choice_matters FROM move_analysis"
        ).fetchall()
    return {(row[0], row[1]): row for row in found}


def analysed_matches(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(DISTINCT match_id) FROM move_analysis").fetchone()[0])


def test_an_interrupted_run_keeps_whole_matches_and_a_rerun_completes(tmp_path: Path) -> None:
    games = endgame_games(seed=9, count=5)
    path = tmp_path / "arena.db"
    url, ids = seed_database(path, games)
    process = subprocess.Popen(
        analyse_command(url, "--all", "--budget-ms", "50", "--jobs", "1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while analysed_matches(path) == 0 and process.poll() is None:
        assert time.monotonic() < deadline, "no match was analysed within a minute"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    first = rows(path)
    lengths = {match_id: len(moves) for match_id, moves in zip(ids, games, strict=True)}
    done = {match_id for match_id, _ in first}
    assert 1 <= len(done) < len(ids)
    for match_id in done:
        assert sorted(ply for m, ply in first if m == match_id) == list(range(lengths[match_id]))

    finished = run_analyse(url, "--all", "--budget-ms", "50", "--jobs", "2")
    assert finished.returncode == 0, finished.stderr
    assert f"analysed {len(ids) - len(done)} matches" in finished.stdout
    second = rows(path)
    assert len(second) == sum(lengths.values())
    assert all(second[key] == row for key, row in first.items())

    again = run_analyse(url, "--all", "--budget-ms", "50")
    assert (
        again.returncode == 0
        and again.stdout.strip() == "nothing left to analyse at --budget-ms 50"
    )
    assert rows(path) == second

    # A larger budget retries the moves with an unknown value, and only those: a move is
    # unsettled when its value before or after, or whether its choice mattered (which needs
    # every other legal move's value), is unknown; a busy machine leaves more of them.
    unknown = {key for key, row in second.items() if None in (row[2], row[3], row[9])}
    assert unknown
    retried = run_analyse(url, "--all", "--budget-ms", "60", "--jobs", "2")
    assert retried.returncode == 0, retried.stderr
    third = rows(path)
    assert {key for key, row in third.items() if row != second[key]} == unknown
    assert all(third[key][7] == 60 for key in unknown)
