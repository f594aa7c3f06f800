"""``arena play``: a person against a built-in strategy, driven through a real terminal (pexpect).

Each test spawns the real command on a pseudo-terminal, as a person runs it,
and reads the screen it draws: the board with the columns 0-6 under it, the
bot's search report after its moves, one-line errors, and clean ends on
``q``, Ctrl-D and Ctrl-C.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pexpect
import pytest

from arena.cli.play import describe_analysis, parse_move, tree_lines
from protocol.errors import IllegalMoveError
from protocol.games import new_game
from protocol.messages import Analysis, MoveStat, TreeNode

PROMPT = re.escape("your move (x): ")
BOT = "mcts:sims=200,workers=0"
"""In-process MCTS (no worker pool to start), small enough to answer at once."""
TIMEOUT_S = 120  # a cold Numba cache compiles the kernels on the first start


def spawn(*args: str) -> pexpect.spawn:
    """``arena play ARGS`` on a pseudo-terminal of a fixed size."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "arena", "play", *args],
        encoding="utf-8",
        timeout=TIMEOUT_S,
        dimensions=(50, 160),
    )
    return child


@pytest.fixture
def game() -> Iterator[pexpect.spawn]:
    """A connect4 game against seeded MCTS, the person moving first; closed after the test."""
    child = spawn("connect4", "--vs", BOT, "--seed", "1")
    yield child
    child.close(force=True)


def test_the_board_is_redrawn_with_columns_0_to_6_and_the_bot_reports_its_search(
    game: pexpect.spawn,
) -> None:
    game.expect(PROMPT)
    first_screen = game.before
    assert "\x1b[H\x1b[2J" in first_screen  # redrawn in place on a terminal
    assert "0 1 2 3 4 5 6" in first_screen
    assert "you (x) vs mcts(simulations=200, workers=0) (o)" in first_screen
    game.sendline("3")
    game.expect(PROMPT)
    screen = game.before.rsplit("\x1b[H\x1b[2J", 1)[-1]  # the last redraw
    rows = [line for line in screen.splitlines() if re.fullmatch(r"([.xo] ){6}[.xo]", line)]
    assert len(rows) == 6 and rows[-1][6] == "x"  # the person's disc in column 3
    assert rows[-1].count("o") + rows[-2].count("o") == 1  # and the bot's reply
    assert "you (x) played 3" not in screen  # the bot moved since: its move is the news
    played = re.search(r"bot \(o\) played (\d) in [\d.]+ s", screen)
    assert played is not None
    search = re.search(
        r"search: 200 simulations \([\d,]+/s\), value [+-]\d\.\d\d for the bot; "
        r"best moves: (\d) \(([\d,]+) visits",
        screen,
    )
    assert search is not None
    assert search.group(1) == played.group(1)  # the most visited move is the one played
    # The tree follows, its principal line starting with the move played.
    tree = screen.split("search tree (", 1)[1].splitlines()[1:]
    assert re.fullmatch(rf"  \* {played.group(1)}: [\d,]+, [+-]\d\.\d\d", tree[0])
    assert re.fullmatch(r"    \* \d: [\d,]+, [+-]\d\.\d\d", tree[1])
    assert "0 1 2 3 4 5 6" in screen
    game.sendline("q")
    game.expect("game abandoned")
    game.expect(pexpect.EOF)
    game.close()
    assert game.exitstatus == 0


def test_an_illegal_move_is_refused_in_one_line_and_asked_again(game: pexpect.spawn) -> None:
    game.expect(PROMPT)
    game.sendline("9")
    game.expect("error: connect4: move 9 is out of range 0-6\r\n")
    game.expect(PROMPT)
    game.sendline("left")
    game.expect(r"error: 'left' is not a move: type a column 0-6 .*, or q to quit\r\n")
    game.expect(PROMPT)
    # Fill column 0 (the bot may help): the seventh disc there is refused by the rules.
    for _ in range(7):
        game.sendline("0")
        index = game.expect([r"error: connect4: move 0 is not legal: [^\r]*\r\n", PROMPT])
        if index == 0:
            break
    else:
        pytest.fail("column 0 never filled up")
    game.expect(PROMPT)  # asked again, nothing changed
    game.sendline("q")
    game.expect(pexpect.EOF)


def test_a_game_played_to_the_end_says_who_won(game: pexpect.spawn) -> None:
    outcome = r"(you win|the bot wins|draw) \((1-0|0-1|1/2-1/2)"
    for attempt in range(200):
        index = game.expect([PROMPT, outcome])
        if index == 1:
            break
        # Cycle through the columns; a full one is refused and the next one is tried.
        game.sendline(str(attempt % 7))
    else:
        pytest.fail("the game never ended")
    game.expect(pexpect.EOF)
    game.close()
    assert game.exitstatus == 0


def test_the_bot_moves_first_with_second() -> None:
    child = spawn("connect4", "--vs", BOT, "--seed", "1", "--second")
    try:
        child.expect(re.escape("your move (o): "))
        assert re.search(r"bot \(x\) played \d", child.before)
        assert "mcts(simulations=200, workers=0) (x) vs you (o)" in child.before
        child.sendeof()
        child.expect("game abandoned")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
    finally:
        child.close(force=True)


def test_ctrl_c_ends_cleanly_without_a_traceback(game: pexpect.spawn) -> None:
    game.expect(PROMPT)
    game.sendintr()
    game.expect("game abandoned")
    game.expect(pexpect.EOF)
    assert "Traceback" not in game.before
    game.close()
    assert game.exitstatus == 130


def test_ctrl_c_while_a_worker_pool_searches_ends_cleanly() -> None:
    # The bot moves first and thinks for a minute in a worker process; Ctrl-C stops it.
    child = spawn("connect4", "--vs", "mcts:time_ms=60000,workers=1", "--second")
    try:
        child.expect("is thinking")
        child.sendintr()
        child.expect("game abandoned")
        child.expect(pexpect.EOF)
        assert "Traceback" not in child.before
        child.close()
        assert child.exitstatus == 130
    finally:
        child.close(force=True)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mctz", "error: --vs 'mctz': unknown strategy 'mctz'; valid strategies: random, mcts"),
        ("mcts:bogus=1", "error: --vs 'mcts:bogus=1': mcts: unknown option 'bogus'"),
        (
            "mcts:sims=many",
            "error: --vs 'mcts:sims=many': mcts: option 'simulations' needs an integer, got 'many'",
        ),
    ],
)
def test_a_bad_spec_is_one_line_and_exit_status_2(spec: str, message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "play", "connect4", "--vs", spec],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_tictactoe_from_a_pipe_prints_each_position_below_the_last() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "play", "tictactoe", "--vs", "random", "--seed", "5"],
        input="4\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0
    assert "\x1b[" not in done.stdout  # no screen control codes into a pipe
    assert "a cell 0-8, row by row" in done.stdout
    assert ". x ." in done.stdout and "no search statistics" in done.stdout
    assert done.stdout.rstrip().endswith("game abandoned")


def test_parse_move_uses_the_rules_reasons() -> None:
    state = new_game("connect4").play_all([0] * 6)
    assert parse_move(" 3 ", state) == 3
    with pytest.raises(IllegalMoveError, match="move 0 is not legal"):
        parse_move("0", state)
    with pytest.raises(IllegalMoveError, match="out of range 0-6"):
        parse_move("-1", state)


def test_describe_analysis_names_nodes_for_a_node_counting_search() -> None:
    nodes = Analysis(nodes=5120, nodes_per_s=92290.0, depth=7, value=0.05)
    assert describe_analysis(nodes) == "5,120 nodes (92,290/s), depth 7, value +0.05 for the bot"
    sims = Analysis(
        simulations=200,
        sims_per_s=1000.0,
        value=-0.3,
        moves=(MoveStat(move=4, visits=88, value=-0.07), MoveStat(move=2, visits=39, value=0.1)),
    )
    assert describe_analysis(sims) == (
        "200 simulations (1,000/s), value -0.30 for the bot; "
        "best moves: 4 (88 visits, -0.07), 2 (39 visits, +0.10)"
    )


def test_the_tree_is_indented_with_the_principal_line_marked() -> None:
    tree = (
        TreeNode(3, 90, 0.25),
        TreeNode(2, 10, -0.5),
        TreeNode(4, 50, -0.2, parent=0),
        TreeNode(1, 30, None, parent=0),
        TreeNode(6, 1200, 0.125, parent=2),
    )
    assert tree_lines(tree) == [
        "search tree (move: visits, value for its player; * principal line):",
        "  * 3: 90, +0.25",
        "    * 4: 50, -0.20",
        "      * 6: 1,200, +0.12",
        "    - 1: 30",
        "  - 2: 10, -0.50",
    ]
    assert tree_lines(None) == tree_lines(()) == []
