"""The load bench's arithmetic: the target verdict, the median rows, the soak verdict."""

from __future__ import annotations

from array import array
from dataclasses import replace

import pytest

from bench.load.report import Config, Run, legend, quantile, soak_report, table

pytestmark = pytest.mark.bench

TARGET = Config(matches=500, seconds=10.0, think_ms=80.0)


def a_run(moves: int, server_ms: list[float], config: Config = TARGET, ok: bool = True) -> Run:
    """A run of ``moves`` confirmed moves in the window, with the given server-added latencies."""
    return Run(
        config,
        moves=moves,
        window_moves=moves,
        live=490.0,
        cpu=(0.6, 0.1, 0.3, 0.2),
        client_ms=array("d", [v + 1.0 for v in server_ms]),
        server_ms=array("d", server_ms),
        db_ok=ok,
    )


def test_quantiles_are_nearest_rank_and_nan_without_values() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert quantile(values, 0.5) == 51.0  # index round(49.5) = 50 (banker's rounding: 50)
    assert quantile(values, 0.99) == 99.0
    assert quantile(values, 1.0) == 100.0
    assert quantile([], 0.99) != quantile([], 0.99)  # NaN


def test_the_verdict_names_each_part_of_the_target_a_run_missed() -> None:
    fast = [1.0] * 99 + [9.9]  # p99 (nearest rank, the 99th of 100 values) is 1.0 ms
    met = a_run(50_000, fast)
    assert met.moves_per_s == 5000.0 and met.misses() == []
    slow = a_run(49_990, [1.0] * 90 + [10.5] * 10)
    assert slow.misses() == ["4,999 moves/s < 5,000", "p99 10.50 ms > 10 ms"]
    assert a_run(50_000, fast, ok=False).misses() == ["not every move persisted"]
    small = a_run(50_000, fast, replace(TARGET, matches=4))
    assert small.misses() == ["4 matches < 500"]
    # Without kernel receive times there is no server-added p99: that is a miss, not a pass.
    assert a_run(50_000, []).misses() == ["p99 nan ms > 10 ms"]


def test_cpu_per_move_is_cores_over_moves_per_second() -> None:
    run = a_run(50_000, [1.0])  # 5,000 moves/s; cores 0.6 server, 0.1 writer, 0.3 bots
    assert run.us_per_move(0) == pytest.approx(120.0)
    assert run.us_per_move(2) == pytest.approx(60.0)
    assert run.us_per_move(0, 1, 2) == pytest.approx(200.0)
    assert a_run(0, []).us_per_move(0) != a_run(0, []).us_per_move(0)  # NaN, not a division error


def test_repeated_configurations_get_a_median_row_and_a_count_of_runs_that_met() -> None:
    other = replace(TARGET, think_ms=120.0)
    runs = [
        a_run(50_000, [1.0] * 100),  # met, 5,000 moves/s
        a_run(40_000, [1.0] * 100),  # missed, 4,000 moves/s
        a_run(60_000, [2.0] * 100),  # met, 6,000 moves/s
        a_run(30_000, [3.0] * 100, other),  # one run only: no median row
    ]
    lines = table(runs).splitlines()
    assert lines[0].split()[:5] == ["nodes", "matches", "think", "ms", "jitter"]
    assert [line.split()[-1] for line in lines[2:6]] == ["met", "missed", "met", "missed"]
    medians = [line for line in lines if line.lstrip().startswith("median")]
    assert len(medians) == 1
    cells = medians[0].split()
    assert cells[:3] == ["median", "1", "500"]  # the configuration it is the median of
    assert cells[-1] == "met" and cells[-2] == "2/3"
    assert "5000" in cells and "1.00" in cells  # the median moves/s and p50 of the three
    assert legend(runs).endswith("met in 2 of 4 runs")


def test_a_cell_without_values_says_n_a() -> None:
    row = table([a_run(50_000, [])]).splitlines()[2].split()
    assert row.count("n/a") == 6  # p50, p99, max, client p99, both pairing delays
    assert row[-2:] == ["OK", "missed"]


def test_the_soak_verdict_reads_growth_between_100k_and_200k_and_the_worst_pause() -> None:
    lag = {"max": 18.0, "p99": 2.0, "minute_max": 9.0, "own_max": 11.0, "own_minute_max": 4.0}
    health = {"gc": {"max_pause_ms": 12.5}, "loop_lag_ms": lag}
    marks = [(n * 10_000, n * 1.5, 80.0 + n * 0.5, health) for n in range(1, 21)]
    report = soak_report(marks)
    assert "(here 5.0)" in report and "(worst 12.5; whole lag 18.0)" in report
    assert report.endswith(": met")
    row = ["20,000", "3.0", "81.0", "+0.5", "12.5", "18.0", "9.0", "4.0"]
    assert report.splitlines()[2].split() == row
    grown = [*marks[:-1], (200_000, 30.0, 91.0, health)]  # 6 MiB more than at 100,000
    assert soak_report(grown).endswith(": not met")
    # The worst pause of any sample counts, whether /healthz reports maxima since start or not.
    slow = [*marks[:5], (60_000, 9.0, 83.0, {"gc": {"max_pause_ms": 20.5}}), *marks[6:]]
    assert "(worst 20.5;" in soak_report(slow) and soak_report(slow).endswith(": not met")
    # A lag that is the machine's (waiting for a CPU) is not the server's pause ...
    busy = {**health, "loop_lag_ms": {**lag, "max": 60.0, "own_max": 8.0}}
    assert soak_report([*marks[:5], (60_000, 9.0, 83.0, busy), *marks[6:]]).endswith(": met")
    # ... but one of its own is, and so is all of a lag from a server that cannot split it.
    own = {**health, "loop_lag_ms": {**lag, "own_max": 21.0}}
    assert soak_report([*marks[:5], (60_000, 9.0, 83.0, own), *marks[6:]]).endswith("not met")
    unsplit = {**health, "loop_lag_ms": {"max": 21.0, "p99": 2.0}}
    assert soak_report([*marks[:5], (60_000, 9.0, 83.0, unsplit), *marks[6:]]).endswith("not met")
    # A server whose /healthz has no pauses yet, and a soak too short to reach 200,000.
    bare = soak_report([(10_000, 1.5, 80.0, {"status": "ok"})])
    assert "(here n/a)" in bare and "(worst n/a; whole lag n/a)" in bare
    assert bare.endswith(": not met")
    assert bare.splitlines()[1].split()[-4:] == ["n/a", "n/a", "n/a", "n/a"]
