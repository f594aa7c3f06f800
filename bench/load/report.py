"""A run's configuration and figures, the target verdicts, the tables (a row per run, medians)."""

from __future__ import annotations

import math
import os
import statistics
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

TARGET_MATCHES, TARGET_MOVES_PER_S, TARGET_P99_MS = 500, 5000.0, 10.0
SOAK_FROM, SOAK_TO, SOAK_GROWTH_MIB, SOAK_PAUSE_MS = 100_000, 200_000, 5.0, 20.0
NAN, _SOAK_ROW = float("nan"), "{:8,d} {:8.1f} {:8.1f} {:>6} {:10.1f} {:11.1f} {:12.1f} {:12.1f}"
Mark = tuple[int, float, float, dict[str, Any]]  # matches ended, minutes, server RSS MiB, /healthz


@dataclass(frozen=True, slots=True)
class Config:
    """One configuration of the bench (``python -m bench.load --help`` says what each is)."""

    matches: int = 500
    seconds: float = 20.0
    warmup: float = 3.0
    think_ms: float = 0.0
    think_jitter: float = 0.5
    db_writer: str = "process"
    pairing_window_s: float = 0.5
    seed: int = 1
    db: str | None = None  # None: a fresh SQLite file per run
    soak_every: int = 0  # finished matches between two soak samples (0: no soak)
    nodes: int = 1  # arena nodes sharing the database (more than 1: PostgreSQL)
    analysis: str = "none"  # "tree": every move reports a search (bench.load.bots.ANALYSIS)
    callgrind: bool = False  # the server under valgrind's callgrind: instructions per move
    profile: str | None = None  # the server under cProfile, its statistics written here


@dataclass(slots=True)
class Run:
    """One run: what the client process measured, then the database check."""

    config: Config
    moves: int = 0  # own moves confirmed by a ``moved`` (by its mover), and openings' moves
    window_moves: int = 0
    window_ended: int = 0  # matches
    live: float = 0.0  # mean matches in play
    cpu: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)  # cores: servers, writer, bots, PostgreSQL
    # Per move sent in the window -> its moved handled by the bot / in the kernel (server's part)
    client_ms: array[float] = field(default_factory=lambda: array("d"))
    server_ms: array[float] = field(default_factory=lambda: array("d"))
    match_moves: dict[str, int] = field(default_factory=dict)  # ended match -> moved seen
    # Per match started in the window, later seek -> last match_start: players on 1 node, 2.
    pair_ms: tuple[array[float], ...] = field(default_factory=lambda: (array("d"), array("d")))
    errors: Counter[str] = field(default_factory=Counter)
    # --callgrind: the server's instructions while counting was on, and the moves confirmed then
    instructions: int = 0
    counted_moves: int = 0
    soak: list[Mark] = field(default_factory=list)  # a Mark per ``soak_every`` ended matches
    db_ok: bool = False
    db_note: str = "not checked"

    @property
    def moves_per_s(self) -> float:
        """Confirmed moves per second over the window."""
        return self.window_moves / self.config.seconds

    def us_per_move(self, *parts: int) -> float:
        """CPU per confirmed move of ``cpu[parts]`` together, in microseconds."""
        return sum(self.cpu[i] for i in parts) / self.moves_per_s * 1e6 if self.moves_per_s else NAN

    @property
    def instructions_per_move(self) -> float:
        """The server's user-space instructions per confirmed move (``--callgrind``; else NaN)."""
        return self.instructions / self.counted_moves if self.counted_moves else NAN

    def misses(self) -> list[str]:
        """What this run fell short of in the target; empty when it met all of it."""
        n, rate, p99 = self.config.matches, self.moves_per_s, quantile(self.server_ms, 0.99)
        return [text for missed, text in (
            (n < TARGET_MATCHES, f"{n} matches < {TARGET_MATCHES}"),
            (rate < TARGET_MOVES_PER_S, f"{rate:,.0f} moves/s < {TARGET_MOVES_PER_S:,.0f}"),
            (not p99 <= TARGET_P99_MS, f"p99 {p99:.2f} ms > {TARGET_P99_MS:g} ms"),  # NaN: missed
            (not self.db_ok, "not every move persisted"),
        ) if missed]  # fmt: skip


def quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0-1); NaN without values."""
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))] if ordered else NAN


_COLUMNS: tuple[tuple[str, Callable[[Run], float], str], ...] = (
    ("live", lambda r: r.live, ".0f"),
    ("done", lambda r: r.window_ended, ".0f"),
    ("moves/s", lambda r: r.moves_per_s, ".0f"),
    ("p50 ms", lambda r: quantile(r.server_ms, 0.5), ".2f"),
    ("p99 ms", lambda r: quantile(r.server_ms, 0.99), ".2f"),
    ("max ms", lambda r: max(r.server_ms, default=NAN), ".2f"),
    ("client p99", lambda r: quantile(r.client_ms, 0.99), ".2f"),
    ("srv CPU %", lambda r: 100 * r.cpu[0], ".0f"),
    ("srv us", lambda r: r.us_per_move(0), ".0f"),
    ("bots us", lambda r: r.us_per_move(2), ".0f"),
    ("all us", lambda r: r.us_per_move(0, 1, 2), ".0f"),
    ("pg us", lambda r: r.us_per_move(3), ".0f"),
    ("srv kIr", lambda r: r.instructions_per_move / 1000, ".1f"),
    ("pair p99", lambda r: quantile(r.pair_ms[0], 0.99), ".1f"),
    ("x-node p99", lambda r: quantile(r.pair_ms[1], 0.99), ".1f"),
)
_HEADER = ("nodes", "matches", "think ms", "jitter", "writer", "analysis",
           *(c[0] for c in _COLUMNS), "DB", "target")  # fmt: skip


def row(runs: Sequence[Run]) -> tuple[str, ...]:
    """One run's cells, or the medians of several runs of one configuration (NaNs left out)."""
    cells = []
    for _, value, fmt in _COLUMNS:
        known = [v for r in runs if not math.isnan(v := value(r))]
        cells.append(format(statistics.median(known), fmt) if known else "n/a")
    met, c = sum(not r.misses() for r in runs), runs[0].config
    target = ("met" if met else "missed") if len(runs) == 1 else f"{met}/{len(runs)} met"
    label = (str(c.nodes), str(c.matches), f"{c.think_ms:g}", f"{c.think_jitter:g}", c.db_writer,
             c.analysis)  # fmt: skip
    return (*label, *cells, "OK" if all(r.db_ok for r in runs) else "MISMATCH", target)


def table(runs: Sequence[Run]) -> str:
    """A row per run; then the medians of each configuration run more than once."""
    groups = {run.config: [r for r in runs if r.config == run.config] for run in runs}
    medians = [(f"median {r[0]}", *r[1:]) for g in groups.values() if len(g) > 1 for r in [row(g)]]
    rows = [_HEADER, *(row([r]) for r in runs), *medians]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    rows.insert(1, tuple("-" * w for w in widths))
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def legend(runs: Sequence[Run]) -> str:
    """What the columns mean, and how many runs met the target."""
    budget = (os.cpu_count() or 1) / TARGET_MOVES_PER_S * 1e6
    return (
        "p50/p99/max: server-added latency (move -> moved in the kernel; client: handled); us: CPU"
        f" per move (budget {budget:.0f}; all: +writer, fit); pair: later seek -> last"
        " match_start; kIr: the server's instructions per move, thousands (--callgrind)\n"
        f"target: {TARGET_MATCHES} matches, {TARGET_MOVES_PER_S:,.0f} moves/s, p99 <="
        f" {TARGET_P99_MS:g} ms, all persisted: met in {sum(not r.misses() for r in runs)}"
        f" of {len(runs)} runs"
    )


def soak_report(marks: Sequence[Mark]) -> str:
    """The server's memory and pauses per milestone of finished matches; the soak verdict. A
    pause is the server's own: the collector's, or the loop's lag less its wait for a CPU
    (``arena.runtime.LoopLag``); the whole lag beside it shows the machine's share."""
    lines = ["finished  minutes  RSS MiB   +MiB  gc max ms  lag max ms  last minute  own, minute"]
    pauses, lags = [NAN], [NAN]
    for i, (done, minutes, rss, health) in enumerate(marks):
        gc, lag = health.get("gc") or {}, health.get("loop_lag_ms") or {}  # n/a where absent
        own = lag.get("own_max", lag.get("max", NAN))  # a server without the split: all own
        pauses += [float(gc.get("max_pause_ms", NAN)), float(own)]
        lags.append(float(lag.get("max", NAN)))
        grew = f"{rss - marks[i - 1][2]:+.1f}" if i else ""
        minute = (float(lag.get("minute_max", NAN)), float(lag.get("own_minute_max", NAN)))
        lines.append(_SOAK_ROW.format(done, minutes, rss, grew, pauses[-2], lags[-1], *minute))
    rss_at = {done: rss for done, _, rss, _ in marks}
    growth = rss_at[SOAK_TO] - rss_at[SOAK_FROM] if {SOAK_FROM, SOAK_TO} <= rss_at.keys() else NAN
    worst, worst_lag = (max(filter(math.isfinite, v), default=NAN) for v in (pauses, lags))
    met = growth <= SOAK_GROWTH_MIB and worst <= SOAK_PAUSE_MS  # False with a NaN
    lines.append(
        f"soak target: growth from {SOAK_FROM:,} to {SOAK_TO:,} finished matches <="
        f" {SOAK_GROWTH_MIB:g} MiB (here {growth:.1f}), no GC pause or own loop lag over"
        f" {SOAK_PAUSE_MS:g} ms (worst {worst:.1f}; whole lag {worst_lag:.1f}):"
        f" {'met' if met else 'not met'}"
    )
    return "\n".join(lines).replace("nan", "n/a")
