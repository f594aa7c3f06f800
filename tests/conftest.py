"""Shared pytest configuration: hypothesis profiles (CI runs the same seeds as a developer),
and the fixtures several test packages use."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from arena.store import Store

settings.register_profile(
    "default",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# The `arena serve` processes the tests start fit leaderboards in a thread: a fit process
# is a spawned interpreter importing numpy and scipy, about 1.2 s of CPU per server start
# (measured: 19.6 s against 13.3 s for tests/arena/test_server_cli.py and test_serve_logs.py),
# minutes over the suite. The fit process has its own tests (test_leaderboard_fit_process).
os.environ.setdefault("ARENA_LEADERBOARD_FIT", "thread")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Worker processes for ``-n auto`` (pyproject's addopts): two, the machine's cores (the
    project's rule: the suite on 2 cores), but none for the benchmarks (they measure, alone),
    nor for named tests (``path::name``: starting workers costs more than it saves).
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides."""
    configured = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if configured:
        return int(configured)
    markers = config.option.markexpr or ""
    if "bench" in markers and "not bench" not in markers:
        return 0
    if config.args and all("::" in arg for arg in config.args):
        return 0
    return min(2, len(os.sched_getaffinity(0)))


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh store in a SQLite file under ``tmp_path``."""
    opened = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")
    try:
        yield opened
    finally:
        await opened.close()
