"""The first-run notice: said only when warming up takes long (compiling), with the time."""

from __future__ import annotations

import io
import time

from bots.strategies.first_run import compile_notice


def test_a_slow_warm_up_is_announced_and_timed() -> None:
    out = io.StringIO()
    with compile_notice(out, after_s=0.02):
        time.sleep(0.2)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("preparing the search kernels (compiled on a machine's first run")
    assert lines[1].startswith("search kernels ready in ") and len(lines) == 2


def test_a_warm_up_from_the_cache_says_nothing() -> None:
    out = io.StringIO()
    with compile_notice(out, after_s=5.0):
        pass
    assert out.getvalue() == ""
