"""A latency histogram cheap enough for the move path: a bisect and three additions.

``prometheus_client.Histogram.observe`` takes a lock and walks every bucket
(about 2 µs a call here); ``LatencyHistogram.observe`` keeps plain counts per
bucket (about 0.2 µs), and ``arena.metrics`` turns them into Prometheus's
cumulative buckets only when ``/metrics`` is scraped. One event loop writes
it, so it needs no lock.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence


def one_two_five(low: float, high: float) -> tuple[float, ...]:
    """Bucket bounds 1, 2.5 and 5 times the powers of ten, from ``low`` to ``high``."""
    bounds = (float(f"{step}e{power}") for power in range(-9, 10) for step in ("1", "2.5", "5"))
    return tuple(b for b in bounds if low <= b <= high)


MOVE_BUCKETS_S = one_two_five(5e-5, 0.1)
"""Upper bounds for the server's own handling of one move: tens of microseconds normally."""

COMMIT_BUCKETS_S = one_two_five(1e-3, 5.0)
"""Upper bounds for one group commit of the store."""


class LatencyHistogram:
    """Counts of observed durations (seconds) per bucket, their sum and their number."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        if list(bounds) != sorted(set(bounds)):
            raise ValueError("bucket bounds must be increasing")
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)
        """``counts[i]``: observations in ``(bounds[i-1], bounds[i]]``; the last one is +Inf."""
        self.sum = 0.0
        self.count = 0

    def observe(self, seconds: float) -> None:
        """Count one duration."""
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds
        self.count += 1

    def cumulative(self) -> list[tuple[float, int]]:
        """``(upper bound, observations <= it)`` per bucket, ending with ``(inf, count)``."""
        out: list[tuple[float, int]] = []
        total = 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts, strict=True):
            total += n
            out.append((bound, total))
        return out
