"""Spectating: numbered per-match events, snapshots, resume, and the event sink hook.

``SpectatorHub`` is the ``MatchObserver`` every match reports to. Each match
gets a feed whose events are numbered 1, 2, ...; the last ``buffer_size``
are kept so a spectator who reconnects with ``watch(since=n)`` gets exactly
the events after ``n`` — or a fresh snapshot when ``n`` is too old. Watchers
are sent to through ``Watcher.send``, which must not block: the connection
layer drops a spectator whose bounded queue is full, so a slow reader never
slows a match or grows memory.

Every snapshot (at match start) and event also goes to the injected
``EventSink`` (MQTT later; a no-op by default).

With several nodes, the matches other nodes host are watched through
``remote`` (``arena.cluster.BrokerFeed``): a ``watch`` of a match this hub
does not know, or of all matches, is handed to it too.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Literal, Protocol

from arena.play.match import Match
from protocol.errors import ProtocolError
from protocol.messages import Analysis, ErrorCode, Event, MatchEnd, Moved, ServerMessage, Snapshot

DEFAULT_BUFFER_SIZE = 256
"""Events kept per match for resuming spectators."""

RECENT_FINISHED = 64
"""Finished matches whose feeds stay resumable."""


class EventSink(Protocol):
    """Where live match events go besides websocket spectators (e.g. an MQTT publisher)."""

    def publish(self, message: Snapshot | Event) -> None:
        """Publish a match's opening snapshot or one of its numbered events; must not block."""
        ...


class RemoteFeeds(Protocol):
    """The matches of other nodes, watched through the broker (``arena.cluster.BrokerFeed``)."""

    def watch(self, watcher: Watcher, match_id: str | None, since: int | None) -> None:
        """Send ``watcher`` a remote match (after ``since``), or all remote live matches."""
        ...

    def unwatch(self, watcher: Watcher, match_id: str | None) -> None:
        """Stop sending ``watcher`` one remote match, or all of them."""
        ...


class NullSink:
    """The default sink: publishes nowhere."""

    def publish(self, message: Snapshot | Event) -> None:
        """Ignore the message."""


class Watcher(Protocol):
    """A spectator connection as the hub sees it."""

    def send(self, message: ServerMessage) -> None:
        """Queue ``message``; never blocks (overflow drops the spectator)."""
        ...


_Unsent = tuple[int, Literal["moved", "match_end"], Moved | None, MatchEnd | None, Analysis | None]
"""An event nobody has been sent yet, kept as its parts (see ``_Feed``)."""


@dataclass(eq=False)
class _Feed:
    """One match's numbered events, the last ``buffer_size`` of them kept for resuming.

    Most matches are never watched, so an event nobody is sent at once is kept
    as its parts and becomes an ``Event`` only if a spectator asks for it.
    """

    match: Match
    buffer_size: int
    seq: int = 0
    events: deque[Event | _Unsent] = field(init=False)
    watchers: set[Watcher] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.events = deque(maxlen=self.buffer_size)

    def events_after(self, since: int) -> list[Event] | None:
        """The events numbered above ``since``, or None when some are no longer buffered."""
        if since > self.seq or since < 0:
            return None
        oldest = self.seq - len(self.events)
        if since < oldest:
            return None
        return [self._event(kept) for kept in list(self.events)[since - oldest :]]

    def _event(self, kept: Event | _Unsent) -> Event:
        if isinstance(kept, Event):
            return kept
        seq, kind, moved, end, analysis = kept
        return Event(
            match_id=self.match.match_id,
            seq=seq,
            kind=kind,
            moved=moved,
            end=end,
            analysis=analysis,
        )


class SpectatorHub:
    """Fans match events out to spectators and the event sink; see the module docstring."""

    def __init__(
        self,
        sink: EventSink | None = None,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
        remote: RemoteFeeds | None = None,
    ):
        self._sink: EventSink = sink or NullSink()
        # With no sink, an event that no watcher is sent need not be built (``_Feed``).
        self._publishing = not isinstance(self._sink, NullSink)
        self._buffer_size = buffer_size
        self._live: dict[str, _Feed] = {}
        self._recent: OrderedDict[str, _Feed] = OrderedDict()
        self._watch_all: set[Watcher] = set()
        self._watch_remote: set[Watcher] = set()
        """Watchers of other nodes' matches (until they unwatch everything)."""
        self.remote = remote
        """Other nodes' matches (several nodes only)."""

    # MatchObserver ------------------------------------------------------------------

    def match_started(self, match: Match) -> None:
        """Open the match's feed; all-watchers get its snapshot."""
        feed = _Feed(match, self._buffer_size)
        self._live[match.match_id] = feed
        if not (self._watch_all or self._publishing):
            return
        snapshot = match.snapshot(0)
        for watcher in list(self._watch_all):
            watcher.send(snapshot)
        self._sink.publish(snapshot)

    def moved(self, match: Match, moved: Moved, analysis: Analysis | None) -> None:
        """Number and fan out a move, with the mover's analysis."""
        self._emit(match.match_id, "moved", moved=moved, analysis=analysis)

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        """Number and fan out the end; the feed stays resumable for a while."""
        self._emit(match.match_id, "match_end", end=end)
        feed = self._live.pop(match.match_id, None)
        if feed is not None:
            feed.watchers.clear()
            self._recent[match.match_id] = feed
            while len(self._recent) > RECENT_FINISHED:
                self._recent.popitem(last=False)

    def _emit(
        self,
        match_id: str,
        kind: Literal["moved", "match_end"],
        *,
        moved: Moved | None = None,
        end: MatchEnd | None = None,
        analysis: Analysis | None = None,
    ) -> None:
        feed = self._live.get(match_id)
        if feed is None:
            return
        feed.seq += 1
        if not (feed.watchers or self._watch_all or self._publishing):
            feed.events.append((feed.seq, kind, moved, end, analysis))
            return
        event = Event(
            match_id=match_id, seq=feed.seq, kind=kind, moved=moved, end=end, analysis=analysis
        )
        feed.events.append(event)
        for watcher in list(feed.watchers | self._watch_all):
            watcher.send(event)
        self._sink.publish(event)

    # Spectator requests -------------------------------------------------------------

    def watch(self, watcher: Watcher, match_id: str | None, since: int | None) -> None:
        """Subscribe ``watcher`` to one match (resuming after ``since``) or to all live ones."""
        if match_id is None:
            self._watch_all.add(watcher)
            for feed in list(self._live.values()):
                watcher.send(feed.match.snapshot(feed.seq))
            if self.remote is not None:
                self._watch_remote.add(watcher)
                self.remote.watch(watcher, None, since)
            return
        found = self._live.get(match_id) or self._recent.get(match_id)
        if found is None and self.remote is not None:
            self._watch_remote.add(watcher)
            self.remote.watch(watcher, match_id, since)
            return
        if found is None:
            raise ProtocolError(ErrorCode.NO_SUCH_MATCH, f"no live or recent match {match_id}")
        if match_id in self._live:
            found.watchers.add(watcher)
        replay = None if since is None else found.events_after(since)
        if replay is None:
            watcher.send(found.match.snapshot(found.seq))
        else:
            for event in replay:
                watcher.send(event)

    def unwatch(self, watcher: Watcher, match_id: str | None = None) -> None:
        """Stop sending ``watcher`` one match's events, or everything when ``match_id`` is None."""
        if match_id is None:
            self._watch_all.discard(watcher)
            self._watch_remote.discard(watcher)
            for feed in self._live.values():
                feed.watchers.discard(watcher)
        elif match_id in self._live:
            self._live[match_id].watchers.discard(watcher)
        if self.remote is not None:
            self.remote.unwatch(watcher, match_id)

    def follows(self, match_id: str) -> bool:
        """True for a match this hub feeds (live here, or finished here lately)."""
        return match_id in self._live or match_id in self._recent

    def live_matches(self) -> list[Match]:
        """The matches in progress."""
        return [feed.match for feed in self._live.values()]

    def subscribed(self) -> set[Watcher]:
        """The watchers subscribed to anything (every live match, or one)."""
        watchers = self._watch_all | self._watch_remote
        for feed in self._live.values():
            watchers |= feed.watchers
        return watchers

    @property
    def watcher_count(self) -> int:
        """Distinct spectators subscribed to anything."""
        return len(self.subscribed())
