"""The arena server with its optional plug-in, the MQTT publisher.

``arena serve`` and ``arena demo`` run the same assembly::

    async with ArenaApp(config, mqtt_url="mqtt://127.0.0.1:1883") as app:
        app.server.port            # ws:// and http:// on one port, the viewer at /
        await app.server.wait_stopped()

With ``mqtt_url`` the spectator events go to an ``MqttPublisher`` (through
``MqttEventSink``), every game's fitted leaderboard is published (retained) at
start and again each time it is rebuilt after rated results (at most once per
``leaderboard_refresh_s``), each rated match's ``rating`` report goes to
``arena/v1/<game>/ratings``, and ``/healthz`` reports the broker link under
``mqtt``. Without it the arena behaves exactly the same, minus MQTT.
A broker that is down never stops the arena (see ``arena.mqtt``).

When the server is one node of several (``allow_multi_node`` on PostgreSQL)
the broker is shared: the node's status goes to its own topic
(``arena/v1/server/nodes/<node>/status``), and a ``BrokerFeed`` brings the
other nodes' matches to this node's spectators and their results to its
leaderboards (``arena.cluster.broker_feed``).

Errors: ``ValueError`` for a malformed broker URL, raised by the constructor
so a command can refuse it before anything starts.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from sqlalchemy.engine import make_url

from arena.cluster.broker_feed import BrokerFeed
from arena.leaderboard import Board
from arena.live import mqtt_topics
from arena.live.mqtt import MqttEventSink, MqttPublisher
from arena.server import ArenaConfig, ArenaServer
from arena.store import nodes

MQTT_STOP_TIMEOUT_S = 5.0


class ArenaApp:
    """An ``ArenaServer`` plus, with ``mqtt_url``, MQTT; see the module docstring."""

    def __init__(self, config: ArenaConfig, *, mqtt_url: str | None = None) -> None:
        status_topic = mqtt_topics.STATUS_TOPIC
        self._multi_node = (
            config.allow_multi_node and make_url(config.db_url).get_backend_name() != "sqlite"
        )
        if self._multi_node:
            # Named now, so that the status topic can carry the node's id.
            node_id = config.node_id or nodes.default_node_id(nodes.identity())
            config = replace(config, node_id=node_id)
            status_topic = mqtt_topics.node_status(node_id)
        self.publisher = MqttPublisher(mqtt_url, status_topic=status_topic) if mqtt_url else None
        self.feed: BrokerFeed | None = None
        """The other nodes' matches and results, when several nodes share the broker."""
        if mqtt_url is not None and self._multi_node:
            self.feed = BrokerFeed(
                mqtt_url, publisher=self.publisher, buffer_size=config.spectator_buffer
            )
        publisher = self.publisher
        self.server = ArenaServer(
            config,
            sink=None if publisher is None else MqttEventSink(publisher),
            remote=self.feed,
            orphans_ended=None if self.feed is None else self.feed.orphans_ended,
            health_extras=None if publisher is None else {"mqtt": publisher.status},
        )
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
        if self.feed is not None:
            await self.feed.start(
                is_local=self.server.hub.follows,
                result_committed=self.server.leaderboards.result_committed,
                store=self.server.store,
            )
        if self.publisher is not None and self.server.tournaments is not None:
            self.server.tournaments.scheduler.subscribe(self.publisher)
        if self.publisher is not None:
            self.server.leaderboards.listen(self._publish_board)
            publisher = self.publisher
            self.server.rating_notices.listen(
                lambda report: publisher.rating(report.game, report.to_dict())
            )

    def _publish_board(self, board: Board) -> None:
        if self.publisher is not None:
            self.publisher.leaderboard(
                board.game, self.server.api.board_json(board), board.groups()
            )

    async def stop(self, reason: str = "server shutting down") -> None:
        """Shut the server down (live matches aborted, unrated), then flush MQTT. Idempotent."""
        if self._stopped:
            await self.server.wait_stopped()
            return
        self._stopped = True
        try:
            await self.server.shutdown(reason)
        finally:
            if self.feed is not None:
                await self.feed.stop()
            if self.publisher is not None:
                with contextlib.suppress(Exception):
                    await self.publisher.stop(MQTT_STOP_TIMEOUT_S)

    async def __aenter__(self) -> ArenaApp:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
