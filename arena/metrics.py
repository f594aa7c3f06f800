"""``GET /metrics`` in Prometheus's text format, and the log's summary line every minute.

Each server has its own ``prometheus_client.CollectorRegistry`` (never the
global default one), so several servers in one process each report their
own figures. Nothing is counted twice: the figures live where the server
keeps them anyway (the match registry, the gateway, the store's commit
statistics, ``MatchActivity``, ``arena.runtime``) and are read when
``/metrics`` is scraped, by one custom collector, through the same
``arena.figures.ServerFigures`` snapshot as ``/healthz``. The two histograms on
busy paths (move handling, store commits) are ``arena.histogram``'s cheap
ones, turned into Prometheus's cumulative buckets at scrape time.

The metrics, all prefixed ``arena_`` (times in seconds)::

    live_matches, bots_connected, spectators_connected, connections, seeks   gauges
    moves_total, matches_started_total                                       counters
    matches_ended_total{game, termination}                                   counter
    move_handling_seconds      from a move frame's arrival to its ``moved`` queued
    store_commit_seconds       one group commit (new matches, moves, ends)
    store_commit_failures_total, store_write_queue{kind}, store_health{state}
    failed_logins_total, throttled_logins_total
    open_connections, refusals_total{reason}
    gc_collections_total, gc_pause_max_seconds, gc_pause_last_seconds
    loop_lag_max_seconds, loop_lag_p99_seconds, loop_lag_own_max_seconds

plus the standard ``process_*`` metrics (CPU, memory, file descriptors).
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Iterator
from itertools import islice

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder

from arena import runtime
from arena.figures import ServerFigures
from arena.histogram import LatencyHistogram
from arena.net.http import HttpRequest, HttpResponse, Router
from arena.store.health import HealthState

log = logging.getLogger("arena.summary")

SUMMARY_EVERY_S = 60.0
"""How often ``arena serve`` logs its summary line."""


def histogram_family(name: str, documentation: str, hist: LatencyHistogram) -> Metric:
    """A Prometheus histogram of ``hist``'s counts."""
    buckets = [("+Inf" if b == float("inf") else repr(b), n) for b, n in hist.cumulative()]
    return HistogramMetricFamily(name, documentation, buckets=buckets, sum_value=hist.sum)


class _ServerCollector:
    """Reads the server's figures at each scrape (a ``prometheus_client`` custom collector)."""

    def __init__(self, figures: ServerFigures) -> None:
        self._figures = figures

    def collect(self) -> Iterator[Metric]:
        """Every ``arena_*`` metric of the module docstring."""
        figures = self._figures
        now = figures.snapshot()
        store = figures.store
        for name, doc, value in (
            ("arena_live_matches", "Matches being played now.", now.live_matches),
            ("arena_bots_connected", "Bots logged in now.", now.bots_online),
            ("arena_spectators_connected", "Spectators connected now.", now.spectators),
            ("arena_connections", "Websocket connections, any role.", now.connections),
            ("arena_seeks", "Seeks waiting for an opponent.", now.seeks),
        ):
            yield GaugeMetricFamily(name, doc, value=value)
        activity = figures.activity
        yield CounterMetricFamily("arena_moves", "Moves applied.", value=activity.moves)
        yield CounterMetricFamily(
            "arena_matches_started", "Matches started.", value=activity.started
        )
        ended = CounterMetricFamily(
            "arena_matches_ended", "Matches ended (end committed).", labels=["game", "termination"]
        )
        for (game, termination), n in sorted(activity.ended.items()):
            ended.add_metric([game, termination], n)
        yield ended
        yield histogram_family(
            "arena_move_handling_seconds",
            "From a move frame's arrival to its moved message queued.",
            figures.move_latency,
        )
        stats = store.commit_stats
        yield histogram_family(
            "arena_store_commit_seconds", "Duration of one group commit.", stats.seconds
        )
        yield CounterMetricFamily(
            "arena_store_commit_failures", "Group commits that failed.", value=stats.failures
        )
        yield CounterMetricFamily(
            "arena_store_reports_dropped",
            "Moves stored without their search report (too much report text unwritten).",
            value=stats.reports_dropped,
        )
        pending = store.pending()
        queue = GaugeMetricFamily(
            "arena_store_write_queue", "Rows waiting for the next group commit.", labels=["kind"]
        )
        for kind, n in (
            ("moves", pending.moves),
            ("matches", pending.matches),
            ("ends", pending.ends),
        ):
            queue.add_metric([kind], n)
        yield queue
        health = GaugeMetricFamily(
            "arena_store_health", "1 for the store's current state.", labels=["state"]
        )
        for state in HealthState:
            health.add_metric([state.value], 1 if store.health.state is state else 0)
        yield health
        yield CounterMetricFamily(
            "arena_failed_logins", "Bot logins refused.", value=now.failed_logins
        )
        yield CounterMetricFamily(
            "arena_throttled_logins",
            "Hellos refused unchecked: their address had too many failures.",
            value=now.throttled_logins,
        )
        yield GaugeMetricFamily(
            "arena_open_connections",
            "TCP connections counted against their address's cap (HTTP and websocket).",
            value=now.open_connections,
        )
        refused = CounterMetricFamily(
            "arena_refusals", "Connections and requests refused at the door.", labels=["reason"]
        )
        for reason, n in sorted(now.refused.items()):
            refused.add_metric([reason], n)
        yield refused
        gc = runtime.gc_pauses
        yield CounterMetricFamily(
            "arena_gc_collections", "Cyclic GC passes since start-up.", value=gc.collections
        )
        yield GaugeMetricFamily(
            "arena_gc_pause_max_seconds", "Longest GC pause.", value=gc.max_pause_ms / 1000
        )
        yield GaugeMetricFamily(
            "arena_gc_pause_last_seconds", "Latest GC pause.", value=gc.last_pause_ms / 1000
        )
        lag = now.loop_lag_ms
        yield GaugeMetricFamily(
            "arena_loop_lag_max_seconds", "Worst event-loop lag.", value=lag["max"] / 1000
        )
        yield GaugeMetricFamily(
            "arena_loop_lag_p99_seconds",
            "99th percentile event-loop lag over the last minute.",
            value=lag["p99"] / 1000,
        )
        yield GaugeMetricFamily(
            "arena_loop_lag_own_max_seconds",
            "Worst event-loop lag less the time the loop waited for a CPU.",
            value=lag["own_max"] / 1000,
        )


class ArenaMetrics:
    """One server's metrics registry, its ``/metrics`` route and its summary line."""

    def __init__(self, figures: ServerFigures) -> None:
        self._figures = figures
        self.registry = CollectorRegistry()
        self.registry.register(_ServerCollector(figures))
        ProcessCollector(registry=self.registry)
        self._last = (time.monotonic(), 0, 0)  # when, moves, commits

    def render(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition for an ``Accept`` header: ``(body, content type)``."""
        encoder, content_type = choose_encoder(accept)
        return encoder(self.registry), content_type

    def add_routes(self, router: Router) -> None:
        """Register ``GET /metrics``."""
        router.add(r"/metrics", self._metrics)

    async def _metrics(self, request: HttpRequest) -> HttpResponse:
        body, content_type = self.render(request.headers.get("accept", ""))
        return HttpResponse(200, body, content_type, {"Cache-Control": "no-store"})

    def summary(self) -> None:
        """Log one line on the last interval: play, connections, the store."""
        figures = self._figures
        counts = figures.snapshot()
        now = time.monotonic()
        moves, stats = figures.activity.moves, figures.store.commit_stats
        then, moves_then, commits_then = self._last
        self._last = (now, moves, stats.commits)
        rate = (moves - moves_then) / max(now - then, 1e-9)
        new = min(stats.commits - commits_then, len(stats.recent_s))
        recent = list(islice(stats.recent_s, len(stats.recent_s) - new, None))
        p50_ms = statistics.median(recent) * 1000 if recent else 0.0
        max_ms = max(recent) * 1000 if recent else 0.0
        health = figures.store.health
        pending = figures.store.pending()
        store = "ok" if health.ok else f"{health.state.value} ({health.reason})"
        log.info(
            "%d live matches, %d bots online, %d spectators, %.1f moves/s; store %s, "
            "%d commits (median %.1f ms, max %.1f ms), %d moves waiting",
            counts.live_matches,
            counts.bots_online,
            counts.spectators,
            rate,
            store,
            new,
            p50_ms,
            max_ms,
            pending.moves,
            extra={
                "event": "summary",
                "live_matches": counts.live_matches,
                "bots_online": counts.bots_online,
                "spectators": counts.spectators,
                "moves_per_s": round(rate, 1),
                "store_health": health.state.value,
                "store_commits": new,
                "store_commit_median_ms": round(p50_ms, 2),
                "store_commit_max_ms": round(max_ms, 2),
                "store_moves_waiting": pending.moves,
            },
        )
