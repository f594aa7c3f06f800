"""Statistical strength checks (seeded, so they either always pass or always fail)."""

from __future__ import annotations

from bots import make_strategy
from bots.match import play_match


def test_mcts_1000_simulations_beats_random_in_connect4() -> None:
    mcts = make_strategy("mcts", game="connect4", simulations=1000, workers=0, seed=1)
    rand = make_strategy("random", game="connect4", seed=2)
    result = play_match("connect4", [mcts, rand], games=100, seed=3)
    assert result.score_rate(0) >= 0.95


def test_alphabeta_and_heavy_mcts_beat_random_in_connect4() -> None:
    for spec in ("alphabeta:depth=3,workers=0", "mcts-heavy:sims=300,workers=0,seed=1"):
        result = play_match("connect4", [spec, "random:seed=4"], games=20, seed=5)
        assert result.score_rate(0) >= 0.9, spec


def test_mcts_beats_random_in_uttt() -> None:
    result = play_match(
        "uttt", ["mcts:sims=2000,workers=0,seed=1", "random:seed=2"], games=10, seed=6
    )
    assert result.score_rate(0) >= 0.9
