"""The seek queue that the nodes sharing a PostgreSQL database pair from.

Each node keeps its own bots' seeks in its ``Lobby`` as before (the lobby
checks them and answers ``already_seeking``). A pairing pass
(``SharedSeekQueue.pair``, run by the node's ``Matchmaker``) first pairs the
node's new seeks among themselves, in memory, with the lobby's rule
(``closest_pairs``): most pairs never touch the database and move no bot.
The seeks left over are mirrored into the ``seek_queue`` table, in one
transaction that pairs them with every node's leftovers:

1. insert this node's new seeks (no one else sees them before the commit,
   so this need not wait for the lock below);
2. take the queue's advisory lock, so passes of all nodes run one at a time
   and each sees every committed seek (two passes reading at once with
   ``SKIP LOCKED`` would each see part of the queue and miss pairs);
3. bring this node's other rows in line with its lobby: delete withdrawn
   seeks, update ``movable`` (after the lock: another pass reads every row
   ``FOR UPDATE``, and must not wait on rows this pass holds while it waits
   for the lock);
4. read the whole queue and pair it with the lobby's own rule
   (``closest_pairs``: closest ratings first, then the longest waiting);
5. keep the pairs that include one of this node's bots and delete their
   rows, in one statement with the notices below; pairs of two other
   nodes' bots stay for those nodes' passes.

This node hosts every pair it keeps. The other player, if it is another
node's bot, must come here: the pass gives the match its id at once and, in
its own transaction, notifies that bot's node (``pg_notify``, delivered when
the pass commits, never for a pass that fails), which redirects the bot to
this node while the match starts here; ``remote_seat`` names it and its node.
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
from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from arena.play.lobby import Lobby, Pairing, Seek, closest_pairs
from arena.play.match import Match
from arena.store.models import QueuedSeek
from arena.store.tokens import new_match_id
from protocol.messages import TimeControl

log = logging.getLogger(__name__)

QUEUE_LOCK = 0x4D435455
"""The advisory lock that serializes pairing passes (one key for every node)."""

REDIRECT_WAIT_S = 5.0
"""How long a seek another node took waits for its redirect before it is queued again."""


@dataclass(frozen=True, slots=True)
class RemoteSeat:
    """A player of a pairing who is connected to another node."""

    bot: str
    node_id: str


@dataclass(frozen=True, slots=True)
class _Row:
    node_id: str
    local_id: int
    seek: Seek


@dataclass(frozen=True, slots=True)
class _Planned:
    """A pairing a pass made: its player on another node, if any; this node's rows in it."""

    pairing: Pairing
    remote: RemoteSeat | None
    local: tuple[int, ...]


class SharedSeekQueue:
    """Pairs this node's seeks with every node's, through the ``seek_queue`` table."""

    def __init__(
        self,
        engine: AsyncEngine,
        node_id: str,
        lobby: Lobby,
        *,
        has_capacity: Callable[[str], bool],
        playing: Callable[[str], int],
        rng: random.Random,
        notice: Callable[[RemoteSeat, str], tuple[str, str]],
        on_started: Callable[[Match, RemoteSeat], None],
    ) -> None:
        self._engine = engine
        self.node_id = node_id
        self._lobby = lobby
        self._has_capacity = has_capacity
        self._playing = playing
        self._rng = rng
        self._notice = notice
        """The ``pg_notify`` channel and payload that sends a remote player to a match here."""
        self._on_started = on_started
        self._inserted: dict[int, bool] = {}
        """This node's seeks that have a row (by lobby order): their ``movable`` as written."""
        self._vanished: dict[int, float] = {}
        """Seeks whose row another node took, and when that was first seen."""
        self._remote: dict[Pairing, RemoteSeat] = {}
        self._lock = asyncio.Lock()
        self.last_pass = 0.0
        self.passes = 0

    def wants_pass(self, retry_s: float) -> bool:
        """True when the table lags the lobby, or seeks wait and ``retry_s`` passed."""
        local = {seek.order for seek in self._lobby.seeks}
        if local != self._inserted.keys():
            return True
        return bool(local) and time.monotonic() - self.last_pass >= retry_s

    async def pair(self) -> list[Pairing]:
        """One pairing pass (see the module docstring): the pairings this node hosts."""
        async with self._lock:
            here = self._pair_here()
            if not self._lobby.seeks and not self._inserted:
                return here
            busy = {bot for pairing in here for bot in pairing.players}
            self.last_pass = time.monotonic()
            self.passes += 1
            try:
                async with self._engine.begin() as conn:
                    inserted = await self._reconcile(conn, busy)
                    rows = await self._read(conn, inserted, busy)
                    pairs = self._choose(rows)
                    planned = [self._plan(ra, rb) for (_, ra), (_, rb) in pairs]
                    taken = [row_id for pair in pairs for row_id, _ in pair]
                    await self._take(conn, taken, planned)
            except (OSError, SQLAlchemyError) as exc:
                # Nothing changed; the next pass tries again (the store reports its health).
                log.warning("pairing pass failed: %s", exc)
                return here
            self._inserted = inserted
            return here + self._apply(planned)

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

    async def _reconcile(self, conn: AsyncConnection, busy: set[str]) -> dict[int, bool]:
        """Make this node's rows match its lobby (``_vanished`` is settled by ``_read``),
        taking the queue's lock after the inserts (steps 1-3); returns what is written now."""
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
        new, moved = [], []
        for order, seek in local.items():
            movable = self._playing(seek.bot) == 0 and seek.bot not in busy
            if order not in written:
                new.append(self._values(seek, movable))
                written[order] = movable
            elif order not in self._vanished and written[order] != movable:
                moved.append((order, movable))
                written[order] = movable
        if new:
            await conn.execute(insert(QueuedSeek), new)
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": QUEUE_LOCK})
        if withdrawn:
            await conn.execute(
                delete(QueuedSeek).where(
                    QueuedSeek.node_id == self.node_id, QueuedSeek.local_id.in_(withdrawn)
                )
            )
        for order, movable in moved:
            await conn.execute(
                update(QueuedSeek)
                .where(QueuedSeek.node_id == self.node_id, QueuedSeek.local_id == order)
                .values(movable=movable)
            )
        return written

    async def _take(self, conn: AsyncConnection, taken: list[int], planned: list[_Planned]) -> None:
        """Step 5: delete the rows of the pairs kept, and notify the nodes of their remote
        players, in one round trip (``pg_notify`` delivers at the commit)."""
        if not taken:
            return
        notices = [
            self._notice(plan.remote, plan.pairing.match_id)
            for plan in planned
            if plan.remote is not None and plan.pairing.match_id is not None
        ]
        await conn.execute(
            text(
                f"WITH taken AS (DELETE FROM {QueuedSeek.__tablename__} WHERE id = ANY(:ids))"
                " SELECT pg_notify(c, p)"
                " FROM unnest(CAST(:channels AS text[]), CAST(:payloads AS text[])) AS n(c, p)"
            ),
            {
                "ids": taken,
                "channels": [channel for channel, _ in notices],
                "payloads": [payload for _, payload in notices],
            },
        )

    def _values(self, seek: Seek, movable: bool) -> dict[str, object]:
        tc = seek.time_control
        return {
            "node_id": self.node_id,
            "local_id": seek.order,
            "bot": seek.bot,
            "game": seek.game,
            "move_ms": tc.move_ms,
            "bank_ms": tc.bank_ms,
            "rating": seek.rating,
            "movable": movable,
        }

    async def _read(
        self, conn: AsyncConnection, written: dict[int, bool], busy: set[str]
    ) -> dict[int, _Row]:
        """Every seek this node may pair: its own, and the movable ones of other nodes.

        A seek of this node written before whose row is gone was taken by another
        node's pass: it waits for its redirect (``_vanished``).
        """
        result = await conn.execute(
            select(QueuedSeek.__table__).order_by(QueuedSeek.id).with_for_update()
        )
        rows: dict[int, _Row] = {}
        seen: set[tuple[str, str, int, int]] = set()
        mine: set[int] = set()
        for q in result:
            local = q.node_id == self.node_id
            if local:
                mine.add(q.local_id)
            if not (q.movable or local):
                continue
            if local and (q.bot in busy or not self._has_capacity(q.bot)):
                continue  # paired in memory this pass, or playing all it may
            key = (q.bot, q.game, q.move_ms, q.bank_ms)
            if key in seen:  # the same bot seeking on two nodes: its oldest seek counts
                continue
            seen.add(key)
            tc = TimeControl(move_ms=q.move_ms, bank_ms=q.bank_ms)
            # The row id orders seeks of all nodes by their arrival.
            rows[q.id] = _Row(q.node_id, q.local_id, Seek(q.bot, q.game, tc, q.rating, q.id))
        now = time.monotonic()
        for order in written.keys() - mine:
            self._vanished.setdefault(order, now)
        return rows

    def _choose(self, rows: dict[int, _Row]) -> list[tuple[tuple[int, _Row], tuple[int, _Row]]]:
        pairs = []
        for a, b in closest_pairs(row.seek for row in rows.values()):
            ra, rb = rows[a.order], rows[b.order]
            if self.node_id in (ra.node_id, rb.node_id):
                pairs.append(((a.order, ra), (b.order, rb)))
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
        return _Planned(pairing, remote, local)

    def _apply(self, planned: list[_Planned]) -> list[Pairing]:
        """After the pass committed: this node's paired seeks leave its lobby."""
        done = {order for plan in planned for order in plan.local}
        for plan in planned:
            if plan.remote is not None:
                self._remote[plan.pairing] = plan.remote
        for order in done:
            self._inserted.pop(order, None)
        self._lobby.remove_seeks(done)
        return [plan.pairing for plan in planned]
