"""Property tests of the game rules: immutability, counts, terminal states, encodings."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.errors import IllegalMoveError, PositionDecodeError, UnknownGameError
from protocol.games import (
    GAMES,
    PLAYER_SYMBOLS,
    Connect4State,
    GameState,
    decode_state,
    get_game_class,
    new_game,
)
from protocol.games.base import GameState as BaseGameState

game_names = st.sampled_from(GAMES)
choices = st.lists(st.integers(min_value=0, max_value=10_000), max_size=90)


def walk(name: str, picks: list[int]) -> list[GameState]:
    """The states of a game whose moves are chosen by ``picks`` (index into the legal moves)."""
    states = [new_game(name)]
    for pick in picks:
        legal = states[-1].legal_moves()
        if not legal:
            break
        states.append(states[-1].play(legal[pick % len(legal)]))
    return states


def stone_counts(state: GameState) -> tuple[int, int]:
    board = state.encode().split(" ")[0]
    return board.count(PLAYER_SYMBOLS[0]), board.count(PLAYER_SYMBOLS[1])


@given(game_names, choices)
def test_play_never_changes_the_state_it_was_called_on(name: str, picks: list[int]) -> None:
    states = walk(name, picks)
    snapshots = [(s.encode(), s.moves, s.legal_moves(), s.outcome()) for s in states]
    for state in states:
        for move in state.legal_moves():
            state.play(move)
    assert [(s.encode(), s.moves, s.legal_moves(), s.outcome()) for s in states] == snapshots


# Othello turns discs over and passes: its counts are checked against OpenSpiel instead.
@given(st.sampled_from([g for g in GAMES if g != "othello"]), choices)
def test_stone_counts_follow_the_moves(name: str, picks: list[int]) -> None:
    for state in walk(name, picks):
        x, o = stone_counts(state)
        assert x + o == state.ply == len(state.moves)
        assert x - o == state.ply % 2
        if not state.is_over():
            assert state.to_move == state.ply % 2


@given(game_names, choices)
def test_a_decided_game_has_no_legal_moves(name: str, picks: list[int]) -> None:
    state = walk(name, [*picks, *range(100)])[-1]
    assert state.is_over()
    assert state.legal_moves() == []
    for move in range(state.num_moves):
        with pytest.raises(IllegalMoveError, match="over"):
            state.play(move)


@given(game_names, choices)
def test_exactly_the_legal_moves_can_be_played(name: str, picks: list[int]) -> None:
    for state in walk(name, picks):
        legal = state.legal_moves()
        for move in range(state.num_moves):
            if move in legal:
                state.play(move)
            else:
                with pytest.raises(IllegalMoveError):
                    state.play(move)


@given(game_names, choices)
def test_the_encoding_after_a_move_follows_from_the_one_before(
    name: str, picks: list[int]
) -> None:
    states = walk(name, picks)
    for before, after in itertools.pairwise(states):
        move = after.moves[-1]
        assert after.encode_after(before.encode(), move) == after.encode()


@given(game_names, choices)
def test_encoding_round_trips(name: str, picks: list[int]) -> None:
    for state in walk(name, picks):
        text = state.encode()
        decoded = decode_state(name, text)
        assert decoded.encode() == text
        assert decoded.to_move == state.to_move
        assert decoded.legal_moves() == state.legal_moves()
        assert decoded.outcome() == state.outcome()
        assert "\n" not in text


@given(choices)
def test_connect4_notation_round_trips(picks: list[int]) -> None:
    for state in walk("connect4", picks):
        assert isinstance(state, Connect4State)
        digits = state.notation()
        assert len(digits) == state.ply
        again = Connect4State.from_notation(digits)
        assert again.encode() == state.encode()
        assert again.moves == state.moves


@given(game_names, choices, st.integers(min_value=0, max_value=2**32))
def test_fast_playout_is_the_reference_playout(name: str, picks: list[int], seed: int) -> None:
    """Each game's fast playout plays the same game as the generic one for the same seed."""
    state = walk(name, picks)[-1]
    fast = state.random_playout(random.Random(seed))
    reference = BaseGameState.random_playout(state, random.Random(seed))
    assert fast == reference


@given(game_names, st.text(max_size=200))
def test_decoding_garbage_raises_only_position_decode_error(name: str, text: str) -> None:
    try:
        state = decode_state(name, text)
    except PositionDecodeError:
        return
    assert decode_state(name, state.encode()).encode() == state.encode()


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("connect4", "......./......./......./......./x....../....... o", "floating"),
        ("connect4", "......./......./......./......./......./xx..... o", "cannot have"),
        ("connect4", "......./......./......./......./......./x...... x", "cannot have"),
        ("connect4", "......./......./......./......./......./x...... ?", "side to move"),
        ("connect4", "......./......./......./x....../x....../x...... o", "cannot have"),
        ("tictactoe", "xxx/oo./o.. x", "to move again"),
        ("tictactoe", "xxx/ooo/... x", "both"),
        ("tictactoe", "xx/o../... o", "3 rows"),
        ("uttt", "x" * 9 + " x 0", "expected"),
        ("uttt", "/".join(["........."] * 9) + " x 9", "forced board"),
        ("uttt", "/".join(["xxx......"] + ["........."] * 8) + " x -", "cannot have"),
    ],
)
def test_impossible_positions_are_rejected(name: str, text: str, why: str) -> None:
    with pytest.raises(PositionDecodeError, match=why):
        decode_state(name, text)


@pytest.mark.parametrize(
    ("move", "why"),
    [(True, "integer"), ("3", "integer"), (3.0, "integer"), (None, "integer"), (-1, "range"),
     (7, "range"), (2**70, "range")],
)
def test_malformed_moves_say_why(move: object, why: str) -> None:
    with pytest.raises(IllegalMoveError, match=why):
        new_game("connect4").play(move)  # type: ignore[arg-type]


def test_illegal_moves_say_why() -> None:
    full = Connect4State.from_notation("444444")
    with pytest.raises(IllegalMoveError, match="column 3 is full"):
        full.play(3)
    taken = new_game("tictactoe").play(4)
    with pytest.raises(IllegalMoveError, match="cell 4 is taken"):
        taken.play(4)
    uttt = new_game("uttt").play(4)  # sends o to local board 4
    with pytest.raises(IllegalMoveError, match="must be in local board 4"):
        uttt.play(0)


def test_unknown_game_lists_valid_names() -> None:
    with pytest.raises(UnknownGameError, match="connect4, tictactoe, uttt, uttt-quick"):
        new_game("chess")
    with pytest.raises(ValueError):
        get_game_class("Connect4")


def test_connect4_wins_in_every_direction() -> None:
    cases = {
        "4455667": 0,  # horizontal, bottom row 4-7
        "1212121": 0,  # vertical
        "12233434474": 0,  # diagonal up to the right
        "76655454414": 0,  # diagonal up to the left (mirror)
    }
    for digits, winner in cases.items():
        state = Connect4State.from_notation(digits)
        outcome = state.outcome()
        assert outcome is not None and outcome.winner == winner, digits
        assert Connect4State.from_notation(digits[:-1]).outcome() is None, digits


def test_connect4_full_board_without_four_is_a_draw() -> None:
    # A known drawn game (all 42 cells, no four): stripes of pairs shifted per column group.
    drawn = "".join(
        str(c) for c in [1, 2, 1, 2, 1, 2, 2, 1, 2, 1, 2, 1, 3, 4, 3, 4, 3, 4, 4, 3, 4, 3, 4, 3,
                         5, 6, 5, 6, 5, 6, 6, 5, 6, 5, 6, 5, 7, 7, 7, 7, 7, 7]
    )
    final = Connect4State.from_notation(drawn)
    assert final.outcome() is not None and final.outcome().winner is None  # type: ignore[union-attr]
    assert final.legal_moves() == []


def test_uttt_quick_ends_at_the_first_local_board() -> None:
    moves = [0, 4, 37, 9, 1, 10, 11, 18, 2]  # x takes cells 0, 1, 2 of local board 0
    quick = get_game_class("uttt-quick").initial().play_all(moves)
    normal = new_game("uttt").play_all(moves)
    assert quick.outcome() is not None and quick.outcome().winner == 0  # type: ignore[union-attr]
    assert normal.outcome() is None
    assert 0 not in {m // 9 for m in normal.legal_moves()}


def test_render_is_readable() -> None:
    state = Connect4State.from_notation("44")
    assert state.render().splitlines()[-2] == ". . . x . . ."
    assert state.render().splitlines()[-1] == "0 1 2 3 4 5 6"  # the moves, as the protocol
    assert "o to move in board 4" in new_game("uttt").play(40).render()


def test_connect4_encode_writes_every_cell_where_it_is() -> None:
    """The table-driven encoding against the board read cell by cell, top row first."""
    from protocol.games.connect4 import COLUMNS, ROWS, Connect4State

    symbols = {None: ".", 0: "x", 1: "o"}
    rng = random.Random(20261123)
    for _ in range(300):
        state = new_game("connect4")
        while True:
            assert isinstance(state, Connect4State)
            rows = [
                "".join(symbols[state.cell(c, r)] for c in range(COLUMNS))
                for r in reversed(range(ROWS))
            ]
            assert state.encode() == "/".join(rows) + " " + "xo"[state.to_move]
            if state.outcome() is not None:
                break
            state = state.play(rng.choice(state.legal_moves()))
