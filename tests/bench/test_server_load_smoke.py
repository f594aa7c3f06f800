"""Smoke test of bench/server_load.py: a few matches for a couple of seconds, all persisted."""

from __future__ import annotations

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
    assert stats.matches_ended > 0
    assert not stats.errors
    # Every move the clients saw confirmed is in the database, match by match.
    assert report.db_moves == stats.moves
    assert report.mismatched_matches == 0
    assert report.persisted
    assert "persisted" in format_report(report)
