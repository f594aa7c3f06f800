"""How many connections one address may hold, and when an idle one is closed.

A server has a limited number of open files (``arena.open_files``); without
a cap, one address opening a thousand idle connections takes them all and
nobody else can log in. ``Crowd`` counts the open connections of each
client address (the TCP peer, or with ``--trust-proxy`` the forwarded
address) and refuses one more beyond ``max_per_address``: a plain HTTP
request gets ``429``, a TLS connection is closed before its handshake.

Connections that hold a seat without using it are closed by the gateway's
sweep (``idle``): a spectator subscribed to nothing for ``spectator_idle_s``
seconds since its hello or its last request, and a guest neither playing nor
challenging for ``guest_idle_s`` seconds (close code 1008).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

MAX_CONNECTIONS_PER_ADDRESS = 256
"""Connections (HTTP or websocket, any role) one client address may hold open at once."""
SPECTATOR_IDLE_S = 60.0
"""A spectator subscribed to nothing is closed after this long without a request."""
GUEST_IDLE_S = 120.0
"""A guest neither playing nor waiting for an answer is closed after this long idle."""


@dataclass(frozen=True, slots=True)
class CrowdLimits:
    """The caps of ``Crowd`` and the gateway's idle sweep (``ArenaConfig`` carries them)."""

    max_per_address: int = MAX_CONNECTIONS_PER_ADDRESS
    spectator_idle_s: float = SPECTATOR_IDLE_S
    guest_idle_s: float = GUEST_IDLE_S


class Crowd:
    """Open connections per client address, capped; see the module docstring."""

    def __init__(self, max_per_address: int = MAX_CONNECTIONS_PER_ADDRESS) -> None:
        self.max_per_address = max_per_address
        self._open: Counter[str] = Counter()
        self.open_total = 0
        """Connections counted now, every address."""

    def admit(self, address: str) -> bool:
        """Count one more connection of ``address``; False (nothing counted) over its cap."""
        if self._open[address] >= self.max_per_address:
            return False
        self._open[address] += 1
        self.open_total += 1
        return True

    def release(self, address: str) -> None:
        """One connection of ``address`` ended (call once per ``admit`` that returned True)."""
        left = self._open[address] - 1
        if left > 0:
            self._open[address] = left
        else:
            del self._open[address]
        self.open_total -= 1

    def of(self, address: str) -> int:
        """Connections ``address`` holds now."""
        return self._open.get(address, 0)

    @property
    def addresses(self) -> int:
        """Distinct addresses connected now."""
        return len(self._open)


class _Connection(Protocol):
    """What ``idle`` reads of a connection (``WebSocketConnection``)."""

    @property
    def closing(self) -> bool: ...

    role: str | None
    name: str | None


C = TypeVar("C", bound=_Connection)


def idle(
    sessions: Iterable[tuple[C, float]],
    now: float,
    spectator_idle_s: float,
    guest_idle_s: float,
    *,
    subscribed: Callable[[], Collection[object]],
    busy: Callable[[str], bool],
) -> list[tuple[C, str, str]]:
    """Of ``sessions`` (each connection and when it last asked for something), those to close
    as ``(connection, refusal reason, message)``: spectators not in ``subscribed()`` and guests
    not ``busy`` (playing or challenging), idle for longer than their time."""
    found: list[tuple[C, str, str]] = []
    watching: Collection[object] | None = None
    for conn, active_at in sessions:
        if conn.closing:
            continue
        if conn.role == "spectator" and now - active_at > spectator_idle_s:
            watching = subscribed() if watching is None else watching
            if conn not in watching:
                message = f"closed: watching nothing for {spectator_idle_s:g} s"
                found.append((conn, "idle_spectator", message))
        elif conn.role == "guest" and now - active_at > guest_idle_s and not busy(conn.name or ""):
            found.append((conn, "idle_guest", f"closed: no game for {guest_idle_s:g} s"))
    return found
