"""Where bots reach a node: the default public URL of a node.

The placements themselves (each node's URL, which node hosts a bot's live
match) are kept in the shared database: ``arena.store.placement``, reached
through ``Store.directory``.
"""

from __future__ import annotations

import socket


def default_public_url(host: str, port: int, tls: bool) -> str:
    """``ws(s)://HOST:PORT`` for a node listening on ``host``; a wildcard address becomes the
    machine's name."""
    if host in ("", "0.0.0.0", "::"):
        host = socket.gethostname()
    if ":" in host:
        host = f"[{host}]"
    return f"{'wss' if tls else 'ws'}://{host}:{port}"
