"""The cheap latency histogram: bucket edges as Prometheus counts them (``le``: at most)."""

from __future__ import annotations

import pytest

from arena.histogram import COMMIT_BUCKETS_S, MOVE_BUCKETS_S, LatencyHistogram, one_two_five


def test_bounds_are_one_two_five_series() -> None:
    assert one_two_five(1e-3, 0.01) == (0.001, 0.0025, 0.005, 0.01)
    assert MOVE_BUCKETS_S[0] == 5e-5 and MOVE_BUCKETS_S[-1] == 0.1
    assert COMMIT_BUCKETS_S[0] == 0.001 and COMMIT_BUCKETS_S[-1] == 5.0


def test_an_observation_counts_in_the_first_bucket_at_least_as_large() -> None:
    hist = LatencyHistogram((0.001, 0.01))
    for seconds in (0.0, 0.001, 0.0011, 0.01, 0.5):
        hist.observe(seconds)
    assert hist.counts == [2, 2, 1]
    assert hist.cumulative() == [(0.001, 2), (0.01, 4), (float("inf"), 5)]
    assert hist.count == 5 and hist.sum == pytest.approx(0.5121)


def test_bounds_must_increase() -> None:
    with pytest.raises(ValueError):
        LatencyHistogram((0.01, 0.001))
