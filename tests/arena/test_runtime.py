"""The server process's runtime: event loop choice and the frozen start-up heap."""

from __future__ import annotations

import asyncio
import json
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


def test_settle_heap_freezes_what_exists_and_turns_the_collector_off() -> None:
    # In a child process: freezing the test process's heap would outlive this test.
    code = (
        "import asyncio, gc; from arena.runtime import settle_heap\n"
        "async def main():\n"
        "    before = gc.get_freeze_count(); settle_heap()\n"
        "    print(before, gc.get_freeze_count() > 10_000, gc.isenabled())\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["0", "True", "False"]


_KEEPER_SCENARIO = """
import asyncio, gc, json
from arena.runtime import HeapKeeper

alive = 0

class Cycle:
    def __init__(self):
        global alive
        alive += 1
        self.me = self
        self.payload = [[] for _ in range(8)]

    def __del__(self):
        global alive
        alive -= 1

def cycles():  # frozen ones too, which gc.get_objects() does not list
    return alive

async def main():
    keeper = HeapKeeper(interval=0.05)
    keeper.install()
    out = {"enabled": gc.isenabled(), "compactions": keeper.compactions}
    garbage = keeper.baseline // 40  # ten objects each: a quarter of the heap
    for _ in range(garbage):
        Cycle()
    await asyncio.sleep(0.2)
    out["quarter"] = [keeper.compactions, keeper.load_frozen, cycles()]
    for _ in range(garbage * 4):
        Cycle()
    await asyncio.sleep(0.2)
    out["first_doubling"] = [keeper.compactions, keeper.load_frozen, cycles()]
    for _ in range(garbage * 12):  # more than the heap now frozen
        Cycle()
    await asyncio.sleep(0.2)
    out["second_doubling"] = [keeper.compactions, keeper.load_frozen, cycles()]
    keeper.uninstall()
    out["enabled_after"] = gc.isenabled()
    print(json.dumps(out))

asyncio.run(main())
"""


def test_the_heap_keeper_freezes_the_first_doubling_and_compacts_the_next() -> None:
    # In a child process: the keeper turns the collector off and freezes the heap.
    out = subprocess.run(
        [sys.executable, "-c", _KEEPER_SCENARIO],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    result = json.loads(out)
    assert result["enabled"] is False
    assert result["compactions"] == 1  # the one install does
    # A quarter more objects, all cyclic garbage: left alone, nothing collects it.
    compactions, frozen, left = result["quarter"]
    assert compactions == 1 and not frozen and left > 0
    # Past double the heap the first time: taken for the load arriving, frozen without a walk.
    compactions, frozen, left = result["first_doubling"]
    assert compactions == 1 and frozen and left > 0
    # Past double again: a compaction, and all the garbage is gone, the frozen included.
    compactions, frozen, left = result["second_doubling"]
    assert compactions == 2 and frozen and left == 0
    assert result["enabled_after"] is True
