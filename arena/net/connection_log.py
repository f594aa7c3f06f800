"""One log line per websocket connection, when it ends: who, from where, how long, how it closed.

The line goes to the ``arena.connections`` logger (``docs/operations.md``,
"Logs")::

    connection from 127.0.0.1 closed after 95.1 s: bot alice, close 1000 by the client

Who closed is read from websockets' Sans-I/O state (``close_sent``,
``close_rcvd``): the side whose close frame came first, or ``network`` when
the TCP connection ended without any (code 1006, as RFC 6455 names it).
"""

from __future__ import annotations

import logging
import time

from arena.net.websocket import WebSocketConnection

log = logging.getLogger("arena.connections")

NO_CLOSE_FRAME = 1006
"""RFC 6455's code for a connection that ended without a close frame (never sent)."""


def log_closed(conn: WebSocketConnection, opened_at: float) -> None:
    """Log the end of ``conn``, opened at ``opened_at`` (``time.monotonic``)."""
    protocol = conn.protocol
    sent, received = protocol.close_sent, protocol.close_rcvd
    if sent is not None and (received is None or not protocol.close_rcvd_then_sent):
        code, by, reason = sent.code, "server", sent.reason
    elif received is not None:
        code, by, reason = received.code, "client", received.reason
    else:
        code, by, reason = NO_CLOSE_FRAME, "network", "connection lost"
    who = {"bot": f"bot {conn.name}", "spectator": "spectator"}.get(conn.role or "", "no hello")
    seconds = round(time.monotonic() - opened_at, 1)
    log.info(
        "connection from %s closed after %.1f s: %s, close %d by the %s%s",
        conn.remote,
        seconds,
        who,
        code,
        by,
        f" ({reason})" if reason else "",
        extra={
            "event": "connection_closed",
            "remote": conn.remote,
            "role": conn.role,
            "bot": conn.name,
            "duration_s": seconds,
            "close_code": int(code),
            "closed_by": by,
            "close_reason": reason,
        },
    )
