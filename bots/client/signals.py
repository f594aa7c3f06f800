"""Stopping a bot by signal: SIGINT/SIGTERM drain, a second one or SIGHUP forfeits.

(Search workers that die with their bot: ``bots.strategies.pool``.)"""

from __future__ import annotations

import asyncio
import contextlib
import signal
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
