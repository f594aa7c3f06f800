"""``arena analyse`` as a process on a real SQLite file, checked against brute force.

The games (``perfect_play.endgame_games``) reach 28 stones by seeded quiet
random play, then mix best and random moves; every move from there on has
its value before and after computed by plain negamax in the test, and Pons'
scores from their definition, and so has the value of every other legal move
(the candidates a replay shows beside the bot's search). Earlier moves,
beyond brute force, are checked for consistency: the value after a move is
the next position's value seen from the other side, no move raises its
mover's outcome, and the best candidate is worth the position's value.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import sqlite3
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest, gamma

from arena.cli.main import main
from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from arena.store.analysis import MoveAnalysisRecord
from protocol.games import Connect4State
from tests.analysis.perfect_play import (
    ENDGAME_STONES,
    Perfect,
    endgame_games,
    move_value,
    perfect_value,
    pons_score,
)
from tests.analysis.stored_games import PLAYERS, run_analyse, seed_database
from tests.arena.http_schema import check_route

BUDGET_MS = 50


@dataclass(frozen=True)
class Analysed:
    """A database whose games ``arena analyse --all`` analysed."""

    path: Path
    url: str
    ids: list[str]
    games: list[tuple[int, ...]]
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Analysed]:
    games = endgame_games(seed=5, count=6)
    path = tmp_path_factory.mktemp("analysed") / "arena.db"
    url, ids = seed_database(path, games)
    done = run_analyse(url, "--all", "--budget-ms", str(BUDGET_MS), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    yield Analysed(path, url, ids, games, done.stdout, done.stderr)


def stored_rows(url: str, match_id: str) -> list[MoveAnalysisRecord]:
    async def read() -> list[MoveAnalysisRecord]:
        async with await Store.open(url, create=False) as store:
            return await store.match_analysis(match_id)

    return asyncio.run(read())


def test_every_move_is_analysed_and_endgames_match_brute_force(analysed: Analysed) -> None:
    assert f"analysed {len(analysed.ids)} matches" in analysed.stdout
    assert f"{len(analysed.ids)}/{len(analysed.ids)} games" in analysed.stderr
    verdicts: Counter[bool | None] = Counter()
    matters: Counter[bool | None] = Counter()
    for match_id, moves in zip(analysed.ids, analysed.games, strict=True):
        rows = stored_rows(analysed.url, match_id)
        assert [row.ply for row in rows] == list(range(len(moves)))
        assert all(row.budget_ms == BUDGET_MS for row in rows)
        # The empty board is far beyond any budget of milliseconds.
        assert rows[0].outcome_before is None and rows[0].blunder is None
        memo: dict[tuple[int, int], Perfect] = {}
        state = Connect4State.initial()
        for row, move in zip(rows, moves, strict=True):
            if state.ply >= ENDGAME_STONES:
                before, after = perfect_value(state, memo), move_value(state, move, memo)
                assert (row.outcome_before, row.score_before) == (
                    before.outcome,
                    pons_score(before, state.ply),
                ), (match_id, row)
                assert (row.outcome_after, row.score_after) == (
                    after.outcome,
                    pons_score(after, state.ply),
                ), (match_id, row)
                assert row.blunder is (after.outcome < before.outcome)
                # Judged only where some legal move changes the value, by brute force.
                worse = [
                    m
                    for m in state.legal_moves()
                    if move_value(state, m, memo).outcome < before.outcome
                ]
                assert row.choice_matters is bool(worse), (match_id, row)
                matters[row.choice_matters] += 1
                # Every legal move's value, the one played included, as brute force has it.
                assert [(c.move, c.outcome, c.score) for c in row.candidates] == [
                    (m, v.outcome, pons_score(v, state.ply))
                    for m in state.legal_moves()
                    for v in [move_value(state, m, memo)]
                ], (match_id, row.ply)
            # The move played is one of the candidates; the best of them is the position's.
            assert [c.move for c in row.candidates] == state.legal_moves()
            chosen = next(c for c in row.candidates if c.move == move)
            assert (chosen.outcome, chosen.score) == (row.outcome_after, row.score_after)
            if row.outcome_before is not None and all(
                c.outcome is not None for c in row.candidates
            ):
                assert max(c.outcome for c in row.candidates) == row.outcome_before  # type: ignore[type-var]
            state = state.play(move)
            verdicts[row.blunder] += 1
        for row, following in itertools.pairwise(rows):
            if row.outcome_after is not None and following.outcome_before is not None:
                assert row.outcome_after == -following.outcome_before
            if row.score_after is not None and following.score_before is not None:
                assert row.score_after == -following.score_before
            if row.outcome_before is not None and row.outcome_after is not None:
                assert row.outcome_after <= row.outcome_before
                assert row.blunder is (row.outcome_after < row.outcome_before)
            else:
                assert row.blunder is None
    assert verdicts[True] >= 3 and verdicts[False] >= 20 and verdicts[None] >= 6
    # Both kinds of endgame move occur: ones where the choice mattered, ones where it did not.
    assert matters[True] >= 10 and matters[False] >= 5


def expected_counts(path: Path) -> dict[str, dict[str, int]]:
    """Per bot, its analysed moves, decided, judged, kept, blunders and games, by plain SQL."""
    found: dict[str, dict[str, int]] = {}
    games: dict[str, set[str]] = {}
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT a.match_id, a.ply, a.outcome_before, a.outcome_after, a.blunder,"
            " a.choice_matters, p0.name, p1.name FROM move_analysis a"
            " JOIN matches m ON m.id = a.match_id JOIN bots p0 ON p0.id = m.player0_id"
            " JOIN bots p1 ON p1.id = m.player1_id"
        ).fetchall()
    for match_id, ply, before, after, blunder, matters, name0, name1 in rows:
        mover = (name0, name1)[ply % 2]
        counts = found.setdefault(mover, Counter())
        counts["moves"] += 1
        if before is not None and after is not None:
            counts["decided"] += 1
            if matters == 1:
                counts["judged"] += 1
                counts["kept"] += before == after
        counts["blunders"] += blunder == 1
        games.setdefault(mover, set()).add(match_id)
    for mover, counts in found.items():
        counts["games"] = len(games[mover])
    return found


def test_accuracy_figures_in_the_leaderboard(
    analysed: Analysed, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = expected_counts(analysed.path)
    assert set(expected) == {name for pair in PLAYERS for name in pair}
    code = main(
        ["leaderboard", "--db", analysed.url, "--accuracy", "--server", "http://127.0.0.1:9"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "accuracy (95%)" in out and "blunders/game (95%)" in out
    for bot, counts in expected.items():
        [line] = [line for line in out.splitlines() if f"  {bot}  " in line]
        ci = binomtest(counts["kept"], counts["judged"]).proportion_ci(method="wilson")
        accuracy = counts["kept"] / counts["judged"]
        judged = counts["judged"]
        assert f"{accuracy:.1%} of {judged} judged ({100 * ci.low:.1f}-{100 * ci.high:.1f})" in line
        per_game = counts["blunders"] / counts["games"]
        low = 0.0 if counts["blunders"] == 0 else gamma.ppf(0.025, counts["blunders"])
        high = gamma.ppf(0.975, counts["blunders"] + 1)
        games = counts["games"]
        assert f"{per_game:.2f} ({low / games:.2f}-{high / games:.2f})" in line
        assert line.split()[-1] == str(games)


def test_one_match_prints_its_moves_and_a_rerun_finds_nothing_left(analysed: Analysed) -> None:
    match_id = analysed.ids[0]
    before = stored_rows(analysed.url, match_id)
    done = run_analyse(analysed.url, match_id, "--budget-ms", str(BUDGET_MS))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"nothing left to analyse at --budget-ms {BUDGET_MS}"
    assert lines[1].startswith(f"match {match_id}: alpha vs beta")
    table = lines[4:]
    assert len(table) == len(analysed.games[0])
    blunders = [row.ply for row in before if row.blunder]
    assert [int(line.split()[0]) for line in table if line.endswith("blunder")] == blunders
    # Moves where every legal move had the same outcome read "any move": they are not judged.
    no_choice = [row.ply for row in before if row.choice_matters is False]
    assert no_choice and [
        int(line.split()[0]) for line in table if line.endswith("any move")
    ] == no_choice
    assert table[0].split()[3:] == ["unknown", "unknown", "?"]
    assert stored_rows(analysed.url, match_id) == before


async def get_json(port: int, path: str) -> dict[str, Any]:
    def fetch() -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            data: dict[str, Any] = json.load(response)
            return data

    return await asyncio.to_thread(fetch)


async def test_the_api_serves_solved_moves_and_each_bots_figures(analysed: Analysed) -> None:
    expected = expected_counts(analysed.path)
    store = await Store.open(analysed.url, create=False)
    server = ArenaServer(ArenaConfig(host="127.0.0.1", port=0, seed=7), store=store)
    await server.start()
    try:
        for match_id in analysed.ids[:2]:
            body = await get_json(server.port, f"/api/matches/{match_id}")
            check_route("/api/matches/{match_id}", 200, body)
            rows = await store.match_analysis(match_id)
            # As JSON: the candidates' tuple is an array.
            assert body["solved"] == json.loads(json.dumps([dataclasses.asdict(r) for r in rows]))
        for bot, counts in expected.items():
            page = await get_json(server.port, f"/api/bots/{bot}")
            check_route("/api/bots/{name}", 200, page)
            [entry] = page["accuracy"]
            assert {key: entry[key] for key in counts} == counts
            assert entry["game"] == "connect4"
            ci = binomtest(counts["kept"], counts["judged"]).proportion_ci(method="wilson")
            assert entry["accuracy"] == pytest.approx(counts["kept"] / counts["judged"], abs=1e-4)
            assert entry["accuracy_ci95"] == pytest.approx([ci.low, ci.high], abs=1e-4)
            per_game = counts["blunders"] / counts["games"]
            assert entry["blunders_per_game"] == pytest.approx(per_game, abs=1e-3)
            high = gamma.ppf(0.975, counts["blunders"] + 1) / counts["games"]
            assert entry["blunders_per_game_ci95"][1] == pytest.approx(high, abs=1e-4)
        # A bot without analysed moves has an empty list.
        await store.add_bot("newcomer")
        assert (await get_json(server.port, "/api/bots/newcomer"))["accuracy"] == []
    finally:
        await server.shutdown()
        await store.close()
