"""The arena server with its optional plug-in, the MQTT publisher.

``arena serve`` and ``arena demo`` run the same assembly::

    async with ArenaApp(config, mqtt_url="mqtt://127.0.0.1:1883") as app:
        app.server.port            # ws:// and http:// on one port, the viewer at /
        await app.server.wait_stopped()

With ``mqtt_url`` the spectator events go to an ``MqttPublisher`` (through
``MqttEventSink``), each game's leaderboard is republished (retained) after
every rated match that changes it, and ``/healthz`` reports the broker link
under ``mqtt``. Without it the arena behaves exactly the same, minus MQTT.
A broker that is down never stops the arena (see ``arena.mqtt``).

Errors: ``ValueError`` for a malformed broker URL, raised by the constructor
so a command can refuse it before anything starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from arena.live.mqtt import MqttEventSink, MqttPublisher
from arena.live.spectators import EventSink
from arena.server import ArenaConfig, ArenaServer
from protocol.games import GAMES
from protocol.messages import Event, Snapshot

log = logging.getLogger(__name__)

MQTT_STOP_TIMEOUT_S = 5.0


class LeaderboardSink:
    """An ``EventSink`` that forwards everything and, after each rated end, publishes a board.

    The match runner emits ``match_end`` only after the result and both rating
    changes are committed, so reading the leaderboard then sees the new ratings.
    Reads run as tasks (the sink must not block); a burst of endings in one game
    coalesces into one or two reads.
    """

    def __init__(self, inner: EventSink, publisher: MqttPublisher) -> None:
        self._inner = inner
        self._publisher = publisher
        self._games: dict[str, str] = {}  # live match id -> game
        self._dirty: set[str] = set()
        self._running: dict[str, asyncio.Task[None]] = {}
        self._server: ArenaServer | None = None

    def attach(self, server: ArenaServer) -> None:
        """Read leaderboards from ``server`` (which is created after its sink)."""
        self._server = server

    def publish(self, message: Snapshot | Event) -> None:
        """Forward ``message``; schedule a leaderboard update when a rated match ended."""
        self._inner.publish(message)
        if isinstance(message, Snapshot):
            self._games[message.match_id] = message.game
            return
        if message.end is None:
            return
        game = self._games.pop(message.match_id, None)
        if game is not None and message.end.rated and message.end.rating_changes:
            self.refresh(game)

    def refresh(self, game: str) -> None:
        """Publish ``game``'s leaderboard soon (once more if a read is already under way)."""
        self._dirty.add(game)
        if game not in self._running:
            task = asyncio.get_running_loop().create_task(self._publish(game))
            self._running[game] = task

    async def _publish(self, game: str) -> None:
        try:
            while game in self._dirty and self._server is not None:
                self._dirty.discard(game)
                entries = await self._server.api.leaderboard_json(game)
                self._publisher.leaderboard(game, entries)
        except Exception:  # the store may be closing; the next match republishes
            log.debug("leaderboard of %s not published", game, exc_info=True)
        finally:
            self._running.pop(game, None)

    async def close(self) -> None:
        """Cancel the reads still under way."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class ArenaApp:
    """An ``ArenaServer`` plus, with ``mqtt_url``, MQTT; see the module docstring."""

    def __init__(self, config: ArenaConfig, *, mqtt_url: str | None = None) -> None:
        self.publisher = MqttPublisher(mqtt_url) if mqtt_url else None
        self._boards: LeaderboardSink | None = None
        sink: EventSink | None = None
        if self.publisher is not None:
            self._boards = LeaderboardSink(MqttEventSink(self.publisher), self.publisher)
            sink = self._boards
        self.server = ArenaServer(config, sink=sink)
        if self._boards is not None:
            self._boards.attach(self.server)
        if self.publisher is not None:
            self.server.health_extras["mqtt"] = self.publisher.status
        self._stopped = False

    async def start(self) -> None:
        """Connect to the broker (in the background) and start serving."""
        if self.publisher is not None:
            await self.publisher.start()
        try:
            await self.server.start()
        except BaseException:
            if self.publisher is not None:
                await self.publisher.stop(MQTT_STOP_TIMEOUT_S)
            raise
        if self.publisher is not None and self.server.tournaments is not None:
            self.server.tournaments.scheduler.subscribe(self.publisher)
        if self._boards is not None:
            # Retain every board at once, so a dashboard has them before the first result.
            for game in GAMES:
                self._boards.refresh(game)

    async def stop(self, reason: str = "server shutting down") -> None:
        """Shut the server down (live matches aborted, unrated), then flush MQTT. Idempotent."""
        if self._stopped:
            await self.server.wait_stopped()
            return
        self._stopped = True
        try:
            await self.server.shutdown(reason)
        finally:
            if self._boards is not None:
                await self._boards.close()
            if self.publisher is not None:
                with contextlib.suppress(Exception):
                    await self.publisher.stop(MQTT_STOP_TIMEOUT_S)

    async def __aenter__(self) -> ArenaApp:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
