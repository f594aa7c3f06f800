"""The game registry: one ``GameSpec`` a game, checked when made; unknown names raise."""

from __future__ import annotations

import random

import pytest

from protocol.errors import UnknownGameError
from protocol.games import (
    GAMES,
    GameSpec,
    SuiteRecipe,
    Termination,
    TicTacToeState,
    game_spec,
    game_specs,
    get_game_class,
    new_game,
)
from protocol.games.spec import identity


def test_every_game_is_one_spec_named_by_its_rules() -> None:
    assert tuple(spec.name for spec in game_specs()) == GAMES
    for spec in game_specs():
        assert game_spec(spec.name) is spec
        assert get_game_class(spec.name) is spec.rules
        assert spec.rules.name == spec.name


@pytest.mark.parametrize("game", GAMES)
def test_every_ending_the_rules_reach_has_the_games_words(game: str) -> None:
    spec = game_spec(game)
    rng = random.Random(f"endings-{game}")
    reached = {new_game(game).random_playout(rng).termination for _ in range(300)}
    assert reached <= set(spec.terminations), reached - set(spec.terminations)


def test_unknown_games_raise_with_the_valid_names() -> None:
    for name in ("chess", "Connect4", "", None):
        with pytest.raises(UnknownGameError, match="valid games: connect4, tictactoe"):
            game_spec(name)  # type: ignore[arg-type]


def test_words_for_endings_fall_back_to_the_referees() -> None:
    spec = game_spec("connect4")
    assert spec.termination_text(Termination.LINE) == "four in a row"
    assert spec.termination_text(Termination.ILLEGAL_MOVE) == "illegal move"
    assert game_spec("uttt-quick").termination_text(Termination.LINE) == "first local board won"


def test_a_spec_is_checked_when_it_is_made() -> None:
    words = {Termination.LINE: "three in a row", Termination.DRAW: "board full"}
    GameSpec(TicTacToeState, "a cell", words, "tictactoe")  # the minimal spec is fine
    with pytest.raises(ValueError, match="no words for the endings"):
        GameSpec(TicTacToeState, "a cell", {}, "tictactoe")
    with pytest.raises(ValueError, match="the referee words its endings resign"):
        GameSpec(TicTacToeState, "a cell", {**words, Termination.RESIGN: "gave up"}, "tictactoe")
    with pytest.raises(ValueError, match="not a plain name"):
        GameSpec(TicTacToeState, "a cell", words, "../boards/x")
    with pytest.raises(ValueError, match="first symmetry must be identity"):
        GameSpec(TicTacToeState, "a cell", words, "tictactoe", symmetries=(lambda m: 8 - m,))
    with pytest.raises(ValueError, match="balanced suite 'ttt-1ply' is not shipped"):
        GameSpec(TicTacToeState, "a cell", words, "tictactoe", balanced_suite="ttt-1ply")
    recipe = SuiteRecipe("ttt-1ply", 1, True)
    spec = GameSpec(
        TicTacToeState, "a cell", words, "tictactoe", (identity,), (recipe,), "ttt-1ply"
    )
    assert spec.suite_names == ("ttt-1ply",)
