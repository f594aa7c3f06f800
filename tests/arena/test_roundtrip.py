"""The round trip credited to a bot: the floor of the last minute's ping samples."""

from __future__ import annotations

from arena.play.roundtrip import ROUND_TRIP_WINDOW_S, RoundTrip


def test_nothing_is_credited_before_the_first_sample() -> None:
    assert RoundTrip().floor_s == 0.0


def test_a_late_pong_does_not_raise_the_credit_and_a_faster_one_lowers_it_at_once() -> None:
    rtt = RoundTrip()
    rtt.add(0.0, 0.050)
    rtt.add(5.0, 0.400)  # answered late: a busy loop on either end
    assert rtt.floor_s == 0.050
    rtt.add(10.0, 0.030)
    assert rtt.floor_s == 0.030


def test_a_path_that_gets_slower_is_followed_once_the_fast_samples_are_a_window_old() -> None:
    rtt = RoundTrip(window_s=60.0)
    rtt.add(0.0, 0.020)
    for at in range(5, 61, 5):
        rtt.add(float(at), 0.200)
    assert rtt.floor_s == 0.020  # the fast sample is exactly a window old: still in
    rtt.add(65.0, 0.200)
    assert rtt.floor_s == 0.200


def test_the_latest_sample_counts_however_long_ago_the_one_before_it_was() -> None:
    rtt = RoundTrip()
    rtt.add(0.0, 0.010)
    rtt.add(10 * ROUND_TRIP_WINDOW_S, 0.300)
    assert rtt.floor_s == 0.300
