"""Smoke test of bench/server_load.py: a few matches for a couple of seconds, all persisted."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.server_load import LoadSpec, format_report, run_load


def test_a_short_load_run_counts_moves_and_persists_every_one(tmp_path: Path) -> None:
    spec = LoadSpec(
        matches=4,
        seconds=1.5,
        warmup=0.5,
        db=f"sqlite+aiosqlite:///{tmp_path / 'load.db'}",
        # Pair at once, so a short window still sees several matches start and end.
        pairing_window_s=0.02,
        quiet=True,
    )
    report = run_load(spec)
    stats = report.stats
    assert stats.window_moves > 0
    assert stats.latencies_ms and len(stats.latencies_ms) == stats.window_moves
    if sys.platform == "linux":
        # Every read carries the kernel's receive time, which comes before the client's
        # loop handles the message (the two clocks tick alike; allow them 0.5 ms apart).
        assert len(stats.arrival_ms) == len(stats.latencies_ms)
        pairs = zip(stats.arrival_ms, stats.latencies_ms, strict=True)
        assert all(0.0 < arrived <= seen + 0.5 for arrived, seen in pairs)
    assert stats.matches_ended > 0
    assert not stats.errors
    # Every move the clients saw confirmed is in the database, match by match.
    assert report.db_moves == stats.moves
    assert report.mismatched_matches == 0
    assert report.persisted
    text = format_report(report)
    assert "persisted" in text and "server-added latency" in text
    assert report.writer == "process" and "(process writer)" in text  # as arena serve writes
