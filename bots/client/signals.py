"""Stopping a bot by signal: SIGINT/SIGTERM drain, a second one or SIGHUP forfeits; and
search workers that die with their bot."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable


def install_stop_signals(
    callback: Callable[[], None], hangup: Callable[[], None] | None = None
) -> Callable[[], None]:
    """Call ``callback`` on SIGINT and SIGTERM (and ``hangup``, if given, on SIGHUP) in the
    running loop; returns an undo function.

    ``install_stop_signals(client.on_signal, client.forfeit)``: the first signal drains, the
    next forfeits; a hang-up (the launcher or the terminal is gone) forfeits at once.
    """
    loop = asyncio.get_running_loop()
    installed = []
    handlers = [(signal.SIGINT, callback), (signal.SIGTERM, callback)]
    if hangup is not None:
        handlers.append((signal.SIGHUP, hangup))
    for sig, handler in handlers:
        with contextlib.suppress(NotImplementedError, RuntimeError, AttributeError):
            # not on Windows loops (nor SIGHUP there)
            loop.add_signal_handler(sig, handler)
            installed.append(sig)

    def undo() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return undo


PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal a process gets when its parent thread exits (linux/prctl.h)."""


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent (``parent_pid``) dies (Linux).

    For a search worker: a bot killed outright cannot stop its workers, which would
    otherwise finish a warm-up or search of seconds before finding their pipe closed.
    If the parent is already gone (it died before this call), exit now.
    """
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)
