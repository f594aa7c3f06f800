"""The server process's runtime: event loop choice and the frozen start-up heap."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from arena import runtime


async def _which_loop() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def test_uvloop_by_default_and_asyncio_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(runtime.ENV_VAR, raising=False)
    assert runtime.loop_name() == "uvloop"
    assert runtime.run(_which_loop()) == "uvloop"
    monkeypatch.setenv(runtime.ENV_VAR, "asyncio")
    assert runtime.loop_name() == "asyncio"
    assert runtime.run(_which_loop()) == "asyncio"


def test_an_unknown_loop_name_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runtime.ENV_VAR, "trio")
    with pytest.raises(ValueError, match="ARENA_EVENT_LOOP"):
        runtime.loop_factory()


def test_settle_heap_freezes_what_exists() -> None:
    # In a child process: freezing the test process's heap would outlive this test.
    code = (
        "import gc; from arena.runtime import settle_heap; "
        "before = gc.get_freeze_count(); settle_heap(); "
        "print(before, gc.get_freeze_count() > 10_000)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["0", "True"]
