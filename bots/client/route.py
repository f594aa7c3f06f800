"""Where a bot connects next: its own URLs in turn, a redirect's target, and how long to wait.

``Route`` is the bot client's (``bots.client.runtime``) memory of its connections:

- with several URLs (the nodes of one arena), each is tried at once in turn
  after a connection ends; the backoff applies once every URL has failed in a
  row (a single URL always waits);
- a ``redirect`` (another node hosts the bot's match) is followed at once. It
  is an answer from a live node, so it clears the failures and the backoff: a
  target that cannot be reached (a node that died but whose lease has not run
  out yet) costs one short wait, not a wait that grew with every redirect;
- a welcome clears them too;
- a bot that failed over from its first URL (its home node died) checks every
  ``HOME_PROBE_S`` whether the home node accepts connections again, and goes
  back after its current match (``home_is_back``): a restarted node gets its
  bots back, so the nodes keep the share their operators gave them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from urllib.parse import urlsplit

from bots.client.config import Backoff

HOME_PROBE_S = 5.0
"""How often a bot away from its first URL checks whether that node is back."""


class Route:
    """The bot's URLs, the redirect to follow, and the backoff; see the module docstring."""

    def __init__(self, urls: Sequence[str], backoff: Backoff) -> None:
        self.urls = tuple(urls)
        self.backoff = backoff
        self.redirect_to: str | None = None
        """The URL to connect to next instead of the bot's own (a redirect's target)."""
        self.away = False
        """Connected to a redirect's target, not to one of ``urls``."""
        self._index = 0
        self._failures = 0  # connections in a row that ended without a welcome

    @property
    def home(self) -> str:
        """The bot's own URL to use now."""
        return self.urls[self._index]

    def next_url(self) -> str:
        """The URL of the next connection (a pending redirect's target first)."""
        url, self.redirect_to = self.redirect_to or self.home, None
        self.away = url not in self.urls
        return url

    def redirected(self, url: str) -> None:
        """A live node sent the bot to ``url``: go there next, failures forgotten."""
        self.redirect_to = url
        self._failures = 0
        self.backoff.reset()

    @property
    def on_fallback(self) -> bool:
        """Connected to one of the bot's URLs other than the first (its home died)."""
        return not self.away and self._index != 0

    def go_home(self) -> None:
        """Connect to the first URL next."""
        self._index = 0
        self.redirect_to = self.urls[0]

    async def home_is_back(self) -> None:
        """Return once the first URL accepts a TCP connection (checked every
        ``HOME_PROBE_S``); only while ``on_fallback`` (else it waits forever)."""
        parts = urlsplit(self.urls[0])
        host = parts.hostname or "127.0.0.1"
        port = parts.port or (443 if parts.scheme == "wss" else 80)
        while True:
            await asyncio.sleep(HOME_PROBE_S)
            if not self.on_fallback:
                continue
            with contextlib.suppress(OSError, TimeoutError):
                async with asyncio.timeout(HOME_PROBE_S):
                    _reader, writer = await asyncio.open_connection(host, port)
                writer.close()
                return

    def welcomed(self) -> None:
        """A server accepted the bot."""
        self.backoff.reset()

    def fail_over(self, welcomed: bool) -> bool:
        """After a connection ends: move on to the next URL; whether to wait before it."""
        self._failures = 0 if welcomed else self._failures + 1
        if len(self.urls) == 1:
            return True
        self._index = (self._index + 1) % len(self.urls)
        return self._failures >= len(self.urls)
