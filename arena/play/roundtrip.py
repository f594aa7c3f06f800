"""The network round trip credited to a bot: the smallest ping sample of the last minute.

Every ping sample is the network's round trip plus however long either end
took to get to the ping: a server busy with other matches reads the pong
late, and a bot whose event loop is blocked (a search run in the loop
itself) answers late. Those delays only ever add to a sample, never take
from it, so the floor of recent samples is the estimate of the network part
alone (TCP's and BBR's windowed-minimum RTT, for the same reason). Crediting
the latest sample instead would hand a bot that answers pings late up to the
credit cap in extra thinking time, and the server's own load would decide how
much.

The price: jitter above the floor is not credited; the time bank is there to
absorb it. A path that gets slower is followed once the faster samples are a
window old; one that gets faster is followed at once.
"""

from __future__ import annotations

from collections import deque

ROUND_TRIP_WINDOW_S = 60.0
"""How far back the smallest sample is looked for (12 keepalive pings at 5 s apart)."""


class RoundTrip:
    """The windowed minimum of a connection's ping round trips, in seconds."""

    __slots__ = ("_samples", "_window_s", "floor_s")

    def __init__(self, window_s: float = ROUND_TRIP_WINDOW_S) -> None:
        self._window_s = window_s
        self._samples: deque[tuple[float, float]] = deque()
        self.floor_s = 0.0
        """The smallest sample of the window that ends at the latest one (0 before any)."""

    def add(self, at: float, sample_s: float) -> None:
        """Record the round trip ``sample_s`` measured at time ``at`` (seconds, monotonic)."""
        samples = self._samples
        samples.append((at, sample_s))
        oldest = at - self._window_s
        while samples[0][0] < oldest:  # the latest sample itself always stays
            samples.popleft()
        self.floor_s = min(sample for _, sample in samples)
