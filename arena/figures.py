"""The server's figures, counted in one place for ``/healthz``, ``/metrics`` and the log.

``ServerFigures`` is given the parts that keep the figures anyway (the live
matches, the connections, the lobby, the store, ``MatchActivity``, the
event loop's lag) and nothing else: ``snapshot()`` counts what they hold
now, once, and each reader formats the same ``Figures``. Nothing is
counted on the hot path; the counts are taken when someone asks.
"""

from __future__ import annotations

from collections.abc import Sized
from dataclasses import dataclass
from typing import Protocol

from arena import runtime
from arena.activity import MatchActivity
from arena.histogram import LatencyHistogram
from arena.net.crowd import Crowd
from arena.net.gateway import Gateway
from arena.net.refusals import Refusals
from arena.play.lobby import Lobby
from arena.store.health import Pending, StoreHealth
from arena.store.movebuffer import CommitStats


class StoreFigures(Protocol):
    """What the figures read from the store (``arena.store.Store``)."""

    @property
    def health(self) -> StoreHealth:
        """The store's current state."""
        ...

    @property
    def commit_stats(self) -> CommitStats:
        """Group commits so far: durations, failures, the recent ones."""
        ...

    def pending(self) -> Pending:
        """Rows waiting for the next group commit."""
        ...


@dataclass(frozen=True, slots=True)
class Figures:
    """The server's counts at one moment."""

    live_matches: int
    bots_online: int
    connections: int
    spectators: int
    seeks: int
    failed_logins: int
    throttled_logins: int
    open_connections: int
    addresses_connected: int
    refused: dict[str, int]
    loop_lag_ms: dict[str, float]
    """The event loop's lag (``arena.runtime.LoopLag.status``)."""


class ServerFigures:
    """Reads the server's figures from the parts that keep them; see the module docstring."""

    def __init__(
        self,
        *,
        matches: Sized,
        gateway: Gateway,
        lobby: Lobby,
        crowd: Crowd,
        refusals: Refusals,
        activity: MatchActivity,
        store: StoreFigures,
        loop_lag: runtime.LoopLag,
    ) -> None:
        self._matches = matches
        self._gateway = gateway
        self._lobby = lobby
        self._crowd = crowd
        self._refusals = refusals
        self.activity = activity
        """Moves and matches started and ended."""
        self.store = store
        """The store's health, commit statistics and write queue."""
        self.move_latency: LatencyHistogram = gateway.move_latency
        """Per move: from the frame's arrival to its ``moved`` queued."""
        self._loop_lag = loop_lag

    def snapshot(self) -> Figures:
        """The counts now."""
        gateway = self._gateway
        throttle = gateway.throttle
        return Figures(
            live_matches=len(self._matches),
            bots_online=len(gateway.bots),
            connections=len(gateway.connections),
            spectators=sum(1 for c in gateway.connections if c.role == "spectator"),
            seeks=len(self._lobby.seeks),
            failed_logins=throttle.failed_total,
            throttled_logins=throttle.throttled_total,
            open_connections=self._crowd.open_total,
            addresses_connected=self._crowd.addresses,
            refused=dict(self._refusals.totals),
            loop_lag_ms=self._loop_lag.status(),
        )
