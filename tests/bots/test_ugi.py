"""UGI engines as strategies: the lines, the spec, real engine processes and their faults.

The engines are ``tests/bots/ugi_engine.py`` in its modes (a real process
each), so every fault is one the adapter meets in the field: a crash, an
exit, a hang, garbage, an illegal move, a broken memory or CPU limit.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from bots import Budget, Forfeit, SearchError, StrategyOptionError, make_strategy_from_spec
from bots.client.choosing import analysis_from
from bots.match import play_match
from bots.strategy import parse_spec
from bots.ugi import process
from bots.ugi.lines import (
    BadLine,
    BestMove,
    Id,
    Info,
    ReadyOk,
    UgiOk,
    go_command,
    parse_line,
    position_command,
)
from bots.ugi.spec import parse_engine_command
from bots.ugi.strategy import HANG_MARGIN_S, UGIStrategy, hung_at
from protocol.games import Termination, new_game
from protocol.messages import TimeControl

ENGINE = Path(__file__).with_name("ugi_engine.py")
REPO = Path(__file__).resolve().parents[2]


def engine_spec(mode: str, nth: int = 1, game: str = "connect4") -> str:
    """The spec of the scripted engine playing ``game`` in ``mode``, failing at its ``nth`` go."""
    return f"ugi:{sys.executable} {ENGINE} {mode} {nth} {game}"


@pytest.fixture(autouse=True)
def _engine_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The scripted engine imports the rules from this checkout.
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.delenv("ARENA_ENGINE_LOG", raising=False)


# Lines ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("ugiok\n", UgiOk()),
        ("readyok", ReadyOk()),
        ("id name Deep  Four", Id("name", "Deep Four")),
        ("bestmove 3", BestMove(3)),
        ("bestmove 80 ponder 4", BestMove(80)),
        (
            "info depth 7 seldepth 9 score cp -35 nodes 1200 nps 60000 time 20 pv 3 4 3",
            Info(depth=7, score_cp=-35, nodes=1200, nps=60000, pv=(3, 4, 3)),
        ),
        ("info score mate 3 lowerbound depth 2", Info(depth=2, mate=3)),
        ("info string thinking hard", Info(string="thinking hard")),
        ("   ", None),
    ],
)
def test_engine_lines_parse(line: str, parsed: object) -> None:
    assert parse_line(line) == parsed


@pytest.mark.parametrize(
    "line",
    [
        "bestmove",
        "bestmove e4",
        "bestmove -1",
        "bestmove 03",
        "bestmove 3 4",
        "info depth x",
        "info colour red",
        "info pv 3 b",
        "ugiok now",
        "hello",
        "x" * 70_000,
    ],
)
def test_garbage_lines_are_refused(line: str) -> None:
    with pytest.raises(BadLine):
        parse_line(line)


def test_scores_map_to_values_for_the_mover() -> None:
    assert Info(score_cp=0).value == 0.0
    assert Info(score_cp=400).value == pytest.approx(9 / 11)  # an expected score of 10/11
    assert Info(score_cp=-400).value == pytest.approx(-Info(score_cp=400).value)  # type: ignore[operator]
    assert Info(mate=-2).value == -1.0 and Info(mate=5).value == 1.0
    assert Info(depth=3).value is None


def test_commands_are_written_in_decimal_move_numbers() -> None:
    assert position_command(()) == "position startpos"
    assert position_command((3, 3, 40)) == "position startpos moves 3 3 40"
    assert go_command(250) == "go movetime 250"
    assert go_command(250, mover=1, bank_ms=1500.7) == "go movetime 250 p2time 1500"
    assert go_command(250, 1, 1500, 300) == "go movetime 250 p1time 300 p2time 1500"
    assert go_command(250, 0, 0, 300) == "go movetime 250 p1time 0 p2time 300"
    assert go_command(0, mover=0, bank_ms=0, opponent_bank_ms=0) == "go movetime 1"


# Specs ----------------------------------------------------------------------------------


def test_the_spec_keeps_the_command_whole_and_takes_the_adapter_words() -> None:
    assert parse_spec("ugi:./e --a=1,b=2") == ("ugi", {"command": "./e --a=1,b=2"})
    spec = parse_engine_command(
        f"{sys.executable} '{ENGINE}' good --option 'Style=wild one' --movetime 150 --option X="
    )
    assert spec.argv == (sys.executable, str(ENGINE), "good")
    assert spec.options == (("Style", "wild one"), ("X", ""))
    assert spec.movetime_ms == 150
    assert spec.name == "ugi_engine.py"


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("", "no engine command"),
        ("./no-such-engine", "no such engine program"),
        ("no-such-engine-on-path", "not on PATH"),
        (f"{ENGINE}", "not executable"),
        ("'unclosed", "cannot split"),
        (f"{sys.executable} --option Style", "NAME=VALUE"),
        (f"{sys.executable} --movetime 0", "positive integer"),
        (f"{sys.executable} --movetime", "needs a value"),
    ],
)
def test_bad_engine_commands_are_one_clear_error(command: str, words: str) -> None:
    with pytest.raises(StrategyOptionError, match=words):
        parse_engine_command(command)


# Playing --------------------------------------------------------------------------------


def test_an_engine_plays_and_its_info_becomes_the_search_report() -> None:
    with make_strategy_from_spec(engine_spec("good"), "connect4") as bot:
        assert isinstance(bot, UGIStrategy)
        state = new_game("connect4")
        for _ in range(4):
            move = bot.choose_move(state, Budget.seconds(0.5))
            assert state.is_legal(move)
            state = state.play(move)
        analysis = analysis_from(bot.last_search)
    assert analysis is not None
    assert analysis.nodes == 4321 and analysis.depth == 3 and analysis.simulations is None
    assert analysis.pv == (move, move)
    assert analysis.value == pytest.approx(0.3323, abs=1e-3)  # 120 cp for the mover
    assert bot.restarts == 0


def test_an_engine_that_never_answers_ugi_is_refused_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process, "HANDSHAKE_S", 0.5)
    with pytest.raises(SearchError, match=r"did not answer ugi within 0\.5 s"):
        make_strategy_from_spec(engine_spec("mute"), "connect4")


@pytest.mark.parametrize(
    ("mode", "env", "reason"),
    [
        ("crash", {}, "engine ugi_engine.py was killed by SIGSEGV"),
        ("exit", {}, "engine ugi_engine.py exited with status 3"),
        ("hang", {}, "ran out of time: no bestmove"),
        ("garbage", {}, "wrote garbage: unexpected line 'I think column three looks nice'"),
        ("illegal", {}, "played illegal move 56 (legal: 0 1 2 3 4 5 6)"),
        ("long", {}, "wrote garbage: a line of 65537 characters"),
        ("memory", {"ARENA_ENGINE_MEMORY_MB": "300"}, "exited with status 1"),
        ("cpu", {"ARENA_ENGINE_CPU_S": "1"}, "exceeding its CPU-time limit (SIGXCPU)"),
    ],
)
def test_a_faulty_engine_forfeits_with_a_reason_and_is_restarted(
    monkeypatch: pytest.MonkeyPatch, mode: str, env: dict[str, str], reason: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with make_strategy_from_spec(engine_spec(mode, 2), "connect4") as bot:
        assert isinstance(bot, UGIStrategy)
        state = new_game("connect4").play(bot.choose_move(new_game("connect4"), Budget.seconds(1)))
        first_pid = bot.pid
        started = time.monotonic()
        with pytest.raises(Forfeit) as caught:
            # A clock of 0.4 s; the CPU hog gets 5 s to show its 1 s CPU limit.
            budget = (
                Budget.seconds(5) if mode == "cpu" else Budget.for_turn(400, 0, time.monotonic())
            )
            bot.choose_move(state, budget)
        # A hang is given up by the move's last moment; the CPU limit takes a CPU second.
        assert time.monotonic() - started < 10
        assert reason in str(caught.value) and "\n" not in str(caught.value)
        assert first_pid is not None and not _alive(first_pid)
        # The next game gets a fresh engine, playing well until its own 2nd go.
        assert state.is_legal(bot.choose_move(state, Budget.seconds(1)))
        assert bot.restarts == 1


def test_a_bestmove_after_stop_is_not_taken_for_the_next_search() -> None:
    with make_strategy_from_spec(engine_spec("late", 1), "connect4") as bot:
        state = new_game("connect4")
        first = bot.choose_move(state, Budget.seconds(0.1))  # late: the adapter sent stop
        state = state.play(first)
        # The engine's second answer to that search ("bestmove 6") is skipped.
        assert bot.choose_move(state, Budget.seconds(0.1)) == 0
        assert bot.restarts == 0


def test_an_engine_that_dies_between_two_moves_loses_that_game_only() -> None:
    with make_strategy_from_spec(engine_spec("die", 2), "connect4") as bot:
        state = new_game("connect4").play_all((3,))
        state = state.play(bot.choose_move(state)).play(3)
        state = state.play(bot.choose_move(state)).play(3)  # its answer, then its exit
        # Seen dead before the next go ("between two moves"), or as that go gets no answer.
        with pytest.raises(Forfeit, match=r"engine ugi_engine\.py exited with status 4"):
            bot.choose_move(state)
        # A new game starts a new engine without a fault.
        assert bot.choose_move(new_game("connect4")) == 0
        assert bot.restarts == 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_offline_play_records_a_forfeit_and_plays_on() -> None:
    result = play_match("connect4", [engine_spec("crash", 3), "random:seed=1"], games=2, seed=3)
    lost = result.games[0]
    assert lost.outcome.termination is Termination.RESIGN
    assert lost.score(0) == 0.0
    assert lost.reason == "engine ugi_engine.py was killed by SIGSEGV"
    # Game 2: the restarted engine crashes at its 3rd go again, the loss is recorded again.
    assert result.games[1].reason == lost.reason


def test_offline_play_on_a_clock_gives_the_engine_its_movetime_and_both_banks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ARENA_ENGINE_LOG", str(tmp_path / "engine.log"))
    # The engine spends each go's whole movetime: it must fit the clock's move with its margins.
    result = play_match(
        "tictactoe",
        [engine_spec("search", game="tictactoe"), "random:seed=2"],
        games=1,
        time_control=TimeControl(move_ms=500, bank_ms=1000),
    )
    record = result.games[0]
    assert record.reason is None
    assert record.outcome.termination in (Termination.LINE, Termination.DRAW)
    # The engine moved first (p1); the random player answers at once and keeps its bank.
    told = re.findall(
        r"go movetime (\d+) p1time (\d+) p2time (\d+)", (tmp_path / "engine.log").read_text()
    )
    assert len(told) >= 3
    assert all(
        400 < int(ms) < 600 and int(mine) <= 1000 and theirs == "1000" for ms, mine, theirs in told
    )


def test_engine_stderr_goes_to_a_log_file_and_close_leaves_no_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ARENA_ENGINE_LOG", str(tmp_path / "engine.log"))
    bot = make_strategy_from_spec(engine_spec("good", game="tictactoe"), "tictactoe")
    assert isinstance(bot, UGIStrategy) and bot.pid is not None
    pid = bot.pid
    bot.close()
    assert not _alive(pid)
    assert "test engine good starting" in (tmp_path / "engine.log").read_text()


def test_an_engine_is_described_by_its_spec_as_given() -> None:
    spec = parse_engine_command(f"{sys.executable}  {ENGINE} good --movetime 200")
    assert spec.describe() == f"ugi:{sys.executable} {ENGINE} good --movetime 200"


def test_a_hung_engine_is_given_up_early_enough_for_its_forfeit_to_arrive() -> None:
    # Plenty of time after the stop: the margin before the move's last moment is kept whole,
    # so a busy machine still delivers the forfeit before the client's fallback move.
    assert hung_at(10.0, 11.0) == pytest.approx(11.0 - HANG_MARGIN_S)
    # Little time: halfway from the stop to the last moment.
    assert hung_at(10.0, 10.02) == pytest.approx(10.01)
    # None at all: at the stop.
    assert hung_at(10.0, 9.9) == 10.0
