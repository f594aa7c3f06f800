"""Offline matches: colours swap, seeds reproduce, pairs tally, the ``bots`` command."""

from __future__ import annotations

import pytest

from arena.cli.bots_command import main
from bots import make_strategy
from bots.cli import main as bare_main
from bots.match import play_match, random_opening


def test_play_match_swaps_colours_and_counts() -> None:
    result = play_match("tictactoe", ["random:seed=1", "random:seed=2"], games=6, seed=3)
    assert [g.first for g in result.games] == [0, 1, 0, 1, 0, 1]
    assert result.wins(0) + result.wins(1) + result.draws() == 6
    assert result.points(0) + result.points(1) == 6
    for record in result.games:
        assert record.final.outcome() == record.outcome
        # The moves replay to the final position.
        assert record.final.moves == record.moves


def test_play_match_is_reproducible_with_a_seed() -> None:
    def run() -> list[tuple[int, ...]]:
        a = make_strategy("mcts", game="connect4", simulations=200, workers=0, seed=5)
        b = make_strategy("random", game="connect4", seed=6)
        result = play_match("connect4", [a, b], games=4, seed=11, opening_plies=2)
        return [g.moves for g in result.games]

    first = run()
    assert first == run()
    # Each colour-swapped pair starts from the same opening.
    assert first[0][:2] == first[1][:2]
    assert first[2][:2] == first[3][:2]


def test_random_opening_does_not_finish_the_game() -> None:
    import random

    rng = random.Random(1)
    for _ in range(50):
        assert len(random_opening("tictactoe", 6, rng)) == 6


def test_pair_scores_add_up_each_colour_swapped_pair() -> None:
    result = play_match("tictactoe", ["random:seed=1", "random:seed=2"], games=5, seed=3)
    scores = result.scores(0)
    assert result.pair_scores(0) == [scores[0] + scores[1], scores[2] + scores[3]]
    assert [2 - s for s in result.pair_scores(0)] == result.pair_scores(1)


def test_cli_play_prints_score_and_boards(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["play", "tictactoe", "random:seed=1", "greedy:seed=2", "--games", "2", "--seed", "1"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "[2/2]" in out
    assert "Elo difference (random - greedy), 1 pair, 95%: too few games" in out
    assert "Game 2:" in out
    # bots.cli alone (python -m bots.cli) may not reach the arena's statistics.
    assert bare_main(["play", "tictactoe", "random", "random", "--games", "2", "--quiet"]) == 0
    assert "Elo difference" not in capsys.readouterr().out


def test_cli_reports_bad_specs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "tictactoe", "minimax", "random"]) == 2
    assert "valid strategies" in capsys.readouterr().err
