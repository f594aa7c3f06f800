"""Connections and requests refused at the door, counted, and logged once a minute.

A refusal (a connection over its address's cap, a request head too large,
a websocket upgrade on the wrong path, plain HTTP on the TLS port, an idle
spectator or guest closed) is answered at once with a clear status or close
code, and counted here by reason, never logged one line each: one address
can cause thousands a second. ``log_summary`` (every ``SUMMARY_EVERY_S``,
from the server) writes one WARNING line with the minute's counts by reason
and the address refused most, and nothing when there were none. ``totals``
is every count since start (``/healthz``, ``/metrics``).
"""

from __future__ import annotations

import logging
from collections import Counter

log = logging.getLogger("arena.refusals")

SUMMARY_EVERY_S = 60.0
"""How often refusals are logged (a summary line; nothing when there were none)."""

REASONS = (
    "address_cap",
    "head_too_large",
    "body_too_large",
    "websocket_path",
    "plain_http_on_tls",
    "tls_handshake",
    "idle_spectator",
    "idle_guest",
    "guest_cap",
)
"""Every reason counted (``/metrics`` shows each, zeros included)."""

_MAX_ADDRESSES = 10_000
"""Distinct addresses remembered within one minute, at most (the summary names the top one)."""


class Refusals:
    """Counts of refusals by reason, since start and in the current minute."""

    def __init__(self) -> None:
        self.totals: Counter[str] = Counter({reason: 0 for reason in REASONS})
        """Every refusal since start, by reason."""
        self._minute: Counter[str] = Counter()
        self._addresses: Counter[str] = Counter()

    def count(self, reason: str, address: str) -> None:
        """One refusal of ``reason`` (one of ``REASONS``) for ``address``."""
        self.totals[reason] += 1
        self._minute[reason] += 1
        if address in self._addresses or len(self._addresses) < _MAX_ADDRESSES:
            self._addresses[address] += 1

    @property
    def total(self) -> int:
        """Every refusal since start."""
        return sum(self.totals.values())

    def log_summary(self) -> None:
        """Log the refusals since the last summary in one line (none: nothing)."""
        if not self._minute:
            return
        minute, self._minute = self._minute, Counter()
        addresses, self._addresses = self._addresses, Counter()
        counts = ", ".join(f"{reason} {n}" for reason, n in sorted(minute.items()))
        top, top_count = addresses.most_common(1)[0] if addresses else ("-", 0)
        log.warning(
            "refused %d in the last %.0f s: %s; most from %s (%d)",
            sum(minute.values()),
            SUMMARY_EVERY_S,
            counts,
            top,
            top_count,
            extra={
                "event": "refusals",
                "refusals": dict(minute),
                "top_address": top,
                "top_count": top_count,
            },
        )
