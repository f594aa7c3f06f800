"""Smoke test of bench/server_load.py: a few matches for a couple of seconds, all persisted."""

from __future__ import annotations

import os
import random
import shutil
import statistics
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.server_load import (
    ClientStats,
    LoadReport,
    LoadSpec,
    format_report,
    format_summary,
    main,
    run_load,
    think_delay,
)


def short_run(tmp_path: Path, **overrides: Any) -> LoadSpec:
    """A few matches for a couple of seconds, on a fresh SQLite file in ``tmp_path``."""
    spec = LoadSpec(
        matches=4,
        seconds=1.5,
        warmup=0.5,
        db=f"sqlite+aiosqlite:///{tmp_path / 'load.db'}",
        # Pair at once, so a short window still sees several matches start and end.
        pairing_window_s=0.02,
        quiet=True,
    )
    return replace(spec, **overrides)


def test_a_short_load_run_counts_moves_and_persists_every_one(tmp_path: Path) -> None:
    spec = short_run(tmp_path)
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
    # The server's CPU per move is reported beside its share of a core.
    assert report.server_cpu is not None
    assert report.server_us_per_move == report.server_cpu / report.moves_per_s * 1e6
    assert f"({report.server_us_per_move:.0f} us per move)" in text
    # The writer process's CPU, and all the run's CPU per move against the machine's cores.
    assert report.writer_cpu is not None and report.writer_cpu > 0.0
    assert report.client_cpu is not None
    all_cpu = report.server_cpu + report.client_cpu + report.writer_cpu
    assert report.machine_us_per_move == pytest.approx(all_cpu / report.moves_per_s * 1e6)
    assert report.cpu_budget_us() == (os.cpu_count() or 1) / 5000 * 1e6
    assert f"{report.machine_us_per_move:.0f} us per move (server, writer and bots)" in text
    # And the machine's speed just before the run, to compare runs on a shared machine.
    assert 0.0 < report.loop_ms < 10_000.0
    assert "machine speed" in text and f" {report.loop_ms:.1f} ms per million" in text

    # Repeated runs of one configuration get a median row; a different one does not.
    other = replace(report, spec=replace(spec, think_jitter=0.0))
    summary = format_summary([report, other, report])
    medians = [line for line in summary.splitlines() if line.lstrip().startswith("median")]
    assert len(medians) == 1
    assert "median of 2: 4" in medians[0]
    assert f"{report.moves_per_s:.0f}" in medians[0].split()
    # Four matches are not the target load: every row says so, and so does the count.
    assert report.target_misses()[0] == "4 matches < 500"
    assert "missed: 4 matches < 500" in text
    assert medians[0].endswith("0/2 met")
    assert summary.splitlines()[-1].endswith("met in 0 of 3 runs")


def _target_report(tmp_path: Path, moves: int, arrival_ms: list[float]) -> LoadReport:
    """A 500-match report of ``moves`` moves in a 10 s window, every one persisted."""
    stats = ClientStats(moves=moves, window_moves=moves, arrival_ms=arrival_ms)
    return LoadReport(
        spec=replace(short_run(tmp_path), matches=500, seconds=10.0),
        db_kind="sqlite",
        window_s=10.0,
        live_samples=[500.0],
        stats=stats,
        db_moves=moves,
        db_matches=Counter(),
        mismatched_matches=0,
        server_cpu=None,
        client_cpu=None,
    )


def test_the_target_verdict_names_each_part_a_run_missed(tmp_path: Path) -> None:
    fast = [1.0] * 99 + [9.9]  # p99 is the 99th of 100: 1.0 ms
    met = _target_report(tmp_path, 50_000, fast)
    assert met.target_misses() == []
    assert "target" in format_report(met).splitlines()[-1]
    assert format_report(met).splitlines()[-1].endswith("  met")
    slow = _target_report(tmp_path, 49_990, [1.0] * 90 + [10.5] * 10)
    assert slow.target_misses() == ["4,999 moves/s < 5,000", "p99 10.50 ms > 10 ms"]
    lost = replace(met, db_moves=49_999)
    assert lost.target_misses() == ["not every move persisted"]
    summary = format_summary([met, slow, met])
    assert summary.splitlines()[-1].endswith("met in 2 of 3 runs")
    rows = summary.splitlines()
    assert rows[2].endswith(" met") and rows[3].endswith(" missed")
    assert next(r for r in rows if r.lstrip().startswith("median")).endswith("2/3 met")


def test_think_times_spread_evenly_around_the_mean_and_are_exact_without_jitter() -> None:
    rng = random.Random(7)
    draws = [think_delay(0.08, 0.5, rng) for _ in range(20_000)]
    assert min(draws) >= 0.04 and max(draws) <= 0.12
    # Uniform on [0.04, 0.12]: mean 0.08, standard deviation 0.08 / sqrt(12).
    assert statistics.fmean(draws) == pytest.approx(0.08, abs=0.001)
    assert statistics.stdev(draws) == pytest.approx(0.08 / 12**0.5, rel=0.03)
    assert min(draws) < 0.042 and max(draws) > 0.118
    assert {think_delay(0.08, 0.0, rng) for _ in range(10)} == {0.08}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--think-jitter", "1.5"], "fractions from 0 to 1"),
        (["--think-jitter", "lots"], "takes numbers"),
        (["--repeat", "0"], "positive count"),
    ],
)
def test_bad_jitter_and_repeat_are_refused_before_anything_runs(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_callgrind_counts_the_server_instructions_of_the_window_only(tmp_path: Path) -> None:
    report = run_load(short_run(tmp_path, matches=2, seconds=2.0, warmup=1.5, callgrind=True))
    assert report.persisted and report.stats.window_moves > 0
    assert report.server_instructions is not None
    # Refereeing a move takes tens of thousands of instructions at the very least, and
    # the server's start (imports, migrations: billions) is not in the window.
    per_move = report.server_instructions_per_move
    assert 10_000 < per_move < 20_000_000, per_move
    assert f"{per_move:,.0f} per move" in format_report(report)


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="--cores split needs Linux and at least 2 usable cores",
)
def test_split_cores_give_the_server_loop_a_core_of_its_own(tmp_path: Path) -> None:
    before = os.sched_getaffinity(0)
    report = run_load(short_run(tmp_path, matches=2, cores="split"))
    assert report.persisted and report.stats.window_moves > 0
    first, *rest = sorted(before)
    seen = report.commits["cores"] if report.commits else {}
    assert seen["loop"] == [first]
    assert seen["writer"] == rest  # started before the loop moved: it stays with the bots
    assert report.stats.cores == set(rest)
    assert os.sched_getaffinity(0) == before  # the bench process got its cores back
    assert f"server loop on {first}," in format_report(report)
