"""How an arena server process runs: its event loop and its garbage collector.

``run`` starts the process's event loop on uvloop (libuv under asyncio's
API: the loop, transports and timers in C) where it is installed, else on
the standard library's; ``ARENA_EVENT_LOOP=asyncio`` forces the latter.
Behaviour is the same on both; the test suite runs on asyncio's, and
``arena serve``, ``arena demo`` and ``bench/server_load.py`` on uvloop.

``settle_heap`` is called once ``arena serve`` is up. A busy server keeps a
hundred thousand objects or more alive (about 70 per connection, more per
live match). Every pass of Python's cyclic garbage collector walks the
objects of its generations and stops the event loop meanwhile: 40-140 ms
for a full pass under load, the largest cause of slow moves, and a young
pass grows with the live matches' objects. Yet almost none of them is
cyclic garbage: a move or a whole match is freed by reference counting
(measured: a 10 s load run with the collector off left only the closed
connections' cycles behind). So ``HeapKeeper`` turns the automatic
collector off and collects only when it could matter: when the tracked
heap has grown by as much as it held after the last collection (cyclic
garbage that reference counting cannot free shows up as that growth). Each
such compaction collects everything once and freezes the survivors. Memory
stays bounded (garbage at most doubles the heap), and a long pause comes
once per doubling instead of every few seconds.

The first doubling after start-up is the exception: it is the load
arriving (connections and live matches), not garbage, so it is frozen
without a walk. Measured at 1,000 matches (bench.load): the heap grew from
121,000 objects to about 275,000 within seconds of the bots logging in, of
which about 8,000 were cyclic garbage, and compacting it stopped the loop
for 161 ms. The garbage that freeze keeps (fewer objects than the
start-up heap) is freed by the next compaction, which unfreezes
everything first.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

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


COMPACT_GROWTH = 1.0
"""A compaction runs once the tracked heap has grown by this fraction of its size after
the last one."""

CHECK_INTERVAL_S = 1.0


class HeapKeeper:
    """Collect cyclic garbage only when the heap has grown enough to matter.

    ``install`` turns off the automatic collector, collects once and freezes
    what survives (so later collections do not walk it), then checks every
    ``interval`` seconds on the running event loop whether the objects
    allocated since (net of those freed, ``gc.get_count()[0]``) exceed
    ``growth`` times the frozen heap; if so it compacts: a full collection
    over everything, then a fresh freeze. The first time (the load arriving
    after start-up, see the module docstring) it only freezes.
    """

    def __init__(self, growth: float = COMPACT_GROWTH, interval: float = CHECK_INTERVAL_S) -> None:
        self.growth = growth
        self.interval = interval
        self.baseline = 0
        """Objects frozen by the last compaction."""
        self.compactions = 0
        self.load_frozen = False
        """Whether the first growth after ``install`` has been frozen (without a walk)."""
        self._timer: asyncio.TimerHandle | None = None

    def install(self) -> None:
        """Compact now, switch the automatic collector off and start checking."""
        self.uninstall()
        gc.disable()
        self.compact()
        self.load_frozen = False
        self._timer = asyncio.get_running_loop().call_later(self.interval, self._check)

    def uninstall(self) -> None:
        """Stop checking and give the collector back (what is frozen stays frozen)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            gc.enable()

    def due(self) -> bool:
        """True when the heap has grown enough since the last compaction."""
        return gc.get_count()[0] > self.growth * self.baseline

    def compact(self) -> None:
        """One full collection over every object, then freeze the survivors."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.baseline = gc.get_freeze_count()
        self.compactions += 1

    def freeze_load(self) -> None:
        """Freeze what was allocated since the last compaction, without collecting it."""
        gc.freeze()
        self.baseline = gc.get_freeze_count()
        self.load_frozen = True

    def _check(self) -> None:
        if self.due():
            if self.load_frozen:
                self.compact()
            else:
                self.freeze_load()
        self._timer = asyncio.get_running_loop().call_later(self.interval, self._check)


heap_keeper = HeapKeeper()
"""The process's keeper, installed by ``settle_heap``."""


def settle_heap() -> None:
    """Freeze everything alive now and collect only on heap growth (``HeapKeeper``).

    Call it from the process's event loop once the server is up.
    """
    heap_keeper.install()


class GcPauses:
    """How long the cyclic garbage collector has stopped the process, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.collections = 0
        self.max_pause_ms = 0.0
        self.last_pause_ms = 0.0
        self._started = 0.0
        self._installed = False

    def reset(self) -> None:
        """Forget the pauses so far (start-up's deliberate full collection is not service)."""
        self.collections = 0
        self.max_pause_ms = 0.0
        self.last_pause_ms = 0.0

    def install(self) -> None:
        """Start measuring (idempotent)."""
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True

    def status(self) -> dict[str, float | int]:
        """For ``/healthz``: collections so far, the longest and the latest pause."""
        return {
            "collections": self.collections,
            "max_pause_ms": round(self.max_pause_ms, 2),
            "last_pause_ms": round(self.last_pause_ms, 2),
        }

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        pause_ms = (time.perf_counter() - self._started) * 1000.0
        self.collections += 1
        self.last_pause_ms = pause_ms
        if pause_ms > self.max_pause_ms:
            self.max_pause_ms = pause_ms


gc_pauses = GcPauses()
"""The process's collector pauses (installed by ``ArenaServer.start``)."""


LAG_TICK_S = 0.01
"""How often the loop-lag probe asks to run."""

SCHEDSTAT = "/proc/thread-self/schedstat"
"""Linux: the calling thread's time on a CPU and time runnable but waiting for one (ns)."""


class CpuWait:
    """How long the thread that made it has waited for a CPU while it was runnable.

    Linux's scheduler statistics (``/proc/thread-self/schedstat``, second
    field) count the time a thread spent in the run queue: ready to run, but
    every core busy with other work. A late event loop whose thread waited
    that long was held up by the machine, not by its own callbacks.
    ``read_ms`` is None where the file does not exist (not Linux, or a
    kernel without schedstats).
    """

    def __init__(self, path: str = SCHEDSTAT) -> None:
        try:
            # /proc/thread-self resolves at open: the descriptor stays this thread's.
            self._fd: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            self._fd = None
        if self._fd is not None and self.read_ms() is None:
            self.close()

    def read_ms(self) -> float | None:
        """The thread's run-queue wait since it started, in ms (None: unknown here)."""
        if self._fd is None:
            return None
        try:
            fields = os.pread(self._fd, 128, 0).split()
            return int(fields[1]) / 1e6
        except (OSError, IndexError, ValueError):
            return None

    def close(self) -> None:
        """Release the file."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Cancellable(Protocol):
    """A scheduled call that can be called off (an ``asyncio.TimerHandle``)."""

    def cancel(self) -> None:
        """Call it off."""


class ProbeClock(Protocol):
    """What the loop-lag probe needs of an event loop: its clock and its timers."""

    def time(self) -> float:
        """The loop's clock, in seconds."""

    def call_at(self, when: float, callback: Callable[[], None], /) -> Cancellable:
        """Run ``callback`` once the clock reaches ``when``."""


class LoopLag:
    """How late the event loop runs a callback due every ``tick_s``: every move's delay floor.

    Each lag is also split: the part the loop's thread spent waiting for a CPU
    since the previous tick (``CpuWait``: the machine's other processes had
    the cores) is taken off, and what remains is the server's *own* lag, the
    time its own callbacks (or a blocking call) held the loop. Where the wait
    cannot be read, the own lag is the whole lag. The split is accurate to
    within one tick: a wait that ended before the tick was due and was
    followed by idle time is taken off too.
    """

    def __init__(self, tick_s: float = LAG_TICK_S, window: int = 6000) -> None:
        self.tick_s = tick_s
        self.max_ms = 0.0
        self.own_max_ms = 0.0
        self._recent: deque[float] = deque(maxlen=window)
        self._recent_own: deque[float] = deque(maxlen=window)
        self._due = 0.0
        self._handle: Cancellable | None = None
        self._loop: ProbeClock | None = None
        self._cpu_wait: CpuWait | None = None
        self._waited_ms: float | None = None

    def start(self, loop: ProbeClock | None = None, cpu_wait: CpuWait | None = None) -> None:
        """Start probing on ``loop`` (default: the running loop; call it from the loop's
        thread), reading the thread's CPU wait from ``cpu_wait`` (default: this thread's).

        Both are parameters so that a test can drive the probe with its own clock.
        """
        self._loop = loop if loop is not None else asyncio.get_running_loop()
        self._cpu_wait = cpu_wait if cpu_wait is not None else CpuWait()
        self._arm()

    def reset(self) -> None:
        """Forget the lags so far (start-up is not service).

        The next tick is re-armed from now: the one already due may be overdue
        because of the start-up work just before the reset (the heap's
        settling), and its lag would otherwise count as the first of service.
        """
        self.max_ms = 0.0
        self.own_max_ms = 0.0
        self._recent.clear()
        self._recent_own.clear()
        if self._handle is not None:
            self._handle.cancel()
            self._arm()

    def _arm(self) -> None:
        """Due one tick from now, its CPU wait counted from now."""
        if self._cpu_wait is not None:
            self._waited_ms = self._cpu_wait.read_ms()
        assert self._loop is not None, "start() first"
        self._due = self._loop.time() + self.tick_s
        self._handle = self._loop.call_at(self._due, self._tick)

    def stop(self) -> None:
        """Stop probing."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._cpu_wait is not None:
            self._cpu_wait.close()
            self._cpu_wait = None

    def status(self) -> dict[str, float]:
        """For ``/healthz``: the worst lag seen, and the 99th percentile and the worst of the
        last minute (so a long watch tells a single spike from a steady one); then the same
        worsts for the own lag (the lag less the time spent waiting for a CPU)."""
        recent = sorted(self._recent)
        p99 = recent[int(0.99 * (len(recent) - 1))] if recent else 0.0
        minute_max = recent[-1] if recent else 0.0
        return {
            "max": round(self.max_ms, 2),
            "p99": round(p99, 2),
            "minute_max": round(minute_max, 2),
            "own_max": round(self.own_max_ms, 2),
            "own_minute_max": round(max(self._recent_own, default=0.0), 2),
        }

    def record(self, lag_ms: float, waited_ms: float | None) -> None:
        """Count one tick ``lag_ms`` late, whose thread waited ``waited_ms`` for a CPU since
        the previous tick (None: unknown)."""
        own_ms = lag_ms if waited_ms is None else max(lag_ms - waited_ms, 0.0)
        self._recent.append(lag_ms)
        self._recent_own.append(own_ms)
        if lag_ms > self.max_ms:
            self.max_ms = lag_ms
        if own_ms > self.own_max_ms:
            self.own_max_ms = own_ms

    def _tick(self) -> None:
        loop = self._loop
        assert loop is not None, "start() first"
        now = loop.time()
        waited_ms = None
        if self._cpu_wait is not None:
            total = self._cpu_wait.read_ms()
            if total is not None and self._waited_ms is not None:
                waited_ms = total - self._waited_ms
            self._waited_ms = total
        self.record((now - self._due) * 1000.0, waited_ms)
        self._due = now + self.tick_s
        self._handle = loop.call_at(self._due, self._tick)
