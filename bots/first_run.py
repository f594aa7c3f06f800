"""The one line a person sees while the search kernels compile on a machine's first run.

The Numba kernels are compiled once and cached on disk (``cache=True``); a
later start only loads them. Compiling takes seconds (measured: about 16 s
for all of them on this project's busy 2-core machine, 7 s of CPU), so a
start that is still warming up after ``NOTICE_AFTER_S`` says so on stderr,
and says how long it took once done. A start from the cache says nothing.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

NOTICE_AFTER_S = 1.0
"""A warm-up longer than this is compiling, not loading from the cache."""


@contextlib.contextmanager
def compile_notice(stream: TextIO | None = None, after_s: float = NOTICE_AFTER_S) -> Iterator[None]:
    """Around a warm-up: print ``compiling search kernels (first run only)…`` if it runs long."""
    out = stream if stream is not None else sys.stderr
    started = time.perf_counter()
    shown = threading.Event()

    def notice() -> None:
        shown.set()
        print("compiling search kernels (first run only)…", file=out, flush=True)

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
                f"compiled search kernels in {took:.1f} s (cached for later runs)",
                file=out,
                flush=True,
            )
