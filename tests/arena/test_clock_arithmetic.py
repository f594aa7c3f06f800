"""The time-control and rate-limit arithmetic against the rules as written in the docs."""

import math

from hypothesis import given
from hypothesis import strategies as st

from arena.net.limits import TokenBucket
from arena.play.clock import MAX_RTT_ALLOWANCE_MS, GameClock, ManualClock, rtt_allowance_ms

any_float = st.floats(allow_nan=True, allow_infinity=True)
millis = st.floats(min_value=0.0, max_value=1e7, allow_nan=False)


@given(any_float)
def test_the_round_trip_credit_is_the_round_trip_clamped_to_0_and_the_cap(rtt_ms: float) -> None:
    credit = rtt_allowance_ms(rtt_ms)
    if math.isnan(rtt_ms) or rtt_ms <= 0.0:
        assert credit == 0.0
    elif rtt_ms >= MAX_RTT_ALLOWANCE_MS:
        assert credit == MAX_RTT_ALLOWANCE_MS
    else:
        assert credit == rtt_ms


def test_the_round_trip_credit_at_its_edges() -> None:
    assert rtt_allowance_ms(-5.0) == 0.0
    assert rtt_allowance_ms(250.0) == 250.0
    assert rtt_allowance_ms(MAX_RTT_ALLOWANCE_MS + 1) == MAX_RTT_ALLOWANCE_MS
    assert rtt_allowance_ms(math.inf) == MAX_RTT_ALLOWANCE_MS


@given(
    move_ms=st.integers(min_value=0, max_value=100_000),
    bank_ms=st.integers(min_value=0, max_value=100_000),
    think_ms=millis,
    rtt_ms=st.one_of(millis, st.floats(max_value=0.0, allow_nan=False)),
    player=st.sampled_from([0, 1]),
)
def test_a_move_spends_only_what_exceeds_the_limit_and_the_round_trip_credit(
    move_ms: int, bank_ms: int, think_ms: float, rtt_ms: float, player: int
) -> None:
    clock = GameClock.start(move_ms, bank_ms)
    # The Kaggle overage rule: what the move took beyond its limit, less the credit.
    overage = max(0.0, max(0.0, think_ms - rtt_allowance_ms(rtt_ms)) - move_ms)
    in_time = overage <= bank_ms
    assert clock.fits(player, think_ms, rtt_ms) is in_time
    assert clock.allowance_ms(player, rtt_ms) == move_ms + bank_ms + rtt_allowance_ms(rtt_ms)
    before = clock.snapshot()
    assert clock.charge(player, think_ms, rtt_ms) is in_time
    expected = [float(bank_ms), float(bank_ms)]
    if in_time:
        expected[player] -= overage
    assert clock.banks_ms == expected
    assert (clock.snapshot() is before) is (expected[player] == bank_ms)
    assert clock.snapshot()[1][player] == round(expected[player])


@given(
    # Binary fractions: the model's sums and the bucket's clock differences are exact.
    rate=st.sampled_from([0.5, 1.0, 2.0, 8.0, 100.0]),
    burst=st.integers(min_value=1, max_value=50),
    steps=st.lists(
        st.tuples(
            st.sampled_from(["take", "take", "refund"]),
            st.one_of(st.just(0.0), st.integers(0, 16).map(lambda k: k / 8)),
        ),
        max_size=80,
    ),
)
def test_the_token_bucket_allows_rate_per_second_and_at_most_burst_at_once(
    rate: float, burst: int, steps: list[tuple[str, float]]
) -> None:
    clock = ManualClock()
    bucket = TokenBucket(rate, burst, clock)
    tokens = float(burst)  # the model: refilled at ``rate``, never above ``burst``
    for action, wait_s in steps:
        clock.advance(wait_s)
        tokens = min(float(burst), tokens + wait_s * rate)
        if action == "refund":
            bucket.refund()
            tokens = min(float(burst), tokens + 1.0)
            continue
        allowed = tokens >= 1.0
        assert bucket.take() is allowed
        if allowed:
            tokens -= 1.0


def test_after_a_long_pause_the_bucket_allows_exactly_burst_at_once() -> None:
    clock = ManualClock()
    bucket = TokenBucket(10.0, 5, clock)
    clock.advance(3600.0)
    bucket.refund()  # a refund cannot raise it above the burst either
    assert [bucket.take() for _ in range(7)] == [True] * 5 + [False] * 2
    clock.advance(0.1)  # one token's worth at 10/s
    assert [bucket.take() for _ in range(2)] == [True, False]
