"""The one line a person sees while the search kernels compile on a machine's first run.

The Numba kernels are compiled once and cached on disk (``cache=True``); a
later start only loads them. Compiling takes seconds (measured: about 16 s
for all of them on this project's busy 2-core machine, 7 s of CPU), so a
start that is still warming up after ``NOTICE_AFTER_S`` says so on stderr,
and says how long it took once done. A start from the cache usually says
nothing; on a very busy machine loading can pass the threshold too, so the
words do not claim which of the two it was.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

NOTICE_AFTER_S = 2.0
"""A warm-up longer than this is announced (loading from the cache takes well under a second
on an idle machine, 1-2 s at a load average of 3 on two cores; compiling takes 8-16 s)."""


@contextlib.contextmanager
def compile_notice(stream: TextIO | None = None, after_s: float = NOTICE_AFTER_S) -> Iterator[None]:
    """Around a warm-up: print ``preparing the search kernels…`` if it runs long, then the time."""
    out = stream if stream is not None else sys.stderr
    started = time.perf_counter()
    shown = threading.Event()

    def notice() -> None:
        shown.set()
        print(
            "preparing the search kernels (compiled on a machine's first run, then cached)…",
            file=out,
            flush=True,
        )

    timer = threading.Timer(after_s, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if shown.is_set():
            took = time.perf_counter() - started
            print(
                f"search kernels ready in {took:.1f} s",
                file=out,
                flush=True,
            )
