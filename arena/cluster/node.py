"""This server as one node of a multi-node arena: pairing across nodes, redirects, orphan sweeps.

``ArenaServer`` makes a ``ClusterNode`` when its store is PostgreSQL and
``allow_multi_node`` is set. The node

- pairs through the shared ``SharedSeekQueue`` (the ``Matchmaker`` runs its
  passes; a tick runs one when the table lags the lobby, and again every
  ``retry_s`` while seeks wait);
- hosts every match its passes pair and tells the other player's node, by a
  notice the pass sends as it commits (``channel.notice``), to send that
  bot a ``redirect`` to this node's public URL, so the bot travels while the
  match starts here; a bot that meanwhile started a match on its own node
  cannot move, and its node answers ``refused``, which aborts the new match
  (unrated, the infrastructure's fault) as soon as it has started;
- answers the ``hello`` of a bot whose live match another node hosts with a
  ``redirect`` there (``placement``), so a bot that connects to any node
  finds its match;
- sweeps every ``sweep_s``: the live matches of nodes that are gone (lease
  expired, or the process dead on this machine) end as aborted, unrated,
  the infrastructure's fault, exactly once however many nodes sweep
  (``Store.abort_orphan_matches``); their seeks leave the queue with their
  node's row. ``orphans_ended`` hears of the ids (the broker feed tells
  spectators).

No message between nodes is relied upon: a lost ``redirect`` notice leaves
the bot's seek to go back into the queue after ``REDIRECT_WAIT_S`` and the
bot's next ``hello`` anywhere finds the match; a lost ``refused`` leaves the
bot to lose the match by ``disconnect`` after the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable

from arena.cluster.channel import NodeChannel, notice
from arena.cluster.seek_queue import RemoteSeat, SharedSeekQueue
from arena.net.websocket import WebSocketConnection
from arena.play.lobby import Lobby
from arena.play.match import Match, Spawn
from arena.play.registry import MatchRegistry
from arena.store import Store, database_outage, nodes
from protocol.errors import ProtocolError
from protocol.messages import CloseCode, Redirect

log = logging.getLogger(__name__)

RETRY_S = 1.0
"""How often a node with waiting seeks runs a pass even if nothing changed here."""

MAX_EARLY_REFUSALS = 1000
"""Refusals kept for matches not started yet (a bound: one whose start failed never comes)."""

TICK_S = 0.05
"""How often the node checks whether its queue rows lag its lobby."""


class ClusterNode:
    """The multi-node parts of one server; see the module docstring."""

    def __init__(
        self,
        store: Store,
        lobby: Lobby,
        registry: MatchRegistry,
        *,
        link_of: Callable[[str], WebSocketConnection | None],
        has_capacity: Callable[[str], bool],
        spawn: Spawn,
        rng: random.Random,
        schedule: Callable[[], None] = lambda: None,
        orphans_ended: Callable[[list[str]], None] | None = None,
        sweep_s: float = nodes.HEARTBEAT_S,
    ) -> None:
        node_id = store.node_id
        if node_id is None:
            raise ValueError("a cluster node needs a store that claimed the database as a node")
        self.node_id = node_id
        self._store = store
        self._registry = registry
        self._link_of = link_of
        self._spawn = spawn
        self._sweep_s = sweep_s
        self.public_url = ""
        self.directory = store.directory(node_id)
        self.queue = SharedSeekQueue(
            store.seek_queue(node_id),
            lobby,
            has_capacity=has_capacity,
            playing=registry.playing,
            rng=rng,
            notice=self._redirect_notice,
            on_started=self._started,
            arriving=store.expect_login,
        )
        dsn = store.engine.url.set(drivername="postgresql")
        self.channel = NodeChannel(dsn.render_as_string(hide_password=False), node_id, self._heard)
        self._orphans_ended = orphans_ended
        """Told the ids of the matches a sweep of this node ended."""
        self._schedule = schedule
        """Asks for a pairing pass (``arena.play.matchmaker.PassWanted``)."""
        self._sweep_due = asyncio.Event()
        self._sweep_outage = database_outage(log, "the sweep for other nodes' orphan matches")
        self._refused: dict[str, str] = {}
        """Matches a remote player's node refused before they started here: id -> bot."""
        self.redirects_sent = 0

    async def start(self, public_url: str) -> None:
        """Publish this node's URL, listen to the other nodes, start the tick and the sweeps."""
        self.public_url = public_url
        await self.directory.publish_url(public_url)
        await self.channel.start()
        self._spawn(self._tick(), "cluster-tick")
        self._spawn(self._sweeps(), "cluster-sweep")
        log.info("node %s joins the arena at %s", self.node_id, public_url)

    def status(self) -> dict[str, object]:
        """The node's part of ``/healthz``: its id and URL, passes through the shared queue,
        bots redirected to other nodes, and this node's seeks waiting in the queue."""
        return {
            "node": self.node_id,
            "public_url": self.public_url,
            "queue_passes": self.queue.passes,
            "redirected": self.redirects_sent,
            "queued_seeks": self.queue.queued,
        }

    async def close(self) -> None:
        """Stop listening (the supervisor cancels the tick and the sweeps)."""
        await self.channel.close()

    # A bot's hello --------------------------------------------------------------------

    async def placement(self, bot: str) -> Redirect | None:
        """The ``redirect`` for a bot whose live match another live node hosts, else None."""
        if self._registry.of_bot(bot):
            return None
        try:
            hosted = await self.directory.hosted_elsewhere(bot)
        except Exception as exc:  # the store's health reports a failing database
            log.debug("cannot look up where %s plays: %s", bot, exc)
            return None
        if hosted is None:
            return None
        if hosted.gone or not hosted.url:
            self._sweep_due.set()  # its match is an orphan: end it now, not at the next sweep
            return None
        if hosted.late:
            # Perhaps dead: a bot sent there would only fail and come back. It stays here
            # (its match there ends as an orphan when the lease runs out, or resumes when
            # the node answers again and the bot is sent there by a later hello).
            log.info("not redirecting %s to node %s: its heartbeat is late", bot, hosted.node_id)
            return None
        return Redirect(
            url=hosted.url,
            match_id=hosted.match_id,
            reason=f"match {hosted.match_id} is hosted by node {hosted.node_id}",
        )

    # Matches across nodes -------------------------------------------------------------

    def _redirect_notice(self, remote: RemoteSeat, match_id: str) -> tuple[str, str]:
        """The notice that has ``remote``'s node send it to match ``match_id`` here."""
        message = {
            "kind": "redirect",
            "bot": remote.bot,
            "match": match_id,
            "url": self.public_url,
            "node": self.node_id,
        }
        return notice(remote.node_id, message)

    def _started(self, match: Match, remote: RemoteSeat) -> None:
        """A match paired here with ``remote`` has started: end it if its node refused."""
        bot = self._refused.pop(match.match_id, None)
        if bot is not None:
            match.abort(f"{bot} could not move to the node hosting the match")

    async def _send(self, node_id: str, message: dict[str, str]) -> None:
        await self.channel.send(node_id, message)

    def _heard(self, message: dict[str, object]) -> None:
        kind, match_id = message.get("kind"), str(message.get("match"))
        if kind == "redirect":
            self._redirect(str(message["bot"]), match_id, str(message["url"]), str(message["node"]))
        elif kind == "refused":
            bot = str(message.get("bot"))
            try:
                match = self._registry.get(match_id)
            except ProtocolError:  # the notice outran the match's start here
                if len(self._refused) < MAX_EARLY_REFUSALS:
                    self._refused[match_id] = bot
                return
            match.abort(f"{bot} could not move to the node hosting the match")
        else:
            log.warning("ignoring a node message of kind %r", kind)

    def _redirect(self, bot: str, match_id: str, url: str, host: str) -> None:
        self.queue.taken(bot)
        conn = self._link_of(bot)
        if conn is None:
            log.info("bot %s, paired into match %s on node %s, has left", bot, match_id, host)
            return
        if self._registry.playing(bot) > 0:
            log.warning("bot %s plays here now: it cannot join match %s on %s", bot, match_id, host)
            refusal = {"kind": "refused", "bot": bot, "match": match_id}
            self._spawn(self._send(host, refusal), f"refuse-{match_id}")
            return
        self.redirects_sent += 1
        self._store.expect_return(bot)  # after its match it comes back here to seek
        conn.send(Redirect(url=url, match_id=match_id, reason=f"match {match_id} is on {host}"))
        conn.close(CloseCode.REDIRECTED, "redirected to another node")

    # Background -------------------------------------------------------------------------

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            if self.queue.wants_pass(RETRY_S):
                self._schedule()

    async def _sweeps(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._sweep_s):
                    await self._sweep_due.wait()
            self._sweep_due.clear()
            try:
                ended = await self._store.abort_orphan_matches()
            except Exception as exc:  # a line when it starts and ends, not one a sweep
                self._sweep_outage.failed(exc)
                continue
            self._sweep_outage.succeeded()
            if ended:
                log.warning(
                    "ended %d matches of nodes that are gone: %s", len(ended), ", ".join(ended)
                )
                if self._orphans_ended is not None:
                    self._orphans_ended(ended)
