"""Publishing live arena events to an MQTT broker, without ever slowing a match.

The server calls plain (non-async) methods — ``match_started``, ``move``,
``match_ended``, ``leaderboard``, ``rating`` — which serialize the payload to compact JSON
and append it to a bounded outbox. They never wait and never raise because of
the broker. A background task drains the outbox with aiomqtt. When the outbox
is full the *oldest* message is dropped and counted: a live viewer wants the
newest moves, and the retained topics are repaired anyway (see below).

Retained topics (each live match's state, each game's leaderboard, the server
status) are remembered, latest payload per topic, and sent again after every
(re)connect, so a broker that restarted empty is repopulated. Reconnection
backs off exponentially. ``status()`` describes the link for ``/healthz``.

``MqttEventSink`` adapts a publisher to the spectator hub's ``EventSink``.

Errors: the constructor raises ``ValueError`` for a bad broker URL (see
``arena.mqtt_topics.parse_broker_url``). Broker trouble (``aiomqtt.MqttError``)
never leaves this module: it is logged and reported by ``status()``. Topics and
payloads are documented in ``docs/mqtt.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import aiomqtt

from arena.live import mqtt_topics as topics
from arena.outages import Outage
from protocol.messages import Event, Snapshot

log = logging.getLogger(__name__)

ONLINE = b"online"
OFFLINE = b"offline"


@dataclass(frozen=True, slots=True, eq=False)
class _Outgoing:
    """One message waiting for the broker (compared by identity, see ``_Outbox.sent``)."""

    topic: str
    payload: bytes
    qos: int
    retain: bool


class _Outbox:
    """Bounded FIFO of messages to send, dropping the oldest, plus the retained topics.

    ``_retained`` holds the latest message of every retained topic, including an
    empty one (a "clear") until the broker has it. ``_dirty`` lists retained topics
    whose latest message must be (re)sent before the FIFO continues.
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"queue_size must be at least 1, got {maxsize}")
        self._maxsize = maxsize
        self._items: deque[_Outgoing] = deque()
        self._retained: dict[str, _Outgoing] = {}
        self._dirty: dict[str, None] = {}  # an ordered set
        # Messages queued before the last reconnect, still in ``_items``: their retained
        # ones may be stale by now (see ``next``).
        self._backlog = 0
        self.dropped = 0
        self.ready = asyncio.Event()
        """Set while there is something to send."""
        self.idle = asyncio.Event()
        """Set once everything has been sent (cleared by ``put`` and ``resend_retained``)."""
        self.idle.set()

    def __len__(self) -> int:
        return len(self._items) + len(self._dirty)

    def put(self, item: _Outgoing) -> None:
        """Queue ``item``; when full, drop the oldest message first."""
        if item.retain:
            self._retained[item.topic] = item
        if len(self._items) >= self._maxsize:
            oldest = self._items.popleft()
            self._backlog = max(0, self._backlog - 1)
            self.dropped += 1
            if oldest.retain:
                # The broker must still end up with this topic's latest value.
                self._dirty[oldest.topic] = None
        self._items.append(item)
        self.ready.set()
        self.idle.clear()

    def remember(self, item: _Outgoing) -> None:
        """Record a retained message to send on every connect, without queueing it now."""
        self._retained[item.topic] = item

    def resend_retained(self) -> None:
        """After a (re)connect: every retained topic goes out again, before the backlog."""
        self._dirty = dict.fromkeys(self._retained)
        self._backlog = len(self._items)
        if self._dirty:
            self.ready.set()
            self.idle.clear()

    def next(self) -> _Outgoing | None:
        """The next message to send, or None (and ``ready`` cleared) when there is none."""
        while self._dirty:
            topic = next(iter(self._dirty))
            del self._dirty[topic]
            item = self._retained.get(topic)
            if item is not None:
                return item
        while self._items:
            item = self._items.popleft()
            stale = self._backlog > 0
            self._backlog = max(0, self._backlog - 1)
            if stale and item.retain and self._retained.get(item.topic) is not item:
                # Queued before the reconnect, which already sent this topic's newer value
                # (or its clear): sending it now would wind the broker back in time.
                continue
            return item
        # Sends are sequential, so asking for the next one means the last one is done.
        self.ready.clear()
        self.idle.set()
        return None

    def requeue(self, item: _Outgoing) -> None:
        """Give back a message whose send failed, to go first after the reconnect."""
        if item.retain:
            return  # ``resend_retained`` sends the topic's latest value anyway
        if len(self._items) < self._maxsize:
            self._items.appendleft(item)
        else:
            self.dropped += 1

    def sent(self, item: _Outgoing) -> None:
        """The broker has ``item``: a delivered clear need not be remembered any longer."""
        if item.retain and not item.payload and self._retained.get(item.topic) is item:
            del self._retained[item.topic]


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


class MqttPublisher:
    """Publishes arena events to one MQTT broker; see the module docstring.

    Call the non-async methods from the event loop's thread only. ``start()``
    returns at once, connected or not: the arena must run without a broker.
    """

    def __init__(
        self,
        url: str,
        *,
        queue_size: int = 10_000,
        client_id: str | None = None,
        reconnect_min_s: float = 0.5,
        reconnect_max_s: float = 30.0,
        keepalive_s: int = 15,
        timeout_s: float = 5.0,
        status_topic: str = topics.STATUS_TOPIC,
    ) -> None:
        self._address = topics.parse_broker_url(url)
        self._status_topic = status_topic
        self._client_id = client_id
        self._outbox = _Outbox(queue_size)
        self._reconnect_min_s = reconnect_min_s
        self._reconnect_max_s = reconnect_max_s
        self._keepalive_s = keepalive_s
        self._timeout_s = timeout_s
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._connected = asyncio.Event()
        self._connections = 0
        self._published = 0
        self._rejected = 0
        self._last_error: str | None = None
        self._warned_drops = False
        # A warning, not an error: the arena plays on without its broker.
        self._outage = Outage(
            log, f"the MQTT publisher to {self._address.url}", level=logging.WARNING
        )
        # First in the retained table, so it is the first thing sent on every connect.
        self._outbox.remember(_Outgoing(status_topic, ONLINE, 1, True))

    # What the server calls (never blocks, never raises) ------------------------------

    def match_started(self, game: str, match_id: str, state: Mapping[str, Any]) -> None:
        """A match began: retain its opening ``state`` on ``.../matches/<id>/state``."""
        with self._guard("match_started"):
            self._put(topics.match_state(game, match_id), _json(state), 0, True)

    def move(
        self,
        game: str,
        match_id: str,
        event: Mapping[str, Any],
        state: Mapping[str, Any] | None = None,
    ) -> None:
        """Publish a numbered spectator ``event`` (QoS 0) and retain the new ``state`` if given."""
        with self._guard("move"):
            # Everything that can fail comes first, so a bad call queues nothing at all.
            events_topic = topics.match_events(game, match_id)
            state_topic = topics.match_state(game, match_id)
            payload = _json(event)
            state_payload = None if state is None else _json(state)
            self._put(events_topic, payload, 0, False)
            if state_payload is not None:
                self._put(state_topic, state_payload, 0, True)

    def match_ended(self, game: str, match_id: str, result: Mapping[str, Any]) -> None:
        """Publish ``result`` (QoS 1) on the match and game result topics; clear the state."""
        with self._guard("match_ended"):
            payload = _json(result)
            match_topic = topics.match_result(game, match_id)
            game_topic = topics.results(game)
            state_topic = topics.match_state(game, match_id)
            self._put(match_topic, payload, 1, False)
            self._put(game_topic, payload, 1, False)
            self._put(state_topic, b"", 1, True)

    def leaderboard(
        self,
        game: str,
        entries: Sequence[Mapping[str, Any]],
        groups: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Retain a game's leaderboard (``/api/leaderboard``'s body: rows group by group,
        each best first, and the ``groups``) on ``arena/v1/<game>/leaderboard``."""
        with self._guard("leaderboard"):
            payload = _json({"game": game, "entries": list(entries), "groups": list(groups)})
            self._put(topics.leaderboard(game), payload, 1, True)

    def rating(self, game: str, report: Mapping[str, Any]) -> None:
        """Publish a rated match's ``rating`` report (QoS 1) on ``arena/v1/<game>/ratings``."""
        with self._guard("rating"):
            self._put(topics.ratings(game), _json(report), 1, False)

    def tournament_state(self, tournament_id: int, status: Mapping[str, Any]) -> None:
        """Retain a tournament's status object on ``arena/v1/tournament/<id>/state``."""
        with self._guard("tournament_state"):
            self._put(topics.tournament_state(tournament_id), _json(status), 1, True)

    def tournament_event(self, tournament_id: int, event: Mapping[str, Any]) -> None:
        """Publish one tournament event (QoS 1) on ``arena/v1/tournament/<id>/events``."""
        with self._guard("tournament_event"):
            self._put(topics.tournament_events(tournament_id), _json(event), 1, False)

    def status(self) -> dict[str, Any]:
        """The link's health for ``/healthz``: connection, counters, last error."""
        return {
            "connected": self._connected.is_set(),
            "broker": self._address.url,
            "queued": len(self._outbox),
            "dropped": self._outbox.dropped,
            "published": self._published,
            "rejected": self._rejected,
            "last_error": self._last_error,
            "reconnects": max(0, self._connections - 1),
        }

    @contextlib.contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        # A bad game name or an unserializable payload is a bug, but telemetry must
        # not turn it into a crashed match: log it, count it, carry on.
        try:
            yield
        except (ValueError, TypeError):
            self._rejected += 1
            log.exception("MQTT: %s not published", what)

    def _put(self, topic: str, payload: bytes, qos: int, retain: bool) -> None:
        before = self._outbox.dropped
        self._outbox.put(_Outgoing(topic, payload, qos, retain))
        if self._outbox.dropped != before and not self._warned_drops:
            self._warned_drops = True
            log.warning("MQTT outbox full: dropping the oldest messages (broker too slow or down)")

    # Lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the background task that connects and drains the outbox."""
        if self._task is not None or self._stopping.is_set():
            raise RuntimeError("an MqttPublisher starts once")
        self._task = asyncio.create_task(self._run(), name=f"mqtt {self._address.url}")

    async def stop(self, timeout: float = 5.0) -> None:
        """Flush what is queued, publish ``offline`` and disconnect cleanly, within ``timeout``."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping.set()
        self._outbox.ready.set()
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        self._connected.clear()
        if len(self._outbox):
            log.info("MQTT stopped with %d messages unsent", len(self._outbox))

    async def wait_connected(self, timeout: float) -> bool:
        """Wait until connected to the broker; False if ``timeout`` seconds pass first."""
        try:
            async with asyncio.timeout(timeout):
                await self._connected.wait()
        except TimeoutError:
            return False
        return True

    async def flush(self, timeout: float) -> bool:
        """Wait until everything queued so far reached the broker; False after ``timeout`` s."""
        try:
            async with asyncio.timeout(timeout):
                await self._outbox.idle.wait()
        except TimeoutError:
            return False
        return True

    async def __aenter__(self) -> MqttPublisher:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # The background task ---------------------------------------------------------------

    async def _run(self) -> None:
        delay = self._reconnect_min_s
        while not self._stopping.is_set():
            try:
                async with self._new_client() as client:
                    self._on_connected()
                    delay = self._reconnect_min_s
                    await self._session(client)
                    # Clean shutdown: the will is not sent on DISCONNECT, so say it ourselves.
                    await client.publish(self._status_topic, OFFLINE, qos=1, retain=True)
                    self._published += 1
                return
            except Exception as exc:  # whatever it was, the arena plays on
                self._on_failure(exc)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._stopping.wait()
            delay = min(delay * 2, self._reconnect_max_s)

    def _new_client(self) -> aiomqtt.Client:
        return aiomqtt.Client(
            self._address.host,
            self._address.port,
            identifier=self._client_id,
            will=aiomqtt.Will(self._status_topic, OFFLINE, qos=1, retain=True),
            keepalive=self._keepalive_s,
            timeout=self._timeout_s,
            clean_session=True,
        )

    def _on_connected(self) -> None:
        self._connections += 1
        self._connected.set()
        self._warned_drops = False
        self._outbox.resend_retained()
        if self._outage.succeeded():
            if self._outbox.dropped:
                log.warning("MQTT: %d messages were dropped so far", self._outbox.dropped)
        elif self._connections == 1:
            log.info("MQTT connected to %s", self._address.url)

    def _on_failure(self, exc: Exception) -> None:
        self._connected.clear()
        self._last_error = f"{type(exc).__name__}: {exc}"
        self._outage.failed(exc)

    async def _session(self, client: aiomqtt.Client) -> None:
        """Drain the outbox until stopping (then return) or the connection fails (raise)."""
        # A publish awaiting its PUBACK is not woken by a dead connection (it would sit out
        # its timeout), so the disconnection watcher runs beside the drain and cancels it.
        lost = asyncio.create_task(self._until_lost(client))
        drain = asyncio.create_task(self._drain(client))
        try:
            await asyncio.wait({lost, drain}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            drain.cancel()
            await asyncio.gather(lost, drain, return_exceptions=True)
        if drain.cancelled():
            lost.result()  # raises the disconnection's MqttError
            raise aiomqtt.MqttError("disconnected")
        drain.result()  # None once flushed for stop(); else raises the failed send's error

    async def _drain(self, client: aiomqtt.Client) -> None:
        while True:
            item = self._outbox.next()
            if item is None:
                if self._stopping.is_set():
                    return
                await self._outbox.ready.wait()
                continue
            try:
                await client.publish(item.topic, item.payload, qos=item.qos, retain=item.retain)
            except (aiomqtt.MqttError, asyncio.CancelledError):
                self._outbox.requeue(item)
                raise
            self._outbox.sent(item)
            self._published += 1

    @staticmethod
    async def _until_lost(client: aiomqtt.Client) -> None:
        # Nothing is subscribed, so the iterator only ever ends by raising on disconnect:
        # the one public way aiomqtt tells an idle client its connection died.
        async for _message in client.messages:
            pass
        raise aiomqtt.MqttError("disconnected")


class MqttEventSink:
    """The spectator hub's ``EventSink`` that feeds an ``MqttPublisher``.

    It keeps each live match's snapshot up to date from the ``moved`` events, so
    every event is published together with the match's new retained state.
    """

    def __init__(self, publisher: MqttPublisher) -> None:
        self._publisher = publisher
        self._live: dict[str, Snapshot] = {}

    def publish(self, message: Snapshot | Event) -> None:
        """Publish a match's opening snapshot or one of its numbered events."""
        if isinstance(message, Snapshot):
            self._live[message.match_id] = message
            self._publisher.match_started(message.game, message.match_id, message.to_dict())
            return
        snapshot = self._live.get(message.match_id)
        if snapshot is None:
            log.debug("MQTT: event for unknown match %s not published", message.match_id)
            return
        if message.moved is not None:
            moved = message.moved
            snapshot = replace(
                snapshot,
                moves=(*snapshot.moves, moved.move),
                position=moved.position,
                clocks=moved.clocks,
                last_event=message.seq,
                analysis=message.analysis,
            )
            self._live[message.match_id] = snapshot
            self._publisher.move(
                snapshot.game, message.match_id, message.to_dict(), snapshot.to_dict()
            )
        elif message.end is not None:
            del self._live[message.match_id]
            self._publisher.move(snapshot.game, message.match_id, message.to_dict())
            result = {**message.end.to_dict(), "game": snapshot.game, "players": snapshot.players}
            self._publisher.match_ended(snapshot.game, message.match_id, result)
