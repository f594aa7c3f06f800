"""The arena server with its optional plug-in, the MQTT publisher.

``arena serve`` and ``arena demo`` run the same assembly::

    async with ArenaApp(config, mqtt_url="mqtt://127.0.0.1:1883") as app:
        app.server.port            # ws:// and http:// on one port, the viewer at /
        await app.server.wait_stopped()

With ``mqtt_url`` the spectator events go to an ``MqttPublisher`` (through
``MqttEventSink``), every game's fitted leaderboard is published (retained) at
start and again each time it is rebuilt after rated results (at most once per
``leaderboard_refresh_s``), and ``/healthz`` reports the broker link under
``mqtt``. Without it the arena behaves exactly the same, minus MQTT.
A broker that is down never stops the arena (see ``arena.mqtt``).

Errors: ``ValueError`` for a malformed broker URL, raised by the constructor
so a command can refuse it before anything starts.
"""

from __future__ import annotations

import contextlib

from arena.leaderboard import Board
from arena.live.mqtt import MqttEventSink, MqttPublisher
from arena.server import ArenaConfig, ArenaServer
from protocol.games import GAMES

MQTT_STOP_TIMEOUT_S = 5.0


class ArenaApp:
    """An ``ArenaServer`` plus, with ``mqtt_url``, MQTT; see the module docstring."""

    def __init__(self, config: ArenaConfig, *, mqtt_url: str | None = None) -> None:
        self.publisher = MqttPublisher(mqtt_url) if mqtt_url else None
        sink = None if self.publisher is None else MqttEventSink(self.publisher)
        self.server = ArenaServer(config, sink=sink)
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
        if self.publisher is not None:
            self.server.leaderboards.listen(self._publish_board)
            # Retain every board at once, so a dashboard has them before the first result.
            self.server.supervisor.spawn(
                self.server.leaderboards.refresh_all(GAMES), "leaderboards-first-build"
            )

    def _publish_board(self, board: Board) -> None:
        if self.publisher is not None:
            self.publisher.leaderboard(board.game, self.server.api.board_json(board))

    async def stop(self, reason: str = "server shutting down") -> None:
        """Shut the server down (live matches aborted, unrated), then flush MQTT. Idempotent."""
        if self._stopped:
            await self.server.wait_stopped()
            return
        self._stopped = True
        try:
            await self.server.shutdown(reason)
        finally:
            if self.publisher is not None:
                with contextlib.suppress(Exception):
                    await self.publisher.stop(MQTT_STOP_TIMEOUT_S)

    async def __aenter__(self) -> ArenaApp:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
