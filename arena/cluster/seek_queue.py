"""The seek queue that the nodes sharing a PostgreSQL database pair from.

Each node keeps its own bots' seeks in its ``Lobby`` as before (the lobby
checks them and answers ``already_seeking``). A pairing pass
(``SharedSeekQueue.pair``, run by the node's ``Matchmaker``) first pairs the
node's new seeks among themselves, in memory, with the lobby's rule
(``closest_pairs``): most pairs never touch the database and move no bot.
The seeks left over are mirrored into the ``seek_queue`` table and paired
with every node's leftovers, in two round trips to PostgreSQL, each one
statement calling a function of migration 0007 in a transaction of its own:

1. ``seek_queue_sync`` takes the queue's advisory lock, brings this node's
   rows in line with its lobby (inserts new seeks, deletes withdrawn ones,
   updates ``movable``) and returns the whole queue. Because every sync runs
   under the lock, of two nodes' leftovers that can pair, the one synced
   last sees the other (two passes reading at once would each miss the
   other's seek, and both would wait);
2. the queue is paired in Python with the lobby's own rule (closest ratings
   first, then the longest waiting). This node keeps the pairs that include
   one of its bots; a pair of two other nodes' bots stays for those nodes;
3. ``seek_queue_take`` takes the lock again and, pair by pair, deletes the
   rows of a kept pair if both are still there (and the other node's is
   still ``movable``) and notifies that bot's node. A pair another pass took
   in between is skipped, and the pass syncs and pairs again.

The lock is held only while PostgreSQL runs one of those statements, never
while a node's (busy) event loop gets around to the next step, so passes of
several nodes do not wait for each other's loops.

A pass also reads the queue ahead (``prefetch``: a plain read shortly before
its pairing window ends, on the matchmaker's cue). Before its sync it pairs its
seeks, the new ones included, with the other nodes' seeks that read showed,
and takes those pairs at once (the take checks that their rows are still
there): a pair across nodes usually costs the pass one round trip before its
match starts (``batches`` hands the matchmaker each batch as it is taken).
The sync then runs as above for the seeks left, so a seek the read missed
is still found.

This node hosts every pair it keeps. The other player, if it is another
node's bot, must come here: the pass gives the match its id at once and the
take notifies that bot's node (``pg_notify``, delivered when the take commits,
never for one that fails), which redirects the bot to this node while the
match starts here; ``remote_seat`` names it and its node. The take also
returns what this node needs of the bot (``Arrival``: its id, token hash and
ratings), so starting its match and its ``hello`` here need no database read.
Only *movable* seeks are paired into another node's match: a bot that plays
a match on its own node (or seeks with ``max_matches`` > 1 while playing) is
paired only by its node.

A seek of this node whose row another node's pass took is awaiting its
redirect: the lobby keeps it (so the bot cannot seek twice) until the
redirect arrives (``taken``) or ``REDIRECT_WAIT_S`` passes, after which the
seek goes back into the queue (the host failed before it could tell).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, replace

from sqlalchemy.exc import SQLAlchemyError

from arena.play.lobby import Lobby, Pairing, Seek, closest_pairs
from arena.play.match import Match
from arena.store import database_outage
from arena.store.records import Arrival
from arena.store.seek_queue import (
    NewSeek,
    QueueRow,
    SeekQueueConnection,
    SeekQueueTable,
    TakePlan,
)
from arena.store.tokens import new_match_id
from protocol.messages import TimeControl

log = logging.getLogger(__name__)

REDIRECT_WAIT_S = 5.0
"""How long a seek another node took waits for its redirect before it is queued again."""

SNAPSHOT_MAX_AGE_S = 1.0
"""A read of the queue older than this is not used to pair (``prefetch``)."""

MAX_SYNCS = 3
"""Syncs per pass at most: a pass whose pairs other passes took in between pairs again."""

_NEW = 1 << 62
"""Added to the lobby order of a seek without a row when it pairs with rows: the newest."""


@dataclass(frozen=True, slots=True)
class RemoteSeat:
    """A player of a pairing who is connected to another node."""

    bot: str
    node_id: str


@dataclass(frozen=True, slots=True)
class _Row:
    id: int | None
    """None for a seek of this node that has no row yet."""
    node_id: str
    local_id: int
    seek: Seek


@dataclass(frozen=True, slots=True)
class _Planned:
    """A pairing a pass made: its two rows; its player on another node, if any; this node's
    rows in it (by lobby order)."""

    pairing: Pairing
    rows: tuple[int | None, int | None]
    remote: RemoteSeat | None
    local: tuple[int, ...]


class SharedSeekQueue:
    """Pairs this node's seeks with every node's, through the ``seek_queue`` table."""

    def __init__(
        self,
        table: SeekQueueTable,
        lobby: Lobby,
        *,
        has_capacity: Callable[[str], bool],
        playing: Callable[[str], int],
        rng: random.Random,
        notice: Callable[[RemoteSeat, str], tuple[str, str]],
        on_started: Callable[[Match, RemoteSeat], None],
        arriving: Callable[[Arrival], None] = lambda arrival: None,
    ) -> None:
        self._table = table
        self.node_id = table.node_id
        self._lobby = lobby
        self._has_capacity = has_capacity
        self._playing = playing
        self._rng = rng
        self._notice = notice
        """The ``pg_notify`` channel and payload that sends a remote player to a match here."""
        self._on_started = on_started
        self._arriving = arriving
        """Told of each remote player a take paired, before the pass returns its pairing."""
        self._inserted: dict[int, bool] = {}
        """This node's seeks that have a row (by lobby order): their ``movable`` as written."""
        self._vanished: dict[int, float] = {}
        """Seeks whose row another node took, and when that was first seen."""
        self._remote: dict[Pairing, RemoteSeat] = {}
        self._snapshot: asyncio.Task[list[QueueRow] | None] | None = None
        """The queue as read while the pairing window ran (``prefetch``)."""
        self._snapshot_at = 0.0
        self._lock = asyncio.Lock()
        self.last_pass = 0.0
        self.passes = 0
        self._outage = database_outage(log, "the shared seek queue")

    def wants_pass(self, retry_s: float) -> bool:
        """True when the table lags the lobby, or seeks wait and ``retry_s`` passed."""
        local = {seek.order for seek in self._lobby.seeks}
        if local != self._inserted.keys():
            return True
        return bool(local) and time.monotonic() - self.last_pass >= retry_s

    def prefetch(self) -> None:
        """A pass is due shortly: read the queue meanwhile, so the pass can take the pairs
        it shows at once (``batches``)."""
        if self._snapshot is None or self._snapshot.done():
            self._snapshot = asyncio.get_running_loop().create_task(self._read_snapshot())
            self._snapshot_at = time.monotonic()

    async def pair(self) -> list[Pairing]:
        """One pairing pass (``batches``): all its pairings at once."""
        return [pairing async for batch in self.batches() for pairing in batch]

    async def batches(self) -> AsyncGenerator[list[Pairing], None]:
        """One pairing pass (see the module docstring): the pairings this node hosts, in
        batches to start as they come, those with a player on another node first in each
        (that player is already on its way)."""
        async with self._lock:
            here = self._pair_here()
            if not self._lobby.seeks and not self._inserted:
                yield here
                return
            busy = {bot for pairing in here for bot in pairing.players}
            self.last_pass = time.monotonic()
            self.passes += 1
            snapshot, self._snapshot = self._snapshot, None
            if time.monotonic() - self._snapshot_at > SNAPSHOT_MAX_AGE_S:
                snapshot = None  # read for a pass that did not run (the store was failing)
            try:
                async with self._table.connect() as conn:
                    if snapshot is not None and (early := await self._early(conn, snapshot, busy)):
                        busy.update(bot for pairing in early for bot in pairing.players)
                        yield early + here
                        here = []
                    for _ in range(MAX_SYNCS):
                        if not self._lobby.seeks and not self._inserted:
                            break  # all paired early
                        rows = await self._sync(conn, busy)
                        planned = [self._plan(ra, rb) for ra, rb in self._choose(rows)]
                        if not planned:
                            break
                        taken = await self._take(conn, planned)
                        kept = self._apply(taken)
                        busy.update(bot for pairing in kept for bot in pairing.players)
                        yield kept + here
                        here = []
                        if len(taken) == len(planned):
                            break
            except (OSError, SQLAlchemyError) as exc:
                # What committed stands; the next pass goes on from there.
                self._outage.failed(exc)
            else:
                self._outage.succeeded()
            if here:
                yield here

    async def _read_snapshot(self) -> list[QueueRow] | None:
        try:
            return await self._table.read()
        except (OSError, SQLAlchemyError) as exc:
            log.debug("reading the queue during the window failed: %s", exc)
            return None

    async def _early(
        self,
        conn: SeekQueueConnection,
        snapshot: asyncio.Task[list[QueueRow] | None],
        busy: set[str],
    ) -> list[Pairing]:
        """Take the pairs of this node's seeks with other nodes' that the queue as read
        during the window shows, before the sync: a pair whose rows are still there is
        taken in one round trip. A failed or stale read costs at most that round trip: the
        sync that follows reads the queue again and pairs what is left."""
        result = await snapshot
        if result is None:
            return []
        local = {seek.order: seek for seek in self._lobby.seeks}
        rows = self._rows(result, self._inserted, busy, settle=False)
        for row_id, row in list(rows.items()):
            if row.node_id == self.node_id and (
                row.local_id not in local or row.local_id in self._vanished
            ):
                del rows[row_id]  # its seek is gone, or another node took it
        # This node's seeks without a row yet pair as the newest of all.
        seen = {(r.seek.bot, r.seek.game, r.seek.time_control) for r in rows.values()}
        for order, seek in local.items():
            if order in self._inserted or seek.bot in busy or not self._has_capacity(seek.bot):
                continue
            if (seek.bot, seek.game, seek.time_control) not in seen:
                new = replace(seek, order=_NEW + order)
                rows[new.order] = _Row(None, self.node_id, order, new)
        others = [pair for pair in self._choose(rows) if self._across(pair)]
        if not others:
            return []
        return self._apply(await self._take(conn, [self._plan(ra, rb) for ra, rb in others]))

    def _across(self, pair: tuple[_Row, _Row]) -> bool:
        return sum(row.node_id == self.node_id for row in pair) == 1

    def _pair_here(self) -> list[Pairing]:
        """Pair the seeks that are not in the table yet among themselves."""
        fresh = [
            seek
            for seek in self._lobby.seeks
            if seek.order not in self._inserted and self._has_capacity(seek.bot)
        ]
        pairs = closest_pairs(fresh)
        self._lobby.remove_seeks({seek.order for pair in pairs for seek in pair})
        return [self._pairing(a, b) for a, b in pairs]

    def _pairing(self, a: Seek, b: Seek) -> Pairing:
        players = (a.bot, b.bot) if self._rng.random() < 0.5 else (b.bot, a.bot)
        return Pairing(a.game, players, a.time_control)

    @property
    def queued(self) -> int:
        """This node's seeks that have a row in the table now (as of the last pass)."""
        return len(self._inserted)

    def remote_seat(self, pairing: Pairing) -> RemoteSeat | None:
        """The player of ``pairing`` connected to another node, if one is."""
        return self._remote.get(pairing)

    def started(self, pairing: Pairing, match: Match) -> None:
        """The match of ``pairing`` started here: its remote player's node is told."""
        remote = self._remote.pop(pairing, None)
        if remote is not None:
            self._on_started(match, remote)

    def taken(self, bot: str) -> None:
        """Another node paired ``bot``: its seeks here are over."""
        orders = {seek.order for seek in self._lobby.seeks if seek.bot == bot}
        self._lobby.remove_seeks(orders)
        for order in orders:
            self._inserted.pop(order, None)
            self._vanished.pop(order, None)

    # One pass -------------------------------------------------------------------------

    async def _sync(self, conn: SeekQueueConnection, busy: set[str]) -> dict[int, _Row]:
        """Step 1: make this node's rows match its lobby (``_vanished`` is settled when the
        rows are read), and read the queue: every seek this node may pair."""
        local = {seek.order: seek for seek in self._lobby.seeks}
        written = dict(self._inserted)
        now = time.monotonic()
        withdrawn = [order for order in written if order not in local]
        for order in withdrawn:
            del written[order]
            self._vanished.pop(order, None)
        for order, since in list(self._vanished.items()):
            if now - since >= REDIRECT_WAIT_S:  # the host never said: the seek goes back in
                log.warning("seek of %s: no redirect came; queued again", local[order].bot)
                del self._vanished[order]
                written.pop(order, None)
        new: list[NewSeek] = []
        moved: list[tuple[int, bool]] = []
        for order, seek in local.items():
            movable = self._playing(seek.bot) == 0 and seek.bot not in busy
            if order not in written:
                tc = seek.time_control
                row = NewSeek(
                    order, seek.bot, seek.game, tc.move_ms, tc.bank_ms, seek.rating, movable
                )
                new.append(row)
                written[order] = movable
            elif order not in self._vanished and written[order] != movable:
                moved.append((order, movable))
                written[order] = movable
        result = await conn.sync(withdrawn, moved, new)
        self._inserted = written  # committed: the table holds these rows now
        return self._rows(result, written, busy, settle=True)

    def _rows(
        self, result: Sequence[QueueRow], written: dict[int, bool], busy: set[str], settle: bool
    ) -> dict[int, _Row]:
        """The seeks of ``result`` this node may pair: its own, and the movable ones of other
        nodes. With ``settle`` (``result`` is the queue as of now), a seek of this node
        written before whose row is gone was taken by another node's pass: it waits for its
        redirect (``_vanished``)."""
        rows: dict[int, _Row] = {}
        seen: set[tuple[str, str, int, int]] = set()
        mine: set[int] = set()
        for q in result:
            local = q.node_id == self.node_id
            if local:
                mine.add(q.local_id)
            if not (q.movable or local):
                continue
            if q.bot in busy or (local and not self._has_capacity(q.bot)):
                continue  # paired this pass, or playing all it may
            key = (q.bot, q.game, q.move_ms, q.bank_ms)
            if key in seen:  # the same bot seeking on two nodes: its oldest seek counts
                continue
            seen.add(key)
            tc = TimeControl(move_ms=q.move_ms, bank_ms=q.bank_ms)
            # The row id orders seeks of all nodes by their arrival.
            seek = Seek(q.bot, q.game, tc, q.rating, q.id)
            rows[q.id] = _Row(q.id, q.node_id, q.local_id, seek)
        if settle:
            now = time.monotonic()
            for order in written.keys() - mine:
                self._vanished.setdefault(order, now)
        return rows

    def _choose(self, rows: dict[int, _Row]) -> list[tuple[_Row, _Row]]:
        """Step 2: the queue's pairs that include one of this node's seeks."""
        pairs = []
        for a, b in closest_pairs(row.seek for row in rows.values()):
            ra, rb = rows[a.order], rows[b.order]
            if self.node_id in (ra.node_id, rb.node_id):
                pairs.append((ra, rb))
        return pairs

    def _plan(self, ra: _Row, rb: _Row) -> _Planned:
        """The pairing of two rows, its player on another node if one is (who comes here:
        the match's id is chosen now, for the notice that sends it), and this node's rows."""
        remote = next(
            (RemoteSeat(r.seek.bot, r.node_id) for r in (ra, rb) if r.node_id != self.node_id),
            None,
        )
        pairing = self._pairing(ra.seek, rb.seek)
        if remote is not None:
            pairing = replace(pairing, match_id=new_match_id())
        local = tuple(r.local_id for r in (ra, rb) if r.node_id == self.node_id)
        return _Planned(pairing, (ra.id, rb.id), remote, local)

    async def _take(self, conn: SeekQueueConnection, planned: list[_Planned]) -> list[_Planned]:
        """Step 3: take the planned pairs whose rows are still there, with their notices
        (``pg_notify`` delivers when the take commits); the pairs taken."""
        notices = [
            self._notice(plan.remote, plan.pairing.match_id)
            if plan.remote is not None and plan.pairing.match_id is not None
            else (None, None)
            for plan in planned
        ]
        plans = [
            TakePlan(plan.rows, None if plan.remote is None else plan.remote.bot, *notice)
            for plan, notice in zip(planned, notices, strict=True)
        ]
        taken = []
        for index, arrival in await conn.take(plans):
            taken.append(planned[index])
            if arrival is not None:
                self._arriving(arrival)
        return taken

    def _apply(self, planned: list[_Planned]) -> list[Pairing]:
        """After a take committed: this node's paired seeks leave its lobby; the pairings,
        those with a player on another node first."""
        done = {order for plan in planned for order in plan.local}
        for plan in planned:
            if plan.remote is not None:
                self._remote[plan.pairing] = plan.remote
        for order in done:
            self._inserted.pop(order, None)
        self._lobby.remove_seeks(done)
        return [plan.pairing for plan in sorted(planned, key=lambda plan: plan.remote is None)]
