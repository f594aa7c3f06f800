"""Every strategy plays legal moves; make_strategy and spec parsing check their input."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

import pytest

from bots import (
    STRATEGIES,
    StrategyError,
    StrategyOptionError,
    UnknownStrategyError,
    make_strategy,
    make_strategy_from_spec,
    parse_spec,
)
from bots.client.choosing import analysis_from
from bots.strategies.mcts import TREE_BREADTH, TREE_DEPTH, RootStats, merge_root_stats
from protocol.games import GAMES, GameState, new_game
from protocol.messages import Move, parse_client_message, principal_line

UGI_ENGINE = Path(__file__).with_name("ugi_engine.py")

SMALL_BUDGETS = {
    "random": {"seed": 1},
    "greedy": {"seed": 1},
    "mcts": {"simulations": 200, "workers": 0, "seed": 1},
    "mcts-heavy": {"simulations": 200, "workers": 0, "seed": 1},
    "alphabeta": {"depth": 2, "workers": 0},
    "solver": {"time_ms": 20, "workers": 0, "seed": 1},
    "ugi": {"command": f"{sys.executable} {UGI_ENGINE} good 1 {{game}}"},
}
ONLY_GAMES = {"solver": ("connect4",)}
"""Kinds made for some games only; the others are refused."""


def _random_positions(game: str, count: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    positions: list[GameState] = []
    while len(positions) < count:
        state = new_game(game)
        for _ in range(rng.randrange(0, 30)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if not state.is_over():
            positions.append(state)
    return positions


def test_every_registered_kind_has_a_test_budget() -> None:
    assert set(STRATEGIES) == set(SMALL_BUDGETS)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("kind", list(SMALL_BUDGETS))
def test_strategies_choose_legal_moves(kind: str, game: str) -> None:
    if game not in ONLY_GAMES.get(kind, GAMES):
        with pytest.raises(StrategyOptionError):
            make_strategy(kind, game=game, **SMALL_BUDGETS[kind])
        return
    # An engine's command names the game it plays.
    options = {
        name: value.format(game=game) if isinstance(value, str) else value
        for name, value in SMALL_BUDGETS[kind].items()
    }
    with make_strategy(kind, game=game, **options) as bot:
        for state in _random_positions(game, 12, seed=hash((kind, game)) % 1000):
            move = bot.choose_move(state)
            assert move in state.legal_moves()
            assert bot.last_search is not None
            assert bot.last_search.elapsed_s >= 0


@pytest.mark.parametrize("game", GAMES)
def test_python_engine_chooses_legal_moves(game: str) -> None:
    with make_strategy("mcts", game=game, simulations=100, workers=0, engine="python") as bot:
        for state in _random_positions(game, 5, seed=3):
            assert bot.choose_move(state) in state.legal_moves()


def test_mcts_reports_root_statistics() -> None:
    with make_strategy("mcts", game="connect4", simulations=3000, workers=0, seed=2) as bot:
        move = bot.choose_move(new_game("connect4"))
        info = bot.last_search
    assert info is not None
    assert info.simulations == 3000
    assert sum(n for _, n, _ in info.moves) == 3000
    assert [m for m, _, _ in info.moves] == list(range(7))
    assert move == max(info.moves, key=lambda t: t[1])[0]
    assert info.value is not None and -1 <= info.value <= 1
    assert info.sims_per_s > 0


def test_mcts_with_a_seed_is_reproducible() -> None:
    state = new_game("uttt").play_all([40, 36])
    runs = []
    for _ in range(2):
        with make_strategy("mcts", game="uttt", simulations=500, workers=0, seed=9) as bot:
            runs.append((bot.choose_move(state), bot.last_search.moves))  # type: ignore[union-attr]
    assert runs[0] == runs[1]


def test_time_budget_is_respected() -> None:
    with make_strategy("mcts", game="connect4", time_ms=50, workers=0) as bot:
        bot.choose_move(new_game("connect4"))
        assert bot.last_search is not None
        # It searched to its budget; the upper bound is generous (a busy machine), far below
        # what a search that ignored its 50 ms would take.
        assert 0.04 < bot.last_search.elapsed_s < 1.0
        assert bot.last_search.simulations > 1000


def test_choose_move_async_in_process() -> None:
    async def main() -> int:
        with make_strategy("random", game="tictactoe", seed=7) as bot:
            return await bot.choose_move_async(new_game("tictactoe"))

    assert asyncio.run(main()) in range(9)


def test_finished_game_and_wrong_game_are_refused() -> None:
    with make_strategy("random", game="tictactoe", seed=7) as bot:
        with pytest.raises(StrategyError, match="over"):
            bot.choose_move(new_game("tictactoe").play_all([0, 3, 1, 4, 2]))
        with pytest.raises(StrategyOptionError, match="connect4"):
            bot.choose_move(new_game("connect4"))


# make_strategy errors and specs ----------------------------------------------------


def test_unknown_kind_lists_valid_kinds() -> None:
    with pytest.raises(UnknownStrategyError, match="valid strategies: random, mcts"):
        make_strategy("minimax", game="connect4")


def test_unknown_option_lists_valid_options() -> None:
    with pytest.raises(StrategyOptionError, match=r"valid options: .*simulations"):
        make_strategy("mcts", game="connect4", simulation=10)


def test_unknown_game() -> None:
    with pytest.raises(StrategyOptionError, match="valid games"):
        make_strategy("random", game="chess")


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("mcts", {"simulations": 0}, "simulations"),
        ("mcts", {"simulations": "many"}, "needs an integer"),
        ("mcts", {"workers": -1}, "workers"),
        ("mcts", {"engine": "gpu"}, "engine"),
        ("mcts", {"time_ms": True}, "needs a number"),
        ("alphabeta", {"workers": 3}, "workers"),
        ("alphabeta", {"depth": 0}, "depth"),
    ],
)
def test_bad_option_values(kind: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(StrategyOptionError, match=message):
        make_strategy(kind, game="connect4", **options)


def test_alias_and_full_name_together_is_an_error() -> None:
    with pytest.raises(StrategyOptionError, match="twice"):
        make_strategy("mcts", game="connect4", sims=10, simulations=10)


def test_parse_spec() -> None:
    assert parse_spec("mcts:sims=10000,workers=2") == ("mcts", {"sims": "10000", "workers": "2"})
    assert parse_spec(" random ") == ("random", {})
    assert parse_spec("alphabeta: time_ms = 50 ,") == ("alphabeta", {"time_ms": "50"})
    with pytest.raises(StrategyOptionError, match="name=value"):
        parse_spec("mcts:sims")
    with pytest.raises(StrategyOptionError, match="repeated"):
        parse_spec("mcts:sims=1,sims=2")


def test_spec_converts_types_and_aliases() -> None:
    with make_strategy_from_spec(
        "mcts:sims=1_000,c=0.5,ms=20,workers=0,seed=3", "tictactoe"
    ) as bot:
        assert bot.simulations == 1000  # type: ignore[attr-defined]
        assert bot.exploration == 0.5  # type: ignore[attr-defined]
        assert bot.time_ms == 20.0  # type: ignore[attr-defined]
    with pytest.raises(StrategyOptionError, match="valid options: seed"):
        make_strategy_from_spec("random:sims=3", "tictactoe")


def test_workers_zero_searches_in_process_and_default_is_cpu_count() -> None:
    import os

    with make_strategy("mcts", game="tictactoe", simulations=10, workers=0) as bot:
        assert bot._pool is None  # type: ignore[attr-defined]
    with make_strategy("mcts", game="tictactoe", simulations=10) as bot:
        assert bot.workers == (os.cpu_count() or 1)  # type: ignore[attr-defined]


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_mcts_reports_the_top_of_its_tree(engine: str) -> None:
    options = {"simulations": 3000, "workers": 0, "seed": 2, "engine": engine}
    with make_strategy("mcts", game="connect4", **options) as bot:
        move = bot.choose_move(new_game("connect4"))
        info = bot.last_search
    assert info is not None and info.tree
    visits = dict(((path, n) for path, n, _ in info.tree))
    # The most visited moves, their most visited answers, and so on, parents first.
    first_ply = sorted(((n, m) for m, n, _ in info.moves), reverse=True)[: TREE_BREADTH[0]]
    assert [p[0] for p in visits if len(p) == 1] == [m for _, m in first_ply]
    assert all(path[:-1] in visits for path in visits if len(path) > 1)
    assert max(len(path) for path in visits) <= TREE_DEPTH
    for path, n in visits.items():
        below = [visits[p] for p in visits if p[:-1] == path]
        assert sum(below) <= n  # a node's first visit is its own playout
    analysis = analysis_from(info)
    assert analysis is not None and analysis.tree is not None
    line = [analysis.tree[i].move for i in principal_line(analysis.tree)]
    assert line[0] == move and len(line) == TREE_DEPTH
    text = Move("m", 0, move, analysis).to_json()
    assert parse_client_message(text) == Move("m", 0, move, analysis)


def test_merged_searches_sum_their_trees() -> None:
    stats = [
        RootStats((3, 4), (5, 2), (1.0, 0.0), 7, 0.1, tree=(((3,), 5, 1.0), ((3, 2), 3, -1.0))),
        RootStats((3, 4), (1, 6), (0.0, 2.0), 7, 0.1, tree=(((4,), 6, 2.0), ((3,), 1, 0.0))),
    ]
    merged = merge_root_stats(stats).tree
    assert merged == (((3,), 6, 1.0), ((3, 2), 3, -1.0), ((4,), 6, 2.0))
