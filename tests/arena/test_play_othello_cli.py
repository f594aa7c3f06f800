"""``arena play othello``: the move help, the board with its cell numbers, the rules' refusals."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.cli.play import parse_move
from protocol.errors import IllegalMoveError
from protocol.games import new_game

TIMEOUT_S = 120


def test_othello_from_a_pipe_plays_a_cell_and_refuses_a_flat_one() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "play", "othello", "--vs", "greedy", "--seed", "5"],
        input="19\n0\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "a cell 0-63, 8 * row + column" in out and "64 to pass" in out
    assert "24 . . . o x . . ." in out  # the start, each row headed by its first cell
    assert "16 . . . x . . . ." in out  # the person's disc on 19 (row 2, column 3)
    assert "would turn no opponent disc" in out  # 0 is refused with the rules' reason
    assert out.rstrip().endswith("game abandoned")


def test_parse_move_takes_the_pass_only_when_it_is_legal() -> None:
    state = new_game("othello")
    assert parse_move("37", state) == 37
    with pytest.raises(IllegalMoveError, match="pass is legal only"):
        parse_move("64", state)
