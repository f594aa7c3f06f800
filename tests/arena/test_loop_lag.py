"""The loop-lag probe: how late the event loop runs, and how much of that is the server's own.

The CPU-wait tests pin a process and a busy "neighbour" to one core, so the
scheduler must share it between them: the real situation of a server whose
machine is busy with other work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena import runtime
from arena.play.clock import ManualClock

needs_schedstat = pytest.mark.skipif(
    runtime.CpuWait().read_ms() is None or not hasattr(os, "sched_setaffinity"),
    reason="needs Linux scheduler statistics (/proc/thread-self/schedstat) and CPU affinity",
)


def test_the_own_lag_is_the_lag_less_the_time_spent_waiting_for_a_cpu() -> None:
    lag = runtime.LoopLag()
    lag.record(30.0, 25.0)  # held up by the machine: 5 ms its own
    lag.record(12.0, None)  # the wait unknown: all its own
    lag.record(3.0, 8.0)  # waited longer than it was late: none its own
    status = lag.status()
    assert status["max"] == 30.0
    assert status["minute_max"] == 30.0
    assert status["own_max"] == 12.0
    assert status["own_minute_max"] == 12.0
    lag.reset()
    assert lag.status() == dict.fromkeys(status, 0.0)


def test_cpu_wait_is_unknown_without_the_scheduler_file(tmp_path: Path) -> None:
    assert runtime.CpuWait(str(tmp_path / "missing")).read_ms() is None
    garbled = tmp_path / "schedstat"
    garbled.write_text("not numbers\n")
    assert runtime.CpuWait(str(garbled)).read_ms() is None


def _run_pinned_beside_a_hog(body: str) -> dict[str, float]:
    """Run ``body`` (which prints one JSON line) in a child pinned to one core, beside a
    process that spins on the same core."""
    code = textwrap.dedent(
        """
        import asyncio, json, os, subprocess, sys, time
        from arena import runtime
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        spin = f"import os\\nos.sched_setaffinity(0, {{{cpu}}})\\nwhile True: pass"
        hog = subprocess.Popen([sys.executable, "-c", spin])
        time.sleep(0.3)
        try:
        """
    ) + textwrap.indent(textwrap.dedent(body), "    ") + "\nfinally:\n    hog.kill()\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@needs_schedstat
def test_cpu_wait_counts_the_time_a_neighbour_had_the_core() -> None:
    # A thread that never sleeps is, at every instant, either on the core or waiting for it.
    result = _run_pinned_beside_a_hog(
        """
        wait = runtime.CpuWait()
        waited0, cpu0, t0 = wait.read_ms(), time.thread_time(), time.perf_counter()
        while time.perf_counter() - t0 < 1.0:
            pass
        print(json.dumps({
            "wall": (time.perf_counter() - t0) * 1000,
            "cpu": (time.thread_time() - cpu0) * 1000,
            "waited": wait.read_ms() - waited0,
        }))
        """
    )
    assert result["waited"] > 0.2 * result["wall"]  # the neighbour had a fair share
    assert result["cpu"] + result["waited"] == pytest.approx(result["wall"], rel=0.1)


@needs_schedstat
def test_a_loop_held_up_by_the_machine_is_late_but_not_by_its_own_doing() -> None:
    # The loop works 4 ms of every 5 beside a process spinning on its core: its timer runs
    # late, and most of the lateness is the time it waited for the core.
    result = _run_pinned_beside_a_hog(
        """
        async def main():
            lag = runtime.LoopLag()
            lag.start()
            end = time.perf_counter() + 1.5
            while time.perf_counter() < end:
                spun = time.perf_counter()
                while time.perf_counter() - spun < 0.004:
                    pass
                await asyncio.sleep(0.001)
            status = lag.status()
            lag.stop()
            return status
        print(json.dumps(asyncio.run(main())))
        """
    )
    assert result["max"] > 5.0
    assert result["own_max"] < result["max"] / 2


class LoopClock(ManualClock):
    """The test clock read as an event loop's (``time``), which ``LoopLag`` runs on:
    ``advance`` lets due calls run on time, ``hold`` is a callback keeping the loop."""

    def time(self) -> float:
        return self.now()


def _schedstat(path: Path, waited_ms: float) -> None:
    """Write a scheduler-statistics line whose run-queue wait is ``waited_ms``."""
    path.write_text(f"123456 {int(waited_ms * 1e6)} 42\n")


def _probe(tmp_path: Path) -> tuple[runtime.LoopLag, LoopClock, Path]:
    clock, stat = LoopClock(), tmp_path / "schedstat"
    _schedstat(stat, 0.0)
    lag = runtime.LoopLag(tick_s=0.001)
    lag.start(clock, runtime.CpuWait(str(stat)))
    return lag, clock, stat


@pytest.mark.parametrize(
    ("waited_ms", "own_ms"),
    [
        (0.0, 59.5),  # a blocking call: the thread never waited for a CPU, so all its own
        (40.0, 19.5),  # 40 ms of the hold spent waiting for a core: not its own
    ],
)
def test_the_own_lag_is_what_the_loop_held_less_its_wait_for_a_cpu(
    tmp_path: Path, waited_ms: float, own_ms: float
) -> None:
    lag, clock, stat = _probe(tmp_path)
    clock.advance(0.0505)  # half a tick after the last one ran
    clock.hold(0.06)
    _schedstat(stat, waited_ms)
    clock.advance(0.05)
    status = lag.status()
    lag.stop()
    # The tick due half a tick into the hold runs when it ends: 59.5 ms late.
    assert status["max"] == pytest.approx(59.5)
    assert status["own_max"] == pytest.approx(own_ms)


def test_a_reset_right_after_start_up_work_does_not_count_that_work(tmp_path: Path) -> None:
    # ``arena serve`` settles its heap (a blocking full collection) and then resets the
    # probe: the tick that the collection made overdue must not count as service.
    lag, clock, _ = _probe(tmp_path)
    clock.advance(0.03)
    clock.hold(0.06)  # the start-up work, in the callback that then resets
    lag.reset()
    clock.advance(0.05)
    status = lag.status()
    lag.stop()
    assert status == dict.fromkeys(status, 0.0)
    # Without the reset the overdue tick counts, as the test above shows for service time.


def test_healthz_reports_the_own_lag_beside_the_whole_lag() -> None:
    # What /healthz serialises: every figure a number, in the order the docs give.
    status = runtime.LoopLag().status()
    assert list(status) == ["max", "p99", "minute_max", "own_max", "own_minute_max"]
    assert json.loads(json.dumps(status)) == status
