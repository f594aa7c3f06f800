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


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh store in a SQLite file under ``tmp_path``."""
    opened = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")
    try:
        yield opened
    finally:
        await opened.close()
