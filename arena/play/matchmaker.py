"""Pairing passes: when the lobby pairs its seekers, and starting the matches it pairs.

A pass runs ``window_s`` after the first seek (or match end) that asks for
one, so seekers that arrive close together can find the closest rating; at
most one pass is pending at a time. While the store cannot commit
(``store_problem`` returns why), no match starts: a result could not be
stored, so none is played. The seekers wait in the lobby, each told once
per outage why (``store_unavailable``), and the server calls ``schedule``
again when the store recovers.

With a ``SeekQueue`` (several nodes sharing a database, ``arena.cluster``) a
pass pairs through it instead of the lobby alone: the queue hears shortly
before the window ends (it reads the shared queue meanwhile), hands the pass its
pairings in batches, each started before the next is sought (a pass
through the database takes round trips; a match whose player travels from
another node should not wait for them), and hears of each match it paired
once the match has started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Protocol

from arena.errors import StoreDegradedError
from arena.play.lobby import Lobby, Pairing
from arena.play.match import Match, Spawn
from arena.play.registry import MatchRegistry
from protocol.errors import ProtocolError
from protocol.messages import Error, ErrorCode, ServerMessage

log = logging.getLogger(__name__)

READ_AHEAD_S = 0.005
"""How long before a pairing window ends a ``SeekQueue`` is asked to read ahead."""

START_SLICE_S = 0.002
"""How long a pass starts matches before it lets the event loop serve moves. Yielding after
every start made a pass of 1,000 pairings take 1,000 turns of a busy loop, seconds at
1,000 matches (the load bench's pairing p99); a slice keeps both short."""


class SeekQueue(Protocol):
    """Where a pass pairs from instead of the lobby (``arena.cluster.SharedSeekQueue``)."""

    def prefetch(self) -> None:
        """A pass runs in ``READ_AHEAD_S``."""
        ...

    def batches(self) -> AsyncGenerator[list[Pairing], None]:
        """One pairing pass: the pairings to start here, in batches."""
        ...

    def started(self, pairing: Pairing, match: Match) -> None:
        """The match of ``pairing`` has started."""
        ...


class PassWanted:
    """Asks for a pairing pass: fired by the parts built before the matchmaker (a match
    end in the registry, a seek heard by another node), heard by the matchmaker."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[], None]] = []

    def listen(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` each time a pass is asked for."""
        self._listeners.append(listener)

    def __call__(self) -> None:
        """Ask for a pass."""
        for listener in self._listeners:
            listener()


class Matchmaker:
    """Runs pairing passes over ``lobby`` and starts their matches in ``registry``."""

    def __init__(
        self,
        lobby: Lobby,
        registry: MatchRegistry,
        *,
        window_s: float,
        spawn: Spawn,
        tell: Callable[[str, ServerMessage], None],
        store_problem: Callable[[], str | None] = lambda: None,
        queue: SeekQueue | None = None,
        wanted: PassWanted | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._lobby = lobby
        self._registry = registry
        self._window_s = window_s
        self._spawn = spawn
        self._tell = tell
        self._store_problem = store_problem
        self._queue = queue
        self._clock = clock
        self._pending = False
        self._stopped = False
        self._told: set[str] = set()
        """Seekers told about the current store outage."""
        if wanted is not None:
            wanted.listen(self.schedule)

    def schedule(self) -> None:
        """Run a pairing pass after the window, unless one is already due."""
        if self._stopped or self._pending:
            return
        self._pending = True
        self._spawn(self._pass_after_window(), "pairing")

    def stop(self) -> None:
        """Start no more passes (shutdown)."""
        self._stopped = True

    async def _pass_after_window(self) -> None:
        try:
            if self._queue is None:
                await asyncio.sleep(self._window_s)
            else:
                # The queue reads ahead shortly before the window ends: late enough to see
                # the other nodes' seeks that arrived during the window, in time for the pass.
                ends = asyncio.get_running_loop().time() + self._window_s
                await asyncio.sleep(max(0.0, self._window_s - READ_AHEAD_S))
                self._queue.prefetch()
                await asyncio.sleep(max(0.0, ends - asyncio.get_running_loop().time()))
        finally:
            self._pending = False
        if self._stopped:
            return
        problem = self._store_problem()
        if problem is not None:
            self._hold(problem)
            return
        self._told.clear()
        if self._queue is None:
            await self._start(self._lobby.pair())
            return
        async with contextlib.aclosing(self._queue.batches()) as batches:
            async for pairings in batches:
                if not await self._start(pairings):
                    return

    async def _start(self, pairings: Sequence[Pairing]) -> bool:
        """Start the matches of ``pairings``; False once the matchmaker stopped."""
        await self._registry.prepare(pairings)
        slice_ends = self._clock() + START_SLICE_S
        for pairing in pairings:
            if self._stopped:
                return False
            try:
                match = await self._registry.start(pairing)
                if self._queue is not None:
                    self._queue.started(pairing, match)
            except StoreDegradedError as exc:
                # The store began failing during this pass: the pair waits for the next one.
                await self._requeue(pairing)
                self._hold(str(exc))
            except Exception:
                log.exception("could not start a match for %s", pairing)
            # A pass can start a thousand matches: let the moves that arrived meanwhile in
            # every START_SLICE_S, rather than after every start or only at the end.
            if self._clock() >= slice_ends:
                await asyncio.sleep(0)
                slice_ends = self._clock() + START_SLICE_S
        return True

    async def _requeue(self, pairing: Pairing) -> None:
        for bot in pairing.players:
            rating = await self._registry.rating(bot, pairing.game)
            # A bot that left or seeks elsewhere meanwhile has nothing to put back.
            with contextlib.suppress(ProtocolError):
                self._lobby.seek(bot, pairing.game, pairing.time_control, rating)

    def _hold(self, problem: str) -> None:
        for seek in self._lobby.seeks:
            if seek.bot not in self._told:
                self._told.add(seek.bot)
                self._tell(
                    seek.bot,
                    Error(
                        code=ErrorCode.STORE_UNAVAILABLE,
                        message=f"results cannot be stored right now ({problem}); "
                        "your seek waits and is paired once they can",
                    ),
                )
