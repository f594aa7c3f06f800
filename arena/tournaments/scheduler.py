"""The tournament scheduler: starts tournament games as their bots are online and free.

One ``TournamentScheduler`` per server. It keeps every tournament this node
runs as a ``TournamentState`` (loaded from the database at start and
re-read every ``refresh_s``, so one created, paused or cancelled directly
in the database is noticed) and, after each change and every ``tick_s``,
runs a pass: for each running tournament, while fewer than its concurrency
of games are under way, the first pending game slot whose two bots are
online with a free seat is offered to both bots as a ``challenge`` (the
lobby's ``invite``). When both accept, the match starts through the
registry like any other, from the slot's opening and tagged with the
tournament and pair; a bot that declines or does not answer within
``challenge_timeout_s`` is left alone for ``retry_s`` and the slot waits.

When a game ends the scheduler counts it (``TournamentState.record``): a
finished match counts, an abort by the infrastructure is replayed, an abort
before a bot's first move is a no-show (three make the slot void). A
tournament with nothing left to play is marked finished; an SPRT stops
starting games at its verdict and finishes once the games in flight end.
Every change goes to the listeners (MQTT): the status object, and an event.

Nothing here is the only copy: results are the tournament's ``matches``
rows, committed by the store before anyone is told. A server killed at any
point restarts with the store's orphan clean-up aborting its live matches
(infrastructure: replayed) and this scheduler reloading what was counted.

On a database shared by several nodes (``Store.shared``) one node *runs* a
tournament (claims it: counts, publishes, judges and finishes it), but every
node plays its games: a node also *helps* each running tournament it does
not run, for the bots whose workers are connected to it, from a copy of the
tournament re-read at every refresh. Each game, wherever it is played, first
claims its slot in the database (``TournamentTables.claim_slot``), which
keeps a slot to one node at a time, never replays a finished one, and holds
the tournament's concurrency across all nodes. The running node counts its
own games as they end and the other nodes' games from the ``matches`` rows
of the pairs whose claims ended (``collect_claims``, at every refresh; each
match is tallied once), and finishes the tournament only when no other node
holds a live claim. A node that dies leaves its claims to be collected: its
live games were aborted by the infrastructure and are played again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from arena.play.lobby import Lobby, Pairing
from arena.play.match import Match, Spawn
from arena.play.registry import MatchRegistry
from arena.store import Store, database_outage
from arena.tournaments import storage
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.settings import TournamentSettings
from arena.tournaments.standings import build_status, headline
from arena.tournaments.state import SlotKey, TournamentState, games_to_show
from protocol.games import Outcome, Termination
from protocol.messages import ChallengeReceived, ServerMessage

log = logging.getLogger(__name__)

CHALLENGE_TIMEOUT_S = 10.0
RETRY_S = 2.0
PUBLISH_DELAY_S = 0.25
"""Status changes within this long are published as one MQTT state message."""


class Seats(Protocol):
    """The bots online, as the scheduler sees them (the server's gateway and registry)."""

    def free_seats(self, bot: str) -> int:
        """Matches ``bot`` may still start now (0 when it is offline)."""
        ...

    def tell(self, bot: str, message: ServerMessage) -> None:
        """Send ``message`` to ``bot`` if it is online."""
        ...


class TournamentListener(Protocol):
    """Who hears about tournaments besides the API (the MQTT publisher)."""

    def tournament_state(self, tournament_id: int, status: dict[str, Any]) -> None:
        """The tournament's status object changed (see ``standings``)."""

    def tournament_event(self, tournament_id: int, event: dict[str, Any]) -> None:
        """A game ended, a pair completed, the status changed."""


@dataclass(eq=False)
class _Invitation:
    """One game slot offered to its two bots."""

    run: TournamentState
    key: SlotKey
    players: tuple[str, str]
    claim: int | None
    """Its claim in the database (a shared database only)."""
    challenges: dict[str, str] = field(default_factory=dict)
    accepted: set[str] = field(default_factory=set)
    timer: asyncio.TimerHandle | None = None
    closed: bool = False


class TournamentScheduler:
    """See the module docstring."""

    def __init__(
        self,
        store: Store,
        registry: MatchRegistry,
        lobby: Lobby,
        seats: Seats,
        *,
        spawn: Spawn,
        accepting: Callable[[], bool] = lambda: True,
        tick_s: float = 0.2,
        refresh_s: float = 2.0,
        challenge_timeout_s: float = CHALLENGE_TIMEOUT_S,
        retry_s: float = RETRY_S,
    ) -> None:
        self._store = store
        self._registry = registry
        self._lobby = lobby
        self._seats = seats
        self._spawn = spawn
        self._accepting = accepting
        self._tick_s = tick_s
        self._refresh_s = refresh_s
        self._challenge_timeout_s = challenge_timeout_s
        self._retry_s = retry_s
        self._runs: dict[int, TournamentState] = {}
        self._helping: dict[int, TournamentState] = {}
        """Running tournaments another node runs, as last read (a shared database only)."""
        self._seat_of_bot: dict[int, dict[int, int]] = {}
        """Tournament -> bot id -> seat, to count the matches other nodes played."""
        self._finishing: set[int] = set()
        """Tournaments whose finish is being written (a shared database only)."""
        self._reserved: Counter[str] = Counter()
        self._resting: dict[str, float] = {}
        """Bot -> monotonic time before which it is not challenged again (it declined)."""
        self._listeners: list[TournamentListener] = []
        self._cache: dict[int, tuple[object, dict[str, Any]]] = {}
        self._headlines: dict[int, dict[str, Any]] = {}
        """``headline`` of each finished or cancelled tournament listed: it no longer changes."""
        self._publishing: set[int] = set()
        self._wake = asyncio.Event()
        self._stopped = False
        self._outage = database_outage(log, "the tournament scheduler reading the database")
        self._adopting = asyncio.Lock()
        """Held while tournaments are read in: a refresh must not adopt one twice."""

    # Lifecycle -------------------------------------------------------------------

    @property
    def _shared(self) -> bool:
        return self._store.shared and self._store.node_id is not None

    def start(self) -> None:
        """Load the tournaments and begin scheduling (a supervised task)."""
        self._spawn(self._loop(), "tournaments")

    def stop(self) -> None:
        """Start no more games."""
        self._stopped = True
        self._wake.set()

    def wake(self) -> None:
        """Run a pass as soon as the loop gets to it."""
        self._wake.set()

    def subscribe(self, listener: TournamentListener) -> None:
        """Tell ``listener`` about every change from now on, and each known status now."""
        self._listeners.append(listener)
        for run in self._runs.values():
            listener.tournament_state(run.id, self._status_of(run))

    async def _loop(self) -> None:
        next_refresh = 0.0
        node_id = self._store.node_id
        if self._shared and node_id is not None:
            # Claims this node id left from an earlier run: its games there were aborted.
            with contextlib.suppress(Exception):
                await self._store.tournaments.end_claims(node_id)
        while not self._stopped:
            if time.monotonic() >= next_refresh:
                try:
                    await self.refresh()
                except Exception as exc:  # logged as an outage: a line, not a traceback a pass
                    self._outage.failed(exc)
                else:
                    self._outage.succeeded()
                next_refresh = time.monotonic() + self._refresh_s
            self._pass()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._tick_s):
                    await self._wake.wait()
            self._wake.clear()

    # Reading the database ----------------------------------------------------------

    async def refresh(self) -> None:
        """Adopt tournaments that are new, changed or freed in the database."""
        async with self._adopting:
            await self._refresh()

    async def _refresh(self) -> None:
        active = await self._store.tournaments.active()
        for tournament_id, status in active.items():
            run = self._runs.get(tournament_id)
            if run is None:
                if status != "paused":
                    run = await self._adopt(tournament_id)
                if run is None and self._shared:
                    await self._help(tournament_id, status)
                continue
            if run.status in ("finished", "cancelled"):
                continue  # ended here: the database is told so by a write under way
            if run.status != status:
                run.status = status
                self._changed(run, {"type": "status", "status": status})
            await self._forfeit_removed(run)
            if self._shared:
                await self._collect(run)
            self._finish_if_done(run)
        for tournament_id in list(self._helping):
            if active.get(tournament_id) != "running" or tournament_id in self._runs:
                del self._helping[tournament_id]
        for tournament_id, run in list(self._runs.items()):
            if tournament_id not in active and run.status in (*storage.ACTIVE, "paused"):
                # Finished or cancelled elsewhere (``arena tournament cancel`` on the database).
                fresh = await storage.load_state(self._store.tournaments, tournament_id)
                run.status, run.ended_at = fresh.status, fresh.ended_at
                self._changed(run, {"type": "status", "status": run.status})

    async def _forfeit_removed(self, run: TournamentState) -> None:
        """Bots removed from the arena forfeit what they have left to play."""
        removed = await self._store.tournaments.remove_inactive(run.id)
        for seat in removed:
            run.removed[seat] = True
            bot = run.settings.bots[seat]
            log.info("tournament %d: bot %s was removed; it forfeits its games left", run.id, bot)
            self._changed(run, {"type": "removed", "bot": bot})

    async def _adopt(self, tournament_id: int) -> TournamentState | None:
        # Claimed, its removed bots marked and started if pending: one transaction.
        stored = await self._store.tournaments.adopt(tournament_id, self._store.node_id)
        if stored is None:
            return None  # another live node schedules it
        run = storage.state_of(stored)
        helped = self._helping.pop(tournament_id, None)
        if helped is not None:
            run.playing |= helped.playing  # games this node plays for it go on
        self._seat_of_bot[tournament_id] = {seat.bot_id: seat.seat for seat in stored.seats}
        self._runs[tournament_id] = run
        log.info(
            "tournament %d (%s, %s) %s: %d of %d games done",
            tournament_id,
            run.settings.format,
            run.settings.game,
            run.status,
            run.done_games,
            run.total_games,
        )
        self._changed(run, {"type": "status", "status": run.status})
        self._finish_if_done(run)
        return run

    async def _help(self, tournament_id: int, status: str) -> None:
        """Keep a fresh copy of a running tournament another node runs, while this node has
        seats of at least two of its bots (so it can play its games)."""
        if status != "running":
            self._helping.pop(tournament_id, None)
            return
        helped = self._helping.get(tournament_id)
        if helped is not None and not helped.playing:
            online = sum(1 for bot in helped.settings.bots if self._seats.free_seats(bot) > 0)
            if online < 2:
                return
        fresh = await storage.load_state(self._store.tournaments, tournament_id)
        if helped is not None:
            fresh.playing = helped.playing
        self._helping[tournament_id] = fresh

    async def _collect(self, run: TournamentState) -> None:
        """Count what other nodes played of ``run`` since the last refresh (shared database)."""
        node_id = self._store.node_id
        if node_id is None or run.status not in ("running", "paused"):
            return
        read = await self._store.tournaments.collect_claims(run.id, node_id)
        run.elsewhere = set(read.elsewhere)
        seats = self._seat_of_bot.get(run.id, {})
        for game in read.ended:
            if game.match_id in run.tallied or game.pair is None or game.pair >= len(run.pairs):
                continue
            pair = run.pairs[game.pair]
            key = (game.pair, 0 if seats.get(game.player0_id) == pair.seat_a else 1)
            verdict_before = run.sprt.verdict if run.sprt is not None else None
            completed = storage.count_match(run, seats, game)
            if game.status != "finished":
                self._changed(run, {"type": "aborted", "match_id": game.match_id, "pair": key[0]})
                continue
            outcome = Outcome(game.winner, Termination(game.termination))
            self._announce(run, key, game.match_id, outcome, completed, verdict_before)

    # Admin ---------------------------------------------------------------------------

    async def create(self, settings: TournamentSettings, suite: OpeningSuite) -> int:
        """Create and start a tournament; its id. ``TournamentError`` for bad input."""
        settings.check()
        async with self._adopting:
            tournament_id = await storage.insert_tournament(
                self._store.tournaments, settings, suite, node_id=self._store.node_id
            )
            await self._adopt(tournament_id)
        self.wake()
        return tournament_id

    async def change(self, tournament_id: int, action: str) -> str:
        """``pause``, ``resume`` or ``cancel``; the new status (``TournamentError`` if not)."""
        async with self._adopting:
            status = await self._store.tournaments.change_status(tournament_id, action)
            run = self._runs.get(tournament_id)
            if run is None and status in storage.ACTIVE:
                run = await self._adopt(tournament_id)
        if run is not None:
            run.status = status
            if status == "cancelled":
                run.ended_at = storage.now()
            self._changed(run, {"type": "status", "status": status})
        self._cache.pop(tournament_id, None)
        self.wake()
        return status

    # Reading -------------------------------------------------------------------------

    async def status(self, tournament_id: int) -> dict[str, Any]:
        """The status object (``standings``); ``TournamentError`` if there is no such one."""
        run = self._runs.get(tournament_id)
        if run is not None:
            return self._status_of(run)
        cached = self._cache.get(tournament_id)
        stamp = int(time.monotonic() / self._refresh_s)  # not ours: re-read now and then
        if cached is not None and cached[0] == stamp:
            return cached[1]
        state = await storage.load_state(self._store.tournaments, tournament_id)
        status = build_status(state)
        self._cache[tournament_id] = (stamp, status)
        return status

    async def summaries(self) -> list[dict[str, Any]]:
        """Every tournament, newest first, with what this node knows live."""
        rows = await storage.list_tournaments(self._store.tournaments)
        for row in rows:
            run = self._runs.get(row["id"])
            if run is not None:
                row.update(status=run.status, games=run.done_games, playing=len(run.playing))
                row["total"] = games_to_show(run.status, run.done_games, run.total_games)
        return rows

    async def listing(self) -> list[dict[str, Any]]:
        """``summaries`` with each tournament's ``headline`` (leader or SPRT verdict), for
        ``GET /api/tournaments`` and the viewer's list; from the cached status objects."""
        rows = await self.summaries()
        for row in rows:
            shown = self._headlines.get(row["id"])
            if shown is None:
                status = await self.status(row["id"])
                shown = headline(status)
                if status["status"] in ("finished", "cancelled"):
                    self._headlines[row["id"]] = shown
            row.update(shown)
        return rows

    def _status_of(self, run: TournamentState) -> dict[str, Any]:
        stamp = (run.version, run.status, len(run.playing), tuple(run.removed))
        cached = self._cache.get(run.id)
        if cached is None or cached[0] != stamp:
            cached = (stamp, build_status(run))
            self._cache[run.id] = cached
        return cached[1]

    # Scheduling ----------------------------------------------------------------------

    def _pass(self) -> None:
        if self._stopped or not self._accepting() or not self._store.health.ok:
            return
        now = time.monotonic()
        runs = sorted((*self._runs.values(), *self._helping.values()), key=lambda r: r.id)
        for run in runs:
            if run.status != "running":
                continue
            room = run.settings.concurrency - len(run.playing) - len(run.elsewhere)
            if room <= 0:
                continue
            bots = run.settings.bots
            free = {
                seat
                for seat, bot in enumerate(bots)
                if self._seats.free_seats(bot) - self._reserved[bot] > 0
                and self._resting.get(bot, 0.0) <= now
            }
            while room > 0 and len(free) >= 2:
                key = run.next_slot(free)
                if key is None:
                    break
                if self._shared:
                    self._claim(run, key, run.players(key))
                else:
                    self._invite(run, key, run.players(key), None)
                room -= 1
                for seat in run.pairs[key[0]].seats(key[1]):
                    if self._seats.free_seats(bots[seat]) - self._reserved[bots[seat]] <= 0:
                        free.discard(seat)

    def _claim(self, run: TournamentState, key: SlotKey, players: tuple[str, str]) -> None:
        """Claim the slot in the database, then offer it (a shared database)."""
        run.playing.add(key)
        for bot in players:
            self._reserved[bot] += 1
        self._spawn(self._claim_then_invite(run, key, players), f"tournament-{run.id}-claim")

    async def _claim_then_invite(
        self, run: TournamentState, key: SlotKey, players: tuple[str, str]
    ) -> None:
        claim: int | None = None
        node_id = self._store.node_id
        try:
            if node_id is not None:
                first_seat = run.pairs[key[0]].seats(key[1])[0]
                claim = await self._store.tournaments.claim_slot(
                    run.id, key[0], key[1], first_seat, node_id
                )
        except Exception as exc:  # the store fails: the slot waits, and a line is logged
            self._outage.failed(exc)
        finally:
            for bot in players:
                self._reserved[bot] -= 1
        current = self._current(run)
        if claim is not None and current.status == "running" and not self._stopped:
            self._invite(current, key, players, claim)
            return
        current.playing.discard(key)
        if claim is None:
            current.elsewhere.add(key)  # played, or taken, elsewhere: till the next refresh
        else:
            self._spawn(self._release(run.id, claim, ended=False), f"tournament-{run.id}-release")
        self.wake()

    def _current(self, run: TournamentState) -> TournamentState:
        """The copy of ``run`` kept now (a helped tournament is re-read, or adopted)."""
        return self._runs.get(run.id) or self._helping.get(run.id) or run

    async def _release(self, tournament_id: int, claim: int, *, ended: bool) -> None:
        """Hand a claim back: ``ended`` for the running node to count (or deleted)."""
        try:
            await self._store.tournaments.release_slot(claim, ended=ended)
        except Exception as exc:  # left behind: the running node collects it once this node is gone
            log.warning("tournament %d: cannot release claim %d: %s", tournament_id, claim, exc)

    def _invite(
        self, run: TournamentState, key: SlotKey, players: tuple[str, str], claim: int | None
    ) -> None:
        run.playing.add(key)
        invitation = _Invitation(run, key, players, claim)
        settings = run.settings
        tc = settings.time_control
        for bot, other in (players, players[::-1]):
            self._reserved[bot] += 1
            pending = self._lobby.invite(
                bot, other, settings.game, tc, partial(self._answered, invitation, bot)
            )
            invitation.challenges[bot] = pending.challenge_id
        loop = asyncio.get_running_loop()
        invitation.timer = loop.call_later(
            self._challenge_timeout_s, self._give_up, invitation, None
        )
        # Sent after both are recorded: an answer may come back before this returns.
        for bot, other in (players, players[::-1]):
            self._seats.tell(
                bot,
                ChallengeReceived(
                    challenge_id=invitation.challenges[bot],
                    challenger=other,
                    game=settings.game,
                    time_control=tc,
                ),
            )

    def _answered(self, invitation: _Invitation, bot: str, accepted: bool) -> None:
        if invitation.closed:
            return
        if not accepted:
            self._give_up(invitation, bot)
            return
        invitation.accepted.add(bot)
        if len(invitation.accepted) == len(invitation.players):
            self._close(invitation)
            self._spawn(self._play(invitation), f"tournament-{invitation.run.id}-game")

    def _give_up(self, invitation: _Invitation, declined_by: str | None) -> None:
        """A bot declined (or left), or the time to answer ran out: the slot waits."""
        if invitation.closed:
            return
        self._close(invitation)
        rest_until = time.monotonic() + self._retry_s
        for bot in invitation.players:
            self._lobby.withdraw(invitation.challenges[bot])
            if bot == declined_by or (declined_by is None and bot not in invitation.accepted):
                self._resting[bot] = rest_until
            self._reserved[bot] -= 1
        self._current(invitation.run).playing.discard(invitation.key)
        if invitation.claim is not None:
            self._spawn(
                self._release(invitation.run.id, invitation.claim, ended=False),
                f"tournament-{invitation.run.id}-release",
            )
        self.wake()

    def _close(self, invitation: _Invitation) -> None:
        invitation.closed = True
        if invitation.timer is not None:
            invitation.timer.cancel()

    async def _play(self, invitation: _Invitation) -> None:
        run, key = self._current(invitation.run), invitation.key
        match: Match | None = None
        try:
            ready = all(self._seats.free_seats(bot) > 0 for bot in invitation.players)
            if ready and run.status == "running" and self._accepting() and not self._stopped:
                pairing = Pairing(
                    run.settings.game,
                    invitation.players,
                    run.settings.time_control,
                    opening=run.opening_of(key),
                    tournament=(run.id, key[0]),
                )
                match = await self._registry.start(pairing, rated=run.settings.rated)
        except Exception:
            log.exception("tournament %d: could not start pair %d game %d", run.id, *key)
        finally:
            for bot in invitation.players:
                self._reserved[bot] -= 1
        if match is None:
            self._current(run).playing.discard(key)
            if invitation.claim is not None:
                await self._release(run.id, invitation.claim, ended=False)
            self.wake()
            return
        try:
            await match.done.wait()
        finally:
            run = self._current(run)
            run.playing.discard(key)
            self._count(run, key, match)
            if invitation.claim is not None:
                # Counted here when this node runs the tournament; else left to its node.
                owned = self._runs.get(run.id) is run
                self._spawn(
                    self._release(run.id, invitation.claim, ended=not owned),
                    f"tournament-{run.id}-release",
                )
            self.wake()

    def _count(self, run: TournamentState, key: SlotKey, match: Match) -> None:
        ending = match.ending
        if ending is None or match.end is None:
            return  # not committed: nothing is known, the slot is played again
        verdict_before = run.sprt.verdict if run.sprt is not None else None
        completed = run.tally(
            key,
            winner=ending.winner,
            termination=ending.termination.value,
            fault=None if ending.fault is None else ending.fault.value,
            match_id=match.match_id,
            ended_at=storage.now(),
        )
        if self._runs.get(run.id) is not run:
            return  # helping another node's tournament: that node tells the listeners
        if ending.termination is Termination.ABORTED:
            self._changed(run, {"type": "aborted", "match_id": match.match_id, "pair": key[0]})
        else:
            outcome = Outcome(ending.winner, ending.termination)
            self._announce(run, key, match.match_id, outcome, completed, verdict_before)
        self._finish_if_done(run)

    def _announce(
        self,
        run: TournamentState,
        key: SlotKey,
        match_id: str,
        outcome: Outcome,
        completed: bool,
        verdict_before: str | None,
    ) -> None:
        """Tell the listeners a game of ``run`` was counted (and a verdict it brought)."""
        self._changed(
            run,
            {
                "type": "game",
                "match_id": match_id,
                "pair": key[0],
                "game": key[1],
                "players": list(run.players(key)),
                "result": outcome.result,
                "termination": outcome.termination.value,
                "pair_complete": completed,
            },
        )
        if run.sprt is not None and run.sprt.verdict != verdict_before:
            self._changed(
                run,
                {"type": "verdict", "verdict": run.sprt.verdict, "llr": run.sprt.llr},
            )

    def _finish_if_done(self, run: TournamentState) -> None:
        if run.status != "running" or not run.is_complete() or run.id in self._finishing:
            return
        values: dict[str, Any] = {"ended_at": storage.now()}
        if run.sprt is not None:
            run.sprt.stop_at_max(2 * len(run.completed))
            values.update(verdict=run.sprt.verdict, verdict_games=run.sprt.verdict_games)
        if self._shared:
            # Written first: another node may have claimed a game since the last refresh.
            self._finishing.add(run.id)
            self._spawn(self._finish_shared(run, values), f"tournament-{run.id}-end")
            return
        self._finished(run, values)
        self._spawn(self._save_status(run.id, "finished", values), f"tournament-{run.id}-end")

    def _finished(self, run: TournamentState, values: dict[str, Any]) -> None:
        run.status, run.ended_at = "finished", values["ended_at"]
        if run.sprt is not None:
            run.stored_verdict = run.sprt.verdict
        log.info("tournament %d finished: %d games", run.id, len(run.results))
        self._changed(run, {"type": "status", "status": "finished"})

    async def _finish_shared(self, run: TournamentState, values: dict[str, Any]) -> None:
        node_id = self._store.node_id
        try:
            done = node_id is not None and await self._store.tournaments.finish(
                run.id, node_id, **values
            )
        finally:
            self._finishing.discard(run.id)
        if done:
            self._finished(run, values)
        # Otherwise another node plays a game of it: the refresh that collects it tries again.

    async def _save_status(self, tournament_id: int, status: str, values: dict[str, Any]) -> None:
        await self._store.tournaments.set_status(tournament_id, status, **values)

    # Telling the listeners ---------------------------------------------------------

    def _changed(self, run: TournamentState, event: dict[str, Any]) -> None:
        run.version += 1
        for listener in self._listeners:
            try:
                listener.tournament_event(run.id, {"tournament": run.id, **event})
            except Exception:
                log.exception("a tournament listener failed")
        if self._listeners and run.id not in self._publishing:
            self._publishing.add(run.id)
            asyncio.get_running_loop().call_later(PUBLISH_DELAY_S, self._publish, run)

    def _publish(self, run: TournamentState) -> None:
        self._publishing.discard(run.id)
        status = self._status_of(run)
        for listener in self._listeners:
            try:
                listener.tournament_state(run.id, status)
            except Exception:
                log.exception("a tournament listener failed")
