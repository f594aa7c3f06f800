"""Score arithmetic, game plans and the progress line, without the solver.

Values come from the brute force of ``perfect_play`` (plies to the end), and
Pons' scores from their definition (``pons_score``), so the conversions in
``arena.analysis.values`` are checked against neither themselves nor the solver.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from arena.analysis.figures import accuracy_figures
from arena.analysis.plan import GamePlan
from arena.analysis.progress import Progress, format_duration
from arena.analysis.values import Solved, describe, line_score, plies_to_end
from arena.store.analysis import AccuracyCounts, AnalysisTarget
from protocol.games import Connect4State
from tests.analysis.perfect_play import (
    ENDGAME_STONES,
    Perfect,
    endgame_games,
    move_value,
    perfect_value,
    pons_score,
)
from tests.arena.http_schema import check_def


@pytest.fixture(scope="module")
def games() -> list[tuple[int, ...]]:
    return endgame_games(seed=5, count=6)


def _endgame_values(moves: tuple[int, ...]) -> list[tuple[Connect4State, Perfect]]:
    memo: dict[tuple[int, int], Perfect] = {}
    state = Connect4State.initial().play_all(moves[:ENDGAME_STONES])
    found = []
    for move in moves[ENDGAME_STONES:]:
        found.append((state, perfect_value(state, memo)))
        state = state.play(move)
    return found


def test_scores_convert_to_the_plies_brute_force_finds(games: list[tuple[int, ...]]) -> None:
    seen = set()
    for moves in games:
        for state, value in _endgame_values(moves):
            score = pons_score(value, state.ply)
            seen.add(value.outcome)
            if value.outcome == 0:
                assert describe(0, 0, state.ply) == "draw"
                continue
            assert plies_to_end(score, state.ply) == value.plies
            word = "win" if value.outcome > 0 else "loss"
            assert (
                describe(value.outcome, score, state.ply) == f"{word} in {(value.plies + 1) // 2}"
            )
    assert seen >= {1, -1}


def test_published_positions_and_a_line_completed_at_any_ply() -> None:
    # Pons' "4455" scores 18: two moves (three plies) to win; "44455554221" scores -15.
    assert plies_to_end(18, 4) == 3 and describe(1, 18, 4) == "win in 2"
    assert plies_to_end(-15, 11) == 2 and describe(-1, -15, 11) == "loss in 1"
    for ply in range(42):
        assert line_score(ply) == pons_score(Perfect(1, 1), ply)
        assert plies_to_end(line_score(ply), ply) == 1
    assert describe(1, None, 10) == "win" and describe(None, None, 3) == "unknown"
    with pytest.raises(ValueError):
        plies_to_end(0, 7)


def test_a_plan_solves_each_position_once_and_marks_the_blunders(
    games: list[tuple[int, ...]],
) -> None:
    blunders = kept = matters = 0
    for number, moves in enumerate(games):
        settled = frozenset(range(ENDGAME_STONES))
        plan = GamePlan(AnalysisTarget(f"m{number}", moves, settled))
        assert plan.todo == list(range(ENDGAME_STONES, len(moves)))
        positions = plan.positions()
        # Every unfinished position from the first unsettled ply on; the final one is over.
        assert sorted(positions) == list(range(ENDGAME_STONES, len(moves)))
        memo: dict[tuple[int, int], Perfect] = {}
        solved = {}
        for k, position in positions.items():
            state = Connect4State.from_notation(position.notation)
            value = perfect_value(state, memo)
            solved[k] = Solved(value.outcome, pons_score(value, k))
        choices = plan.candidate_positions()
        others = {}
        for key, position in choices.items():
            value = perfect_value(Connect4State.from_notation(position.notation), memo)
            others[key] = Solved(value.outcome, pons_score(value, key[0] + 1))
        rows = plan.rows(solved, budget_ms=50, candidates=others)
        state = Connect4State.initial().play_all(moves[:ENDGAME_STONES])
        for row, move in zip(rows, moves[ENDGAME_STONES:], strict=True):
            before, after = perfect_value(state, memo), move_value(state, move, memo)
            assert (row.outcome_before, row.score_before) == (
                before.outcome,
                pons_score(before, state.ply),
            )
            assert (row.outcome_after, row.score_after) == (
                after.outcome,
                pons_score(after, state.ply),
            )
            assert row.blunder == (after.outcome < before.outcome)
            # The choice mattered when some legal move (by brute force) loses value.
            values = {m: move_value(state, m, memo).outcome for m in state.legal_moves()}
            assert row.choice_matters is any(v < before.outcome for v in values.values())
            # Every move not played whose position is unfinished is solved (the candidates).
            asked = {m for p, m in choices if p == state.ply}
            unfinished = {m for m in values if state.play(m).outcome() is None}
            assert asked == unfinished - {move}
            assert [c.move for c in row.candidates] == state.legal_moves()
            matters += row.choice_matters is True
            blunders += row.blunder is True
            kept += row.blunder is False
            state = state.play(move)
    assert blunders >= 3 and kept >= 10 and blunders < matters < blunders + kept


def test_mirrored_and_transposed_positions_share_a_key() -> None:
    game = (3, 3, 2, 4, 1)
    mirrored = tuple(6 - m for m in game)
    transposed = (2, 4, 3, 3, 1)  # the same stones, dropped in another order
    keys = [
        GamePlan(AnalysisTarget("m", moves, frozenset())).positions()[5].key
        for moves in (game, mirrored, transposed)
    ]
    assert keys[0] == keys[1] == keys[2]


def test_a_resigned_game_needs_its_last_position_and_an_unknown_stays_unknown() -> None:
    plan = GamePlan(AnalysisTarget("m", (3, 3, 3), frozenset({0})))
    assert plan.todo == [1, 2] and sorted(plan.positions()) == [1, 2, 3]
    rows = plan.rows({1: Solved(None, None), 2: Solved(1, None), 3: Solved(-1, -18)}, 100)
    assert [(r.outcome_before, r.outcome_after, r.blunder) for r in rows] == [
        (None, -1, None),
        (1, 1, False),
    ]
    assert rows[1].score_after == 18 and rows[1].budget_ms == 100


def test_an_illegal_stored_move_ends_what_is_analysed() -> None:
    plan = GamePlan(AnalysisTarget("m", (0, 0, 0, 0, 0, 0, 0, 1), frozenset()))
    assert plan.todo == list(range(6))


def test_the_progress_line_counts_games_rate_and_eta() -> None:
    now = [100.0]
    out = io.StringIO()
    progress = Progress(10, out, clock=lambda: now[0])
    now[0] += 20.0
    progress.solved(400)
    for _ in range(4):
        progress.game_done()
    line = progress.line()
    assert "4/10 games" in line and "400 positions" in line and "20/s" in line
    assert line.endswith("ETA 30s") and line.startswith("[" + "#" * 9 + ".")
    # Not a terminal: one full line per interval, and one at the end.
    assert out.getvalue().count("\n") == 1
    progress.close()
    assert out.getvalue().count("\n") == 2
    assert [format_duration(s) for s in (4.4, 65, 7500)] == ["4s", "1m05s", "2h05m"]


def test_the_documented_figures_are_what_the_api_answers() -> None:
    text = (Path(__file__).parents[2] / "docs" / "analysis.md").read_text("utf-8")
    [block] = re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)
    example = json.loads(block)
    check_def("BotAccuracy", example)
    fields = ("game", "moves", "decided", "judged", "kept", "blunders", "games")
    counts = AccuracyCounts("x", *(example[field] for field in fields))
    assert accuracy_figures(counts).to_json() == example
