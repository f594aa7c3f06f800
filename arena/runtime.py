"""How an arena server process runs: its event loop and its garbage collector.

``run`` starts the process's event loop on uvloop (libuv under asyncio's
API: the loop, transports and timers in C) where it is installed, else on
the standard library's; ``ARENA_EVENT_LOOP=asyncio`` forces the latter.
Behaviour is the same on both; the test suite runs on asyncio's, and
``arena serve``, ``arena demo`` and ``bench/server_load.py`` on uvloop.

``settle_heap`` is called once ``arena serve`` is up. A busy server keeps a few
hundred thousand objects alive (about 200 per connection); every full
collection of Python's cyclic garbage collector walks all of them and
stops the event loop meanwhile: 40-120 ms each, measured under load, which
was the largest cause of slow moves. Freezing what exists at start-up
(modules, the database layer, the listening server) takes it out of those
walks for good.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

ENV_VAR = "ARENA_EVENT_LOOP"


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's ``new_event_loop`` unless ``ARENA_EVENT_LOOP=asyncio`` or it is not installed."""
    choice = os.environ.get(ENV_VAR, "uvloop").strip().lower()
    if choice == "asyncio":
        return None
    if choice != "uvloop":
        raise ValueError(f"{ENV_VAR} must be 'uvloop' or 'asyncio', not {choice!r}")
    try:
        import uvloop
    except ImportError:  # e.g. Windows, where uvloop does not exist
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def loop_name() -> str:
    """``uvloop`` or ``asyncio``: what ``run`` will use."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop ``loop_factory`` picks."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


def settle_heap() -> None:
    """Collect once, then exempt every object alive now from future collections."""
    gc.collect()
    gc.freeze()
