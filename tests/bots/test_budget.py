"""Time management: the margin arithmetic, every strategy stopping at its deadline, and the
offline clock of ``play_match``."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest

from bots import STRATEGIES, Strategy, make_strategy
from bots.budget import (
    MARGIN_MS,
    RTT_CREDIT_CAP_MS,
    SEND_MS,
    Budget,
    LagMeter,
    rtt_credit_ms,
    think_ms,
    uncredited_rtt_ms,
)
from bots.cli import main
from bots.client.choosing import Decision
from bots.client.simple import FunctionChooser
from bots.match import play_match
from protocol.games import GameState, Termination, new_game
from protocol.messages import TimeControl

# The margin arithmetic ------------------------------------------------------------------


def test_think_time_is_the_move_time_less_the_fixed_and_proportional_margin() -> None:
    assert MARGIN_MS == 30.0
    assert think_ms(200, 0) == pytest.approx(200 - 30 - 20)
    assert think_ms(1000, 0) == pytest.approx(1000 - 30 - 100)
    assert think_ms(1000, 0, margin_ms=0) == pytest.approx(900)


def test_a_tenth_of_the_bank_may_be_planned_for_one_move() -> None:
    # 200 ms a move plus 1000 ms of bank: 300 ms planned, 30 + 30 margin.
    assert think_ms(1200, 1000) == pytest.approx(300 - 60)
    # The bank shrinks geometrically: never planned away.
    bank, spent = 10_000.0, 0.0
    for _ in range(100):
        planned = think_ms(100 + bank, bank)
        bank -= max(0.0, planned - 100)
        spent += planned
    assert bank > 0 and spent > 100 * 100


def test_too_short_a_clock_leaves_no_search_time_but_never_a_negative_one() -> None:
    assert think_ms(30, 0) == 0.0
    assert think_ms(0, 0) == 0.0
    assert think_ms(5, 0, rtt_ms=500, rtt_floor_ms=1) == 0.0


def test_only_the_round_trip_the_server_does_not_credit_is_kept_back() -> None:
    # A steady path: the server credits it all.
    assert uncredited_rtt_ms(80, 80) == 0.0
    assert uncredited_rtt_ms(0, None) == 0.0
    # Jitter above the smallest trip seen is not credited.
    assert uncredited_rtt_ms(120, 80) == pytest.approx(40)
    # A trip faster than the floor so far costs nothing extra.
    assert uncredited_rtt_ms(60, 80) == 0.0
    # Above the credit cap, the excess is never credited.
    assert uncredited_rtt_ms(1500, 1500) == pytest.approx(1500 - RTT_CREDIT_CAP_MS)
    assert uncredited_rtt_ms(1500, 1200) == pytest.approx(500)
    assert think_ms(1000, 0, rtt_ms=120, rtt_floor_ms=80) == pytest.approx(1000 - 130 - 40)


def test_a_budget_runs_from_the_arrival_of_its_turn() -> None:
    budget = Budget.for_turn(1200, 1000, received=100.0, rtt_ms=50, rtt_floor_ms=50)
    assert budget.deadline == pytest.approx(100.0 + 0.240)
    assert (budget.time_left_ms, budget.bank_ms, budget.rtt_ms) == (1200, 1000, 50)
    assert budget.remaining_s(now=100.1) == pytest.approx(0.140)
    assert budget.remaining_s(now=101.0) == 0.0
    # A strategy's own limit holds when shorter, the deadline when it is not.
    assert budget.cap_s(0.05, now=100.1) == pytest.approx(0.05)
    assert budget.cap_s(2.0, now=100.1) == pytest.approx(0.140)
    assert budget.cap_s(None, now=100.1) == pytest.approx(0.140)


def test_a_budget_expires_when_the_whole_time_left_is_used_up() -> None:
    budget = Budget.for_turn(200, 0, received=100.0, rtt_ms=30, rtt_floor_ms=10)
    assert budget.planned_ms == pytest.approx(200 - 30 - 20 - 20)
    assert budget.expires == pytest.approx(100.0 + (200 - 20 - SEND_MS) / 1000)
    # Never before the deadline, however short the clock.
    short = Budget.for_turn(10, 0, received=100.0)
    assert short.deadline == short.expires == 100.0


def test_lag_the_server_measured_grows_the_fixed_margin() -> None:
    meter = LagMeter(window=4)
    assert meter.lag_ms == 0.0
    for ply, measured in enumerate((152, 190, 155)):
        meter.planned("m1", ply, planned_ms=150, credit_ms=rtt_credit_ms(None))
        meter.charged("m1", ply, measured)
    assert meter.lag_ms == pytest.approx(5)  # one hiccup (40 ms) is not a trend
    meter.planned("m1", 3, planned_ms=150, credit_ms=rtt_credit_ms(20))
    meter.charged("m1", 3, 210)  # 150 planned + 20 credited: 40 more
    assert meter.lag_ms == pytest.approx(40)
    assert think_ms(200, 0, lag_ms=40) == pytest.approx(200 - 60 - 20)
    assert think_ms(200, 0, lag_ms=10) == think_ms(200, 0)  # within the fixed margin
    # Only this bot's pending move of that ply counts; a forgotten one never does.
    meter.charged("m1", 3, 5000)
    meter.planned("m2", 0, 150, 0)
    meter.forget("m2")
    meter.charged("m2", 0, 5000)
    meter.planned("m3", 0, 150, 0)
    meter.forget()
    meter.charged("m3", 0, 5000)
    assert meter.lag_ms == pytest.approx(40)
    for ply in range(4):  # the window moves on
        meter.planned("m1", 10 + ply, 150, 0)
        meter.charged("m1", 10 + ply, 150)
    assert meter.lag_ms == 0.0
    assert rtt_credit_ms(5000) == RTT_CREDIT_CAP_MS


def test_without_a_clock_the_strategy_keeps_its_own_limits() -> None:
    assert not Budget.UNLIMITED.limited
    assert Budget.UNLIMITED.remaining_s() is None
    assert Budget.UNLIMITED.cap_s(2.0) == 2.0
    assert Budget.UNLIMITED.cap_s(None) is None
    assert Budget.seconds(0.5, now=10.0).deadline == 10.5


# Every strategy stops at its deadline ---------------------------------------------------

LONG_BUDGETS = {
    "random": {"seed": 1},
    "greedy": {"seed": 1},
    "mcts": {"time_ms": 5000, "seed": 1},
    "mcts-heavy": {"simulations": 50_000_000, "seed": 1},
    "alphabeta": {"time_ms": 5000},
    "solver": {"time_ms": 5000, "seed": 1},
    # An engine that spends each go's whole movetime, its own being 5 s.
    "ugi": {
        "command": f"{sys.executable} {Path(__file__).with_name('ugi_engine.py')} search"
        " --movetime 5000"
    },
}
DEADLINE_S = 0.15
SLACK_S = 1.5  # hand-off, merge, a busy machine; far below the strategies' own 5 s or 50M sims


def test_every_registered_kind_has_a_long_budget_here() -> None:
    assert set(STRATEGIES) == set(LONG_BUDGETS)


@pytest.mark.parametrize("workers", [0, 1])
@pytest.mark.parametrize("kind", list(LONG_BUDGETS))
def test_a_strategy_with_a_long_budget_answers_by_the_deadline(kind: str, workers: int) -> None:
    options = dict(LONG_BUDGETS[kind])
    if kind not in ("random", "greedy", "ugi"):
        options["workers"] = workers
    state = new_game("connect4").play_all((3, 3, 4))
    with make_strategy(kind, game="connect4", **options) as bot:
        bot.choose_move(state, Budget.seconds(0.01))  # pools and kernels warm
        started = time.monotonic()
        move = bot.choose_move(state, Budget.seconds(DEADLINE_S, now=started))
        took = time.monotonic() - started
    assert move in state.legal_moves()
    assert took < DEADLINE_S + SLACK_S, f"{kind} took {took:.3f} s"


async def test_the_async_path_answers_by_the_deadline_too() -> None:
    state = new_game("uttt")
    with make_strategy("mcts", game="uttt", simulations=50_000_000, workers=1) as bot:
        started = time.monotonic()
        move = await bot.choose_move_async(state, Budget.seconds(DEADLINE_S, now=started))
        took = time.monotonic() - started
        assert bot.last_search is not None and bot.last_search.simulations > 0
    assert move in state.legal_moves()
    assert took < DEADLINE_S + SLACK_S


def test_a_deadline_already_past_still_gives_a_legal_move() -> None:
    state = new_game("connect4")
    for kind in ("mcts", "alphabeta"):
        with make_strategy(kind, game="connect4", workers=0) as bot:
            assert bot.choose_move(state, Budget.seconds(-1.0)) in state.legal_moves()


async def test_a_function_bot_gets_the_budget_when_it_asks_for_it() -> None:
    seen: list[Budget] = []

    def timed(state: GameState, budget: Budget) -> int:
        seen.append(budget)
        return state.legal_moves()[-1]

    budget = Budget.seconds(1.0)
    assert await FunctionChooser(timed).choose(new_game("tictactoe"), budget) == Decision(8)
    assert seen == [budget]


# The offline clock -------------------------------------------------------------------------


class Sleeper(Strategy):
    """Ignores its budget: sleeps ``sleep_ms`` before every move."""

    kind: ClassVar[str] = "sleeper"

    def __init__(self, game: str, sleep_ms: float) -> None:
        super().__init__(game)
        self.sleep_ms = sleep_ms

    def _choose(self, state: GameState, budget: Budget) -> int:
        time.sleep(self.sleep_ms / 1000.0)
        return state.legal_moves()[0]


class Recorder(Strategy):
    """Answers at once; records the budget of every move."""

    kind: ClassVar[str] = "recorder"

    def __init__(self, game: str) -> None:
        super().__init__(game)
        self.budgets: list[Budget] = []

    def _choose(self, state: GameState, budget: Budget) -> int:
        self.budgets.append(budget)
        return state.legal_moves()[0]


def test_offline_play_gives_each_move_its_budget_from_the_clock() -> None:
    first, second = Recorder("tictactoe"), Recorder("tictactoe")
    result = play_match("tictactoe", [first, second], games=1,
                        time_control=TimeControl(move_ms=200, bank_ms=1000))
    assert result.games[0].outcome.termination is Termination.LINE
    for budget in first.budgets + second.budgets:  # instant moves: the bank stays full
        assert (budget.time_left_ms, budget.bank_ms) == (1200, 1000)
        assert budget.planned_ms == pytest.approx(think_ms(1200, 1000))
    unlimited = Recorder("tictactoe")
    play_match("tictactoe", [unlimited, Recorder("tictactoe")], games=1)
    assert unlimited.budgets and all(b is Budget.UNLIMITED for b in unlimited.budgets)


def test_bots_play_puts_both_players_on_a_clock(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["play", "tictactoe", "random:seed=1", "random:seed=2",
                 "--games", "2", "--seed", "1", "--move-ms", "200", "--boards", "0"])
    out = capsys.readouterr().out
    assert code == 0 and "[2/2]" in out
    assert "timeout" not in out and ("line" in out or "draw" in out)


def test_offline_play_on_a_clock_forfeits_a_move_over_its_time_and_draws_on_the_bank() -> None:
    slow = Sleeper("tictactoe", sleep_ms=60)
    # 20 ms a move, 100 ms of bank: each move overruns by 40 ms (up to 50 ms is fine);
    # the first two are paid from the bank, which cannot pay for the third.
    clock = TimeControl(move_ms=20, bank_ms=100)
    with make_strategy("random", game="tictactoe", seed=1) as quick:
        record = play_match("tictactoe", [slow, quick], games=1, time_control=clock).games[0]
    assert record.outcome.termination is Termination.TIMEOUT
    assert record.outcome.winner == 1
    assert len(record.moves) == 4  # the sleeper's third move never came
    assert record.final.outcome() is None
