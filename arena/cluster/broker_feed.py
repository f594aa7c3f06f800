"""Spectating the other nodes' matches, from the MQTT broker every node publishes to.

``BrokerFeed`` subscribes to every match's ``events`` topic (``docs/mqtt.md``)
and keeps, for each match hosted by another node, the last ``buffer_size``
events as they were published — numbered by the hosting node, so a spectator
resumes with ``watch(since=n)`` on any node. The spectator hub hands it the
``watch`` of a match it does not host (``SpectatorHub.remote``):

- events after ``since`` that are all still buffered are sent at once;
- otherwise (no ``since``, too old, a match this node has not heard of) the
  match's retained ``state`` topic is read for a snapshot, then the buffered
  events after it follow; a match that has no state within
  ``STATE_WAIT_S`` gets ``error`` ``no_such_match``;
- a ``watch`` of all live matches covers the other nodes' too.

Results of other nodes (``arena/v1/<game>/results``) tell this node's
leaderboards that a board changed. When this node's sweep ends a dead node's
matches (``orphans_ended``), it publishes each one's final ``match_end``
event (numbered after the last one heard) and result, so spectators
everywhere see it end. Payloads are the protocol's JSON, parsed only when
someone watches. Broker trouble never leaves this module: it reconnects with
backoff, like the publisher.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import aiomqtt

from arena.live import mqtt_topics as topics
from arena.live.mqtt import MqttPublisher
from arena.live.spectators import DEFAULT_BUFFER_SIZE, RECENT_FINISHED, Watcher
from arena.outages import Outage
from arena.store import Store
from protocol.errors import ProtocolError
from protocol.messages import Error, ErrorCode, Event, MatchEnd, Snapshot, parse_server_message

log = logging.getLogger(__name__)

STATE_WAIT_S = 2.0
"""How long a watch waits for a match's retained state before ``no_such_match``."""

IDLE_S = 600.0
"""An unwatched remote match not heard of for this long is forgotten (its end was lost)."""

EVENTS = f"{topics.PREFIX}/+/matches/+/events"
RESULTS = f"{topics.PREFIX}/+/results"
ORPHAN_REASON = "the server running the match stopped"


@dataclass(eq=False)
class _Feed:
    """One remote match as heard from the broker."""

    match_id: str
    game: str
    buffer_size: int
    events: deque[tuple[int, bytes]] = field(init=False)
    watchers: set[Watcher] = field(default_factory=set)
    waiting: set[Watcher] = field(default_factory=set)
    """Watchers to be sent a snapshot first (its state was asked for)."""
    over: bool = False
    heard_at: float = 0.0

    def __post_init__(self) -> None:
        self.events = deque(maxlen=self.buffer_size)

    @property
    def seq(self) -> int:
        """The number of the last event heard (0 before any)."""
        return self.events[-1][0] if self.events else 0

    def after(self, since: int) -> list[bytes] | None:
        """The events numbered above ``since``, or None unless all of them are buffered."""
        if not self.events or since > self.seq or since < self.events[0][0] - 1:
            return None
        return [payload for seq, payload in self.events if seq > since]


def _seq(payload: bytes) -> int:
    """An event's ``seq``, read without parsing the whole payload (ours: compact JSON)."""
    at = payload.find(b'"seq":')
    end = payload.find(b",", at)
    return int(payload[at + 6 : end]) if at >= 0 and end > at else 0


def _send(watcher: Watcher, payload: bytes) -> None:
    message = parse_server_message(payload)
    if isinstance(message, Event | Snapshot):
        watcher.send(message)


class BrokerFeed:
    """The other nodes' matches for this node's spectators; see the module docstring."""

    def __init__(
        self,
        url: str,
        *,
        publisher: MqttPublisher | None = None,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
        client_id: str | None = None,
    ) -> None:
        self._address = topics.parse_broker_url(url)
        # Given at ``start``: the spectator hub and the leaderboards are built with this feed.
        self._is_local: Callable[[str], bool] = lambda _match_id: False
        self._result_committed: Callable[[str], None] = lambda _game: None
        self._publisher = publisher
        self._store: Store | None = None
        self._buffer_size = buffer_size
        self._client_id = client_id
        self._live: dict[str, _Feed] = {}
        self._recent: OrderedDict[str, _Feed] = OrderedDict()
        self._all: set[Watcher] = set()
        self._asks: asyncio.Queue[tuple[bool, str]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()
        self.heard = 0
        # A warning, not an error: the arena plays on without its broker.
        self._outage = Outage(
            log, f"the broker feed from {self._address.url}", level=logging.WARNING
        )

    async def start(
        self,
        *,
        is_local: Callable[[str], bool],
        result_committed: Callable[[str], None],
        store: Store | None = None,
    ) -> None:
        """Connect and listen in the background (the arena runs without a broker too).

        ``is_local`` tells a match this node hosts (its events are not remote);
        ``result_committed`` hears of another node's rated result; with ``store``
        (and a publisher) the matches ``orphans_ended`` reports get their ends published.
        """
        self._is_local = is_local
        self._result_committed = result_committed
        self._store = store
        self._task = asyncio.get_running_loop().create_task(self._run(), name="broker-feed")

    async def stop(self) -> None:
        """Stop listening."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # The spectator hub's hook -------------------------------------------------------

    def watch(self, watcher: Watcher, match_id: str | None, since: int | None) -> None:
        """Send ``watcher`` a remote match (or, with no id, every remote live match)."""
        if match_id is None:
            self._all.add(watcher)
            for feed in list(self._live.values()):
                self._want_snapshot(feed, watcher)
            return
        known = self._live.get(match_id) or self._recent.get(match_id)
        # Not heard of yet: the retained state says whether it is live.
        feed = known or self._live.setdefault(match_id, _Feed(match_id, "+", self._buffer_size))
        replay = None if since is None else feed.after(since)
        if replay is None:
            self._want_snapshot(feed, watcher)
            return
        for payload in replay:
            _send(watcher, payload)
        if not feed.over:
            feed.watchers.add(watcher)

    def unwatch(self, watcher: Watcher, match_id: str | None) -> None:
        """Stop sending ``watcher`` one remote match, or all of them."""
        feeds = [self._live.get(match_id)] if match_id is not None else list(self._live.values())
        if match_id is None:
            self._all.discard(watcher)
        for feed in feeds:
            if feed is not None:
                feed.watchers.discard(watcher)
                feed.waiting.discard(watcher)

    def _want_snapshot(self, feed: _Feed, watcher: Watcher) -> None:
        if not feed.waiting:
            self._asks.put_nowait((True, feed.match_id))
            asyncio.get_running_loop().call_later(STATE_WAIT_S, self._no_state, feed)
        feed.waiting.add(watcher)

    def _no_state(self, feed: _Feed) -> None:
        waiting, feed.waiting = feed.waiting, set()
        if not waiting:
            return
        self._asks.put_nowait((False, feed.match_id))
        if not feed.events and self._live.get(feed.match_id) is feed:
            del self._live[feed.match_id]  # never heard of: no such match
        for watcher in waiting:
            if feed.events:  # a match without a state left: what is buffered
                for _, payload in feed.events:
                    _send(watcher, payload)
            else:
                message = f"no live or recent match {feed.match_id}"
                watcher.send(Error(code=ErrorCode.NO_SUCH_MATCH, message=message))

    # Messages from the broker -------------------------------------------------------

    def _heard(self, topic: str, payload: bytes) -> None:
        parts = topic.split("/")
        if len(parts) == 4 and parts[3] == "results":
            self._result(parts[2], payload)
            return
        if len(parts) != 6 or parts[3] != "matches" or self._is_local(parts[4]):
            return
        game, match_id, kind = parts[2], parts[4], parts[5]
        if kind == "state":
            self._state(match_id, payload)
        elif kind == "events":
            self._event(game, match_id, payload)

    def _event(self, game: str, match_id: str, payload: bytes) -> None:
        self.heard += 1
        now = asyncio.get_running_loop().time()
        if self.heard % 4096 == 0:
            self._forget_idle(now)
        feed = self._live.get(match_id)
        if feed is None:
            if match_id in self._recent:
                return  # a late copy of a finished match's event
            feed = self._live[match_id] = _Feed(match_id, game, self._buffer_size)
            for watcher in self._all:
                self._want_snapshot(feed, watcher)
        feed.game, feed.heard_at = game, now
        seq = _seq(payload)
        if seq <= feed.seq:
            return  # resent after a reconnect
        feed.events.append((seq, payload))
        for watcher in list(feed.watchers):
            _send(watcher, payload)
        if b'"kind":"match_end"' in payload:
            self._finish(feed)

    def _forget_idle(self, now: float) -> None:
        """Drop unwatched feeds whose end never came (events are QoS 0: one may be lost)."""
        for match_id, feed in list(self._live.items()):
            if feed.events and not (feed.watchers or feed.waiting) and now - feed.heard_at > IDLE_S:
                del self._live[match_id]

    def _state(self, match_id: str, payload: bytes) -> None:
        feed = self._live.get(match_id)
        if feed is None or not feed.waiting or not payload:
            return  # an ended match's state is cleared: its events say the rest
        try:
            snapshot = parse_server_message(payload)
        except ProtocolError:
            log.warning("ignoring a malformed state of match %s", match_id)
            return
        if not isinstance(snapshot, Snapshot):
            return
        self._asks.put_nowait((False, match_id))
        feed.game = snapshot.game
        waiting, feed.waiting = feed.waiting, set()
        later = [p for seq, p in feed.events if seq > snapshot.last_event]
        for watcher in waiting:
            watcher.send(snapshot)
            for event in later:
                _send(watcher, event)
        if not feed.over:
            feed.watchers |= waiting

    def _result(self, game: str, payload: bytes) -> None:
        try:
            result = json.loads(payload)
        except ValueError:
            return
        if result.get("rated") and not self._is_local(str(result.get("match_id"))):
            self._result_committed(game)

    def _finish(self, feed: _Feed) -> None:
        feed.over = True
        feed.watchers.clear()
        self._live.pop(feed.match_id, None)
        self._recent[feed.match_id] = feed
        while len(self._recent) > RECENT_FINISHED:
            self._recent.popitem(last=False)

    # Orphans ---------------------------------------------------------------------------

    def orphans_ended(self, match_ids: list[str]) -> None:
        """This node's sweep ended these matches of a node that is gone: publish their ends."""
        if self._publisher is not None and self._store is not None:
            asyncio.get_running_loop().create_task(self._publish_ends(match_ids))

    async def _publish_ends(self, match_ids: list[str]) -> None:
        assert self._publisher is not None and self._store is not None
        for match_id in match_ids:
            record = await self._store.get_match(match_id)
            if record is None:
                continue
            feed = self._live.get(match_id)
            end = MatchEnd(
                match_id=match_id,
                winner=None,
                result="*",
                termination="aborted",
                fault="infrastructure",
                faulty_player=None,
                rated=False,
                reason=ORPHAN_REASON,
            )
            seq = (feed.seq if feed is not None else 0) + 1
            event = Event(match_id=match_id, seq=seq, kind="match_end", end=end)
            self._publisher.move(record.game, match_id, event.to_dict())
            result = {**end.to_dict(), "game": record.game, "players": list(record.players)}
            self._publisher.match_ended(record.game, match_id, result)

    # The connection --------------------------------------------------------------------

    async def _run(self) -> None:
        delay = 0.5
        while True:
            try:
                async with aiomqtt.Client(
                    self._address.host,
                    self._address.port,
                    identifier=self._client_id,
                    keepalive=15,
                ) as client:
                    await client.subscribe(EVENTS, qos=0)
                    await client.subscribe(RESULTS, qos=1)
                    for feed in self._live.values():  # states asked for before a reconnect
                        if feed.waiting:
                            await client.subscribe(self._state_topic(feed.match_id), qos=1)
                    self.connected.set()
                    self._outage.succeeded()
                    delay = 0.5
                    await self._session(client)
            except aiomqtt.MqttError as exc:
                self.connected.clear()
                self._outage.failed(exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    async def _session(self, client: aiomqtt.Client) -> None:
        asks = asyncio.create_task(self._ask(client))
        try:
            async for message in client.messages:
                payload = message.payload
                if isinstance(payload, bytes | bytearray):
                    self._heard(str(message.topic), bytes(payload))
        finally:
            asks.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await asks

    async def _ask(self, client: aiomqtt.Client) -> None:
        while True:
            subscribe, match_id = await self._asks.get()
            topic = self._state_topic(match_id)
            if subscribe:
                await client.subscribe(topic, qos=1)
            else:
                await client.unsubscribe(topic)

    @staticmethod
    def _state_topic(match_id: str) -> str:
        return f"{topics.PREFIX}/+/matches/{match_id}/state"
