"""Tournament settings, opening suites and the schedule: the pure parts, checked directly."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from arena.errors import TournamentError
from arena.tournaments import suites
from arena.tournaments.openings import SUITE_DIR, SUITES, load_openings, parse_openings
from arena.tournaments.schedule import build_schedule, pairings
from arena.tournaments.settings import TournamentSettings
from protocol.games import GAMES, game_spec, new_game

BASE = TournamentSettings(game="connect4", format="round-robin", bots=("a", "b", "c"))
SPRT = TournamentSettings(
    game="connect4",
    format="sprt",
    bots=("new", "old"),
    elo0=0.0,
    elo1=10.0,
    alpha=0.05,
    beta=0.05,
    model="normalized",
    max_games=100,
)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bots": ("a",)}, "at least two bots"),
        ({"bots": ("a", "b", "a")}, "bot a is entered twice"),
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"games_per_pair": 3}, "even number"),
        ({"games_per_pair": 0}, "even number"),
        ({"move_ms": 10}, "--move-ms must be within"),
        ({"concurrency": 0}, "--concurrency"),
        ({"name": "x" * 65}, "longer than 64"),
    ],
)
def test_bad_settings_are_refused_with_one_line(change: dict[str, object], message: str) -> None:
    with pytest.raises(TournamentError, match=message) as caught:
        replace(BASE, **change).check()  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"elo0": 10.0, "elo1": 10.0}, "--elo0 must be below --elo1"),
        ({"elo0": 20.0, "elo1": 10.0}, "--elo0 must be below --elo1"),
        ({"alpha": 0.5}, "--alpha must be within"),
        ({"alpha": 0.0}, "--alpha must be within"),
        ({"beta": 0.7}, "--beta must be within"),
        ({"bots": ("new", "old", "older")}, "exactly two bots"),
        ({"model": "bayes"}, "--model"),
        ({"max_games": 1}, "--max-games"),
    ],
)
def test_bad_sprt_settings_are_refused(change: dict[str, object], message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        replace(SPRT, **change).check()  # type: ignore[arg-type]


def test_settings_travel_as_json_and_are_checked_on_arrival() -> None:
    assert TournamentSettings.from_json(SPRT.to_json()) == SPRT
    with pytest.raises(TournamentError, match="unknown settings: colour"):
        TournamentSettings.from_json({**BASE.to_json(), "colour": "red"})
    with pytest.raises(TournamentError, match="wrong type"):
        TournamentSettings.from_json({**BASE.to_json(), "games_per_pair": "4"})


def test_an_opening_file_names_the_line_of_an_illegal_move(tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text("# two good ones\n3 3\n3,4\n\n3 3 3 3 3 3 3\n")
    with pytest.raises(TournamentError, match=r"book.txt:5: illegal move 3 at ply 6"):
        load_openings(str(book), "connect4")
    book.write_text("3 3\n")
    assert load_openings(str(book), "connect4").openings == ((3, 3),)


def test_openings_that_end_the_game_or_are_not_moves_are_refused() -> None:
    with pytest.raises(TournamentError, match=":1: the opening ends the game"):
        parse_openings("0 3 1 4 2\n", "tictactoe")
    with pytest.raises(TournamentError, match="not a list of moves"):
        parse_openings("e4 e5\n", "connect4")
    with pytest.raises(TournamentError, match="no openings"):
        parse_openings("# nothing\n", "connect4")
    assert parse_openings("-\n", "connect4") == ((),)


def test_builtin_suites_are_for_their_game_only() -> None:
    with pytest.raises(TournamentError, match="is for connect4, not uttt"):
        load_openings("builtin:connect4-2ply", "uttt")
    with pytest.raises(TournamentError, match="no built-in opening suite 'chess'"):
        load_openings("builtin:chess", "connect4")


@pytest.mark.parametrize("name", sorted(SUITES))
def test_shipped_suites_are_what_the_generator_makes(name: str) -> None:
    shipped = (SUITE_DIR / f"{name}.txt").read_text()
    assert shipped == suites.suite_text(name)
    openings = load_openings(f"builtin:{name}", SUITES[name]).openings
    game = SUITES[name]
    recipe = game_spec(game).suite(name)
    merged = recipe.merge_symmetric
    assert all(len(o) == recipe.plies for o in openings)
    # No two openings are the same position (up to symmetry when the suite merges).
    symmetries = game_spec(game).symmetries if merged else (lambda move: move,)
    keys = [suites.position_key(game, o, symmetries) for o in openings]
    assert len(set(keys)) == len(keys)
    if not merged:
        assert len(openings) == 49  # connect4: every position after 2 plies


@pytest.mark.parametrize("game", GAMES)
def test_the_symmetry_maps_are_symmetries_of_the_rules(game: str) -> None:
    # A mirrored or rotated game is legal move for move and ends the same way.
    for symmetry in game_spec(game).symmetries:
        state = new_game(game)
        mirrored = new_game(game)
        for ply in range(12):
            legal = state.legal_moves()
            assert sorted(symmetry(m) for m in legal) == mirrored.legal_moves()
            move = legal[(7 * ply + 3) % len(legal)]
            state, mirrored = state.play(move), mirrored.play(symmetry(move))
            if state.outcome() is not None:
                break
        assert (state.outcome() is None) == (mirrored.outcome() is None)


def test_forced_result_sees_a_win_in_one_and_a_lost_position() -> None:
    win_now = new_game("tictactoe").play_all([0, 3, 1, 4])  # X to move completes the top row
    assert suites.forced_result(win_now, 1) == 1
    lost = new_game("tictactoe").play_all([0, 4, 1])  # O must block; a quiet move loses
    assert suites.forced_result(lost.play(8), 1) == 1
    assert suites.forced_result(new_game("connect4"), 3) == 0


def test_round_robin_schedule_meets_every_two_bots_equally_with_both_colours() -> None:
    slots = build_schedule("round-robin", 4, rounds=5, openings=3, seed=9)
    assert len(slots) == 5 * 6
    meetings = Counter(tuple(sorted((s.seat_a, s.seat_b))) for s in slots)
    assert set(meetings.values()) == {5}
    # Each round uses one opening for every pairing, and every opening comes up.
    by_round = [slots[k * 6 : (k + 1) * 6] for k in range(5)]
    assert all(len({s.opening for s in r}) == 1 for r in by_round)
    assert {s.opening for s in slots} == {0, 1, 2}
    # Who opens a pair alternates, so no seat always moves first in game 0.
    firsts = Counter(s.seat_a for s in slots)
    assert max(firsts.values()) - min(firsts.values()) <= 4
    assert [s.number for s in slots] == list(range(30))


def test_gauntlet_sprt_and_ladder_pairings() -> None:
    assert pairings("gauntlet", 4) == [(0, 1), (0, 2), (0, 3)]
    assert pairings("sprt", 2) == [(0, 1)]
    assert pairings("ladder", 4) == [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    assert build_schedule("gauntlet", 3, 2, 1, 1) == build_schedule("gauntlet", 3, 2, 1, 1)
